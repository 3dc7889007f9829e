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
    if vu <= 0.0 || vu.sqrt() <= ROUNDING * largest(unhedged).max(1.0) {
        return None;
    }
    Some(1.0 - variance(hedged)? / vu)
}

/// Size, relative to the values (and absolute below 1: a billionth of a dollar or
/// of a price), below which a spread of values is the rounding of one value: a
/// constant rent of one yearly row, split into months, left monthly changes of
/// about 1e-10 dollars, and effectiveness divided by their variance was -1.7e29
/// (a hostile run).
pub const ROUNDING: f64 = 1e-9;

/// The largest magnitude among `x` (0 for none).
pub fn largest(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |m: f64, v| m.max(v.abs()))
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

    /// Months of one constant rent that differ by rounding (a yearly row split into
    /// months): no risk to remove, not an effectiveness of -1.7e29.
    #[test]
    fn a_spread_of_rounding_is_no_risk() {
        let unhedged = [2.5e6, 2.5e6 + 1e-9, 2.5e6 - 1e-9, 2.5e6];
        let hedged = [2.5e6, 2.5e6 + 3.0, 2.5e6 - 2.0, 2.5e6];
        assert_eq!(effectiveness(&hedged, &unhedged), None);
        // Monthly changes that are rounding themselves.
        let changes = [1e-10, -2e-10, 0.0, 1.5e-10];
        assert_eq!(effectiveness(&[3.0, -2.0, 1.0, 0.0], &changes), None);
        let moving = [2.5e6, 2.5e6 + 10.0, 2.5e6 - 10.0, 2.5e6];
        assert!(effectiveness(&hedged, &moving).is_some());
    }

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
