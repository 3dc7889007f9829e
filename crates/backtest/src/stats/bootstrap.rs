//! Stationary block bootstrap (Politis and Romano 1994) with the automatic mean
//! block length of Politis and White (2004), as corrected by Patton, Politis and
//! White (2009).
//!
//! A resample is built from blocks that start at uniform random positions and have
//! geometric lengths with mean `b` (wrapping around the end), which keeps the serial
//! dependence of the data within blocks. The mean block length is
//! `b = (2 G^2 / D)^{1/3} n^{1/3}` with `G = sum_{|k|<=M} lambda(k/M) |k| R(k)`,
//! `D = 2 (sum_{|k|<=M} lambda(k/M) R(k))^2`, the flat-top kernel
//! `lambda(t) = 1` for `|t| <= 1/2`, `2 (1 - |t|)` for `1/2 < |t| <= 1`, and
//! `M = 2 m`, where `m` is the smallest lag after which `K_n = max(5, sqrt(log10 n))`
//! consecutive autocorrelations are all below `2 sqrt(log10 n / n)`. `b` is kept in
//! `[1, b_max]` with `b_max = ceil(min(3 sqrt(n), n / 3))`, the cap of Patton, Politis
//! and White's reference implementation: a block as long as the sample would make
//! every resample a rotation of the data and collapse the interval.
//!
//! Confidence intervals are percentile intervals of the statistic over the
//! resamples; the generator is ChaCha8 seeded by the caller, so intervals are
//! reproducible.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

fn autocov(x: &[f64], k: usize) -> f64 {
    let n = x.len();
    let m = x.iter().sum::<f64>() / n as f64;
    (0..n - k).map(|i| (x[i] - m) * (x[i + k] - m)).sum::<f64>() / n as f64
}

/// The Politis-White mean block length for the stationary bootstrap of `x`.
pub fn mean_block_length(x: &[f64]) -> f64 {
    let n = x.len();
    if n < 8 {
        return 1.0;
    }
    let nf = n as f64;
    let r0 = autocov(x, 0);
    if r0 <= 0.0 {
        return 1.0;
    }
    let kn = (nf.log10().sqrt().ceil() as usize).max(5);
    let crit = 2.0 * (nf.log10() / nf).sqrt();
    let max_lag = (n - 1).min((nf.sqrt().ceil() as usize) + kn);
    let rho: Vec<f64> = (0..=max_lag).map(|k| autocov(x, k) / r0).collect();
    let mut m = max_lag.saturating_sub(kn);
    for start in 1..=max_lag.saturating_sub(kn) {
        if (start..start + kn).all(|k| rho[k].abs() < crit) {
            m = start - 1;
            break;
        }
    }
    let big_m = (2 * m).clamp(1, n - 1);
    let lambda = |t: f64| {
        let a = t.abs();
        if a <= 0.5 {
            1.0
        } else if a <= 1.0 {
            2.0 * (1.0 - a)
        } else {
            0.0
        }
    };
    let mut g = 0.0;
    let mut g0 = r0;
    for k in 1..=big_m {
        let rk = autocov(x, k);
        let l = lambda(k as f64 / big_m as f64);
        g += 2.0 * l * k as f64 * rk;
        g0 += 2.0 * l * rk;
    }
    let d = 2.0 * g0 * g0;
    if d <= 0.0 || g == 0.0 {
        return 1.0;
    }
    ((2.0 * g * g / d).powf(1.0 / 3.0) * nf.powf(1.0 / 3.0)).clamp(1.0, max_block_length(n))
}

/// The largest mean block length used: `ceil(min(3 sqrt(n), n / 3))`, at least 1.
pub fn max_block_length(n: usize) -> f64 {
    let nf = n as f64;
    (3.0 * nf.sqrt()).min(nf / 3.0).ceil().max(1.0)
}

