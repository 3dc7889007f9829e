//! A store partition as the fixing engine reads it: the nine columns it needs
//! ([`FIXING_COLUMNS`](crate::FIXING_COLUMNS)), typed, with the text ones that
//! repeat (kind, source, grade, operator tier) as codes into their distinct values.
//! Every invariant the engine relies on is checked, each distinct value parsed
//! once: a store file edited by hand is refused, not trusted.

use crate::error::{IngestError, Result};
use crate::schema::TimeCol;
use chrono::{DateTime, Utc};
use rentix_core::{GpuHours, Grade, ObservationKind, OperatorTier, UsdPerGpuHour};
use rentix_table::{Coded, Col, Table};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The text columns of a fixing read that repeat, read as codes.
pub const CODED_FIXING_COLUMNS: [&str; 4] = ["kind", "source", "grade", "operator_tier"];

/// One partition's observations, column by column (see the module).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FixingPart {
    pub path: PathBuf,
    pub dedupe_key: Vec<String>,
    pub kind: Vec<ObservationKind>,
    pub observed_at: Vec<DateTime<Utc>>,
    /// Codes into `sources`.
    pub source: Vec<u32>,
    pub sources: Vec<String>,
    /// Codes into `grades`.
    pub grade: Vec<u32>,
    pub grades: Vec<Grade>,
    pub usd_per_gpu_hour: Vec<f64>,
    pub quantity_gpu_hours: Vec<Option<f64>>,
    pub operator_tier: Vec<Option<OperatorTier>>,
}

impl FixingPart {
    pub fn len(&self) -> usize {
        self.dedupe_key.len()
    }

    pub fn is_empty(&self) -> bool {
        self.dedupe_key.is_empty()
    }
}

/// Reads a partition table (read with [`CODED_FIXING_COLUMNS`] coded) into a
/// [`FixingPart`], refusing any row the store could not have written.
pub fn fixing_part(t: Table, path: &Path) -> Result<FixingPart> {
    let bad = |row: usize, detail: String| IngestError::Store {
        path: path.to_path_buf(),
        detail: format!("row {}: {detail}", row + 1),
    };
    let missing = |name: &str| IngestError::Store {
        path: path.to_path_buf(),
        detail: format!("missing or mistyped column {name}"),
    };
    let mut cols: BTreeMap<String, Col> = t.names.into_iter().zip(t.cols).collect();
    // A repeated text column: each distinct value parsed once (one that does not
    // parse is refused at its first row) and, when `required`, no row empty.
    let mut parsed = |name: &str,
                      required: bool,
                      parse: &dyn Fn(&str) -> std::result::Result<(), String>|
     -> Result<Coded> {
        let Some(Col::Coded(c)) = cols.remove(name) else {
            return Err(missing(name));
        };
        let first_row = |code: Option<u32>| c.codes.iter().position(|x| *x == code).unwrap_or(0);
        for (k, v) in c.values.iter().enumerate() {
            parse(v).map_err(|e| bad(first_row(Some(k as u32)), e))?;
        }
        if required && c.codes.contains(&None) {
            return Err(bad(first_row(None), format!("{name} is empty")));
        }
        Ok(c)
    };
    let kind = parsed("kind", true, &|s| {
        s.parse::<ObservationKind>()
            .map(drop)
            .map_err(|e| e.to_string())
    })?;
    let source = parsed("source", true, &|_| Ok(()))?;
    let grade = parsed("grade", true, &|s| {
        s.parse::<Grade>().map(drop).map_err(|e| e.to_string())
    })?;
    let tier = parsed("operator_tier", false, &|s| {
        s.parse::<OperatorTier>()
            .map(drop)
            .map_err(|e| e.to_string())
    })?;
    let Some(Col::Str(keys)) = cols.remove("dedupe_key") else {
        return Err(missing("dedupe_key"));
    };
    let f64_col = |name: &str| -> Result<&[Option<f64>]> {
        match cols.get(name) {
            Some(Col::F64(v)) => Ok(v),
            _ => Err(missing(name)),
        }
    };
    let (usd, qty) = (f64_col("usd_per_gpu_hour")?, f64_col("quantity_gpu_hours")?);
    let at = TimeCol::of(&cols, "observed_at", path)?;
    let fixing_date = TimeCol::of(&cols, "fixing_date", path)?;
    // Checked above: every value parses and required codes are present.
    fn all<T>(values: &[String], parse: impl Fn(&str) -> Option<T>) -> Option<Vec<T>> {
        values.iter().map(|v| parse(v)).collect()
    }
    fn rows<T: Copy>(codes: &[Option<u32>], values: &[T]) -> Option<Vec<T>> {
        codes
            .iter()
            .map(|c| c.and_then(|c| values.get(c as usize).copied()))
            .collect()
    }
    let kinds = all(&kind.values, |s| s.parse().ok()).ok_or_else(|| missing("kind"))?;
    let tiers: Vec<OperatorTier> =
        all(&tier.values, |s| s.parse().ok()).ok_or_else(|| missing("operator_tier"))?;
    let code_of = |codes: &[Option<u32>], name: &str| -> Result<Vec<u32>> {
        codes
            .iter()
            .map(|c| c.ok_or_else(|| missing(name)))
            .collect()
    };
    let mut out = FixingPart {
        path: path.to_path_buf(),
        kind: rows(&kind.codes, &kinds).ok_or_else(|| missing("kind"))?,
        source: code_of(&source.codes, "source")?,
        grade: code_of(&grade.codes, "grade")?,
        grades: all(&grade.values, |s| s.parse().ok()).ok_or_else(|| missing("grade"))?,
        sources: source.values,
        operator_tier: tier
            .codes
            .iter()
            .map(|c| c.and_then(|c| tiers.get(c as usize).copied()))
            .collect(),
        ..Default::default()
    };
    let height = keys.len();
    out.dedupe_key.reserve(height);
    out.observed_at.reserve(height);
    out.usd_per_gpu_hour.reserve(height);
    out.quantity_gpu_hours.reserve(height);
    for (r, key) in keys.into_iter().enumerate() {
        out.dedupe_key
            .push(key.ok_or_else(|| bad(r, "dedupe_key is empty".into()))?);
        out.observed_at.push(
            at.instant(r)
                .map_err(|e| bad(r, format!("observed_at: {e}")))?
                .ok_or_else(|| bad(r, "observed_at is empty".into()))?,
        );
        fixing_date
            .date(r)
            .map_err(|e| bad(r, format!("fixing_date: {e}")))?
            .ok_or_else(|| bad(r, "fixing_date is empty".into()))?;
        out.usd_per_gpu_hour.push(
            UsdPerGpuHour::positive(usd.get(r).copied().flatten().unwrap_or(f64::NAN))
                .map_err(|e| bad(r, e.to_string()))?
                .get(),
        );
        out.quantity_gpu_hours.push(
            qty.get(r)
                .copied()
                .flatten()
                .map(|q| GpuHours::new(q).map(|q| q.get()))
                .transpose()
                .map_err(|e| bad(r, e.to_string()))?,
        );
    }
    Ok(out)
}
