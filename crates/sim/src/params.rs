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
    /// Long-run daily volatility of a GPU's log fair price, the GARCH(1,1) level
    /// (`omega = daily_vol^2 (1 - alpha - beta)`); a GPU's own
    /// [`GpuLifeCycle::daily_vol`] overrides it. Finite and `>= 0`; default 0.012.
    pub daily_vol: f64,
    /// GARCH weight of yesterday's squared shock in today's variance: how strongly
    /// volatility clusters after a large move. `>= 0`, with `alpha + beta < 1`;
    /// default 0.08.
    pub garch_alpha: f64,
    /// GARCH weight of yesterday's variance in today's: how long a volatile spell
    /// lasts. `>= 0`, with `alpha + beta < 1`; default 0.90.
    pub garch_beta: f64,
    /// Share of the log price's deviation from its life-cycle trend that decays each
    /// day (`z_{t+1} = (1 - kappa) z_t + ...`). Finite and `>= 0`; default 0.06.
    pub mean_reversion: f64,
    /// Daily probability of a jump in a GPU's log price. Finite and `>= 0`;
    /// default 0.004.
    pub jump_prob: f64,
    /// Share of jumps that are price cuts (the rest are rises), 0..1; default 0.7.
    pub jump_cut_share: f64,
    /// Mean absolute size of a jump in log price: a jump is drawn uniformly between
    /// 0.5 and 1.5 times this. Default 0.04.
    pub jump_mean_abs: f64,
    /// Mean slope of the reserved discount: a reserved term's price is on-demand
    /// times `exp(-slope * sqrt(term in years))`. Default 0.25.
    pub term_slope: f64,
    /// Daily standard deviation of the slope, which reverts 3% a day towards
    /// `term_slope` and never goes below 0. Default 0.01.
    pub term_slope_vol: f64,
    /// Ratio of spot to on-demand price that each GPU's spot ratio moves around
    /// (`spot_ratio * e^u`, `u` the noise below). Finite and `>= 0`; default 0.62.
    pub spot_ratio: f64,
    /// Daily standard deviation of the spot ratio's log noise `u`, an AR(1) with
    /// coefficient 0.9, one per GPU. Default 0.035.
    pub spot_vol: f64,
    /// Share by which a GPU's price steps down once its successor launches, phased
    /// in linearly over 60 days (0.08 = 8% lower). Default 0.08.
    pub successor_cut: f64,
    /// Trade and firm-offer intensity of the bare-metal on-demand grades (the
    /// benchmark grades futures settle on) relative to the other grades: a
    /// benchmark is the grade the market trades most. 1 treats every grade alike.
    /// Finite and `>= 0`; 1 when absent; 16 in `data/sim/default.toml`.
    #[serde(default = "one")]
    pub benchmark_activity: f64,
    /// Standard deviation of a trade's log price around its provider's price (the
    /// fair price times its tier and region premia): how far two trades of one
    /// provider on one day can differ. A trade's tier premium is the square root of
    /// the provider's. Finite and `>= 0`; default 0.02.
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
    /// Share of rows with an id (firm offers and trades) written twice, verbatim.
    /// Default 0.01.
    pub duplicate_share: f64,
    /// Share of listings, firm offers and trades corrupted in one of seven ways
    /// (NaN or negative price, unknown GPU, unparseable date, trade without
    /// quantity, unknown currency, unknown unit); intraday listings are never
    /// corrupted. Default 0.001.
    pub bad_row_share: f64,
    /// Share of trades after day 3 held back and appended at the end of
    /// `observations.csv`, keeping their own time. Default 0.01.
    pub late_share: f64,
}

/// One GPU's life cycle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuLifeCycle {
    /// Canonical GPU id (`h100-sxm-80gb`); must have a GPU id's syntax.
    pub id: String,
    /// First day on the market; the GPU has no price, and no observation, before.
    pub launch: NaiveDate,
    /// Reference fair price at launch (bare metal, on-demand, silver operator), USD
    /// per GPU-hour; must exceed `floor`.
    pub launch_price: f64,
    /// Long-run reference price the trend decays towards, USD per GPU-hour; `> 0`.
    pub floor: f64,
    /// Yearly decay rate `k` of the premium over the floor:
    /// `trend = floor + (launch_price - floor) e^(-k age_in_years)`.
    pub decay_per_year: f64,
    /// Multiplier of the GPU's firm-offer and trade arrival rates (1 = H100 in the
    /// default; A100 1.5, MI300X 0.3).
    pub liquidity: f64,
    /// This GPU's daily volatility of the log fair price, when it differs from
    /// `market.daily_vol` (an old GPU's price moves less than a new one's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daily_vol: Option<f64>,
    /// Id of the GPU whose launch steps this one's price down by
    /// [`MarketParams::successor_cut`]; `None` (or an id not simulated) for no step.
    #[serde(default)]
    pub successor: Option<String>,
}

