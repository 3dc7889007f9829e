//! Outlier filters applied before aggregation. Each returns the indices it keeps.
//!
//! - `sigma-around-trimmed-mean`: centre `c` = mean after dropping `trim` of each
//!   tail; keep `|v - c| <= k s`, where the scale `s` is (`scale`):
//!   `sample-sd`, the sample standard deviation of all values (n - 1), which the
//!   outliers themselves inflate: with `k = 3` and `n <= 9` no value can ever be
//!   removed (the largest possible z-score is `(n - 1) / sqrt(n)`); or `mad`, the
//!   robust scale below, which does not have that blind spot. A trimmed mean
//!   breaks down when more of the weight is wild than `trim` drops (one typo among
//!   five trades is 17%): when the band around it keeps half the weight or less,
//!   the band is centred on the (weighted) median instead, with the same scale.
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
//!
//! **Weighted** (`weighted = true`): the centre and scale are computed with the
//! observations' aggregation weights (GPU-hours for trades, capped per contributor
//! by the engine as the aggregation caps them), so a print carries as
//! much say in what counts as an outlier as it would in the fixing: the median is
//! the weighted median (midpoint rule), the MAD the weighted median of the absolute
//! deviations, the MeanAD their weighted mean, the trimmed mean the weighted mean of
//! the central `1 - 2 trim` of the weight (boundary observations pro rata), and the
//! sample standard deviation `sqrt(n / (n - 1) sum w (v - m)^2 / sum w)` around the
//! weighted mean `m`. With equal weights each is the unweighted statistic, except the
//! trimmed mean, which trims a share of the weight rather than a whole number of
//! values. Unweighted, one 0.001 GPU-hour print moves the median and the MAD as much
//! as a 1,000 GPU-hour trade, and so re-admits or drops honest trades. The same
//! practice as weighting the aggregation itself (SOFR's volume-weighted median;
//! weighted MAD: Rousseeuw and Croux's robust scale, with weights as frequencies).

use crate::aggregation::{trimmed_mean, vw_trimmed_mean, TrimCount};
use crate::weighted_quantile::{sorted_pairs, upper_quantile_sorted, weighted_quantile, TieRule};
use serde::{Deserialize, Serialize};

/// The outlier filter of a methodology (module doc for each rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum OutlierFilter {
    /// Keeps every value.
    #[serde(rename = "none")]
    None,
    /// Keeps values within `k` scales of a trimmed mean.
    #[serde(rename = "sigma-around-trimmed-mean")]
    SigmaAroundTrimmedMean,
    /// Keeps values within `k` robust scales (1.4826 MAD, else 1.2533 MeanAD) of the
    /// median.
    #[serde(rename = "mad")]
    Mad,
    /// Keeps values between the `low` quantile and its mirror at `high`.
    #[serde(rename = "percentile")]
    Percentile,
}

/// The scale of the sigma filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SigmaScale {
    /// The sample standard deviation of all values (n - 1), the default.
    #[default]
    SampleSd,
    /// The robust scale of the `mad` filter.
    Mad,
}

/// Parameters of the filters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FilterParams {
    /// Tail share the sigma filter's trimmed-mean centre drops.
    pub trim: f64,
    /// Values that trim drops per tail (unweighted only).
    pub trim_count: TrimCount,
    /// Half-width of the band kept, in scales (sigma and `mad` filters).
    pub k: f64,
    /// Scale of the sigma filter.
    pub scale: SigmaScale,
    /// Lower quantile of the `percentile` filter.
    pub low: f64,
    /// Upper quantile of the `percentile` filter, mirrored from the top.
    pub high: f64,
    /// Centre and scale weighted by the aggregation weights (module doc).
    pub weighted: bool,
}

