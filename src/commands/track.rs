//! `rentix track`.

use crate::cli::TrackArgs;
use crate::commands::backtest::{contract_from, fixings_views};
use anyhow::{bail, Context};
use rentix_backtest::{read_events, track, track_table, RentSeries, TrackOptions};

pub fn run(a: TrackArgs) -> anyhow::Result<()> {
    if let Some(out) = &a.out {
        rentix_table::TableFormat::of(out).with_context(|| format!("--out {}", out.display()))?;
    }
    if !(0.0..=1.0).contains(&a.min_sufficient_share) {
        bail!(
            "--min-sufficient-share {} is not a share between 0 and 1",
            a.min_sufficient_share
        );
    }
    let contract = contract_from(&a.contract)?;
    let (fixings, _) = fixings_views(&a.index, false)?;
    let rent = RentSeries::from_csv(&a.rent, a.period_end.parse().map_err(anyhow::Error::msg)?)?;
    let events = match &a.events {
        Some(p) => read_events(p)?,
        None => Vec::new(),
    };
    let opt = TrackOptions {
        min_periods: a.min_periods,
        min_sufficient_share: a.min_sufficient_share,
        resamples: a.resamples,
        seed: a.seed,
    };
    let rows = track(&rent, &events, &fixings, &contract, &opt)
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("track of {}", a.rent.display()))?;
    let ranked = rows.iter().filter(|r| r.rank.is_some()).count();
    match &a.out {
        Some(out) => {
            track_table(&rows).write(out)?;
            outln!(
                "ranked {ranked} of {} grades and composites by {} (the rest are listed with the reason); wrote {}",
                rows.len(),
                rows.first().map_or("", |r| r.ranked_by),
                out.display()
            );
        }
        None => {
            outln!(
                "ranked by {}; {ranked} of {} candidates eligible",
                rows.first().map_or("", |r| r.ranked_by),
                rows.len()
            );
            outln!("rank  oos_eff  [95% CI]         ratio  rho(chg)  grade");
            for r in rows.iter().filter(|r| r.rank.is_some()).take(30) {
                let f = |v: Option<f64>| v.map_or("   n/a".to_string(), |x| format!("{x:6.3}"));
                outln!(
                    "{:>4}  {}  [{}, {}]  {}  {}  {}",
                    r.rank.unwrap_or(0),
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
