//! The commit of one ingest run, date by date: merge the run's rows of a fixing date
//! with what the store holds, keep one row per dedupe key (the survivor chosen by
//! content, so input order does not matter), count duplicates and conflicts, sort.
//! Dates are independent, so they are committed in parallel by chunks; outcomes are
//! merged in date order, so the result does not depend on the thread count, and
//! each month's dates are written in that order into the run's one file of the
//! month under staging ([`MonthWriter`]).

use crate::error::Result;
use crate::partition::partition_path;
use crate::schema::{content_key, to_table, StoredObservation};
use crate::store::Store;
use crate::summary::Conflict;
use chrono::{Datelike, NaiveDate};
use rayon::prelude::*;
use rentix_core::Id;
use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::path::Path;

/// Conflicts listed at most, per date and in the summary.
pub const MAX_CONFLICT_EXAMPLES: usize = 100;

/// What committing one fixing date did.
#[derive(Debug, Default)]
pub struct DateOutcome {
    /// The fixing date (none only in a default value).
    pub date: Option<NaiveDate>,
    /// The rows kept, for the month's file (none when no row was kept).
    pub rows: Option<DateRows>,
    /// Rows kept (new to the store).
    pub accepted: u64,
    /// Rows of the run whose dedupe key another row of the run has.
    pub duplicates_within_run: u64,
    /// Rows whose dedupe key the store already holds.
    pub duplicates_of_store: u64,
    /// Duplicates whose terms differ from the kept row's (kind, grade, price, quantity).
    pub conflicts: u64,
    /// The first [`MAX_CONFLICT_EXAMPLES`] conflicts.
    pub conflict_examples: Vec<Conflict>,
    /// Rows kept, by the input file they were read from.
    pub accepted_by_file: BTreeMap<String, u64>,
    /// Duplicates, by the input file they were read from.
    pub duplicates_by_file: BTreeMap<String, u64>,
}

/// What a duplicate must repeat to be a true duplicate rather than a conflict: the
/// kind, grade, normalized price and quantity (a re-sent row may differ in time of
/// day or in how it was quoted).
fn terms(
    o: &rentix_core::Observation,
) -> (
    rentix_core::ObservationKind,
    &rentix_core::Grade,
    u64,
    Option<u64>,
) {
    (
        o.kind,
        &o.grade,
        o.usd_per_gpu_hour.get().to_bits(),
        o.quantity_gpu_hours.map(|q| q.get().to_bits()),
    )
}

/// The position of the row whose [`content_key`] is the smallest (the first of equal
/// ones), formatting keys only for the rows tied on the key's first field, the
/// timestamp: a listing seen in several snapshots differs there, and formatting
/// every candidate's key was 8% of a 10M-row ingest. The timestamp's text ends at
/// its only `Z`, so no stamp is a prefix of another: texts that differ order the
/// keys as they order each other, and while years have four digits (fixed width)
/// the text orders as the instant truncated to the microsecond.
pub(crate) fn smallest_content<R: Borrow<StoredObservation>>(group: &[R]) -> usize {
    let rows = || group.iter().map(Borrow::borrow).enumerate();
    let fixed_width = rows().all(|(_, r)| (0..=9999).contains(&r.obs.observed_at.year()));
    let tied: Vec<usize> = if fixed_width {
        let stamp = |r: &StoredObservation| r.obs.observed_at.timestamp_micros();
        let least = rows().map(|(_, r)| stamp(r)).min();
        rows()
            .filter(|(_, r)| Some(stamp(r)) == least)
            .map(|(k, _)| k)
            .collect()
    } else {
        let stamps: Vec<String> = rows()
            .map(|(_, r)| rentix_table::timestamp_text(r.obs.observed_at))
            .collect();
        let least = stamps.iter().min();
        (0..stamps.len())
            .filter(|k| Some(&stamps[*k]) == least)
            .collect()
    };
    match tied.as_slice() {
        [only] => *only,
        _ => tied
            .into_iter()
            .min_by_key(|k| content_key(&group[*k].borrow().obs))
            .unwrap_or(0),
    }
}

