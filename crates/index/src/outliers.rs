//! Outlier filters applied before aggregation. Each returns the indices it keeps.
//!
//! - `sigma-around-trimmed-mean`: centre `c` = mean after dropping `trim` of each
//!   tail; keep `|v - c| <= k s`, where the scale `s` is (`scale`):
//!   `sample-sd`, the sample standard deviation of all values (n - 1), which the
//!   outliers themselves inflate: with `k = 3` and `n <= 9` no value can ever be
//!   removed (the largest possible z-score is `(n - 1) / sqrt(n)`); or `mad`, the
//!   robust scale below, which does not have that blind spot.
//! - `mad`: keep `|v - median| <= k * S`, `S = 1.4826 MAD` (1.4826 makes the MAD a
//!   consistent estimator of the standard deviation under normality). When more
//!   than half the values are equal the MAD is 0 and would keep only the modal value;
//!   then `S = 1.2533 MeanAD`, the mean absolute deviation from the median scaled to
//!   the standard deviation (Iglewicz and Hoaglin, "How to Detect and Handle
//!   Outliers", 1993, the modified z-score). Only when both are 0 are all values
//!   equal-or-kept.
//! - `percentile`: keep values between the weighted `low` quantile (lower rule) and
//!   its mirror at `high` counted from the top, inclusive: both tails are cut alike.
//!
//! With fewer than three values no filter removes anything: there is no basis to
//! call one value an outlier among two.

use crate::aggregation::{trimmed_mean, TrimCount};
use crate::weighted_quantile::{sorted_pairs, upper_quantile_sorted, weighted_quantile, TieRule};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum OutlierFilter {
    #[serde(rename = "none")]
    None,
    #[serde(rename = "sigma-around-trimmed-mean")]
    SigmaAroundTrimmedMean,
    #[serde(rename = "mad")]
    Mad,
    #[serde(rename = "percentile")]
    Percentile,
}

/// The scale of the sigma filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SigmaScale {
    #[default]
    SampleSd,
    Mad,
}

/// Parameters of the filters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FilterParams {
    pub trim: f64,
    pub trim_count: TrimCount,
    pub k: f64,
    pub scale: SigmaScale,
    pub low: f64,
    pub high: f64,
}

/// The median and the robust scale `S` of the values (module doc); `None` if empty.
pub fn robust_scale(values: &[f64]) -> Option<(f64, f64)> {
    let ones = vec![1.0; values.len()];
    let med = weighted_quantile(values, &ones, 0.5, TieRule::Midpoint)?;
    let dev: Vec<f64> = values.iter().map(|v| (v - med).abs()).collect();
    let mad = weighted_quantile(&dev, &ones, 0.5, TieRule::Midpoint)?;
    if mad > 0.0 {
        return Some((med, 1.4826 * mad));
    }
    let mean_ad = dev.iter().sum::<f64>() / dev.len() as f64;
    Some((med, 1.2533 * mean_ad))
}

/// Sample standard deviation (n - 1 denominator).
pub fn sample_std(values: &[f64]) -> Option<f64> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let ss: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
    Some((ss / (n - 1) as f64).sqrt())
}

/// `|v - c| <= band`, with a relative tolerance of 1e-12 so that identical values
/// (scale 0) whose mean differs from them by rounding are not all removed.
fn within(v: f64, c: f64, band: f64) -> bool {
    (v - c).abs() <= band + 1e-12 * c.abs().max(1.0)
}

