//! Independent random streams derived from the seed and a tag, so that any part of
//! the market can be generated in any order (or in parallel) with the same result.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// SplitMix64 finalizer: a bijective mix of 64 bits.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A 64-bit hash of the seed and tags.
pub(crate) fn hash(seed: u64, tags: &[u64]) -> u64 {
    tags.iter().fold(mix(seed), |h, &t| mix(h ^ mix(t)))
}

/// A generator for the stream named by `tags`.
pub(crate) fn stream(seed: u64, tags: &[u64]) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(hash(seed, tags))
}

/// A uniform draw in [0, 1) that depends only on the seed and tags.
pub(crate) fn unit(seed: u64, tags: &[u64]) -> f64 {
    (hash(seed, tags) >> 11) as f64 / (1u64 << 53) as f64
}

/// Stable numeric tag for a string.
pub(crate) fn tag(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    /// Published SplitMix64 outputs for seed 0 (Vigna, `splitmix64.c`): the state
    /// advances by the golden gamma before each mix, so the first three outputs are
    /// `mix(0)`, `mix(gamma)` and `mix(2 gamma)`.
    #[test]
    fn mix_is_the_splitmix64_finalizer() {
        const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
        assert_eq!(mix(0), 0xE220_A839_7B1D_CDAF);
        assert_eq!(mix(GAMMA), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(mix(GAMMA.wrapping_mul(2)), 0x06C4_5D18_8009_454F);
    }

    /// Published FNV-1a 64-bit vectors (the offset basis for the empty string).
    #[test]
    fn tag_is_fnv1a_64() {
        assert_eq!(tag(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(tag("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(tag("foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn hash_depends_on_the_seed_every_tag_and_their_order() {
        // Without tags only the seed is mixed: SplitMix64's first output for seed 0.
        assert_eq!(hash(0, &[]), 0xE220_A839_7B1D_CDAF);
        let h = hash(7, &[1, 2]);
        assert_eq!(h, hash(7, &[1, 2]));
        for other in [
            hash(8, &[1, 2]),
            hash(7, &[2, 1]),
            hash(7, &[1]),
            hash(7, &[1, 2, 0]),
            hash(7, &[]),
        ] {
            assert_ne!(h, other);
        }
    }

    #[test]
    fn a_stream_repeats_for_its_tags_and_differs_for_others() {
        let draws = |seed: u64, tags: &[u64]| -> Vec<u64> {
            let mut r = stream(seed, tags);
            (0..8).map(|_| r.gen()).collect()
        };
        assert_eq!(draws(42, &[1, 2]), draws(42, &[1, 2]));
        assert_ne!(draws(42, &[1, 2]), draws(42, &[2, 1]));
        assert_ne!(draws(42, &[1, 2]), draws(43, &[1, 2]));
        assert_ne!(draws(42, &[tag("base")]), draws(42, &[tag("spot")]));
    }

    /// Over n = 100 000 tags the mean of a uniform draw is 1/2 with standard error
    /// sqrt(1/12/n) = 0.00091 (tolerance 0.005, 5.5 se), and each tenth of [0, 1)
    /// holds 10% with standard error sqrt(0.09/n) = 0.00095 (tolerance 0.005).
    #[test]
    fn unit_is_uniform_on_zero_one() {
        let n = 100_000u64;
        let mut bins = [0u32; 10];
        let mut sum = 0.0;
        for t in 0..n {
            let u = unit(20_240_101, &[tag("test"), t]);
            assert!((0.0..1.0).contains(&u), "{u}");
            sum += u;
            bins[(u * 10.0) as usize] += 1;
        }
        let mean = sum / n as f64;
        assert!((mean - 0.5).abs() < 0.005, "mean {mean}");
        for (i, b) in bins.iter().enumerate() {
            let share = f64::from(*b) / n as f64;
            assert!((share - 0.1).abs() < 0.005, "tenth {i}: {share}");
        }
    }
}
