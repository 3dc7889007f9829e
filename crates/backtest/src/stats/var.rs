//! Historical value at risk and conditional value at risk (expected shortfall) of a
//! P&L series, reported as positive losses.
//!
//! Losses `l = -pnl` sorted descending, `l_(1) >= l_(2) >= ...`; the tail holds
//! `w = n (1 - a)` observations. `VaR_a` is the empirical `a`-quantile of the losses
//! by the inverted-CDF rule (the smallest loss `l` with `F(l) >= a`). `CVaR_a` is the
//! Acerbi-Tasche expected shortfall: the mean of the worst `w` losses, the boundary
//! observation counted with its fractional weight,
//! `ES_a = (sum_{i <= floor(w)} l_(i) + (w - floor(w)) l_(floor(w)+1)) / w`.
//! With losses 1..20 and `a = 0.95`, `w = 1` and `ES = 20`; with `a = 0.99`,
//! `w = 0.2` and `ES = 20`.
//!
//! Reference: P. Jorion, Value at Risk (3rd ed.), ch. 5; C. Acerbi and D. Tasche,
//! "On the coherence of expected shortfall", J. Banking & Finance 26 (2002), eq. (3.5).

/// `(VaR, CVaR)` at confidence `a` (0.95, 0.99); `None` for an empty series or an
/// `a` outside `(0, 1)`.
pub fn historical_var_cvar(pnl: &[f64], a: f64) -> Option<(f64, f64)> {
    if pnl.is_empty() || !(a > 0.0 && a < 1.0) {
        return None;
    }
    let mut losses: Vec<f64> = pnl.iter().map(|p| -p).collect();
    losses.sort_by(f64::total_cmp);
    let n = losses.len();
    let k = ((a * n as f64 - 1e-9).ceil() as usize).clamp(1, n);
    let var = losses[k - 1];
    // Tail weight in observations; snap binary noise (20 x 0.05 = 1.0000000000000009).
    let mut w = n as f64 * (1.0 - a);
    if (w - w.round()).abs() < 1e-9 {
        w = w.round();
    }
    let whole = (w.floor() as usize).min(n);
    let frac = w - whole as f64;
    let worst_first = losses.iter().rev();
    let mut sum: f64 = worst_first.clone().take(whole).sum();
    if frac > 0.0 {
        if let Some(b) = worst_first.clone().nth(whole) {
            sum += frac * b;
        }
    }
    Some((var, sum / w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed() {
        // P&L -1..-20 -> losses 1..20. 95%: VaR is the 19th smallest loss; the tail
        // holds 20 x 0.05 = 1 observation, the worst: ES = 20.
        let pnl: Vec<f64> = (1..=20).map(|i| -f64::from(i)).collect();
        assert_eq!(historical_var_cvar(&pnl, 0.95), Some((19.0, 20.0)));
        // 99%: the tail holds 0.2 of an observation, the worst: ES = 20.
        assert_eq!(historical_var_cvar(&pnl, 0.99), Some((20.0, 20.0)));
        // 90% on losses 1..10: w = 1, ES = 10; 80%: w = 2, ES = (10 + 9) / 2.
        let pnl: Vec<f64> = (1..=10).map(|i| -f64::from(i)).collect();
        assert_eq!(historical_var_cvar(&pnl, 0.9), Some((9.0, 10.0)));
        assert_eq!(historical_var_cvar(&pnl, 0.8), Some((8.0, 9.5)));
        // 85% on losses 1..10: w = 1.5, ES = (10 + 0.5 x 9) / 1.5 = 9.6667.
        let (_, es) = historical_var_cvar(&pnl, 0.85).unwrap();
        assert!((es - 14.5 / 1.5).abs() < 1e-12, "{es}");
        assert_eq!(historical_var_cvar(&[], 0.95), None);
        assert_eq!(historical_var_cvar(&[1.0], 1.0), None);
    }
}
