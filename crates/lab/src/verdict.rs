//! Which design hedges the simulated users best, said only when the evidence says it.
//!
//! Hedge utility is the median over hedgers of their walk-forward effectiveness
//! (`CandidateRow::effectiveness_median`). The two best designs by it are compared
//! on the hedgers they share: the difference of their medians, with a 95%
//! percentile interval from resampling the hedgers (independent users, so an i.i.d.
//! bootstrap, seeded). The first is named the winner only when that interval lies
//! above zero; otherwise the verdict is "no clear winner on hedge utility" and the
//! designs are told apart by the next criterion, the mean error of the settlement
//! against the simulated market's truth (lower is better), when a truth file was
//! given, else the withholding move (how far the settlement moves when its largest
//! contributor withholds, lower is better).
//!
//! A design that leads by 0.0004 of effectiveness on five users is a tie, and a
//! report that crowns it tells a contract designer something its numbers do not hold.

use crate::comparison::{CandidateRow, Comparison, MonthRow};
use crate::stats::median;
use chrono::NaiveDate;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Resamples of the hedgers.
pub(crate) const RESAMPLES: usize = 2000;
/// Seed of the resampling, fixed so the verdict is the same on every run.
const SEED: u64 = 20240101;

/// The lab's answer to "which design hedges best".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UtilityVerdict {
    /// The design with the highest hedge utility.
    pub best: String,
    /// The one after it, if any.
    pub runner_up: Option<String>,
    /// `best`'s median effectiveness minus the runner-up's, on the hedgers both have.
    pub difference: Option<f64>,
    /// The 95% bootstrap interval of that difference.
    pub interval: Option<(f64, f64)>,
    /// Whether `best` is a clear winner: no runner-up, or the interval above zero.
    pub clear: bool,
    /// When not clear: the criterion that decides instead and the design it picks.
    pub next: Option<(String, String)>,
    /// One sentence for the report and the console.
    pub sentence: String,
}

