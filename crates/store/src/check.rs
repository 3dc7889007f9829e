//! `rentix store check`: reads back everything a store holds and names every run
//! record, partition or file it cannot read or that disagrees with its run record
//! (its size, rows and SHA-256; `--quick`: sizes and rows from the footers only),
//! so a store can always be repaired or trusted.

use crate::error::StoreError;
use crate::partition::{partition_span, PartFile, Span};
use crate::schema::Projection;
use crate::store::Store;
use crate::summary::IngestSummary;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What the check found.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StoreReport {
    /// Run records read (compactions included).
    pub runs: usize,
    /// Partition files the records name and the store still reads (those a
    /// compaction replaced are not counted).
    pub partitions: usize,
    /// Rows those partitions hold.
    pub rows: u64,
    /// Months held in more than one file (one per run that touched them):
    /// `rentix store compact` merges them.
    pub months_in_several_files: usize,
    /// Files of one fixing date (the layout before month partitions):
    /// `rentix store migrate` rewrites them by month.
    pub date_partitions: usize,
    /// Files under `observations/` or `quarantine/` that no run names, then the
    /// staging directories (`staging/RUN/`) of runs that did not finish (a killed
    /// run's leftovers; the next ingest sweeps them).
    pub uncommitted_files: Vec<String>,
    /// The lock file's content, when a lock is present.
    pub lock: Option<String>,
    /// Partitions whose SHA-256 was recomputed and matched its record (none with
    /// `--quick`).
    pub checksums_verified: usize,
    /// What was not checked and why (partitions whose record holds no checksum).
    pub notes: Vec<String>,
    /// Everything that cannot be read or does not add up; empty for a sound store.
    pub problems: Vec<String>,
}

impl StoreReport {
    /// Whether the check found no problem (notes do not count).
    pub fn is_sound(&self) -> bool {
        self.problems.is_empty()
    }
}

fn rel(root: &Path, p: &Path) -> String {
    p.strip_prefix(root)
        .map(|r| r.to_string_lossy().replace('\\', "/"))
        .unwrap_or_else(|_| p.to_string_lossy().to_string())
}

/// Checks the store at `store.root()`: every record and partition is read back,
/// each partition's size, rows and SHA-256 compared with what its run recorded (a
/// flipped bit that keeps the size and the rows is found), its rows against its
/// span and order.
pub fn check_store(store: &Store) -> StoreReport {
    check(store, false)
}

/// [`check_store`], under the name it had when the default check compared sizes
/// and rows only (`store check --deep` is kept as an alias).
pub fn check_store_deep(store: &Store) -> StoreReport {
    check(store, false)
}

/// The quick check: each partition's size against its run record and its rows as
/// its footer counts them; no byte is hashed nor row decoded, so a changed byte
/// that keeps the size is not found (`store check --quick`).
pub fn check_store_quick(store: &Store) -> StoreReport {
    check(store, true)
}

fn check(store: &Store, quick: bool) -> StoreReport {
    let root = store.root();
    let mut r = StoreReport::default();
    let lock = root.join(".lock");
    if lock.exists() {
        r.lock =
            Some(std::fs::read_to_string(&lock).unwrap_or_else(|e| format!("unreadable: {e}")));
    }
    let runs = read_records(root, &mut r);
    // Files a compaction merged into its own are no part of the store any more:
    // they are not read, and one still on disk is a leftover.
    let replaced = crate::store::replaced_files(runs.iter().map(|(_, run)| run));
    let written: BTreeSet<&String> = runs.iter().flat_map(|(_, run)| &run.partitions).collect();
    let mut c = Checker {
        store,
        quick,
        replaced: &replaced,
        report: r,
        named: BTreeSet::new(),
        files_by_month: BTreeMap::new(),
        without_checksum: 0,
    };
    for (path, run) in &runs {
        c.check_run(path, run, &written);
    }
    let Checker {
        mut report,
        named,
        files_by_month,
        without_checksum,
        ..
    } = c;
    let r = &mut report;
    if without_checksum > 0 {
        r.notes.push(format!(
            "{without_checksum} partition(s): no checksum recorded (committed before run records held them); sizes, rows and SHA-256 not compared"
        ));
    }
    r.months_in_several_files = files_by_month.values().filter(|n| **n > 1).count();
    // Whatever was compacted, the store holds every row its runs accepted.
    let accepted: u64 = runs.iter().map(|(_, run)| run.accepted).sum();
    if r.rows != accepted {
        r.problems.push(format!(
            "the partitions hold {} rows, the runs accepted {accepted}",
            r.rows
        ));
    }
    // What the next ingest sweeps: a killed run's files and those a compaction
    // replaced; any other file no run names stops it (`Store::sweep`).
    let killed = crate::store::killed_runs(root);
    let (leftover, orphans): (Vec<String>, Vec<String>) =
        leftovers(root, &named).into_iter().partition(|f| {
            replaced.contains(f) || crate::store::left_by_killed_run(Path::new(f), &killed)
        });
    r.uncommitted_files = leftover;
    // A run that did not finish leaves its own directory (its spills, and the
    // partitions it had not moved into place): the next ingest sweeps it too.
    r.uncommitted_files
        .extend(killed.iter().map(|k| format!("staging/{k}/")));
    if !orphans.is_empty() {
        r.problems
            .push(crate::store::orphans_detail(&orphans).replace(
                "Nothing was removed; `rentix store check` lists them",
                "ingest and store compact refuse to run until then",
            ));
    }
    report
}

