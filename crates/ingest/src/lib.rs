//! rentix-ingest: from raw price files to a clean, auditable observation store.
//!
//! Reads the canonical observations CSV or a foreign layout through a mapping file,
//! validates and normalizes every row to USD per GPU-hour, quarantines what it
//! refuses (with a reason code), and hands the accepted rows to `rentix-store`, whose
//! commit removes duplicates and publishes Parquet partitions by month of fixing date
//! plus a run record in one atomic step.

mod error;
mod mapping;
mod normalize;
mod pipeline;
mod quarantine;
mod raw;
mod reason;
mod sizes;
mod split;

pub use error::{IngestError, Result};
pub use mapping::{BoundMapping, Mapping};
pub use normalize::{
    Bounds, DEFAULT_FUTURE_DAYS, DEFAULT_MAX_QUANTITY_GPU_HOURS, DEFAULT_MAX_USD_PER_GPU_HOUR,
    DEFAULT_MIN_USD_PER_GPU_HOUR,
};
pub use pipeline::{
    ingest, read_in_memory, read_in_stages, InMemory, IngestOptions, Staged, DEFAULT_BATCH_ROWS,
};
pub use quarantine::{QuarantineRow, QuarantineWriter};
pub use raw::RawObservation;
pub use reason::Reason;
