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
#[cfg(test)]
mod known_answers;
mod output;
mod period_rate;
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
    run, BacktestConfig, BacktestResult, CrossValidated, DailyPoint, EntrySensitivity, IndexInputs,
    Intervals, Margin, OperationalLoss, PeriodRow, PerpResult, RestatedMonth, StrategySummary,
};
pub use contract::{
    month_start, validate_index_name, ContractSpec, ContractTerms, EntryAssumption, EntrySpec,
    Settlement, SettlementOutcome,
};
pub use cost::{
    cost_curves, position_changes, read_throughput, CostError, CostPoint, PositionChange,
    Throughput,
};
pub use cost_decomposition::{decompose_cost, CostMonth};
pub use error::{BacktestError, NoSettlement, RowAt};
pub use files::{backtest_files, choose_underlying, fixings_views, BacktestFiles};
pub use output::write_backtest;
pub use period_rate::{period_rate, Gap, Grid, PeriodRate, PeriodRule, StampSchedule};
pub use periods::LeftOut;
pub use perp::{Instrument, PerpSpec};
pub use pnl::PeriodPnl;
pub use pricing::{ObservedPrice, PriceError, Pricer};
pub use recommendation::{Decision, Recommendation};
pub use rent::{read_events, Coverage, Event, PeriodEnd, RentNames, RentPeriod, RentSeries, Side};
pub use settlement_rule::{CoverageRule, GapFill, SettlementStatus};
pub use strategy::Strategy;
pub use track::{
    track, track_table, TrackOptions, TrackRow, BEST_SET_ALPHA, DEFAULT_MIN_PERIODS,
    DEFAULT_MIN_SUFFICIENT_SHARE, FAMILYWISE_ALPHA,
};
pub use underlying::{check_fixings, underlyings, Stamps, Underlying};
