//! Pearson correlation, `Cov(x, y) / (sigma_x sigma_y)`.
//!
//! Computed both on price *changes* (what a hedge cares about: does the index move
//! when my rent moves?) and on *levels*. Levels of two trending series correlate
//! highly even when their changes do not (spurious correlation of trends, Granger
//! and Newbold 1974); a steady premium over the index leaves the correlation of
//! changes intact. Judge a hedge on changes.

use super::moments::{covariance, std_dev};

/// Pearson correlation; `None` with fewer than two points or a constant series.
pub fn correlation(x: &[f64], y: &[f64]) -> Option<f64> {
    let (sx, sy) = (std_dev(x)?, std_dev(y)?);
    if sx <= 0.0 || sy <= 0.0 {
        return None;
    }
    Some(covariance(x, y)? / (sx * sy))
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::hull;
    use super::*;

    #[test]
    fn hull_correlation_and_sigmas() {
        let v = hull();
        let r = correlation(&v.delta_spot, &v.delta_futures).unwrap();
        assert!(
            (r - v.expected.correlation).abs() < v.expected.tolerance,
            "{r}"
        );
        let sf = super::super::moments::std_dev(&v.delta_futures).unwrap();
        let ss = super::super::moments::std_dev(&v.delta_spot).unwrap();
        assert!((sf - v.expected.sigma_futures).abs() < v.expected.tolerance);
        assert!((ss - v.expected.sigma_spot).abs() < v.expected.tolerance);
    }

    #[test]
    fn trending_levels_correlate_when_changes_do_not() {
        // Two series that both rise by 1 a step, with alternating wiggles of
        // opposite sign: levels correlate almost perfectly, changes negatively.
        let a: Vec<f64> = (0..20)
            .map(|i| f64::from(i) + if i % 2 == 0 { 0.4 } else { -0.4 })
            .collect();
        let b: Vec<f64> = (0..20)
            .map(|i| f64::from(i) + if i % 2 == 0 { -0.4 } else { 0.4 })
            .collect();
        let da: Vec<f64> = a.windows(2).map(|w| w[1] - w[0]).collect();
        let db: Vec<f64> = b.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(correlation(&a, &b).unwrap() > 0.98);
        assert!(correlation(&da, &db).unwrap() < -0.9);
    }
}
