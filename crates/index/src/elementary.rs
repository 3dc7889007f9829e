//! Elementary price indices between two periods, and their chained forms.
//!
//! With prices `p0_i`, `p1_i` of the same items and weights `w_i` (summing to 1):
//! - Jevons: `prod (p1_i / p0_i)^{w_i}` (geometric mean of relatives; equal weights
//!   give the CPI manual's unweighted Jevons);
//! - Dutot: `sum w_i p1_i / sum w_i p0_i` (ratio of weighted average prices);
//! - Carli: `sum w_i (p1_i / p0_i)` (arithmetic mean of relatives; drifts upward
//!   when chained, shown by the CPI manual's Table 8.3).
//!
//! Chained forms multiply period-to-period links; a link uses only the items priced
//! in both periods, with their weights renormalized.
//!
//! Reference: ILO/IMF/OECD/UNECE/Eurostat/World Bank, Consumer Price Index Manual:
//! Concepts and Methods (2020), chapter 8.

use serde::{Deserialize, Serialize};

/// An elementary index formula.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Elementary {
    /// Weighted geometric mean of price relatives.
    Jevons,
    /// Ratio of weighted average prices.
    Dutot,
    /// Weighted arithmetic mean of price relatives (drifts upward when chained).
    Carli,
}

/// One link: the index of period 1 relative to period 0 (1.0 = unchanged).
/// `None` when no item is priced in both periods or a price is not positive.
pub(crate) fn link(
    f: Elementary,
    p0: &[Option<f64>],
    p1: &[Option<f64>],
    weights: &[f64],
) -> Option<f64> {
    let items: Vec<(f64, f64, f64)> = p0
        .iter()
        .zip(p1)
        .zip(weights)
        .filter_map(|((a, b), w)| match (a, b) {
            (Some(a), Some(b)) if *a > 0.0 && *b > 0.0 && *w > 0.0 => Some((*a, *b, *w)),
            _ => None,
        })
        .collect();
    let wsum: f64 = items.iter().map(|x| x.2).sum();
    if items.is_empty() || wsum <= 0.0 {
        return None;
    }
    Some(match f {
        Elementary::Jevons => items
            .iter()
            .map(|(a, b, w)| (w / wsum) * (b / a).ln())
            .sum::<f64>()
            .exp(),
        Elementary::Dutot => {
            items.iter().map(|(_, b, w)| w * b).sum::<f64>()
                / items.iter().map(|(a, _, w)| w * a).sum::<f64>()
        }
        Elementary::Carli => items.iter().map(|(a, b, w)| (w / wsum) * (b / a)).sum(),
    })
}

/// Direct index of every period against period 0, scaled to `base` (e.g. 100).
pub fn direct(
    f: Elementary,
    prices: &[Vec<Option<f64>>],
    weights: &[f64],
    base: f64,
) -> Vec<Option<f64>> {
    prices
        .iter()
        .map(|p| link(f, &prices[0], p, weights).map(|x| base * x))
        .collect()
}

/// Chained index: period t = period t-1 times the t-1 -> t link; a period with no
/// link carries the previous level.
pub fn chained(f: Elementary, prices: &[Vec<Option<f64>>], weights: &[f64], base: f64) -> Vec<f64> {
    let mut out = Vec::with_capacity(prices.len());
    let mut level = base;
    for t in 0..prices.len() {
        if t > 0 {
            if let Some(l) = link(f, &prices[t - 1], &prices[t], weights) {
                level *= l;
            }
        }
        out.push(level);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Expected {
        jevons_direct: Vec<f64>,
        dutot_direct: Vec<f64>,
        carli_direct: Vec<f64>,
        carli_chained: Vec<f64>,
        tolerance: f64,
    }
    #[derive(serde::Deserialize)]
    struct Small {
        p0: Vec<f64>,
        p1: Vec<f64>,
        carli: f64,
        jevons: f64,
        dutot: f64,
        tolerance: f64,
    }
    #[derive(serde::Deserialize)]
    struct Vectors {
        prices: Vec<Vec<f64>>,
        expected: Expected,
        small: Small,
    }

    fn vectors() -> Vectors {
        toml::from_str(include_str!(
            "../../../tests/data/vectors/elementary_indices.toml"
        ))
        .unwrap()
    }

    #[test]
    fn cpi_manual_tables_8_1_to_8_3() {
        let v = vectors();
        // The file lists items by row and periods by column; we want periods by row.
        let periods = v.prices[0].len();
        let by_period: Vec<Vec<Option<f64>>> = (0..periods)
            .map(|t| v.prices.iter().map(|item| Some(item[t])).collect())
            .collect();
        let w = vec![1.0; v.prices.len()];
        let e = &v.expected;
        let check = |got: &[f64], want: &[f64], what: &str| {
            for (t, (g, x)) in got.iter().zip(want).enumerate() {
                assert!(
                    (g - x).abs() <= e.tolerance,
                    "{what} period {t}: {g} vs {x}"
                );
            }
        };
        let unwrap = |v: Vec<Option<f64>>| v.into_iter().map(Option::unwrap).collect::<Vec<_>>();
        check(
            &unwrap(direct(Elementary::Jevons, &by_period, &w, 100.0)),
            &e.jevons_direct,
            "jevons",
        );
        check(
            &unwrap(direct(Elementary::Dutot, &by_period, &w, 100.0)),
            &e.dutot_direct,
            "dutot",
        );
        check(
            &unwrap(direct(Elementary::Carli, &by_period, &w, 100.0)),
            &e.carli_direct,
            "carli",
        );
        check(
            &chained(Elementary::Carli, &by_period, &w, 100.0),
            &e.carli_chained,
            "carli chained",
        );
        // Chained Jevons and Dutot equal their direct values.
        check(
            &chained(Elementary::Jevons, &by_period, &w, 100.0),
            &e.jevons_direct,
            "jevons chained",
        );
        check(
            &chained(Elementary::Dutot, &by_period, &w, 100.0),
            &e.dutot_direct,
            "dutot chained",
        );
    }

    #[test]
    fn price_indexes_jl_small_case() {
        let s = vectors().small;
        let p0: Vec<Option<f64>> = s.p0.iter().map(|x| Some(*x)).collect();
        let p1: Vec<Option<f64>> = s.p1.iter().map(|x| Some(*x)).collect();
        let w = vec![1.0; 4];
        assert!((link(Elementary::Carli, &p0, &p1, &w).unwrap() - s.carli).abs() < s.tolerance);
        assert!((link(Elementary::Jevons, &p0, &p1, &w).unwrap() - s.jevons).abs() < s.tolerance);
        assert!((link(Elementary::Dutot, &p0, &p1, &w).unwrap() - s.dutot).abs() < s.tolerance);
    }

    #[test]
    fn missing_items_drop_out_of_a_link() {
        let p0 = [Some(2.0), None, Some(1.0)];
        let p1 = [Some(4.0), Some(9.0), None];
        assert_eq!(
            link(Elementary::Dutot, &p0, &p1, &[1.0, 1.0, 1.0]),
            Some(2.0)
        );
        assert_eq!(
            link(Elementary::Jevons, &[None], &[Some(1.0)], &[1.0]),
            None
        );
    }
}
