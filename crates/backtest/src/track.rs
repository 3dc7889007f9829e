//! `rentix track`: every grade and composite of a fixings file ranked by how well it
//! would have hedged one rent series out of sample.
//!
//! For each candidate, monthly periods are built as in the backtest (settlement =
//! the contract's rule on that candidate's fixings, entry = last fixing before the
//! month), and the walk-forward strategy is run: its effectiveness uses no data
//! from the future, so it is the ranking key. The in-sample minimum-variance ratio,
//! correlations and a bootstrap interval for the out-of-sample effectiveness are
//! reported beside it. Candidates are evaluated in parallel; the output order is by
//! effectiveness, then name, and does not depend on the thread count.

use crate::backtest::{run, BacktestConfig, IndexInputs};
use crate::contract::ContractSpec;
use crate::rent::{Event, RentSeries};
use crate::strategy::Strategy;
use rayon::prelude::*;
use rentix_core::DateSeries;
use rentix_index::Fixing;
use rentix_ingest::{Col, Table};
use serde::Serialize;
use std::collections::BTreeMap;

/// One candidate's score.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrackRow {
    pub rank: usize,
    pub grade: String,
    pub oos_effectiveness: Option<f64>,
    pub oos_effectiveness_ci_low: Option<f64>,
    pub oos_effectiveness_ci_high: Option<f64>,
    pub hedge_ratio: Option<f64>,
    pub correlation_changes: Option<f64>,
    pub correlation_levels: Option<f64>,
    pub tracking_error: Option<f64>,
    pub basis_mean: Option<f64>,
    pub periods: usize,
    /// Share of the candidate's fixings that were sufficient.
    pub sufficient_share: f64,
    pub note: String,
}

/// A grade's (date, value) points, sufficient fixings and all fixings.
type GradePoints = (Vec<(chrono::NaiveDate, f64)>, usize, usize);

/// Series of every grade in a fixings file.
pub fn series_by_grade(fixings: &[Fixing]) -> BTreeMap<String, (DateSeries, f64)> {
    let mut pts: BTreeMap<String, GradePoints> = BTreeMap::new();
    for f in fixings {
        let e = pts.entry(f.grade.clone()).or_default();
        e.2 += 1;
        if f.sufficient {
            e.1 += 1;
        }
        if let Some(v) = f.value {
            e.0.push((f.date, v));
        }
    }
    pts.into_iter()
        .filter_map(|(g, (p, suff, n))| {
            let s = DateSeries::from_points(p).ok()?;
            Some((g, (s, suff as f64 / n.max(1) as f64)))
        })
        .collect()
}

/// Scores every candidate.
pub fn track(
    rent: &RentSeries,
    events: &[Event],
    fixings: &[Fixing],
    base: &ContractSpec,
    resamples: usize,
    seed: u64,
) -> Vec<TrackRow> {
    let series = series_by_grade(fixings);
    let candidates: Vec<(&String, &(DateSeries, f64))> = series.iter().collect();
    let mut rows: Vec<TrackRow> = candidates
        .par_iter()
        .map(|(grade, (s, suff))| {
            let mut contract = base.clone();
            contract.underlying = (*grade).clone();
            contract.entry.assumption = crate::contract::EntryAssumption::Index;
            let cfg = BacktestConfig {
                contract,
                strategies: vec![Strategy::WalkForward],
                bootstrap_resamples: resamples,
                seed,
                rolling_window: 12,
            };
            let idx = IndexInputs {
                underlying: s.clone(),
                forward: None,
            };
            match run(rent, events, &idx, &cfg) {
                Ok(r) => {
                    let st = &r.strategies[0];
                    TrackRow {
                        rank: 0,
                        grade: (*grade).clone(),
                        oos_effectiveness: st.effectiveness,
                        oos_effectiveness_ci_low: st
                            .confidence_intervals
                            .effectiveness
                            .map(|i| i.low),
                        oos_effectiveness_ci_high: st
                            .confidence_intervals
                            .effectiveness
                            .map(|i| i.high),
                        hedge_ratio: r.min_variance_hedge_ratio,
                        correlation_changes: st.correlation_changes,
                        correlation_levels: st.correlation_levels,
                        tracking_error: st.tracking_error,
                        basis_mean: st.basis.map(|b| b.mean),
                        periods: r.periods,
                        sufficient_share: *suff,
                        note: String::new(),
                    }
                }
                Err(e) => TrackRow {
                    rank: 0,
                    grade: (*grade).clone(),
                    oos_effectiveness: None,
                    oos_effectiveness_ci_low: None,
                    oos_effectiveness_ci_high: None,
                    hedge_ratio: None,
                    correlation_changes: None,
                    correlation_levels: None,
                    tracking_error: None,
                    basis_mean: None,
                    periods: 0,
                    sufficient_share: *suff,
                    note: e,
                },
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        let ka = a.oos_effectiveness.unwrap_or(f64::NEG_INFINITY);
        let kb = b.oos_effectiveness.unwrap_or(f64::NEG_INFINITY);
        kb.total_cmp(&ka).then(a.grade.cmp(&b.grade))
    });
    for (i, r) in rows.iter_mut().enumerate() {
        r.rank = i + 1;
    }
    rows
}

pub fn track_table(rows: &[TrackRow]) -> Table {
    let f = |g: &dyn Fn(&TrackRow) -> Option<f64>| Col::F64(rows.iter().map(g).collect());
    let mut t = Table::new();
    t.push(
        "rank",
        Col::I64(rows.iter().map(|r| Some(r.rank as i64)).collect()),
    );
    t.push(
        "grade",
        Col::Str(rows.iter().map(|r| Some(r.grade.clone())).collect()),
    );
    t.push("oos_effectiveness", f(&|r| r.oos_effectiveness));
    t.push(
        "oos_effectiveness_ci_low",
        f(&|r| r.oos_effectiveness_ci_low),
    );
    t.push(
        "oos_effectiveness_ci_high",
        f(&|r| r.oos_effectiveness_ci_high),
    );
    t.push("hedge_ratio", f(&|r| r.hedge_ratio));
    t.push("correlation_changes", f(&|r| r.correlation_changes));
    t.push("correlation_levels", f(&|r| r.correlation_levels));
    t.push("tracking_error", f(&|r| r.tracking_error));
    t.push("basis_mean", f(&|r| r.basis_mean));
    t.push(
        "periods",
        Col::I64(rows.iter().map(|r| Some(r.periods as i64)).collect()),
    );
    t.push("sufficient_share", f(&|r| Some(r.sufficient_share)));
    t.push(
        "note",
        Col::Str(rows.iter().map(|r| Some(r.note.clone())).collect()),
    );
    t
}
