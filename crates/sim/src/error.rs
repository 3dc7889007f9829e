//! Simulator errors.

use std::path::PathBuf;
use thiserror::Error;

/// Why a simulation could not run or finish.
#[derive(Debug, Error)]
pub enum SimError {
    /// Parameters that do not parse or fail
    /// [`SimParams::validate`](crate::SimParams::validate) (also a manifest that
    /// cannot be serialized).
    #[error("invalid simulation parameters: {0}")]
    Params(String),
    /// An output file or directory could not be created or written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error (a CSV error is carried as one).
        source: std::io::Error,
    },
}