/// The median and the robust scale `S` of the values (module doc); `None` if empty.
pub(crate) fn robust_scale(values: &[f64]) -> Option<(f64, f64)> {
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

/// [`robust_scale`] with weights: the weighted median (midpoint rule) and `S` from
/// the weighted MAD, or the weighted MeanAD when that is 0. `None` if the weights do
/// not add up to a positive number.
pub(crate) fn robust_scale_weighted(values: &[f64], weights: &[f64]) -> Option<(f64, f64)> {
    let med = weighted_quantile(values, weights, 0.5, TieRule::Midpoint)?;
    let dev: Vec<f64> = values.iter().map(|v| (v - med).abs()).collect();
    let mad = weighted_quantile(&dev, weights, 0.5, TieRule::Midpoint)?;
    if mad > 0.0 {
        return Some((med, 1.4826 * mad));
    }
    let pairs = sorted_pairs(&dev, weights);
    let total: f64 = pairs.iter().map(|p| p.1).sum();
    let mean_ad = pairs.iter().map(|(d, w)| d * w).sum::<f64>() / total;
    Some((med, 1.2533 * mean_ad))
}

/// Weighted sample standard deviation: `sqrt(n / (n - 1) sum w (v - m)^2 / sum w)`
/// around the weighted mean `m` (the sample standard deviation with equal weights).
pub(crate) fn weighted_std(values: &[f64], weights: &[f64]) -> Option<f64> {
    let n = values.len();
    let pairs = sorted_pairs(values, weights);
    let total: f64 = pairs.iter().map(|p| p.1).sum();
    if n < 2 || total <= 0.0 || !total.is_finite() {
        return None;
    }
    let mean = pairs.iter().map(|(v, w)| v * w).sum::<f64>() / total;
    let ss: f64 = pairs.iter().map(|(v, w)| w * (v - mean).powi(2)).sum();
    Some((ss / total * n as f64 / (n - 1) as f64).sqrt())
}

/// Sample standard deviation (n - 1 denominator).
pub(crate) use rentix_core::stats::sample_std;

/// `|v - c| <= band`, with a relative tolerance of 1e-12 so that identical values
/// (scale 0) whose mean differs from them by rounding are not all removed.
fn within(v: f64, c: f64, band: f64) -> bool {
    (v - c).abs() <= band + 1e-12 * c.abs().max(1.0)
}

/// Indices of the values the filter keeps, ascending.
pub(crate) fn keep(
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
            let (centre, scale) = if p.weighted {
                (
                    vw_trimmed_mean(values, weights, p.trim),
                    match p.scale {
                        SigmaScale::SampleSd => weighted_std(values, weights),
                        SigmaScale::Mad => robust_scale_weighted(values, weights).map(|x| x.1),
                    },
                )
            } else {
                (
                    trimmed_mean(values, p.trim, p.trim_count),
                    match p.scale {
                        SigmaScale::SampleSd => sample_std(values),
                        SigmaScale::Mad => robust_scale(values).map(|x| x.1),
                    },
                )
            };
            let (Some(c), Some(s)) = (centre, scale) else {
                return all;
            };
            let band = |c: f64| -> Vec<usize> {
                (0..values.len())
                    .filter(|&i| within(values[i], c, p.k * s))
                    .collect()
            };
            let kept = band(c);
            // An outlier filter removes a minority. A band that keeps half the
            // weight or less says the centre broke down (more of the weight is
            // wild than `trim` drops: one 204 among five trades at 2.04 pulled a
            // 10%-trimmed mean to 18.9, and a MAD band of 0.13 around it removed
            // every trade); it is centred on the median instead, the centre whose
            // breakdown point is a half.
            let weight = |ix: &[usize]| -> f64 {
                if p.weighted {
                    ix.iter().map(|&i| weights[i]).sum()
                } else {
                    ix.len() as f64
                }
            };
            if 2.0 * weight(&kept) > weight(&all) {
                return kept;
            }
            let ones = vec![1.0; values.len()];
            let w = if p.weighted { weights } else { &ones[..] };
            match weighted_quantile(values, w, 0.5, TieRule::Midpoint) {
                Some(median) => band(median),
                None => kept,
            }
        }
        OutlierFilter::Mad => {
            let robust = if p.weighted {
                robust_scale_weighted(values, weights)
            } else {
                robust_scale(values)
            };
            let Some((med, s)) = robust else {
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
        weighted: false,
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

    /// The default methodology's filter (weighted, trim 0.1, MAD scale, k 3) on five
    /// trades of 100 GPU-hours at 2.00, 2.02, 2.04, 2.06, 2.08 and a typo at 204 of
    /// the same size. The 10%-trimmed mean trims 60 GPU-hours per tail and keeps
    /// 40 of the typo's 100: (2.00 x 40 + 2.02 ... 2.08 x 100 + 204 x 40) / 480 =
    /// (80 + 820 + 8160) / 480 = 18.875. The weighted median is 2.05 (midpoint of
    /// 2.04 and 2.06), the MAD 0.03 (deviations .05 .03 .01 .01 .03 201.95), S =
    /// 0.044478, band 0.1334: around 18.875 it kept nothing and the day's trades
    /// were all refused (a hostile round: the fixing fell to the listings, +49%).
    /// Around the median it keeps the five trades.
    #[test]
    fn a_wild_value_beyond_the_trim_does_not_empty_the_band() {
        let v = [2.00, 2.02, 2.04, 2.06, 2.08, 204.0];
        let w = [100.0; 6];
        let q = FilterParams {
            trim: 0.1,
            k: 3.0,
            scale: SigmaScale::Mad,
            weighted: true,
            ..P
        };
        let c = vw_trimmed_mean(&v, &w, 0.1).unwrap();
        assert!((c - 18.875).abs() < 1e-9, "{c}");
        assert_eq!(
            keep(OutlierFilter::SigmaAroundTrimmedMean, &v, &w, &q),
            vec![0, 1, 2, 3, 4]
        );
        // Unweighted (trim drops floor(0.6) = 0 values): centre the mean, 35.7;
        // the same re-centring keeps the five.
        let u = FilterParams {
            weighted: false,
            ..q
        };
        assert_eq!(
            keep(OutlierFilter::SigmaAroundTrimmedMean, &v, &w, &u),
            vec![0, 1, 2, 3, 4]
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

    #[test]
    fn a_negligible_print_moves_neither_the_weighted_centre_nor_the_weighted_scale() {
        // Five honest trades of 100 GPU-hours: 2.00 2.02 2.04 2.06 2.08, and one
        // 0.001 GPU-hour print at 2.30 (10% above). k = 3, MAD scale, trim 0.1.
        let v = [2.00, 2.02, 2.04, 2.06, 2.08, 2.30];
        let w = [100.0, 100.0, 100.0, 100.0, 100.0, 0.001];
        let p = FilterParams {
            k: 3.0,
            trim: 0.1,
            scale: SigmaScale::Mad,
            ..P
        };
        // Unweighted: median (2.04 + 2.06) / 2 = 2.05; deviations .05 .03 .01 .01
        // .03 .25 -> MAD (.03 + .03) / 2 = .03, S = .044478: the print moved the
        // median from 2.04 to 2.05 and the MAD from .02 to .03.
        let (med, s) = robust_scale(&v).unwrap();
        assert!((med - 2.05).abs() < 1e-12 && (s - 1.4826 * 0.03).abs() < 1e-9);
        // Weighted: the cumulative weight reaches half (250.0005) inside 2.04's 100
        // (200 -> 300): median 2.04; deviations .04 .02 0 .02 .04 (.26 weighs 0.001):
        // MAD .02, S = .029652, as without the print.
        let (med, s) = robust_scale_weighted(&v, &w).unwrap();
        assert!((med - 2.04).abs() < 1e-12, "{med}");
        assert!((s - 1.4826 * 0.02).abs() < 1e-9, "{s}");
        let honest = robust_scale(&v[..5]).unwrap();
        assert!((honest.0 - med).abs() < 1e-12 && (honest.1 - s).abs() < 1e-9);
        // The weighted band 2.04 +- 3 x .029652 = [1.951, 2.129] keeps the five and
        // drops the print, exactly as the five alone are filtered.
        let weighted = FilterParams {
            weighted: true,
            ..p
        };
        assert_eq!(
            keep(OutlierFilter::Mad, &v, &w, &weighted),
            vec![0, 1, 2, 3, 4]
        );
        // Sigma filter, weighted: centre = the central 80% of the weight of
        // (100 x 5 + 0.001): 50.0001 trimmed each end, pro rata, a mean within
        // 1e-6 of 2.04; same scale: the same five kept.
        assert_eq!(
            keep(OutlierFilter::SigmaAroundTrimmedMean, &v, &w, &weighted),
            vec![0, 1, 2, 3, 4]
        );
    }

    #[test]
    fn equal_weights_give_the_unweighted_filter() {
        // Weights all 7: the weighted median, MAD and MeanAD are the unweighted ones
        // (MAD 0 case included: [2, 2, 2, 2.05, 9] -> MeanAD 1.41).
        for v in [
            vec![1.0, 1.1, 0.9, 1.05, 5.0],
            vec![2.00, 2.00, 2.00, 2.05, 9.0],
        ] {
            let w = vec![7.0; v.len()];
            let (a, b) = (
                robust_scale(&v).unwrap(),
                robust_scale_weighted(&v, &w).unwrap(),
            );
            assert!((a.0 - b.0).abs() < 1e-12 && (a.1 - b.1).abs() < 1e-12);
            let wp = FilterParams {
                weighted: true,
                ..P
            };
            assert_eq!(
                keep(OutlierFilter::Mad, &v, &w, &wp),
                keep(OutlierFilter::Mad, &v, &w, &P)
            );
        }
        // Weighted sample sd with equal weights = the sample sd: 3.557105565 (above).
        let v = [2.0, 2.1, 2.2, 1.9, 10.0];
        let s = weighted_std(&v, &[3.0; 5]).unwrap();
        assert!((s - 3.557_105_565).abs() < 1e-8, "{s}");
        // Two trades, 1 and 3 GPU-hours, at 1 and 2: m = 1.75, sum w (v - m)^2 / sum w
        // = (0.5625 + 3 x 0.0625) / 4 = 0.1875; x 2 / 1 = 0.375; sd = 0.612372.
        let s = weighted_std(&[1.0, 2.0], &[1.0, 3.0]).unwrap();
        assert!((s - 0.375f64.sqrt()).abs() < 1e-12, "{s}");
    }
}
