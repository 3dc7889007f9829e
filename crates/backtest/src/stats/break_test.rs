//! A test for a break in the rent-index relationship: the sup-F (Quandt-Andrews)
//! test. For every candidate break point in the middle 70% of the sample, the Chow
//! statistic `F = ((SSR_pooled - SSR_1 - SSR_2) / k) / ((SSR_1 + SSR_2) / (n - 2k))`
//! compares one regression `y = a + b x` with two (before and after), `k = 2`. The
//! largest F is compared with Andrews' (1993) asymptotic 5% critical value for two
//! parameters and 15% trimming, 11.79; above it the relationship changed.
//!
//! References: G. Chow, Econometrica 28 (1960); D. Andrews, "Tests for Parameter
//! Instability and Structural Change With Unknown Change Point", Econometrica 61
//! (1993), Table 1.

use serde::Serialize;

/// Andrews (1993), Table 1: p = 2, pi0 = 0.15, 5%.
pub const SUP_F_CRITICAL_5PCT: f64 = 11.79;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BreakTest {
    pub sup_f: f64,
    /// Index of the first period after the most likely break.
    pub break_index: usize,
    pub critical_5pct: f64,
    pub break_detected: bool,
}

fn ssr(y: &[f64], x: &[f64]) -> Option<f64> {
    let r = super::regression::regress(y, x)?;
    Some(
        x.iter()
            .zip(y)
            .map(|(a, b)| (b - r.intercept - r.slope * a).powi(2))
            .sum(),
    )
}

/// sup-F over break points in `[0.15 n, 0.85 n]`; `None` below 20 periods.
pub fn sup_f(y: &[f64], x: &[f64]) -> Option<BreakTest> {
    let n = y.len();
    if n < 20 || x.len() != n {
        return None;
    }
    let pooled = ssr(y, x)?;
    let lo = ((0.15 * n as f64).ceil() as usize).max(3);
    let hi = ((0.85 * n as f64).floor() as usize).min(n - 3);
    let mut best: Option<(f64, usize)> = None;
    for t in lo..=hi {
        let (Some(s1), Some(s2)) = (ssr(&y[..t], &x[..t]), ssr(&y[t..], &x[t..])) else {
            continue;
        };
        let within = s1 + s2;
        if within <= 0.0 {
            continue;
        }
        let f = ((pooled - within) / 2.0) / (within / (n - 4) as f64);
        if best.is_none_or(|(b, _)| f > b) {
            best = Some((f, t));
        }
    }
    let (f, t) = best?;
    Some(BreakTest {
        sup_f: f,
        break_index: t,
        critical_5pct: SUP_F_CRITICAL_5PCT,
        break_detected: f > SUP_F_CRITICAL_5PCT,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_slope_change() {
        let x: Vec<f64> = (0..60).map(|i| ((i * 37 % 11) as f64) - 5.0).collect();
        let noise = |i: usize| ((i * 13 % 7) as f64 - 3.0) * 0.05;
        let stable: Vec<f64> = x.iter().enumerate().map(|(i, v)| v + noise(i)).collect();
        let broken: Vec<f64> = x
            .iter()
            .enumerate()
            .map(|(i, v)| if i < 30 { *v } else { 0.2 * v } + noise(i))
            .collect();
        let s = sup_f(&stable, &x).unwrap();
        let b = sup_f(&broken, &x).unwrap();
        assert!(!s.break_detected, "{s:?}");
        assert!(
            b.break_detected && (28..=32).contains(&b.break_index),
            "{b:?}"
        );
    }
}
