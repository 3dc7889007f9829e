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
    #[error(transparent)]
    Table(#[from] rentix_table::TableError),
    #[error("{path}: row {row}: {detail}")]
    Fixings {
        path: PathBuf,
        row: usize,
        detail: String,
    },
}
