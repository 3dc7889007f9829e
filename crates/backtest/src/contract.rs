//! The contract specification and its settlement prices.

use crate::error::{BacktestError, NoSettlement};
use crate::settlement_rule::{classify, coverage_of, fill_value, CoverageRule, SettlementStatus};
use crate::underlying::{Stamps, Underlying};
use chrono::{Datelike, Months, NaiveDate};
use rentix_core::{DateSeries, DayRule, Grade, Invalid};
use serde::{Deserialize, Serialize};
use std::path::Path;
use strum::VariantArray;

const DEFAULT: &str = rentix_core::bundled::DEFAULT_CONTRACT;

/// How the final settlement price of a contract month is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Settlement {
    /// Mean of the contract month's fixings.
    MonthlyAverage,
    /// The month's last fixing.
    Final,
    /// Mean of the month's last `last_n` fixings.
    LastNAverage,
}

/// How a position's entry price is set, for want of futures price history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::IntoStaticStr, strum::Display, strum::EnumString, strum::VariantArray)]
#[strum(serialize_all = "lowercase")]
pub enum EntryAssumption {
    /// The last fixing before entry: futures priced at the index (no drift).
    Index,
    /// The fixing of `forward_grade` at entry (a reservation prices the future).
    Forward,
    /// The last fixing plus `premium` USD per GPU-hour.
    Premium,
}

impl EntryAssumption {
    /// Every assumption, in the order the entry sensitivity reports them.
    pub const ALL: [Self; Self::VARIANTS.len()] = match Self::VARIANTS.first_chunk() {
        Some(all) => *all,
        None => unreachable!(),
    };

    /// The name a contract file and `summary.json` use.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The `[entry]` table of a contract file: how each position's entry price is set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntrySpec {
    /// How the entry price is set.
    pub assumption: EntryAssumption,
    /// USD per GPU-hour added to the index level under `premium` (and in the entry
    /// sensitivity); may be negative, within +-1000.
    #[serde(default)]
    pub premium: f64,
    /// The grade whose fixing is the entry price under `forward` (required then).
    #[serde(default)]
    pub forward_grade: Option<String>,
    /// Days of fixings averaged into the entry price (and into the rent it is
    /// compared with), to keep one day's noise out of a month's hedge. 1 = the last
    /// fixing alone.
    #[serde(default = "one")]
    pub lookback_days: u32,
}

fn one() -> u32 {
    1
}

/// A contract file's terms as written (its TOML shape), not yet checked: read one
/// as a [`ContractSpec`], which checks every term and parses its day rule once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContractTerms {
    /// The name outputs show.
    pub name: String,
    /// The index it settles on: a grade key (`GPU/SCOPE/TERM[@region]`) or a
    /// composite's name.
    pub underlying: String,
    /// GPU-hours one contract covers, a whole number (730: a GPU-month).
    pub contract_gpu_hours: f64,
    /// Price increment, USD per GPU-hour: settlements, entry prices and entry index
    /// levels are rounded to it.
    pub tick: f64,
    /// How a month's settlement is computed from its fixings.
    pub settlement: Settlement,
    /// The days whose fixings count: `all` or `business` (on `calendar`).
    pub settlement_days: String,
    /// Holiday calendar of `business` settlement days (default `us-exchange`).
    #[serde(default = "default_calendar")]
    pub calendar: String,
    /// Fixings averaged by `last-n-average` (default 5, at most 31).
    #[serde(default = "default_last_n")]
    pub last_n: usize,
    /// Months listed at once (1 to 120): the most tranches `layered` can use is the
    /// smaller of this and 3.
    pub listed_months: u32,
    /// Fewest sufficient, non-carried fixings among those the settlement rule uses
    /// for a month to settle (capped at the number the rule uses: 1 for `final`,
    /// `last_n` for `last-n-average`); a month with fewer is reported as not settled.
    #[serde(default = "default_min_settlement_fixings")]
    pub min_settlement_fixings: usize,
    /// Fee per contract of each month's position, USD.
    pub fee_per_contract: f64,
    /// Initial margin as a share of the position's notional at entry, 0 to 1.
    pub initial_margin: f64,
    /// How the entry price is set (`[entry]`).
    pub entry: EntrySpec,
    /// Coverage-based settlement (`settlement_rule`): settle, review or
    /// determination by the share of settlement days published, with gaps filled.
    /// Without it, `min_settlement_fixings` decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<CoverageRule>,
    /// A month with no fixing on any settlement day settles on the last value
    /// published before it (Kalshi's monthly GPU markets).
    #[serde(default, skip_serializing_if = "is_false")]
    pub last_published_fallback: bool,
    /// Revisions published after a month expired do not change its settlement
    /// (the default, and Kalshi's rule); `false` settles on today's restated fixings.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub ignore_revisions_after_expiry: bool,
    /// Spot-month position limit, contracts (NYMEX GPU1: 7,500); a hedge that needs
    /// more is flagged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position_limit: Option<u32>,
}

fn is_false(b: &bool) -> bool {
    !*b
}
fn is_true(b: &bool) -> bool {
    *b
}
fn yes() -> bool {
    true
}

/// What a contract's settlement rule gives for one month.
#[derive(Debug, Clone, PartialEq)]
pub struct SettlementOutcome {
    /// Settled, in review or to determination.
    pub status: SettlementStatus,
    /// The settlement price on the tick; `None` for a determination.
    pub value: Option<f64>,
    /// Share of the rule's settlement days (for an intraday index, stamps) with a
    /// qualifying fixing, 0 to 1.
    pub coverage: f64,
    /// The longest run of those days without one, as a share of them, 0 to 1.
    pub longest_gap: f64,
    /// Why the month did not simply settle (empty when it did).
    pub reason: String,
}

fn default_calendar() -> String {
    "us-exchange".into()
}
fn default_last_n() -> usize {
    5
}
/// Ten qualifying fixings: about half of a month's business days.
pub(crate) const DEFAULT_MIN_SETTLEMENT_FIXINGS: usize = 10;
fn default_min_settlement_fixings() -> usize {
    DEFAULT_MIN_SETTLEMENT_FIXINGS
}

