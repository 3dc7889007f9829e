//! `rentix store check`, `rentix store compact` and `rentix store migrate`: a few
//! lines for a person, the whole report with `--json`.

use crate::cli::{StoreArgs, StoreCommand};
use rentix_store::{
    check_store, check_store_quick, compact, CompactSummary, Compaction, Store, StoreReport,
};
use std::path::Path;

pub(super) fn run(a: StoreArgs) -> anyhow::Result<()> {
    match a.command {
        StoreCommand::Check {
            store,
            deep: _,
            quick,
            json,
        } => {
            let s = Store::open(&store)?;
            // `--deep` is the default check's old name.
            let r = if quick {
                check_store_quick(&s)
            } else {
                check_store(&s)
            };
            if json {
                outln!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                outln!("{}", check_text(&store, &r, quick).trim_end());
            }
            if !r.is_sound() {
                return Err(crate::commands::Finding(format!(
                    "{}: {} problem(s); the first: {}",
                    store.display(),
                    r.problems.len(),
                    r.problems[0]
                ))
                .into());
            }
            Ok(())
        }
        StoreCommand::Compact {
            store,
            min_files,
            batch_rows,
            json,
        } => {
            let s = compact(&store, Compaction::MinFiles(min_files as usize), batch_rows)?;
            say(
                &store,
                &s,
                json,
                &format!("no month has {min_files} files or more"),
            )
        }
        StoreCommand::Migrate {
            store,
            batch_rows,
            json,
        } => {
            let s = compact(&store, Compaction::Migrate, batch_rows)?;
            say(&store, &s, json, "the store is already by month")
        }
    }
}

fn say(store: &Path, s: &CompactSummary, json: bool, nothing: &str) -> anyhow::Result<()> {
    if json {
        outln!("{}", serde_json::to_string_pretty(s)?);
        return Ok(());
    }
    match &s.run_id {
        None => outln!(
            "{}: nothing to do ({nothing}); {} partition file(s)",
            store.display(),
            s.files_before
        ),
        Some(run) => outln!(
            "{}: {run} merged {} month(s): {} file(s) replaced by {} ({} rows, the same); {} partition file(s) now, {} before",
            store.display(),
            s.months,
            s.files_replaced,
            s.files_written,
            s.rows,
            s.files_after,
            s.files_before
        ),
    }
    Ok(())
}

/// The few lines `store check` prints without `--json`.
fn check_text(store: &Path, r: &StoreReport, quick: bool) -> String {
    let mut t = format!(
        "{}: {} run(s), {} partition file(s), {} rows; {}",
        store.display(),
        r.runs,
        r.partitions,
        r.rows,
        if quick {
            "sizes and rows checked (--quick: no checksum recomputed)".to_string()
        } else {
            format!(
                "{} checksum(s) recomputed and matched",
                r.checksums_verified
            )
        }
    );
    t.push_str(if r.is_sound() { "; sound\n" } else { "\n" });
    if r.months_in_several_files > 0 {
        t.push_str(&format!(
            "{} month(s) in several files: `rentix store compact` merges them\n",
            r.months_in_several_files
        ));
    }
    if r.date_partitions > 0 {
        t.push_str(&format!(
            "{} file(s) of one date (the layout before months): `rentix store migrate` rewrites them\n",
            r.date_partitions
        ));
    }
    if !r.uncommitted_files.is_empty() {
        t.push_str(&format!(
            "{} uncommitted file(s) no run names (the next ingest sweeps them): {}\n",
            r.uncommitted_files.len(),
            r.uncommitted_files.join(", ")
        ));
    }
    if let Some(lock) = &r.lock {
        t.push_str(&format!("locked: {lock}\n"));
    }
    for n in &r.notes {
        t.push_str(&format!("note: {n}\n"));
    }
    for p in &r.problems {
        t.push_str(&format!("problem: {p}\n"));
    }
    t
}
