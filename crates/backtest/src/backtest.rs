//! The backtest: periods, strategies, P&L, statistics and margin for one rent series
//! against one underlying index.
//!
//! Each strategy's month is a set of tranches (one, or three for `layered`); a
//! tranche's futures change `S - F` is matched with the rent change from the rent it
//! locked in (`periods` explains the reference), so both legs cover the same horizon.

use crate::contract::{month_start, ContractSpec, EntryAssumption};
use crate::error::BacktestError;
use crate::periods::{build_periods, LeftOut, Period, Periods, LAYERS};
use crate::perp::{mean_leg, tranche_leg, Instrument, PerpLeg, PerpSpec};
use crate::pnl::{decompose, PeriodPnl, PnlInputs};
use crate::recommendation::{
    grouped, moves_against, no_exposure, recommend, recommend_for, tracks_at_another_ratio,
    tradable, Candidate, Recommendation,
};
use crate::rent::{Event, RentSeries, Side};
use crate::stats::basis::{basis_stats, BasisStats};
use crate::stats::bootstrap::{confidence_interval, Interval};
use crate::stats::break_test::{sup_wald, BreakTest};
use crate::stats::correlation::correlation;
use crate::stats::dollar_offset::dollar_offset;
use crate::stats::effectiveness::effectiveness;
use crate::stats::hedge_ratio::{contracts, min_variance_hedge_ratio};
use crate::stats::moments::mean;
use crate::stats::regression::{regress, Regression};
use crate::stats::rolling::rolling_effectiveness;
use crate::stats::tracking_error::{tracking_error_annual, Periodicity};
use crate::stats::var::historical_var_cvar;
use crate::strategy::{leave_one_out_ratios, mean_ratio, next_ratio, ratios, Strategy};
use crate::underlying::Underlying;
use chrono::{Months, NaiveDate};
use rentix_core::{DateSeries, DayRule};
use rentix_fixings::IndexUnit;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Options of a backtest run.
#[derive(Debug, Clone)]
pub struct BacktestConfig {
    /// The contract the hedge trades; it settles on the contract's underlying.
    pub contract: ContractSpec,
    /// Strategies run, in this order (the order of `summary.json` and `periods.csv`).
    pub strategies: Vec<Strategy>,
    /// Resamples of the stationary bootstrap behind every confidence interval; 0: no
    /// intervals, and the recommendation decides on point estimates.
    pub bootstrap_resamples: usize,
    /// Seed of the bootstrap's generator (combined with each strategy), so that
    /// intervals are reproducible.
    pub seed: u64,
    /// Rolling-effectiveness window, months.
    pub rolling_window: usize,
    /// A perpetual swap run beside the futures on the same months (`perp`).
    pub perp: Option<PerpSpec>,
}

/// The index series a backtest needs: the underlying (as the backtest should see
/// it: first published by default), for the forward entry assumption the forward
/// grade, and the as-restated view of the underlying when it differs, to report
/// settled months that a later restatement would have changed.
#[derive(Debug, Clone)]
pub struct IndexInputs {
    /// The index the contract settles on.
    pub underlying: Underlying,
    /// The forward grade's values, for the `forward` entry assumption; an entry with
    /// no forward fixing in the 7 days before it falls back to the index.
    pub forward: Option<DateSeries>,
    /// Today's restated view of the underlying; `None` without a restatement log or
    /// when the backtest settles as restated.
    pub restated: Option<Underlying>,
}

impl IndexInputs {
    /// Inputs with nothing but an underlying.
    pub fn of(underlying: Underlying) -> Self {
        Self {
            underlying,
            forward: None,
            restated: None,
        }
    }
}

/// One row of `periods.csv`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeriodRow {
    /// Futures, or the perp run beside them.
    pub instrument: Instrument,
    /// The strategy whose month this is.
    pub strategy: Strategy,
    /// First day of the contract month.
    pub period_start: NaiveDate,
    /// First day after the month (exclusive); `periods.csv` writes it in the rent
    /// file's convention.
    pub period_end: NaiveDate,
    /// GPU-hours of rent in the month.
    pub exposure_gpu_hours: f64,
    /// Exposure minus the GPU-hours events made undeliverable, at least 0.
    pub delivered_gpu_hours: f64,
    /// The month's GPU-hour-weighted average rent, USD per GPU-hour.
    pub rent_usd_per_gpu_hour: f64,
    /// The rent the hedge locked in: index level at entry plus the basis last
    /// observed (mean over tranches).
    pub rent_reference: f64,
    /// `rent_usd_per_gpu_hour - rent_reference`, USD per GPU-hour: the hedged item's
    /// change.
    pub rent_change: f64,
    /// Index level at entry `I` (mean of the lookback days' fixings, on the tick; mean
    /// over tranches), USD per GPU-hour.
    pub index_at_entry: f64,
    /// Entry price `F` (mean over tranches), USD per GPU-hour; for a perp, the mean
    /// mark the position was built at.
    pub entry_price: f64,
    /// The month's final settlement `S`, USD per GPU-hour; for a perp, its mean mark
    /// over the month.
    pub settlement: f64,
    /// `settlement - entry_price` (`S - F`), USD per GPU-hour; for a perp, its price
    /// change per GPU-hour of position (module `perp`).
    pub futures_change: f64,
    /// `entry_price - index_at_entry`, USD per GPU-hour (0 for a perp).
    pub carry: f64,
    /// Tranches the position was entered in: 1, or up to 3 for `layered`.
    pub tranches: usize,
    /// Hedge ratio applied: GPU-hours hedged per GPU-hour of exposure, never below 0.
    pub hedge_ratio: f64,
    /// `hedge_ratio x exposure / contract size`, before rounding (for a perp, in lots).
    pub contracts_unrounded: f64,
    /// Whole contracts (or perp lots) held, rounded half away from zero, never below 0.
    pub contracts: i64,
    /// The month's P&L, decomposed (module `pnl`), USD.
    pub pnl: PeriodPnl,
    /// USD the month's events cost: reported beside the P&L, never inside it.
    pub operational_loss: f64,
}

/// 95% stationary-bootstrap confidence intervals of the headline statistics
/// (`stats::bootstrap`); each `None` without resamples, below 4 periods, or when
/// fewer than half of the resamples define the statistic.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Intervals {
    /// Of the effectiveness; always `None` for `unhedged`.
    pub effectiveness: Option<Interval>,
    /// Of the minimum-variance ratio of the strategy's rent changes on its futures
    /// changes.
    pub hedge_ratio: Option<Interval>,
    /// Of the correlation of those changes.
    pub correlation_changes: Option<Interval>,
}

/// Cash the hedge account needs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Margin {
    /// Largest initial margin posted for one month's position, USD.
    pub initial_margin_max: f64,
    /// Largest cash need in a month: initial margin plus the worst cumulative
    /// variation margin paid before settlement, USD.
    pub peak_cash_need: f64,
    /// Worst single day of variation margin, USD (negative = paid).
    pub worst_day_variation_margin: f64,
}

/// Operational losses, reported apart from the hedge.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OperationalLoss {
    /// Losses of events inside the hedge periods.
    pub total_usd: f64,
    /// `total_usd` by event kind (`EVENT_KINDS`).
    pub by_kind: BTreeMap<String, f64>,
    /// GPU-hours events made undeliverable inside the hedge periods (each month's
    /// capped at its exposure).
    pub lost_gpu_hours: f64,
    /// Futures P&L on hedged hours that events made undeliverable (inside the hedge
    /// P&L, shown here too because events caused it).
    pub volume_mismatch_usd: f64,
    /// Losses of events outside every hedge period (months left out, or outside the
    /// rent): never hedged, and not lost from view either.
    pub outside_periods_usd: f64,
}

impl OperationalLoss {
    /// Every event's loss, inside the hedge periods and outside: the one figure the
    /// console, the report's reading and its hedge card show.
    pub fn all_usd(&self) -> f64 {
        self.total_usd + self.outside_periods_usd.max(0.0)
    }

    /// `$X`, or `$X ($Y of it in months that are not hedge periods)`, with `money`
    /// writing each amount.
    pub fn described(&self, money: impl Fn(f64) -> String) -> String {
        let outside = self.outside_periods_usd.max(0.0);
        if outside > 0.0 {
            format!(
                "{} ({} of it in months that are not hedge periods)",
                money(self.all_usd()),
                money(outside)
            )
        } else {
            money(self.all_usd())
        }
    }
}

/// Sensitivity of the result to the futures entry-price assumption.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EntrySensitivity {
    /// The entry assumption: `index`, `forward` or `premium`.
    pub assumption: String,
    /// Effectiveness of a one-to-one hedge (one tranche, no fees) entered under it;
    /// `None` when the rent P&L never varied.
    pub effectiveness: Option<f64>,
    /// Mean monthly futures P&L of that hedge, USD.
    pub mean_futures_pnl: Option<f64>,
    /// Mean entry carry P&L per month (entry premium or term discount), USD.
    pub mean_entry_carry_pnl: Option<f64>,
    /// Months whose entry fell back to the index level for want of a forward fixing
    /// within 7 days before entry (only under `forward`).
    pub periods_on_fallback: usize,
}

