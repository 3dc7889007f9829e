//! Errors raised when a value does not satisfy a domain invariant.

use thiserror::Error;

/// A value was refused by a checked constructor or parser of the domain model.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CoreError {
    #[error("{what} must be finite, got {value}")]
    NonFinite { what: &'static str, value: f64 },
    #[error("{what} must not be negative, got {value}")]
    Negative { what: &'static str, value: f64 },
    #[error("{what} must be positive, got {value}")]
    NonPositive { what: &'static str, value: f64 },
    #[error("unknown {what} {value:?} (expected one of: {expected})")]
    Unknown {
        what: &'static str,
        value: String,
        expected: String,
    },
    #[error("invalid grade key {value:?}: {reason}")]
    InvalidGrade { value: String, reason: String },
    #[error("invalid GPU catalog: {0}")]
    Catalog(String),
    #[error("{path}: invalid FX table, row {row}: {detail}")]
    Fx {
        path: String,
        row: usize,
        detail: String,
    },
    #[error("{path}: invalid ratings, row {row}: {detail}")]
    Ratings {
        path: String,
        row: usize,
        detail: String,
    },
    #[error("invalid time {value:?}: {reason}")]
    InvalidTime { value: String, reason: String },
}
