//! Fixings to and from files (CSV, or Parquet with the `parquet` feature, by
//! extension), and the digests a publication records of them.

use crate::error::FixingsError;
use crate::fixing::{Fixing, FixingLevel};
use crate::IndexId;
use chrono::NaiveDate;
use rayon::prelude::*;
use rentix_table::{Col, Table, TableFormat};
use std::path::Path;

/// Fixings columns, in file order. The first eighteen are the product contract.
pub const FIXING_COLUMNS: [&str; 26] = [
    "date",
    "grade",
    "value",
    "method",
    "level",
    "n_obs",
    "n_trades",
    "n_firm",
    "n_listings",
    "n_contributors",
    "volume_gpu_hours",
    "p25",
    "p75",
    "max_contributor_share",
    "sufficient",
    "flags",
    "methodology_version",
    "input_sha256",
    "p1",
    "p99",
    "publication",
    "change_1d",
    "change_7d",
    "change_30d",
    "contributor_hhi",
    "unit",
];

fn s(v: impl Iterator<Item = String>) -> Col {
    Col::Str(v.map(Some).collect())
}
fn i(v: impl Iterator<Item = i64>) -> Col {
    Col::I64(v.map(Some).collect())
}

/// The fixings as a table: one row per [`Fixing`], columns [`FIXING_COLUMNS`] (the
/// level as its number, `unit` from [`Fixing::unit`]).
pub fn fixings_table(rows: &[Fixing]) -> Table {
    let mut t = Table::new();
    t.push("date", Col::dates(rows.iter().map(|r| r.date)));
    t.push("grade", s(rows.iter().map(|r| r.grade.to_string())));
    t.push("value", Col::F64(rows.iter().map(|r| r.value).collect()));
    t.push("method", s(rows.iter().map(|r| r.method.clone())));
    t.push(
        "level",
        Col::I64(
            rows.iter()
                .map(|r| r.level.map(|l| i64::from(l.number())))
                .collect(),
        ),
    );
    t.push("n_obs", i(rows.iter().map(|r| r.n_obs as i64)));
    t.push("n_trades", i(rows.iter().map(|r| r.n_trades as i64)));
    t.push("n_firm", i(rows.iter().map(|r| r.n_firm as i64)));
    t.push("n_listings", i(rows.iter().map(|r| r.n_listings as i64)));
    t.push(
        "n_contributors",
        i(rows.iter().map(|r| r.n_contributors as i64)),
    );
    t.push(
        "volume_gpu_hours",
        Col::F64(rows.iter().map(|r| Some(r.volume_gpu_hours)).collect()),
    );
    t.push("p25", Col::F64(rows.iter().map(|r| r.p25).collect()));
    t.push("p75", Col::F64(rows.iter().map(|r| r.p75).collect()));
    t.push(
        "max_contributor_share",
        Col::F64(rows.iter().map(|r| r.max_contributor_share).collect()),
    );
    t.push(
        "sufficient",
        Col::Bool(rows.iter().map(|r| Some(r.sufficient)).collect()),
    );
    t.push("flags", s(rows.iter().map(|r| r.flags.clone())));
    t.push(
        "methodology_version",
        s(rows.iter().map(|r| r.methodology_version.clone())),
    );
    t.push(
        "input_sha256",
        s(rows.iter().map(|r| r.input_sha256.clone())),
    );
    t.push("p1", Col::F64(rows.iter().map(|r| r.p1).collect()));
    t.push("p99", Col::F64(rows.iter().map(|r| r.p99).collect()));
    t.push(
        "publication",
        i(rows.iter().map(|r| i64::from(r.publication))),
    );
    t.push(
        "change_1d",
        Col::F64(rows.iter().map(|r| r.change_1d).collect()),
    );
    t.push(
        "change_7d",
        Col::F64(rows.iter().map(|r| r.change_7d).collect()),
    );
    t.push(
        "change_30d",
        Col::F64(rows.iter().map(|r| r.change_30d).collect()),
    );
    t.push(
        "contributor_hhi",
        Col::F64(rows.iter().map(|r| r.contributor_hhi).collect()),
    );
    // What `value` is measured in: a grade's USD per GPU-hour, a composite's points.
    t.push(
        "unit",
        s(rows.iter().map(|r| r.unit().as_str().to_string())),
    );
    t
}

/// Column name -> position.
pub type ColumnIndex = std::collections::HashMap<String, usize, foldhash::fast::FixedState>;

/// Every record of a CSV or Parquet table as text, one buffer per record, with the
/// column positions looked up once: what the readers of rentix's outputs (fixings,
/// intraday fixings, forward curves) parse their rows from.
#[derive(Debug, Clone, Default)]
pub struct Records {
    /// Column name -> position in each record (looked up per cell, never iterated).
    pub index: ColumnIndex,
    /// The data rows, in file order.
    pub rows: Vec<csv::StringRecord>,
}

impl Records {
    /// The text of column `name` in `rec` (`None`: no such column).
    pub fn get<'a>(&self, rec: &'a csv::StringRecord, name: &str) -> Option<&'a str> {
        self.index.get(name).and_then(|&i| rec.get(i))
    }
}