/// The summary of one strategy.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StrategySummary {
    /// The strategy summarized.
    pub strategy: Strategy,
    /// Mean hedge ratio applied over the periods backtested.
    pub hedge_ratio: f64,
    /// Contracts for the average month's exposure at that mean ratio (for a perp,
    /// lots): what the backtest held on average, not what to trade next.
    pub contracts: i64,
    /// The same before rounding.
    pub contracts_unrounded: f64,
    /// The ratio the strategy would apply to the month after the last one (what a
    /// hedger would trade next; the recommendation's `hedge_ratio` when this strategy
    /// is the one decided); `None` for `unhedged`.
    #[serde(default)]
    pub next_hedge_ratio: Option<f64>,
    /// Whole contracts (perp lots) that ratio makes on the latest month's exposure,
    /// no more than the contract's spot-month position limit: the recommendation's
    /// `contracts` when this strategy is the one decided.
    #[serde(default)]
    pub next_contracts: Option<i64>,
    /// The same before the position limit: what the ratio asks for.
    #[serde(default)]
    pub next_contracts_asked: Option<i64>,
    /// For `static-min-variance`: its ratio judged out of sample by leaving each
    /// month out of the fit in turn (`None` for the other strategies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cross_validated: Option<CrossValidated>,
    /// Ederington effectiveness `1 - Var(hedged) / Var(unhedged)` of the monthly P&L
    /// before fees, a share (negative: the hedge added risk); 0 for `unhedged`, `None`
    /// when the rent P&L never varied.
    pub effectiveness: Option<f64>,
    /// Correlation of the monthly rent changes with the futures changes; `None` when
    /// either is constant.
    pub correlation_changes: Option<f64>,
    /// Correlation of the monthly rent with the settlement (levels, which trending
    /// series inflate: judge on changes).
    pub correlation_levels: Option<f64>,
    /// Rent change P&L regressed on minus futures P&L (USD): the hedge-accounting test.
    pub regression: Option<Regression>,
    /// `-sum(futures P&L) / sum(rent change P&L)` (the 80-125% rule,
    /// `stats::dollar_offset`); `None` for `unhedged` or a zero cumulative rent P&L.
    pub dollar_offset: Option<f64>,
    /// Annualized (x sqrt 12) standard deviation of rent change minus futures change,
    /// USD per GPU-hour.
    pub tracking_error: Option<f64>,
    /// Rent minus settlement, USD per GPU-hour; absent for a points composite.
    pub basis: Option<BasisStats>,
    /// Historical 95% value at risk of the monthly P&L, fees included, USD; positive is
    /// a loss.
    pub var_95: Option<f64>,
    /// Expected shortfall at 95% of the same P&L, USD; positive is a loss.
    pub cvar_95: Option<f64>,
    /// Historical 99% value at risk of the same P&L, USD; positive is a loss.
    pub var_99: Option<f64>,
    /// Expected shortfall at 99% of the same P&L, USD; positive is a loss.
    pub cvar_99: Option<f64>,
    /// 95% value at risk of the unhedged rent P&L, USD, to compare with `var_95`.
    pub unhedged_var_95: Option<f64>,
    /// Bootstrap intervals of the effectiveness, hedge ratio and correlation of
    /// changes.
    pub confidence_intervals: Intervals,
    /// Effectiveness over each trailing window of `rolling_window` months, oldest first
    /// (`None` where the window's rent P&L never varied); empty for `unhedged`, a
    /// window below 3, or fewer months than the window.
    pub rolling_effectiveness: Vec<Option<f64>>,
    /// Sup-Wald test for a break in the relation of rent changes to futures changes;
    /// `None` below 20 months.
    pub break_test: Option<BreakTest>,
    /// Sum of the monthly hedged P&L, fees included (`hedged_total`), USD.
    pub total_hedged_pnl: f64,
    /// Sum of the monthly rent change P&L, USD: the position without a hedge.
    pub total_unhedged_pnl: f64,
    /// Sum of the monthly basis P&L, USD.
    pub total_basis_pnl: f64,
    /// Sum of the monthly entry carry P&L, USD.
    pub total_entry_carry_pnl: f64,
    /// A perp's funding P&L over the backtest, USD (0 for futures).
    #[serde(default)]
    pub total_funding_pnl: f64,
    /// Fees of the whole backtest, USD: a cost known at entry, reported beside the
    /// effectiveness and never inside it.
    pub total_fees: f64,
    /// GPU-hours hedged beyond (positive) or short of (negative) the unrounded
    /// positions, summed over the months: what whole contracts did.
    pub contracts_rounding_gpu_hours: f64,
    /// Most contracts (or perp lots) held in one month (at most the position limit).
    pub max_contracts: i64,
    /// Months that needed more than the contract's spot-month position limit (0
    /// without a limit, and for a perp): those months held the limit, and every
    /// figure of the strategy is of the position held.
    pub months_over_position_limit: usize,
    /// Cash the hedge account needed.
    pub margin: Margin,
    /// Losses to operational events, reported apart from the hedge.
    pub operational_loss: OperationalLoss,
}

/// The in-sample ratio judged out of sample: each month hedged at the minimum-variance
/// ratio fitted on every other month (`strategy::leave_one_out_ratios`), the
/// effectiveness of those hedges and its bootstrap interval. This is what lets the
/// decision hedge at a ratio that ten months determine well, where a walk-forward
/// would still be learning it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrossValidated {
    /// `1 - Var(hedged) / Var(unhedged)` of the leave-one-out hedges, a share.
    pub effectiveness: Option<f64>,
    /// Its 95% stationary block bootstrap interval.
    pub effectiveness_interval: Option<Interval>,
    /// Each period's start and its leave-one-out hedged and unhedged P&L (before
    /// fees), for `track`'s selection; not written.
    #[serde(skip)]
    pub monthly: Vec<(NaiveDate, f64, f64)>,
}

/// A settled month whose settlement a later restatement would have changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestatedMonth {
    /// First day of the contract month.
    pub month: NaiveDate,
    /// The settlement the backtest used (as first published).
    pub settlement: f64,
    /// The settlement on today's restated fixings (`None`: it would not settle).
    pub restated_settlement: Option<f64>,
}

/// Everything a backtest produces.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BacktestResult {
    /// The contract's name.
    pub contract: String,
    /// The underlying index: a grade key or a composite's name.
    pub underlying: String,
    /// The unit of the underlying's fixings; every price in the result is in USD per
    /// GPU-hour (a points composite rebased).
    pub underlying_unit: IndexUnit,
    /// For a points composite: the USD per GPU-hour one point was rebased to (the
    /// rent's first month over the index's mean that month).
    pub rebase_usd_per_point: Option<f64>,
    /// Whether the user pays the rent (a producer) or earns it (a neocloud).
    pub side: Side,
    /// How the rent file wrote its periods' ends; `periods.csv` writes them the same
    /// way (an invoice's last day billed stays the last day billed).
    #[serde(default)]
    pub period_end: crate::rent::PeriodEnd,
    /// The contract's entry assumption: `index`, `forward` or `premium`.
    pub entry_assumption: String,
    /// Hedge periods (months) backtested.
    pub periods: usize,
    /// First day of the first hedge month.
    pub first_period: Option<NaiveDate>,
    /// First day of the last hedge month.
    pub last_period: Option<NaiveDate>,
    /// Months of the rent file that are not hedge periods, and why.
    pub months_left_out: Vec<LeftOut>,
    /// Months whose settlement went to review under the contract's coverage rule
    /// (they settled on the computed value), and why.
    pub months_in_review: Vec<LeftOut>,
    /// Settled months that later restatements changed (the backtest keeps the
    /// settlement as first published).
    pub restated_after_settlement: Vec<RestatedMonth>,
    /// Price-change statistics independent of the strategy: rent changes on index
    /// changes over one month (one tranche, entry at the index). This one is the
    /// minimum-variance ratio `Cov(dR, dI) / Var(dI)`; `None` when the index
    /// changes are constant.
    pub min_variance_hedge_ratio: Option<f64>,
    /// OLS of the same rent changes on the same index changes; `None` with constant
    /// index changes.
    pub price_change_regression: Option<Regression>,
    /// The slope of the rent on the index the hedged item's changes are measured
    /// with (`periods`' module doc).
    pub reference_slope: f64,
    /// The month-over-month pairs the reference slope was fitted on (0: too few, so
    /// the slope is 1).
    pub reference_slope_pairs: usize,
    /// What to do: hedge, do not hedge, or not enough data (`recommendation`).
    pub recommendation: Recommendation,
    /// Months by which the rent follows the index: 0, or 1 when each month's rent is
    /// priced on the index of the month before and the backtest hedged it with that
    /// month's contract (`periods` are then the contract months, each with the rent
    /// of the month after). See [`run`].
    #[serde(default)]
    pub rent_lag_months: u32,
    /// Per strategy, keyed by its name in `summary.json`.
    #[serde(
        serialize_with = "by_strategy_name",
        deserialize_with = "from_strategy_name"
    )]
    pub strategies: Vec<StrategySummary>,
    /// A one-to-one hedge under each entry assumption: how much the answer depends on
    /// it.
    pub entry_sensitivity: Vec<EntrySensitivity>,
    /// The perpetual swap run beside the futures, if one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perp: Option<PerpResult>,
    /// Every month of every strategy and instrument (`periods.csv`); empty when read
    /// from `summary.json`.
    #[serde(skip)]
    pub rows: Vec<PeriodRow>,
    /// Rent against index on each day both have (`daily.csv`); empty when read from
    /// `summary.json`.
    #[serde(skip)]
    pub daily: Vec<DailyPoint>,
    /// The GPU and scope the rent file names; default when read from
    /// `summary.json`.
    #[serde(skip)]
    pub rent_names: crate::rent::RentNames,
}

