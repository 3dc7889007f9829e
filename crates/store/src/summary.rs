//! The ingest summary: one JSON record per run, which is also the run's commit record.

use rentix_core::Cutoff;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What happened to one input file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileSummary {
    /// The input's path as given on the command line.
    pub path: String,
    /// SHA-256 of its bytes as read, lowercase hexadecimal.
    pub input_sha256: String,
    /// Records in the file (data rows, header excluded).
    pub source_rows: u64,
    /// Candidate observations: one per record per mapping emit block that applied.
    pub rows_read: u64,
    /// Candidates of this file the run committed.
    pub accepted: u64,
    /// Candidates of this file refused, each a quarantine row.
    pub quarantined: u64,
    /// Candidates of this file dropped as duplicates (of the run or of the store).
    pub duplicates: u64,
    /// The same bytes were read by an earlier run: only the rows that the latest run
    /// which read them quarantined were read again (`retried`).
    pub already_ingested: bool,
    /// Records of an already-ingested file read again because the latest run that
    /// read them quarantined them; those now valid are among `accepted`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retried: u64,
    /// The quarantine file of the run that read this file last was gone, so every
    /// record was read again (`retried` counts them; those stored already are
    /// duplicates).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reread_whole: bool,
    /// Raw GPU names the catalog does not know, with their row counts.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unknown_gpus: BTreeMap<String, u64>,
    /// Columns of a canonical-layout file that no field reads but that look like a
    /// canonical column the file lacks (`upfront_usd`: `upfront`), with that column:
    /// every row was read without it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unread_columns: BTreeMap<String, String>,
    /// Valid rows with an operator tier (from the row or the ratings), and without.
    #[serde(default)]
    pub rated_rows: u64,
    /// Valid rows without an operator tier.
    #[serde(default)]
    pub unrated_rows: u64,
}

/// One partition file as the run that wrote it committed it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionChecksum {
    /// SHA-256 of the file's bytes, lowercase hexadecimal.
    pub sha256: String,
    /// Rows, from the Parquet footer.
    pub rows: u64,
    /// Size of the file in bytes.
    pub bytes: u64,
}

/// A duplicate whose content differs from the row kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Conflict {
    /// The key the two rows share (32 hexadecimal digits).
    pub dedupe_key: String,
    /// Their fixing date, `YYYY-MM-DD`.
    pub fixing_date: String,
    /// File and row of the duplicate that was not kept.
    pub file: String,
    /// Its 1-based data row in `file`.
    pub row: u64,
    /// The kept row's price, USD per GPU-hour.
    pub kept_usd_per_gpu_hour: f64,
    /// The dropped row's price, USD per GPU-hour.
    pub dropped_usd_per_gpu_hour: f64,
    /// Whether the row kept is in the store from an earlier run.
    pub kept_from_store: bool,
}

