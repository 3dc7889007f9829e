//! Aggregation of a fixing's observations into one value.
//!
//! With values `v_i` and weights `w_i` (GPU-hours for trades, 1 for offers, after
//! the contributor cap):
//! - `vw-median`: weighted median, tie rule from the methodology (lower = SOFR rule);
//! - `median`: the ordinary median (unit weights, midpoint rule: an even count
//!   averages the two middle values);
//! - `vw-mean`: `sum w v / sum w`;
//! - `trimmed-mean`: unweighted mean after dropping `floor(trim n)` values from each
//!   end (`trim_count = "at-least-one"`: `max(1, floor(trim n))`, nothing below three
//!   values);
//! - `vw-trimmed-mean`: the weighted mean of the central `1 - 2 trim` share of the
//!   weight; an observation straddling a cut-off enters with the part of its weight
//!   inside (pro rata), the overnight-rate method (Bank of England, SONIA: "the mean
//!   of the central 50% of the volume-weighted distribution");
//! - `winsorized-vw-mean`: values clamped to the weighted `trim` quantile (lower
//!   rule) and its mirror at `1 - trim` (counted from the top, so both tails are cut
//!   alike), then the weighted mean.

use crate::weighted_quantile::{
    sorted_pairs, upper_quantile_sorted, weighted_quantile_sorted, TieRule,
};
use serde::{Deserialize, Serialize};

/// How a fixing combines its observations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::IntoStaticStr, strum::Display, strum::EnumString, strum::VariantArray)]
#[strum(serialize_all = "kebab-case")]
pub enum Aggregation {
    /// `vw-median`: weighted median, with the methodology's tie rule.
    VwMedian,
    /// `median`: weighted median of the capped weights, midpoint rule.
    Median,
    /// `vw-mean`: `sum w v / sum w`.
    VwMean,
    /// `trimmed-mean`: unweighted mean after dropping values from each tail; it
    /// cannot apply the contributor cap.
    TrimmedMean,
    /// `vw-trimmed-mean`: weighted mean of the central `1 - 2 trim` of the weight.
    VwTrimmedMean,
    /// `winsorized-vw-mean`: weighted mean after clamping to the `trim` quantile and
    /// its mirror from the top.
    WinsorizedVwMean,
}

impl Aggregation {
    /// The methodology's and the `method` column's name (`vw-median`, ...).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// How many values a trim of `share` drops from each tail of `n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum TrimCount {
    /// `floor(share n)`: nothing below `1 / share` values.
    #[default]
    Floor,
    /// `max(1, floor(share n))` once there are at least three values.
    AtLeastOne,
}

impl TrimCount {
    /// Values dropped from each tail of `n` by a trim of `share` (clamped to
    /// `[0, 0.5]`).
    pub fn per_tail(self, n: usize, share: f64) -> usize {
        let f = (share.clamp(0.0, 0.5) * n as f64).floor() as usize;
        match self {
            TrimCount::Floor => f,
            TrimCount::AtLeastOne if n >= 3 && share > 0.0 => f.max(1),
            TrimCount::AtLeastOne => f,
        }
    }
}

/// Unweighted mean after dropping `count.per_tail(n, trim)` values from each end of
/// the sorted values. `None` if nothing is left.
pub(crate) fn trimmed_mean(values: &[f64], trim: f64, count: TrimCount) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    let cut = count.per_tail(v.len(), trim);
    let kept = &v[cut.min(v.len())..v.len().saturating_sub(cut)];
    if kept.is_empty() {
        return None;
    }
    Some(kept.iter().sum::<f64>() / kept.len() as f64)
}

/// The weighted mean of the central `1 - 2 trim` of the weight, boundary observations
/// entering pro rata.
pub(crate) fn vw_trimmed_mean(values: &[f64], weights: &[f64], trim: f64) -> Option<f64> {
    let pairs = sorted_pairs(values, weights);
    let total: f64 = pairs.iter().map(|p| p.1).sum();
    if total <= 0.0 || !total.is_finite() {
        return None;
    }
    let (lo, hi) = (
        trim.clamp(0.0, 0.5) * total,
        (1.0 - trim.clamp(0.0, 0.5)) * total,
    );
    let (mut cum, mut sw, mut swv) = (0.0, 0.0, 0.0);
    for (v, w) in pairs {
        let inside = (cum + w).min(hi) - cum.max(lo);
        if inside > 0.0 {
            sw += inside;
            swv += inside * v;
        }
        cum += w;
    }
    (sw > 0.0).then(|| swv / sw)
}

/// Parameters of an aggregation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AggParams {
    /// Tail share of the trimmed and winsorized means (`aggregation.trim`).
    pub trim: f64,
    /// Tie rule of `vw-median` (`aggregation.tie_rule`).
    pub tie: TieRule,
    /// Values the unweighted trimmed mean drops per tail (`aggregation.trim_count`).
    pub trim_count: TrimCount,
}

