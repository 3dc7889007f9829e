//! `rentix track`: every grade and composite of a fixings file ranked by how well it
//! would have hedged one rent series out of sample.
//!
//! For each candidate, monthly periods are built as in the backtest (settlement =
//! the contract's rule on that candidate's fixings, entry at the index), and two
//! hedges are scored, as the backtest's decision weighs them: the walk-forward
//! (each month at the ratio fitted on the months before; it hedges one-to-one for
//! its first months) and the cross-validated in-sample ratio (each month at the
//! ratio fitted on the other months), which hedges a rent that moves at half the
//! index at half from the first month. A candidate rests on whichever of its two
//! the selection finds stronger, and the note says when that is the
//! cross-validated one.
//! A candidate can be ranked only with at least `min_periods` hedge periods, a share
//! of sufficient fixings of at least `min_sufficient_share` and a positive
//! out-of-sample effectiveness (a rank is a recommendation).
//!
//! Choosing the best of up to a few hundred candidates on a dozen months is
//! corrected for the choosing ([`crate::stats::selection`]): a candidate is ranked
//! only when a Romano-Wolf stepdown over all the eligible candidates' hedges (two
//! each) declares one of its effectiveness above zero (at most a 5% chance that any candidate without a real
//! relation is ranked), and the ranked ones that a model confidence set cannot tell
//! apart from the best come first, ordered by what a hedger prefers among equals:
//! the rent's own GPU and scope (where the rent file names them), then more
//! periods, then a higher share of sufficient fixings. A candidate of another GPU
//! than the rent's is a cross-hedge: labelled, and held to the same test. Without
//! resamples nothing can be corrected, so nothing is ranked. Composites in index
//! points are rebased to the rent's first month and report no USD basis.
//! Candidates are evaluated in parallel; the order does not depend on the thread
//! count.

use crate::backtest::{run, BacktestConfig, IndexInputs};
use crate::contract::ContractSpec;
use crate::rent::{Event, RentSeries};
use crate::stats::bootstrap::Interval;
use crate::stats::selection::{select_with, MonthlyPnl};
use crate::strategy::Strategy;
use crate::underlying::{underlyings, Underlying};
use chrono::NaiveDate;
use rayon::prelude::*;
use rentix_fixings::{Fixing, IndexUnit};
use rentix_table::{Col, Table};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Defaults: the periods a backtest's decision needs (half a year; a year of monthly
/// invoices gives 11 periods, its first month being the basis the first hedge is
/// measured from), and half of the fixings sufficient. The ranking key is the lower
/// bound of the interval, which already costs a short history its place.
pub const DEFAULT_MIN_PERIODS: usize = crate::recommendation::MIN_DECISION_PERIODS;
/// Default share of a candidate's fixings that must be sufficient for it to rank.
pub const DEFAULT_MIN_SUFFICIENT_SHARE: f64 = 0.5;
/// Chance, at most, that any candidate without a real relation to the rent is
/// ranked (the stepdown's familywise level).
pub const FAMILYWISE_ALPHA: f64 = 0.05;
/// Level of the set of candidates that cannot be told apart from the best: it holds
/// the best with probability at least 90%.
pub const BEST_SET_ALPHA: f64 = 0.10;
/// What `ranked_by` says with resamples: the corrected test, then the preference.
const RANKED_BY: &str = "stepdown_then_preference";

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
    /// The contract was given (`--contract`): its underlying is the rent's own
    /// index, as `backtest` takes it; otherwise the rent's GPU and scope choose
    /// it ([`crate::choose_underlying`]).
    pub underlying_given: bool,
}