/// Every settlement day's value: its qualifying fixing, or the gap fill of the
/// coverage rule from the qualifying fixings before it (`flags[k]`: day `k` has one).
fn gap_filled(
    index: &Underlying,
    days: &[NaiveDate],
    flags: &[bool],
    rule: &CoverageRule,
) -> Vec<f64> {
    let mut values = Vec::with_capacity(days.len());
    for (d, q) in days.iter().zip(flags) {
        if *q {
            values.extend(index.values.get(*d));
            continue;
        }
        let mut before: Vec<f64> = index
            .qualifying
            .range(..*d)
            .rev()
            .filter_map(|x| index.values.get(*x))
            .take(rule.gap_fill_n)
            .collect();
        before.reverse();
        values.extend(fill_value(rule.gap_fill, rule.gap_fill_n, &before));
    }
    values
}

/// Every stamp's value: its own, or the gap fill of the coverage rule from the
/// valued stamps before it.
fn gap_filled_stamps(st: &Stamps, expected: &[i64], rule: &CoverageRule) -> Vec<f64> {
    let mut values = Vec::with_capacity(expected.len());
    for t in expected {
        if let Some(v) = st.values.get(t) {
            values.push(*v);
            continue;
        }
        let mut before: Vec<f64> = st
            .values
            .range(..*t)
            .rev()
            .take(rule.gap_fill_n)
            .map(|(_, v)| *v)
            .collect();
        before.reverse();
        values.extend(fill_value(rule.gap_fill, rule.gap_fill_n, &before));
    }
    values
}

/// A stamp settlement's status, its value before rounding to the tick (`None` for a
/// determination) and why it did not simply settle.
type StampVerdict = (SettlementStatus, Option<f64>, String);

/// Longest accepted index name (grade key or composite name).
const MAX_INDEX_NAME: usize = 200;

/// Checks an underlying's name: a grade key (`GPU/SCOPE/TERM[@region]`) or a
/// composite's name from a methodology (printable, at most 200 characters).
pub fn validate_index_name(name: &str) -> Result<(), Invalid> {
    if name.contains('/') && name.parse::<Grade>().is_ok() {
        return Ok(());
    }
    if name.is_empty() || name.len() > MAX_INDEX_NAME || name.chars().any(char::is_control) {
        return Err(format!(
            "{:?} is neither a grade (GPU/SCOPE/TERM) nor a composite name (1-{MAX_INDEX_NAME} printable characters)",
            name.chars().take(60).collect::<String>()
        ).into());
    }
    Ok(())
}

impl ContractTerms {
    /// Checks every term (ranges, the underlying's name, the day rule, the coverage
    /// rule, a forward grade for `forward`); the message names the term.
    pub fn validate(&self) -> Result<(), Invalid> {
        self.check().map(|_| ())
    }

    /// [`ContractTerms::validate`], giving the parsed day rule.
    fn check(&self) -> Result<DayRule, Invalid> {
        validate_index_name(&self.underlying).map_err(|e| format!("underlying: {e}"))?;
        if let Some(c) = &self.coverage {
            c.validate()?;
        }
        if self.position_limit == Some(0) {
            return Err("position_limit must be at least 1 contract".into());
        }
        if !(self.contract_gpu_hours.is_finite() && self.contract_gpu_hours > 0.0) {
            return Err("contract_gpu_hours must be positive".into());
        }
        if self.contract_gpu_hours < 1.0 || self.contract_gpu_hours.fract() != 0.0 {
            return Err(format!(
                "contract_gpu_hours = {} is not a whole number of GPU-hours (at least 1; a GPU-month is 730)",
                self.contract_gpu_hours
            ).into());
        }
        if !(self.tick.is_finite() && self.tick > 0.0) {
            return Err("tick must be positive".into());
        }
        if !(self.fee_per_contract.is_finite() && self.fee_per_contract >= 0.0) {
            return Err("fee_per_contract must be a finite number >= 0".into());
        }
        if !(self.initial_margin.is_finite() && (0.0..=1.0).contains(&self.initial_margin)) {
            return Err("initial_margin is a share of notional in [0, 1]".into());
        }
        if self.listed_months == 0 {
            return Err("listed_months must be >= 1".into());
        }
        if self.name.len() > 200 || self.name.chars().any(char::is_control) {
            return Err("name must be at most 200 printable characters".into());
        }
        if self.contract_gpu_hours > 1.0e9 || self.tick > 1000.0 || self.fee_per_contract > 1.0e9 {
            return Err("contract_gpu_hours (<= 1e9), tick (<= 1000) or fee_per_contract (<= 1e9) out of range".into());
        }
        if self.listed_months > 120 || self.last_n > 31 {
            return Err("listed_months must be <= 120 and last_n <= 31".into());
        }
        if self.entry.premium.abs() > 1000.0 {
            return Err("entry.premium must be within +-1000 USD per GPU-hour".into());
        }
        if self.min_settlement_fixings == 0 || self.min_settlement_fixings > 31 {
            return Err("min_settlement_fixings must be 1..=31".into());
        }
        if !self.entry.premium.is_finite() {
            return Err("entry.premium must be a finite number".into());
        }
        if self.settlement == Settlement::LastNAverage && self.last_n == 0 {
            return Err("last_n must be >= 1".into());
        }
        let rule = self.parse_day_rule()?;
        if self.entry.lookback_days == 0 || self.entry.lookback_days > 31 {
            return Err("entry.lookback_days must be 1..=31".into());
        }
        if self.entry.assumption == EntryAssumption::Forward {
            match &self.entry.forward_grade {
                Some(g) => {
                    g.parse::<Grade>()
                        .map_err(|e| format!("entry.forward_grade: {e}"))?;
                }
                // An underlying that is no GPU grade (a composite) has no one-month
                // reservation to price a forward: said so, not "needs a grade".
                None if self.underlying.parse::<Grade>().is_err() => {
                    return Err(format!(
                        "entry.assumption = \"forward\" prices the futures at the underlying's one-month reservation, and {} is no GPU grade (a composite, or not a grade) with one: use --entry index or premium",
                        self.underlying
                    )
                    .into())
                }
                None => {
                    return Err("entry.assumption = \"forward\" needs entry.forward_grade".into())
                }
            }
        }
        Ok(rule)
    }