/// Whether two observations have the same content (everything but the file and row
/// they were read from): then their [`content_key`]s are equal too.
fn same_content(a: &rentix_core::Observation, b: &rentix_core::Observation) -> bool {
    a.obs_id == b.obs_id
        && a.kind == b.kind
        && a.observed_at == b.observed_at
        && a.fixing_date == b.fixing_date
        && a.source == b.source
        && a.grade == b.grade
        && a.gpu_raw == b.gpu_raw
        && a.usd_per_gpu_hour.get().to_bits() == b.usd_per_gpu_hour.get().to_bits()
        && a.quantity_gpu_hours.map(|q| q.get().to_bits())
            == b.quantity_gpu_hours.map(|q| q.get().to_bits())
        && a.price_raw.to_bits() == b.price_raw.to_bits()
        && a.price_unit == b.price_unit
        && a.currency == b.currency
        && a.gpus_per_unit == b.gpus_per_unit
        && a.interconnect == b.interconnect
        && a.cluster_gpus == b.cluster_gpus
        && a.operator_tier == b.operator_tier
        && a.upfront.map(f64::to_bits) == b.upfront.map(f64::to_bits)
        && a.term_start == b.term_start
}

/// A date's rows as a run reads them: in segments that are never moved once
/// filled, each half as long as the rows before it (64 at least, 65,536 at most).
/// A vector grown by doubling copied every row again at each doubling, into memory
/// the kernel zeroed first: 7% of a 1M-row ingest's time (issue 48). Segments as
/// long as the rows before them left up to half of a date's room unused at the end
/// of a read, when every date's rows are held: the one-shot's peak at two cores
/// 391-410 MiB over ten runs on 1M rows, 368-388 MiB with half (issue 48). The
/// segments are joined once, by the date's commit, on the pool.
#[derive(Debug, Default)]
pub struct Segments {
    segments: Vec<Vec<StoredObservation>>,
    len: usize,
}

impl Segments {
    /// Appends a row.
    pub fn push(&mut self, row: StoredObservation) {
        let full = self.segments.last().is_none_or(|s| s.len() == s.capacity());
        if full {
            let room = (self.len / 2).clamp(64, 1 << 16);
            self.segments.push(Vec::with_capacity(room));
        }
        if let Some(last) = self.segments.last_mut() {
            last.push(row);
        }
        self.len += 1;
    }

    /// How many rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is no row.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The rows in the order they were pushed, as one vector (a single segment is
    /// handed over as it is).
    pub fn into_vec(mut self) -> Vec<StoredObservation> {
        if self.segments.len() <= 1 {
            return self.segments.pop().unwrap_or_default();
        }
        let mut rows = Vec::with_capacity(self.len);
        self.append_to(&mut rows);
        rows
    }

    /// The rows in the order they were pushed, by reference.
    pub fn view(&self) -> Vec<&StoredObservation> {
        let mut all = Vec::with_capacity(self.len);
        for s in &self.segments {
            all.extend(s.iter());
        }
        all
    }

    /// Moves the rows, in the order they were pushed, to the end of `rows`; each
    /// segment is freed once moved.
    pub fn append_to(self, rows: &mut Vec<StoredObservation>) {
        for s in self.segments {
            rows.extend(s);
        }
    }
}

impl From<Vec<StoredObservation>> for Segments {
    fn from(rows: Vec<StoredObservation>) -> Self {
        Self {
            len: rows.len(),
            segments: vec![rows],
        }
    }
}

/// The rows of one date to commit, with the spill files still to read.
pub struct DateInput {
    /// The fixing date.
    pub date: NaiveDate,
    /// The date's rows held in memory.
    pub rows: Segments,
    /// The date's rows spilled to scratch files.
    pub spills: Vec<crate::spill::Section>,
}

/// Everything a date's commit needs from the run.
pub struct CommitCtx<'a> {
    /// The store committed to (its run must hold the lock).
    pub store: &'a Store,
    /// The store's partitions as the run found them, read for duplicates.
    pub committed: &'a crate::partition::Partitions,
    /// Where partitions are written before the commit moves them into place.
    pub staging: &'a Path,
    /// A date with more rows than this is committed by merging its sorted spills
    /// (bounded memory) rather than all at once.
    pub memory_rows: usize,
}

/// Reorders `rows` in place so that `rows[k]` is the row that was at `order[k]`
/// (`order` a permutation of the positions). Each row moves once along its cycle:
/// gathering the rows into a second vector cost a copy of every row (hundreds of
/// bytes each) into fresh memory, zeroed by the kernel first, per committed date.
pub(crate) fn permute<T>(rows: &mut [T], order: &[usize]) {
    debug_assert_eq!(rows.len(), order.len());
    let mut placed = vec![false; rows.len()];
    for start in 0..rows.len() {
        if placed[start] {
            continue;
        }
        // The row that was at `start` travels along the cycle, one swap a step,
        // each swap putting its final row at `at`.
        let mut at = start;
        loop {
            placed[at] = true;
            let from = order[at];
            if from == start {
                break;
            }
            rows.swap(at, from);
            at = from;
        }
    }
}

