//! Publication and restatements. A run publishes the fixings of a window of dates
//! (every date, or `--from D --to D` in the daily cycle) into the existing file:
//! rows outside the window are kept as they are, rows inside it are replaced, and
//! only rows whose value, inputs or methodology changed are restated. When anything
//! is restated the previous file is kept as a numbered version, each changed fixing
//! gets its publication number raised, and a restatement record (old value, new
//! value, reason) is appended beside the output. A published row that the new run no
//! longer produces is recorded as `withdrawn`. Nothing is overwritten silently.

use crate::error::IndexError;
use crate::fixing::{Fixing, IndexUnit};
use crate::output::{fixings_table, read_fixings};
use chrono::NaiveDate;
use rentix_core::{Grade, GradePattern};
use rentix_table::{Col, Table};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One restated fixing.
#[derive(Debug, Clone, PartialEq)]
pub struct Restatement {
    pub date: NaiveDate,
    pub grade: String,
    pub old_value: Option<f64>,
    pub new_value: Option<f64>,
    pub old_publication: u32,
    pub new_publication: u32,
    /// `late_data` (inputs changed), `methodology_change`, or `value_change`.
    pub reason: String,
}

/// What a publication did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Publication {
    pub restatements: Vec<Restatement>,
    /// Where the previous file was kept, when there was one and it changed.
    pub archived: Option<PathBuf>,
    /// The whole file as written: kept rows and the window's new rows, sorted by
    /// date then grade.
    pub rows: Vec<Fixing>,
    /// Rows of the window that were published for the first time.
    pub new_rows: usize,
}

/// What a run publishes: the dates `from..=to` (every date when open), and with
/// grade patterns only the grades they match (composites, which a subset of grades
/// cannot fix, are then left as they were).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Window {
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
    pub grades: Vec<GradePattern>,
}

impl Window {
    pub fn contains_date(&self, d: NaiveDate) -> bool {
        self.from.is_none_or(|f| d >= f) && self.to.is_none_or(|t| d <= t)
    }

    pub fn contains(&self, f: &Fixing) -> bool {
        self.contains_date(f.date)
            && (self.grades.is_empty()
                || (f.unit() == IndexUnit::UsdPerGpuHour
                    && f.grade
                        .parse::<Grade>()
                        .is_ok_and(|g| self.grades.iter().any(|p| p.matches(&g)))))
    }
}

fn sibling(out: &Path, suffix: &str, ext: &str) -> PathBuf {
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    out.with_file_name(format!("{stem}{suffix}.{ext}"))
}

/// The restatement log kept beside a fixings file: `<stem>_restatements.csv`.
pub fn restatements_path(fixings: &Path) -> PathBuf {
    sibling(fixings, "_restatements", "csv")
}

/// Reads a restatement log, typed; every row must parse.
pub fn read_restatements(path: &Path) -> Result<Vec<Restatement>, IndexError> {
    let bad = |row: usize, detail: String| IndexError::Fixings {
        path: path.to_path_buf(),
        row,
        detail,
    };
    let mut rdr = csv::Reader::from_path(path).map_err(|e| IndexError::Input {
        path: path.to_path_buf(),
        detail: e.to_string(),
    })?;
    let header: Vec<String> = rdr
        .headers()
        .map_err(|e| bad(0, e.to_string()))?
        .iter()
        .map(str::to_string)
        .collect();
    if header != LOG_COLUMNS {
        return Err(bad(
            0,
            format!("expected the columns {}", LOG_COLUMNS.join(",")),
        ));
    }
    let mut out = Vec::new();
    for (i, rec) in rdr.records().enumerate() {
        let row = i + 1;
        let rec = rec.map_err(|e| bad(row, e.to_string()))?;
        let field = |j: usize| rec.get(j).unwrap_or("");
        let value = |j: usize| -> Result<Option<f64>, IndexError> {
            let v = field(j);
            if v.is_empty() {
                return Ok(None);
            }
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .map(Some)
                .ok_or_else(|| bad(row, format!("{}: {v:?} is not a number", LOG_COLUMNS[j])))
        };
        let publication = |j: usize| -> Result<u32, IndexError> {
            field(j).parse::<u32>().map_err(|_| {
                bad(
                    row,
                    format!("{}: {:?} is not a count", LOG_COLUMNS[j], field(j)),
                )
            })
        };
        out.push(Restatement {
            date: NaiveDate::parse_from_str(field(0), "%Y-%m-%d")
                .map_err(|_| bad(row, format!("date: {:?} is not a date", field(0))))?,
            grade: field(1).to_string(),
            old_value: value(2)?,
            new_value: value(3)?,
            old_publication: publication(4)?,
            new_publication: publication(5)?,
            reason: field(6).to_string(),
        });
    }
    Ok(out)
}

/// The fixings as first published: each restated row gets back the value of its
/// earliest publication in the log (no value if it had none then). Rows the log does
/// not name were never restated and are returned as they are. Flags and counts are
/// today's: the log keeps values only.
pub fn first_published(fixings: &[Fixing], log: &[Restatement]) -> Vec<Fixing> {
    let mut first: BTreeMap<(NaiveDate, &str), &Restatement> = BTreeMap::new();
    for r in log {
        let slot = first.entry((r.date, r.grade.as_str())).or_insert(r);
        if r.old_publication < slot.old_publication {
            *slot = r;
        }
    }
    fixings
        .iter()
        .map(|f| {
            let mut f = f.clone();
            if let Some(r) = first.get(&(f.date, f.grade.as_str())) {
                f.value = r.old_value;
                f.publication = r.old_publication;
                if f.value.is_none() {
                    f.level = None;
                }
            }
            f
        })
        .collect()
}

