//! Errors of the report and its charts, by what went wrong: what the report was
//! pointed at (usage), a file it reads (with the reader's own error), or a chart it
//! could not draw or write.

use std::path::PathBuf;
use thiserror::Error;

/// Why a report or chart could not be made.
#[derive(Debug, Error)]
pub enum ReportError {
    /// What the report was asked to render is not something it renders.
    #[error("{0}")]
    Usage(String),
    /// An input file exists but cannot be used.
    #[error("{path}: {detail}")]
    Input {
        /// The file.
        path: PathBuf,
        /// What is wrong with it, without the path.
        detail: String,
    },
    /// A fixings, forward-curve or intraday file, as its reader refused it.
    #[error(transparent)]
    Index(#[from] rentix_index::IndexError),
    /// A backtest's summary, as its reader refused it.
    #[error(transparent)]
    Backtest(#[from] rentix_backtest::BacktestError),
    /// A contract lab's comparison, as its reader refused it.
    #[error(transparent)]
    Lab(#[from] rentix_lab::LabError),
    /// The report file could not be written.
    #[error(transparent)]
    Table(#[from] rentix_table::TableError),
    /// A chart could not be drawn or written (`path` without its extension).
    #[error("chart {path}: {detail}")]
    Chart {
        /// The chart's output path, without `.png` / `.svg`.
        path: PathBuf,
        /// The drawing backend's or the file system's message.
        detail: String,
    },
}

/// A published fixings file refused by its reader is the index's reading error.
impl From<rentix_index::FixingsError> for ReportError {
    fn from(e: rentix_index::FixingsError) -> Self {
        ReportError::Index(e.into())
    }
}
