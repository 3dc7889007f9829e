//! Simulation parameters, read from TOML (`data/sim/default.toml` is the default).

use crate::error::SimError;
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const DEFAULT: &str = rentix_core::bundled::data::SIM_DEFAULT;

/// Market dynamics shared by every GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarketParams {
    pub daily_vol: f64,
    pub garch_alpha: f64,
    pub garch_beta: f64,
    pub mean_reversion: f64,
    pub jump_prob: f64,
    pub jump_cut_share: f64,
    pub jump_mean_abs: f64,
    pub term_slope: f64,
    pub term_slope_vol: f64,
    pub spot_ratio: f64,
    pub spot_vol: f64,
    pub successor_cut: f64,
    /// Trade and firm-offer intensity of the bare-metal on-demand grades (the
    /// benchmark grades futures settle on) relative to the other grades: a
    /// benchmark is the grade the market trades most. 1 treats every grade alike.
    #[serde(default = "one")]
    pub benchmark_activity: f64,
    /// Standard deviation of a trade's log price around its provider's price (the
    /// fair price times its tier and region premia): how far two trades of one
    /// provider on one day can differ.
    #[serde(default = "two_percent")]
    pub trade_dispersion: f64,
}

fn two_percent() -> f64 {
    0.02
}

fn one() -> f64 {
    1.0
}

/// Imperfections of a real feed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoiseParams {
    pub duplicate_share: f64,
    pub bad_row_share: f64,
    pub late_share: f64,
}

/// One GPU's life cycle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuLifeCycle {
    pub id: String,
    pub launch: NaiveDate,
    pub launch_price: f64,
    pub floor: f64,
    pub decay_per_year: f64,
    pub liquidity: f64,
    /// This GPU's daily volatility of the log fair price, when it differs from
    /// `market.daily_vol` (an old GPU's price moves less than a new one's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daily_vol: Option<f64>,
    #[serde(default)]
    pub successor: Option<String>,
}

/// One leg of a user's rent: follows a grade's fair price, repriced periodically.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RentLeg {
    pub grade: String,
    pub share: f64,
    pub reprice_days: u32,
    pub markup: f64,
    pub add: f64,
}

/// A producer (pays rent) or neocloud (earns rent) with its events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserParams {
    pub name: String,
    pub side: String,
    pub gpus: u32,
    pub outages_per_year: f64,
    pub failed_deployments_per_year: f64,
    pub customer_defaults_per_year: f64,
    /// How the rent file is written: `daily` (one row a day) or `monthly` (one row a
    /// calendar month, as invoices come: the GPU-hour-weighted average price and the
    /// month's GPU-hours; `period_end` exclusive).
    #[serde(default = "daily")]
    pub billing: String,
    pub leg: Vec<RentLeg>,
}

fn daily() -> String {
    "daily".into()
}

/// Everything that determines the simulated market. Same parameters, same bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimParams {
    pub seed: u64,
    pub start: NaiveDate,
    pub days: u32,
    pub rows: u64,
    /// Listings at every stamp of this many minutes (`simulate --cadence 15m`)
    /// instead of a few sightings a day of one posted price: each provider's page
    /// read every stamp, its price moving a little within the day. Absent: daily.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cadence_minutes: Option<u32>,
    pub market: MarketParams,
    pub scope_premium: BTreeMap<String, f64>,
    pub tier_premium: BTreeMap<String, f64>,
    pub region_premium: BTreeMap<String, f64>,
    pub noise: NoiseParams,
    pub gpu: Vec<GpuLifeCycle>,
    #[serde(default)]
    pub user: Vec<UserParams>,
}

