//! Errors of the index engine.

use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum IndexError {
    #[error("{path}: invalid methodology: {detail}")]
    Methodology { path: PathBuf, detail: String },
    #[error("{path}: {detail}")]
    Input { path: PathBuf, detail: String },
    #[error(transparent)]
    Store(#[from] rentix_ingest::IngestError),
    /// A rule of the methodology did not parse where the run needed it (cut-off,
    /// day rule, grade patterns, contributor aliases): configuration.
    #[error("{0}")]
    Config(String),
    /// An observation the engine cannot use (a malformed dedupe key).
    #[error("{0}")]
    Data(String),
    #[error(transparent)]
    Table(#[from] rentix_table::TableError),
    #[error("{path}: row {row}: {detail}")]
    Fixings {
        path: PathBuf,
        row: usize,
        detail: String,
    },
}
