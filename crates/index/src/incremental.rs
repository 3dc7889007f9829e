//! Incremental publication: `index --from D1 [--to D2] --out F` reads only the store
//! partitions that the fixings of D1 onwards can depend on, and continues the
//! chained composites from where the previous publication left them, writing the
//! same bytes a run over the whole history would.
//!
//! What a fixing on D depends on before D is bounded by the methodology (the window
//! and lag, the contributor carry-in, carried values and the listing spread's
//! look-back, the 30-day change, and a grade's life, which a silence of more than
//! `MAX_SILENT_DAYS` ends). The chained and hedonic composites are not bounded:
//! their level on D is the product of every link since their first day. Each
//! publication therefore writes its state beside the fixings, `F_state.json`
//! ([`State`]): the composites' unrounded levels, the store runs it read and what
//! it was computed with. The next publication uses it only when nothing it holds can
//! have changed: the same methodology, grade filters and rentix version, and every
//! run committed since it bringing only observations of dates after the ones it
//! continues from (a compaction changes no row). Otherwise it reads the whole store,
//! as it always did, and says why.

use crate::composite::{ChainSeed, TierDifferential};
use crate::engine::MAX_SILENT_DAYS;
use crate::methodology::{CompositeMethod, Methodology, Roll};
use chrono::{Days, NaiveDate};
use rentix_core::DayRule;
use rentix_store::IngestSummary;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The version of the state file's layout (3: the state's own digest, the
/// methodology's version and `--valued-only`).
pub const STATE_FORMAT: u32 = 3;

/// Calendar days a change column looks back (`change_30d`).
const LONGEST_CHANGE_DAYS: u64 = 30;

/// Days between an observation's partition (the ingest's cut-off) and the day the
/// methodology's own cut-off gives it, at most: time zones and cut-offs differ by
/// less than two days.
const CLOCK_SKEW_DAYS: u64 = 3;

/// Days `roll = "next-publication-day"` can move an observation forward, at most.
const LONGEST_ROLL_DAYS: u64 = 31;

/// What a publication leaves beside its fixings for the next one to continue from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// The layout's version, [`STATE_FORMAT`]; a state of another is not used.
    pub format: u32,
    /// The rentix version that computed it.
    pub rentix: String,
    /// SHA-256 of the methodology as parsed ([`fingerprint`]).
    pub methodology_sha256: String,
    /// `--grade` filters of the run (empty: every grade).
    pub grades: Vec<String>,
    /// The published file's name: a state beside `F.csv` is not `F.parquet`'s.
    pub published: String,
    /// The store's run records when it was computed, each as `run-id:digest` (a
    /// digest of what it committed, [`run_digest`]): a store rebuilt or replayed
    /// with other content has the same ids but not the same digests.
    pub runs: Vec<String>,
    /// The last fixing date the levels are complete and final to.
    pub through: NaiveDate,
    /// Whether the publication has a tier-differentials file.
    pub tier_differentials: bool,
    /// Each chained or hedonic composite's unrounded level on each of its rows.
    pub levels: BTreeMap<String, BTreeMap<NaiveDate, f64>>,
    /// The methodology's version, as the published rows name it.
    #[serde(default)]
    pub methodology_version: String,
    /// Whether the publication holds only the rows with a value (`--valued-only`).
    #[serde(default)]
    pub valued_only: bool,
    /// SHA-256 of the tier differentials the publication wrote beside it
    /// ([`differentials_sha256`]; empty when it wrote none, or for a state written
    /// before it was recorded): a file edited or cut since is refused.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tier_differentials_sha256: String,
    /// SHA-256 of the state's content with this field empty ([`content_sha256`]):
    /// a state edited since it was written (its levels doubled) is refused.
    #[serde(default)]
    pub sha256: String,
}

/// SHA-256 of `state`'s content, its own `sha256` left empty (its compact JSON).
pub fn content_sha256(state: &State) -> String {
    let mut s = state.clone();
    s.sha256.clear();
    let json = serde_json::to_string(&s).unwrap_or_default();
    rentix_core::hex(&Sha256::digest(json.as_bytes()))
}

/// What a publication into a file asks of the state the file's last publication
/// left: that it is the state as written, of this store, this methodology and
/// this choice of rows ([`check_state`]).
pub struct Continuation<'a> {
    /// The state file (for messages).
    pub path: &'a Path,
    /// The published file's name.
    pub published: &'a str,
    /// The store (for messages) and its run records now.
    pub store: &'a Path,
    /// The store's run records now.
    pub runs: &'a [IngestSummary],
    /// The methodology of this publication.
    pub methodology: &'a Methodology,
    /// Whether this publication covers every row of the file (no `--from`, `--to`
    /// or `--grade`): a new methodology may then replace the old one whole.
    pub whole: bool,
    /// `--valued-only`.
    pub valued_only: bool,
}

