//! Publication and restatements. A run publishes the fixings of a window of dates
//! (every date, or `--from D --to D` in the daily cycle) into the existing file:
//! rows outside the window are kept as they are, rows inside it are replaced, and
//! only rows whose value, inputs or methodology changed are restated. When anything
//! is restated the previous file is kept as a numbered version, each changed fixing
//! gets its publication number raised, and a restatement record (old value, new
//! value, reason) is appended beside the output. A published row that the new run no
//! longer produces is recorded as `withdrawn`. Nothing is overwritten silently.

use crate::append::Reading;
use crate::error::IndexError;
use chrono::NaiveDate;
use rentix_core::{Grade, GradePattern};
use rentix_fixings::{fixings_table, restatements_path, Fixing, Restatement, RESTATEMENT_COLUMNS};
use rentix_table::{fail_point, Col, Table, TableFormat, Transaction};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What a publication did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Publication {
    /// The rows restated, changed rows first and then the withdrawn ones.
    pub restatements: Vec<Restatement>,
    /// Where the previous file was kept, when there was one and it changed.
    pub archived: Option<PathBuf>,
    /// The rows written, sorted by date then grade: the whole file (kept rows and
    /// the window's new rows), or, when the rows before the window were copied as
    /// they stood (`kept_rows`), the rows from the window's first date on.
    pub rows: Vec<Fixing>,
    /// Rows before the window copied byte for byte from the file as published
    /// (a CSV file that still matches its digest), not read again; 0 when the file
    /// was read and written whole.
    pub kept_rows: usize,
    /// With `kept_rows`: the date they are all before (the rows from it on were
    /// read, compared and written again).
    pub kept_before: Option<NaiveDate>,
    /// Rows of the window that were published for the first time.
    pub new_rows: usize,
    /// Files an interrupted publication had staged and this one put in place.
    pub recovered: Vec<PathBuf>,
    /// Temporaries of a publication killed before its commit, removed.
    pub swept: Vec<PathBuf>,
    /// Set when a lock left by a killed publisher was replaced: whose it was.
    pub replaced_stale_lock: Option<String>,
    /// With a window from D and a [`Revision`]: the first date before D whose rows
    /// the publication re-fixed (`None`: nothing before D changed).
    pub refixed_from: Option<NaiveDate>,
    /// Rows before D published for the first time (a day the file skipped, a
    /// grade's life the new data extends).
    pub earlier_new: usize,
    /// Rows a run over the store fixes differently from the file but the revision
    /// policy keeps as first published, and the first of their dates.
    pub unrevised: usize,
    /// The first date of an unrevised row.
    pub unrevised_first: Option<NaiveDate>,
    /// Date-by-date companions (forward curves, tier spreads) that no longer
    /// matched the digest their publication recorded: written whole again from
    /// the fixings, never copied.
    pub companions_rewritten: Vec<PathBuf>,
}

/// What a run publishes: the dates `from..=to` (every date when open), and with
/// grade patterns only the grades they match (composites, which a subset of grades
/// cannot fix, are then left as they were).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Window {
    /// First date published; `None`: from the first.
    pub from: Option<NaiveDate>,
    /// Last date published; `None`: to the last.
    pub to: Option<NaiveDate>,
    /// `--grade` patterns; empty: every grade and composite.
    pub grades: Vec<GradePattern>,
    /// With `from`: what the run may change of the rows the file holds before it
    /// (`None`: nothing; rows before `from` are kept as they are).
    pub revision: Option<Revision>,
    /// `--valued-only`: the run publishes only rows with a value, and a file that
    /// holds a row without one (published without the flag) is refused.
    pub valued_only: bool,
}

/// What a publication from D may re-fix before D. A daily run has rows the file
/// lacks or holds otherwise before D when data arrived late, when an observation
/// extends a grade's life back through a silence, or when the file skipped a day;
/// a run over the whole store publishes those rows, so a daily cycle that left them
/// would publish something its own `verify` refuses. Every earlier row the run
/// fixed exactly and the file holds otherwise (or lacks, from the file's first
/// date) is published with D's, inside the methodology's `[revision]` policy; the
/// rest are counted as not restated ([`Publication::unrevised`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Revision {
    /// The first date whose grade rows the run fixed exactly (`None`: every date,
    /// a read of the whole store).
    pub exact_from: Option<NaiveDate>,
    /// Chained composites are exact only after this date: an incremental run
    /// continues their chains after it (`None`: every date).
    pub composites_after: Option<NaiveDate>,
    /// The chained composites (a pooled one is fixed from its members'
    /// observations day by day, exact wherever the grades are).
    pub chained: BTreeSet<String>,
    /// The methodology's `[revision]`.
    pub spec: crate::RevisionSpec,
    /// Where an incremental run continues each chained composite from: its name,
    /// the date of its last level and that unrounded level (from the state).
    pub seeds: Vec<(String, NaiveDate, f64)>,
    /// The methodology's `rounding.decimals`: a published level is its value
    /// rounded to these.
    pub decimals: u32,
    /// The last publication day on or before `composites_after`: the file must
    /// reach it, or its composite rows up to it would never be published.
    pub composites_through: Option<NaiveDate>,
    /// The methodology's publication days (a back-fill must reach the file's
    /// first one).
    pub days: rentix_core::DayRule,
}

impl Revision {
    /// Whether the run fixed `f` exactly (as a run over the whole store would).
    fn exact(&self, f: &Fixing) -> bool {
        let after = if f.grade.is_composite() && self.chained.contains(f.grade.as_str()) {
            self.composites_after.map(|d| d + chrono::Days::new(1))
        } else {
            self.exact_from
        };
        after.is_none_or(|a| f.date >= a)
    }
}

impl Window {
    /// Whether `d` is within `from..=to`.
    pub fn contains_date(&self, d: NaiveDate) -> bool {
        self.from.is_none_or(|f| d >= f) && self.to.is_none_or(|t| d <= t)
    }

    /// Whether the window publishes `f`: its date is inside, and with patterns it is
    /// a grade one of them matches (never a composite).
    pub fn contains(&self, f: &Fixing) -> bool {
        self.contains_date(f.date)
            && (self.grades.is_empty()
                || (!f.grade.is_composite()
                    && f.grade
                        .parse::<Grade>()
                        .is_ok_and(|g| self.grades.iter().any(|p| p.matches(&g)))))
    }
}

/// The publication lock beside a fixings file: `<name>.lock` (`f.csv.lock`).
pub(crate) fn publication_lock_path(fixings: &Path) -> PathBuf {
    with_suffix(fixings, ".lock")
}

