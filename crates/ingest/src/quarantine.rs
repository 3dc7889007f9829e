//! The quarantine: every refused row with its original fields, file, row number,
//! line (the row number a spreadsheet shows), reason code, the field at fault and a one-line explanation.

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
    /// The line of the file the record starts on (the header is line 1): the row
    /// number a spreadsheet shows for it.
    pub line: u64,
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

/// Refused rows held in memory before they are written to the spill files, at
/// most about (each holds its fields, a few hundred bytes to a few KB).
const HELD_ROWS: usize = 4096;

/// Collects refused rows of a run and writes them sorted by file and row. Memory
/// holds a few thousand rows: the rest are written, as the quarantine file's CSV
/// rows, to an anonymous temporary file per input file (a feed whose every row is
/// refused, millions of them, used to be held whole: 12 GB for 3.2M rows).
#[derive(Debug, Default)]
pub struct QuarantineWriter {
    spills: BTreeMap<String, Spill>,
    counts: BTreeMap<Reason, u64>,
    by_file: BTreeMap<String, u64>,
    held: usize,
    total: usize,
}

/// One input file's refused rows: those written, in order, and those held.
#[derive(Debug, Default)]
struct Spill {
    file: Option<std::fs::File>,
    held: Vec<QuarantineRow>,
    /// The row number of the last row written: later rows may not come before it.
    written_through: Option<u64>,
}

impl QuarantineWriter {
    /// Adds a refused row. Rows of one file come in row order (a file is staged in
    /// order); one that comes before a row already written is an error, never a
    /// file out of order.
    pub fn push(&mut self, row: QuarantineRow) -> Result<()> {
        *self.counts.entry(row.reason).or_default() += 1;
        *self.by_file.entry(row.file.clone()).or_default() += 1;
        self.total += 1;
        let spill = self.spills.entry(row.file.clone()).or_default();
        if spill.written_through.is_some_and(|w| row.row <= w) {
            return Err(crate::error::IngestError::Accounting(format!(
                "quarantine row {} of {} came after row {:?} was written",
                row.row, row.file, spill.written_through
            )));
        }
        spill.held.push(row);
        self.held += 1;
        if self.held >= HELD_ROWS {
            for spill in self.spills.values_mut() {
                spill.write_held(false)?;
            }
            self.held = self.spills.values().map(|s| s.held.len()).sum();
        }
        Ok(())
    }

    /// Rows refused so far.
    pub fn len(&self) -> usize {
        self.total
    }

    /// Whether no row was refused.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Rows refused from `file` (its name as the rows give it).
    pub fn count_for(&self, file: &str) -> u64 {
        self.by_file.get(file).copied().unwrap_or(0)
    }

    /// Rows refused, by reason.
    pub fn counts(&self) -> BTreeMap<Reason, u64> {
        self.counts.clone()
    }

    /// Writes every refused row as CSV to `path` (atomically), sorted by file, row
    /// and reason (rows of one row and reason in the order they were refused):
    /// `file, row, line, reason, field, detail, raw` (`raw`: the original fields as a JSON
    /// object). Text cells are neutralized against formula injection.
    pub fn write(&mut self, path: &Path) -> Result<()> {
        let header = self.flush()?;
        let werr = |e: std::io::Error| rentix_table::TableError::Write {
            path: path.to_path_buf(),
            source: e,
        };
        let spills = &mut self.spills;
        rentix_table::write_atomic(path, |w| {
            w.write_all(&header).map_err(werr)?;
            copy_spills(spills, w).map_err(werr)
        })?;
        Ok(())
    }

    /// The bytes [`QuarantineWriter::write`] writes, in memory: for a caller that
    /// publishes them itself (the one-shot, in its publication's transaction).
    pub fn to_bytes(&mut self) -> Result<Vec<u8>> {
        let mut out = self.flush()?;
        copy_spills(&mut self.spills, &mut out).map_err(|e| crate::error::IngestError::Write {
            path: "<quarantine spill>".into(),
            source: e,
        })?;
        Ok(out)
    }

    /// Writes every held row to its spill; returns the file's header.
    fn flush(&mut self) -> Result<Vec<u8>> {
        for spill in self.spills.values_mut() {
            spill.write_held(true)?;
        }
        self.held = 0;
        Ok(rows_table(Vec::new()).csv_header()?)
    }
}

/// The spills' rows, file by file, into `w`.
fn copy_spills(
    spills: &mut BTreeMap<String, Spill>,
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    use std::io::Seek;
    for spill in spills.values_mut() {
        if let Some(f) = spill.file.as_mut() {
            f.seek(std::io::SeekFrom::Start(0))?;
            std::io::copy(f, w)?;
        }
    }
    Ok(())
}

