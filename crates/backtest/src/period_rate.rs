//! The rate of a settlement period of any length over a fixed schedule of stamps
//! (15-minute, hourly or daily), with gaps filled and a coverage verdict: the
//! settlement rule of the open Computable GPU index (its methodology, sections 9.3
//! to 9.4 and 12.2; its `period_rate` module), written generically.
//!
//! - **Period**: the scheduled stamps whose intervals lie inside `[from, to)`; a
//!   stamp `t` covers `(t - cadence, t]`, so a day's 15-minute period holds the 96
//!   stamps 00:15 .. 24:00 (a daily file's row `D` covers the day `D`).
//! - **Filled**: a stamp that carries a published value (a daily row: a sufficient
//!   value). Every other scheduled stamp is a gap.
//! - **Gap fill**: each stamp of a run of `G` consecutive gaps (the whole run, on
//!   both sides of the period's ends, up to where values resume) takes the mean of
//!   the last `min(G, L)` published values before the run (earlier fills are not
//!   evidence); with none before it (the start of the record) the stamps are left
//!   out of the mean, the only case where the denominator shrinks.
//! - **Rate**: the mean over the period's stamps, filled ones included.
//! - **Verdict** (contract defaults, in exact integer arithmetic on basis points):
//!   `determination` when `F < review_at x S` or the longest gap inside the period
//!   is more than `max_gap x S` (a gap of exactly 2% passes); else `review` when
//!   `F < settle_at x S`; else `settled`. `S` scheduled, `F` filled stamps. The rate
//!   is given in determination too, as an indicative number for the calculation
//!   agent.

use crate::settlement_rule::SettlementStatus;
use serde::Serialize;

/// The rule: verdict thresholds and the fill window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeriodRule {
    /// Coverage at or above which a period settles (0.98).
    pub settle_at: f64,
    /// Coverage below which a period goes to determination (0.90).
    pub review_at: f64,
    /// Longest gap inside the period, as a share of its stamps, above which it goes
    /// to determination (0.02).
    pub max_gap: f64,
    /// `L`: at most this many published values fill a gap (72 hours of stamps).
    pub lookback: usize,
}

/// A gap: its first and last scheduled stamp (indices into the schedule), and the
/// value its stamps took.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gap {
    /// First missing stamp's index in the schedule.
    pub first: usize,
    /// Last missing stamp's index in the schedule (the run's physical end).
    pub last: usize,
    /// Published values averaged (`min(G, L)`, fewer at the start of the record).
    pub window: usize,
    /// The fill; `None` when no value came before it (left out of the mean).
    pub fill: Option<f64>,
}

impl Gap {
    /// The gap's stamps inside the period `[period.0, period.1)` (indices into the
    /// schedule): a run that crosses a bound is longer than its part in the period.
    pub fn in_period(&self, period: (usize, usize)) -> usize {
        (self.last.min(period.1.saturating_sub(1)) + 1).saturating_sub(self.first.max(period.0))
    }
}

/// A period's rate and verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeriodRate {
    /// Scheduled stamps in the period (`S`).
    pub scheduled: usize,
    /// Of them, stamps with a published value (`F`).
    pub filled: usize,
    /// Longest run of gaps inside the period, stamps.
    pub longest_gap: usize,
    /// Stamps left out of the mean (gaps with nothing before them).
    pub dropped: usize,
    /// The mean of the period's stamps, gaps filled; `None` when none has a value.
    pub rate: Option<f64>,
    /// The mean of the published values only (a diagnostic).
    pub published_mean: Option<f64>,
    /// What the rule decides.
    pub verdict: SettlementStatus,
    /// The gaps that touch the period, in order.
    pub gaps: Vec<Gap>,
}

/// `share x n` compared exactly: `k < share x n` on basis points.
fn below(k: usize, share: f64, n: usize) -> bool {
    let bp = (share * 10_000.0).round() as u128;
    (k as u128) * 10_000 < bp * n as u128
}

