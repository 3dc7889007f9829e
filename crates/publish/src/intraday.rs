//! An intraday publication from a store: every stamp of the range fixed, the
//! stamps the file does not hold yet appended with their digest and receipts in
//! one transaction (`rentix_index::intraday_publish`), published stamps never
//! revised.

use anyhow::Context;
use rentix_index::intraday::IntradayMethodology;
use std::path::Path;

/// What an intraday publication wrote.
pub struct IntradayPublished {
    /// Stamps the file holds.
    pub fixings: usize,
    /// Of them, stamps with a value.
    pub valued: usize,
    /// Grades fixed.
    pub grades: usize,
    /// Stamps a day.
    pub per_day: i64,
    /// The line `index` prints.
    pub line: String,
}

/// Fixes `m` from the store over `from..=to` and publishes the stamps the file
/// does not hold yet, their digest and (when the methodology says) their receipts
/// in one transaction (`rentix_index::intraday_publish`).
pub fn publish(
    store: &Path,
    m: &IntradayMethodology,
    from: Option<chrono::NaiveDate>,
    to: Option<chrono::NaiveDate>,
    out: &Path,
) -> anyhow::Result<IntradayPublished> {
    rentix_table::TableFormat::of(out).with_context(|| format!("--out {}", out.display()))?;
    // Days skipped since the file's last stamp are fixed with this run, as the
    // daily engine re-fixes skipped days: a run from a later day appended after
    // the gap and left it a hole (published stamps are kept as they are).
    let last = last_stamp(out);
    let gap = match (from, last) {
        (Some(f), Some(last)) => {
            let first = m.first_stamp_of(f).map_err(|e| anyhow::anyhow!("{e}"))?;
            (last + chrono::Duration::minutes(m.calendar.cadence.minutes()) < first)
                .then_some((last, first))
        }
        _ => None,
    };
    let from = gap.map_or(from, |(last, _)| from.map(|f| f.min(last.date_naive())));
    let seen = rentix_index::intraday_append::recorded_store_run(out);
    let (mut r, grades, from, to) = from_store(store, m, from, to)?;
    // Past a gap the file's published stamps are not fixed again (only those
    // after its last are kept): late rows for any published day go unnoticed
    // otherwise.
    let compared_from = gap.is_none().then_some(from);
    let late = late_runs(
        store,
        seen.as_ref(),
        last.map(|t| day_of(m, t)),
        compared_from,
    )?;
    // Of the days before --from, only the stamps after the file's last are new
    // (a grade silent past its carry has none: nothing was skipped).
    if let Some((last, _)) = gap {
        r.fixings.retain(|f| f.fixed_at > last);
        r.receipts.retain(|x| x.fixed_at > last);
    }
    // A stamp whose interval has not ended is fixed on the prints so far, and a
    // published stamp is never revised: it waits for a later run.
    let now = chrono::Utc::now();
    let waiting: Vec<chrono::DateTime<chrono::Utc>> = r
        .fixings
        .iter()
        .map(|f| f.fixed_at)
        .filter(|t| m.interval_end(*t) > now)
        .collect();
    r.fixings.retain(|f| m.interval_end(f.fixed_at) <= now);
    r.receipts.retain(|x| m.interval_end(x.fixed_at) <= now);
    // What this run publishes of the days skipped, and from which day's stamps.
    let (refixed, refixed_from) = gap.map_or((0, None), |(_, first)| {
        let skipped = r.fixings.iter().filter(|f| f.fixed_at < first);
        (skipped.clone().count(), skipped.map(|f| f.date).min())
    });
    let fixed = r.fixings.len();
    let p = rentix_index::intraday_publish::publish(out, m, r)?;
    let per_day = i64::from(m.calendar.cadence.per_day());
    let mut line = format!(
        "{fixed} intraday fixings ({per_day} a day at {}) of {grades} grade(s), {from} to {to}: {} new, {} already published; {} holds {} stamps, {} with a value; {} {} ({}digest {}){}",
        m.calendar.cadence,
        p.added,
        p.kept,
        out.display(),
        p.stamps,
        p.valued,
        if p.appended.is_some() {
            "appended the new stamps to"
        } else {
            "wrote"
        },
        out.display(),
        match p.appended {
            // What was checked, and only that: a hostile round read "digests
            // agree" of a file whose history had an edited digit (never
            // blessed: the digests written continue the published hash).
            Some(false) => "its history not read: the state agrees with the digest sidecar, the file's length and last row with the state; an edit inside the history is not seen here, and `rentix verify` or `sha256sum -c` finds it; ",
            Some(true) => "its history read once as bytes and hashed; ",
            None => "",
        },
        file_name_of(&p.digest),
        match &p.receipts {
            Some(r) => format!(" and {}", r.display()),
            None => String::new(),
        }
    );
    if let (true, Some(day)) = (refixed > 0, refixed_from) {
        line.push_str(&format!(
            "\nre-fixed from {day}: {refixed} stamps between the file's last and --from's first (days skipped) are published with this run"
        ));
    }
    if let Some(first) = waiting.iter().min() {
        line.push_str(&format!(
            "\nnot yet published: {} stamps from {} whose intervals end after now ({}): a stamp is published once its interval has ended (publish the day again then)",
            waiting.len(),
            first.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ));
    }
    line.push_str(&kept_and_unheard(&p, late));
    Ok(IntradayPublished {
        fixings: p.stamps,
        valued: p.valued,
        grades,
        per_day,
        line,
    })
}

