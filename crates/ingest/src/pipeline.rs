//! `rentix ingest`: read files, validate and normalize every row, remove duplicates,
//! and commit the result to the store in one atomic step.

use crate::error::{IngestError, Result};
use crate::mapping::{BoundMapping, Mapping};
use crate::normalize::{dedupe_key, Bounds, Normalizer};
use crate::quarantine::{QuarantineRow, QuarantineWriter};
use crate::reason::Rejection;
use chrono::NaiveDate;
use rayon::prelude::*;
use rentix_core::{Cutoff, FixingClock, FxTable, GpuCatalog, GpuModel};
use rentix_store::commit::{
    commit_date, CommitCtx, DateInput, KeptRows, Segments, MAX_CONFLICT_EXAMPLES,
};
use rentix_store::hex;
use rentix_store::StoredObservation;
use rentix_store::{FileSummary, IngestSummary};
use rentix_store::{Retry, Store};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// How to run an ingest.
#[derive(Debug, Clone)]
pub struct IngestOptions {
    /// Foreign layout mapping; `None` reads the canonical layout.
    pub mapping: Option<PathBuf>,
    /// FX table; `None` uses the bundled one.
    pub fx: Option<PathBuf>,
    /// Cut-off that assigns fixing dates to partitions.
    pub cutoff: Cutoff,
    /// Accepted rows held in memory before spilling to the staging area.
    pub batch_rows: usize,
    /// Plausibility bounds on dates, prices and quantities.
    pub bounds: Bounds,
    /// Operator ratings attached to rows without a tier (`--ratings`).
    pub ratings: rentix_core::RatingTable,
}

impl Default for IngestOptions {
    fn default() -> Self {
        Self {
            mapping: None,
            fx: None,
            cutoff: Cutoff::default(),
            batch_rows: DEFAULT_BATCH_ROWS,
            bounds: Bounds::default_now(),
            ratings: rentix_core::RatingTable::default(),
        }
    }
}

/// Accepted rows held in memory before spilling to staging (about 0.55 GB at most,
/// a third of what the same-work polars script holds for a million rows). A run that
/// spills writes, reads back and merges every row once more: a 1M-row file took 4.6
/// s with 250,000 (four spills) and 3.6 s without a spill on 2 cores
/// (docs/benchmarks.md, issue 48).
pub const DEFAULT_BATCH_ROWS: usize = 1_000_000;

/// Fixing dates committed ahead of the one handed to the month writers: memory
/// holds their rows together.
const COMMIT_AHEAD_DATES: usize = 32;

/// Whether `bytes` (UTF-8) may hold a control character: a byte below 0x20, 0x7f,
/// or 0xc2 (the lead byte of U+0080 to U+00BF, which holds the C1 controls). No
/// early exit, so that the loop is vectorized: a record is a hundred-odd bytes,
/// and the check runs on every record.
fn may_hold_control(bytes: &[u8]) -> bool {
    bytes.iter().fold(0u8, |m, &b| {
        m | u8::from(b < 0x20) | u8::from(b == 0x7f) | u8::from(b == 0xc2)
    }) != 0
}

/// Refuses what cannot be read as a file of records: a path given twice (its rows
/// would be counted twice and deduplicated against themselves), and anything that is
/// not a regular file (`/dev/zero`, a directory, a FIFO), which could never end.
fn check_inputs(files: &[PathBuf]) -> Result<()> {
    let mut seen: BTreeMap<PathBuf, &Path> = BTreeMap::new();
    for f in files {
        let meta = std::fs::metadata(f).map_err(|source| IngestError::Read {
            path: f.clone(),
            source,
        })?;
        if !meta.is_file() {
            return Err(IngestError::Read {
                path: f.clone(),
                source: std::io::Error::other(
                    "not a regular file (a device, directory or pipe cannot be ingested)",
                ),
            });
        }
        let canon = std::fs::canonicalize(f).unwrap_or_else(|_| f.clone());
        if let Some(first) = seen.insert(canon, f) {
            return Err(IngestError::GivenTwice {
                path: f.clone(),
                first: first.to_path_buf(),
            });
        }
    }
    Ok(())
}

/// A record waiting for validation: row number, the line it starts on, its fields,
/// and a reason found while reading (wrong column count, invalid UTF-8 in the field
/// at that index, a repeated header, a totals row).
type PendingRecord = (Row, Fields, Option<(crate::reason::Reason, usize)>);

/// Where a record is: its data row (1-based, the header is row 0) and the line of
/// the file it starts on (1-based, the header's line is 1: the row number a
/// spreadsheet shows, whatever the line endings, a byte-order mark or blank lines).
#[derive(Debug, Clone, Copy)]
struct Row {
    row: u64,
    line: u64,
}

/// A record's fields: text, checked as UTF-8 once while reading (a pass over the
/// record's buffer, not one per field), or the raw bytes of a record refused then.
enum Fields {
    Text(csv::StringRecord),
    Bytes(csv::ByteRecord),
}

impl Fields {
    /// Checks `record` as UTF-8: text, or the bytes and the index of the first
    /// field that is not UTF-8.
    fn of(record: csv::ByteRecord) -> (Self, Option<usize>) {
        match csv::StringRecord::from_byte_record(record) {
            Ok(text) => (Fields::Text(text), None),
            Err(e) => {
                let bytes = e.into_byte_record();
                let bad = bytes.iter().position(|f| std::str::from_utf8(f).is_err());
                (Fields::Bytes(bytes), Some(bad.unwrap_or(0)))
            }
        }
    }

    /// The record's bytes, its buffers kept for another read.
    fn into_bytes(self) -> csv::ByteRecord {
        match self {
            Fields::Text(r) => r.into_byte_record(),
            Fields::Bytes(r) => r,
        }
    }

    fn len(&self) -> usize {
        match self {
            Fields::Text(r) => r.len(),
            Fields::Bytes(r) => r.len(),
        }
    }

    /// The fields as text (lossy only for a record refused as not UTF-8).
    fn lossy(&self) -> Vec<String> {
        match self {
            Fields::Text(r) => r.iter().map(str::to_string).collect(),
            Fields::Bytes(r) => r
                .iter()
                .map(|f| String::from_utf8_lossy(f).into_owned())
                .collect(),
        }
    }
}

/// Records validated together in parallel.
const PARALLEL_BATCH: usize = 4_096;
/// Bytes of records read ahead in one batch, at most (about).
const BATCH_BYTES: usize = 32 << 20;

/// Progress callback: rows read so far.
pub(crate) type Progress<'a> = &'a mut dyn FnMut(u64);

/// Accepted rows of the run, in memory by fixing date, spilled to staging files when
/// they grow past the batch size. Memory stays bounded by the batch size while
/// reading, and by the largest single fixing date while committing.
struct Stager {
    dir: PathBuf,
    batch_rows: usize,
    held: usize,
    buckets: BTreeMap<NaiveDate, rentix_store::commit::Segments>,
    spills: BTreeMap<NaiveDate, Vec<rentix_store::spill::Section>>,
    seq: usize,
}

impl Stager {
    fn add(&mut self, row: StoredObservation) -> Result<()> {
        // Spilled when a row comes to a full stage, not when the stage fills: a run
        // of exactly `batch_rows` rows is committed from memory.
        if self.held >= self.batch_rows {
            self.spill()?;
        }
        self.buckets
            .entry(row.obs.fixing_date)
            .or_default()
            .push(row);
        self.held += 1;
        Ok(())
    }

    fn spill(&mut self) -> Result<()> {
        let buckets = std::mem::take(&mut self.buckets);
        self.seq += 1;
        let path = self.dir.join(format!("{:06}.spill", self.seq));
        // Each date's rows in dedupe-key order (equal keys in input order), so that
        // a busy date can be committed by merging its sections.
        let buckets: Vec<(NaiveDate, Vec<StoredObservation>)> = buckets
            .into_par_iter()
            .map(|(d, rows)| (d, rows.into_vec()))
            .collect();
        let ordered: Vec<(NaiveDate, Vec<&StoredObservation>)> = buckets
            .par_iter()
            .map(|(d, rows)| {
                let order = rentix_store::commit::key_order(rows);
                (*d, order.into_iter().map(|i| &rows[i]).collect())
            })
            .collect();
        let sections = rentix_store::spill::write_sections(&path, &ordered)?;
        for (date, section) in sections {
            self.spills.entry(date).or_default().push(section);
        }
        self.held = 0;
        Ok(())
    }

    fn dates(&self) -> BTreeSet<NaiveDate> {
        self.buckets
            .keys()
            .chain(self.spills.keys())
            .copied()
            .collect()
    }

    /// The date's rows held in memory and the spill files holding the rest.
    fn detach(&mut self, date: NaiveDate) -> DateInput {
        DateInput {
            date,
            rows: self.buckets.remove(&date).unwrap_or_default(),
            spills: self.spills.remove(&date).unwrap_or_default(),
        }
    }
}

/// A reader that hashes every byte it passes on, so that the SHA-256 a run records is
/// that of the bytes it read, not of a file that changed between hashing and reading.
pub(crate) struct HashingReader<R> {
    inner: R,
    hash: Sha256,
}

impl<R: Read> HashingReader<R> {
    pub(crate) fn new(inner: R) -> Self {
        Self {
            inner,
            hash: Sha256::new(),
        }
    }

