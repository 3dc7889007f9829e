//! The daily publication's fast path. A publication from date D (`--from D`) leaves
//! every row dated before D as it was; in a CSV file those rows are the bytes before
//! the first row dated D or later (files are written sorted by date). They are
//! copied as they stand instead of being read, re-rendered and written again, so a
//! one-day publication costs the day, not the history: only the rows from D on are
//! parsed, merged and written.
//!
//! The fixings file's rows are copied only when the file still matches the digest
//! it was published with (`<file>.sha256`); a publication over a file that does not
//! (edited, or its digest missing) is refused, whatever its window
//! ([`read_as_published`]). The files beside it (forward
//! curves, tier spreads) are derived date by date from the fixings, so their rows
//! before D are copied the same way, when their header is the one this version
//! writes and their dates are in order. Anything else takes the whole path, which
//! writes the same bytes: the identity tests (`tests/it/incremental.rs`) compare
//! both with one run over the history. Parquet files are always rewritten.

use crate::error::IndexError;
use chrono::NaiveDate;
use rentix_fixings::Fixing;
use rentix_fixings::{digest_path, fixings_table, read_fixings_part};
use rentix_table::{Table, TableFormat};
use sha2::{Digest, Sha256};
use std::path::Path;

/// The rows of a published fixings file before the window, kept as bytes, and the
/// rows from the window's first date on, parsed.
#[derive(Debug)]
pub(crate) struct Kept {
    /// The file's bytes up to its first row dated on or after the window's first
    /// date: the header line and every earlier row.
    pub(crate) prefix: Vec<u8>,
    /// Rows in `prefix` (the header not counted).
    pub(crate) rows: usize,
    /// The file's rows from the window's first date on.
    pub(crate) rest: Vec<Fixing>,
}

/// How a publication reads the file it publishes into.
#[derive(Debug)]
pub(crate) enum Reading {
    /// The rows before the window are kept as bytes.
    Kept(Kept),
    /// The file is read whole (no file yet, Parquet, no window start, rows out of
    /// order, a header of another version).
    Whole,
    /// The file no longer matches its digest: nothing may be published over it.
    Edited(IndexError),
}

/// How the fixings file `out` is read by a publication whose window starts `from`.
pub(crate) fn fixings_reading(out: &Path, from: Option<NaiveDate>) -> Result<Reading, IndexError> {
    let Some(from) = from else {
        return Ok(Reading::Whole);
    };
    if TableFormat::of(out)? != TableFormat::Csv || !out.exists() {
        return Ok(Reading::Whole);
    }
    let input = |detail: String| IndexError::Input {
        path: out.to_path_buf(),
        detail,
    };
    rentix_core::check_file(out, rentix_core::MAX_FIXINGS_BYTES)
        .map_err(|e| input(e.to_string()))?;
    let mut bytes = std::fs::read(out).map_err(|e| input(e.to_string()))?;
    let digest = digest_path(out);
    let recorded = rentix_fixings::read_digest(&digest)?.unwrap_or_default();
    // A CSV file as written is its canonical text (`canonical_sha256` writes the
    // cells back with the same writer), so its bytes' digest is the published one.
    if rentix_store::hex(&Sha256::digest(&bytes)) != recorded {
        let recorded = (!recorded.is_empty()).then_some(recorded);
        return Ok(match csv_cells_digest(out, &bytes, recorded.as_deref())? {
            // The cells as published, written otherwise (line endings): read and
            // written whole, as `verify` reads them.
            Ok(()) => Reading::Whole,
            Err(actual) => Reading::Edited(edited(out, recorded, &actual)),
        });
    }
    let header = fixings_table(&[]).csv_header()?;
    let Some((at, rows)) = split_before(&bytes, &header, from) else {
        return Ok(Reading::Whole);
    };
    let mut rest_bytes = header;
    rest_bytes.extend_from_slice(&bytes[at..]);
    let rest = read_fixings_part(out, &rest_bytes, rows)?;
    bytes.truncate(at);
    Ok(Reading::Kept(Kept {
        prefix: bytes,
        rows,
        rest,
    }))
}