/// The journal of a publication being committed: `<name>.publishing`.
pub(crate) fn journal_path(fixings: &Path) -> PathBuf {
    with_suffix(fixings, ".publishing")
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// Whether `name` is an archive `<stem>.vN.<ext>` of the fixings file `out`.
fn is_archive_of(out: &Path, name: &str) -> bool {
    crate::Companions::of(out).is_version(name)
}

/// Publishes `rows` (a run's fixings; only those inside `window` are used) into the
/// file at `out`: rows of the existing file outside the window are kept, rows inside
/// are replaced, changed rows are restated (publication number raised, old file
/// archived, restatement log appended). `per_date` builds, from fixings rows, the
/// files published beside them that are derived date by date (forward curves, tier
/// spreads); it is called once with no rows for their names and columns. `tables`
/// are other files published beside it, whole (tier differentials); `raw` are files
/// of bytes (the state).
///
/// With a window from date D the rows before D are kept as they are: in a CSV file
/// that matches its digest, and in its date-by-date companions, they are copied as
/// bytes rather than read and written again (docs/formats.md, "Incremental
/// publication"); the bytes written
/// are the same either way.
///
/// One transaction under the publication lock `<name>.lock` (a second publisher of
/// the same file fails, naming the holder): the archive, the log, the companions and
/// the fixings file are written to temporary names and fsynced, then renamed into
/// place with the fixings file last. A publication killed part way is finished (or
/// its temporaries removed) by the next one before it reads anything.
pub fn publish(
    out: &Path,
    rows: Vec<Fixing>,
    window: Window,
    per_date: impl Fn(&[Fixing]) -> Vec<(PathBuf, Table)>,
    tables: Vec<(PathBuf, Table)>,
    raw: Vec<(PathBuf, Vec<u8>)>,
) -> Result<Publication, IndexError> {
    let name = out.file_name().unwrap_or_default().to_string_lossy();
    readable_values(out, &rows)?;
    let derived = per_date(&[]);
    not_another_publication(
        out,
        paths(&derived).chain(paths(&tables)).chain(paths(&raw)),
    )?;
    let lock = rentix_store::StoreLock::acquire(
        &publication_lock_path(out),
        &format!("index --out {name}"),
    )?;
    let journal = journal_path(out);
    // Roll an interrupted commit forward before reading the file it replaced.
    let mut recovery = rentix_table::recover(&journal, |_| false)?;
    let log = restatements_path(out);
    // A log edited since it was published is not appended to (nor trusted), and
    // one the file's digest records is not continued without.
    log_as_recorded(out, &log)?;
    rentix_fixings::check_log(&log)?;
    let (reach, read_window) = reach_of(&window);
    let Published {
        kept,
        prefixes,
        old,
        rewritten,
    } = read_published(out, &read_window, &per_date)?;
    rentix_core::phases::mark("publication: read the published file");
    keeps_the_file_whole(out, &window, &rows, &old, kept.as_ref())?;
    let bounds = revision_bounds(&window, reach, kept.as_ref().map_or(0, |k| k.rows), &old);
    let mut result = plan(out, rows, window, old, bounds)?;
    rentix_core::phases::mark("publication: planned");
    one_methodology(out, &result.rows)?;
    result.kept_rows = kept.as_ref().map_or(0, |k| k.rows);
    result.companions_rewritten = rewritten;
    result.kept_before = kept.as_ref().and(read_window.from);
    let extra: Vec<(PathBuf, Table)> = per_date(&result.rows).into_iter().chain(tables).collect();
    let digest = rentix_fixings::digest_path(out);
    let log_digest = rentix_fixings::digest_path(&log);
    let owned: BTreeSet<String> = [out, log.as_path(), digest.as_path(), &log_digest]
        .into_iter()
        .chain(extra.iter().map(|(p, _)| p.as_path()))
        .chain(raw.iter().map(|(p, _)| p.as_path()))
        .map(|p| {
            p.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string()
        })
        .collect();
    let swept = rentix_table::recover(&journal, |t| owned.contains(t) || is_archive_of(out, t))?;
    recovery.removed.extend(swept.removed);
    let mut tx = Transaction::new(&journal);
    // The log's digest, recorded in the file's digest too: a log deleted with its
    // own digest is then missed, not started again without its history.
    let mut log_hex = log
        .exists()
        .then(|| rentix_fixings::file_sha256(&log))
        .transpose()?;
    if let Some(archived) = &result.archived {
        stage_copy(&mut tx, out, archived)?;
        fail_point("publish:archive_staged").map_err(|e| write_err(archived, e))?;
        log_hex = Some(stage_log(&mut tx, &log, &result.restatements)?);
        fail_point("publish:log_staged").map_err(|e| write_err(&log, e))?;
    }
    for (i, (p, t)) in extra.iter().enumerate() {
        match prefixes.get(i) {
            Some(prefix) => {
                stage_bytes(&mut tx, p, &[prefix, &t.csv_rows()?])?;
            }
            None => t.stage(&mut tx, p)?,
        }
    }
    stage_raw(&mut tx, &raw)?;
    let table = fixings_table(&result.rows);
    rentix_core::phases::mark("publication: companions staged, table built");
    let hex = stage_fixings(&mut tx, out, kept.as_ref(), &table)?;
    let mut line = rentix_fixings::digest_line(out, &hex);
    if let Some(h) = &log_hex {
        line.push_str(&rentix_fixings::digest_line(&log, h));
    }
    line.push_str(&companion_digests(&tx, extra.iter().take(derived.len())));
    rentix_core::phases::mark("publication: fixings formatted, written, hashed");
    tx.stage(&digest, |w| {
        w.write_all(line.as_bytes())
            .map_err(|e| rentix_table::TableError::Write {
                path: digest.clone(),
                source: e,
            })
    })?;
    fail_point("publish:staged").map_err(|e| write_err(out, e))?;
    // A signal waits for the renames: the publication is in place whole or not at
    // all, and the message on exit says which. The lock is checked before the
    // commit, never after: once the files are in place, a signal handler removing
    // the lock must not turn the publication into an error that says nothing was
    // committed.
    let mut committed = rentix_store::committing();
    lock.verify()?;
    tx.commit()?;
    rentix_core::phases::mark("publication: committed");
    *committed = Some("the publication was put in place whole");
    drop(committed);
    result.recovered = recovery.completed;
    result.swept = recovery.removed;
    result.replaced_stale_lock = lock.replaced_stale.clone();
    Ok(result)
}

/// Stages files of bytes (the state) as they are.
fn stage_raw(tx: &mut Transaction, raw: &[(PathBuf, Vec<u8>)]) -> Result<(), IndexError> {
    for (p, bytes) in raw {
        tx.stage(p, |w| {
            w.write_all(bytes)
                .map_err(|e| rentix_table::TableError::Write {
                    path: p.clone(),
                    source: e,
                })
        })?;
    }
    Ok(())
}

/// The digest lines of the date-by-date companions staged in `tx`: their rows
/// before a window are copied unread, and an edit of one was carried into every
/// later publication (a hostile round); the next publication checks them
/// ([`companion_as_recorded`]).
fn companion_digests<'a>(
    tx: &Transaction,
    companions: impl Iterator<Item = &'a (PathBuf, Table)>,
) -> String {
    companions
        .filter_map(|(p, _)| Some(rentix_fixings::digest_line(p, tx.staged_sha256(p)?)))
        .collect()
}

/// Refuses to publish a value no reader of a fixings file accepts (outside
/// [`rentix_fixings::PLAUSIBLE_VALUES`], or rounded to 0): a hostile round
/// loosened ingest's price bounds and got `0.0` (marked sufficient) and
/// `2100000.0` published, exit 0, after which `settle`, `health`, the next day's
/// publication and a whole republication all refused the file. Nothing is
/// written; the message names the first such row and the cause.
fn readable_values(out: &Path, rows: &[Fixing]) -> Result<(), IndexError> {
    unreadable(
        out,
        rows.iter()
            .map(|f| (f.value, || format!("{} on {}", f.grade, f.date))),
    )
}

/// The refusal of the first of `rows` (value, and what names its row) whose
/// value no reader of a fixings file accepts (as a daily publication refuses it).
pub(crate) fn unreadable<F: Fn() -> String>(
    out: &Path,
    rows: impl Iterator<Item = (Option<f64>, F)>,
) -> Result<(), IndexError> {
    let (lo, hi) = rentix_fixings::PLAUSIBLE_VALUES;
    let mut bad = rows.filter_map(|(v, name)| {
        let v = v?;
        (!(lo..=hi).contains(&v)).then_some((v, name))
    });
    let Some((value, name)) = bad.next() else {
        return Ok(());
    };
    Err(IndexError::Input {
        path: out.to_path_buf(),
        detail: format!(
            "the fixing of {} is {value} ({} such row(s)), outside {lo:e} to {hi:e} USD per GPU-hour or index points, the values a fixings file may hold (0 is a value rounded away at the methodology's decimals): no reader would accept the file, so nothing was published. The store holds prices no index can publish: ingest's --min-price and --max-price let them in; ingest into a new store within bounds that fit",
            name(),
            1 + bad.count()
        ),
    })
}

