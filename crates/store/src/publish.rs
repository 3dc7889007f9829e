//! The commit point of a run that writes to the store (an ingest or a compaction):
//! its staged partitions move into place, then its run record names them.

use crate::error::{Result, StoreError};
use crate::lock::StoreLock;
use crate::summary::{IngestSummary, PartitionChecksum};
use rayon::prelude::*;
use rentix_table::write_atomic;
use std::path::{Path, PathBuf};

/// Publishes `summary`'s partitions, staged under `staged` at their paths relative
/// to the store, and then writes its run record, only while `lock` is still this
/// run's. The partitions are made durable before any moves (a rename each); a crash
/// before the record is written leaves files no record names, which the next run
/// sweeps. A signal waits for the whole publication (`release_all_locks`).
pub fn publish(
    store_dir: &Path,
    lock: &StoreLock,
    staged: &Path,
    summary: &IngestSummary,
) -> Result<()> {
    let record = store_dir
        .join("runs")
        .join(format!("{}.json", summary.run_id));
    let files: Vec<PathBuf> = summary
        .partitions
        .iter()
        .map(|rel| staged.join(rel))
        .collect();
    // The record holds what each partition is as committed (hashed from the staged
    // file, which is renamed into place unchanged): the checksums the summary
    // holds (its month writers hashed each file once written), the others
    // computed here.
    let mut committed = summary.clone();
    committed.partition_checksums = summary
        .partitions
        .par_iter()
        .zip(files.par_iter())
        .map(|(rel, file)| match summary.partition_checksums.get(rel) {
            Some(c) => Ok((rel.clone(), c.clone())),
            None => Ok((rel.clone(), checksum(file)?)),
        })
        .collect::<Result<_>>()?;
    let json = serde_json::to_string_pretty(&committed).map_err(|e| StoreError::Store {
        path: record.clone(),
        detail: e.to_string(),
    })?;
    let mut published = crate::lock::committing();
    lock.verify()?;
    rentix_table::sync_files(&files)?;
    let observations = store_dir.join("observations");
    std::fs::create_dir_all(&observations).map_err(|source| StoreError::Write {
        path: observations.clone(),
        source,
    })?;
    for rel in &summary.partitions {
        let (from, to) = (staged.join(rel), store_dir.join(rel));
        // A date new to the store moves in as its whole directory (one rename, no
        // mkdir: a two-year backfill is 731 of them); a date the store has already
        // gains one file.
        let (from_dir, to_dir) = (from.parent(), to.parent());
        let moved_dir = match (from_dir, to_dir) {
            (Some(fd), Some(td)) if !td.exists() => std::fs::rename(fd, td).is_ok(),
            _ => false,
        };
        if !moved_dir {
            std::fs::rename(&from, &to).map_err(|source| StoreError::Write { path: to, source })?;
        }
    }
    write_atomic(&record, |w| {
        w.write_all(json.as_bytes())
            .and_then(|_| w.write_all(b"\n"))
            .map_err(|source| rentix_table::TableError::Write {
                path: record.clone(),
                source,
            })
    })?;
    *published = Some("this run was committed (its run record lists it)");
    Ok(())
}

/// The SHA-256, rows (from the Parquet footer) and size of the partition file at
/// `path`.
pub(crate) fn checksum(path: &Path) -> Result<PartitionChecksum> {
    let bytes = std::fs::metadata(path)
        .map_err(|source| StoreError::Read {
            path: path.to_path_buf(),
            source,
        })?
        .len();
    Ok(PartitionChecksum {
        sha256: crate::hash::sha256_file(path)?,
        rows: rentix_table::Table::parquet_rows(path)? as u64,
        bytes,
    })
}

/// Removes a finished run's staging directory, and `staging/` itself when no other
/// run's is left in it.
pub fn remove_staging(store_dir: &Path, run_id: &str) {
    let _ = std::fs::remove_dir_all(store_dir.join("staging").join(run_id));
    let _ = std::fs::remove_dir(store_dir.join("staging"));
}
