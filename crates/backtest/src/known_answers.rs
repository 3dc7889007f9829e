//! Decisions with answers known by hand arithmetic (issue 46): a rent that moves at
//! `b` times the index is hedged at `b`, a rent priced on last month's index is
//! hedged in full with last month's contract, and a rent that has nothing to do
//! with the index is rarely told to hedge.
//!
//! The index is constant within each month (`v_m` every day), so the monthly-average
//! settlement is `v_m` and the entry at the close of the month before is
//! `v_{m-1}`: the futures change of month `m` is `v_m - v_{m-1}`.

use crate::backtest::{run, BacktestConfig, IndexInputs};
use crate::contract::ContractSpec;
use crate::recommendation::Decision;
use crate::rent::{RentNames, RentPeriod, RentSeries, Side};
use crate::strategy::Strategy;
use crate::underlying::Underlying;
use chrono::{Datelike, Months, NaiveDate};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rentix_core::{DateSeries, GpuHours, UsdPerGpuHour};

const GRADE: &str = "h100-sxm-80gb/bare-metal/on-demand";
/// Ten GPUs: 240 GPU-hours a day.
const GPU_HOURS_A_DAY: f64 = 240.0;

fn month(i: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2024, 1, 1)
        .and_then(|d| d.checked_add_months(Months::new(i)))
        .unwrap()
}

/// A level per month on the contract's tick: a wave with a drift, so that the
/// monthly changes vary in size and sign.
fn level(i: u32) -> f64 {
    let x = 2.0 + 0.25 * (f64::from(i) * 1.3).sin() + 0.01 * f64::from(i);
    (x * 1000.0).round() / 1000.0
}

/// The index: `levels[i]` on every day of month `i` (months from 2024-01).
fn index(levels: &[f64]) -> IndexInputs {
    let mut pts = Vec::new();
    for (i, v) in levels.iter().enumerate() {
        let (start, end) = (month(i as u32), month(i as u32 + 1));
        pts.extend(start.iter_days().take_while(|d| *d < end).map(|d| (d, *v)));
    }
    IndexInputs::of(Underlying::from_series(
        GRADE,
        DateSeries::from_points(pts).unwrap(),
    ))
}

/// Monthly invoices of months `first..first + n` at `price(i)`.
fn rent(first: u32, n: u32, side: Side, price: impl Fn(u32) -> f64) -> RentSeries {
    RentSeries {
        side,
        periods: (first..first + n)
            .map(|i| {
                let (start, end) = (month(i), month(i + 1));
                RentPeriod {
                    start,
                    end,
                    price: UsdPerGpuHour::new(price(i)).unwrap(),
                    gpu_hours: GpuHours::new(GPU_HOURS_A_DAY * (end - start).num_days() as f64)
                        .unwrap(),
                }
            })
            .collect(),
        names: RentNames::default(),
    }
}

fn config(seed: u64) -> BacktestConfig {
    BacktestConfig {
        contract: ContractSpec::default_contract(),
        strategies: Strategy::ALL.to_vec(),
        bootstrap_resamples: 500,
        seed,
        rolling_window: 12,
        perp: None,
    }
}