/// Publishes `rows` (a run's fixings; only those inside `window` are used) into the
/// file at `out`: rows of the existing file outside the window are kept, rows inside
/// are replaced, changed rows are restated (publication number raised, old file
/// archived, restatement log appended).
pub fn publish(out: &Path, rows: Vec<Fixing>, window: Window) -> Result<Publication, IndexError> {
    let mut rows: Vec<Fixing> = rows.into_iter().filter(|r| window.contains(r)).collect();
    let mut result = Publication::default();
    let old = if out.exists() {
        read_fixings(out)?
    } else {
        Vec::new()
    };
    let old_by: BTreeMap<(NaiveDate, &str), &Fixing> = old
        .iter()
        .map(|f| ((f.date, f.grade.as_str()), f))
        .collect();
    let new_keys: std::collections::BTreeSet<(NaiveDate, &str)> =
        rows.iter().map(|f| (f.date, f.grade.as_str())).collect();
    let mut withdrawn = Vec::new();
    for o in old.iter().filter(|o| window.contains(o)) {
        if !new_keys.contains(&(o.date, o.grade.as_str())) {
            withdrawn.push(Restatement {
                date: o.date,
                grade: o.grade.clone(),
                old_value: o.value,
                new_value: None,
                old_publication: o.publication,
                new_publication: o.publication + 1,
                reason: "withdrawn".into(),
            });
        }
    }
    for r in rows.iter_mut() {
        let Some(o) = old_by.get(&(r.date, r.grade.as_str())) else {
            result.new_rows += 1;
            continue;
        };
        r.publication = o.publication;
        if o.value == r.value
            && o.input_sha256 == r.input_sha256
            && o.methodology_version == r.methodology_version
        {
            continue;
        }
        let reason = if o.methodology_version != r.methodology_version {
            "methodology_change"
        } else if o.input_sha256 != r.input_sha256 {
            "late_data"
        } else {
            "value_change"
        };
        r.publication = o.publication + 1;
        result.restatements.push(Restatement {
            date: r.date,
            grade: r.grade.clone(),
            old_value: o.value,
            new_value: r.value,
            old_publication: o.publication,
            new_publication: r.publication,
            reason: reason.into(),
        });
    }
    result.restatements.extend(withdrawn);
    result
        .restatements
        .sort_by(|a, b| (a.date, &a.grade).cmp(&(b.date, &b.grade)));
    let mut merged: Vec<Fixing> = old
        .iter()
        .filter(|o| !window.contains(o))
        .cloned()
        .chain(rows)
        .collect();
    merged.sort_by(|a, b| (a.date, &a.grade).cmp(&(b.date, &b.grade)));
    if !result.restatements.is_empty() {
        let ext = out
            .extension()
            .map(|e| e.to_string_lossy().to_string())
            .unwrap_or_else(|| "csv".into());
        let mut k = 1;
        let archived = loop {
            let p = sibling(out, &format!(".v{k}"), &ext);
            if !p.exists() {
                break p;
            }
            k += 1;
        };
        std::fs::copy(out, &archived).map_err(|e| IndexError::Input {
            path: archived.clone(),
            detail: e.to_string(),
        })?;
        result.archived = Some(archived);
        let log = restatements_path(out);
        let mut t = if log.exists() {
            read_log(&log)?
        } else {
            Table::new()
        };
        append_log(&mut t, &result.restatements);
        t.write(&log)?;
    }
    fixings_table(&merged).write(out)?;
    result.rows = merged;
    Ok(result)
}

const LOG_COLUMNS: [&str; 7] = [
    "date",
    "grade",
    "old_value",
    "new_value",
    "old_publication",
    "new_publication",
    "reason",
];

fn read_log(path: &Path) -> Result<Table, IndexError> {
    let mut rdr = csv::Reader::from_path(path).map_err(|e| IndexError::Input {
        path: path.to_path_buf(),
        detail: e.to_string(),
    })?;
    let mut cols: Vec<Vec<Option<String>>> = vec![Vec::new(); LOG_COLUMNS.len()];
    for rec in rdr.records() {
        let rec = rec.map_err(|e| IndexError::Input {
            path: path.to_path_buf(),
            detail: e.to_string(),
        })?;
        for (j, c) in cols.iter_mut().enumerate() {
            c.push(rec.get(j).map(str::to_string));
        }
    }
    let mut t = Table::new();
    for (n, c) in LOG_COLUMNS.iter().zip(cols) {
        t.push(n, Col::Str(c));
    }
    Ok(t)
}

fn append_log(t: &mut Table, rows: &[Restatement]) {
    if t.names.is_empty() {
        for n in LOG_COLUMNS {
            t.push(n, Col::Str(Vec::new()));
        }
    }
    let opt = |v: Option<f64>| v.map(|x| x.to_string());
    for r in rows {
        let cells = [
            Some(r.date.to_string()),
            Some(r.grade.clone()),
            opt(r.old_value),
            opt(r.new_value),
            Some(r.old_publication.to_string()),
            Some(r.new_publication.to_string()),
            Some(r.reason.clone()),
        ];
        for (c, v) in t.cols.iter_mut().zip(cells) {
            if let Col::Str(col) = c {
                col.push(v);
            }
        }
    }
}
