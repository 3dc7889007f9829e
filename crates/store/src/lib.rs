//! rentix-store: the observation store a run of `ingest` writes and every other
//! command reads.
//!
//! A store is a directory: `observations/month=YYYY-MM/run-NNNNNN.parquet` partitions
//! (rows sorted by fixing date, then grade) and `runs/run-NNNNNN.json`, one record per
//! committed run naming its partitions with their checksums. A writer holds the
//! store's lock, stages its files and publishes them in one step ([`publish`]); a
//! reader sees only what a run record names. This crate owns the layout, the typed
//! rows ([`StoredObservation`]), the commit of a run's rows (deduplication against the
//! store, [`commit`]), the spills and merges that bound its memory ([`spill`]),
//! compaction, the lock and the checks; `rentix-ingest` turns raw files into rows and
//! hands them to [`commit`].

mod check;
mod checked;
pub mod commit;
mod compact;
mod error;
mod fixing_part;
mod hash;
mod lock;
mod merge;
mod partition;
pub mod publish;
mod schema;
pub mod spill;
mod store;
mod summary;
#[cfg(test)]
mod test_rows;

pub use check::{check_store, check_store_deep, check_store_quick, StoreReport};
pub use compact::{compact, CompactSummary, Compaction};
pub use error::{Result, StoreError};
pub use fixing_part::FixingPart;
pub use hash::{hex, sha256_file};
pub use lock::{
    committing, forget_committed, release_all as release_all_locks, scratch, Scratch, StoreLock,
};
pub use partition::{PartFile, Partitions, Span};
pub use rentix_table::{timestamp_text, Col, Table};
pub use schema::{content_key, from_table, to_table, Projection, StoredObservation, COLUMNS};
pub use store::{fixing_dates_of, Delivery, Retry, Store};
pub use summary::{runs_sha256, Conflict, FileSummary, IngestSummary, PartitionChecksum};

/// A run record or other small store file, read with the config size limit.
pub(crate) fn read_limited(path: &std::path::Path) -> std::io::Result<String> {
    rentix_core::read_text(path, rentix_core::MAX_CONFIG_BYTES)
}
