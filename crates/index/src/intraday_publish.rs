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
//! contributor), so a day's stamps go at a file's end. A CSV file whose last stamp
//! is before the run's first is continued by appending the day's rows in place
//! (`crate::intraday_append`: from its state, its history not read, or after
//! hashing its bytes once). Any other file (Parquet, a file in the older
//! grade-by-grade order, a run that reaches into published stamps, a linked file)
//! is read whole, checked and written again in stamp order.

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
    /// How the stamps went in: `None`, the file written again whole; appended to
    /// its bytes, `Some(false)` from its state (its history not read) or
    /// `Some(true)` after its bytes were read once and hashed
    /// (`crate::intraday_append`).
    pub appended: Option<bool>,
}

/// The statuses a receipt can have, as written.
const STATUSES: [&str; 5] = [
    "observed",
    "carried",
    "rejected_sigma",
    "rejected_jump",
    "no_weight",
];

/// Refuses stamps whose value no reader of a fixings file accepts, as a daily
/// publication refuses its rows' (nothing is written).
fn readable_values(out: &Path, r: &IntradayResult) -> Result<(), IndexError> {
    crate::restatement::unreadable(
        out,
        r.fixings.iter().map(|f| {
            (f.value, || {
                format!(
                    "{} at {}",
                    f.grade,
                    f.fixed_at
                        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                )
            })
        }),
    )
}

/// Publishes the run `r` of `m` into `out` (module doc).
pub fn publish(
    out: &Path,
    m: &IntradayMethodology,
    r: IntradayResult,
) -> Result<IntradayPublication, IndexError> {
    let format = TableFormat::of(out)?;
    readable_values(out, &r)?;
    let name = out.file_name().unwrap_or_default().to_string_lossy();
    let receipts = rentix_fixings::Companions::of(out).receipts();
    crate::restatement::not_another_publication(out, [receipts])?;
    let _lock = rentix_store::StoreLock::acquire(
        &crate::restatement::publication_lock_path(out),
        &format!("index --out {name}"),
    )?;
    let journal = crate::restatement::journal_path(out);
    let digest = rentix_fixings::digest_path(out);
    let receipts_path = rentix_fixings::Companions::of(out).receipts();
    // A publication killed before its journal left temporaries of these files
    // only: they are swept (under the lock, no other publication of them runs).
    let ours: Vec<String> = [
        out.to_path_buf(),
        digest.clone(),
        receipts_path.clone(),
        crate::intraday_append::state_path(out),
    ]
    .iter()
    .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().to_string()))
    .collect();
    rentix_table::recover(&journal, |name| ours.iter().any(|o| o == name))?;
    let mut r = r;
    let store_through = r.store_through.clone();
    // Each stamp's contributors by name: the order does not depend on which days a
    // run read (contributors are numbered as first seen).
    r.receipts.sort_by(|a, b| {
        (a.fixed_at, &a.grade, &a.contributor).cmp(&(b.fixed_at, &b.grade, &b.contributor))
    });
    if format == TableFormat::Csv && out.exists() {
        if let Some(p) = crate::intraday_append::append(out, m, &r, &journal)? {
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
        store_through,
    };
    result.stamps = merged.fixings.len();
    result.valued = merged.fixings.iter().filter(|f| f.value.is_some()).count();
    write_whole(out, m, &merged, &journal, &mut result)?;
    Ok(result)
}

/// Writes `merged` (every stamp of the file, in publication order) as `out`
/// whole, with its receipts, digest sidecar and, for CSV, its state, in one
/// transaction; `result` gets the receipts file written.
fn write_whole(
    out: &Path,
    m: &IntradayMethodology,
    merged: &IntradayResult,
    journal: &Path,
    result: &mut IntradayPublication,
) -> Result<(), IndexError> {
    let format = TableFormat::of(out)?;
    let receipts_path = rentix_fixings::Companions::of(out).receipts();
    let mut tx = rentix_table::Transaction::new(journal);
    let table = intraday_table(merged, m);
    let receipts = m.intraday.publish_receipts.then(|| receipts_table(merged));
    if format == TableFormat::Csv {
        // A CSV file's digest is the hash of its bytes, saved mid-way in its state
        // so that the next day is appended (`crate::intraday_append`).
        use crate::intraday_append::{stage_csv, stage_state_and_digest, Published};
        let fixings = stage_csv(&mut tx, out, &table)?;
        let receipts_hash = match &receipts {
            Some(t) => Some(stage_csv(&mut tx, &receipts_path, t)?),
            None => None,
        };
        stage_state_and_digest(
            &mut tx,
            out,
            m,
            &Published {
                stamps: result.stamps,
                valued: result.valued,
                last: merged
                    .fixings
                    .last()
                    .map(|f| (f.fixed_at, f.grade.as_str())),
                fixings: &fixings,
                receipts: receipts_hash.as_ref(),
                store_through: merged.store_through.as_ref(),
            },
        )?;
    } else {
        table.stage(&mut tx, out)?;
        let fixings_digest = rentix_fixings::canonical_sha256(&table, format)?;
        let receipts_digest = match &receipts {
            Some(t) => {
                t.stage(&mut tx, &receipts_path)?;
                tx.staged_sha256(&receipts_path).map(str::to_string)
            }
            None => None,
        };
        stage_digest(
            &mut tx,
            out,
            &fixings_digest,
            receipts_digest
                .as_deref()
                .map(|h| (receipts_path.as_path(), h)),
            None,
        )?;
    }
    if receipts.is_some() {
        result.receipts = Some(receipts_path);
    }
    // A state left from an earlier publication of this file no longer describes
    // it when a file of no row is written: it is removed with the commit.
    let stale = crate::intraday_append::state_path(out);
    let remove_stale = format == TableFormat::Csv && result.stamps == 0 && stale.exists();
    commit_whole(tx)?;
    if remove_stale {
        let _ = std::fs::remove_file(&stale);
    }
    Ok(())
}

/// Commits `tx` with a signal waiting for it: the publication is in place whole or
/// not at all, and the message on exit says which (a signal during an append said
/// "nothing was committed" above a file that held the day's rows).
pub(crate) fn commit_whole(tx: rentix_table::Transaction) -> Result<(), IndexError> {
    let mut committed = rentix_store::committing();
    tx.commit()?;
    *committed = Some("the publication was put in place whole");
    Ok(())
}

/// Stages the digest sidecar of `out`: its digest, then the SHA-256 of the bytes
/// of its receipts and of its state, each when given, in `sha256sum`'s layout
/// (`sha256sum -c` checks a CSV publication and the files beside it).
pub(crate) fn stage_digest(
    tx: &mut rentix_table::Transaction,
    out: &Path,
    fixings: &str,
    receipts: Option<(&Path, &str)>,
    state: Option<(&Path, &str)>,
) -> Result<(), IndexError> {
    let digest = rentix_fixings::digest_path(out);
    let mut text = rentix_fixings::digest_line(out, fixings);
    for (path, hex) in receipts.into_iter().chain(state) {
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