/// Whether `companion`, a date-by-date file published beside `out`, is as the
/// digest `out`'s digest file records for it (publications since it does; true
/// without a record, or without the file). Its rows before a window were copied
/// unread, and an edited row was carried into every later publication, exit 0,
/// only `verify` finding it (a hostile round): one that is not as recorded is
/// written whole again from the fixings (it is derived from them date by date),
/// and the publication says so.
fn companion_as_recorded(out: &Path, companion: &Path) -> Result<bool, IndexError> {
    let digest = rentix_fixings::digest_path(out);
    let Some(recorded) = crate::intraday_publish::recorded_for(&digest, companion) else {
        return Ok(true);
    };
    if !companion.exists() {
        return Ok(true);
    }
    Ok(rentix_fixings::file_sha256(companion)? == recorded)
}

/// Refuses to continue `out` when its digest file records the restatement log
/// `log` (publications since it does) and the log is gone, or, without its own
/// digest, differs: a log deleted with its digest was started again with the
/// next restatement alone, and the first-published values backtests settle on were
/// lost without a word (a hostile round).
fn log_as_recorded(out: &Path, log: &Path) -> Result<(), IndexError> {
    let digest = rentix_fixings::digest_path(out);
    let Some(recorded) = crate::intraday_publish::recorded_for(&digest, log) else {
        return Ok(());
    };
    let name = |p: &Path| {
        p.file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string()
    };
    let refuse = |detail: String| {
        Err(IndexError::Published(rentix_fixings::FixingsError::Input {
            path: log.to_path_buf(),
            detail,
        }))
    };
    if !log.exists() {
        return refuse(format!(
            "is gone, and {} records it (SHA-256 {recorded}): the log holds each restated row's first-published value, which backtests settle on; nothing was published. Restore it (and {}) from the publication",
            name(&digest),
            name(&rentix_fixings::digest_path(log))
        ));
    }
    let actual = rentix_fixings::file_sha256(log)?;
    if actual != recorded {
        // Its own digest made again after an edit blesses nothing: the file's
        // digest still names the log as published.
        return refuse(format!(
            "does not match the digest {} records for it (SHA-256 {actual}, recorded {recorded}): the log was changed since it was published; nothing was published. Restore it from the publication",
            name(&digest)
        ));
    }
    Ok(())
}

/// Stages the restatement log `log` with `restatements` appended, and its digest
/// (which every reader of the log checks); returns the log's SHA-256.
fn stage_log(
    tx: &mut Transaction,
    log: &Path,
    restatements: &[Restatement],
) -> Result<String, IndexError> {
    let mut t = if log.exists() {
        read_log(log)?
    } else {
        Table::new()
    };
    append_log(&mut t, restatements);
    let hex = stage_bytes(tx, log, &[&t.csv_header()?, &t.csv_rows()?])?;
    let line = rentix_fixings::digest_line(log, &hex);
    stage_bytes(tx, &rentix_fixings::digest_path(log), &[line.as_bytes()])?;
    Ok(hex)
}

/// Refuses a publication of `rows` in `window` into the file `out` (of which
/// `old` are the rows read and `kept` those kept as bytes) that the file, as its
/// rows stand, cannot take whole: a chain continued from a level it never
/// published, `--valued-only` into a file with unvalued rows, a back-fill that
/// leaves a hole, and `--grade` patterns that leave its last day's grades behind.
fn keeps_the_file_whole(
    out: &Path,
    window: &Window,
    rows: &[Fixing],
    old: &[Fixing],
    kept: Option<&crate::append::Kept>,
) -> Result<(), IndexError> {
    let last_day = last_day(old, kept);
    let file_last = last_day.as_ref().map(|l| l.date);
    continues_what_was_published(out, window, old, file_last)?;
    one_choice_of_valued_only(out, window, old, last_day.as_ref())?;
    // Only a file of every grade and row has a row on each day it published: one
    // of some grades or of valued rows may start after its first publication day.
    let every_row = window.grades.is_empty() && !window.valued_only;
    if every_row && kept.is_none_or(|k| k.rows == 0) {
        no_hole_before_the_file(out, window, rows, old)?;
    }
    continues_every_grade(out, window, rows, last_day)
}

/// The paths of files to publish.
fn paths<T>(files: &[(PathBuf, T)]) -> impl Iterator<Item = PathBuf> + '_ {
    files.iter().map(|(p, _)| p.clone())
}

/// Refuses a publication into `out` that would write over another publication:
/// `out` named as a published file's companion ([`rentix_fixings::Companions::owner`]),
/// or one of `companions` (the files it writes beside `out`) a published fixings
/// file of its own (its digest beside it). Nothing is written.
pub(crate) fn not_another_publication(
    out: &Path,
    companions: impl IntoIterator<Item = PathBuf>,
) -> Result<(), IndexError> {
    let refuse = |what: String| {
        Err(IndexError::Config(format!(
            "{}: {what}; nothing was published. Publish into a name of its own",
            out.display()
        )))
    };
    if let Some(owner) = rentix_fixings::Companions::owner(out) {
        return refuse(format!(
            "the name is one {} writes beside it (a publication there would be written over by its next one)",
            owner.display()
        ));
    }
    for c in companions {
        if c.is_file() && rentix_fixings::digest_path(&c).is_file() {
            return refuse(format!(
                "this publication writes {} beside it, and that is a publication of its own ({} beside it)",
                c.display(),
                rentix_fixings::digest_path(&c).display()
            ));
        }
    }
    Ok(())
}

/// Refuses a back-fill (a window before the file's first day, `old` being every
/// row of the file) that would leave publication days between its last day and
/// the file's first unpublished: a hole `verify` names missing. One that reaches
/// the file's first day is a back-fill of its own.
fn no_hole_before_the_file(
    out: &Path,
    window: &Window,
    rows: &[Fixing],
    old: &[Fixing],
) -> Result<(), IndexError> {
    let (Some(rev), Some(first)) = (&window.revision, old.iter().map(|f| f.date).min()) else {
        return Ok(());
    };
    let Some(last_new) = rows
        .iter()
        .filter(|f| window.contains(f))
        .map(|f| f.date)
        .max()
    else {
        return Ok(());
    };
    let missing: Vec<NaiveDate> = last_new
        .iter_days()
        .skip(1)
        .take_while(|d| *d < first)
        .filter(|d| rev.days.counts(*d))
        .collect();
    let (Some(a), Some(b)) = (missing.first(), missing.last()) else {
        return Ok(());
    };
    Err(IndexError::Config(format!(
        "{} starts on {first}: publishing through {last_new} would leave its publication days {a} to {b} unpublished (a hole); nothing was published. Publish --to {b} or later to back-fill it whole",
        out.display()
    )))
}

/// The file's last day as a publication finds it.
struct LastDay {
    date: NaiveDate,
    /// The grades and composites of its rows.
    grades: BTreeSet<String>,
    /// Whether one of its rows has no value.
    unvalued: bool,
}

