//! Tests of [`super`] (crate `rentix-index`, module `engine`).
//!
//! Every expected number is worked out by hand in the test's comment from
//! docs/methodology.md ("How a fixing is made"): weights are GPU-hours for trades
//! and 1 for offers and listings, the `vw-median` takes the first value whose
//! cumulative weight reaches half the total (`lower` rule) or averages it with the
//! next when it lands exactly on half (`midpoint`).

use super::*;
use crate::methodology::{MethodologySpec, WindowUnit};
use crate::outliers::OutlierFilter;
use rentix_core::{GpuHours, Observation, PriceUnit, UsdPerGpuHour};
use std::path::Path;

const GRADE: &str = "h100-sxm-80gb/bare-metal/on-demand";
const A100: &str = "a100-sxm-80gb/bare-metal/on-demand";

/// Every kind at one observation and one contributor, one-day window, no outlier
/// filter, no cap, no listing spread, a two-day carry, four decimals.
const BASE: &str = r#"
version = "engine-test-1"
name = "engine tests"
forward_curve = false
[calendar]
cutoff = "24:00"
timezone = "UTC"
days = "all"
[grades]
patterns = ["*/*/*"]
[inputs]
hierarchy = ["trade", "firm", "listing"]
min_obs = { trade = 1, firm = 1, listing = 1 }
[aggregation]
method = "vw-median"
tie_rule = "lower"
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
spread_min_days = 1
carry_forward_days = 2
[contributors]
max_share = 1.0
min_contributors = 1
[rounding]
decimals = 4
"#;

fn base() -> Methodology {
    Methodology::from_toml(BASE, Path::new("engine-test.toml")).unwrap()
}

/// [`BASE`] with `edit` applied, validated again.
fn with(edit: impl FnOnce(&mut MethodologySpec)) -> Methodology {
    base().edited(Path::new("engine-test.toml"), edit).unwrap()
}

