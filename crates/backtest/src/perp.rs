//! Perpetual swaps on the index: what holding one against a month's rent does.
//!
//! A perp has no expiry and no settlement. Its price, the *mark* `M`, is kept near
//! the index `I` by *funding*: at each funding interval the long pays the short
//! `position x (M - I) x interval / funding period` (the short pays when the mark is
//! below the index). No GPU-rent perp has a history of marks, so the mark is an
//! explicit assumption, as the futures entry price is: `M_d = I_d + p_d`, the day's
//! index fixing plus a premium `p` (USD per GPU-hour, constant or a dated file).
//!
//! ## The position
//!
//! A month's rent is delivered hour by hour, so a perp hedges it as a strip: the
//! position is built at the closes of the days the futures entry price averages
//! (`[entry] lookback_days`; a share `1/L` at each), reaches `Q = ratio x exposure`
//! GPU-hours of price exposure at the tranche's entry day, and from the contract
//! month's first day is stepped down every `rebalance_days` to what is left to
//! deliver, `Q x (days left) / (days in the month)`, reaching zero at the month's
//! last close. A payer is long, an earner short. With daily rebalancing, summing by
//! parts, the position's price P&L per GPU-hour of `Q` is exactly
//!
//! `dP = mean of M over the month's days - mean of M over the build days`,
//!
//! the perp's counterpart of the futures change `S - F`: a perp has no monthly-average
//! mismatch with monthly rent, whatever the contract's settlement days.
//!
//! ## Funding
//!
//! With daily fixings the mark and the index are constant within a day, so a venue
//! paying every hour pays `1/24` of the day's amount each hour: the same sum. Over
//! the day that ends at close `d` the position `w` held since the previous close pays
//! (long) `w x p_d x 24 / funding_period_hours`. A premium held at `p` for `T` days on
//! a constant position `Q` costs `p x Q x T x 24 / funding_period_hours`; the shipped
//! spec's 24 hours pays the full premium once a day, a venue whose funding rate is
//! the premium per 8 hours is `funding_period_hours = 8` (three times the cost).
//!
//! ## In the decomposition
//!
//! The perp's `futures_change` is `dP` and its carry 0: a premium that *changes*
//! between entry and the month is basis (rent against mark), the premium's *level* is
//! funding, reported as `funding_pnl`. A dated premium's funding is counted in the
//! position's risk (`hedged_before_fees`) because it varies; a constant premium's
//! (or a file's whose premium never changes) is known at entry (the premium times the position and its schedule) and is a cost
//! like the fees, in `hedged_total` only: counted as risk, its month-to-month change
//! with month length and position made an exact tracker "would add risk". Fees are `fee_rate` on the
//! notional traded (`mark x GPU-hours`), each month's position on its own (opened,
//! then stepped down to zero: about twice `Q` a month).

use crate::error::BacktestError;
use chrono::{Days, NaiveDate};
use rentix_core::DateSeries;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a hedge trades: the monthly futures, or a perpetual swap.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::IntoStaticStr, strum::Display, strum::EnumString, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum Instrument {
    /// The monthly cash-settled futures of the contract.
    #[default]
    Futures,
    /// A perpetual swap on the same index (`--perp`).
    Perp,
}

impl Instrument {
    /// The name `periods.csv` and `summary.json` use: `futures` or `perp`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Whether it is the futures, the default (a recommendation's `instrument` is then
    /// left out of `summary.json`).
    pub fn is_futures(&self) -> bool {
        *self == Instrument::Futures
    }

    /// What a position is counted in: `contract` or `lot`.
    pub(crate) fn unit_noun(self) -> &'static str {
        match self {
            Instrument::Futures => "contract",
            Instrument::Perp => "lot",
        }
    }

    /// How a sentence names it on `underlying`.
    pub fn noun(self, underlying: &str) -> String {
        match self {
            Instrument::Futures => format!("{underlying} futures"),
            Instrument::Perp => format!("the {underlying} perp"),
        }
    }
}

/// Largest premium a spec or file may give, USD per GPU-hour.
const MAX_PREMIUM: f64 = 1_000.0;