/// The store's run records that read and make sense, in file order; a record that
/// does not is a problem of `r`.
fn read_records(root: &Path, r: &mut StoreReport) -> Vec<(PathBuf, IngestSummary)> {
    let mut records: Vec<PathBuf> = std::fs::read_dir(root.join("runs"))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    records.retain(|p| p.extension().is_some_and(|e| e == "json"));
    records.sort();
    let mut runs = Vec::new();
    for path in records {
        if let Some(p) = crate::store::name_problem(&path) {
            r.problems.push(format!("{}: {p}", rel(root, &path)));
            continue;
        }
        let text = match crate::read_limited(&path) {
            Ok(t) => t,
            Err(e) => {
                r.problems.push(format!(
                    "{}: cannot read the run record: {e}",
                    rel(root, &path)
                ));
                continue;
            }
        };
        match serde_json::from_str::<IngestSummary>(&text) {
            Ok(run) => match crate::store::record_problem(&path, &run) {
                Some(p) => r.problems.push(format!("{}: {p}", rel(root, &path))),
                None => runs.push((path, run)),
            },
            Err(e) => r
                .problems
                .push(format!("{}: not a run record: {e}", rel(root, &path))),
        }
    }
    runs
}

/// The check's state as it goes through the runs.
struct Checker<'a> {
    store: &'a Store,
    /// Sizes and footers only (`--quick`).
    quick: bool,
    /// Partitions a compaction replaced.
    replaced: &'a BTreeSet<String>,
    report: StoreReport,
    /// Files some run names (partitions and quarantine files).
    named: BTreeSet<String>,
    files_by_month: BTreeMap<chrono::NaiveDate, usize>,
    without_checksum: usize,
}

