//! `rentix report`.

use crate::cli::ReportArgs;
use anyhow::Context;

pub(super) fn run(a: ReportArgs) -> anyhow::Result<()> {
    if a.out.extension().and_then(|e| e.to_str()) != Some("html") {
        crate::commands::usage!("--out {} must end in .html", a.out.display());
    }
    rentix_report::render_report(&a.input, &a.out)
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("report of {}", a.input.display()))?;
    outln!("wrote {}", a.out.display());
    Ok(())
}
