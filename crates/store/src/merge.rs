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

use crate::commit::{key_order, partition_order, permute, CommitCtx, Dedupe};
use crate::error::{Result, StoreError};
use crate::schema::{to_table, StoredObservation};
use crate::spill::{Section, SectionReader, SectionWriter};
use chrono::NaiveDate;
use rayon::prelude::*;
use std::cmp::Ordering;
use std::path::Path;

/// Read buffer per merged section: a busy date may have hundreds of them.
const SECTION_BUFFER: usize = 64 << 10;

/// Sections merged at once at most (open files, buffers); more are merged in
/// passes. Small in the crate's tests so that the passes are exercised.
const MAX_FAN_IN: usize = if cfg!(test) { 3 } else { 128 };

/// Rows from several sources, each already in `order`, merged into one stream in
/// that order; ties go to the earlier source, so a stable sort of the sources'
/// concatenation is reproduced.
struct Merge {
    sources: Vec<Source>,
    /// Each source's next row; `None` once the source is exhausted.
    heads: Vec<Option<StoredObservation>>,
    /// The sources with a next row, a binary min-heap by (row, source). The heap
    /// moves source numbers, not rows: a row (about 340 bytes) moved at every step
    /// of a sift was a quarter of a busy date's merge.
    heap: Vec<usize>,
    order: fn(&StoredObservation, &StoredObservation) -> Ordering,
}

enum Source {
    Memory(std::vec::IntoIter<StoredObservation>),
    Spill(SectionReader),
    /// Boxed: a cursor holds the last row it read.
    Stored(Box<StoredCursor>),
}

impl Source {
    fn next(&mut self) -> Option<Result<StoredObservation>> {
        match self {
            Source::Memory(rows) => rows.next().map(Ok),
            Source::Spill(reader) => reader.next(),
            Source::Stored(cursor) => cursor.next(),
        }
    }
}

/// A committed partition file read a slice of rows at a time, each slice checked to
/// continue the file's partition order (every file rentix writes is in it).
struct StoredCursor {
    path: std::path::PathBuf,
    slice_rows: usize,
    read: usize,
    total: usize,
    rows: std::vec::IntoIter<StoredObservation>,
    /// The last row of the previous slice.
    last: Option<StoredObservation>,
}

impl StoredCursor {
    fn open(path: std::path::PathBuf, slice_rows: usize) -> Result<Self> {
        let total = rentix_table::Table::parquet_rows(&path)?;
        Ok(Self {
            path,
            slice_rows: slice_rows.max(1),
            read: 0,
            total,
            rows: Vec::new().into_iter(),
            last: None,
        })
    }

    fn load(&mut self) -> Result<()> {
        let t = rentix_table::Table::read_parquet_rows(&self.path, self.read, self.slice_rows)?;
        let rows = crate::schema::from_table(t, &self.path, crate::schema::Projection::All)?;
        if rows.is_empty() {
            return Err(StoreError::Store {
                path: self.path.clone(),
                detail: format!(
                    "its footer counts {} rows, {} could be read",
                    self.total, self.read
                ),
            });
        }
        let mut prev = self.last.as_ref();
        for (k, r) in rows.iter().enumerate() {
            if prev.is_some_and(|p| partition_order(p, r) != Ordering::Less) {
                return Err(StoreError::Store {
                    path: self.path.clone(),
                    detail: format!(
                        "row {} is out of partition order (grade, kind, time, source, key, each key once), in which rentix writes every partition: check where this file came from",
                        self.read + k + 1
                    ),
                });
            }
            prev = Some(r);
        }
        self.read += rows.len();
        self.last = rows.last().cloned();
        self.rows = rows.into_iter();
        Ok(())
    }

    fn next(&mut self) -> Option<Result<StoredObservation>> {
        if let Some(r) = self.rows.next() {
            return Some(Ok(r));
        }
        if self.read >= self.total {
            return None;
        }
        match self.load() {
            Ok(()) => self.rows.next().map(Ok),
            Err(e) => {
                // Stops the source: the error is the merge's result.
                self.read = self.total;
                Some(Err(e))
            }
        }
    }
}

impl Merge {
    fn new(
        sources: Vec<Source>,
        order: fn(&StoredObservation, &StoredObservation) -> Ordering,
    ) -> Result<Self> {
        let n = sources.len();
        let mut m = Merge {
            sources,
            heads: (0..n).map(|_| None).collect(),
            heap: Vec::with_capacity(n),
            order,
        };
        for s in 0..n {
            if m.advance(s)? {
                m.heap.push(s);
                m.sift_up(m.heap.len() - 1);
            }
        }
        Ok(m)
    }

