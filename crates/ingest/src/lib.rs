//! rentix-ingest: from raw price files to a clean, auditable observation store.
//!
//! Reads the canonical observations CSV or a foreign layout through a mapping file,
//! validates and normalizes every row to USD per GPU-hour, quarantines what it
//! refuses (with a reason code), removes duplicates, and commits Parquet partitions
//! by fixing date plus a run summary in one atomic step.

mod error;
mod mapping;
mod normalize;
mod pipeline;
mod quarantine;
mod raw;
mod reason;
mod schema;
mod store;
mod summary;
mod table;

pub use error::{IngestError, Result};
pub use mapping::{Mapping, Template};
pub use normalize::{dedupe_key, parse_timestamp, Normalizer};
pub use pipeline::{ingest, IngestOptions, Progress};
pub use quarantine::{QuarantineRow, QuarantineWriter};
pub use raw::{is_canonical_field, RawObservation, REQUIRED_FIELDS};
pub use reason::{Reason, Rejection};
pub use schema::{content_key, from_table, timestamp_text, to_table, StoredObservation, COLUMNS};
pub use store::{partition_date, partition_path, Store, StoreLock};
pub use summary::{FileSummary, IngestSummary};
pub use table::{write_atomic, Col, Table, TableFormat};
