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

/// Positions of `rows` in dedupe-key order, rows sharing a key in their input
/// order (what a stable sort of the rows by key gives).
fn key_order(rows: &[StoredObservation]) -> Vec<usize> {
    let keys: Vec<&str> = rows.iter().map(|r| r.dedupe_key.as_str()).collect();
    order_of_keys(&keys)
}

/// Positions of `keys` in sorted order, equal keys in input order. Keys of 32
/// lowercase hex digits (every key ingest makes) are compared as the 128-bit
/// numbers they spell, which is the same order as their text.
fn order_of_keys(keys: &[&str]) -> Vec<usize> {
    let numbers: Option<Vec<(u128, usize)>> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| {
            (k.len() == 32 && k.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
                .then(|| u128::from_str_radix(k, 16).ok())
                .flatten()
                .map(|n| (n, i))
        })
        .collect();
    match numbers {
        Some(mut keyed) => {
            keyed.par_sort_unstable();
            keyed.into_iter().map(|(_, i)| i).collect()
        }
        None => {
            let mut order: Vec<usize> = (0..keys.len()).collect();
            order.par_sort_by(|a, b| keys[*a].cmp(keys[*b]));
            order
        }
    }
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
    // Room for every spilled row at once: a busy date's vector, grown by doubling,
    // was copied into fresh memory again and again.
    rows.reserve_exact(spills.iter().map(|s| s.rows).sum());
    for section in &spills {
        crate::spill::read_section(section, &mut rows)?;
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
    // Rows stay where they are; their positions are sorted (in parallel: a date of
    // millions of quotes, one day's feed, is committed by one task). Moving the rows
    // themselves, hundreds of bytes each, was most of a busy date's commit.
    let order = key_order(&rows);
    // Counted by file name borrowed from the rows, owned once at the end: a date of
    // a million rows from one file is one map entry, not a million name copies.
    let mut accepted_by_file: BTreeMap<&str, u64> = BTreeMap::new();
    let mut duplicates_by_file: BTreeMap<&str, u64> = BTreeMap::new();
    let mut survivors: Vec<usize> = Vec::with_capacity(rows.len());
    let mut start = 0;
    while start < order.len() {
        let key = &rows[order[start]].dedupe_key;
        let mut end = start + 1;
        while end < order.len() && rows[order[end]].dedupe_key == *key {
            end += 1;
        }
        // The rows sharing this key, in input order.
        let group = || order[start..end].iter().map(|&i| &rows[i]);
        let first = &rows[order[start]];
        // Among rows sharing a key, the one with the smallest content survives, so
        // the survivor does not depend on input order.
        let survivor = if end - start == 1 || group().all(|r| same_content(&r.obs, &first.obs)) {
            // Re-sent rows: every candidate is the same content (the first wins, as
            // it would by content key), and formatting the keys is skipped.
            0
        } else {
            group()
                .enumerate()
                .min_by_key(|(_, r)| content_key(&r.obs))
                .map_or(0, |(k, _)| k)
        };
        let in_store = existing.contains(&first.dedupe_key);
        let kept_row = if in_store {
            stored.get(&first.dedupe_key)
        } else {
            Some(&rows[order[start + survivor]])
        };
        if let Some(kept_row) = kept_row {
            let kept_terms = terms(&kept_row.obs);
            for (k, r) in group().enumerate() {
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
        for (k, r) in group().enumerate() {
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
            survivors.push(order[start + survivor]);
        }
        start = end;
    }
    out.accepted_by_file = owned_counts(accepted_by_file);
    out.duplicates_by_file = owned_counts(duplicates_by_file);
    if survivors.is_empty() {
        return Ok(out);
    }
    // The partition's row order, sorted by position; then each survivor is moved
    // out of `rows` once. (Keys are unique among survivors: the order is total.)
    let row_key = |i: &usize| {
        let r = &rows[*i];
        (
            &r.obs.grade,
            r.obs.kind,
            r.obs.observed_at,
            &r.obs.source,
            &r.dedupe_key,
        )
    };
    survivors.par_sort_unstable_by(|a, b| row_key(a).cmp(&row_key(b)));
    let mut slots: Vec<Option<StoredObservation>> = rows.into_iter().map(Some).collect();
    let kept: Vec<StoredObservation> = survivors.iter().filter_map(|&i| slots[i].take()).collect();
    let rel = partition_path(date, ctx.run_id);
    // Written under staging and moved into observations/ only at the commit, so the
    // dataset directory never holds an uncommitted file for an outside reader
    // (DuckDB, Spark, polars) to glob.
    // (The write creates the date's directory.)
    let staged = ctx.staging.join(&rel);
    out.accepted = kept.len() as u64;
    // Made durable with the run's other partitions before any is published.
    // Converted and written a row group at a time: a busy date's rows are never
    // held as one whole table (and once more as polars' columns) beside the rows.
    let mut kept = kept;
    rentix_table::write_unsynced_parquet_batches(
        &staged,
        kept.chunks_mut(rentix_table::ROW_GROUP_ROWS).map(to_table),
    )?;
    out.partition = Some(rel);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a stable sort of the keys' text gives.
    fn text_order(keys: &[&str]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.sort_by(|a, b| keys[*a].cmp(keys[*b]));
        order
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
        assert_eq!(order_of_keys(&keys), text_order(&keys));
        assert_eq!(order_of_keys(&keys), [1, 6, 3, 5, 0, 2, 4]);
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
        assert_eq!(order_of_keys(&keys), text_order(&keys));
    }
}
