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