    /// The rule deciding which days' fixings count towards a settlement, parsed.
    fn parse_day_rule(&self) -> Result<DayRule, Invalid> {
        DayRule::new(&self.settlement_days, &self.calendar).map_err(|e| Invalid(e.to_string()))
    }
}

/// A cash-settled monthly futures contract on a grade's fixings: terms that were
/// checked ([`ContractTerms::validate`]) and their settlement day rule, parsed
/// once (the holiday calendar is not read again for each month). The terms are
/// read through `Deref`; a changed contract is made with [`ContractSpec::edited`],
/// which checks it again.
#[derive(Debug, Clone)]
pub struct ContractSpec {
    terms: ContractTerms,
    rule: DayRule,
}

impl PartialEq for ContractSpec {
    /// Equal terms (the rule follows from them).
    fn eq(&self, other: &Self) -> bool {
        self.terms == other.terms
    }
}

impl Serialize for ContractSpec {
    /// Written as its terms: the file it was read from.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.terms.serialize(s)
    }
}

impl std::ops::Deref for ContractSpec {
    type Target = ContractTerms;
    fn deref(&self) -> &ContractTerms {
        &self.terms
    }
}

impl ContractSpec {
    /// Checks `terms` and parses their day rule; the error names the contract (by
    /// its `name`) and the term.
    pub fn new(terms: ContractTerms) -> Result<Self, BacktestError> {
        match terms.check() {
            Ok(rule) => Ok(Self { terms, rule }),
            Err(Invalid(detail)) => Err(BacktestError::Contract {
                path: terms.name.into(),
                detail,
            }),
        }
    }

    /// This contract with `change` made to its terms, checked again.
    pub fn edited(&self, change: impl FnOnce(&mut ContractTerms)) -> Result<Self, BacktestError> {
        let mut terms = self.terms.clone();
        change(&mut terms);
        Self::new(terms)
    }

    /// The terms as written.
    pub fn terms(&self) -> &ContractTerms {
        &self.terms
    }

    /// The terms, for a caller that builds another contract from them.
    pub fn into_terms(self) -> ContractTerms {
        self.terms
    }

    /// The rule deciding which days' fixings count towards a settlement.
    pub fn day_rule(&self) -> &DayRule {
        &self.rule
    }

