//! Publishing intraday fixings into a file that already holds some.
//!
//! An intraday stamp is never revised once published (docs/methodology.md,
//! "Intraday fixings"): a publication adds the stamps the file does not hold yet and
//! leaves every published stamp, and its receipts, as they are. Stamps the run now
//! fixes differently (late data) are counted, never rewritten. The file, its digest
//! and its receipts are written in one transaction under the publication lock that
//! daily publications take, and a file that cannot be continued is refused with
//! nothing written: a daily fixings file, another methodology, a file or receipts
//! edited since they were published.
//!
//! Rows are in stamp order (stamp, then grade; receipts: stamp, grade,
//! contributor), so a day's stamps go at a file's end. A CSV file whose bytes
//! match its digest, whose receipts match theirs (the sidecar's second line) and
//! whose last stamp is before the run's first is continued by copying its bytes
//! and appending the day's rows: its history is hashed and copied, never parsed
//! or held in memory. Any other file (Parquet, a file in the older grade-by-grade
//! order, a run that reaches into published stamps) is read whole, checked and
//! written again in stamp order.

use crate::error::IndexError;
use crate::intraday::{intraday_table, receipts_table, IntradayMethodology, IntradayResult};
use crate::intraday::{IntradayFixing, Receipt, SigmaUnits};
use chrono::{DateTime, Utc};
use rentix_table::TableFormat;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What an intraday publication did.
#[derive(Debug, Clone, Default)]
pub struct IntradayPublication {
    /// Stamps in the file after the publication.
    pub stamps: usize,
    /// Of those, stamps with a value.
    pub valued: usize,
    /// Stamps this publication added.
    pub added: usize,
    /// Stamps of the run that the file already held, kept as published.
    pub kept: usize,
    /// Of `kept`, those the run now fixes differently (data that arrived after
    /// they were published): not revised.
    pub unrevised: usize,
    /// The first of the `unrevised` stamps.
    pub unrevised_first: Option<DateTime<Utc>>,
    /// The digest file written.
    pub digest: PathBuf,
    /// The receipts file written, when the methodology publishes receipts.
    pub receipts: Option<PathBuf>,
    /// Book contributors no observation of the run came from
    /// ([`IntradayResult::unheard_books`]).
    pub unheard_books: Vec<String>,
    /// Whether the stamps were appended to the file's bytes (its history hashed
    /// and copied, not read back: module doc) rather than the file rewritten.
    pub appended: bool,
}

/// The statuses a receipt can have, as written.
const STATUSES: [&str; 5] = [
    "observed",
    "carried",
    "rejected_sigma",
    "rejected_jump",
    "no_weight",
];

