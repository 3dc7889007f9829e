//! A store fixed for a publication: the choice between an incremental read and a
//! whole one ([`crate::incremental`]), the read again when a run was committed under
//! it, the tier differentials over the whole history and the state the next
//! publication continues from. The `rentix index` command and any other publisher
//! call [`fix_for_publication`], then publish its rows ([`crate::publish`]).

use crate::incremental::{self, Decision, Request};
use crate::{
    compute_from_partitions, compute_from_store, past_the_store, IndexError, IndexRequest,
    IndexResult, TierDifferential, Window,
};
use chrono::NaiveDate;
use rentix_store::Store;
use std::path::{Path, PathBuf};

/// What [`fix_for_publication`] computed, and what the publication writes beside
/// its fixings.
#[derive(Debug, Clone)]
pub struct StoreFixing {
    /// Every row the read allowed (a publication writes those of its window).
    pub result: IndexResult,
    /// How the store was read, for a person: `read: partitions from D
    /// (incremental, continuing the composites after D')` or `read: the whole store
    /// (why)`.
    pub read: String,
    /// The hedonic composites' tier differentials over the whole history: an
    /// incremental run's after the day it continues from, the published file's
    /// before.
    pub differentials: Vec<TierDifferential>,
    /// The state the next publication continues from (`<stem>_state.json`) and its
    /// bytes.
    pub state: (PathBuf, Vec<u8>),
    /// How far back the rows are exact, and so how far back a publication from a
    /// date may re-fix what it published before ([`crate::Revision`]).
    pub revision: crate::Revision,
}

/// Fixes `store` for a publication of `req`'s window into `out`, reading only the
/// partitions the window can depend on when the state left beside `out` allows it
/// (the same rows a whole read gives, tested), the whole store otherwise, and says
/// which. `today` bounds a publication through a day past the store (a feed
/// outage): a date to come is never published ahead of time.
///
/// `valued_only`: the publication keeps only the rows with a value
/// (`--valued-only`), as the state records for the next one.
///
/// Refused ([`IndexError::Data`]) when no row of the window could be fixed: no
/// observation in the store matches the methodology's grades and the range; and
/// when continuing the file would corrupt it ([`incremental::check_state`]: an
/// edited state, another store, another methodology over part of the file, another
/// choice of `valued_only`).
pub fn fix_for_publication(
    store: &Store,
    req: &IndexRequest,
    out: &Path,
    today: NaiveDate,
    valued_only: bool,
) -> Result<StoreFixing, IndexError> {
    let m = &req.methodology;
    publication_days(m, req.from, req.to.map(|t| t.min(today)))?;
    let runs = store.runs()?;
    let grade_texts: Vec<String> = req
        .grade_filters
        .iter()
        .map(|g| g.as_str().to_string())
        .collect();
    let (state_file, published, previous) = previous_state(store, req, &runs, out, valued_only)?;
    if let Ok(Some(old)) = &previous {
        keeps_the_file_s_grades(old, &published, &grade_texts, req.to)?;
    }
    let differentials_path = crate::Companions::of(out).tier_differentials();
    let state_req = Request {
        published: &published,
        methodology: m,
        grade_filters: &grade_texts,
        from: req.from,
        to: req.to,
        runs: &runs,
    };
    let mut decision = incremental::plan(&state_req, previous.clone());
    // The differentials before the day the chains continue from come from the file.
    if let (Decision::Incremental(_), Ok(Some(old))) = (&decision, &previous) {
        if old.tier_differentials && !differentials_path.exists() {
            decision = Decision::Full(format!(
                "{} that the last publication wrote is missing",
                differentials_path.display()
            ));
        }
    }
    // Computed from the first date (the chains start there) through `to`, as a run
    // over the whole history fixes them (the read reaches as far past `to` as a
    // grade's life can, no further); through the store's end without a `to`, and
    // through `to` when it is past the store's last day (a feed outage), not past
    // today.
    let whole = IndexRequest {
        from: None,
        to: computed_through(&runs, req.to, today, out),
        ..req.clone()
    };
    let (result, read, decision) = read_store(store, &whole, decision, &runs)?;
    let window = Window {
        from: req.from,
        to: req.to,
        grades: req.grade_filters.clone(),
        revision: None,
        valued_only,
    };
    let last_computed = result.fixings.iter().map(|f| f.date).max();
    let (Some(last), true) = (
        last_computed,
        result.fixings.iter().any(|f| window.contains(f)),
    ) else {
        return Err(IndexError::Data(format!(
            "no observation in {} matches the methodology's grades and the requested range{}",
            store.root().display(),
            uppercase_hint(&req.grade_filters)
        )));
    };
    publication_days(m, None, Some(req.to.map_or(last, |t| t.min(last))))?;
    let plan = match &decision {
        Decision::Incremental(plan) => Some(plan),
        Decision::Full(_) => None,
    };
    // The last day the file publishes: the chains of the next publication continue
    // after it at the latest. A full run computes the whole store, but a file
    // published `--to` an earlier day has no composite rows past it, and a state
    // through the store's end had the next publication past a gap continue after
    // days the file never published (their composite rows never written).
    let through = req.to.map_or(last, |to| to.min(last));
    let differentials = match (plan, &previous) {
        (Some(plan), Ok(Some(old))) if differentials_path.exists() => {
            incremental::merge_tier_differentials(
                m,
                incremental::read_recorded_differentials(&differentials_path, old, &state_file)?,
                result.tier_differentials.clone(),
                plan.after,
                req.to,
            )
        }
        _ => result.tier_differentials.clone(),
    };

    let old_state = match (&previous, plan) {
        (Ok(Some(s)), Some(p)) => Some((s, p.after)),
        _ => None,
    };
    // Written beside the fixings only by a publication of every grade.
    let written = (!differentials.is_empty() && req.grade_filters.is_empty())
        .then_some(differentials.as_slice());
    let state = kept_state(&previous, &grade_texts, &published).unwrap_or_else(|| {
        incremental::next_state(
            &state_req,
            old_state,
            &result.levels,
            through,
            written,
            valued_only,
        )
    });
    // A file of some grades, or of valued rows only, may have no row on its last
    // days: whether it reaches the day its chains continue after is not known from
    // its rows.
    let every_row = req.grade_filters.is_empty() && !valued_only;
    let revision = revision_of(m, plan.filter(|_| every_row), plan);
    Ok(StoreFixing {
        result,
        read,
        differentials,
        state: (state_file, incremental::state_json(&state)),
        revision,
    })
}

