//! `rentix track`: every grade and composite of a fixings file ranked by how well it
//! would have hedged one rent series out of sample.
//!
//! For each candidate, monthly periods are built as in the backtest (settlement =
//! the contract's rule on that candidate's fixings, entry at the index), and the
//! walk-forward strategy is run: its effectiveness uses no data from the future.
//! A candidate is ranked only with at least `min_periods` hedge periods and a share
//! of sufficient fixings of at least `min_sufficient_share`; the others are listed
//! after the ranked ones with the reason, as is a candidate whose hedge removed no
//! variance out of sample (effectiveness <= 0: a rank is a recommendation). Ranking
//! is by the lower bound of the 95%
//! bootstrap interval of the out-of-sample effectiveness, so that a short or noisy
//! history cannot win on a lucky point estimate (by the point estimate when no
//! resamples are asked for; the `ranked_by` column says which). Composites in index
//! points are rebased to the rent's first month and report no USD basis.
//! Candidates are evaluated in parallel; the order does not depend on the thread
//! count.

use crate::backtest::{run, BacktestConfig, IndexInputs};
use crate::contract::ContractSpec;
use crate::rent::{Event, RentSeries};
use crate::strategy::Strategy;
use crate::underlying::{underlyings, Underlying};
use rayon::prelude::*;
use rentix_fixings::{Fixing, IndexUnit};
use rentix_table::{Col, Table};
use serde::Serialize;

/// Defaults: the periods a backtest's decision needs (half a year; a year of monthly
/// invoices gives 11 periods, its first month being the basis the first hedge is
/// measured from), and half of the fixings sufficient. The ranking key is the lower
/// bound of the interval, which already costs a short history its place.
pub const DEFAULT_MIN_PERIODS: usize = crate::recommendation::MIN_DECISION_PERIODS;
/// Default share of a candidate's fixings that must be sufficient for it to rank.
pub const DEFAULT_MIN_SUFFICIENT_SHARE: f64 = 0.5;

/// What a candidate needs to be ranked, and the bootstrap.
#[derive(Debug, Clone, PartialEq)]
pub struct TrackOptions {
    /// Fewest hedge periods a candidate needs to rank.
    pub min_periods: usize,
    /// Smallest share of sufficient fixings a candidate needs to rank, 0 to 1.
    pub min_sufficient_share: f64,
    /// Bootstrap resamples of the effectiveness interval; 0: rank by the point
    /// estimate.
    pub resamples: usize,
    /// Seed of the bootstrap.
    pub seed: u64,
}

impl Default for TrackOptions {
    fn default() -> Self {
        Self {
            min_periods: DEFAULT_MIN_PERIODS,
            min_sufficient_share: DEFAULT_MIN_SUFFICIENT_SHARE,
            resamples: 1000,
            seed: 20240101,
        }
    }
}

/// One candidate's score.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrackRow {
    /// 1 = best; `None` for a candidate that is listed but not ranked.
    pub rank: Option<usize>,
    /// The candidate: a grade key or a composite's name.
    pub grade: String,
    /// The unit of its fixings.
    pub unit: IndexUnit,
    /// The ranking key: `oos_effectiveness_ci_low` or `oos_effectiveness`.
    pub ranked_by: &'static str,
    /// Walk-forward effectiveness, a share; `None` when the backtest failed or the rent
    /// P&L never varied.
    pub oos_effectiveness: Option<f64>,
    /// Lower bound of its 95% bootstrap interval; `None` without resamples.
    pub oos_effectiveness_ci_low: Option<f64>,
    /// Upper bound of that interval.
    pub oos_effectiveness_ci_high: Option<f64>,
    /// Minimum-variance ratio of the rent's changes on the index's (one tranche, entry
    /// at the index).
    pub hedge_ratio: Option<f64>,
    /// Correlation of the rent's monthly changes with the futures'.
    pub correlation_changes: Option<f64>,
    /// Correlation of the monthly rent with the settlement (levels).
    pub correlation_levels: Option<f64>,
    /// Annualized tracking error of the rent's changes against the futures', USD per
    /// GPU-hour.
    pub tracking_error: Option<f64>,
    /// Mean rent minus settlement, USD per GPU-hour; `None` for a points composite.
    pub basis_mean: Option<f64>,
    /// Hedge periods backtested (0 when the backtest failed).
    pub periods: usize,
    /// Share of the candidate's fixings that were sufficient.
    pub sufficient_share: f64,
    /// Why the candidate is not ranked, or how a composite was rebased.
    pub note: String,
}

