//! The observation store: Parquet partitioned by month of fixing date, a
//! quarantine, and one run record per ingest.
//!
//! Layout under the store directory:
//! - `observations/month=YYYY-MM/run-NNNNNN.parquet`: accepted observations, sorted
//!   by fixing date then grade (stores written before month partitions hold
//!   `observations/date=YYYY-MM-DD/...` files, read as they are: see
//!   [`crate::partition`]);
//! - `quarantine/run-NNNNNN.csv`: refused rows with every original field;
//! - `runs/run-NNNNNN.json`: the ingest summary, which lists the partition files the
//!   run wrote. Writing it (atomically) is the run's commit: readers only read the
//!   partition files that a run record names, so a run killed before its record is
//!   written leaves the store exactly as it was (its stray files are swept by the
//!   next ingest);
//! - `staging/`: spill files of the run in progress;
//! - a compaction (`rentix store compact`) is a run too: its record names the one
//!   file per month it wrote and the files it replaced (`replaces`);
//! - `.lock`: held while an ingest runs, so that two runs never interleave.

use crate::error::{Result, StoreError};
use crate::fixing_part::{fixing_part, fixing_part_in, FixingPart, CODED_FIXING_COLUMNS};
use crate::partition::{partition_span, PartFile, Partitions, Span};
use crate::schema::{from_table, Projection, StoredObservation};
use crate::summary::IngestSummary;
use chrono::NaiveDate;
use rentix_table::Table;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// Times a read is started again because compactions kept committing under it.
const READ_TRIES: usize = 3;

/// What [`Store::for_each_fixing_part`] hands over.
#[derive(Debug)]
pub enum Delivery<T> {
    /// The next partition.
    Part(T),
    /// Forget every partition handed so far: the store is read again from the start.
    Again,
}

/// What a new ingest of a file read before reads again ([`Store::retry_rows`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Retry {
    /// The rows of these numbers: those the latest run which read it quarantined
    /// (none: nothing is read).
    Rows(BTreeSet<u64>),
    /// Every row: the quarantine file that said which rows were refused is gone.
    Whole,
}

/// A store directory.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
}

pub(crate) use crate::lock::StoreLock;

impl Store {
    /// Opens (creating if needed) a store directory.
    pub fn create(root: &Path) -> Result<Self> {
        fs::create_dir_all(root.join("runs")).map_err(|source| StoreError::Write {
            path: root.to_path_buf(),
            source,
        })?;
        Ok(Self {
            root: root.to_path_buf(),
        })
    }

    /// Opens an existing store; refuses a directory that holds no run record.
    pub fn open(root: &Path) -> Result<Self> {
        if !root.join("runs").is_dir() {
            return Err(StoreError::Store {
                path: root.to_path_buf(),
                detail: "not a rentix store (no runs/ directory); run `rentix ingest` first".into(),
            });
        }
        Ok(Self {
            root: root.to_path_buf(),
        })
    }

    /// The store's directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Takes the store's write lock (see [`StoreLock`]).
    pub fn lock(&self) -> Result<StoreLock> {
        StoreLock::acquire(&self.root.join(".lock"), "ingest")
    }

    /// Committed run records, oldest first. Every `.json` file in `runs/` must be
    /// a record named as the store names them (`run-NNNNNN.json`, `run_number`)
    /// whose `run_id` is its name: a copy (`run-000001 (copy).json`) or a record
    /// renamed by hand would make readers count its partitions twice, so the store
    /// is refused naming the file (see `record_problem`).
    pub fn runs(&self) -> Result<Vec<IngestSummary>> {
        let mut names = self.record_paths()?;
        names.sort();
        let mut out: Vec<IngestSummary> = Vec::with_capacity(names.len());
        for p in &names {
            if let Some(detail) = name_problem(p) {
                return Err(StoreError::Store {
                    path: p.clone(),
                    detail,
                });
            }
            let text = fs::read_to_string(p).map_err(|source| StoreError::Read {
                path: p.clone(),
                source,
            })?;
            let run: IngestSummary =
                serde_json::from_str(&text).map_err(|e| StoreError::Store {
                    path: p.clone(),
                    detail: format!("unreadable run record: {e}"),
                })?;
            if let Some(detail) = record_problem(p, &run) {
                return Err(StoreError::Store {
                    path: p.clone(),
                    detail,
                });
            }
            out.push(run);
        }
        Ok(out)
    }

