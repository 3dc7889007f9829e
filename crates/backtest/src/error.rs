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

/// Where a row is in its file: the data record, counted from 1, and the line an
/// editor shows it on (the header is line 1; a quoted cell over several lines moves
/// the rows after it down).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowAt {
    /// Data record, from 1.
    pub row: usize,
    /// The line the record starts on.
    pub line: u64,
}

impl std::fmt::Display for RowAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "row {} (line {})", self.row, self.line)
    }
}

/// Why a backtest, a `track` run or one of their readers refused its input.
#[derive(Debug, Error)]
pub enum BacktestError {
    /// One row of an input file (rent, events, premiums, throughput) has a bad field.
    #[error("{path}: {at}, field {field}: {detail}")]
    Row {
        /// The file read.
        path: PathBuf,
        /// The data record and the line of the file it starts on.
        at: RowAt,
        /// Column name; empty when the record itself does not parse as CSV.
        field: String,
        /// What is wrong with the value.
        detail: String,
    },
    /// A file that cannot be read or written, or whose content as a whole is refused
    /// (a missing or repeated column, no rows, a `summary.json` that does not parse).
    #[error("{path}: {detail}")]
    File {
        /// The file or directory.
        path: PathBuf,
        /// What went wrong.
        detail: String,
    },
    /// Every problem of a file found in one read (the first `MAX_PROBLEMS`), so
    /// that a file exported by hand is fixed in one go.
    #[error("{}", rows_message(path, problems, *more))]
    Rows {
        /// The file read.
        path: PathBuf,
        /// The problems listed, in file order.
        problems: Vec<BacktestError>,
        /// Problems found beyond the ones listed.
        more: usize,
    },
    /// A contract or perp spec (TOML) that does not parse or fails its checks.
    #[error("{path}: invalid contract: {detail}")]
    Contract {
        /// The spec file (or the name it was given by).
        path: PathBuf,
        /// The parse error or the check that failed.
        detail: String,
    },
    /// Input whose rows read one by one but not together (rent periods that
    /// overlap), a contract's settlement calendar that cannot be built, or a summary
    /// that cannot be serialized.
    #[error("{0}")]
    Data(String),
    /// Too few hedge periods for a backtest, with the first months left out.
    #[error("only {periods} month(s) where the rent covers every day, {underlying} settles and a basis was observed before entry; a backtest needs at least {needed} (left out: {left_out})")]
    TooFewPeriods {
        /// Hedge periods found.
        periods: usize,
        /// Hedge periods a backtest needs (3).
        needed: usize,
        /// The contract's underlying index.
        underlying: String,
        /// The first three months left out and why, `YYYY-MM: reason; ...`.
        left_out: String,
    },
    /// A contract whose terms cannot work on this index.
    #[error("{0}")]
    ContractOnIndex(String),
    /// A fixings file no backtest can settle on: the date and index named.
    #[error("{0}")]
    Fixings(String),
    /// No underlying was named and the rent does not say which to take: the
    /// candidates, and how to name one.
    #[error("{0}")]
    Underlying(String),
    /// `track`: nothing in the fixings file could be backtested against the rent.
    #[error("no candidate of the {candidates} in the fixings file could be backtested against this rent (e.g. {example}: {why})")]
    NoCandidate {
        /// Indices in the fixings file.
        candidates: usize,
        /// The first of them (in name order).
        example: String,
        /// Why it could not be backtested.
        why: String,
    },
    /// Reading a fixings file or a restatement log failed.
    #[error(transparent)]
    Index(#[from] rentix_fixings::FixingsError),
    /// Writing an output file (`periods.csv`, `daily.csv`, `summary.json`) failed.
    #[error(transparent)]
    Table(#[from] rentix_table::TableError),
}

/// Why a month does not settle, in words for the report: no fixing on a counted
/// day, fewer qualifying fixings than `min_settlement_fixings`, or a determination
/// under a `[coverage]` rule. A finding about the index in that month, not a
/// failure of the run ([`crate::ContractSpec::settle_outcome`] gives the whole
/// outcome).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct NoSettlement(pub String);