/// How far back an incremental run's rows are exact, and where its chains
/// continue from (a whole read: every row exact, no seeds).
fn revision_of(
    m: &crate::Methodology,
    reaching: Option<&incremental::Plan>,
    plan: Option<&incremental::Plan>,
) -> crate::Revision {
    crate::Revision {
        exact_from: plan.map(|p| p.exact),
        composites_after: plan.map(|p| p.after),
        chained: m
            .composite
            .iter()
            .filter(|c| c.method != crate::CompositeMethod::Pooled)
            .map(|c| c.name.clone())
            .collect(),
        spec: m.revision.clone(),
        seeds: plan
            .map(|p| {
                p.seeds
                    .iter()
                    .filter_map(|(name, s)| s.level.map(|(d, l)| (name.clone(), d, l)))
                    .collect()
            })
            .unwrap_or_default(),
        decimals: m.rounding.decimals,
        days: m.day_rule().clone(),
        composites_through: reaching.and_then(|p| {
            let rule = m.day_rule();
            (0..=400u64)
                .map(|k| p.after - chrono::Days::new(k))
                .find(|d| rule.counts(*d))
        }),
    }
}

/// The state beside `out` (its path), the published file's name, and the state as
/// read; refused when continuing `out` from it would corrupt it
/// ([`incremental::check_state`]).
fn previous_state(
    store: &Store,
    req: &IndexRequest,
    runs: &[rentix_store::IngestSummary],
    out: &Path,
    valued_only: bool,
) -> Result<(PathBuf, String, PreviousState), IndexError> {
    let state_file = incremental::state_path(out);
    let previous = incremental::read_state(&state_file);
    let published = out
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    if let Ok(Some(state)) = &previous {
        incremental::check_state(
            state,
            &incremental::Continuation {
                path: &state_file,
                published: &published,
                store: store.root(),
                runs,
                methodology: &req.methodology,
                whole: req.from.is_none() && req.to.is_none() && req.grade_filters.is_empty(),
                valued_only,
            },
        )?;
        // A Parquet publication made before states carried their file's format
        // keeps `<stem>_state.json` and `<stem>_restatements.csv`, the names of a
        // CSV file's: a first CSV publication beside it took them over, and both
        // files then failed `verify` (a hostile round).
        let owner = out.with_file_name(&state.published);
        if state.published != published
            && owner.exists()
            && rentix_fixings::digest_path(&owner).exists()
        {
            return Err(IndexError::Input {
                path: state_file.clone(),
                detail: format!(
                    "is the state of {}, published beside {published} (a Parquet publication made before states and restatement logs carried their file's format keeps the names a CSV file's would have): publishing {published} here would take over its state and restatement log, and neither file would verify; publish it under another name. Nothing was published",
                    state.published
                ),
            });
        }
    }
    Ok((state_file, published, previous))
}

