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
    /// day (`z_{t+1} = (1 - kappa) z_t + ...`). In `[0, 1]` (above 1 the deviation
    /// flips sign each day, above 2 it explodes); default 0.06.
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
    /// in linearly over 60 days (0.08 = 8% lower). In `[0, 1)`; default 0.08.
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
    /// comes out close to it. 0 (the default) keeps the natural activity. With
    /// `cadence_minutes`, the listing reads at every stamp are a schedule and are not
    /// scaled: the other rows make up the rest, and a target the schedule alone
    /// reaches is refused.
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
        if self
            .start
            .checked_add_days(chrono::Days::new(u64::from(self.days)))
            .is_none()
        {
            return bad(format!(
                "start {} plus {} days is past the last representable date",
                self.start, self.days
            ));
        }
        if self.gpu.is_empty() {
            return bad("at least one [[gpu]] is needed".into());
        }
        self.check_launches()?;
        self.check_market()?;
        self.check_gpus()?;
        self.check_premia()?;
        self.check_users()
    }

    /// The market's volatility, reversion, jump and slope parameters.
    fn check_market(&self) -> Result<(), SimError> {
        let bad = |m: String| Err(SimError::Params(m));
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
        for (name, v, ok) in [
            ("mean_reversion", m.mean_reversion, m.mean_reversion <= 1.0),
            (
                "successor_cut",
                m.successor_cut,
                (0.0..1.0).contains(&m.successor_cut),
            ),
            (
                "jump_cut_share",
                m.jump_cut_share,
                (0.0..=1.0).contains(&m.jump_cut_share),
            ),
            ("jump_mean_abs", m.jump_mean_abs, m.jump_mean_abs >= 0.0),
            ("term_slope", m.term_slope, m.term_slope >= 0.0),
            ("term_slope_vol", m.term_slope_vol, m.term_slope_vol >= 0.0),
            ("spot_vol", m.spot_vol, m.spot_vol >= 0.0),
        ] {
            if !(v.is_finite() && ok) {
                return bad(format!(
                    "market.{name} = {v} is out of range (see its documentation: mean_reversion in [0, 1], successor_cut in [0, 1), jump_cut_share in [0, 1], the others >= 0)"
                ));
            }
        }
        Ok(())
    }

    /// Each GPU's life cycle: prices, decay, liquidity, id, listed once.
    fn check_gpus(&self) -> Result<(), SimError> {
        let bad = |m: String| Err(SimError::Params(m));
        for g in &self.gpu {
            if !(g.launch_price > g.floor && g.floor > 0.0) {
                return bad(format!("gpu {}: need launch_price > floor > 0", g.id));
            }
            if !(g.decay_per_year.is_finite() && g.decay_per_year >= 0.0) {
                return bad(format!(
                    "gpu {}: decay_per_year must be finite and >= 0",
                    g.id
                ));
            }
            if !g.launch_price.is_finite() {
                return bad(format!("gpu {}: launch_price must be finite", g.id));
            }
            if !(g.liquidity.is_finite() && g.liquidity >= 0.0) {
                return bad(format!("gpu {}: liquidity must be finite and >= 0", g.id));
            }
            if self.gpu.iter().filter(|x| x.id == g.id).count() > 1 {
                return bad(format!(
                    "gpu {} is listed twice: truth.csv would hold two prices a grade and day",
                    g.id
                ));
            }
            if let Some(v) = g.daily_vol {
                if !(v.is_finite() && v >= 0.0) {
                    return bad(format!("gpu {}: daily_vol must be finite and >= 0", g.id));
                }
            }
            rentix_core::GpuModel::new(&g.id).map_err(|e| SimError::Params(e.to_string()))?;
        }
        Ok(())
    }

    /// Every scope, tier and region has a premium, each a finite factor > 0.
    fn check_premia(&self) -> Result<(), SimError> {
        let bad = |m: String| Err(SimError::Params(m));
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
        for (table, premia) in [
            ("scope_premium", &self.scope_premium),
            ("tier_premium", &self.tier_premium),
            ("region_premium", &self.region_premium),
        ] {
            if let Some((k, v)) = premia.iter().find(|(_, v)| !(v.is_finite() && **v > 0.0)) {
                return bad(format!(
                    "{table}.{k} = {v}: a premium is a finite factor > 0"
                ));
            }
        }
        Ok(())
    }

    /// Each user: side, billing, legs on simulated GPUs and terms, listed once.
    fn check_users(&self) -> Result<(), SimError> {
        let bad = |m: String| Err(SimError::Params(m));
        for u in &self.user {
            if self.user.iter().filter(|x| x.name == u.name).count() > 1 {
                return bad(format!(
                    "user {} is listed twice: its rent and event files would overwrite each other",
                    u.name
                ));
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::date;

    /// The smallest complete parameter file: every optional field left out.
    const MINIMAL: &str = r#"
seed = 1
start = "2024-01-01"
days = 10
rows = 0

[market]
daily_vol = 0.01
garch_alpha = 0.05
garch_beta = 0.9
mean_reversion = 0.05
jump_prob = 0.0
jump_cut_share = 0.5
jump_mean_abs = 0.04
term_slope = 0.2
term_slope_vol = 0.0
spot_ratio = 0.6
spot_vol = 0.0
successor_cut = 0.0

[scope_premium]
container = 0.9
vm = 1.0
bare-metal = 1.0
managed-cluster = 1.2

[tier_premium]
platinum = 1.1
gold = 1.05
silver = 1.0
bronze = 0.95
underperform = 0.9

[region_premium]
us = 1.0
eu = 1.0
apac = 1.0

[noise]
duplicate_share = 0.0
bad_row_share = 0.0
late_share = 0.0

[[gpu]]
id = "h100-sxm-80gb"
launch = "2023-03-21"
launch_price = 5.5
floor = 1.5
decay_per_year = 0.6
liquidity = 1.0
"#;

    fn message(r: Result<impl std::fmt::Debug, SimError>) -> String {
        match r {
            Err(SimError::Params(m)) => m,
            other => panic!("expected a parameter error, got {other:?}"),
        }
    }

    #[test]
    fn the_default_file_holds_its_documented_values() {
        let p = SimParams::default_params();
        assert_eq!(p.seed, 20_240_101);
        assert_eq!(p.start, date(2024, 1, 1));
        assert_eq!(p.days, 731);
        assert_eq!(p.rows, 0);
        assert_eq!(p.cadence_minutes, None);
        let m = &p.market;
        assert_eq!(
            (m.daily_vol, m.garch_alpha, m.garch_beta, m.mean_reversion),
            (0.012, 0.08, 0.90, 0.06)
        );
        assert_eq!(
            (m.spot_ratio, m.term_slope, m.successor_cut),
            (0.62, 0.25, 0.08)
        );
        assert_eq!(m.benchmark_activity, 16.0);
        // Not in the file: the serde default the doc comment promises.
        assert!(!DEFAULT.contains("trade_dispersion"));
        assert_eq!(m.trade_dispersion, 0.02);
        assert_eq!(p.scope_premium["container"], 0.88);
        assert_eq!(p.scope_premium["managed-cluster"], 1.18);
        assert_eq!(p.tier_premium["platinum"], 1.06);
        assert_eq!(p.tier_premium["underperform"], 0.92);
        assert_eq!(p.region_premium["apac"], 1.02);
        assert_eq!(p.gpu.len(), 5);
        assert_eq!(p.user.len(), 6);
        // 2024 is a leap year: 366 + 365 = 731 days end on 2026-01-01.
        assert_eq!(p.end(), date(2026, 1, 1));
    }

    #[test]
    fn the_default_parameters_round_trip_through_toml_and_json() {
        let p = SimParams::default_params();
        let toml_text = toml::to_string(&p).unwrap();
        assert_eq!(SimParams::from_toml(&toml_text).unwrap(), p);
        // The manifest carries the parameters as JSON.
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(serde_json::from_str::<SimParams>(&json).unwrap(), p);
    }

    #[test]
    fn absent_optional_fields_take_their_documented_defaults() {
        let p = SimParams::from_toml(MINIMAL).unwrap();
        assert_eq!(p.market.benchmark_activity, 1.0);
        assert_eq!(p.market.trade_dispersion, 0.02);
        assert_eq!(p.cadence_minutes, None);
        assert!(p.user.is_empty());
        assert_eq!(p.gpu[0].daily_vol, None);
        assert_eq!(p.gpu[0].successor, None);
        assert_eq!(p.end(), date(2024, 1, 11));

        let with_user = format!(
            "{MINIMAL}
[[user]]
name = \"u\"
side = \"pay\"
gpus = 8
outages_per_year = 0.0
failed_deployments_per_year = 0.0
customer_defaults_per_year = 0.0
leg = [{{ grade = \"h100-sxm-80gb/bare-metal/on-demand\", share = 1.0, reprice_days = 1, markup = 1.0, add = 0.0 }}]
"
        );
        let p = SimParams::from_toml(&with_user).unwrap();
        assert_eq!(p.user[0].billing, "daily");
    }

    #[test]
    fn unknown_and_malformed_fields_are_refused_by_name() {
        for (from, to, named) in [
            ("seed = 1", "seeed = 1", "seeed"),
            ("daily_vol = 0.01", "daily_vol = 0.01\ncolour = 1", "colour"),
            ("liquidity = 1.0", "liquidity = 1.0\nmaker = \"x\"", "maker"),
            // A negative day count is not even a number of days.
            ("days = 10", "days = -1", "days"),
            ("start = \"2024-01-01\"", "start = \"2024-13-01\"", "start"),
        ] {
            assert!(MINIMAL.contains(from), "{from}");
            let m = message(SimParams::from_toml(&MINIMAL.replacen(from, to, 1)));
            assert!(m.contains(named), "{to}: {m}");
        }
    }

    /// Each case breaks one documented rule of the default parameters; the message
    /// must name the field (and the GPU or user it belongs to).
    #[test]
    fn invalid_parameters_are_refused_with_a_message_naming_the_field() {
        type Case = (&'static str, fn(&mut SimParams));
        let cases: Vec<Case> = vec![
            ("days must be 1..=20000, got 0", |p| p.days = 0),
            ("days must be 1..=20000, got 20001", |p| p.days = 20_001),
            ("cadence of 0 minutes", |p| p.cadence_minutes = Some(0)),
            // 1440 = 7 * 205 + 5: seven minutes do not divide a day.
            ("cadence of 7 minutes", |p| p.cadence_minutes = Some(7)),
            ("cadence of 1440 minutes", |p| p.cadence_minutes = Some(1440)),
            ("at least one [[gpu]]", |p| p.gpu.clear()),
            ("garch_alpha + garch_beta", |p| p.market.garch_alpha = 0.10),
            ("garch_alpha + garch_beta", |p| p.market.garch_alpha = -0.01),
            ("garch_alpha + garch_beta", |p| p.market.garch_beta = -0.5),
            ("market.daily_vol must be finite", |p| p.market.daily_vol = f64::NAN),
            ("market.mean_reversion must be", |p| p.market.mean_reversion = -0.1),
            ("market.jump_prob must be", |p| p.market.jump_prob = f64::INFINITY),
            ("market.spot_ratio must be", |p| p.market.spot_ratio = -0.62),
            ("market.benchmark_activity must be", |p| {
                p.market.benchmark_activity = f64::NAN;
            }),
            ("market.trade_dispersion must be", |p| {
                p.market.trade_dispersion = -0.02;
            }),
            ("gpu a100-sxm-80gb: need launch_price > floor > 0", |p| {
                p.gpu[0].floor = p.gpu[0].launch_price;
            }),
            ("gpu a100-sxm-80gb: need launch_price > floor > 0", |p| {
                p.gpu[0].floor = 0.0;
            }),
            ("gpu h100-sxm-80gb: need launch_price > floor > 0", |p| {
                p.gpu[1].launch_price = f64::NAN;
            }),
            ("gpu a100-sxm-80gb: daily_vol must be finite", |p| {
                p.gpu[0].daily_vol = Some(-0.002);
            }),
            ("gpu id \"H100 SXM\"", |p| p.gpu[1].id = "H100 SXM".into()),
            ("scope_premium.vm is missing", |p| {
                p.scope_premium.remove("vm");
            }),
            ("tier_premium.gold is missing", |p| {
                p.tier_premium.remove("gold");
            }),
            ("region_premium.apac is missing", |p| {
                p.region_premium.remove("apac");
            }),
            ("user producer_h100: side must be pay or earn", |p| {
                p.user[0].side = "buy".into();
            }),
            ("user producer_h100: billing must be daily or monthly", |p| {
                p.user[0].billing = "weekly".into();
            }),
            ("user producer_h100: needs gpus > 0 and at least one leg", |p| {
                p.user[0].gpus = 0;
            }),
            ("user producer_h100: needs gpus > 0 and at least one leg", |p| {
                p.user[0].leg.clear();
            }),
            // 0.5 + 0.4: the first leg's 0.6 made 0.5.
            ("user producer_h100: leg shares add up to 0.9, not 1", |p| {
                p.user[0].leg[0].share = 0.5;
            }),
            ("user producer_h100:", |p| {
                p.user[0].leg[0].grade = "h100-sxm-80gb/bare-metal".into();
            }),
            ("user producer_h100: h20-sxm-96gb is not a simulated GPU", |p| {
                p.user[0].leg[0].grade = "h20-sxm-96gb/bare-metal/1y".into();
            }),
            ("user producer_h100: term 1w is not simulated", |p| {
                p.user[0].leg[0].grade = "h100-sxm-80gb/bare-metal/1w".into();
            }),
            ("user producer_h100: reprice_days must be >= 1", |p| {
                p.user[0].leg[1].reprice_days = 0;
            }),
            // The first launch (A100, 2020-11-16) is after the last day, 2019-01-10.
            (
                "no GPU is on the market from 2019-01-01 to 2019-01-10: the first launch is a100-sxm-80gb (2020-11-16)",
                |p| {
                    p.start = date(2019, 1, 1);
                    p.days = 10;
                },
            ),
        ];
        for (expected, break_it) in cases {
            let mut p = SimParams::default_params();
            break_it(&mut p);
            let m = message(p.validate());
            assert!(m.contains(expected), "expected {expected:?} in {m:?}");
        }
    }

    /// Values that pass the checks above but make prices zero, negative, infinite or
    /// NaN (each was accepted and gave such a fair price), and names given twice.
    #[test]
    fn values_that_break_prices_and_names_given_twice_are_refused() {
        type Case = (&'static str, fn(&mut SimParams));
        let cases: Vec<Case> = vec![
            // Above 1 the deviation from trend flips sign daily; 3 makes it explode.
            ("market.mean_reversion = 3 is out of range", |p| {
                p.market.mean_reversion = 3.0;
            }),
            // A cut of 1.5 makes the successor's shadow price negative.
            ("market.successor_cut = 1.5", |p| {
                p.market.successor_cut = 1.5
            }),
            ("market.jump_cut_share = 1.2", |p| {
                p.market.jump_cut_share = 1.2
            }),
            ("market.term_slope = -0.25", |p| p.market.term_slope = -0.25),
            ("scope_premium.vm = NaN", |p| {
                p.scope_premium.insert("vm".into(), f64::NAN);
            }),
            ("scope_premium.container = -1", |p| {
                p.scope_premium.insert("container".into(), -1.0);
            }),
            ("tier_premium.gold = 0", |p| {
                p.tier_premium.insert("gold".into(), 0.0);
            }),
            ("gpu a100-sxm-80gb: decay_per_year", |p| {
                p.gpu[0].decay_per_year = f64::NAN;
            }),
            ("gpu a100-sxm-80gb: liquidity", |p| {
                p.gpu[0].liquidity = -1.0
            }),
            ("gpu a100-sxm-80gb is listed twice", |p| {
                let g = p.gpu[0].clone();
                p.gpu.push(g);
            }),
            ("user producer_h100 is listed twice", |p| {
                let u = p.user[0].clone();
                p.user.push(u);
            }),
        ];
        for (expected, break_it) in cases {
            let mut p = SimParams::default_params();
            break_it(&mut p);
            let m = message(p.validate());
            assert!(m.contains(expected), "expected {expected:?} in {m:?}");
        }
    }

    /// The edges of every range above are accepted.
    #[test]
    fn parameters_on_the_edge_of_their_range_are_accepted() {
        type Case = fn(&mut SimParams);
        let cases: [Case; 7] = [
            |p| p.days = 1,
            |p| p.days = 20_000,
            |p| p.cadence_minutes = Some(1),
            |p| p.cadence_minutes = Some(720),
            |p| p.market.garch_beta = 0.0,
            // The first launch, 2020-11-16, is the only simulated day.
            |p| {
                p.start = date(2020, 11, 16);
                p.days = 1;
            },
            |p| {
                p.market.daily_vol = 0.0;
                p.market.jump_prob = 0.0;
            },
        ];
        for (i, c) in cases.iter().enumerate() {
            let mut p = SimParams::default_params();
            c(&mut p);
            assert!(p.validate().is_ok(), "case {i}: {:?}", p.validate());
        }
    }

    #[test]
    fn from_toml_validates_what_it_parses() {
        let m = message(SimParams::from_toml(
            &MINIMAL.replace("days = 10", "days = 0"),
        ));
        assert!(m.contains("days must be 1..=20000"), "{m}");
    }

    /// `validate` refuses bad parameters rather than panicking; a window that runs
    /// past chrono's last date panics in `check_launches` (`start + days - 1`). A TOML
    /// date has a four-digit year, so only parameters built in code reach it.
    #[test]
    fn a_window_past_the_last_representable_date_is_refused() {
        let mut p = SimParams::default_params();
        p.start = NaiveDate::MAX;
        p.days = 2;
        let r = std::panic::catch_unwind(|| p.validate());
        assert!(matches!(r, Ok(Err(SimError::Params(_)))), "{r:?}");
    }
}
