//! Ordinary least squares by Householder QR (numerically safer than the normal
//! equations). Small dense problems only: a few regressors, thousands of rows.

/// Solves `min ||X b - y||` for `b`. `x` holds rows of regressors. `None` when the
/// design is rank-deficient (a regressor is constant zero or collinear) or sizes
/// disagree.
pub(crate) fn ols(x: &[Vec<f64>], y: &[f64]) -> Option<Vec<f64>> {
    let n = x.len();
    let k = x.first()?.len();
    if n != y.len() || n < k || k == 0 || x.iter().any(|r| r.len() != k) {
        return None;
    }
    // Column-major copy of X and a copy of y, reduced in place.
    let mut a: Vec<Vec<f64>> = (0..k).map(|j| x.iter().map(|r| r[j]).collect()).collect();
    let mut b = y.to_vec();
    let scale = a
        .iter()
        .flatten()
        .fold(0.0f64, |m, v| m.max(v.abs()))
        .max(1.0);
    for j in 0..k {
        let norm = a[j][j..].iter().map(|v| v * v).sum::<f64>().sqrt();
        if norm <= 1e-12 * scale {
            return None;
        }
        let alpha = if a[j][j] > 0.0 { -norm } else { norm };
        let mut v: Vec<f64> = a[j][j..].to_vec();
        v[0] -= alpha;
        let vnorm2: f64 = v.iter().map(|t| t * t).sum();
        if vnorm2 == 0.0 {
            continue;
        }
        for col in a.iter_mut().skip(j) {
            let dot: f64 = v.iter().zip(&col[j..]).map(|(p, q)| p * q).sum();
            let f = 2.0 * dot / vnorm2;
            for (c, vi) in col[j..].iter_mut().zip(&v) {
                *c -= f * vi;
            }
        }
        let dot: f64 = v.iter().zip(&b[j..]).map(|(p, q)| p * q).sum();
        let f = 2.0 * dot / vnorm2;
        for (c, vi) in b[j..].iter_mut().zip(&v) {
            *c -= f * vi;
        }
    }
    // Back substitution on the upper triangle.
    let mut coef = vec![0.0; k];
    for i in (0..k).rev() {
        let s: f64 = (i + 1..k).map(|j| a[j][i] * coef[j]).sum();
        let d = a[i][i];
        if d.abs() <= 1e-12 * scale {
            return None;
        }
        coef[i] = (b[i] - s) / d;
    }
    Some(coef)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_line_and_rank_deficiency() {
        let x: Vec<Vec<f64>> = (0..5).map(|i| vec![1.0, f64::from(i)]).collect();
        let y: Vec<f64> = (0..5).map(|i| 2.0 + 3.0 * f64::from(i)).collect();
        let b = ols(&x, &y).unwrap();
        assert!((b[0] - 2.0).abs() < 1e-12 && (b[1] - 3.0).abs() < 1e-12);
        let collinear: Vec<Vec<f64>> = (0..5)
            .map(|i| vec![f64::from(i), 2.0 * f64::from(i)])
            .collect();
        assert!(ols(&collinear, &y).is_none());
    }
}