/// The file's last day and its rows: of the rows read, or else of the last rows
/// kept as bytes (a CSV's rows start with their date, grade and value). The file
/// is in date order, so the last day's rows are all among the rows read when any
/// is.
fn last_day(old: &[Fixing], kept: Option<&crate::append::Kept>) -> Option<LastDay> {
    if let Some(date) = old.iter().map(|f| f.date).max() {
        let rows = || old.iter().filter(move |f| f.date == date);
        return Some(LastDay {
            date,
            grades: rows().map(|f| f.grade.as_str().to_string()).collect(),
            unvalued: rows().any(|f| f.value.is_none()),
        });
    }
    let text = String::from_utf8_lossy(&kept?.prefix);
    let mut rows = text
        .lines()
        .rev()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut fields = l.split(',').map(|f| f.trim().trim_matches('"'));
            let date = fields.next().and_then(|d| d.parse::<NaiveDate>().ok());
            let grade = fields.next().unwrap_or_default().to_string();
            (date, grade, fields.next().unwrap_or_default().is_empty())
        })
        .peekable();
    let date = rows.peek()?.0?;
    let mut last = LastDay {
        date,
        grades: BTreeSet::new(),
        unvalued: false,
    };
    for (_, grade, unvalued) in rows.take_while(|(d, _, _)| *d == Some(date)) {
        last.grades.insert(grade);
        last.unvalued |= unvalued;
    }
    Some(last)
}

/// Refuses a `--valued-only` publication into a file that holds a row without a
/// value, among the rows it reads or on its last day: the file was published
/// without the flag, and the run would withdraw its unvalued rows (or leave it
/// half one and half the other). The state says so too when there is one; the
/// file's rows say it without.
fn one_choice_of_valued_only(
    out: &Path,
    window: &Window,
    old: &[Fixing],
    last_day: Option<&LastDay>,
) -> Result<(), IndexError> {
    let unvalued = old
        .iter()
        .find(|f| f.value.is_none())
        .map(|f| f.date)
        .or(last_day.filter(|l| l.unvalued).map(|l| l.date));
    match (window.valued_only, unvalued) {
        (true, Some(day)) => Err(IndexError::Config(format!(
            "{} holds rows without a value (on {day}): it was published without --valued-only, and this run is with it: the file would mix the two; nothing was published. Run as the file was published, or publish into a new file",
            out.display()
        ))),
        _ => Ok(()),
    }
}

/// Refuses a publication past the file's last day whose `--grade` patterns leave
/// out a grade or composite the file published that day: the file would go on
/// without it, its rows stopped a day early (the file not whole: `verify` names
/// them missing). A publication of every grade the file holds, of no `--grade`, or
/// of a window inside the file is not refused.
fn continues_every_grade(
    out: &Path,
    window: &Window,
    rows: &[Fixing],
    last_day: Option<LastDay>,
) -> Result<(), IndexError> {
    let Some(LastDay {
        date: last, grades, ..
    }) = last_day
    else {
        return Ok(());
    };
    if window.grades.is_empty() {
        return Ok(());
    }
    let Some(next) = rows
        .iter()
        .filter(|f| f.date > last && window.contains(f))
        .map(|f| f.date)
        .min()
    else {
        return Ok(());
    };
    let left: Vec<&str> = grades
        .iter()
        .filter(|g| {
            g.parse::<Grade>()
                .map_or(true, |g| !window.grades.iter().any(|p| p.matches(&g)))
        })
        .map(String::as_str)
        .collect();
    let Some(first) = left.first() else {
        return Ok(());
    };
    let more = match left.len() {
        1 => String::new(),
        n => format!(" and {} more", n - 1),
    };
    Err(IndexError::Config(format!(
        "the last day {} published, {last}, has rows of {first}{more}, which this publication's --grade patterns leave out: publishing {next} without them would stop their rows at {last} while the file goes on; nothing was published. Pass a --grade for every grade the file publishes, no --grade (every grade and composite), or publish into a new file",
        out.display()
    )))
}

/// Refuses a publication that continues a chained composite from a level the file
/// never published (`window`'s seeds, from the state, against the published rows
/// `old` of their dates, when read, and the file's last day `file_last`): a state
/// whose levels were edited and its digest recomputed (a checksum, not a
/// signature) would move every later value of the composite. A level is the value
/// it published, unrounded: the two differ by at most half the last decimal. Also
/// refused: a continuation after the file's last publication day, and one from a
/// level before a value the file published (the state holds no level for it).
fn continues_what_was_published(
    out: &Path,
    window: &Window,
    old: &[Fixing],
    file_last: Option<NaiveDate>,
) -> Result<(), IndexError> {
    let Some(r) = &window.revision else {
        return Ok(());
    };
    let half = 0.5 * 10f64.powi(-(r.decimals.min(15) as i32));
    let state = crate::incremental::state_path(out);
    let refuse = |detail: String| {
        IndexError::Input {
        path: state.clone(),
        detail: format!(
            "{detail}: the state does not describe the file (edited, kept from a later publication, or another publication's), and the chain would continue from it; nothing was published. Remove {} to republish the file from the store (every changed row restated)",
            state.display()
        ),
    }
    };
    // A file whose last day is before the day the chains continue from never
    // published the days the state's levels describe (the file rolled back, the
    // state kept, or its through moved), and its composite rows between the two
    // would never be written.
    if let (Some(day), Some(last)) = (r.composites_through, file_last) {
        if day > last {
            return Err(refuse(format!(
                "it is through {day}, after the last day {} published, {last}: the composites of the days between would never be published",
                out.display()
            )));
        }
    }
    for (name, date, level) in &r.seeds {
        // A level the file published after the seed's day, up to the day the
        // chains continue after, that the state does not hold: the chain would
        // continue from an earlier level, past a value the file published.
        if let Some(skipped) = old.iter().find(|f| {
            f.grade.as_str() == name
                && f.value.is_some()
                && f.date > *date
                && r.composites_after.is_some_and(|after| f.date <= after)
        }) {
            return Err(refuse(format!(
                "it holds no level of {name} on {}, a value {} published",
                skipped.date,
                out.display()
            )));
        }
        let published = old
            .iter()
            .find(|f| f.date == *date && f.grade.as_str() == name)
            .and_then(|f| f.value);
        let Some(v) = published else {
            continue;
        };
        let off = (v - level).abs();
        let kept = kept_by_policy(&r.spec, *date, window.from, v, *level, half);
        if off.is_nan() || (off > half * (1.0 + 1e-9) && !kept) {
            return Err(refuse(format!(
                "its level of {name} on {date}, {level}, is not the value {} published for that day ({v})",
                out.display()
            )));
        }
    }
    Ok(())
}

/// Whether the revision policy `spec` of a publication from `d1` could have kept
/// the value `published` on `date` as first published while a run over the store
/// fixes it as `level` (unrounded; `half` is half the last published decimal): a
/// never-revised index keeps every published row, a window keeps the rows older
/// than it, a threshold keeps a change at most that share of the value. The state
/// then holds the level (the chain goes on as a run over the store does), not the
/// value published.
fn kept_by_policy(
    spec: &crate::RevisionSpec,
    date: NaiveDate,
    d1: Option<NaiveDate>,
    published: f64,
    level: f64,
    half: f64,
) -> bool {
    if spec.policy == crate::RevisionPolicy::Never {
        return true;
    }
    let old = spec
        .window_days
        .zip(d1)
        .is_some_and(|(n, d1)| date < d1 - chrono::Days::new(u64::from(n)));
    let small = spec
        .threshold
        .is_some_and(|t| (level - published).abs() <= t * published.abs() + half);
    old || small
}

/// Refuses a publication whose file would hold rows of more than one methodology
/// version (a window published under another methodology than the rows kept
/// around it), naming them: a file is one methodology's, and a new methodology is
/// published whole (every row restated) or into a new file.
fn one_methodology(out: &Path, rows: &[Fixing]) -> Result<(), IndexError> {
    let versions: BTreeSet<&str> = rows
        .iter()
        .map(|f| f.methodology_version.as_str())
        .collect();
    if versions.len() < 2 {
        return Ok(());
    }
    let named: Vec<&str> = versions.into_iter().collect();
    Err(IndexError::Config(format!(
        "{}: this publication would mix methodologies {} in one file; nothing was published. Publish the new methodology over every date (no --from, --to or --grade: every row is restated) or into a new file",
        out.display(),
        named.join(" and ")
    )))
}

