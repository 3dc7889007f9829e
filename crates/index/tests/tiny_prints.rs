//! A negligible print must not move a fixing: the rules of issue 24 on one day of
//! hand-made trades, each number worked out by hand in the comments.
//!
//! The day: five honest trades of 100 GPU-hours from five contributors, at 2.00,
//! 2.02, 2.04, 2.06 and 2.24, and a 0.001 GPU-hour print at 2.30 from a sixth.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a failed unwrap is a failed test

use chrono::NaiveDate;
use rentix_core::ObservationKind;
use rentix_index::{fix_grade, sort_obs, EngineObs, Fixing, Methodology, ObsKey, SourceId};
use std::path::Path;

const GRADE: &str = "h100-sxm-80gb/bare-metal/on-demand";

fn day() -> NaiveDate {
    NaiveDate::from_ymd_opt(2025, 3, 3).unwrap()
}

fn trade(source: u32, price: f64, quantity: f64) -> EngineObs {
    EngineObs {
        day: day(),
        kind: ObservationKind::Trade,
        source: SourceId(source),
        price,
        quantity,
        key: ObsKey::digest(&format!("{source}-{price}-{quantity}")),
        tier: None,
    }
}

/// Trades only, one day, vw-median (lower rule), one contributor enough; `extra`
/// adds or overrides methodology lines per section.
fn methodology(outliers: &str, inputs: &str, contributors: &str) -> Methodology {
    let text = format!(
        r#"
version = "tiny-prints-test"
name = "tiny prints"
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
{inputs}
[aggregation]
method = "vw-median"
tie_rule = "lower"
[outliers]
apply = "per-day"
{outliers}
[pooling]
window_days = 1
min_obs_per_day = 1
min_valid_days = 1
[fallback]
listing_spread = false
spread_lookback_days = 30
spread_min_days = 5
carry_forward_days = 0
[contributors]
min_contributors = 1
{contributors}
[rounding]
decimals = 4
"#
    );
    Methodology::from_toml(&text, Path::new("tiny-prints-test.toml")).unwrap()
}

fn fix(obs: &[EngineObs], m: &Methodology) -> Fixing {
    let mut obs = obs.to_vec();
    sort_obs(&mut obs);
    let rows = fix_grade(GRADE, &obs, &[day()], m, m.day_rule());
    assert_eq!(rows.len(), 1);
    rows[0].clone()
}

fn honest() -> Vec<EngineObs> {
    [2.00, 2.02, 2.04, 2.06, 2.24]
        .iter()
        .enumerate()
        .map(|(i, p)| trade(i as u32, *p, 100.0))
        .collect()
}

fn with_print() -> Vec<EngineObs> {
    let mut v = honest();
    v.push(trade(5, 2.30, 0.001));
    v
}

const SIGMA: &str = r#"filter = "sigma-around-trimmed-mean"
trim = 0.1
k = 3.0
scale = "mad""#;

#[test]
fn an_unweighted_filter_lets_a_tiny_print_move_the_fixing() {
    // Honest day: median 2.04, MAD .02, S = .029652, band 3 S = .088956 around the
    // mean 2.072 (0 trimmed of 5): 2.24 is out; 2.00-2.06 kept, vw-median of four
    // equal trades (lower rule: cumulative 200 of 400 reaches half at 2.02) = 2.02.
    let m = methodology(SIGMA, "", "max_share = 1.0");
    assert_eq!(fix(&honest(), &m).value, Some(2.02));
    // With the print: median 2.05, MAD .04, S = .059304, band .177912 around the
    // mean 12.66 / 6 = 2.11: 2.24 (.13) comes back in, the print (.19) goes out;
    // the median of 2.00 ... 2.24 is 2.04. A 0.001 GPU-hour print moved it 1%.
    assert_eq!(fix(&with_print(), &m).value, Some(2.04));
}

#[test]
fn a_weighted_filter_is_not_moved_by_a_tiny_print() {
    // Weighted: median 2.04 (cumulative 300 of 500.001 passes half at 2.04), MAD
    // .02, band .088956 around the central 80% of the weight, 2.0600004: 2.24 and
    // the print out, 2.02 again. Without the print: centre 824 / 400 = 2.06, same.
    let m = methodology(&format!("{SIGMA}\nweighted = true"), "", "max_share = 1.0");
    assert_eq!(fix(&honest(), &m).value, Some(2.02));
    let f = fix(&with_print(), &m);
    assert_eq!(f.value, Some(2.02));
    assert!(f.flags.contains("outliers_removed=2"), "{}", f.flags);
}