/// A perpetual swap on the backtest's underlying, as `--perp FILE.toml` gives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerpSpec {
    /// The name outputs show.
    pub name: String,
    /// The position is stepped down to what is left to deliver every this many days.
    #[serde(default = "one_day")]
    pub rebalance_days: u32,
    /// Hours over which a premium is paid in full (module doc).
    #[serde(default = "day_hours")]
    pub funding_period_hours: f64,
    /// Mark minus index, USD per GPU-hour, when no `premium_file` is given.
    #[serde(default)]
    pub premium: f64,
    /// A CSV of `date,premium`: the premium from each date on (relative paths are
    /// read from the spec's folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub premium_file: Option<PathBuf>,
    /// Fee as a share of the notional traded.
    #[serde(default)]
    pub fee_rate: f64,
    /// Initial margin as a share of the position's notional.
    #[serde(default = "tenth")]
    pub initial_margin: f64,
    /// Positions are whole multiples of this many GPU-hours.
    #[serde(default = "one_gpu_hour")]
    pub lot_gpu_hours: f64,
    #[serde(skip)]
    premiums: Option<DateSeries>,
}

fn one_day() -> u32 {
    1
}
fn day_hours() -> f64 {
    24.0
}
fn tenth() -> f64 {
    0.1
}
fn one_gpu_hour() -> f64 {
    1.0
}

impl PerpSpec {
    /// Reads a spec (a path, or a shipped spec's name) and its premium file.
    pub fn from_file(path: &Path) -> Result<Self, BacktestError> {
        let text = rentix_core::read_config(path, rentix_core::ConfigKind::Perp).map_err(|e| {
            BacktestError::File {
                path: path.to_path_buf(),
                detail: e.to_string(),
            }
        })?;
        let mut spec = Self::from_toml(&text, path)?;
        if let Some(f) = &spec.premium_file {
            let f = if f.is_relative() {
                path.parent().unwrap_or(Path::new(".")).join(f)
            } else {
                f.clone()
            };
            spec.premiums = Some(read_premiums(&f)?);
            spec.premium_file = Some(f);
        }
        Ok(spec)
    }

    /// Parses and checks a spec; a `premium_file` is not read (see [`Self::from_file`]).
    pub fn from_toml(text: &str, path: &Path) -> Result<Self, BacktestError> {
        let bad = |detail: String| BacktestError::Contract {
            path: path.to_path_buf(),
            detail,
        };
        let s: PerpSpec = toml::from_str(text).map_err(|e| bad(e.to_string()))?;
        s.validate().map_err(|e| bad(e.0))?;
        Ok(s)
    }

    /// A spec with a constant premium, for callers that build one in code.
    pub fn constant(name: &str, premium: f64) -> Result<Self, rentix_core::Invalid> {
        let s = Self {
            name: name.into(),
            rebalance_days: 1,
            funding_period_hours: 24.0,
            premium,
            premium_file: None,
            fee_rate: 0.0,
            initial_margin: 0.1,
            lot_gpu_hours: 1.0,
            premiums: None,
        };
        s.validate()?;
        Ok(s)
    }

    /// A copy whose premium comes from `series` (dated), for callers without a file.
    pub fn with_premiums(mut self, series: DateSeries) -> Self {
        self.premiums = Some(series);
        self
    }

    /// A copy with the constant premium `premium` (a premium file dropped), checked.
    pub fn with_constant_premium(mut self, premium: f64) -> Result<Self, rentix_core::Invalid> {
        self.premium = premium;
        self.premium_file = None;
        self.premiums = None;
        self.validate()?;
        Ok(self)
    }

    /// A copy that uses the constant `premium` (its dated premiums dropped).
    pub(crate) fn without_premiums(mut self) -> Self {
        self.premiums = None;
        self
    }

    /// Checks the terms: a name, each number in its range, not both `premium` and
    /// `premium_file`; the message names the term.
    pub fn validate(&self) -> Result<(), rentix_core::Invalid> {
        if self.name.trim().is_empty() {
            return Err("name is empty".into());
        }
        if !(1..=31).contains(&self.rebalance_days) {
            return Err(format!(
                "rebalance_days = {}: expected 1 to 31 (the position is stepped down inside the month)",
                self.rebalance_days
            ).into());
        }
        let f = self.funding_period_hours;
        if !(f.is_finite() && f > 0.0 && f <= 24.0 * 31.0) {
            return Err(format!(
                "funding_period_hours = {f}: expected more than 0 and at most 744 (a month)"
            )
            .into());
        }
        if !(self.premium.is_finite() && self.premium.abs() <= MAX_PREMIUM) {
            return Err(format!(
                "premium = {}: expected a finite number of USD per GPU-hour within +/-{MAX_PREMIUM}",
                self.premium
            ).into());
        }
        if self.premium_file.is_some() && self.premium != 0.0 {
            return Err("both premium and premium_file are given: keep one".into());
        }
        if !(self.fee_rate.is_finite() && (0.0..0.1).contains(&self.fee_rate)) {
            return Err(format!(
                "fee_rate = {}: expected a share of the notional traded, 0 to 0.1 (0.0005 is 5 basis points)",
                self.fee_rate
            ).into());
        }
        if !(self.initial_margin.is_finite() && (0.0..=1.0).contains(&self.initial_margin)) {
            return Err(format!(
                "initial_margin = {}: expected a share of the notional, 0 to 1",
                self.initial_margin
            )
            .into());
        }
        let l = self.lot_gpu_hours;
        if !(l.is_finite() && l > 0.0 && l <= 1.0e6) {
            return Err(
                format!("lot_gpu_hours = {l}: expected more than 0 and at most 1000000").into(),
            );
        }
        Ok(())
    }