#[test]
fn a_rent_at_b_times_the_index_is_hedged_at_b() {
    // rent_m = b v_m + 0.4: its change b (v_m - v_{m-1}) is b times the futures
    // change, so the ratio fitted on the other months is b exactly, each month's
    // hedge at it leaves nothing (effectiveness 1, interval [1, 1]), and the
    // decision is to hedge at b: round(b x exposure / 730) contracts on the latest
    // month's exposure (December 2025 of 24 months: 31 x 240 = 7,440 GPU-hours, so
    // b = 0.41 gives 4.18 -> 4 contracts). A payer buys.
    let levels: Vec<f64> = (0..30).map(level).collect();
    let idx = index(&levels);
    for months in [8u32, 10, 12, 24] {
        for b in [0.25, 0.41, 0.8, 1.0, 1.5] {
            let r = rent(1, months, Side::Pay, |i| b * levels[i as usize] + 0.4);
            let res = run(&r, &[], &idx, &config(7)).unwrap();
            let rec = &res.recommendation;
            let last = r.periods.last().unwrap().gpu_hours.get();
            let want = (b * last / 730.0).round() as i64;
            assert_eq!(
                rec.decision,
                Decision::Hedge,
                "b {b}, {months} months: {}",
                rec.reason
            );
            let h = rec.hedge_ratio.unwrap();
            assert!((h - b).abs() < 1e-9, "b {b}, {months} months: ratio {h}");
            assert_eq!(rec.contracts, Some(want), "b {b}, {months} months");
            assert_eq!(rec.futures_side.as_deref(), Some("buy"));
            // Whole contracts leave a little: 2 contracts for 2.47 at b = 0.25.
            assert!(rec.effectiveness.unwrap() > 0.9, "{}", rec.reason);
            // The decided strategy's row says the same: next month's ratio and
            // contracts are the decision's.
            let decided = res.decided_strategy().unwrap();
            assert_eq!(Some(decided.strategy), rec.strategy);
            assert_eq!(decided.next_hedge_ratio, rec.hedge_ratio);
            assert_eq!(decided.next_contracts, rec.contracts);
        }
    }
}

#[test]
fn a_rent_priced_on_last_months_index_is_hedged_with_last_months_contract() {
    // rent_m = v_{m-1} (an invoice at last month's average): its change is the
    // futures change of the month before, which the same month's contract cannot
    // hedge. Set against the contract of the month before, every month is offset
    // exactly: hedge in full (ratio 1), and the decision names the lag. An earner
    // sells.
    let levels: Vec<f64> = (0..30).map(level).collect();
    let idx = index(&levels);
    let r = rent(2, 18, Side::Earn, |i| levels[i as usize - 1]);
    let res = run(&r, &[], &idx, &config(3)).unwrap();
    let rec = &res.recommendation;
    assert_eq!(res.rent_lag_months, 1);
    assert_eq!(rec.decision, Decision::Hedge, "{}", rec.reason);
    assert!(
        (rec.hedge_ratio.unwrap() - 1.0).abs() < 1e-9,
        "{}",
        rec.reason
    );
    assert!(rec.effectiveness.unwrap() > 0.999, "{}", rec.reason);
    assert!(
        rec.reason
            .starts_with("your rent follows the index one month late"),
        "{}",
        rec.reason
    );
    assert_eq!(rec.futures_side.as_deref(), Some("sell"));
    // The same prices billed a row a day (each day of month m at v_{m-1}): the
    // same answer. Daily rows were never checked for the lag (a hostile run: "do
    // not hedge ... would add risk", and 99.9% removed once written as invoices).
    let daily = RentSeries {
        side: Side::Earn,
        periods: r
            .periods
            .iter()
            .flat_map(|p| {
                p.start
                    .iter_days()
                    .take_while(|d| *d < p.end)
                    .map(|d| RentPeriod {
                        start: d,
                        end: d.succ_opt().unwrap(),
                        price: p.price,
                        gpu_hours: GpuHours::new(GPU_HOURS_A_DAY).unwrap(),
                    })
            })
            .collect(),
        names: RentNames::default(),
    };
    let by_day = run(&daily, &[], &idx, &config(3)).unwrap();
    assert_eq!(
        by_day.rent_lag_months, 1,
        "{}",
        by_day.recommendation.reason
    );
    assert_eq!(by_day.recommendation.decision, Decision::Hedge);
    assert_eq!(by_day.recommendation.contracts, rec.contracts);
    // The same rent on the same month's index is not lagged.
    let same = rent(2, 18, Side::Earn, |i| levels[i as usize] + 0.1);
    assert_eq!(
        run(&same, &[], &idx, &config(3)).unwrap().rent_lag_months,
        0
    );
}

