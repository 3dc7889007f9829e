//! The decision a hedger reads first: hedge (with which strategy, which side and how
//! many contracts), do not hedge, or not enough data to tell.
//!
//! ## The rule
//!
//! 1. Fewer than [`MIN_DECISION_PERIODS`] hedge periods: `not_enough_data` (how many
//!    there are and how many the rule needs).
//! 2. Among the strategies run (all six by default), take the one whose out-of-sample
//!    effectiveness has the highest lower bound of its 95% bootstrap interval. With
//!    no resamples (`--resamples 0`) there is no interval, and no decision
//!    (`not_enough_data`): a point estimate cannot tell risk removed from chance. A strategy a hedger could have traded month by month (one-to-one,
//!    walk-forward, ewma, layered) is judged by its backtest. `static-min-variance`,
//!    the ratio fitted on every month, is judged by cross-validation: each month
//!    hedged at the ratio fitted on all the other months
//!    ([`crate::CrossValidated`]), never by its in-sample effectiveness, which used
//!    the month it hedges. This is the clause that lets a rent that moves at `b`
//!    times the index be hedged at `b` from the first months: a walk-forward hedges
//!    one-to-one for its first six months, so ten months of a rent that floats at
//!    0.41 could never teach it the ratio, while the cross-validated fit of ten months
//!    is exact. Equal lower bounds go to the first strategy in run order.
//! 3. `hedge` when that lower bound is above zero: the hedge removed risk by more
//!    than chance would give. Contracts are the strategy's ratio for the next month
//!    applied to the latest month's exposure, rounded half away from zero; a payer
//!    buys futures, an earner sells them. A hedge of zero whole contracts is
//!    `do_not_hedge`.
//! 4. Otherwise `do_not_hedge`, saying whether the best hedge added risk (point
//!    estimate below zero) or removed none that can be told from chance, with its
//!    interval, and pointing to `rentix track` for an index that tracks the rent;
//!    a rent whose monthly changes move against the index's beyond chance is said
//!    to ([`moves_against`]).
//!
//! Below [`FEW_PERIODS`] periods every decision carries a warning: the interval and
//! the VaR rest on few points.
//!
//! The rule follows the hedge-accounting practice of requiring an economic
//! relationship before designating a hedge (IFRS 9 B6.4.4-B6.4.6: the hedging
//! instrument and the hedged item must move in opposite directions because of the
//! same risk, not by accident) and uses the interval rather than the point estimate
//! so that a short or noisy history cannot pass on a lucky draw (as `track` ranks).

use crate::perp::Instrument;
use crate::rent::Side;
use crate::stats::bootstrap::Interval;
use crate::stats::regression::Regression;
use crate::strategy::Strategy;
use serde::{Deserialize, Serialize};

/// Fewest hedge periods a decision is made on: half a year of months.
pub(crate) const MIN_DECISION_PERIODS: usize = 6;
/// Below this many periods a decision carries the small-sample warning.
pub(crate) const FEW_PERIODS: usize = 24;

/// The three answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::IntoStaticStr, strum::Display, strum::EnumString, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum Decision {
    /// The best tradable hedge's lower bound (or point estimate) is above zero and it
    /// makes at least one whole contract.
    Hedge,
    /// No tradable hedge removed risk that can be told from chance, the hedge rounds to
    /// zero contracts, the rent never varied, or no tradable strategy was run.
    DoNotHedge,
    /// Fewer than `MIN_DECISION_PERIODS` hedge periods, or no interval to decide on
    /// (`--resamples 0`).
    NotEnoughData,
}

impl Decision {
    /// The name `summary.json` uses: `hedge`, `do_not_hedge`, `not_enough_data`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// What `summary.json` says to do, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recommendation {
    /// Hedge, do not hedge, or not enough data.
    pub decision: Decision,
    /// What the decision trades (futures unless written).
    #[serde(default, skip_serializing_if = "Instrument::is_futures")]
    pub instrument: Instrument,
    /// The strategy the decision rests on (the best tradable one).
    pub strategy: Option<Strategy>,
    /// `buy` (a payer) or `sell` (an earner) the instrument; only for `hedge`.
    pub futures_side: Option<String>,
    /// Contracts for the next month (for a perp: lots of its `lot_gpu_hours`); only
    /// for `hedge`.
    pub contracts: Option<i64>,
    /// The strategy's ratio for the next month; `None` when no strategy was picked.
    pub hedge_ratio: Option<f64>,
    /// The strategy's out-of-sample effectiveness, a share.
    pub effectiveness: Option<f64>,
    /// Its 95% bootstrap interval; `None` when there is none (no resamples, say).
    pub effectiveness_interval: Option<Interval>,
    /// Hedge periods the decision rests on.
    pub periods: usize,
    /// Fewest periods a decision needs (`MIN_DECISION_PERIODS`).
    pub periods_needed: usize,
    /// One sentence a person can act on.
    pub reason: String,
    /// What to read with care: few periods (below `FEW_PERIODS`), or a hedge above
    /// the contract's position limit.
    pub warning: Option<String>,
}