/// `survivors` (distinct positions of `len` rows) first, in their order, then the
/// other positions: the permutation that moves the survivors to the front.
pub(crate) fn survivors_first(survivors: &[usize], len: usize) -> Vec<usize> {
    let mut kept = vec![false; len];
    for &i in survivors {
        kept[i] = true;
    }
    let mut order = Vec::with_capacity(len);
    order.extend_from_slice(survivors);
    order.extend((0..len).filter(|i| !kept[*i]));
    order
}

/// Positions of `rows` in dedupe-key order, rows sharing a key in their input
/// order (what a stable sort of the rows by key gives).
pub fn key_order<R: Borrow<StoredObservation>>(rows: &[R]) -> Vec<usize> {
    let keys: Vec<&Id> = rows.iter().map(|r| &r.borrow().dedupe_key).collect();
    order_of_keys(&keys)
}

/// Positions of `keys` in sorted order, equal keys in input order. Keys of 32
/// lowercase hex digits (every key ingest makes) are compared as the 128-bit
/// numbers they spell, which is the same order as their text.
fn order_of_keys<K: Borrow<Id> + Sync>(keys: &[K]) -> Vec<usize> {
    let numbers: Option<Vec<(u128, usize)>> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| k.borrow().as_u128().map(|n| (n, i)))
        .collect();
    match numbers {
        Some(mut keyed) => {
            keyed.par_sort_unstable();
            keyed.into_iter().map(|(_, i)| i).collect()
        }
        None => {
            let mut order: Vec<usize> = (0..keys.len()).collect();
            order.par_sort_by(|a, b| keys[*a].borrow().cmp(keys[*b].borrow()));
            order
        }
    }
}

/// Adds one to `file`'s count (the name is copied once per file, not per row).
fn count(counts: &mut BTreeMap<String, u64>, file: &str) {
    match counts.get_mut(file) {
        Some(n) => *n += 1,
        None => {
            counts.insert(file.to_string(), 1);
        }
    }
}

/// Judges a date's rows one dedupe key at a time against the store's rows of the
/// date: which row survives, which are duplicates (of the run or of the store), and
/// which conflict. Counts go into the date's outcome.
pub(crate) struct Dedupe<'s> {
    stored: &'s BTreeMap<Id, StoredObservation>,
    pub out: DateOutcome,
}

impl Dedupe<'_> {
    /// The survivor among `group` (rows sharing a key, in input order), as its
    /// position, or `None` when the store already holds the key.
    pub(crate) fn judge<R: Borrow<StoredObservation>>(&mut self, group: &[R]) -> Option<usize> {
        let first = group.first()?.borrow();
        let out = &mut self.out;
        // Among rows sharing a key, the one with the smallest content survives, so
        // the survivor does not depend on input order.
        let survivor = if group[1..]
            .iter()
            .map(Borrow::borrow)
            .all(|r: &StoredObservation| same_content(&r.obs, &first.obs))
        {
            // Re-sent rows: every candidate is the same content (the first wins, as
            // it would by content key), and formatting the keys is skipped.
            0
        } else {
            smallest_content(group)
        };
        let in_store_row = self.stored.get(&first.dedupe_key);
        let in_store = in_store_row.is_some();
        let kept_row = in_store_row.unwrap_or(group[survivor].borrow());
        let kept_terms = terms(&kept_row.obs);
        for (k, r) in group.iter().map(Borrow::borrow).enumerate() {
            if (in_store || k != survivor) && terms(&r.obs) != kept_terms {
                out.conflicts += 1;
                if out.conflict_examples.len() < MAX_CONFLICT_EXAMPLES {
                    out.conflict_examples.push(Conflict {
                        dedupe_key: r.dedupe_key.to_string(),
                        fixing_date: r.obs.fixing_date.to_string(),
                        file: r.obs.input_file.to_string(),
                        row: r.obs.input_row,
                        kept_usd_per_gpu_hour: kept_row.obs.usd_per_gpu_hour.get(),
                        dropped_usd_per_gpu_hour: r.obs.usd_per_gpu_hour.get(),
                        kept_from_store: in_store,
                    });
                }
            }
        }
        for (k, r) in group.iter().map(Borrow::borrow).enumerate() {
            let file = &*r.obs.input_file;
            if in_store {
                out.duplicates_of_store += 1;
                count(&mut out.duplicates_by_file, file);
            } else if k != survivor {
                out.duplicates_within_run += 1;
                count(&mut out.duplicates_by_file, file);
            } else {
                count(&mut out.accepted_by_file, file);
            }
        }
        (!in_store).then_some(survivor)
    }
}