    /// The `.json` files in `runs/` (unsorted).
    pub(crate) fn record_paths(&self) -> Result<Vec<PathBuf>> {
        let dir = self.root.join("runs");
        Ok(fs::read_dir(&dir)
            .map_err(|source| StoreError::Read {
                path: dir.clone(),
                source,
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect())
    }

    /// The id the next run gets: one past the highest id that any run record,
    /// partition file, quarantine file or staging directory of the store uses, so
    /// that no id is given twice, even after a record was removed by hand or a run
    /// was killed (call it before sweeping that run's leftovers).
    pub fn next_run_id(&self) -> Result<String> {
        let mut highest = self
            .runs()?
            .iter()
            .filter_map(|r| run_number(&r.run_id))
            .max()
            .unwrap_or(0);
        for sub in ["observations", "quarantine"] {
            let dir = self.root.join(sub);
            if dir.exists() {
                for path in walk(&dir)? {
                    if let Some(n) = path
                        .file_stem()
                        .and_then(|s| s.to_str())
                        .and_then(run_number)
                    {
                        highest = highest.max(n);
                    }
                }
            }
        }
        if let Ok(entries) = fs::read_dir(self.root.join("staging")) {
            for e in entries.flatten() {
                if let Some(n) = e.file_name().to_str().and_then(run_number) {
                    highest = highest.max(n);
                }
            }
        }
        Ok(run_name(highest + 1))
    }

    /// The committed partition files (see [`Partitions`]): every file a run record
    /// names, less those a compaction replaced.
    pub fn partitions(&self) -> Result<Partitions> {
        let runs = self.runs()?;
        let replaced = replaced_files(&runs);
        let mut out = Vec::new();
        for run in runs {
            for part in run.partitions {
                if replaced.contains(&part) {
                    continue;
                }
                let span = partition_span(&part).ok_or_else(|| StoreError::Store {
                    path: self.root.join(&part),
                    detail: format!(
                        "partition of run {} has no plausible month=YYYY-MM or date=YYYY-MM-DD; `rentix store check --store {}` lists what to repair",
                        run.run_id,
                        self.root.display()
                    ),
                })?;
                let sum = run.partition_checksums.get(&part);
                out.push(PartFile {
                    span,
                    rel: part,
                    rows: sum.map(|s| s.rows),
                    run_id: run.run_id.clone(),
                    committed: sum.map(|s| (s.sha256.clone(), s.bytes)),
                });
            }
        }
        Ok(Partitions::new(out).with_replaced(replaced))
    }

    /// Refuses a read of `from..=to` when a month or day it covers holds a file that
    /// no run record names and no killed (or running) run left: a run record
    /// removed by hand, whose rows the read would leave out without a word.
    fn check_named(
        &self,
        parts: &Partitions,
        from: Option<NaiveDate>,
        to: Option<NaiveDate>,
    ) -> Result<()> {
        let Ok(dirs) = fs::read_dir(self.root.join("observations")) else {
            return Ok(());
        };
        let named: BTreeSet<&str> = parts.iter().map(|f| f.rel.as_str()).collect();
        let killed = killed_runs(&self.root);
        let mut orphans = Vec::new();
        for d in dirs.flatten() {
            let rel_dir = format!("observations/{}", d.file_name().to_string_lossy());
            if !partition_span(&rel_dir).is_some_and(|s| s.overlaps(from, to)) {
                continue;
            }
            for f in fs::read_dir(d.path()).into_iter().flatten().flatten() {
                let rel = format!("{rel_dir}/{}", f.file_name().to_string_lossy());
                if !(named.contains(rel.as_str())
                    || parts.was_replaced(&rel)
                    || left_by_killed_run(&f.path(), &killed))
                {
                    orphans.push(rel);
                }
            }
        }
        if orphans.is_empty() {
            return Ok(());
        }
        orphans.sort();
        Err(StoreError::Store {
            path: self.root.clone(),
            detail: format!(
                "the months this read covers hold {}; reading on would leave their rows out",
                orphans_detail(&orphans)
            ),
        })
    }

    /// The first and last fixing date the store holds rows of (`None` when it holds
    /// none), from the run records: a month's file says only its month.
    pub fn fixing_dates(&self) -> Result<Option<(NaiveDate, NaiveDate)>> {
        Ok(fixing_dates_of(&self.runs()?))
    }

    /// The cheap part of the checksums of the partitions a read covers: their
    /// sizes as committed. A file truncated, appended to or replaced since is
    /// refused, naming it, before any is read (each read then compares every byte's
    /// hash: [`crate::checked`]). Files the read does not cover are not looked at:
    /// a damaged month after a back-fill's reach stops nothing that does not read
    /// it. A file that is gone is left to the reader (a compaction may have
    /// replaced it meanwhile).
    fn check_sizes(&self, files: &[&PartFile]) -> Result<()> {
        for f in files {
            if let Some((_, bytes)) = &f.committed {
                self.check_size(&f.rel, *bytes, &f.run_id)?;
            }
        }
        Ok(())
    }

    fn check_size(&self, part: &str, committed: u64, run_id: &str) -> Result<()> {
        let path = self.root.join(part);
        match fs::metadata(&path) {
            Ok(meta) if meta.len() != committed => Err(StoreError::Store {
                path,
                detail: format!(
                    "is {} bytes, but {run_id} committed it at {committed}: the file was changed after its commit; `rentix store check --store {}` lists every damaged file",
                    meta.len(),
                    self.root.display()
                ),
            }),
            _ => Ok(()),
        }
    }

    /// Reads the committed observations with `from <= fixing_date <= to`.
    pub fn read(
        &self,
        from: Option<NaiveDate>,
        to: Option<NaiveDate>,
    ) -> Result<Vec<StoredObservation>> {
        self.read_projected(from, to, Projection::All)
    }

    /// Like [`Store::read`], reading only the columns `projection` names (see
    /// [`Projection::Fixing`] for what is left empty).
    pub fn read_projected(
        &self,
        from: Option<NaiveDate>,
        to: Option<NaiveDate>,
        projection: Projection,
    ) -> Result<Vec<StoredObservation>> {
        self.again_if_compacted(|| self.read_listed(from, to, projection))
    }

    /// Runs `read` again (from a fresh listing) when it failed because a compaction
    /// committed meanwhile and removed files it had listed; at most [`READ_TRIES`]
    /// times.
    fn again_if_compacted<T>(&self, mut read: impl FnMut() -> Result<T>) -> Result<T> {
        let mut tries = 0;
        loop {
            let before = self.generation()?;
            match read() {
                Err(_) if tries + 1 < READ_TRIES && self.generation()? != before => tries += 1,
                other => return other,
            }
        }
    }

    /// The run records' names: a new one means a run (an ingest, a compaction)
    /// committed since.
    fn generation(&self) -> Result<Vec<std::ffi::OsString>> {
        let dir = self.root.join("runs");
        let mut names: Vec<std::ffi::OsString> = fs::read_dir(&dir)
            .map_err(|source| StoreError::Read {
                path: dir.clone(),
                source,
            })?
            .filter_map(|e| e.ok().map(|e| e.file_name()))
            .collect();
        names.sort();
        Ok(names)
    }

    fn read_listed(
        &self,
        from: Option<NaiveDate>,
        to: Option<NaiveDate>,
        projection: Projection,
    ) -> Result<Vec<StoredObservation>> {
        let parts = self.partitions()?;
        self.check_named(&parts, from, to)?;
        let files: Vec<&PartFile> = parts.overlapping(from, to).collect();
        self.check_sizes(&files)?;
        // Sized from the files' footers first: growing a vector of a million rows by
        // doubling holds the old and the new buffer at once, which was most of
        // `index`'s peak memory.
        let mut rows = 0;
        for f in &files {
            rows += match f.rows {
                Some(n) => usize::try_from(n).unwrap_or(0),
                None => Table::parquet_rows(&self.root.join(&f.rel))?,
            };
        }
        let mut out = Vec::with_capacity(rows);
        for f in files {
            let part = self.read_file(f, projection)?;
            if f.span.within(from, to) {
                out.extend(part);
            } else {
                out.extend(part.into_iter().filter(|r| {
                    let d = r.obs.fixing_date;
                    !(from.is_some_and(|f| d < f) || to.is_some_and(|t| d > t))
                }));
            }
        }
        Ok(out)
    }

    /// Hands the committed partitions with `from <= fixing_date <= to` to `each` as
    /// the fixing engine reads them ([`FixingPart`]: nine columns, the repeated text
    /// as codes, checked), one file at a time in date order. The next few (two per
    /// thread) are read and decoded in parallel while `each` works on the current
    /// ones: memory holds those, not the store. If a compaction commits meanwhile
    /// and removes files not read yet, `each` is told to start again
    /// ([`Delivery::Again`]) and the store is read again from a fresh listing.
    pub fn for_each_fixing_part(
        &self,
        from: Option<NaiveDate>,
        to: Option<NaiveDate>,
        mut each: impl FnMut(Delivery<FixingPart>) + Send,
    ) -> Result<()> {
        let mut first = true;
        self.again_if_compacted(|| {
            if !std::mem::take(&mut first) {
                each(Delivery::Again);
            }
            self.for_each_fixing_part_once(from, to, |p| each(Delivery::Part(p)))
        })
    }

    fn for_each_fixing_part_once(
        &self,
        from: Option<NaiveDate>,
        to: Option<NaiveDate>,
        each: impl FnMut(FixingPart) + Send,
    ) -> Result<()> {
        self.for_each_read(
            from,
            to,
            |f| {
                let path = self.root.join(&f.rel);
                let bytes = crate::checked::read_checked(&path, f.committed())?;
                let t = Table::read_parquet_bytes(
                    &bytes,
                    &path,
                    Projection::Fixing.columns(),
                    &CODED_FIXING_COLUMNS,
                    None,
                )?;
                let rows = t.height();
                let part = if f.span.within(from, to) {
                    fixing_part(t, &path)
                } else {
                    fixing_part_in(t, &path, from, to)
                }?;
                as_recorded(f, &path, rows, part.fixing_date.iter().copied())?;
                Ok(part)
            },
            each,
        )
    }

    /// Reads the partitions that may hold dates of the range with `read`, a few
    /// ahead in parallel ([`read_in_order`]), and hands each result to `each` in
    /// date order.
    fn for_each_read<T: Send>(
        &self,
        from: Option<NaiveDate>,
        to: Option<NaiveDate>,
        read: impl Fn(&PartFile) -> Result<T> + Sync,
        mut each: impl FnMut(T) + Send,
    ) -> Result<()> {
        let parts = self.partitions()?;
        self.check_named(&parts, from, to)?;
        let files: Vec<&PartFile> = parts.overlapping(from, to).collect();
        self.check_sizes(&files)?;
        read_in_order(&files, 2 * rayon::current_num_threads().max(1), read, |r| {
            each(r?);
            Ok(())
        })
    }

    /// Every row of one committed partition file (`rel`, relative to the store),
    /// every column read; a file whose bytes are not those its run record committed
    /// ([`StoreError::Integrity`]), a file no run record names, and rows the store
    /// could not have written are refused.
    pub fn read_part(&self, rel: &str) -> Result<Vec<StoredObservation>> {
        self.read_file(&self.part_file(rel)?, Projection::All)
    }

    /// [`Store::read_part`] of the columns fixing reads ([`Projection::Fixing`]).
    pub fn read_part_for_fixing(&self, rel: &str) -> Result<Vec<StoredObservation>> {
        self.read_file(&self.part_file(rel)?, Projection::Fixing)
    }

    /// The committed partition file `rel` (relative to the store), as its run
    /// record names it.
    pub fn part_file(&self, rel: &str) -> Result<PartFile> {
        self.partitions()?
            .iter()
            .find(|f| f.rel == rel)
            .cloned()
            .ok_or_else(|| StoreError::Store {
                path: self.root.join(rel),
                detail: "no run record names this file: it is no committed partition".into(),
            })
    }

    /// The rows of the partition `f`, its bytes checked against its run record
    /// ([`crate::checked::read_checked`]) before they are decoded.
    pub(crate) fn read_file(
        &self,
        f: &PartFile,
        projection: Projection,
    ) -> Result<Vec<StoredObservation>> {
        let path = self.root.join(&f.rel);
        let bytes = crate::checked::read_checked(&path, f.committed())?;
        let t = Table::read_parquet_bytes(&bytes, &path, projection.columns(), &[], None)?;
        let rows = from_table(t, &path, projection)?;
        as_recorded(f, &path, rows.len(), rows.iter().map(|r| r.obs.fixing_date))?;
        Ok(rows)
    }

    /// Dedupe keys already committed for one fixing date.
    pub fn keys_on(
        &self,
        parts: &Partitions,
        date: NaiveDate,
    ) -> Result<BTreeSet<rentix_core::Id>> {
        Ok(self
            .rows_on(parts, date)?
            .into_iter()
            .map(|r| r.dedupe_key)
            .collect())
    }

    /// The committed rows of one fixing date. Of a month's file, only the rows of
    /// the date are decoded: its `fixing_date` column is read first, and the date's
    /// rows (consecutive: the store sorts a file by date) then read as a slice.
    pub fn rows_on(&self, parts: &Partitions, date: NaiveDate) -> Result<Vec<StoredObservation>> {
        let mut rows = Vec::new();
        for f in parts.on(date) {
            match f.span {
                Span::Date(_) => rows.extend(self.read_file(f, Projection::All)?),
                Span::Month(_) => rows.extend(self.rows_of_day(f, date)?),
            }
        }
        Ok(rows)
    }

    fn rows_of_day(&self, f: &PartFile, date: NaiveDate) -> Result<Vec<StoredObservation>> {
        let path = self.root.join(&f.rel);
        let bytes = crate::checked::read_checked(&path, f.committed())?;
        let t = Table::read_parquet_bytes(&bytes, &path, Some(&["fixing_date"]), &[], None)?;
        if let Some(rentix_table::Col::Date(v)) = t.col("fixing_date") {
            as_recorded(
                f,
                &path,
                v.len(),
                v.iter()
                    .flatten()
                    .filter_map(|d| rentix_table::from_epoch_days(*d)),
            )?;
        }
        let day = rentix_table::epoch_days(date);
        let at: Vec<usize> = match t.col("fixing_date") {
            Some(rentix_table::Col::Date(v)) => v
                .iter()
                .enumerate()
                .filter(|(_, d)| **d == Some(day))
                .map(|(i, _)| i)
                .collect(),
            // Not the store's type: read whole, every row checked below.
            _ => (0..t.height()).collect(),
        };
        let (Some(&first), Some(&last)) = (at.first(), at.last()) else {
            return Ok(Vec::new());
        };
        let rows = (last - first + 1 == at.len()).then_some((first, at.len()));
        let t = Table::read_parquet_bytes(&bytes, &path, None, &[], rows)?;
        let mut rows = from_table(t, &path, Projection::All)?;
        rows.retain(|r| r.obs.fixing_date == date);
        Ok(rows)
    }

    /// For a file whose bytes hash to `sha`: `None` if no run of `runs` read it,
    /// otherwise the row numbers that the latest run which read it (first read or
    /// retry) quarantined, which a new ingest of the file retries: not those refused
    /// for their bytes (`wrong_column_count`, `invalid_utf8`, `record_too_long`,
    /// `repeated_header`, `totals_row`), which no mapping changes. When that
    /// quarantine file is gone (deleted by hand) which rows it held is not known:
    /// [`Retry::Whole`], every row read again (those stored already are duplicates).
    pub fn retry_rows(&self, runs: &[IngestSummary], sha: &str) -> Result<Option<Retry>> {
        let latest = runs.iter().rev().find_map(|r| {
            r.files
                .iter()
                .find(|f| f.input_sha256 == sha && (!f.already_ingested || f.retried > 0))
                .map(|f| (r, f))
        });
        let Some((run, file)) = latest else {
            return Ok(None);
        };
        if file.quarantined == 0 {
            return Ok(Some(Retry::Rows(BTreeSet::new())));
        }
        let path = self.root.join(&run.quarantine_file);
        if !path.exists() {
            return Ok(Some(Retry::Whole));
        }
        let bad = |detail: String| StoreError::Store {
            path: path.clone(),
            detail,
        };
        let mut rdr = csv::Reader::from_path(&path).map_err(|e| bad(e.to_string()))?;
        // The quarantine's `file` cell is the path as the run named it, neutralized
        // against formula injection like every text cell.
        let name = rentix_table::neutralize(file.path.clone());
        // Columns by name: `line` came after `row` in later versions.
        let names = rdr.headers().map_err(|e| bad(e.to_string()))?.clone();
        let col = |n: &str| {
            names
                .iter()
                .position(|h| h == n)
                .ok_or_else(|| bad(format!("no {n:?} column")))
        };
        let (c_file, c_row, c_reason) = (col("file")?, col("row")?, col("reason")?);
        let mut rows = BTreeSet::new();
        for rec in rdr.records() {
            let rec = rec.map_err(|e| bad(e.to_string()))?;
            // A record refused for its bytes (a count of fields, its encoding, its
            // length) is refused again whatever the mapping: not retried.
            let permanent = matches!(
                rec.get(c_reason),
                Some(
                    "wrong_column_count"
                        | "invalid_utf8"
                        | "record_too_long"
                        | "repeated_header"
                        | "totals_row"
                )
            );
            if rec.get(c_file) == Some(name.as_str()) && !permanent {
                let row = rec
                    .get(c_row)
                    .and_then(|r| r.parse::<u64>().ok())
                    .ok_or_else(|| bad(format!("row {:?} is not a row number", rec.get(c_row))))?;
                rows.insert(row);
            }
        }
        Ok(Some(Retry::Rows(rows)))
    }

    /// Removes what a killed run left: staging files, partition or quarantine files
    /// of a run whose staging directory is still there (a run removes it only once
    /// its record is written), and files a committed compaction replaced. Called
    /// with the lock held. A file under `observations/` or `quarantine/` that is
    /// none of these and that no run record names is refused, and nothing removed:
    /// a record removed by hand (the next ingest swept every row it committed) or a
    /// file put into the store by hand (swept without a word).
    pub fn sweep(&self, _lock: &StoreLock) -> Result<Vec<PathBuf>> {
        let runs = self.runs()?;
        let replaced = replaced_files(&runs);
        let committed: BTreeSet<String> = runs
            .into_iter()
            .flat_map(|r| {
                let mut v = r.partitions;
                v.push(r.quarantine_file);
                v
            })
            .filter(|f| !replaced.contains(f))
            .collect();
        let killed = killed_runs(&self.root);
        let mut leftovers = Vec::new();
        let mut orphans = Vec::new();
        for sub in ["observations", "quarantine"] {
            let dir = self.root.join(sub);
            if !dir.exists() {
                continue;
            }
            for path in walk(&dir)? {
                let rel = path
                    .strip_prefix(&self.root)
                    .map(|p| p.to_string_lossy().replace('\\', "/"))
                    .unwrap_or_default();
                if committed.contains(&rel) {
                    continue;
                }
                if replaced.contains(&rel) || left_by_killed_run(&path, &killed) {
                    leftovers.push(path);
                } else {
                    orphans.push(rel);
                }
            }
        }
        if !orphans.is_empty() {
            return Err(StoreError::Store {
                path: self.root.clone(),
                detail: orphans_detail(&orphans),
            });
        }
        let mut removed = Vec::new();
        let staging = self.root.join("staging");
        if staging.exists() {
            fs::remove_dir_all(&staging).map_err(|source| StoreError::Write {
                path: staging.clone(),
                source,
            })?;
            removed.push(staging);
        }
        for path in leftovers {
            fs::remove_file(&path).map_err(|source| StoreError::Write {
                path: path.clone(),
                source,
            })?;
            removed.push(path);
        }
        Ok(removed)
    }
}

/// The runs whose staging directory is still in the store at `root`: killed before
/// their record was written (or while they run, under the lock).
pub(crate) fn killed_runs(root: &Path) -> BTreeSet<String> {
    fs::read_dir(root.join("staging"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether the store file `path` is named for one of the `killed` runs (partitions
/// and quarantine files are named `RUN.parquet`, `RUN.csv`).
pub(crate) fn left_by_killed_run(path: &Path, killed: &BTreeSet<String>) -> bool {
    path.file_stem()
        .and_then(|s| s.to_str())
        .is_some_and(|s| killed.contains(s))
}

/// Why files that no run names and no killed run left stop a run: the first few of
/// `orphans` named.
pub(crate) fn orphans_detail(orphans: &[String]) -> String {
    const SHOWN: usize = 5;
    let more = orphans.len().saturating_sub(SHOWN);
    format!(
        "{} file(s) that no run record names and no killed run left (its staging directory would be there): {}{}; a run record removed by hand (restore it in runs/: the file's name is its run's) or a file put into the store by hand (move it out). Nothing was removed; `rentix store check` lists them",
        orphans.len(),
        orphans[..orphans.len().min(SHOWN)].join(", "),
        if more > 0 { format!(" and {more} more") } else { String::new() }
    )
}

/// Partition files that a committed compaction merged into one of its own.
pub(crate) fn replaced_files<'r>(
    runs: impl IntoIterator<Item = &'r IngestSummary>,
) -> BTreeSet<String> {
    runs.into_iter()
        .flat_map(|r| r.replaces.iter().cloned())
        .collect()
}

fn walk(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = fs::read_dir(&d).map_err(|source| StoreError::Read {
            path: d.clone(),
            source,
        })?;
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The id of run `n`: `run-000001`, as run records, partitions and quarantine files
/// are named.
pub(crate) fn run_name(n: u64) -> String {
    format!("run-{n:06}")
}

/// `run-000042` -> 42; `None` for any name the store does not write (another
/// width, a suffix such as ` (copy)`, a sign).
pub(crate) fn run_number(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("run-")?;
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    (run_name(n) == name).then_some(n)
}

/// Why the file at `path` in `runs/` is not a record the store wrote, judged by
/// its name alone.
pub(crate) fn name_problem(path: &Path) -> Option<String> {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    run_number(stem).is_none().then(|| {
        "not named as the store names its run records (run-NNNNNN.json): a copy or a file \
         renamed by hand, which readers would count twice; move it out of runs/"
            .to_string()
    })
}

/// Why `run`, read from `path`, is not the record its name says: its `run_id` must
/// be its file name, so that no two records claim one run.
pub(crate) fn record_problem(path: &Path, run: &IngestSummary) -> Option<String> {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    (run.run_id != stem).then(|| {
        let holder = path.with_file_name(format!("{}.json", run.run_id));
        let runs = Path::new("runs").join(format!("{}.json", run.run_id));
        format!(
            "the record claims run id {}, not {stem}{}; remove the copy",
            run.run_id,
            if holder.exists() {
                format!(", which {} holds", runs.display())
            } else {
                String::new()
            }
        )
    })
}

/// Rows read ahead at most while the rows before them are handed over (about 60 MB
/// of decoded columns).
const READ_AHEAD_ROWS: u64 = 250_000;

/// Reads `files` with `read` on the pool, at most `most` files (and, past the
/// first, [`READ_AHEAD_ROWS`] rows) ahead of the one being handed over, and hands
/// each result to `each` on the calling thread in file order, stopping at the
/// first error `each` returns ([`rentix_core::ordered::in_order`]: no barrier
/// between batches, a file no pool thread has started read by the caller). A read
/// that panics is its file's error.
fn read_in_order<T: Send>(
    files: &[&PartFile],
    most: usize,
    read: impl Fn(&PartFile) -> Result<T> + Sync,
    each: impl FnMut(Result<T>) -> Result<()>,
) -> Result<()> {
    let rows = rows_of(files.iter().copied());
    rentix_core::ordered::in_order(
        files.to_vec(),
        |i| rentix_core::ordered::window(&rows, i, most, READ_AHEAD_ROWS),
        read,
        |i, why| {
            Err(StoreError::Store {
                path: PathBuf::from(&files[i].rel),
                detail: format!("reading this partition stopped unexpectedly: {why}"),
            })
        },
        each,
    )
}

/// Refuses a partition whose rows are not those its run record committed: another
/// number of rows, or a fixing date outside the file's month. Its bytes are checked
/// against the record's SHA-256 as they are read; this is a record that describes
/// another file (a hostile round forged one: another month's file and its
/// record's digest, read without an error, its rows counted twice).
fn as_recorded(
    f: &PartFile,
    path: &Path,
    rows: usize,
    mut dates: impl Iterator<Item = NaiveDate>,
) -> Result<()> {
    let damaged = |detail: String| StoreError::Store {
        path: path.to_path_buf(),
        detail: format!("{detail}: the store is damaged; `rentix store check`"),
    };
    if let Some(want) = f.rows.filter(|w| *w != rows as u64) {
        return Err(damaged(format!(
            "{rows} rows, where {} committed {want}",
            f.run_id
        )));
    }
    let (first, last) = (f.span.first(), f.span.last());
    if let Some(d) = dates.find(|d| *d < first || *d > last) {
        return Err(damaged(format!(
            "a row of {d}, outside the file's {}",
            f.span.segment()
        )));
    }
    Ok(())
}

/// The rows of each file, for the read-ahead's bound: a file of unknown rows
/// counts none.
fn rows_of<'a>(files: impl Iterator<Item = &'a PartFile>) -> Vec<u64> {
    files.map(|f| f.rows.unwrap_or(0)).collect()
}

/// The first and last fixing date `runs` committed rows of, from their records
/// (a record without them, from its partitions' paths).
pub fn fixing_dates_of(runs: &[IngestSummary]) -> Option<(NaiveDate, NaiveDate)> {
    let parse = |s: &Option<String>| {
        s.as_deref()
            .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
    };
    let mut range: Option<(NaiveDate, NaiveDate)> = None;
    let mut widen = |a: NaiveDate, b: NaiveDate| {
        range = Some(match range {
            Some((f, l)) => (f.min(a), l.max(b)),
            None => (a, b),
        });
    };
    for run in runs.iter().filter(|r| !r.partitions.is_empty()) {
        match (parse(&run.first_fixing_date), parse(&run.last_fixing_date)) {
            (Some(a), Some(b)) => widen(a, b),
            _ => {
                for s in run.partitions.iter().filter_map(|p| partition_span(p)) {
                    widen(s.first(), s.last());
                }
            }
        }
    }
    range
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(rows: Option<u64>) -> PartFile {
        PartFile {
            span: Span::Date(NaiveDate::from_ymd_opt(2025, 1, 1).unwrap()),
            rel: String::new(),
            rows,
            run_id: String::new(),
            committed: None,
        }
    }

    /// The files read ahead of the one handed over: at most `most` and, past the
    /// next one, 250,000 rows; a file of unknown rows counts none, the next file
    /// is read ahead whatever its size.
    #[test]
    fn the_read_ahead_is_bounded_by_files_and_rows() {
        let files = [
            file(Some(100_000)),
            file(Some(100_000)),
            file(Some(100_000)),
            file(None),
            file(Some(10)),
            file(Some(900_000)),
            file(Some(1)),
        ];
        let rows = rows_of(files.iter());
        let ends = |most| -> Vec<usize> {
            (0..rows.len())
                .map(|i| rentix_core::ordered::window(&rows, i, most, READ_AHEAD_ROWS))
                .collect()
        };
        // From file 0: files 1 to 4 (200,010 rows: file 3 counts none); file 5
        // (900,000) would pass the bound. From 3: file 4 and not 5. From 4: file 5,
        // the next, whatever its size. Two at most: from 0, files 1 and 2.
        assert_eq!(ends(8), [5, 5, 5, 5, 6, 7, 7]);
        assert_eq!(ends(2), [3, 4, 5, 5, 6, 7, 7]);
    }

    /// Results come in file order whatever the thread count and however long each
    /// read takes; no more than the window is held read and not handed over; the
    /// read finishes when the caller is the pool's only thread (it reads what no
    /// pool thread started); an error of the hand-over stops the read with it.
    #[test]
    fn reads_are_handed_over_in_file_order_within_the_window() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let files: Vec<PartFile> = (0..40).map(|i| file(Some(1_000 * (i % 5)))).collect();
        let refs: Vec<&PartFile> = files.iter().collect();
        let index = |f: &PartFile| refs.iter().position(|g| std::ptr::eq(*g, f)).unwrap();
        for threads in [1, 2, 4] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            for inside in [false, true] {
                let (held, most_held) = (AtomicUsize::new(0), AtomicUsize::new(0));
                let read = |f: &PartFile| -> Result<usize> {
                    let i = index(f);
                    std::thread::sleep(std::time::Duration::from_micros(200 * (i as u64 % 7)));
                    most_held.fetch_max(held.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
                    Ok(i)
                };
                let mut seen = Vec::new();
                let mut run = || {
                    read_in_order(&refs, 3, read, |r| {
                        held.fetch_sub(1, Ordering::SeqCst);
                        seen.push(r?);
                        Ok(())
                    })
                };
                if inside {
                    pool.install(run).unwrap();
                } else {
                    pool.install(|| ()); // the pool exists; the caller is not in it
                    run().unwrap();
                }
                assert_eq!(seen, (0..40).collect::<Vec<_>>(), "{threads} threads");
                // The file handed over and at most three after it.
                assert!(most_held.load(Ordering::SeqCst) <= 4, "{threads} threads");
            }
            let mut handed = 0;
            let stopped = pool.install(|| {
                read_in_order(
                    &refs,
                    3,
                    |f| Ok(index(f)),
                    |r| {
                        handed += 1;
                        match r? {
                            5 => Err(StoreError::Store {
                                path: PathBuf::from("five"),
                                detail: "stop here".into(),
                            }),
                            _ => Ok(()),
                        }
                    },
                )
            });
            assert!(
                matches!(stopped, Err(StoreError::Store { detail, .. }) if detail == "stop here")
            );
            assert_eq!(handed, 6);
            // A read that panics is that file's error, never a hand-over that
            // waits forever.
            let panicked = pool.install(|| {
                read_in_order(
                    &refs,
                    3,
                    |f| match index(f) {
                        7 => panic!("file seven"),
                        i => Ok(i),
                    },
                    |r| r.map(drop),
                )
            });
            assert!(
                matches!(&panicked, Err(StoreError::Store { detail, .. }) if detail.contains("file seven")),
                "{panicked:?}"
            );
        }
    }

    /// Only the names the store writes are run names: six digits at least, no
    /// suffix, no sign, no padding beyond six.
    #[test]
    fn run_numbers_are_read_from_exact_names_only() {
        assert_eq!(run_number("run-000042"), Some(42));
        assert_eq!(run_number("run-1000000"), Some(1_000_000));
        assert_eq!(run_name(1_000_000), "run-1000000");
        for bad in [
            "run-42",
            "run-0000042",
            "run-000001 (copy)",
            "run-+00001",
            "run-",
            "000001",
            "Run-000001",
        ] {
            assert_eq!(run_number(bad), None, "{bad}");
        }
    }
}