/// Refuses to continue a publication from `state` when that would corrupt it: a
/// state edited since it was written (its digest), a file published from another
/// store (a run it read is gone or changed), another methodology over part of the
/// file (two methodologies in one file), another choice of `--valued-only`. A
/// state of another layout or of another file is not this publication's: it is
/// left to [`plan`] (which then reads the whole store).
pub fn check_state(state: &State, c: &Continuation<'_>) -> Result<(), crate::IndexError> {
    if state.format != STATE_FORMAT || state.published != c.published {
        return Ok(());
    }
    let path = c.path.display();
    let Some(finding) = findings(state, c).into_iter().next() else {
        return Ok(());
    };
    Err(match finding {
        Finding::Edited { recorded, hashes } => crate::IndexError::Input {
            path: c.path.to_path_buf(),
            detail: format!(
                "does not match its own digest (recorded {recorded}, its content hashes to {hashes}): the state was edited since it was written, and composites continued from it would be wrong; nothing was published. Restore it, or remove it to read the whole store"
            ),
        },
        Finding::RunGone(run) => crate::IndexError::Data(format!(
            "{} was published from another store: {run} that its state {path} records is no longer in {} as it was (a store rebuilt, replaced or edited); nothing was published. Publish into a new file, or remove {path} to republish this file from this store (every changed row restated)",
            c.published,
            c.store.display()
        )),
        Finding::ValuedOnly { was } => {
            let (was, now) = if was {
                ("with", "without")
            } else {
                ("without", "with")
            };
            crate::IndexError::Config(format!(
                "{path} records that {} was published {was} --valued-only, and this run is {now} it: the file would mix the two; nothing was published. Run as the file was published, or publish into a new file ({NOT_THE_FILE_S})",
                c.published
            ))
        }
        Finding::Methodology { was } => crate::IndexError::Config(format!(
            "{path} records that {} was published under methodology {was}, and this run's is {} (another methodology, or the same version changed): publishing part of the file would mix the two; nothing was published. Publish every date (no --from, --to or --grade: every row is restated) or into a new file ({NOT_THE_FILE_S})",
            c.published, c.methodology.version
        )),
    })
}

/// The remedy for a state that says what the file does not (the refusals above
/// are of what the state records: only it says how the file was published).
const NOT_THE_FILE_S: &str = "when the file's own rows say otherwise, the state is not the file's (copied from another publication, or edited): remove it to read the whole store";

/// What a state holds that a publication continuing from it ([`check_state`]) or
/// `verify` ([`state_problems`]) finds wrong, in that order.
enum Finding {
    /// Its digest is not its content's.
    Edited { recorded: String, hashes: String },
    /// A run it read is no longer in the store as it was (the run's id).
    RunGone(String),
    /// Written with `--valued-only` (`true`) or without, unlike this run.
    ValuedOnly { was: bool },
    /// Written under another methodology (its version), over part of the file.
    Methodology { was: String },
}

/// Every [`Finding`] of `state` for the continuation `c`, in [`Finding`]'s order.
fn findings(state: &State, c: &Continuation<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    let hashes = content_sha256(state);
    if state.sha256 != hashes {
        out.push(Finding::Edited {
            recorded: state.sha256.clone(),
            hashes,
        });
    }
    let now: BTreeSet<String> = c.runs.iter().map(run_digest).collect();
    if let Some(gone) = state.runs.iter().find(|r| !now.contains(r.as_str())) {
        out.push(Finding::RunGone(
            gone.split(':').next().unwrap_or(gone).to_string(),
        ));
    }
    if state.valued_only != c.valued_only {
        out.push(Finding::ValuedOnly {
            was: state.valued_only,
        });
    }
    if state.methodology_sha256 != fingerprint(c.methodology) && !c.whole {
        out.push(Finding::Methodology {
            was: if state.methodology_version.is_empty() {
                "(unnamed)".into()
            } else {
                state.methodology_version.clone()
            },
        });
    }
    out
}

/// A daily publication as `verify` read it and recomputed it, for
/// [`state_problems`].
pub struct Verified<'a> {
    /// The published fixings file.
    pub out: &'a Path,
    /// Each composite's values by date, as the file holds them, where they are
    /// what the store recomputes (a value that is not is a difference already).
    pub values: &'a BTreeMap<String, BTreeMap<NaiveDate, f64>>,
    /// The file's last date.
    pub last: Option<NaiveDate>,
    /// The file's methodology.
    pub methodology: &'a Methodology,
    /// Whether the file holds a row without a value (then it was not published
    /// `--valued-only`; a file whose rows all have one may have been either way).
    pub unvalued_rows: bool,
    /// The store (for messages) and its run records now.
    pub store: &'a Path,
    /// The store's run records now.
    pub runs: &'a [IngestSummary],
}