/// The order of a partition's rows: by fixing date (a month's file holds many),
/// then grade.
pub(crate) fn partition_order(a: &StoredObservation, b: &StoredObservation) -> std::cmp::Ordering {
    (
        a.obs.fixing_date,
        &a.obs.grade,
        a.obs.kind,
        a.obs.observed_at,
        &a.obs.source,
        &a.dedupe_key,
    )
        .cmp(&(
            b.obs.fixing_date,
            &b.obs.grade,
            b.obs.kind,
            b.obs.observed_at,
            &b.obs.source,
            &b.dedupe_key,
        ))
}

/// Sorts `positions` of `rows` by [`partition_order`] (the rows' dedupe keys
/// distinct, so the order is total). The order's text parts are ranked first, each
/// distinct grade and source once, and the positions sorted by integers: comparing
/// grades' and sources' text in every comparison of the sort was 7% of a 1M-row
/// ingest (issue 48). Keys that are not 32 lowercase hex digits (none that ingest
/// makes) are sorted by the comparison itself.
pub(crate) fn sort_in_partition_order<R: Borrow<StoredObservation> + Sync>(
    rows: &[R],
    positions: &mut [usize],
) {
    let row = |i: usize| rows[i].borrow();
    let keys: Option<Vec<u128>> = positions
        .iter()
        .map(|&i| row(i).dedupe_key.as_u128())
        .collect();
    let Some(keys) = keys else {
        positions.par_sort_unstable_by(|a, b| partition_order(row(*a), row(*b)));
        return;
    };
    let at = |k: usize| &row(positions[k]).obs;
    let grades = ranks((0..positions.len()).map(|k| &at(k).grade));
    let kinds = ranks((0..positions.len()).map(|k| at(k).kind));
    let sources = ranks((0..positions.len()).map(|k| &*at(k).source));
    let mut sortable: Vec<OrderKey> = (0..positions.len())
        .map(|k| {
            let o = at(k);
            (
                o.fixing_date.num_days_from_ce(),
                grades[k],
                kinds[k],
                o.observed_at.timestamp(),
                o.observed_at.timestamp_subsec_nanos(),
                sources[k],
                keys[k],
                positions[k],
            )
        })
        .collect();
    sortable.par_sort_unstable();
    for (p, s) in positions.iter_mut().zip(sortable) {
        *p = s.7;
    }
}

/// A row's place in [`partition_order`] as integers: fixing date, grade rank, kind
/// rank, seconds and nanoseconds of the instant, source rank, dedupe key; then its
/// position.
type OrderKey = (i32, u32, u32, i64, u32, u32, u128, usize);

/// Each value's rank among the distinct values (0 the least): equal values equal
/// ranks, and ranks ordered as the values are.
fn ranks<T: Ord + std::hash::Hash>(values: impl Iterator<Item = T>) -> Vec<u32> {
    let mut index: std::collections::HashMap<T, u32, foldhash::fast::FixedState> =
        std::collections::HashMap::default();
    let firsts: Vec<u32> = values
        .map(|v| {
            let next = index.len() as u32;
            *index.entry(v).or_insert(next)
        })
        .collect();
    let mut distinct: Vec<(T, u32)> = index.into_iter().collect();
    distinct.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut rank_of_first = vec![0u32; distinct.len()];
    for (rank, (_, first)) in distinct.iter().enumerate() {
        rank_of_first[*first as usize] = rank as u32;
    }
    firsts
        .into_iter()
        .map(|f| rank_of_first[f as usize])
        .collect()
}

/// Commits one date: its rows deduplicated against each other and the store's,
/// sorted into partition order (on the calling thread; a run commits its dates in
/// parallel).
pub fn commit_date(ctx: &CommitCtx<'_>, input: DateInput) -> Result<DateOutcome> {
    let DateInput { date, rows, spills } = input;
    // The stored rows of this date: their keys make duplicates, their content tells a
    // true duplicate from a conflict.
    let stored: BTreeMap<Id, StoredObservation> = ctx
        .store
        .rows_on(ctx.committed, date)?
        .into_iter()
        .map(|r| (r.dedupe_key.clone(), r))
        .collect();
    let mut dedupe = Dedupe {
        stored: &stored,
        out: DateOutcome {
            date: Some(date),
            ..Default::default()
        },
    };
    let total = rows.len() + spills.iter().map(|s| s.rows).sum::<usize>();
    let rows = rows.into_vec();
    let (accepted, kept) = if total > ctx.memory_rows {
        // Merged into a file of its own (it does not fit in memory), which the
        // month's file then copies a slice at a time.
        let staged = ctx.staging.join("days").join(format!("{date}.parquet"));
        let n = crate::merge::commit_busy_date(ctx, date, rows, &spills, &mut dedupe, &staged)?;
        (n, DateRows::File(staged))
    } else {
        let (n, groups) = commit_in_memory(
            rows,
            &spills,
            &mut dedupe,
            &ctx.staging.join(date.to_string()),
        )?;
        (n, DateRows::Encoded(groups))
    };
    let mut out = dedupe.out;
    if accepted > 0 {
        out.accepted = accepted;
        out.rows = Some(kept);
    }
    Ok(out)
}