/// The published file as a publication reads it.
struct Published {
    /// The rows before the window, kept as bytes (`None`: the file is read whole).
    kept: Option<crate::append::Kept>,
    /// With `kept`, the date-by-date companions' bytes before the window, in the
    /// order `per_date` names them.
    prefixes: Vec<Vec<u8>>,
    /// The file's rows that are read: all, or those from the window's first date.
    old: Vec<Fixing>,
    /// Companions that no longer match their recorded digest.
    rewritten: Vec<PathBuf>,
}

/// Reads the published file `out` for a publication of `window`: the rows before
/// the window are kept as bytes when the file and its date-by-date companions
/// allow it ([`crate::append`]), or else every row is read.
fn read_published(
    out: &Path,
    window: &Window,
    per_date: &impl Fn(&[Fixing]) -> Vec<(PathBuf, Table)>,
) -> Result<Published, IndexError> {
    let mut kept = match crate::append::fixings_reading(out, window.from)? {
        Reading::Kept(k) => Some(k),
        Reading::Whole => None,
        Reading::Edited(refused) => return Err(refused),
    };
    // A companion changed since it was published is written whole again.
    let mut rewritten = Vec::new();
    for (p, _) in per_date(&[]) {
        if !companion_as_recorded(out, &p)? {
            rewritten.push(p);
        }
    }
    if !rewritten.is_empty() {
        kept = None;
    }
    // The companions' rows before the window are kept too, or nothing is.
    let mut prefixes = Vec::new();
    if let (Some(from), Some(_)) = (window.from, &kept) {
        for (p, shape) in per_date(&[]) {
            match crate::append::companion_prefix(&p, &shape, from)? {
                Some(bytes) => prefixes.push(bytes),
                None => {
                    kept = None;
                    prefixes.clear();
                    break;
                }
            }
        }
    }
    let old = match &mut kept {
        Some(k) => std::mem::take(&mut k.rest),
        None if out.exists() => crate::append::read_as_published(out)?,
        None => Vec::new(),
    };
    Ok(Published {
        kept,
        prefixes,
        old,
        rewritten,
    })
}

fn write_err(path: &Path, e: std::io::Error) -> IndexError {
    IndexError::Input {
        path: path.to_path_buf(),
        detail: format!("cannot write: {e}"),
    }
}

/// Stages the fixings file `out` (the `kept` rows' bytes, then `table`'s rows)
/// and returns the digest of its cells (`verify` checks it), published in the same
/// transaction: of a CSV file's bytes when they are written here (they are its
/// cells' text).
fn stage_fixings(
    tx: &mut Transaction,
    out: &Path,
    kept: Option<&crate::append::Kept>,
    table: &Table,
) -> Result<String, IndexError> {
    // Written from the formatted blocks: never joined into one buffer.
    let blocks = |tx: &mut Transaction, first: &[u8]| -> Result<String, IndexError> {
        let blocks = table.csv_row_blocks()?;
        let parts: Vec<&[u8]> = std::iter::once(first)
            .chain(blocks.iter().map(Vec::as_slice))
            .collect();
        stage_bytes(tx, out, &parts)
    };
    match (kept, TableFormat::of(out)?) {
        (Some(k), _) => blocks(tx, &k.prefix),
        (None, TableFormat::Csv) => blocks(tx, &table.csv_header()?),
        (None, TableFormat::Parquet) => {
            table.stage(tx, out)?;
            Ok(rentix_fixings::canonical_sha256(
                table,
                TableFormat::Parquet,
            )?)
        }
    }
}

/// Stages `parts`, one after the other, as the file `path`; returns the SHA-256
/// (hex) of what was staged: the one the transaction worked out as it wrote the
/// bytes (and journals), not a second pass over them.
fn stage_bytes(tx: &mut Transaction, path: &Path, parts: &[&[u8]]) -> Result<String, IndexError> {
    tx.stage(path, |w| {
        for part in parts {
            w.write_all(part)
                .map_err(|e| rentix_table::TableError::Write {
                    path: path.to_path_buf(),
                    source: e,
                })?;
        }
        Ok(())
    })?;
    tx.staged_sha256(path)
        .map(str::to_string)
        .ok_or_else(|| IndexError::Data(format!("{}: staged without a digest", path.display())))
}

/// Stages a byte-for-byte copy of `from` as `to`.
fn stage_copy(tx: &mut Transaction, from: &Path, to: &Path) -> Result<(), IndexError> {
    let werr = |source| rentix_table::TableError::Write {
        path: to.to_path_buf(),
        source,
    };
    let bytes = std::fs::read(from).map_err(|e| IndexError::Input {
        path: from.to_path_buf(),
        detail: e.to_string(),
    })?;
    tx.stage(to, |w| {
        // The hook splits the copy mid-file, where a full disk would stop it.
        let half = bytes.len() / 2;
        w.write_all(&bytes[..half]).map_err(werr)?;
        w.flush().map_err(werr)?;
        fail_point("publish:archive_write").map_err(werr)?;
        w.write_all(&bytes[half..]).map_err(werr)
    })?;
    Ok(())
}

/// Where a publication from D re-fixes earlier rows: `from` (at most D) is the
/// first date it publishes, `revise_from` the first whose published rows it may
/// change, and `requested` is D.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    requested: NaiveDate,
    from: NaiveDate,
    revise_from: NaiveDate,
    threshold: Option<f64>,
}

/// The [`Bounds`] of a publication of `window` whose file was read from `reach`
/// (`kept` rows before it kept as bytes, `old` from it on): from the first exact
/// row, never before the file's first date (a file first published from a later
/// date is not back-filled), and the policy's limits. `None`: nothing before D
/// is re-fixed (no revision, or no file yet).
fn revision_bounds(
    window: &Window,
    reach: Option<NaiveDate>,
    kept: usize,
    old: &[Fixing],
) -> Option<Bounds> {
    let (Some(rev), Some(d1), Some(reach)) = (&window.revision, window.from, reach) else {
        return None;
    };
    let file_first = if kept > 0 {
        Some(reach)
    } else {
        old.iter().map(|f| f.date).min()
    };
    let from = reach.max(file_first?).min(d1);
    let file_last = old.iter().map(|f| f.date).max();
    let revise_from = match rev.spec.policy {
        crate::RevisionPolicy::Never => {
            file_last.map_or(from, |l| from.max(l.succ_opt().unwrap_or(l)))
        }
        crate::RevisionPolicy::Restate => rev
            .spec
            .window_days
            .map_or(from, |n| from.max(d1 - chrono::Days::new(u64::from(n)))),
    };
    Some(Bounds {
        requested: d1,
        from,
        revise_from,
        threshold: rev.spec.threshold,
    })
}

/// Whether a run fixed `new` as `old` was published: every column but the
/// publication number and the changes (which follow from the rows before). A row
/// whose value is the same but whose counts or flags moved (a late trade that did
/// not make the trade level) is a change a never-revised index does not make.
fn same_row(old: &Fixing, new: &Fixing) -> bool {
    let mut n = new.clone();
    n.publication = old.publication;
    n.change_1d = old.change_1d;
    n.change_7d = old.change_7d;
    n.change_30d = old.change_30d;
    n == *old
}

