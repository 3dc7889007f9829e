//! The commit of a busy date (a day's feed of millions of quotes) in bounded memory.
//!
//! The run spilled the date's rows in sections, each in dedupe-key order (equal keys
//! in input order). The sections and the rows still in memory are merged by key, so
//! the rows sharing a key arrive together and in the input order a full sort would
//! give them; each group is judged as [`commit_in_memory`](crate::commit) judges it.
//! Survivors are gathered into runs of at most the memory budget, each sorted in
//! partition order and spilled, and the runs are merged into the partition one row
//! group at a time. Memory holds a run and a row per section, never the date, and the
//! partition is the one an all-in-memory commit writes, row for row.

use crate::commit::{key_order, partition_order, CommitCtx, Dedupe};
use crate::error::{IngestError, Result};
use crate::schema::{to_table, StoredObservation};
use crate::spill::{write_sections, Section, SectionReader};
use chrono::NaiveDate;
use rayon::prelude::*;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::path::Path;

/// Read buffer per merged section: a busy date may have hundreds of them.
const SECTION_BUFFER: usize = 64 << 10;

/// Rows from several sources, each already in `order`, merged into one stream in
/// that order; ties go to the earlier source, so a stable sort of the sources'
/// concatenation is reproduced.
struct Merge {
    sources: Vec<Source>,
    heap: BinaryHeap<Head>,
    order: fn(&StoredObservation, &StoredObservation) -> Ordering,
}

enum Source {
    Memory(std::vec::IntoIter<StoredObservation>),
    Spill(SectionReader),
}

impl Source {
    fn next(&mut self) -> Option<Result<StoredObservation>> {
        match self {
            Source::Memory(rows) => rows.next().map(Ok),
            Source::Spill(reader) => reader.next(),
        }
    }
}

/// The next row of one source, ordered for a min-heap.
struct Head {
    row: StoredObservation,
    source: usize,
    order: fn(&StoredObservation, &StoredObservation) -> Ordering,
}

impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Head {}

impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Head {
    /// Reversed: the heap's greatest is the smallest row, the earliest source first.
    fn cmp(&self, other: &Self) -> Ordering {
        (self.order)(&other.row, &self.row).then(other.source.cmp(&self.source))
    }
}

impl Merge {
    fn new(
        sources: Vec<Source>,
        order: fn(&StoredObservation, &StoredObservation) -> Ordering,
    ) -> Result<Self> {
        let mut m = Merge {
            sources,
            heap: BinaryHeap::new(),
            order,
        };
        for s in 0..m.sources.len() {
            m.refill(s)?;
        }
        Ok(m)
    }

    fn refill(&mut self, source: usize) -> Result<()> {
        if let Some(row) = self.sources[source].next() {
            self.heap.push(Head {
                row: row?,
                source,
                order: self.order,
            });
        }
        Ok(())
    }

    /// The smallest row left.
    fn pop(&mut self) -> Result<Option<StoredObservation>> {
        let Some(head) = self.heap.pop() else {
            return Ok(None);
        };
        self.refill(head.source)?;
        Ok(Some(head.row))
    }

    /// The next row, if it sorts equal to `row`.
    fn pop_equal(&mut self, row: &StoredObservation) -> Result<Option<StoredObservation>> {
        match self.heap.peek() {
            Some(h) if (self.order)(&h.row, row) == Ordering::Equal => self.pop(),
            _ => Ok(None),
        }
    }
}

fn by_key(a: &StoredObservation, b: &StoredObservation) -> Ordering {
    a.dedupe_key.cmp(&b.dedupe_key)
}