/// Commits a date whose rows fit the memory budget: all read, their positions
/// sorted, the survivors converted in partition order and encoded as Parquet, a
/// row group's worth at a time (`path` names them in errors). Returns how many
/// were kept, and their row groups.
fn commit_in_memory(
    held: Vec<StoredObservation>,
    spills: &[crate::spill::Section],
    dedupe: &mut Dedupe<'_>,
    path: &Path,
) -> Result<(u64, Vec<rentix_table::EncodedGroups>)> {
    // In input order: the spills as they were written, then the rows still held
    // (the latest read), so an identical duplicate keeps its first occurrence
    // whatever the batch size. Room for every row at once: a vector grown by
    // doubling is copied into fresh memory again and again.
    let rows = if spills.is_empty() {
        // Nothing spilled: the rows held are the date's, in input order already.
        held
    } else {
        let mut rows =
            Vec::with_capacity(held.len() + spills.iter().map(|s| s.rows).sum::<usize>());
        for section in spills {
            crate::spill::read_section(section, &mut rows)?;
        }
        rows.extend(held);
        rows
    };
    let mut rows = rows;
    let kept = keep_survivors(&mut rows, dedupe);
    if kept == 0 {
        return Ok((0, Vec::new()));
    }
    let kept = &mut rows[..kept];
    let groups = kept
        .chunks_mut(rentix_table::ROW_GROUP_ROWS)
        .map(|chunk| to_table(chunk).encode_row_groups(path))
        .collect::<rentix_table::Result<_>>()?;
    Ok((kept.len() as u64, groups))
}

/// A committed date's rows on their way into the month's file.
#[derive(Debug)]
pub enum DateRows {
    /// Converted in memory, a row group each.
    Encoded(Vec<rentix_table::EncodedGroups>),
    /// Written to a file of the date (a busy date, merged on disk).
    File(std::path::PathBuf),
}

/// A month's file being written: its dates' row groups, encoded where they were
/// committed, go to a writer thread in date order.
struct OpenMonth {
    month: (i32, u32),
    rel: String,
    tx: std::sync::mpsc::SyncSender<rentix_table::EncodedGroups>,
    writer: Writer,
}

/// Writes a run's committed dates, in date order, into one file per month under
/// staging (`observations/month=YYYY-MM/RUN.parquet`), each date a row group or
/// more: memory holds the dates of a commit chunk, never the month.
pub struct MonthWriter<'a> {
    staging: &'a Path,
    run_id: &'a str,
    open: Option<OpenMonth>,
    /// Closed months whose writers may still be encoding, oldest first.
    closing: std::collections::VecDeque<(String, Writer)>,
    written: Vec<(String, crate::summary::PartitionChecksum)>,
}

/// A month file's writing thread: it writes the file and then hashes it.
type Writer = std::thread::JoinHandle<Result<crate::summary::PartitionChecksum>>;

/// Months whose files are still being encoded while the next month's dates are
/// committed: waiting for each month's writer at the month's end left the pool idle
/// while its last row groups were encoded (about 5% of a 1M-row ingest, issue 48).
/// Each holds at most its queue (two tables) and the row group it encodes.
const MONTHS_IN_FLIGHT: usize = 3;

impl<'a> MonthWriter<'a> {
    /// A writer of run `run_id`'s month files under `staging`.
    pub fn new(staging: &'a Path, run_id: &'a str) -> Self {
        Self {
            staging,
            run_id,
            open: None,
            closing: std::collections::VecDeque::new(),
            written: Vec::new(),
        }
    }