/// Indices of the values the filter keeps, ascending.
pub fn keep(
    filter: OutlierFilter,
    values: &[f64],
    weights: &[f64],
    p: &FilterParams,
) -> Vec<usize> {
    let all: Vec<usize> = (0..values.len()).collect();
    if values.len() < 3 {
        return all;
    }
    match filter {
        OutlierFilter::None => all,
        OutlierFilter::SigmaAroundTrimmedMean => {
            let scale = match p.scale {
                SigmaScale::SampleSd => sample_std(values),
                SigmaScale::Mad => robust_scale(values).map(|x| x.1),
            };
            let (Some(c), Some(s)) = (trimmed_mean(values, p.trim, p.trim_count), scale) else {
                return all;
            };
            all.into_iter()
                .filter(|&i| within(values[i], c, p.k * s))
                .collect()
        }
        OutlierFilter::Mad => {
            let Some((med, s)) = robust_scale(values) else {
                return all;
            };
            all.into_iter()
                .filter(|&i| within(values[i], med, p.k * s))
                .collect()
        }
        OutlierFilter::Percentile => {
            let pairs = sorted_pairs(values, weights);
            let (Some(lo), Some(hi)) = (
                weighted_quantile(values, weights, p.low, TieRule::Lower),
                upper_quantile_sorted(&pairs, p.high),
            ) else {
                return all;
            };
            all.into_iter()
                .filter(|&i| values[i] >= lo && values[i] <= hi)
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: FilterParams = FilterParams {
        trim: 0.2,
        trim_count: TrimCount::Floor,
        k: 1.5,
        scale: SigmaScale::SampleSd,
        low: 0.1,
        high: 0.9,
    };

    #[test]
    fn sigma_filter_by_hand() {
        // trimmed mean (drop 1 of 5 each end) = mean(2, 2.1, 2.2) = 2.1;
        // sample sd of all five = 3.5571 (numpy std ddof=1); k = 1.5 -> band 5.34: 10 is out.
        let v = [2.0, 2.1, 2.2, 1.9, 10.0];
        let s = sample_std(&v).unwrap();
        assert!((s - 3.557_105_565).abs() < 1e-8, "{s}");
        assert_eq!(
            keep(OutlierFilter::SigmaAroundTrimmedMean, &v, &[1.0; 5], &P),
            vec![0, 1, 2, 3]
        );
    }

    #[test]
    fn mad_and_percentile_by_hand() {
        let v = [1.0, 1.1, 0.9, 1.05, 5.0];
        // median 1.05, deviations .05 .05 .15 0 3.95 -> MAD .05; band 1.5*1.4826*.05 = .111
        assert_eq!(keep(OutlierFilter::Mad, &v, &[1.0; 5], &P), vec![0, 1, 3]);
        // 10% quantile = 0.9, 90% = 5.0 (lower rule over 5 equal weights) -> all kept
        assert_eq!(keep(OutlierFilter::Percentile, &v, &[1.0; 5], &P).len(), 5);
        // low 0.21 (lower rule): cum 0.2 < 1.05 -> 1.0; high 0.79 mirrored: the top
        // 21% (1.05 of 5) is reached at 1.1 (5.0: 1, 1.1: 2): keeps 1.0, 1.05, 1.1.
        let q = FilterParams {
            low: 0.21,
            high: 0.79,
            ..P
        };
        assert_eq!(
            keep(OutlierFilter::Percentile, &v, &[1.0; 5], &q),
            vec![0, 1, 3]
        );
        // Symmetric: 1..10 with low 0.1, high 0.9 keeps every value (the lower rule
        // on both ends dropped 10 but not 1).
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(
            keep(OutlierFilter::Percentile, &ten, &[1.0; 10], &P).len(),
            10
        );
        assert_eq!(keep(OutlierFilter::Mad, &v[..2], &[1.0; 2], &P), vec![0, 1]);
    }

    #[test]
    fn a_zero_mad_does_not_discard_the_data() {
        // Median 2.00, deviations 0 0 0 .05 .10: MAD 0. MeanAD = .03, S = 1.2533 x
        // .03 = .0376; k = 3: band .1128 keeps all five (the MAD alone kept three).
        let v = [2.00, 2.00, 2.00, 2.05, 2.10];
        let p = FilterParams { k: 3.0, ..P };
        assert_eq!(keep(OutlierFilter::Mad, &v, &[1.0; 5], &p).len(), 5);
        // A real outlier is still removed: [2, 2, 2, 2.05, 9]: MeanAD = 1.41,
        // S = 1.767, band 5.3 -> 9 (dev 7) out.
        let w = [2.00, 2.00, 2.00, 2.05, 9.0];
        assert_eq!(
            keep(OutlierFilter::Mad, &w, &[1.0; 5], &p),
            vec![0, 1, 2, 3]
        );
    }

    #[test]
    fn identical_values_survive_a_zero_scale() {
        // Three equal prices: scale 0, and their mean (6.00195 / 3) is not exactly
        // 2.00065 in binary; nothing is an outlier.
        let v = [2.000_65; 3];
        let p = FilterParams {
            k: 3.0,
            scale: SigmaScale::Mad,
            ..P
        };
        assert_eq!(
            keep(OutlierFilter::SigmaAroundTrimmedMean, &v, &[1.0; 3], &p).len(),
            3
        );
        assert_eq!(keep(OutlierFilter::Mad, &v, &[1.0; 3], &p).len(), 3);
    }

    #[test]
    fn a_robust_scale_lets_the_sigma_filter_fire_on_small_samples() {
        // [2, 2, 2, 2, 200], k = 3, trim 0.2: centre = mean(2, 2, 2) = 2. Sample sd
        // = 88.55 -> band 265.6 keeps 200 (the largest z possible with n = 5 is
        // 4/sqrt(5) = 1.79). MAD scale: MAD 0, MeanAD 39.6, S = 49.63 -> band 148.9:
        // 200 (dev 198) is removed.
        let v = [2.0, 2.0, 2.0, 2.0, 200.0];
        let sd = FilterParams { k: 3.0, ..P };
        assert_eq!(
            keep(OutlierFilter::SigmaAroundTrimmedMean, &v, &[1.0; 5], &sd).len(),
            5
        );
        let robust = FilterParams {
            scale: SigmaScale::Mad,
            ..sd
        };
        assert_eq!(
            keep(
                OutlierFilter::SigmaAroundTrimmedMean,
                &v,
                &[1.0; 5],
                &robust
            ),
            vec![0, 1, 2, 3]
        );
    }
}