/// The state a publication of some grades (`grades`, as typed) inside a file of
/// every grade leaves: the file's, as it was (one past its last day is refused).
/// It leaves the composites as they were; a state of those grades' levels was
/// refused by the next publication as not the file's, and verify read the file as
/// theirs. `None`: the publication writes its own.
fn kept_state(
    previous: &PreviousState,
    grades: &[String],
    published: &str,
) -> Option<incremental::State> {
    match previous {
        Ok(Some(old))
            if !grades.is_empty() && old.grades.is_empty() && old.published == published =>
        {
            Some(old.clone())
        }
        _ => None,
    }
}

/// Refuses a publication past the last day of the file its state `old` describes
/// (`through`) whose `--grade` patterns (`grades`, as typed) leave out one the
/// file was published with (or, for a file of every grade, are any): the file's
/// other grades would stop a day early. The file's last day's rows say the same
/// when there is no state, except of a file of valued rows, which may have none
/// of a grade on that day.
fn keeps_the_file_s_grades(
    old: &incremental::State,
    published: &str,
    grades: &[String],
    to: Option<NaiveDate>,
) -> Result<(), IndexError> {
    let covered = grades.is_empty()
        || (!old.grades.is_empty() && old.grades.iter().all(|g| grades.contains(g)));
    if covered || old.published != published || to.is_some_and(|t| t <= old.through) {
        return Ok(());
    }
    let were = if old.grades.is_empty() {
        "every grade and composite".to_string()
    } else {
        format!("--grade {}", old.grades.join(" --grade "))
    };
    Err(IndexError::Config(format!(
        "{published} was published with {were} through {} (its state says so): publishing past that day with --grade {} would stop the rest at {}; nothing was published. Pass the file's --grade patterns (more may be added), or publish into a new file",
        old.through,
        grades.join(" --grade "),
        old.through
    )))
}

/// A state file as read: none, a state, or why it cannot be used.
type PreviousState = Result<Option<incremental::State>, incremental::UnusableState>;

/// Reads the store as `decision` says; a run committed while it was read (its rows
/// may be in the fixings but not in the seeds or the state) has it read again,
/// whole. Returns the result, how it was read and the decision that held.
fn read_store(
    store: &Store,
    whole: &IndexRequest,
    decision: Decision,
    runs: &[rentix_store::IngestSummary],
) -> Result<(IndexResult, String, Decision), IndexError> {
    let (result, read) = match &decision {
        Decision::Incremental(plan) => (
            compute_from_partitions(store, whole, Some(plan.partitions), Some(&plan.seeds))?,
            format!(
                "read: partitions from {}{} (incremental, continuing the composites after {})",
                plan.partitions.0,
                through(plan.partitions.1, runs),
                plan.after
            ),
        ),
        Decision::Full(why) => {
            let r = compute_from_store(store, whole)?;
            let read = format!(
                "read: the whole store{} ({why}){}",
                up_to(whole, runs),
                in_slices(r.slices)
            );
            (r, read)
        }
    };
    let committed_under_the_read = matches!(decision, Decision::Incremental(_))
        && store
            .runs()?
            .iter()
            .map(|r| &r.run_id)
            .ne(runs.iter().map(|r| &r.run_id));
    if !committed_under_the_read {
        return Ok((result, read, decision));
    }
    let r = compute_from_store(store, whole)?;
    let read = format!(
        "read: the whole store{} (a run was committed while it was read){}",
        up_to(whole, runs),
        in_slices(r.slices)
    );
    let why = "a run was committed while the store was read".to_string();
    Ok((r, read, Decision::Full(why)))
}