/// What is wrong with the state beside a daily publication, for `verify`: each a
/// sentence (none: it holds nothing wrong), or `None` when there is no state to
/// check (none, or one the next publication ignores: of another layout or another
/// file). It finds what the next publication into the file would refuse
/// ([`check_state`], and the levels its chains continue from): a state edited
/// since it was written (its digest), runs no longer in the store as they were,
/// another choice of `--valued-only` or another methodology, levels that are not
/// the values the file published (edited with the digest recomputed: a checksum,
/// not a signature), a state through a day after the file's last, and tier
/// differentials the file beside it no longer holds.
pub fn state_problems(v: &Verified<'_>) -> Option<Vec<String>> {
    let path = state_path(v.out);
    let state = match read_state(&path) {
        Ok(None) => return None,
        Ok(Some(s)) => s,
        Err(e) => return Some(vec![format!("cannot be read: {e}")]),
    };
    let name = v
        .out
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    if state.format != STATE_FORMAT || state.published != name {
        return None;
    }
    let c = Continuation {
        path: &path,
        published: &name,
        store: v.store,
        runs: v.runs,
        methodology: v.methodology,
        whole: false,
        valued_only: state.valued_only,
    };
    let mut problems: Vec<String> = findings(&state, &c)
        .into_iter()
        .filter_map(|f| match f {
            Finding::Edited { recorded, hashes } => Some(format!(
                "does not match its own digest (recorded {recorded}, its content hashes to {hashes}): it was edited since it was written"
            )),
            Finding::RunGone(run) => Some(format!(
                "records {run}, which is no longer in {} as it was (a store rebuilt, replaced or edited)",
                v.store.display()
            )),
            // Never found here: the continuation compared is the state's own
            // choice (a file whose rows all have values may be either; below).
            Finding::ValuedOnly { .. } => None,
            Finding::Methodology { was } => Some(format!(
                "records methodology {was}, and the file's is {} (or the same version changed): a publication of part of the file is refused",
                v.methodology.version
            )),
        })
        .collect();
    if state.valued_only && v.unvalued_rows {
        problems.push(
            "records a publication with --valued-only, and the file holds rows without a value: the next publication is refused"
                .into(),
        );
    }
    // A filtered publication's levels are of its grades only: the file's other
    // rows are not theirs, and the next unfiltered publication reads the store.
    if state.grades.is_empty() {
        problems.extend(levels_off(&state, v));
    }
    // A state through a publication day the file does not reach (a day that is
    // none, such as a Saturday under business days, publishes no row; a file of
    // some grades or of valued rows may have none on its last days either).
    let rule = v.methodology.day_rule();
    let every_row = state.grades.is_empty() && !state.valued_only;
    let last_day = (0..=400u64)
        .map(|k| state.through - Days::new(k))
        .find(|d| rule.counts(*d));
    if let (Some(last), Some(day), true) = (v.last, last_day, every_row) {
        if day > last {
            problems.push(format!(
                "is through {day}, after the file's last day {last}: a publication after that day would continue after days the file never published, and is refused"
            ));
        }
    }
    let differentials = crate::Companions::of(v.out).tier_differentials();
    if !state.tier_differentials_sha256.is_empty() && differentials.exists() {
        let held = read_tier_differentials(&differentials).map(|rows| differentials_sha256(&rows));
        if held.as_deref().ok() != Some(state.tier_differentials_sha256.as_str()) {
            problems.push(format!(
                "records tier differentials that {} no longer holds (edited, cut or unreadable since)",
                differentials.display()
            ));
        }
    }
    Some(problems)
}

/// The state's levels that are not the values the file published (within half
/// the last decimal: a level is unrounded), as one sentence naming the first.
fn levels_off(state: &State, v: &Verified<'_>) -> Option<String> {
    let half = 0.5 * 10f64.powi(-(v.methodology.rounding.decimals.min(15) as i32));
    let empty = BTreeMap::new();
    let mut off = state.levels.iter().flat_map(|(composite, levels)| {
        let values = v.values.get(composite).unwrap_or(&empty);
        // A level that is not the value published, and a value published (up to
        // the day the state is through) that it holds no level for.
        let wrong = levels.iter().filter_map(move |(date, level)| {
            let value = *values.get(date)?;
            let gap = (value - level).abs();
            (gap.is_nan() || gap > half * (1.0 + 1e-9)).then(|| {
                format!("its level of {composite} on {date}, {level}, is not the value published, {value}")
            })
        });
        let missing = values
            .range(..=state.through)
            .filter(move |(date, _)| !levels.contains_key(*date))
            .map(move |(date, value)| {
                format!("it holds no level of {composite} on {date}, where the file published {value}")
            });
        wrong.chain(missing)
    });
    let first = off.next()?;
    let more = off.count();
    Some(format!(
        "{first}{}: the state does not describe the file, and a publication continuing from that day is refused",
        match more {
            0 => String::new(),
            n => format!(" (and {n} other levels)"),
        }
    ))
}

/// A run record as the state knows it: `run-id:` and the SHA-256 of its partitions,
/// their checksums and the inputs it read.
pub fn run_digest(run: &IngestSummary) -> String {
    let what = serde_json::json!([
        run.partitions,
        run.partition_checksums,
        run.input_sha256,
        run.replaces
    ]);
    let mut h = Sha256::new();
    h.update(what.to_string().as_bytes());
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    format!("{}:{}", run.run_id, &hex[..16])
}

/// `F_state.json` beside a fixings file `F.csv` (or `F.parquet`).
pub fn state_path(fixings: &Path) -> PathBuf {
    crate::Companions::of(fixings).state()
}

