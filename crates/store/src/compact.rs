//! `rentix store compact`: merges the files of each month that runs have
//! accumulated (one per run that touched the month: daily or hourly ingests, late
//! quotes) into one file, so that readers open one file per month.
//! `rentix store migrate` is the same merge of every month that still holds files
//! of the layout before month partitions (one per date), however few.
//!
//! A compaction is a run like an ingest: under the store's lock, written under
//! staging and published at one commit point (its run record, which names the file
//! it wrote per month and the files it `replaces`). The rows are the same, with
//! their provenance (`input_file`, `input_row`), in the partition order an ingest
//! writes; the records of the runs that wrote the replaced files stay as they are.

use crate::commit::partition_order;
use crate::error::{Result, StoreError};
use crate::partition::{partition_path, PartFile, Span};
use crate::schema::{to_table, StoredObservation};
use crate::store::Store;
use crate::summary::IngestSummary;
use chrono::NaiveDate;
use rayon::prelude::*;
use serde::Serialize;
use std::path::Path;

/// What a compaction did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CompactSummary {
    /// The compaction's run id (`None` when there was nothing to compact: no run
    /// record is written then).
    pub run_id: Option<String>,
    /// Months whose files were merged.
    pub months: usize,
    /// Files replaced, and files written (one per month).
    pub files_replaced: usize,
    /// Files written, one per month merged.
    pub files_written: usize,
    /// Rows moved: the same before and after.
    pub rows: u64,
    /// Files the store's readers open, before and after.
    pub files_before: usize,
    /// Files the store's readers open after the compaction.
    pub files_after: usize,
}

/// Which months a compaction merges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compaction {
    /// Every month with at least this many files (2 or more).
    MinFiles(usize),
    /// Every month holding a file of one date (the layout before month
    /// partitions), whatever their number: `rentix store migrate`.
    Migrate,
}

/// Merges the files of every month `which` names into one file per month. Memory
/// holds about `batch_rows` rows: months with fewer together are merged in
/// parallel, each sorted in memory; a month with more is merged from its files a
/// slice at a time (they are in partition order), into the same file.
pub fn compact(store_dir: &Path, which: Compaction, batch_rows: usize) -> Result<CompactSummary> {
    let store = Store::open(store_dir)?;
    let what = match which {
        Compaction::MinFiles(_) => "store compact",
        Compaction::Migrate => "store migrate",
    };
    let lock = crate::lock::StoreLock::acquire(&store_dir.join(".lock"), what)?;
    // Before the sweep: a killed run's leftovers keep their id from being reused.
    let run_id = store.next_run_id()?;
    store.sweep(&lock)?;
    let parts = store.partitions()?;
    let files_before = parts.len();
    let due: Vec<Due> = parts
        .by_month()
        .into_iter()
        .filter(|(_, files)| match which {
            Compaction::MinFiles(n) => files.len() >= n.max(2),
            Compaction::Migrate => files.iter().any(|f| matches!(f.span, Span::Date(_))),
        })
        .map(|(m, files)| (m, files.into_iter().cloned().collect()))
        .collect();
    let mut out = CompactSummary {
        files_before,
        files_after: files_before,
        ..Default::default()
    };
    if due.is_empty() {
        return Ok(out);
    }
    let staged = store_dir.join("staging").join(&run_id).join("commit");
    let mut summary = IngestSummary {
        run_id: run_id.clone(),
        mapping: "compact".into(),
        ..Default::default()
    };
    let written = stage_months(
        &store,
        &due,
        batch_rows.max(1),
        &run_id,
        &staged,
        &mut summary,
    )
    .and_then(|()| crate::publish::publish(store_dir, &lock, &staged, &summary));
    if let Err(e) = written {
        // Nothing was committed: what was staged goes now, not at the next run.
        crate::publish::remove_staging(store_dir, &run_id);
        return Err(e);
    }
    // Committed: the replaced files are no part of the store any more. Removed now;
    // any this fails to remove, the next run's sweep does.
    for gone in &summary.replaces {
        let path = store_dir.join(gone);
        let _ = std::fs::remove_file(&path);
        // A date's or month's directory left empty goes too (a directory that
        // still holds a file is not removed).
        if let Some(dir) = path.parent() {
            let _ = std::fs::remove_dir(dir);
        }
    }
    crate::publish::remove_staging(store_dir, &run_id);
    out.run_id = Some(run_id);
    out.months = due.len();
    out.files_replaced = summary.replaces.len();
    out.files_written = summary.partitions.len();
    out.rows = summary.compacted_rows;
    out.files_after = files_before - out.files_replaced + out.files_written;
    drop(lock);
    Ok(out)
}

