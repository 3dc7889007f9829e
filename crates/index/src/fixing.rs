//! The fixing of one grade on one date, and the row type every output shares.

use crate::methodology::CompositeMethod;
use serde::{Deserialize, Serialize};

/// What an index's values are measured in. A grade's fixings are prices; a
/// composite's are index points (base 100 on its first date), which cannot be
/// compared with a rent or settle a USD contract without rebasing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IndexUnit {
    UsdPerGpuHour,
    Points,
}

impl IndexUnit {
    pub fn as_str(self) -> &'static str {
        match self {
            IndexUnit::UsdPerGpuHour => "usd-per-gpu-hour",
            IndexUnit::Points => "points",
        }
    }
}

/// Hierarchy level of a fixing: 1 trades, 2 firm offers, 3 listings, 4 carried
/// forward.
pub const LEVEL_CARRIED: u8 = 4;

/// One row of the fixings output: the value of one grade (or composite) on one
/// fixing date, with everything that stood behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fixing {
    pub date: chrono::NaiveDate,
    /// Grade key (`GPU/SCOPE/TERM[@region]`) or composite name.
    pub grade: String,
    /// USD per GPU-hour for a grade; index points for a composite. `None` when no
    /// value could be fixed or carried.
    pub value: Option<f64>,
    pub method: String,
    /// 1 trades, 2 firm, 3 listings, 4 carried forward; `None` without a value.
    pub level: Option<u8>,
    /// Observations that entered the value (after filters).
    pub n_obs: usize,
    /// Observations of each kind in the window, before filters.
    pub n_trades: usize,
    pub n_firm: usize,
    pub n_listings: usize,
    /// Distinct contributors among the observations used.
    pub n_contributors: usize,
    /// GPU-hours of the observations used (trades and sized offers).
    pub volume_gpu_hours: f64,
    pub p1: Option<f64>,
    pub p25: Option<f64>,
    pub p75: Option<f64>,
    pub p99: Option<f64>,
    /// Largest contributor's share of the weight after the cap.
    pub max_contributor_share: Option<f64>,
    /// The methodology's data-sufficiency rules held.
    pub sufficient: bool,
    /// Why not, and what was done: `;`-separated codes.
    pub flags: String,
    pub methodology_version: String,
    /// SHA-256 of the sorted dedupe keys of the observations used.
    pub input_sha256: String,
    /// 1 for a first publication; incremented by each restatement run.
    pub publication: u32,
}

impl Fixing {
    /// The unit of `value`: points for a composite (its `method` is a composite
    /// method), USD per GPU-hour for a grade.
    pub fn unit(&self) -> IndexUnit {
        if CompositeMethod::ALL
            .iter()
            .any(|m| m.as_str() == self.method)
        {
            IndexUnit::Points
        } else {
            IndexUnit::UsdPerGpuHour
        }
    }
}

/// Rounds half away from zero to `decimals` places.
pub fn round_to(x: f64, decimals: u32) -> f64 {
    let f = 10f64.powi(decimals as i32);
    let r = (x * f).round() / f;
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding() {
        assert_eq!(round_to(2.345_65, 4), 2.3457);
        assert_eq!(round_to(-0.000_01, 4), 0.0);
        assert_eq!(round_to(1.0 / 3.0, 2), 0.33);
    }
}