/// Publishes the run `r` of `m` into `out` (module doc).
pub fn publish(
    out: &Path,
    m: &IntradayMethodology,
    r: IntradayResult,
) -> Result<IntradayPublication, IndexError> {
    let format = TableFormat::of(out)?;
    let name = out.file_name().unwrap_or_default().to_string_lossy();
    let _lock = rentix_store::StoreLock::acquire(
        &crate::restatement::publication_lock_path(out),
        &format!("index --out {name}"),
    )?;
    let journal = crate::restatement::journal_path(out);
    rentix_table::recover(&journal, |_| false)?;
    let digest = rentix_fixings::digest_path(out);
    let receipts_path = rentix_fixings::Companions::of(out).receipts();
    let mut r = r;
    // Each stamp's contributors by name: the order does not depend on which days a
    // run read (contributors are numbered as first seen).
    r.receipts.sort_by(|a, b| {
        (a.fixed_at, &a.grade, &a.contributor).cmp(&(b.fixed_at, &b.grade, &b.contributor))
    });
    if format == TableFormat::Csv && out.exists() {
        if let Some(p) = append(out, m, &r, &journal)? {
            return Ok(p);
        }
    }
    let (old, old_receipts) = if out.exists() {
        published(out, m, &digest, &receipts_path)?
    } else {
        (Vec::new(), Vec::new())
    };
    let mut result = IntradayPublication {
        digest: digest.clone(),
        unheard_books: r.unheard_books,
        ..Default::default()
    };
    let mut rows: BTreeMap<(DateTime<Utc>, String), IntradayFixing> = old
        .into_iter()
        .map(|f| ((f.fixed_at, f.grade.clone()), f))
        .collect();
    let mut added: BTreeSet<(DateTime<Utc>, String)> = BTreeSet::new();
    for f in r.fixings {
        let key = (f.fixed_at, f.grade.clone());
        match rows.get(&key) {
            Some(o) => {
                result.kept += 1;
                if *o != f {
                    result.unrevised += 1;
                    result.unrevised_first = Some(
                        result
                            .unrevised_first
                            .map_or(f.fixed_at, |t| t.min(f.fixed_at)),
                    );
                }
            }
            None => {
                added.insert(key.clone());
                rows.insert(key, f);
            }
        }
    }
    result.added = added.len();
    let merged = IntradayResult {
        fixings: rows.into_values().collect(),
        receipts: {
            // Receipts published before the `sigma_unit` column were fixed under
            // this methodology (`published` checked it): they get its unit.
            let unit = m.intraday.sigma_votes.as_ref().map(|sv| sv.units);
            let mut v: Vec<Receipt> = old_receipts
                .into_iter()
                .map(|mut x| {
                    x.sigma_unit = x.sigma_unit.or(x.sigma.and(unit));
                    x
                })
                .chain(
                    r.receipts
                        .into_iter()
                        .filter(|x| added.contains(&(x.fixed_at, x.grade.clone()))),
                )
                .collect();
            // Stamp by stamp, grade by grade; each stamp's contributors as
            // published (a stable sort), new ones by name.
            v.sort_by(|a, b| (a.fixed_at, &a.grade).cmp(&(b.fixed_at, &b.grade)));
            v
        },
        unheard_books: Vec::new(),
    };
    result.stamps = merged.fixings.len();
    result.valued = merged.fixings.iter().filter(|f| f.value.is_some()).count();
    let mut tx = rentix_table::Transaction::new(&journal);
    let table = intraday_table(&merged, m);
    table.stage(&mut tx, out)?;
    let fixings_digest = rentix_fixings::canonical_sha256(&table, format)?;
    let receipts_digest = if m.intraday.publish_receipts {
        receipts_table(&merged).stage(&mut tx, &receipts_path)?;
        result.receipts = Some(receipts_path.clone());
        tx.staged_sha256(&receipts_path).map(str::to_string)
    } else {
        None
    };
    stage_digest(
        &mut tx,
        out,
        &fixings_digest,
        receipts_digest
            .as_deref()
            .map(|h| (receipts_path.as_path(), h)),
    )?;
    tx.commit()?;
    Ok(result)
}

/// Stages the digest sidecar of `out`: its digest, then, when the methodology
/// publishes receipts, the SHA-256 of the receipts file's bytes, in `sha256sum`'s
/// layout (`sha256sum -c` checks a CSV publication and its receipts).
fn stage_digest(
    tx: &mut rentix_table::Transaction,
    out: &Path,
    fixings: &str,
    receipts: Option<(&Path, &str)>,
) -> Result<(), IndexError> {
    let digest = rentix_fixings::digest_path(out);
    let mut text = rentix_fixings::digest_line(out, fixings);
    if let Some((path, hex)) = receipts {
        text.push_str(&rentix_fixings::digest_line(path, hex));
    }
    tx.stage(&digest, |w| {
        w.write_all(text.as_bytes())
            .map_err(|source| rentix_table::TableError::Write {
                path: digest.clone(),
                source,
            })
    })?;
    Ok(())
}

/// The SHA-256 the digest sidecar `digest` records for the file named like
/// `file` (a line after the first: an intraday publication's receipts), read
/// bounded; `None` when it records none.
pub fn recorded_for(digest: &Path, file: &Path) -> Option<String> {
    let text = rentix_core::read_text(digest, rentix_core::MAX_DIGEST_BYTES).ok()?;
    let name = file.file_name()?.to_string_lossy();
    text.lines().skip(1).find_map(|l| {
        let (hex, n) = l.split_once("  ")?;
        (n == name).then(|| hex.to_string())
    })
}