/// SHA-256 of the methodology as parsed (its JSON form): any change to a rule, a
/// weight or a composite changes it.
pub fn fingerprint(m: &Methodology) -> String {
    let json = serde_json::to_string(m).unwrap_or_default();
    let mut h = Sha256::new();
    h.update(json.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads a state file; `None` when there is none, an explanation when it cannot be
/// used (it is then ignored and the whole store read).
pub fn read_state(path: &Path) -> Result<Option<State>, UnusableState> {
    match rentix_core::read_text(path, rentix_core::MAX_STATE_BYTES) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| UnusableState::Unreadable {
                path: path.to_path_buf(),
                detail: e.to_string(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(UnusableState::Io {
            path: path.to_path_buf(),
            detail: e.to_string(),
        }),
    }
}

/// A state file that is there but cannot be used: it is then ignored and the whole
/// store read, and the run says why ([`Decision::Full`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnusableState {
    /// The file is not a state this version can parse.
    #[error("{} is unreadable ({detail})", path.display())]
    Unreadable {
        /// The state file.
        path: std::path::PathBuf,
        /// What the JSON parser said.
        detail: String,
    },
    /// The file is there but cannot be read.
    #[error("{}: {detail}", path.display())]
    Io {
        /// The state file.
        path: std::path::PathBuf,
        /// What the system said.
        detail: String,
    },
}

/// How an incremental run reads the store and continues the composites.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Partitions to read: first fixing date, and last (`None`: to the end).
    pub partitions: (NaiveDate, Option<NaiveDate>),
    /// The date the chains continue after: composites are fixed after it only.
    pub after: NaiveDate,
    /// Where each chained composite stood at the end of `after`.
    pub seeds: BTreeMap<String, ChainSeed>,
    /// The first date whose grade rows the read fixes exactly (as a run over the
    /// whole store does): the publication may re-fix earlier rows from here
    /// ([`revision_reach`]).
    pub exact: NaiveDate,
}

/// What a run with `--from` reads: only what it needs, or the whole store and why.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Read only the plan's partitions and continue the chains from its seeds.
    Incremental(Plan),
    /// Read the whole store, for the reason given (printed on the `read:` line).
    Full(String),
}

/// What [`plan`] is given: the run's request and the store as it is now.
pub struct Request<'a> {
    /// The published file's name.
    pub published: &'a str,
    /// The methodology of this run (compared with the state's by [`fingerprint`]).
    pub methodology: &'a Methodology,
    /// The run's `--grade` filters, as typed.
    pub grade_filters: &'a [String],
    /// `--from`: without it every date is published and the store read whole.
    pub from: Option<NaiveDate>,
    /// `--to`: the last date published (`None`: to the store's end).
    pub to: Option<NaiveDate>,
    /// The store's run records.
    pub runs: &'a [IngestSummary],
}

/// Decides how a run reads the store, from the previous publication's state.
pub fn plan(req: &Request<'_>, state: Result<Option<State>, UnusableState>) -> Decision {
    let full = |why: &str| Decision::Full(why.to_string());
    let Some(d1) = req.from else {
        return full("no --from: every date is published");
    };
    let state = match state {
        Ok(Some(s)) => s,
        Ok(None) => return full("no state file beside the published file (a first publication, or the state was removed)"),
        Err(e) => return Decision::Full(e.to_string()),
    };
    let m = req.methodology;
    if state.format != STATE_FORMAT || state.rentix != env!("CARGO_PKG_VERSION") {
        return full("the state file was written by another rentix version");
    }
    if state.methodology_sha256 != fingerprint(m) {
        return full("the methodology changed since the last publication");
    }
    if state.grades != req.grade_filters {
        return full("the --grade filters differ from the last publication's");
    }
    if state.published != req.published {
        return full("the state file was written for another publication");
    }
    let rule = m.day_rule();
    // The chains continue after the last publication day before D1 that the state
    // has final levels for.
    let Some(before) = (1..=400u64)
        .map(|k| d1 - Days::new(k))
        .find(|d| rule.counts(*d))
    else {
        return full("no publication day in the 400 days before --from");
    };
    let after = before.min(state.through);
    let chained: Vec<&str> = m
        .composite
        .iter()
        .filter(|c| c.method != CompositeMethod::Pooled)
        .map(|c| c.name.as_str())
        .collect();
    let mut seeds = BTreeMap::new();
    for name in &chained {
        let Some(levels) = state.levels.get(*name) else {
            return full("the state file lacks a composite of the methodology");
        };
        let level = levels.range(..=after).next_back().map(|(d, l)| (*d, *l));
        seeds.insert(name.to_string(), ChainSeed { after, level });
    }
    // Every row from `exact` on must be what a full run gives: those published, the
    // 30 days their changes look back to, and the composites' day `after`.
    let exact = first_exact_day(d1).min(revision_reach(d1)).min(after);
    // The hedonic link after `after` regresses against the last day with data.
    let seed_day = m
        .composite
        .iter()
        .filter(|c| c.method == CompositeMethod::Hedonic)
        .filter_map(|c| seeds.get(&c.name).and_then(|s| s.level.map(|l| l.0)))
        .min();
    let (mut first, last) = observation_days(m, rule, exact, req.to);
    if let Some(d) = seed_day {
        first = first.min(d - Days::new(CLOCK_SKEW_DAYS + roll_days(m)));
    }
    // What the state holds must not have changed: runs committed since bring
    // observations only after `after` (under the methodology's own cut-off; a run
    // under another may put them a day or two earlier).
    let known: BTreeSet<&str> = state.runs.iter().map(String::as_str).collect();
    let now: Vec<String> = req.runs.iter().map(run_digest).collect();
    for (run, digest) in req.runs.iter().zip(&now) {
        if known.contains(digest.as_str()) || !run.replaces.is_empty() {
            continue; // seen, or a compaction: the same rows in fewer files
        }
        let skew = if run.cutoff == m.cutoff() {
            0
        } else {
            CLOCK_SKEW_DAYS
        };
        let earliest = rentix_store::fixing_dates_of(std::slice::from_ref(run)).map(|(f, _)| f);
        if earliest.is_some_and(|p| p <= after + Days::new(skew)) {
            return Decision::Full(format!(
                "{} brought observations of {} or before, which the last publication's state already covers",
                run.run_id, after
            ));
        }
    }
    let now: BTreeSet<&str> = now.iter().map(String::as_str).collect();
    if let Some(gone) = state.runs.iter().find(|r| !now.contains(r.as_str())) {
        return Decision::Full(format!(
            "{} that the last publication read is no longer in the store as it was",
            gone.split(':').next().unwrap_or(gone)
        ));
    }
    Decision::Incremental(Plan {
        partitions: (first, last),
        after,
        seeds,
        exact,
    })
}