    /// Appends `date`'s rows (dates come in order) to its month's file.
    pub fn add(&mut self, date: NaiveDate, rows: DateRows) -> Result<()> {
        let month = (date.year(), date.month());
        if self.open.as_ref().is_some_and(|o| o.month != month) {
            self.close()?;
        }
        if self.open.is_none() {
            let rel = partition_path(date, self.run_id);
            let path = self.staging.join(&rel);
            // Two dates in flight: the writer writes one while the next is queued.
            let (tx, rx) = std::sync::mpsc::sync_channel(2);
            // The file is hashed where it was written, beside the months after it:
            // hashed at the commit, every month's file was read again at the end of
            // the run (a serial tail of a 1M-row ingest at two cores).
            // The file is also made durable here, as soon as it is whole, while the
            // months after it are committed: fsynced together at the publication,
            // the run's twelve files waited 0.19 s on the disk with nothing else to
            // do (8% of a 1M-row ingest at two cores). The publication still syncs
            // them all before any move, so durability does not rest on this one.
            let writer = std::thread::spawn(move || {
                rentix_table::write_unsynced_parquet_encoded(&path, rx.into_iter().map(Ok))?;
                let sum = crate::publish::checksum(&path)?;
                std::fs::File::open(&path)
                    .and_then(|f| f.sync_all())
                    .map_err(|source| crate::error::StoreError::Write {
                        path: path.clone(),
                        source,
                    })?;
                Ok(sum)
            });
            self.open = Some(OpenMonth {
                month,
                rel,
                tx,
                writer,
            });
        }
        let Some(open) = self.open.as_ref() else {
            return Ok(());
        };
        // A send fails only when the writer stopped: its error is returned at close.
        match rows {
            DateRows::Encoded(groups) => {
                for g in groups {
                    if open.tx.send(g).is_err() {
                        return self.close_and_wait();
                    }
                }
            }
            DateRows::File(path) => {
                let total = rentix_table::Table::parquet_rows(&path)?;
                for start in (0..total).step_by(rentix_table::ROW_GROUP_ROWS) {
                    let t = rentix_table::Table::read_parquet_rows(
                        &path,
                        start,
                        rentix_table::ROW_GROUP_ROWS,
                    )?
                    .encode_row_groups(&path)?;
                    if open.tx.send(t).is_err() {
                        return self.close_and_wait();
                    }
                }
                let _ = std::fs::remove_file(&path);
            }
        }
        Ok(())
    }

    fn close(&mut self) -> Result<()> {
        let Some(OpenMonth {
            rel, tx, writer, ..
        }) = self.open.take()
        else {
            return Ok(());
        };
        drop(tx);
        self.closing.push_back((rel, writer));
        while self.closing.len() > MONTHS_IN_FLIGHT {
            self.join_oldest()?;
        }
        Ok(())
    }

    /// Closes the open month and waits for every writer: a writer that stopped (a
    /// send failed) returns its error now, not at the end of the run.
    fn close_and_wait(&mut self) -> Result<()> {
        self.close()?;
        while !self.closing.is_empty() {
            self.join_oldest()?;
        }
        Ok(())
    }

    /// Waits for the oldest closed month's writer; its file joins the written ones.
    fn join_oldest(&mut self) -> Result<()> {
        let Some((rel, writer)) = self.closing.pop_front() else {
            return Ok(());
        };
        let written = writer.join().map_err(|_| {
            crate::error::StoreError::Accounting(format!("the writer of {rel} panicked"))
        })?;
        self.written.push((rel, written?));
        Ok(())
    }

    /// Closes the last month and waits for every writer; the files written
    /// (relative to the store), in order, each with its checksum.
    pub fn finish(mut self) -> Result<Vec<(String, crate::summary::PartitionChecksum)>> {
        self.close_and_wait()?;
        Ok(self.written)
    }
}

/// Keeps one row per dedupe key of a date's rows (in input order), judged by
/// `dedupe`: the survivors are moved to the front of `rows` in partition order, and
/// their number returned.
pub(crate) fn keep_survivors(rows: &mut [StoredObservation], dedupe: &mut Dedupe<'_>) -> usize {
    // The survivors are moved to the front of `rows` in partition order, in place.
    let survivors = survivor_positions(rows, dedupe);
    let order = survivors_first(&survivors, rows.len());
    permute(rows, &order);
    survivors.len()
}

/// The positions of `rows` that `dedupe` keeps, in partition order.
fn survivor_positions<R: Borrow<StoredObservation> + Sync>(
    rows: &[R],
    dedupe: &mut Dedupe<'_>,
) -> Vec<usize> {
    // Rows stay where they are; their positions are sorted (in parallel: a date of
    // many quotes is committed by one task). Moving the rows themselves, hundreds of
    // bytes each, was most of a busy date's commit.
    let row = |i: usize| rows[i].borrow();
    let order = key_order(rows);
    let mut survivors: Vec<usize> = Vec::with_capacity(rows.len());
    let mut group: Vec<&StoredObservation> = Vec::new();
    let mut start = 0;
    while start < order.len() {
        let key = &row(order[start]).dedupe_key;
        let mut end = start + 1;
        while end < order.len() && row(order[end]).dedupe_key == *key {
            end += 1;
        }
        group.clear();
        group.extend(order[start..end].iter().map(|&i| row(i)));
        if let Some(k) = dedupe.judge(&group) {
            survivors.push(order[start + k]);
        }
        start = end;
    }
    drop(group);
    // The partition's row order, sorted by position. (Keys are unique among
    // survivors: the order is total.)
    sort_in_partition_order(rows, &mut survivors);
    survivors
}