/// A perpetual swap's results beside the futures: the same strategies, statistics
/// and decision on the same months and the same rent changes (`perp`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PerpResult {
    /// The perp's spec, as run.
    pub spec: PerpSpec,
    /// The premium assumption, as a person reads it.
    pub premium: String,
    /// What to do with the perp, by the same rule as the futures.
    pub recommendation: Recommendation,
    /// Funding per GPU-hour of a month's hedge for each 1 USD per GPU-hour of
    /// premium held throughout (mean over the months, one tranche): multiply by a
    /// premium to see what it would cost.
    pub funding_per_unit_premium: f64,
    /// Per strategy, keyed by its name in `summary.json`.
    #[serde(
        serialize_with = "by_strategy_name",
        deserialize_with = "from_strategy_name"
    )]
    pub strategies: Vec<StrategySummary>,
}

/// Serializes the strategy summaries as an object keyed by strategy name, in run
/// order (`summary.json` reads `strategies["walk-forward"]["effectiveness"]`).
fn by_strategy_name<S: serde::Serializer>(v: &[StrategySummary], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(v.len()))?;
    for st in v {
        m.serialize_entry(st.strategy.as_str(), st)?;
    }
    m.end()
}

/// Reads the object written by [`by_strategy_name`] back into run order, and
/// refuses a key that disagrees with the summary's own `strategy`.
fn from_strategy_name<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Vec<StrategySummary>, D::Error> {
    use serde::de::{Error, MapAccess, Visitor};
    struct ByName;
    impl<'de> Visitor<'de> for ByName {
        type Value = Vec<StrategySummary>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object of strategy summaries keyed by strategy name")
        }
        fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<Self::Value, M::Error> {
            let mut out = Vec::new();
            while let Some((name, s)) = m.next_entry::<String, StrategySummary>()? {
                if name != s.strategy.as_str() {
                    return Err(M::Error::custom(format!(
                        "strategy key `{name}` holds the summary of `{}`",
                        s.strategy.as_str()
                    )));
                }
                out.push(s);
            }
            Ok(out)
        }
    }
    d.deserialize_map(ByName)
}

impl BacktestResult {
    /// Reads a backtest's `summary.json` (the per-period and daily rows stay in
    /// their CSV files and come back empty). A renamed or missing field is an
    /// error naming it, never a silent gap in the report.
    pub fn read(path: &std::path::Path) -> Result<Self, crate::error::BacktestError> {
        let text = rentix_core::read_text(path, rentix_core::MAX_CONFIG_BYTES).map_err(|e| {
            crate::error::BacktestError::File {
                path: path.to_path_buf(),
                detail: e.to_string(),
            }
        })?;
        serde_json::from_str(&text).map_err(|e| crate::error::BacktestError::File {
            path: path.to_path_buf(),
            detail: format!("not a backtest summary: {e}"),
        })
    }

    /// The futures' months (`rows` also holds a perp's, when one ran).
    pub fn futures_rows(&self) -> impl Iterator<Item = &PeriodRow> + '_ {
        self.rows
            .iter()
            .filter(|r| r.instrument == Instrument::Futures)
    }

    /// The summary of `strategy`, if it ran.
    pub fn strategy(&self, strategy: Strategy) -> Option<&StrategySummary> {
        self.strategies.iter().find(|s| s.strategy == strategy)
    }

    /// The strategy every surface features (console, card, charts, report, demo,
    /// Python): the one the recommendation decided on (also for `do_not_hedge`, where
    /// it is the best one weighed), else walk-forward, else the first hedged one.
    /// One function, so that no surface can feature another strategy than the
    /// decision names.
    pub fn decided_strategy(&self) -> Option<&StrategySummary> {
        self.recommendation
            .strategy
            .and_then(|s| self.strategy(s))
            .or_else(|| self.strategy(Strategy::WalkForward))
            .or_else(|| {
                self.strategies
                    .iter()
                    .find(|s| s.strategy != Strategy::Unhedged)
            })
    }
}

/// Daily rent against index, for charts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DailyPoint {
    /// The day.
    pub date: NaiveDate,
    /// The price of the rent period covering the day, USD per GPU-hour.
    pub rent: f64,
    /// The underlying's fixing that day, USD per GPU-hour (a points composite rebased).
    pub index: f64,
    /// `rent - index`, USD per GPU-hour.
    pub basis: f64,
}

/// The entry price at the close of `day` under `assumption`, on the tick, and
/// whether it fell back to the index for want of a forward fixing.
fn entry_price(
    contract: &ContractSpec,
    idx: &IndexInputs,
    assumption: EntryAssumption,
    day: NaiveDate,
) -> Option<(f64, bool)> {
    let base = contract.entry_level(&idx.underlying.values, day)?;
    let (p, fallback) = match assumption {
        EntryAssumption::Index => (base, false),
        EntryAssumption::Premium => (base + contract.entry.premium, false),
        EntryAssumption::Forward => match idx.forward.as_ref() {
            Some(f)
                if f.last_on_or_before(day)
                    .is_some_and(|(d, _)| (day - d).num_days() <= 7) =>
            {
                (contract.entry_level(f, day).unwrap_or(base), false)
            }
            _ => (base, true),
        },
    };
    Some((contract.to_tick(p), fallback))
}

/// What a strategy's position in one month was entered at, averaged over its
/// tranches (each tranche an equal share of the position).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Leg {
    /// Mean entry price `F`.
    entry: f64,
    /// Mean index level at entry `I`.
    index_entry: f64,
    /// Mean rent reference `I + b`.
    reference: f64,
    tranches: usize,
    fallback: bool,
}

fn leg(
    contract: &ContractSpec,
    idx: &IndexInputs,
    assumption: EntryAssumption,
    strategy: Strategy,
    p: &Period,
    beta: f64,
) -> Leg {
    let layers = if strategy == Strategy::Layered {
        LAYERS.min(contract.listed_months) as usize
    } else {
        1
    };
    let used = &p.tranches[..layers.min(p.tranches.len())];
    let mut fallback = false;
    let entries: Vec<f64> = used
        .iter()
        .map(|t| {
            let (f, fb) = entry_price(contract, idx, assumption, t.entry_day)
                .unwrap_or((t.index_level, true));
            fallback |= fb;
            f
        })
        .collect();
    let avg = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    Leg {
        entry: avg(&entries),
        index_entry: avg(&used.iter().map(|t| t.index_level).collect::<Vec<_>>()),
        reference: avg(&used
            .iter()
            .map(|t| t.rent_reference(beta))
            .collect::<Vec<_>>()),
        tranches: used.len(),
        fallback,
    }
}

/// Daily variation margin of a position of `q` GPU-hours in month `p`, marked to the
/// expected settlement on the settlement's own days: for a monthly average, the
/// fixings so far with the latest one standing in for the days to come; for a final
/// or last-n rule, the latest fixing. Returns (cash paid at worst, worst day).
fn margin_for(
    contract: &ContractSpec,
    rule: &DayRule,
    index: &DateSeries,
    p: &Period,
    entry: f64,
    q: f64,
    sign: f64,
) -> (f64, f64) {
    let counted: Vec<(NaiveDate, f64)> = index
        .range(p.start..p.end)
        .filter(|(d, _)| rule.counts(*d))
        .collect();
    let total_days = p
        .start
        .iter_days()
        .take_while(|d| *d < p.end)
        .filter(|d| rule.counts(*d))
        .count()
        .max(1) as f64;
    let monthly = contract.settlement == crate::contract::Settlement::MonthlyAverage;
    let (mut prev, mut cum, mut worst_cum, mut worst_day, mut sum) =
        (entry, 0.0, 0.0f64, 0.0f64, 0.0);
    for (i, (_, v)) in counted.iter().enumerate() {
        sum += v;
        let seen = (i + 1) as f64;
        let mark = if i + 1 == counted.len() {
            p.settlement
        } else if monthly {
            contract.to_tick((sum + v * (total_days - seen).max(0.0)) / total_days.max(seen))
        } else {
            *v
        };
        let vm = -sign * (mark - prev) * q;
        cum += vm;
        worst_cum = worst_cum.min(cum);
        worst_day = worst_day.min(vm);
        prev = mark;
    }
    (-worst_cum, worst_day)
}

/// Whole contracts for hedge ratio `h` on period `p`: those the ratio asks for, and
/// those held (no more than the contract's spot-month position limit); and the
/// period's P&L on those held.
fn period_pnl(
    contract: &ContractSpec,
    sign: f64,
    p: &Period,
    ch: Changes,
    h: f64,
    fee: f64,
) -> (Whole, PeriodPnl) {
    let asked = contracts(h, p.exposure, contract.contract_gpu_hours).max(0);
    let n = held(asked, contract.position_limit);
    let pnl = decompose(PnlInputs {
        sign,
        rent_change: ch.rent,
        futures_change: ch.futures,
        carry: ch.carry,
        exposure: p.exposure,
        lost: p.lost_gpu_hours,
        hedged_gpu_hours: n as f64 * contract.contract_gpu_hours,
        fees: n as f64 * fee,
        funding: 0.0,
        funding_known: false,
    });
    (Whole { asked, held: n }, pnl)
}