    /// Reads what is left to the end and returns the hash of every byte read.
    pub(crate) fn finish(mut self) -> std::io::Result<String> {
        std::io::copy(&mut self, &mut std::io::sink())?;
        Ok(hex(&self.hash.finalize()))
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
}

/// Each input with the SHA-256 of its bytes, in the order given.
/// Each input with its SHA-256 where it must be known before the file is read:
/// to tell a file read before (`history`, the store's runs) or given twice. A file
/// no other input matches in size, read into a store with no run, cannot be either:
/// it is hashed only as it is read (one pass over its bytes, not two; the first
/// was a serial tenth of a second per 100 MB before any row was read, issue 48).
/// Files are hashed in parallel.
fn hash_inputs(files: &[PathBuf], no_history: bool) -> Result<Vec<(&PathBuf, Option<String>)>> {
    let sizes: Vec<Option<u64>> = files
        .iter()
        .map(|f| {
            std::fs::metadata(f)
                .ok()
                .filter(|m| m.is_file())
                .map(|m| m.len())
        })
        .collect();
    let alone =
        |i: usize| sizes[i].is_some() && sizes.iter().filter(|s| **s == sizes[i]).count() == 1;
    files
        .par_iter()
        .enumerate()
        .map(|(i, f)| {
            if no_history && alone(i) {
                Ok((f, None))
            } else {
                sha256_file(f).map(|sha| (f, Some(sha)))
            }
        })
        .collect()
}

fn sha256_file(path: &Path) -> Result<String> {
    Ok(rentix_store::sha256_file(path)?)
}

/// The mapping (if any) and the normalizer a run reads its files with: the bundled
/// catalog plus the mapping's aliases, the FX table, the cut-off, bounds, ratings.
fn prepare(opts: &IngestOptions) -> Result<(Option<Mapping>, Normalizer)> {
    let mapping = match &opts.mapping {
        Some(p) => Some(Mapping::from_file(p)?),
        None => None,
    };
    let mut catalog = GpuCatalog::bundled();
    if let Some(m) = &mapping {
        let mpath = opts.mapping.clone().unwrap_or_default();
        for (raw, id) in &m.aliases {
            let id = GpuModel::new(id).map_err(|e| IngestError::Mapping {
                path: mpath.clone(),
                detail: format!("alias {raw:?}: {e}"),
            })?;
            catalog
                .add_alias(raw, &id)
                .map_err(|e| IngestError::Mapping {
                    path: mpath.clone(),
                    detail: e.to_string(),
                })?;
        }
    }
    let fx = match &opts.fx {
        Some(p) => FxTable::from_file(p).map_err(|e| IngestError::Fx {
            path: p.clone(),
            detail: e.to_string(),
        })?,
        None => FxTable::bundled(),
    };
    let clock = FixingClock::new(&opts.cutoff).map_err(|e| IngestError::Cutoff {
        value: format!("{} {}", opts.cutoff.time, opts.cutoff.timezone),
        detail: e.to_string(),
    })?;
    let normalizer = Normalizer {
        catalog,
        fx,
        clock,
        bounds: opts.bounds,
        ratings: opts.ratings.clone(),
    };

    Ok((mapping, normalizer))
}

/// Ingests `files` into the store at `store_dir` and returns the run's summary: the
/// run is opened under the store's lock, every input is read into staging, and the
/// staged rows are committed and published in one step.
pub fn ingest(
    store_dir: &Path,
    files: &[PathBuf],
    opts: &IngestOptions,
    progress: Progress<'_>,
) -> Result<IngestSummary> {
    check_inputs(files)?;
    // A bad mapping, FX table or cut-off is refused before the store is created.
    let (mapping, normalizer) = prepare(opts)?;
    let store = Store::create(store_dir)?;
    let lock = store.lock()?;
    // Before the sweep: a killed run's leftovers keep their id from being reused.
    let run_id = store.next_run_id()?;
    store.sweep(&lock)?;
    let history = store.runs()?;

    let staging = store_dir.join("staging").join(&run_id);
    std::fs::create_dir_all(&staging).map_err(|source| IngestError::Write {
        path: staging.clone(),
        source,
    })?;
    let mut run = Run {
        stager: Stager {
            dir: staging,
            batch_rows: opts.batch_rows.max(1),
            held: 0,
            buckets: BTreeMap::new(),
            spills: BTreeMap::new(),
            seq: 0,
        },
        quarantine: QuarantineWriter::default(),
        summary: IngestSummary {
            run_id: run_id.clone(),
            mapping: mapping
                .as_ref()
                .map_or("canonical".into(), |m| m.name.clone()),
            cutoff: opts.cutoff.clone(),
            quarantine_file: format!("quarantine/{run_id}.csv"),
            stale_lock: lock.replaced_stale.clone(),
            ..Default::default()
        },
    };
    let reading = Reading {
        store: &store,
        history: &history,
        mapping: mapping.as_ref(),
        normalizer: &normalizer,
    };
    if let Err(e) = reading.read_inputs(files, &mut run, progress) {
        // Nothing of the run is in the store yet: its spills go with it (a run
        // that failed on a full disk left the disk full).
        drop(run);
        rentix_store::publish::remove_staging(store_dir, &run_id);
        return Err(e);
    }
    rentix_core::phases::mark("ingest: read, validated, normalized");
    commit_run(&store, &lock, run)
}

/// What an ingest run builds while it reads: the staged rows, the refused ones and
/// the summary.
struct Run {
    stager: Stager,
    quarantine: QuarantineWriter,
    summary: IngestSummary,
}

/// What every input of a run is read with.
struct Reading<'a> {
    store: &'a Store,
    /// The store's run records, for the rows of a file read before to retry.
    history: &'a [IngestSummary],
    mapping: Option<&'a Mapping>,
    normalizer: &'a Normalizer,
}

impl Reading<'_> {
    /// Reads every input into `run`. Every input that could have been read before
    /// is hashed before any is read, so that which files were read before is
    /// decided once ([`hash_inputs`]); each is hashed again as it is read, and a
    /// file whose bytes changed in between is refused (the run would record a hash
    /// of other bytes).
    fn read_inputs(&self, files: &[PathBuf], run: &mut Run, progress: Progress<'_>) -> Result<()> {
        let mut read_total = 0u64;
        for (path, before) in hash_inputs(files, self.history.is_empty())? {
            let display = path.to_string_lossy().to_string();
            let mut fs = FileSummary {
                path: display.clone(),
                input_sha256: before.clone().unwrap_or_default(),
                ..FileSummary::default()
            };
            // A file read before is not read again, except the rows that the latest
            // run which read it quarantined: this run's mapping, FX table or bounds
            // may accept them now (an alias added after an unknown GPU).
            let retry = match &before {
                Some(sha) if run.summary.files.iter().any(|f| f.input_sha256 == *sha) => {
                    Some(Retry::Rows(BTreeSet::new()))
                }
                Some(sha) => self.store.retry_rows(self.history, sha)?,
                None => None,
            };
            if let Some(sha) = &before {
                run.summary
                    .input_sha256
                    .insert(display.clone(), sha.clone());
            }
            match &retry {
                Some(Retry::Rows(rows)) => {
                    fs.already_ingested = true;
                    fs.retried = rows.len() as u64;
                    if rows.is_empty() {
                        run.summary.files.push(fs);
                        continue;
                    }
                }
                Some(Retry::Whole) => {
                    fs.already_ingested = true;
                    fs.reread_whole = true;
                }
                None => {}
            }
            let input = Input {
                path,
                mapping: self.mapping,
                only: match &retry {
                    Some(Retry::Rows(rows)) => Some(rows),
                    _ => None,
                },
            };
            let read_sha = match read_file(
                &input,
                self.normalizer,
                &mut run.stager,
                &mut run.quarantine,
                &mut fs,
                &mut |n| progress(read_total + n),
            ) {
                Ok(sha) => sha,
                // A file read before whose header this run's mapping does not fit (an
                // earlier vendor's file among today's): nothing to retry with it.
                Err(IngestError::MissingColumn { .. } | IngestError::BadHeader { .. })
                    if retry.is_some() =>
                {
                    fs.retried = 0;
                    run.summary.files.push(fs);
                    continue;
                }
                Err(e) => return Err(e),
            };
            match &before {
                Some(sha) if read_sha != *sha => {
                    return Err(IngestError::Read {
                        path: path.clone(),
                        source: std::io::Error::other(format!(
                            "the file changed while it was being ingested (SHA-256 {sha} before reading, {read_sha} of the bytes read); nothing was committed: ingest it again once it is complete"
                        )),
                    });
                }
                Some(_) => {}
                None => {
                    run.summary.input_sha256.insert(display, read_sha.clone());
                    fs.input_sha256 = read_sha;
                }
            }
            if fs.reread_whole {
                fs.retried = fs.source_rows;
            }
            read_total += fs.source_rows;
            run.summary.retried += fs.retried;
            run.summary.files.push(fs);
        }
        Ok(())
    }
}

/// The commit phase of a run: its dates in parallel by chunks, merged in date order
/// into the month files, then the quarantine, then the publication under `lock`.
fn commit_run(store: &Store, lock: &rentix_store::StoreLock, run: Run) -> Result<IngestSummary> {
    let Run {
        mut stager,
        mut quarantine,
        mut summary,
    } = run;
    let run_id = summary.run_id.clone();
    let committed = store.partitions()?;
    let mut tally = Tally::default();
    let staging_commit = stager.dir.join("commit");
    let ctx = CommitCtx {
        store,
        committed: &committed,
        staging: &staging_commit,
        memory_rows: stager.batch_rows,
    };
    let inputs: Vec<DateInput> = stager
        .dates()
        .into_iter()
        .map(|d| stager.detach(d))
        .collect();
    let dates: Vec<NaiveDate> = inputs.iter().map(|i| i.date).collect();
    let mut months = rentix_store::commit::MonthWriter::new(&staging_commit, &run_id);
    // Dates are committed on the pool, up to COMMIT_AHEAD_DATES ahead, while this
    // thread hands them to the month writers in date order (so the files do not
    // depend on the thread count). Handing them over waits whenever a month's
    // writer is behind: committing a chunk and then handing it over left the pool
    // idle in those waits, a quarter of the commit's time, and a chunk committed
    // beside the hand-over of the chunk before left a core idle at each chunk's
    // end (issue 48).
    rentix_core::ordered::in_order(
        inputs,
        |i| i + 1 + COMMIT_AHEAD_DATES,
        |input| commit_date(&ctx, input),
        |i, why| {
            Err(rentix_store::StoreError::Accounting(format!(
                "committing the rows of {} stopped unexpectedly: {why}",
                dates[i]
            )))
        },
        |outcome| -> Result<()> {
            let mut o = outcome?;
            if let (Some(rows), Some(date)) = (o.rows.take(), o.date) {
                months.add(date, rows)?;
            }
            tally.add(&mut summary, o);
            Ok(())
        },
    )?;
    rentix_core::phases::mark("ingest: deduplicated, handed to the month writers");
    let written = months.finish()?;
    rentix_core::phases::mark("ingest: partitions written");
    summary.partitions = written.iter().map(|(rel, _)| rel.clone()).collect();
    summary.partition_checksums = written.into_iter().collect();
    tally.finish(&mut summary, &quarantine)?;

    let store_dir = store.root();
    quarantine.write(&store_dir.join(&summary.quarantine_file))?;
    rentix_store::publish::publish(store_dir, lock, &staging_commit, &summary)?;
    rentix_store::publish::remove_staging(store_dir, &run_id);
    rentix_core::phases::mark("ingest: published");
    Ok(summary)
}

/// A run's counts per file, gathered date by date as the dates are committed.
#[derive(Default)]
struct Tally {
    accepted_by_file: BTreeMap<String, u64>,
    duplicates_by_file: BTreeMap<String, u64>,
}

impl Tally {
    /// Adds a committed date's counts to the run's summary.
    fn add(&mut self, summary: &mut IngestSummary, o: rentix_store::commit::DateOutcome) {
        summary.duplicates_within_run += o.duplicates_within_run;
        summary.duplicates_of_store += o.duplicates_of_store;
        summary.conflicts += o.conflicts;
        let room = MAX_CONFLICT_EXAMPLES.saturating_sub(summary.conflict_examples.len());
        summary
            .conflict_examples
            .extend(o.conflict_examples.into_iter().take(room));
        for (f, n) in o.accepted_by_file {
            *self.accepted_by_file.entry(f).or_default() += n;
        }
        for (f, n) in o.duplicates_by_file {
            *self.duplicates_by_file.entry(f).or_default() += n;
        }
        if let (true, Some(date)) = (o.accepted > 0, o.date) {
            summary.accepted += o.accepted;
            let d = date.to_string();
            if summary.first_fixing_date.is_none() {
                summary.first_fixing_date = Some(d.clone());
            }
            summary.last_fixing_date = Some(d);
        }
    }