/// Each hedger's effectiveness for `candidate`, by hedger name.
fn by_hedger<'a>(c: &'a Comparison, candidate: &str) -> Vec<(&'a str, f64)> {
    c.hedgers
        .iter()
        .find(|(name, _)| name == candidate)
        .map(|(_, hs)| {
            hs.iter()
                .filter_map(|h| Some((h.hedger.as_str(), h.counted()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// The 95% interval of `median(a) - median(b)` over resamples of the pairs.
fn difference_interval(pairs: &[(f64, f64)]) -> Option<(f64, f64)> {
    if pairs.len() < 3 {
        return None;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let mut diffs: Vec<f64> = (0..RESAMPLES)
        .filter_map(|_| {
            let draw: Vec<(f64, f64)> = (0..pairs.len())
                .map(|_| pairs[rng.gen_range(0..pairs.len())])
                .collect();
            let a: Vec<f64> = draw.iter().map(|p| p.0).collect();
            let b: Vec<f64> = draw.iter().map(|p| p.1).collect();
            Some(median(&a)? - median(&b)?)
        })
        .collect();
    diffs.sort_by(f64::total_cmp);
    let q = |p: f64| diffs[((p * diffs.len() as f64).ceil() as usize).clamp(1, diffs.len()) - 1];
    (!diffs.is_empty()).then(|| (q(0.025), q(0.975)))
}

/// The design the next criteria pick among `rows` (the lowest error against
/// truth, else the smallest withholding move) and the sentence's clause saying so
/// with both numbers. A criterion on which the two best are equal picks no one: the
/// next one is asked, and when every criterion ties, the clause says so and `None`
/// is picked (two identical designs were told "A is better" by name order).
///
/// The error against truth is compared over the months every design of `rows`
/// settles (from `months`, their month rows): over each design's own months, one
/// that settled a month fewer was "better" for the month it skipped (a hostile
/// round: 0.04556 against 0.0465, equal over the months both settle). Without
/// month rows (a `comparison.json` written before them) each row's own error is
/// used.
fn next_criterion(
    rows: &[&CandidateRow],
    months: &[MonthRow],
) -> (Option<(String, String)>, String) {
    let mut truth_name = "error against the simulated truth".to_string();
    let truth: Vec<(&CandidateRow, Option<f64>)> = if months.is_empty() {
        rows.iter().map(|r| (*r, r.truth_mae_usd)).collect()
    } else {
        let errors = |name: &str| -> BTreeMap<NaiveDate, f64> {
            months
                .iter()
                .filter(|m| m.candidate == name)
                .filter_map(|m| Some((m.month, (m.settlement? - m.truth_settlement?).abs())))
                .collect()
        };
        let by_row: Vec<BTreeMap<NaiveDate, f64>> =
            rows.iter().map(|r| errors(&r.candidate)).collect();
        let common: Vec<NaiveDate> = by_row
            .first()
            .map(|first| {
                first
                    .keys()
                    .filter(|d| by_row.iter().all(|m| m.contains_key(d)))
                    .copied()
                    .collect()
            })
            .unwrap_or_default();
        // Said, as it may differ from each design's own figure in the table.
        truth_name = format!("{truth_name} over the {} months both settle", common.len());
        rows.iter()
            .zip(&by_row)
            .map(|(r, m)| {
                let e: Vec<f64> = common.iter().filter_map(|d| m.get(d).copied()).collect();
                (
                    *r,
                    (!e.is_empty()).then(|| e.iter().sum::<f64>() / e.len() as f64),
                )
            })
            .collect()
    };
    let withholding: Vec<(&CandidateRow, Option<f64>)> =
        rows.iter().map(|r| (*r, r.withholding_move_pct)).collect();
    // The criterion's name (comparison.json's `next`) and how the sentence says it.
    let criteria = [
        (
            "error against the simulated truth",
            truth_name,
            truth,
            " USD per GPU-hour",
        ),
        (
            "move when the largest contributor withholds",
            "move when the largest contributor withholds".to_string(),
            withholding,
            "%",
        ),
    ];
    let mut ties = Vec::new();
    for (key, name, values, unit) in criteria {
        let mut v: Vec<(&CandidateRow, f64)> = values
            .into_iter()
            .filter_map(|(r, x)| Some((r, x?)))
            .collect();
        v.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.candidate.cmp(&b.0.candidate)));
        let shown = |x: f64| format!("{}{unit}", four_digits(x));
        match v.as_slice() {
            [] => continue,
            [(best, x)] => {
                return (
                    Some((key.to_string(), best.candidate.clone())),
                    format!(
                        "; on the next criterion, {name}, {} is better ({}, the only one measured)",
                        best.candidate,
                        shown(*x)
                    ),
                )
            }
            [(best, x), (_, y), ..] if !same(*x, *y) => {
                return (
                    Some((key.to_string(), best.candidate.clone())),
                    format!(
                        "; on the next criterion, {name}, {} is better ({} against {})",
                        best.candidate,
                        shown(*x),
                        shown(*y)
                    ),
                )
            }
            [(_, x), ..] => ties.push(format!("{name} ({} each)", shown(*x))),
        }
    }
    let clause = if ties.is_empty() {
        String::new()
    } else {
        format!("; they tie on the next criteria too: {}", ties.join(", "))
    };
    (None, clause)
}

/// `x` to four significant digits, trailing zeros dropped.
fn four_digits(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let decimals = (3 - x.abs().log10().floor() as i32).max(0) as usize;
    let t = format!("{x:.decimals$}");
    if t.contains('.') {
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        t
    }
}

/// Equal to the precision the lab computes them at (a difference of rounding).
fn same(x: f64, y: f64) -> bool {
    (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0)
}

/// The verdict when the two best designs share no hedger: designs on different GPUs
/// are judged on their own GPUs' rents, and their utilities, and their errors in
/// USD, say nothing of one against the other (an A100 design was "better" on USD
/// error than an H100 one, on a GPU that costs less than half as much).
fn not_compared(
    c: &Comparison,
    best: &CandidateRow,
    second: &CandidateRow,
    difference: f64,
) -> UtilityVerdict {
    let pct = |x: Option<f64>| format!("{:.1}%", 100.0 * x.unwrap_or(f64::NAN));
    UtilityVerdict {
        best: best.candidate.clone(),
        runner_up: Some(second.candidate.clone()),
        difference: Some(difference),
        interval: None,
        clear: false,
        next: None,
        sentence: format!(
            "of {} designs, none is compared on hedge utility: {} ({}) and {} ({}) hedge different users, with no rent in common (a design is judged on the rents of its own GPU), so neither number says anything of the other",
            c.candidates.len(),
            best.candidate,
            pct(best.effectiveness_median),
            second.candidate,
            pct(second.effectiveness_median),
        ),
    }
}

/// The verdict of `c` (module doc) with its month rows `months` (empty for a
/// `comparison.json` read without them); `None` when no design has a hedge utility.
pub fn utility_verdict(c: &Comparison, months: &[MonthRow]) -> Option<UtilityVerdict> {
    let mut ranked: Vec<&CandidateRow> = c
        .candidates
        .iter()
        .filter(|r| r.effectiveness_median.is_some())
        .collect();
    ranked.sort_by(|a, b| {
        b.effectiveness_median
            .unwrap_or(f64::NAN)
            .total_cmp(&a.effectiveness_median.unwrap_or(f64::NAN))
            .then(a.candidate.cmp(&b.candidate))
    });
    let best = *ranked.first()?;
    let pct = |x: f64| format!("{:.1}%", 100.0 * x);
    let best_eff = best.effectiveness_median.unwrap_or(f64::NAN);
    let Some(second) = ranked.get(1).copied() else {
        return Some(UtilityVerdict {
            best: best.candidate.clone(),
            runner_up: None,
            difference: None,
            interval: None,
            clear: true,
            next: None,
            sentence: format!(
                "one design with a hedge utility: {} (median walk-forward effectiveness {})",
                best.candidate,
                pct(best_eff)
            ),
        });
    };
    let (a, b) = (
        by_hedger(c, &best.candidate),
        by_hedger(c, &second.candidate),
    );
    let pairs: Vec<(f64, f64)> = a
        .iter()
        .filter_map(|(h, x)| b.iter().find(|(g, _)| g == h).map(|(_, y)| (*x, *y)))
        .collect();
    let difference = best_eff - second.effectiveness_median.unwrap_or(f64::NAN);
    if pairs.is_empty() {
        return Some(not_compared(c, best, second, difference));
    }
    let interval = difference_interval(&pairs);
    let clear = interval.is_some_and(|(lo, _)| lo > 0.0);
    let shown = interval.map_or(
        "no interval: fewer than 3 hedgers in common".into(),
        // The number of rents behind it: over four, a resampled interval is
        // close to the range of their differences (a hostile round).
        |(lo, hi)| {
            format!(
                "95% interval {} to {}, over {} rents in common",
                pct(lo),
                pct(hi),
                pairs.len()
            )
        },
    );
    let (next, sentence) = if clear {
        (
            None,
            format!(
                "of {} designs, {} hedges the simulated users best (median walk-forward effectiveness {}, {} above {}: {shown})",
                c.candidates.len(),
                best.candidate,
                pct(best_eff),
                pct(difference),
                second.candidate
            ),
        )
    } else {
        let tied: Vec<&CandidateRow> = ranked
            .iter()
            .copied()
            .filter(|r| r.candidate == best.candidate || r.candidate == second.candidate)
            .collect();
        let (next, then) = next_criterion(&tied, months);
        (
            next,
            format!(
                "of {} designs, no clear winner on hedge utility: {} {} against {} {} (difference {}, {shown}){then}",
                c.candidates.len(),
                best.candidate,
                pct(best_eff),
                second.candidate,
                pct(second.effectiveness_median.unwrap_or(f64::NAN)),
                pct(difference)
            ),
        )
    };
    Some(UtilityVerdict {
        best: best.candidate.clone(),
        runner_up: Some(second.candidate.clone()),
        difference: Some(difference),
        interval,
        clear,
        next,
        sentence,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HedgerResult;

    fn comparison(effs: &[(&str, &[f64])]) -> Comparison {
        let json = serde_json::json!({
            "store": "s", "attack_price_pct": 5.0, "max_fake_ratio": 1.0,
            "max_fake_listings_per_day": 1, "truth": null, "rent_dir": null,
            "candidates": [], "hedgers": []
        });
        let mut c: Comparison = serde_json::from_value(json).unwrap();
        for (name, e) in effs {
            c.hedgers.push((
                (*name).into(),
                e.iter()
                    .enumerate()
                    .map(|(i, x)| HedgerResult {
                        hedger: format!("h{i}"),
                        effectiveness: Some(*x),
                        failed: None,
                        cross_hedge: None,
                    })
                    .collect(),
            ));
        }
        c
    }

    fn row(name: &str, median: f64, truth_mae: Option<f64>) -> CandidateRow {
        CandidateRow {
            candidate: name.into(),
            effectiveness_median: Some(median),
            truth_mae_usd: truth_mae,
            ..CandidateRow::default()
        }
    }

    fn month_row(name: &str, month: u32, settlement: Option<f64>, truth: f64) -> MonthRow {
        use crate::manipulation::Found;
        MonthRow {
            candidate: name.into(),
            month: NaiveDate::from_ymd_opt(2024, month, 1).unwrap(),
            settlement,
            not_settled: String::new(),
            fixing_days: 30,
            share_trades: 1.0,
            share_listings: 0.0,
            share_carried: 0.0,
            median_contributors: None,
            max_contributor_share: None,
            median_hhi: None,
            fake_share: [Found::Undefined; 3],
            fake_listings: [Found::Undefined; 3],
            max_move_pct_trades: None,
            max_move_pct_listings: None,
            withholder_share: None,
            withholding_move_pct: None,
            withholding_unsettles: false,
            truth_settlement: Some(truth),
            obs_median: None,
            obs_p25: None,
            obs_p75: None,
        }
    }

    /// A design that settles one month fewer (its October) had the lower error
    /// over its own months, 0.04556 against 0.0465, and was "better" (a hostile
    /// round); over the months both settle the two are equal, a tie.
    #[test]
    fn the_error_against_truth_is_compared_over_the_months_both_settle() {
        let effs = [0.5, 0.6, 0.7, 0.8];
        let mut c = comparison(&[("strict", &effs), ("plain", &effs)]);
        c.candidates = vec![
            row("strict", 0.65, Some(0.04)),
            row("plain", 0.65, Some(0.05)),
        ];
        let mut months = Vec::new();
        for m in 1..=9 {
            months.push(month_row("strict", m, Some(2.04), 2.0));
            months.push(month_row("plain", m, Some(2.04), 2.0));
        }
        months.push(month_row("strict", 10, None, 2.0));
        months.push(month_row("plain", 10, Some(2.13), 2.0));
        let v = utility_verdict(&c, &months).unwrap();
        assert!(!v.clear, "{v:?}");
        assert_eq!(v.next, None, "{}", v.sentence);
        assert!(
            v.sentence
                .contains("error against the simulated truth over the 9 months both settle (0.04 USD per GPU-hour each)"),
            "{}",
            v.sentence
        );
    }

    /// Two designs whose users have no rent in common are not compared.
    #[test]
    fn designs_with_no_rent_in_common_are_not_compared() {
        let mut c = comparison(&[("h100", &[0.9, 0.95, 0.97])]);
        c.hedgers.push((
            "a100".into(),
            vec![HedgerResult {
                hedger: "other".into(),
                effectiveness: Some(0.5),
                failed: None,
                cross_hedge: None,
            }],
        ));
        c.candidates = vec![row("h100", 0.95, Some(0.05)), row("a100", 0.5, Some(0.01))];
        let v = utility_verdict(&c, &[]).unwrap();
        assert!(!v.clear && v.next.is_none(), "{v:?}");
        assert!(v.sentence.contains("no rent in common"), "{}", v.sentence);
    }

    #[test]
    fn a_lead_of_four_ten_thousandths_is_no_winner() {
        // The demo's lab (issue 46): gold+ 0.53399 against 0.53363 on six users whose
        // effectiveness differs by design by less than a point either way.
        let gold = [0.53399, 0.41, 0.62, 0.70, 0.30, 0.55];
        let base = [0.53363, 0.42, 0.61, 0.69, 0.31, 0.56];
        let mut c = comparison(&[("gold+", &gold), ("baseline", &base)]);
        c.candidates = vec![
            row("gold+", 0.53399, Some(0.05)),
            row("baseline", 0.53363, Some(0.02)),
        ];
        let v = utility_verdict(&c, &[]).unwrap();
        assert!(!v.clear, "{v:?}");
        assert_eq!(
            v.next,
            Some((
                "error against the simulated truth".into(),
                "baseline".into()
            ))
        );
        assert!(
            v.sentence.contains("no clear winner on hedge utility")
                && v.sentence.contains(", over 6 rents in common)"),
            "{}",
            v.sentence
        );
    }

    /// Two identical designs (a hostile round's lab of one design under two
    /// names): "no clear winner", and on the next criteria a tie, not "A is
    /// better" by name order. One measured apart is named with both numbers.
    #[test]
    fn a_tie_on_the_next_criterion_is_said_to_be_one() {
        let effs = [0.4869, 0.41, 0.62, 0.70];
        let mut c = comparison(&[("A", &effs), ("B", &effs)]);
        let mut a = row("A", 0.4869, Some(0.042307692307692366));
        a.withholding_move_pct = Some(1.25);
        let mut b = a.clone();
        b.candidate = "B".into();
        c.candidates = vec![a, b];
        let v = utility_verdict(&c, &[]).unwrap();
        assert!(!v.clear, "{v:?}");
        assert_eq!(v.next, None, "{}", v.sentence);
        assert!(
            v.sentence.contains("they tie on the next criteria too: error against the simulated truth (0.04231 USD per GPU-hour each), move when the largest contributor withholds (1.25% each)"),
            "{}",
            v.sentence
        );
        assert!(!v.sentence.contains("is better"), "{}", v.sentence);
        // The truth ties, the withholding move does not: it decides.
        c.candidates[1].withholding_move_pct = Some(0.5);
        let v = utility_verdict(&c, &[]).unwrap();
        assert_eq!(
            v.next,
            Some((
                "move when the largest contributor withholds".into(),
                "B".into()
            ))
        );
        assert!(
            v.sentence.contains("B is better (0.5% against 1.25%)"),
            "{}",
            v.sentence
        );
    }

    #[test]
    fn a_design_better_for_every_user_wins() {
        // Every user's effectiveness is 0.2 higher with "a": the difference of the
        // medians is 0.2 in every resample, so the interval is [0.2, 0.2].
        let a = [0.8, 0.7, 0.9, 0.6, 0.75];
        let b: Vec<f64> = a.iter().map(|x| x - 0.2).collect();
        let mut c = comparison(&[("a", &a), ("b", &b)]);
        c.candidates = vec![row("a", 0.75, None), row("b", 0.55, None)];
        let v = utility_verdict(&c, &[]).unwrap();
        assert!(v.clear, "{v:?}");
        assert_eq!(v.best, "a");
        let (lo, hi) = v.interval.unwrap();
        assert!((lo - 0.2).abs() < 1e-12 && (hi - 0.2).abs() < 1e-12);
        assert!(
            v.sentence.contains("a hedges the simulated users best"),
            "{}",
            v.sentence
        );
    }
}