/// One stationary-bootstrap resample of the indices `0..n`.
pub fn resample_indices(n: usize, mean_block: f64, rng: &mut ChaCha8Rng) -> Vec<usize> {
    let p = 1.0 / mean_block.max(1.0);
    let mut out = Vec::with_capacity(n);
    let mut i = rng.gen_range(0..n);
    while out.len() < n {
        out.push(i);
        if rng.gen::<f64>() < p {
            i = rng.gen_range(0..n);
        } else {
            i = (i + 1) % n;
        }
    }
    out
}

/// A percentile confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// The `(1 - level) / 2` percentile of the statistic over the resamples.
    pub low: f64,
    /// The `(1 + level) / 2` percentile.
    pub high: f64,
    /// Confidence level, 0 to 1 (0.95).
    pub level: f64,
    /// Resamples drawn (including any where the statistic was undefined).
    pub resamples: usize,
    /// Mean block length `b` the resamples used.
    pub mean_block_length: f64,
}

/// Percentile interval at `level` (0.95) of `stat` over `resamples` stationary
/// bootstrap resamples of paired observations, with the block length chosen from
/// `block_basis` (the series whose dependence matters). Resamples where the
/// statistic is undefined are skipped; `None` if fewer than half are defined.
pub fn confidence_interval(
    n: usize,
    block_basis: &[f64],
    resamples: usize,
    level: f64,
    seed: u64,
    stat: impl Fn(&[usize]) -> Option<f64>,
) -> Option<Interval> {
    if n < 4 || resamples == 0 {
        return None;
    }
    let b = mean_block_length(block_basis);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut values: Vec<f64> = (0..resamples)
        .filter_map(|_| stat(&resample_indices(n, b, &mut rng)))
        .filter(|v| v.is_finite())
        .collect();
    if values.len() * 2 < resamples {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let q = |p: f64| {
        let k = ((p * values.len() as f64).ceil() as usize).clamp(1, values.len());
        values[k - 1]
    };
    let alpha = (1.0 - level) / 2.0;
    Some(Interval {
        low: q(alpha),
        high: q(1.0 - alpha),
        level,
        resamples,
        mean_block_length: b,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn white_noise_gets_short_blocks_and_persistent_series_long_ones() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let noise: Vec<f64> = (0..500).map(|_| rng.gen::<f64>() - 0.5).collect();
        let mut ar = vec![0.0];
        for e in &noise[1..] {
            let last = *ar.last().unwrap();
            ar.push(0.95 * last + e);
        }
        let bn = mean_block_length(&noise);
        let ba = mean_block_length(&ar);
        assert!(bn < 3.0, "{bn}");
        assert!(ba > 3.0 * bn, "{ba} vs {bn}");
    }

    #[test]
    fn block_length_is_capped() {
        // n = 24: min(3 x 4.899, 8) = 8; n = 400: min(60, 133.3) = 60.
        assert_eq!(max_block_length(24), 8.0);
        assert_eq!(max_block_length(400), 60.0);
        assert_eq!(max_block_length(2), 1.0);
        // A random walk of 24 points asks for a block near n; it gets the cap.
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let mut walk = vec![0.0];
        for _ in 1..24 {
            let last = *walk.last().unwrap();
            walk.push(last + rng.gen::<f64>() - 0.5 + 0.3);
        }
        let b = mean_block_length(&walk);
        assert!(b <= 8.0 && b > 1.0, "{b}");
    }

    #[test]
    fn seeded_intervals_repeat_and_cover_the_mean() {
        let x: Vec<f64> = (0..200).map(|i| f64::from(i % 7) - 3.0).collect();
        let stat = |idx: &[usize]| Some(idx.iter().map(|&i| x[i]).sum::<f64>() / idx.len() as f64);
        let a = confidence_interval(x.len(), &x, 300, 0.95, 42, stat).unwrap();
        let b = confidence_interval(x.len(), &x, 300, 0.95, 42, stat).unwrap();
        assert_eq!(a, b);
        let m = x.iter().sum::<f64>() / 200.0;
        assert!(a.low <= m && m <= a.high, "{a:?} {m}");
        let idx = resample_indices(50, 5.0, &mut ChaCha8Rng::seed_from_u64(3));
        assert_eq!(idx.len(), 50);
        assert!(idx.iter().all(|&i| i < 50));
    }
}