/// The records of a CSV (within the fixings size limit) or Parquet file.
pub fn records(path: &Path) -> Result<Records, FixingsError> {
    let input = |detail: String| FixingsError::Input {
        path: path.to_path_buf(),
        detail,
    };
    match TableFormat::of(path).map_err(|e| input(e.to_string()))? {
        TableFormat::Csv => {
            rentix_core::check_file(path, rentix_core::MAX_FIXINGS_BYTES)
                .map_err(|e| input(e.to_string()))?;
            let rdr = csv::Reader::from_path(path).map_err(|e| input(e.to_string()))?;
            csv_records(path, rdr, 0)
        }
        TableFormat::Parquet => {
            let t = Table::read_parquet(path)?;
            let index = column_index(t.names.iter().map(String::as_str)).map_err(|detail| {
                FixingsError::Fixings {
                    path: path.to_path_buf(),
                    row: 0,
                    detail,
                }
            })?;
            let rows = (0..t.height())
                .map(|r| {
                    let mut rec = csv::StringRecord::new();
                    for c in &t.cols {
                        rec.push_field(&c.cell(r));
                    }
                    rec
                })
                .collect();
            Ok(Records { index, rows })
        }
    }
}

/// Column name -> position; a name given twice is refused (which of the two a
/// reader took would be a guess: a file with two `value` columns is not a fixings
/// file). Columns without a name (a spreadsheet's trailing empty columns) are
/// never read and may repeat.
fn column_index<'a>(names: impl Iterator<Item = &'a str>) -> Result<ColumnIndex, String> {
    let mut index = ColumnIndex::default();
    for (i, n) in names.enumerate().filter(|(_, n)| !n.is_empty()) {
        if let Some(first) = index.insert(n.to_string(), i) {
            return Err(format!(
                "column {n:?} appears twice (columns {} and {})",
                first + 1,
                i + 1
            ));
        }
    }
    Ok(index)
}

/// The records of a CSV reader; row numbers in errors count `rows_before` rows
/// ahead of the reader's first.
fn csv_records<R: std::io::Read>(
    path: &Path,
    mut rdr: csv::Reader<R>,
    rows_before: usize,
) -> Result<Records, FixingsError> {
    let bad = |row: usize, detail: String| FixingsError::Fixings {
        path: path.to_path_buf(),
        row,
        detail,
    };
    let index = column_index(rdr.headers().map_err(|e| bad(0, e.to_string()))?.iter())
        .map_err(|detail| bad(0, detail))?;
    let mut rows = Vec::new();
    for (n, rec) in rdr.records().enumerate() {
        rows.push(rec.map_err(|e| bad(rows_before + n + 1, e.to_string()))?);
    }
    Ok(Records { index, rows })
}

/// SHA-256 (hex) of a table's cells as text, rendered as `format` stores them (the
/// cells `rentix verify` reads back from the file): its canonical content.
pub fn canonical_sha256(
    t: &rentix_table::Table,
    format: rentix_table::TableFormat,
) -> Result<String, FixingsError> {
    Ok(canonical_sha256_text(&t.rendered(format)?))
}

/// [`canonical_sha256`] of cells already read as text (a file as published).
pub fn canonical_sha256_text(t: &rentix_table::TextTable) -> String {
    use sha2::{Digest, Sha256};
    // Writing CSV into memory cannot fail; a record that could not be written
    // would change the digest, never pass unnoticed.
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(&t.names);
    for r in &t.rows {
        let _ = w.write_record(r);
    }
    let _ = w.flush();
    rentix_core::hex(&Sha256::digest(w.get_ref()))
}

/// The digest recorded in the `.sha256` sidecar `digest` (its first word), read
/// bounded: `None` when there is no such file; refused, naming the file, when it is
/// not a regular file of at most [`rentix_core::MAX_DIGEST_BYTES`] (a sidecar
/// grown to 200 MB or linked to `/dev/zero` is neither read whole nor echoed).
///
/// The first line is read as `sha256sum -c` reads it: `HEX  NAME` or `HEX *NAME`
/// (GNU), `SHA256 (NAME) = HEX` (BSD), hexadecimal digits in either case. A line
/// naming another file than the one `<file>.sha256` is beside records no digest of
/// it: what is returned then says so ([`names_another_file`]) and matches no
/// digest. `./NAME` and the file's own absolute path are its name; a line of the
/// digest alone is read as this file's.
pub fn read_digest(digest: &Path) -> Result<Option<String>, FixingsError> {
    let bad = |detail: String| FixingsError::Input {
        path: digest.to_path_buf(),
        detail,
    };
    let text = match rentix_core::read_text(digest, rentix_core::MAX_DIGEST_BYTES) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(bad(format!("not a digest file: {e}"))),
    };
    // The first line that is not blank or a comment, as `sha256sum -c` reads it.
    let first = text
        .lines()
        .map(|l| l.trim_end_matches('\r'))
        .find(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .unwrap_or_default()
        .trim_start();
    let (word, named) = digest_and_name(first);
    // A first word that is no digest is returned (at most 80 characters of it, for
    // a message): it matches no file's digest.
    let word: String = word.chars().take(80).collect();
    let word = if word.len() == 64 && word.bytes().all(|b| b.is_ascii_hexdigit()) {
        word.to_ascii_lowercase()
    } else {
        word
    };
    let file = digest
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".sha256"));
    match file {
        Some(file) if !named.is_empty() && !names_this_file(digest, file, named) => {
            let shown: String = named.chars().take(80).collect();
            Ok(Some(format!("{ANOTHER}{shown:?}, not of {file:?})")))
        }
        _ => Ok(Some(word)),
    }
}