    /// Completes the summary from the files' counts and the quarantine, and checks
    /// that `rows_read = accepted + quarantined + duplicates` holds.
    fn finish(self, summary: &mut IngestSummary, quarantine: &QuarantineWriter) -> Result<()> {
        let mut unknown: BTreeMap<String, u64> = BTreeMap::new();
        for f in &summary.files {
            for (k, v) in &f.unknown_gpus {
                *unknown.entry(k.clone()).or_default() += v;
            }
        }
        let mut unknown: Vec<(String, u64)> = unknown.into_iter().collect();
        unknown.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        unknown.truncate(100);
        summary.unknown_gpus = unknown;
        let (mut read, mut rated, mut unrated) = (0, 0, 0);
        for f in summary.files.iter_mut() {
            f.accepted = self.accepted_by_file.get(&f.path).copied().unwrap_or(0);
            f.duplicates = self.duplicates_by_file.get(&f.path).copied().unwrap_or(0);
            read += f.rows_read;
            rated += f.rated_rows;
            unrated += f.unrated_rows;
        }
        summary.rows_read += read;
        summary.rated_rows += rated;
        summary.unrated_rows += unrated;
        summary.duplicates = summary.duplicates_within_run + summary.duplicates_of_store;
        for (reason, n) in quarantine.counts() {
            summary.quarantined_by_reason.insert(reason.to_string(), n);
        }
        summary.quarantined = quarantine.len() as u64;
        summary.check().map_err(|e| IngestError::Accounting(e.0))
    }
}

/// What [`read_in_memory`] gives: the observations an ingest into an empty store
/// would commit, in partition order date by date, with the run's counts (no run id,
/// partitions or checksums) and its quarantine.
#[derive(Debug)]
pub struct InMemory {
    /// The accepted rows, duplicates removed, in partition order.
    pub rows: Vec<StoredObservation>,
    /// The counts an ingest would record (`rows_read = accepted + quarantined +
    /// duplicates` checked).
    pub summary: IngestSummary,
    /// The refused rows.
    pub quarantine: QuarantineWriter,
}

/// Reads, validates, normalizes and deduplicates `files` exactly as [`ingest`] does
/// into an empty store, but in memory and with no store: for reproducing an index
/// from raw files. Memory holds every accepted row ([`read_in_stages`] hands them
/// over a date at a time instead).
pub fn read_in_memory(
    files: &[PathBuf],
    opts: &IngestOptions,
    progress: Progress<'_>,
) -> Result<InMemory> {
    let staged = read_in_stages(files, opts, progress)?;
    let mut rows = Vec::with_capacity(staged.rows());
    let (summary, quarantine) = staged.each_date(
        |_| (),
        |date_rows, ()| {
            rows.extend(date_rows.into_vec());
            Ok::<(), IngestError>(())
        },
    )?;
    Ok(InMemory {
        rows,
        summary,
        quarantine,
    })
}

/// A read into memory ([`read_in_stages`]) before its dedupe: the accepted rows by
/// fixing date, the refused ones, the counts so far.
pub struct Staged {
    stager: Stager,
    quarantine: QuarantineWriter,
    summary: IngestSummary,
}

/// Dates deduplicated ahead (in parallel) of the one handed over.
const HAND_OVER_DATES: usize = 32;

impl Staged {
    /// Rows read and accepted, duplicates included.
    pub fn rows(&self) -> usize {
        self.stager.buckets.values().map(|s| s.len()).sum()
    }

    /// The last fixing date of a row read: the last the dedupe keeps rows of (a
    /// date keeps one row at least of those read).
    pub fn last_fixing_date(&self) -> Option<NaiveDate> {
        self.stager.buckets.keys().next_back().copied()
    }

    /// Deduplicates the rows date by date, as a commit into an empty store would,
    /// and shows each date's kept rows, in partition order (the order
    /// [`read_in_memory`] returns them in) and where they were read
    /// ([`KeptRows`]: no row is copied), to `prepare`, then hands them with what
    /// `prepare` made of them to `take`, in date order. Dates are deduplicated and
    /// prepared in parallel, a bounded window ahead of the date taken
    /// ([`rentix_core::ordered::in_order`]), so a consumer that keeps less than the rows (the index engine's) never holds
    /// them twice. The rows are freed where `take` drops them: freeing them on the
    /// pool instead left the freed memory unused longer (the one-shot's peak 10 to
    /// 50 MiB higher). Returns the run's counts (checked) and its quarantine.
    pub fn each_date<P: Send, E: From<IngestError>>(
        self,
        prepare: impl Fn(&KeptRows) -> P + Sync,
        mut take: impl FnMut(KeptRows, P) -> std::result::Result<(), E>,
    ) -> std::result::Result<(IngestSummary, QuarantineWriter), E> {
        let Staged {
            stager,
            quarantine,
            mut summary,
        } = self;
        let mut tally = Tally::default();
        let dates: Vec<(NaiveDate, Segments)> = stager.buckets.into_iter().collect();
        let names: Vec<NaiveDate> = dates.iter().map(|(d, _)| *d).collect();
        rentix_core::ordered::in_order(
            dates,
            |i| i + 1 + HAND_OVER_DATES,
            |(date, segments)| {
                let (rows, outcome) = KeptRows::dedupe(date, segments);
                let prepared = prepare(&rows);
                Ok((rows, prepared, outcome))
            },
            |i, why| {
                Err(IngestError::Accounting(format!(
                    "deduplicating the rows of {} stopped unexpectedly: {why}",
                    names[i]
                )))
            },
            |done| -> std::result::Result<(), E> {
                let (rows, prepared, outcome) = done?;
                tally.add(&mut summary, outcome);
                take(rows, prepared)
            },
        )?;
        tally.finish(&mut summary, &quarantine)?;
        Ok((summary, quarantine))
    }
}

/// Reads, validates and normalizes `files` as [`ingest`] does, into memory and
/// with no store, up to the dedupe ([`Staged::each_date`]).
pub fn read_in_stages(
    files: &[PathBuf],
    opts: &IngestOptions,
    progress: Progress<'_>,
) -> Result<Staged> {
    check_inputs(files)?;
    let (mapping, normalizer) = prepare(opts)?;
    let mut stager = Stager {
        dir: PathBuf::new(),
        batch_rows: usize::MAX,
        held: 0,
        buckets: BTreeMap::new(),
        spills: BTreeMap::new(),
        seq: 0,
    };
    let mut quarantine = QuarantineWriter::default();
    let mut summary = IngestSummary {
        mapping: mapping
            .as_ref()
            .map_or("canonical".into(), |m| m.name.clone()),
        cutoff: opts.cutoff.clone(),
        ..Default::default()
    };
    let hashed = hash_inputs(files, true)?;
    let mut read_total = 0u64;
    for (path, before) in hashed {
        let display = path.to_string_lossy().to_string();
        let mut fs = FileSummary {
            path: display.clone(),
            input_sha256: before.clone().unwrap_or_default(),
            ..FileSummary::default()
        };
        if let Some(sha) = &before {
            summary.input_sha256.insert(display.clone(), sha.clone());
            if summary.files.iter().any(|f| f.input_sha256 == *sha) {
                fs.already_ingested = true;
                summary.files.push(fs);
                continue;
            }
        }
        let input = Input {
            path,
            mapping: mapping.as_ref(),
            only: None,
        };
        let read_sha = read_file(
            &input,
            &normalizer,
            &mut stager,
            &mut quarantine,
            &mut fs,
            &mut |n| progress(read_total + n),
        )?;
        match &before {
            Some(sha) if read_sha != *sha => {
                return Err(IngestError::Read {
                    path: path.clone(),
                    source: std::io::Error::other(
                        "the file changed while it was being read; read it again once it is complete",
                    ),
                });
            }
            Some(_) => {}
            None => {
                summary.input_sha256.insert(display, read_sha.clone());
                fs.input_sha256 = read_sha;
            }
        }
        read_total += fs.source_rows;
        summary.files.push(fs);
    }
    Ok(Staged {
        stager,
        quarantine,
        summary,
    })
}

/// A file to read: its path, the mapping that reads it (`None`: the canonical
/// layout) and, for a retry, the only row numbers to read.
struct Input<'a> {
    path: &'a Path,
    mapping: Option<&'a Mapping>,
    only: Option<&'a BTreeSet<u64>>,
}

