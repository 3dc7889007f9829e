//! The lab's manipulation measures on a market built by hand, where the answer is
//! known without the code: a median is harder to move than a mean, a monthly average
//! harder than a final fixing, a contributor cap bounds one contributor's move (to the
//! value worked out below), and a small contributor withholding moves a median less
//! than a mean.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a failed unwrap is a failed test

use chrono::{Datelike, Days, NaiveDate};
use rentix_backtest::ContractSpec;
use rentix_core::ObservationKind;
use rentix_index::{EngineObs, Methodology, ObsKey, SourceId};
use rentix_lab::{attack_month, Change, Found, GradeMarket, MonthAttack};
use std::path::Path;

const GRADE: &str = "h100-sxm-80gb/bare-metal/on-demand";
/// The contributor that withholds: 9% of the volume, quoting at a premium (the
/// twelfth in name order, `c11`).
const PREMIUM: u32 = 11;

fn d(s: &str) -> NaiveDate {
    NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
}

/// Eleven contributors trading three times a day at 2.000-2.022 (100 GPU-hours a
/// trade), and one premium contributor at 2.20 with 9% of the volume (3 x 108
/// GPU-hours against 3,300), every day of 2025-01 to 2025-03.
fn market() -> Vec<EngineObs> {
    let mut out = Vec::new();
    let mut day = d("2025-01-01");
    while day <= d("2025-03-31") {
        for j in 0..12 {
            for k in 0..3 {
                let (price, qty) = if j == PREMIUM {
                    (2.20, 108.0)
                } else {
                    (2.0 + 0.002 * f64::from(j) + 0.001 * f64::from(k), 100.0)
                };
                out.push(EngineObs {
                    day,
                    kind: ObservationKind::Trade,
                    // Contributors c00..c10 and the premium one, numbered in name order.
                    source: SourceId(j),
                    price,
                    quantity: qty,
                    key: ObsKey::digest(&format!("{day}-{j}-{k}")),
                    tier: None,
                });
            }
        }
        day = day + Days::new(1);
    }
    out
}

/// Trades only, same day, no outlier filter, the given aggregation and cap.
fn methodology(method: &str, cap: f64) -> Methodology {
    carrying(method, cap, 0)
}

/// [`methodology`] carrying a value forward `carry` days.
fn carrying(method: &str, cap: f64, carry: u32) -> Methodology {
    let text = format!(
        r#"
version = "lab-test-{method}"
name = "lab test"
description = "trades, same day"
forward_curve = false
[calendar]
cutoff = "24:00"
timezone = "UTC"
days = "all"
[grades]
patterns = ["*/*/*"]
[inputs]
hierarchy = ["trade"]
min_obs = {{ trade = 1 }}
[aggregation]
method = "{method}"
[outliers]
filter = "none"
apply = "per-day"
[pooling]
window_days = 1
min_obs_per_day = 1
min_valid_days = 1
[fallback]
listing_spread = false
spread_lookback_days = 30
spread_min_days = 5
carry_forward_days = {carry}
[contributors]
max_share = {cap}
min_contributors = 1
[rounding]
decimals = 6
"#
    );
    Methodology::from_toml(&text, Path::new("test.toml")).unwrap()
}

fn contract(settlement: &str) -> ContractSpec {
    let text = include_str!("../../../data/contracts/h100-sxm-80gb-bare-metal-on-demand.toml")
        .replace(
            "settlement = \"monthly-average\"",
            &format!("settlement = \"{settlement}\""),
        )
        .replace("tick = 0.001", "tick = 0.0001");
    ContractSpec::from_toml(&text, Path::new("test.toml")).unwrap()
}

fn attack(m: &Methodology, c: &ContractSpec) -> MonthAttack {
    let market = GradeMarket::new(GRADE, market(), m, c, None);
    let month = d("2025-02-01");
    let base = market.settle(month, Change::None).unwrap();
    attack_month(&market, month, &base, 10.0)
}

fn share_1pct(a: &MonthAttack) -> f64 {
    match a.fake_share[1] {
        Found::Moved(x) => x,
        Found::Unreachable => f64::INFINITY,
        Found::Undefined => panic!("the month has trades"),
    }
}

#[test]
fn a_median_needs_more_fake_volume_than_a_mean() {
    let c = contract("monthly-average");
    let median = attack(&methodology("vw-median", 1.0), &c);
    let mean = attack(&methodology("vw-mean", 1.0), &c);
    // Mean: the honest mean S is (3300 x 2.011 + 324 x 2.2) / 3624 = 2.0279; fake
    // trades at 1.1 S with weight share f move it by f x 0.1 S, so 1% needs f = 10%:
    // fake volume r with r / (1 + r) = 0.1, r = 1/9 of the real volume.
    let mean_share = share_1pct(&mean);
    assert!((mean_share - 1.0 / 9.0).abs() < 0.002, "mean {mean_share}");
    // Median: the fake volume must carry the median over the dense cluster of
    // honest prices, far more.
    let median_share = share_1pct(&median);
    assert!(
        median_share > 3.0 * mean_share,
        "median {median_share} vs mean {mean_share}"
    );
}

