//! Reason codes for quarantined rows: a stable vocabulary for "why was this refused".

use serde::Serialize;

/// Why a row was refused. The code is written to the quarantine and counted in the
/// ingest summary; it never changes meaning between versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::IntoStaticStr, strum::Display, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum Reason {
    /// The record has more or fewer fields than the header.
    WrongColumnCount,
    /// A field is not valid UTF-8.
    InvalidUtf8,
    /// A required field is empty.
    MissingField,
    /// `kind` is not `trade`, `firm` or `listing`.
    UnknownKind,
    /// `observed_at` or `term_start` is not a timestamp with an offset nor a date.
    UnparseableDate,
    /// The GPU is not in the catalog nor among the mapping's aliases (the summary
    /// counts it in `unknown_gpus`).
    UnknownGpu,
    /// `scope` is not one of the four scopes.
    UnknownScope,
    /// `term` is not `spot`, `on-demand` or a reserved term.
    UnknownTerm,
    /// `price` is not a number.
    UnparseablePrice,
    /// `price` is NaN or infinite, or the price after conversion is not a finite
    /// positive number.
    NonFinitePrice,
    /// `price` is zero or negative.
    NonPositivePrice,
    /// `price_unit` is not one of the five units.
    UnknownUnit,
    /// A node, instance or node-month price without a positive `gpus_per_unit`.
    MissingGpusPerUnit,
    /// `gpus_per_unit` or `cluster_gpus` not a whole number >= 1, or `upfront` not an
    /// amount >= 0.
    InvalidNumber,
    /// The currency is neither `USD` nor in the FX table.
    UnknownCurrency,
    /// The currency is known but the FX table has no rate on or before the date.
    NoFxRate,
    /// A trade without `quantity_gpu_hours`.
    MissingQuantity,
    /// `quantity_gpu_hours` is not a number >= 0, or a trade's is 0.
    InvalidQuantity,
    /// An upfront payment on a term with no length to amortize it over.
    UpfrontWithoutTerm,
    /// `operator_tier` is not one of the five tiers.
    UnknownOperatorTier,
    /// A date outside the plausible window (before 2010, or later than the run's
    /// time plus the future tolerance).
    ImplausibleDate,
    /// A price above the plausible maximum or below the plausible minimum (USD per
    /// GPU-hour after normalization).
    ImplausiblePrice,
    /// A quantity above the plausible maximum of GPU-hours for one observation.
    ImplausibleQuantity,
    /// A record (line) longer than `MAX_RECORD_BYTES`.
    RecordTooLong,
    /// A mapped text field longer than `MAX_FIELD_BYTES`.
    FieldTooLong,
    /// A mapped field holding a control character (a NUL, a line break or tab
    /// inside a cell, an escape).
    ControlCharacter,
    /// The header row again, further down the file (files pasted together, a
    /// spreadsheet export of several sheets): not data.
    RepeatedHeader,
    /// A spreadsheet's totals row (its first filled cell says `Total`, `Sum`...):
    /// a sum of other rows, not an observation.
    TotalsRow,
}

impl Reason {
    /// The code as written to the quarantine and the summary (`unknown_gpu`).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A refused row's diagnosis: the reason code, the field at fault and what was wrong.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rejection {
    /// Why the row was refused.
    pub reason: Reason,
    /// The canonical field at fault (`price`, `gpu`...).
    pub field: String,
    /// What was wrong, for a person (the value quoted).
    pub detail: String,
    /// The raw value at fault, when the summary counts it (unknown GPU names).
    pub value: Option<String>,
}

impl Rejection {
    /// A rejection without a counted value.
    pub(crate) fn new(reason: Reason, field: &str, detail: impl Into<String>) -> Self {
        Self {
            reason,
            field: field.to_string(),
            detail: detail.into(),
            value: None,
        }
    }

    /// With the raw value the summary counts (an unknown GPU's name).
    pub(crate) fn with_value(mut self, value: &str) -> Self {
        self.value = Some(value.to_string());
        self
    }
}

#[cfg(test)]
mod text_tests {
    use super::*;

    /// Every code as published before it was derived: quarantine files and ingest
    /// summaries hold it, and it never changes meaning between versions.
    const TEXT: [(Reason, &str); 28] = [
        (Reason::WrongColumnCount, "wrong_column_count"),
        (Reason::InvalidUtf8, "invalid_utf8"),
        (Reason::MissingField, "missing_field"),
        (Reason::UnknownKind, "unknown_kind"),
        (Reason::UnparseableDate, "unparseable_date"),
        (Reason::UnknownGpu, "unknown_gpu"),
        (Reason::UnknownScope, "unknown_scope"),
        (Reason::UnknownTerm, "unknown_term"),
        (Reason::UnparseablePrice, "unparseable_price"),
        (Reason::NonFinitePrice, "non_finite_price"),
        (Reason::NonPositivePrice, "non_positive_price"),
        (Reason::UnknownUnit, "unknown_unit"),
        (Reason::MissingGpusPerUnit, "missing_gpus_per_unit"),
        (Reason::InvalidNumber, "invalid_number"),
        (Reason::UnknownCurrency, "unknown_currency"),
        (Reason::NoFxRate, "no_fx_rate"),
        (Reason::MissingQuantity, "missing_quantity"),
        (Reason::InvalidQuantity, "invalid_quantity"),
        (Reason::UpfrontWithoutTerm, "upfront_without_term"),
        (Reason::UnknownOperatorTier, "unknown_operator_tier"),
        (Reason::ImplausibleDate, "implausible_date"),
        (Reason::ImplausiblePrice, "implausible_price"),
        (Reason::ImplausibleQuantity, "implausible_quantity"),
        (Reason::RecordTooLong, "record_too_long"),
        (Reason::FieldTooLong, "field_too_long"),
        (Reason::ControlCharacter, "control_character"),
        (Reason::RepeatedHeader, "repeated_header"),
        (Reason::TotalsRow, "totals_row"),
    ];

    #[test]
    fn text_forms_are_pinned_and_agree_with_serde() {
        assert_eq!(<Reason as strum::VariantArray>::VARIANTS.len(), TEXT.len());
        for (v, text) in TEXT {
            assert_eq!(v.as_str(), text);
            assert_eq!(v.to_string(), text);
            assert_eq!(serde_json::to_value(v).unwrap(), text);
        }
    }
}
