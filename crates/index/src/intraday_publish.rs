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
    let mut rows: BTreeMap<(String, DateTime<Utc>), IntradayFixing> = old
        .into_iter()
        .map(|f| ((f.grade.clone(), f.fixed_at), f))
        .collect();
    let mut added: BTreeSet<(String, DateTime<Utc>)> = BTreeSet::new();
    for f in r.fixings {
        let key = (f.grade.clone(), f.fixed_at);
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
                        .filter(|x| added.contains(&(x.grade.clone(), x.fixed_at))),
                )
                .collect();
            // Grade by grade, stamp by stamp, each stamp's contributors in the
            // order the run gave them: the order of a run over every stamp.
            v.sort_by(|a, b| (&a.grade, a.fixed_at).cmp(&(&b.grade, b.fixed_at)));
            v
        },
        unheard_books: Vec::new(),
    };
    result.stamps = merged.fixings.len();
    result.valued = merged.fixings.iter().filter(|f| f.value.is_some()).count();
    let mut tx = rentix_table::Transaction::new(&journal);
    let table = intraday_table(&merged, m);
    table.stage(&mut tx, out)?;
    let line = rentix_fixings::digest_line(out, &rentix_fixings::canonical_sha256(&table, format)?);
    tx.stage(&digest, |w| {
        w.write_all(line.as_bytes())
            .map_err(|source| rentix_table::TableError::Write {
                path: digest.clone(),
                source,
            })
    })?;
    if m.intraday.publish_receipts {
        receipts_table(&merged).stage(&mut tx, &receipts_path)?;
        result.receipts = Some(receipts_path);
    }
    tx.commit()?;
    Ok(result)
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