/// Reads, normalizes and stages one file; returns the SHA-256 of the bytes read.
fn read_file(
    input: &Input<'_>,
    normalizer: &Normalizer,
    stager: &mut Stager,
    quarantine: &mut QuarantineWriter,
    fs: &mut FileSummary,
    progress: &mut dyn FnMut(u64),
) -> Result<String> {
    let Input {
        path,
        mapping,
        only,
    } = *input;
    let file_name = path.to_string_lossy().to_string();
    // One copy of the name that every observation of the file points at.
    let shared_name: std::sync::Arc<str> = file_name.as_str().into();
    let before = FileStamp::of(path);
    let file = File::open(path).map_err(|source| IngestError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let (bounded, cut) =
        crate::sizes::LineBound::new(HashingReader::new(file), crate::sizes::MAX_RECORD_BYTES);
    // The header is read by a CSV reader that keeps a copy of the bytes it read:
    // those past the header are where the records start.
    let mut rdr = csv::ReaderBuilder::new()
        .flexible(true)
        .has_headers(true)
        .from_reader(crate::split::Recording::new(bounded));
    let header = read_header(path, &mut rdr, &cut)?;
    check_header(path, &header)?;
    if mapping.is_none_or(Mapping::reads_canonical_layout) {
        fs.unread_columns = crate::mapping::look_alike_columns(&header);
    }
    let mapping = match mapping {
        Some(m) => m.for_header(&header, path)?,
        None => std::borrow::Cow::Owned(Mapping::canonical(&header, path)?),
    };
    let mapping = mapping.bind(&header);
    let one_reader = only.is_some() || one_reader_forced();
    let after_header = rdr.position().clone();
    let (head, stream) = rdr.into_inner().after(after_header.byte());
    let start = Start {
        head,
        line: after_header.line(),
        one_reader,
    };

    // One thread reads the file into chunks of whole records, each cut into parts;
    // the pool parses, validates and normalizes a chunk's parts while the chunk
    // before is staged (spilled when the stage is full). Chunks are staged in file
    // order, so the result does not depend on the thread count or on which side
    // runs ahead. What cannot be cut into parts (an open quote at a line's end, a
    // lone `\r`, a retry of some rows) is read by the one thread and its records
    // validated in parallel.
    let (tx, rx) = std::sync::mpsc::sync_channel::<Result<(u64, Batch)>>(2);
    // A chunk's buffer, once parsed, goes back to be filled again: a fresh
    // megabyte-sized vector per chunk, freed on another thread, was not reused by
    // the allocator before the read ended.
    let (back, spare) = std::sync::mpsc::channel::<Vec<u8>>();
    let file = FileContext {
        name: &file_name,
        header: &header,
    };
    let work = Work {
        header: &header,
        mapping: &mapping,
        normalizer,
        file_name: &shared_name,
        recent: RecentPool::default(),
    };
    let read_sha = std::thread::scope(|scope| -> Result<String> {
        let src = Source {
            path,
            header: &header,
            cut: &cut,
            only,
        };
        let reader = scope.spawn(move || read_stream(stream, start, &src, &tx, &spare));
        let mut parsed: Option<Vec<Vec<Parsed>>> = None;
        let mut spare_out: Vec<Vec<Parsed>> = Vec::new();
        for batch in rx {
            let (rows_seen, batch) = batch?;
            progress(rows_seen);
            let mut out = std::mem::take(&mut spare_out);
            let (staged, done) = rayon::join(
                || match parsed.take() {
                    Some(o) => stage(&file, o, stager, quarantine, fs).map(Some),
                    None => Ok(None),
                },
                || work.parse(batch, &mut out),
            );
            if let Some(bytes) = done? {
                // The reader may have finished: then it is not needed.
                let _ = back.send(bytes);
            }
            if let Some(o) = staged? {
                spare_out = o;
            }
            parsed = Some(out);
        }
        if let Some(o) = parsed {
            stage(&file, o, stager, quarantine, fs)?;
        }
        let (rows, sha) = reader.join().map_err(|_| IngestError::Read {
            path: path.to_path_buf(),
            source: std::io::Error::other("the reading thread stopped unexpectedly"),
        })?;
        fs.source_rows = rows;
        sha.map_err(|source| IngestError::Read {
            path: path.to_path_buf(),
            source,
        })
    })?;
    FileStamp::unchanged_since(before, path)?;
    fs.quarantined = quarantine.count_for(&file_name);
    Ok(read_sha)
}

/// What tells a regular file's versions apart without reading it: its length and
/// modification time (`None` for what is not a regular file, a pipe say, whose
/// length says nothing).
#[derive(Clone, Copy, PartialEq, Eq)]
struct FileStamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl FileStamp {
    fn of(path: &Path) -> Option<Self> {
        let m = std::fs::metadata(path).ok().filter(|m| m.is_file())?;
        Some(Self {
            len: m.len(),
            modified: m.modified().ok(),
        })
    }

    /// Refuses a file cut, extended or rewritten since `before` (its stamp when
    /// its read began): what was read is no version of it. Hashed before reading
    /// only when it could have been read before (a first run or a one-shot reads
    /// each file once), a file truncated mid-read was taken in partially with the
    /// hash of the part read.
    fn unchanged_since(before: Option<Self>, path: &Path) -> Result<()> {
        let Some(before) = before else {
            return Ok(());
        };
        let now = Self::of(path);
        if now == Some(before) {
            return Ok(());
        }
        Err(IngestError::Read {
            path: path.to_path_buf(),
            source: std::io::Error::other(format!(
                "the file changed while it was being read ({} bytes when the read began, {}); nothing was committed or published: read it again once it is complete",
                before.len,
                match now {
                    Some(n) if n.len != before.len => format!("{} bytes after it", n.len),
                    Some(_) => "rewritten in place since".to_string(),
                    None => "gone after it".to_string(),
                }
            )),
        })
    }
}

/// What a header's bytes say the file is when it is not UTF-8 text: compressed, or
/// UTF-16 (a byte-order mark, or NUL bytes between the letters). A gzip file was
/// "not valid UTF-8" and a UTF-16 one had "no column \"kind\"" (a hostile round).
fn not_utf8_text(header: &csv::ByteRecord) -> Option<&'static str> {
    let first = header.get(0).unwrap_or_default();
    if first.starts_with(&[0x1f, 0x8b]) {
        return Some(
            "the file is gzip-compressed: decompress it first (gunzip -k FILE) and read the .csv",
        );
    }
    if first.starts_with(&[0x50, 0x4b, 0x03, 0x04]) {
        return Some(
            "the file is a zip archive (an .xlsx workbook is one): export the sheet as CSV, UTF-8",
        );
    }
    if first.starts_with(&[0xff, 0xfe]) || first.starts_with(&[0xfe, 0xff]) {
        return Some("the file is UTF-16 (its byte-order mark says so): save it as UTF-8 (iconv -f UTF-16 -t UTF-8)");
    }
    if header.iter().any(|f| f.contains(&0)) {
        return Some("the header holds NUL bytes: a UTF-16 file without a byte-order mark? Save it as UTF-8 (iconv -f UTF-16LE -t UTF-8, or UTF-16BE)");
    }
    None
}

/// The header's names (trimmed, a byte-order mark dropped), read by `rdr`;
/// refused when not UTF-8 or longer than a record may be.
fn read_header(
    path: &Path,
    rdr: &mut csv::Reader<crate::split::Recording<Bounded>>,
    cut: &crate::sizes::CutLines,
) -> Result<Vec<String>> {
    let header_bytes = rdr.byte_headers().map_err(|e| IngestError::BadHeader {
        path: path.to_path_buf(),
        detail: e.to_string(),
    })?;
    if let Some(detail) = not_utf8_text(header_bytes) {
        return Err(IngestError::BadHeader {
            path: path.to_path_buf(),
            detail: detail.into(),
        });
    }
    let header: Vec<String> = header_bytes
        .iter()
        .map(|h| {
            std::str::from_utf8(h)
                .map(|s| s.trim().trim_start_matches('\u{feff}').to_string())
                .map_err(|_| IngestError::BadHeader {
                    path: path.to_path_buf(),
                    detail: "the header is not valid UTF-8: a spreadsheet export in Latin-1 or Windows-1252? Save it as UTF-8 (iconv -f WINDOWS-1252 -t UTF-8)".into(),
                })
        })
        .collect::<Result<_>>()?;
    if cut.lock().is_ok_and(|c| c.contains(&1)) {
        return Err(IngestError::BadHeader {
            path: path.to_path_buf(),
            detail: format!(
                "the header line is longer than {} bytes",
                crate::sizes::MAX_RECORD_BYTES
            ),
        });
    }
    Ok(header)
}

/// The file past its header, line-bounded and hashed as it is read.
type Bounded = crate::sizes::LineBound<HashingReader<File>>;

/// Where the records start: the bytes read past the header, and the line one
/// reader numbers the first record with; and whether one reader reads them all.
struct Start {
    head: Vec<u8>,
    line: u64,
    one_reader: bool,
}

#[cfg(test)]
thread_local! {
    /// Tests read a file with one reader, to compare with its parts.
    static ONE_READER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether a test asked for one reader (never outside tests).
fn one_reader_forced() -> bool {
    #[cfg(test)]
    return ONE_READER.with(std::cell::Cell::get);
    #[cfg(not(test))]
    false
}

/// What the reading thread hands over: a chunk whose parts parse on their own
/// (with the lines [`crate::sizes::LineBound`] cut in it, ascending), or records
/// one reader read.
enum Batch {
    Chunk(crate::split::Chunk, Vec<u64>),
    Records(Vec<PendingRecord>),
}

/// A record read, checked and normalized: where it is, its fields when a row of
/// it is refused (the quarantine shows them), a reason found while reading, and
/// its observations or why each was refused.
struct Parsed {
    at: Row,
    fields: Option<Fields>,
    early: Option<(crate::reason::Reason, usize)>,
    outcomes: Outcomes,
}

/// What every record of a file is validated and normalized with.
struct Work<'a> {
    header: &'a [String],
    mapping: &'a BoundMapping<'a>,
    normalizer: &'a Normalizer,
    file_name: &'a std::sync::Arc<str>,
    /// What the workers remember of the rows before, kept from chunk to chunk.
    recent: RecentPool,
}

/// The file's [`Recent`](crate::normalize::Recent)s, lent to the pool's tasks and
/// given back when each ends: a fresh one per task (rayon makes a task per split,
/// more of them the more threads steal) interned every source, GPU and region
/// again and missed every field's first rows, work that grew with the thread count
/// (issue 48). One remembering more texts than [`RecentPool::KEEP_TEXTS`] is
/// dropped, not given back: a file with a new text on every row holds no more.
#[derive(Default)]
struct RecentPool(std::sync::Mutex<Vec<crate::normalize::Recent>>);

/// A [`Recent`](crate::normalize::Recent) lent by a [`RecentPool`].
struct Lent<'a> {
    recent: crate::normalize::Recent,
    pool: &'a RecentPool,
}

impl RecentPool {
    const KEEP_TEXTS: usize = 4096;

    fn lend(&self) -> Lent<'_> {
        let recent = self
            .0
            .lock()
            .ok()
            .and_then(|mut p| p.pop())
            .unwrap_or_default();
        Lent { recent, pool: self }
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        if self.recent.texts() <= RecentPool::KEEP_TEXTS {
            if let Ok(mut p) = self.pool.0.lock() {
                p.push(std::mem::take(&mut self.recent));
            }
        }
    }
}