/// How [`read_digest`] begins what it returns for a sidecar naming another file.
const ANOTHER: &str = "(a digest of ";

/// Whether a digest [`read_digest`] returned is a sidecar's line naming another
/// file (it records no digest of the file it is beside).
pub fn names_another_file(recorded: &str) -> bool {
    recorded.starts_with(ANOTHER)
}

/// The digest and the file name of a sidecar's line (the name empty when the line
/// is the digest alone).
fn digest_and_name(line: &str) -> (&str, &str) {
    if let Some(rest) = line.strip_prefix("SHA256 (") {
        if let Some((name, hex)) = rest.rsplit_once(") = ") {
            return (hex.trim(), name);
        }
    }
    // GNU marks a line whose name it escaped with a leading backslash.
    let line = line.strip_prefix('\\').unwrap_or(line);
    let (word, rest) = line
        .split_once(|c: char| c.is_whitespace())
        .unwrap_or((line, ""));
    let named = rest.trim_start_matches([' ', '\t']);
    (word, named.strip_prefix('*').unwrap_or(named))
}

/// Whether `named`, in the sidecar `digest`, is the file `file` beside it: its name,
/// `./` and its name, or a path (absolute, or from the sidecar's directory, where
/// `sha256sum -c` is run) to the same file.
fn names_this_file(digest: &Path, file: &str, named: &str) -> bool {
    if named == file || named.strip_prefix("./") == Some(file) {
        return true;
    }
    let own = digest.with_file_name(file);
    let there = digest.with_file_name("").join(named);
    matches!(
        (std::fs::canonicalize(there), std::fs::canonicalize(&own)),
        (Ok(a), Ok(b)) if a == b
    )
}

/// `<file>.sha256` beside a publication: [`canonical_sha256`] of its cells and the
/// file's name, in `sha256sum`'s layout.
pub fn digest_path(out: &Path) -> std::path::PathBuf {
    let mut name = out.file_name().unwrap_or_default().to_os_string();
    name.push(".sha256");
    out.with_file_name(name)
}

/// The line a digest file holds for `out` with digest `hex`.
pub fn digest_line(out: &Path, hex: &str) -> String {
    format!(
        "{hex}  {}\n",
        out.file_name().unwrap_or_default().to_string_lossy()
    )
}

/// A fixings file (or one written beside it) as text cells, exactly as they stand:
/// what `rentix verify` compares, cell by cell, with a recomputation rendered the
/// same way ([`Table::rendered`]). A CSV file must be within the fixings size limit.
pub fn read_cells(path: &Path) -> Result<rentix_table::TextTable, FixingsError> {
    if TableFormat::of(path)? == TableFormat::Csv {
        rentix_core::check_file(path, rentix_core::MAX_FIXINGS_BYTES).map_err(|e| {
            FixingsError::Input {
                path: path.to_path_buf(),
                detail: e.to_string(),
            }
        })?;
    }
    Ok(rentix_table::TextTable::read(path)?)
}

/// SHA-256 of a published file's bytes (a fixings file or a restatement log, read
/// within the fixings size limit).
pub fn file_sha256(path: &Path) -> Result<String, FixingsError> {
    use sha2::{Digest, Sha256};
    let input = |detail: String| FixingsError::Input {
        path: path.to_path_buf(),
        detail,
    };
    rentix_core::check_file(path, rentix_core::MAX_FIXINGS_BYTES)
        .map_err(|e| input(e.to_string()))?;
    let mut f = std::fs::File::open(path).map_err(|e| input(e.to_string()))?;
    let mut h = Sha256::new();
    std::io::copy(&mut f, &mut h).map_err(|e| input(e.to_string()))?;
    Ok(rentix_core::hex(&h.finalize()))
}