/// The last day a publication `--to to` into `out` computes: `to` past the store's
/// last day (a feed outage, not past today); otherwise `to` itself, or the last day
/// the file already publishes when that is later (a republication of an earlier
/// day rewrites the companions through the file's last day, and touches nothing
/// after it); `None`, the store's end, without a `to`, or when the file's last day
/// cannot be told from its last line (a Parquet file, an unexpected ending).
fn computed_through(
    runs: &[rentix_store::IngestSummary],
    to: Option<NaiveDate>,
    today: NaiveDate,
    out: &Path,
) -> Option<NaiveDate> {
    if let Some(outage) = past_the_store(runs, to, today) {
        return Some(outage);
    }
    let store_last = rentix_store::fixing_dates_of(runs).map(|(_, last)| last)?;
    let to = to.filter(|t| *t < store_last)?;
    if !out.exists() {
        return Some(to);
    }
    published_last_day(out)
        .filter(|last| *last < store_last)
        .map(|last| last.max(to))
}

/// The last day the fixings file `out` publishes when that is after `to`: a run
/// `--to to` into it republishes earlier days, and the later rows depend on them
/// (the next day's `change_1d`, every window that holds a republished day's rows),
/// so it publishes through that day, as a run over the whole store would. A CSV
/// file's days are read from its first and last CSV lines, or a Parquet file's rows; `None`: no such file,
/// no later day, or a file that cannot be read so. A back-fill that reaches the
/// file (no publication day of `days` between `to` and the file's first day) is
/// one too: late data for its days changes the file's first rows (a hostile round
/// found 286 left stale). One that would leave a hole is not: it is refused as
/// such by the publication.
pub fn republished_through(
    out: &Path,
    to: Option<NaiveDate>,
    days: &rentix_core::DayRule,
) -> Option<NaiveDate> {
    let to = to?;
    let (first, last) = published_span(out)?;
    let reaches = to
        .iter_days()
        .skip(1)
        .take_while(|d| *d < first)
        .all(|d| !days.counts(d));
    (reaches && last > to).then_some(last)
}

/// The last day the fixings file `out` publishes when the store, whose last
/// fixing date is `store_last`, ends before it: days a publication `--to` past the
/// store carried through a feed outage. A run without `--to` publishes through
/// that day, carrying them again, where it used to stop at the store's end and
/// withdraw them (a hostile round: 438 rows restated as withdrawn, and a file
/// that no longer published the days it had). `None` for a file that does not
/// run past the store, or cannot be read so.
pub fn carried_through(out: &Path, store_last: Option<NaiveDate>) -> Option<NaiveDate> {
    let (_, last) = published_span(out)?;
    store_last.is_some_and(|s| last > s).then_some(last)
}

/// The first and last day the fixings file `out` publishes: a CSV file's from
/// its second and last lines, a Parquet file's from its rows (written whole by
/// each run); `None`: no such regular file, or one that cannot be read so (the
/// publication then says what is wrong with it). Only a regular file is read (a
/// FIFO as `--out` would wait for a writer).
fn published_span(out: &Path) -> Option<(NaiveDate, NaiveDate)> {
    if !std::fs::metadata(out).is_ok_and(|m| m.is_file()) {
        return None;
    }
    match rentix_table::TableFormat::of(out).ok()? {
        rentix_table::TableFormat::Csv => {
            Some((published_first_day(out)?, published_last_day(out)?))
        }
        _ => {
            let dates: Vec<NaiveDate> = rentix_fixings::read_fixings(out)
                .ok()?
                .iter()
                .map(|f| f.date)
                .collect();
            Some((*dates.iter().min()?, *dates.iter().max()?))
        }
    }
}

/// The date of the first row of the CSV fixings file `out`, read from its second
/// line; `None` when it cannot be told so.
fn published_first_day(out: &Path) -> Option<NaiveDate> {
    use std::io::BufRead;
    let mut lines = std::io::BufReader::new(std::fs::File::open(out).ok()?).lines();
    let row = lines.nth(1)?.ok()?;
    NaiveDate::parse_from_str(row.split(',').next()?, "%Y-%m-%d").ok()
}

/// The date of the last row of the CSV fixings file `out` (files are written
/// sorted by date), read from its end; `None` when it cannot be told so.
fn published_last_day(out: &Path) -> Option<NaiveDate> {
    use std::io::{Read, Seek, SeekFrom};
    if rentix_table::TableFormat::of(out).ok()? != rentix_table::TableFormat::Csv {
        return None;
    }
    let mut f = std::fs::File::open(out).ok()?;
    let len = f.metadata().ok()?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(64 * 1024)))
        .ok()?;
    let mut tail = Vec::new();
    f.read_to_end(&mut tail).ok()?;
    let line = tail
        .split(|b| *b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .rfind(|l| !l.is_empty())?;
    let date = line.split(|b| *b == b',').next()?;
    NaiveDate::parse_from_str(std::str::from_utf8(date).ok()?, "%Y-%m-%d").ok()
}