    /// The bundled contract: H100 SXM bare-metal on-demand, 730 GPU-hours, monthly
    /// average of all days.
    #[allow(
        clippy::expect_used,
        reason = "compiled-in data, checked by a unit test: failing is a build defect"
    )]
    pub fn default_contract() -> Self {
        Self::from_toml(
            DEFAULT,
            Path::new("data/contracts/h100-sxm-80gb-bare-metal-on-demand.toml"),
        )
        .expect("bundled contract is valid")
    }

    /// Reads and checks a contract file (a path, or a shipped contract's name).
    pub fn from_file(path: &Path) -> Result<Self, BacktestError> {
        let text =
            rentix_core::read_config(path, rentix_core::ConfigKind::Contract).map_err(|e| {
                BacktestError::File {
                    path: path.to_path_buf(),
                    detail: e.to_string(),
                }
            })?;
        Self::from_toml(&text, path)
    }

    /// Parses and checks a contract's TOML; `path` names it in errors.
    pub fn from_toml(text: &str, path: &Path) -> Result<Self, BacktestError> {
        let terms: ContractTerms = toml::from_str(text).map_err(|e| BacktestError::Contract {
            path: path.to_path_buf(),
            detail: e.to_string(),
        })?;
        match terms.check() {
            Ok(rule) => Ok(Self { terms, rule }),
            Err(Invalid(detail)) => Err(BacktestError::Contract {
                path: path.to_path_buf(),
                detail,
            }),
        }
    }

    /// The same contract terms on another underlying; the name says so when it changes.
    pub fn on_underlying(mut self, underlying: &str) -> Self {
        // The underlying's name is not part of the day rule: nothing to parse again.
        if self.underlying != underlying {
            // Named by what it settles on, so that an H100 contract's name is never
            // shown on an H200 hedge.
            self.terms.name = format!("{underlying} futures on the terms of {:?}", self.name);
            self.terms.underlying = underlying.to_string();
            // A forward entry reads the new underlying's own one-month reservation
            // (a composite has none: its months fall back to the index, counted):
            // the old one priced H200 futures at the H100 reservation.
            if self.terms.entry.forward_grade.is_some() {
                self.terms.entry.forward_grade = underlying.parse::<Grade>().ok().map(|mut g| {
                    g.term = rentix_core::ContractTerm::Month1;
                    g.key()
                });
            }
        }
        self
    }

    /// Rounds a price to the tick.
    pub fn to_tick(&self, price: f64) -> f64 {
        // Ticks to seven decimals first, so that binary noise in a mean cannot
        // decide a half (a mean of fixings on a 0.0001 grid over at most 31 days
        // is a half tick exactly, or at least 1.6e-6 of a tick away from one).
        let ticks = price / self.tick;
        let ticks = if ticks.abs() < 1e8 {
            (ticks * 1e7).round() / 1e7
        } else {
            ticks
        };
        let r = ticks.round() * self.tick;
        // Remove binary noise from the multiplication.
        (r * 1e9).round() / 1e9
    }

    /// Mean of the series over the `lookback_days` days ending on `day`; the last
    /// value on or before `day` when none of those days has one (or `None`).
    pub fn entry_level(&self, series: &DateSeries, day: NaiveDate) -> Option<f64> {
        let from = day - chrono::Days::new(u64::from(self.entry.lookback_days.max(1) - 1));
        let v: Vec<f64> = series
            .range(from..day + chrono::Days::new(1))
            .map(|(_, v)| v)
            .collect();
        if v.is_empty() {
            series.last_on_or_before(day).map(|(_, x)| x)
        } else {
            Some(v.iter().sum::<f64>() / v.len() as f64)
        }
    }

    /// The fixings published on the days the settlement rule uses for the month
    /// containing `month`: every counted day (monthly average), the month's last one
    /// (final) or its last `last_n`; empty when none of them has one. The days are
    /// the calendar's, not the last ones published: a `final` contract whose last
    /// ten days went unpublished settled on the fixing ten days before its final day
    /// (a hostile round), where the rule's day has no fixing.
    pub fn settlement_fixings(
        &self,
        index: &Underlying,
        month: NaiveDate,
    ) -> Vec<(NaiveDate, f64)> {
        self.settlement_days_of(month)
            .into_iter()
            .filter_map(|d| index.values.get(d).map(|v| (d, v)))
            .collect()
    }

    /// Final settlement price of the month containing `month`, or why it does not
    /// settle: no fixing on a counted day, or fewer qualifying (sufficient,
    /// non-carried) fixings among those the rule uses than `min_settlement_fixings`,
    /// or, under a `[coverage]` rule, a determination. A month in review settles on
    /// its computed value ([`ContractSpec::settle_outcome`] tells it apart).
    pub fn settle(&self, index: &Underlying, month: NaiveDate) -> Result<f64, NoSettlement> {
        let o = self.settle_outcome(index, month);
        o.value.ok_or(NoSettlement(o.reason))
    }

    /// The month's settlement with its status, coverage and longest gap; an error
    /// only for a contract whose day rule cannot be read.
    pub fn settle_outcome(&self, index: &Underlying, month: NaiveDate) -> SettlementOutcome {
        if let Some(stamps) = &index.stamps {
            return self.settle_stamps(stamps, month);
        }
        let used = self.settlement_fixings(index, month);
        let days = self.settlement_days_of(month);
        let flags: Vec<bool> = days
            .iter()
            .map(|d| index.qualifying.contains(d) && index.values.get(*d).is_some())
            .collect();
        let (coverage, longest_gap) = coverage_of(&flags);
        let outcome = |status, value: Option<f64>, reason: String| SettlementOutcome {
            status,
            value: value.map(|v| self.to_tick(v)),
            coverage,
            longest_gap,
            reason,
        };
        if used.is_empty() {
            let end = month_start(month) + Months::new(1);
            let fallback = self
                .last_published_fallback
                .then(|| index.values.last_on_or_before(end - chrono::Days::new(1)))
                .flatten();
            return match fallback {
                Some((d, v)) => outcome(
                    SettlementStatus::Settled,
                    Some(v),
                    format!(
                        "no fixing on a settlement day: settled on the last value published, {d}"
                    ),
                ),
                None => outcome(
                    SettlementStatus::Determination,
                    None,
                    self.no_fixing_on(&days, index.values.last_date()),
                ),
            };
        }
        let Some(rule) = &self.coverage else {
            let qualifying = used
                .iter()
                .filter(|(d, _)| index.qualifying.contains(d))
                .count();
            // Capped by the days the rule uses (one for `final`), published or
            // not: a month whose fixings are missing does not need fewer.
            let needed = self.min_settlement_fixings.min(days.len());
            if qualifying < needed {
                return outcome(
                    SettlementStatus::Determination,
                    None,
                    format!(
                        "not settled: {qualifying} sufficient, not carried fixings of the {} published on the {} days the rule uses; min_settlement_fixings needs {needed}",
                        used.len(),
                        days.len()
                    ),
                );
            }
            let mean = used.iter().map(|(_, v)| v).sum::<f64>() / used.len() as f64;
            return outcome(SettlementStatus::Settled, Some(mean), String::new());
        };
        let status = classify(rule, coverage, longest_gap);
        let pct = |x: f64| format!("{:.1}%", 100.0 * x);
        if status == SettlementStatus::Determination {
            return outcome(
                status,
                None,
                format!(
                    "to determination: {} of the settlement days published (review needs {}), longest gap {}",
                    pct(coverage),
                    pct(rule.review_at),
                    pct(longest_gap)
                ),
            );
        }
        let values = gap_filled(index, &days, &flags, rule);
        if values.is_empty() {
            return outcome(
                SettlementStatus::Determination,
                None,
                "no qualifying fixing, and nothing to fill the gaps from".into(),
            );
        }
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        let reason = match status {
            SettlementStatus::Review => format!(
                "in review: {} of the settlement days published (settling needs {} with gaps of at most {}), longest gap {}",
                pct(coverage),
                pct(rule.settle_at),
                pct(rule.max_gap_share),
                pct(longest_gap)
            ),
            _ => String::new(),
        };
        outcome(status, Some(mean), reason)
    }

    /// Why a month with no fixing on the days its rule uses does not settle, naming
    /// the days: past the index's last fixing (the month is not over in the data),
    /// or weekend days a contract of every day counts where the index publishes
    /// business days only, or else the days themselves ("no fixing on a
    /// settlement day" named neither the day nor the calendars that disagree).
    fn no_fixing_on(&self, days: &[NaiveDate], last: Option<NaiveDate>) -> String {
        use chrono::Weekday;
        let what = match self.settlement {
            Settlement::MonthlyAverage => "the monthly average's days".to_string(),
            Settlement::Final => "the final fixing's day".to_string(),
            Settlement::LastNAverage => format!("the last {} days", self.last_n),
        };
        let (Some(first), Some(end)) = (days.first(), days.last()) else {
            return format!("no fixing of {}: {what} are none", self.underlying);
        };
        let span = if first == end {
            format!("{end} ({})", end.format("%A"))
        } else {
            format!("{first} to {end}")
        };
        if let Some(last) = last.filter(|l| l < first) {
            return format!(
                "no fixing of {} on {what}, {span}: they come after the index's last fixing ({last}), the month is not over in the data",
                self.underlying
            );
        }
        let weekend = days
            .iter()
            .all(|d| matches!(d.weekday(), Weekday::Sat | Weekday::Sun));
        if weekend && self.settlement_days == "all" {
            return format!(
                "no fixing of {} on {what}, {span}: the contract counts every day (settlement_days = \"all\"), and an index that publishes business days only needs settlement_days = \"business\" (or last_published_fallback)",
                self.underlying
            );
        }
        format!("no fixing of {} on {what}, {span}", self.underlying)
    }

    /// The settlement of an intraday index: the mean of the stamps of the month's
    /// settlement days (the last stamp for `final`, the last `last_n` for
    /// `last-n-average`), under the coverage rule counted in stamps: coverage is the
    /// share of those stamps with a value, the longest gap the longest run without
    /// one as a share of them, and a gap stamp is filled as `gap_fill` says (`carry`:
    /// the last value published, a prediction market's rule). Without a
    /// `[coverage]` table a month needs `min_settlement_fixings` valued stamps. No
    /// stamp valued in the month: the last value before its end when
    /// `last_published_fallback`, else a determination.
    fn settle_stamps(&self, st: &Stamps, month: NaiveDate) -> SettlementOutcome {
        let expected = self.settlement_stamps_of(st, month);
        let flags: Vec<bool> = expected.iter().map(|t| st.values.contains_key(t)).collect();
        let (coverage, longest_gap) = coverage_of(&flags);
        let outcome = |(status, value, reason): StampVerdict| SettlementOutcome {
            status,
            value: value.map(|v| self.to_tick(v)),
            coverage,
            longest_gap,
            reason,
        };
        let valued = flags.iter().filter(|f| **f).count();
        let end = expected.last().copied().unwrap_or(0);
        if valued == 0 {
            return outcome(self.no_stamp_valued(st, end));
        }
        let pct = |x: f64| format!("{:.1}%", 100.0 * x);
        let Some(rule) = &self.coverage else {
            return outcome(self.stamps_without_coverage(st, &expected, valued));
        };
        let status = classify(rule, coverage, longest_gap);
        if status == SettlementStatus::Determination {
            return outcome((
                status,
                None,
                format!(
                    "to determination: {} of the stamps published (review needs {}), longest gap {}",
                    pct(coverage),
                    pct(rule.review_at),
                    pct(longest_gap)
                ),
            ));
        }
        let values = gap_filled_stamps(st, &expected, rule);
        let mean = values.iter().sum::<f64>() / values.len().max(1) as f64;
        let reason = match status {
            SettlementStatus::Review => format!(
                "in review: {} of the stamps published (settling needs {} with gaps of at most {}), longest gap {}",
                pct(coverage),
                pct(rule.settle_at),
                pct(rule.max_gap_share),
                pct(longest_gap)
            ),
            _ => String::new(),
        };
        outcome((status, Some(mean), reason))
    }

    /// The stamps of `month` the settlement rule uses, valued or not: every stamp of
    /// the counted days (monthly average), the last one (final) or the last `last_n`
    /// (seconds since the epoch).
    fn settlement_stamps_of(&self, st: &Stamps, month: NaiveDate) -> Vec<i64> {
        let per_day = (86_400 / st.step.max(1)).max(1);
        let mut expected: Vec<i64> = Vec::new();
        for d in self.settlement_days_of_all(month) {
            let start = d.and_time(chrono::NaiveTime::MIN).and_utc().timestamp();
            expected.extend((1..=per_day).map(|k| start + k * st.step));
        }
        self.kept(&expected).to_vec()
    }

    /// A month with no valued stamp: settled on the last value published on or
    /// before `end` (the last stamp the rule uses) under `last_published_fallback`,
    /// else a determination.
    fn no_stamp_valued(&self, st: &Stamps, end: i64) -> StampVerdict {
        if let Some((t, v)) = self
            .last_published_fallback
            .then(|| st.values.range(..=end).next_back())
            .flatten()
        {
            let when = chrono::DateTime::<chrono::Utc>::from_timestamp(*t, 0).unwrap_or_default();
            return (
                SettlementStatus::Settled,
                Some(*v),
                format!(
                    "no stamp published in the month: settled on the last value published, {}",
                    when.to_rfc3339()
                ),
            );
        }
        (
            SettlementStatus::Determination,
            None,
            format!(
                "no stamp of {} published on a settlement day",
                self.underlying
            ),
        )
    }

    /// Without a `[coverage]` table: the mean of the `valued` stamps among `expected`
    /// when there are `min_settlement_fixings` of them (or all the rule uses), else
    /// a determination.
    fn stamps_without_coverage(
        &self,
        st: &Stamps,
        expected: &[i64],
        valued: usize,
    ) -> StampVerdict {
        let needed = self.min_settlement_fixings.min(expected.len());
        if valued < needed {
            return (
                SettlementStatus::Determination,
                None,
                format!("not settled: {valued} of the {} stamps have a value; min_settlement_fixings needs {needed}", expected.len()),
            );
        }
        let mean = expected
            .iter()
            .filter_map(|t| st.values.get(t))
            .sum::<f64>()
            / valued as f64;
        (SettlementStatus::Settled, Some(mean), String::new())
    }

    /// Every day of `month` the contract counts.
    fn settlement_days_of_all(&self, month: NaiveDate) -> Vec<NaiveDate> {
        let rule = self.day_rule();
        let start = month_start(month);
        let next = start + Months::new(1);
        start
            .iter_days()
            .take_while(|d| *d < next)
            .filter(|d| rule.counts(*d))
            .collect()
    }

    /// The tail of a month's settlement days (or fixings) the rule averages: all of
    /// them (monthly average), the last one (final) or the last `last_n`.
    fn kept<'a, T>(&self, days: &'a [T]) -> &'a [T] {
        let keep = match self.settlement {
            Settlement::MonthlyAverage => days.len(),
            Settlement::Final => 1,
            Settlement::LastNAverage => self.last_n,
        };
        &days[days.len().saturating_sub(keep)..]
    }

    /// The days of `month` the settlement rule uses, published or not: every counted
    /// day (monthly average), the last one (final) or the last `last_n`.
    fn settlement_days_of(&self, month: NaiveDate) -> Vec<NaiveDate> {
        let rule = self.day_rule();
        let start = month_start(month);
        let next = start + Months::new(1);
        let days: Vec<NaiveDate> = start
            .iter_days()
            .take_while(|d| *d < next)
            .filter(|d| rule.counts(*d))
            .collect();
        self.kept(&days).to_vec()
    }
}

