//! Errors of the backtester.

use std::path::{Path, PathBuf};
use thiserror::Error;

/// Problems of one file listed at most.
pub const MAX_PROBLEMS: usize = 20;

fn rows_message(path: &Path, problems: &[BacktestError], more: usize) -> String {
    let n = problems.len() + more;
    let mut s = format!(
        "{}: {n} row{} refused",
        path.display(),
        if n == 1 { "" } else { "s" }
    );
    let prefix = format!("{}: ", path.display());
    for p in problems {
        let t = p.to_string();
        s.push_str("\n  ");
        s.push_str(t.strip_prefix(&prefix).unwrap_or(&t));
    }
    if more > 0 {
        s.push_str(&format!("\n  ... and {more} more"));
    }
    s
}

#[derive(Debug, Error)]
pub enum BacktestError {
    /// `row` counts data records from 1; `line` in the message is the line an editor
    /// shows (the header being line 1).
    #[error("{path}: row {row} (line {}), field {field}: {detail}", row + 1)]
    Row {
        path: PathBuf,
        row: usize,
        field: String,
        detail: String,
    },
    #[error("{path}: {detail}")]
    File { path: PathBuf, detail: String },
    /// Every problem of a file found in one read (the first [`MAX_PROBLEMS`]), so
    /// that a file exported by hand is fixed in one go.
    #[error("{}", rows_message(path, problems, *more))]
    Rows {
        path: PathBuf,
        problems: Vec<BacktestError>,
        /// Problems found beyond the ones listed.
        more: usize,
    },
    #[error("{path}: invalid contract: {detail}")]
    Contract { path: PathBuf, detail: String },
    #[error("{0}")]
    Data(String),
    #[error(transparent)]
    Index(#[from] rentix_index::IndexError),
    #[error(transparent)]
    Table(#[from] rentix_table::TableError),
}