fn day(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

/// Every calendar day from `a` to `b`, inclusive.
fn days(a: &str, b: &str) -> Vec<NaiveDate> {
    day(a).iter_days().take_while(|d| *d <= day(b)).collect()
}

fn obs(kind: ObservationKind, d: &str, source: u32, price: f64, quantity: f64) -> EngineObs {
    EngineObs {
        key: ObsKey::digest(&format!("{kind}/{d}/{source}/{price}/{quantity}")),
        price,
        quantity,
        day: day(d),
        source: SourceId(source),
        kind,
        tier: None,
    }
}

fn trade(d: &str, source: u32, price: f64, quantity: f64) -> EngineObs {
    obs(ObservationKind::Trade, d, source, price, quantity)
}

fn firm(d: &str, source: u32, price: f64) -> EngineObs {
    obs(ObservationKind::Firm, d, source, price, 0.0)
}

fn listing(d: &str, source: u32, price: f64) -> EngineObs {
    obs(ObservationKind::Listing, d, source, price, 0.0)
}

/// `fix_grade` on `obs` in the engine's order.
fn fix(obs: &[EngineObs], dates: &[NaiveDate], m: &Methodology) -> Vec<Fixing> {
    let mut v = obs.to_vec();
    sort_obs(&mut v);
    fix_grade(GRADE, &v, dates, m, m.day_rule())
}

/// The one row of a one-day fixing.
fn fix_one(obs: &[EngineObs], m: &Methodology) -> Fixing {
    let d = obs[0].day;
    let rows = fix(obs, &[d], m);
    assert_eq!(rows.len(), 1, "{rows:?}");
    rows[0].clone()
}

fn request(m: Methodology) -> IndexRequest {
    IndexRequest {
        methodology: m,
        grade_filters: Vec::new(),
        from: None,
        to: None,
    }
}

/// A store row of `grade` seen at `at` (RFC 3339), dedupe key `n`.
fn stored(
    n: u64,
    kind: ObservationKind,
    at: &str,
    source: &str,
    grade: &str,
    price: f64,
    quantity: Option<f64>,
) -> StoredObservation {
    let observed_at = chrono::DateTime::parse_from_rfc3339(at).unwrap().to_utc();
    StoredObservation {
        obs: Observation {
            obs_id: format!("id-{n}").into(),
            kind,
            observed_at,
            fixing_date: observed_at.date_naive(),
            source: source.into(),
            grade: grade.parse().unwrap(),
            gpu_raw: "H100 SXM".into(),
            usd_per_gpu_hour: UsdPerGpuHour::positive(price).unwrap(),
            quantity_gpu_hours: quantity.map(|q| GpuHours::new(q).unwrap()),
            price_raw: price,
            price_unit: PriceUnit::GpuHour,
            currency: "USD".into(),
            gpus_per_unit: None,
            interconnect: None,
            cluster_gpus: None,
            operator_tier: None,
            upfront: None,
            term_start: None,
            input_file: "engine-test.csv".into(),
            input_row: n,
        },
        dedupe_key: format!("{n:032x}").into(),
    }
}

/// Groups `rows` under `req` (its methodology's clock) and fixes every grade on
/// every fixing date, as `compute` does before composites.
fn run(rows: &[StoredObservation], req: &IndexRequest) -> Vec<Fixing> {
    let m = &req.methodology;
    let grouped = group_by_grade(rows, req, &m.cutoff_clock()).unwrap();
    let dates = fixing_dates(&grouped.grades, req, m.day_rule());
    fix_all(&grouped.grades, &dates, m, m.day_rule())
}

/// Trades 2.00 x 10, 2.10 x 10, 2.20 x 40 GPU-hours from three contributors:
/// total 60, half 30; cumulative 10, 20, 60, so the vw-median is 2.20 (the
/// unweighted median would be 2.10). Shares 1/6, 1/6, 2/3: largest 0.666667, HHI
/// 1/36 + 1/36 + 16/36 = 0.5. p1 (0.6 of 60) = 2.00, p25 (15) = 2.10, p75 (45) and
/// p99 (59.4) = 2.20. The firm offer and the two listings of the day do not enter.
#[test]
fn a_day_with_trades_fixes_from_trades_even_when_offers_and_listings_exist() {
    let d = "2025-03-03";
    let trades = [
        trade(d, 0, 2.00, 10.0),
        trade(d, 1, 2.10, 10.0),
        trade(d, 2, 2.20, 40.0),
    ];
    let mut all = trades.to_vec();
    all.extend([firm(d, 3, 3.00), listing(d, 4, 2.50), listing(d, 5, 2.60)]);
    let f = fix_one(&all, &base());
    assert_eq!(f.value, Some(2.2));
    assert_eq!(f.level, Some(FixingLevel::Trades));
    assert!(f.sufficient);
    assert_eq!(f.flags, "");
    assert_eq!(f.method, "vw-median");
    assert_eq!((f.n_obs, f.n_contributors), (3, 3));
    assert_eq!((f.n_trades, f.n_firm, f.n_listings), (3, 1, 2));
    assert_eq!(f.volume_gpu_hours, 60.0);
    assert_eq!(f.max_contributor_share, Some(0.666667));
    assert_eq!(f.contributor_hhi, Some(0.5));
    assert_eq!(
        (f.p1, f.p25, f.p75, f.p99),
        (Some(2.0), Some(2.1), Some(2.2), Some(2.2))
    );
    assert_eq!(
        f.input_sha256,
        keys_sha256(trades.iter().map(|o| o.key)),
        "the input hash covers the three trades only"
    );
    assert_eq!(f.methodology_version, "engine-test-1");
}

/// Firm offers 3.00, 3.20, 3.40 quoting 100, 1 and 1 GPU-hours: offers weigh 1
/// each whatever their size, so the median is 3.20 (cumulative 1, 2 of 3 reaches
/// 1.5 at 3.20); weighted by size it would be 3.00.
#[test]
fn a_day_with_only_firm_offers_falls_to_the_firm_level() {
    let d = "2025-03-03";
    let f = fix_one(
        &[
            obs(ObservationKind::Firm, d, 0, 3.00, 100.0),
            obs(ObservationKind::Firm, d, 1, 3.20, 1.0),
            obs(ObservationKind::Firm, d, 2, 3.40, 1.0),
            listing(d, 3, 2.0),
        ],
        &base(),
    );
    assert_eq!(f.value, Some(3.2));
    assert_eq!(f.level, Some(FixingLevel::Firm));
    assert!(f.sufficient);
    assert_eq!(f.flags, "fallback_firm");
    assert_eq!((f.n_obs, f.n_trades, f.n_firm, f.n_listings), (3, 0, 3, 1));
}

/// Listings 1.90, 2.00, 2.10, 2.30, weight 1 each: cumulative 2 of 4 lands exactly
/// on half at 2.00, so `lower` gives 2.00 and `midpoint` (2.00 + 2.10) / 2 = 2.05.
#[test]
fn a_day_with_only_listings_falls_to_the_listing_level_under_either_tie_rule() {
    let d = "2025-03-03";
    let rows = [
        listing(d, 0, 1.90),
        listing(d, 1, 2.10),
        listing(d, 2, 2.00),
        listing(d, 3, 2.30),
    ];
    let lower = fix_one(&rows, &base());
    assert_eq!(lower.value, Some(2.0));
    assert_eq!(lower.level, Some(FixingLevel::Listings));
    assert_eq!(lower.flags, "fallback_listing");
    assert_eq!((lower.n_obs, lower.n_listings), (4, 4));
    let mid = fix_one(&rows, &with(|s| s.aggregation.tie_rule = TieRule::Midpoint));
    assert_eq!(mid.value, Some(2.05));
}

/// Three trades from one contributor do not beat firm offers from five
/// (docs/methodology.md, step 7): with three contributors needed, the trade level
/// fails for `few_contributors` and the firm level fixes: 3.0 ... 3.4, weight 1
/// each, cumulative 3 of 5 passes 2.5 at 3.2.
#[test]
fn a_level_with_too_few_contributors_falls_through_to_the_next() {
    let d = "2025-03-03";
    let mut rows = vec![
        trade(d, 0, 2.0, 10.0),
        trade(d, 0, 2.1, 10.0),
        trade(d, 0, 2.2, 10.0),
    ];
    rows.extend((0..5).map(|i| firm(d, 10 + i, 3.0 + 0.1 * f64::from(i))));
    let m = with(|s| s.contributors.min_contributors = 3);
    let f = fix_one(&rows, &m);
    assert_eq!(f.value, Some(3.2));
    assert_eq!(f.level, Some(FixingLevel::Firm));
    assert!(f.sufficient);
    assert_eq!(f.flags, "trade_failed=few_contributors;fallback_firm");
    assert_eq!((f.n_obs, f.n_contributors), (5, 5));
    assert_eq!((f.n_trades, f.n_firm, f.n_listings), (3, 5, 0));
}

/// Two trades (2.00 from 2 GPU-hours, 2.10 from 1) below `min_obs = 3`: the trade
/// level fails `few_obs` and the listings fix, 2.50.
#[test]
fn a_level_with_too_few_observations_falls_through_to_the_next() {
    let d = "2025-03-03";
    let m = with(|s| {
        s.inputs.min_obs.insert(ObservationKind::Trade, 3);
    });
    let f = fix_one(
        &[
            trade(d, 0, 2.00, 2.0),
            trade(d, 1, 2.10, 1.0),
            listing(d, 2, 2.50),
        ],
        &m,
    );
    assert_eq!(f.value, Some(2.5));
    assert_eq!(f.level, Some(FixingLevel::Listings));
    assert_eq!(f.flags, "trade_failed=few_obs;fallback_listing");
}

/// Two contributors where three are needed, and no other level: under
/// `below_minimum = "suppress"` nothing is published (`suppressed`, data existed);
/// under `publish-flagged` the trades' value is published as low confidence:
/// 2.00 x 10 and 2.40 x 30, half of 40 is reached at 2.40.
#[test]
fn too_few_contributors_suppress_or_publish_flagged_as_the_methodology_says() {
    let d = "2025-03-03";
    let rows = [trade(d, 0, 2.00, 10.0), trade(d, 1, 2.40, 30.0)];
    let suppress = with(|s| {
        s.contributors.min_contributors = 3;
        s.contributors.below_minimum = WhenShort::Suppress;
    });
    let f = fix_one(&rows, &suppress);
    assert_eq!((f.value, f.level), (None, None));
    assert!(!f.sufficient);
    assert_eq!(
        f.flags,
        "low_confidence;trade_failed=few_contributors;suppressed"
    );
    assert_eq!((f.n_obs, f.n_trades), (0, 2));

    let flagged = with(|s| {
        s.contributors.min_contributors = 3;
        s.contributors.below_minimum = WhenShort::PublishFlagged;
    });
    let f = fix_one(&rows, &flagged);
    assert_eq!(f.value, Some(2.4));
    assert_eq!(f.level, Some(FixingLevel::Trades));
    assert!(!f.sufficient);
    assert_eq!(
        f.flags,
        "low_confidence;trade_failed=few_contributors;few_contributors"
    );
    assert_eq!((f.n_obs, f.n_contributors), (2, 2));
}

/// Carry of 2 days. Observations on 03-01 (2.10) and 03-08 (2.50): one life,
/// 03-01 .. 03-10 (the last day plus the carry). 03-02 and 03-03 carry 2.10
/// (level 4), 03-04 .. 03-07 have no value (`no_data`: nothing in the window,
/// nothing left to carry), 03-08 fixes 2.50, 03-09 and 03-10 carry it, and no row
/// follows although the dates run to 03-12.
#[test]
fn a_value_is_carried_for_at_most_the_carry_days_then_no_data() {
    let rows = [
        trade("2025-03-01", 0, 2.10, 5.0),
        trade("2025-03-08", 0, 2.50, 5.0),
    ];
    let out = fix(&rows, &days("2025-03-01", "2025-03-12"), &base());
    assert_eq!(
        out.iter().map(|f| f.date).collect::<Vec<_>>(),
        days("2025-03-01", "2025-03-10")
    );
    let values: Vec<Option<f64>> = out.iter().map(|f| f.value).collect();
    let (a, b) = (Some(2.1), Some(2.5));
    assert_eq!(values, [a, a, a, None, None, None, None, b, b, b]);
    let levels: Vec<Option<FixingLevel>> = out.iter().map(|f| f.level).collect();
    let (t, c) = (Some(FixingLevel::Trades), Some(FixingLevel::Carried));
    assert_eq!(levels, [t, c, c, None, None, None, None, t, c, c]);
    for f in [&out[1], &out[2], &out[8], &out[9]] {
        assert_eq!(f.flags, "low_confidence;carried_forward", "{}", f.date);
        assert!(!f.sufficient);
        assert_eq!(f.n_obs, 0);
    }
    assert_eq!(
        out[2].input_sha256, out[0].input_sha256,
        "a carry keeps its inputs"
    );
    for f in &out[3..7] {
        assert_eq!(f.flags, "low_confidence;no_data", "{}", f.date);
    }
}

/// A day whose data the rules refuse (one contributor of the three needed, under
/// `suppress`) carries the last fixed value, and says why the level failed.
#[test]
fn a_suppressed_day_carries_the_last_fixed_value() {
    let m = with(|s| {
        s.contributors.min_contributors = 3;
        s.contributors.below_minimum = WhenShort::Suppress;
    });
    let rows = [
        trade("2025-03-01", 0, 2.00, 10.0),
        trade("2025-03-01", 1, 2.10, 10.0),
        trade("2025-03-01", 2, 2.20, 10.0),
        trade("2025-03-02", 0, 9.00, 10.0),
    ];
    let out = fix(&rows, &days("2025-03-01", "2025-03-02"), &m);
    // Day 1: 30 GPU-hours, half 15 reached at 2.10.
    assert_eq!(out[0].value, Some(2.1));
    assert_eq!(out[1].value, Some(2.1));
    assert_eq!(out[1].level, Some(FixingLevel::Carried));
    assert_eq!(
        out[1].flags,
        "low_confidence;trade_failed=few_contributors;carried_forward"
    );
    assert_eq!(out[1].n_trades, 1);
}

/// Lag 1, no carry: the trades of 03-03 fix 03-04 (the window ends a day before
/// the fixing date). The run's dates end on the last observation day plus the lag,
/// and 03-03 itself gets no row: its window (03-02) is before the grade's life.
#[test]
fn a_lag_moves_the_fixing_to_the_day_after_the_window() {
    let m = with(|s| {
        s.pooling.lag_days = 1;
        s.fallback.carry_forward_days = 0;
    });
    let rows = vec![
        trade("2025-03-03", 0, 2.0, 10.0),
        trade("2025-03-03", 1, 2.4, 30.0),
    ];
    let groups = BTreeMap::from([(GRADE.to_string(), rows.clone())]);
    let dates = fixing_dates(&groups, &request(m.clone()), m.day_rule());
    assert_eq!(dates, days("2025-03-03", "2025-03-04"));
    let out = fix(&rows, &dates, &m);
    assert_eq!(out.len(), 1);
    // 2.00 x 10, 2.40 x 30: half of 40 is reached at 2.40.
    assert_eq!((out[0].date, out[0].value), (day("2025-03-04"), Some(2.4)));
    assert_eq!(out[0].n_trades, 2);
}

/// The MAD filter (k = 3) on five equal trades 2.00, 2.02, 2.04, 2.06, 9.00:
/// median 2.04, absolute deviations 0.04, 0.02, 0, 0.02, 6.96, MAD 0.02, S =
/// 1.4826 x 0.02 = 0.029652, band 0.088956: 9.00 goes. The vw-median of the four
/// left (10 GPU-hours each, half of 40 reached at 2.02) is 2.02; unfiltered it
/// would be 2.04 (half of 50 passed at the third).
#[test]
fn outlier_clipping_removes_an_extreme_print() {
    let d = "2025-03-03";
    let rows: Vec<EngineObs> = [2.00, 2.02, 2.04, 2.06, 9.00]
        .iter()
        .zip(0..)
        .map(|(p, s)| trade(d, s, *p, 10.0))
        .collect();
    assert_eq!(fix_one(&rows, &base()).value, Some(2.04));
    let m = with(|s| s.outliers.filter = OutlierFilter::Mad);
    let f = fix_one(&rows, &m);
    assert_eq!(f.value, Some(2.02));
    assert_eq!(f.flags, "outliers_removed=1");
    assert_eq!((f.n_obs, f.n_trades, f.n_contributors), (4, 5, 4));
    assert_eq!(f.volume_gpu_hours, 40.0);
    assert_eq!(f.p99, Some(2.06));
}

/// A three-day window needing two valid days. 03-01: three trades at 2.00 x 10,
/// one valid day: suppressed (`short_window = "suppress"`, nothing to carry).
/// 03-02 and 03-03 pool both days: 30 GPU-hours at 2.00 and 60 at 2.60, half of 90
/// passed at 2.60, six observations. 03-04's window (03-02 .. 03-04) has one valid
/// day again: the 03-03 value is carried.
#[test]
fn a_pooled_window_needs_its_valid_days() {
    let m = with(|s| {
        s.pooling.window_days = 3;
        s.pooling.min_valid_days = 2;
    });
    let mut rows: Vec<EngineObs> = (0..3).map(|s| trade("2025-03-01", s, 2.00, 10.0)).collect();
    rows.extend((0..3).map(|s| trade("2025-03-02", s, 2.60, 20.0)));
    let out = fix(&rows, &days("2025-03-01", "2025-03-10"), &m);
    assert_eq!(out.len(), 4, "life: 03-01 .. 03-02 + 2 days of carry");
    assert_eq!(out[0].value, None);
    assert_eq!(
        out[0].flags,
        "low_confidence;trade_failed=few_valid_days;suppressed"
    );
    for f in &out[1..3] {
        assert_eq!((f.value, f.n_obs, f.volume_gpu_hours), (Some(2.6), 6, 90.0));
        assert!(f.sufficient);
    }
    assert_eq!(
        (out[3].value, out[3].level),
        (Some(2.6), Some(FixingLevel::Carried))
    );
    assert_eq!(
        out[3].flags,
        "low_confidence;trade_failed=few_valid_days;carried_forward"
    );
}

/// Listing spread, one day needed. 03-01: trades 2.00 and listings 2.50 both fix:
/// ratio 0.8. 03-02 has listings alone at 3.00: 3.00 x 0.8 = 2.40, percentiles
/// scaled alike. Needing two such days, the listings are published unadjusted.
#[test]
fn a_listing_value_is_adjusted_by_the_recent_trade_to_listing_ratio() {
    let mut rows: Vec<EngineObs> = (0..3).map(|s| trade("2025-03-01", s, 2.00, 10.0)).collect();
    rows.extend((0..3).map(|s| listing("2025-03-01", 10 + s, 2.50)));
    rows.extend((0..3).map(|s| listing("2025-03-02", 10 + s, 3.00)));
    let dates = days("2025-03-01", "2025-03-02");
    let m = with(|s| s.fallback.listing_spread = true);
    let out = fix(&rows, &dates, &m);
    assert_eq!((out[0].value, out[0].flags.as_str()), (Some(2.0), ""));
    assert_eq!(out[1].value, Some(2.4));
    assert_eq!(out[1].p25, Some(2.4));
    assert_eq!(out[1].flags, "listing_spread_adjusted;fallback_listing");
    let m = with(|s| {
        s.fallback.listing_spread = true;
        s.fallback.spread_min_days = 2;
    });
    let out = fix(&rows, &dates, &m);
    assert_eq!(out[1].value, Some(3.0));
    assert_eq!(out[1].flags, "listing_spread_unavailable;fallback_listing");
}

/// 03-01 and 06-09 are 100 days apart, more than the 92-day bound: two lives of one
/// day plus a day of carry each, and no rows in between.
#[test]
fn a_long_silence_gives_no_rows_between_two_lives() {
    let m = with(|s| s.fallback.carry_forward_days = 1);
    let rows = [
        trade("2025-03-01", 0, 2.0, 1.0),
        trade("2025-06-09", 0, 2.2, 1.0),
    ];
    let out = fix(&rows, &days("2025-03-01", "2025-06-30"), &m);
    let dates: Vec<NaiveDate> = out.iter().map(|f| f.date).collect();
    assert_eq!(
        dates,
        ["2025-03-01", "2025-03-02", "2025-06-09", "2025-06-10"].map(day)
    );
}

/// Store rows of an A100 grade, outside the pattern `h100-sxm-80gb/*/*`, are not
/// grouped or fixed; a regional H100 row counts in its base grade (regional grades
/// off); the command line's grade filter narrows further.
#[test]
fn observations_outside_the_grade_patterns_are_ignored() {
    let m = with(|s| s.grades.patterns = vec!["h100-sxm-80gb/*/*".into()]);
    let at = "2025-03-03T12:00:00Z";
    let rows = [
        stored(
            1,
            ObservationKind::Trade,
            at,
            "Acme",
            GRADE,
            2.0,
            Some(10.0),
        ),
        stored(
            2,
            ObservationKind::Trade,
            at,
            "Kestrel",
            GRADE,
            2.2,
            Some(10.0),
        ),
        stored(3, ObservationKind::Trade, at, "Zeta", A100, 1.0, Some(10.0)),
        stored(
            4,
            ObservationKind::Trade,
            at,
            "Zeta",
            &format!("{GRADE}@us"),
            2.4,
            Some(10.0),
        ),
    ];
    let req = request(m.clone());
    let grouped = group_by_grade(&rows, &req, &m.cutoff_clock()).unwrap();
    assert_eq!(grouped.grades.keys().collect::<Vec<_>>(), [GRADE]);
    assert_eq!(grouped.grades[GRADE].len(), 3);
    assert_eq!(grouped.sources.len(), 3, "Zeta's regional row counts");
    let out = run(&rows, &req);
    assert!(out.iter().all(|f| f.grade == GRADE), "{out:?}");
    // 2.0, 2.2, 2.4 at 10 GPU-hours each: half of 30 passed at 2.2.
    assert_eq!(out[0].value, Some(2.2));

    let narrowed = IndexRequest {
        grade_filters: vec![GradePattern::new("*/vm/*").unwrap()],
        ..req
    };
    assert!(run(&rows, &narrowed).is_empty());
}

/// A grade with no observation has no entry and no row; a grade whose only trades
/// are smaller than `min_trade_gpu_hours` has none either, and the grouping counts
/// what it left out.
#[test]
fn a_grade_without_observations_yields_no_rows() {
    let m = base();
    let dates = days("2025-03-01", "2025-03-05");
    assert!(fix_grade(GRADE, &[], &dates, &m, m.day_rule()).is_empty());
    let groups = BTreeMap::from([(A100.to_string(), vec![trade("2025-03-02", 0, 1.0, 5.0)])]);
    let rows = fix_all(&groups, &dates, &m, m.day_rule());
    assert_eq!(rows.len(), 3, "03-02 and two days of carry");
    assert!(rows.iter().all(|f| f.grade == A100));

    let clipped = with(|s| s.inputs.min_trade_gpu_hours = 1.0);
    let tiny = [trade("2025-03-02", 0, 2.0, 0.5)];
    assert!(fix(&tiny, &dates, &clipped).is_empty());
    let at = "2025-03-02T10:00:00Z";
    let store = [
        stored(1, ObservationKind::Trade, at, "Acme", GRADE, 2.0, Some(0.5)),
        stored(2, ObservationKind::Trade, at, "Acme", A100, 1.0, Some(4.0)),
    ];
    let req = request(clipped);
    let grouped = group_by_grade(&store, &req, &req.methodology.cutoff_clock()).unwrap();
    assert_eq!(grouped.grades.keys().collect::<Vec<_>>(), [A100]);
    assert_eq!(grouped.below_clip, 1);
}

/// Rows in any order give the same fixings: the engine sorts before it computes
/// and contributor ids follow names, not arrival.
#[test]
fn shuffled_rows_give_identical_fixings() {
    let m = with(|s| s.contributors.max_share = 0.5);
    let names = ["Acme", "Kestrel", "Zeta", "Borealis"];
    let mut rows = Vec::new();
    for (n, i) in (1..).zip(0..24) {
        let kind = [
            ObservationKind::Trade,
            ObservationKind::Firm,
            ObservationKind::Listing,
        ][i % 3];
        let at = format!("2025-03-0{}T{:02}:00:00Z", 1 + i % 4, i % 24);
        let grade = if i % 5 == 0 { A100 } else { GRADE };
        let price = 2.0 + (i * 7 % 11) as f64 / 10.0;
        rows.push(stored(
            n,
            kind,
            &at,
            names[i % 4],
            grade,
            price,
            Some(1.0 + i as f64),
        ));
    }
    let req = request(m);
    let want = run(&rows, &req);
    assert!(want.iter().any(|f| f.grade == A100) && want.iter().any(|f| f.grade == GRADE));
    let mut reversed = rows.clone();
    reversed.reverse();
    assert_eq!(run(&reversed, &req), want);
    // A fixed permutation: every seventh row, wrapping (7 and 24 are coprime).
    let shuffled: Vec<StoredObservation> = (0..24).map(|i| rows[i * 7 % 24].clone()).collect();
    assert_eq!(run(&shuffled, &req), want);
    let sorted = |v: &[Fixing]| {
        v.windows(2)
            .all(|w| (w[0].date, &w[0].grade) < (w[1].date, &w[1].grade))
    };
    assert!(sorted(&want), "rows sorted by date, then grade");
}

/// On the US exchange calendar the run's dates skip Good Friday 2025-04-18 and the
/// weekend: Thursday 04-17, Monday 04-21 and Tuesday 04-22; `to` extends the run
/// past the last observation and `from` starts it later.
#[test]
fn fixing_dates_on_a_business_calendar_skip_weekends_and_holidays() {
    let m = with(|s| {
        s.calendar.days = "business".into();
        s.calendar.holidays = "us-exchange".into();
    });
    let groups = BTreeMap::from([(
        GRADE.to_string(),
        vec![
            trade("2025-04-17", 0, 2.0, 1.0),
            trade("2025-04-22", 0, 2.0, 1.0),
        ],
    )]);
    let rule = m.day_rule();
    let req = request(m.clone());
    assert_eq!(
        fixing_dates(&groups, &req, rule),
        ["2025-04-17", "2025-04-21", "2025-04-22"].map(day)
    );
    let later = IndexRequest {
        from: Some(day("2025-04-19")),
        to: Some(day("2025-04-28")),
        ..req
    };
    assert_eq!(
        fixing_dates(&groups, &later, rule),
        [
            "2025-04-21",
            "2025-04-22",
            "2025-04-23",
            "2025-04-24",
            "2025-04-25",
            "2025-04-28"
        ]
        .map(day)
    );
    assert!(fixing_dates(&BTreeMap::new(), &later, rule).is_empty());
}

/// A 16:00 New York cut-off: on Thursday 2025-04-17 (EDT, UTC-4) a trade at 19:30Z
/// (15:30) fixes that day, one at 21:30Z (17:30) the next, Good Friday; rolled to
/// the next publication day, Monday 04-21.
#[test]
fn the_cutoff_and_the_roll_give_each_observation_its_fixing_date() {
    let edit = |roll: Roll| {
        with(move |s| {
            s.calendar.cutoff = "16:00".into();
            s.calendar.timezone = "America/New_York".into();
            s.calendar.days = "business".into();
            s.calendar.holidays = "us-exchange".into();
            s.calendar.roll = roll;
        })
    };
    let rows = [
        stored(
            1,
            ObservationKind::Trade,
            "2025-04-17T19:30:00Z",
            "Acme",
            GRADE,
            2.0,
            Some(1.0),
        ),
        stored(
            2,
            ObservationKind::Trade,
            "2025-04-17T21:30:00Z",
            "Acme",
            GRADE,
            2.1,
            Some(1.0),
        ),
    ];
    for (roll, late) in [
        (Roll::None, "2025-04-18"),
        (Roll::NextPublicationDay, "2025-04-21"),
    ] {
        let req = request(edit(roll));
        let g = group_by_grade(&rows, &req, &req.methodology.cutoff_clock()).unwrap();
        let by_price: Vec<(f64, NaiveDate)> =
            g.grades[GRADE].iter().map(|o| (o.price, o.day)).collect();
        assert_eq!(
            by_price,
            [(2.0, day("2025-04-17")), (2.1, day(late))],
            "{roll:?}"
        );
    }
}

/// Screening weights: unweighted, the aggregation's raw weights (GPU-hours, 1 for a
/// listing). Weighted with a 35% cap over 100, 100 and 1000 GPU-hours: the largest
/// is capped to x = 0.35 x 200 / (1 - 0.35) = 107.6923 (x / (200 + x) = 0.35).
/// With two contributors (fewer than 1 / 0.35) the cap cannot hold: equal shares
/// give each half of 1100, proportional leaves the weights as they are.
#[test]
fn screening_weights_are_the_aggregation_weights_capped_when_weighted() {
    let d = "2025-03-03";
    let three = [
        trade(d, 0, 2.0, 100.0),
        trade(d, 1, 2.1, 100.0),
        trade(d, 2, 2.2, 1000.0),
    ];
    let mut mixed = three.to_vec();
    mixed.push(listing(d, 3, 2.5));
    assert_eq!(
        screening_weights(mixed.iter(), &base()),
        [100.0, 100.0, 1000.0, 1.0]
    );
    let capped = |rule: TooFewForCap| {
        with(move |s| {
            s.outliers.weighted = true;
            s.contributors.max_share = 0.35;
            s.contributors.too_few_for_cap = rule;
        })
    };
    for rule in [TooFewForCap::EqualShares, TooFewForCap::Proportional] {
        let w = screening_weights(three.iter(), &capped(rule));
        assert_eq!(&w[..2], [100.0, 100.0], "{rule:?}");
        assert!((w[2] - 70.0 / 0.65).abs() < 1e-9, "{rule:?}: {w:?}");
    }
    let two = [trade(d, 0, 2.0, 100.0), trade(d, 2, 2.2, 1000.0)];
    let equal = screening_weights(two.iter(), &capped(TooFewForCap::EqualShares));
    assert!(equal.iter().all(|w| (w - 550.0).abs() < 1e-9), "{equal:?}");
    assert_eq!(
        screening_weights(two.iter(), &capped(TooFewForCap::Proportional)),
        [100.0, 1000.0]
    );
}

/// With `window_unit = "publication-days"` the lag counts publication days
/// (docs/methodology.md, step 1): on business days with a lag of 1, Monday
/// 2025-03-10's window is Friday 03-07, so Friday's trades fix Monday (no carry
/// needed). 2.0 x 10 and 2.4 x 30: half of 40 reached at 2.4.
#[test]
fn a_lag_in_publication_days_fixes_the_next_publication_day() {
    let m = with(|s| {
        s.calendar.days = "business".into();
        s.pooling.window_unit = WindowUnit::PublicationDays;
        s.pooling.lag_days = 1;
        s.fallback.carry_forward_days = 0;
    });
    assert_eq!(
        m.window_of(day("2025-03-10"), Some(m.day_rule())),
        (day("2025-03-07"), day("2025-03-07"))
    );
    let rows = vec![
        trade("2025-03-07", 0, 2.0, 10.0),
        trade("2025-03-07", 1, 2.4, 30.0),
    ];
    let groups = BTreeMap::from([(GRADE.to_string(), rows.clone())]);
    // The run's dates must reach Monday, and given Monday, the grade must fix it.
    let dates = fixing_dates(&groups, &request(m.clone()), m.day_rule());
    let mut publication = days("2025-03-07", "2025-03-14");
    publication.retain(|d| m.day_rule().counts(*d));
    let out = fix(&rows, &publication, &m);
    let monday = out.iter().find(|f| f.date == day("2025-03-10"));
    assert!(
        dates.contains(&day("2025-03-10")) && monday.and_then(|f| f.value) == Some(2.4),
        "dates {dates:?}, rows {out:?}"
    );
}

/// Rows prepared a batch at a time (on other threads, as the one-shot prepares a
/// date's rows) group as the rows added at once, however they are cut: the same
/// grades and rows, contributors, and trades left out below the minimum size
/// (counted within the counted days only). A key that is not 32 hexadecimal digits
/// is refused on the first row that feeds a grade and is not left out, naming it,
/// wherever the batch starts; the same key on a row of a grade no pattern takes,
/// or on a clipped trade, is never read.
#[test]
fn rows_prepared_in_batches_group_as_rows_added_at_once() {
    let m = with(|s| s.inputs.min_trade_gpu_hours = 1.0);
    let req = request(m);
    let names = ["Acme", "Kestrel", "Zeta"];
    let regional = format!("{GRADE}@us");
    let grades = [GRADE, A100, regional.as_str()];
    let mut rows = Vec::new();
    for n in 0..60u64 {
        let at = format!("2025-03-{:02}T{:02}:00:00Z", 1 + n / 12, n % 24);
        let kind = [ObservationKind::Trade, ObservationKind::Listing][(n % 2) as usize];
        // Every fifth trade is below the minimum size.
        let quantity = if n % 5 == 0 { 0.5 } else { 4.0 };
        let grade = grades[(n / 4 % 3) as usize];
        let source = names[(n % 3) as usize];
        rows.push(stored(
            n + 1,
            kind,
            &at,
            source,
            grade,
            2.0 + n as f64 / 100.0,
            Some(quantity),
        ));
    }
    let whole = |from: Option<NaiveDate>| {
        let mut g = GradeGrouper::new(&req, req.methodology.cutoff_clock()).unwrap();
        g.count_clipped_within(from, None);
        g.add(&rows).unwrap();
        g.finish()
    };
    for from in [None, Some(day("2025-03-03"))] {
        let at_once = whole(from);
        assert!(at_once.below_clip > 0, "the case clips trades");
        for size in [1, 2, 7, 13, 60] {
            let mut g = GradeGrouper::new(&req, req.methodology.cutoff_clock()).unwrap();
            g.count_clipped_within(from, None);
            let preparer = g.preparer();
            let batches: Vec<PreparedRows> = rows
                .par_chunks(size)
                .map(|batch| preparer.prepare(batch))
                .collect();
            for batch in batches {
                g.add_prepared(batch).unwrap();
            }
            let cut = g.finish();
            assert_eq!(
                cut.grades, at_once.grades,
                "batches of {size}, from {from:?}"
            );
            assert_eq!(cut.sources, at_once.sources, "batches of {size}");
            assert_eq!(cut.below_clip, at_once.below_clip, "batches of {size}");
        }
    }
    // The clipped trades: n = 0, 10, 20, 30, 40, 50, on March 1, 1, 2, 3, 4, 5
    // (day 1 + n / 12).
    assert_eq!(whole(None).below_clip, 6, "every day");
    assert_eq!(whole(Some(day("2025-03-03"))).below_clip, 3, "from 03-03");

    let bad = |n: usize| {
        let mut rows = rows.clone();
        rows[n].dedupe_key = "not-a-key".into();
        rows
    };
    // Row n = 0 is a clipped trade; n = 1 is the first row kept.
    for size in [1, 3, 60] {
        let rows = bad(1);
        let mut g = GradeGrouper::new(&req, req.methodology.cutoff_clock()).unwrap();
        let preparer = g.preparer();
        let mut err = None;
        for batch in rows.chunks(size) {
            if let Err(e) = g.add_prepared(preparer.prepare(batch)) {
                err = Some(e.to_string());
                break;
            }
        }
        let err = err.expect("a bad key is refused");
        assert!(
            err.contains("\"not-a-key\"") && err.contains("2025-03-01"),
            "{err}"
        );
    }
    let mut g = GradeGrouper::new(&req, req.methodology.cutoff_clock()).unwrap();
    g.add(&bad(0)).expect("a clipped trade's key is never read");
}
