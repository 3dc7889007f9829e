//! Dollar-offset ratio: the cumulative gain or loss of the hedge divided by the
//! cumulative loss or gain of the hedged item, `-sum(futures P&L) / sum(item P&L)`.
//! A hedge passes the 80-125% rule when the ratio lies in `[0.8, 1.25]`. Small
//! cumulative changes make the ratio erratic (the "small numbers problem"): read it
//! with the regression test beside it.
//!
//! Reference: IAS 39 AG105(b); FASB ASC 815-20-25-79.

/// `-sum(hedge) / sum(item)`; `None` if the item's cumulative P&L is zero, or
/// the rounding of zero next to the months' own sizes (a constant rent of one
/// yearly row gave -2.5e16).
pub fn dollar_offset(hedge_pnl: &[f64], item_pnl: &[f64]) -> Option<f64> {
    let item: f64 = item_pnl.iter().sum();
    let size: f64 = item_pnl.iter().map(|x| x.abs()).sum();
    if item == 0.0 || item.abs() <= super::effectiveness::ROUNDING * size.max(1.0) {
        return None;
    }
    Some(-hedge_pnl.iter().sum::<f64>() / item)
}

/// Whether a ratio passes 80-125%.
pub fn passes(ratio: f64) -> bool {
    (0.8..=1.25).contains(&ratio)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed() {
        // Item lost 100, hedge gained 90: 90%.
        let r = dollar_offset(&[50.0, 40.0], &[-60.0, -40.0]).unwrap();
        assert!((r - 0.9).abs() < 1e-12 && passes(r));
        assert!(!passes(dollar_offset(&[130.0], &[-100.0]).unwrap()));
        assert_eq!(dollar_offset(&[1.0], &[0.0]), None);
        assert_eq!(dollar_offset(&[1.0, 2.0], &[1e6, -1e6 + 1e-9]), None);
        assert_eq!(dollar_offset(&[1.0, 2.0], &[1e-10, 2e-10]), None);
    }
}
