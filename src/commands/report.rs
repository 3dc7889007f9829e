//! `rentix report`.

use crate::cli::ReportArgs;
use anyhow::Context;

pub(super) fn run(a: ReportArgs) -> anyhow::Result<()> {
    if a.out.extension().and_then(|e| e.to_str()) != Some("html") {
        crate::commands::usage!("--out {} must end in .html", a.out.display());
    }
    match a.input.as_slice() {
        [one] => {
            if a.truth.is_some() {
                crate::commands::usage!(
                    "--truth measures several compared fixings files; a single --in finds sim/truth.csv itself"
                );
            }
            rentix_report::render_report(one, &a.out)
                .with_context(|| format!("report of {}", one.display()))?;
            // A directory's report is of one fixings file: the others are named.
            if one.is_dir() {
                let chosen = ["fixings.csv", "fixings.parquet"]
                    .iter()
                    .map(|f| one.join(f))
                    .find(|p| p.exists());
                let others = rentix_report::other_fixings(one, chosen.as_deref());
                if !others.is_empty() {
                    let names: Vec<String> =
                        others.iter().map(|p| p.display().to_string()).collect();
                    outln!(
                        "not in this report: {} (fixings files: report one with --in FILE, or compare with several --in)",
                        names.join(", ")
                    );
                }
            }
        }
        many => rentix_report::render_comparison(many, a.truth.as_deref(), &a.out)
            .context("comparison report")?,
    }
    outln!("wrote {}", a.out.display());
    Ok(())
}
