//! A composite obeys the grades' publication rules: its contributors are counted
//! across the observations it uses, and a composite of suppressed grades is
//! suppressed. The case of issue 24: every grade suppressed for too few
//! contributors, and the hedonic composite still published 100 -> 110 as
//! sufficient with 0 contributors.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a failed unwrap is a failed test

use chrono::NaiveDate;
use rentix_core::ObservationKind;
use rentix_index::{
    compute_grouped, EngineObs, Grouped, IndexRequest, Methodology, ObsKey, SourceId,
};
use std::collections::BTreeMap;
use std::path::Path;

const HEDONIC: &str = "gpu-hour/quality-adjusted/on-demand";

fn d(day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2025, 3, day).unwrap()
}

/// Two grades, two contributors each (four in all), ten listings a contributor a
/// day; every price 10% higher on the second day: the hedonic link is exactly 110.
fn grouped() -> Grouped {
    let mut grades = BTreeMap::new();
    for (g, (grade, base)) in [
        ("a100-sxm-80gb/vm/on-demand", 1.50),
        ("h100-sxm-80gb/vm/on-demand", 2.50),
    ]
    .into_iter()
    .enumerate()
    {
        let mut v = Vec::new();
        for (day, factor) in [(d(3), 1.0), (d(4), 1.1)] {
            for c in 0..2u32 {
                let source = SourceId(2 * g as u32 + c);
                for i in 0..10 {
                    v.push(EngineObs {
                        day,
                        kind: ObservationKind::Listing,
                        source,
                        price: (base + 0.01 * f64::from(c)) * factor,
                        quantity: 0.0,
                        key: ObsKey::digest(&format!("{grade}-{day}-{c}-{i}")),
                        tier: None,
                    });
                }
            }
        }
        rentix_index::sort_obs(&mut v);
        grades.insert(grade.to_string(), v);
    }
    Grouped {
        grades,
        ..Grouped::default()
    }
}

fn methodology(contributors: &str) -> Methodology {
    let text = format!(
        r#"
version = "composite-rules-test"
name = "composite rules"
forward_curve = false
[calendar]
cutoff = "24:00"
timezone = "UTC"
days = "all"
[grades]
patterns = ["*/*/*"]
[inputs]
hierarchy = ["listing"]
min_obs = {{ listing = 1 }}
[aggregation]
method = "median"
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
carry_forward_days = 0
[contributors]
max_share = 1.0
{contributors}
[rounding]
decimals = 4
[[composite]]
name = "{HEDONIC}"
method = "hedonic"
patterns = ["*/*/on-demand"]
"#
    );
    Methodology::from_toml(&text, Path::new("composite-rules-test.toml")).unwrap()
}

fn hedonic_rows(m: Methodology) -> Vec<rentix_index::Fixing> {
    let req = IndexRequest {
        methodology: m,
        grade_filters: Vec::new(),
        from: None,
        to: None,
    };
    let r = compute_grouped(grouped(), &req).unwrap();
    let grades: Vec<_> = r.fixings.iter().filter(|f| f.grade != HEDONIC).collect();
    assert_eq!(grades.len(), 4);
    r.fixings
        .iter()
        .filter(|f| f.grade == HEDONIC)
        .cloned()
        .collect()
}

#[test]
fn a_hedonic_composite_of_suppressed_grades_is_suppressed() {
    // Four contributors needed, suppressed below: each grade (two contributors)
    // is suppressed; the composite counts four across its 40 observations a day,
    // enough on its own, but its grades were all withheld.
    let rows = hedonic_rows(methodology(
        "min_contributors = 4\nbelow_minimum = \"suppress\"",
    ));
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert_eq!(r.value, None, "{r:?}");
        assert!(!r.sufficient);
        assert_eq!(r.n_contributors, 4);
        assert_eq!(r.n_obs, 40);
        assert!(r.flags.contains("suppressed"), "{}", r.flags);
        assert!(r.flags.contains("components_suppressed"), "{}", r.flags);
    }
}

#[test]
fn a_hedonic_composite_counts_its_contributors() {
    // Grades published (two contributors, minimum 2): 100 then 110 (every price up
    // 10%: the time dummy is ln 1.1), four contributors, sufficient.
    let rows = hedonic_rows(methodology("min_contributors = 2"));
    let values: Vec<_> = rows.iter().map(|r| r.value).collect();
    assert_eq!(values, vec![Some(100.0), Some(110.0)]);
    assert!(rows.iter().all(|r| r.sufficient && r.n_contributors == 4));
    // Five needed, published flagged (the default below_minimum): the grades are
    // published flagged, and so is the composite: 4 < 5.
    let rows = hedonic_rows(methodology("min_contributors = 5"));
    assert_eq!(rows[1].value, Some(110.0));
    assert!(!rows[1].sufficient);
    assert!(
        rows[1].flags.contains("few_contributors"),
        "{}",
        rows[1].flags
    );
    // Five needed, suppressed below: suppressed, saying why.
    let rows = hedonic_rows(methodology(
        "min_contributors = 5\nbelow_minimum = \"suppress\"",
    ));
    assert!(rows.iter().all(|r| r.value.is_none()));
    assert!(
        rows[0].flags.contains("few_contributors"),
        "{}",
        rows[0].flags
    );
}