/// Refuses a published file (daily or intraday) that no longer matches the digest
/// beside it (`<file>.sha256`): a command that reads a publication (settle,
/// backtest, track) would otherwise settle on bytes nobody published. A CSV
/// file's digest is of its bytes, a Parquet file's of its cells as text (as
/// `rentix verify` checks them); a file without a digest (a benchmark the user
/// brought) is read as it is.
pub fn check_published(path: &Path) -> Result<(), FixingsError> {
    let digest = digest_path(path);
    if !digest.exists() {
        return Ok(());
    }
    let Some(recorded) = read_digest(&digest)? else {
        return Ok(());
    };
    let input = |detail: String| FixingsError::Input {
        path: path.to_path_buf(),
        detail,
    };
    let actual = match TableFormat::of(path)? {
        TableFormat::Csv => file_sha256(path)?,
        TableFormat::Parquet => canonical_sha256_text(&read_cells(path)?),
    };
    if actual == recorded {
        return Ok(());
    }
    Err(input(format!(
        "does not match its digest {} (SHA-256 {actual}, recorded {recorded}): the file was changed since it was published; restore it from the publication (`rentix verify` names the cells that differ)",
        digest.file_name().unwrap_or_default().to_string_lossy()
    )))
}

/// Reads a fixings file written by `rentix index` (CSV or Parquet).
pub fn read_fixings(path: &Path) -> Result<Vec<Fixing>, FixingsError> {
    fixings_of(path, &records(path)?, 0)
}

/// The fixings of part of a CSV fixings file: `header_and_rows` is its header line
/// followed by the rows after the first `rows_before` (row numbers in errors are the
/// file's).
pub fn read_fixings_part(
    path: &Path,
    header_and_rows: &[u8],
    rows_before: usize,
) -> Result<Vec<Fixing>, FixingsError> {
    let rdr = csv::Reader::from_reader(header_and_rows);
    fixings_of(path, &csv_records(path, rdr, rows_before)?, rows_before)
}

/// The fixings of a file's records; `rows_before` rows of the file come before them.
fn fixings_of(
    path: &Path,
    records: &Records,
    rows_before: usize,
) -> Result<Vec<Fixing>, FixingsError> {
    if let Some(unit) = external_columns(path, records)? {
        return external_fixings(path, records, rows_before, unit);
    }
    // Rows are read in parallel; the error reported is the first row's, in file
    // order, as a reader row by row reports it.
    let read: Vec<Result<Fixing, FixingsError>> = records
        .rows
        .par_iter()
        .enumerate()
        .map(|(n, rec)| fixing_of(path, records, rec, rows_before + n + 1))
        .collect();
    read.into_iter().collect()
}

/// The fixing of record `rec`, row `row` of the file.
fn fixing_of(
    path: &Path,
    records: &Records,
    rec: &csv::StringRecord,
    row: usize,
) -> Result<Fixing, FixingsError> {
    let bad = |row: usize, detail: String| FixingsError::Fixings {
        path: path.to_path_buf(),
        row,
        detail,
    };
    let get = |name: &str| -> Result<&str, FixingsError> {
        records
            .get(rec, name)
            .ok_or_else(|| bad(row, format!("missing column {name}")))
    };
    let opt_f = |name: &str| -> Result<Option<f64>, FixingsError> {
        let v = get(name)?;
        if v.is_empty() {
            return Ok(None);
        }
        let x: f64 = v
            .parse()
            .map_err(|_| bad(row, format!("{name}: {v:?} is not a number")))?;
        if !x.is_finite() {
            return Err(bad(row, format!("{name}: {v:?} is not finite")));
        }
        Ok(Some(x))
    };
    let uint = |name: &str| -> Result<usize, FixingsError> {
        let v = get(name)?;
        v.parse()
            .map_err(|_| bad(row, format!("{name}: {v:?} is not a count")))
    };
    // Columns added after the first files were written: absent, they read as
    // empty; present, a cell that does not read is refused like any other.
    let later = |name: &str| -> Result<Option<f64>, FixingsError> {
        if records.index.contains_key(name) {
            opt_f(name)
        } else {
            Ok(None)
        }
    };
    let publication =
        publication_of(records.get(rec, "publication")).map_err(|detail| bad(row, detail))?;
    let date = NaiveDate::parse_from_str(get("date")?, "%Y-%m-%d")
        .map_err(|e| bad(row, format!("date: {e}")))?;
    for (name, max) in [
        ("grade", 200),
        ("methodology_version", 64),
        ("method", 64),
        ("flags", 2000),
        ("input_sha256", 64),
    ] {
        check_text(name, get(name)?, max).map_err(|e| bad(row, e))?;
    }
    let level = match get("level")? {
        "" => None,
        v => Some(
            v.parse::<i64>()
                .ok()
                .and_then(FixingLevel::from_number)
                .ok_or_else(|| bad(row, format!("level: {v:?} is not 1 to 4")))?,
        ),
    };
    let fixing = Fixing {
        date,
        grade: IndexId::of_row(get("grade")?, get("method")?),
        value: match get("value")? {
            "" => None,
            v => Some(plausible_value(v).map_err(|e| bad(row, e))?),
        },
        method: get("method")?.to_string(),
        level,
        n_obs: uint("n_obs")?,
        n_trades: uint("n_trades")?,
        n_firm: uint("n_firm")?,
        n_listings: uint("n_listings")?,
        n_contributors: uint("n_contributors")?,
        volume_gpu_hours: opt_f("volume_gpu_hours")?.unwrap_or(0.0),
        p1: later("p1")?,
        p25: opt_f("p25")?,
        p75: opt_f("p75")?,
        p99: later("p99")?,
        max_contributor_share: opt_f("max_contributor_share")?,
        sufficient: sufficient_cell(get("sufficient")?)
            .ok_or_else(|| bad(row, "sufficient: not true or false".to_string()))?,
        flags: get("flags")?.to_string(),
        methodology_version: get("methodology_version")?.to_string(),
        input_sha256: get("input_sha256")?.to_string(),
        publication,
        change_1d: later("change_1d")?,
        change_7d: later("change_7d")?,
        change_30d: later("change_30d")?,
        contributor_hhi: later("contributor_hhi")?,
    };
    if let Ok(u) = get("unit") {
        check_unit(&fixing, u).map_err(|e| bad(row, e))?;
    }
    Ok(fixing)
}

