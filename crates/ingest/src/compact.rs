//! `rentix store compact`: merges the files of each fixing date that runs have
//! accumulated (one per run that touched the date: hourly ingests, late quotes)
//! into one file, so that readers open one file per date.
//!
//! A compaction is a run like an ingest: under the store's lock, written under
//! staging and published at one commit point (its run record, which names the file
//! it wrote per date and the files it `replaces`). The rows are the same, with their
//! provenance (`input_file`, `input_row`), in the partition order an ingest writes;
//! the records of the runs that wrote the replaced files stay as they are.

use crate::commit::partition_order;
use crate::error::{IngestError, Result};
use crate::schema::{to_table, StoredObservation};
use crate::store::{partition_path, Store};
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
    /// Dates whose files were merged.
    pub dates: usize,
    /// Files replaced, and files written (one per date).
    pub files_replaced: usize,
    pub files_written: usize,
    /// Rows moved: the same before and after.
    pub rows: u64,
    /// Files the store's readers open, before and after.
    pub files_before: usize,
    pub files_after: usize,
}

/// Merges the files of every fixing date that has at least `min_files` of them
/// (2 or more) into one file per date. Memory holds about `batch_rows` rows: dates
/// with fewer together are merged in parallel, each sorted in memory; a date with
/// more is merged from its files a slice at a time (they are in partition order),
/// into the same file.
pub fn compact(store_dir: &Path, min_files: usize, batch_rows: usize) -> Result<CompactSummary> {
    let store = Store::open(store_dir)?;
    let lock = crate::lock::StoreLock::acquire(&store_dir.join(".lock"), "store compact")?;
    // Before the sweep: a killed run's leftovers keep their id from being reused.
    let run_id = store.next_run_id()?;
    store.sweep(&lock)?;
    let parts = store.partitions()?;
    let files_before = parts.values().map(Vec::len).sum();
    let due: Vec<Due<'_>> = parts
        .iter()
        .filter(|(_, files)| files.len() >= min_files.max(2))
        .map(|(d, f)| (*d, f))
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
    let written = stage_dates(
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
        let _ = std::fs::remove_file(store_dir.join(gone));
    }
    crate::publish::remove_staging(store_dir, &run_id);
    out.run_id = Some(run_id);
    out.dates = due.len();
    out.files_replaced = summary.replaces.len();
    out.files_written = summary.partitions.len();
    out.rows = summary.compacted_rows;
    out.files_after = files_before - out.files_replaced + out.files_written;
    drop(lock);
    Ok(out)
}

/// Writes the merged file of every date `due` under `staged`, and what it did into
/// `summary`.
fn stage_dates(
    store: &Store,
    due: &[Due<'_>],
    batch_rows: usize,
    run_id: &str,
    staged: &Path,
    summary: &mut IngestSummary,
) -> Result<()> {
    for (chunk, rows) in chunks_by_rows(due, store.root(), batch_rows)? {
        let moved: Vec<(NaiveDate, u64)> = if rows > batch_rows {
            // One date alone, too busy to hold: merged a slice of each file at a time.
            let (date, files) = chunk[0];
            let paths: Vec<_> = files.iter().map(|f| store.root().join(f)).collect();
            let slice = (batch_rows / paths.len().max(1)).max(1);
            let to = staged.join(partition_path(date, run_id));
            vec![(date, crate::merge::merge_stored(&paths, &to, slice)?)]
        } else {
            chunk
                .par_iter()
                .map(|(date, files)| {
                    let rel = partition_path(*date, run_id);
                    compact_date(store, *date, files, &staged.join(&rel)).map(|n| (*date, n))
                })
                .collect::<Result<_>>()?
        };
        for ((date, n), (_, files)) in moved.into_iter().zip(chunk) {
            // A date of no rows (no ingest writes one) gets no file.
            if n > 0 {
                summary.partitions.push(partition_path(date, run_id));
            }
            summary.replaces.extend(files.iter().cloned());
            summary.compacted_rows += n;
        }
    }
    summary.first_fixing_date = due.first().map(|(d, _)| d.to_string());
    summary.last_fixing_date = due.last().map(|(d, _)| d.to_string());
    Ok(())
}

/// A date due for compaction and its files.
type Due<'s> = (NaiveDate, &'s Vec<String>);

/// `due` cut into runs of consecutive dates holding at most `batch_rows` rows
/// together (as their files' footers count them), or one date each if larger; with
/// the rows each holds.
fn chunks_by_rows<'d, 's>(
    due: &'d [Due<'s>],
    store_dir: &Path,
    batch_rows: usize,
) -> Result<Vec<(&'d [Due<'s>], usize)>> {
    let sizes: Vec<usize> = due
        .par_iter()
        .map(|(_, files)| {
            files
                .iter()
                .map(|f| rentix_table::Table::parquet_rows(&store_dir.join(f)))
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

/// Writes the rows of `files` (one date's) as one file at `to`, in partition order;
/// returns how many. Refuses a date whose files share a dedupe key: an ingest
/// never writes one, so the store would need repair, not compaction.
fn compact_date(store: &Store, date: NaiveDate, files: &[String], to: &Path) -> Result<u64> {
    let mut rows: Vec<StoredObservation> = Vec::new();
    for f in files {
        rows.extend(store.read_part(f)?);
    }
    rows.par_sort_unstable_by(partition_order);
    let mut keys: Vec<&str> = rows.iter().map(|r| r.dedupe_key.as_str()).collect();
    keys.par_sort_unstable();
    if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
        return Err(IngestError::Store {
            path: store.root().join(format!("observations/date={date}")),
            detail: format!(
                "dedupe key {} is stored twice on {date}; `rentix store check` and repair the store before compacting",
                w[0]
            ),
        });
    }
    drop(keys);
    let n = rows.len() as u64;
    rentix_table::write_unsynced_parquet_batches(
        to,
        rows.chunks_mut(rentix_table::ROW_GROUP_ROWS).map(to_table),
    )?;
    Ok(n)
}
