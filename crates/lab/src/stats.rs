//! The few summary statistics the lab reports: quartiles with linear interpolation
//! between order statistics (Hyndman-Fan type 7, as numpy's default); the median and
//! the sample standard deviation are `rentix_core`'s (type 7 at one half is the
//! midpoint median up to the last bit of rounding).

/// The `q` quantile (0 to 1) of `v`, type 7; `None` for no values.
pub(crate) fn quantile(v: &[f64], q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let h = (s.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    if lo == hi || s[hi] == s[lo] {
        return Some(s[lo]);
    }
    Some(s[lo] + (h - lo as f64) * (s[hi] - s[lo]))
}

pub(crate) use rentix_core::stats::{median, sample_std};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_linear_quantiles() {
        // numpy.percentile([1, 2, 3, 4], [25, 50, 75]) = 1.75, 2.5, 3.25
        let v = [4.0, 1.0, 3.0, 2.0];
        assert_eq!(quantile(&v, 0.25), Some(1.75));
        assert_eq!(median(&v), Some(2.5));
        assert_eq!(quantile(&v, 0.75), Some(3.25));
        assert_eq!(median(&[f64::INFINITY, 1.0, 2.0]), Some(2.0));
        assert_eq!(
            median(&[1.0, f64::INFINITY, f64::INFINITY]),
            Some(f64::INFINITY)
        );
        assert_eq!(quantile(&[], 0.5), None);
        // statistics.stdev([2, 4, 4, 4, 5, 5, 7, 9]) = 2.138089935299395
        let s = sample_std(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert!((s - 2.138_089_935_299_395).abs() < 1e-12);
    }
}
