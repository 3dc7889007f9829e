//! rentix-core: the domain model shared by every rentix crate.
//!
//! GPU models and their alias table, service scopes, contract terms, grades and grade
//! patterns, observation kinds with their IOSCO hierarchy rank, price and quantity
//! newtypes that refuse NaN, infinities and negatives, price units, the fixing
//! cut-off, the dated FX table, a date-keyed series type, and durations and
//! publication cadences (`15m`, `1h`, `1d`).

pub mod bundled;
mod cadence;
mod calendar;
mod error;
mod fixing_time;
mod fx;
mod gpu;
mod grade;
mod hex;
mod id;
mod interner;
mod kind;
mod limits;
mod observation;
pub mod ordered;
pub mod phases;
mod price;
mod rating;
mod scope;
mod series;
pub mod stats;
mod term;
mod tier;
mod unit;

pub use bundled::{bundled, read_config, ConfigKind};
pub use cadence::{parse_minutes, Cadence, DAY_MINUTES};
pub use calendar::{DayRule, HolidayCalendar};
pub use error::{CoreError, Invalid};
pub use fixing_time::{Cutoff, FixingClock};
pub use fx::{FxMiss, FxTable, MAX_RATE_AGE_DAYS};
pub use gpu::{GpuCatalog, GpuModel, GpuSpec};
pub use grade::{Grade, GradePattern};
pub use hex::hex;
pub use id::{Id, IdText};
pub use interner::Interner;
pub use kind::ObservationKind;
pub use limits::{
    check_file, read_text, MAX_CONFIG_BYTES, MAX_DIGEST_BYTES, MAX_FIXINGS_BYTES, MAX_STATE_BYTES,
    MAX_TABLE_BYTES,
};
pub use observation::{Observation, CANONICAL_COLUMNS, REQUIRED_COLUMNS, THROUGHPUT_COLUMNS};
pub use price::{GpuHours, UsdPerGpuHour};
pub use rating::{Rating, RatingTable};
pub use scope::ServiceScope;
pub use series::DateSeries;
pub use term::ContractTerm;
pub use tier::OperatorTier;
pub use unit::{hours_in_month, PriceUnit};
