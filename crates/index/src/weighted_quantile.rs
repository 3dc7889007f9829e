//! Weighted median and weighted percentiles.
//!
//! Sort by value and cumulate the weights. The **lower** (inverted-CDF) rule takes
//! the first value whose cumulative weight reaches `q` times the total: the rule of
//! the NY Fed for SOFR and EFFR ("the rate associated with the trades at the 50th
//! percentile of dollar volume"), and numpy's `quantile(..., weights=w,
//! method="inverted_cdf")`. The **midpoint** rule is the same except that when the
//! cumulative weight lands exactly on `q` times the total, it averages that value
//! and the next one. Equality is tested with a relative tolerance of 1e-12 of the
//! total weight, so that weights like 1/3 that do not add up exactly in binary still
//! land "exactly" on the half.
//!
//! Reference: Federal Reserve Bank of New York, "Statement Regarding Publication of
//! Overnight Treasury GC Repo Rates and the Secured Overnight Financing Rate".

use serde::{Deserialize, Serialize};

/// Tie rule for a weighted quantile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum TieRule {
    /// The first value whose cumulative weight reaches `q` (inverted CDF; SOFR and
    /// EFFR), the default.
    #[default]
    Lower,
    /// As `Lower`, but the mean of that value and the next when the cumulative
    /// weight lands exactly on `q`.
    Midpoint,
}

/// Sorts (value, weight) pairs by value, then weight (a total order, so the result
/// does not depend on input order).
pub(crate) fn sorted_pairs(values: &[f64], weights: &[f64]) -> Vec<(f64, f64)> {
    let mut v: Vec<(f64, f64)> = values
        .iter()
        .copied()
        .zip(weights.iter().copied())
        .collect();
    // A total order: equal pairs are the same bits, so an unstable sort gives the
    // same result as a stable one, without the stable sort's scratch buffer.
    v.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    v
}

/// The mirror of the lower rule for an upper cut-off: the largest value whose
/// cumulative weight counted from the top reaches `(1 - q)` times the total. A
/// `[q, 1 - q]` band cut with [`weighted_quantile_sorted`] (lower rule) below and
/// this above is symmetric: on 1..10 with equal weights, `q = 0.1` keeps 1..10.
pub(crate) fn upper_quantile_sorted(pairs: &[(f64, f64)], q: f64) -> Option<f64> {
    let total: f64 = pairs.iter().map(|p| p.1).sum();
    if pairs.is_empty() || total <= 0.0 || !total.is_finite() {
        return None;
    }
    let target = (1.0 - q.clamp(0.0, 1.0)) * total;
    let eps = 1e-12 * total;
    let mut cum = 0.0;
    for &(v, w) in pairs.iter().rev() {
        cum += w;
        if cum >= target - eps && w > 0.0 {
            return Some(v);
        }
    }
    pairs.first().map(|p| p.0)
}

/// The weighted `q`-quantile (0 < q <= 1) of values with positive weights.
/// `None` for empty input or a non-positive total weight.
pub(crate) fn weighted_quantile(
    values: &[f64],
    weights: &[f64],
    q: f64,
    rule: TieRule,
) -> Option<f64> {
    let pairs = sorted_pairs(values, weights);
    weighted_quantile_sorted(&pairs, q, rule)
}

/// As [`weighted_quantile`] on pairs already sorted by [`sorted_pairs`].
pub(crate) fn weighted_quantile_sorted(pairs: &[(f64, f64)], q: f64, rule: TieRule) -> Option<f64> {
    let total: f64 = pairs.iter().map(|p| p.1).sum();
    if pairs.is_empty() || total <= 0.0 || !total.is_finite() {
        return None;
    }
    let target = q.clamp(0.0, 1.0) * total;
    let eps = 1e-12 * total;
    let mut cum = 0.0;
    for (i, &(v, w)) in pairs.iter().enumerate() {
        cum += w;
        if cum >= target - eps {
            if rule == TieRule::Midpoint && (cum - target).abs() <= eps {
                if let Some(&(next, _)) = pairs[i + 1..].iter().find(|p| p.1 > 0.0) {
                    return Some((v + next) / 2.0);
                }
            }
            return Some(v);
        }
    }
    pairs.last().map(|p| p.0)
}

/// Weighted median: `weighted_quantile` at one half.
pub fn weighted_median(values: &[f64], weights: &[f64], rule: TieRule) -> Option<f64> {
    weighted_quantile(values, weights, 0.5, rule)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Case {
        values: Vec<f64>,
        weights: Vec<f64>,
        lower: f64,
        midpoint: f64,
        segment: Option<Vec<String>>,
        lower_after_dropping_lowest_20pct_of_dvp: Option<f64>,
        percentiles_after_drop: Option<std::collections::BTreeMap<String, f64>>,
    }

    #[derive(serde::Deserialize)]
    struct Vectors {
        case: Vec<Case>,
    }

    fn vectors() -> Vectors {
        toml::from_str(include_str!(
            "../../../tests/data/vectors/weighted_median.toml"
        ))
        .unwrap()
    }

    #[test]
    fn published_weighted_median_vectors() {
        for c in vectors().case {
            assert_eq!(
                weighted_median(&c.values, &c.weights, TieRule::Lower),
                Some(c.lower)
            );
            let mid = weighted_median(&c.values, &c.weights, TieRule::Midpoint).unwrap();
            assert!((mid - c.midpoint).abs() < 1e-12, "{mid} vs {}", c.midpoint);
        }
    }

    #[test]
    fn repo_day_after_dropping_the_lowest_fifth_of_a_segment() {
        let c = vectors()
            .case
            .into_iter()
            .find(|c| c.segment.is_some())
            .unwrap();
        let seg = c.segment.clone().unwrap();
        // The dvp segment's volume is 500; its lowest 20% (100) is the 5.10 trade.
        let (v, w): (Vec<f64>, Vec<f64>) = c
            .values
            .iter()
            .zip(&c.weights)
            .zip(&seg)
            .filter(|((v, _), s)| !(s.as_str() == "dvp" && **v == 5.10))
            .map(|((v, w), _)| (*v, *w))
            .unzip();
        assert_eq!(
            weighted_median(&v, &w, TieRule::Lower),
            c.lower_after_dropping_lowest_20pct_of_dvp
        );
        let p = c.percentiles_after_drop.unwrap();
        for (name, q) in [("p1", 0.01), ("p25", 0.25), ("p75", 0.75), ("p99", 0.99)] {
            assert_eq!(
                weighted_quantile(&v, &w, q, TieRule::Lower),
                Some(p[name]),
                "{name}"
            );
        }
    }

    #[test]
    fn order_does_not_matter_and_empty_is_none() {
        let a = weighted_median(&[3.0, 1.0, 2.0], &[1.0, 1.0, 1.0], TieRule::Lower);
        let b = weighted_median(&[2.0, 3.0, 1.0], &[1.0, 1.0, 1.0], TieRule::Lower);
        assert_eq!(a, Some(2.0));
        assert_eq!(a, b);
        assert_eq!(weighted_median(&[], &[], TieRule::Lower), None);
        assert_eq!(weighted_median(&[1.0], &[0.0], TieRule::Lower), None);
    }
}