/// Whether a published value `old` that a run now fixes as `new` stays as first
/// published under the policy's threshold.
fn within_threshold(threshold: Option<f64>, old: Option<f64>, new: Option<f64>) -> bool {
    match (threshold, old, new) {
        (Some(t), Some(o), Some(n)) => (n - o).abs() <= t * o.abs(),
        _ => false,
    }
}

/// Applies the revision [`Bounds`] to a run's rows before they are merged: the
/// window opens at `from`, rows the run did not fix exactly are left out, and the
/// rows the policy does not let change are put back as first published (counted
/// in `result.unrevised`). Returns the rows to merge and the widened window.
fn revise(
    rows: Vec<Fixing>,
    mut window: Window,
    old: &[Fixing],
    b: Bounds,
    result: &mut Publication,
) -> (Vec<Fixing>, Window) {
    let rev = window.revision.clone().unwrap_or_default();
    window.from = Some(b.from);
    let old_by: BTreeMap<(NaiveDate, &str), &Fixing> = old
        .iter()
        .map(|f| ((f.date, f.grade.as_str()), f))
        .collect();
    let mut unrevised = BTreeSet::new();
    let mut out: Vec<Fixing> = Vec::with_capacity(rows.len());
    let mut seen: BTreeSet<(NaiveDate, String)> = BTreeSet::new();
    for r in rows.into_iter().filter(|r| window.contains(r)) {
        if r.date < b.requested && !rev.exact(&r) {
            continue;
        }
        seen.insert((r.date, r.grade.to_string()));
        let o = old_by.get(&(r.date, r.grade.as_str()));
        let same = o.is_some_and(|o| same_row(o, &r));
        if let (true, Some(o)) = (same && r.date < b.revise_from, o) {
            // Unchanged but outside what the policy revises: its changes stay as
            // published too, whatever the run's neighbours give.
            out.push((*o).clone());
            continue;
        }
        let kept_as_published = !same
            && (r.date < b.revise_from
                || o.is_some_and(|o| {
                    o.methodology_version == r.methodology_version
                        && within_threshold(b.threshold, o.value, r.value)
                }));
        if kept_as_published {
            unrevised.insert(r.date);
            result.unrevised += 1;
            if let Some(o) = o {
                out.push((*o).clone());
            }
            continue;
        }
        out.push(r);
    }
    // Published rows the run no longer gives: withdrawn only where the policy
    // lets them change and the run fixed their date exactly.
    for o in old.iter().filter(|o| window.contains(o)) {
        if seen.contains(&(o.date, o.grade.to_string())) {
            continue;
        }
        let exact = o.date >= b.requested || rev.exact(o);
        if !exact || o.date < b.revise_from {
            if exact {
                unrevised.insert(o.date);
                result.unrevised += 1;
            }
            out.push(o.clone());
        }
    }
    result.unrevised_first = unrevised.first().copied();
    (out, window)
}

/// How far back a publication of `window` reads the file: from the earliest row a
/// revision could re-fix (`reach`), else from the window's first date.
fn reach_of(window: &Window) -> (Option<NaiveDate>, Window) {
    let reach = match (&window.revision, window.from) {
        (Some(r), Some(d1)) => Some(r.exact_from.unwrap_or(NaiveDate::MIN).min(d1)),
        _ => None,
    };
    let read = Window {
        from: reach.or(window.from),
        ..window.clone()
    };
    (reach, read)
}

type NewKeys<'n> = std::collections::HashSet<(NaiveDate, &'n str), foldhash::fast::FixedState>;

/// The keys of `rows`, which only a row of the file (`old`) looks up: none in a
/// first publication.
fn new_keys<'n>(rows: &'n [Fixing], old: &[Fixing]) -> NewKeys<'n> {
    if old.is_empty() {
        return NewKeys::default();
    }
    rows.iter().map(|f| (f.date, f.grade.as_str())).collect()
}