impl TrackRow {
    fn key(&self) -> Option<f64> {
        match self.ranked_by {
            "oos_effectiveness_ci_low" => self.oos_effectiveness_ci_low,
            _ => self.oos_effectiveness,
        }
    }
}

/// Scores every candidate; an error when no candidate could be evaluated at all (the
/// rent cannot be backtested against anything in the file).
pub fn track(
    rent: &RentSeries,
    events: &[Event],
    fixings: &[Fixing],
    base: &ContractSpec,
    opt: &TrackOptions,
) -> Result<Vec<TrackRow>, crate::error::BacktestError> {
    let ranked_by = if opt.resamples > 0 {
        "oos_effectiveness_ci_low"
    } else {
        "oos_effectiveness"
    };
    let candidates: Vec<_> = underlyings(fixings).into_values().collect();
    if candidates.is_empty() {
        return Err(crate::error::BacktestError::Fixings(
            "the fixings file has no index with a value".into(),
        ));
    }
    let scoring = Scoring {
        rent,
        events,
        base,
        opt,
        ranked_by,
    };
    let mut rows: Vec<TrackRow> = candidates.par_iter().map(|u| scoring.score(u)).collect();
    if rows.iter().all(|r| r.periods == 0) {
        let why = rows.first().map(|r| r.note.clone()).unwrap_or_default();
        return Err(crate::error::BacktestError::NoCandidate {
            candidates: rows.len(),
            example: rows.first().map(|r| r.grade.clone()).unwrap_or_default(),
            why,
        });
    }
    rank_rows(&mut rows);
    Ok(rows)
}

/// What every candidate is scored with.
struct Scoring<'a> {
    rent: &'a RentSeries,
    events: &'a [Event],
    base: &'a ContractSpec,
    opt: &'a TrackOptions,
    ranked_by: &'static str,
}