impl SimParams {
    /// The documented default (`data/sim/default.toml`).
    #[allow(
        clippy::expect_used,
        reason = "compiled-in data, checked by a unit test: failing is a build defect"
    )]
    pub fn default_params() -> Self {
        Self::from_toml(DEFAULT).expect("data/sim/default.toml is valid")
    }

    pub fn from_toml(text: &str) -> Result<Self, SimError> {
        let p: SimParams = toml::from_str(text).map_err(|e| SimError::Params(e.to_string()))?;
        p.validate()?;
        Ok(p)
    }

    /// Refuses parameters that would make a meaningless market.
    pub fn validate(&self) -> Result<(), SimError> {
        let bad = |m: String| Err(SimError::Params(m));
        if let Some(c) = self.cadence_minutes {
            if c == 0 || c >= 1440 || 1440 % c != 0 {
                return bad(format!(
                    "cadence of {c} minutes: a whole number of minutes that divides a day, shorter than a day"
                ));
            }
        }
        if self.days == 0 || self.days > 20_000 {
            return bad(format!("days must be 1..=20000, got {}", self.days));
        }
        if self.gpu.is_empty() {
            return bad("at least one [[gpu]] is needed".into());
        }
        let m = &self.market;
        if m.garch_alpha < 0.0 || m.garch_beta < 0.0 || m.garch_alpha + m.garch_beta >= 1.0 {
            return bad("garch_alpha + garch_beta must be in [0, 1)".into());
        }
        for (name, v) in [
            ("daily_vol", m.daily_vol),
            ("mean_reversion", m.mean_reversion),
            ("jump_prob", m.jump_prob),
            ("spot_ratio", m.spot_ratio),
            ("benchmark_activity", m.benchmark_activity),
            ("trade_dispersion", m.trade_dispersion),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return bad(format!("market.{name} must be finite and >= 0"));
            }
        }
        for g in &self.gpu {
            if !(g.launch_price > g.floor && g.floor > 0.0) {
                return bad(format!("gpu {}: need launch_price > floor > 0", g.id));
            }
            if let Some(v) = g.daily_vol {
                if !(v.is_finite() && v >= 0.0) {
                    return bad(format!("gpu {}: daily_vol must be finite and >= 0", g.id));
                }
            }
            rentix_core::GpuModel::new(&g.id).map_err(|e| SimError::Params(e.to_string()))?;
        }
        for s in ["container", "vm", "bare-metal", "managed-cluster"] {
            if !self.scope_premium.contains_key(s) {
                return bad(format!("scope_premium.{s} is missing"));
            }
        }
        for t in ["platinum", "gold", "silver", "bronze", "underperform"] {
            if !self.tier_premium.contains_key(t) {
                return bad(format!("tier_premium.{t} is missing"));
            }
        }
        for r in ["us", "eu", "apac"] {
            if !self.region_premium.contains_key(r) {
                return bad(format!("region_premium.{r} is missing"));
            }
        }
        for u in &self.user {
            if u.side != "pay" && u.side != "earn" {
                return bad(format!("user {}: side must be pay or earn", u.name));
            }
            if u.billing != "daily" && u.billing != "monthly" {
                return bad(format!("user {}: billing must be daily or monthly", u.name));
            }
            if u.leg.is_empty() || u.gpus == 0 {
                return bad(format!(
                    "user {}: needs gpus > 0 and at least one leg",
                    u.name
                ));
            }
            let share: f64 = u.leg.iter().map(|l| l.share).sum();
            if (share - 1.0).abs() > 1e-9 {
                return bad(format!(
                    "user {}: leg shares add up to {share}, not 1",
                    u.name
                ));
            }
            for l in &u.leg {
                let g: rentix_core::Grade = l
                    .grade
                    .parse()
                    .map_err(|e| SimError::Params(format!("user {}: {e}", u.name)))?;
                if !self.gpu.iter().any(|x| x.id == g.gpu.as_str()) {
                    return bad(format!("user {}: {} is not a simulated GPU", u.name, g.gpu));
                }
                if !crate::market::TERMS.contains(&g.term) {
                    return bad(format!("user {}: term {} is not simulated", u.name, g.term));
                }
                if l.reprice_days == 0 {
                    return bad(format!("user {}: reprice_days must be >= 1", u.name));
                }
            }
        }
        Ok(())
    }

    pub fn end(&self) -> NaiveDate {
        self.start + chrono::Days::new(u64::from(self.days))
    }
}
