//! Errors of reading and writing published fixings.

use std::path::PathBuf;
use thiserror::Error;

/// Why a fixings, intraday or restatement file could not be read or written.
#[derive(Debug, Error)]
pub enum FixingsError {
    /// A file that cannot be used as a whole: unreadable, too large, or of the wrong
    /// kind (an intraday file read as a daily one).
    #[error("{path}: {detail}")]
    Input {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        detail: String,
    },
    /// A table (CSV or Parquet) could not be read or written.
    #[error(transparent)]
    Table(#[from] rentix_table::TableError),
    /// A row of a fixings, intraday or restatement file that does not parse (a
    /// missing column, a column named twice (row 0), a cell of the wrong type).
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