#[test]
fn a_rent_unrelated_to_the_index_is_rarely_told_to_hedge() {
    // A rent that is an independent random walk, 10 to 24 monthly invoices: the
    // rule weighs five strategies (the cross-validated in-sample ratio among them),
    // so it may be fooled now and then, but not often: at most 3 of 30 samples.
    let levels: Vec<f64> = (0..30).map(level).collect();
    let idx = index(&levels);
    let mut hedged = 0;
    for seed in 0..30u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = rng.gen_range(10..=24);
        let mut walk = vec![2.5];
        for _ in 1..n {
            let step: f64 = rng.gen_range(-0.15..0.15);
            walk.push((walk.last().unwrap() + step).max(0.5));
        }
        let r = rent(1, n, Side::Pay, |i| walk[i as usize - 1]);
        let res = run(&r, &[], &idx, &config(seed)).unwrap();
        hedged += usize::from(res.recommendation.decision == Decision::Hedge);
    }
    assert!(
        hedged <= 3,
        "an unrelated rent told to hedge in {hedged} of 30"
    );
}

/// Sixty random-walk grades over 20 months from 2.0, each with daily steps of its
/// own size (sd 0.0005 to 0.01: some far quieter than the rent, whose small moves
/// a fitted ratio can match by chance), and, with `tracker`, one more grade (steps of
/// sd 0.01) that the rent follows.
fn candidates(rng: &mut ChaCha8Rng, tracker: bool) -> (Vec<rentix_fixings::Fixing>, Vec<f64>) {
    use rand_distr::{Distribution, Normal};
    let days: Vec<NaiveDate> = month(0)
        .iter_days()
        .take_while(|d| *d < month(20))
        .collect();
    let mut fixings = Vec::new();
    let mut tracked_monthly = vec![0.0; 20];
    let names: Vec<String> = (0..60)
        .map(|k| format!("noise{k:02}/bare-metal/on-demand"))
        .chain(tracker.then(|| GRADE.to_string()))
        .collect();
    for name in &names {
        let sd = if name == GRADE {
            0.01
        } else {
            rng.gen_range(0.0005..0.01)
        };
        let step = Normal::new(0.0, sd).unwrap();
        let mut v = 2.0;
        let mut sums = vec![(0.0, 0usize); 20];
        for d in &days {
            v = f64::max(v + step.sample(rng), 0.5);
            let m = ((d.year() - 2024) * 12 + d.month0() as i32) as usize;
            sums[m].0 += v;
            sums[m].1 += 1;
            fixings.push(rentix_fixings::Fixing::for_test(
                *d,
                name,
                Some((v * 1000.0).round() / 1000.0),
            ));
        }
        if name == GRADE {
            tracked_monthly = sums.iter().map(|(s, n)| s / *n as f64).collect();
        }
    }
    (fixings, tracked_monthly)
}