/// One leg of a user's rent: follows a grade's fair price, repriced periodically.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RentLeg {
    /// Grade key whose fair price the leg follows (`h100-sxm-80gb/bare-metal/1y`);
    /// its GPU must be simulated and its term one of `TERMS`.
    pub grade: String,
    /// Weight of the leg in the user's rent, 0..1; a user's shares add up to 1.
    pub share: f64,
    /// Days between repricings, counted from the first day every leg's GPU is on the
    /// market (1 = daily, 365 = a yearly reservation); `>= 1`.
    pub reprice_days: u32,
    /// Multiplier of the fair price (1.03 = 3% above it).
    pub markup: f64,
    /// USD per GPU-hour added after the markup: the leg's rent is
    /// `fair * markup + add`.
    pub add: f64,
}

/// A producer (pays rent) or neocloud (earns rent) with its events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserParams {
    /// Names the user's files: `rent_<name>.csv`, `events_<name>.csv`.
    pub name: String,
    /// `pay` (a producer renting GPUs) or `earn` (a neocloud letting them); written
    /// in the rent file's `side` column.
    pub side: String,
    /// GPUs rented or let, `> 0`: each day is `gpus * 24` GPU-hours.
    pub gpus: u32,
    /// Yearly Poisson rate of outages: 1-3 days each, 5-30% of the GPUs lost.
    pub outages_per_year: f64,
    /// Yearly Poisson rate of failed deployments that strand capacity: 7-30 days
    /// each, 10-40% of the GPUs.
    pub failed_deployments_per_year: f64,
    /// Yearly Poisson rate of customers who stop paying, for `earn` users only
    /// (ignored for `pay`): 30-90 days each, 5-20% of the GPUs.
    pub customer_defaults_per_year: f64,
    /// How the rent file is written: `daily` (one row a day) or `monthly` (one row a
    /// calendar month, as invoices come: the GPU-hour-weighted average price and the
    /// month's GPU-hours; `period_end` exclusive).
    #[serde(default = "daily")]
    pub billing: String,
    /// The legs whose mix is the user's rent; at least one.
    pub leg: Vec<RentLeg>,
}

fn daily() -> String {
    "daily".into()
}

/// Everything that determines the simulated market. Same parameters, same bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimParams {
    /// Seed every random stream is derived from (default 20240101).
    pub seed: u64,
    /// First simulated day (default 2024-01-01).
    pub start: NaiveDate,
    /// Number of simulated days, 1..=20000 (default 731).
    pub days: u32,
    /// Target number of observations: every arrival rate is scaled so that the count
    /// comes out close to it. 0 (the default) keeps the natural activity.
    pub rows: u64,
    /// Listings at every stamp of this many minutes (`simulate --cadence 15m`)
    /// instead of a few sightings a day of one posted price: each provider's page
    /// read every stamp, its price moving a little within the day. Absent: daily.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cadence_minutes: Option<u32>,
    /// Dynamics shared by every GPU.
    pub market: MarketParams,
    /// Multiplier of the fair price by service scope; must name `container`, `vm`,
    /// `bare-metal` and `managed-cluster` (default 0.88, 0.97, 1.0, 1.18).
    pub scope_premium: BTreeMap<String, f64>,
    /// Multiplier of observed prices by the provider's operator tier (trades take its
    /// square root); must name all five tiers (default platinum 1.06 ... underperform
    /// 0.92, silver 1.0). Not part of the fair price.
    pub tier_premium: BTreeMap<String, f64>,
    /// Multiplier of observed prices by region; must name `us`, `eu` and `apac`
    /// (default 0.99, 1.01, 1.02). Not part of the fair price.
    pub region_premium: BTreeMap<String, f64>,
    /// Imperfections of the feed.
    pub noise: NoiseParams,
    /// The GPUs simulated, at least one.
    pub gpu: Vec<GpuLifeCycle>,
    /// Users whose rent and events are written; none when absent.
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

    /// Parses parameters from TOML (unknown fields refused) and
    /// [validates](SimParams::validate) them.
    pub fn from_toml(text: &str) -> Result<Self, SimError> {
        let p: SimParams = toml::from_str(text).map_err(|e| SimError::Params(e.to_string()))?;
        p.validate()?;
        Ok(p)
    }

    /// A market of GPUs none of which is launched yet has no observation: refused
    /// rather than written as an empty file.
    fn check_launches(&self) -> Result<(), SimError> {
        let last_day = self.start + chrono::Days::new(u64::from(self.days) - 1);
        match self.gpu.iter().min_by_key(|g| g.launch) {
            Some(first) if first.launch > last_day => Err(SimError::Params(format!(
                "no GPU is on the market from {} to {last_day}: the first launch is {} ({}); start on or after it, or simulate more days",
                self.start, first.id, first.launch
            ))),
            _ => Ok(()),
        }
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
        self.check_launches()?;
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

    /// The day after the last simulated day (`start + days`, exclusive).
    pub fn end(&self) -> NaiveDate {
        self.start + chrono::Days::new(u64::from(self.days))
    }
}