#[test]
fn a_monthly_average_needs_more_fake_volume_than_a_final_fixing() {
    let m = methodology("vw-median", 1.0);
    let monthly = share_1pct(&attack(&m, &contract("monthly-average")));
    let last = share_1pct(&attack(&m, &contract("final")));
    // Moving a final fixing takes one day's fake volume, a 28th of the month's.
    assert!(
        last.is_finite() && monthly > 20.0 * last,
        "monthly {monthly}, final {last}"
    );
}

#[test]
fn a_contributor_cap_bounds_the_move_one_contributor_can_cause() {
    // vw-mean, cap 20%: the manipulator's weight is at most 20%, so with fake trades
    // at 10% above the settlement S the mean moves at most 0.2 x (1.1 S - m), where m
    // is the honest mean (S before rounding to the tick): 2% of S, plus half a tick
    // of rounding. A 1% move needs weight share f = 10% of the day's total, fake
    // volume r with r / (1 + r) = 0.1: r = 1/9.
    let a = attack(&methodology("vw-mean", 0.2), &contract("monthly-average"));
    let max = a.max_move_pct_trades.unwrap();
    let bound = 2.0 + 100.0 * (0.5 * 0.0001 + 1e-6) / a.settlement;
    assert!(
        max <= bound,
        "max move {max}% exceeds the cap's bound of {bound}%"
    );
    assert!(max > 1.99, "at 10x the volume the cap binds: {max}%");
    assert_eq!(
        a.fake_share[2],
        Found::Unreachable,
        "5% is beyond the bound"
    );
    let s = share_1pct(&a);
    assert!(
        (s - 1.0 / 9.0).abs() < 0.002,
        "fake share for 1%: {s} (1/9 by hand)"
    );
}

#[test]
fn withholding_by_a_small_contributor_moves_a_median_less_than_a_mean() {
    let c = contract("monthly-average");
    let median = attack(&methodology("vw-median", 1.0), &c);
    let mean = attack(&methodology("vw-mean", 1.0), &c);
    let share = median.withholder_share.unwrap();
    assert!(share < 0.10, "the withholder has {share} of the volume");
    assert!((share - 324.0 / 3624.0).abs() < 1e-9);
    // Mean: removing 8.9% of the weight at 2.20 from a mean of about 2.028 lowers it
    // by 0.089 x (2.20 - 2.011) / 0.911, about 0.9%.
    let mean_move = mean.withholding_move_pct.unwrap();
    assert!((mean_move - 0.9).abs() < 0.1, "mean move {mean_move}%");
    let median_move = median.withholding_move_pct.unwrap();
    assert!(
        median_move < mean_move / 5.0,
        "median {median_move}% vs mean {mean_move}%"
    );
}

#[test]
fn the_month_slice_settles_as_the_whole_history_does() {
    let m = methodology("vw-median", 0.25);
    let c = contract("monthly-average");
    let market = GradeMarket::new(GRADE, market(), &m, &c, None);
    let full = market.underlying(&market.history()).unwrap();
    for month in ["2025-01-01", "2025-02-01", "2025-03-01"] {
        let slice = market.settle(d(month), Change::None).unwrap().value;
        assert_eq!(slice, c.settle(&full, d(month)).unwrap());
    }
}

/// A store that ends on March 20th: the lab settles March on the fixings of the
/// 1st to the 20th, as `rentix index` publishes them and a backtest of that file
/// settles them. It settled on days carried to the 31st (a hostile round: a store
/// ending on October 26th gave 2.856 where the 26 published fixings give 2.852).
/// The price rises by 0.001 a day in March, so carried copies of the 20th's
/// fixing move the mean.
#[test]
fn a_month_the_store_ends_in_settles_on_the_days_it_has() {
    let m = carrying("vw-median", 1.0, 15);
    let c = contract("monthly-average");
    let end = d("2025-03-20");
    let obs: Vec<EngineObs> = market()
        .into_iter()
        .filter(|o| o.day <= end)
        .map(|mut o| {
            if o.day >= d("2025-03-01") {
                o.price += 0.001 * f64::from(o.day.day());
            }
            o
        })
        .collect();
    let march = d("2025-03-01");
    let capped = GradeMarket::new(GRADE, obs.clone(), &m, &c, Some(end));
    let history = capped.history();
    assert_eq!(history.last().map(|f| f.date), Some(end));
    let published = capped.underlying(&history).unwrap();
    let value = capped.settle(march, Change::None).unwrap().value;
    assert_eq!(value, c.settle(&published, march).unwrap());
    // Carried to the 31st, the eleven copies of the 20th's fixing pull it up.
    let carried = GradeMarket::new(GRADE, obs, &m, &c, None)
        .settle(march, Change::None)
        .unwrap()
        .value;
    assert!(carried > value, "{carried} against {value}");
}
