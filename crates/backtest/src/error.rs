//! Errors of the backtester.

use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum BacktestError {
    #[error("{path}: row {row}, field {field}: {detail}")]
    Row {
        path: PathBuf,
        row: usize,
        field: String,
        detail: String,
    },
    #[error("{path}: {detail}")]
    File { path: PathBuf, detail: String },
    #[error("{path}: invalid contract: {detail}")]
    Contract { path: PathBuf, detail: String },
    #[error("{0}")]
    Data(String),
    #[error(transparent)]
    Index(#[from] rentix_index::IndexError),
    #[error(transparent)]
    Table(#[from] rentix_table::TableError),
}
