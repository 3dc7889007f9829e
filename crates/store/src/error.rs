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
    /// A lock (a store's `.lock`, a publication's `<file>.lock`) held by another
    /// run: named by its own path, which says whose it is.
    #[error("{}: {detail}", path.display())]
    Locked {
        /// The lock file.
        path: PathBuf,
        /// Who holds it and what to do.
        detail: String,
    },
    /// A partition whose bytes are not those its run record committed (a flipped
    /// bit, an edit, another file copied over it): refused before any of it is
    /// decoded. Bad input data (exit 3), like every store that cannot be used.
    #[error("{path}: its SHA-256 is {actual}, but {run_id} committed it as {recorded}: the file changed after its commit and nothing is read from it; `rentix store check` lists every damaged file")]
    Integrity {
        /// The partition file.
        path: PathBuf,
        /// The run whose record committed it.
        run_id: String,
        /// The SHA-256 its record holds.
        recorded: String,
        /// The SHA-256 of the bytes read.
        actual: String,
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