/// The observation days (of the store's partitions) that grade rows from `exact`
/// through `to` can depend on under `m`: `(first, last)`, `last` open without a
/// `to`. Fixing a grade from only these observations and keeping its rows from
/// `exact` on gives the rows a run over the whole history gives (composites'
/// chains aside, which go back to their first day).
pub fn observation_days(
    m: &Methodology,
    rule: &DayRule,
    exact: NaiveDate,
    to: Option<NaiveDate>,
) -> (NaiveDate, Option<NaiveDate>) {
    let lag = m.lag_calendar_days_max();
    let carry = u64::from(m.fallback.carry_forward_days);
    let spread = if m.fallback.listing_spread {
        u64::from(m.fallback.spread_lookback_days)
    } else {
        0
    };
    // A carried value is a fix up to `carry` days old, spread-adjusted from the
    // spreads of the `spread` days before it, each fixed on its own window, whose
    // missing contributors are carried in from `carry_missing_days` before.
    let oldest_fix = exact - Days::new(carry + spread);
    let inputs_from = m.window_of(oldest_fix, Some(rule)).0
        - Days::new(u64::from(m.contributors.carry_missing_days));
    // A grade lives on `exact` only through an observation at most a silence,
    // the lag and the carry before it.
    let life_from = exact - Days::new(MAX_SILENT_DAYS + lag + carry);
    let first = inputs_from.min(life_from) - Days::new(CLOCK_SKEW_DAYS + roll_days(m));
    // Rows up to `to` depend on observations after it only through a grade's life.
    let last = to.map(|d2| d2 + Days::new(MAX_SILENT_DAYS + lag + carry + CLOCK_SKEW_DAYS));
    (first, last)
}

/// The days the methodology's roll can move an observation forward, at most.
fn roll_days(m: &Methodology) -> u64 {
    if m.calendar.roll == Roll::NextPublicationDay {
        LONGEST_ROLL_DAYS
    } else {
        0
    }
}

/// The earliest row a one-day publication from `d1` can find changed by data that
/// arrived since the last one, when none of it is dated before the last publication
/// (otherwise the store is read whole and every row is exact): a grade's life that
/// an observation of `d1` extends through a silence of up to `MAX_SILENT_DAYS`
/// gains rows back to the end of its last life (a cut-off's skew earlier at most).
pub fn revision_reach(d1: NaiveDate) -> NaiveDate {
    d1 - Days::new(MAX_SILENT_DAYS + CLOCK_SKEW_DAYS)
}

/// The first row a run from `d1` publishes exactly, with its change columns: `d1`
/// less the longest change's look-back.
pub fn first_exact_day(d1: NaiveDate) -> NaiveDate {
    d1 - Days::new(LONGEST_CHANGE_DAYS)
}

