//! Rolling hedge effectiveness: Ederington's `1 - Var(hedged) / Var(unhedged)` over
//! each trailing window of `w` periods, to show whether the hedge held up through
//! time or only on average.

use super::effectiveness::effectiveness;

/// Effectiveness of each window ending at index `w - 1 ... n - 1`.
pub fn rolling_effectiveness(hedged: &[f64], unhedged: &[f64], w: usize) -> Vec<Option<f64>> {
    if w < 3 || hedged.len() < w {
        return Vec::new();
    }
    (w..=hedged.len())
        .map(|end| effectiveness(&hedged[end - w..end], &unhedged[end - w..end]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows() {
        let u = [1.0, -1.0, 2.0, -2.0, 1.0];
        let h = [0.0, 0.0, 0.0, 0.0, 0.0];
        let r = rolling_effectiveness(&h, &u, 4);
        assert_eq!(r, vec![Some(1.0), Some(1.0)]);
        assert!(rolling_effectiveness(&h, &u, 6).is_empty());
    }
}