impl Work<'_> {
    /// Parses (a chunk's parts) and normalizes a batch in parallel into `out`, one
    /// vector per part in file order (vectors already there are filled again).
    /// Returns a chunk's buffer, to be read into again.
    fn parse(&self, batch: Batch, out: &mut Vec<Vec<Parsed>>) -> Result<Option<Vec<u8>>> {
        match batch {
            Batch::Chunk(chunk, cut) => {
                out.resize_with(chunk.parts.len(), Vec::new);
                let bytes = std::sync::Arc::new(chunk.bytes);
                chunk
                    .parts
                    .par_iter()
                    .zip(out.par_iter_mut())
                    .map_init(
                        || self.recent.lend(),
                        |lent, (part, o)| self.parse_part(&bytes, part, &cut, &mut lent.recent, o),
                    )
                    .collect::<Result<()>>()?;
                // Every reader let the chunk go: its buffer is filled again.
                Ok(std::sync::Arc::try_unwrap(bytes).ok())
            }
            Batch::Records(records) => {
                // In parts of PARALLEL_PART records, each into its own vector.
                const PARALLEL_PART: usize = 256;
                let parts = records.len().div_ceil(PARALLEL_PART);
                out.resize_with(parts, Vec::new);
                let mut records = records.into_iter();
                let parts: Vec<Vec<PendingRecord>> = (0..parts)
                    .map(|_| records.by_ref().take(PARALLEL_PART).collect())
                    .collect();
                parts.into_par_iter().zip(out.par_iter_mut()).for_each_init(
                    || self.recent.lend(),
                    |lent, (part, o)| {
                        o.clear();
                        for (at, fields, early) in part {
                            self.settle(at, fields, early, &mut lent.recent, o);
                        }
                    },
                );
                Ok(None)
            }
        }
    }

    /// Parses the records of one part of `chunk` into `out`, numbered from the
    /// part's first line and row, with the thread's reader (building a reader's
    /// parser costs about as much as parsing a thousand bytes; one per task cost
    /// 1% of a one-shot at two cores).
    fn parse_part(
        &self,
        chunk: &std::sync::Arc<Vec<u8>>,
        part: &crate::split::Part,
        cut: &[u64],
        recent: &mut crate::normalize::Recent,
        out: &mut Vec<Parsed>,
    ) -> Result<()> {
        thread_local! {
            static READER: std::cell::RefCell<Option<csv::Reader<crate::split::Feed>>> =
                const { std::cell::RefCell::new(None) };
        }
        let new_reader = || {
            csv::ReaderBuilder::new()
                .flexible(true)
                .has_headers(false)
                .from_reader(crate::split::Feed::default())
        };
        let mut parse = |rdr: &mut csv::Reader<crate::split::Feed>| {
            let read = crate::split::Feed::start(rdr, chunk, part.start..part.end)
                .map_err(|e| self.csv_error(part.rows_before + 1, e))
                .and_then(|()| self.read_part(rdr, part, cut, recent, out));
            crate::split::Feed::release(rdr);
            read
        };
        READER.with(|cell| match cell.try_borrow_mut() {
            Ok(mut rdr) => parse(rdr.get_or_insert_with(new_reader)),
            // The thread's reader is in use further up this thread's stack.
            Err(_) => parse(&mut new_reader()),
        })
    }

    /// A CSV error at data row `row` of the file.
    fn csv_error(&self, row: u64, e: csv::Error) -> IngestError {
        IngestError::Csv {
            path: PathBuf::from(self.file_name.as_ref()),
            row,
            detail: e.to_string(),
        }
    }

    /// Reads the records of a part `rdr` was started on into `out`.
    fn read_part(
        &self,
        rdr: &mut csv::Reader<crate::split::Feed>,
        part: &crate::split::Part,
        cut: &[u64],
        recent: &mut crate::normalize::Recent,
        out: &mut Vec<Parsed>,
    ) -> Result<()> {
        out.clear();
        // The record read into; its buffers move into the fields and come back
        // unless a row of it is refused (the quarantine keeps them).
        let mut spare: Option<csv::ByteRecord> = None;
        let mut row = part.rows_before;
        loop {
            let mut record = spare.take().unwrap_or_default();
            let more = rdr
                .read_byte_record(&mut record)
                .map_err(|e| self.csv_error(row + 1, e))?;
            if !more {
                return Ok(());
            }
            row += 1;
            // The primer is line 1 of the part's reader.
            let line = part.line - 2 + record.position().map_or(2, |p| p.line());
            let too_long = cut.binary_search(&line).is_ok();
            let (fields, early) = classify(record, too_long, self.header);
            spare = self.settle(Row { row, line }, fields, early, recent, out);
        }
    }

    /// Maps, validates and normalizes one record (nothing for a record refused
    /// while reading) into `out`. Its fields are kept only when a row of it is
    /// refused; else its buffers are handed back to be read into.
    fn settle(
        &self,
        at: Row,
        fields: Fields,
        early: Option<(crate::reason::Reason, usize)>,
        recent: &mut crate::normalize::Recent,
        out: &mut Vec<Parsed>,
    ) -> Option<csv::ByteRecord> {
        // Built in its place in `out`: a record's outcomes are a few hundred bytes.
        out.push(Parsed {
            at,
            fields: None,
            early,
            outcomes: match (&early, &fields) {
                (None, Fields::Text(text)) => self.outcomes(text, at.row, recent),
                _ => Outcomes::new(),
            },
        });
        let last = out.last_mut()?;
        if early.is_none() && last.outcomes.iter().all(std::result::Result::is_ok) {
            return Some(fields.into_bytes());
        }
        last.fields = Some(fields);
        None
    }

    /// A record's observations (a mapping may make several) or why each was
    /// refused.
    fn outcomes(
        &self,
        fields: &csv::StringRecord,
        row: u64,
        recent: &mut crate::normalize::Recent,
    ) -> Outcomes {
        // One pass over the record's bytes; its mapped fields are looked at one by
        // one only when it holds a control character somewhere.
        let control = may_hold_control(fields.as_slice().as_bytes());
        let fields: smallvec::SmallVec<[&str; 32]> = fields.iter().collect();
        let mut out = Outcomes::new();
        self.mapping.each(&fields, |raw| {
            out.push(self.outcome(raw, row, recent, control));
        });
        out
    }

    /// One candidate's observation, or why it is refused.
    fn outcome(
        &self,
        raw: &crate::raw::RawObservation<'_>,
        row: u64,
        recent: &mut crate::normalize::Recent,
        control: bool,
    ) -> std::result::Result<StoredObservation, Rejection> {
        if let Some((field, n)) = raw.too_long(crate::sizes::MAX_FIELD_BYTES) {
            return Err(Rejection::new(
                crate::reason::Reason::FieldTooLong,
                field,
                format!(
                    "{n} bytes; a field may have at most {}",
                    crate::sizes::MAX_FIELD_BYTES
                ),
            ));
        }
        if let Some((field, at, c)) = control.then(|| raw.control_character()).flatten() {
            return Err(Rejection::new(
                crate::reason::Reason::ControlCharacter,
                field,
                format!(
                    "U+{:04X} at byte {at}: a field may not hold a control character (a NUL, a line break or tab inside the cell, an escape)",
                    u32::from(c)
                ),
            ));
        }
        self.normalizer
            .normalize_shared(raw, self.file_name, row, recent)
            .map(|obs| {
                let key = dedupe_key(&obs, raw.obs_id.is_some());
                StoredObservation {
                    obs,
                    dedupe_key: key,
                }
            })
            .map_err(|mut rej| {
                let others = self.normalizer.other_problems(raw, &rej);
                rej.detail = crate::normalize::with_others(rej.detail, &others);
                rej
            })
    }
}

/// A record's fields, and the reason it is refused while reading, if it is: cut
/// to its first bytes (`too_long`), the header again or a totals row, the wrong
/// number of fields, or a field that is not UTF-8.
fn classify(
    record: csv::ByteRecord,
    too_long: bool,
    header: &[String],
) -> (Fields, Option<(crate::reason::Reason, usize)>) {
    use crate::reason::Reason;
    let refused = if too_long {
        Some(Reason::RecordTooLong)
    } else if let Some(reason) = not_a_data_row(&record, header) {
        Some(reason)
    } else if record.len() != header.len() {
        Some(Reason::WrongColumnCount)
    } else {
        None
    };
    match refused {
        Some(r @ Reason::RecordTooLong) => (Fields::of(record).0, Some((r, usize::MAX))),
        Some(reason) => (Fields::Bytes(record), Some((reason, usize::MAX))),
        None => {
            let (fields, bad) = Fields::of(record);
            (fields, bad.map(|f| (Reason::InvalidUtf8, f)))
        }
    }
}

/// Each record's observations (a mapping may make several of one record) or why
/// each was refused; one, inline, for nearly every record.
type Outcomes = smallvec::SmallVec<[std::result::Result<StoredObservation, Rejection>; 1]>;

/// The input file as quarantine rows name it.
struct FileContext<'a> {
    name: &'a str,
    header: &'a [String],
}

/// Stages parsed records in file order: observations to the stager, refusals to
/// the quarantine, counts to the file's summary. Returns the vectors, emptied, to
/// be filled again.
fn stage(
    file: &FileContext<'_>,
    mut parts: Vec<Vec<Parsed>>,
    stager: &mut Stager,
    quarantine: &mut QuarantineWriter,
    fs: &mut FileSummary,
) -> Result<Vec<Vec<Parsed>>> {
    let header = file.header;
    for read in parts.iter_mut().flat_map(|p| p.drain(..)) {
        let Parsed {
            at,
            fields,
            early,
            outcomes: outcome,
        } = read;
        let lossy = || fields.as_ref().map_or_else(Vec::new, Fields::lossy);
        let reject = |reason, field: &str, detail: String| QuarantineRow {
            file: file.name.to_string(),
            row: at.row,
            line: at.line,
            reason,
            field: field.to_string(),
            detail,
            raw: header_pairs(header, &lossy()),
        };
        match early {
            Some((reason @ crate::reason::Reason::RecordTooLong, _)) => {
                fs.rows_read += 1;
                quarantine.push(reject(
                    reason,
                    "",
                    format!(
                        "the record is longer than {} bytes; the fields shown are those of its first {} bytes",
                        crate::sizes::MAX_RECORD_BYTES,
                        crate::sizes::MAX_RECORD_BYTES
                    ),
                ))?;
            }
            Some((reason @ crate::reason::Reason::RepeatedHeader, _)) => {
                fs.rows_read += 1;
                quarantine.push(reject(
                    reason,
                    "",
                    "the header row again: files pasted together, or a spreadsheet export of several sheets; not data".into(),
                ))?;
            }
            Some((reason @ crate::reason::Reason::TotalsRow, _)) => {
                fs.rows_read += 1;
                let label = lossy().into_iter().find(|f| !f.trim().is_empty());
                quarantine.push(reject(
                    reason,
                    "",
                    format!(
                        "a totals row (its first filled cell is {:?}): a spreadsheet's sum of other rows, not an observation; it is never read as a price (delete it from the export to silence this)",
                        label.unwrap_or_default()
                    ),
                ))?;
            }
            Some((reason @ crate::reason::Reason::WrongColumnCount, _)) => {
                fs.rows_read += 1;
                quarantine.push(reject(
                    reason,
                    "",
                    format!(
                        "{} fields, header has {}",
                        fields.as_ref().map_or(0, Fields::len),
                        header.len()
                    ),
                ))?;
            }
            Some((reason, bad)) => {
                fs.rows_read += 1;
                quarantine.push(reject(
                    reason,
                    &header[bad],
                    "field is not valid UTF-8".into(),
                ))?;
            }
            None => {
                for o in outcome {
                    fs.rows_read += 1;
                    match o {
                        Ok(obs) => {
                            if obs.obs.operator_tier.is_some() {
                                fs.rated_rows += 1;
                            } else {
                                fs.unrated_rows += 1;
                            }
                            stager.add(obs)?
                        }
                        Err(rej) => {
                            if let (crate::reason::Reason::UnknownGpu, Some(v)) =
                                (rej.reason, &rej.value)
                            {
                                *fs.unknown_gpus.entry(v.clone()).or_default() += 1;
                            }
                            quarantine.push(reject(rej.reason, &rej.field, rej.detail))?
                        }
                    }
                }
            }
        }
    }
    Ok(parts)
}