/// A date's rows as read ([`Segments`]) with the positions its dedupe keeps, in
/// partition order: what a commit into an empty store would write, without
/// moving a row. Joining a date's segments into one vector copied every row into
/// new memory while the segments' memory, freed between other dates' rows, could
/// not yet be reused: 45 MiB of the one-shot's peak on 1M rows (issue 48).
#[derive(Debug)]
pub struct KeptRows {
    segments: Segments,
    kept: Vec<usize>,
}

impl KeptRows {
    /// Deduplicates `segments`, the rows of `date`, as a commit into an empty
    /// store would; returns them with what the date's commit would count.
    pub fn dedupe(date: NaiveDate, segments: Segments) -> (Self, DateOutcome) {
        let empty = BTreeMap::new();
        let mut dedupe = Dedupe {
            stored: &empty,
            out: DateOutcome::default(),
        };
        let kept = survivor_positions(&segments.view(), &mut dedupe);
        let mut out = dedupe.out;
        out.date = Some(date);
        out.accepted = kept.len() as u64;
        (Self { segments, kept }, out)
    }

    /// How many rows are kept.
    pub fn len(&self) -> usize {
        self.kept.len()
    }

    /// Whether no row is kept.
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// The kept rows, in partition order.
    pub fn iter(&self) -> impl Iterator<Item = &StoredObservation> + '_ {
        let view = self.segments.view();
        self.kept.iter().map(move |&i| view[i])
    }

    /// The kept rows, in partition order, moved into one vector.
    pub fn into_vec(self) -> Vec<StoredObservation> {
        let mut rows = self.segments.into_vec();
        let order = survivors_first(&self.kept, rows.len());
        permute(&mut rows, &order);
        rows.truncate(self.kept.len());
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows pushed one at a time keep their order, and the segments never hold
    /// room for more than half the rows again (64 rows at least): with segments
    /// as long as the rows before them, 1,025 rows held room for 2,048.
    #[test]
    fn segments_keep_the_order_and_little_spare_room() {
        let d = NaiveDate::from_ymd_opt(2025, 6, 1).unwrap();
        let rows = crate::test_rows::rows(d, 5_000);
        let mut segments = Segments::default();
        for (n, r) in rows.iter().enumerate() {
            segments.push(r.clone());
            let room: usize = segments.segments.iter().map(Vec::capacity).sum();
            let len = n + 1;
            assert!(
                room <= len + (len / 2).max(64),
                "{len} rows, room for {room}"
            );
        }
        assert_eq!(segments.len(), rows.len());
        assert!(segments.view().into_iter().eq(rows.iter()));
        assert_eq!(segments.into_vec(), rows);
    }

    /// The keyed sort gives the comparison's order: rows of two dates, tied in
    /// grade, kind, source and time in every combination, shuffled; with keys
    /// of 32 hex digits (ranked) and without (the comparison itself).
    #[test]
    fn keyed_sort_is_the_partition_order() {
        let d1 = NaiveDate::from_ymd_opt(2025, 6, 1).unwrap();
        let d2 = NaiveDate::from_ymd_opt(2025, 5, 31).unwrap();
        let mut rows = crate::test_rows::rows(d1, 300);
        rows.extend(crate::test_rows::rows(d2, 300));
        let at = rows[0].obs.observed_at;
        for (i, r) in rows.iter_mut().enumerate() {
            // Few distinct times, sources and grades: every tie broken further on.
            r.obs.observed_at = at + chrono::Duration::nanoseconds((i % 4) as i64 * 500_000_000);
            r.obs.source = ["b", "a", "ab", "Sakura"][i % 4 / 2 + i % 3 % 2].into();
            if i % 13 == 0 {
                r.obs.grade = "b200-sxm-180gb/vm/spot".parse().unwrap();
            }
            r.dedupe_key = Id::from_digest(
                ((i as u128 * 0x9e37_79b9_7f4a_7c15) % (1u128 << 127)).to_be_bytes(),
            );
        }
        let expected = |rows: &[StoredObservation], positions: &[usize]| {
            let mut p = positions.to_vec();
            p.sort_by(|a, b| partition_order(&rows[*a], &rows[*b]));
            p
        };
        // Every third position, shuffled.
        let mut positions: Vec<usize> = (0..rows.len()).filter(|i| i % 3 != 1).collect();
        positions.reverse();
        positions.swap(0, 17);
        let want = expected(&rows, &positions);
        let mut got = positions.clone();
        sort_in_partition_order(&rows, &mut got);
        assert_eq!(got, want);
        // Keys that are not hex: the comparison itself.
        rows[5].dedupe_key = "not-hex".into();
        let want = expected(&rows, &positions);
        let mut got = positions;
        sort_in_partition_order(&rows, &mut got);
        assert_eq!(got, want);
    }

    /// What a stable sort of the keys' text gives.
    fn text_order(keys: &[&str]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.sort_by(|a, b| keys[*a].cmp(keys[*b]));
        order
    }

    fn ids(keys: &[&str]) -> Vec<Id> {
        keys.iter().map(|k| Id::new(k)).collect()
    }

    #[test]
    fn hex_keys_sort_as_their_text_with_ties_in_input_order() {
        let keys = [
            "ecd47947b095e337835f1569787f214c",
            "00000000000000000000000000000001",
            "ecd47947b095e337835f1569787f214c",
            "7dfd00be6a8d1e6cb9f04bf06dda8871",
            "ffffffffffffffffffffffffffffffff",
            "7dfd00be6a8d1e6cb9f04bf06dda8871",
            "0000000000000000ffffffffffffffff",
        ];
        assert_eq!(order_of_keys(&ids(&keys)), text_order(&keys));
        assert_eq!(order_of_keys(&ids(&keys)), [1, 6, 3, 5, 0, 2, 4]);
    }

    #[test]
    fn any_other_key_falls_back_to_text_order() {
        let keys = [
            "ecd47947b095e337835f1569787f214c",
            "ECD47947B095E337835F1569787F214C",
            "zz",
            "7dfd00be6a8d1e6cb9f04bf06dda8871",
            "zz",
            "",
        ];
        assert_eq!(order_of_keys(&ids(&keys)), text_order(&keys));
    }

    proptest::proptest! {
        /// The survivor is the row with the smallest content key (the first of equal
        /// ones), as formatting every candidate's key chooses it: stamps equal, a
        /// nanosecond or a microsecond apart, years of more or fewer than four digits.
        #[test]
        fn the_survivor_is_the_smallest_content_key(
            picks in proptest::collection::vec((0usize..6, 0usize..4, 0usize..3), 1..8)
        ) {
            let date = NaiveDate::from_ymd_opt(2025, 3, 1).unwrap();
            let base = crate::test_rows::rows(date, 3);
            let stamps = [
                "2025-03-01T10:00:00.000001Z",
                "2025-03-01T10:00:00.000001999Z",
                "2025-03-01T10:00:00.000002Z",
                "2025-03-01T09:59:59Z",
                "+10000-01-01T00:00:00Z",
                "0999-12-31T23:59:59.5Z",
            ];
            let group: Vec<StoredObservation> = picks
                .iter()
                .map(|&(stamp, price, row)| {
                    let mut r = base[row].clone();
                    r.obs.observed_at = stamps[stamp].parse().unwrap();
                    r.obs.price_raw = [1.0, 10.0, 2.0, 1.0][price];
                    r
                })
                .collect();
            let expected = group
                .iter()
                .enumerate()
                .min_by_key(|(_, r)| content_key(&r.obs))
                .map(|(k, _)| k)
                .unwrap();
            proptest::prop_assert_eq!(smallest_content(&group), expected);
        }
    }

    proptest::proptest! {
        /// Permuting in place gives what gathering into a new vector gives, for any
        /// permutation (identity, one cycle, many, empty), and moving survivors to
        /// the front keeps them in their order.
        #[test]
        fn permuting_in_place_is_gathering(
            keys in proptest::collection::vec(proptest::prelude::any::<u32>(), 0..200),
            keep in proptest::collection::vec(proptest::prelude::any::<bool>(), 200)
        ) {
            let rows: Vec<String> = (0..keys.len()).map(|i| format!("row {i}")).collect();
            let mut order: Vec<usize> = (0..keys.len()).collect();
            order.sort_by_key(|&i| keys[i]);
            let gathered: Vec<String> = order.iter().map(|&i| rows[i].clone()).collect();
            let mut permuted = rows.clone();
            permute(&mut permuted, &order);
            proptest::prop_assert_eq!(&permuted, &gathered);

            let survivors: Vec<usize> = order.iter().copied().filter(|&i| keep[i]).collect();
            let mut front = rows.clone();
            permute(&mut front, &survivors_first(&survivors, rows.len()));
            let expected: Vec<String> = survivors.iter().map(|&i| rows[i].clone()).collect();
            proptest::prop_assert_eq!(&front[..survivors.len()], &expected[..]);
            let mut all = front.clone();
            all.sort();
            let mut sorted = rows.clone();
            sorted.sort();
            proptest::prop_assert_eq!(all, sorted);
        }
    }
}
