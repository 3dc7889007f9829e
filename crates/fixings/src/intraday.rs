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

/// The `votes_p25_p75` cell (`p25;p75`, empty: none).
fn quartiles_of(q: &str) -> Result<Option<(f64, f64)>, String> {
    if q.is_empty() {
        return Ok(None);
    }
    let wrong = || format!("votes_p25_p75: {q:?} is not p25;p75");
    let (a, b) = q.split_once(';').ok_or_else(wrong)?;
    let num = |x: &str| x.parse::<f64>().map_err(|_| wrong());
    Ok(Some((num(a)?, num(b)?)))
}

/// Whether `path` is an intraday fixings file (it has a `fixed_at` column).
pub fn is_intraday_file(path: &Path) -> Result<bool, FixingsError> {
    let r = crate::file::records(path)?;
    Ok(r.index.contains_key("fixed_at") && !r.index.contains_key("level"))
}

/// Reads an intraday fixings file ([`INTRADAY_COLUMNS`]), CSV or Parquet.
///
/// A file that cannot be a publication is refused, naming the row: a value or band
/// that is not a positive price (a band of 0 is a panel that agrees), a `date`
/// that is not the day its stamp's interval starts in, a grade and stamp given
/// twice, or rows of two methodology versions.
pub fn read_intraday(path: &Path) -> Result<Vec<IntradayFixing>, FixingsError> {
    Ok(read_intraday_versioned(path)?.0)
}

/// Whether a row's `date` is the day its stamp's interval starts in: a stamp at
/// 00:00 closes the interval of the day before, or (a slot label, `label =
/// "slot"`) opens its own day's: one or the other for a whole file, as its first
/// 00:00 stamp says (`slots` remembers). `Err` gives the day it should be.
fn day_fits(
    date: NaiveDate,
    fixed_at: DateTime<Utc>,
    slots: &mut Option<bool>,
) -> Result<(), NaiveDate> {
    let day = (fixed_at - chrono::Duration::microseconds(1)).date_naive();
    let slot_day = fixed_at.date_naive();
    let fits = match *slots {
        _ if day == slot_day => date == day,
        None if date == day || date == slot_day => {
            *slots = Some(date == slot_day);
            true
        }
        None => false,
        Some(true) => date == slot_day,
        Some(false) => date == day,
    };
    match (fits, *slots) {
        (true, _) => Ok(()),
        (false, Some(true)) => Err(slot_day),
        (false, _) => Err(day),
    }
}