/// One tradable strategy's result, as the rule needs it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Candidate {
    /// The strategy.
    pub strategy: Strategy,
    /// Its out-of-sample effectiveness, a share; `None` when the rent P&L never varied.
    pub effectiveness: Option<f64>,
    /// Its 95% bootstrap interval; `None` when there is none (no resamples, say).
    pub interval: Option<Interval>,
    /// The ratio it would apply next month.
    pub next_ratio: f64,
    /// Whole contracts (or perp lots) that ratio makes on the latest month's
    /// exposure.
    pub next_contracts: i64,
    /// The in-sample ratio judged by leaving each month out of its fit in turn
    /// (`static-min-variance`): its effectiveness is the cross-validated one.
    pub cross_validated: bool,
    /// Whether any month's hedge came to a whole contract (or lot): when none did,
    /// the hedged P&L is the unhedged one and its effectiveness says nothing.
    pub traded: bool,
}

/// Whether a strategy could have been traded (it uses no future data and hedges).
pub(crate) fn tradable(s: Strategy) -> bool {
    !matches!(s, Strategy::Unhedged | Strategy::StaticMinVariance)
}

/// A whole number with thousands separators (190,464).
pub(crate) fn grouped(x: f64) -> String {
    let digits = format!("{:.0}", x.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if x < 0.0 {
        out.insert(0, '-');
    }
    out
}

fn pct(x: f64) -> String {
    rentix_core::stats::percent(x)
}

/// Applies the rule (module doc) to futures `candidates`, in run order.
pub(crate) fn recommend(
    side: Side,
    periods: usize,
    candidates: &[Candidate],
    underlying: &str,
) -> Recommendation {
    recommend_for(
        Instrument::Futures,
        0.0,
        side,
        periods,
        candidates,
        underlying,
    )
}

/// Applies the rule (module doc) to `candidates` hedging with `instrument`; a perp's
/// lots are `lot_gpu_hours` GPU-hours each.
pub(crate) fn recommend_for(
    instrument: Instrument,
    lot_gpu_hours: f64,
    side: Side,
    periods: usize,
    candidates: &[Candidate],
    underlying: &str,
) -> Recommendation {
    let what = instrument.noun(underlying);
    let mut r = Recommendation {
        decision: Decision::NotEnoughData,
        instrument,
        strategy: None,
        futures_side: None,
        contracts: None,
        hedge_ratio: None,
        effectiveness: None,
        effectiveness_interval: None,
        periods,
        periods_needed: MIN_DECISION_PERIODS,
        reason: String::new(),
        warning: (periods < FEW_PERIODS).then(|| {
            format!(
                "{periods} monthly periods (fewer than {FEW_PERIODS}): the interval and the VaR rest on few points"
            )
        }),
    };
    if periods < MIN_DECISION_PERIODS {
        r.reason = format!(
            "not enough data: {periods} hedge periods, the decision needs at least {MIN_DECISION_PERIODS} (months with rent on every day, a settlement and a basis observed before entry; see months_left_out)"
        );
        return r;
    }
    let Some(best) = best_candidate(candidates) else {
        r.decision = Decision::DoNotHedge;
        r.reason = if candidates.iter().any(|c| tradable(c.strategy)) {
            format!(
                "do not hedge: your rent did not change from month to month in the {periods} periods, so there is no risk for {what} to remove"
            )
        } else {
            "no decision: no strategy that decides was run (one-to-one, static-min-variance, walk-forward or ewma; --strategy): layered is reported beside them but does not decide, its tranches' rent changes running from references one to three months old".into()
        };
        return r;
    };
    r.strategy = Some(best.strategy);
    r.hedge_ratio = Some(best.next_ratio);
    r.effectiveness = best.effectiveness;
    r.effectiveness_interval = best.interval;
    let Some(i) = best.interval else {
        // Unrelated random-walk rents removed "some" risk by point estimate half the
        // time: without an interval nothing tells risk removed from chance.
        r.reason = format!(
            "no decision: --resamples 0 leaves no interval, and a point estimate cannot tell risk removed from chance; the best hedge ({}, ratio {:.2}) removed {}; run again without --resamples 0",
            best.strategy.as_str(),
            best.next_ratio,
            pct(best.effectiveness.unwrap_or(0.0))
        );
        return r;
    };
    let interval = format!(" (95% interval {} to {})", pct(i.low), pct(i.high));
    let removes = key(best).is_some_and(|k| k > 0.0);
    if removes && best.next_contracts > 0 {
        let buy = side == Side::Pay;
        r.decision = Decision::Hedge;
        r.futures_side = Some(if buy { "buy" } else { "sell" }.into());
        r.contracts = Some(best.next_contracts);
        r.reason = hedge_reason(
            instrument,
            lot_gpu_hours,
            buy,
            best,
            underlying,
            &interval,
            periods,
        );
        return r;
    }
    r.decision = Decision::DoNotHedge;
    r.reason = if !best.traded && best.next_contracts == 0 && best.next_ratio > 0.0 {
        // A ratio far below one is the rent moving little with the index, not a
        // small exposure (7,300 GPU-hours a month at 0.04 is 0.4 contracts).
        let small = if best.next_ratio < SMALL_RATIO {
            "your rent moves little with the index".to_string()
        } else {
            format!("your exposure is too small for {what}")
        };
        format!(
            "do not hedge: {small}: at the best hedge's ratio ({}, {:.2}) no month's hedge came to half a {}, so none was ever placed",
            best.strategy.as_str(),
            best.next_ratio,
            instrument.unit_noun()
        )
    } else {
        no_hedge_reason(instrument, best, removes, &what, &interval)
    };
    r
}

/// A hedge ratio below which a hedge too small to place is said to be the rent
/// moving little with the index rather than a small exposure.
const SMALL_RATIO: f64 = 0.25;

/// What a candidate is judged by: the lower bound of its effectiveness interval, or
/// the point estimate when there is no interval.
fn key(c: &Candidate) -> Option<f64> {
    c.interval.map(|i| i.low).or(c.effectiveness)
}

/// The tradable candidate with the best [`key`] (the first of equal ones), among
/// those that placed a hedge in some month when any did: one that never did holds
/// the unhedged P&L, an effectiveness of exactly 0 whose interval (0 to 0) beat
/// every real hedge whose interval reached below zero, and a hostile round read
/// "the best tradable hedge removed 0% (interval 0% to 0%)" of a position of no
/// contract.
fn best_candidate(candidates: &[Candidate]) -> Option<&Candidate> {
    let best_of = |traded_only: bool| {
        candidates
            .iter()
            .filter(|c| (tradable(c.strategy) || c.cross_validated) && key(c).is_some())
            .filter(|c| c.traded || !traded_only)
            .fold(None::<&Candidate>, |best, c| match best {
                Some(b) if key(b) >= key(c) => Some(b),
                _ => Some(c),
            })
    };
    best_of(true).or_else(|| best_of(false))
}

/// The reason of a decision to hedge: the trade, and what it removed out of sample.
fn hedge_reason(
    instrument: Instrument,
    lot_gpu_hours: f64,
    buy: bool,
    best: &Candidate,
    underlying: &str,
    interval: &str,
    periods: usize,
) -> String {
    let what = instrument.noun(underlying);
    let eff = best.effectiveness.unwrap_or(0.0);
    let trade = match instrument {
        Instrument::Futures => format!(
            "{} {} {underlying} futures contracts a month",
            if buy { "buy" } else { "sell" },
            best.next_contracts
        ),
        Instrument::Perp => format!(
            "go {} {} GPU-hours of {what} for next month's rent, stepped down as the month is delivered",
            if buy { "long" } else { "short" },
            grouped(best.next_contracts as f64 * lot_gpu_hours)
        ),
    };
    if best.cross_validated {
        return format!(
            "hedge: {trade} ({}, ratio {:.2}, fitted on all {periods} months); hedged at the ratio fitted on the other months, each month's hedge removed {} of your rent's month-to-month risk{interval}",
            best.strategy.as_str(),
            best.next_ratio,
            pct(eff)
        );
    }
    format!(
        "hedge: {trade} ({}, ratio {:.2}); out of sample it removed {} of your rent's month-to-month risk{interval}",
        best.strategy.as_str(),
        best.next_ratio,
        pct(eff)
    )
}

/// The reason of a decision not to hedge with the best candidate: too small a
/// position, a hedge that adds risk, or one whose removal cannot be told from chance.
fn no_hedge_reason(
    instrument: Instrument,
    best: &Candidate,
    removes: bool,
    what: &str,
    interval: &str,
) -> String {
    let eff = best.effectiveness.unwrap_or(0.0);
    if removes {
        format!(
            "do not hedge: the best hedge ({}, ratio {:.2}) is less than half a {} on your latest month's exposure",
            best.strategy.as_str(),
            best.next_ratio,
            instrument.unit_noun()
        )
    } else if eff < 0.0 && best.interval.is_some_and(|i| i.high < 0.0) {
        let adds = best
            .interval
            .map(|i| {
                if i.high < 0.0 {
                    format!(" (95% interval: adds {} to {})", pct(-i.high), pct(-i.low))
                } else {
                    format!(
                        " (95% interval of the share removed: {} to {})",
                        pct(i.low),
                        pct(i.high)
                    )
                }
            })
            .unwrap_or_default();
        format!(
            "do not hedge: {what} would add risk: the best tradable hedge ({}) added {} to your rent's month-to-month risk{adds}; run `rentix track` to find an index whose changes track your rent",
            best.strategy.as_str(),
            pct(-eff)
        )
    } else {
        // A point estimate below zero in an interval that reaches above it is
        // chance too: "would add risk" stood above -1% (-12% to 11%).
        let (verb, share) = if eff < 0.0 {
            ("added", pct(-eff))
        } else {
            ("removed", pct(eff))
        };
        format!(
            "do not hedge: {what} removed no risk that can be told from chance: the best tradable hedge ({}) {verb} {share}{interval}, an interval that reaches zero; run `rentix track` to find an index whose changes track your rent",
            best.strategy.as_str(),
        )
    }
}

/// Rewrites the reason of a decision not to hedge a rent whose every period holds
/// no GPU-hours (`exposures`): its P&L never varied because nothing was rented,
/// not because the price held still.
pub(crate) fn no_exposure(r: &mut Recommendation, exposures: &[f64]) {
    if r.decision == Decision::DoNotHedge
        && !exposures.is_empty()
        && exposures.iter().all(|e| *e == 0.0)
    {
        r.reason = format!(
            "do not hedge: your rent holds no GPU-hours in the {} periods (every row's gpu_hours is 0), so there is no exposure to hedge",
            r.periods
        );
    } else if r.decision == Decision::DoNotHedge
        && exposures.last() == Some(&0.0)
        && r.reason.starts_with("do not hedge: the best hedge (")
    {
        // "Less than half a contract" read as a small position where the latest
        // month (idle: 0 GPU-hours) holds none, above hedges removing >99.99%.
        let removed = r
            .effectiveness
            .map(|e| {
                format!(
                    ", where the best hedge removed {} of the month-to-month risk",
                    pct(e)
                )
            })
            .unwrap_or_default();
        r.reason = format!(
            "do not hedge next month: your latest month holds no GPU-hours (idle), so there is no exposure to size a hedge on{removed}; run again once a month with GPU-hours is in the rent file"
        );
    }
}

/// Significance a rent's slope on the index must reach before a decision not to
/// hedge says the rent moves against the index (two-sided p-value).
const AGAINST_P_VALUE: f64 = 0.05;

/// Rewrites the reason of a decision not to hedge when the rent's monthly changes
/// move against the index's (`regression`: rent changes on index changes, the
/// slope below zero beyond chance). Hedge ratios are floored at zero, so such a rent
/// reads as "no risk that can be told from chance" although the index explains it:
/// the side a payer (buy) or an earner (sell) takes would add risk, and the reason
/// says so, with the slope and its t.
pub(crate) fn moves_against(
    r: &mut Recommendation,
    regression: Option<&Regression>,
    side: Side,
    underlying: &str,
) {
    let Some(g) = regression else { return };
    // Only a decision that rests on a hedge which removed nothing: not "no
    // strategy was run", not "less than half a contract".
    let removed = removed_beyond_chance(r);
    if r.decision != Decision::DoNotHedge
        || r.strategy.is_none()
        || removed
        || !(g.slope < 0.0 && g.slope_p_value < AGAINST_P_VALUE)
    {
        return;
    }
    let what = r.instrument.noun(underlying);
    let taking = match (r.instrument, side) {
        (Instrument::Futures, Side::Pay) => format!("buying {what}, as a payer hedges,"),
        (Instrument::Futures, Side::Earn) => format!("selling {what}, as an earner hedges,"),
        (Instrument::Perp, Side::Pay) => format!("going long {what}, as a payer hedges,"),
        (Instrument::Perp, Side::Earn) => format!("going short {what}, as an earner hedges,"),
    };
    let fit = fit_text(g);
    r.reason = format!(
        "do not hedge: your rent moves against {underlying}: each $1.00 the index rose in a month, your rent fell ${:.2} ({fit}, {} months); {taking} would add risk, and a hedge ratio is never below zero; run `rentix track` to find an index whose changes track your rent",
        -g.slope,
        g.n
    );
}

/// Whether the decided hedge removed risk beyond chance: the lower bound of its
/// interval (its point estimate without one) above zero.
fn removed_beyond_chance(r: &Recommendation) -> bool {
    r.effectiveness_interval
        .map(|i| i.low)
        .or(r.effectiveness)
        .is_some_and(|k| k > 0.0)
}

/// How well a slope is known: its t, or "an exact fit" where the t is beyond any
/// that data gives (a rent computed from the index: t -554757605850352.6).
fn fit_text(g: &Regression) -> String {
    if g.slope_t.abs() > 1e6 {
        "an exact fit".to_string()
    } else {
        format!("t {:.1}", g.slope_t)
    }
}

/// Rewrites the reason of a decision not to hedge when only strategies at a given
/// ratio were run (`fitted_run` false: one-to-one, layered) and the rent tracks
/// the index at another slope beyond chance: a rent of 0.41 times the index
/// plus 2 hedged one-to-one "would add risk" and was sent to `rentix track` for
/// another index, where the fitted strategies hedge it at 0.41, >99.9%. A
/// decision to hedge at such a ratio keeps its reason and says it over- or
/// under-hedges (a rent moving 3x the index, hedged one-to-one, removed 56% with
/// no word that a fitted ratio removes all of it).
pub(crate) fn tracks_at_another_ratio(
    r: &mut Recommendation,
    regression: Option<&Regression>,
    fitted_run: bool,
    underlying: &str,
) {
    let (Some(g), Some(strategy), Some(ratio)) = (regression, r.strategy, r.hedge_ratio) else {
        return;
    };
    if fitted_run
        || !(g.slope > 0.0 && g.slope_p_value < AGAINST_P_VALUE)
        || (ratio - g.slope).abs() <= 0.1 * ratio
    {
        return;
    }
    let hedges = if ratio > g.slope {
        "over-hedges"
    } else {
        "under-hedges"
    };
    if r.decision == Decision::Hedge {
        // The hedge stands (it removed risk beyond chance), but at a ratio the
        // rent's own changes say is off: a fitted one would remove more.
        r.reason.push_str(&format!(
            "; but at ratio {ratio:.2} ({}) it {hedges} your rent: each $1.00 the index rose in a month your rent rose ${:.2} ({}, {} months); run again with a fitted ratio (no --strategy, or --strategy static-min-variance or walk-forward) to have a hedge at about {:.2} judged",
            strategy.as_str(),
            g.slope,
            fit_text(g),
            g.n,
            g.slope
        ));
        return;
    }
    if r.decision != Decision::DoNotHedge || removed_beyond_chance(r) {
        return;
    }
    r.reason = format!(
        "do not hedge at ratio {ratio:.2} ({}): your rent does track {underlying}, each $1.00 the index rose in a month your rent rose ${:.2} ({}, {} months), so a hedge at {ratio:.2} {hedges} it; run again with a fitted ratio (no --strategy, or --strategy static-min-variance or walk-forward) to have a hedge at about {:.2} judged",
        strategy.as_str(),
        g.slope,
        fit_text(g),
        g.n,
        g.slope
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(low: f64, high: f64) -> Option<Interval> {
        Some(Interval {
            low,
            high,
            level: 0.95,
            resamples: 1000,
            mean_block_length: 1.0,
        })
    }

    fn cand(s: Strategy, eff: f64, low: f64, high: f64, n: i64) -> Candidate {
        Candidate {
            strategy: s,
            effectiveness: Some(eff),
            interval: iv(low, high),
            next_ratio: 1.0,
            next_contracts: n,
            cross_validated: false,
            traded: true,
        }
    }

    #[test]
    fn a_rent_that_moves_against_the_index_is_said_to() {
        // Item 6 of the stop-65 hostile run: a rent of 12 - index (an earner), so
        // each month's rent change is minus the index's: slope -1.00, t -1112 on
        // 29 months. Selling one-to-one doubles the risk (effectiveness -3.0); the
        // in-sample ratio floors at zero and removes 0% (0% to 0%): the reason
        // said "no risk that can be told from chance".
        let mut cv = cand(Strategy::StaticMinVariance, 0.0, 0.0, 0.0, 0);
        cv.cross_validated = true;
        cv.next_ratio = 0.0;
        let c = [cand(Strategy::OneToOne, -3.0, -3.01, -2.99, 1010), cv];
        let mut r = recommend(Side::Earn, 29, &c, "h200");
        assert_eq!(r.decision, Decision::DoNotHedge);
        assert!(r.reason.contains("told from chance"), "{}", r.reason);
        let g = Regression {
            slope: -1.0003,
            intercept: 0.0,
            r2: 0.99998,
            slope_t: -1112.15,
            slope_p_value: 0.0,
            n: 29,
            passes_80_125: false,
        };
        moves_against(&mut r, Some(&g), Side::Earn, "h200");
        assert_eq!(r.decision, Decision::DoNotHedge);
        assert!(
            r.reason.starts_with("do not hedge: your rent moves against h200: each $1.00 the index rose in a month, your rent fell $1.00 (t -1112.2, 29 months); selling h200 futures, as an earner hedges, would add risk"),
            "{}",
            r.reason
        );
        // A slope that chance could give (p 0.3), or a decision to hedge, is left
        // as it is.
        let mut r2 = recommend(Side::Earn, 29, &c, "h200");
        let before = r2.reason.clone();
        moves_against(
            &mut r2,
            Some(&Regression {
                slope_p_value: 0.3,
                ..g
            }),
            Side::Earn,
            "h200",
        );
        assert_eq!(r2.reason, before);
        let mut h = recommend(
            Side::Pay,
            30,
            &[cand(Strategy::OneToOne, 0.9, 0.8, 0.95, 10)],
            "h200",
        );
        let before = h.reason.clone();
        moves_against(&mut h, Some(&g), Side::Pay, "h200");
        assert_eq!(h.reason, before);
    }

    /// What a hostile round found said wrongly when nothing was hedged: a
    /// one-to-one-only run on a rent of 0.41 times the index plus 2 sent to
    /// `rentix track`; -1% in an interval of -12% to 11% called "would add risk";
    /// a ratio of 0.04 called a small exposure; an idle latest month called a
    /// hedge of less than half a contract.
    #[test]
    fn a_decision_not_to_hedge_says_why_as_its_evidence_does() {
        let exact = Regression {
            slope: 0.41,
            intercept: 0.0,
            r2: 1.0,
            slope_t: 4.4e14,
            slope_p_value: 0.0,
            n: 23,
            passes_80_125: false,
        };
        // 1 - (0.59 / 0.41)^2 = -1.07 at ratio 1.
        let c = [cand(Strategy::OneToOne, -1.07, -1.08, -1.06, 10)];
        let mut r = recommend(Side::Pay, 23, &c, "h100");
        assert!(r.reason.contains("would add risk"), "{}", r.reason);
        tracks_at_another_ratio(&mut r, Some(&exact), false, "h100");
        assert!(
            r.reason.starts_with("do not hedge at ratio 1.00 (one-to-one): your rent does track h100, each $1.00 the index rose in a month your rent rose $0.41 (an exact fit, 23 months), so a hedge at 1.00 over-hedges it"),
            "{}",
            r.reason
        );
        // A rent moving 3x the index, hedged one-to-one only: the hedge removes
        // 1 - (2/3)^2 = 56% and is decided, and the reason says it under-hedges
        // (a recheck found it silent).
        let triple = Regression {
            slope: 3.0,
            ..exact
        };
        let mut h = recommend(
            Side::Pay,
            23,
            &[cand(Strategy::OneToOne, 0.56, 0.5, 0.6, 10)],
            "h100",
        );
        assert_eq!(h.decision, Decision::Hedge);
        tracks_at_another_ratio(&mut h, Some(&triple), false, "h100");
        assert!(
            h.reason.contains("; but at ratio 1.00 (one-to-one) it under-hedges your rent: each $1.00 the index rose in a month your rent rose $3.00")
                && h.reason.contains("a hedge at about 3.00 judged"),
            "{}",
            h.reason
        );
        // The band is 10% of the ratio, either side: a slope of 0.905 or 1.095
        // against ratio 1 says nothing, 0.89 or 1.11 does (it was 10% of the
        // slope: 0.905 said "over-hedges", 1.105 nothing).
        for (slope, says) in [(0.905, false), (1.095, false), (0.89, true), (1.11, true)] {
            let mut h = recommend(
                Side::Pay,
                23,
                &[cand(Strategy::OneToOne, 0.9, 0.8, 0.95, 10)],
                "h100",
            );
            let before = h.reason.clone();
            let g = Regression { slope, ..exact };
            tracks_at_another_ratio(&mut h, Some(&g), false, "h100");
            assert_eq!(h.reason != before, says, "{slope}: {}", h.reason);
        }
        // With a fitted strategy run, its verdict stands.
        let mut f = recommend(Side::Pay, 23, &c, "h100");
        let before = f.reason.clone();
        tracks_at_another_ratio(&mut f, Some(&exact), true, "h100");
        assert_eq!(f.reason, before);
        let chance = recommend(
            Side::Pay,
            23,
            &[cand(Strategy::WalkForward, -0.0125, -0.12, 0.11, 10)],
            "h100",
        );
        assert!(
            chance
                .reason
                .contains("removed no risk that can be told from chance")
                && chance.reason.contains("(walk-forward) added 1%"),
            "{}",
            chance.reason
        );
        let mut small = cand(Strategy::OneToOne, 0.9, 0.8, 0.95, 0);
        small.next_ratio = 0.04;
        small.traded = false;
        let r = recommend(Side::Pay, 23, &[small], "h100");
        assert!(
            r.reason.starts_with("do not hedge: your rent moves little with the index: at the best hedge's ratio (one-to-one, 0.04)"),
            "{}",
            r.reason
        );
        let mut idle = recommend(
            Side::Pay,
            23,
            &[cand(Strategy::OneToOne, 0.9999, 0.999, 1.0, 0)],
            "h100",
        );
        assert!(
            idle.reason.contains("less than half a contract"),
            "{}",
            idle.reason
        );
        no_exposure(&mut idle, &[7300.0, 7300.0, 0.0]);
        assert!(
            idle.reason.starts_with(
                "do not hedge next month: your latest month holds no GPU-hours (idle)"
            ),
            "{}",
            idle.reason
        );
    }

    #[test]
    fn a_hedge_that_adds_risk_is_never_recommended() {
        // The seed-7 producer of issue 23: -50% (interval -280% to -20%).
        let c = [cand(Strategy::WalkForward, -0.5, -2.8, -0.2, 176)];
        let r = recommend(Side::Pay, 30, &c, "h100");
        assert_eq!(r.decision, Decision::DoNotHedge);
        assert!(r.reason.contains("add risk"), "{}", r.reason);
        assert!(r.contracts.is_none() && r.futures_side.is_none());
        assert!(r.warning.is_none(), "30 periods is not few");
    }

    /// A rent unrelated to the index: the in-sample ratio fits negative and is
    /// applied as 0, so it never places a contract and holds the unhedged P&L
    /// (0%, interval 0% to 0%). That bound beat the real hedges whose intervals
    /// reach below zero, and the reason called a position of no contract "the
    /// best tradable hedge" (a hostile round, 5 of 10 noise rents). The best is
    /// chosen among hedges that were placed.
    #[test]
    fn a_position_of_no_contract_is_not_the_best_hedge() {
        let mut zero = cand(Strategy::StaticMinVariance, 0.0, 0.0, 0.0, 0);
        zero.cross_validated = true;
        zero.traded = false;
        zero.next_ratio = 0.0;
        let c = [
            zero,
            cand(Strategy::OneToOne, -0.4, -1.2, 0.1, 10),
            cand(Strategy::WalkForward, 0.05, -0.3, 0.3, 3),
        ];
        let r = recommend(Side::Pay, 20, &c, "h100");
        assert_eq!(r.decision, Decision::DoNotHedge);
        assert_eq!(r.strategy, Some(Strategy::WalkForward), "{}", r.reason);
        assert!(
            r.reason.contains("(walk-forward) removed 5%"),
            "{}",
            r.reason
        );
        // Without a placed hedge, the one that never placed one is what is said.
        let r = recommend(Side::Pay, 20, &c[..1], "h100");
        assert_eq!(r.strategy, Some(Strategy::StaticMinVariance));
    }

    #[test]
    fn the_highest_lower_bound_wins_and_the_in_sample_benchmark_never_does() {
        // An in-sample effectiveness (not cross-validated) never decides.
        let c = [
            cand(Strategy::StaticMinVariance, 0.99, 0.98, 1.0, 12),
            cand(Strategy::OneToOne, 0.9, 0.5, 0.95, 10),
            cand(Strategy::WalkForward, 0.85, 0.7, 0.9, 11),
        ];
        let r = recommend(Side::Earn, 12, &c, "h100");
        assert_eq!(r.decision, Decision::Hedge);
        assert_eq!(r.strategy, Some(Strategy::WalkForward));
        assert_eq!(r.futures_side.as_deref(), Some("sell"));
        assert_eq!(r.contracts, Some(11));
        assert!(r.warning.is_some(), "12 periods < 24");
    }

    #[test]
    fn a_cross_validated_in_sample_ratio_decides_when_its_bound_is_highest() {
        // Item 1 of issue 46: ten months of a rent that floats at 0.41. Every
        // strategy that starts one-to-one adds risk; the ratio fitted on the other
        // months removes 99.5% (97% to 100%): hedge at 0.41, 4 contracts on 7,300
        // GPU-hours (0.41 x 7300 / 730 = 4.1).
        let mut cv = cand(Strategy::StaticMinVariance, 0.995, 0.97, 1.0, 4);
        cv.next_ratio = 0.41;
        cv.cross_validated = true;
        let c = [
            cand(Strategy::OneToOne, -1.9, -2.5, -1.5, 10),
            cv,
            cand(Strategy::WalkForward, -0.8, -1.6, -0.2, 10),
        ];
        let r = recommend(Side::Pay, 10, &c, "h100");
        assert_eq!(r.decision, Decision::Hedge);
        assert_eq!(r.strategy, Some(Strategy::StaticMinVariance));
        assert_eq!((r.hedge_ratio, r.contracts), (Some(0.41), Some(4)));
        assert!(r.reason.contains("fitted on all 10 months"), "{}", r.reason);
        assert!(
            r.reason.starts_with("hedge: buy 4 h100 futures"),
            "{}",
            r.reason
        );
    }

    #[test]
    fn an_interval_reaching_zero_and_short_histories_are_not_hedges() {
        let c = [cand(Strategy::OneToOne, 0.3, -0.1, 0.6, 10)];
        assert_eq!(
            recommend(Side::Pay, 12, &c, "x").decision,
            Decision::DoNotHedge
        );
        let r = recommend(Side::Pay, 5, &c, "x");
        assert_eq!(r.decision, Decision::NotEnoughData);
        assert_eq!((r.periods, r.periods_needed), (5, MIN_DECISION_PERIODS));
        let zero = [cand(Strategy::OneToOne, 0.9, 0.8, 0.95, 0)];
        assert_eq!(
            recommend(Side::Pay, 12, &zero, "x").decision,
            Decision::DoNotHedge
        );
    }

    #[test]
    fn no_interval_is_no_decision() {
        // A hostile run: with --resamples 0, 15 of 30 eight-month random-walk rents
        // unrelated to the index read "hedge" on a point estimate (ewma removed 8%).
        // A point estimate cannot tell risk removed from chance: no decision.
        let mut c = cand(Strategy::Ewma, 0.08, 0.0, 0.0, 12);
        c.interval = None;
        let r = recommend(Side::Pay, 8, &[c], "h100");
        assert_eq!(r.decision, Decision::NotEnoughData);
        assert!(r.contracts.is_none() && r.futures_side.is_none());
        assert_eq!(r.strategy, Some(Strategy::Ewma));
        assert!(
            r.reason.starts_with("no decision: --resamples 0 leaves no interval, and a point estimate cannot tell risk removed from chance; the best hedge (ewma, ratio 1.00) removed 8%"),
            "{}",
            r.reason
        );
    }

    #[test]
    fn a_rent_of_no_gpu_hours_is_no_exposure() {
        // Every row's gpu_hours 0: the rent P&L never varies, and the reason said
        // "your rent did not change", when its price did.
        let mut c = cand(Strategy::OneToOne, 0.0, 0.0, 0.0, 0);
        c.effectiveness = None;
        c.interval = None;
        let mut r = recommend(Side::Earn, 30, &[c], "h200");
        no_exposure(&mut r, &[0.0; 30]);
        assert_eq!(r.decision, Decision::DoNotHedge);
        assert_eq!(
            r.reason,
            "do not hedge: your rent holds no GPU-hours in the 30 periods (every row's gpu_hours is 0), so there is no exposure to hedge"
        );
        let mut kept = recommend(Side::Earn, 30, &[c], "h200");
        let before = kept.reason.clone();
        no_exposure(&mut kept, &[0.0, 1.0]);
        assert_eq!(kept.reason, before);
    }

    #[test]
    fn an_exposure_no_month_could_hedge_is_said_to_be_too_small() {
        // A rent of 1 GPU-hour a day (about 30 a month) against 730-hour contracts:
        // every month's hedge rounds to zero contracts, so hedged equals unhedged
        // and one-to-one "removed 0% (0% to 0%)": the reason said no risk could be
        // told from chance, when no hedge was ever placed.
        let mut c = cand(Strategy::OneToOne, 0.0, 0.0, 0.0, 0);
        c.traded = false;
        let r = recommend(Side::Earn, 30, &[c], "h200");
        assert_eq!(r.decision, Decision::DoNotHedge);
        assert!(
            r.reason.starts_with("do not hedge: your exposure is too small for h200 futures: at the best hedge's ratio (one-to-one, 1.00) no month's hedge came to half a contract, so none was ever placed"),
            "{}",
            r.reason
        );
        // A ratio of zero is not a small exposure: the reason stays as it was.
        let mut z = c;
        z.next_ratio = 0.0;
        let r = recommend(Side::Earn, 30, &[z], "h200");
        assert!(r.reason.contains("told from chance"), "{}", r.reason);
    }
}

#[cfg(test)]
mod text_tests {
    use super::*;

    /// Every variant's text as published before it was derived: `summary.json` holds
    /// it, so it must not change by a byte.
    const TEXT: [(Decision, &str); 3] = [
        (Decision::Hedge, "hedge"),
        (Decision::DoNotHedge, "do_not_hedge"),
        (Decision::NotEnoughData, "not_enough_data"),
    ];

    #[test]
    fn text_forms_are_pinned_and_agree_with_serde() {
        assert_eq!(
            <Decision as strum::VariantArray>::VARIANTS.len(),
            TEXT.len()
        );
        for (v, text) in TEXT {
            assert_eq!(v.as_str(), text);
            assert_eq!(text.parse::<Decision>().unwrap(), v);
            assert_eq!(v.to_string(), text);
            assert_eq!(serde_json::to_value(v).unwrap(), text);
            assert_eq!(serde_json::from_value::<Decision>(text.into()).unwrap(), v);
        }
    }
}
