//! A store partition as the fixing engine reads it: the ten columns it needs
//! ([`FIXING_INPUT_COLUMNS`](crate::schema::FIXING_INPUT_COLUMNS)), typed, with the text ones that
//! repeat (kind, source, grade, operator tier) as codes into their distinct values.
//! Every invariant the engine relies on is checked, each distinct value parsed
//! once: a store file edited by hand is refused, not trusted.

use crate::error::{Result, StoreError};
use crate::schema::TimeCol;
use chrono::{DateTime, NaiveDate, Utc};
use rentix_core::{GpuHours, Grade, ObservationKind, OperatorTier, UsdPerGpuHour};
use rentix_table::{Coded, Col, Table};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The text columns of a fixing read that repeat, read as codes.
pub(crate) const CODED_FIXING_COLUMNS: [&str; 5] =
    ["kind", "source", "grade", "region", "operator_tier"];

/// One partition's observations, column by column (see the module).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FixingPart {
    /// The partition file read, for errors.
    pub path: PathBuf,
    /// Each row's dedupe key (never empty): the store's 32 hexadecimal digits
    /// read into their 128 bits here, on the reading thread, not by each reader
    /// of the part (a key of other text, from a store edited by hand, is kept as
    /// its text for the reader to refuse).
    pub dedupe_key: Vec<rentix_core::Id>,
    /// Each row's kind: trade, firm offer or listing.
    pub kind: Vec<ObservationKind>,
    /// Each row's observation time, UTC.
    pub observed_at: Vec<DateTime<Utc>>,
    /// Each row's fixing date as stored (under the cut-off it was ingested with;
    /// the engine works its own out from `observed_at`).
    pub fixing_date: Vec<NaiveDate>,
    /// Codes into `sources`.
    pub source: Vec<u32>,
    /// The distinct contributor names as stored (raw spellings).
    pub sources: Vec<String>,
    /// Codes into `grades`.
    pub grade: Vec<u32>,
    /// The distinct grades, each with the row's region (`GPU/SCOPE/TERM@region`)
    /// when it has one.
    pub grades: Vec<Grade>,
    /// Each row's price, USD per GPU-hour (finite, > 0).
    pub usd_per_gpu_hour: Vec<f64>,
    /// Each row's volume in GPU-hours (>= 0); `None` when the row had none.
    pub quantity_gpu_hours: Vec<Option<f64>>,
    /// The GPUs each row's offer holds (> 0); `None` when the row said not.
    pub gpus_per_unit: Vec<Option<u32>>,
    /// Each row's operator tier; `None` when unrated.
    pub operator_tier: Vec<Option<OperatorTier>>,
}

impl FixingPart {
    /// Rows held.
    pub fn len(&self) -> usize {
        self.dedupe_key.len()
    }

    /// Whether no row is held.
    pub fn is_empty(&self) -> bool {
        self.dedupe_key.is_empty()
    }

    /// Keeps the rows whose `keep` is true.
    fn retain(&mut self, keep: &[bool]) {
        fn by<T>(v: &mut Vec<T>, keep: &[bool]) {
            let mut k = keep.iter();
            v.retain(|_| k.next().copied().unwrap_or(false));
        }
        by(&mut self.dedupe_key, keep);
        by(&mut self.kind, keep);
        by(&mut self.observed_at, keep);
        by(&mut self.fixing_date, keep);
        by(&mut self.source, keep);
        by(&mut self.grade, keep);
        by(&mut self.usd_per_gpu_hour, keep);
        by(&mut self.quantity_gpu_hours, keep);
        by(&mut self.gpus_per_unit, keep);
        by(&mut self.operator_tier, keep);
    }
}

/// Each row's grade with its region (see [`with_region`](crate::schema::with_region)):
/// codes into the distinct (grade, region) pairs, each checked once. An empty
/// `region` column (a store whose grades carried their region) keeps the codes.
fn regional_grades(
    grade: &Coded,
    grades: Vec<Grade>,
    region: &Coded,
    bad: impl Fn(usize, String) -> StoreError,
) -> Result<(Vec<u32>, Vec<Grade>)> {
    let height = grade.codes.len();
    let mut codes = Vec::with_capacity(height);
    if region.codes.is_empty() {
        for (r, c) in grade.codes.iter().enumerate() {
            codes.push(c.ok_or_else(|| bad(r, "grade is empty".into()))?);
        }
        return Ok((codes, grades));
    }
    if region.codes.len() != height {
        return Err(bad(
            0,
            "the region column is not as long as the grade column".into(),
        ));
    }
    // Pair (grade code, region code or none) -> code into `out`, built on first use.
    let width = region.values.len() + 1;
    let mut pair: Vec<Option<u32>> = vec![None; grades.len() * width];
    let mut out: Vec<Grade> = Vec::new();
    for r in 0..height {
        let g = grade.codes[r].ok_or_else(|| bad(r, "grade is empty".into()))? as usize;
        let k = region.codes[r].map_or(0, |c| c as usize + 1);
        let slot = g * width + k;
        let code = match pair.get(slot).copied().flatten() {
            Some(c) => c,
            None => {
                let base = grades
                    .get(g)
                    .cloned()
                    .ok_or_else(|| bad(r, "grade code out of range".into()))?;
                let with =
                    crate::schema::with_region(base, region.get(r)).map_err(|e| bad(r, e))?;
                let c = out.len() as u32;
                out.push(with);
                if let Some(p) = pair.get_mut(slot) {
                    *p = Some(c);
                }
                c
            }
        };
        codes.push(code);
    }
    Ok((codes, out))
}