/// Commits a date too busy to hold in memory (see the module). `rows` are those the
/// run still held (the latest read), `spills` the date's sections; returns how many
/// rows were kept.
pub(crate) fn commit_busy_date(
    ctx: &CommitCtx<'_>,
    date: NaiveDate,
    rows: Vec<StoredObservation>,
    spills: &[Section],
    dedupe: &mut Dedupe<'_>,
    staged: &Path,
) -> Result<u64> {
    let scratch = ctx.staging.join("merge").join(date.to_string());
    std::fs::create_dir_all(&scratch).map_err(|source| IngestError::Write {
        path: scratch.clone(),
        source,
    })?;
    let result = merge_date(ctx.memory_rows, rows, spills, dedupe, staged, &scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

fn merge_date(
    run_rows: usize,
    rows: Vec<StoredObservation>,
    spills: &[Section],
    dedupe: &mut Dedupe<'_>,
    staged: &Path,
    scratch: &Path,
) -> Result<u64> {
    // Sources in input order: the sections as they were spilled, then the rows still
    // held (the latest read, put in key order like the sections).
    let mut sources = Vec::with_capacity(spills.len() + 1);
    for s in spills {
        sources.push(Source::Spill(SectionReader::open_buffered(
            s,
            SECTION_BUFFER,
        )?));
    }
    let order = key_order(&rows);
    let mut slots: Vec<Option<StoredObservation>> = rows.into_iter().map(Some).collect();
    let held: Vec<StoredObservation> = order.into_iter().filter_map(|i| slots[i].take()).collect();
    sources.push(Source::Memory(held.into_iter()));
    let mut by_key_merge = Merge::new(sources, by_key)?;

    // Survivors, in runs sorted in partition order.
    let mut runs: Vec<Section> = Vec::new();
    let mut run: Vec<StoredObservation> = Vec::new();
    let mut group: Vec<StoredObservation> = Vec::new();
    let mut kept = 0u64;
    while let Some(first) = by_key_merge.pop()? {
        group.clear();
        group.push(first);
        while let Some(next) = by_key_merge.pop_equal(&group[0])? {
            group.push(next);
        }
        if let Some(k) = dedupe.judge(&group) {
            run.push(group.swap_remove(k));
            kept += 1;
            if run.len() >= run_rows {
                runs.push(spill_run(&mut run, scratch, runs.len())?);
            }
        }
    }
    if kept == 0 {
        return Ok(0);
    }
    sort_partition(&mut run);
    let mut sources = vec![Source::Memory(std::mem::take(&mut run).into_iter())];
    for s in &runs {
        sources.push(Source::Spill(SectionReader::open_buffered(
            s,
            SECTION_BUFFER,
        )?));
    }
    let mut partition = Merge::new(sources, partition_order)?;
    // Row groups pulled from the merge; a read error stops the batches and is
    // returned after.
    let mut failed: Option<IngestError> = None;
    let batches = std::iter::from_fn(|| {
        let mut batch = Vec::with_capacity(rentix_table::ROW_GROUP_ROWS);
        while batch.len() < rentix_table::ROW_GROUP_ROWS {
            match partition.pop() {
                Ok(Some(r)) => batch.push(r),
                Ok(None) => break,
                Err(e) => {
                    failed = Some(e);
                    return None;
                }
            }
        }
        (!batch.is_empty()).then(|| to_table(&mut batch))
    });
    rentix_table::write_unsynced_parquet_batches(staged, batches)?;
    match failed {
        Some(e) => Err(e),
        None => Ok(kept),
    }
}

/// Survivors' partition order, by position, the rows moved once.
fn sort_partition(rows: &mut Vec<StoredObservation>) {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.par_sort_unstable_by(|a, b| partition_order(&rows[*a], &rows[*b]));
    let mut slots: Vec<Option<StoredObservation>> =
        std::mem::take(rows).into_iter().map(Some).collect();
    *rows = order.into_iter().filter_map(|i| slots[i].take()).collect();
}

/// Sorts a run of survivors in partition order and spills it; the run is emptied.
fn spill_run(run: &mut Vec<StoredObservation>, scratch: &Path, n: usize) -> Result<Section> {
    sort_partition(run);
    let path = scratch.join(format!("run-{n:06}.spill"));
    let mut sections = write_sections(&path, [(NaiveDate::default(), run.iter().collect())])?;
    run.clear();
    sections
        .pop()
        .map(|(_, s)| s)
        .ok_or_else(|| IngestError::Store {
            path,
            detail: "a merge run was written without its section".into(),
        })
}