#[test]
fn a_trade_below_the_minimum_size_enters_nothing() {
    // min_trade_gpu_hours = 1: the 0.001 print is left out before anything else;
    // the unweighted filter then sees the honest day alone: 2.02, 5 trades counted.
    let m = methodology(SIGMA, "min_trade_gpu_hours = 1.0", "max_share = 1.0");
    let (a, b) = (fix(&honest(), &m), fix(&with_print(), &m));
    assert_eq!(b.value, Some(2.02));
    assert_eq!(a, b);
    assert_eq!(b.n_trades, 5);
}

#[test]
fn a_tiny_contributor_gets_no_equal_share() {
    // Two contributors, 600 GPU-hours at 2.00 and 400 at 2.10, cap 25%, no filter.
    // Equal shares (three contributors under a 25% cap): 1/3 each with the print at
    // 2.31; the lower-rule median reaches half at the second value: 2.10. Without
    // the print: 1/2 each, half reached at 2.00.
    let two = vec![trade(0, 2.00, 600.0), trade(1, 2.10, 400.0)];
    let mut three = two.clone();
    three.push(trade(2, 2.31, 0.001));
    let none = r#"filter = "none""#;
    let m = methodology(none, "", "max_share = 0.25");
    assert_eq!(fix(&two, &m).value, Some(2.00));
    assert_eq!(fix(&three, &m).value, Some(2.10));
    // Proportional: 600 : 400 : 0.001, half (500.0005) reached at 2.00; the cap
    // cannot hold with three contributors, which the row says and counts against
    // sufficiency; the largest share is 600 / 1000.001.
    let m = methodology(
        none,
        "",
        "max_share = 0.25\ntoo_few_for_cap = \"proportional\"",
    );
    let f = fix(&three, &m);
    assert_eq!(f.value, Some(2.00));
    assert!(!f.sufficient);
    assert!(f.flags.contains("cap_not_held"), "{}", f.flags);
    assert_eq!(f.max_contributor_share, Some(0.599999));
}

#[test]
fn the_weight_floor_leaves_a_tiny_contributor_out_and_says_so() {
    // Floor 2.5%: the print holds 0.001 / 500.001 = 2e-6 of the weight (and less
    // than half an equal share, 1/12): left out, flagged, not counted. No filter:
    // the five honest trades' median is 2.04 (cumulative 300 of 500).
    let m = methodology(
        r#"filter = "none""#,
        "",
        "max_share = 1.0\nmin_share = 0.025",
    );
    let f = fix(&with_print(), &m);
    assert_eq!(f.value, Some(2.04));
    assert_eq!(f.n_contributors, 5);
    assert!(f.flags.contains("below_floor=1"), "{}", f.flags);
    // Left out by the floor, not counted as an outlier.
    assert!(!f.flags.contains("outliers_removed"), "{}", f.flags);
    // Without the floor the print is a sixth contributor (and the median, 2.04,
    // is unchanged: it only weighs 0.001).
    let m = methodology(r#"filter = "none""#, "", "max_share = 1.0");
    assert_eq!(fix(&with_print(), &m).n_contributors, 6);
}

#[test]
fn a_large_manipulator_does_not_take_over_the_weighted_screen() {
    // The honest day plus 5,000 GPU-hours (ten times the day) at 2.30 from a sixth
    // contributor; weighted filter, 35% cap, proportional rule. Screened with raw
    // weights, the print would be the median (5,000 of 5,500), MAD 0, MeanAD
    // 100 x 1.14 / 5,500 = .0207, band .078 around 2.30: every honest trade but
    // 2.24 an "outlier", and the fixing 2.30. Screened with the capped weights the
    // aggregation uses (six contributors hold a 35% cap: the print is scaled to
    // .35 x 500 / .65 = 269.2): median 2.06, MAD .06, band .267 around 2.152:
    // nothing removed; the vw-median of 100 x 5 and 269.2 (half of 769.2 reached
    // at the fourth, 2.06) is 2.06.
    let mut obs = honest();
    obs.push(trade(5, 2.30, 5000.0));
    let m = methodology(
        &format!("{SIGMA}\nweighted = true"),
        "",
        "max_share = 0.35\ntoo_few_for_cap = \"proportional\"",
    );
    let f = fix(&obs, &m);
    assert_eq!(f.value, Some(2.06));
    assert_eq!(f.n_obs, 6);
    assert!(!f.flags.contains("outliers_removed"), "{}", f.flags);
}
