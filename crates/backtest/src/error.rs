//! Errors of the backtester.

use std::path::{Path, PathBuf};
use thiserror::Error;

/// Problems of one file listed at most.
pub(crate) const MAX_PROBLEMS: usize = 20;

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
    /// Every problem of a file found in one read (the first `MAX_PROBLEMS`), so
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
    /// Too few hedge periods for a backtest, with the first months left out.
    #[error("only {periods} month(s) where the rent covers every day, {underlying} settles and a basis was observed before entry; a backtest needs at least {needed} (left out: {left_out})")]
    TooFewPeriods {
        periods: usize,
        needed: usize,
        underlying: String,
        left_out: String,
    },
    /// A contract whose terms cannot work on this index.
    #[error("{0}")]
    ContractOnIndex(String),
    /// A fixings file no backtest can settle on: the date and index named.
    #[error("{0}")]
    Fixings(String),
    /// `track`: nothing in the fixings file could be backtested against the rent.
    #[error("no candidate of the {candidates} in the fixings file could be backtested against this rent (e.g. {example}: {why})")]
    NoCandidate {
        candidates: usize,
        example: String,
        why: String,
    },
    #[error(transparent)]
    Index(#[from] rentix_index::IndexError),
    #[error(transparent)]
    Table(#[from] rentix_table::TableError),
}
