//! Errors of the observation store's readers and writers.

use std::path::PathBuf;
use thiserror::Error;

/// Why a read or a write of the store stopped. A write that stops commits nothing.
#[derive(Debug, Error)]
pub enum StoreError {
    /// A file (spill, run record, partition) could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file (partition, spill, run record, lock) could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The store is not as a reader or writer needs it: not a store, a malformed or
    /// misnamed run record, a partition that does not parse or changed since its
    /// commit, a lock held by another run or lost during the run.
    #[error("store {path}: {detail}")]
    Store {
        /// The store, or the file in it at fault.
        path: PathBuf,
        /// What was wrong.
        detail: String,
    },
    /// A table (CSV or Parquet) could not be read or written.
    #[error(transparent)]
    Table(#[from] rentix_table::TableError),
    /// A run's counts do not add up or a writer thread failed: a defect, checked
    /// before the commit.
    #[error("internal accounting error: {0}")]
    Accounting(String),
}

/// A result whose error is a [`StoreError`].
pub type Result<T> = std::result::Result<T, StoreError>;
