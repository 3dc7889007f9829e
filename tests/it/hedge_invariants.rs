//! Hedge numbers whose answer is known without the code, on the shapes users bring:
//! daily rows, weekly rows, monthly invoices with exclusive or inclusive ends, paid or
//! earned. A rent equal to the contract's settlement every month is hedged perfectly
//! by one-to-one, walk-forward and layered hedges; so is the same rent plus a constant
//! premium; a rent moving against the index fails the accounting test.

use crate::csvutil::rows;
use crate::util::{p, rentix, rentix_ok};
use chrono::{Datelike, Days, Months, NaiveDate};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const GRADE: &str = "h100-sxm-80gb/bare-metal/on-demand";
/// Contract size 730 x 10: every month's exposure is a whole number of contracts.
const MONTHLY_GPU_HOURS: f64 = 7300.0;

fn d(s: &str) -> NaiveDate {
    NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
}

/// The default contract's tick rule (0.001), as the settlement applies it.
fn to_tick(x: f64) -> f64 {
    (((x / 0.001).round() * 0.001) * 1e9).round() / 1e9
}

/// A daily index 2023-01..2025-12 (a seeded random walk on 4 decimals), written as a
/// fixings file with every fixing sufficient, and each month's settlement (the
/// monthly average of all days, on the tick).
fn index_file(dir: &Path) -> (PathBuf, BTreeMap<NaiveDate, f64>) {
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    let mut v: f64 = 2.40;
    let mut text = String::from(
        "date,grade,value,method,level,n_obs,n_trades,n_firm,n_listings,n_contributors,volume_gpu_hours,p25,p75,max_contributor_share,sufficient,flags,methodology_version,input_sha256,p1,p99,publication\n",
    );
    let mut by_month: BTreeMap<NaiveDate, Vec<f64>> = BTreeMap::new();
    let mut day = d("2023-01-01");
    while day < d("2026-01-01") {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let u = (state % 10_000) as f64 / 10_000.0 - 0.5;
        v = ((v * (1.0 + 0.02 * u) - 0.0004) * 10_000.0).round() / 10_000.0;
        text.push_str(&format!(
            "{day},{GRADE},{v},vw-median,1,5,5,0,0,5,500,{v},{v},0.2,true,,test-1,x,{v},{v},1\n"
        ));
        by_month
            .entry(day.with_day(1).unwrap())
            .or_default()
            .push(v);
        day = day + Days::new(1);
    }
    let path = dir.join("fixings.csv");
    std::fs::write(&path, text).unwrap();
    let settlement = by_month
        .into_iter()
        .map(|(m, vs)| (m, to_tick(vs.iter().sum::<f64>() / vs.len() as f64)))
        .collect();
    (path, settlement)
}

#[derive(Clone, Copy, Debug)]
enum Shape {
    Daily,
    Weekly,
    Monthly,
    MonthlyInclusive,
}

/// A rent file of `shape` for 2024-01..2025-12 at `price(settlement)` each month,
/// `MONTHLY_GPU_HOURS` a month.
fn rent_file(
    dir: &Path,
    shape: Shape,
    side: &str,
    price: impl Fn(f64) -> f64,
    s: &BTreeMap<NaiveDate, f64>,
) -> PathBuf {
    let mut text = String::from("period_start,period_end,usd_per_gpu_hour,gpu_hours,side\n");
    let mut m = d("2024-01-01");
    while m < d("2026-01-01") {
        let next = m + Months::new(1);
        let days = (next - m).num_days() as f64;
        let px = price(s[&m]);
        let mut rows: Vec<(NaiveDate, NaiveDate)> = Vec::new();
        match shape {
            Shape::Daily => {
                let mut x = m;
                while x < next {
                    rows.push((x, x + Days::new(1)));
                    x = x + Days::new(1);
                }
            }
            Shape::Weekly => {
                let mut x = m;
                while x < next {
                    let e = (x + Days::new(7)).min(next);
                    rows.push((x, e));
                    x = e;
                }
            }
            Shape::Monthly | Shape::MonthlyInclusive => rows.push((m, next)),
        }
        for (a, b) in rows {
            let hours = MONTHLY_GPU_HOURS * (b - a).num_days() as f64 / days;
            let end = match shape {
                Shape::MonthlyInclusive => b - Days::new(1),
                _ => b,
            };
            text.push_str(&format!("{a},{end},{px},{hours},{side}\n"));
        }
        m = next;
    }
    let path = dir.join(format!("rent_{shape:?}_{side}.csv"));
    std::fs::write(&path, text).unwrap();
    path
}