#[test]
fn track_ranks_noise_rarely_and_a_true_tracker_first() {
    // Issue 46: sixty grades of pure random walks against 18 monthly invoices of an
    // independent walk; ranked by each one's own interval, one of them was ranked
    // as a hedge in 19 of 20 samples. Corrected for the choosing, at most 1 of 20
    // (5%). With a grade the rent follows (its monthly average plus 0.2 and a small
    // noise) among them, that grade is ranked first in at least 19 of 20.
    use crate::track::{track, TrackOptions};
    use rand_distr::{Distribution, Normal};
    let (mut noise_ranked, mut tracker_first, mut uncorrected, mut half_first) = (0, 0, 0, 0);
    for seed in 0..20u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let opt = TrackOptions {
            resamples: 300,
            seed,
            ..TrackOptions::default()
        };
        let (fixings, _) = candidates(&mut rng, false);
        let jitter = Normal::new(0.0, 0.05).unwrap();
        let mut walk = vec![2.0];
        for _ in 1..18 {
            walk.push(f64::max(
                walk.last().unwrap() + jitter.sample(&mut rng),
                0.5,
            ));
        }
        let unrelated = rent(1, 18, Side::Pay, |i| walk[i as usize - 1]);
        let rows = track(
            &unrelated,
            &[],
            &fixings,
            &ContractSpec::default_contract(),
            &opt,
        )
        .unwrap();
        noise_ranked += usize::from(rows.iter().any(|r| r.rank.is_some()));
        // What the old rule ranked: any eligible candidate whose own interval's
        // lower bound is above zero.
        uncorrected += usize::from(rows.iter().any(|r| {
            r.periods >= opt.min_periods && r.oos_effectiveness_ci_low.is_some_and(|l| l > 0.0)
        }));

        let (fixings, monthly) = candidates(&mut rng, true);
        let small = Normal::new(0.0, 0.005).unwrap();
        let mut follows = rent(1, 18, Side::Pay, |i| monthly[i as usize] + 0.2);
        for p in &mut follows.periods {
            p.price = UsdPerGpuHour::new(p.price.get() + small.sample(&mut rng)).unwrap();
        }
        follows.names.gpu = Some("h100-sxm-80gb".into());
        let rows = track(
            &follows,
            &[],
            &fixings,
            &ContractSpec::default_contract(),
            &opt,
        )
        .unwrap();
        tracker_first += usize::from(rows[0].grade == GRADE && rows[0].rank == Some(1));
        // A rent at half the tracker's moves: a walk-forward hedges one-to-one for
        // its first months and adds risk; the cross-validated hedge (ratio 0.5)
        // removes nearly all (a hostile run: backtest said hedge 99.6% at 0.49,
        // track did not rank the driver and ranked another grade). Scored on the
        // walk-forward alone it was ranked first in 1 of these 20 samples.
        // Its noise halved with its moves: the same signal to noise as above.
        let smaller = Normal::new(0.0, 0.0025).unwrap();
        let mut half = rent(1, 18, Side::Pay, |i| 0.5 * monthly[i as usize] + 1.0);
        for p in &mut half.periods {
            p.price = UsdPerGpuHour::new(p.price.get() + smaller.sample(&mut rng)).unwrap();
        }
        half.names.gpu = Some("h100-sxm-80gb".into());
        let rows = track(
            &half,
            &[],
            &fixings,
            &ContractSpec::default_contract(),
            &opt,
        )
        .unwrap();
        half_first += usize::from(rows[0].grade == GRADE && rows[0].rank == Some(1));
    }
    eprintln!("noise ranked {noise_ranked}/20 (uncorrected {uncorrected}/20), tracker first {tracker_first}/20, at half {half_first}/20");
    assert!(
        half_first >= 19,
        "the tracker at half ranked first in {half_first} of 20"
    );
    // The samples are a hard case: each candidate's own interval alone ranks a
    // noise grade in several of them (6 of 20 when written).
    assert!(
        uncorrected >= 4,
        "uncorrected rule ranked noise in {uncorrected} of 20"
    );
    assert!(
        noise_ranked <= 1,
        "pure noise ranked in {noise_ranked} of 20 samples"
    );
    assert!(
        tracker_first >= 19,
        "the tracker ranked first in {tracker_first} of 20"
    );
}

#[test]
fn a_rent_in_another_unit_is_refused_by_every_backtest() {
    // The lab's hedgers and track's candidates run `run`, not the backtest
    // command: a rent per GPU-month (730 times the index) was scored 0.6% by the
    // lab where `backtest` refused it (a hostile round).
    let levels: Vec<f64> = (0..30).map(level).collect();
    let idx = index(&levels);
    let r = rent(1, 24, Side::Pay, |i| 730.0 * levels[i as usize]);
    let err = run(&r, &[], &idx, &config(1)).unwrap_err().to_string();
    assert!(
        err.contains(" times the median of") && err.contains("per GPU-month"),
        "{err}"
    );
}