impl Checker<'_> {
    /// One run record: its counts, what it replaces, each of its live partitions.
    fn check_run(&mut self, path: &Path, run: &IngestSummary, written: &BTreeSet<&String>) {
        let root = self.store.root();
        self.report.runs += 1;
        if let Err(e) = run.check() {
            self.report
                .problems
                .push(format!("{}: {e}", rel(root, path)));
        }
        for gone in &run.replaces {
            if !written.contains(gone) {
                self.report.problems.push(format!(
                    "compaction {} replaces {gone}, which no run wrote",
                    run.run_id
                ));
            }
        }
        self.named.insert(run.quarantine_file.clone());
        if run.quarantined > 0 && !root.join(&run.quarantine_file).exists() {
            self.report.problems.push(format!(
                "run {}: its quarantine file {} is gone ({} refused row(s) and their reasons lost); the next ingest of its files reads them whole again",
                run.run_id, run.quarantine_file, run.quarantined
            ));
        }
        for part in run
            .partitions
            .iter()
            .filter(|p| !self.replaced.contains(*p))
        {
            if let Some(span) = partition_span(part) {
                *self.files_by_month.entry(span.month()).or_insert(0) += 1;
                self.report.date_partitions += usize::from(matches!(span, Span::Date(_)));
            }
        }
        let mut run_rows = 0u64;
        let mut all_live = true;
        for part in &run.partitions {
            if self.replaced.contains(part) {
                all_live = false;
                continue;
            }
            self.named.insert(part.clone());
            self.report.partitions += 1;
            run_rows += self.check_partition(path, run, part);
        }
        // A run's own files hold what it accepted (or, for a compaction, the rows it
        // moved) while none of them has been compacted away since.
        let expected = run.accepted + run.compacted_rows;
        if all_live && run_rows != expected {
            self.report.problems.push(format!(
                "run {}: its partitions hold {run_rows} rows, its record says {expected} {}",
                run.run_id,
                if run.replaces.is_empty() {
                    "accepted"
                } else {
                    "compacted"
                }
            ));
        }
        self.report.rows += run_rows;
    }

    /// One live partition of `run` against its record (size, then SHA-256 and rows
    /// as it is read, unless quick), its rows against its span and order; the rows
    /// it holds (those recorded for a file that is not the committed one).
    fn check_partition(&mut self, path: &Path, run: &IngestSummary, part: &str) -> u64 {
        let root = self.store.root();
        let Some(span) = partition_span(part) else {
            self.report.problems.push(format!(
                "{part} (run {}): no month=YYYY-MM (or date=YYYY-MM-DD) of a year 2000 to 2100 in the path; remove the run record {} and its files, then ingest again",
                run.run_id,
                rel(root, path)
            ));
            return 0;
        };
        let recorded = run.partition_checksums.get(part);
        match recorded {
            Some(c) => {
                if let Some(p) = size_problem(root, part, &run.run_id, c) {
                    self.report.problems.push(p);
                    return c.rows;
                }
            }
            None => self.without_checksum += 1,
        }
        if self.quick {
            return self.footer_rows(run, part);
        }
        let file = PartFile {
            span,
            rel: part.to_string(),
            rows: recorded.map(|c| c.rows),
            run_id: run.run_id.clone(),
            committed: recorded.map(|c| (c.sha256.clone(), c.bytes)),
        };
        let problems = &mut self.report.problems;
        let rows = match self.store.read_file(&file, Projection::All) {
            Ok(rows) => rows,
            Err(StoreError::Integrity {
                recorded: want,
                actual,
                ..
            }) => {
                problems.push(format!(
                    "{part} (run {}): SHA-256 {actual}, its record says {want}: the file changed after its commit",
                    run.run_id
                ));
                return recorded.map_or(0, |c| c.rows);
            }
            Err(e) => {
                problems.push(format!("{part} (run {}): unreadable: {e}", run.run_id));
                return 0;
            }
        };
        if recorded.is_some() {
            self.report.checksums_verified += 1;
        }
        if let Some(c) = recorded.filter(|c| c.rows != rows.len() as u64) {
            problems.push(format!(
                "{part} (run {}): {} rows, its record says {}",
                run.run_id,
                rows.len(),
                c.rows
            ));
        }
        if let Some(bad) = rows.iter().find(|o| !span.contains(o.obs.fixing_date)) {
            problems.push(format!(
                "{part}: a row has fixing date {}, outside the partition's {}",
                bad.obs.fixing_date,
                span.segment()
            ));
        } else if rows
            .windows(2)
            .any(|w| w[0].obs.fixing_date > w[1].obs.fixing_date)
        {
            problems.push(format!(
                "{part}: rows are not in fixing-date order, as the store writes them"
            ));
        }
        rows.len() as u64
    }

    /// The rows of `part` as its Parquet footer counts them, compared with its run
    /// record's (the quick check decodes no row).
    fn footer_rows(&mut self, run: &IngestSummary, part: &str) -> u64 {
        let problems = &mut self.report.problems;
        match rentix_table::Table::parquet_rows(&self.store.root().join(part)) {
            Ok(n) => {
                let n = n as u64;
                if let Some(c) = run.partition_checksums.get(part).filter(|c| c.rows != n) {
                    problems.push(format!(
                        "{part} (run {}): {n} rows, its record says {}",
                        run.run_id, c.rows
                    ));
                }
                n
            }
            Err(e) => {
                problems.push(format!("{part} (run {}): unreadable: {e}", run.run_id));
                0
            }
        }
    }
}

/// Files under `observations/` or `quarantine/` that no run names, sorted.
fn leftovers(root: &Path, named: &BTreeSet<String>) -> Vec<String> {
    let mut out = Vec::new();
    for sub in ["observations", "quarantine"] {
        let mut stack = vec![root.join(sub)];
        while let Some(d) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in entries.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if !named.contains(&rel(root, &p)) {
                    out.push(rel(root, &p));
                }
            }
        }
    }
    out.sort();
    out
}

/// Why the partition `part` of run `run_id` is not the file its record describes:
/// another size. (Its SHA-256 is compared as it is read.)
fn size_problem(
    root: &Path,
    part: &str,
    run_id: &str,
    recorded: &crate::summary::PartitionChecksum,
) -> Option<String> {
    let bytes = match std::fs::metadata(root.join(part)) {
        Ok(m) => m.len(),
        // The read that follows names a missing or unreadable file.
        Err(_) => return None,
    };
    (bytes != recorded.bytes).then(|| {
        format!(
            "{part} (run {run_id}): {bytes} bytes, its record says {}: the file changed after its commit",
            recorded.bytes
        )
    })
}