/// The reading thread: reads the stream into chunks of whole records cut into
/// parts (a chunk's buffer read into one `spare` hands back when there is one), or,
/// from where records cannot be cut (and for a retry of some rows, `src.only`), reads
/// them with one reader. Sends each batch in order with the number of records read
/// so far; stops at the first error (sent too), or when the receiver hangs up.
/// Returns the records in the file and the SHA-256 of its bytes once it has read
/// them all (an error if it stopped before).
fn read_stream(
    mut stream: Bounded,
    start: Start,
    src: &Source<'_>,
    tx: &std::sync::mpsc::SyncSender<Result<(u64, Batch)>>,
    spare: &std::sync::mpsc::Receiver<Vec<u8>>,
) -> (u64, std::io::Result<String>) {
    let Source { path, cut, .. } = *src;
    use crate::split::Step;
    let stopped = || Err(std::io::Error::other("reading stopped before the end"));
    let mut split = crate::split::Splitter::new(start.head, start.line);
    let (rest, line, rows) = if start.one_reader {
        split.rest()
    } else {
        loop {
            let first_line = split.line();
            match split.next(&mut stream, spare.try_recv().ok()) {
                Ok(Step::Chunk(chunk)) => {
                    let lines = cut.lock().map_or_else(
                        |_| Vec::new(),
                        |c| c.range(first_line..=split.line()).copied().collect(),
                    );
                    if tx
                        .send(Ok((split.rows(), Batch::Chunk(chunk, lines))))
                        .is_err()
                    {
                        return (split.rows(), stopped());
                    }
                }
                Ok(Step::Serial { rest, line, rows }) => break (rest, line, rows),
                Ok(Step::End) => return (split.rows(), stream.into_inner().finish()),
                Err(e) => {
                    let _ = tx.send(Err(IngestError::Csv {
                        path: path.to_path_buf(),
                        row: split.rows() + 1,
                        detail: e.to_string(),
                    }));
                    return (split.rows(), stopped());
                }
            }
        }
    };
    let mut rdr = csv::ReaderBuilder::new()
        .flexible(true)
        .has_headers(false)
        .from_reader(std::io::Cursor::new([crate::split::PRIMER, &rest].concat()).chain(stream));
    if let Err(e) = crate::split::ReadAfterPrimer::skip_primer(&mut rdr) {
        let _ = tx.send(Err(IngestError::Csv {
            path: path.to_path_buf(),
            row: rows + 1,
            detail: e.to_string(),
        }));
        return (
            rows,
            Err(std::io::Error::other("reading stopped before the end")),
        );
    }
    read_records(rdr, (line, rows), src, tx)
}

/// What the reading thread reads: the file (its path and header), the lines its
/// [`crate::sizes::LineBound`] cut, and for a retry the only rows to read.
#[derive(Clone, Copy)]
struct Source<'a> {
    path: &'a Path,
    header: &'a [String],
    cut: &'a crate::sizes::CutLines,
    only: Option<&'a BTreeSet<u64>>,
}

/// Reads the records of `rdr` (its [`crate::split::PRIMER`] read; the first record
/// after it starts on line `from.0` after `from.1` rows) with one reader, in
/// batches of [`PARALLEL_BATCH`], for [`read_stream`]; with `src.only`, just the
/// records of those row numbers.
fn read_records(
    mut rdr: csv::Reader<std::io::Chain<std::io::Cursor<Vec<u8>>, Bounded>>,
    from: (u64, u64),
    src: &Source<'_>,
    tx: &std::sync::mpsc::SyncSender<Result<(u64, Batch)>>,
) -> (u64, std::io::Result<String>) {
    let Source {
        path,
        header,
        cut,
        only,
    } = *src;
    let stopped = || Err(std::io::Error::other("reading stopped before the end"));
    let mut batch: Vec<PendingRecord> = Vec::with_capacity(PARALLEL_BATCH);
    let mut record = csv::ByteRecord::new();
    let (first_line, mut row) = from;
    // The primer is line 1 of this reader.
    let line_of = |r: &csv::ByteRecord| first_line - 2 + r.position().map_or(2, |p| p.line());
    // Bytes the batch holds: a batch is sent at PARALLEL_BATCH records or at
    // BATCH_BYTES, so that long records cannot make it large.
    let mut held = 0usize;
    loop {
        let more = match rdr.read_byte_record(&mut record) {
            Ok(more) => more,
            Err(e) => {
                let _ = tx.send(Err(IngestError::Csv {
                    path: path.to_path_buf(),
                    row: row + 1,
                    detail: e.to_string(),
                }));
                return (row, stopped());
            }
        };
        if more {
            row += 1;
            // One pass over the record's buffer; the field is looked for only in a
            // record that has a line break.
            let breaks = |b: &[u8]| memchr::memchr2(b'\n', b'\r', b).is_some();
            if let Some(f) = breaks(record.as_slice())
                .then(|| record.iter().position(breaks))
                .flatten()
            {
                let line = line_of(&record);
                let _ = tx.send(Err(IngestError::Csv {
                    path: path.to_path_buf(),
                    row,
                    detail: format!(
                        "field {:?} of the record starting on line {line} runs over several lines: a quoted line break, or a stray quote that swallows every line up to the next quote. A record is one line here; refusing the file rather than reading many lines as one row (write the field on one line, or remove the stray quote)",
                        header.get(f).map_or("?", String::as_str)
                    ),
                }));
                return (row, stopped());
            }
            if only.is_some_and(|rows| !rows.contains(&row)) {
                continue;
            }
            let line = line_of(&record);
            let too_long = cut.lock().is_ok_and(|c| c.contains(&line));
            held += record.as_slice().len() + 8 * record.len();
            let (fields, early) = classify(std::mem::take(&mut record), too_long, header);
            batch.push((Row { row, line }, fields, early));
        }
        if batch.len() >= PARALLEL_BATCH || held >= BATCH_BYTES || !more {
            held = 0;
            let full = std::mem::replace(&mut batch, Vec::with_capacity(PARALLEL_BATCH));
            if tx.send(Ok((row, Batch::Records(full)))).is_err() {
                return (row, stopped());
            }
            if !more {
                let (_, bounded) = rdr.into_inner().into_inner();
                return (row, bounded.into_inner().finish());
            }
        }
    }
}

/// A record that is not a data row whatever its fields say: the header again (half
/// its cells or more, and at least three, the header's names in their places,
/// compared without case, spaces, hyphens and underscores: a snapshot file holds
/// its source's header row with `GPU-Type` where the first one says `GPU Type`), or a spreadsheet's
/// totals row: at most half its cells filled, the first `Total`, `Totals`, `Grand
/// total`, `Subtotal` (alone, or followed by a colon, a parenthesis or a space and
/// more words) or `Sum`.
/// Whether a cell and a header name are the same name: ASCII case, spaces,
/// hyphens and underscores aside (other bytes as they are); an empty name never.
fn same_name(cell: &[u8], name: &[u8]) -> bool {
    let mut a = cell.iter().filter(|c| !matches!(c, b' ' | b'-' | b'_'));
    let mut b = name.iter().filter(|c| !matches!(c, b' ' | b'-' | b'_'));
    let mut any = false;
    loop {
        match (a.next(), b.next()) {
            (None, None) => return any,
            (Some(x), Some(y)) if x.eq_ignore_ascii_case(y) => any = true,
            _ => return false,
        }
    }
}

fn not_a_data_row(record: &csv::ByteRecord, header: &[String]) -> Option<crate::reason::Reason> {
    // Every record passes here: compared byte by byte, nothing allocated (a
    // lowercased copy per field cost a fifth of an ingest's CPU).
    // The header again when at least half its names (three at least) are in their
    // places; the count stops once the names left cannot reach that (a data row
    // differs in nearly every cell).
    let need = 3.min(header.len()).max(header.len().div_ceil(2));
    let pairs = record.len().min(header.len());
    let mut same = 0;
    for (seen, (f, h)) in record.iter().zip(header).enumerate() {
        if same_name(f, h.as_bytes()) {
            same += 1;
            if same >= need {
                return Some(crate::reason::Reason::RepeatedHeader);
            }
        } else if same + (pairs - seen - 1) < need {
            break;
        }
    }
    // Most cells of a data row are filled; a totals row has its label and a few
    // sums. The count stops once more than half are filled.
    let half = header.len().max(record.len());
    let mut filled = 0;
    for f in record.iter() {
        if !f.trim_ascii().is_empty() {
            filled += 1;
            if 2 * filled > half {
                return None;
            }
        }
    }
    totals_label(record)
}

/// A record of few filled cells whose first is a totals label (`Total`, `Grand
/// total (USD)`, `sum:`): a spreadsheet's sum of other rows.
fn totals_label(record: &csv::ByteRecord) -> Option<crate::reason::Reason> {
    let cell = |f: &[u8]| String::from_utf8_lossy(f).trim().to_ascii_lowercase();
    let first = record.iter().map(cell).find(|c| !c.is_empty())?;
    let label = first.trim_end_matches(':');
    let is_totals = label == "sum"
        || ["total", "totals", "grand total", "subtotal"]
            .iter()
            .any(|t| {
                label == *t
                    || label
                        .strip_prefix(t)
                        .is_some_and(|rest| rest.starts_with([' ', ':', '(']))
            });
    is_totals.then_some(crate::reason::Reason::TotalsRow)
}

/// Refuses a header that cannot be read as columns: empty, a name given twice (the
/// last would silently win), or a single column that holds semicolons.
fn check_header(path: &Path, header: &[String]) -> Result<()> {
    let bad = |detail: String| IngestError::BadHeader {
        path: path.to_path_buf(),
        detail,
    };
    if header.len() > crate::sizes::MAX_HEADER_COLUMNS {
        return Err(bad(format!(
            "{} columns is more than the {} a header may have",
            header.len(),
            crate::sizes::MAX_HEADER_COLUMNS
        )));
    }
    if header.iter().all(String::is_empty) {
        return Err(bad(
            "the file is empty or its first line is blank: a header row is needed".into(),
        ));
    }
    if header.len() == 1 && header[0].contains(';') {
        return Err(bad(format!(
            "one column named {:?}: the file looks semicolon-delimited; rentix reads comma-separated CSV (save it with commas)",
            header[0].chars().take(80).collect::<String>()
        )));
    }
    if let Some((i, h)) = header
        .iter()
        .enumerate()
        .find(|(_, h)| h.contains(['\n', '\r']))
    {
        return Err(bad(format!(
            "column {} ({:?}) runs over several lines: a quoted line break, or a stray quote that swallows every line up to the next quote. A record is one line here; refusing the file (write the header on one line, or remove the stray quote)",
            i + 1,
            h.chars().take(80).collect::<String>()
        )));
    }
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, h) in header.iter().enumerate() {
        if let Some(first) = seen.insert(h.as_str(), i) {
            return Err(bad(format!(
                "column {h:?} appears twice (columns {} and {}); rename one",
                first + 1,
                i + 1
            )));
        }
    }
    Ok(())
}

