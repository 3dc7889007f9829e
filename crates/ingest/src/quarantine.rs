//! The quarantine: every refused row with its original fields, file, row number,
//! reason code, the field at fault and a one-line explanation.

use crate::error::Result;
use crate::reason::Reason;
use rentix_table::{Col, Table};
use std::collections::BTreeMap;
use std::path::Path;

/// One refused row.
#[derive(Debug, Clone, PartialEq)]
pub struct QuarantineRow {
    /// The input file the row came from.
    pub file: String,
    /// 1-based data row (the header is row 0).
    pub row: u64,
    /// Why it was refused.
    pub reason: Reason,
    /// The canonical field at fault, the input column (`invalid_utf8`), or empty
    /// for a record refused whole (`wrong_column_count`).
    pub field: String,
    /// What was wrong, for a person.
    pub detail: String,
    /// Every original field as (column, text), in file order.
    pub raw: Vec<(String, String)>,
}

/// Collects refused rows of a run and writes them sorted by file and row.
#[derive(Debug, Default)]
pub struct QuarantineWriter {
    rows: Vec<QuarantineRow>,
}

impl QuarantineWriter {
    /// Adds a refused row.
    pub fn push(&mut self, row: QuarantineRow) {
        self.rows.push(row);
    }

    /// Rows refused so far.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether no row was refused.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Rows refused from input `file` (as [`QuarantineRow::file`] names it).
    pub fn count_for(&self, file: &str) -> u64 {
        self.rows.iter().filter(|r| r.file == file).count() as u64
    }

    /// Rows refused per reason.
    pub fn counts(&self) -> BTreeMap<Reason, u64> {
        let mut m = BTreeMap::new();
        for r in &self.rows {
            *m.entry(r.reason).or_default() += 1;
        }
        m
    }

    /// The rows, in the order pushed (sorted only when written).
    pub fn rows(&self) -> &[QuarantineRow] {
        &self.rows
    }

    /// Writes `file,row,reason,field,detail,raw` where `raw` is a JSON object of the
    /// original fields. Written even when empty, so that every run has one.
    pub fn write(&mut self, path: &Path) -> Result<()> {
        self.rows
            .sort_by(|a, b| (&a.file, a.row, a.reason).cmp(&(&b.file, b.row, b.reason)));
        let raw_json = |r: &QuarantineRow| {
            let obj: serde_json::Map<String, serde_json::Value> = r
                .raw
                .iter()
                .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                .collect();
            serde_json::Value::Object(obj).to_string()
        };
        let mut t = Table::new();
        t.push(
            "file",
            Col::Str(self.rows.iter().map(|r| Some(r.file.clone())).collect()),
        );
        t.push(
            "row",
            Col::I64(self.rows.iter().map(|r| Some(r.row as i64)).collect()),
        );
        t.push(
            "reason",
            Col::Str(
                self.rows
                    .iter()
                    .map(|r| Some(r.reason.to_string()))
                    .collect(),
            ),
        );
        t.push(
            "field",
            Col::Str(self.rows.iter().map(|r| Some(r.field.clone())).collect()),
        );
        t.push(
            "detail",
            Col::Str(self.rows.iter().map(|r| Some(r.detail.clone())).collect()),
        );
        t.push(
            "raw",
            Col::Str(self.rows.iter().map(|r| Some(raw_json(r))).collect()),
        );
        Ok(t.write(path)?)
    }
}