/// Reads a partition table (read with [`CODED_FIXING_COLUMNS`] coded) into a
/// [`FixingPart`], refusing any row the store could not have written.
pub(crate) fn fixing_part(t: Table, path: &Path) -> Result<FixingPart> {
    fixing_part_in(t, path, None, None)
}

/// [`fixing_part`] keeping only the rows of fixing dates `from..=to` (an open end is
/// no bound): a month's file read for the days a run needs of it.
#[allow(
    clippy::too_many_lines,
    reason = "a column codec: one step per column of FIXING_INPUT_COLUMNS, in order; split, it would hand the decoded columns between steps"
)]
pub(crate) fn fixing_part_in(
    t: Table,
    path: &Path,
    from: Option<NaiveDate>,
    to: Option<NaiveDate>,
) -> Result<FixingPart> {
    let bad = |row: usize, detail: String| StoreError::Store {
        path: path.to_path_buf(),
        detail: format!("row {}: {detail}", row + 1),
    };
    let missing = |name: &str| StoreError::Store {
        path: path.to_path_buf(),
        detail: format!("missing or mistyped column {name}"),
    };
    let mut cols: BTreeMap<String, Col> = t.names.into_iter().zip(t.cols).collect();
    // A repeated text column: each distinct value parsed once (one that does not
    // parse is refused at its first row) and, when `required`, no row empty.
    let mut decode = |name: &str, required: bool| -> Result<Coded> {
        let Some(Col::Coded(c)) = cols.remove(name) else {
            return Err(missing(name));
        };
        if required {
            if let Some(r) = c.codes.iter().position(Option::is_none) {
                return Err(bad(r, format!("{name} is empty")));
            }
        }
        Ok(c)
    };
    let (kind, source, grade, tier) = (
        decode("kind", true)?,
        decode("source", true)?,
        decode("grade", true)?,
        decode("operator_tier", false)?,
    );
    fn values<T>(
        c: &Coded,
        parse: impl Fn(&str) -> std::result::Result<T, String>,
        bad: impl Fn(usize, String) -> StoreError,
    ) -> Result<Vec<T>> {
        c.values
            .iter()
            .enumerate()
            .map(|(k, v)| {
                parse(v).map_err(|e| {
                    let first = c.codes.iter().position(|x| *x == Some(k as u32));
                    bad(first.unwrap_or(0), e)
                })
            })
            .collect()
    }
    let kinds: Vec<ObservationKind> =
        values(&kind, |s| s.parse().map_err(|e| format!("{e}")), bad)?;
    let grades: Vec<Grade> = values(&grade, |s| s.parse().map_err(|e| format!("{e}")), bad)?;
    let region = match cols.remove("region") {
        Some(Col::Coded(c)) => c,
        // Absent from a store whose grades carried their region.
        None => Coded::default(),
        Some(_) => return Err(missing("region")),
    };
    let (grade_codes, grades) = regional_grades(&grade, grades, &region, bad)?;
    let tiers: Vec<OperatorTier> = values(&tier, |s| s.parse().map_err(|e| format!("{e}")), bad)?;
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
    let gpus = match cols.get("gpus_per_unit") {
        Some(Col::I64(v)) => v.as_slice(),
        _ => return Err(missing("gpus_per_unit")),
    };
    let at = TimeCol::of(&cols, "observed_at", path)?;
    let fixing_date = TimeCol::of(&cols, "fixing_date", path)?;
    // Codes are present (checked above) and index their values (built that way).
    let required = |c: &Coded, name: &str| -> Result<Vec<u32>> {
        c.codes
            .iter()
            .map(|x| x.ok_or_else(|| missing(name)))
            .collect()
    };
    let mut out = FixingPart {
        path: path.to_path_buf(),
        kind: required(&kind, "kind")?
            .into_iter()
            .map(|c| {
                kinds
                    .get(c as usize)
                    .copied()
                    .ok_or_else(|| missing("kind"))
            })
            .collect::<Result<_>>()?,
        source: required(&source, "source")?,
        grade: grade_codes,
        grades,
        sources: source.values,
        operator_tier: tier
            .codes
            .iter()
            .map(|c| c.and_then(|c| tiers.get(c as usize).copied()))
            .collect(),
        ..Default::default()
    };
    let height = keys.len();
    let mut keep = Vec::with_capacity(height);
    out.dedupe_key.reserve(height);
    out.observed_at.reserve(height);
    out.fixing_date.reserve(height);
    out.usd_per_gpu_hour.reserve(height);
    out.quantity_gpu_hours.reserve(height);
    out.gpus_per_unit.reserve(height);
    for (r, key) in keys.into_iter().enumerate() {
        let key = key.ok_or_else(|| bad(r, "dedupe_key is empty".into()))?;
        out.dedupe_key.push(rentix_core::Id::new(&key));
        out.observed_at.push(
            at.instant(r)
                .map_err(|e| bad(r, format!("observed_at: {e}")))?
                .ok_or_else(|| bad(r, "observed_at is empty".into()))?,
        );
        let day = fixing_date
            .date(r)
            .map_err(|e| bad(r, format!("fixing_date: {e}")))?
            .ok_or_else(|| bad(r, "fixing_date is empty".into()))?;
        keep.push(!(from.is_some_and(|f| day < f) || to.is_some_and(|t| day > t)));
        out.fixing_date.push(day);
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
        out.gpus_per_unit
            .push(match gpus.get(r).copied().flatten() {
                None => None,
                Some(n) => {
                    Some(u32::try_from(n).ok().filter(|n| *n > 0).ok_or_else(|| {
                        bad(r, format!("gpus_per_unit {n} is not a count of GPUs"))
                    })?)
                }
            });
    }
    if keep.contains(&false) {
        out.retain(&keep);
    }
    Ok(out)
}