/// Every row of the published fixings file `out`, once it is checked against the
/// digest it was published with (`<file>.sha256`: of a CSV file's bytes, of a
/// Parquet file's cells as text); a file that does not match it, or has none, is
/// refused ([`edited`]).
pub(crate) fn read_as_published(out: &Path) -> Result<Vec<Fixing>, IndexError> {
    let recorded = rentix_fixings::read_digest(&digest_path(out))?;
    match TableFormat::of(out)? {
        TableFormat::Csv => {
            rentix_core::check_file(out, rentix_core::MAX_FIXINGS_BYTES).map_err(|e| {
                IndexError::Input {
                    path: out.to_path_buf(),
                    detail: e.to_string(),
                }
            })?;
            let bytes = std::fs::read(out).map_err(|e| IndexError::Input {
                path: out.to_path_buf(),
                detail: e.to_string(),
            })?;
            if let Err(actual) = csv_cells_digest(out, &bytes, recorded.as_deref())? {
                return Err(edited(out, recorded, &actual));
            }
            Ok(read_fixings_part(out, &bytes, 0)?)
        }
        TableFormat::Parquet => {
            let actual = rentix_fixings::canonical_sha256_text(&rentix_fixings::read_cells(out)?);
            if recorded.as_deref() != Some(actual.as_str()) {
                return Err(edited(out, recorded, &actual));
            }
            Ok(rentix_fixings::read_fixings(out)?)
        }
    }
}

/// Whether the CSV file `out` (its `bytes`) holds the cells its digest `recorded`
/// was taken of: its bytes' digest (a file as written is its cells' canonical
/// text), or else its cells' as `verify` reads them back (line endings rewritten
/// by an editor change no cell). `Err`: the digest of the cells as they stand.
fn csv_cells_digest(
    out: &Path,
    bytes: &[u8],
    recorded: Option<&str>,
) -> Result<Result<(), String>, IndexError> {
    if recorded == Some(rentix_store::hex(&Sha256::digest(bytes)).as_str()) {
        return Ok(Ok(()));
    }
    let cells = rentix_fixings::canonical_sha256_text(&rentix_fixings::read_cells(out)?);
    Ok(if recorded == Some(cells.as_str()) {
        Ok(())
    } else {
        Err(cells)
    })
}

/// The refusal to publish over `out`, which hashes to `actual` against the digest
/// `recorded` (`None`: no digest file). Publishing over it would archive its
/// edited rows as a past publication and log their values as first published, the
/// values a backtest settles on by default.
pub(crate) fn edited(out: &Path, recorded: Option<String>, actual: &str) -> IndexError {
    let name = |p: &Path| {
        p.file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string()
    };
    if let Some(r) = recorded
        .as_deref()
        .filter(|r| rentix_fixings::names_another_file(r))
    {
        return IndexError::Data(format!(
            "{} records no digest of {} {r}: the file cannot be checked against its publication; nothing was published. Restore the digest file as it was published (`HEX  {}`), or move the file away to publish afresh",
            name(&digest_path(out)),
            out.display(),
            name(out),
        ));
    }
    IndexError::Data(format!(
        "{} does not match its digest {} ({}): it was changed since it was published, and publishing over it would archive the changed rows as a publication and log their values as first published; nothing was published. `rentix verify` names the rows; restore the file (an archive {}.vN.{} beside it is a past publication as it stood), or move it away to publish afresh",
        out.display(),
        name(&digest_path(out)),
        match recorded {
            Some(r) => format!("recorded {r}, the file hashes to {actual}"),
            None => "no digest file".into(),
        },
        out.file_stem().unwrap_or_default().to_string_lossy(),
        out.extension().unwrap_or_default().to_string_lossy(),
    ))
}

/// The bytes of the file `path` (published beside the fixings, shaped as `shape`:
/// its columns, no rows needed) before its first row dated `from` or later; `None`
/// when they cannot be kept (no such file, another format or header, rows out of
/// date order).
pub(crate) fn companion_prefix(
    path: &Path,
    shape: &Table,
    from: NaiveDate,
) -> Result<Option<Vec<u8>>, IndexError> {
    if TableFormat::of(path)? != TableFormat::Csv || !path.exists() {
        return Ok(None);
    }
    let input = |detail: String| IndexError::Input {
        path: path.to_path_buf(),
        detail,
    };
    rentix_core::check_file(path, rentix_core::MAX_FIXINGS_BYTES)
        .map_err(|e| input(e.to_string()))?;
    let mut bytes = std::fs::read(path).map_err(|e| input(e.to_string()))?;
    let Some((at, _)) = split_before(&bytes, &shape.csv_header()?, from) else {
        return Ok(None);
    };
    bytes.truncate(at);
    Ok(Some(bytes))
}

