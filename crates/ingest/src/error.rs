//! Errors that stop an ingest run (as opposed to bad rows, which are quarantined).

use std::path::PathBuf;
use thiserror::Error;

/// Why an ingest stopped. Nothing of the run is committed.
#[derive(Debug, Error)]
pub enum IngestError {
    /// A file (input, mapping, spill, run record, partition) could not be read, or an
    /// input changed between its hashing and its reading.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// One input file named twice (under two spellings too): a usage error, not a
    /// file that could not be read.
    #[error("{path}: given twice (also as {first}); name each file once")]
    GivenTwice {
        /// The second naming.
        path: PathBuf,
        /// The first.
        first: PathBuf,
    },
    /// A file (partition, spill, quarantine, run record, lock) could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A column a mapping names (or a required canonical column) is not in the
    /// input's header.
    #[error("{path}: the header has no column {column:?} (needed for field {field})")]
    MissingColumn {
        /// The input file.
        path: PathBuf,
        /// The column looked for.
        column: String,
        /// The canonical field that needs it.
        field: String,
    },
    /// The header cannot be used: unreadable, not UTF-8, empty, too long or too wide,
    /// a repeated column, or one semicolon-joined column.
    #[error("{path}: cannot read the header row: {detail}")]
    BadHeader {
        /// The input file.
        path: PathBuf,
        /// What was wrong.
        detail: String,
    },
    /// A mapping file that does not parse or names a bad alias or template.
    #[error("{path}: invalid mapping file: {detail}")]
    Mapping {
        /// The mapping file.
        path: PathBuf,
        /// What was wrong.
        detail: String,
    },
    /// An input the CSV reader cannot read on, or with a quoted field running over
    /// several lines: the whole file is refused.
    #[error("{path}: CSV error at row {row}: {detail}")]
    Csv {
        /// The input file.
        path: PathBuf,
        /// The record, counted from 1 after the header.
        row: u64,
        /// What was wrong.
        detail: String,
    },
    /// The store refused the run's commit or could not be read (not a store, a
    /// malformed run record, a lock held by another run, a partition that changed).
    #[error(transparent)]
    Store(#[from] rentix_store::StoreError),
    /// A `--cutoff` that is not a time of day with a time zone.
    #[error("--cutoff {value:?}: {detail}")]
    Cutoff {
        /// The cut-off as given.
        value: String,
        /// What was wrong.
        detail: String,
    },
    /// An FX table (`--fx`) refused whole: a rate not finite and > 0, a bad
    /// currency code, a `USD` rate other than 1, or two rates on one date.
    #[error("FX table {path}: {detail}")]
    Fx {
        /// The FX table file.
        path: PathBuf,
        /// What was wrong.
        detail: String,
    },
    /// A table (CSV or Parquet) could not be read or written.
    #[error(transparent)]
    Table(#[from] rentix_table::TableError),
    /// The run's counts do not add up (`rows_read = accepted + quarantined +
    /// duplicates`) or a writer thread failed: a defect, checked before the commit.
    #[error("internal accounting error: {0}")]
    Accounting(String),
}

/// A result whose error is an [`IngestError`].
pub type Result<T> = std::result::Result<T, IngestError>;
