//! `rentix track`.

use crate::cli::TrackArgs;
use crate::commands::backtest::{contract_from, side_arg};
use anyhow::Context;
use rentix_backtest::fixings_views;
use rentix_backtest::{read_events, track, track_table, RentSeries, TrackOptions, TrackRow};

pub(super) fn run(a: TrackArgs) -> anyhow::Result<()> {
    if let Some(out) = &a.out {
        rentix_table::TableFormat::of(out).with_context(|| format!("--out {}", out.display()))?;
    }
    // A rank is a recommendation: below the periods a decision needs, backtest
    // answers "not enough data" for the grade track would rank first.
    if a.min_periods < rentix_backtest::DEFAULT_MIN_PERIODS {
        crate::commands::usage!(
            "--min-periods {} is below the {} hedge periods a decision needs: backtest says \"not enough data\" below them, so no rank can rest on fewer",
            a.min_periods,
            rentix_backtest::DEFAULT_MIN_PERIODS
        );
    }
    if !(0.0..=1.0).contains(&a.min_sufficient_share) {
        crate::commands::usage!(
            "--min-sufficient-share {} is not a share between 0 and 1",
            a.min_sufficient_share
        );
    }
    let contract = contract_from(&a.contract)?;
    let (fixings, _) = fixings_views(&a.index, false)?;
    let period_end = a
        .period_end
        .parse()
        .map_err(|e| crate::commands::Usage(format!("--period-end: {e}")))?;
    let rent = RentSeries::from_csv_with(&a.rent, period_end, side_arg(&a.side))?;
    if rent.periods.iter().all(|p| p.gpu_hours.get() <= 0.0) {
        anyhow::bail!(
            "{}: every period has 0 GPU-hours: there is no exposure to hedge, so no grade can be ranked; give the GPU-hours paid for (or earned) in each period",
            a.rent.display()
        );
    }
    let events = match &a.events {
        Some(p) => read_events(p, period_end)?,
        None => Vec::new(),
    };
    let opt = TrackOptions {
        min_periods: a.min_periods,
        min_sufficient_share: a.min_sufficient_share,
        resamples: a.resamples,
        seed: a.seed,
        underlying_given: a.contract.is_some(),
    };
    let rows = track(&rent, &events, &fixings, &contract, &opt)
        .with_context(|| format!("track of {}", a.rent.display()))?;
    let ranked = rows.iter().filter(|r| r.rank.is_some()).count();
    if let Some(out) = &a.out {
        track_table(&rows).write(out)?;
    }
    outln!(
        "ranked {ranked} of {} grades and composites by {} ({})",
        rows.len(),
        rows.first().map_or("", |r| r.ranked_by),
        a.out.as_ref().map_or_else(
            || "--out FILE lists the rest with the reason".to_string(),
            |o| format!("the rest are listed with the reason in {}", o.display())
        )
    );
    for line in console_table(&rows) {
        outln!("{line}");
    }
    Ok(())
}

/// The console's view of a ranking: the top ten ranked candidates; when none ranks,
/// the candidates with the most periods and, in words, why each is not ranked and
/// what would rank it.
fn console_table(rows: &[TrackRow]) -> Vec<String> {
    let f = |v: Option<f64>| v.map_or("   n/a".to_string(), |x| format!("{x:6.3}"));
    let ranked: Vec<&TrackRow> = rows.iter().filter(|r| r.rank.is_some()).collect();
    let mut out = Vec::new();
    if !ranked.is_empty() {
        out.push("rank  oos_eff  [95% CI]          ratio  rho(chg)  periods  grade".into());
        for r in ranked.iter().take(10) {
            out.push(format!(
                "{:>4}  {}  [{}, {}]  {}  {}  {:>7}  {}",
                r.rank.unwrap_or(0),
                f(r.oos_effectiveness),
                f(r.oos_effectiveness_ci_low),
                f(r.oos_effectiveness_ci_high),
                f(r.hedge_ratio),
                f(r.correlation_changes),
                r.periods,
                r.grade
            ));
        }
        if ranked.len() > 10 {
            out.push(format!("  ... and {} more ranked", ranked.len() - 10));
        }
        // The best set's order is a preference, not a measurement: said here, where
        // ranks with the same figures were shown as if one beat the other.
        let tied = ranked.iter().filter(|r| r.in_best_set).count();
        if tied > 1 {
            out.push(format!(
                "  note: ranks 1 to {tied} cannot be told apart from one another (in_best_set); among them the rent's own index (the one backtest hedges on), its GPU and scope, more periods and more sufficient fixings rank first"
            ));
        }
        if let Some(w) = ranked
            .iter()
            .find_map(|r| r.note.split("; ").find(|n| n.starts_with("few periods")))
        {
            out.push(format!("  note: {w}"));
        }
        return out;
    }
    out.push("nothing could be ranked; the candidates with the most history:".into());
    let mut by_history: Vec<&TrackRow> = rows.iter().collect();
    // The rent's own index first: the one backtest hedges on (a hostile round
    // found five A100 grades listed for an H100 rent, alphabetically first
    // among equal histories).
    by_history.sort_by(|a, b| {
        b.own_index
            .cmp(&a.own_index)
            .then(b.periods.cmp(&a.periods))
            .then(a.grade.cmp(&b.grade))
    });
    for r in by_history.iter().take(5) {
        let why: Vec<&str> = r
            .note
            .split("; ")
            .filter(|n| n.starts_with("not ranked"))
            .map(|n| n.trim_start_matches("not ranked: "))
            .collect();
        out.push(format!("  {}: {}", r.grade, why.join("; ")));
    }
    out
}