fn backtest(
    index: &Path,
    rent: &Path,
    out: &Path,
    extra: &[&str],
) -> (Value, Vec<BTreeMap<String, String>>) {
    let mut args = vec![
        "backtest",
        "--index",
        p(index),
        "--rent",
        p(rent),
        "--underlying",
        GRADE,
        "--out",
        p(out),
        "--resamples",
        "0",
    ];
    args.extend(extra);
    rentix_ok(&args);
    let s =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    (s, rows(&out.join("periods.csv")))
}

fn num(r: &BTreeMap<String, String>, k: &str) -> f64 {
    r[k].parse().unwrap_or_else(|_| panic!("{k}: {:?}", r[k]))
}

/// Effectiveness 1 for the three hedging strategies, no basis P&L, no carry.
fn assert_perfect(s: &Value, periods: &[BTreeMap<String, String>], what: &str) {
    for st in ["one-to-one", "walk-forward", "layered"] {
        let e = s["strategies"][st]["effectiveness"].as_f64().unwrap();
        assert!((e - 1.0).abs() < 1e-9, "{what}: {st} effectiveness {e}");
    }
    assert!(
        s["periods"].as_u64().unwrap() >= 22,
        "{what}: {}",
        s["periods"]
    );
    for r in periods {
        assert!(num(r, "basis_pnl").abs() < 1e-6, "{what}: basis {r:?}");
        assert!(
            num(r, "entry_carry_pnl").abs() < 1e-9,
            "{what}: carry {r:?}"
        );
    }
    let layered: Vec<_> = periods
        .iter()
        .filter(|r| r["strategy"] == "layered")
        .collect();
    assert_eq!(
        layered.last().unwrap()["tranches"],
        "3",
        "{what}: three tranches"
    );
}

#[test]
fn a_rent_equal_to_the_settlement_is_hedged_perfectly_in_every_shape() {
    let dir = tempfile::tempdir().unwrap();
    let (index, s) = index_file(dir.path());
    for shape in [
        Shape::Daily,
        Shape::Weekly,
        Shape::Monthly,
        Shape::MonthlyInclusive,
    ] {
        for side in ["pay", "earn"] {
            let extra: &[&str] = match shape {
                Shape::MonthlyInclusive => &["--period-end", "inclusive"],
                _ => &[],
            };
            let what = format!("{shape:?} {side}");
            let rent = rent_file(dir.path(), shape, side, |x| x, &s);
            let out = dir.path().join(format!("bt_{shape:?}_{side}"));
            let (sum, periods) = backtest(&index, &rent, &out, extra);
            assert_perfect(&sum, &periods, &what);
            // The same rent plus a constant premium: levels differ, changes do not.
            let rent = rent_file(dir.path(), shape, side, |x| x + 0.37, &s);
            let (sum, periods) = backtest(&index, &rent, &out, extra);
            assert_perfect(&sum, &periods, &format!("{what} + premium"));
            let basis = sum["strategies"]["one-to-one"]["basis"]["mean"]
                .as_f64()
                .unwrap();
            assert!((basis - 0.37).abs() < 1e-9, "{what}: basis level {basis}");
        }
    }
}

#[test]
fn a_rent_moving_against_the_index_fails_the_accounting_test() {
    let dir = tempfile::tempdir().unwrap();
    let (index, s) = index_file(dir.path());
    let rent = rent_file(dir.path(), Shape::Monthly, "pay", |x| 5.0 - x, &s);
    let (sum, _) = backtest(&index, &rent, &dir.path().join("bt"), &[]);
    let st = &sum["strategies"]["one-to-one"];
    let reg = &st["regression"];
    // The rent's changes run against the index's (its basis moves by twice the index
    // change, so the slope is not exactly -1): the hedge adds risk and fails.
    assert!(reg["slope"].as_f64().unwrap() < -0.5, "{reg}");
    assert_eq!(reg["passes_80_125"], false, "a negative slope is no hedge");
    assert!(st["effectiveness"].as_f64().unwrap() < 0.0, "{st}");
}

#[test]
fn an_entry_premium_is_carry_and_leaves_effectiveness_whole() {
    let dir = tempfile::tempdir().unwrap();
    let (index, s) = index_file(dir.path());
    let rent = rent_file(dir.path(), Shape::Monthly, "pay", |x| x, &s);
    let (sum, periods) = backtest(
        &index,
        &rent,
        &dir.path().join("bt"),
        &["--entry", "premium", "--strategy", "one-to-one"],
    );
    let e = sum["strategies"]["one-to-one"]["effectiveness"]
        .as_f64()
        .unwrap();
    assert!((e - 1.0).abs() < 1e-9, "{e}");
    for r in &periods {
        assert!(num(r, "basis_pnl").abs() < 1e-6, "{r:?}");
        // A payer long 10 contracts entered 0.05 over the index: -0.05 x 7300.
        assert!((num(r, "entry_carry_pnl") + 365.0).abs() < 1e-6, "{r:?}");
    }
}