/// A month's whole contracts (or perp lots): what the hedge ratio asked for, and
/// what was held, the same unless a position limit cut it.
#[derive(Debug, Clone, Copy)]
struct Whole {
    asked: i64,
    held: i64,
}

/// The contracts of `asked` that can be held under the spot-month position `limit`:
/// a hedge above it assumed a position nobody could hold (a hostile run's 37 times
/// the limit still read "hedge", its effectiveness that of the impossible position).
fn held(asked: i64, limit: Option<u32>) -> i64 {
    limit.map_or(asked, |l| asked.min(i64::from(l)))
}

/// A month's changes for one strategy, USD per GPU-hour.
#[derive(Debug, Clone, Copy)]
struct Changes {
    rent: f64,
    futures: f64,
    carry: f64,
}

fn changes(p: &Period, l: &Leg) -> Changes {
    Changes {
        rent: p.rent - l.reference,
        futures: p.settlement - l.entry,
        carry: l.entry - l.index_entry,
    }
}

/// How a run's monthly ratios are fitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fit {
    /// The strategy's own rule (`strategy::ratios`).
    Strategy,
    /// Each month at the minimum-variance ratio of every other month.
    LeaveOneOut,
}

/// Everything one strategy did, month by month.
struct StrategyRun {
    legs: Vec<Leg>,
    dr: Vec<f64>,
    df: Vec<f64>,
    h: Vec<f64>,
    pnls: Vec<PeriodPnl>,
    rows: Vec<PeriodRow>,
    margin: Margin,
    fees: f64,
    rounding: f64,
    /// Months whose hedge asked for more contracts than the position limit holds.
    over_limit: usize,
}

impl StrategyRun {
    /// A run of `strategy` on the months' `legs` and changes, its ratios fitted,
    /// before any month is booked.
    fn start(strategy: Strategy, legs: Vec<Leg>, ch: &[Changes], fit: Fit) -> Self {
        let dr: Vec<f64> = ch.iter().map(|c| c.rent).collect();
        let df: Vec<f64> = ch.iter().map(|c| c.futures).collect();
        let h = match fit {
            Fit::Strategy => ratios(strategy, &dr, &df),
            Fit::LeaveOneOut => leave_one_out_ratios(&dr, &df),
        };
        Self {
            legs,
            dr,
            df,
            h,
            pnls: Vec::new(),
            rows: Vec::new(),
            margin: Margin {
                initial_margin_max: 0.0,
                peak_cash_need: 0.0,
                worst_day_variation_margin: 0.0,
            },
            fees: 0.0,
            rounding: 0.0,
            over_limit: 0,
        }
    }

    /// Books month `t`: its P&L and row, the fees and rounding, and the month's
    /// margin (initial margin, worst cumulative and worst single day of cash paid).
    fn book(&mut self, t: usize, month: Booked, margin: (f64, f64, f64)) {
        let Booked { row, size, asked } = month;
        // Rounding to whole contracts, not what a position limit cut.
        self.rounding += (asked as f64 - row.contracts_unrounded) * size;
        self.over_limit += usize::from(asked > row.contracts);
        self.fees += row.pnl.fees;
        if row.contracts > 0 {
            let (im, paid, worst_day) = margin;
            let m = &mut self.margin;
            m.initial_margin_max = m.initial_margin_max.max(im);
            m.peak_cash_need = m.peak_cash_need.max(im + paid);
            m.worst_day_variation_margin = m.worst_day_variation_margin.min(worst_day);
        }
        debug_assert_eq!(self.rows.len(), t);
        self.pnls.push(row.pnl);
        self.rows.push(row);
    }
}

/// One month's row, the GPU-hours of one contract (or perp lot), and the whole
/// contracts its ratio asked for (the row holds those the limit allows).
struct Booked {
    row: PeriodRow,
    size: f64,
    asked: i64,
}

/// The row of month `p` for the leg `l`, its changes and position.
#[allow(clippy::too_many_arguments)]
fn period_row(
    instrument: Instrument,
    strategy: Strategy,
    p: &Period,
    l: &Leg,
    ch: Changes,
    h: f64,
    unrounded: f64,
    n: i64,
    pnl: PeriodPnl,
    settlement: f64,
) -> PeriodRow {
    PeriodRow {
        instrument,
        strategy,
        period_start: p.start,
        period_end: p.end,
        exposure_gpu_hours: p.exposure,
        delivered_gpu_hours: (p.exposure - p.lost_gpu_hours).max(0.0),
        rent_usd_per_gpu_hour: p.rent,
        rent_reference: l.reference,
        rent_change: ch.rent,
        index_at_entry: l.index_entry,
        entry_price: l.entry,
        settlement,
        futures_change: ch.futures,
        carry: ch.carry,
        tranches: l.tranches,
        hedge_ratio: h,
        contracts_unrounded: unrounded,
        contracts: n,
        pnl,
        operational_loss: p.operational_loss,
    }
}

/// What every strategy of one backtest runs on.
struct Market<'a> {
    contract: &'a ContractSpec,
    rule: &'a DayRule,
    idx: &'a IndexInputs,
    /// The rent's side: -1 a payer, +1 an earner.
    sign: f64,
    periods: &'a [Period],
    /// The reference slope of the rent on the index (`periods`).
    beta: f64,
}

fn run_strategy(m: &Market<'_>, strategy: Strategy, fit: Fit) -> StrategyRun {
    let Market {
        contract,
        rule,
        idx,
        sign,
        periods,
        beta,
    } = *m;
    let legs: Vec<Leg> = periods
        .iter()
        .map(|p| leg(contract, idx, contract.entry.assumption, strategy, p, beta))
        .collect();
    let ch: Vec<Changes> = periods
        .iter()
        .zip(&legs)
        .map(|(p, l)| changes(p, l))
        .collect();
    let mut run = StrategyRun::start(strategy, legs, &ch, fit);
    for (t, p) in periods.iter().enumerate() {
        let (h, l) = (run.h[t], run.legs[t]);
        let size = contract.contract_gpu_hours;
        let unrounded = h * p.exposure / size;
        let (whole, pnl) = period_pnl(contract, sign, p, ch[t], h, contract.fee_per_contract);
        let n = whole.held;
        let q = n as f64 * size;
        let margin = if n > 0 {
            let (paid, worst_day) =
                margin_for(contract, rule, &idx.underlying.values, p, l.entry, q, sign);
            (contract.initial_margin * l.entry * q, paid, worst_day)
        } else {
            (0.0, 0.0, 0.0)
        };
        let row = period_row(
            Instrument::Futures,
            strategy,
            p,
            &l,
            ch[t],
            h,
            unrounded,
            n,
            pnl,
            p.settlement,
        );
        let asked = whole.asked;
        run.book(t, Booked { row, size, asked }, margin);
    }
    run
}