/// What a fixings file of rentix holds beyond `date, grade, value`: the rest of the
/// product contract's columns, each fixing's provenance.
fn provenance() -> &'static [&'static str] {
    &FIXING_COLUMNS[3..18]
}

/// Whether the file is a benchmark the user brought: `date, grade, value` (and
/// optionally `unit`) without any of rentix's provenance columns. `Some(has_unit)`
/// for such a file; `None` for a rentix file with every column; refused, naming
/// every missing column at once, when it has some provenance columns but not all,
/// or lacks one of the three (and an intraday file, which its own reader reads).
fn external_columns(path: &Path, records: &Records) -> Result<Option<bool>, FixingsError> {
    let has = |c: &&str| records.index.contains_key(*c);
    if has(&"fixed_at") && !has(&"level") {
        return Err(FixingsError::Input {
            path: path.to_path_buf(),
            detail: "is an intraday fixings file (it has fixed_at): read it with the intraday reader (backtest reads both)".into(),
        });
    }
    let core_missing: Vec<&str> = ["date", "grade", "value"]
        .into_iter()
        .filter(|c| !has(c))
        .collect();
    let prov_missing: Vec<&str> = provenance().iter().copied().filter(|c| !has(c)).collect();
    let external = prov_missing.len() == provenance().len();
    if core_missing.is_empty() && external {
        return Ok(Some(has(&"unit")));
    }
    if core_missing.is_empty() && prov_missing.is_empty() {
        return Ok(None);
    }
    let missing: Vec<&str> = if external {
        core_missing
    } else {
        core_missing.into_iter().chain(prov_missing).collect()
    };
    Err(FixingsError::Input {
        path: path.to_path_buf(),
        detail: format!(
            "lacks the column(s) {}: a fixings file of rentix has them all, and a benchmark of your own needs only date, grade and value (and unit: usd-per-gpu-hour or points)",
            missing.join(", ")
        ),
    })
}

/// The fixings of a benchmark the user brought (module doc of [`external_columns`]):
/// every provenance field unknown (no level, no counts, not sufficient, flagged
/// `external`), the value as given.
fn external_fixings(
    path: &Path,
    records: &Records,
    rows_before: usize,
    has_unit: bool,
) -> Result<Vec<Fixing>, FixingsError> {
    let bad = |row: usize, detail: String| FixingsError::Fixings {
        path: path.to_path_buf(),
        row,
        detail,
    };
    let mut out = Vec::with_capacity(records.rows.len());
    for (n, rec) in records.rows.iter().enumerate() {
        let row = rows_before + n + 1;
        let cell = |name: &str| records.get(rec, name).unwrap_or("");
        let date =
            NaiveDate::parse_from_str(cell("date").get(..10).unwrap_or(cell("date")), "%Y-%m-%d")
                .map_err(|e| bad(row, format!("date: {:?}: {e}", cell("date"))))?;
        let name = cell("grade");
        check_text("grade", name, 200).map_err(|e| bad(row, e))?;
        let value = match cell("value") {
            "" => None,
            v => Some(plausible_value(v).map_err(|e| bad(row, e))?),
        };
        let unit = if has_unit {
            cell("unit")
        } else {
            "usd-per-gpu-hour"
        };
        let grade = match unit {
            "" | "usd-per-gpu-hour" => IndexId::grade(name),
            "points" => IndexId::composite(name, crate::IndexUnit::Points),
            other => {
                return Err(bad(
                    row,
                    format!("unit: {other:?} is neither usd-per-gpu-hour nor points"),
                ))
            }
        };
        out.push(Fixing {
            date,
            grade,
            value,
            method: "external".into(),
            level: None,
            n_obs: 0,
            n_trades: 0,
            n_firm: 0,
            n_listings: 0,
            n_contributors: 0,
            volume_gpu_hours: 0.0,
            p1: None,
            p25: None,
            p75: None,
            p99: None,
            max_contributor_share: None,
            sufficient: false,
            flags: crate::Flag::External.to_string(),
            methodology_version: String::new(),
            input_sha256: String::new(),
            publication: 1,
            change_1d: None,
            change_7d: None,
            change_30d: None,
            contributor_hhi: None,
        });
    }
    Ok(out)
}

