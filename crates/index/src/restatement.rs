//! Restatements: when a fixings file is written again (late data arrived, or the
//! methodology changed), the previous file is kept as a numbered version, each
//! changed fixing gets its publication number raised, and a restatement record
//! (old value, new value, reason) is appended beside the output. Nothing is
//! overwritten silently.

use crate::error::IndexError;
use crate::fixing::Fixing;
use crate::output::{fixings_table, read_fixings};
use chrono::NaiveDate;
use rentix_ingest::{Col, Table};
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
}

fn sibling(out: &Path, suffix: &str, ext: &str) -> PathBuf {
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    out.with_file_name(format!("{stem}{suffix}.{ext}"))
}

/// Compares `rows` with the file at `out` (if any), raises publication numbers of
/// changed rows, archives the old file and appends restatement records.
pub fn publish(out: &Path, rows: &mut [Fixing]) -> Result<Publication, IndexError> {
    let mut result = Publication::default();
    if !out.exists() {
        fixings_table(rows).write(out)?;
        return Ok(result);
    }
    let old = read_fixings(out)?;
    let old_by: BTreeMap<(NaiveDate, &str), &Fixing> = old
        .iter()
        .map(|f| ((f.date, f.grade.as_str()), f))
        .collect();
    for r in rows.iter_mut() {
        let Some(o) = old_by.get(&(r.date, r.grade.as_str())) else {
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
    let ext = out
        .extension()
        .map(|e| e.to_string_lossy().to_string())
        .unwrap_or_else(|| "csv".into());
    if !result.restatements.is_empty() {
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
        let log = sibling(out, "_restatements", "csv");
        let mut t = if log.exists() {
            read_log(&log)?
        } else {
            Table::new()
        };
        append_log(&mut t, &result.restatements);
        t.write(&log)?;
    }
    fixings_table(rows).write(out)?;
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