/// Aggregates `values` with `weights`; `None` for empty input.
pub(crate) fn aggregate(
    method: Aggregation,
    values: &[f64],
    weights: &[f64],
    p: AggParams,
) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let trim = p.trim;
    match method {
        Aggregation::VwMedian => {
            weighted_quantile_sorted(&sorted_pairs(values, weights), 0.5, p.tie)
        }
        // Weights here are the contributor-capped unit weights: with no contributor
        // above the cap they are equal and this is the ordinary median.
        Aggregation::Median => {
            weighted_quantile_sorted(&sorted_pairs(values, weights), 0.5, TieRule::Midpoint)
        }
        Aggregation::VwMean => vw_mean(values, weights),
        Aggregation::TrimmedMean => trimmed_mean(values, trim, p.trim_count),
        Aggregation::VwTrimmedMean => vw_trimmed_mean(values, weights, trim),
        Aggregation::WinsorizedVwMean => {
            let pairs = sorted_pairs(values, weights);
            let lo = weighted_quantile_sorted(&pairs, trim, TieRule::Lower)?;
            let hi = upper_quantile_sorted(&pairs, 1.0 - trim)?;
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

    const P: AggParams = AggParams {
        trim: 0.25,
        tie: TieRule::Lower,
        trim_count: TrimCount::Floor,
    };

    #[test]
    fn hand_computed() {
        let v = [10.0, 2.0, 1.0, 3.0];
        let w = [1.0, 3.0, 1.0, 1.0];
        // trim 0.25: the trimmed mean drops one value from each end -> mean(2, 3).
        // Winsorizing: weighted 25% quantile = 2 (cum 1 < 1.5 <= 4); from the top,
        // the 25% tail (1.5 of 6) is reached at 3 (10: 1, then 3: 2); 1 -> 2 and
        // 10 -> 3, so (2 + 2*3 + 3 + 3) / 6.
        let cases = [
            (Aggregation::VwMedian, 2.0),
            (
                Aggregation::VwMean,
                (1.0 * 1.0 + 2.0 * 3.0 + 3.0 * 1.0 + 10.0 * 1.0) / 6.0,
            ),
            (Aggregation::TrimmedMean, 2.5),
            (Aggregation::WinsorizedVwMean, 14.0 / 6.0),
            // Central 50% of weight 6 is cumulative 1.5..4.5: value 2 contributes
            // 1.5..4 (2.5), value 3 contributes 4..4.5 (0.5): (2 x 2.5 + 3 x 0.5) / 3.
            (Aggregation::VwTrimmedMean, 6.5 / 3.0),
        ];
        for (m, want) in cases {
            let got = aggregate(m, &v, &w, P).unwrap();
            assert!((got - want).abs() < 1e-12, "{m:?}: {got} vs {want}");
        }
    }

    #[test]
    fn winsorizing_cuts_both_tails_alike() {
        // 1..10, equal weights, trim 0.1: each tail holds exactly one value's weight
        // at the cut, so nothing is clamped: 5.5 (the lower rule at 0.9 gave 5.4).
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        let w = vec![1.0; 10];
        let p = AggParams { trim: 0.1, ..P };
        let got = aggregate(Aggregation::WinsorizedVwMean, &v, &w, p).unwrap();
        assert!((got - 5.5).abs() < 1e-12, "{got}");
    }

    #[test]
    fn trim_counts() {
        // n = 5, trim 10%: floor drops nothing; at-least-one drops 1 and 5.
        let v = [1.0, 2.0, 3.0, 4.0, 10.0];
        assert_eq!(trimmed_mean(&v, 0.1, TrimCount::Floor), Some(4.0));
        assert_eq!(trimmed_mean(&v, 0.1, TrimCount::AtLeastOne), Some(3.0));
        assert_eq!(TrimCount::AtLeastOne.per_tail(2, 0.1), 0);
        assert_eq!(TrimCount::AtLeastOne.per_tail(25, 0.1), 2);
    }

    #[test]
    fn median_on_equal_weights_is_the_ordinary_median() {
        let got = aggregate(Aggregation::Median, &[10.0, 2.0, 1.0, 3.0], &[1.0; 4], P);
        assert_eq!(got, Some(2.5));
    }

    #[test]
    fn empty_is_none() {
        assert_eq!(aggregate(Aggregation::VwMean, &[], &[], P), None);
    }
}

#[cfg(test)]
mod text_tests {
    use super::*;

    /// Every variant's text as published before it was derived: methodology files
    /// and the fixings' `method` column hold it, so it must not change by a byte.
    const TEXT: [(Aggregation, &str); 6] = [
        (Aggregation::VwMedian, "vw-median"),
        (Aggregation::Median, "median"),
        (Aggregation::VwMean, "vw-mean"),
        (Aggregation::TrimmedMean, "trimmed-mean"),
        (Aggregation::VwTrimmedMean, "vw-trimmed-mean"),
        (Aggregation::WinsorizedVwMean, "winsorized-vw-mean"),
    ];

    #[test]
    fn text_forms_are_pinned_and_agree_with_serde() {
        assert_eq!(
            <Aggregation as strum::VariantArray>::VARIANTS.len(),
            TEXT.len()
        );
        for (v, text) in TEXT {
            assert_eq!(v.as_str(), text);
            assert_eq!(text.parse::<Aggregation>().unwrap(), v);
            assert_eq!(v.to_string(), text);
            assert_eq!(serde_json::to_value(v).unwrap(), text);
            assert_eq!(
                serde_json::from_value::<Aggregation>(text.into()).unwrap(),
                v
            );
        }
    }
}