/// Where the first row dated `from` or later begins in a CSV file's `bytes`
/// (`bytes.len()` when there is none) and how many rows come before it; `None`
/// unless the file begins with `header`, every row's first cell is a date
/// (`YYYY-MM-DD`) and the dates never go back.
fn split_before(bytes: &[u8], header: &[u8], from: NaiveDate) -> Option<(usize, usize)> {
    let body = bytes.strip_prefix(header)?;
    let from = from.format("%Y-%m-%d").to_string();
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(body);
    let mut rec = csv::ByteRecord::new();
    let mut previous: Vec<u8> = Vec::new();
    let mut split = None;
    let mut rows = 0;
    // Every row is checked, after the split too: a later row dated before `from`
    // would be kept by the merge but written after the rows copied.
    loop {
        let at = rdr.position().byte();
        match rdr.read_byte_record(&mut rec) {
            Ok(true) => {}
            Ok(false) => return Some(split.unwrap_or((bytes.len(), rows))),
            Err(_) => return None,
        }
        let date = rec.get(0)?;
        let well_formed = date.len() == 10
            && std::str::from_utf8(date)
                .ok()
                .is_some_and(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").is_ok());
        if !well_formed || previous.as_slice() > date {
            return None;
        }
        if split.is_none() && date >= from.as_bytes() {
            split = Some((header.len() + usize::try_from(at).ok()?, rows));
        }
        previous.clear();
        previous.extend_from_slice(date);
        rows += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn the_split_is_at_the_first_row_of_the_window() {
        let text = b"date,x\n2025-01-01,a\n2025-01-02,\"b,c\"\n2025-01-03,d\n";
        let header = b"date,x\n";
        // Rows of 01-01 and 01-02 come before 2025-01-03: 7 + 13 + 17 bytes.
        assert_eq!(split_before(text, header, d("2025-01-03")), Some((37, 2)));
        assert_eq!(split_before(text, header, d("2025-01-01")), Some((7, 0)));
        // Past the last row: the whole file is kept.
        assert_eq!(
            split_before(text, header, d("2025-02-01")),
            Some((text.len(), 3))
        );
    }

    /// What makes copying bytes sound: a CSV file's bytes as written are the text
    /// its digest is taken of (`canonical_sha256`: the cells read back and written
    /// with the same CSV writer), hostile cells included.
    #[test]
    fn a_csv_file_as_written_is_its_canonical_text() {
        use rentix_table::Col;
        let mut t = Table::new();
        t.push(
            "date",
            Col::dates(
                ["2025-01-01", "2025-01-02", "2025-01-03"]
                    .iter()
                    .map(|s| d(s)),
            ),
        );
        let text = ["=cmd|' /C calc'!A0", "a,\"quoted\", b", ""];
        t.push(
            "text",
            Col::Str(text.iter().map(|s| Some(s.to_string())).collect()),
        );
        t.push("x", Col::F64(vec![Some(0.1 + 0.2), None, Some(-1e-300)]));
        t.push("n", Col::I64(vec![Some(-3), Some(0), None]));
        t.push("b", Col::Bool(vec![Some(true), None, Some(false)]));
        let mut bytes = t.csv_header().unwrap();
        bytes.extend(t.csv_rows().unwrap());
        assert_eq!(
            rentix_store::hex(&Sha256::digest(&bytes)),
            rentix_fixings::canonical_sha256(&t, TableFormat::Csv).unwrap()
        );
    }

    #[test]
    fn a_file_that_cannot_be_split_is_read_whole() {
        let header = b"date,x\n";
        // Another header, dates out of order (before or after the split), a cell
        // that is not a date.
        assert_eq!(
            split_before(b"day,x\n2025-01-01,a\n", header, d("2025-01-02")),
            None
        );
        assert_eq!(
            split_before(
                b"date,x\n2025-01-02,a\n2025-01-01,b\n",
                header,
                d("2025-01-03")
            ),
            None
        );
        assert_eq!(
            split_before(
                b"date,x\n2025-01-05,a\n2025-01-04,b\n",
                header,
                d("2025-01-03")
            ),
            None
        );
        assert_eq!(
            split_before(b"date,x\n2025-1-1,a\n", header, d("2025-01-03")),
            None
        );
    }
}
