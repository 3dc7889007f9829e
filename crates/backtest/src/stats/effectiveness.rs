//! Hedge effectiveness (Ederington 1979): the share of the unhedged variance that
//! the hedge removes, `1 - Var(hedged) / Var(unhedged)`, where for price changes
//! `hedged = dS - h dF`. At the minimum-variance ratio it equals `rho^2`.
//!
//! Reference: L. Ederington, "The Hedging Performance of the New Futures Markets",
//! Journal of Finance 34 (1979).

use super::moments::variance;

/// `1 - Var(hedged) / Var(unhedged)`; `None` if the unhedged variance is zero.
pub fn effectiveness(hedged: &[f64], unhedged: &[f64]) -> Option<f64> {
    let vu = variance(unhedged)?;
    if vu <= 0.0 {
        return None;
    }
    Some(1.0 - variance(hedged)? / vu)
}

/// Effectiveness of hedging changes `ds` with `h` times changes `df`.
pub fn effectiveness_at(ds: &[f64], df: &[f64], h: f64) -> Option<f64> {
    let hedged: Vec<f64> = ds.iter().zip(df).map(|(s, f)| s - h * f).collect();
    effectiveness(&hedged, ds)
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::hull;
    use super::*;

    #[test]
    fn hull_effectiveness() {
        let v = hull();
        let e = effectiveness_at(&v.delta_spot, &v.delta_futures, v.expected.hedge_ratio).unwrap();
        assert!(
            (e - v.expected.effectiveness_at_hedge_ratio).abs() < v.expected.tolerance,
            "{e}"
        );
        let naive = effectiveness_at(&v.delta_spot, &v.delta_futures, 1.0).unwrap();
        assert!(
            (naive - v.expected.effectiveness_naive_one_to_one).abs() < v.expected.tolerance,
            "{naive}"
        );
    }
}
