//! Simulator errors.

use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum SimError {
    #[error("invalid simulation parameters: {0}")]
    Params(String),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}
