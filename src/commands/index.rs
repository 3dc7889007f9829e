//! `rentix index`.

use crate::cli::IndexArgs;
use anyhow::{bail, Context};
use rentix_core::GradePattern;
use rentix_index::intraday::{AnyMethodology, IntradayMethodology};
use rentix_index::{
    forward_curves, forward_table, publish, tier_differentials_table, tier_spreads,
    tier_spreads_table, Fixing, IndexRequest, IndexResult, Methodology, TierDifferential, Window,
};
use rentix_store::Store;
use rentix_table::TableFormat;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `--in-memory-mib` when not given: input files of up to 512 MiB (about 3.5M
/// rows, 3 GiB of memory) are fixed in memory.
const DEFAULT_IN_MEMORY_MIB: u64 = 512;

/// Validated index configuration.
#[derive(Clone)]
pub(super) struct IndexConfig {
    pub store: PathBuf,
    /// Observation files fixed in memory with no store (`--input`); the store is
    /// not read when any is given.
    pub inputs: Vec<PathBuf>,
    /// Mapping of the `--input` files' layout.
    pub mapping: Option<PathBuf>,
    /// Operator ratings of the `--input` files' rows.
    pub ratings: Vec<PathBuf>,
    /// `--input` files larger than this in all go through a temporary store.
    pub in_memory_bytes: u64,
    /// Publish only rows with a value (`--valued-only`).
    pub valued_only: bool,
    pub out: PathBuf,
    pub request: IndexRequest,
}

/// The store directory `store`, when `path` lies inside it (by real paths, links
/// followed, as far up as the path exists): `None` when it does not or either
/// cannot be resolved.
fn within(path: &std::path::Path, store: &std::path::Path) -> Option<PathBuf> {
    let store = store.canonicalize().ok()?;
    let absolute = std::path::absolute(path).ok()?;
    // The deepest part of the path that exists, resolved; the rest appended.
    let mut base = absolute.as_path();
    let mut rest = Vec::new();
    let resolved = loop {
        if let Ok(real) = base.canonicalize() {
            break real;
        }
        rest.push(base.file_name()?);
        base = base.parent()?;
    };
    let full = rest.iter().rev().fold(resolved, |p, part| p.join(part));
    full.starts_with(&store).then_some(store)
}

impl IndexConfig {
    /// The run `a` asks for under `methodology` (read once by the caller).
    pub(super) fn from_args(a: &IndexArgs, methodology: Methodology) -> anyhow::Result<Self> {
        TableFormat::of(&a.out).with_context(|| format!("--out {}", a.out.display()))?;
        // Clap drops a `requires = "input"` once --store (which conflicts with
        // --input) is given: without this, these were silently ignored.
        if a.store.is_some() {
            let for_input = [
                ("--mapping", a.mapping.is_some()),
                ("--ratings", !a.ratings.is_empty()),
                ("--in-memory-mib", a.in_memory_mib.is_some()),
            ];
            if let Some((flag, _)) = for_input.iter().find(|(_, given)| *given) {
                crate::commands::usage!(
                    "{flag} is for --input files; a store's rows were mapped and rated when they were ingested"
                );
            }
        }
        if let Some(store) = &a.store {
            if let Some(inside) = within(&a.out, store) {
                crate::commands::usage!(
                    "--out {} is inside the store {}: a store holds what ingest writes, and a file published there is refused by the next ingest (in runs/) or swept by it (elsewhere); publish outside the store",
                    a.out.display(),
                    inside.display()
                );
            }
        }
        let grade_filters = a
            .grades
            .iter()
            .map(|g| GradePattern::new(g).with_context(|| format!("--grade {g:?}")))
            .collect::<anyhow::Result<Vec<_>>>()?;
        if let (Some(f), Some(t)) = (a.from, a.to) {
            if f > t {
                crate::commands::usage!("--from {f} is after --to {t}");
            }
        }
        Ok(Self {
            store: a.store.clone().unwrap_or_default(),
            inputs: a.input.clone(),
            mapping: a.mapping.clone(),
            ratings: a.ratings.clone(),
            in_memory_bytes: a
                .in_memory_mib
                .unwrap_or(DEFAULT_IN_MEMORY_MIB)
                .saturating_mul(1 << 20),
            valued_only: a.valued_only,
            out: a.out.clone(),
            request: IndexRequest {
                methodology,
                grade_filters,
                from: a.from,
                to: a.to,
            },
        })
    }
}

/// `<dir>/<stem>_forward.<ext>` beside a fixings file.
pub(super) fn forward_path(out: &Path) -> PathBuf {
    rentix_index::Companions::of(out).forward()
}

/// Runs the index and publishes it; returns a printable summary.
///
/// The requested dates are published merged into the existing file (the daily
/// cycle: `--from D --to D` adds day D and touches nothing else), with exactly the
/// values a run over the whole history gives them. With `--from`, and the state the
/// previous publication left beside the file (`F_state.json`), only the store
/// partitions those dates can depend on are read and the chained composites continue
/// from their recorded levels ([`rentix_index::incremental`]); without it, or when
/// the store changed under what it holds, the whole history is read. The forward
/// curves are rebuilt from the merged file.
pub(super) fn execute(cfg: &IndexConfig) -> anyhow::Result<String> {
    // `--to D` into a file that publishes days after D: those days depend on the
    // ones republished, and are published with them.
    if let Some(last) = rentix_index::republished_through(
        &cfg.out,
        cfg.request.to,
        cfg.request.methodology.day_rule(),
    ) {
        let mut through = cfg.clone();
        through.request.to = Some(last);
        let summary = execute_through(&through)?;
        return Ok(format!(
            "published through {last}, the file's last day: the days after --to {} depend on the days this run publishes (their changes, and every window that holds them)\n{summary}",
            cfg.request.to.map_or(String::new(), |t| t.to_string())
        ));
    }
    // A run without `--to` into a file carried past the store's end (a feed
    // outage) keeps the carried days, as a run `--to` them would.
    if cfg.request.to.is_none() {
        let store_last = Store::open(&cfg.store)?.fixing_dates()?.map(|(_, l)| l);
        if let Some(last) = rentix_index::carried_through(&cfg.out, store_last) {
            let mut through = cfg.clone();
            through.request.to = Some(last);
            let summary = execute_through(&through)?;
            return Ok(format!(
                "published through {last}, the file's last day: the store ends on {}, and the days after it were carried through a feed outage; a run without --to keeps them\n{summary}",
                store_last.map_or(String::new(), |d| d.to_string())
            ));
        }
    }
    execute_through(cfg)
}

/// [`execute`] through the request's `to` as given.
fn execute_through(cfg: &IndexConfig) -> anyhow::Result<String> {
    let store = Store::open(&cfg.store)?;
    let m = &cfg.request.methodology;
    if m.grades.regional && !m.grades.patterns.iter().any(|p| p.contains('@')) {
        let _ = writeln!(
            std::io::stderr(),
            "rentix: warning: grades.regional = true, but no grades.patterns entry has an @REGION part (such as \"*/*/*@*\"), so no regional grade is fixed"
        );
    }
    let today = chrono::Utc::now().date_naive();
    let run =
        rentix_index::fix_for_publication(&store, &cfg.request, &cfg.out, today, cfg.valued_only)?;
    // The publication's last day: the run computed the whole store, past `--to`,
    // and the health line named findings of days the file does not publish.
    let last = run
        .result
        .fixings
        .iter()
        .map(|f| f.date)
        .filter(|d| cfg.request.to.is_none_or(|to| *d <= to))
        .max();
    let horizon = last.map(|d| d - chrono::Days::new(HEALTH_DAYS));
    // The days the line covers: from --from (or the last week), but not before
    // its horizon (it said "from 2024-07-01" over 60 days).
    let since = last.zip(horizon).map(|(last, horizon)| {
        cfg.request
            .from
            .unwrap_or(last - chrono::Days::new(6))
            .max(horizon)
            .min(last)
    });
    // A sufficiency drop or level break is judged against a grade's own history
    // (its previous 30 changes), not the horizon's: a first-hour run found the
    // line counting a break that `rentix health` over the whole file does not (a
    // history cut at 60 days gave a sparse grade a lower bar) and missing two it
    // does. The rows that history needs, of every fixing the run computed.
    let recent: Vec<Fixing> = match (since, last) {
        (Some(since), Some(last)) => rentix_index::health::fixings_judging(
            run.result.fixings.iter().filter(|f| f.date <= last),
            since,
        ),
        _ => Vec::new(),
    };
    // The feed-health line reads the store's last weeks on another thread while
    // the fixings are published (it was a serial fifth of a full run's time).
    let (published, health) = std::thread::scope(|scope| {
        let health = scope.spawn(|| -> anyhow::Result<String> {
            let (Some(last), Some(since)) = (last, since) else {
                return Ok(String::new());
            };
            health_line(cfg, &store, &recent, since..=last)
        });
        let published = publish_result(
            cfg,
            run.result,
            &run.differentials,
            vec![run.state],
            &run.read,
            Some(run.revision),
        );
        let health = health.join().unwrap_or_else(|_| {
            Err(anyhow::anyhow!(
                "the feed-health thread stopped unexpectedly"
            ))
        });
        (published, health)
    });
    let mut summary = published?;
    summary.push_str(&health?);
    Ok(summary)
}

/// Days of the store's reports a publication's feed-health line covers at most.
const HEALTH_DAYS: u64 = 60;

/// Days of reports read before the first day the feed-health line covers: a
/// contributor's history (14 days by default), the two days a jump is held, and
/// margin for its regular days.
const REPORT_HISTORY_DAYS: u64 = 30;

/// The publication's feed-health line: what `rentix health` finds on `days` (from
/// the window's first, at most [`HEALTH_DAYS`] back, to the publication's last),
/// reading the store's reports from [`REPORT_HISTORY_DAYS`] before them and
/// every fixing the run computed (`recent`).
fn health_line(
    cfg: &IndexConfig,
    store: &Store,
    recent: &[Fixing],
    days: std::ops::RangeInclusive<chrono::NaiveDate>,
) -> anyhow::Result<String> {
    use rentix_index::health::{feed_health, reports_between, HealthOptions};
    // A contributor's jump is judged against its previous two weeks, and its
    // silence against its regular days: the reports are read from a month before
    // the first day the line covers (a hostile round found 67 jumps where health
    // lists 75, the line's first fortnight read without its history).
    let reports = reports_between(
        store,
        Some(*days.start() - chrono::Days::new(REPORT_HISTORY_DAYS)),
        Some(*days.end()),
    )?;
    let h = feed_health(&reports, recent, &HealthOptions::default());
    let since = *days.start();
    // A publication of some grades (--grade) notes what concerns them: a
    // contributor's silence (no grade) and findings in the grades it publishes.
    let published = |grade: &str| {
        let patterns = &cfg.request.grade_filters;
        patterns.is_empty()
            || grade.is_empty()
            || grade.parse::<rentix_core::Grade>().is_ok_and(|g| {
                // A contributor's jump is found in its regional grade: it
                // concerns the grade the run publishes whatever the region.
                let national = g.clone().with_region(None);
                patterns
                    .iter()
                    .any(|p| p.matches(&g) || p.matches(&national))
            })
    };
    let new: Vec<_> = h
        .findings
        .iter()
        .filter(|f| days.contains(&f.date) && published(&f.grade))
        .collect();
    // The line is health as of the publication's last day: the command that
    // shows it whole says so when the store runs past that day.
    let store_last = store.fixing_dates()?.map(|(_, last)| last);
    let as_of = if store_last.is_some_and(|l| l > *days.end()) {
        format!(" --to {}", days.end())
    } else {
        String::new()
    };
    let hint = format!(
        "rentix health --store {} --fixings {}{as_of}",
        cfg.store.display(),
        cfg.out.display()
    );
    let Some(first) = new.first() else {
        return Ok(format!(
            "\nfeed health from {since}: nothing to note ({hint})"
        ));
    };
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &new {
        *kinds.entry(f.kind).or_default() += 1;
    }
    let by: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let who = if first.contributor.is_empty() {
        first.grade.clone()
    } else {
        first.contributor.clone()
    };
    Ok(format!(
        "\nfeed health from {since}: {} finding(s) ({}; first {} {} {who}); {hint}",
        new.len(),
        by.join(", "),
        first.date,
        first.kind
    ))
}

/// `index --input FILE...`: the files read, validated, normalized and deduplicated
/// exactly as `ingest` would into an empty store, then fixed and published as from
/// a store (the same fixings, tested). Files of up to `--in-memory-mib` in all are
/// read in memory; larger ones through a temporary store beside the output, whose
/// memory is bounded as `ingest` + `index` are, removed after. Refused rows are
/// written to `<stem>_quarantine.csv` beside the output. No state is left for an
/// incremental run (there is no store to continue from).
pub(super) fn one_shot(cfg: &IndexConfig) -> anyhow::Result<String> {
    // A file a store publishes is continued from its state: a one-shot into it
    // removed the state and wrote a file that was neither publication.
    let state = rentix_index::incremental::state_path(&cfg.out);
    if cfg.out.exists() && state.exists() {
        return Err(rentix_index::IndexError::Data(format!(
            "{} was published from a store ({} records it): a one-shot publication from --input files would mix the two in one file and remove the state the store's next publication continues from; nothing was published. Publish it from its store (index --store), or the --input files into a name of their own",
            cfg.out.display(),
            state.display()
        ))
        .into());
    }
    let opts = rentix_ingest::IngestOptions {
        mapping: cfg.mapping.clone(),
        ratings: rentix_core::RatingTable::from_files(&cfg.ratings)?,
        ..Default::default()
    };
    // A file that cannot be read is left for the reader to refuse with its reason.
    let size: u64 = cfg
        .inputs
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let read = if size > cfg.in_memory_bytes {
        through_store(cfg, &opts, size)?
    } else {
        in_memory(cfg, &opts)?
    };
    if !read
        .result
        .fixings
        .iter()
        .any(|f| window_of(cfg, None).contains(f))
    {
        bail!(
            "no observation in the --input files matches the methodology's grades and the requested range ({} rows read, {} accepted){}",
            read.summary.rows_read,
            read.summary.accepted,
            rentix_index::uppercase_hint(&cfg.request.grade_filters)
        );
    }
    let quarantine = rentix_index::Companions::of(&cfg.out).quarantine();
    let s = &read.summary;
    let mut line = format!(
        "read: {} file(s) {}: {} rows read, {} accepted, {} duplicates, {} quarantined",
        s.files.len(),
        read.route,
        s.rows_read,
        s.accepted,
        s.duplicates,
        s.quarantined
    );
    // The quarantine is published with the fixings, in the same transaction.
    let mut raw = Vec::new();
    if let Some(bytes) = read.quarantine {
        raw.push((quarantine.clone(), bytes));
        line.push_str(&format!(" ({})", quarantine.display()));
    }
    for l in super::ingest::unread_columns(s) {
        line.push_str(&format!("\n  {l}"));
    }
    // A state left beside no file (the file removed by hand) describes nothing:
    // removed first, so that no kill leaves it beside the new file.
    if state.exists() {
        std::fs::remove_file(&state).with_context(|| format!("removing {}", state.display()))?;
    }
    let differentials = read.result.tier_differentials.clone();
    let out = publish_result(cfg, read.result, &differentials, raw, &line, None)?;
    rentix_core::phases::mark("one-shot: published");
    if read.summary.quarantined == 0 && quarantine.exists() {
        std::fs::remove_file(&quarantine)
            .with_context(|| format!("removing the stale {}", quarantine.display()))?;
    }
    Ok(out)
}

/// What a one-shot run read and fixed, before it publishes.
struct OneShot {
    result: IndexResult,
    summary: rentix_store::IngestSummary,
    /// The quarantine file's bytes, when rows were refused.
    quarantine: Option<Vec<u8>>,
    /// How the files were read, for the console.
    route: String,
}

/// The one-shot's request: the whole history (there is nothing published to
/// continue from), through the requested last day when the files end before it
/// (not beyond today).
fn whole_request(cfg: &IndexConfig, last: Option<chrono::NaiveDate>) -> IndexRequest {
    IndexRequest {
        from: None,
        to: cfg
            .request
            .to
            .filter(|t| last.is_none_or(|l| *t > l))
            .map(|t| t.min(chrono::Utc::now().date_naive())),
        ..cfg.request.clone()
    }
}

/// The files read, deduplicated and fixed in memory.
fn in_memory(cfg: &IndexConfig, opts: &rentix_ingest::IngestOptions) -> anyhow::Result<OneShot> {
    let staged = rentix_ingest::read_in_stages(&cfg.inputs, opts, &mut |_| {})?;
    rentix_core::phases::mark("one-shot: read, validated, normalized");
    let req = whole_request(cfg, staged.last_fixing_date());
    // Each date's rows go to the engine as they are deduplicated, and are freed
    // once it has taken them: the rows are never all held twice (issue 48).
    let mut fixer = rentix_index::Fixer::new(&req)?;
    // A date's engine rows are worked out on the pool; the fixer takes them in
    // date order, and the date's rows are freed.
    let preparer = fixer.preparer();
    let (summary, mut refused) = staged.each_date(
        |rows| preparer.prepare(rows.iter()),
        |rows, prepared| -> anyhow::Result<()> {
            fixer.add_prepared(prepared)?;
            // Freed on the pool: the hand-over is the dedupe's serial part.
            rayon::spawn(move || drop(rows));
            Ok(())
        },
    )?;
    rentix_core::phases::mark("one-shot: deduplicated, handed to the engine");
    let result = fixer.finish()?;
    rentix_core::phases::mark("one-shot: fixed");
    let quarantine = if summary.quarantined > 0 {
        Some(refused.to_bytes()?)
    } else {
        None
    };
    Ok(OneShot {
        result,
        summary,
        quarantine,
        route: "in memory, no store".into(),
    })
}

/// The files ingested into a temporary store in the output's directory (the
/// filesystem the user chose to write to, not a possibly small system temporary
/// one), fixed from it a slice at a time, and the store removed.
fn through_store(
    cfg: &IndexConfig,
    opts: &rentix_ingest::IngestOptions,
    size: u64,
) -> anyhow::Result<OneShot> {
    let parent = match cfg.out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let tmp = tempfile::Builder::new()
        .prefix(".rentix-one-shot-")
        .tempdir_in(parent)
        .with_context(|| format!("a temporary store in {}", parent.display()))?;
    // An interrupt removes it (the signal's exit runs no destructor), and its
    // run's commit is nobody else's: an interrupt after it says nothing was
    // committed.
    let _scratch = rentix_store::scratch(tmp.path());
    let dir = tmp.path().join("store");
    let summary = rentix_ingest::ingest(&dir, &cfg.inputs, opts, &mut |_| {})?;
    rentix_store::forget_committed();
    rentix_table::fail_point("one-shot:stored").map_err(|e| rentix_store::StoreError::Write {
        path: dir.clone(),
        source: e,
    })?;
    let store = Store::open(&dir)?;
    let last = summary
        .last_fixing_date
        .as_ref()
        .and_then(|d| d.parse::<chrono::NaiveDate>().ok());
    let result = rentix_index::compute_from_store(&store, &whole_request(cfg, last))?;
    let quarantine = if summary.quarantined > 0 {
        let path = dir.join(&summary.quarantine_file);
        Some(std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?)
    } else {
        None
    };
    Ok(OneShot {
        result,
        summary,
        quarantine,
        route: format!(
            "through a temporary store ({} MiB of input, more than --in-memory-mib {})",
            size.div_ceil(1 << 20),
            cfg.in_memory_bytes >> 20
        ),
    })
}

/// The requested window of a run.
fn window_of(cfg: &IndexConfig, revision: Option<rentix_index::Revision>) -> Window {
    Window {
        from: cfg.request.from,
        to: cfg.request.to,
        grades: cfg.request.grade_filters.clone(),
        revision,
        valued_only: cfg.valued_only,
    }
}

/// Publishes a run's fixings in its window with the files beside them (the forward
/// curves, the tier differentials over the whole history, the tier spreads, and
/// `raw` files such as the state) as one transaction; returns the printable summary.
fn publish_result(
    cfg: &IndexConfig,
    mut result: IndexResult,
    differentials: &[TierDifferential],
    raw: Vec<(PathBuf, Vec<u8>)>,
    read: &str,
    revision: Option<rentix_index::Revision>,
) -> anyhow::Result<String> {
    let m = &cfg.request.methodology;
    let window = window_of(cfg, revision);
    if cfg.valued_only {
        result.fixings.retain(|f| f.value.is_some());
    }
    let tier_floors = !m.grades.tier_floors.is_empty();
    let differentials = (!differentials.is_empty() && cfg.request.grade_filters.is_empty())
        .then(|| tier_differentials_table(differentials));
    let differentials_path = rentix_index::Companions::of(&cfg.out).tier_differentials();
    // The files beside the fixings are published in the same transaction: those
    // derived date by date from the fixings, and the differentials, always over the
    // whole history (not from a subset of grades, --grade).
    let per_date = |rows: &[Fixing]| {
        let mut v = Vec::new();
        if m.forward_curve {
            v.push((forward_path(&cfg.out), forward_table(&forward_curves(rows))));
        }
        if tier_floors {
            v.push((
                rentix_index::Companions::of(&cfg.out).tier_spreads(),
                tier_spreads_table(&tier_spreads(rows)),
            ));
        }
        v
    };
    let tables = differentials
        .map(|t| vec![(differentials_path, t)])
        .unwrap_or_default();
    let publication = publish(
        &cfg.out,
        result.fixings,
        window.clone(),
        per_date,
        tables,
        raw,
    )
    .with_context(|| format!("publication of {}", cfg.out.display()))?;
    if let Some(stale) = &publication.replaced_stale_lock {
        let _ = writeln!(std::io::stderr(), "rentix: {stale}");
    }
    if !publication.recovered.is_empty() {
        let _ = writeln!(
            std::io::stderr(),
            "rentix: finished an interrupted publication of {} ({} file(s) put in place)",
            cfg.out.display(),
            publication.recovered.len()
        );
    }
    let mut said = summary(cfg, &publication, &window, result.below_clip, read);
    said.push_str(&remove_stale_companions(cfg, tier_floors)?);
    // The published rows (a one-shot's 67,000 took 18 ms to free) are freed on the
    // pool, not on the way out.
    rayon::spawn(move || drop(publication));
    Ok(said)
}

/// Removes, once a publication is in place, the companions its methodology
/// never writes (a forward curve, tier spreads, tier differentials of hedonic
/// composites it has none of): after every date is
/// republished under another methodology, the previous one's stayed beside the
/// file, `verify` no longer checked them and `report` drew the stale forward
/// curve as the new index's (a hostile round). A publication killed before this
/// leaves them for the next one. Returns the lines saying what was removed.
fn remove_stale_companions(cfg: &IndexConfig, tier_floors: bool) -> anyhow::Result<String> {
    let m = &cfg.request.methodology;
    let companions = rentix_index::Companions::of(&cfg.out);
    let mut said = String::new();
    let hedonic = m
        .composite
        .iter()
        .any(|c| c.method == rentix_index::CompositeMethod::Hedonic);
    for (path, what, written) in [
        (forward_path(&cfg.out), "forward curve", m.forward_curve),
        (companions.tier_spreads(), "tier spreads", tier_floors),
        (
            companions.tier_differentials(),
            "tier differentials (it has no hedonic composite)",
            hedonic,
        ),
    ] {
        if written || !std::fs::symlink_metadata(&path).is_ok_and(|f| f.is_file()) {
            continue;
        }
        std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        said.push_str(&format!(
            "\nremoved: {} (methodology {} publishes no {what}: it was an earlier methodology's, and no longer described this file)",
            path.display(),
            m.version
        ));
    }
    Ok(said)
}

/// The `[revision]` policy in a few words.
fn revision_text(r: &rentix_index::RevisionSpec) -> String {
    let mut parts = vec![match r.policy {
        rentix_index::RevisionPolicy::Never => "never revised".to_string(),
        rentix_index::RevisionPolicy::Restate => "restate".to_string(),
    }];
    if let Some(n) = r.window_days {
        parts.push(format!("window {n} days"));
    }
    if let Some(t) = r.threshold {
        parts.push(format!("threshold {t}"));
    }
    parts.join(", ")
}

/// The days a summary names: of the rows published, or, for a window with no row
/// (a --valued-only grade with no value on its days), those asked for, not an
/// empty range.
fn days_of(published: &[&Fixing], window: &Window) -> String {
    match (published.first(), published.last()) {
        (Some(a), Some(b)) => format!("{} to {}", a.date, b.date),
        _ => format!(
            "none in {} to {}",
            window
                .from
                .map_or("the first day".into(), |d| d.to_string()),
            window.to.map_or("the last day".into(), |d| d.to_string())
        ),
    }
}

/// The line on what a publication from D re-fixed before D (`""` when nothing):
/// rows published for the first time, and rows restated, counted by the
/// restatement log's reasons.
fn refixed_line(
    cfg: &IndexConfig,
    publication: &rentix_index::Publication,
    window: &Window,
) -> String {
    let Some(d) = publication.refixed_from else {
        return String::new();
    };
    // By the log's reasons (late_data: the row's own inputs changed;
    // value_change: its value follows from rows that did, a composite or a
    // carried value; withdrawn: no longer fixed).
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &publication.restatements {
        if window.from.is_some_and(|f| r.date < f) {
            *reasons.entry(r.reason.as_str()).or_default() += 1;
        }
    }
    format!(
        "re-fixed from {d}: {} earlier rows published for the first time (a skipped day, a grade's life the new data extends) and {} restated ({}each with its reason in {}); a run over the whole store gives the same rows\n",
        publication.earlier_new,
        reasons.values().sum::<usize>(),
        reasons
            .iter()
            .map(|(r, n)| format!("{n} {r}, "))
            .collect::<String>(),
        rentix_index::Companions::of(&cfg.out).restatements().display()
    )
}

/// What a publication prints: the rows published by level and sufficiency, what was
/// left out, restated and kept, how the store was read, and the file written.
fn summary(
    cfg: &IndexConfig,
    publication: &rentix_index::Publication,
    window: &Window,
    below_clip: usize,
    read: &str,
) -> String {
    let m = &cfg.request.methodology;
    let published: Vec<&Fixing> = publication
        .rows
        .iter()
        .filter(|f| window.contains(f))
        .collect();
    // Levels 1 to 4, then none: counted by number, named once each.
    let mut counts: BTreeMap<u8, usize> = BTreeMap::new();
    for f in &published {
        *counts
            .entry(f.level.map_or(u8::MAX, |l| l.number()))
            .or_default() += 1;
    }
    let by_level: Vec<(String, usize)> = counts
        .into_iter()
        .map(|(k, n)| {
            let name = if k == u8::MAX {
                "none".to_string()
            } else {
                k.to_string()
            };
            (name, n)
        })
        .collect();
    // Counted, never listed: hashed (a tree compared long grade names 15 ms).
    let grades: std::collections::HashSet<&str> =
        published.iter().map(|f| f.grade.as_str()).collect();
    let sufficient = published.iter().filter(|f| f.sufficient).count();
    let days = days_of(&published, window);
    let mut s = format!(
        "{} fixings for {} grades/composites, {days}, methodology {} ({} published for the first time)\n",
        published.len(),
        grades.len(),
        m.version,
        publication.new_rows
    );
    s.push_str(&format!(
        "by level (1 trades, 2 firm, 3 listings, 4 carried): {}\n",
        by_level
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    s.push_str(&format!(
        "sufficient: {sufficient} of {}\n",
        published.len()
    ));
    if below_clip > 0 {
        s.push_str(&format!(
            "left out: {} stored trades below inputs.min_trade_gpu_hours = {}\n",
            below_clip, m.inputs.min_trade_gpu_hours
        ));
    }
    if !publication.restatements.is_empty() {
        s.push_str(&format!(
            "restated {} fixings; previous file kept as {}\n",
            publication.restatements.len(),
            publication
                .archived
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        ));
    }
    s.push_str(&refixed_line(cfg, publication, window));
    if publication.unrevised > 0 {
        s.push_str(&format!(
            "not restated: {} earlier rows that a run over the store fixes otherwise, the first on {}, are kept as first published under the methodology's [revision] policy ({})\n",
            publication.unrevised,
            publication.unrevised_first.map(|d| d.to_string()).unwrap_or_default(),
            revision_text(&m.revision)
        ));
    }
    s.push_str(read);
    s.push('\n');
    if publication.kept_rows > 0 {
        let (before, rest) = publication
            .kept_before
            .map_or((String::new(), String::new()), |d| {
                (
                    format!(" before {d}"),
                    format!("; the rows from {d} on were read and compared"),
                )
            });
        s.push_str(&format!(
            "kept: {} rows{before} as published, copied unread (the file matches its digest){rest}\n",
            publication.kept_rows
        ));
    }
    for c in &publication.companions_rewritten {
        s.push_str(&format!(
            "rewritten: {} did not match the digest {} records for it (changed since it was published): written whole again from the fixings, as a run over the whole file writes it\n",
            c.display(),
            rentix_index::digest_path(&cfg.out)
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
        ));
    }
    s.push_str(&format!("wrote {}", cfg.out.display()));
    s
}

pub(super) fn run(mut a: IndexArgs) -> anyhow::Result<()> {
    a.out = crate::commands::through_link("--out", &a.out);
    // The methodology is read and parsed once, as the kind its cadence says.
    let loaded = a
        .methodology
        .as_ref()
        .map(|p| {
            AnyMethodology::from_file(p).with_context(|| format!("--methodology {}", p.display()))
        })
        .transpose()?;
    let daily = match loaded {
        Some(AnyMethodology::Intraday(m)) => {
            let bar = crate::progress::working("reading the store and fixing every stamp");
            let summary = intraday(&a, &m);
            bar.finish_and_clear();
            outln!("{}", summary?);
            return Ok(());
        }
        Some(AnyMethodology::Daily(m)) => *m,
        None => Methodology::default_methodology(),
    };
    if a.ballots.is_some() {
        crate::commands::usage!("--ballots fixes an intraday methodology's stamps again from their receipts: give --methodology an intraday one (a [calendar] cadence shorter than a day)");
    }
    let cfg = IndexConfig::from_args(&a, daily)?;
    let bar = crate::progress::working("reading the store and fixing every grade");
    let summary = if cfg.inputs.is_empty() {
        execute(&cfg)
    } else {
        one_shot(&cfg)
    };
    bar.finish_and_clear();
    outln!("{}", summary?);
    Ok(())
}

/// `rentix index` with an intraday methodology: every stamp of every day from the
/// store's first observation (or `--from`) to its last (or `--to`).
fn intraday(a: &IndexArgs, m: &IntradayMethodology) -> anyhow::Result<String> {
    if let Some(ballots) = &a.ballots {
        return from_ballots(a, m, ballots);
    }
    if !a.input.is_empty() || !a.grades.is_empty() || a.valued_only {
        crate::commands::usage!("an intraday methodology is fixed from a store (--store) over its own grades: --input, --grade and --valued-only are for daily methodologies");
    }
    let store = a.store.clone().unwrap_or_default();
    Ok(rentix_publish::intraday::publish(&store, m, a.from, a.to, &a.out)?.line)
}

/// `rentix index --ballots`: every stamp of a receipts file fixed again by the
/// methodology's sigma votes and aggregation, written to a new `--out`.
fn from_ballots(a: &IndexArgs, m: &IntradayMethodology, ballots: &Path) -> anyhow::Result<String> {
    if a.from.is_some() || a.to.is_some() || !a.grades.is_empty() || a.valued_only {
        crate::commands::usage!("--ballots fixes every stamp of its file: --from, --to, --grade and --valued-only do not apply");
    }
    if a.out.exists() {
        crate::commands::usage!(
            "--out {} exists: a recomputation from ballots writes a new file (compare it with the publication)",
            a.out.display()
        );
    }
    let rows = rentix_index::intraday_publish::read_receipts(ballots)?;
    let fixings = rentix_index::intraday::fix_ballots(m, &rows).map_err(|e| {
        rentix_index::IndexError::Input {
            path: ballots.to_path_buf(),
            detail: e.0,
        }
    })?;
    let r = rentix_index::intraday::IntradayResult {
        fixings,
        ..Default::default()
    };
    rentix_index::intraday::intraday_table(&r, m).write(&a.out)?;
    let valued = r.fixings.iter().filter(|f| f.value.is_some()).count();
    Ok(format!(
        "{} stamps fixed again from {} ballot rows of {} ({} with a value); wrote {}",
        r.fixings.len(),
        rows.len(),
        ballots.display(),
        valued,
        a.out.display()
    ))
}