impl Default for TrackOptions {
    fn default() -> Self {
        Self {
            min_periods: DEFAULT_MIN_PERIODS,
            min_sufficient_share: DEFAULT_MIN_SUFFICIENT_SHARE,
            resamples: 1000,
            seed: 20240101,
            underlying_given: false,
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
    /// How ranks were given: `stepdown_then_preference` (module doc), or `none`
    /// without resamples.
    pub ranked_by: &'static str,
    /// Out-of-sample effectiveness of the hedge the candidate rests on (walk-forward,
    /// or cross-validated when the note says so), a share; `None` when the backtest
    /// failed or the rent P&L never varied.
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
    /// Share of the candidate's fixings that were sufficient; `None` for a benchmark
    /// the user brought (unknown).
    pub sufficient_share: Option<f64>,
    /// Its studentized effectiveness `t` in the stepdown (`None`: not tested).
    pub selection_t: Option<f64>,
    /// Whether, corrected for choosing among every eligible candidate, it removed
    /// risk out of sample (a ranked candidate always did).
    pub beats_no_hedge: bool,
    /// Whether it is in the set of ranked candidates that cannot be told apart from
    /// the best (ranked first, ordered by preference).
    pub in_best_set: bool,
    /// Whether it is of another GPU than the one the rent file names (`None` when the
    /// rent names none).
    pub cross_hedge: Option<bool>,
    /// Why the candidate is not ranked, or how a composite was rebased.
    pub note: String,
    /// Its walk-forward hedge's monthly hedged and unhedged P&L by month, for the
    /// selection.
    #[serde(skip)]
    monthly: BTreeMap<NaiveDate, (f64, f64)>,
    /// The same of its cross-validated hedge (each month at the ratio fitted on
    /// the other months).
    #[serde(skip)]
    monthly_cv: BTreeMap<NaiveDate, (f64, f64)>,
    /// Effectiveness and interval of each hedge: walk-forward, cross-validated.
    #[serde(skip)]
    scores: [(Option<f64>, Option<Interval>); 2],
    /// Whether it was in the family the selection corrects for: enough periods,
    /// sufficient fixings and an out-of-sample effectiveness.
    #[serde(skip)]
    pub in_family: bool,
    /// Whether it is the rent's own index: the one `rentix backtest` hedges the
    /// rent on (named by `--contract`, or by the rent's GPU and scope).
    #[serde(skip)]
    pub own_index: bool,
    /// For the rent's own index only: what `rentix backtest` decides on it
    /// (whether it hedges, and the decision's sentence). Named before the
    /// search, it is judged by that decision, not by the selection.
    #[serde(skip)]
    decided: Option<Decided>,
}

/// What `rentix backtest` decides on the rent's own index.
#[derive(Debug, Clone, PartialEq)]
struct Decided {
    /// Whether it hedges.
    hedge: bool,
    /// The decision's sentence, as backtest prints it.
    sentence: String,
    /// The out-of-sample effectiveness the decision rests on.
    effectiveness: Option<f64>,
    /// Its 95% interval.
    interval: Option<Interval>,
}

impl TrackRow {
    /// What a hedger prefers among candidates it cannot tell apart, largest first:
    /// the rent's own index (the one backtest hedges on), its own GPU and scope,
    /// its own GPU, more periods, a higher share of sufficient fixings.
    fn preference(&self, rent: &RentSeries) -> (u8, usize, f64) {
        let own = match rent.names.owns(&self.grade) {
            _ if self.own_index => 3,
            Some((_, true)) => 2,
            Some((true, false)) => 1,
            _ => 0,
        };
        (own, self.periods, self.sufficient_share.unwrap_or(0.0))
    }

    /// Whether the candidate is in the family the selection corrects for: enough
    /// periods and sufficient fixings, and an out-of-sample effectiveness. Whether
    /// that effectiveness is above zero is what the test decides, so a candidate
    /// that removed no risk stays in the family (leaving it out would lower the bar
    /// for the others).
    fn eligible(&self) -> bool {
        self.in_family
    }

    /// Shows hedge `k`'s effectiveness and interval (0 walk-forward, 1
    /// cross-validated).
    fn show(&mut self, k: usize) {
        let (e, ci) = self.scores[k];
        self.oos_effectiveness = e;
        self.oos_effectiveness_ci_low = ci.map(|i| i.low);
        self.oos_effectiveness_ci_high = ci.map(|i| i.high);
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
    let ranked_by = if opt.resamples > 0 { RANKED_BY } else { "none" };
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
    // The rent's own index is named before any search: judged as `rentix
    // backtest` judges it, with the same decision (a hostile round found track
    // calling it no hedge beside backtest's "hedge", and ranking a composite of
    // other GPUs above it).
    let names: Vec<String> = candidates.iter().map(|u| u.name().to_string()).collect();
    let own = if opt.underlying_given {
        names.iter().position(|n| *n == base.underlying)
    } else {
        crate::files::choose_underlying(rent, &base.underlying, &names)
            .ok()
            .and_then(|g| names.iter().position(|n| *n == g))
    };
    if let Some(i) = own {
        rows[i].own_index = true;
        if rows[i].in_family {
            rows[i].decided = scoring.decide(&candidates[i]);
        }
    }
    if rows.iter().all(|r| r.periods == 0) {
        let why = rows.first().map(|r| r.note.clone()).unwrap_or_default();
        return Err(crate::error::BacktestError::NoCandidate {
            candidates: rows.len(),
            example: rows.first().map(|r| r.grade.clone()).unwrap_or_default(),
            why,
        });
    }
    corrected(&mut rows, opt);
    rank_rows(&mut rows, rent);
    Ok(rows)
}

/// Runs the selection (module doc) over the eligible rows and writes what it found
/// into every row: the statistic, the verdicts and, for an eligible row it does not
/// rank, the note saying why.
fn corrected(rows: &mut [TrackRow], opt: &TrackOptions) {
    let eligible: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].eligible()).collect();
    let months: Vec<NaiveDate> = eligible
        .iter()
        .flat_map(|&i| rows[i].monthly.keys().copied())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // Two hedges a candidate: its walk-forward and its cross-validated one. The
    // stepdown corrects for choosing among all of them; a candidate beats no hedge
    // when either of its hedges does.
    let pnls: Vec<MonthlyPnl> = eligible
        .iter()
        .flat_map(|&i| [&rows[i].monthly, &rows[i].monthly_cv])
        .map(|series| months.iter().map(|m| series.get(m).copied()).collect())
        .collect();
    let decided: Vec<Option<bool>> = eligible
        .iter()
        .flat_map(|&i| {
            let d = rows[i].decided.as_ref().map(|d| d.hedge);
            [d, d]
        })
        .collect();
    let sel = select_with(
        &pnls,
        opt.resamples,
        FAMILYWISE_ALPHA,
        BEST_SET_ALPHA,
        opt.seed,
        &decided,
    );
    let n = eligible.len();
    let in_set = candidates_in(&sel.best_set);
    for (j, &i) in eligible.iter().enumerate() {
        let row = &mut rows[i];
        let (a, b) = (2 * j, 2 * j + 1);
        // The hedge it rests on: one that beats no hedge before one that does
        // not, then the larger t.
        let key = |x: usize| (sel.beats_no_hedge[x], sel.t[x].unwrap_or(f64::NEG_INFINITY));
        let (ka, kb) = (key(a), key(b));
        let k = if kb.0 != ka.0 { kb.0 } else { kb.1 > ka.1 };
        let x = if k { b } else { a };
        if sel.t[a].is_some() || sel.t[b].is_some() {
            row.show(usize::from(k));
        }
        row.selection_t = sel.t[x];
        row.beats_no_hedge = sel.beats_no_hedge[a] || sel.beats_no_hedge[b];
        row.in_best_set = sel.best_set[a] || sel.best_set[b];
        if k && row.beats_no_hedge {
            let wf = row.scores[0].0;
            let cv = format!(
                "scored on the ratio fitted on the other months (cross-validated); walk-forward, which hedges one-to-one for its first months, removed {}",
                wf.map_or("n/a".into(), rentix_core::stats::percent)
            );
            row.note = if row.note.is_empty() {
                cv
            } else {
                format!("{cv}; {}", row.note)
            };
        }
        let why = if let Some(d) = row.decided.clone() {
            Some(judged_as_backtest(row, &d, in_set))
        } else if opt.resamples == 0 {
            Some(format!(
                "not ranked: --resamples 0 leaves no way to correct for choosing among {n} candidates"
            ))
        } else if !row.beats_no_hedge {
            Some(format!(
                "not ranked: chosen among {n} candidates (two hedges each) on these months, its hedge cannot be told from no hedge (t {}, needed above {})",
                row.selection_t.map_or("n/a".into(), |t| format!("{t:.2}")),
                sel.critical_value.map_or("n/a".into(), |c| format!("{c:.2}"))
            ))
        } else if row.in_best_set && in_set == 1 {
            Some(
                "the best, alone in its set: every other ranked candidate is told apart from it"
                    .into(),
            )
        } else if row.in_best_set {
            Some(format!(
                "one of {in_set} that cannot be told apart from the best; among them the rent's own index (the one backtest hedges on), its GPU and scope, more periods and more sufficient fixings rank first"
            ))
        } else {
            None
        };
        if let Some(w) = why {
            row.note = if row.note.is_empty() {
                w
            } else {
                format!("{w}; {}", row.note)
            };
        }
    }
}

/// Shows on the rent's own index the decision `d` that judges it, its figures
/// (one number on both surfaces), and returns its note: the decision is its
/// verdict, whatever its two hedges scored.
fn judged_as_backtest(row: &mut TrackRow, d: &Decided, in_set: usize) -> String {
    row.oos_effectiveness = d.effectiveness;
    row.oos_effectiveness_ci_low = d.interval.map(|i| i.low);
    row.oos_effectiveness_ci_high = d.interval.map(|i| i.high);
    row.note = row
        .note
        .split("; ")
        .filter(|n| !n.starts_with("not ranked") && !n.starts_with("scored on the ratio"))
        .collect::<Vec<_>>()
        .join("; ");
    let own = format!(
        "the rent's own index, named before any search: judged as `rentix backtest` judges it ({})",
        d.sentence
    );
    match (d.hedge, row.in_best_set, in_set) {
        (false, ..) => format!("not ranked: {own}"),
        (true, true, 1) => format!(
            "the best, alone in its set: every other ranked candidate is told apart from it; {own}"
        ),
        (true, true, _) => {
            format!("one of {in_set} that cannot be told apart from the best; {own}")
        }
        (true, false, _) => own,
    }
}

/// Candidates in the best set, as the table marks them (`in_best_set`: either of
/// a candidate's two hedges, `best_set[2j]` and `best_set[2j + 1]`), not hedges:
/// a note said "one of 2" above a table with one candidate in the set, both of
/// its hedges in it.
fn candidates_in(best_set: &[bool]) -> usize {
    best_set.chunks(2).filter(|c| c.iter().any(|b| *b)).count()
}

/// The in-sample ratio's cross-validation of a candidate's backtest.
fn cross_validated(
    r: &crate::backtest::BacktestResult,
) -> Option<&crate::backtest::CrossValidated> {
    r.strategies
        .iter()
        .find(|s| s.strategy == Strategy::StaticMinVariance)
        .and_then(|s| s.cross_validated.as_ref())
}

/// Monthly P&L keyed by the rent's month (`lag` months after the contract's).
fn by_rent_month(
    monthly: &[(NaiveDate, f64, f64)],
    lag: chrono::Months,
) -> BTreeMap<NaiveDate, (f64, f64)> {
    monthly
        .iter()
        .map(|(start, h, u)| (start.checked_add_months(lag).unwrap_or(*start), (*h, *u)))
        .collect()
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
            selection_t: None,
            beats_no_hedge: false,
            in_best_set: false,
            cross_hedge: self.rent.names.owns(u.name()).map(|(gpu, _)| !gpu),
            note: String::new(),
            monthly: BTreeMap::new(),
            monthly_cv: BTreeMap::new(),
            scores: [(None, None); 2],
            in_family: false,
            own_index: false,
            decided: None,
        };
        let cfg = match self.config(u, vec![Strategy::WalkForward, Strategy::StaticMinVariance]) {
            Ok(c) => c,
            Err(e) => {
                row.note = e;
                return row;
            }
        };
        match run(self.rent, self.events, &IndexInputs::of(u.clone()), &cfg) {
            Ok(r) => {
                let st = &r.strategies[0];
                let cv = cross_validated(&r);
                row.scores = [
                    (st.effectiveness, st.confidence_intervals.effectiveness),
                    cv.map_or((None, None), |c| {
                        (c.effectiveness, c.effectiveness_interval)
                    }),
                ];
                // Shown until the selection says which hedge it rests on: the one
                // that removed more.
                let k = usize::from(row.scores[1].0 > row.scores[0].0);
                row.show(k);
                row.hedge_ratio = r.min_variance_hedge_ratio;
                row.correlation_changes = st.correlation_changes;
                row.correlation_levels = st.correlation_levels;
                row.tracking_error = st.tracking_error;
                row.basis_mean = st.basis.map(|b| b.mean);
                row.periods = r.periods;
                // Keyed by the rent's month, so that a candidate the rent follows a
                // month late is compared on the same months as the others.
                let lag = chrono::Months::new(r.rent_lag_months);
                row.monthly = r
                    .futures_rows()
                    .filter(|p| p.strategy == Strategy::WalkForward)
                    .map(|p| {
                        let month = p
                            .period_start
                            .checked_add_months(lag)
                            .unwrap_or(p.period_start);
                        (month, (p.pnl.hedged_before_fees, p.pnl.unhedged_total))
                    })
                    .collect();
                row.monthly_cv = cv
                    .map(|c| by_rent_month(&c.monthly, lag))
                    .unwrap_or_default();
                row.in_family = r.periods >= self.opt.min_periods
                    && row
                        .sufficient_share
                        .is_none_or(|s| s >= self.opt.min_sufficient_share)
                    && row.oos_effectiveness.is_some();
                let mut notes = self.notes(&row, &r);
                if r.rent_lag_months > 0 {
                    notes.push(
                        "the rent follows this index one month late: scored hedging each month's rent with the contract of the month before".into(),
                    );
                }
                if row.cross_hedge == Some(true) {
                    notes.push(format!(
                        "cross-hedge: another GPU than the rent's {}",
                        self.rent.names.gpu.as_deref().unwrap_or_default()
                    ));
                }
                row.note = notes.join("; ");
            }
            Err(e) => row.note = format!("not ranked: {e}"),
        }
        row
    }

    /// The backtest of `strategies` on the candidate `u`: the base contract's terms
    /// on it, entered at the index's level.
    fn config(&self, u: &Underlying, strategies: Vec<Strategy>) -> Result<BacktestConfig, String> {
        let contract = self
            .base
            .edited(|t| {
                t.underlying = u.name().to_string();
                t.entry.assumption = crate::contract::EntryAssumption::Index;
            })
            .map_err(|e| e.to_string())?;
        Ok(BacktestConfig {
            contract,
            strategies,
            bootstrap_resamples: self.opt.resamples,
            seed: self.opt.seed,
            rolling_window: 12,
            perp: None,
        })
    }

    /// What `rentix backtest` decides on the rent's own index `u` (every
    /// strategy, as it runs them): the decision the row is judged by, and the
    /// figures it rests on; `None` when that backtest fails (the row's own
    /// backtest said why).
    fn decide(&self, u: &Underlying) -> Option<Decided> {
        let cfg = self.config(u, Strategy::ALL.to_vec()).ok()?;
        let r = run(self.rent, self.events, &IndexInputs::of(u.clone()), &cfg).ok()?;
        let rec = r.recommendation;
        Some(Decided {
            hedge: rec.decision == crate::recommendation::Decision::Hedge,
            sentence: rec.reason,
            effectiveness: rec.effectiveness,
            interval: rec.effectiveness_interval,
        })
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
        if let Some(share) = row
            .sufficient_share
            .filter(|s| *s < opt.min_sufficient_share)
        {
            notes.push(format!(
            "not ranked: {:.0}% of its fixings were sufficient, {:.0}% needed (--min-sufficient-share): the index is too thinly fed to settle on",
            100.0 * share,
            100.0 * opt.min_sufficient_share
        ));
        }
        // A rank recommends the grade: one whose hedge removed no variance
        // out of sample is no hedge, however narrow its interval.
        // Both hedges' figures: the selection may show either in the row's
        // columns (the note named one, the column the other), and here neither
        // removed any.
        if row.oos_effectiveness.is_some_and(|e| e <= 0.0) {
            let figures: Vec<String> = ["walk-forward", "cross-validated"]
                .iter()
                .zip(&row.scores)
                .filter_map(|(name, (e, _))| e.map(|e| format!("{name} {:.1}%", 100.0 * e)))
                .collect();
            notes.push(format!(
                "not ranked: out of sample its hedges removed no risk ({})",
                figures.join(", ")
            ));
        }
        if row.oos_effectiveness.is_none() && notes.iter().all(|n| !n.starts_with("not ranked")) {
            notes.push(format!(
                "not ranked: no out-of-sample effectiveness ({ranked_by})"
            ));
        }
        notes
    }
}

