//! The regression test of hedge accounting: OLS of the hedged item's changes `y` on
//! the hedging instrument's changes `x`, `y = a + b x + e`.
//!
//! `b = Cov(x, y) / Var(x)`, `a = my - b mx`, `R^2 = 1 - SSE / SST`, the slope's
//! standard error `se(b) = sqrt(SSE / (n - 2) / Sxx)` and `t = b / se(b)`. Both series
//! are oriented so that a working hedge has a positive slope (`y` the hedged item's
//! P&L, `x` minus the hedge's P&L; or rent changes on index changes). A hedge is
//! "highly effective" by the common reading of the rule when `R^2 >= 0.8` and the
//! signed slope lies in `[0.8, 1.25]`: a slope of -1 with `R^2 = 1` is a hedge that
//! doubles the risk, and fails. The slope's two-sided p-value against zero
//! uses Student's t with `n - 2` degrees of freedom (statrs).
//!
//! References: IAS 39 AG105 (80-125%); KPMG, "Hedge effectiveness testing" (2016).

use super::moments::{covariance, mean, variance};
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// OLS fit and the hedge-accounting reading of it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Regression {
    /// OLS slope `b`.
    pub slope: f64,
    /// Intercept `a`, in `y`'s unit.
    pub intercept: f64,
    /// `R^2 = 1 - SSE / SST`; 0 when `y` is constant.
    pub r2: f64,
    /// `t = b / se(b)`; +-`f64::MAX` for an exact fit, 0 when `y` is constant.
    pub slope_t: f64,
    /// Two-sided p-value of `slope_t` (Student's t, n - 2 degrees of freedom).
    pub slope_p_value: f64,
    /// Points fitted.
    pub n: usize,
    /// `R^2 >= 0.8` and `0.8 <= slope <= 1.25`, in the hedge's own direction.
    pub passes_80_125: bool,
}

/// Fits `y = a + b x`; `None` with fewer than three points or constant `x`.
pub fn regress(y: &[f64], x: &[f64]) -> Option<Regression> {
    let n = x.len();
    if n < 3 || y.len() != n {
        return None;
    }
    let vx = variance(x)?;
    if vx <= 0.0 {
        return None;
    }
    let slope = covariance(x, y)? / vx;
    let intercept = mean(y)? - slope * mean(x)?;
    let my = mean(y)?;
    let sst: f64 = y.iter().map(|v| (v - my).powi(2)).sum();
    let sse: f64 = x
        .iter()
        .zip(y)
        .map(|(a, b)| (b - intercept - slope * a).powi(2))
        .sum();
    let sxx = vx * (n - 1) as f64;
    let r2 = if sst > 0.0 { 1.0 - sse / sst } else { 0.0 };
    let se = (sse / (n - 2) as f64 / sxx).sqrt();
    let slope_t = if se > 0.0 {
        slope / se
    } else if sst <= 0.0 {
        // A constant `y` (a rent that never changed): no slope to test, t = 0 and
        // p = 1, not the exact fit of f64::MAX a hostile run found in summary.json.
        0.0
    } else {
        f64::INFINITY.copysign(slope)
    };
    let slope_p_value = StudentsT::new(0.0, 1.0, (n - 2) as f64)
        .map(|t| 2.0 * (1.0 - t.cdf(slope_t.abs())))
        .unwrap_or(f64::NAN)
        .clamp(0.0, 1.0);
    Some(Regression {
        slope,
        intercept,
        r2,
        slope_t: if slope_t.is_finite() {
            slope_t
        } else {
            f64::MAX.copysign(slope)
        },
        slope_p_value,
        n,
        passes_80_125: r2 >= 0.8 && (0.8..=1.25).contains(&slope),
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::hull;
    use super::*;

    #[test]
    fn a_constant_y_has_no_slope_to_test() {
        let r = regress(&[3.0; 5], &[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert_eq!((r.slope, r.slope_t, r.slope_p_value), (0.0, 0.0, 1.0));
        let exact = regress(&[2.0, 4.0, 6.0, 8.0], &[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(exact.slope_t, f64::MAX);
    }

    #[test]
    fn hull_slope_and_r2() {
        let v = hull();
        let r = regress(&v.delta_spot, &v.delta_futures).unwrap();
        assert!((r.slope - v.expected.hedge_ratio).abs() < v.expected.tolerance);
        assert!((r.r2 - v.expected.correlation.powi(2)).abs() < v.expected.tolerance);
        // t = r sqrt(n - 2) / sqrt(1 - r^2) for a simple regression.
        let rho = v.expected.correlation;
        let t = rho * 13f64.sqrt() / (1.0 - rho * rho).sqrt();
        assert!((r.slope_t - t).abs() < 1e-3, "{} vs {t}", r.slope_t);
        assert!(!r.passes_80_125, "slope 0.78 is below 0.8");
        // t = 9.00 with 13 degrees of freedom: p well below 0.001.
        assert!(r.slope_p_value < 1e-5, "{}", r.slope_p_value);
    }

    #[test]
    fn hand_computed_line() {
        let x = [1.0, 2.0, 3.0, 4.0];
        let y = [2.1, 3.9, 6.2, 7.8];
        let r = regress(&y, &x).unwrap();
        // Sxy = 4.35 + 0.55 + 0.6 + 4.2 = 9.7, Sxx = 5 -> slope 1.94; intercept 5 - 1.94 * 2.5 = 0.15
        assert!(
            (r.slope - 1.94).abs() < 1e-12 && (r.intercept - 0.15).abs() < 1e-12,
            "{r:?}"
        );
        assert!(regress(&[1.0, 2.0], &[1.0, 2.0]).is_none());
    }

    #[test]
    fn a_hedge_that_runs_the_wrong_way_fails() {
        let x = [1.0, -2.0, 3.0, 0.5, -1.5];
        let same: Vec<f64> = x.to_vec();
        let opposite: Vec<f64> = x.iter().map(|v| -v).collect();
        let good = regress(&same, &x).unwrap();
        let bad = regress(&opposite, &x).unwrap();
        assert!(good.passes_80_125 && (good.slope - 1.0).abs() < 1e-12);
        assert!((bad.slope + 1.0).abs() < 1e-12 && (bad.r2 - 1.0).abs() < 1e-12);
        assert!(!bad.passes_80_125, "slope -1 passes nothing");
    }
}
