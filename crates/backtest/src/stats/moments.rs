//! Sample moments shared by the statistics: mean, variance and covariance with the
//! n - 1 (sample) denominator.

/// Arithmetic mean; `None` for an empty slice.
pub fn mean(x: &[f64]) -> Option<f64> {
    if x.is_empty() {
        None
    } else {
        Some(x.iter().sum::<f64>() / x.len() as f64)
    }
}

/// Sample covariance `sum (x - mx)(y - my) / (n - 1)`; `None` below two points.
pub fn covariance(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len();
    if n < 2 || y.len() != n {
        return None;
    }
    let (mx, my) = (mean(x)?, mean(y)?);
    Some(
        x.iter()
            .zip(y)
            .map(|(a, b)| (a - mx) * (b - my))
            .sum::<f64>()
            / (n - 1) as f64,
    )
}

/// Sample variance (n - 1 denominator).
pub fn variance(x: &[f64]) -> Option<f64> {
    covariance(x, x)
}

/// Sample standard deviation (n - 1 denominator): `rentix_core`'s, the one every
/// crate uses.
pub fn std_dev(x: &[f64]) -> Option<f64> {
    rentix_core::stats::sample_std(x)
}