    /// What the premium is described as in `summary.json` and the console.
    pub fn premium_text(&self) -> String {
        match &self.premium_file {
            Some(f) => format!("dated ({})", f.display()),
            None => format!("{} USD per GPU-hour", self.premium),
        }
    }

    /// Whether the premium is one constant (no dated premiums, or a file whose
    /// premium never changes): its funding is known when a position is entered.
    pub(crate) fn premium_is_constant(&self) -> bool {
        self.premiums.as_ref().is_none_or(|s| {
            let mut values = s.iter().map(|(_, v)| v);
            let first = values.next();
            values.all(|v| Some(v) == first)
        })
    }

    /// The premium on `day`: the constant, or the file's latest on or before `day`.
    fn premium_on(&self, day: NaiveDate) -> Result<f64, Unmarked> {
        match &self.premiums {
            None => Ok(self.premium),
            Some(s) => s
                .last_on_or_before(day)
                .map(|(_, p)| p)
                .ok_or(Unmarked::NoPremium(day)),
        }
    }

    /// Funding a long pays per GPU-hour of position held one day at premium `p`.
    fn daily_funding(&self, p: f64) -> f64 {
        p * 24.0 / self.funding_period_hours
    }
}

/// Reads `date,premium` rows (premiums may be negative: a mark below the index).
fn read_premiums(path: &Path) -> Result<DateSeries, BacktestError> {
    let recs = crate::rent::records(path, &["date", "premium"])?;
    let mut s = DateSeries::new();
    for (row, rec) in &recs {
        let row = *row;
        let d = crate::rent::date(path, row, rec, "date")?;
        let v = rec.get("premium").map(String::as_str).unwrap_or("");
        let bad = |detail: String| BacktestError::Row {
            path: path.to_path_buf(),
            at: row,
            field: "premium".into(),
            detail,
        };
        let p: f64 = v
            .parse()
            .map_err(|_| bad(format!("{v:?} is not a number")))?;
        if !(p.is_finite() && p.abs() <= MAX_PREMIUM) {
            return Err(bad(format!(
                "{v} is not a finite premium within +/-{MAX_PREMIUM} USD per GPU-hour"
            )));
        }
        s.insert(d, p).map_err(|e| bad(format!("{d}: {e}")))?;
    }
    if s.is_empty() {
        return Err(BacktestError::File {
            path: path.to_path_buf(),
            detail: "no premium rows".into(),
        });
    }
    Ok(s)
}

/// What one month's perp position did per GPU-hour of its size `Q` (a long position;
/// the caller applies the side).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PerpLeg {
    /// Mean mark at which the position was built.
    pub entry_mark: f64,
    /// Mean mark over the month's days.
    pub mean_mark: f64,
    /// Price P&L per GPU-hour of `Q`.
    pub price_change: f64,
    /// Funding a long paid per GPU-hour of `Q`.
    pub funding: f64,
    /// Notional traded per GPU-hour of `Q`, USD.
    pub turnover: f64,
    /// Days the position was held, weighted by its share of `Q`.
    pub weight_days: f64,
    /// Price and funding P&L of each day (long, per GPU-hour of `Q`), for the margin.
    pub daily: BTreeMap<NaiveDate, (f64, f64)>,
}

