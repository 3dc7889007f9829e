//! Errors of the index engine.

use std::path::PathBuf;
use thiserror::Error;

/// Why an index run, a read of its outputs or a publication failed.
#[derive(Debug, Error)]
pub enum IndexError {
    /// A methodology file (daily or intraday) did not parse or broke a range or
    /// consistency rule when it loaded.
    #[error("{path}: invalid methodology: {detail}")]
    Methodology {
        /// The methodology file (or the name it was loaded under).
        path: PathBuf,
        /// What was wrong.
        detail: String,
    },
    /// A file or store that cannot be used as a whole: unreadable or unwritable, too
    /// large, of the wrong kind (an intraday file read as a daily one), or a store or
    /// date range with nothing to fix.
    #[error("{path}: {detail}")]
    Input {
        /// The file or store root.
        path: PathBuf,
        /// What was wrong.
        detail: String,
    },
    /// The observation store could not be read.
    #[error(transparent)]
    Store(#[from] rentix_store::StoreError),
    /// A rule of the methodology did not parse where the run needed it (cut-off,
    /// day rule, grade patterns, contributor aliases): configuration.
    #[error("{0}")]
    Config(String),
    /// An observation the engine cannot use (a malformed dedupe key).
    #[error("{0}")]
    Data(String),
    /// A published fixings, intraday or restatement file could not be read or
    /// written.
    #[error(transparent)]
    Published(#[from] rentix_fixings::FixingsError),
    /// A table (CSV or Parquet) could not be read or written.
    #[error(transparent)]
    Table(#[from] rentix_table::TableError),
    /// A row of a forward-curve file or of the incremental state that does not parse
    /// (the fixings, intraday and restatement files are `rentix-fixings`' and fail
    /// as [`IndexError::Published`]).
    #[error("{path}: row {row}: {detail}")]
    Fixings {
        /// The file read.
        path: PathBuf,
        /// The data row, counted from 1 (0: the header).
        row: usize,
        /// What was wrong.
        detail: String,
    },
}