/// Sorts the rows and numbers the ranked ones from 1: first the best set by
/// preference (then by `t`), then the other ranked rows by `t`, then the rows not
/// ranked by their interval's lower bound; equal keys by grade.
fn rank_rows(rows: &mut [TrackRow], rent: &RentSeries) {
    let ranked = |r: &TrackRow| r.eligible() && r.beats_no_hedge;
    let t = |r: &TrackRow| r.selection_t.unwrap_or(f64::NEG_INFINITY);
    let low = |r: &TrackRow| {
        r.oos_effectiveness_ci_low
            .or(r.oos_effectiveness)
            .unwrap_or(f64::NEG_INFINITY)
    };
    rows.sort_by(|a, b| {
        ranked(b)
            .cmp(&ranked(a))
            .then(b.in_best_set.cmp(&a.in_best_set))
            .then_with(|| {
                if a.in_best_set && b.in_best_set {
                    let (pa, pb) = (a.preference(rent), b.preference(rent));
                    pb.0.cmp(&pa.0)
                        .then(pb.1.cmp(&pa.1))
                        .then(pb.2.total_cmp(&pa.2))
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .then_with(|| {
                if ranked(a) {
                    t(b).total_cmp(&t(a))
                } else {
                    low(b).total_cmp(&low(a))
                }
            })
            .then(a.grade.cmp(&b.grade))
    });
    let mut rank = 0;
    for r in rows.iter_mut().filter(|r| ranked(r)) {
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
    t.push("sufficient_share", f(&|r| r.sufficient_share));
    t.push("selection_t", f(&|r| r.selection_t));
    let b = |g: &dyn Fn(&TrackRow) -> Option<bool>| Col::Bool(rows.iter().map(g).collect());
    t.push("beats_no_hedge", b(&|r| Some(r.beats_no_hedge)));
    t.push("in_best_set", b(&|r| Some(r.in_best_set)));
    t.push("cross_hedge", b(&|r| r.cross_hedge));
    t.push("note", s(&|r| r.note.clone()));
    t
}

#[cfg(test)]
mod tests {
    use super::candidates_in;

    /// Two hedges a candidate: one candidate with both of its hedges in the set
    /// is one, not two; one with either is one.
    #[test]
    fn the_best_set_counts_candidates_not_hedges() {
        assert_eq!(candidates_in(&[true, true, false, false]), 1);
        assert_eq!(candidates_in(&[false, true, true, false, false, false]), 2);
        assert_eq!(candidates_in(&[]), 0);
    }
}