/// The summary of one ingest run. `rows_read = accepted + quarantined + duplicates`
/// holds for the run and for every file; the run is refused otherwise.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IngestSummary {
    /// `run-NNNNNN`, the name of the run's record and files (empty for
    /// `rentix_ingest::read_in_memory`).
    pub run_id: String,
    /// The mapping's name, `canonical` without one, `compact` for a compaction.
    pub mapping: String,
    /// The cut-off the run assigned fixing dates (and partitions) under.
    pub cutoff: Cutoff,
    /// Candidate observations of every file (see [`FileSummary::rows_read`]).
    pub rows_read: u64,
    /// Candidates committed to the store (0 for a compaction).
    pub accepted: u64,
    /// Candidates refused, each a row of `quarantine_file`.
    pub quarantined: u64,
    /// Counts per reason code.
    pub quarantined_by_reason: BTreeMap<String, u64>,
    /// Raw GPU names the catalog does not know, with their row counts, most rows
    /// first (at most 100 names): add an alias in data/gpus.toml or a mapping file.
    #[serde(default)]
    pub unknown_gpus: Vec<(String, u64)>,
    /// Valid rows (before duplicates are removed) with an operator tier, from the row
    /// or from the ratings in force on their date, and without one.
    #[serde(default)]
    pub rated_rows: u64,
    /// Valid rows without an operator tier (see `rated_rows`).
    #[serde(default)]
    pub unrated_rows: u64,
    /// Candidates dropped as duplicates: `duplicates_within_run +
    /// duplicates_of_store`.
    pub duplicates: u64,
    /// Duplicates of a row in this run / of a row already in the store.
    pub duplicates_within_run: u64,
    /// Duplicates of a row an earlier run committed.
    pub duplicates_of_store: u64,
    /// Records of already-ingested files retried after an earlier quarantine.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retried: u64,
    /// The quarantine file of the run that read this file last was gone, so every
    /// record was read again (`retried` counts them; those stored already are
    /// duplicates).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reread_whole: bool,
    /// Duplicates (same source and `obs_id`, or same content key) whose content
    /// differs from the row kept: counted among the duplicates, and listed.
    #[serde(default)]
    pub conflicts: u64,
    /// The first conflicts (at most 100), for a person to check.
    #[serde(default)]
    pub conflict_examples: Vec<Conflict>,
    /// Input file path -> SHA-256 of its bytes.
    pub input_sha256: BTreeMap<String, String>,
    /// Each input file's counts, in the order given.
    pub files: Vec<FileSummary>,
    /// Partition files written by this run, relative to the store.
    pub partitions: Vec<String>,
    /// Partition file (as in `partitions`) -> its SHA-256, rows and size as this run
    /// committed it: what `store check` compares (sizes and rows; `--deep` the
    /// SHA-256). Only in the run record (the printed summary leaves it out), and
    /// empty in records written before checksums were recorded.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub partition_checksums: BTreeMap<String, PartitionChecksum>,
    /// The run's quarantine, relative to the store (`quarantine/run-NNNNNN.csv`),
    /// written even when empty.
    pub quarantine_file: String,
    /// The earliest fixing date the run committed rows of (a compaction: moved),
    /// `YYYY-MM-DD`; `None` when it committed none.
    pub first_fixing_date: Option<String>,
    /// The latest such date.
    pub last_fixing_date: Option<String>,
    /// A compaction (`rentix store compact`) only: the partition files whose rows it
    /// merged into its own `partitions`. From its commit on they are no part of the
    /// store (readers skip them, the next run removes any left behind), while the
    /// records of the runs that wrote them still say what those runs did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replaces: Vec<String>,
    /// A compaction only: the rows it moved (as many as `replaces` held). A
    /// compaction accepts no rows, so stores' totals of `accepted` stay the rows held.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub compacted_rows: u64,
    /// Set when this run replaced a lock left by a process that is gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale_lock: Option<String>,
}

/// A digest of what the store's `runs` through the run `through` (by run id)
/// brought: each one's id, its inputs' SHA-256, its fixing dates, the rows it
/// accepted and the partitions a compaction replaced, in run order. A publication
/// records it beside the run it read through: a store rebuilt or replaced since
/// (the same run ids, other runs) gives another digest, and what was committed
/// after that run is then no longer known. Later runs do not change it.
pub fn runs_sha256(runs: &[IngestSummary], through: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut ordered: Vec<&IngestSummary> = runs
        .iter()
        .filter(|r| r.run_id.as_str() <= through)
        .collect();
    ordered.sort_by(|a, b| a.run_id.cmp(&b.run_id));
    let mut h = Sha256::new();
    let mut part = |text: &str| {
        h.update(text.as_bytes());
        h.update([0x1f]);
    };
    for r in ordered {
        part(&r.run_id);
        for (file, sha) in &r.input_sha256 {
            part(file);
            part(sha);
        }
        part(r.first_fixing_date.as_deref().unwrap_or(""));
        part(r.last_fixing_date.as_deref().unwrap_or(""));
        part(&r.accepted.to_string());
        for replaced in &r.replaces {
            part(replaced);
        }
        part("\u{1e}");
    }
    rentix_core::hex(&h.finalize())
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl IngestSummary {
    /// Checks `rows_read = accepted + quarantined + duplicates` for the run and each
    /// file; returns the first violation.
    pub fn check(&self) -> Result<(), rentix_core::Invalid> {
        let ok = |r: u64, a: u64, q: u64, d: u64| r == a + q + d;
        if !ok(
            self.rows_read,
            self.accepted,
            self.quarantined,
            self.duplicates,
        ) {
            return Err(format!(
                "run: rows_read {} != accepted {} + quarantined {} + duplicates {}",
                self.rows_read, self.accepted, self.quarantined, self.duplicates
            )
            .into());
        }
        for f in &self.files {
            if !ok(f.rows_read, f.accepted, f.quarantined, f.duplicates) {
                return Err(format!(
                    "{}: rows_read {} != accepted {} + quarantined {} + duplicates {}",
                    f.path, f.rows_read, f.accepted, f.quarantined, f.duplicates
                )
                .into());
            }
        }
        if self.quarantined_by_reason.values().sum::<u64>() != self.quarantined {
            return Err("quarantine counts by reason do not add up".into());
        }
        Ok(())
    }
}
