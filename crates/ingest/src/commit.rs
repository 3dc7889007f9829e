//! The commit of one ingest run, date by date: merge the run's rows of a fixing date
//! with what the store holds, keep one row per dedupe key (the survivor chosen by
//! content, so input order does not matter), count duplicates and conflicts, sort,
//! and write the date's partition under staging. Dates are independent, so they are
//! committed in parallel by chunks; outcomes are merged in date order, so the result
//! does not depend on the thread count.

use crate::error::Result;
use crate::schema::{content_key, to_table, StoredObservation};
use crate::store::{partition_path, Store};
use crate::summary::Conflict;
use chrono::NaiveDate;
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Conflicts listed at most, per date and in the summary.
pub(crate) const MAX_CONFLICT_EXAMPLES: usize = 100;

/// What committing one fixing date did.
#[derive(Debug, Default)]
pub(crate) struct DateOutcome {
    pub date: Option<NaiveDate>,
    /// The partition written (relative to the store), when any row was kept.
    pub partition: Option<String>,
    pub accepted: u64,
    pub duplicates_within_run: u64,
    pub duplicates_of_store: u64,
    pub conflicts: u64,
    pub conflict_examples: Vec<Conflict>,
    pub accepted_by_file: BTreeMap<String, u64>,
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

/// The rows of one date to commit, with the spill files still to read.
pub(crate) struct DateInput {
    pub date: NaiveDate,
    pub rows: Vec<StoredObservation>,
    pub spills: Vec<crate::spill::Section>,
}

/// Everything a date's commit needs from the run.
pub(crate) struct CommitCtx<'a> {
    pub store: &'a Store,
    pub committed: &'a BTreeMap<NaiveDate, Vec<String>>,
    pub run_id: &'a str,
    /// Where partitions are written before the commit moves them into place.
    pub staging: &'a Path,
}

/// Commits a chunk of dates in parallel; outcomes in date order.
pub(crate) fn commit_dates(
    ctx: &CommitCtx<'_>,
    inputs: Vec<DateInput>,
) -> Result<Vec<DateOutcome>> {
    inputs
        .into_par_iter()
        .map(|i| commit_date(ctx, i))
        .collect()
}

fn owned_counts(m: BTreeMap<&str, u64>) -> BTreeMap<String, u64> {
    m.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

fn commit_date(ctx: &CommitCtx<'_>, input: DateInput) -> Result<DateOutcome> {
    let DateInput {
        date,
        mut rows,
        spills,
    } = input;
    for section in &spills {
        rows.extend(crate::spill::read_section(section)?);
    }
    let mut out = DateOutcome {
        date: Some(date),
        ..Default::default()
    };
    // The stored rows of this date: their keys make duplicates, their content tells a
    // true duplicate from a conflict.
    let stored: BTreeMap<String, StoredObservation> = ctx
        .store
        .rows_on(ctx.committed, date)?
        .into_iter()
        .map(|r| (r.dedupe_key.clone(), r))
        .collect();
    let existing: BTreeSet<&String> = stored.keys().collect();
    // Parallel, stable sorts: a date of millions of quotes (one day's feed) is
    // committed by one task, and would otherwise sort on one core.
    rows.par_sort_by(|a, b| a.dedupe_key.cmp(&b.dedupe_key));
    // Counted by file name borrowed from the rows, owned once at the end: a date of
    // a million rows from one file is one map entry, not a million name copies.
    let mut accepted_by_file: BTreeMap<&str, u64> = BTreeMap::new();
    let mut duplicates_by_file: BTreeMap<&str, u64> = BTreeMap::new();
    let mut survivors: Vec<usize> = Vec::with_capacity(rows.len());
    let mut start = 0;
    while start < rows.len() {
        let mut end = start + 1;
        while end < rows.len() && rows[end].dedupe_key == rows[start].dedupe_key {
            end += 1;
        }
        let group = &rows[start..end];
        // Among rows sharing a key, the one with the smallest content survives, so
        // the survivor does not depend on input order.
        let survivor = if group.len() == 1
            || group[1..]
                .iter()
                .all(|r| same_content(&r.obs, &group[0].obs))
        {
            // Re-sent rows: every candidate is the same content (the first wins, as
            // it would by content key), and formatting the keys is skipped.
            0
        } else {
            (0..group.len())
                .min_by_key(|&k| content_key(&group[k].obs))
                .unwrap_or(0)
        };
        let in_store = existing.contains(&group[0].dedupe_key);
        let kept_row = if in_store {
            stored.get(&group[0].dedupe_key)
        } else {
            group.get(survivor)
        };
        if let Some(kept_row) = kept_row {
            let kept_terms = terms(&kept_row.obs);
            for (k, r) in group.iter().enumerate() {
                if (in_store || k != survivor) && terms(&r.obs) != kept_terms {
                    out.conflicts += 1;
                    if out.conflict_examples.len() < MAX_CONFLICT_EXAMPLES {
                        out.conflict_examples.push(Conflict {
                            dedupe_key: r.dedupe_key.clone(),
                            fixing_date: date.to_string(),
                            file: r.obs.input_file.clone(),
                            row: r.obs.input_row,
                            kept_usd_per_gpu_hour: kept_row.obs.usd_per_gpu_hour.get(),
                            dropped_usd_per_gpu_hour: r.obs.usd_per_gpu_hour.get(),
                            kept_from_store: in_store,
                        });
                    }
                }
            }
        }
        for (k, r) in group.iter().enumerate() {
            let file = r.obs.input_file.as_str();
            if in_store {
                out.duplicates_of_store += 1;
                *duplicates_by_file.entry(file).or_default() += 1;
            } else if k != survivor {
                out.duplicates_within_run += 1;
                *duplicates_by_file.entry(file).or_default() += 1;
            } else {
                *accepted_by_file.entry(file).or_default() += 1;
            }
        }
        if !in_store {
            survivors.push(start + survivor);
        }
        start = end;
    }
    out.accepted_by_file = owned_counts(accepted_by_file);
    out.duplicates_by_file = owned_counts(duplicates_by_file);
    // Survivors are taken out of `rows` in key order (ascending indices).
    let mut kept: Vec<StoredObservation> = Vec::with_capacity(survivors.len());
    let mut next = survivors.into_iter().peekable();
    for (i, r) in rows.into_iter().enumerate() {
        if next.peek() == Some(&i) {
            next.next();
            kept.push(r);
        }
    }
    if kept.is_empty() {
        return Ok(out);
    }
    kept.par_sort_by(|a, b| {
        (
            &a.obs.grade,
            a.obs.kind,
            a.obs.observed_at,
            &a.obs.source,
            &a.dedupe_key,
        )
            .cmp(&(
                &b.obs.grade,
                b.obs.kind,
                b.obs.observed_at,
                &b.obs.source,
                &b.dedupe_key,
            ))
    });
    let rel = partition_path(date, ctx.run_id);
    // Written under staging and moved into observations/ only at the commit, so the
    // dataset directory never holds an uncommitted file for an outside reader
    // (DuckDB, Spark, polars) to glob.
    // (The write creates the date's directory.)
    let staged = ctx.staging.join(&rel);
    out.accepted = kept.len() as u64;
    // Made durable with the run's other partitions before any is published.
    to_table(kept).write_unsynced_parquet(&staged)?;
    out.partition = Some(rel);
    Ok(out)
}