/// The position (share of `Q`) held from the close of each day, from the first build
/// day to the month's last day (where it is 0).
fn schedule(
    index: &DateSeries,
    entry_day: NaiveDate,
    lookback_days: u32,
    start: NaiveDate,
    end: NaiveDate,
    rebalance_days: u32,
) -> Vec<(NaiveDate, f64)> {
    let from = entry_day - Days::new(u64::from(lookback_days.max(1) - 1));
    let mut build: Vec<NaiveDate> = index
        .range(from..entry_day + Days::new(1))
        .map(|(d, _)| d)
        .collect();
    if build.is_empty() {
        build.push(entry_day);
    }
    let n_build = build.len() as f64;
    let days_in_month = (end - start).num_days().max(1) as f64;
    let mut out = Vec::new();
    let mut w = 0.0;
    let mut d = build[0];
    while d < end {
        if d <= entry_day {
            w = build.iter().filter(|b| **b <= d).count() as f64 / n_build;
        } else if d >= start {
            let since = (d - start).num_days() + 1;
            let left = (end - d).num_days() - 1;
            if left <= 0 {
                w = 0.0;
            } else if since % i64::from(rebalance_days) == 0 {
                w = left as f64 / days_in_month;
            }
        }
        out.push((d, w));
        d = d + Days::new(1);
    }
    out
}

/// Why a day of a perp's holding has no mark.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub(crate) enum Unmarked {
    /// The index has no fixing on or before the day.
    #[error("no fixing on or before {0} to mark the perp")]
    NoFixing(NaiveDate),
    /// The dated premium file starts after the day.
    #[error(
        "the premium file starts after {0}, a day the perp is held: give a premium from {0} on"
    )]
    NoPremium(NaiveDate),
    /// The premium takes the mark to zero or below.
    #[error(
        "the mark on {day} is {index} + {premium} = {} USD per GPU-hour, not above zero: no perp trades at that mark (a premium below minus the index; check --perp-premium or the premium file)",
        rentix_core::stats::shown(index + premium)
    )]
    NotPositive {
        /// The day.
        day: NaiveDate,
        /// The index on it.
        index: f64,
        /// The premium on it.
        premium: f64,
    },
}

/// The mark on `day`: the latest fixing on or before it plus the day's premium.
fn mark(spec: &PerpSpec, index: &DateSeries, day: NaiveDate) -> Result<f64, Unmarked> {
    let i = index
        .last_on_or_before(day)
        .map(|(_, v)| v)
        .ok_or(Unmarked::NoFixing(day))?;
    let p = spec.premium_on(day)?;
    let m = i + p;
    if m > 0.0 {
        Ok(m)
    } else {
        Err(Unmarked::NotPositive {
            day,
            index: i,
            premium: p,
        })
    }
}

/// One tranche's leg: built at the lookback days ending `entry_day`, held through
/// the month `start..end`.
pub(crate) fn tranche_leg(
    spec: &PerpSpec,
    index: &DateSeries,
    entry_day: NaiveDate,
    lookback_days: u32,
    start: NaiveDate,
    end: NaiveDate,
) -> Result<PerpLeg, Unmarked> {
    let plan = schedule(
        index,
        entry_day,
        lookback_days,
        start,
        end,
        spec.rebalance_days,
    );
    let mut leg = PerpLeg {
        entry_mark: 0.0,
        mean_mark: 0.0,
        price_change: 0.0,
        funding: 0.0,
        turnover: 0.0,
        weight_days: 0.0,
        daily: BTreeMap::new(),
    };
    let mut prev_w = 0.0;
    let mut bought = 0.0;
    for &(d, w) in &plan {
        let m = mark(spec, index, d)?;
        let traded = w - prev_w;
        if traded > 0.0 && d <= entry_day {
            leg.entry_mark += traded * m;
            bought += traded;
        }
        leg.turnover += traded.abs() * m;
        if d >= start {
            leg.mean_mark += m;
        }
        if w > 0.0 {
            let next = d + Days::new(1);
            let price = w * (mark(spec, index, next)? - m);
            let funding = w * spec.daily_funding(spec.premium_on(next)?);
            leg.price_change += price;
            leg.funding += funding;
            leg.weight_days += w;
            leg.daily.insert(next, (price, funding));
        }
        prev_w = w;
    }
    leg.entry_mark /= bought.max(f64::MIN_POSITIVE);
    leg.mean_mark /= (end - start).num_days().max(1) as f64;
    Ok(leg)
}

