//! A small columnar table written as CSV or Parquet by file extension, the one place
//! rentix touches Parquet. Every output file of rentix goes through here, so that the
//! formatting of numbers (shortest round-trip text in CSV) and the atomic
//! write-then-rename are the same everywhere.
//!
//! Parquet is the `parquet` feature (polars' own Parquet and Arrow crates,
//! `polars-parquet` and `polars-arrow`, without polars' data frame). A crate that reads and writes CSV only
//! (the backtest, the published fixings) builds without it; built so, every Parquet
//! function refuses with [`TableError::NoParquet`] naming the file.

mod csv_file;
#[cfg_attr(not(feature = "parquet"), path = "no_parquet.rs")]
mod parquet;
mod quiet;
mod resumable;
mod transaction;

pub use csv_file::{CsvFile, CsvRow};
pub use parquet::{write_unsynced_parquet_batches, write_unsynced_parquet_encoded, EncodedGroups};
pub use quiet::quiet_caught_panics;
pub use resumable::{ResumableSha256, SavedSha256};
pub use transaction::{fail_point, recover, Recovery, Transaction};

use rayon::prelude::*;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Why a table file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    /// A file or directory could not be opened or listed.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file could not be created, written, synced, renamed or removed.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file; `<csv>` or `<temporary>` when the writer does not know it,
        /// empty when an fsync thread panicked.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A table file's name ends in neither `.csv` nor `.parquet`.
    #[error("{path}: a table file's name must end in .csv or .parquet")]
    Format {
        /// The file.
        path: PathBuf,
    },
    /// Polars could not encode or decode a Parquet file, a column has a type this
    /// crate does not read, or batches of one file have different columns.
    #[error("parquet {path}: {detail}")]
    Parquet {
        /// The file.
        path: PathBuf,
        /// Polars' message, or what differs.
        detail: String,
    },
    /// A `.parquet` file met by a build without the `parquet` feature.
    #[error("{path}: this build of rentix reads and writes no Parquet (feature `parquet` of rentix-table); use a .csv file")]
    NoParquet {
        /// The file.
        path: PathBuf,
    },
    /// An interrupted transaction's temporary that is not what its journal says was
    /// staged (another size or SHA-256): not put in place.
    #[error("{path}: {detail}")]
    Journal {
        /// The temporary file.
        path: PathBuf,
        /// What differs.
        detail: String,
    },
    /// A CSV file that does not parse, is too large or lacks a column (read by
    /// [`TextTable::read`] or [`CsvFile`]).
    #[error("csv {path}: {detail}")]
    Csv {
        /// The file.
        path: PathBuf,
        /// The CSV reader's message.
        detail: String,
    },
}

/// The result of every fallible function of this crate.
pub type Result<T> = std::result::Result<T, TableError>;

/// A UTC instant as the store and every CSV output write it: RFC 3339, microseconds,
/// `Z`.
pub fn timestamp_text(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// One column's values; `None` is an empty cell / null.
#[derive(Debug, Clone, PartialEq)]
pub enum Col {
    /// Text: a Parquet string, a CSV cell neutralized against formula injection.
    Str(Vec<Option<String>>),
    /// Doubles: shortest round-trip text in CSV, always with a decimal point.
    F64(Vec<Option<f64>>),
    /// 64-bit integers (counts, ranks, row numbers).
    I64(Vec<Option<i64>>),
    /// Booleans: `true` / `false` in CSV.
    Bool(Vec<Option<bool>>),
    /// A UTC instant, microseconds since 1970-01-01T00:00:00Z: a Parquet
    /// `TIMESTAMP(MICROS, UTC)` column, RFC 3339 text in CSV.
    Timestamp(Vec<Option<i64>>),
    /// A calendar date, days since 1970-01-01: a Parquet `DATE`, `YYYY-MM-DD` in CSV.
    Date(Vec<Option<i32>>),
    /// Text read as codes into its distinct values ([`Table::read_parquet_coded`]).
    Coded(Coded),
}

/// A text column as codes into its distinct values, in order of first appearance:
/// a column of a few hundred distinct values over millions of rows, read without a
/// string per cell.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Coded {
    /// The distinct texts, each once, in order of first appearance.
    pub values: Vec<String>,
    /// One per row: an index into `values`, `None` for an empty cell.
    pub codes: Vec<Option<u32>>,
}

impl Coded {
    /// The text of row `i` (`None` when empty).
    pub fn get(&self, i: usize) -> Option<&str> {
        self.codes[i].map(|c| self.values[c as usize].as_str())
    }

    /// Codes cells by a key (a value with a text: a grade, an enum, a borrowed
    /// string), writing each distinct key's text once. A run of equal keys, which is
    /// what a sorted column holds, costs one comparison a cell.
    pub fn from_keys<K: std::hash::Hash + Eq + Clone>(
        keys: impl IntoIterator<Item = Option<K>>,
        text: impl Fn(&K) -> String,
    ) -> Self {
        let mut index: std::collections::HashMap<K, u32, foldhash::fast::FixedState> =
            std::collections::HashMap::default();
        let mut last: Option<(K, u32)> = None;
        let mut out = Coded::default();
        for key in keys {
            let code = key.map(|k| match &last {
                Some((l, c)) if *l == k => *c,
                _ => {
                    let c = *index.entry(k.clone()).or_insert_with(|| {
                        out.values.push(text(&k));
                        (out.values.len() - 1) as u32
                    });
                    last = Some((k, c));
                    c
                }
            });
            out.codes.push(code);
        }
        out
    }
}

