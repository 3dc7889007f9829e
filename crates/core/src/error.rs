//! Errors raised when a value does not satisfy a domain invariant.

use thiserror::Error;

/// A value was refused by a checked constructor or parser of the domain model.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CoreError {
    /// A number was NaN or infinite (a price, a quantity, a series value).
    #[error("{what} must be finite, got {value}")]
    NonFinite {
        /// The quantity checked, as its column or field name (e.g. `usd_per_gpu_hour`).
        what: &'static str,
        /// The refused value.
        value: f64,
    },
    /// A price or quantity was below zero.
    #[error("{what} must not be negative, got {value}")]
    Negative {
        /// The quantity checked, as its column or field name.
        what: &'static str,
        /// The refused value.
        value: f64,
    },
    /// A value that must be strictly above zero was zero (or, for `gpus_per_unit`,
    /// missing).
    #[error("{what} must be positive, got {value}")]
    NonPositive {
        /// The quantity checked, as its column or field name.
        what: &'static str,
        /// The refused value; `0` when a required count was missing.
        value: f64,
    },
    /// A name outside its closed vocabulary: a GPU, scope, term, tier, kind, price
    /// unit, day rule or holiday calendar, or a GPU id with bad characters.
    #[error("unknown {what} {value:?} (expected one of: {expected})")]
    Unknown {
        /// The vocabulary (`"scope"`, `"term"`, `"gpu"`, ...).
        what: &'static str,
        /// The name as given.
        value: String,
        /// The accepted names, or a description of them, for the message.
        expected: String,
    },
    /// A grade key or grade pattern that does not parse.
    #[error("invalid grade key {value:?}: {reason}")]
    InvalidGrade {
        /// The key or pattern as given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A GPU catalog that does not parse, repeats an id, or has an alias that is
    /// empty, points at an unknown id or at two ids.
    #[error("invalid GPU catalog: {0}")]
    Catalog(String),
    /// An FX table that cannot be read or has a bad or duplicate row.
    #[error("{path}: invalid FX table, row {row}: {detail}")]
    Fx {
        /// The file, as displayed.
        path: String,
        /// 1-based data row (the header not counted); 0 for the file as a whole.
        row: usize,
        /// What is wrong.
        detail: String,
    },
    /// A ratings file that cannot be read, lacks a column or has a bad row.
    #[error("{path}: invalid ratings, row {row}: {detail}")]
    Ratings {
        /// The file, as displayed.
        path: String,
        /// 1-based data row (the header not counted); 0 for the file or its header.
        row: usize,
        /// What is wrong.
        detail: String,
    },
    /// A time, time zone or date that does not parse, or a date given twice to a
    /// [`DateSeries`](crate::DateSeries).
    #[error("invalid {value:?}: {reason}")]
    InvalidTime {
        /// The text (or date) as given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// The variant of `T` that `value` names (any of its strum serializations: its text
/// and its aliases), read trimmed and each byte through `fold` (ASCII case, and the
/// separators a type accepts), else [`CoreError::Unknown`] quoting `value` as given
/// and listing every variant's text, in declaration order. Compared byte by byte,
/// with no normalized copy: this runs for several fields of every observation read.
pub(crate) fn parse_variant<T>(
    what: &'static str,
    value: &str,
    fold: fn(u8) -> u8,
) -> Result<T, CoreError>
where
    T: Copy + strum::VariantArray + strum::EnumMessage + Into<&'static str>,
{
    let text = value.trim().as_bytes();
    let names = |name: &&str| {
        name.len() == text.len() && name.bytes().zip(text).all(|(n, t)| n == fold(*t))
    };
    T::VARIANTS
        .iter()
        .copied()
        .find(|v| v.get_serializations().iter().any(names))
        .ok_or_else(|| CoreError::Unknown {
            what,
            value: value.to_string(),
            expected: T::VARIANTS
                .iter()
                .map(|v| (*v).into())
                .collect::<Vec<&str>>()
                .join(", "),
        })
}

/// A configuration value outside what it may hold (a methodology's, a contract's, a
/// perp's, a settlement rule's), said in words that name the field and what to write
/// instead: `pooling.window_days = 400 is more than 366`. The validators return it;
/// the caller that read the file wraps it with the path.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct Invalid(pub String);

impl From<String> for Invalid {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for Invalid {
    fn from(message: &str) -> Self {
        Self(message.to_string())
    }
}