/// [`read_intraday`] and the file's one `methodology_version` (`None`: no rows).
pub fn read_intraday_versioned(
    path: &Path,
) -> Result<(Vec<IntradayFixing>, Option<String>), FixingsError> {
    let r = crate::file::records(path)?;
    let mut version: Option<String> = None;
    let mut seen: std::collections::HashSet<(String, DateTime<Utc>)> =
        std::collections::HashSet::with_capacity(r.rows.len());
    let bad = |row: usize, detail: String| FixingsError::Fixings {
        path: path.to_path_buf(),
        row,
        detail,
    };
    let mut out = Vec::with_capacity(r.rows.len());
    // Whether the file's stamps label their interval's start (slots), once a 00:00
    // stamp has said.
    let mut slots: Option<bool> = None;
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
        let stamp = get("fixed_at")?;
        let fixed_at = DateTime::parse_from_rfc3339(stamp)
            .map_err(|e| {
                bad(
                    row,
                    format!("fixed_at: {stamp:?} is not an RFC 3339 time with seconds and an offset, such as 2025-06-01T00:15:00Z ({e})"),
                )
            })?
            .with_timezone(&Utc);
        let v = get("value")?;
        let value = if v.is_empty() {
            None
        } else {
            Some(crate::file::plausible_value(v).map_err(|e| bad(row, e))?)
        };
        if let Err(starts) = day_fits(date, fixed_at, &mut slots) {
            return Err(bad(
                row,
                format!("date {date} is not the day of its stamp {fixed_at} (its interval starts on {starts})"),
            ));
        }
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
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| bad(row, format!("band: {b:?} is not a distance (>= 0)")))?,
            ),
        };
        if !seen.insert((grade.to_string(), fixed_at)) {
            return Err(bad(
                row,
                format!("{grade} at {fixed_at} is given twice: one stamp, one row"),
            ));
        }
        let v = get("methodology_version")?;
        match &version {
            None => version = Some(v.to_string()),
            Some(w) if w != v => {
                return Err(bad(
                    row,
                    format!("methodology_version {v:?} after {w:?}: a file holds one methodology"),
                ))
            }
            Some(_) => {}
        }
        let quartiles = quartiles_of(r.get(rec, "votes_p25_p75").unwrap_or(""))
            .map_err(|detail| bad(row, detail))?;
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
    Ok((out, version))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "date,fixed_at,grade,value,band,votes_p25_p75,method,n_contributors,n_observed,n_carried,n_rejected,sufficient,flags,methodology_version\n";

    fn row(date: &str, at: &str, value: &str) -> String {
        format!("{date},{at},h100/vm/on-demand,{value},0.01,2.2;2.3,intraday,5,5,0,0,true,,m-15m\n")
    }

    fn read(body: &str) -> Result<Vec<IntradayFixing>, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.csv");
        std::fs::write(&path, format!("{HEAD}{body}")).unwrap();
        read_intraday(&path).map_err(|e| e.to_string())
    }

    /// The backtest settled May on a file with one stamp given twice (2.348
    /// instead of 2.218) and on a stamp of -2.5: both are refused, naming the row.
    #[test]
    fn a_file_that_cannot_be_a_publication_is_refused_naming_the_row() {
        let a = row("2025-05-01", "2025-05-01T00:15:00Z", "2.2");
        let b = row("2025-05-01", "2025-05-02T00:00:00Z", "2.3");
        assert_eq!(read(&format!("{a}{b}")).unwrap().len(), 2);
        let err = read(&format!("{a}{b}{a}")).unwrap_err();
        assert!(
            err.contains("row 3") && err.contains("given twice"),
            "{err}"
        );
        let err = read(&row("2025-05-01", "2025-05-01T00:15:00Z", "-2.5")).unwrap_err();
        assert!(err.contains("not a positive number"), "{err}");
        let err = read(&row("2025-05-01", "2025-05-01T00:15:00Z", "0")).unwrap_err();
        assert!(err.contains("not a positive number"), "{err}");
        // A hostile run's stamp of 1e300 settled a period at 1e298, "settled".
        let err = read(&row("2025-05-01", "2025-05-01T00:15:00Z", "1e300")).unwrap_err();
        assert!(
            err.contains("row 1") && err.contains("outside 1e-6 to 1e6"),
            "{err}"
        );
        // 00:00 closes the day before (dated the 1st) or, in a slot-labelled file,
        // opens its own (dated the 2nd): one convention a file, never a day that is
        // neither.
        assert_eq!(
            read(&row("2025-05-02", "2025-05-02T00:00:00Z", "2.3"))
                .unwrap()
                .len(),
            1
        );
        let slot = row("2025-05-03", "2025-05-03T00:00:00Z", "2.3");
        let err = read(&format!("{b}{slot}")).unwrap_err();
        assert!(
            err.contains("row 2") && err.contains("not the day of its stamp"),
            "{err}"
        );
        let err = read(&row("2025-04-30", "2025-05-02T00:00:00Z", "2.3")).unwrap_err();
        assert!(err.contains("not the day of its stamp"), "{err}");
        let err = read(&format!("{a}{}", b.replace("m-15m", "n-15m"))).unwrap_err();
        assert!(err.contains("one methodology"), "{err}");
        let err = read(&a.replace(",0.01,", ",-0.01,")).unwrap_err();
        assert!(err.contains("band"), "{err}");
    }
}