/// One pass over a CSV file's bytes: its header line, the hash of every byte,
/// and of its rows (never parsed as values) how many, how many with a value, the
/// last (stamp, grade) and whether they are in strictly increasing (stamp, grade)
/// order under one methodology version.
struct Scan {
    sha: sha2::Sha256,
    rows: usize,
    valued: usize,
    last_stamp: Option<String>,
    in_order: bool,
}

/// [`Scan`] of `path` whose first line must be `header`; `fields` gives the
/// positions of (stamp, grade, value, version) or `None` for a file of another
/// kind (receipts: only hashed). `None` when the header differs or a row is not
/// as this crate writes them (a quote, another number of fields).
fn scan(
    path: &Path,
    header: &[u8],
    fields: Option<(usize, usize, usize, usize, &str)>,
) -> Result<Option<Scan>, IndexError> {
    use sha2::Digest;
    use std::io::BufRead;
    let io = |source| {
        IndexError::from(rentix_table::TableError::Read {
            path: path.to_path_buf(),
            source,
        })
    };
    let mut rd = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(path).map_err(io)?);
    let mut line = Vec::with_capacity(512);
    let mut out = Scan {
        sha: sha2::Sha256::new(),
        rows: 0,
        valued: 0,
        last_stamp: None,
        in_order: true,
    };
    if rd.read_until(b'\n', &mut line).map_err(io)? == 0 || line != header {
        return Ok(None);
    }
    out.sha.update(&line);
    let mut last: Vec<u8> = Vec::new();
    loop {
        line.clear();
        if rd.read_until(b'\n', &mut line).map_err(io)? == 0 {
            break;
        }
        out.sha.update(&line);
        out.rows += 1;
        let Some((stamp, grade, value, version, wanted)) = fields else {
            continue;
        };
        if line.contains(&b'"') || !line.ends_with(b"\n") {
            return Ok(None);
        }
        let cells: Vec<&[u8]> = line[..line.len() - 1].split(|b| *b == b',').collect();
        if cells.len() != INTRADAY_COLUMNS_LEN {
            return Ok(None);
        }
        if !cells[value].is_empty() {
            out.valued += 1;
        }
        // (stamp, grade) as bytes: stamps are written in one fixed-width layout.
        let key = [cells[stamp], b",", cells[grade]].concat();
        if key <= last || cells[version] != wanted.as_bytes() {
            out.in_order = false;
        }
        last = key;
    }
    if fields.is_some() && out.rows > 0 {
        let text = String::from_utf8_lossy(&last);
        out.last_stamp = text.split(',').next().map(str::to_string);
    }
    Ok(Some(out))
}

const INTRADAY_COLUMNS_LEN: usize = rentix_fixings::intraday::INTRADAY_COLUMNS.len();

