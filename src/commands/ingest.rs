//! `rentix ingest`.

use crate::cli::IngestArgs;
use crate::progress;
use anyhow::Context;
use rentix_core::{Cutoff, FixingClock};
use rentix_ingest::{ingest, IngestOptions};

pub fn run(a: IngestArgs) -> anyhow::Result<()> {
    let cutoff = Cutoff {
        time: a.cutoff,
        timezone: a.timezone,
    };
    FixingClock::new(&cutoff).context("invalid --cutoff/--timezone")?;
    let opts = IngestOptions {
        mapping: a.mapping,
        fx: a.fx,
        cutoff,
        batch_rows: a.batch_rows,
    };
    let bar = progress::spinner("ingesting");
    let summary = ingest(&a.store, &a.files, &opts, &mut |n| bar.set_position(n))
        .with_context(|| format!("ingest into {} failed", a.store.display()))?;
    bar.finish_and_clear();
    let json = serde_json::to_string_pretty(&summary)?;
    outln!("{json}");
    Ok(())
}
