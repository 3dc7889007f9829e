//! `rentix simulate`.

use crate::cli::SimulateArgs;
use crate::progress;
use anyhow::Context;
use rentix_sim::{simulate, SimParams};
use std::io::Write as _;

/// The parameters a simulate command line asks for: the file (or the default) with
/// the command-line overrides applied.
pub(super) fn params_from(a: &SimulateArgs) -> anyhow::Result<SimParams> {
    let mut p = match &a.params {
        Some(path) => {
            let text = rentix_core::read_text(path, rentix_core::MAX_CONFIG_BYTES)
                .with_context(|| format!("cannot read parameter file {}", path.display()))?;
            SimParams::from_toml(&text).with_context(|| format!("in {}", path.display()))?
        }
        None => SimParams::default_params(),
    };
    if let Some(s) = a.seed {
        p.seed = s;
    }
    if let Some(s) = a.start {
        p.start = s;
    }
    if let Some(d) = a.days {
        p.days = d;
    }
    if let Some(r) = a.rows {
        if r == 0 {
            crate::commands::usage!(
                "--rows 0: a market needs at least one observation (leave --rows out for the default size)"
            );
        }
        p.rows = r;
    }
    if let Some(c) = &a.cadence {
        let c: rentix_core::Cadence = c
            .parse()
            .map_err(|e| crate::commands::Usage(format!("--cadence: {e}")))?;
        p.cadence_minutes = (!c.is_daily()).then_some(c.minutes() as u32);
    }
    p.validate()?;
    Ok(p)
}

/// A warning when the simulated period runs past today: `ingest` quarantines rows
/// dated more than its `--max-future-days` ahead (`implausible_date`), so a period
/// that ends in the future makes a market that will be read only in part.
fn future_warning(p: &SimParams, today: chrono::NaiveDate) -> Option<String> {
    let last = p.start + chrono::Days::new(u64::from(p.days.max(1)) - 1);
    let horizon = today + chrono::Days::new(u64::from(rentix_ingest::DEFAULT_FUTURE_DAYS));
    (last > horizon).then(|| {
        let after = (last - horizon).num_days();
        format!(
            "the simulated period {} to {last} runs {after} day(s) past {horizon} (today and ingest's default --max-future-days {}): ingest will quarantine the rows of those days as implausible_date; choose --start and --days that end by {horizon}",
            p.start,
            rentix_ingest::DEFAULT_FUTURE_DAYS
        )
    })
}

pub(super) fn run(a: SimulateArgs) -> anyhow::Result<()> {
    let p = params_from(&a)?;
    if let Some(w) = future_warning(&p, chrono::Utc::now().date_naive()) {
        let _ = writeln!(std::io::stderr(), "rentix: warning: {w}");
    }
    let bar = progress::steps("simulating days", u64::from(p.days));
    let m = simulate(&a.out, &p, &|d| bar.set_position(d))
        .with_context(|| format!("simulation into {} failed", a.out.display()))?;
    bar.finish_and_clear();
    outln!(
        "wrote {} observations ({} late), {} truth rows, {} users to {}",
        m.observations,
        m.late_observations,
        m.truth_rows,
        m.users.len(),
        a.out.display()
    );
    Ok(())
}