/// First day of the month containing `d`.
pub fn month_start(d: NaiveDate) -> NaiveDate {
    d.with_day(1).unwrap_or(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn settlement_rules_by_hand() {
        let mut c = ContractSpec::default_contract();
        // July 2025: 1.0 on the 1st..3rd, 4.0 on the 4th (a US holiday), 2.0 on the 7th.
        let idx = Underlying::from_series(
            "h100-sxm-80gb/bare-metal/on-demand",
            DateSeries::from_points([
                (d("2025-07-01"), 1.0),
                (d("2025-07-02"), 1.0),
                (d("2025-07-03"), 1.0),
                (d("2025-07-04"), 4.0),
                (d("2025-07-07"), 2.0),
                (d("2025-08-01"), 9.0),
            ])
            .unwrap(),
        );
        c = c.edited(|t| t.min_settlement_fixings = 1).unwrap();
        assert_eq!(c.settle(&idx, d("2025-07-15")), Ok(1.8));
        c = c.edited(|t| t.settlement_days = "business".into()).unwrap();
        assert_eq!(c.settle(&idx, d("2025-07-15")), Ok(1.25));
        // `final` uses July 31 (a Thursday) and the last two the 30th and the 31st:
        // neither has a fixing, so neither settles on the 7th's (2.0) or on the
        // mean of the 3rd and the 7th (1.5), the last ones published.
        c = c.edited(|t| t.settlement = Settlement::Final).unwrap();
        let final_ = c.clone();
        let no_fixing = c.settle(&idx, d("2025-07-15")).unwrap_err().0;
        assert!(
            no_fixing.contains("no fixing of h100-sxm-80gb/bare-metal/on-demand on the final fixing's day, 2025-07-31 (Thursday)"),
            "{no_fixing}"
        );
        // A month past the index's last fixing (2025-08-01) is not over in the data.
        let past = c.settle(&idx, d("2025-09-15")).unwrap_err().0;
        assert!(
            past.contains("after the index's last fixing (2025-08-01)"),
            "{past}"
        );
        // Every day counted, a month ending on a Sunday (August 2025), an index of
        // business days (no fixing on the 30th or the 31st): the calendars disagree.
        let all_days = c.edited(|t| t.settlement_days = "all".into()).unwrap();
        let business = Underlying::from_series(
            "h100-sxm-80gb/bare-metal/on-demand",
            DateSeries::from_points([(d("2025-08-29"), 2.0), (d("2025-09-01"), 2.0)]).unwrap(),
        );
        let sunday = all_days.settle(&business, d("2025-08-15")).unwrap_err().0;
        assert!(
            sunday.contains("2025-08-31 (Sunday)")
                && sunday.contains("settlement_days = \"business\""),
            "{sunday}"
        );
        c = c
            .edited(|t| t.settlement = Settlement::LastNAverage)
            .unwrap();
        c = c.edited(|t| t.last_n = 2).unwrap();
        assert!(c.settle(&idx, d("2025-07-15")).is_err());
        assert!(c.settle(&idx, d("2025-09-01")).is_err());
        // With 3.0 on the 31st: `final` settles on it; the last two days have one
        // fixing (3.0), enough under min_settlement_fixings = 1, not under the
        // default 10 (capped at the rule's two days).
        let mut points: Vec<(NaiveDate, f64)> =
            idx.values.range(d("2025-07-01")..d("2025-09-01")).collect();
        points.push((d("2025-07-31"), 3.0));
        let with_31 = Underlying::from_series(
            "h100-sxm-80gb/bare-metal/on-demand",
            DateSeries::from_points(points).unwrap(),
        );
        assert_eq!(final_.settle(&with_31, d("2025-07-15")), Ok(3.0));
        assert_eq!(c.settle(&with_31, d("2025-07-15")), Ok(3.0));
        assert_eq!(
            c.settlement_fixings(&with_31, d("2025-07-15")),
            vec![(d("2025-07-31"), 3.0)]
        );
        let default_min = c
            .edited(|t| t.min_settlement_fixings = DEFAULT_MIN_SETTLEMENT_FIXINGS)
            .unwrap();
        let needs_two = default_min.settle(&with_31, d("2025-07-15")).unwrap_err().0;
        assert!(needs_two.contains("needs 2"), "{needs_two}");
        assert_eq!(c.to_tick(1.23456), 1.235);
        // Thirty fixings of 2.0635 average to 2.0635 exactly, which binary sums
        // make 2.063499999999999: half a tick, rounded away from zero (a hostile
        // round found June settled at 2.063 where settle's rate said 2.063500).
        let mean = [2.0635; 30].iter().sum::<f64>() / 30.0;
        assert!(mean < 2.0635);
        assert_eq!(c.to_tick(mean), 2.064);
        assert_eq!(c.to_tick(-mean), -2.064);
        assert_eq!(c.to_tick(2.06349), 2.063);
    }

    /// A forward entry on another underlying reads its one-month grade; on a
    /// composite, which has none, it is refused saying so (it said "needs
    /// entry.forward_grade" of a contract that had one).
    #[test]
    fn a_forward_entry_follows_the_underlying() {
        let h200 =
            ContractSpec::default_contract().on_underlying("h200-sxm-141gb/bare-metal/on-demand");
        assert_eq!(
            h200.entry.forward_grade.as_deref(),
            Some("h200-sxm-141gb/bare-metal/1m")
        );
        let e = ContractSpec::default_contract()
            .on_underlying("gpu-hour/quality-adjusted/on-demand")
            .edited(|t| t.entry.assumption = EntryAssumption::Forward)
            .unwrap_err()
            .to_string();
        assert!(e.contains("is no GPU grade"), "{e}");
    }

    #[test]
    fn a_month_needs_enough_qualifying_fixings() {
        let mut c = ContractSpec::default_contract();
        assert_eq!(c.min_settlement_fixings, DEFAULT_MIN_SETTLEMENT_FIXINGS);
        // 21 fixings in June 2025 (the 1st to the 20th and the 30th), of which 9
        // qualify (sufficient, not carried).
        let values = DateSeries::from_points(
            (1..=20)
                .chain([30])
                .map(|i| (NaiveDate::from_ymd_opt(2025, 6, i).unwrap(), 2.0)),
        )
        .unwrap();
        let mut u = Underlying::from_series("x/bare-metal/on-demand", values);
        u.qualifying = (1..=9)
            .map(|i| NaiveDate::from_ymd_opt(2025, 6, i).unwrap())
            .collect();
        let err = c.settle(&u, d("2025-06-01")).unwrap_err();
        assert!(
            err.0
                .contains("9 sufficient, not carried fixings of the 21 published on the 30 days")
                && err.0.contains("needs 10"),
            "{err}"
        );
        u.qualifying.insert(d("2025-06-15"));
        assert_eq!(c.settle(&u, d("2025-06-01")), Ok(2.0));
        // A final-fixing rule needs its one fixing, the 30th's, to qualify; the
        // 20th's qualifying changes nothing.
        c = c.edited(|t| t.settlement = Settlement::Final).unwrap();
        assert!(c.settle(&u, d("2025-06-01")).is_err());
        u.qualifying.insert(d("2025-06-20"));
        assert!(c.settle(&u, d("2025-06-01")).is_err());
        u.qualifying.insert(d("2025-06-30"));
        assert_eq!(c.settle(&u, d("2025-06-01")), Ok(2.0));
    }

    /// The fixings a month needs are counted against the days the rule uses, not
    /// the days that happen to hold a value: a hostile round blanked 29 of June's
    /// 30 fixings and the month settled on the one left (`min(10, 1)` = 1), where
    /// `settle` called the same month a determination at 3% coverage.
    #[test]
    fn one_fixing_left_in_a_month_does_not_settle_it() {
        let c = ContractSpec::default_contract();
        let lone = d("2025-06-30");
        let mut u = Underlying::from_series(
            "x/bare-metal/on-demand",
            DateSeries::from_points([(lone, 3.29)]).unwrap(),
        );
        u.qualifying.insert(lone);
        let err = c.settle(&u, lone).unwrap_err();
        assert!(
            err.0
                .contains("1 sufficient, not carried fixings of the 1 published on the 30 days")
                && err.0.contains("needs 10"),
            "{err}"
        );
        // A final-fixing rule uses one day: its one fixing settles it.
        let c = c.edited(|t| t.settlement = Settlement::Final).unwrap();
        assert_eq!(c.settle(&u, lone), Ok(3.29));
        // The last three days, two of them blank: two more are needed.
        let c = c
            .edited(|t| {
                t.settlement = Settlement::LastNAverage;
                t.last_n = 3;
            })
            .unwrap();
        assert!(c.settle(&u, lone).unwrap_err().0.contains("needs 3"));
    }

    #[test]
    fn coverage_rules_settle_review_or_send_to_determination() {
        // June 2025, all 30 days count. Values 2.0 every day, 3.2 on June 1st..3rd.
        let c = ContractSpec::default_contract()
            .edited(|t| {
                t.coverage = Some(CoverageRule {
                    settle_at: 0.98,
                    review_at: 0.90,
                    max_gap_share: 0.02,
                    gap_fill: crate::settlement_rule::GapFill::MeanLastN,
                    gap_fill_n: 3,
                })
            })
            .unwrap();
        let june = |skip: &[u32]| {
            let pts = (1..=30u32).filter(|i| !skip.contains(i)).map(|i| {
                (
                    NaiveDate::from_ymd_opt(2025, 6, i).unwrap(),
                    if i <= 3 { 3.2 } else { 2.0 },
                )
            });
            Underlying::from_series(
                "x/bare-metal/on-demand",
                DateSeries::from_points(pts).unwrap(),
            )
        };
        let o = c.settle_outcome(&june(&[]), d("2025-06-01"));
        assert_eq!(o.status, SettlementStatus::Settled);
        // 29 of 30 (96.7%): review; June 4th is filled by the mean of the last three
        // qualifying values (3.2): (3 x 3.2 + 3.2 + 26 x 2.0) / 30 = 2.16.
        let o = c.settle_outcome(&june(&[4]), d("2025-06-01"));
        assert_eq!(o.status, SettlementStatus::Review);
        assert_eq!(o.value, Some(2.16));
        assert!(o.reason.contains("96.7%"), "{}", o.reason);
        assert_eq!(c.settle(&june(&[4]), d("2025-06-01")), Ok(2.16));
        // 26 of 30 (86.7%): determination, no value.
        let o = c.settle_outcome(&june(&[5, 6, 7, 8]), d("2025-06-01"));
        assert_eq!(o.status, SettlementStatus::Determination);
        assert!(c.settle(&june(&[5, 6, 7, 8]), d("2025-06-01")).is_err());
    }

    #[test]
    fn the_last_published_value_settles_an_empty_month_when_the_contract_says_so() {
        let mut c = ContractSpec::default_contract();
        let idx = Underlying::from_series(
            "x/bare-metal/on-demand",
            DateSeries::from_points([(d("2025-05-30"), 2.345)]).unwrap(),
        );
        assert!(c.settle(&idx, d("2025-06-01")).is_err());
        c = c.edited(|t| t.last_published_fallback = true).unwrap();
        assert_eq!(c.settle(&idx, d("2025-06-01")), Ok(2.345));
    }

    #[test]
    fn the_shipped_nymex_contracts_read_with_their_terms() {
        // NYMEX GPU1/GPU2 as filed: 730 GPU-hours, 0.01 tick, business-day average,
        // 36 months, limits 7,500 and 5,500, fees 3.65 + 0.90.
        for (text, limit) in [
            (
                rentix_core::bundled(rentix_core::ConfigKind::Contract, "nymex-gpu1-h100").unwrap(),
                7500,
            ),
            (
                rentix_core::bundled(rentix_core::ConfigKind::Contract, "nymex-gpu2-b200").unwrap(),
                5500,
            ),
        ] {
            let c = ContractSpec::from_toml(text, Path::new("nymex.toml")).unwrap();
            assert_eq!(
                (c.contract_gpu_hours, c.tick, c.listed_months),
                (730.0, 0.01, 36)
            );
            assert_eq!(c.settlement_days, "business");
            assert_eq!(c.position_limit, Some(limit));
            assert!((c.fee_per_contract - 4.55).abs() < 1e-12);
            assert!(c.ignore_revisions_after_expiry && !c.last_published_fallback);
        }
        let good = DEFAULT;
        let with = format!(
            "{good}\n[coverage]\nsettle_at = 0.98\nreview_at = 0.9\ngap_fill = \"mean-last-n\"\n"
        );
        let c = ContractSpec::from_toml(&with, Path::new("c.toml")).unwrap();
        let rule = c.coverage.clone().unwrap();
        assert_eq!((rule.max_gap_share, rule.gap_fill_n), (0.02, 5));
        let bad = with.replace("review_at = 0.9", "review_at = 0.99");
        assert!(ContractSpec::from_toml(&bad, Path::new("c.toml")).is_err());
    }

    #[test]
    fn composite_names_are_underlyings_nonsense_is_not() {
        assert!(validate_index_name("h100-sxm-80gb/bare-metal/on-demand").is_ok());
        assert!(validate_index_name("h100-sxm-80gb/on-demand-blend").is_ok());
        assert!(validate_index_name("").is_err());
        assert!(validate_index_name("a\u{7}b").is_err());
        assert!(validate_index_name(&"x".repeat(201)).is_err());
    }

    #[test]
    fn bad_contracts_are_refused() {
        let p = Path::new("c.toml");
        let good = DEFAULT;
        assert!(ContractSpec::from_toml(&good.replace("tick = 0.001", "tick = 0"), p).is_err());
        assert!(
            ContractSpec::from_toml(&good.replace("\"monthly-average\"", "\"weekly\""), p).is_err()
        );
        assert!(ContractSpec::from_toml(
            &good.replace(
                "h100-sxm-80gb/bare-metal/on-demand\"\ncontract",
                "\"\ncontract"
            ),
            p
        )
        .is_err());
        assert!(ContractSpec::from_toml(&format!("{good}\n"), p).is_ok());
        assert!(
            ContractSpec::from_toml(&good.replace("[entry]", "[entry]\npremium = nan"), p).is_err()
        );
    }

    /// June 2025 hourly (720 stamps): 2.00 everywhere but the 24 stamps of the 15th
    /// at 2.72, less the stamps `missing` (indices into the month's stamps).
    fn hourly_june(missing: &[usize]) -> Underlying {
        let start = d("2025-06-01")
            .and_hms_opt(0, 0, 0)
            .unwrap()
            .and_utc()
            .timestamp();
        let mut values = BTreeMap::new();
        for k in 0..720usize {
            if missing.contains(&k) {
                continue;
            }
            let v = if k / 24 == 14 { 2.72 } else { 2.0 };
            values.insert(start + (k as i64 + 1) * 3600, v);
        }
        let mut u = Underlying::from_series(
            "g",
            DateSeries::from_points([(d("2025-06-01"), 2.0)]).unwrap(),
        );
        u.stamps = Some(Stamps { step: 3600, values });
        u
    }

    #[test]
    fn an_intraday_index_settles_on_the_mean_of_its_stamps_counted_in_stamps() {
        use crate::settlement_rule::SettlementStatus as S;
        let good = DEFAULT;
        let c = ContractSpec::from_toml(
            &format!(
                "{good}\n[coverage]\nsettle_at = 0.98\nreview_at = 0.9\ngap_fill = \"carry\"\n"
            ),
            Path::new("c.toml"),
        )
        .unwrap();
        let june = d("2025-06-10");
        // Every stamp: (696 x 2.00 + 24 x 2.72) / 720 = 2 + 24 x 0.72 / 720 = 2.024.
        let o = c.settle_outcome(&hourly_june(&[]), june);
        assert_eq!(
            (o.status, o.value, o.coverage),
            (S::Settled, Some(2.024), 1.0)
        );
        // Ten stamps missing here and there (98.6%), each carried from the hour
        // before: the same 2.024. Stamp 336 (the 15th's first) carries 2.00, not 2.72.
        let o = c.settle_outcome(
            &hourly_june(&[3, 50, 100, 200, 300, 400, 500, 600, 650, 700]),
            june,
        );
        assert_eq!((o.status, o.value), (S::Settled, Some(2.024)));
        let o = c.settle_outcome(&hourly_june(&[336]), june);
        // 2.024 - 0.72 / 720 = 2.023.
        assert_eq!((o.status, o.value), (S::Settled, Some(2.023)));
        // Fifteen hours in a row (2.08% of the month, coverage 97.9%): review, the
        // value still computed.
        let gap: Vec<usize> = (100..115).collect();
        let o = c.settle_outcome(&hourly_june(&gap), june);
        assert_eq!((o.status, o.value), (S::Review, Some(2.024)));
        assert!(o.reason.contains("stamps"), "{}", o.reason);
        // Eighty hours missing (88.9%): determination, no number.
        let gap: Vec<usize> = (0..80).map(|k| k * 9).collect();
        let o = c.settle_outcome(&hourly_june(&gap), june);
        assert_eq!((o.status, o.value), (S::Determination, None));
        // A final-fixing contract settles on the month's last stamp (24:00 on the 30th).
        let f = c.edited(|t| t.settlement = Settlement::Final).unwrap();
        assert_eq!(f.settle(&hourly_june(&[]), june), Ok(2.0));
        // Nothing published in July: the last value published when the contract says so.
        let fb = c.edited(|t| t.last_published_fallback = true).unwrap();
        let o = fb.settle_outcome(&hourly_june(&[]), d("2025-07-10"));
        assert_eq!((o.status, o.value), (S::Settled, Some(2.0)));
        assert!(o.reason.contains("last value published"));
        assert_eq!(
            c.settle_outcome(&hourly_june(&[]), d("2025-07-10")).status,
            S::Determination
        );
    }
}

#[cfg(test)]
mod text_tests {
    use super::*;

    /// Every variant's text as published before it was derived: contract files and
    /// `summary.json` hold it, so it must not change by a byte.
    const TEXT: [(EntryAssumption, &str); 3] = [
        (EntryAssumption::Index, "index"),
        (EntryAssumption::Forward, "forward"),
        (EntryAssumption::Premium, "premium"),
    ];

    #[test]
    fn text_forms_are_pinned_and_agree_with_serde() {
        assert_eq!(EntryAssumption::ALL.map(|v| v.as_str()), TEXT.map(|t| t.1));
        for (v, text) in TEXT {
            assert_eq!(v.as_str(), text);
            assert_eq!(v.to_string(), text);
            assert_eq!(text.parse::<EntryAssumption>().unwrap(), v);
            assert_eq!(serde_json::to_value(v).unwrap(), text);
            assert_eq!(
                serde_json::from_value::<EntryAssumption>(text.into()).unwrap(),
                v
            );
        }
    }
}