/// The rate of the period `values[period.0 .. period.1]` of a schedule whose every
/// stamp is `values[i]` (`None`: nothing published); stamps outside the period are
/// the record around it (the values a first gap is filled from, the end of a gap
/// that runs past the period). `None` when the period holds no stamp.
pub fn period_rate(
    values: &[Option<f64>],
    period: (usize, usize),
    rule: &PeriodRule,
) -> Option<PeriodRate> {
    let (from, to) = (period.0.min(values.len()), period.1.min(values.len()));
    if from >= to {
        return None;
    }
    let mut gaps = Vec::new();
    // A gap open at the period's start began earlier: start from its first stamp.
    let mut k = from;
    while k > 0 && values[k - 1].is_none() && values[from].is_none() {
        k -= 1;
    }
    let mut sum = 0.0;
    let (mut counted, mut dropped, mut longest) = (0usize, 0usize, 0usize);
    while k < to {
        match values[k] {
            Some(v) => {
                if k >= from {
                    sum += v;
                    counted += 1;
                }
                k += 1;
            }
            None => {
                let mut last = k;
                while last + 1 < values.len() && values[last + 1].is_none() {
                    last += 1;
                }
                let g = last - k + 1;
                let window = g.min(rule.lookback);
                let before: Vec<f64> = values[..k]
                    .iter()
                    .rev()
                    .flatten()
                    .take(window)
                    .copied()
                    .collect();
                let fill =
                    (!before.is_empty()).then(|| before.iter().sum::<f64>() / before.len() as f64);
                let gap = Gap {
                    first: k,
                    last,
                    window: before.len(),
                    fill,
                };
                let inside = gap.in_period((from, to));
                longest = longest.max(inside);
                match fill {
                    Some(f) => {
                        sum += f * inside as f64;
                        counted += inside;
                    }
                    None => dropped += inside,
                }
                gaps.push(gap);
                k = last + 1;
            }
        }
    }
    let scheduled = to - from;
    let published: Vec<f64> = values[from..to].iter().flatten().copied().collect();
    let filled = published.len();
    let verdict = if below(filled, rule.review_at, scheduled)
        || (longest as u128) * 10_000
            > ((rule.max_gap * 10_000.0).round() as u128) * scheduled as u128
    {
        SettlementStatus::Determination
    } else if below(filled, rule.settle_at, scheduled) {
        SettlementStatus::Review
    } else {
        SettlementStatus::Settled
    };
    Some(PeriodRate {
        scheduled,
        filled,
        longest_gap: longest,
        dropped,
        rate: (counted > 0).then(|| sum / counted as f64),
        published_mean: (filled > 0).then(|| published.iter().sum::<f64>() / filled as f64),
        verdict,
        gaps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PEER: PeriodRule = PeriodRule {
        settle_at: 0.98,
        review_at: 0.90,
        max_gap: 0.02,
        lookback: 72,
    };

    fn r6(x: Option<f64>) -> Option<f64> {
        x.map(|v| (v * 1e6).round() / 1e6)
    }

    /// The peer's own vectors (its `period_rate` tests' synthetic cases,
    /// Apache-2.0), by hand.
    #[test]
    fn the_peers_gap_fill_vectors_by_hand() {
        // 3.0, 3.2, [gap], 3.4, 3.6, 3.8: a gap of 1 takes the last 1 value, 3.2:
        // (3.0 + 3.2 + 3.2 + 3.4 + 3.6 + 3.8) / 6 = 20.2 / 6 = 3.366667. Coverage
        // 5/6 < 90%: determination, with the number given.
        let v = [Some(3.0), Some(3.2), None, Some(3.4), Some(3.6), Some(3.8)];
        let r = period_rate(&v, (0, 6), &PEER).unwrap();
        assert_eq!(r6(r.rate), Some(3.366667));
        assert_eq!(r6(r.published_mean), Some(3.4));
        assert_eq!((r.scheduled, r.filled, r.longest_gap), (6, 5, 1));
        assert_eq!(r.verdict, SettlementStatus::Determination);
        // 1, 2, 3, 4, three gaps, five 5s: the gap of 3 takes mean(2, 3, 4) = 3:
        // (10 + 9 + 25) / 12 = 3.666667.
        let mut v: Vec<Option<f64>> = [1.0, 2.0, 3.0, 4.0].map(Some).to_vec();
        v.extend([None; 3]);
        v.extend([Some(5.0); 5]);
        assert_eq!(
            r6(period_rate(&v, (0, 12), &PEER).unwrap().rate),
            Some(3.666667)
        );
        // 100, 100, 72 x 2.0, a gap of 75, 5 x 2.0: min(75, 72) = 72 values, all 2.0:
        // (200 + 144 + 150 + 10) / 154 = 504 / 154 = 3.272727.
        let mut v = vec![Some(100.0); 2];
        v.extend([Some(2.0); 72]);
        v.extend([None; 75]);
        v.extend([Some(2.0); 5]);
        let r = period_rate(&v, (0, 154), &PEER).unwrap();
        assert_eq!(r6(r.rate), Some(3.272727));
        assert_eq!(r.gaps[0].window, 72);
        // A second gap's window skips the first's fill: 4, 6, [gap], 5, [gap, gap]:
        // the first takes 6, the second mean(5, 6) (not the fill 6 twice) = 5.5.
        let v = [Some(4.0), Some(6.0), None, Some(5.0), None, None];
        let r = period_rate(&v, (0, 6), &PEER).unwrap();
        assert_eq!(
            r.gaps.iter().map(|g| g.fill).collect::<Vec<_>>(),
            [Some(6.0), Some(5.5)]
        );
    }

    /// A series written compactly: `2.5` a value, `_` a stamp without one, `x*n`
    /// either repeated `n` times.
    fn series(spec: &str) -> Vec<Option<f64>> {
        spec.split_whitespace()
            .flat_map(|tok| {
                let (v, n) = tok.split_once('*').unwrap_or((tok, "1"));
                let n: usize = n.parse().unwrap();
                vec![v.parse::<f64>().ok(); n]
            })
            .collect()
    }

    /// All fifteen of the peer's settlement vectors (its
    /// `tests/fixtures/period_rate_vectors.json`, hand-computed synthetic cases,
    /// Apache-2.0; restated in docs/research/computable-gpu-index.md 9.1) on an
    /// hourly grid from 2026-08-23T00, each as (values from the series' first
    /// scheduled stamp, period, S, F, G, verdict, rate). S11 is on its own grid:
    /// genesis 08-20 on [4, 10, 16, 22], 11 unpublished stamps to 22T16, then
    /// 22T22 ... 23T22, then hourly from 24T00.
    #[test]
    fn the_peers_fifteen_settlement_vectors() {
        use SettlementStatus::{Determination as D, Review as R, Settled as S};
        let five_holes = "5*10 _*2 5*18 _*2 5*18 _*2 5*18 _*2 5*18 _*2 5*8";
        let cases = [
            ("S1", "2.5*6", (0, 6), 6, 6, 0, S, 2.5),
            ("S2", "3.0 3.2 _ 3.4 3.6 3.8", (0, 6), 6, 5, 1, D, 3.366667),
            ("S3", "1 2 3 4 _*3 5*5", (0, 12), 12, 9, 3, D, 3.666667),
            (
                "S4",
                "100*2 2.0*72 _*75 2.0*5",
                (0, 154),
                154,
                79,
                75,
                D,
                3.272727,
            ),
            ("S5", "2 4 _*2 6 _*2 8", (0, 8), 8, 4, 2, D, 4.5),
            ("S6", "_*2 5 7", (0, 4), 4, 2, 2, D, 6.0),
            ("S7", "4 _*4 4", (0, 6), 6, 2, 4, D, 4.0),
            ("S8", five_holes, (0, 100), 100, 90, 2, R, 5.0),
            ("S9", "4*100 _*5 4*95", (0, 200), 200, 195, 5, D, 4.0),
            (
                "S10",
                "6*50 _*2 6*98 _*2 6*48",
                (0, 200),
                200,
                196,
                2,
                S,
                6.0,
            ),
            (
                "S11",
                "_*11 6.5 7.0 7.2 7.4 7.6 _*2 8*4",
                (12, 22),
                10,
                8,
                2,
                D,
                7.62,
            ),
            ("S12", "3*21 4 5 6 _*6", (24, 30), 6, 0, 6, D, 4.0),
            ("S13", "10*8 2*8 _*12 4*4", (24, 32), 8, 4, 4, D, 4.333333),
            ("S14", "1 2 3 4 _*4 9 _*3", (0, 6), 6, 4, 2, D, 2.5),
            ("S15", "5 6 _*4", (0, 4), 4, 2, 2, D, 5.5),
        ];
        for (name, spec, period, s, f, g, verdict, rate) in cases {
            let r = period_rate(&series(spec), period, &PEER).unwrap();
            assert_eq!(
                (r.scheduled, r.filled, r.longest_gap, r.verdict),
                (s, f, g, verdict),
                "{name}"
            );
            assert_eq!(r6(r.rate), Some(rate), "{name}");
        }
    }

    /// A gap's length is its whole run: one that starts before the period is filled
    /// from the values before it (counted in the period only for its stamps inside);
    /// one at the start of the record is left out of the mean.
    #[test]
    fn a_gap_runs_across_the_period_and_the_record_start_drops() {
        // 2, 4, [gap x 4], 8: the period is the last 3 stamps (two gaps, then 8). The
        // run is 4 long: mean(2, 4) = 3 fills it: (3 + 3 + 8) / 3 = 4.666667.
        let v = [Some(2.0), Some(4.0), None, None, None, None, Some(8.0)];
        let r = period_rate(&v, (4, 7), &PEER).unwrap();
        assert_eq!(r6(r.rate), Some(4.666667));
        assert_eq!(
            (r.longest_gap, r.gaps[0].first, r.gaps[0].window),
            (2, 2, 2)
        );
        // [gap, gap], 5, 7: nothing before the gap: left out, (5 + 7) / 2 = 6.
        let v = [None, None, Some(5.0), Some(7.0)];
        let r = period_rate(&v, (0, 4), &PEER).unwrap();
        assert_eq!((r.rate, r.dropped), (Some(6.0), 2));
    }

    /// The verdict's lines on a week of 15-minute stamps (S = 672), exactly: a gap
    /// of 13 (1.93%, and 659 filled) settles and 14 (2.08%) goes to determination; F = 604 (89.88%)
    /// is determination, 605 review; 658 (97.92%) review, 659 (98.07%) settles.
    #[test]
    fn verdict_lines_on_a_week_of_quarter_hours() {
        let week = |filled: usize, gap: usize| {
            // `gap` missing in one run at the end, then more missing spread out.
            let mut v = vec![Some(3.0); 672];
            let missing = 672 - filled;
            for x in v.iter_mut().skip(672 - gap) {
                *x = None;
            }
            let mut left = missing - gap;
            let mut i = 10;
            while left > 0 {
                v[i] = None;
                left -= 1;
                i += 2;
            }
            period_rate(&v, (0, 672), &PEER).unwrap().verdict
        };
        use SettlementStatus::*;
        assert_eq!(week(672 - 13, 13), Settled);
        assert_eq!(week(672 - 14, 14), Determination);
        assert_eq!(week(604, 1), Determination);
        assert_eq!(week(605, 1), Review);
        assert_eq!(week(658, 1), Review);
        assert_eq!(week(659, 1), Settled);
        // A gap of exactly 2%: S = 100, 2 missing in a row: settles (98% covered).
        let mut v = vec![Some(1.0); 100];
        v[50] = None;
        v[51] = None;
        assert_eq!(period_rate(&v, (0, 100), &PEER).unwrap().verdict, Settled);
        v[52] = None;
        assert_eq!(
            period_rate(&v, (0, 100), &PEER).unwrap().verdict,
            Determination
        );
    }
}

/// When a lane publishes: a regular step, or fixed times of day (UTC).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grid {
    /// Every this many seconds, on the epoch's grid (a 15-minute step publishes at
    /// :00, :15, :30, :45 of every hour).
    Every(i64),
    /// At these seconds after 00:00 UTC each day (`06:00` is 21600), sorted, each
    /// below 86400.
    TimesOfDay(Vec<i64>),
}

/// A publication schedule: the stamps a lane is meant to publish, era by era. A
/// lane published four times a day is scheduled four times a day, not 96 times with
/// 92 missing; a lane that went from four a day to every 15 minutes has two eras.
/// Era `i` governs the stamps `t` with `start_i < t <= start_{i+1}` (a stamp is the
/// end of the interval it covers, so the stamp at an era's start is the last of the
/// era before); the first era starts with the record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StampSchedule {
    eras: Vec<(Option<i64>, Grid)>,
}

