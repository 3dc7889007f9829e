//! Tracking error of the rent against the index: the sample standard deviation
//! (n - 1) of the per-period difference of changes, `d_t = dRent_t - dIndex_t`
//! (USD per GPU-hour), annualized by `sqrt(periods per year)`. GPU rental runs every
//! day of the year: daily periods annualize with 365, monthly with 12, never 252.
//!
//! Reference: e.g. CFA Institute, "Tracking error" (ex-post, sample standard
//! deviation of active returns).

use super::moments::std_dev;

/// Periods per year of a period length, for annualization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Periodicity {
    /// Daily periods: 365 a year.
    Daily,
    /// Monthly periods: 12 a year.
    Monthly,
}

impl Periodicity {
    /// Periods per year: 365 or 12.
    pub fn per_year(self) -> f64 {
        match self {
            Periodicity::Daily => 365.0,
            Periodicity::Monthly => 12.0,
        }
    }
}

/// Annualized tracking error of `rent_changes` against `index_changes`.
pub fn tracking_error_annual(
    rent_changes: &[f64],
    index_changes: &[f64],
    p: Periodicity,
) -> Option<f64> {
    let d: Vec<f64> = rent_changes
        .iter()
        .zip(index_changes)
        .map(|(r, i)| r - i)
        .collect();
    std_dev(&d).map(|s| s * p.per_year().sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed() {
        // differences 1, -1, 1, -1: sample sd = sqrt(4/3); monthly x sqrt(12) = 4.
        let te = tracking_error_annual(&[1.0, -1.0, 1.0, -1.0], &[0.0; 4], Periodicity::Monthly)
            .unwrap();
        assert!((te - 4.0).abs() < 1e-12, "{te}");
        let daily =
            tracking_error_annual(&[1.0, -1.0, 1.0, -1.0], &[0.0; 4], Periodicity::Daily).unwrap();
        assert!((daily - (4.0 / 3.0 * 365.0f64).sqrt()).abs() < 1e-12);
    }
}
