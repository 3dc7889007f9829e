//! Basis: the user's rent minus the index, per period, in USD per GPU-hour
//! (`basis = rent.intersection(&index, |r, i| r - i)`). A steady, positive basis is
//! a premium, not a hedging failure; what costs money is basis that *moves*.

use super::moments::{mean, std_dev};
use serde::{Deserialize, Serialize};

/// Mean, sample standard deviation, min and max of the basis.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BasisStats {
    pub mean: f64,
    pub std: f64,
    pub min: f64,
    pub max: f64,
}

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