impl Spill {
    /// Writes the held rows in (row, reason) order, keeping back the rows of the
    /// last row number (more refusals of that row may follow) unless `all`.
    fn write_held(&mut self, all: bool) -> Result<()> {
        use std::io::Write;
        let keep_from = if all {
            self.held.len()
        } else {
            let last = self.held.last().map(|r| r.row);
            self.held
                .iter()
                .position(|r| Some(r.row) == last)
                .unwrap_or(self.held.len())
        };
        if keep_from == 0 {
            return Ok(());
        }
        let kept = self.held.split_off(keep_from);
        let mut rows = std::mem::replace(&mut self.held, kept);
        rows.sort_by_key(|r| (r.row, r.reason));
        self.written_through = rows.last().map(|r| r.row);
        let bytes = rows_table(rows).csv_rows()?;
        let werr = |e: std::io::Error| crate::error::IngestError::Write {
            path: "<quarantine spill>".into(),
            source: e,
        };
        if self.file.is_none() {
            self.file = Some(tempfile::tempfile().map_err(werr)?);
        }
        if let Some(f) = self.file.as_mut() {
            f.write_all(&bytes).map_err(werr)?;
        }
        Ok(())
    }
}

/// Refused rows as the quarantine file's table (their text moved, not copied).
fn rows_table(rows: Vec<QuarantineRow>) -> Table {
    let n = rows.len();
    let (mut file, mut row, mut line, mut reason, mut field, mut detail, mut raw) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for r in rows {
        let obj: serde_json::Map<String, serde_json::Value> = r
            .raw
            .into_iter()
            .map(|(k, v)| (k, serde_json::Value::String(v)))
            .collect();
        raw.push(Some(serde_json::Value::Object(obj).to_string()));
        file.push(Some(r.file));
        row.push(Some(r.row as i64));
        line.push(Some(r.line as i64));
        reason.push(Some(r.reason.to_string()));
        field.push(Some(r.field));
        detail.push(Some(r.detail));
    }
    let mut t = Table::new();
    t.push("file", Col::Str(file));
    t.push("row", Col::I64(row));
    t.push("line", Col::I64(line));
    t.push("reason", Col::Str(reason));
    t.push("field", Col::Str(field));
    t.push("detail", Col::Str(detail));
    t.push("raw", Col::Str(raw));
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(file: &str, row: u64, reason: Reason) -> QuarantineRow {
        QuarantineRow {
            file: file.into(),
            row,
            line: row + 1,
            reason,
            field: "price".into(),
            detail: format!("row {row}"),
            raw: vec![
                ("price".into(), "=1+1".into()),
                ("gpu".into(), "h100".into()),
            ],
        }
    }

    /// Three times the rows memory holds, in two files given in reverse name order,
    /// some rows refused twice (reasons pushed out of their order): the file is the
    /// one writing every row at once, sorted by file, row and reason, would write.
    #[test]
    fn spilled_rows_write_the_file_one_sorted_table_would() {
        let mut pushed = Vec::new();
        for r in 1..=(3 * HELD_ROWS as u64) {
            pushed.push(row("b.csv", r, Reason::UnknownGpu));
            if r % 7 == 0 {
                pushed.push(row("b.csv", r, Reason::ImplausibleDate));
            }
        }
        for r in 1..=10 {
            pushed.push(row("a.csv", r, Reason::NonPositivePrice));
        }
        let mut q = QuarantineWriter::default();
        for r in &pushed {
            q.push(r.clone()).unwrap();
        }
        assert_eq!(q.len(), pushed.len());
        assert_eq!(q.count_for("a.csv"), 10);
        let dir = tempfile::tempdir().unwrap();
        let (spilled, whole) = (dir.path().join("q.csv"), dir.path().join("w.csv"));
        q.write(&spilled).unwrap();
        pushed.sort_by(|a, b| (&a.file, a.row, a.reason).cmp(&(&b.file, b.row, b.reason)));
        rows_table(pushed).write(&whole).unwrap();
        assert!(std::fs::read(&spilled).unwrap() == std::fs::read(&whole).unwrap());
        let text = std::fs::read_to_string(&spilled).unwrap();
        assert!(text.starts_with("file,row,line,reason,field,detail,raw\na.csv,1,2,"));
    }

    #[test]
    fn a_row_before_one_written_is_an_error_not_a_file_out_of_order() {
        let mut q = QuarantineWriter::default();
        for r in 1..=(HELD_ROWS as u64 + 1) {
            q.push(row("a.csv", r, Reason::UnknownGpu)).unwrap();
        }
        let e = q.push(row("a.csv", 2, Reason::UnknownGpu)).err().unwrap();
        assert!(e.to_string().contains("came after row"), "{e}");
    }
}