/// Continues a CSV publication by appending the run's stamps (module doc), or
/// `None` when the file cannot be continued so: then it is read whole.
fn append(
    out: &Path,
    m: &IntradayMethodology,
    r: &IntradayResult,
    journal: &Path,
) -> Result<Option<IntradayPublication>, IndexError> {
    use sha2::Digest;
    let digest = rentix_fixings::digest_path(out);
    let receipts_path = rentix_fixings::Companions::of(out).receipts();
    let Some(recorded) = rentix_fixings::read_digest(&digest)? else {
        return Ok(None);
    };
    let mut fresh = r.fixings.clone();
    fresh.sort_by(|a, b| (a.fixed_at, &a.grade).cmp(&(b.fixed_at, &b.grade)));
    let new = IntradayResult {
        fixings: fresh,
        receipts: r.receipts.clone(),
        unheard_books: Vec::new(),
    };
    let table = intraday_table(&new, m);
    let col = |name: &str| {
        rentix_fixings::intraday::INTRADAY_COLUMNS
            .iter()
            .position(|c| *c == name)
            .unwrap_or(usize::MAX)
    };
    let Some(published) = scan(
        out,
        &table.csv_header()?,
        Some((
            col("fixed_at"),
            col("grade"),
            col("value"),
            col("methodology_version"),
            &m.version,
        )),
    )?
    else {
        return Ok(None);
    };
    let Some(last) = published
        .last_stamp
        .as_deref()
        .filter(|_| published.in_order)
    else {
        return Ok(None);
    };
    if rentix_core::hex(&published.sha.clone().finalize()) != recorded {
        return Ok(None);
    }
    let Ok(last) = DateTime::parse_from_rfc3339(last) else {
        return Ok(None);
    };
    if new.fixings.first().is_some_and(|f| f.fixed_at <= last) {
        return Ok(None);
    }
    let receipts_table_new = receipts_table(&new);
    let receipts_scan = if m.intraday.publish_receipts {
        let Some(recorded) = recorded_for(&digest, &receipts_path) else {
            return Ok(None);
        };
        if !receipts_path.is_file() {
            return Ok(None);
        }
        match scan(&receipts_path, &receipts_table_new.csv_header()?, None)? {
            Some(s) if rentix_core::hex(&s.sha.clone().finalize()) == recorded => Some(s),
            _ => return Ok(None),
        }
    } else {
        None
    };
    let mut tx = rentix_table::Transaction::new(journal);
    let rows = table.csv_rows()?;
    let fixings_digest = copy_then_append(&mut tx, out, &recorded, &rows)?;
    let mut receipts_digest = None;
    if let Some(s) = &receipts_scan {
        let rows = receipts_table_new.csv_rows()?;
        let was = rentix_core::hex(&s.sha.clone().finalize());
        receipts_digest = Some(copy_then_append(&mut tx, &receipts_path, &was, &rows)?);
    }
    stage_digest(
        &mut tx,
        out,
        &fixings_digest,
        receipts_digest
            .as_deref()
            .map(|h| (receipts_path.as_path(), h)),
    )?;
    tx.commit()?;
    let added = new.fixings.len();
    Ok(Some(IntradayPublication {
        stamps: published.rows + added,
        valued: published.valued + new.fixings.iter().filter(|f| f.value.is_some()).count(),
        added,
        kept: 0,
        unrevised: 0,
        unrevised_first: None,
        digest,
        receipts: receipts_scan.map(|_| receipts_path),
        unheard_books: r.unheard_books.clone(),
        appended: true,
    }))
}

/// Stages `path`'s bytes followed by `rows`, refusing bytes that are no longer
/// those hashed to `was` (the file changed since it was checked); returns the
/// SHA-256 of the staged file.
fn copy_then_append(
    tx: &mut rentix_table::Transaction,
    path: &Path,
    was: &str,
    rows: &[u8],
) -> Result<String, IndexError> {
    use sha2::Digest;
    let werr = |source| rentix_table::TableError::Write {
        path: path.to_path_buf(),
        source,
    };
    tx.stage(path, |w| {
        let mut file = std::fs::File::open(path).map_err(werr)?;
        let mut sha = sha2::Sha256::new();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = std::io::Read::read(&mut file, &mut buf).map_err(werr)?;
            if n == 0 {
                break;
            }
            sha.update(&buf[..n]);
            w.write_all(&buf[..n]).map_err(werr)?;
        }
        if rentix_core::hex(&sha.finalize()) != was {
            return Err(werr(std::io::Error::other(
                "the file changed while it was being published; nothing was published",
            )));
        }
        w.write_all(rows).map_err(werr)
    })?;
    Ok(tx
        .staged_sha256(path)
        .map(str::to_string)
        .unwrap_or_default())
}