#[test]
fn invoice_ends_read_as_exclusive_name_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let (index, s) = index_file(dir.path());
    let rent = rent_file(dir.path(), Shape::MonthlyInclusive, "pay", |x| x, &s);
    let o = rentix(&[
        "backtest",
        "--index",
        p(&index),
        "--rent",
        p(&rent),
        "--underlying",
        GRADE,
        "--out",
        p(&dir.path().join("x")),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("one day before the next") && err.contains("--period-end inclusive"),
        "{err}"
    );
}

#[test]
fn months_without_enough_qualifying_fixings_do_not_settle_and_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let (index, s) = index_file(dir.path());
    // Mark March 2025 insufficient except on 5 days.
    let text = std::fs::read_to_string(&index).unwrap();
    let edited: String = text
        .lines()
        .map(|l| {
            if l.starts_with("2025-03-")
                && ![
                    "2025-03-01",
                    "2025-03-02",
                    "2025-03-03",
                    "2025-03-04",
                    "2025-03-05",
                ]
                .iter()
                .any(|x| l.starts_with(x))
            {
                l.replace(",true,,", ",false,low_confidence,")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    std::fs::write(&index, edited).unwrap();
    let rent = rent_file(dir.path(), Shape::Monthly, "pay", |x| x, &s);
    let (sum, periods) = backtest(&index, &rent, &dir.path().join("bt"), &[]);
    assert!(periods.iter().all(|r| r["period_start"] != "2025-03-01"));
    let left: Vec<&Value> = sum["months_left_out"].as_array().unwrap().iter().collect();
    let march = left
        .iter()
        .find(|l| l["month"] == "2025-03-01")
        .expect("March listed");
    assert!(
        march["reason"].as_str().unwrap().contains("5 of the 31"),
        "{march}"
    );
    // April is still hedged: its basis comes from February, the last one observed.
    assert!(periods.iter().any(|r| r["period_start"] == "2025-04-01"));
}

#[test]
fn a_composite_is_rebased_never_given_a_usd_basis() {
    let dir = tempfile::tempdir().unwrap();
    let (index, s) = index_file(dir.path());
    // Add a chained composite: the same index in points, base 100.
    let text = std::fs::read_to_string(&index).unwrap();
    let mut out = text.clone();
    let first: f64 = text
        .lines()
        .nth(1)
        .unwrap()
        .split(',')
        .nth(2)
        .unwrap()
        .parse()
        .unwrap();
    for l in text.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        let pts = f[2].parse::<f64>().unwrap() / first * 100.0;
        out.push_str(&format!(
            "{},blend,{pts},jevons-chained,1,5,5,0,0,5,500,,,,true,,test-1,x,,,1\n",
            f[0]
        ));
    }
    std::fs::write(&index, out).unwrap();
    let rent = rent_file(dir.path(), Shape::Monthly, "pay", |x| x, &s);
    let bt = dir.path().join("bt");
    rentix_ok(&[
        "backtest",
        "--index",
        p(&index),
        "--rent",
        p(&rent),
        "--underlying",
        "blend",
        "--out",
        p(&bt),
        "--resamples",
        "0",
    ]);
    let sum: Value =
        serde_json::from_str(&std::fs::read_to_string(bt.join("summary.json")).unwrap()).unwrap();
    assert_eq!(sum["underlying_unit"], "points");
    assert!(sum["rebase_usd_per_point"].as_f64().unwrap() > 0.0);
    assert!(
        sum["strategies"]["one-to-one"]["basis"].is_null(),
        "no USD basis for points"
    );
    assert!(
        sum["strategies"]["one-to-one"]["effectiveness"]
            .as_f64()
            .unwrap()
            > 0.99
    );
    let track = dir.path().join("track.csv");
    rentix_ok(&[
        "track",
        "--index",
        p(&index),
        "--rent",
        p(&rent),
        "--resamples",
        "100",
        "--out",
        p(&track),
    ]);
    let ranked = rows(&track);
    let blend = ranked.iter().find(|r| r["grade"] == "blend").unwrap();
    assert_eq!(blend["unit"], "points");
    assert_eq!(
        blend["basis_mean"], "",
        "a composite never reports a USD basis"
    );
    assert!(blend["note"].contains("rebased"), "{blend:?}");
    let grade = ranked.iter().find(|r| r["grade"] == GRADE).unwrap();
    assert_eq!(grade["unit"], "usd-per-gpu-hour");
    assert!((num(grade, "basis_mean")).abs() < 1e-9);
}
