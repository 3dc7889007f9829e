//! rentix-ingest: from raw price files to a clean, auditable observation store.
//!
//! Reads the canonical observations CSV or a foreign layout through a mapping file,
//! validates and normalizes every row to USD per GPU-hour, quarantines what it
//! refuses (with a reason code), removes duplicates, and commits Parquet partitions
//! by month of fixing date plus a run summary in one atomic step.

mod check;
mod commit;
mod compact;
mod error;
mod fixing_part;
mod lock;
mod mapping;
mod merge;
mod normalize;
mod partition;
mod pipeline;
mod publish;
mod quarantine;
mod raw;
mod reason;
mod schema;
mod sizes;
mod spill;
mod store;
mod summary;
#[cfg(test)]
mod test_rows;

pub use check::{check_store, check_store_deep, StoreReport};
pub use compact::{compact, CompactSummary, Compaction};
pub use error::{IngestError, Result};
pub use fixing_part::FixingPart;
pub use lock::{committing, release_all as release_all_locks, StoreLock};
pub use mapping::{BoundMapping, Mapping};
pub use normalize::{
    hex, Bounds, DEFAULT_FUTURE_DAYS, DEFAULT_MAX_QUANTITY_GPU_HOURS, DEFAULT_MAX_USD_PER_GPU_HOUR,
    DEFAULT_MIN_USD_PER_GPU_HOUR,
};
pub use partition::{PartFile, Partitions, Span};
pub use pipeline::{ingest, read_in_memory, InMemory, IngestOptions, DEFAULT_BATCH_ROWS};
pub use quarantine::{QuarantineRow, QuarantineWriter};
pub use raw::RawObservation;
pub use reason::Reason;
pub use rentix_table::{timestamp_text, Col, Table};
pub use schema::{content_key, from_table, to_table, Projection, StoredObservation, COLUMNS};
pub use store::{fixing_dates_of, Delivery, Store};
pub use summary::{Conflict, FileSummary, IngestSummary, PartitionChecksum};

/// A run record or other small store file, read with the config size limit.
pub(crate) fn read_limited(path: &std::path::Path) -> std::io::Result<String> {
    rentix_core::read_text(path, rentix_core::MAX_CONFIG_BYTES)
}
