//! Vintages of a publication: the restatement log kept beside a fixings file, and
//! the fixings as first published, which a backtest settles on.

use crate::companions::Companions;
use crate::error::FixingsError;
use crate::fixing::Fixing;
use chrono::NaiveDate;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One restated fixing.
#[derive(Debug, Clone, PartialEq)]
pub struct Restatement {
    /// The fixing date of the restated row.
    pub date: NaiveDate,
    /// Its grade key or composite name.
    pub grade: String,
    /// The value as published before (`None`: it had none).
    pub old_value: Option<f64>,
    /// The value now published (`None`: no value, or `withdrawn`).
    pub new_value: Option<f64>,
    /// The row's publication number before.
    pub old_publication: u32,
    /// Its publication number now: one more.
    pub new_publication: u32,
    /// `methodology_change` (another methodology version), `late_data` (same
    /// version, inputs changed), `value_change` (same inputs, value changed), or
    /// `withdrawn` (a published row of the window the new run no longer produces).
    pub reason: String,
}

/// The restatement log's columns, in file order.
pub const RESTATEMENT_COLUMNS: [&str; 7] = [
    "date",
    "grade",
    "old_value",
    "new_value",
    "old_publication",
    "new_publication",
    "reason",
];

/// The restatement log kept beside a fixings file: `<stem>_restatements.csv`.
pub fn restatements_path(fixings: &Path) -> PathBuf {
    Companions::of(fixings).restatements()
}

/// Checks the restatement log at `path` against its digest (`<log>.sha256`, which
/// a publication writes with it): a log edited since (one `old_value` changed would
/// move a settlement) is refused, naming both digests. A log without a digest (a
/// publication before logs had one) is read as it stands and gets one at its next
/// restatement; no log at all is no error.
pub fn check_log(path: &Path) -> Result<(), FixingsError> {
    let digest = crate::file::digest_path(path);
    let Some(recorded) = crate::file::read_digest(&digest)? else {
        return Ok(());
    };
    let input = |detail: String| FixingsError::Input {
        path: path.to_path_buf(),
        detail,
    };
    let actual = crate::file::file_sha256(path)?;
    if actual != recorded {
        let name = digest.file_name().unwrap_or_default().to_string_lossy();
        return Err(input(format!(
            "does not match its digest {name} (SHA-256 {actual}, recorded {recorded}): the restatement log was edited since it was published, and first-published values and settlements would move; restore it from the publication"
        )));
    }
    Ok(())
}

/// Reads a restatement log, typed; every row must parse. The log is checked against
/// its digest first ([`check_log`]).
pub fn read_restatements(path: &Path) -> Result<Vec<Restatement>, FixingsError> {
    check_log(path)?;
    let bad = |row: usize, detail: String| FixingsError::Fixings {
        path: path.to_path_buf(),
        row,
        detail,
    };
    let mut rdr = csv::Reader::from_path(path).map_err(|e| FixingsError::Input {
        path: path.to_path_buf(),
        detail: e.to_string(),
    })?;
    let header: Vec<String> = rdr
        .headers()
        .map_err(|e| bad(0, e.to_string()))?
        .iter()
        .map(str::to_string)
        .collect();
    if header != RESTATEMENT_COLUMNS {
        return Err(bad(
            0,
            format!("expected the columns {}", RESTATEMENT_COLUMNS.join(",")),
        ));
    }
    let mut out = Vec::new();
    for (i, rec) in rdr.records().enumerate() {
        let row = i + 1;
        let rec = rec.map_err(|e| bad(row, e.to_string()))?;
        let field = |j: usize| rec.get(j).unwrap_or("");
        let value = |j: usize| -> Result<Option<f64>, FixingsError> {
            let v = field(j);
            if v.is_empty() {
                return Ok(None);
            }
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .map(Some)
                .ok_or_else(|| {
                    bad(
                        row,
                        format!("{}: {v:?} is not a number", RESTATEMENT_COLUMNS[j]),
                    )
                })
        };
        let publication = |j: usize| -> Result<u32, FixingsError> {
            field(j).parse::<u32>().map_err(|_| {
                bad(
                    row,
                    format!("{}: {:?} is not a count", RESTATEMENT_COLUMNS[j], field(j)),
                )
            })
        };
        out.push(Restatement {
            date: NaiveDate::parse_from_str(field(0), "%Y-%m-%d")
                .map_err(|_| bad(row, format!("date: {:?} is not a date", field(0))))?,
            grade: field(1).to_string(),
            old_value: value(2)?,
            new_value: value(3)?,
            old_publication: publication(4)?,
            new_publication: publication(5)?,
            reason: field(6).to_string(),
        });
    }
    Ok(out)
}

/// The fixings as first published: each restated row gets back the value of its
/// earliest publication in the log (no value if it had none then). Rows the log does
/// not name were never restated and are returned as they are. Flags and counts are
/// today's: the log keeps values only.
pub fn first_published(fixings: &[Fixing], log: &[Restatement]) -> Vec<Fixing> {
    let mut first: BTreeMap<(NaiveDate, &str), &Restatement> = BTreeMap::new();
    for r in log {
        let slot = first.entry((r.date, r.grade.as_str())).or_insert(r);
        if r.old_publication < slot.old_publication {
            *slot = r;
        }
    }
    fixings
        .iter()
        .map(|f| {
            let mut f = f.clone();
            if let Some(r) = first.get(&(f.date, f.grade.as_str())) {
                f.value = r.old_value;
                f.publication = r.old_publication;
                if f.value.is_none() {
                    f.level = None;
                }
            }
            f
        })
        .collect()
}