/// The lines on what a publication `p` kept as first published (data that
/// arrived after its stamps: `late`, the runs that brought it for days the run
/// did not fix again) and the books no observation came from.
fn kept_and_unheard(
    p: &rentix_index::intraday_publish::IntradayPublication,
    late: Option<String>,
) -> String {
    let mut line = String::new();
    if let Some(first) = p.unrevised_first {
        line.push_str(&format!(
            "\nnot revised: {} published stamps from {} that this run fixes differently (data that arrived after they were published) are kept as first published: intraday stamps are never revised",
            p.unrevised,
            first.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ));
    }
    line.extend(late.map(|l| format!("\n{l}")));
    if !p.unheard_books.is_empty() {
        line.push_str(&format!(
            "\nnote: [intraday.books] names {}, from which no observation of this run came: no book of {} was read (names match after case, spaces and punctuation are folded; a misspelt one fixes as if it had no book)",
            p.unheard_books
                .iter()
                .map(|b| format!("{b:?}"))
                .collect::<Vec<_>>()
                .join(", "),
            if p.unheard_books.len() == 1 { "it" } else { "theirs" },
        ));
    }
    line
}

/// The day of the stamp `t` of `m`: the day its interval starts in.
fn day_of(m: &IntradayMethodology, t: chrono::DateTime<chrono::Utc>) -> chrono::NaiveDate {
    match m.calendar.label {
        rentix_index::intraday::StampLabel::Slot => t.date_naive(),
        rentix_index::intraday::StampLabel::End => {
            (t - chrono::Duration::minutes(m.calendar.cadence.minutes())).date_naive()
        }
    }
}