/// The state a publication leaves: levels up to `after` from the previous state,
/// those computed after it from `computed`, up to `through`.
/// `differentials`: those the publication writes beside its fixings, if it writes
/// them.
pub fn next_state(
    req: &Request<'_>,
    previous: Option<(&State, NaiveDate)>,
    computed: &BTreeMap<String, Vec<(NaiveDate, f64)>>,
    through: NaiveDate,
    differentials: Option<&[TierDifferential]>,
    valued_only: bool,
) -> State {
    let mut levels: BTreeMap<String, BTreeMap<NaiveDate, f64>> = BTreeMap::new();
    for (name, new) in computed {
        let mut v: BTreeMap<NaiveDate, f64> = match previous {
            Some((old, after)) => old
                .levels
                .get(name)
                .map(|l| l.range(..=after).map(|(d, x)| (*d, *x)).collect())
                .unwrap_or_default(),
            None => BTreeMap::new(),
        };
        let from = previous.map(|(_, after)| after);
        v.extend(
            new.iter()
                .filter(|(d, _)| from.is_none_or(|a| *d > a) && *d <= through)
                .copied(),
        );
        levels.insert(name.clone(), v);
    }
    let mut state = State {
        format: STATE_FORMAT,
        rentix: env!("CARGO_PKG_VERSION").to_string(),
        methodology_sha256: fingerprint(req.methodology),
        grades: req.grade_filters.to_vec(),
        published: req.published.to_string(),
        runs: req.runs.iter().map(run_digest).collect(),
        through,
        tier_differentials: differentials.is_some(),
        levels,
        methodology_version: req.methodology.version.clone(),
        valued_only,
        tier_differentials_sha256: differentials.map(differentials_sha256).unwrap_or_default(),
        sha256: String::new(),
    };
    state.sha256 = content_sha256(&state);
    state
}

/// The state as its file holds it.
pub fn state_json(state: &State) -> Vec<u8> {
    let mut s = serde_json::to_string_pretty(state).unwrap_or_default();
    s.push('\n');
    s.into_bytes()
}

/// The tier differentials of a published file: those of the previous file on or
/// before `after` (or after `to`), and those computed after `after` up to `to`, in
/// the methodology's composite order, then date.
pub fn merge_tier_differentials(
    m: &Methodology,
    old: Vec<TierDifferential>,
    new: Vec<TierDifferential>,
    after: NaiveDate,
    to: Option<NaiveDate>,
) -> Vec<TierDifferential> {
    let inside = |d: NaiveDate| d > after && to.is_none_or(|t| d <= t);
    let mut all: Vec<TierDifferential> = old
        .into_iter()
        .filter(|t| !inside(t.date))
        .chain(new.into_iter().filter(|t| inside(t.date)))
        .collect();
    let position = |name: &str| m.composite.iter().position(|c| c.name == name);
    all.sort_by_key(|t| (position(&t.composite), t.date));
    all
}

/// SHA-256 of tier differentials as values (each row's date, composite, the two
/// coefficients' exact bits and the count, in date order per composite): the same
/// for the rows a publication wrote and for those read back from its file (a
/// float's text is its shortest exact form), whatever the file's format.
pub fn differentials_sha256(rows: &[TierDifferential]) -> String {
    let mut rows: Vec<&TierDifferential> = rows.iter().collect();
    rows.sort_by(|a, b| (&a.composite, a.date).cmp(&(&b.composite, b.date)));
    let mut sha = Sha256::new();
    for t in rows {
        sha.update(
            format!(
                "{},{},{:016x},{:016x},{}\n",
                t.date,
                t.composite,
                t.log_price_per_tier_step.to_bits(),
                t.premium_per_tier_step.to_bits(),
                t.n_obs
            )
            .as_bytes(),
        );
    }
    rentix_core::hex(&sha.finalize())
}

/// The tier differentials of the file at `path` (the previous publication's),
/// refused when `state` recorded others: an edit or a cut since it was written
/// would be carried into the next publication.
pub fn read_recorded_differentials(
    path: &Path,
    state: &State,
    state_path: &Path,
) -> Result<Vec<TierDifferential>, crate::IndexError> {
    const REMEDY: &str = "nothing was published. Restore it as published, or delete it: the publication then recomputes it from the whole store";
    // A file emptied, re-headed or with a cell that does not parse is refused as
    // an edited one is, naming what to do, not only what is wrong.
    let rows = read_tier_differentials(path).map_err(|e| crate::IndexError::Input {
        path: path.to_path_buf(),
        detail: format!(
            "it cannot be read as the tier differentials the last publication wrote ({}); {REMEDY}",
            without_path(&e.to_string(), path)
        ),
    })?;
    if !state.tier_differentials_sha256.is_empty()
        && differentials_sha256(&rows) != state.tier_differentials_sha256
    {
        return Err(crate::IndexError::Input {
            path: path.to_path_buf(),
            detail: format!(
                "its {} rows are not the tier differentials the last publication wrote (their digest in {} differs): the file was edited or cut since; {REMEDY}",
                rows.len(),
                state_path.display()
            ),
        });
    }
    Ok(rows)
}

/// `message` without its leading `path: `, when it has one (the caller names it).
fn without_path<'m>(message: &'m str, path: &Path) -> &'m str {
    message
        .strip_prefix(&format!("{}: ", path.display()))
        .unwrap_or(message)
}