/// Microseconds since the epoch of a UTC instant (the store's timestamp precision).
pub fn micros(t: chrono::DateTime<chrono::Utc>) -> i64 {
    t.timestamp_micros()
}

/// The UTC instant of `micros` since the epoch (`None` out of chrono's range).
pub fn from_micros(us: i64) -> Option<chrono::DateTime<chrono::Utc>> {
    chrono::DateTime::from_timestamp_micros(us)
}

/// Days since 1970-01-01 of a date.
pub fn epoch_days(d: chrono::NaiveDate) -> i32 {
    (d - chrono::NaiveDate::default()).num_days() as i32
}

/// The date `days` after 1970-01-01 (`None` out of chrono's range).
pub fn from_epoch_days(days: i32) -> Option<chrono::NaiveDate> {
    chrono::NaiveDate::default().checked_add_signed(chrono::TimeDelta::try_days(days.into())?)
}

impl Col {
    /// A column of dates, every one present: a Parquet `DATE`, `YYYY-MM-DD` in CSV.
    pub fn dates(v: impl Iterator<Item = chrono::NaiveDate>) -> Col {
        Col::Date(v.map(|d| Some(epoch_days(d))).collect())
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            Col::Str(v) => v.len(),
            Col::F64(v) => v.len(),
            Col::I64(v) => v.len(),
            Col::Bool(v) => v.len(),
            Col::Timestamp(v) => v.len(),
            Col::Date(v) => v.len(),
            Col::Coded(c) => c.codes.len(),
        }
    }

    /// Whether the column has no row.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends row `i` as a CSV output cell to `out`: text neutralized against
    /// formula injection ([`neutralize`]), numbers as [`Col::cell`] writes them.
    fn write_cell(&self, i: usize, out: &mut String) {
        use std::fmt::Write as _;
        match self {
            Col::Str(v) => push_text(out, v[i].as_deref()),
            Col::Coded(c) => push_text(out, c.get(i)),
            Col::F64(v) => {
                if let Some(x) = v[i] {
                    push_float(out, x);
                }
            }
            Col::I64(v) => {
                if let Some(x) = v[i] {
                    let _ = write!(out, "{x}");
                }
            }
            Col::Bool(v) => {
                if let Some(x) = v[i] {
                    let _ = write!(out, "{x}");
                }
            }
            Col::Timestamp(_) | Col::Date(_) => out.push_str(&self.cell(i)),
        }
    }

    /// Row `i` of the column as text (empty when missing).
    pub fn cell(&self, i: usize) -> String {
        match self {
            Col::Str(v) => v[i].clone().unwrap_or_default(),
            Col::Coded(c) => c.get(i).unwrap_or_default().to_string(),
            // The canonical text a publication's digest is taken of (Parquet cells
            // read back): kept as it was, so digests of files published before
            // stay valid. CSV files write floats with `push_float`.
            Col::F64(v) => v[i].map_or(String::new(), |x| format!("{x}")),
            Col::I64(v) => v[i].map_or(String::new(), |x| x.to_string()),
            Col::Bool(v) => v[i].map_or(String::new(), |x| x.to_string()),
            Col::Timestamp(v) => v[i]
                .and_then(from_micros)
                .map_or(String::new(), timestamp_text),
            Col::Date(v) => v[i]
                .and_then(from_epoch_days)
                .map_or(String::new(), |d| d.to_string()),
        }
    }
}

/// Named columns of equal length.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    /// Column names, in file order; `names[i]` names `cols[i]`.
    pub names: Vec<String>,
    /// The columns, each [`Table::height`] rows long.
    pub cols: Vec<Col>,
}

/// The on-disk format, chosen by the file name's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    /// `.csv`: a header row, then one line per row.
    Csv,
    /// `.parquet`: typed columns, Snappy-compressed.
    Parquet,
}

impl TableFormat {
    /// The format `path`'s extension names (`csv` or `parquet`, lowercase);
    /// [`TableError::Format`] for any other.
    pub fn of(path: &Path) -> Result<Self> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("csv") => Ok(TableFormat::Csv),
            Some("parquet") => Ok(TableFormat::Parquet),
            _ => Err(TableError::Format {
                path: path.to_path_buf(),
            }),
        }
    }
}

impl Table {
    /// A table of no columns.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a column named `name`. Neither its length nor the uniqueness of its
    /// name is checked: the caller keeps columns of equal length.
    pub fn push(&mut self, name: &str, col: Col) {
        self.names.push(name.to_string());
        self.cols.push(col);
    }

    /// Number of rows: the first column's length, 0 without columns.
    pub fn height(&self) -> usize {
        self.cols.first().map_or(0, Col::len)
    }