/// What the ingest runs committed since the file's last publication (`seen`, the
/// store's last run then, as its state records it) brought for days the file
/// publishes (through its last stamp's day `last`) and this run does not fix again
/// (before `compared_from`; `None`: it compares none of them, a run past a
/// gap): those stamps are never revised, and `verify`, which recomputes them
/// from the store as it is now, names those the late rows change. A hostile
/// round found them kept without a word. `None`: no such run, or no record to
/// tell (a file published before runs were recorded, a Parquet file). A store
/// whose runs are no longer those the file was published from (rebuilt or
/// replaced: the recorded run gone, or the runs through it not those recorded)
/// gets a note that the runs since cannot be told, where a hostile round found
/// a store rebuilt in more runs named as late data. Runs are known
/// by their fixing dates only: rows of the day after the last stamp's day that
/// its interval reads (an end-labelled 24:00 stamp, a slot past midnight) are
/// not told apart from that day's own, and are not named.
fn late_runs(
    store: &Path,
    seen: Option<&(String, Option<String>)>,
    last: Option<chrono::NaiveDate>,
    compared_from: Option<chrono::NaiveDate>,
) -> anyhow::Result<Option<String>> {
    let (Some((seen, seen_runs)), Some(last)) = (seen, last) else {
        return Ok(None);
    };
    let through = match compared_from {
        Some(from) => last.min(from.pred_opt().unwrap_or(from)),
        None => last,
    };
    let runs = rentix_store::Store::open(store)?.runs()?;
    // A store rebuilt or replaced since: its run names say nothing of what the
    // file read.
    let same = runs.iter().any(|r| r.run_id == *seen)
        && seen_runs
            .as_ref()
            .is_none_or(|d| *d == rentix_store::runs_sha256(&runs, seen));
    if !same {
        return Ok(Some(format!(
            "note: the store's runs through {seen} are not those this file was last published from (a store rebuilt or replaced since): data that arrived since for the days it publishes cannot be told from its runs; `rentix verify` recomputes every stamp from the store as it is now and names those that differ"
        )));
    }
    let day = |d: &Option<String>| {
        d.as_deref()
            .and_then(|d| d.parse::<chrono::NaiveDate>().ok())
    };
    let late: Vec<(String, chrono::NaiveDate)> = runs
        .iter()
        // A compaction moves rows already read: it brings none.
        .filter(|r| r.run_id.as_str() > seen.as_str() && r.replaces.is_empty())
        .filter_map(|r| {
            let first = day(&r.first_fixing_date)?;
            (first <= through).then(|| (r.run_id.clone(), first))
        })
        .collect();
    let Some(earliest) = late.iter().map(|(_, d)| *d).min() else {
        return Ok(None);
    };
    Ok(Some(format!(
        "late data: {} ingest run(s) committed since this file was last published ({}) hold rows dated from {earliest}, on days it had published through {through}: intraday stamps are never revised, so they stay as first published; `rentix verify` recomputes them from the store as it is now and names every stamp the late rows change",
        late.len(),
        late.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>().join(", ")
    )))
}

/// The last stamp of the intraday file `out`: a CSV file's read from its end, a
/// Parquet file's from its rows (`None`: no such file, or a last line that is not
/// a stamp's row).
fn last_stamp(out: &Path) -> Option<chrono::DateTime<chrono::Utc>> {
    use std::io::{Read, Seek};
    if !out.exists() {
        return None;
    }
    if rentix_table::TableFormat::of(out).ok()? != rentix_table::TableFormat::Csv {
        // A Parquet file is written again whole by each run: read it.
        return rentix_index::intraday::read_intraday(out)
            .ok()?
            .iter()
            .map(|f| f.fixed_at)
            .max();
    }
    let mut f = std::fs::File::open(out).ok()?;
    let len = f.metadata().ok()?.len();
    f.seek(std::io::SeekFrom::Start(len.saturating_sub(4096)))
        .ok()?;
    let mut end = Vec::new();
    f.read_to_end(&mut end).ok()?;
    let text = String::from_utf8_lossy(&end);
    let line = text.trim_end().lines().last()?;
    let at = rentix_index::intraday::INTRADAY_COLUMNS
        .iter()
        .position(|c| *c == "fixed_at")?;
    let cell = line.split(',').nth(at)?;
    chrono::DateTime::parse_from_rfc3339(cell)
        .ok()
        .map(|t| t.with_timezone(&chrono::Utc))
}

fn file_name_of(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default()
}

/// An intraday methodology's fixings from the store at `store_path`, over
/// `from..=to` (the store's whole range by default); and how many grades.
pub fn from_store(
    store_path: &Path,
    m: &IntradayMethodology,
    from: Option<chrono::NaiveDate>,
    to: Option<chrono::NaiveDate>,
) -> anyhow::Result<(
    rentix_index::intraday::IntradayResult,
    usize,
    chrono::NaiveDate,
    chrono::NaiveDate,
)> {
    let store = rentix_store::Store::open(store_path)?;
    Ok(rentix_index::intraday::fix_store(&store, m, from, to)?)
}