impl StampSchedule {
    /// A schedule from its eras: `(start, grid)`, one without a start (the first),
    /// the others by distinct starts (Unix seconds). `Err` names what is wrong.
    pub fn new(mut eras: Vec<(Option<i64>, Grid)>) -> Result<Self, String> {
        if eras.iter().filter(|(s, _)| s.is_none()).count() != 1 {
            return Err(
                "exactly one era has no start (the first; the others are FROM=GRID)".into(),
            );
        }
        for (_, g) in &eras {
            match g {
                Grid::Every(s) if *s < 60 => {
                    return Err("a step is at least a minute".into());
                }
                Grid::TimesOfDay(t)
                    if t.is_empty() || t.iter().any(|s| !(0..86_400).contains(s)) =>
                {
                    return Err("times of day are HH:MM from 00:00 to 23:59".into());
                }
                _ => {}
            }
        }
        eras.sort_by_key(|(s, _)| s.unwrap_or(i64::MIN));
        if eras.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err("two eras start at the same time".into());
        }
        for (_, g) in &mut eras {
            if let Grid::TimesOfDay(t) = g {
                t.sort_unstable();
                t.dedup();
            }
        }
        Ok(Self { eras })
    }

    /// The scheduled stamps in `[lo, hi]` (Unix seconds), in order. `slots`: the
    /// stamps are labelled by their interval's start (capture slots), so era `i`
    /// holds the stamps from its start to before the next era's.
    pub fn stamps(&self, lo: i64, hi: i64, slots: bool) -> Vec<i64> {
        let mut out = Vec::new();
        let (open, close) = if slots { (0, 1) } else { (1, 0) };
        for (i, (start, grid)) in self.eras.iter().enumerate() {
            // Era i's stamps: after its start, through the next era's start (slots:
            // from its start, to before the next era's).
            let a = start.map_or(lo, |s| (s + open).max(lo));
            let b = self
                .eras
                .get(i + 1)
                .and_then(|e| e.0)
                .map_or(hi, |n| (n - close).min(hi));
            if a > b {
                continue;
            }
            match grid {
                Grid::Every(step) => {
                    let mut t = a + (step - a.rem_euclid(*step)) % step;
                    while t <= b {
                        out.push(t);
                        t += step;
                    }
                }
                Grid::TimesOfDay(times) => {
                    let mut day = a.div_euclid(86_400) * 86_400;
                    while day <= b {
                        out.extend(
                            times
                                .iter()
                                .map(|s| day + s)
                                .filter(|t| (a..=b).contains(t)),
                        );
                        day += 86_400;
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod schedule_tests {
    use super::*;

    const DAY: i64 = 86_400;

    /// Four times a day, then every 6 hours from day 2 00:00 (the same times, on
    /// the epoch's grid), then hourly from day 3 12:00. Counted by hand: day 1 holds
    /// 00:00 06:00 12:00 18:00 (4), day 2 00:00 is the last of era 1; day 2 06:00 ..
    /// day 3 12:00 by 6 h (06 12 18 00 06 12: 6); then 13:00 .. day 4 00:00 hourly
    /// (12). 4 + 1 + 6 + 12 = 23 stamps in [day 1 00:00, day 4 00:00].
    #[test]
    fn eras_give_their_own_stamps_and_meet_at_their_starts() {
        let s = StampSchedule::new(vec![
            (Some(2 * DAY + 12 * 3600), Grid::Every(3600)),
            (
                None,
                Grid::TimesOfDay(vec![18 * 3600, 0, 6 * 3600, 12 * 3600]),
            ),
            (Some(DAY), Grid::Every(6 * 3600)),
        ])
        .unwrap();
        let got = s.stamps(0, 3 * DAY, false);
        assert_eq!(got.len(), 23, "{got:?}");
        // The era's start itself: the last stamp of the era before (ends), the
        // first of its own (slots).
        let hourly_from = StampSchedule::new(vec![
            (None, Grid::Every(6 * 3600)),
            (Some(DAY + 6 * 3600), Grid::Every(3600)),
        ])
        .unwrap();
        let (ends, slots) = (
            hourly_from.stamps(DAY, DAY + 8 * 3600, false),
            hourly_from.stamps(DAY, DAY + 8 * 3600, true),
        );
        let h = |x: i64| DAY + x * 3600;
        assert_eq!(ends, [h(0), h(6), h(7), h(8)]);
        assert_eq!(slots, [h(0), h(6), h(7), h(8)]);
        let odd = StampSchedule::new(vec![
            (None, Grid::Every(6 * 3600)),
            (Some(DAY + 3 * 3600), Grid::Every(3 * 3600)),
        ])
        .unwrap();
        // 03:00 is on both grids' marks only as a 3-hour stamp: an end (the era
        // before's, on its 6-hour grid: not a mark) or a slot (its own era's).
        assert_eq!(odd.stamps(DAY, DAY + 6 * 3600, false), [h(0), h(6)]);
        assert_eq!(odd.stamps(DAY, DAY + 6 * 3600, true), [h(0), h(3), h(6)]);
        assert_eq!(&got[..5], &[0, 6 * 3600, 12 * 3600, 18 * 3600, DAY]);
        assert_eq!(got[10], 2 * DAY + 12 * 3600);
        assert_eq!(got[11], 2 * DAY + 13 * 3600);
        assert_eq!(*got.last().unwrap(), 3 * DAY);
    }

    #[test]
    fn a_schedule_without_one_first_era_or_with_a_bad_grid_is_refused() {
        let g = || Grid::Every(900);
        assert!(StampSchedule::new(vec![(Some(0), g())]).is_err());
        assert!(StampSchedule::new(vec![(None, g()), (None, g())]).is_err());
        assert!(StampSchedule::new(vec![(None, g()), (Some(5), g()), (Some(5), g())]).is_err());
        assert!(StampSchedule::new(vec![(None, Grid::Every(30))]).is_err());
        assert!(StampSchedule::new(vec![(None, Grid::TimesOfDay(vec![86_400]))]).is_err());
    }
}