/// What a publication would do, computed from the file's rows as they are (`old`:
/// every row, or those from the window's first date on when the earlier ones are
/// kept as bytes), inside the revision `bounds` when the window has them.
fn plan(
    out: &Path,
    rows: Vec<Fixing>,
    window: Window,
    old: Vec<Fixing>,
    bounds: Option<Bounds>,
) -> Result<Publication, IndexError> {
    use rayon::slice::ParallelSliceMut;
    let mut result = Publication::default();
    let (rows, window) = match bounds {
        Some(b) => revise(rows, window, &old, b, &mut result),
        None => (rows, window),
    };
    let mut rows: Vec<Fixing> = rows.into_iter().filter(|r| window.contains(r)).collect();
    // Looked up, never iterated: hashed (a tree compared grade names ~17 times a row).
    // The two maps are built side by side: a one-shot onto its file waited on them.
    type OldBy<'o> =
        std::collections::HashMap<(NaiveDate, &'o str), &'o Fixing, foldhash::fast::FixedState>;
    let (old_by, new_keys): (OldBy<'_>, NewKeys<'_>) = rayon::join(
        || {
            old.iter()
                .map(|f| ((f.date, f.grade.as_str()), f))
                .collect()
        },
        || new_keys(&rows, &old),
    );
    let mut withdrawn = Vec::new();
    for o in old.iter().filter(|o| window.contains(o)) {
        if !new_keys.contains(&(o.date, o.grade.as_str())) {
            withdrawn.push(Restatement {
                date: o.date,
                grade: o.grade.to_string(),
                old_value: o.value,
                new_value: None,
                old_publication: o.publication,
                new_publication: o.publication + 1,
                reason: "withdrawn".into(),
            });
        }
    }
    for r in rows.iter_mut() {
        let Some(o) = old_by.get(&(r.date, r.grade.as_str())) else {
            result.new_rows += 1;
            continue;
        };
        r.publication = o.publication;
        if o.value == r.value
            && o.input_sha256 == r.input_sha256
            && o.methodology_version == r.methodology_version
        {
            continue;
        }
        let reason = if o.methodology_version != r.methodology_version {
            "methodology_change"
        } else if o.input_sha256 != r.input_sha256 {
            "late_data"
        } else {
            "value_change"
        };
        r.publication = o.publication + 1;
        result.restatements.push(Restatement {
            date: r.date,
            grade: r.grade.to_string(),
            old_value: o.value,
            new_value: r.value,
            old_publication: o.publication,
            new_publication: r.publication,
            reason: reason.into(),
        });
    }
    result.restatements.extend(withdrawn);
    result
        .restatements
        .sort_by(|a, b| (a.date, &a.grade).cmp(&(b.date, &b.grade)));
    if let Some(b) = bounds {
        let new_before = rows
            .iter()
            .filter(|r| r.date < b.requested && !old_by.contains_key(&(r.date, r.grade.as_str())))
            .map(|r| r.date);
        result.earlier_new = new_before.clone().count();
        // `new_rows` are the window's: the earlier ones are counted apart (a
        // one-day run said "90 fixings ... (91 published for the first time)").
        result.new_rows -= result.earlier_new;
        result.refixed_from = result
            .restatements
            .iter()
            .map(|r| r.date)
            .chain(new_before)
            .filter(|d| *d < b.requested)
            .min();
    }
    let mut merged: Vec<Fixing> = old
        .iter()
        .filter(|o| !window.contains(o))
        .cloned()
        .chain(rows)
        .collect();
    // Stable, as the one-thread sort was (a file has one row per date and grade).
    merged.par_sort_by(|a, b| (a.date, &a.grade).cmp(&(b.date, &b.grade)));
    if !result.restatements.is_empty() {
        let companions = crate::Companions::of(out);
        let mut k = 1;
        result.archived = Some(loop {
            let p = companions.version(k);
            if !p.exists() {
                break p;
            }
            k += 1;
        });
    }
    result.rows = merged;
    Ok(result)
}

fn read_log(path: &Path) -> Result<Table, IndexError> {
    let mut rdr = csv::Reader::from_path(path).map_err(|e| IndexError::Input {
        path: path.to_path_buf(),
        detail: e.to_string(),
    })?;
    // Rows are re-written by position: a log of other columns (reordered by a
    // spreadsheet, say) would have its old values appended under the wrong names.
    let header = rdr.headers().map_err(|e| IndexError::Input {
        path: path.to_path_buf(),
        detail: e.to_string(),
    })?;
    if header.iter().ne(RESTATEMENT_COLUMNS) {
        return Err(IndexError::Input {
            path: path.to_path_buf(),
            detail: format!(
                "expected the restatement log's columns {}, found {}",
                RESTATEMENT_COLUMNS.join(","),
                header.iter().collect::<Vec<_>>().join(",")
            ),
        });
    }
    let mut cols: Vec<Vec<Option<String>>> = vec![Vec::new(); RESTATEMENT_COLUMNS.len()];
    for rec in rdr.records() {
        let rec = rec.map_err(|e| IndexError::Input {
            path: path.to_path_buf(),
            detail: e.to_string(),
        })?;
        for (j, c) in cols.iter_mut().enumerate() {
            c.push(rec.get(j).map(str::to_string));
        }
    }
    let mut t = Table::new();
    for (n, c) in RESTATEMENT_COLUMNS.iter().zip(cols) {
        t.push(n, Col::Str(c));
    }
    Ok(t)
}

fn append_log(t: &mut Table, rows: &[Restatement]) {
    if t.names.is_empty() {
        for n in RESTATEMENT_COLUMNS {
            t.push(n, Col::Str(Vec::new()));
        }
    }
    let opt = |v: Option<f64>| v.map(|x| x.to_string());
    for r in rows {
        let cells = [
            Some(r.date.to_string()),
            Some(r.grade.clone()),
            opt(r.old_value),
            opt(r.new_value),
            Some(r.old_publication.to_string()),
            Some(r.new_publication.to_string()),
            Some(r.reason.clone()),
        ];
        for (c, v) in t.cols.iter_mut().zip(cells) {
            if let Col::Str(col) = c {
                col.push(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rentix_fixings::{first_published, read_fixings, read_restatements};

    /// A log whose columns are not the log's (two swapped by a spreadsheet) is
    /// refused before a publication appends to it by position.
    #[test]
    fn a_restatement_log_of_other_columns_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.csv");
        let row = "2025-03-02,g,1.5,1.6,1,2,late_data\n";
        std::fs::write(&good, format!("{}\n{row}", RESTATEMENT_COLUMNS.join(","))).unwrap();
        let t = read_log(&good).unwrap();
        assert_eq!(t.height(), 1);
        assert_eq!(t.col("new_value").unwrap().cell(0), "1.6");
        let swapped = dir.path().join("swapped.csv");
        std::fs::write(
            &swapped,
            format!("date,grade,new_value,old_value,old_publication,new_publication,reason\n{row}"),
        )
        .unwrap();
        let err = read_log(&swapped).unwrap_err().to_string();
        assert!(
            err.contains("expected the restatement log's columns date,grade,old_value,new_value"),
            "{err}"
        );
    }

    const H100: &str = "h100-sxm-80gb/vm/on-demand";
    const A100: &str = "a100-sxm-80gb/vm/on-demand";
    const BLEND: &str = "h100-sxm-80gb/on-demand-blend";

    fn day(n: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2025, 3, n).unwrap()
    }

    fn fix(d: u32, grade: &str, value: f64) -> Fixing {
        let method = if grade == BLEND {
            "jevons-chained"
        } else {
            "vw-median"
        };
        Fixing {
            // The identity a reader gives the row: a composite for its method.
            grade: rentix_fixings::IndexId::of_row(grade, method),
            method: method.into(),
            methodology_version: "v1".into(),
            input_sha256: "inputs-1".into(),
            ..Fixing::for_test(day(d), grade, Some(value))
        }
    }

    fn out() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("fixings.csv");
        (dir, p)
    }

    #[test]
    fn an_unchanged_row_keeps_its_publication_and_nothing_is_restated() {
        let (_d, p) = out();
        let old = vec![fix(1, H100, 2.5)];
        let r = plan(&p, old.clone(), Window::default(), old.clone(), None).unwrap();
        assert!(r.restatements.is_empty());
        assert_eq!(r.archived, None);
        assert_eq!(r.rows, old);
        assert_eq!(r.new_rows, 0);
    }

    /// The reason names what changed, the methodology first, then the inputs, then
    /// the value alone; each raises the publication number by one (1 -> 2, 4 -> 5).
    #[test]
    fn a_changed_row_is_restated_with_its_reason_and_a_raised_publication() {
        let (_d, p) = out();
        let mut old = vec![fix(1, H100, 2.5), fix(2, H100, 2.5), fix(3, H100, 2.5)];
        old[2].publication = 4;
        let mut new = vec![fix(1, H100, 2.6), fix(2, H100, 2.7), fix(3, H100, 2.5)];
        // Day 1: same inputs, same version, another value.
        // Day 2: a late observation changed the inputs (and the value).
        new[1].input_sha256 = "inputs-2".into();
        // Day 3: another methodology version (and other inputs): the version wins.
        new[2].methodology_version = "v2".into();
        new[2].input_sha256 = "inputs-2".into();
        let r = plan(&p, new, Window::default(), old, None).unwrap();
        let got: Vec<_> = r
            .restatements
            .iter()
            .map(|x| {
                (
                    x.date,
                    x.old_value,
                    x.new_value,
                    x.old_publication,
                    x.new_publication,
                    x.reason.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (day(1), Some(2.5), Some(2.6), 1, 2, "value_change"),
                (day(2), Some(2.5), Some(2.7), 1, 2, "late_data"),
                (day(3), Some(2.5), Some(2.5), 4, 5, "methodology_change"),
            ]
        );
        let pubs: Vec<u32> = r.rows.iter().map(|f| f.publication).collect();
        assert_eq!(pubs, [2, 2, 5]);
        assert_eq!(r.archived, Some(p.with_file_name("fixings.v1.csv")));
    }

    #[test]
    fn a_row_that_disappears_is_withdrawn_with_no_new_value() {
        let (_d, p) = out();
        let old = vec![fix(1, H100, 2.5), fix(1, A100, 1.5)];
        let r = plan(&p, vec![fix(1, H100, 2.5)], Window::default(), old, None).unwrap();
        assert_eq!(
            r.restatements,
            [Restatement {
                date: day(1),
                grade: A100.into(),
                old_value: Some(1.5),
                new_value: None,
                old_publication: 1,
                new_publication: 2,
                reason: "withdrawn".into(),
            }]
        );
        // It is no longer in the file.
        assert_eq!(r.rows, [fix(1, H100, 2.5)]);
    }

    /// A window from day 2: day 1 as published stays, though the run now computes
    /// another value for it; day 3 is new.
    #[test]
    fn rows_outside_the_window_are_kept_as_published() {
        let (_d, p) = out();
        let old = vec![fix(1, H100, 2.5), fix(2, H100, 2.5)];
        let new = vec![fix(1, H100, 9.0), fix(2, H100, 2.5), fix(3, H100, 2.8)];
        let window = Window {
            from: Some(day(2)),
            ..Window::default()
        };
        let r = plan(&p, new, window, old, None).unwrap();
        assert!(r.restatements.is_empty());
        assert_eq!(
            r.rows,
            [fix(1, H100, 2.5), fix(2, H100, 2.5), fix(3, H100, 2.8)]
        );
        assert_eq!(r.new_rows, 1);
    }

    /// A publication from `from` with a revision of `spec` over a whole-store read
    /// (every row exact), of `new` into a file of `old`.
    fn revised(
        new: Vec<Fixing>,
        old: Vec<Fixing>,
        from: u32,
        spec: crate::RevisionSpec,
    ) -> Publication {
        let (_d, p) = out();
        let window = Window {
            from: Some(day(from)),
            revision: Some(Revision {
                spec,
                ..Revision::default()
            }),
            ..Window::default()
        };
        let reach = Some(NaiveDate::MIN);
        let bounds = revision_bounds(&window, reach, 0, &old);
        plan(&p, new, window, old, bounds).unwrap()
    }

    /// Late data for day 1 and a day the file skipped (day 2), published with day 3
    /// as a run over the whole store publishes them: day 1 restated, day 2 added.
    #[test]
    fn a_publication_from_a_day_re_fixes_what_the_new_data_changed_before_it() {
        let old = vec![fix(1, H100, 2.5)];
        let mut late = fix(1, H100, 2.6);
        late.input_sha256 = "inputs-2".into();
        let new = vec![late.clone(), fix(2, H100, 2.55), fix(3, H100, 2.8)];
        let r = revised(new, old, 3, crate::RevisionSpec::default());
        assert_eq!(r.refixed_from, Some(day(1)));
        assert_eq!(r.earlier_new, 1, "day 2, which the file skipped");
        assert_eq!(r.new_rows, 1, "day 3, the window's");
        assert_eq!(r.restatements.len(), 1);
        assert_eq!(r.restatements[0].reason, "late_data");
        assert_eq!(r.unrevised, 0);
        let values: Vec<_> = r.rows.iter().map(|f| (f.date, f.value)).collect();
        assert_eq!(
            values,
            [
                (day(1), Some(2.6)),
                (day(2), Some(2.55)),
                (day(3), Some(2.8))
            ]
        );
    }

    /// A file first published from day 2 is not back-filled with day 1.
    #[test]
    fn a_revision_never_reaches_before_the_files_first_date() {
        let old = vec![fix(2, H100, 2.5)];
        let new = vec![fix(1, H100, 2.4), fix(2, H100, 2.5), fix(3, H100, 2.8)];
        let r = revised(new, old, 3, crate::RevisionSpec::default());
        assert_eq!(r.refixed_from, None);
        assert_eq!(r.rows.first().map(|f| f.date), Some(day(2)));
        assert_eq!(r.unrevised, 0);
    }

    /// The policy's limits: a window of 1 day from day 3 restates day 2, not day
    /// 1; a threshold of 5% keeps a 4% move; `never` changes no published row and
    /// still adds the new day. What is kept is counted with its first date.
    #[test]
    fn the_revision_policy_bounds_what_is_restated_and_counts_the_rest() {
        let old = vec![fix(1, H100, 2.5), fix(2, H100, 2.5)];
        let new = || vec![fix(1, H100, 2.6), fix(2, H100, 2.7), fix(3, H100, 2.8)];
        let window = crate::RevisionSpec {
            window_days: Some(1),
            ..Default::default()
        };
        let r = revised(new(), old.clone(), 3, window);
        let restated: Vec<_> = r.restatements.iter().map(|x| x.date).collect();
        assert_eq!(restated, [day(2)]);
        assert_eq!((r.unrevised, r.unrevised_first), (1, Some(day(1))));
        assert_eq!(r.rows[0].value, Some(2.5), "day 1 kept as published");

        let threshold = crate::RevisionSpec {
            threshold: Some(0.05),
            ..Default::default()
        };
        let r = revised(new(), old.clone(), 3, threshold);
        // 2.5 -> 2.6 is 4% (kept), 2.5 -> 2.7 is 8% (restated).
        let restated: Vec<_> = r.restatements.iter().map(|x| x.date).collect();
        assert_eq!(restated, [day(2)]);
        assert_eq!(r.unrevised, 1);

        let never = crate::RevisionSpec {
            policy: crate::RevisionPolicy::Never,
            ..Default::default()
        };
        let r = revised(new(), old, 3, never);
        assert!(r.restatements.is_empty());
        assert_eq!(r.unrevised, 2);
        let values: Vec<_> = r.rows.iter().map(|f| f.value).collect();
        assert_eq!(values, [Some(2.5), Some(2.5), Some(2.8)]);
    }

    #[test]
    fn a_window_with_grade_patterns_publishes_only_matching_grades_never_composites() {
        let w = Window {
            from: Some(day(2)),
            to: Some(day(3)),
            grades: vec![GradePattern::new("h100-sxm-80gb/*/*").unwrap()],
            ..Window::default()
        };
        assert!(w.contains(&fix(2, H100, 2.5)));
        assert!(w.contains(&fix(3, H100, 2.5)));
        assert!(!w.contains(&fix(1, H100, 2.5)), "before from");
        assert!(!w.contains(&fix(4, H100, 2.5)), "after to");
        assert!(!w.contains(&fix(2, A100, 1.5)), "another GPU");
        assert!(!w.contains(&fix(2, BLEND, 100.0)), "a composite");
        assert!(Window::default().contains(&fix(2, BLEND, 100.0)));

        // Planned: the A100 and the composite are neither replaced nor withdrawn.
        let (_d, p) = out();
        let old = vec![fix(2, A100, 1.5), fix(2, BLEND, 100.0), fix(2, H100, 2.5)];
        let r = plan(&p, vec![fix(2, H100, 2.6)], w, old, None).unwrap();
        assert_eq!(r.restatements.len(), 1);
        assert_eq!(r.restatements[0].grade, H100);
        assert_eq!(r.restatements[0].reason, "value_change");
        let kept: Vec<(&str, Option<f64>)> =
            r.rows.iter().map(|f| (f.grade.as_str(), f.value)).collect();
        assert_eq!(
            kept,
            // Sorted by date, then name: "a100..." < "h100...on-demand-blend" < "h100.../vm/...".
            [(A100, Some(1.5)), (BLEND, Some(100.0)), (H100, Some(2.6))]
        );
    }

    /// Published, restated (2.5 -> 2.6), restated again (2.6 -> 2.7): the log names
    /// both changes, the first file is archived as v1, and the values as first
    /// published come back from the log (2.5, publication 1).
    #[test]
    fn publishing_twice_logs_each_restatement_and_first_published_recovers_the_original() {
        let (_d, p) = out();
        let none = |_: &[Fixing]| Vec::new();
        let publish_value = |v: f64| {
            publish(
                &p,
                vec![fix(1, H100, v)],
                Window::default(),
                none,
                Vec::new(),
                Vec::new(),
            )
            .unwrap()
        };
        let first = publish_value(2.5);
        assert!(first.restatements.is_empty());
        assert_eq!(first.new_rows, 1);
        publish_value(2.6);
        let third = publish_value(2.7);
        assert_eq!(third.archived, Some(p.with_file_name("fixings.v2.csv")));
        assert!(p.with_file_name("fixings.v1.csv").exists());

        let rows = read_fixings(&p).unwrap();
        assert_eq!((rows[0].value, rows[0].publication), (Some(2.7), 3));
        let log = read_restatements(&restatements_path(&p)).unwrap();
        let changes: Vec<(Option<f64>, Option<f64>, u32, u32)> = log
            .iter()
            .map(|r| {
                (
                    r.old_value,
                    r.new_value,
                    r.old_publication,
                    r.new_publication,
                )
            })
            .collect();
        assert_eq!(
            changes,
            [(Some(2.5), Some(2.6), 1, 2), (Some(2.6), Some(2.7), 2, 3)]
        );
        let orig = first_published(&rows, &log);
        assert_eq!((orig[0].value, orig[0].publication), (Some(2.5), 1));
    }
}