/// A quarantine row's `raw`: each field by its column name (`_extra_N` beyond the
/// header, at most [`crate::sizes::QUARANTINE_EXTRA_FIELDS`] of them), each value cut to
/// [`crate::sizes::QUARANTINE_VALUE_BYTES`].
fn header_pairs(header: &[String], fields: &[String]) -> Vec<(String, String)> {
    let n = header
        .len()
        .max(fields.len())
        .min(header.len() + crate::sizes::QUARANTINE_EXTRA_FIELDS);
    (0..n)
        .map(|i| {
            let name = header
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("_extra_{}", i + 1 - header.len()));
            let value = fields.get(i).cloned().unwrap_or_default();
            (name, crate::sizes::prefix(value))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_scan_misses_no_control_character() {
        // Every string holding a control character is flagged by the one-pass scan
        // (it may flag more: the precise check per field decides).
        use proptest::prelude::*;
        proptest!(|(s in "\\PC{0,40}[\\x00-\\x1f\\x7f-\\u{9f}]?\\PC{0,40}")| {
            if s.chars().any(char::is_control) {
                prop_assert!(may_hold_control(s.as_bytes()), "{:?}", s);
            }
        });
        assert!(!may_hold_control("H100 SXM, Zürich – €2.50".as_bytes()));
        assert!(may_hold_control("a\u{85}b".as_bytes()));
    }

    // Moved from the store's merge module: it runs the whole pipeline (rentix-store
    // cannot depend on rentix-ingest).
    /// Two days of trades from four sources, every fifth row sent again later (an
    /// identical duplicate) and every seventh again at another price (a conflict).
    fn csv() -> String {
        let mut rows = vec!["kind,observed_at,source,gpu,scope,term,price,price_unit,currency,obs_id,quantity_gpu_hours".to_string()];
        let row = |i: usize, price: f64| {
            format!(
                "trade,2025-03-0{}T{:02}:{:02}:00Z,s{},h100-sxm-80gb,vm,on-demand,{price:.3},gpu_hour,USD,id{i},{}",
                1 + i % 2,
                i % 24,
                i % 60,
                i % 4,
                100 + i
            )
        };
        for i in 0..120 {
            rows.push(row(i, 2.0 + i as f64 * 0.001));
            if i >= 30 && i % 5 == 0 {
                rows.push(row(i - 30, 2.0 + (i - 30) as f64 * 0.001));
            }
            if i >= 20 && i % 7 == 0 {
                rows.push(row(i - 20, 9.0));
            }
        }
        rows.join("\n") + "\n"
    }

    /// The store's rows, in order, with where each came from.
    fn rows(store: &std::path::Path) -> Vec<String> {
        Store::open(store)
            .unwrap()
            .read(None, None)
            .unwrap()
            .iter()
            .map(|r| {
                format!(
                    "{}|{}|{}|{}",
                    r.dedupe_key,
                    rentix_store::content_key(&r.obs),
                    r.obs.input_row,
                    r.obs.usd_per_gpu_hour.get()
                )
            })
            .collect()
    }

    /// A cut-off, mapping or FX table that cannot be used is refused before the
    /// store exists: a library caller's typo left an empty store behind.
    #[test]
    fn a_lent_recent_comes_back_unless_it_remembers_too_much() {
        let pool = RecentPool::default();
        let first = {
            let mut lent = pool.lend();
            lent.recent.share("Cumulus Cloud")
        };
        // The next task gets what the last one remembered: the same shared text.
        let again = pool.lend().recent.share("Cumulus Cloud");
        assert!(std::sync::Arc::ptr_eq(&first, &again));
        {
            let mut lent = pool.lend();
            for i in 0..=RecentPool::KEEP_TEXTS {
                lent.recent.share(&format!("region-{i}"));
            }
        }
        // Grown past the bound, it was dropped: a fresh one is lent.
        assert_eq!(pool.lend().recent.texts(), 0);
    }

    #[test]
    fn a_bad_cutoff_is_refused_before_the_store_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("in.csv");
        std::fs::write(&file, csv()).unwrap();
        let store = dir.path().join("store");
        let opts = IngestOptions {
            cutoff: Cutoff {
                time: "25:99".into(),
                timezone: "UTC".into(),
            },
            ..Default::default()
        };
        let e = ingest(&store, std::slice::from_ref(&file), &opts, &mut |_| {}).unwrap_err();
        assert!(
            matches!(&e, IngestError::Cutoff { value, .. } if value == "25:99 UTC"),
            "{e}"
        );
        assert!(!store.exists());
    }

    #[test]
    fn merging_in_passes_stores_what_memory_would() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("in.csv");
        std::fs::write(&file, csv()).unwrap();
        let run = |name: &str, batch_rows: usize| {
            let store = dir.path().join(name);
            let opts = IngestOptions {
                batch_rows,
                ..Default::default()
            };
            let s = ingest(&store, std::slice::from_ref(&file), &opts, &mut |_| {}).unwrap();
            (s, rows(&store))
        };
        // Four-row batches: about twenty sections a day and runs of four survivors,
        // merged in passes of three.
        let (merged, merged_rows) = run("merged", 4);
        let (whole, whole_rows) = run("whole", 1_000_000);
        assert!(merged.duplicates_within_run > 0 && merged.conflicts > 0);
        assert_eq!(merged_rows, whole_rows);
        assert_eq!(
            (
                merged.accepted,
                merged.duplicates_within_run,
                merged.conflicts
            ),
            (whole.accepted, whole.duplicates_within_run, whole.conflicts)
        );
        assert_eq!(merged.conflict_examples, whole.conflict_examples);
        assert!(!dir.path().join("merged/staging").exists());
    }

    const HEADER: &str = "kind,observed_at,source,gpu,scope,term,price,price_unit,currency\n";

    fn listing(source: &str, price: &str) -> String {
        format!("listing,2025-03-03T12:00:00Z,{source},h100-sxm-80gb,vm,on-demand,{price},gpu_hour,USD\n")
    }

    /// A run that fails while it reads (here the second file's header lacks a
    /// column, after the first file's rows were spilled) leaves nothing in the
    /// store, its spills included; a run that did not finish (its staging
    /// directory left, as a kill leaves it) is listed by `store check`.
    #[test]
    fn a_run_that_fails_reading_leaves_no_spills_and_a_killed_one_is_listed() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.csv");
        let bad = dir.path().join("bad.csv");
        let mut text = String::from(HEADER);
        for i in 0..500 {
            text.push_str(&listing(&format!("s{i}"), "2.5"));
        }
        std::fs::write(&a, &text).unwrap();
        std::fs::write(&bad, "kind,observed_at\nlisting,2025-03-03T12:00:00Z\n").unwrap();
        let store = dir.path().join("store");
        let opts = IngestOptions {
            batch_rows: 100,
            ..IngestOptions::default()
        };
        let err = ingest(&store, &[a.clone(), bad], &opts, &mut |_| {}).unwrap_err();
        assert!(err.to_string().contains("bad.csv"), "{err}");
        assert!(
            !store.join("staging").exists(),
            "the failed run's spills are left"
        );

        ingest(&store, &[a], &opts, &mut |_| {}).unwrap();
        let killed = store.join("staging").join("run-000009");
        std::fs::create_dir_all(&killed).unwrap();
        std::fs::write(killed.join("spill-000001.bin"), b"x").unwrap();
        let report = rentix_store::check_store(&Store::open(&store).unwrap());
        assert_eq!(report.uncommitted_files, ["staging/run-000009/"]);
    }

    /// b.csv is hashed, then rewritten while a.csv is read (from the progress
    /// callback), then read: the run must refuse it, not record the old hash with the
    /// new rows (the old bytes would then count as ingested, their rows never in).
    #[test]
    fn a_file_rewritten_between_hashing_and_reading_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.csv");
        let b = dir.path().join("b.csv");
        std::fs::write(&a, format!("{HEADER}{}", listing("a", "2.5"))).unwrap();
        std::fs::write(&b, format!("{HEADER}{}", listing("b", "2.6"))).unwrap();
        let store = dir.path().join("store");
        let mut rewritten = false;
        let mut progress = |_: u64| {
            if !rewritten {
                std::fs::write(&b, format!("{HEADER}{}", listing("b", "9.9"))).unwrap();
                rewritten = true;
            }
        };
        let err = ingest(
            &store,
            &[a.clone(), b.clone()],
            &IngestOptions::default(),
            &mut progress,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("b.csv") && err.contains("changed while"),
            "{err}"
        );
        assert!(Store::open(&store).unwrap().runs().unwrap().is_empty());

        // Once it stops changing, the file is ingested with the hash of what was read.
        let s = ingest(
            &store,
            &[a, b.clone()],
            &IngestOptions::default(),
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(s.accepted, 2);
        assert_eq!(s.files[1].input_sha256, sha256_file(&b).unwrap());
    }

    /// A file cut while it is read (here from the progress callback, once the
    /// first chunk is parsed) is refused, by the ingest into an empty store and by
    /// the one-shot's read, neither of which hashes a lone file before reading it:
    /// it was taken in partially, its run recording the hash of the part read.
    #[test]
    fn a_file_truncated_while_it_is_read_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.csv");
        // About 4 MB: several chunks, so the read is under way at the first report.
        let mut text = String::from(HEADER);
        for i in 0..40_000 {
            text.push_str(&listing(
                &format!("s{}", i % 7),
                &format!("2.{:04}", i % 9_000),
            ));
        }
        let truncating = |a: &Path| {
            let a = a.to_path_buf();
            let mut cut = false;
            move |_: u64| {
                if !cut {
                    let f = std::fs::OpenOptions::new().write(true).open(&a).unwrap();
                    f.set_len(1_000_000).unwrap();
                    cut = true;
                }
            }
        };
        std::fs::write(&a, &text).unwrap();
        let store = dir.path().join("store");
        let err = ingest(
            &store,
            std::slice::from_ref(&a),
            &IngestOptions::default(),
            &mut truncating(&a),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("a.csv") && err.contains("changed while"),
            "{err}"
        );
        assert!(Store::open(&store).unwrap().runs().unwrap().is_empty());

        std::fs::write(&a, &text).unwrap();
        let err = read_in_stages(
            std::slice::from_ref(&a),
            &IngestOptions::default(),
            &mut truncating(&a),
        )
        .err()
        .expect("a file cut mid-read is refused")
        .to_string();
        assert!(
            err.contains("changed while") && err.contains("1000000 bytes after"),
            "{err}"
        );

        // Whole and unchanged, it is read.
        std::fs::write(&a, &text).unwrap();
        let s = ingest(&store, &[a], &IngestOptions::default(), &mut |_| {}).unwrap();
        assert_eq!(s.rows_read, 40_000);
    }

    /// A file that could not have been read before (a store with no run, no other
    /// input of its size) is hashed once, as it is read, and its run records that
    /// hash; once the store has a run, every input is hashed before reading again,
    /// and a file rewritten in between is refused whatever its size.
    #[test]
    fn inputs_are_hashed_before_reading_only_when_they_could_repeat() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.csv");
        let b = dir.path().join("b.csv");
        let c = dir.path().join("c.csv");
        std::fs::write(&a, format!("{HEADER}{}", listing("a", "2.5"))).unwrap();
        std::fs::write(&b, format!("{HEADER}{}", listing("bb", "2.6"))).unwrap();
        std::fs::write(&c, format!("{HEADER}{}", listing("ccc", "2.7"))).unwrap();
        let store = dir.path().join("store");
        let first = ingest(
            &store,
            std::slice::from_ref(&a),
            &IngestOptions::default(),
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(first.files[0].input_sha256, sha256_file(&a).unwrap());
        assert_eq!(
            first.input_sha256[&a.to_string_lossy().to_string()],
            sha256_file(&a).unwrap()
        );
        let mut rewritten = false;
        let mut progress = |_: u64| {
            if !rewritten {
                std::fs::write(&c, format!("{HEADER}{}", listing("ccc", "9.9"))).unwrap();
                rewritten = true;
            }
        };
        let err = ingest(
            &store,
            &[b.clone(), c.clone()],
            &IngestOptions::default(),
            &mut progress,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("c.csv") && err.contains("changed while"),
            "{err}"
        );
        // The file read before is known by its hash; the new ones are read.
        let s = ingest(
            &store,
            &[a.clone(), b.clone(), c.clone()],
            &IngestOptions::default(),
            &mut |_| {},
        )
        .unwrap();
        assert!(s.files[0].already_ingested);
        assert_eq!(s.accepted, 2);
        for (f, p) in s.files.iter().zip([&a, &b, &c]) {
            assert_eq!(f.input_sha256, sha256_file(p).unwrap());
        }
    }

    /// The hash of the bytes read equals the hash of the file, whatever the reader
    /// left unread (the CSV reader stops at its last record).
    #[test]
    fn hashing_reader_hashes_every_byte() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f.csv");
        std::fs::write(&f, "x\n1\n2\n\n\n").unwrap();
        let mut r = HashingReader::new(File::open(&f).unwrap());
        let mut two = [0u8; 2];
        r.read_exact(&mut two).unwrap();
        // From `printf 'x\n1\n2\n\n\n' | sha256sum`.
        let want = "500c5bf8464e1601bec17cbd9f563db69a382d6796e3fdb1192520ea2a7ce13e";
        assert_eq!(r.finish().unwrap(), want);
        assert_eq!(sha256_file(&f).unwrap(), want);
    }

    /// A file of several chunks read in parts: about 3.5 MB of rows with blank
    /// lines, refused rows of every kind read (a field not UTF-8, the wrong number
    /// of fields, the header again, a totals row, a record past the size bound),
    /// quoted fields with commas and duplicates. It gives, row for row, what one
    /// reader gives (the path a retry takes): the rows with their row numbers, the
    /// quarantine with its lines and fields, the counts and the input's hash.
    fn several_chunks(crlf: bool, open_quote_at: Option<usize>) -> Vec<u8> {
        let header = "kind,observed_at,source,gpu,scope,term,price,price_unit,currency,quantity_gpu_hours,gpus_per_unit,region,obs_id";
        let end: &[u8] = if crlf { b"\r\n" } else { b"\n" };
        let mut out = header.as_bytes().to_vec();
        out.extend_from_slice(end);
        for i in 0..25_000usize {
            if i % 79 == 0 {
                out.extend_from_slice(end);
            }
            if i % 5_003 == 4_000 {
                out.extend_from_slice(header.as_bytes());
                out.extend_from_slice(end);
            }
            let gpu = if i % 89 == 0 {
                "zz-9000"
            } else {
                "h100-sxm-80gb"
            };
            let price = if i % 97 == 0 {
                "abc".to_string()
            } else {
                format!("{:.4}", 2.0 + (i % 113) as f64 * 0.01)
            };
            let region = if i % 7 == 0 { "\"us, east\"" } else { "us" };
            let id = if i % 13 == 0 { i - i % 26 } else { i };
            let mut row = format!(
                "listing,2025-03-{:02}T{:02}:{:02}:00Z,src{},{gpu},vm,on-demand,{price},gpu_hour,USD,,,{region},o{id}",
                1 + i % 28,
                i % 24,
                i % 60,
                i % 11
            )
            .into_bytes();
            if i % 83 == 0 {
                row.truncate(row.iter().rposition(|&b| b == b',').unwrap());
            }
            if i % 71 == 0 {
                row.splice(10..10, [0xff]);
            }
            if i == 12_345 {
                row = b"Total,,,,,,123.4,,,,,,".to_vec();
            }
            if i == 20_000 {
                row.extend(std::iter::repeat_n(
                    b'x',
                    crate::sizes::MAX_RECORD_BYTES + 10,
                ));
            }
            if open_quote_at == Some(i) {
                row.extend_from_slice(b",\"open");
            }
            out.extend_from_slice(&row);
            out.extend_from_slice(end);
        }
        out
    }

    fn read_with(path: &Path, one_reader: bool) -> String {
        ONE_READER.with(|c| c.set(one_reader));
        let read = read_in_memory(
            &[path.to_path_buf()],
            &IngestOptions::default(),
            &mut |_| {},
        );
        ONE_READER.with(|c| c.set(false));
        format!("{read:?}")
    }

    #[test]
    fn a_file_read_in_parts_gives_what_one_reader_gives() {
        let dir = tempfile::tempdir().unwrap();
        for (crlf, open_quote_at) in [(false, None), (true, None), (false, Some(21_000))] {
            let bytes = several_chunks(crlf, open_quote_at);
            assert!(bytes.len() > 3 * crate::split::CHUNK_BYTES);
            let path = dir.path().join("in.csv");
            std::fs::write(&path, &bytes).unwrap();
            let parts = read_with(&path, false);
            let one = read_with(&path, true);
            assert!(parts == one, "crlf {crlf}, open quote {open_quote_at:?}");
            match open_quote_at {
                Some(_) => assert!(
                    parts.contains("runs over several lines"),
                    "{}",
                    &parts[..300]
                ),
                None => {
                    for reason in [
                        "InvalidUtf8",
                        "WrongColumnCount",
                        "RepeatedHeader",
                        "TotalsRow",
                        "RecordTooLong",
                        "UnknownGpu",
                    ] {
                        assert!(parts.contains(reason), "{reason}");
                    }
                }
            }
        }
    }

    /// A byte-order mark opening a data row is data (the row is refused for its
    /// kind), whether the row is the first, starts a part or a chunk, or is read
    /// by one reader: a CSV reader drops a mark from the start of what it reads
    /// first, and the first ingest in parts dropped it from every part's first row.
    #[test]
    fn a_byte_order_mark_opening_a_data_row_is_data_wherever_the_row_falls() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = b"\xef\xbb\xbfkind,observed_at,source,gpu,scope,term,price,price_unit,currency,quantity_gpu_hours,gpus_per_unit,region,obs_id\n".to_vec();
        let marked = |i: usize| i == 0 || (5_000..6_000).contains(&i);
        for i in 0..20_000usize {
            if marked(i) {
                text.extend_from_slice(b"\xef\xbb\xbf");
            }
            text.extend_from_slice(
                format!("listing,2025-03-{:02}T10:00:00Z,src{},h100-sxm-80gb,vm,on-demand,2.5,gpu_hour,USD,,,us,o{i}\n", 1 + i % 28, i % 9).as_bytes(),
            );
        }
        assert!(text.len() > 3 * crate::split::CHUNK_BYTES);
        let path = dir.path().join("in.csv");
        std::fs::write(&path, &text).unwrap();
        for one_reader in [false, true] {
            ONE_READER.with(|c| c.set(one_reader));
            let read = read_in_memory(
                std::slice::from_ref(&path),
                &IngestOptions::default(),
                &mut |_| {},
            );
            ONE_READER.with(|c| c.set(false));
            let read = read.unwrap();
            assert_eq!(read.summary.quarantined, 1_001, "one reader: {one_reader}");
            assert_eq!(
                read.summary.quarantined_by_reason.get("unknown_kind"),
                Some(&1_001)
            );
            assert_eq!(read.summary.accepted, 18_999);
        }
    }

    /// The early stops of the header and totals checks change no answer: the
    /// counts made in full (the definition, as it stood) give the same reason for
    /// records of header names (in other cases and separators), data, blanks and
    /// totals labels, of any length against headers of one to eight names. It
    /// fails when the header count stops one name early.
    #[test]
    fn early_stops_give_the_counts_answers() {
        use proptest::prelude::*;
        fn in_full(record: &csv::ByteRecord, header: &[String]) -> Option<crate::reason::Reason> {
            let same = record
                .iter()
                .zip(header)
                .filter(|(f, h)| same_name(f, h.as_bytes()))
                .count();
            if same >= 3.min(header.len()) && 2 * same >= header.len() {
                return Some(crate::reason::Reason::RepeatedHeader);
            }
            let filled = record.iter().filter(|f| !f.trim_ascii().is_empty()).count();
            if 2 * filled > header.len().max(record.len()) {
                return None;
            }
            totals_label(record)
        }
        const NAMES: [&str; 8] = [
            "kind",
            "price",
            "gpu",
            "observed_at",
            "scope",
            "term",
            "source",
            "currency",
        ];
        // Each cell: its position's name, that name in capitals with spaces, some
        // name, or data.
        const DATA: [&str; 8] = [
            "",
            " ",
            "2.5",
            "vm",
            "Total",
            "sum:",
            "grand total (USD)",
            "x",
        ];
        let case = (1usize..=8).prop_flat_map(|n| {
            (
                Just(n),
                proptest::collection::vec((0u8..4, 0usize..8), 0..=n + 2),
            )
        });
        proptest!(|((n, picks) in case)| {
            let header: Vec<String> = NAMES[..n].iter().map(|s| s.to_string()).collect();
            let cells: Vec<String> = picks
                .iter()
                .enumerate()
                .map(|(at, &(how, j))| match how {
                    0 => NAMES[at % 8].to_string(),
                    1 => NAMES[at % 8].to_uppercase().replace('_', " "),
                    2 => NAMES[j].to_string(),
                    _ => DATA[j].to_string(),
                })
                .collect();
            let record = csv::ByteRecord::from(cells.clone());
            prop_assert_eq!(not_a_data_row(&record, &header), in_full(&record, &header), "{:?}", cells);
        });
    }
}
