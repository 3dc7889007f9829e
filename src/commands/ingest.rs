//! `rentix ingest`.

use crate::cli::IngestArgs;
use crate::progress;
use anyhow::Context;
use rentix_core::{Cutoff, FixingClock};
use rentix_ingest::{ingest, Bounds, IngestOptions};

pub(super) fn run(a: IngestArgs) -> anyhow::Result<()> {
    let cutoff = Cutoff {
        time: a.cutoff,
        timezone: a.timezone,
    };
    if let Err(e) = FixingClock::new(&cutoff) {
        crate::commands::usage!(
            "--cutoff {} --timezone {}: {e}",
            cutoff.time,
            cutoff.timezone
        );
    }
    if !(a.max_price.is_finite() && a.max_price > 0.0) {
        crate::commands::usage!("--max-price {} must be a positive number", a.max_price);
    }
    // A price above what a fixings file may hold could only be fixed into a value
    // no publication can write (a hostile round: 2100000.0 published, every
    // reader refusing the file after).
    let most = rentix_index::PLAUSIBLE_VALUES.1;
    if a.max_price > most {
        crate::commands::usage!(
            "--max-price {} is above {most:e} USD per GPU-hour, the largest value a fixings file may hold: rows priced above it could never be published",
            a.max_price
        );
    }
    if !(a.min_price.is_finite() && a.min_price >= 0.0 && a.min_price < a.max_price) {
        crate::commands::usage!(
            "--min-price {} must be a number >= 0 and below --max-price {}",
            a.min_price,
            a.max_price
        );
    }
    if !(a.max_quantity.is_finite() && a.max_quantity > 0.0) {
        crate::commands::usage!(
            "--max-quantity {} must be a positive number",
            a.max_quantity
        );
    }
    if a.max_future_days > 3660 {
        crate::commands::usage!(
            "--max-future-days {} is more than ten years",
            a.max_future_days
        );
    }
    if a.batch_rows == 0 || a.batch_rows > 50_000_000 {
        crate::commands::usage!("--batch-rows {} must be 1..=50000000", a.batch_rows);
    }
    let ratings = rentix_core::RatingTable::from_files(&a.ratings)?;
    let opts = IngestOptions {
        mapping: a.mapping,
        fx: a.fx,
        cutoff,
        batch_rows: a.batch_rows,
        bounds: Bounds::at(
            chrono::Utc::now(),
            a.max_future_days,
            (a.min_price, a.max_price),
            a.max_quantity,
        ),
        ratings,
    };
    let bar = progress::spinner("ingesting");
    let summary = ingest(&a.store, &a.files, &opts, &mut |n| bar.set_position(n))
        .with_context(|| format!("ingest into {} failed", a.store.display()))?;
    bar.finish_and_clear();
    if a.json {
        let json = serde_json::to_string_pretty(&summary)?;
        outln!("{json}");
    } else {
        outln!("{}", human(&summary, &a.store));
    }
    Ok(())
}

/// One line per file whose columns look like a canonical column it lacks and were
/// not read (`FileSummary::unread_columns`).
pub(super) fn unread_columns(s: &rentix_store::IngestSummary) -> Vec<String> {
    s.files
        .iter()
        .filter(|f| !f.unread_columns.is_empty())
        .map(|f| {
            let cols: Vec<String> = f
                .unread_columns
                .iter()
                .map(|(c, like)| format!("{c:?} (like {like:?})"))
                .collect();
            format!(
                "columns not read in {}: {}: the canonical names are exact, and every row was read without them; rename a column if it is the one it looks like, and read the file again",
                f.path,
                cols.join(", ")
            )
        })
        .collect()
}

/// What a person reads first: rows in, where they went and why, where the refused
/// rows are, and what to do about unknown GPUs.
pub(super) fn human(s: &rentix_store::IngestSummary, store: &std::path::Path) -> String {
    let mut out = format!(
        "ingested {} file(s) into {} ({}): {} rows read\n",
        s.files.len(),
        store.display(),
        s.run_id,
        s.rows_read
    );
    let dates = match (&s.first_fixing_date, &s.last_fixing_date) {
        (Some(a), Some(b)) if a == b => format!(" (fixing date {a})"),
        (Some(a), Some(b)) => format!(" (fixing dates {a} to {b})"),
        _ => String::new(),
    };
    out.push_str(&format!("  accepted     {:>9}{dates}\n", s.accepted));
    if s.duplicates > 0 {
        out.push_str(&format!(
            "  duplicates   {:>9}  rows seen before (same source and id, or the same content on the same fixing date: a snapshot feed repeats its rows); {} within this run, {} already in the store\n",
            s.duplicates, s.duplicates_within_run, s.duplicates_of_store
        ));
    }
    if s.conflicts > 0 {
        out.push_str(&format!(
            "  conflicts    {:>9}  duplicates whose kind, grade, price or volume differs from the row kept (`--json` lists the first {})\n",
            s.conflicts,
            s.conflict_examples.len()
        ));
    }
    let quarantine = store.join(&s.quarantine_file);
    if s.quarantined > 0 {
        let mut reasons: Vec<(&String, &u64)> = s.quarantined_by_reason.iter().collect();
        reasons.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let reasons: Vec<String> = reasons.iter().map(|(r, n)| format!("{r} {n}")).collect();
        out.push_str(&format!(
            "  quarantined  {:>9}  {}\n               rows with the reason and every field: {}\n",
            s.quarantined,
            reasons.join(", "),
            quarantine.display()
        ));
    } else {
        out.push_str("  quarantined          0\n");
    }
    if !s.unknown_gpus.is_empty() {
        let names: Vec<String> = s
            .unknown_gpus
            .iter()
            .take(5)
            .map(|(g, n)| format!("{g:?} ({n})"))
            .collect();
        out.push_str(&format!(
            "  unknown GPUs: {}{}: add an alias (data/gpus.toml, or a mapping file's [aliases]) and ingest the same files again; only their rows are read again\n",
            names.join(", "),
            if s.unknown_gpus.len() > 5 { ", ..." } else { "" }
        ));
    }
    for l in unread_columns(s) {
        out.push_str(&format!("  {l}\n"));
    }
    for f in s.files.iter().filter(|f| f.already_ingested) {
        let retried = if f.reread_whole {
            format!(
                ": the quarantine file of the run that read it last is gone, so all {} row(s) were read again, {} accepted (the others stored already or refused again)",
                f.retried, f.accepted
            )
        } else if f.retried > 0 {
            format!(
                ": {} row(s) it had quarantined retried, {} accepted",
                f.retried, f.accepted
            )
        } else {
            ": nothing read".to_string()
        };
        out.push_str(&format!("  already ingested: {}{retried}\n", f.path));
    }
    out.push_str(&format!(
        "full summary: --json, or {}",
        store
            .join("runs")
            .join(format!("{}.json", s.run_id))
            .display()
    ));
    out
}