impl Scoring<'_> {
    /// One candidate's walk-forward backtest as a row; a candidate that cannot be
    /// backtested is a row whose note says why.
    fn score(&self, u: &Underlying) -> TrackRow {
        let mut row = TrackRow {
            rank: None,
            grade: u.name().to_string(),
            unit: u.unit(),
            ranked_by: self.ranked_by,
            oos_effectiveness: None,
            oos_effectiveness_ci_low: None,
            oos_effectiveness_ci_high: None,
            hedge_ratio: None,
            correlation_changes: None,
            correlation_levels: None,
            tracking_error: None,
            basis_mean: None,
            periods: 0,
            sufficient_share: u.sufficient_share(),
            note: String::new(),
        };
        // The base contract's terms on this index, entered at the index's level.
        let contract = match self.base.edited(|t| {
            t.underlying = u.name().to_string();
            t.entry.assumption = crate::contract::EntryAssumption::Index;
        }) {
            Ok(c) => c,
            Err(e) => {
                row.note = e.to_string();
                return row;
            }
        };
        let cfg = BacktestConfig {
            contract,
            strategies: vec![Strategy::WalkForward],
            bootstrap_resamples: self.opt.resamples,
            seed: self.opt.seed,
            rolling_window: 12,
            perp: None,
        };
        match run(self.rent, self.events, &IndexInputs::of(u.clone()), &cfg) {
            Ok(r) => {
                let st = &r.strategies[0];
                let ci = st.confidence_intervals.effectiveness;
                row.oos_effectiveness = st.effectiveness;
                row.oos_effectiveness_ci_low = ci.map(|i| i.low);
                row.oos_effectiveness_ci_high = ci.map(|i| i.high);
                row.hedge_ratio = r.min_variance_hedge_ratio;
                row.correlation_changes = st.correlation_changes;
                row.correlation_levels = st.correlation_levels;
                row.tracking_error = st.tracking_error;
                row.basis_mean = st.basis.map(|b| b.mean);
                row.periods = r.periods;
                row.note = self.notes(&row, &r).join("; ");
            }
            Err(e) => row.note = format!("not ranked: {e}"),
        }
        row
    }

    /// Why a scored row is not ranked, or what to keep in mind when it is.
    fn notes(&self, row: &TrackRow, r: &crate::backtest::BacktestResult) -> Vec<String> {
        let (opt, ranked_by) = (self.opt, self.ranked_by);
        let mut notes = Vec::new();
        if let Some(k) = r.rebase_usd_per_point {
            notes.push(format!(
                "index points rebased at {k:.6} USD per GPU-hour per point; no USD basis"
            ));
        }
        if r.periods < opt.min_periods {
            notes.push(format!(
            "not ranked: {} hedge periods, {} needed (--min-periods): {} more month(s) of rent would rank it",
            r.periods,
            opt.min_periods,
            opt.min_periods - r.periods
        ));
        } else if r.periods < crate::recommendation::FEW_PERIODS {
            notes.push(format!(
                "few periods: {} (fewer than {}), the interval rests on few points",
                r.periods,
                crate::recommendation::FEW_PERIODS
            ));
        }
        if row.sufficient_share < opt.min_sufficient_share {
            notes.push(format!(
            "not ranked: {:.0}% of its fixings were sufficient, {:.0}% needed (--min-sufficient-share): the index is too thinly fed to settle on",
            100.0 * row.sufficient_share,
            100.0 * opt.min_sufficient_share
        ));
        }
        // A rank recommends the grade: one whose hedge removed no variance
        // out of sample is no hedge, however narrow its interval.
        if let Some(e) = row.oos_effectiveness.filter(|e| *e <= 0.0) {
            notes.push(format!(
                "not ranked: out of sample its hedge removed no risk (effectiveness {:.1}%)",
                100.0 * e
            ));
        }
        if row.key().is_none() && notes.iter().all(|n| !n.starts_with("not ranked")) {
            notes.push(format!("not ranked: no {ranked_by}"));
        }
        notes
    }
}

/// Sorts the rows, ranked ones first by their key (best first, then by grade), and
/// numbers the ranked ones from 1.
fn rank_rows(rows: &mut [TrackRow]) {
    let eligible = |r: &TrackRow| !r.note.contains("not ranked");
    rows.sort_by(|a, b| {
        let ka = eligible(a)
            .then(|| a.key())
            .flatten()
            .unwrap_or(f64::NEG_INFINITY);
        let kb = eligible(b)
            .then(|| b.key())
            .flatten()
            .unwrap_or(f64::NEG_INFINITY);
        eligible(b)
            .cmp(&eligible(a))
            .then(kb.total_cmp(&ka))
            .then(a.grade.cmp(&b.grade))
    });
    let mut rank = 0;
    for r in rows.iter_mut().filter(|r| eligible(r)) {
        rank += 1;
        r.rank = Some(rank);
    }
}

/// The table `rentix track` writes: one row per candidate (in the order given), one
/// column per field.
pub fn track_table(rows: &[TrackRow]) -> Table {
    let f = |g: &dyn Fn(&TrackRow) -> Option<f64>| Col::F64(rows.iter().map(g).collect());
    let s = |g: &dyn Fn(&TrackRow) -> String| Col::Str(rows.iter().map(|r| Some(g(r))).collect());
    let mut t = Table::new();
    t.push(
        "rank",
        Col::I64(rows.iter().map(|r| r.rank.map(|x| x as i64)).collect()),
    );
    t.push("grade", s(&|r| r.grade.clone()));
    t.push("unit", s(&|r| r.unit.as_str().to_string()));
    t.push("ranked_by", s(&|r| r.ranked_by.to_string()));
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
    t.push("note", s(&|r| r.note.clone()));
    t
}
