//! Aggregation of a fixing's observations into one value.
//!
//! With values `v_i` and weights `w_i` (GPU-hours for trades, 1 for offers, after
//! the contributor cap):
//! - `vw-median`: weighted median, tie rule from the methodology (lower = SOFR rule);
//! - `median`: the ordinary median (unit weights, midpoint rule: an even count
//!   averages the two middle values);
//! - `vw-mean`: `sum w v / sum w`;
//! - `trimmed-mean`: unweighted mean after dropping `floor(trim n)` values from each
//!   end;
//! - `winsorized-vw-mean`: values clamped to the weighted `trim` and `1 - trim`
//!   quantiles (lower rule), then the weighted mean.

use crate::weighted_quantile::{sorted_pairs, weighted_quantile_sorted, TieRule};
use serde::{Deserialize, Serialize};

/// How a fixing combines its observations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Aggregation {
    #[serde(rename = "vw-median")]
    VwMedian,
    #[serde(rename = "median")]
    Median,
    #[serde(rename = "vw-mean")]
    VwMean,
    #[serde(rename = "trimmed-mean")]
    TrimmedMean,
    #[serde(rename = "winsorized-vw-mean")]
    WinsorizedVwMean,
}

impl Aggregation {
    pub fn as_str(self) -> &'static str {
        match self {
            Aggregation::VwMedian => "vw-median",
            Aggregation::Median => "median",
            Aggregation::VwMean => "vw-mean",
            Aggregation::TrimmedMean => "trimmed-mean",
            Aggregation::WinsorizedVwMean => "winsorized-vw-mean",
        }
    }
}

/// Unweighted mean after dropping `floor(trim n)` values from each end of the sorted
/// values. `None` if nothing is left.
pub fn trimmed_mean(values: &[f64], trim: f64) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let cut = (trim.clamp(0.0, 0.5) * v.len() as f64).floor() as usize;
    let kept = &v[cut..v.len().saturating_sub(cut)];
    if kept.is_empty() {
        return None;
    }
    Some(kept.iter().sum::<f64>() / kept.len() as f64)
}

/// Aggregates `values` with `weights`; `None` for empty input.
pub fn aggregate(
    method: Aggregation,
    values: &[f64],
    weights: &[f64],
    trim: f64,
    tie: TieRule,
) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    match method {
        Aggregation::VwMedian => weighted_quantile_sorted(&sorted_pairs(values, weights), 0.5, tie),
        Aggregation::Median => {
            let ones = vec![1.0; values.len()];
            weighted_quantile_sorted(&sorted_pairs(values, &ones), 0.5, TieRule::Midpoint)
        }
        Aggregation::VwMean => vw_mean(values, weights),
        Aggregation::TrimmedMean => trimmed_mean(values, trim),
        Aggregation::WinsorizedVwMean => {
            let pairs = sorted_pairs(values, weights);
            let lo = weighted_quantile_sorted(&pairs, trim, TieRule::Lower)?;
            let hi = weighted_quantile_sorted(&pairs, 1.0 - trim, TieRule::Lower)?;
            let clamped: Vec<f64> = values.iter().map(|v| v.clamp(lo, hi)).collect();
            vw_mean(&clamped, weights)
        }
    }
}

fn vw_mean(values: &[f64], weights: &[f64]) -> Option<f64> {
    // Sum in sorted order so that the result does not depend on input order.
    let pairs = sorted_pairs(values, weights);
    let w: f64 = pairs.iter().map(|p| p.1).sum();
    if w <= 0.0 {
        return None;
    }
    Some(pairs.iter().map(|p| p.0 * p.1).sum::<f64>() / w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case(Aggregation::VwMedian, 2.0)]
    #[case(Aggregation::Median, 2.5)]
    #[case(Aggregation::VwMean, (1.0 * 1.0 + 2.0 * 3.0 + 3.0 * 1.0 + 10.0 * 1.0) / 6.0)]
    #[case(Aggregation::TrimmedMean, 2.5)]
    #[case(Aggregation::WinsorizedVwMean, 14.0 / 6.0)]
    fn hand_computed(#[case] m: Aggregation, #[case] want: f64) {
        let v = [10.0, 2.0, 1.0, 3.0];
        let w = [1.0, 3.0, 1.0, 1.0];
        // trim 0.25: the trimmed mean drops one value from each end -> mean(2, 3).
        // Winsorizing: weighted 25% quantile = 2 (cum 1 < 1.5 <= 4), 75% = 3
        // (cum 4 < 4.5 <= 5); 1 -> 2 and 10 -> 3, so (2 + 2*3 + 3 + 3) / 6.
        let got = aggregate(m, &v, &w, 0.25, TieRule::Lower).unwrap();
        assert!((got - want).abs() < 1e-12, "{m:?}: {got} vs {want}");
    }

    #[test]
    fn empty_is_none() {
        assert_eq!(
            aggregate(Aggregation::VwMean, &[], &[], 0.1, TieRule::Lower),
            None
        );
    }
}
