//! Intraday fixings as published: one row per grade and stamp (`fixed_at`), the
//! file an intraday methodology writes, read back by the backtest and the report.

use crate::error::FixingsError;
use chrono::{DateTime, NaiveDate, Utc};
use std::path::Path;

/// Columns of an intraday fixings file, in order.
pub const INTRADAY_COLUMNS: [&str; 14] = [
    "date",
    "fixed_at",
    "grade",
    "value",
    "band",
    "votes_p25_p75",
    "method",
    "n_contributors",
    "n_observed",
    "n_carried",
    "n_rejected",
    "sufficient",
    "flags",
    "methodology_version",
];

/// One intraday fixing.
#[derive(Debug, Clone, PartialEq)]
pub struct IntradayFixing {
    /// The day the stamp's interval starts in (a 24:00 stamp belongs to the day it
    /// ends).
    pub date: NaiveDate,
    /// The stamp `t`, the end of the interval `(t - cadence, t]` read.
    pub fixed_at: DateTime<Utc>,
    /// Grade key, regions pooled (`GPU/SCOPE/TERM`).
    pub grade: String,
    /// USD per GPU-hour; `None` when fewer than `min_panel` contributors were
    /// observed (`thin_panel`). `sufficient` is written as its presence.
    pub value: Option<f64>,
    /// The larger distance from the value to the weighted 25th or 75th percentile
    /// of the votes (rounded like the value): how far the panel spreads.
    pub band: Option<f64>,
    /// The weighted 25th and 75th percentiles of the votes, `p25;p75`.
    pub quartiles: Option<(f64, f64)>,
    /// Contributors voting: a vote within `max_carry` and a weight.
    pub n_contributors: usize,
    /// Voters accepted at this stamp or whose last accepted print is younger than
    /// `window`.
    pub n_observed: usize,
    /// Voters on an older print, or whose print at this stamp was rejected.
    pub n_carried: usize,
    /// Prints the screens rejected at this stamp.
    pub n_rejected: usize,
    /// `;`-joined: `cap_not_held`, `thin_panel`, `carried_votes`.
    pub flags: String,
}

/// Whether `path` is an intraday fixings file (it has a `fixed_at` column).
pub fn is_intraday_file(path: &Path) -> Result<bool, FixingsError> {
    let r = crate::file::records(path)?;
    Ok(r.index.contains_key("fixed_at") && !r.index.contains_key("level"))
}

/// Reads an intraday fixings file ([`INTRADAY_COLUMNS`]), CSV or Parquet.
pub fn read_intraday(path: &Path) -> Result<Vec<IntradayFixing>, FixingsError> {
    let r = crate::file::records(path)?;
    let bad = |row: usize, detail: String| FixingsError::Fixings {
        path: path.to_path_buf(),
        row,
        detail,
    };
    let mut out = Vec::with_capacity(r.rows.len());
    for (n, rec) in r.rows.iter().enumerate() {
        let row = n + 1;
        let get = |name: &str| {
            r.get(rec, name)
                .ok_or_else(|| bad(row, format!("missing column {name}")))
        };
        let count = |name: &str| -> Result<usize, FixingsError> {
            let v = get(name)?;
            v.parse()
                .map_err(|_| bad(row, format!("{name}: {v:?} is not a count")))
        };
        let date = NaiveDate::parse_from_str(get("date")?, "%Y-%m-%d")
            .map_err(|e| bad(row, format!("date: {e}")))?;
        let fixed_at = DateTime::parse_from_rfc3339(get("fixed_at")?)
            .map_err(|e| bad(row, format!("fixed_at: {e}")))?
            .with_timezone(&Utc);
        let v = get("value")?;
        let value = if v.is_empty() {
            None
        } else {
            let x: f64 = v
                .parse()
                .map_err(|_| bad(row, format!("value: {v:?} is not a number")))?;
            if !x.is_finite() {
                return Err(bad(row, format!("value: {v:?} is not finite")));
            }
            Some(x)
        };
        let grade = get("grade")?;
        if grade.is_empty() || grade.len() > 200 {
            return Err(bad(
                row,
                "grade: empty or longer than 200 characters".into(),
            ));
        }
        // Files written before the band was published have neither column.
        let band = match r.get(rec, "band").unwrap_or("") {
            "" => None,
            b => Some(
                b.parse::<f64>()
                    .map_err(|_| bad(row, format!("band: {b:?} is not a number")))?,
            ),
        };
        let quartiles = match r.get(rec, "votes_p25_p75").unwrap_or("") {
            "" => None,
            q => {
                let (a, b) = q
                    .split_once(';')
                    .ok_or_else(|| bad(row, format!("votes_p25_p75: {q:?} is not p25;p75")))?;
                let num = |x: &str| {
                    x.parse::<f64>()
                        .map_err(|_| bad(row, format!("votes_p25_p75: {q:?} is not p25;p75")))
                };
                Some((num(a)?, num(b)?))
            }
        };
        out.push(IntradayFixing {
            date,
            fixed_at,
            grade: grade.to_string(),
            value,
            band,
            quartiles,
            n_contributors: count("n_contributors")?,
            n_observed: count("n_observed")?,
            n_carried: count("n_carried")?,
            n_rejected: count("n_rejected")?,
            flags: get("flags")?.to_string(),
        });
    }
    Ok(out)
}
