//! Historical value at risk and conditional value at risk (expected shortfall) of a
//! P&L series, reported as positive losses.
//!
//! Losses `l = -pnl` sorted ascending; `VaR_a` is the empirical `a`-quantile of the
//! losses by the inverted-CDF rule (the smallest loss `l_(k)` with `k >= a n`), and
//! `CVaR_a` is the mean of the losses at or beyond `VaR_a`.
//!
//! Reference: P. Jorion, Value at Risk (3rd ed.), ch. 5; Acerbi and Tasche (2002).

/// `(VaR, CVaR)` at confidence `a` (0.95, 0.99); `None` for an empty series.
pub fn historical_var_cvar(pnl: &[f64], a: f64) -> Option<(f64, f64)> {
    if pnl.is_empty() {
        return None;
    }
    let mut losses: Vec<f64> = pnl.iter().map(|p| -p).collect();
    losses.sort_by(f64::total_cmp);
    let n = losses.len();
    let k = ((a * n as f64).ceil() as usize).clamp(1, n);
    let var = losses[k - 1];
    let tail = &losses[k - 1..];
    let cvar = tail.iter().sum::<f64>() / tail.len() as f64;
    Some((var, cvar))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed() {
        // P&L -1..-20 -> losses 1..20; 95%: k = 19 -> VaR 19, CVaR mean(19, 20).
        let pnl: Vec<f64> = (1..=20).map(|i| -f64::from(i)).collect();
        assert_eq!(historical_var_cvar(&pnl, 0.95), Some((19.0, 19.5)));
        assert_eq!(historical_var_cvar(&pnl, 0.99), Some((20.0, 20.0)));
        assert_eq!(historical_var_cvar(&[], 0.95), None);
    }
}