/// A perp's months for `strategy` (module `perp`): the same tranches and rent
/// references as the futures, the perp's own entry, price change and funding.
fn run_perp_strategy(
    contract: &ContractSpec,
    spec: &PerpSpec,
    idx: &IndexInputs,
    sign: f64,
    periods: &[Period],
    (strategy, fit): (Strategy, Fit),
    beta: f64,
) -> Result<StrategyRun, BacktestError> {
    let layers = if strategy == Strategy::Layered {
        LAYERS.min(contract.listed_months) as usize
    } else {
        1
    };
    let mut legs = Vec::with_capacity(periods.len());
    let mut perps: Vec<PerpLeg> = Vec::with_capacity(periods.len());
    for p in periods {
        let tranches = p.tranches[..layers.min(p.tranches.len())]
            .iter()
            .map(|t| {
                tranche_leg(
                    spec,
                    &idx.underlying.values,
                    t.entry_day,
                    contract.entry.lookback_days,
                    p.start,
                    p.end,
                )
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| {
                BacktestError::ContractOnIndex(format!(
                    "perp {:?}, month {}: {e}",
                    spec.name,
                    p.start.format("%Y-%m")
                ))
            })?;
        let perp = mean_leg(&tranches);
        let mut l = leg(contract, idx, EntryAssumption::Index, strategy, p, beta);
        l.entry = perp.entry_mark;
        l.fallback = false;
        legs.push(l);
        perps.push(perp);
    }
    let ch: Vec<Changes> = periods
        .iter()
        .zip(legs.iter().zip(&perps))
        .map(|(p, (l, perp))| Changes {
            rent: p.rent - l.reference,
            futures: perp.price_change,
            carry: 0.0,
        })
        .collect();
    let mut run = StrategyRun::start(strategy, legs, &ch, fit);
    let lot = spec.lot_gpu_hours;
    for (t, p) in periods.iter().enumerate() {
        let (h, l, perp) = (run.h[t], run.legs[t], &perps[t]);
        let unrounded = h * p.exposure / lot;
        let n = contracts(h, p.exposure, lot).max(0);
        let q = n as f64 * lot;
        let pnl = decompose(PnlInputs {
            sign,
            rent_change: ch[t].rent,
            futures_change: ch[t].futures,
            carry: 0.0,
            exposure: p.exposure,
            lost: p.lost_gpu_hours,
            hedged_gpu_hours: q,
            fees: spec.fee_rate * q * perp.turnover,
            // A long (payer, sign -1) pays the funding, a short receives it.
            funding: sign * q * perp.funding,
            // At a constant premium it is known at entry, as the fees are.
            funding_known: spec.premium_is_constant(),
        });
        let margin = if n > 0 {
            let (mut cum, mut worst_cum, mut worst_day) = (0.0, 0.0f64, 0.0f64);
            for (price, funding) in perp.daily.values() {
                let cash = -sign * q * price + sign * q * funding;
                cum += cash;
                worst_cum = worst_cum.min(cum);
                worst_day = worst_day.min(cash);
            }
            (
                spec.initial_margin * perp.entry_mark * q,
                -worst_cum,
                worst_day,
            )
        } else {
            (0.0, 0.0, 0.0)
        };
        let row = period_row(
            Instrument::Perp,
            strategy,
            p,
            &l,
            ch[t],
            h,
            unrounded,
            n,
            pnl,
            perp.mean_mark,
        );
        let (size, asked) = (lot, n);
        run.book(t, Booked { row, size, asked }, margin);
    }
    Ok(run)
}

/// How a strategy's position is counted: GPU-hours per contract (or perp lot) and
/// the position limit, if any.
#[derive(Debug, Clone, Copy)]
struct Sizing {
    gpu_hours: f64,
    limit: Option<u32>,
}

/// Refuses an event inside the rent's days that lost more GPU-hours than the rent
/// held over them: a
/// hostile run's one-day outage of 1e12 GPU-hours, on a rent of 1,000 a day, was
/// capped at the month's exposure without a word, making the month's P&L 0.
fn check_events(rent: &RentSeries, events: &[Event]) -> Result<(), BacktestError> {
    let shown = |x: f64| {
        if x < 1e12 {
            crate::recommendation::grouped(x)
        } else {
            format!("{x:e}")
        }
    };
    // GPU-hours the rent holds over [start, end), and whether it covers every day.
    let holds = |start: NaiveDate, end: NaiveDate| {
        let (mut held, mut covered) = (0.0, 0);
        for p in &rent.periods {
            let days = (p.end - p.start).num_days().max(1);
            let overlap = (p.end.min(end) - p.start.max(start)).num_days().max(0);
            held += p.gpu_hours.get() * overlap as f64 / days as f64;
            covered += overlap;
        }
        (held, covered >= (end - start).num_days())
    };
    let end_of = |e: &Event| e.end.max(e.start + chrono::Days::new(1));
    for e in events {
        let end = end_of(e);
        // Only an event the rent covers day by day can be held to it: one outside
        // the rent (in part or whole) is an operational loss outside the periods,
        // counted apart (`outside_periods_usd`).
        let (held, inside) = holds(e.start, end);
        if inside && e.gpu_hours_lost > held * (1.0 + 1e-9) + 1e-9 {
            return Err(BacktestError::Data(format!(
                "event {} {}..{}: {} GPU-hours lost, more than the {} the rent holds over its days: an event cannot lose more than was rented (check its gpu_hours_lost)",
                e.kind,
                e.start,
                end,
                shown(e.gpu_hours_lost),
                shown(held)
            )));
        }
    }
    // Events that overlap can together lose at most what the rent held over the
    // days they span (two outages of 100,000 over days that held 122,880 were
    // accepted, each alone within bounds).
    let mut by_start: Vec<&Event> = events.iter().collect();
    by_start.sort_by_key(|e| (e.start, end_of(e)));
    let mut i = 0;
    while i < by_start.len() {
        let (start, mut end, mut lost) = (by_start[i].start, end_of(by_start[i]), 0.0);
        let mut j = i;
        while j < by_start.len() && by_start[j].start < end {
            end = end.max(end_of(by_start[j]));
            lost += by_start[j].gpu_hours_lost;
            j += 1;
        }
        let (held, inside) = holds(start, end);
        if j - i > 1 && inside && lost > held * (1.0 + 1e-9) + 1e-9 {
            return Err(BacktestError::Data(format!(
                "events overlapping on {start}..{end} ({} of them): {} GPU-hours lost together, more than the {} the rent holds over those days: events cannot lose more than was rented (check their gpu_hours_lost, or whether one repeats another)",
                j - i,
                shown(lost),
                shown(held)
            )));
        }
        i = j;
    }
    Ok(())
}

/// Bootstrap intervals of effectiveness, hedge ratio and correlation of changes.
/// `base` is the rent changes every strategy is measured against (the unhedged
/// strategy's).
fn intervals(cfg: &BacktestConfig, strategy: Strategy, r: &StrategyRun, base: &[f64]) -> Intervals {
    let n = r.pnls.len();
    let hedged: Vec<f64> = r.pnls.iter().map(|p| p.hedged_before_fees).collect();
    let unhedged = base;
    let seed = cfg.seed ^ (strategy as u64);
    let pick = |v: &[f64], ix: &[usize]| ix.iter().map(|&i| v[i]).collect::<Vec<f64>>();
    let b = cfg.bootstrap_resamples;
    Intervals {
        // Every strategy's effectiveness is resampled with the same months (common
        // random numbers): strategies whose P&L is the same month by month get the
        // same interval, and the decision compares the strategies, not their draws.
        // Seeded per strategy, three strategies with identical P&L (a walk-forward
        // and an ewma hedge one-to-one until they have history) had three intervals,
        // and which of them cleared zero, with its untested next ratio, changed
        // with --seed (a hostile run: hedge, do not hedge, hedge for seeds 20240101,
        // 2 and 3 of a rent of pure noise).
        effectiveness: if strategy == Strategy::Unhedged {
            None
        } else {
            confidence_interval(n, unhedged, b, 0.95, cfg.seed, |ix| {
                effectiveness(&pick(&hedged, ix), &pick(unhedged, ix))
            })
        },
        hedge_ratio: confidence_interval(n, &r.dr, b, 0.95, seed.wrapping_add(1), |ix| {
            min_variance_hedge_ratio(&pick(&r.dr, ix), &pick(&r.df, ix))
        }),
        correlation_changes: confidence_interval(n, &r.dr, b, 0.95, seed.wrapping_add(2), |ix| {
            correlation(&pick(&r.dr, ix), &pick(&r.df, ix))
        }),
    }
}

/// A strategy's figures. Its effectiveness, interval and rolling effectiveness are
/// measured against `base`, the rent changes of the unhedged strategy, the same
/// for every strategy: `layered` matches each tranche's futures change with the
/// rent change from that tranche's reference (one to three months old), whose
/// variance is larger than the month-to-month risk the others are measured
/// against, and scored 90% removed where its residual left 68% (a hostile round).
#[allow(clippy::too_many_arguments)]
fn summarize(
    cfg: &BacktestConfig,
    strategy: Strategy,
    r: &StrategyRun,
    base: &[f64],
    periods: &[Period],
    unit: IndexUnit,
    outside_periods_usd: f64,
    sizing: Sizing,
) -> StrategySummary {
    // The risk measures use the position before fees (a cost known at entry); the
    // VaR is of what the month costs, fees included.
    let hedged: Vec<f64> = r.pnls.iter().map(|p| p.hedged_before_fees).collect();
    let with_fees: Vec<f64> = r.pnls.iter().map(|p| p.hedged_total).collect();
    let unhedged: Vec<f64> = r.pnls.iter().map(|p| p.unhedged_total).collect();
    let futures: Vec<f64> = r.pnls.iter().map(|p| p.futures).collect();
    let item: Vec<f64> = r.pnls.iter().map(|p| p.rent_change).collect();
    let minus_fut: Vec<f64> = futures.iter().map(|f| -f).collect();
    let levels_rent: Vec<f64> = periods.iter().map(|p| p.rent).collect();
    let levels_index: Vec<f64> = periods.iter().map(|p| p.settlement).collect();
    let basis: Vec<f64> = periods.iter().map(|p| p.rent - p.settlement).collect();
    let mean_exposure =
        mean(&periods.iter().map(|p| p.exposure).collect::<Vec<_>>()).unwrap_or(0.0);
    let hr = mean_ratio(&r.h);
    let hedging = strategy != Strategy::Unhedged;
    let latest_exposure = periods.last().map_or(0.0, |p| p.exposure);
    let next = hedging.then(|| next_ratio(strategy, &r.dr, &r.df));
    let var95 = historical_var_cvar(&with_fees, 0.95);
    let var99 = historical_var_cvar(&with_fees, 0.99);
    let mut by_kind: BTreeMap<String, f64> = BTreeMap::new();
    for p in periods {
        for (k, v) in &p.loss_by_kind {
            *by_kind.entry(k.clone()).or_default() += v;
        }
    }
    StrategySummary {
        strategy,
        hedge_ratio: hr,
        contracts: held(contracts(hr, mean_exposure, sizing.gpu_hours), sizing.limit),
        contracts_unrounded: hr * mean_exposure / sizing.gpu_hours,
        next_hedge_ratio: next,
        next_contracts: next.map(|h| {
            held(
                contracts(h, latest_exposure, sizing.gpu_hours),
                sizing.limit,
            )
        }),
        next_contracts_asked: next.map(|h| contracts(h, latest_exposure, sizing.gpu_hours)),
        cross_validated: None,
        effectiveness: if hedging {
            effectiveness(&hedged, base)
        } else {
            Some(0.0)
        },
        correlation_changes: correlation(&r.dr, &r.df),
        correlation_levels: correlation(&levels_rent, &levels_index),
        regression: hedging.then(|| regress(&item, &minus_fut)).flatten(),
        dollar_offset: hedging.then(|| dollar_offset(&futures, &item)).flatten(),
        tracking_error: tracking_error_annual(&r.dr, &r.df, Periodicity::Monthly),
        basis: (unit == IndexUnit::UsdPerGpuHour)
            .then(|| basis_stats(&basis))
            .flatten(),
        var_95: var95.map(|v| v.0),
        cvar_95: var95.map(|v| v.1),
        var_99: var99.map(|v| v.0),
        cvar_99: var99.map(|v| v.1),
        unhedged_var_95: historical_var_cvar(&unhedged, 0.95).map(|v| v.0),
        confidence_intervals: intervals(cfg, strategy, r, base),
        rolling_effectiveness: if hedging {
            rolling_effectiveness(&hedged, base, cfg.rolling_window)
        } else {
            Vec::new()
        },
        break_test: sup_wald(&r.dr, &r.df),
        total_hedged_pnl: with_fees.iter().sum(),
        total_unhedged_pnl: unhedged.iter().sum(),
        total_basis_pnl: r.pnls.iter().map(|p| p.basis).sum(),
        total_entry_carry_pnl: r.pnls.iter().map(|p| p.entry_carry).sum(),
        total_funding_pnl: r.pnls.iter().map(|p| p.funding).sum(),
        total_fees: r.fees,
        contracts_rounding_gpu_hours: r.rounding,
        max_contracts: r.rows.iter().map(|x| x.contracts).max().unwrap_or(0),
        months_over_position_limit: r.over_limit,
        margin: r.margin.clone(),
        operational_loss: OperationalLoss {
            total_usd: periods.iter().map(|p| p.operational_loss).sum(),
            by_kind,
            lost_gpu_hours: periods.iter().map(|p| p.lost_gpu_hours).sum(),
            volume_mismatch_usd: r.pnls.iter().map(|p| p.volume_mismatch).sum(),
            outside_periods_usd,
        },
    }
}

/// The effectiveness of a leave-one-out run and its interval, resampled with the
/// same months as every strategy's ([`intervals`]: the decision compares them).
fn cross_validate(cfg: &BacktestConfig, loo: &StrategyRun) -> CrossValidated {
    let hedged: Vec<f64> = loo.pnls.iter().map(|p| p.hedged_before_fees).collect();
    let unhedged: Vec<f64> = loo.pnls.iter().map(|p| p.unhedged_total).collect();
    let pick = |v: &[f64], ix: &[usize]| ix.iter().map(|&i| v[i]).collect::<Vec<f64>>();
    let seed = cfg.seed;
    CrossValidated {
        monthly: loo
            .rows
            .iter()
            .map(|r| {
                (
                    r.period_start,
                    r.pnl.hedged_before_fees,
                    r.pnl.unhedged_total,
                )
            })
            .collect(),
        effectiveness: effectiveness(&hedged, &unhedged),
        effectiveness_interval: confidence_interval(
            hedged.len(),
            &unhedged,
            cfg.bootstrap_resamples,
            0.95,
            seed,
            |ix| effectiveness(&pick(&hedged, ix), &pick(&unhedged, ix)),
        ),
    }
}

/// What the decision weighs of a strategy: a strategy a hedger could have traded, by
/// its out-of-sample effectiveness; `static-min-variance` by its cross-validated one
/// (its in-sample effectiveness used the future); `None` for `unhedged` and
/// `layered` (reported beside them, never deciding).
fn candidate(s: &StrategySummary) -> Option<Candidate> {
    // Reported, never deciding: layered's rent changes run from its tranches'
    // references, one to three months old, and the mean of three halves basis noise
    // the futures never touched (a rent of the index plus noise was told to buy
    // 10 contracts, "removed 42%", where every other strategy removed nothing).
    if s.strategy == Strategy::Layered {
        return None;
    }
    let (effectiveness, interval, cross_validated) = if tradable(s.strategy) {
        (s.effectiveness, s.confidence_intervals.effectiveness, false)
    } else {
        let cv = s.cross_validated.as_ref()?;
        (cv.effectiveness, cv.effectiveness_interval, true)
    };
    Some(Candidate {
        strategy: s.strategy,
        effectiveness,
        interval,
        next_ratio: s.next_hedge_ratio?,
        next_contracts: s.next_contracts?,
        cross_validated,
        traded: s.max_contracts > 0,
    })
}

/// One-to-one under each entry assumption: how much the answer depends on it.
fn entry_sensitivity(
    contract: &ContractSpec,
    idx: &IndexInputs,
    sign: f64,
    periods: &[Period],
    beta: f64,
) -> Vec<EntrySensitivity> {
    EntryAssumption::ALL
        .iter()
        .map(|&a| {
            let legs: Vec<Leg> = periods
                .iter()
                .map(|p| leg(contract, idx, a, Strategy::OneToOne, p, beta))
                .collect();
            let pnls: Vec<PeriodPnl> = periods
                .iter()
                .zip(&legs)
                .map(|(p, l)| period_pnl(contract, sign, p, changes(p, l), 1.0, 0.0).1)
                .collect();
            let hedged: Vec<f64> = pnls.iter().map(|p| p.hedged_before_fees).collect();
            let unhedged: Vec<f64> = pnls.iter().map(|p| p.unhedged_total).collect();
            let fut: Vec<f64> = pnls.iter().map(|p| p.futures).collect();
            let carry: Vec<f64> = pnls.iter().map(|p| p.entry_carry).collect();
            EntrySensitivity {
                assumption: a.as_str().into(),
                effectiveness: effectiveness(&hedged, &unhedged),
                mean_futures_pnl: mean(&fut),
                mean_entry_carry_pnl: mean(&carry),
                periods_on_fallback: legs.iter().filter(|l| l.fallback).count(),
            }
        })
        .collect()
}

/// For a points composite: the factor that puts one point in USD per GPU-hour, the
/// rent's average over the index's mean in the first month both have.
fn rebase_factor(rent: &RentSeries, index: &Underlying) -> Option<f64> {
    let daily = rent.daily();
    let first = daily.keys().next().copied()?;
    let last = daily.keys().next_back().copied()?;
    let mut m = month_start(first);
    while m <= last {
        let next = m + Months::new(1);
        let r: Vec<f64> = daily.range(m..next).map(|(_, v)| v.0).collect();
        let i: Vec<f64> = index.values.range(m..next).map(|(_, v)| v).collect();
        if let (Some(r), Some(i)) = (mean(&r), mean(&i)) {
            if i > 0.0 && r > 0.0 {
                return Some(r / i);
            }
        }
        m = next;
    }
    None
}

/// Settled months whose settlement on the restated view differs.
fn restated_months(
    contract: &ContractSpec,
    restated: &Underlying,
    periods: &[Period],
    k: f64,
) -> Vec<RestatedMonth> {
    let restated = restated.scaled(k);
    periods
        .iter()
        .filter_map(|p| {
            let again = contract.settle(&restated, p.start).ok();
            (again != Some(p.settlement)).then_some(RestatedMonth {
                month: p.start,
                settlement: p.settlement,
                restated_settlement: again,
            })
        })
        .collect()
}

/// Refuses a tick at or above the index's typical (median) level: every settlement
/// would round to 0 or one tick, and the hedge would measure the rounding.
fn check_tick(contract: &ContractSpec, index: &Underlying) -> Result<(), BacktestError> {
    let mut v: Vec<f64> = index.values.iter().map(|(_, x)| x).collect();
    if v.is_empty() {
        return Ok(());
    }
    v.sort_by(f64::total_cmp);
    let median = v[v.len() / 2];
    if contract.tick >= median {
        return Err(BacktestError::ContractOnIndex(format!(
            "the contract's tick {} is at or above the typical level {median} of {} (its median fixing): every settlement would round to a tick or to zero",
            contract.tick, contract.underlying
        )));
    }
    Ok(())
}

/// Every strategy of `cfg` hedged with the perp `spec`, and its decision.
#[allow(clippy::too_many_arguments)]
fn run_perp(
    cfg: &BacktestConfig,
    spec: &PerpSpec,
    idx: &IndexInputs,
    side: Side,
    periods: &[Period],
    beta: f64,
    unit: IndexUnit,
    outside: f64,
) -> Result<(PerpResult, Vec<PeriodRow>), BacktestError> {
    let contract = &cfg.contract;
    let sign = side.sign();
    let sizing = Sizing {
        gpu_hours: spec.lot_gpu_hours,
        limit: None,
    };
    let (mut rows, mut summaries, mut candidates) = (Vec::new(), Vec::new(), Vec::new());
    let mut per_unit = Vec::new();
    let run = |strategy, fit| {
        run_perp_strategy(contract, spec, idx, sign, periods, (strategy, fit), beta)
    };
    let base = baseline(&run(Strategy::Unhedged, Fit::Strategy)?);
    for &strategy in &cfg.strategies {
        let r = run(strategy, Fit::Strategy)?;
        let mut summary = summarize(cfg, strategy, &r, &base, periods, unit, outside, sizing);
        // Judged as the futures' is, by leaving each month out of its fit: without
        // it the perp's decision passed over a 0.41 hedge removing >99.99% that the
        // futures' took, and said "do not hedge" on the same months.
        if strategy == Strategy::StaticMinVariance {
            summary.cross_validated = Some(cross_validate(cfg, &run(strategy, Fit::LeaveOneOut)?));
        }
        candidates.extend(candidate(&summary));
        summaries.push(summary);
        rows.extend(r.rows);
    }
    // Funding per unit premium: one tranche's weight-days, in funding periods.
    let mut unit_spec = spec.clone();
    unit_spec.premium = 1.0;
    unit_spec.premium_file = None;
    let unit_spec = unit_spec.without_premiums();
    for p in periods {
        let t = &p.tranches[0];
        if let Ok(l) = tranche_leg(
            &unit_spec,
            &idx.underlying.values,
            t.entry_day,
            contract.entry.lookback_days,
            p.start,
            p.end,
        ) {
            per_unit.push(l.funding);
        }
    }
    let mut recommendation = recommend_for(
        Instrument::Perp,
        spec.lot_gpu_hours,
        side,
        periods.len(),
        &candidates,
        &contract.underlying,
    );
    weigh_funding(&mut recommendation, &summaries, &base);
    Ok((
        PerpResult {
            spec: spec.clone(),
            premium: spec.premium_text(),
            recommendation,
            funding_per_unit_premium: mean(&per_unit).unwrap_or(0.0),
            strategies: summaries,
        },
        rows,
    ))
}

/// Says beside a perp hedge what it paid in funding, a month on average, and
/// warns when that is more than the monthly risk (standard deviation of the rent
/// changes, `base`) the hedge removed: funding at a constant premium is a cost
/// known at entry, left out of the risk measures as fees are, and a hostile
/// round's hedge paying about $6,570 a month against $538 of monthly risk was
/// recommended without a word of it.
fn weigh_funding(r: &mut Recommendation, summaries: &[StrategySummary], base: &[f64]) {
    let Some(s) = r
        .strategy
        .and_then(|st| summaries.iter().find(|x| x.strategy == st))
    else {
        return;
    };
    let months = base.len().max(1) as f64;
    let paid = -s.total_funding_pnl / months;
    if r.decision != crate::recommendation::Decision::Hedge || paid < 0.5 {
        return;
    }
    r.reason.push_str(&format!(
        "; it paid ${} a month in funding on average",
        grouped(paid)
    ));
    let risk = crate::stats::moments::std_dev(base).unwrap_or(0.0);
    let kept = (1.0 - r.effectiveness.unwrap_or(0.0)).max(0.0).sqrt();
    let removed = risk * (1.0 - kept);
    if paid > removed {
        let w = format!(
            "funding: the perp hedge paid ${} a month on average, more than the ${} of monthly risk (standard deviation of your rent's changes) it removed: weigh the cost before hedging (perp.strategies.*.total_funding_pnl)",
            grouped(paid),
            grouped(removed)
        );
        r.warning = Some(match r.warning.take() {
            Some(old) => format!("{old}; {w}"),
            None => w,
        });
    }
}

/// An index in points rescaled to USD per GPU-hour on the rent's level (with the
/// factor), or the index as it is.
fn in_usd(
    rent: &RentSeries,
    idx: &IndexInputs,
    contract: &ContractSpec,
) -> Result<(Option<f64>, IndexInputs), BacktestError> {
    Ok(match idx.underlying.unit() {
        IndexUnit::UsdPerGpuHour => (None, idx.clone()),
        IndexUnit::Points => {
            let k = rebase_factor(rent, &idx.underlying).ok_or_else(|| {
                BacktestError::ContractOnIndex(format!("{} is in index points and has no value in any month of the rent: nothing to rebase it on", contract.underlying))
            })?;
            let mut scaled = idx.clone();
            scaled.underlying = idx.underlying.scaled(k);
            (Some(k), scaled)
        }
    })
}

/// Refuses a backtest on fewer than three hedge periods, naming the first months
/// left out and why.
fn enough_periods(
    periods: &[Period],
    left_out: &[LeftOut],
    contract: &ContractSpec,
) -> Result<(), BacktestError> {
    if periods.len() >= 3 {
        return Ok(());
    }
    let why = left_out
        .iter()
        .take(3)
        .map(|l| format!("{}: {}", l.month.format("%Y-%m"), l.reason))
        .collect::<Vec<_>>()
        .join("; ");
    Err(BacktestError::TooFewPeriods {
        periods: periods.len(),
        needed: 3,
        underlying: contract.underlying.clone(),
        left_out: why,
    })
}

/// Adds to the recommendation's warning a hedge above the spot-month position
/// limit: what the decided strategy asks for, and that its months held the limit
/// (every figure is of the position held, not of one nobody could hold).
fn warn_over_limit(
    recommendation: &mut Recommendation,
    contract: &ContractSpec,
    summaries: &[StrategySummary],
    periods: usize,
) {
    let Some(limit) = contract.position_limit else {
        return;
    };
    let Some(s) = recommendation
        .strategy
        .and_then(|st| summaries.iter().find(|s| s.strategy == st))
    else {
        return;
    };
    let asked = s.next_contracts_asked.unwrap_or(0);
    let months = s.months_over_position_limit;
    if asked <= i64::from(limit) && months == 0 {
        return;
    }
    let held = format!(
        "the backtest held the limit in the {months} of {periods} months that asked for more, and its figures are of the position held (an exchange's bona fide hedge exemption could allow the rest)"
    );
    let over = if asked > i64::from(limit) {
        format!("the hedge asks for {asked} contracts a month, above the contract's spot-month position limit of {limit}: {held}")
    } else {
        format!("the contract's spot-month position limit is {limit} contracts: {held}")
    };
    recommendation.warning = Some(match recommendation.warning.take() {
        Some(w) => format!("{w}; {over}"),
        None => over,
    });
}

/// The rent, the index and their basis on every day both have.
fn daily_points(rent: &RentSeries, idx: &IndexInputs) -> Vec<DailyPoint> {
    rent.daily()
        .iter()
        .filter_map(|(d, (r, _))| {
            let i = idx.underlying.values.get(*d)?;
            Some(DailyPoint {
                date: *d,
                rent: *r,
                index: i,
                basis: r - i,
            })
        })
        .collect()
}

/// Runs every strategy of `cfg` for `rent` against `idx`.
///
/// A rent that is priced on last month's index (a monthly invoice at last month's
/// average, say) follows the index one month late: its changes match the index's
/// changes of the month before, and the same month's contract cannot hedge them.
/// When the rent's monthly changes (however it is billed) correlate more with the
/// settlements' changes of the month before than with the same month's, the
/// backtest is also run with each whole month's rent set against the contract of
/// the month before (the month it is priced on); if that run's decision
/// is a hedge with a higher lower bound than the same-month run's, it is the
/// result, `rent_lag_months` is 1 and the decision says so. Otherwise the same-month
/// run is the result.
///
/// A rent whose level is 50 times its index's (or 1/50) is refused as another unit,
/// and one 5 times away runs with a warning naming the units it could be in.
pub fn run(
    rent: &RentSeries,
    events: &[Event],
    idx: &IndexInputs,
    cfg: &BacktestConfig,
) -> Result<BacktestResult, BacktestError> {
    let level = crate::files::rent_on_the_index_s_scale(rent, &idx.underlying)?;
    let mut r = run_lag_chosen(rent, events, idx, cfg)?;
    if let Some(level) = level {
        let w = &mut r.recommendation.warning;
        *w = Some(w.take().map_or(level.clone(), |w| format!("{w}; {level}")));
    }
    Ok(r)
}

/// [`run`] after the rent's level is checked: the same month's alignment, or the
/// month before's when the rent follows the index one month late.
fn run_lag_chosen(
    rent: &RentSeries,
    events: &[Event],
    idx: &IndexInputs,
    cfg: &BacktestConfig,
) -> Result<BacktestResult, BacktestError> {
    let same = run_aligned(rent, events, idx, cfg)?;
    let Some((corr_same, corr_lag)) = lag_evidence(&same) else {
        return Ok(same);
    };
    if corr_lag <= corr_same {
        return Ok(same);
    }
    // A rent of daily or weekly rows is moved back by its whole months.
    let (lagged_rent, lagged_events) = (
        rent.whole_months().shifted_back_one_month(),
        shift_events(events),
    );
    let Ok(mut lagged) = run_aligned(&lagged_rent, &lagged_events, idx, cfg) else {
        return Ok(same);
    };
    let key = |r: &BacktestResult| {
        let rec = &r.recommendation;
        (rec.decision == crate::recommendation::Decision::Hedge)
            .then(|| {
                rec.effectiveness_interval
                    .map(|i| i.low)
                    .or(rec.effectiveness)
            })
            .flatten()
    };
    match (key(&lagged), key(&same)) {
        (Some(l), s) if s.is_none_or(|s| l > s) => {
            lagged.rent_lag_months = 1;
            lagged.recommendation.reason = format!(
                "your rent follows the index one month late (its monthly changes correlate {corr_lag:.2} with the settlements' changes of the month before, {corr_same:.2} with the same month's): each month's rent is hedged with the contract of the month before, the month it is priced on; {}",
                lagged.recommendation.reason
            );
            Ok(lagged)
        }
        _ => Ok(same),
    }
}

/// The correlation of the rent's month-over-month changes with the settlements'
/// changes of the same month and of the month before, over the backtest's
/// consecutive periods, whatever rows the rent was billed in (a daily rent repriced
/// off a 30-day-old index was told it could not be hedged, while the same prices as
/// monthly invoices were hedged at 99.9%); `None` under six such pairs.
fn lag_evidence(r: &BacktestResult) -> Option<(f64, f64)> {
    // One row per period of any one strategy: its rent and settlement.
    let first = r.strategies.first()?.strategy;
    let months: Vec<(NaiveDate, f64, f64)> = r
        .futures_rows()
        .filter(|p| p.strategy == first)
        .map(|p| (p.period_start, p.rent_usd_per_gpu_hour, p.settlement))
        .collect();
    let (mut dy, mut dx, mut dx_prev) = (Vec::new(), Vec::new(), Vec::new());
    let consecutive = |a: NaiveDate, b: NaiveDate| a.checked_add_months(Months::new(1)) == Some(b);
    for w in months.windows(3) {
        if consecutive(w[0].0, w[1].0) && consecutive(w[1].0, w[2].0) {
            dy.push(w[2].1 - w[1].1);
            dx.push(w[2].2 - w[1].2);
            dx_prev.push(w[1].2 - w[0].2);
        }
    }
    if dy.len() < 6 {
        return None;
    }
    Some((correlation(&dy, &dx)?, correlation(&dy, &dx_prev)?))
}

/// Events moved one month earlier, with the rent they belong to.
fn shift_events(events: &[Event]) -> Vec<Event> {
    let back = |d: NaiveDate| d.checked_sub_months(Months::new(1)).unwrap_or(d);
    events
        .iter()
        .map(|e| Event {
            start: back(e.start),
            end: back(e.end),
            ..e.clone()
        })
        .collect()
}

/// The rent changes every strategy is measured against: the unhedged run's.
fn baseline(unhedged: &StrategyRun) -> Vec<f64> {
    unhedged.pnls.iter().map(|p| p.unhedged_total).collect()
}

/// Every strategy of `cfg` on `m`: the rows, the summaries (the in-sample benchmark
/// with its cross-validation) and what the decision weighs.
fn run_strategies(
    cfg: &BacktestConfig,
    m: &Market<'_>,
    unit: IndexUnit,
    outside: f64,
) -> (Vec<PeriodRow>, Vec<StrategySummary>, Vec<Candidate>) {
    let (mut rows, mut summaries, mut candidates) = (Vec::new(), Vec::new(), Vec::new());
    let futures = Sizing {
        gpu_hours: m.contract.contract_gpu_hours,
        limit: m.contract.position_limit,
    };
    let unhedged = run_strategy(m, Strategy::Unhedged, Fit::Strategy);
    let base = baseline(&unhedged);
    for &strategy in &cfg.strategies {
        let r = run_strategy(m, strategy, Fit::Strategy);
        let mut summary = summarize(cfg, strategy, &r, &base, m.periods, unit, outside, futures);
        if strategy == Strategy::Layered {
            // The month-to-month changes every strategy is measured on, as the
            // card reads them: layered's tranche-averaged ones said 0.49 where the
            // rent's and the index's monthly changes correlate at 0.12.
            summary.correlation_changes = correlation(&unhedged.dr, &unhedged.df);
        }
        if strategy == Strategy::StaticMinVariance {
            let loo = run_strategy(m, strategy, Fit::LeaveOneOut);
            summary.cross_validated = Some(cross_validate(cfg, &loo));
        }
        candidates.extend(candidate(&summary));
        summaries.push(summary);
        rows.extend(r.rows);
    }
    (rows, summaries, candidates)
}

/// [`run`] with each month's rent set against the same month's contract.
fn run_aligned(
    rent: &RentSeries,
    events: &[Event],
    idx: &IndexInputs,
    cfg: &BacktestConfig,
) -> Result<BacktestResult, BacktestError> {
    let contract = &cfg.contract;
    let unit = idx.underlying.unit();
    let (rebase, idx) = in_usd(rent, idx, contract)?;
    check_tick(contract, &idx.underlying)?;
    check_events(rent, events)?;
    let Periods {
        periods,
        left_out,
        slope,
    } = build_periods(rent, events, &idx.underlying, contract);
    let beta = slope.beta;
    enough_periods(&periods, &left_out, contract)?;
    let sign = rent.side.sign();
    let events_total: f64 = events.iter().map(|e| e.usd_loss).sum();
    let outside = (events_total - periods.iter().map(|p| p.operational_loss).sum::<f64>()).max(0.0);

    let market = Market {
        contract,
        rule: contract.day_rule(),
        idx: &idx,
        sign,
        periods: &periods,
        beta,
    };
    let (mut rows, summaries, candidates) = run_strategies(cfg, &market, unit, outside);
    // Strategy-free price statistics: one tranche, entry at the index.
    let (dr1, di1): (Vec<f64>, Vec<f64>) = periods
        .iter()
        .map(|p| {
            let t = &p.tranches[0];
            (
                p.rent - t.rent_reference(beta),
                p.settlement - t.index_level,
            )
        })
        .unzip();
    let regression = regress(&dr1, &di1);
    let exposures: Vec<f64> = periods.iter().map(|p| p.exposure).collect();
    let fitted_run = cfg.strategies.iter().any(|s| s.fits_a_ratio());
    let explain = |r: &mut Recommendation| {
        moves_against(r, regression.as_ref(), rent.side, &contract.underlying);
        tracks_at_another_ratio(r, regression.as_ref(), fitted_run, &contract.underlying);
        no_exposure(r, &exposures);
    };
    let mut recommendation = recommend(rent.side, periods.len(), &candidates, &contract.underlying);
    explain(&mut recommendation);
    warn_over_limit(&mut recommendation, contract, &summaries, periods.len());
    let perp = match &cfg.perp {
        None => None,
        Some(spec) => {
            let (mut result, perp_rows) =
                run_perp(cfg, spec, &idx, rent.side, &periods, beta, unit, outside)?;
            explain(&mut result.recommendation);
            rows.extend(perp_rows);
            Some(result)
        }
    };
    let daily = daily_points(rent, &idx);
    Ok(BacktestResult {
        contract: contract.name.clone(),
        underlying: contract.underlying.clone(),
        underlying_unit: unit,
        rebase_usd_per_point: rebase,
        side: rent.side,
        period_end: crate::rent::PeriodEnd::default(),
        entry_assumption: contract.entry.assumption.as_str().into(),
        periods: periods.len(),
        first_period: periods.first().map(|p| p.start),
        last_period: periods.last().map(|p| month_start(p.start)),
        months_left_out: left_out,
        months_in_review: periods
            .iter()
            .filter_map(|p| {
                p.settlement_review.as_ref().map(|r| LeftOut {
                    month: p.start,
                    reason: r.clone(),
                    operational_loss: p.operational_loss,
                })
            })
            .collect(),
        restated_after_settlement: idx
            .restated
            .as_ref()
            .map(|r| restated_months(contract, r, &periods, rebase.unwrap_or(1.0)))
            .unwrap_or_default(),
        min_variance_hedge_ratio: min_variance_hedge_ratio(&dr1, &di1),
        price_change_regression: regression,
        reference_slope: beta,
        reference_slope_pairs: slope.pairs,
        recommendation,
        rent_lag_months: 0,
        strategies: summaries,
        entry_sensitivity: entry_sensitivity(contract, &idx, sign, &periods, beta),
        perp,
        rows,
        daily,
        rent_names: rent.names.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::periods::Tranche;

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    /// Business-day settlement: weekend fixings never move the margin marks.
    #[test]
    fn margin_marks_on_the_settlement_days_only() {
        let mut c = ContractSpec::default_contract();
        c = c.edited(|t| t.settlement_days = "business".into()).unwrap();
        // June 2025: 2.0 on business days, 50.0 on weekends.
        let mut pts = Vec::new();
        let mut day = d("2025-06-01");
        while day < d("2025-07-01") {
            let weekend = matches!(
                chrono::Datelike::weekday(&day),
                chrono::Weekday::Sat | chrono::Weekday::Sun
            );
            pts.push((day, if weekend { 50.0 } else { 2.0 }));
            day = day.succ_opt().unwrap();
        }
        let index = DateSeries::from_points(pts).unwrap();
        let p = Period {
            start: d("2025-06-01"),
            end: d("2025-07-01"),
            exposure: 730.0,
            rent: 2.0,
            settlement: 2.0,
            tranches: vec![Tranche {
                entry_day: d("2025-05-31"),
                index_level: 2.0,
                basis: 0.0,
                basis_month: d("2025-05-01"),
                basis_rent: 2.0,
                basis_settlement: 2.0,
            }],
            lost_gpu_hours: 0.0,
            operational_loss: 0.0,
            loss_by_kind: BTreeMap::new(),
            rent_days: 30,
            settlement_review: None,
        };
        let (paid, worst) = margin_for(&c, c.day_rule(), &index, &p, 2.0, 730.0, -1.0);
        assert_eq!(
            (paid, worst),
            (0.0, 0.0),
            "a flat business-day index asks no margin"
        );
        c = c.edited(|t| t.settlement_days = "all".into()).unwrap();
        let (paid, _) = margin_for(&c, c.day_rule(), &index, &p, 2.0, 730.0, 1.0);
        assert!(
            paid > 0.0,
            "with all days counted the weekends move the mark"
        );
    }
}
