//! Forward curves to and from files (CSV or Parquet by extension). The fixings
//! file itself is `rentix-fixings`'.

use crate::error::IndexError;
use crate::forward::ForwardPoint;
use chrono::NaiveDate;
use rentix_fixings::{records, sufficient_cell};
use rentix_table::{Col, Table};
use std::path::Path;

fn s(v: impl Iterator<Item = String>) -> Col {
    Col::Str(v.map(Some).collect())
}

/// `<stem>_forward.<ext>` as a table: one row per [`ForwardPoint`], columns named
/// as its fields.
pub fn forward_table(rows: &[ForwardPoint]) -> Table {
    let mut t = Table::new();
    t.push("date", Col::dates(rows.iter().map(|r| r.date)));
    t.push("gpu", s(rows.iter().map(|r| r.gpu.clone())));
    t.push("scope", s(rows.iter().map(|r| r.scope.clone())));
    t.push("term", s(rows.iter().map(|r| r.term.clone())));
    t.push(
        "tenor_months",
        Col::F64(rows.iter().map(|r| Some(r.tenor_months)).collect()),
    );
    t.push(
        "value",
        Col::F64(rows.iter().map(|r| Some(r.value)).collect()),
    );
    t.push(
        "level",
        Col::I64(rows.iter().map(|r| Some(i64::from(r.level))).collect()),
    );
    t.push(
        "sufficient",
        Col::Bool(rows.iter().map(|r| Some(r.sufficient)).collect()),
    );
    t
}

/// Reads a forward-curve file written by `rentix index` (CSV or Parquet).
pub fn read_forward(path: &Path) -> Result<Vec<ForwardPoint>, IndexError> {
    let bad = |row: usize, detail: String| IndexError::Fixings {
        path: path.to_path_buf(),
        row,
        detail,
    };
    let records = records(path)?;
    records
        .rows
        .iter()
        .enumerate()
        .map(|(n, rec)| {
            let row = n + 1;
            let get = |name: &str| -> Result<&str, IndexError> {
                records
                    .get(rec, name)
                    .ok_or_else(|| bad(row, format!("missing column {name}")))
            };
            let num = |name: &str| -> Result<f64, IndexError> {
                get(name)?
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| bad(row, format!("{name} is not a number")))
            };
            Ok(ForwardPoint {
                date: NaiveDate::parse_from_str(get("date")?, "%Y-%m-%d")
                    .map_err(|e| bad(row, format!("date: {e}")))?,
                gpu: get("gpu")?.to_string(),
                scope: get("scope")?.to_string(),
                term: get("term")?.to_string(),
                tenor_months: num("tenor_months")?,
                value: num("value")?,
                level: get("level")?
                    .parse()
                    .map_err(|_| bad(row, "level is not a count".into()))?,
                sufficient: sufficient_cell(get("sufficient")?)
                    .ok_or_else(|| bad(row, "sufficient: not true or false".into()))?,
            })
        })
        .collect()
}