    /// Reads source `s`'s next row into its head; whether it had one.
    fn advance(&mut self, s: usize) -> Result<bool> {
        self.heads[s] = self.sources[s].next().transpose()?;
        Ok(self.heads[s].is_some())
    }

    /// Whether source `a`'s head comes before source `b`'s: by row, then the
    /// earlier source (an exhausted source, never in the heap, comes last).
    fn before(&self, a: usize, b: usize) -> bool {
        match (&self.heads[a], &self.heads[b]) {
            (Some(x), Some(y)) => (self.order)(x, y).then(a.cmp(&b)) == Ordering::Less,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if !self.before(self.heap[i], self.heap[parent]) {
                break;
            }
            self.heap.swap(i, parent);
            i = parent;
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        loop {
            let mut first = i;
            for child in [2 * i + 1, 2 * i + 2] {
                if child < self.heap.len() && self.before(self.heap[child], self.heap[first]) {
                    first = child;
                }
            }
            if first == i {
                break;
            }
            self.heap.swap(i, first);
            i = first;
        }
    }

    /// The smallest row left.
    fn pop(&mut self) -> Result<Option<StoredObservation>> {
        let Some(&top) = self.heap.first() else {
            return Ok(None);
        };
        let row = self.heads[top].take();
        if !self.advance(top)? {
            self.heap.swap_remove(0);
        }
        self.sift_down(0);
        Ok(row)
    }

    /// The next row, if it sorts equal to `row`.
    fn pop_equal(&mut self, row: &StoredObservation) -> Result<Option<StoredObservation>> {
        match self.heap.first().and_then(|&s| self.heads[s].as_ref()) {
            Some(h) if (self.order)(h, row) == Ordering::Equal => self.pop(),
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
    std::fs::create_dir_all(&scratch).map_err(|source| StoreError::Write {
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
    let spills = fan_in(spills.to_vec(), by_key, scratch, "keys")?;
    let mut sources = Vec::with_capacity(spills.len() + 1);
    for s in &spills {
        sources.push(Source::Spill(SectionReader::open_buffered(
            s,
            SECTION_BUFFER,
        )?));
    }
    let mut held = rows;
    let order = key_order(&held);
    permute(&mut held, &order);
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
    let runs = fan_in(runs, partition_order, scratch, "runs")?;
    let mut sources = vec![Source::Memory(std::mem::take(&mut run).into_iter())];
    for s in &runs {
        sources.push(Source::Spill(SectionReader::open_buffered(
            s,
            SECTION_BUFFER,
        )?));
    }
    let mut partition = Merge::new(sources, partition_order)?;
    write_merged(&mut partition, staged, |_| Ok(()))?;
    Ok(kept)
}

/// Writes what `merge` yields as the partition file `staged`, a row group at a
/// time, showing each row to `seen` first; returns how many rows. A read error (or
/// one from `seen`) stops the batches and is returned after.
fn write_merged(
    merge: &mut Merge,
    staged: &Path,
    mut seen: impl FnMut(&StoredObservation) -> Result<()>,
) -> Result<u64> {
    let mut failed: Option<StoreError> = None;
    let mut written = 0u64;
    let batches = std::iter::from_fn(|| {
        let mut batch = Vec::with_capacity(rentix_table::ROW_GROUP_ROWS);
        while batch.len() < rentix_table::ROW_GROUP_ROWS {
            match merge.pop().and_then(|r| match r {
                Some(r) => seen(&r).map(|()| Some(r)),
                None => Ok(None),
            }) {
                Ok(Some(r)) => batch.push(r),
                Ok(None) => break,
                Err(e) => {
                    failed = Some(e);
                    return None;
                }
            }
        }
        written += batch.len() as u64;
        (!batch.is_empty()).then(|| to_table(&mut batch))
    });
    rentix_table::write_unsynced_parquet_batches(staged, batches)?;
    match failed {
        Some(e) => Err(e),
        None => Ok(written),
    }
}

/// Merges committed partition files of one month (each in partition order, as rentix
/// writes them) into the one file `staged`, reading each `slice_rows` rows at a time:
/// memory holds a slice per file and 16 bytes per row for the duplicate check, never
/// the month. Returns how many rows; refuses a dedupe key held twice (no ingest
/// writes one) or one that is not 32 hexadecimal digits.
pub(crate) fn merge_stored(
    files: &[std::path::PathBuf],
    staged: &Path,
    slice_rows: usize,
) -> Result<crate::compact::Moved> {
    let sources = files
        .iter()
        .map(|f| StoredCursor::open(f.clone(), slice_rows).map(|c| Source::Stored(Box::new(c))))
        .collect::<Result<Vec<_>>>()?;
    let mut merge = Merge::new(sources, partition_order)?;
    let mut keys: Vec<u128> = Vec::new();
    let mut dates: Option<(NaiveDate, NaiveDate)> = None;
    let n = write_merged(&mut merge, staged, |r| {
        let d = r.obs.fixing_date;
        dates = Some(dates.map_or((d, d), |(f, l)| (f.min(d), l.max(d))));
        let key = r.dedupe_key.as_u128().ok_or_else(|| StoreError::Store {
                path: staged.to_path_buf(),
                detail: format!(
                    "dedupe key {:?} is not 32 hexadecimal digits; `rentix store check` and repair the store first",
                    r.dedupe_key
                ),
            })?;
        keys.push(key);
        Ok(())
    })?;
    keys.par_sort_unstable();
    if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
        return Err(StoreError::Store {
            path: staged.to_path_buf(),
            detail: format!(
                "dedupe key {:032x} is stored twice; `rentix store check` and repair the store before compacting",
                w[0]
            ),
        });
    }
    Ok(crate::compact::Moved { rows: n, dates })
}

/// Merges `sections` (each sorted by `order`) in passes of at most [`MAX_FAN_IN`]
/// until that many are left; each pass keeps the sections' relative order, so ties
/// still go to the earlier section.
fn fan_in(
    mut sections: Vec<Section>,
    order: fn(&StoredObservation, &StoredObservation) -> Ordering,
    scratch: &Path,
    what: &str,
) -> Result<Vec<Section>> {
    let mut pass = 0;
    while sections.len() > MAX_FAN_IN {
        pass += 1;
        let mut merged = Vec::new();
        for (k, chunk) in sections.chunks(MAX_FAN_IN).enumerate() {
            let sources = chunk
                .iter()
                .map(|s| SectionReader::open_buffered(s, SECTION_BUFFER).map(Source::Spill))
                .collect::<Result<Vec<_>>>()?;
            let mut m = Merge::new(sources, order)?;
            let path = scratch.join(format!("{what}-pass{pass}-{k:06}.spill"));
            let mut out = SectionWriter::create(&path, chunk.iter().map(|s| s.rows).sum())?;
            while let Some(r) = m.pop()? {
                out.write(&r)?;
            }
            merged.push(out.finish()?);
        }
        sections = merged;
    }
    Ok(sections)
}

/// Survivors' partition order, by position, the rows moved once in place.
fn sort_partition(rows: &mut [StoredObservation]) {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    crate::commit::sort_in_partition_order(rows, &mut order);
    permute(rows, &order);
}

/// Sorts a run of survivors in partition order and spills it; the run is emptied.
fn spill_run(run: &mut Vec<StoredObservation>, scratch: &Path, n: usize) -> Result<Section> {
    sort_partition(run);
    let mut out = SectionWriter::create(&scratch.join(format!("run-{n:06}.spill")), run.len())?;
    for r in run.iter() {
        out.write(r)?;
    }
    run.clear();
    out.finish()
}

#[cfg(test)]
mod tests {
    proptest::proptest! {
        /// Merging sources each sorted by key gives a stable sort of their
        /// concatenation: equal keys in source order, every row once.
        #[test]
        fn a_merge_is_a_stable_sort_of_its_sources(
            sources in proptest::collection::vec(
                proptest::collection::vec(0u8..6, 0..12), 0..7)
        ) {
            let date = chrono::NaiveDate::from_ymd_opt(2025, 3, 1).unwrap();
            let mut n = 0;
            let mut all = Vec::new();
            let mut merged_sources = Vec::new();
            for keys in &sources {
                let mut rows: Vec<crate::StoredObservation> = keys
                    .iter()
                    .map(|k| {
                        let mut r = crate::test_rows::rows(date, 1).remove(0);
                        r.dedupe_key = rentix_core::Id::from_digest(u128::from(*k).to_be_bytes());
                        r.obs.input_row = n;
                        n += 1;
                        r
                    })
                    .collect();
                rows.sort_by(super::by_key);
                all.extend(rows.iter().cloned());
                merged_sources.push(super::Source::Memory(rows.into_iter()));
            }
            all.sort_by(super::by_key);
            let mut m = super::Merge::new(merged_sources, super::by_key).unwrap();
            let mut out = Vec::new();
            while let Some(r) = m.pop().unwrap() {
                out.push(r.obs.input_row);
            }
            let expected: Vec<u64> = all.iter().map(|r| r.obs.input_row).collect();
            proptest::prop_assert_eq!(out, expected);
        }
    }
}
