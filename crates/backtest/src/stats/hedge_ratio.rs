//! Minimum-variance hedge ratio and the number of contracts.
//!
//! `h* = Cov(dS, dF) / Var(dF) = rho sigma_S / sigma_F`, the OLS slope of the
//! exposure's price changes `dS` on the futures price changes `dF` (sample moments,
//! n - 1). The optimal number of contracts is `N* = h* Q_A / Q_F` for an exposure of
//! `Q_A` units and a contract of `Q_F` units (730 GPU-hours for a GPU-month); the
//! traded number is `N*` rounded to the nearest whole contract.
//!
//! Reference: J. Hull, Options, Futures, and Other Derivatives, section 3.4 and
//! Example 3.3.

use super::moments::{covariance, variance};

/// `Cov(ds, df) / Var(df)`; `None` with fewer than two points or constant `df`.
pub fn min_variance_hedge_ratio(ds: &[f64], df: &[f64]) -> Option<f64> {
    let v = variance(df)?;
    if v <= 0.0 {
        return None;
    }
    Some(covariance(ds, df)? / v)
}

/// Unrounded optimal contract count `h Q_A / Q_F`.
pub fn contracts_unrounded(h: f64, exposure_units: f64, contract_units: f64) -> f64 {
    h * exposure_units / contract_units
}

/// Whole contracts, rounded half away from zero. The unrounded count is first taken
/// to nine decimals, so that float noise (10.4999999999995 for 10.5) cannot decide a
/// half.
pub fn contracts(h: f64, exposure_units: f64, contract_units: f64) -> i64 {
    let n = contracts_unrounded(h, exposure_units, contract_units);
    ((n * 1e9).round() / 1e9).round() as i64
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::hull;
    use super::*;

    #[test]
    fn hull_example_3_3() {
        let v = hull();
        let h = min_variance_hedge_ratio(&v.delta_spot, &v.delta_futures).unwrap();
        assert!(
            (h - v.expected.hedge_ratio).abs() < v.expected.tolerance,
            "{h}"
        );
        let n = contracts_unrounded(h, v.expected.exposure_units, v.expected.contract_units);
        assert!((n - v.expected.contracts_unrounded).abs() < 1e-3, "{n}");
        assert_eq!(
            contracts(h, v.expected.exposure_units, v.expected.contract_units),
            v.expected.contracts
        );
        assert!(min_variance_hedge_ratio(&[1.0, 2.0], &[3.0, 3.0]).is_none());
        // Half a contract rounds away from zero, float noise or not: 7,665 GPU-hours
        // on 730-hour contracts is 10.5 -> 11; 7,664.9999999999945 (thirty-one
        // day-splits summed) is the same invoice.
        assert_eq!(contracts(1.0, 7665.0, 730.0), 11);
        assert_eq!(contracts(1.0, 7_664.999_999_999_994_5, 730.0), 11);
        assert_eq!(contracts(1.0, 7664.0, 730.0), 10);
    }
}