/// The stamps and receipts `out` holds, refused when continuing them would mix
/// cadences or methodologies or build on rows edited since they were published.
fn published(
    out: &Path,
    m: &IntradayMethodology,
    digest: &Path,
    receipts: &Path,
) -> Result<(Vec<IntradayFixing>, Vec<Receipt>), IndexError> {
    let shown = out.display();
    if !rentix_fixings::intraday::is_intraday_file(out)? {
        return Err(IndexError::Config(format!(
            "{shown} holds daily fixings: an intraday methodology publishes its stamps into a file of its own; nothing was published. Give another --out"
        )));
    }
    let cells = rentix_fixings::read_cells(out)?;
    let actual = rentix_fixings::canonical_sha256_text(&cells);
    match rentix_fixings::read_digest(digest)? {
        Some(recorded) if recorded == actual => {}
        recorded => {
            return Err(IndexError::Data(format!(
                "{shown} does not match its digest {} ({}): it was edited since it was published, and its stamps are never revised; nothing was published. `rentix verify` names the rows; restore the file, or publish into a new one",
                digest.display(),
                match recorded {
                    Some(r) => format!("recorded {r}, the file hashes to {actual}"),
                    None => "no digest file".into(),
                }
            )));
        }
    }
    let (rows, version) = rentix_fixings::intraday::read_intraday_versioned(out)?;
    if let Some(v) = version.filter(|v| *v != m.version) {
        return Err(IndexError::Config(format!(
            "{shown} was published under methodology {v:?}, not {:?}: a file holds one methodology; nothing was published. Publish into a new file",
            m.version
        )));
    }
    if !m.intraday.publish_receipts {
        return Ok((rows, Vec::new()));
    }
    if !receipts.exists() {
        if rows.is_empty() {
            return Ok((rows, Vec::new()));
        }
        return Err(IndexError::Data(format!(
            "{} is missing: the receipts of {shown}'s {} published stamps are gone, and a publication would leave them unaccounted for; nothing was published. Restore it, or publish into a new file",
            receipts.display(),
            rows.len()
        )));
    }
    if let Some(recorded) = recorded_for(digest, receipts) {
        let actual = rentix_store::sha256_file(receipts)?;
        if actual != recorded {
            return Err(IndexError::Data(format!(
                "{} does not match the digest {} records for it (recorded {recorded}, the file hashes to {actual}): the receipts were edited since they were published, and published stamps are never revised; nothing was published. Restore them, or publish into a new file",
                receipts.display(),
                digest.display()
            )));
        }
    }
    let receipts_read = read_receipts(receipts)?;
    let stamps: BTreeSet<(&str, DateTime<Utc>)> = rows
        .iter()
        .map(|f| (f.grade.as_str(), f.fixed_at))
        .collect();
    let with_receipts: BTreeSet<(&str, DateTime<Utc>)> = receipts_read
        .iter()
        .map(|x| (x.grade.as_str(), x.fixed_at))
        .collect();
    if let Some((g, t)) = with_receipts.difference(&stamps).next() {
        return Err(IndexError::Data(format!(
            "{} holds receipts of {g} at {t}, a stamp {shown} does not hold: the two files are not one publication; nothing was published",
            receipts.display()
        )));
    }
    Ok((rows, receipts_read))
}

/// Reads a receipts file (`receipts_table`'s columns), CSV or Parquet.
pub fn read_receipts(path: &Path) -> Result<Vec<Receipt>, IndexError> {
    let r = rentix_fixings::records(path)?;
    let bad = |row: usize, detail: String| IndexError::Fixings {
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
        let num = |name: &str| -> Result<Option<f64>, IndexError> {
            match get(name)? {
                "" => Ok(None),
                v => v
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .map(Some)
                    .ok_or_else(|| bad(row, format!("{name}: {v:?} is not a number"))),
            }
        };
        let fixed_at = DateTime::parse_from_rfc3339(get("fixed_at")?)
            .map_err(|e| bad(row, format!("fixed_at: {e}")))?
            .with_timezone(&Utc);
        let status = get("status")?;
        let status = STATUSES.iter().find(|s| **s == status).ok_or_else(|| {
            bad(
                row,
                format!("status: {status:?} is not one of {STATUSES:?}"),
            )
        })?;
        out.push(Receipt {
            fixed_at,
            grade: get("grade")?.to_string(),
            contributor: get("contributor")?.to_string(),
            // A published record's seats may come without their prints.
            print: match r.get(rec, "print") {
                None => None,
                Some(_) => num("print")?,
            },
            vote: num("vote")?,
            sigma: num("sigma")?,
            // Receipts written before the column say nothing of the unit.
            sigma_unit: match r.get(rec, "sigma_unit").unwrap_or("") {
                "" => None,
                u => Some(SigmaUnits::parse(u).ok_or_else(|| {
                    bad(
                        row,
                        format!("sigma_unit: {u:?} is not \"relative\" or \"dollars\""),
                    )
                })?),
            },
            weight: num("weight")?.ok_or_else(|| bad(row, "weight: empty".into()))?,
            status,
        });
    }
    Ok(out)
}
