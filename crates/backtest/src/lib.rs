//! rentix-backtest: would a cash-settled futures contract on a GPU rental index have
//! hedged this rent, and what can it never cover?
//!
//! Reads a user's rent series and operational events, builds monthly contract
//! periods against an index's fixings, runs hedging strategies (unhedged,
//! one-to-one, in-sample minimum variance, walk-forward, EWMA, layered), decomposes
//! P&L into rent change, futures, basis and volume mismatch with operational loss
//! reported apart, and measures the hedge with the statistics a risk committee asks
//! for. A perpetual swap on the same index can be run beside the futures (`perp`).
//! `track` ranks every grade of a fixings file for one rent series.

mod backtest;
mod contract;
mod cost;
mod cost_decomposition;
mod error;
mod files;
mod output;
mod periods;
mod perp;
mod pnl;
mod pricing;
mod recommendation;
mod rent;
mod settlement_rule;
pub mod stats;
mod strategy;
mod track;
mod underlying;

pub use backtest::{
    run, BacktestConfig, BacktestResult, DailyPoint, EntrySensitivity, IndexInputs, Intervals,
    Margin, OperationalLoss, PeriodRow, RestatedMonth, StrategySummary,
};
pub use contract::{
    month_start, validate_index_name, ContractSpec, EntryAssumption, EntrySpec, Settlement,
    SettlementOutcome, DEFAULT_MIN_SETTLEMENT_FIXINGS,
};
pub use cost::{
    cost_curves, position_changes, read_throughput, usd_per_m_useful_tokens, CostPoint,
    PositionChange, Throughput,
};
pub use cost_decomposition::{decompose_cost, shapley3, CostMonth};
pub use error::BacktestError;
pub use files::{backtest_files, fixings_views, BacktestFiles};
pub use output::{daily_table, periods_table, write_backtest};
pub use periods::{
    build_periods, LeftOut, Period, Periods, ReferenceSlope, Tranche, LAYERS, MIN_SLOPE_PAIRS,
};
pub use perp::{Instrument, PerpSpec};
pub use pnl::{decompose, PeriodPnl, PnlInputs};
pub use pricing::{ObservedPrice, PriceError, Pricer, PRICE_LOOKBACK_DAYS};
pub use recommendation::{
    recommend, recommend_for, tradable, Candidate, Decision, Recommendation, FEW_PERIODS,
    MIN_DECISION_PERIODS,
};
pub use rent::{
    events_over, read_events, Coverage, Event, PeriodEnd, RentPeriod, RentSeries, Side, EVENT_KINDS,
};
pub use settlement_rule::{
    classify, coverage_of, fill_value, CoverageRule, GapFill, SettlementStatus,
};
pub use strategy::{
    ewma_ratio, next_ratio, ratios, Strategy, EWMA_LAMBDA, MIN_HISTORY, WALK_FORWARD_WINDOW,
};
pub use track::{
    track, track_table, TrackOptions, TrackRow, DEFAULT_MIN_PERIODS, DEFAULT_MIN_SUFFICIENT_SHARE,
};
pub use underlying::{check_fixings, intraday_underlyings, underlyings, Stamps, Underlying};
