//! Basis: the user's rent minus the index, per period, in USD per GPU-hour
//! (`basis = rent.intersection(&index, |r, i| r - i)`). A steady, positive basis is
//! a premium, not a hedging failure; what costs money is basis that *moves*.

use super::moments::{mean, std_dev};
use serde::{Deserialize, Serialize};

/// Mean, sample standard deviation, min and max of the basis.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BasisStats {
    /// Mean basis, USD per GPU-hour (positive: the rent above the index).
    pub mean: f64,
    /// Sample standard deviation (n - 1), USD per GPU-hour: the basis that moves.
    pub std: f64,
    /// Smallest basis, USD per GPU-hour.
    pub min: f64,
    /// Largest basis, USD per GPU-hour.
    pub max: f64,
}

/// The statistics of `basis` (USD per GPU-hour per period); `None` when empty. The
/// standard deviation is 0 for a single period.
pub fn basis_stats(basis: &[f64]) -> Option<BasisStats> {
    Some(BasisStats {
        mean: mean(basis)?,
        std: std_dev(basis).unwrap_or(0.0),
        min: basis.iter().copied().reduce(f64::min)?,
        max: basis.iter().copied().reduce(f64::max)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed() {
        let b = basis_stats(&[0.4, 0.5, 0.6]).unwrap();
        assert!((b.mean - 0.5).abs() < 1e-12 && (b.std - 0.1).abs() < 1e-12);
        assert_eq!((b.min, b.max), (0.4, 0.6));
        assert!(basis_stats(&[]).is_none());
    }
}
