//! `rentix ingest`.

use crate::cli::IngestArgs;
use crate::progress;
use anyhow::{bail, Context};
use rentix_core::{Cutoff, FixingClock};
use rentix_ingest::{ingest, Bounds, IngestOptions};

/// Reads every `--ratings` file into one table.
fn load_ratings(paths: &[std::path::PathBuf]) -> anyhow::Result<rentix_core::RatingTable> {
    let mut all = rentix_core::RatingTable::default();
    for p in paths {
        let t = rentix_core::RatingTable::from_file(p)?;
        all.merge(t)
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("--ratings {}", p.display()))?;
    }
    Ok(all)
}

pub fn run(a: IngestArgs) -> anyhow::Result<()> {
    let cutoff = Cutoff {
        time: a.cutoff,
        timezone: a.timezone,
    };
    FixingClock::new(&cutoff).context("invalid --cutoff/--timezone")?;
    if !(a.max_price.is_finite() && a.max_price > 0.0) {
        bail!("--max-price {} must be a positive number", a.max_price);
    }
    if !(a.min_price.is_finite() && a.min_price >= 0.0 && a.min_price < a.max_price) {
        bail!(
            "--min-price {} must be a number >= 0 and below --max-price {}",
            a.min_price,
            a.max_price
        );
    }
    if !(a.max_quantity.is_finite() && a.max_quantity > 0.0) {
        bail!(
            "--max-quantity {} must be a positive number",
            a.max_quantity
        );
    }
    if a.max_future_days > 3660 {
        bail!(
            "--max-future-days {} is more than ten years",
            a.max_future_days
        );
    }
    if a.batch_rows == 0 || a.batch_rows > 50_000_000 {
        bail!("--batch-rows {} must be 1..=50000000", a.batch_rows);
    }
    let ratings = load_ratings(&a.ratings)?;
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
    let json = serde_json::to_string_pretty(&summary)?;
    outln!("{json}");
    Ok(())
}