/// Reads a tier-differentials file as [`crate::tier_differentials_table`] wrote it.
pub fn read_tier_differentials(path: &Path) -> Result<Vec<TierDifferential>, crate::IndexError> {
    let t = rentix_table::TextTable::read(path)?;
    let col = |name: &str| {
        t.names
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| crate::IndexError::Input {
                path: path.to_path_buf(),
                detail: format!("no column {name:?}"),
            })
    };
    let (d, c, l, p, n) = (
        col("date")?,
        col("composite")?,
        col("log_price_per_tier_step")?,
        col("premium_per_tier_step")?,
        col("n_obs")?,
    );
    t.rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let bad = |what: &str| crate::IndexError::Fixings {
                path: path.to_path_buf(),
                row: i + 1,
                detail: format!("{what} does not parse"),
            };
            Ok(TierDifferential {
                date: r[d].parse().map_err(|_| bad("date"))?,
                composite: r[c].clone(),
                log_price_per_tier_step: r[l]
                    .parse()
                    .map_err(|_| bad("log_price_per_tier_step"))?,
                premium_per_tier_step: r[p].parse().map_err(|_| bad("premium_per_tier_step"))?,
                n_obs: r[n].parse().map_err(|_| bad("n_obs"))?,
            })
        })
        .collect()
}

/// Stored observations a slice of a full run reads, at most about
/// ([`compute_in_slices`]): its own months' and those its look-back (some 130
/// days) and look-ahead (a grade's life, some 100 days) reach, rounded out to
/// months. Memory holds one slice's rows (24 bytes each in the engine, plus
/// decoding), whatever the history's length.
pub const SLICE_ROWS: u64 = 5_000_000;

/// The last fixing day of the observations a run of `req` reads: rows through
/// `req.to` depend on none after it, through a grade's life (`None`: no `to`,
/// the store's end).
pub fn last_read_day(req: &crate::IndexRequest) -> Option<NaiveDate> {
    let m = &req.methodology;
    req.to
        .and_then(|t| observation_days(m, m.day_rule(), t, Some(t)).1)
}

/// A run over the whole store, fixed a slice of months at a time, each slice
/// holding about `slice_rows` stored observations: each slice reads the
/// observations its dates can depend on ([`observation_days`]) and continues the
/// chained composites from where the previous slice left them, as an incremental
/// publication continues from its state. Memory holds one slice's observations and
/// their look-back (and every fixing so far), not the history's; the result is the
/// one-pass run's, row for row (tested for every shipped methodology). A store of
/// fewer rows is read in one pass.
pub fn compute_in_slices(
    store: &rentix_store::Store,
    req: &crate::IndexRequest,
    slice_rows: u64,
) -> Result<crate::IndexResult, crate::IndexError> {
    let m = &req.methodology;
    let rule = m.day_rule();
    // Rows through `to` depend on no observation after `read_to` (a grade's life
    // reaches that far ahead, no further): later months are not read, so a
    // back-fill costs its own months and a damaged month after it stops nothing.
    let read_to = last_read_day(req);
    let capped = |last: Option<NaiveDate>| match (last, read_to) {
        (Some(l), Some(r)) => Some(l.min(r)),
        (l, r) => l.or(r),
    };
    let Some((first, last)) = store.fixing_dates()? else {
        return crate::compute_read(store, req, None, None, (None, None));
    };
    let one_pass = || {
        let partitions = read_to.map(|r| (first, Some(r)));
        crate::compute_read(store, req, partitions, None, (None, req.to))
    };
    let end = req.to.map_or(last, |t| t.min(last));
    // How far a slice reads before its first day and after its last.
    let (back, ahead) = {
        let (from, to) = observation_days(m, rule, end, Some(end));
        let days = |a: NaiveDate, b: NaiveDate| Days::new((b - a).num_days().unsigned_abs());
        (days(from, end), days(end, to.unwrap_or(end)))
    };
    let starts: Vec<NaiveDate> = slice_starts(store, slice_rows, back, ahead)?
        .into_iter()
        .filter(|d| *d > first && *d <= end)
        .collect();
    if starts.is_empty() {
        return one_pass();
    }
    let mut out = crate::IndexResult::default();
    let mut slice_from: Option<NaiveDate> = None;
    for k in 0..=starts.len() {
        let slice_to = starts.get(k).map(|d| *d - Days::new(1));
        let read = match slice_from {
            None => SliceRead {
                first,
                last: capped(observation_days(m, rule, first, slice_to).1),
            },
            Some(d1) => match slice_read(m, rule, d1, slice_to, &out.levels) {
                Some(read) => SliceRead {
                    last: capped(read.last),
                    ..read
                },
                None => return one_pass(),
            },
        };
        let seeds = slice_from.map(|d1| slice_seeds(m, rule, d1, &out.levels));
        let r = crate::compute_read(
            store,
            req,
            Some((read.first, read.last)),
            seeds.as_ref().and_then(|s| s.as_ref()),
            (slice_from, slice_to.or(req.to)),
        )?;
        keep_slice(&mut out, r, slice_from, slice_to);
        slice_from = starts.get(k).copied();
    }
    let position = |name: &str| m.composite.iter().position(|c| c.name == name);
    out.tier_differentials
        .sort_by_key(|t| (position(&t.composite), t.date));
    out.slices = starts.len() + 1;
    Ok(out)
}

