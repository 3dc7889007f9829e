//! `rentix simulate`.

use crate::cli::SimulateArgs;
use crate::progress;
use anyhow::Context;
use rentix_sim::{simulate, SimParams};

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
        let m = rentix_index::intraday::parse_minutes(c)
            .map_err(anyhow::Error::msg)
            .context("--cadence")?;
        p.cadence_minutes = (m != 1440).then_some(m as u32);
    }
    p.validate()?;
    Ok(p)
}

pub(super) fn run(a: SimulateArgs) -> anyhow::Result<()> {
    let p = params_from(&a)?;
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
