//! Errors that stop an ingest run (as opposed to bad rows, which are quarantined).

use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum IngestError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: the header has no column {column:?} (needed for field {field})")]
    MissingColumn {
        path: PathBuf,
        column: String,
        field: String,
    },
    #[error("{path}: cannot read the header row: {detail}")]
    BadHeader { path: PathBuf, detail: String },
    #[error("{path}: invalid mapping file: {detail}")]
    Mapping { path: PathBuf, detail: String },
    #[error("{path}: CSV error at row {row}: {detail}")]
    Csv {
        path: PathBuf,
        row: u64,
        detail: String,
    },
    #[error("store {path}: {detail}")]
    Store { path: PathBuf, detail: String },
    #[error("FX table {path}: {detail}")]
    Fx { path: PathBuf, detail: String },
    #[error(transparent)]
    Table(#[from] rentix_table::TableError),
    #[error("internal accounting error: {0}")]
    Accounting(String),
}

pub type Result<T> = std::result::Result<T, IngestError>;