/// The first days of the months that start a new slice: a month starts one when
/// the slice before would otherwise read more than `slice_rows` rows, counting
/// the months its look-back (`back` before its first day) and look-ahead (`ahead`
/// after its last) reach (rows as the run records committed them, or as the files'
/// footers count them). A slice has at least one month of its own.
fn slice_starts(
    store: &rentix_store::Store,
    slice_rows: u64,
    back: Days,
    ahead: Days,
) -> rentix_store::Result<Vec<NaiveDate>> {
    let recorded: BTreeMap<String, u64> = store
        .runs()?
        .into_iter()
        .flat_map(|r| r.partition_checksums.into_iter())
        .map(|(rel, c)| (rel, c.rows))
        .collect();
    let mut by_month: BTreeMap<NaiveDate, u64> = BTreeMap::new();
    for f in store.partitions()?.iter() {
        let rows = match recorded.get(&f.rel) {
            Some(n) => *n,
            None => rentix_store::Table::parquet_rows(&store.root().join(&f.rel))? as u64,
        };
        *by_month.entry(f.span.month()).or_default() += rows;
    }
    let months: Vec<(NaiveDate, u64)> = by_month.into_iter().collect();
    let next_month = |m: NaiveDate| m + chrono::Months::new(1);
    // Rows a slice of the months `from..=to` (indices) reads.
    let reads = |from: usize, to: usize| -> u64 {
        let (first, last) = (months[from].0 - back, next_month(months[to].0) + ahead);
        months
            .iter()
            .filter(|(m, _)| *m < last && next_month(*m) > first)
            .map(|(_, rows)| rows)
            .sum()
    };
    let mut starts = Vec::new();
    let mut from = 0;
    for (to, &(month, _)) in months.iter().enumerate().skip(1) {
        if reads(from, to) > slice_rows.max(1) {
            starts.push(month);
            from = to;
        }
    }
    Ok(starts)
}

/// What a slice from `d1` reads: the observation days of [`observation_days`] from
/// its first exact day, widened to the day a hedonic composite's seed regresses
/// against. `None` when no publication day precedes `d1` within 400 days (the
/// chains cannot be continued: the caller reads the store in one pass).
struct SliceRead {
    first: NaiveDate,
    last: Option<NaiveDate>,
}

fn slice_read(
    m: &Methodology,
    rule: &DayRule,
    d1: NaiveDate,
    to: Option<NaiveDate>,
    levels: &BTreeMap<String, Vec<(NaiveDate, f64)>>,
) -> Option<SliceRead> {
    let after = last_publication_before(rule, d1)?;
    let exact = first_exact_day(d1).min(after);
    let (mut first, last) = observation_days(m, rule, exact, to);
    let seed_day = m
        .composite
        .iter()
        .filter(|c| c.method == CompositeMethod::Hedonic)
        .filter_map(|c| level_on_or_before(levels, &c.name, after).map(|l| l.0))
        .min();
    if let Some(d) = seed_day {
        first = first.min(d - Days::new(CLOCK_SKEW_DAYS + roll_days(m)));
    }
    Some(SliceRead { first, last })
}

/// The chained composites' seeds for a slice from `d1`, from the levels of the
/// slices before (`None` inside when no publication day precedes `d1`).
fn slice_seeds(
    m: &Methodology,
    rule: &DayRule,
    d1: NaiveDate,
    levels: &BTreeMap<String, Vec<(NaiveDate, f64)>>,
) -> Option<BTreeMap<String, ChainSeed>> {
    let after = last_publication_before(rule, d1)?;
    Some(
        m.composite
            .iter()
            .filter(|c| c.method != CompositeMethod::Pooled)
            .map(|c| {
                let level = level_on_or_before(levels, &c.name, after);
                (c.name.clone(), ChainSeed { after, level })
            })
            .collect(),
    )
}

/// The last publication day before `d1`, within 400 days.
fn last_publication_before(rule: &DayRule, d1: NaiveDate) -> Option<NaiveDate> {
    (1..=400u64)
        .map(|k| d1 - Days::new(k))
        .find(|d| rule.counts(*d))
}

fn level_on_or_before(
    levels: &BTreeMap<String, Vec<(NaiveDate, f64)>>,
    name: &str,
    day: NaiveDate,
) -> Option<(NaiveDate, f64)> {
    levels
        .get(name)
        .and_then(|v| v.iter().rev().find(|(d, _)| *d <= day).copied())
}

/// Adds to `out` what slice `r` computed for the dates `from..=to` (open ends: the
/// first and the last slice), every row of which is the one-pass run's.
fn keep_slice(
    out: &mut crate::IndexResult,
    r: crate::IndexResult,
    from: Option<NaiveDate>,
    to: Option<NaiveDate>,
) {
    let inside = |d: NaiveDate| !(from.is_some_and(|f| d < f) || to.is_some_and(|t| d > t));
    out.fixings
        .extend(r.fixings.into_iter().filter(|f| inside(f.date)));
    out.forward
        .extend(r.forward.into_iter().filter(|f| inside(f.date)));
    out.tier_differentials
        .extend(r.tier_differentials.into_iter().filter(|t| inside(t.date)));
    out.below_clip += r.below_clip;
    for (name, v) in r.levels {
        out.levels
            .entry(name)
            .or_default()
            .extend(v.into_iter().filter(|(d, _)| inside(*d)));
    }
}