    /// The first column named `name`, `None` if there is none.
    pub fn col(&self, name: &str) -> Option<&Col> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| &self.cols[i])
    }

    /// Writes atomically (temporary file in the same directory, then rename) in the
    /// format the extension names.
    pub fn write(&self, path: &Path) -> Result<()> {
        let format = TableFormat::of(path)?;
        write_atomic(path, |w| match format {
            TableFormat::Csv => self.write_csv(w),
            TableFormat::Parquet => self.write_parquet(w, path),
        })
    }

    /// Stages the table for `path` in a transaction (written and fsynced under a
    /// temporary name; `path` changes at the commit).
    pub fn stage(&self, tx: &mut Transaction, path: &Path) -> Result<()> {
        let format = TableFormat::of(path)?;
        tx.stage(path, |w| match format {
            TableFormat::Csv => self.write_csv(w),
            TableFormat::Parquet => self.write_parquet(w, path),
        })
    }

    fn write_csv(&self, w: &mut dyn Write) -> Result<()> {
        let io = |e: std::io::Error| TableError::Write {
            path: PathBuf::from("<csv>"),
            source: e,
        };
        w.write_all(&self.csv_header()?).map_err(io)?;
        w.write_all(&self.csv_rows()?).map_err(io)?;
        w.flush().map_err(io)
    }

    /// The header line of this table's CSV file: the bytes its file begins with.
    pub fn csv_header(&self) -> Result<Vec<u8>> {
        let mut head = csv::Writer::from_writer(Vec::new());
        head.write_record(&self.names).map_err(csv_err)?;
        head.into_inner()
            .map_err(|e| csv_err(e.into_error().into()))
    }

    /// The rows of this table's CSV file without the header, exactly as
    /// [`Table::write`] writes them after [`Table::csv_header`]: what a publication
    /// appends after the rows it keeps.
    pub fn csv_rows(&self) -> Result<Vec<u8>> {
        Ok(self.csv_row_blocks()?.concat())
    }

    /// [`Table::csv_rows`] in blocks of rows, in order: written one after the other
    /// they are its bytes, without joining them into one buffer first (a copy of the
    /// whole file).
    pub fn csv_row_blocks(&self) -> Result<Vec<Vec<u8>>> {
        // Rows are formatted in parallel blocks (CSV quoting is per field, so blocks
        // are independent): in order, the bytes are those of one pass.
        const BLOCK: usize = 4096;
        let starts: Vec<usize> = (0..self.height()).step_by(BLOCK).collect();
        starts
            .par_iter()
            .map(|&start| {
                let mut out = csv::WriterBuilder::new()
                    .has_headers(false)
                    .from_writer(Vec::new());
                let mut cell = String::new();
                for i in start..(start + BLOCK).min(self.height()) {
                    for c in &self.cols {
                        cell.clear();
                        c.write_cell(i, &mut cell);
                        out.write_field(cell.as_bytes())?;
                    }
                    out.write_record(None::<&[u8]>)?;
                }
                out.into_inner().map_err(|e| e.into_error().into())
            })
            .collect::<std::result::Result<Vec<Vec<u8>>, csv::Error>>()
            .map_err(csv_err)
    }
}

/// A table file's cells as text, as they read back: CSV cells as written (text
/// neutralized, numbers in shortest round-trip form), Parquet cells as [`Col::cell`]
/// renders them. Two files compare cell by cell as text whatever their columns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextTable {
    /// Column names, from the header (CSV) or the schema (Parquet).
    pub names: Vec<String>,
    /// Every row's cells as text, in column order; an empty cell is `""`.
    pub rows: Vec<Vec<String>>,
}

impl TextTable {
    /// Reads a CSV or Parquet file (by extension) whole, every cell as text. No size
    /// limit: a caller reading a file it was handed checks its size first.
    pub fn read(path: &Path) -> Result<Self> {
        match TableFormat::of(path)? {
            TableFormat::Csv => {
                let bad = |e: csv::Error| TableError::Csv {
                    path: path.to_path_buf(),
                    detail: e.to_string(),
                };
                let mut rdr = csv::Reader::from_path(path).map_err(bad)?;
                let names = rdr
                    .headers()
                    .map_err(bad)?
                    .iter()
                    .map(str::to_string)
                    .collect();
                let rows = rdr
                    .records()
                    .map(|r| r.map(|r| r.iter().map(str::to_string).collect()))
                    .collect::<std::result::Result<_, _>>()
                    .map_err(bad)?;
                Ok(Self { names, rows })
            }
            TableFormat::Parquet => {
                let t = Table::read_parquet(path)?;
                let rows = (0..t.height())
                    .map(|r| t.cols.iter().map(|c| c.cell(r)).collect())
                    .collect();
                Ok(Self {
                    names: t.names,
                    rows,
                })
            }
        }
    }
}

impl Table {
    /// This table as its file in `format` would read back ([`TextTable::read`]): it
    /// is written to a temporary file and read, so that comparing it with a file on
    /// disk compares like with like (same number formatting, same neutralization).
    pub fn rendered(&self, format: TableFormat) -> Result<TextTable> {
        let werr = |source| TableError::Write {
            path: PathBuf::from("<temporary>"),
            source,
        };
        let dir = tempfile::tempdir().map_err(werr)?;
        let path = dir.path().join(match format {
            TableFormat::Csv => "rendered.csv",
            TableFormat::Parquet => "rendered.parquet",
        });
        self.write(&path)?;
        TextTable::read(&path)
    }
}