/// The values a fixing may hold, USD per GPU-hour or points, in any fixings file
/// read (rentix's own, daily or intraday, and a benchmark of the user's): anything
/// outside is a unit or typing mistake, and a value such as 1e308 made a
/// backtest's squares infinite (NaN effectiveness, a slope of f64::MAX, exit 0) and
/// a settlement rate of 1e298 "settled" (hostile runs).
pub const PLAUSIBLE_VALUES: (f64, f64) = (1e-6, 1e6);

/// A value cell as a positive number within [`PLAUSIBLE_VALUES`].
pub(crate) fn plausible_value(v: &str) -> Result<f64, String> {
    let x = v
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x > 0.0)
        .ok_or_else(|| format!("value: {v:?} is not a positive number"))?;
    let (lo, hi) = PLAUSIBLE_VALUES;
    if (lo..=hi).contains(&x) {
        Ok(x)
    } else {
        Err(format!(
            "value: {v:?} is outside {lo:e} to {hi:e} (USD per GPU-hour or index points): a unit or typing mistake, never a price or a level"
        ))
    }
}

/// A `publication` cell: a number from 1; a file written before the column
/// existed (`None`) holds first publications.
fn publication_of(cell: Option<&str>) -> Result<u32, String> {
    match cell {
        None => Ok(1),
        Some(v) => v
            .parse::<u32>()
            .ok()
            .filter(|n| *n >= 1)
            .ok_or_else(|| format!("publication: {v:?} is not a number from 1")),
    }
}