/// The leg of a month hedged by several tranches, each an equal share of `Q`.
pub(crate) fn mean_leg(legs: &[PerpLeg]) -> PerpLeg {
    let k = legs.len().max(1) as f64;
    let avg = |f: &dyn Fn(&PerpLeg) -> f64| legs.iter().map(f).sum::<f64>() / k;
    let mut daily: BTreeMap<NaiveDate, (f64, f64)> = BTreeMap::new();
    for l in legs {
        for (d, (p, f)) in &l.daily {
            let e = daily.entry(*d).or_default();
            e.0 += p / k;
            e.1 += f / k;
        }
    }
    PerpLeg {
        entry_mark: avg(&|l| l.entry_mark),
        mean_mark: avg(&|l| l.mean_mark),
        price_change: avg(&|l| l.price_change),
        funding: avg(&|l| l.funding),
        turnover: avg(&|l| l.turnover),
        weight_days: avg(&|l| l.weight_days),
        daily,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    /// A fixing every day of 2025: 2.0 plus 0.01 a day.
    fn rising() -> DateSeries {
        DateSeries::from_points(
            d("2025-01-01")
                .iter_days()
                .take(365)
                .enumerate()
                .map(|(i, day)| (day, 2.0 + 0.01 * i as f64)),
        )
        .unwrap()
    }

    #[test]
    fn a_daily_strip_earns_the_months_mean_minus_the_entry() {
        // June 2025 (30 days), entry at the close of May 31, lookback 1 day. Fixing on
        // day n of the year (Jan 1 = 0) is 2 + 0.01 n: May 31 is day 150 (3.50); June's
        // days 151..180 average 3.505 + 0.01 x 14.5 = 3.655. dP = 3.655 - 3.50 = 0.155.
        let spec = PerpSpec::constant("t", 0.0).unwrap();
        let l = tranche_leg(
            &spec,
            &rising(),
            d("2025-05-31"),
            1,
            d("2025-06-01"),
            d("2025-07-01"),
        )
        .unwrap();
        assert!((l.entry_mark - 3.50).abs() < 1e-12, "{l:?}");
        assert!((l.mean_mark - 3.655).abs() < 1e-12, "{l:?}");
        assert!((l.price_change - 0.155).abs() < 1e-12, "{l:?}");
        assert_eq!(l.funding, 0.0);
        // Held 1 day at 1, then 29/30 .. 1/30: (30 + 29 + ... + 1) / 30 = 15.5 days.
        assert!((l.weight_days - 15.5).abs() < 1e-12);
    }

    #[test]
    fn a_premium_that_takes_the_mark_to_zero_or_below_is_refused() {
        // A hostile run: --perp-premium=-5 on an index of 2 to 4 was accepted, and
        // the fees on the negative marks came out at -30,978 USD. June 1 2025 is
        // day 151: 3.51 - 5 = -1.49.
        let spec = PerpSpec::constant("t", -5.0).unwrap();
        let e = tranche_leg(
            &spec,
            &rising(),
            d("2025-05-31"),
            1,
            d("2025-06-01"),
            d("2025-07-01"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("the mark on 2025-05-31 is 3.5 + -5 = -1.5 USD per GPU-hour"),
            "{e}"
        );
        // -3.4 keeps every mark of June above zero (the lowest, May 31's, 0.1).
        let spec = PerpSpec::constant("t", -3.4).unwrap();
        assert!(tranche_leg(
            &spec,
            &rising(),
            d("2025-05-31"),
            1,
            d("2025-06-01"),
            d("2025-07-01")
        )
        .is_ok());
    }

    #[test]
    fn a_constant_premium_pays_premium_times_position_times_time() {
        // Premium 0.02 paid in full once a day (24 h): 0.02 x 15.5 weight-days = 0.31
        // per GPU-hour of Q (730 GPU-hours: 226.30 USD). Lookback 5 days adds the build:
        // 1/5 .. 4/5 held over May 27..30, (1 + 2 + 3 + 4) / 5 = 2 days: 0.02 x 17.5.
        // With funding per 8 hours the same premium costs three times as much.
        let spec = PerpSpec::constant("t", 0.02).unwrap();
        let one = tranche_leg(
            &spec,
            &rising(),
            d("2025-05-31"),
            1,
            d("2025-06-01"),
            d("2025-07-01"),
        )
        .unwrap();
        assert!((one.funding - 0.31).abs() < 1e-12, "{one:?}");
        assert!((730.0 * one.funding - 226.3).abs() < 1e-9);
        let five = tranche_leg(
            &spec,
            &rising(),
            d("2025-05-31"),
            5,
            d("2025-06-01"),
            d("2025-07-01"),
        )
        .unwrap();
        assert!((five.funding - 0.02 * 17.5).abs() < 1e-12, "{five:?}");
        // The premium is in both the entry and the month's marks: it cancels in dP.
        // Entry = mean of May 27..31 = day 148 = 3.48 + 0.02; month mean 3.655 + 0.02.
        assert!(
            (five.price_change - (3.655 - 3.48)).abs() < 1e-12,
            "{five:?}"
        );
        let mut eight = spec.clone();
        eight.funding_period_hours = 8.0;
        let e = tranche_leg(
            &eight,
            &rising(),
            d("2025-05-31"),
            1,
            d("2025-06-01"),
            d("2025-07-01"),
        )
        .unwrap();
        assert!((e.funding - 3.0 * 0.31).abs() < 1e-12);
    }

    #[test]
    fn weekly_steps_hold_more_than_what_is_left() {
        // Rebalanced every 7 days: 1 over the first 7 days of June (the step at the
        // close of June 7 takes it to 23/30), so weight-days exceed the daily 15.5.
        let mut spec = PerpSpec::constant("t", 0.0).unwrap();
        spec.rebalance_days = 7;
        let l = tranche_leg(
            &spec,
            &rising(),
            d("2025-05-31"),
            1,
            d("2025-06-01"),
            d("2025-07-01"),
        )
        .unwrap();
        // Closes at 1: May 31 and June 1..6 (7); at the close of June 7, 23 of the 30
        // days are left: 23/30 over June 7..13, 16/30 over 14..20, 9/30 over 21..27,
        // 2/30 over 28..29, and 0 at the close of June 30.
        let expect = 7.0 + (23.0 * 7.0 + 16.0 * 7.0 + 9.0 * 7.0 + 2.0 * 2.0) / 30.0;
        assert!((l.weight_days - expect).abs() < 1e-12, "{}", l.weight_days);
        // Turnover: bought 1 at 3.50, sold to 0 over the month.
        assert!(l.turnover > 3.5 * 2.0);
    }

    #[test]
    fn a_dated_premium_must_cover_the_days_held() {
        let spec = PerpSpec::constant("t", 0.0)
            .unwrap()
            .with_premiums(DateSeries::from_points([(d("2025-06-10"), 0.01)]).unwrap());
        let e = tranche_leg(
            &spec,
            &rising(),
            d("2025-05-31"),
            1,
            d("2025-06-01"),
            d("2025-07-01"),
        )
        .unwrap_err();
        assert_eq!(e, Unmarked::NoPremium(d("2025-05-31")));
        assert!(e.to_string().contains("starts after 2025-05-31"), "{e}");
    }

    #[test]
    fn bad_specs_are_refused_with_the_field() {
        for (toml, field) in [
            ("name = \"p\"\nrebalance_days = 0", "rebalance_days"),
            (
                "name = \"p\"\nfunding_period_hours = -8",
                "funding_period_hours",
            ),
            ("name = \"p\"\npremium = nan", "premium"),
            ("name = \"p\"\nfee_rate = 0.5", "fee_rate"),
            ("name = \"p\"\nlot_gpu_hours = 0", "lot_gpu_hours"),
            (
                "name = \"p\"\npremium = 0.1\npremium_file = \"x.csv\"",
                "both",
            ),
            ("name = \"p\"\nfunding = 1", "unknown field"),
        ] {
            let e = PerpSpec::from_toml(toml, Path::new("p.toml"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(field), "{toml}: {e}");
        }
    }
}

#[cfg(test)]
mod text_tests {
    use super::*;

    /// Every variant's text as published before it was derived: `periods.csv` and
    /// `summary.json` hold it, so it must not change by a byte.
    const TEXT: [(Instrument, &str); 2] =
        [(Instrument::Futures, "futures"), (Instrument::Perp, "perp")];

    #[test]
    fn text_forms_are_pinned_and_agree_with_serde() {
        assert_eq!(
            <Instrument as strum::VariantArray>::VARIANTS.len(),
            TEXT.len()
        );
        for (v, text) in TEXT {
            assert_eq!(v.as_str(), text);
            assert_eq!(text.parse::<Instrument>().unwrap(), v);
            assert_eq!(v.to_string(), text);
            assert_eq!(serde_json::to_value(v).unwrap(), text);
            assert_eq!(
                serde_json::from_value::<Instrument>(text.into()).unwrap(),
                v
            );
        }
    }
}