/// A text cell that a spreadsheet would run as a formula (it begins with `=`, `+`,
/// `-`, `@`, a tab or a carriage return) is written with a leading `'`, the OWASP
/// rule against CSV injection: text from inputs (grades, sources, notes, quarantined
/// fields) reaches every CSV output. Numbers are written from numeric columns and
/// never altered.
pub fn neutralize(cell: String) -> String {
    if starts_formula(&cell) {
        format!("'{cell}")
    } else {
        cell
    }
}

/// Appends a float as CSV text: the shortest text that reads back as the same
/// double, with a decimal point even when the value is whole (`12.0`, not `12`), so
/// that a reader inferring types from the first rows (polars reads 100) types the
/// column as floats instead of integers it then fails to parse a `12.5` into.
fn push_float(out: &mut String, x: f64) {
    use std::fmt::Write as _;
    let start = out.len();
    if !push_few_decimals(out, x) {
        let _ = write!(out, "{x}");
    }
    if x.is_finite() && !out[start..].contains('.') {
        out.push_str(".0");
    }
}

/// Writes `x` as `{}` writes it when it is the double nearest a decimal of at
/// most six places below 1e9 in size (every rounded fixing: `{}` walked its
/// digits for every float of a publication, 2% of a one-shot). Returns false,
/// having written nothing, for any other value.
///
/// Why it is `{}`'s text: `{}` writes the shortest decimal that reads back as
/// `x`, never with an exponent. With `d` the fewest places such that `k / 10^d`
/// (`k` an integer) reads back as `x` (division of an exact integer by an exact
/// power of ten is correctly rounded), no decimal of fewer places reads back as
/// `x`, and below 1e9 the doubles are closer together than `10^-6`, so no other
/// decimal of `d` places does: `k / 10^d` is the shortest, and the only one.
fn push_few_decimals(out: &mut String, x: f64) -> bool {
    const POWERS: [f64; 7] = [1.0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6];
    // NaN, the infinities and sizes of 1e9 or more are left to `{}`.
    if x.is_nan() || x.abs() >= 1e9 {
        return false;
    }
    let Some((places, k)) = POWERS.iter().enumerate().find_map(|(d, p)| {
        let k = (x * p).round();
        (k / p == x).then_some((d, k))
    }) else {
        return false;
    };
    // |k| < 1e15 < 2^53: an exact integer.
    let k = k.abs() as u64;
    let scale = 10u64.pow(places as u32);
    if x.is_sign_negative() {
        out.push('-');
    }
    push_digits(out, k / scale, 1);
    if places > 0 {
        out.push('.');
        push_digits(out, k % scale, places);
    }
    true
}

/// `n` in decimal, zero-padded to at least `width` digits.
fn push_digits(out: &mut String, mut n: u64, width: usize) {
    let mut buf = [b'0'; 20];
    let mut at = buf.len();
    while n > 0 || buf.len() - at < width {
        at -= 1;
        // A decimal digit: always below 10.
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    // ASCII digits only.
    out.push_str(std::str::from_utf8(&buf[at..]).unwrap_or_default());
}

/// Appends a text cell, neutralized against formula injection ([`neutralize`]).
fn push_text(out: &mut String, text: Option<&str>) {
    if let Some(s) = text {
        if starts_formula(s) {
            out.push('\'');
        }
        out.push_str(s);
    }
}

/// Whether a spreadsheet would read `text` as a formula.
fn starts_formula(text: &str) -> bool {
    matches!(
        text.as_bytes().first(),
        Some(b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r')
    )
}

/// Makes `files` durable: an fsync each, issued from several threads at once so
/// the filesystem commits them together (one journal commit serves many waiting
/// fsyncs). A two-year ingest writes 731 partitions; an fsync as each was written
/// cost more than a tenth of the run. (A `syncfs` would also flush the run's
/// scratch spills, hundreds of megabytes that are deleted a moment later.)
pub fn sync_files(files: &[PathBuf]) -> Result<()> {
    const THREADS: usize = 16;
    let chunk = files.len().div_ceil(THREADS).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || -> Result<()> {
                    for f in part {
                        File::open(f).and_then(|h| h.sync_all()).map_err(|source| {
                            TableError::Write {
                                path: f.clone(),
                                source,
                            }
                        })?;
                    }
                    Ok(())
                })
            })
            .collect();
        handles.into_iter().try_for_each(|h| {
            h.join().unwrap_or_else(|_| {
                Err(TableError::Write {
                    path: PathBuf::new(),
                    source: std::io::Error::other("an fsync thread panicked"),
                })
            })
        })
    })
}

/// Rows per Parquet row group (polars' default, 512 x 512).
pub const ROW_GROUP_ROWS: usize = 512 * 512;

/// A new file under a unique temporary name beside `path`, in `dir`:
/// `.<name>.XXXXXX.tmp`.
fn temp_file(path: &Path, dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(path.file_name().unwrap_or_default());
    prefix.push(".");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // As `File::create` would: 0666 less the umask, not tempfile's private 0600, so a
    // publication stays readable by whoever could read the one it replaces.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(dir)
}