/// A `sufficient` cell: `true` or `false` as written (anything else is not read as
/// false).
pub fn sufficient_cell(cell: &str) -> Option<bool> {
    match cell {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// A text cell of at most `max` printable characters (a grade not empty).
fn check_text(name: &str, v: &str, max: usize) -> Result<(), String> {
    if v.len() > max || v.chars().any(char::is_control) || (name == "grade" && v.is_empty()) {
        return Err(format!(
            "{name}: {:?} is not a valid value (at most {max} printable characters)",
            v.chars().take(40).collect::<String>()
        ));
    }
    Ok(())
}

/// A `unit` cell (files written before the column existed have none) says what
/// the method makes the value: a composite's points are not dollars.
fn check_unit(f: &Fixing, unit: &str) -> Result<(), String> {
    if unit == f.unit().as_str() {
        return Ok(());
    }
    Err(format!(
        "unit: {unit:?}, but a {} fixing is in {}",
        f.method,
        f.unit().as_str()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IndexUnit;

    fn grade_fixing() -> Fixing {
        Fixing {
            date: NaiveDate::from_ymd_opt(2025, 3, 1).unwrap(),
            grade: IndexId::grade("h100-sxm-80gb/vm/on-demand"),
            value: Some(2.4567),
            method: "vw-median".into(),
            level: Some(FixingLevel::Firm),
            n_obs: 5,
            n_trades: 2,
            n_firm: 6,
            n_listings: 1,
            n_contributors: 4,
            volume_gpu_hours: 123.5,
            p1: Some(2.1),
            p25: Some(2.3),
            p75: Some(2.6),
            p99: Some(2.9),
            max_contributor_share: Some(0.35),
            contributor_hhi: Some(0.26),
            sufficient: true,
            flags: "fallback_firm".into(),
            methodology_version: "rentix-default-2.0".into(),
            input_sha256: "ab".repeat(32),
            publication: 3,
            change_1d: Some(0.01),
            change_7d: Some(0.05),
            change_30d: None,
        }
    }

    fn composite_fixing() -> Fixing {
        Fixing {
            grade: IndexId::composite("h100-sxm-80gb/on-demand-blend", IndexUnit::Points),
            value: Some(104.25),
            method: "jevons-chained".into(),
            level: Some(FixingLevel::Carried),
            p1: None,
            p25: None,
            p75: None,
            p99: None,
            contributor_hhi: None,
            sufficient: false,
            flags: "low_confidence;missing_components=1".into(),
            publication: 1,
            change_1d: None,
            change_7d: None,
            ..grade_fixing()
        }
    }

    /// A row without a value: no level, every optional cell empty.
    fn empty_fixing() -> Fixing {
        Fixing {
            date: NaiveDate::from_ymd_opt(2025, 3, 2).unwrap(),
            value: None,
            level: None,
            n_obs: 0,
            volume_gpu_hours: 0.0,
            p1: None,
            p25: None,
            p75: None,
            p99: None,
            max_contributor_share: None,
            contributor_hhi: None,
            sufficient: false,
            flags: "low_confidence;no_data".into(),
            publication: 1,
            change_1d: None,
            change_7d: None,
            change_30d: None,
            ..grade_fixing()
        }
    }

    #[test]
    fn the_table_has_the_documented_columns_in_order() {
        let t = fixings_table(&[grade_fixing(), composite_fixing()]);
        assert_eq!(t.names, FIXING_COLUMNS);
        assert_eq!(t.height(), 2);
        // The unit follows the method: a grade's dollars, a composite's points.
        let unit: Vec<String> = (0..2).map(|r| t.col("unit").unwrap().cell(r)).collect();
        assert_eq!(unit, ["usd-per-gpu-hour", "points"]);
        // The level is written as its number: firm offers 2, carried 4.
        let level: Vec<String> = (0..2).map(|r| t.col("level").unwrap().cell(r)).collect();
        assert_eq!(level, ["2", "4"]);
        // An empty table still has every column.
        assert_eq!(fixings_table(&[]).names, FIXING_COLUMNS);
    }

    /// A column named twice (an export that appended a corrected `value` column,
    /// say) used to be read silently from its last copy: refused at the header.
    #[test]
    fn a_column_named_twice_is_refused_at_the_header() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.csv");
        fixings_table(&[grade_fixing()]).write(&good).unwrap();
        let text = std::fs::read_to_string(&good).unwrap();
        let mut lines = text.lines();
        let (head, row) = (lines.next().unwrap(), lines.next().unwrap());
        let p = dir.path().join("twice.csv");
        std::fs::write(&p, format!("{head},value\n{row},99.0\n")).unwrap();
        let err = read_fixings(&p).unwrap_err();
        assert!(
            matches!(&err, FixingsError::Fixings { row: 0, detail, .. } if detail == "column \"value\" appears twice (columns 3 and 27)"),
            "{err}"
        );
        assert_eq!(read_fixings(&good).unwrap(), [grade_fixing()]);
        // Trailing empty columns of a spreadsheet's export are not names.
        let trailing = dir.path().join("trailing.csv");
        std::fs::write(&trailing, format!("{head},,\n{row},,\n")).unwrap();
        assert_eq!(read_fixings(&trailing).unwrap(), [grade_fixing()]);
    }

    #[test]
    fn a_written_table_reads_back_as_the_same_fixings() {
        let rows = vec![grade_fixing(), composite_fixing(), empty_fixing()];
        let dir = tempfile::tempdir().unwrap();
        let names: &[&str] = if cfg!(feature = "parquet") {
            &["f.csv", "f.parquet"]
        } else {
            &["f.csv"]
        };
        for name in names {
            let p = dir.path().join(name);
            fixings_table(&rows).write(&p).unwrap();
            assert_eq!(read_fixings(&p).unwrap(), rows, "{name}");
        }
        if !cfg!(feature = "parquet") {
            // Built without Parquet: refused by name, never read as something else.
            let p = dir.path().join("f.parquet");
            assert!(matches!(
                fixings_table(&rows).write(&p),
                Err(rentix_table::TableError::NoParquet { .. })
            ));
            assert!(matches!(
                read_fixings(&p),
                Err(FixingsError::Input { .. }) | Err(FixingsError::Table(_))
            ));
        }
    }

    /// The bytes of `t` as a CSV file.
    fn csv_bytes(t: &Table) -> Vec<u8> {
        [t.csv_header().unwrap(), t.csv_rows().unwrap()].concat()
    }

    /// A CSV fixings file of a header and rows: `cells` replaces cells of the
    /// grade row written by [`fixings_table`], by column name, in row `row` (from 1).
    fn edited(dir: &Path, rows: usize, row: usize, cells: &[(&str, &str)]) -> std::path::PathBuf {
        let p = dir.join("f.csv");
        let t = fixings_table(&vec![grade_fixing(); rows]);
        let bytes = csv_bytes(&t);
        let mut rdr = csv::Reader::from_reader(&bytes[..]);
        let mut w = csv::Writer::from_path(&p).unwrap();
        w.write_record(FIXING_COLUMNS).unwrap();
        for (n, rec) in rdr.records().enumerate() {
            let mut rec: Vec<String> = rec.unwrap().iter().map(str::to_string).collect();
            if n + 1 == row {
                for (name, v) in cells {
                    let j = FIXING_COLUMNS.iter().position(|c| c == name).unwrap();
                    rec[j] = (*v).to_string();
                }
            }
            w.write_record(&rec).unwrap();
        }
        w.flush().unwrap();
        p
    }

    fn refusal(p: &Path) -> (usize, String) {
        match read_fixings(p) {
            Err(FixingsError::Fixings { row, detail, .. }) => (row, detail),
            other => panic!("expected a refused row, got {other:?}"),
        }
    }

    #[test]
    fn a_level_outside_1_to_4_is_refused_naming_row_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let p = edited(dir.path(), 3, 2, &[("level", "7")]);
        let (row, detail) = refusal(&p);
        assert_eq!(row, 2);
        assert!(
            detail.starts_with("level:") && detail.contains('7'),
            "{detail}"
        );
        let shown = read_fixings(&p).unwrap_err().to_string();
        assert!(shown.contains("row 2: level"), "{shown}");
    }

    /// Rows are read in parallel; the row refused is still the first bad one in
    /// the file, whatever finishes first (the bad rows sit in different tasks).
    #[test]
    fn the_first_bad_row_in_the_file_is_the_one_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = edited(dir.path(), 5_000, 3_001, &[("level", "7")]);
        let mut bytes = std::fs::read(&p).unwrap();
        // A second bad row far after it, and one just after.
        let text = String::from_utf8(bytes.clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let bad_value = |line: &str| line.replacen(",true,", ",maybe,", 1);
        let mut out: Vec<String> = lines.iter().map(|l| (*l).to_string()).collect();
        out[4_500] = bad_value(lines[4_500]);
        out[3_002] = bad_value(lines[3_002]);
        assert_ne!(out[4_500], lines[4_500]);
        bytes = (out.join("\n") + "\n").into_bytes();
        std::fs::write(&p, bytes).unwrap();
        for _ in 0..5 {
            assert_eq!(refusal(&p).0, 3_001);
        }
    }

    #[test]
    fn a_non_finite_or_non_numeric_value_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for bad in ["NaN", "inf", "-inf", "-2.5", "0"] {
            let p = edited(dir.path(), 1, 1, &[("value", bad)]);
            let (row, detail) = refusal(&p);
            assert_eq!(row, 1);
            assert!(
                detail.starts_with("value:") && detail.contains("not a positive number"),
                "{detail}"
            );
        }
        // A hostile run's daily value of 1e300 gave a settlement of 3.2e298 and an
        // effectiveness of -inf.
        for bad in ["1e300", "2e6", "1e-9"] {
            let p = edited(dir.path(), 1, 1, &[("value", bad)]);
            let (row, detail) = refusal(&p);
            assert_eq!(row, 1);
            assert!(detail.contains("outside 1e-6 to 1e6"), "{detail}");
        }
        let p = edited(dir.path(), 2, 2, &[("n_obs", "three")]);
        let (row, detail) = refusal(&p);
        assert_eq!(row, 2);
        assert!(
            detail.starts_with("n_obs:") && detail.contains("not a count"),
            "{detail}"
        );
    }

    /// The columns added after the first files (p1, p99, the changes, the HHI,
    /// the publication number) and `sufficient` were read leniently: a cell that
    /// did not parse became empty, publication 1, or not sufficient. Present, they
    /// are refused like any other column.
    #[test]
    fn a_bad_cell_of_a_later_column_or_of_sufficient_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for (column, cell, says) in [
            ("p99", "high", "p99:"),
            ("change_7d", "inf", "change_7d:"),
            ("publication", "0", "publication:"),
            ("publication", "two", "publication:"),
            ("sufficient", "yes", "sufficient:"),
        ] {
            let p = edited(dir.path(), 2, 2, &[(column, cell)]);
            let (row, detail) = refusal(&p);
            assert_eq!(row, 2, "{column}");
            assert!(detail.starts_with(says), "{column}: {detail}");
        }
    }

    #[test]
    fn a_unit_that_contradicts_the_method_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        // A chained composite is in points, never dollars.
        let p = edited(
            dir.path(),
            1,
            1,
            &[("method", "jevons-chained"), ("unit", "usd-per-gpu-hour")],
        );
        let (row, detail) = refusal(&p);
        assert_eq!(row, 1);
        assert!(
            detail.starts_with("unit:") && detail.contains("points"),
            "{detail}"
        );
        // A grade's median is in dollars, never points.
        let p = edited(dir.path(), 1, 1, &[("unit", "points")]);
        let (_, detail) = refusal(&p);
        assert!(detail.contains("usd-per-gpu-hour"), "{detail}");
    }

    /// Files written before the `unit` and `publication` columns existed still read:
    /// the unit is not checked, and every row is a first publication.
    #[test]
    fn a_file_without_unit_or_publication_columns_reads_as_first_publications() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("old.csv");
        let keep: Vec<usize> = (0..FIXING_COLUMNS.len())
            .filter(|&j| !["unit", "publication"].contains(&FIXING_COLUMNS[j]))
            .collect();
        let t = fixings_table(&[grade_fixing()]);
        let bytes = csv_bytes(&t);
        let mut rdr = csv::Reader::from_reader(&bytes[..]);
        let mut w = csv::Writer::from_path(&p).unwrap();
        w.write_record(keep.iter().map(|&j| FIXING_COLUMNS[j]))
            .unwrap();
        for rec in rdr.records() {
            let rec = rec.unwrap();
            w.write_record(keep.iter().map(|&j| &rec[j])).unwrap();
        }
        w.flush().unwrap();
        let rows = read_fixings(&p).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].publication, 1);
        assert_eq!(rows[0].value, Some(2.4567));
    }

    #[test]
    fn an_intraday_file_is_refused_with_its_message() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("intraday.csv");
        std::fs::write(
            &p,
            "fixed_at,grade,value\n2025-03-01T12:00:00Z,h100-sxm-80gb/vm/on-demand,2.5\n",
        )
        .unwrap();
        match read_fixings(&p) {
            Err(FixingsError::Input { detail, .. }) => {
                assert!(detail.contains("intraday fixings file"), "{detail}");
                assert!(detail.contains("fixed_at"), "{detail}");
            }
            other => panic!("expected the intraday refusal, got {other:?}"),
        }
    }
}
