//! One normalized price seen in the market.

use crate::grade::Grade;
use crate::kind::ObservationKind;
use crate::price::{GpuHours, UsdPerGpuHour};
use crate::tier::OperatorTier;
use crate::unit::PriceUnit;
use chrono::{DateTime, NaiveDate, Utc};

/// Columns of the canonical observations CSV, in the order rentix writes them.
pub const CANONICAL_COLUMNS: [&str; 18] = [
    "obs_id",
    "kind",
    "observed_at",
    "source",
    "gpu",
    "scope",
    "term",
    "price",
    "price_unit",
    "currency",
    "quantity_gpu_hours",
    "gpus_per_unit",
    "region",
    "interconnect",
    "cluster_gpus",
    "operator_tier",
    "upfront",
    "term_start",
];

/// The canonical columns an observations file must have.
pub const REQUIRED_COLUMNS: [&str; 9] = [
    "kind",
    "observed_at",
    "source",
    "gpu",
    "scope",
    "term",
    "price",
    "price_unit",
    "currency",
];

/// A validated, normalized observation. Built only by the ingest validator, so every
/// field already satisfies its invariant: the price is finite and positive, a trade
/// carries its volume, the grade names a catalogued GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// The source's own id, or a hash of the normalized row (see ingest).
    pub obs_id: crate::Id,
    /// Trade, firm offer or listing: the observation's rank in the hierarchy.
    pub kind: ObservationKind,
    /// When the price was seen, in UTC (a date alone reads as 00:00 UTC).
    pub observed_at: DateTime<Utc>,
    /// Fixing date under the ingest cut-off (UTC calendar date by default).
    pub fixing_date: NaiveDate,
    /// Who published the price: the contributor for concentration limits.
    pub source: std::sync::Arc<str>,
    /// GPU x scope x term, with the region when the row gave one.
    pub grade: Grade,
    /// The provider's own GPU name, kept beside the canonical id.
    pub gpu_raw: std::sync::Arc<str>,
    /// The normalized price in USD per GPU-hour.
    pub usd_per_gpu_hour: UsdPerGpuHour,
    /// Volume in GPU-hours: required for trades, optional otherwise.
    pub quantity_gpu_hours: Option<GpuHours>,
    /// The price as quoted, in `price_unit` and `currency`.
    pub price_raw: f64,
    /// The unit the price was quoted in (per GPU, node or instance; hour or month).
    pub price_unit: PriceUnit,
    /// The quote's currency, as an uppercase three-letter code.
    pub currency: std::sync::Arc<str>,
    /// GPUs in one node or instance, a whole number >= 1; required when the price
    /// unit is per node or instance, `None` when the row left it empty.
    pub gpus_per_unit: Option<u32>,
    /// The interconnect as the row named it (e.g. `infiniband`), not normalized;
    /// `None` when not given.
    pub interconnect: Option<std::sync::Arc<str>>,
    /// Size of the cluster offered, in GPUs (whole number >= 1); `None` when not
    /// given.
    pub cluster_gpus: Option<u32>,
    /// The row's own tier, else the rating in force for (source, scope) on the
    /// observation's UTC date; `None` when neither is known.
    pub operator_tier: Option<OperatorTier>,
    /// Upfront payment as quoted (per unit, in `currency`), amortized into the price.
    pub upfront: Option<f64>,
    /// The day a reserved term starts, when the row gave it; a monthly price is
    /// divided by the hours of this month (else of the fixing date's month).
    pub term_start: Option<NaiveDate>,
    /// Input file name and 1-based data row number (header excluded).
    pub input_file: std::sync::Arc<str>,
    /// 1-based data row of `input_file` (header excluded).
    pub input_row: u64,
}

impl Observation {
    /// Weight of this observation in volume-weighted statistics: its GPU-hours, or 1
    /// when it carries no volume (an offer of unknown size counts once).
    pub fn weight(&self) -> f64 {
        self.quantity_gpu_hours.map_or(1.0, |q| q.get())
    }
}

/// Columns of a throughput file (`rentix cost`, `backtest --throughput`): the first
/// ten are required, `usd_per_gpu_hour` and `date` optional. One list, shared by the
/// reader and the simulator that writes such files.
pub const THROUGHPUT_COLUMNS: [&str; 12] = [
    "operator",
    "gpu",
    "scope",
    "model",
    "input_tokens",
    "output_tokens",
    "target_tokens_per_s_per_user",
    "output_tokens_per_s_per_gpu",
    "success_rate",
    "capacity_gpus",
    "usd_per_gpu_hour",
    "date",
];