/// Where a whole read stopped before the store's last day: the last day rows
/// through `--to` can depend on.
fn up_to(whole: &IndexRequest, runs: &[rentix_store::IngestSummary]) -> String {
    let last = rentix_store::fixing_dates_of(runs).map(|(_, last)| last);
    match (incremental::last_read_day(whole), whole.to) {
        (Some(d), Some(to)) if last.is_some_and(|l| d < l) => {
            format!(" up to {d}, the last day rows through {to} can depend on")
        }
        _ => String::new(),
    }
}

/// Where an incremental read stopped: the last day it read, or the store's last
/// fixing date when that comes first.
fn through(last_read: Option<chrono::NaiveDate>, runs: &[rentix_store::IngestSummary]) -> String {
    let end = rentix_store::fixing_dates_of(runs).map(|(_, last)| last);
    match (last_read, end) {
        (Some(d), Some(e)) => format!(" through {}", d.min(e)),
        (Some(d), None) | (None, Some(d)) => format!(" through {d}"),
        (None, None) => String::new(),
    }
}

/// How a whole-store read went, when it was not one pass.
fn in_slices(slices: usize) -> String {
    if slices > 1 {
        format!(
            ", in {slices} slices of about {} observations each (memory holds one)",
            incremental::SLICE_ROWS
        )
    } else {
        String::new()
    }
}

/// Refuses ([`IndexError::Config`], nothing published) a range whose days the
/// methodology's calendar cannot answer for: past the last year its holiday table
/// knows (a business day there may be a holiday it does not list), or holding no
/// publication day at all (a Saturday under business days), naming the next one.
pub(crate) fn publication_days(
    m: &crate::Methodology,
    from: Option<NaiveDate>,
    to: Option<NaiveDate>,
) -> Result<(), IndexError> {
    let rule = m.day_rule();
    if let (Some(through), Some(to)) = (rule.covered_through(), to) {
        if to > through {
            return Err(IndexError::Config(format!(
                "{to} is past {through}, the last day the holiday calendar {:?} of methodology {} lists holidays for: a business day after it may be a holiday the table does not hold; nothing was published. Extend data/calendars/ (and the bundled copy) before publishing past it",
                m.calendar.holidays, m.version
            )));
        }
    }
    let (Some(from), Some(to)) = (from, to) else {
        return Ok(());
    };
    if from > to || rule.why_not(from).is_none() {
        return Ok(());
    }
    let mut d = from;
    let mut days = 0;
    while d <= to {
        if rule.counts(d) {
            return Ok(());
        }
        d = d.succ_opt().unwrap_or(d);
        days += 1;
        if days > 400 {
            return Ok(());
        }
    }
    let next = (1..=400)
        .filter_map(|k| to.checked_add_days(chrono::Days::new(k)))
        .find(|d| rule.counts(*d));
    let why = rule.why_not(from).unwrap_or_default();
    let range = if from == to {
        format!("{from} ({why}) is not a publication day")
    } else {
        format!("{from} to {to} holds no publication day ({from} is {why})")
    };
    Err(IndexError::Config(format!(
        "{range} under methodology {}'s calendar (business days of {}); nothing was published{}",
        m.version,
        m.calendar.holidays,
        next.map_or(String::new(), |n| format!(
            ". The next publication day is {n}"
        ))
    )))
}

/// A hint for `--grade` patterns with an uppercase letter, which match no grade:
/// grade ids are lowercase and patterns match them exactly (a hostile run's
/// `H100-SXM-80GB/*/*` matched nothing, without a word on why). Empty otherwise.
pub fn uppercase_hint(filters: &[rentix_core::GradePattern]) -> String {
    let upper: Vec<&str> = filters
        .iter()
        .map(rentix_core::GradePattern::as_str)
        .filter(|p| p.bytes().any(|b| b.is_ascii_uppercase()))
        .collect();
    if upper.is_empty() {
        return String::new();
    }
    format!(
        "; --grade {} holds uppercase letters, and grade ids are lowercase (patterns match them exactly): try {}",
        upper.join(", "),
        upper
            .iter()
            .map(|p| p.to_ascii_lowercase())
            .collect::<Vec<_>>()
            .join(", ")
    )
}