/// Writes the merged file of every month `due` under `staged`, and what it did into
/// `summary`.
fn stage_months(
    store: &Store,
    due: &[Due],
    batch_rows: usize,
    run_id: &str,
    staged: &Path,
    summary: &mut IngestSummary,
) -> Result<()> {
    let mut dates: Option<(NaiveDate, NaiveDate)> = None;
    for (chunk, rows) in chunks_by_rows(due, store.root(), batch_rows)? {
        let moved: Vec<Moved> = if rows > batch_rows {
            // One month alone, too busy to hold: merged a slice of each file at a time.
            let (month, files) = &chunk[0];
            // Each file's bytes checked against its record before its slices are read
            // (under the lock: no run changes them meanwhile).
            for f in files {
                crate::checked::check_file(&store.root().join(&f.rel), f.committed())?;
            }
            let paths: Vec<_> = files.iter().map(|f| store.root().join(&f.rel)).collect();
            let slice = (batch_rows / paths.len().max(1)).max(1);
            let to = staged.join(partition_path(*month, run_id));
            vec![crate::merge::merge_stored(&paths, &to, slice)?]
        } else {
            chunk
                .par_iter()
                .map(|(month, files)| {
                    let rel = partition_path(*month, run_id);
                    compact_month(store, *month, files, &staged.join(&rel))
                })
                .collect::<Result<_>>()?
        };
        for (m, (month, files)) in moved.into_iter().zip(chunk) {
            // A month of no rows (no ingest writes one) gets no file.
            if m.rows > 0 {
                summary.partitions.push(partition_path(*month, run_id));
            }
            if let Some((a, b)) = m.dates {
                dates = Some(dates.map_or((a, b), |(f, l)| (f.min(a), l.max(b))));
            }
            summary.replaces.extend(files.iter().map(|f| f.rel.clone()));
            summary.compacted_rows += m.rows;
        }
    }
    summary.first_fixing_date = dates.map(|(d, _)| d.to_string());
    summary.last_fixing_date = dates.map(|(_, d)| d.to_string());
    Ok(())
}

/// What merging one month's files moved: its rows, and the first and last fixing
/// date among them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Moved {
    pub rows: u64,
    pub dates: Option<(NaiveDate, NaiveDate)>,
}

/// A month due for compaction (its first day) and its files.
type Due = (NaiveDate, Vec<PartFile>);

/// `due` cut into runs of consecutive months holding at most `batch_rows` rows
/// together (as their files' footers count them), or one month each if larger; with
/// the rows each holds.
fn chunks_by_rows<'d>(
    due: &'d [Due],
    store_dir: &Path,
    batch_rows: usize,
) -> Result<Vec<(&'d [Due], usize)>> {
    let sizes: Vec<usize> = due
        .par_iter()
        .map(|(_, files)| {
            files
                .iter()
                .map(|f| rentix_table::Table::parquet_rows(&store_dir.join(&f.rel)))
                .sum::<std::result::Result<usize, _>>()
        })
        .collect::<std::result::Result<_, _>>()?;
    let mut chunks = Vec::new();
    let (mut start, mut rows) = (0, 0);
    for (i, n) in sizes.iter().enumerate() {
        if i > start && rows + n > batch_rows {
            chunks.push((&due[start..i], rows));
            (start, rows) = (i, 0);
        }
        rows += n;
    }
    if start < due.len() {
        chunks.push((&due[start..], rows));
    }
    Ok(chunks)
}

/// Writes the rows of `files` (one month's) as one file at `to`, in partition
/// order. Refuses a month whose files share a dedupe key (the key includes the
/// fixing date): an ingest never writes one, so the store would need repair, not
/// compaction.
fn compact_month(store: &Store, month: NaiveDate, files: &[PartFile], to: &Path) -> Result<Moved> {
    let mut rows: Vec<StoredObservation> = Vec::new();
    for f in files {
        rows.extend(store.read_file(f, crate::schema::Projection::All)?);
    }
    rows.par_sort_unstable_by(partition_order);
    let mut keys: Vec<&rentix_core::Id> = rows.iter().map(|r| &r.dedupe_key).collect();
    keys.par_sort_unstable();
    if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
        return Err(StoreError::Store {
            path: store
                .root()
                .join("observations")
                .join(Span::month_of(month).segment()),
            detail: format!(
                "dedupe key {} is stored twice in {}; `rentix store check` and repair the store before compacting",
                w[0],
                month.format("%Y-%m")
            ),
        });
    }
    drop(keys);
    let dates = rows
        .first()
        .zip(rows.last())
        .map(|(a, b)| (a.obs.fixing_date, b.obs.fixing_date));
    let n = rows.len() as u64;
    rentix_table::write_unsynced_parquet_batches(
        to,
        rows.chunks_mut(rentix_table::ROW_GROUP_ROWS).map(to_table),
    )?;
    Ok(Moved { rows: n, dates })
}