/// Writes a file atomically: `fill` writes into a temporary file of a unique name
/// beside it (`.<name>.XXXXXX.tmp`, missing parent directories created), fsync,
/// then rename over `path`. A killed process leaves either the old file or the new
/// one, never half of one, and two writers of the same path never share a temporary
/// file: the last rename wins whole. If `fill` fails the temporary file is removed
/// and `path` is untouched.
pub fn write_atomic(path: &Path, fill: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
    let werr = |source| TableError::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(werr)?;
            dir
        }
        None => Path::new("."),
    };
    let tmp = temp_file(path, dir).map_err(werr)?;
    let mut w = BufWriter::new(tmp);
    fill(&mut w)?;
    let tmp = w.into_inner().map_err(|e| werr(e.into_error()))?;
    tmp.as_file().sync_all().map_err(werr)?;
    // A failed rename drops `tmp`, which removes the temporary file.
    tmp.persist(path).map_err(|e| werr(e.error))?;
    Ok(())
}

/// A CSV writer's error (writing into memory: an I/O error is not possible, a
/// record the writer refuses is).
fn csv_err(e: csv::Error) -> TableError {
    TableError::Write {
        path: PathBuf::from("<csv>"),
        source: std::io::Error::other(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_keep_a_decimal_point_when_whole() {
        let c = Col::F64(vec![
            Some(12.0),
            Some(2.9),
            Some(0.1 + 0.2),
            Some(-3.0),
            None,
            Some(1e21),
        ]);
        let cells: Vec<String> = (0..6)
            .map(|i| {
                let mut s = String::new();
                c.write_cell(i, &mut s);
                s
            })
            .collect();
        assert_eq!(
            cells,
            [
                "12.0",
                "2.9",
                "0.30000000000000004",
                "-3.0",
                "",
                "1000000000000000000000.0"
            ]
        );
        assert_eq!(Col::I64(vec![Some(12)]).cell(0), "12");
        // The canonical text of Parquet cells (digests) is unchanged.
        assert_eq!(c.cell(0), "12");
    }

    /// A rendered table reads back as its file does: `-1.5` stays a number, the text
    /// `-x` gains its leading `'` in CSV only, an empty float is an empty cell.
    #[test]
    fn a_rendered_table_is_its_file_read_back_as_text() {
        let mut t = Table::new();
        t.push("s", Col::Str(vec![Some("-x".into()), None]));
        t.push("f", Col::F64(vec![Some(-1.5), None]));
        t.push("b", Col::Bool(vec![Some(true), Some(false)]));
        let csv = t.rendered(TableFormat::Csv).unwrap();
        assert_eq!(csv.names, ["s", "f", "b"]);
        assert_eq!(csv.rows, [["'-x", "-1.5", "true"], ["", "", "false"]]);
        #[cfg(feature = "parquet")]
        {
            let parquet = t.rendered(TableFormat::Parquet).unwrap();
            assert_eq!(parquet.rows, [["-x", "-1.5", "true"], ["", "", "false"]]);
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        t.write(&path).unwrap();
        assert_eq!(TextTable::read(&path).unwrap(), csv);
    }

    /// A float is written as `{}` writes it (with `.0` after a whole number):
    /// any double (its bits at random: NaN, infinities, subnormals, -0.0) and
    /// doubles near decimals of zero to nine places, as rounded fixings are. It
    /// fails when the places are counted one short, or a negative sign or a
    /// fraction's leading zeros are lost.
    #[test]
    fn floats_are_written_as_display_writes_them() {
        use proptest::prelude::*;
        let display = |x: f64| {
            let s = format!("{x}");
            if x.is_finite() && !s.contains('.') {
                format!("{s}.0")
            } else {
                s
            }
        };
        // k / 10^d for k of up to m digits, and the doubles up to two apart.
        let near_decimal = (0u32..17)
            .prop_flat_map(|m| {
                let top = 10i64.pow(m);
                (-top..=top, 0u32..10, -2i64..=2)
            })
            .prop_map(|(k, d, ulps)| {
                let x = k as f64 / 10f64.powi(d as i32);
                f64::from_bits(x.to_bits().wrapping_add_signed(ulps))
            });
        let any = prop_oneof![any::<u64>().prop_map(f64::from_bits), near_decimal];
        proptest!(ProptestConfig::with_cases(4096), |(x in any)| {
            let mut s = String::new();
            push_float(&mut s, x);
            prop_assert_eq!(s, display(x));
        });
        for x in [
            0.0,
            -0.0,
            1.0,
            -1.5,
            0.0001,
            -0.000001,
            999_999_999.999_999,
            1e9,
            0.1 + 0.2,
        ] {
            let mut s = String::new();
            push_float(&mut s, x);
            assert_eq!(s, display(x), "{x:?}");
        }
    }

    /// The CSV of a table, written the plain way: one record at a time, every cell
    /// through [`Col::cell`] and text through [`neutralize`].
    fn plain_csv(t: &Table) -> Vec<u8> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(&t.names).unwrap();
        for i in 0..t.height() {
            w.write_record(t.cols.iter().map(|c| match c {
                Col::Str(_) | Col::Coded(_) => neutralize(c.cell(i)),
                Col::F64(v) => v[i].map_or(String::new(), |x| {
                    let mut s = String::new();
                    push_float(&mut s, x);
                    s
                }),
                _ => c.cell(i),
            }))
            .unwrap();
        }
        w.into_inner().unwrap()
    }

    #[cfg(feature = "parquet")]
    fn numbered(from: i64, n: i64) -> Table {
        let mut t = Table::new();
        t.push(
            "s",
            Col::Str((from..from + n).map(|i| Some(format!("r{i}"))).collect()),
        );
        t.push("i", Col::I64((from..from + n).map(Some).collect()));
        t.push(
            "d",
            Col::Date((from..from + n).map(|i| Some(i as i32)).collect()),
        );
        t
    }

    #[test]
    fn concurrent_atomic_writers_of_one_path_never_share_a_temporary_file() {
        // Six writers of one path at once (issue 25: a shared `<name>.tmp` made three
        // of six `index --out f.csv` fail). Each must succeed, the file must be one
        // writer's whole content, and no temporary file may be left behind.
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.csv");
        std::thread::scope(|s| {
            for k in 0..6u8 {
                let p = &p;
                s.spawn(move || {
                    write_atomic(p, |w| {
                        for _ in 0..20_000 {
                            w.write_all(&[b'a' + k]).map_err(|e| TableError::Write {
                                path: p.clone(),
                                source: e,
                            })?;
                        }
                        Ok(())
                    })
                    .unwrap()
                });
            }
        });
        let got = std::fs::read(&p).unwrap();
        assert_eq!(got.len(), 20_000);
        assert!(
            got.iter().all(|b| *b == got[0]),
            "one writer's bytes, whole"
        );
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("f.csv")]);
    }

    #[cfg(unix)]
    #[test]
    fn an_atomic_write_is_as_readable_as_a_created_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        File::create(&a).unwrap();
        write_atomic(&b, |_| Ok(())).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&b), mode(&a));
    }

    #[cfg(feature = "parquet")]
    #[test]
    fn parquet_written_in_batches_reads_back_as_one_table() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/x.parquet");
        let sizes = [3, ROW_GROUP_ROWS as i64 + 5, 1];
        let mut from = 0;
        let batches: Vec<Table> = sizes
            .iter()
            .map(|&n| {
                from += n;
                numbered(from - n, n)
            })
            .collect();
        write_unsynced_parquet_batches(&p, batches.into_iter()).unwrap();
        assert_eq!(Table::read_parquet(&p).unwrap(), numbered(0, from));
        assert_eq!(Table::parquet_rows(&p).unwrap(), from as usize);
        // No batch, no file; a batch of other columns is refused.
        let none = dir.path().join("none.parquet");
        write_unsynced_parquet_batches(&none, std::iter::empty()).unwrap();
        assert!(!none.exists());
        let mut other = Table::new();
        other.push("s", Col::F64(vec![Some(1.0)]));
        let err = write_unsynced_parquet_batches(
            &dir.path().join("bad.parquet"),
            [numbered(0, 2), other].into_iter(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("columns differ"), "{err}");
    }

    #[cfg(feature = "parquet")]
    #[test]
    fn a_file_read_in_slices_is_the_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.parquet");
        write_unsynced_parquet_batches(&p, [numbered(0, 7), numbered(7, 5)].into_iter()).unwrap();
        let whole = Table::read_parquet(&p).unwrap();
        let cells = |t: &Table| -> Vec<String> {
            (0..t.height())
                .flat_map(|i| t.cols.iter().map(move |c| c.cell(i)))
                .collect()
        };
        let mut sliced = Vec::new();
        for offset in (0..12).step_by(5) {
            let t = Table::read_parquet_rows(&p, offset, 5).unwrap();
            assert_eq!(t.height(), 5.min(12 - offset));
            sliced.extend(cells(&t));
        }
        assert_eq!(sliced, cells(&whole));
        assert_eq!(Table::read_parquet_rows(&p, 12, 5).unwrap().height(), 0);
    }

    #[cfg(feature = "parquet")]
    #[test]
    fn coded_by_keys_writes_the_same_parquet_bytes_as_text() {
        let dir = tempfile::tempdir().unwrap();
        let keys = [
            Some(3),
            Some(3),
            None,
            Some(1),
            Some(3),
            None,
            Some(7),
            Some(1),
        ];
        let text = |k: &i32| format!("grade-{k}");
        let coded = Coded::from_keys(keys, text);
        assert_eq!(coded.values, ["grade-3", "grade-1", "grade-7"]);
        assert_eq!(
            coded.codes,
            [
                Some(0),
                Some(0),
                None,
                Some(1),
                Some(0),
                None,
                Some(2),
                Some(1)
            ]
        );
        let mut as_codes = numbered(0, keys.len() as i64);
        as_codes.push("g", Col::Coded(coded));
        let mut as_text = numbered(0, keys.len() as i64);
        as_text.push(
            "g",
            Col::Str(keys.iter().map(|k| k.as_ref().map(text)).collect()),
        );
        let (a, b) = (dir.path().join("a.parquet"), dir.path().join("b.parquet"));
        as_codes.write(&a).unwrap();
        as_text.write(&b).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        assert_eq!(Table::read_parquet(&a).unwrap(), as_text);
    }

    #[cfg(feature = "parquet")]
    #[test]
    fn coded_text_reads_as_the_same_cells() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.parquet");
        let mut t = numbered(0, 5);
        t.push(
            "k",
            Col::Str(
                ["b", "a", "b", "", "=x"]
                    .iter()
                    .map(|s| Some(s.to_string()))
                    .collect(),
            ),
        );
        t.cols[0] = Col::Str(vec![
            Some("r0".into()),
            None,
            Some("r0".into()),
            None,
            Some("r4".into()),
        ]);
        t.write(&p).unwrap();
        let plain = Table::read_parquet(&p).unwrap();
        let coded = Table::read_parquet_coded(&p, None, &["s", "k"]).unwrap();
        let Some(Col::Coded(k)) = coded.col("k") else {
            panic!("k is coded")
        };
        assert_eq!(k.values, ["b", "a", "", "=x"]);
        assert_eq!(k.codes, [Some(0), Some(1), Some(0), Some(2), Some(3)]);
        for (a, b) in plain.cols.iter().zip(&coded.cols) {
            assert_eq!(
                (0..5).map(|i| a.cell(i)).collect::<Vec<_>>(),
                (0..5).map(|i| b.cell(i)).collect::<Vec<_>>()
            );
        }
        let (mut x, mut y) = (Vec::new(), Vec::new());
        plain.write_csv(&mut x).unwrap();
        coded.write_csv(&mut y).unwrap();
        assert_eq!(x, y);
        let q = dir.path().join("y.parquet");
        coded.write(&q).unwrap();
        assert_eq!(Table::read_parquet(&q).unwrap(), plain);
    }

    #[test]
    fn csv_written_in_parallel_blocks_is_the_plain_csv() {
        let n = 10_007; // more than two blocks, the last one short
        let text = [
            "=1+1",
            "-3",
            "a,b",
            "say \"hi\"",
            "line\nbreak",
            "",
            "plain",
        ];
        let mut t = Table::new();
        t.push(
            "s",
            Col::Str(
                (0..n)
                    .map(|i| (i % 9 != 0).then(|| text[i % 7].to_string()))
                    .collect(),
            ),
        );
        t.push(
            "f",
            Col::F64(
                (0..n)
                    .map(|i| (i % 5 != 0).then(|| i as f64 / 7.0 - 3.0))
                    .collect(),
            ),
        );
        t.push(
            "i",
            Col::I64(
                (0..n)
                    .map(|i| (i % 4 != 0).then_some(i as i64 - 50))
                    .collect(),
            ),
        );
        t.push(
            "b",
            Col::Bool((0..n).map(|i| (i % 3 != 0).then_some(i % 2 == 0)).collect()),
        );
        t.push(
            "d",
            Col::Date((0..n).map(|i| (i % 6 != 0).then_some(i as i32)).collect()),
        );
        let mut out = Vec::new();
        t.write_csv(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            String::from_utf8(plain_csv(&t)).unwrap()
        );
        // A single column of empty cells: each record still has its (quoted) field.
        let mut one = Table::new();
        one.push(
            "s",
            Col::Str(vec![None, Some(String::new()), Some("x".into())]),
        );
        let mut out = Vec::new();
        one.write_csv(&mut out).unwrap();
        assert_eq!(out, plain_csv(&one));
    }

    /// A table with a column of every type, nulls in each, `n` rows: unique long
    /// texts (past the dictionary's cardinality bound: plain pages, several per row
    /// group), coded grades, floats, small integers, booleans, instants and dates.
    #[cfg(feature = "parquet")]
    fn every_type(n: usize) -> Table {
        let grades = ["H100 on-demand", "H200 reserved", "A100"];
        let mut t = Table::new();
        t.push(
            "id",
            Col::Str(
                (0..n)
                    .map(|i| (i % 97 != 0).then(|| format!("observation-{i:08}-{}", i * 7919)))
                    .collect(),
            ),
        );
        t.push(
            "grade",
            Col::Coded(Coded::from_keys(
                (0..n).map(|i| (i % 11 != 0).then_some(i % 3)),
                |k: &usize| grades[*k].to_string(),
            )),
        );
        t.push(
            "price",
            Col::F64(
                (0..n)
                    .map(|i| (i % 13 != 0).then(|| 2.0 + (i as f64).sin()))
                    .collect(),
            ),
        );
        t.push(
            "count",
            Col::I64(
                (0..n)
                    .map(|i| (i % 5 != 0).then_some((i % 40) as i64 - 3))
                    .collect(),
            ),
        );
        t.push(
            "firm",
            Col::Bool((0..n).map(|i| (i % 7 != 0).then_some(i % 3 == 0)).collect()),
        );
        t.push(
            "observed_at",
            Col::Timestamp(
                (0..n)
                    .map(|i| (i % 17 != 0).then_some(1_735_689_600_000_000 + i as i64 * 61_000_123))
                    .collect(),
            ),
        );
        t.push(
            "fixing_date",
            Col::Date(
                (0..n)
                    .map(|i| (i % 19 != 0).then_some(20_089 + (i / 1000) as i32))
                    .collect(),
            ),
        );
        t
    }

    /// The bytes of rentix's Parquet files are published (every fixings file has a
    /// digest): they must not change with the library that writes them. These
    /// digests are of the files polars' `ParquetWriter` (polars 0.55.2, the writer
    /// rentix used before it wrote through polars-parquet directly) made of the same
    /// tables: one table of 600,000 rows (two row groups of 300,000), and the same
    /// rows in batches of 3, 300,000 and 299,997 (row groups of 3, 262,144, 37,856,
    /// 262,144, 37,853); an empty table (a footer and no row group).
    #[cfg(feature = "parquet")]
    #[test]
    fn parquet_bytes_are_those_polars_wrote() {
        use sha2::{Digest, Sha256};
        let hex = |p: &Path| {
            Sha256::digest(std::fs::read(p).unwrap())
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        };
        let dir = tempfile::tempdir().unwrap();
        let t = every_type(600_000);
        let whole = dir.path().join("whole.parquet");
        t.write(&whole).unwrap();
        let batched = dir.path().join("batched.parquet");
        let cut = |from: usize, to: usize| {
            let mut b = Table::new();
            for (name, col) in t.names.iter().zip(&t.cols) {
                let part = match col {
                    Col::Str(v) => Col::Str(v[from..to].to_vec()),
                    Col::F64(v) => Col::F64(v[from..to].to_vec()),
                    Col::I64(v) => Col::I64(v[from..to].to_vec()),
                    Col::Bool(v) => Col::Bool(v[from..to].to_vec()),
                    Col::Timestamp(v) => Col::Timestamp(v[from..to].to_vec()),
                    Col::Date(v) => Col::Date(v[from..to].to_vec()),
                    Col::Coded(c) => Col::Coded(Coded {
                        values: c.values.clone(),
                        codes: c.codes[from..to].to_vec(),
                    }),
                };
                b.push(name, part);
            }
            b
        };
        write_unsynced_parquet_batches(
            &batched,
            [cut(0, 3), cut(3, 300_003), cut(300_003, 600_000)].into_iter(),
        )
        .unwrap();
        let empty = dir.path().join("empty.parquet");
        every_type(0).write(&empty).unwrap();
        let got = [hex(&whole), hex(&batched), hex(&empty)];
        assert_eq!(
            got,
            [
                "dad8045392d92a35516d858e452131c9fc66a242148ef0d731d0c747de2aadd7",
                "ad6fe8ad964fe35013b0a2a740928d88695cf632b2365ce04ccb6b3937b33140",
                "cf0304ed09f4b1c0a8afb5c68ded074869b584439fc2b77e5f1a4d199023fb72",
            ]
        );
        assert_eq!(Table::read_parquet(&whole).unwrap().height(), 600_000);
        assert_eq!(Table::parquet_rows(&batched).unwrap(), 600_000);
    }

    /// A table that is not one (a column shorter than the first, a name twice, a
    /// name missing, a coded cell past its values) is refused with why, never
    /// written, never a panic (polars' data frame refused the first three).
    #[cfg(feature = "parquet")]
    #[test]
    fn a_table_that_is_not_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut ragged = numbered(0, 3);
        ragged.push("short", Col::F64(vec![Some(1.0)]));
        let mut twice = numbered(0, 3);
        twice.push("s", Col::F64(vec![Some(1.0); 3]));
        let mut unnamed = numbered(0, 3);
        unnamed.cols.push(Col::F64(vec![Some(1.0); 3]));
        let mut coded = numbered(0, 2);
        coded.push(
            "g",
            Col::Coded(Coded {
                values: vec!["a".into()],
                codes: vec![Some(0), Some(1)],
            }),
        );
        for (t, why) in [
            (ragged, "column short has 1 rows"),
            (twice, "column s appears twice"),
            (unnamed, "column names for"),
            (coded, "value 1 of 1"),
        ] {
            let p = dir.path().join("t.parquet");
            let err = t.write(&p).unwrap_err().to_string();
            assert!(err.contains(why), "{why}: {err}");
            assert!(!p.exists(), "{why}");
            let q = dir.path().join("b.parquet");
            let err = write_unsynced_parquet_batches(&q, [t].into_iter())
                .unwrap_err()
                .to_string();
            assert!(err.contains(why), "{why}: {err}");
        }
    }

    #[cfg(feature = "parquet")]
    #[test]
    fn parquet_and_csv_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = Table::new();
        t.push("s", Col::Str(vec![Some("a".into()), None]));
        t.push("f", Col::F64(vec![Some(0.1), None]));
        t.push("i", Col::I64(vec![None, Some(7)]));
        t.push("b", Col::Bool(vec![Some(true), Some(false)]));
        let p = dir.path().join("x.parquet");
        t.write(&p).unwrap();
        assert_eq!(Table::read_parquet(&p).unwrap(), t);
        let c = dir.path().join("x.csv");
        t.write(&c).unwrap();
        assert_eq!(
            std::fs::read_to_string(&c).unwrap(),
            "s,f,i,b\na,0.1,,true\n,,7,false\n"
        );
        assert!(t.write(&dir.path().join("x.txt")).is_err());
    }
}
