//! `rentix track`.

use crate::cli::TrackArgs;
use crate::commands::backtest::contract_from;
use anyhow::Context;
use rentix_backtest::{read_events, track, track_table, RentSeries};
use rentix_index::read_fixings;

pub fn run(a: TrackArgs) -> anyhow::Result<()> {
    if let Some(out) = &a.out {
        rentix_ingest::TableFormat::of(out).with_context(|| format!("--out {}", out.display()))?;
    }
    let contract = contract_from(&a.contract)?;
    let fixings = read_fixings(&a.index)?;
    let rent = RentSeries::from_csv(&a.rent)?;
    let events = match &a.events {
        Some(p) => read_events(p)?,
        None => Vec::new(),
    };
    let rows = track(&rent, &events, &fixings, &contract, a.resamples, a.seed);
    match &a.out {
        Some(out) => {
            track_table(&rows).write(out)?;
            outln!(
                "ranked {} grades and composites; wrote {}",
                rows.len(),
                out.display()
            );
        }
        None => {
            outln!("rank  oos_eff  [95% CI]         ratio  rho(chg)  grade");
            for r in rows.iter().take(30) {
                let f = |v: Option<f64>| v.map_or("   n/a".to_string(), |x| format!("{x:6.3}"));
                outln!(
                    "{:>4}  {}  [{}, {}]  {}  {}  {}",
                    r.rank,
                    f(r.oos_effectiveness),
                    f(r.oos_effectiveness_ci_low),
                    f(r.oos_effectiveness_ci_high),
                    f(r.hedge_ratio),
                    f(r.correlation_changes),
                    r.grade
                );
            }
        }
    }
    Ok(())
}
