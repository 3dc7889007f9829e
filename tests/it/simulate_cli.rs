//! `rentix simulate`: same seed, same bytes; every row accounted for by ingest; the
//! trades centre on the truth and listings sit above it.

use crate::csvutil::{rows, series};
use crate::fixture::market;
use crate::util::{p, rentix_ok};
use std::collections::BTreeMap;

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, seed: &str| {
        let out = dir.path().join(name);
        rentix_ok(&["simulate", "--out", p(&out), "--seed", seed, "--days", "60"]);
        out
    };
    let (a, b, c) = (run("a", "5"), run("b", "5"), run("c", "6"));
    let mut files: Vec<_> = std::fs::read_dir(&a)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    files.sort();
    assert!(files.len() >= 13, "{files:?}");
    for f in &files {
        assert_eq!(
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
            "{f:?}"
        );
    }
    assert_ne!(
        std::fs::read(a.join("observations.csv")).unwrap(),
        std::fs::read(c.join("observations.csv")).unwrap()
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["seed"], 5);
    assert_eq!(manifest["params"]["days"], 60);
}

/// The shipped market's first GPU (the A100) launches on 2020-11-16: a month of
/// January 2020 has no observation to write, and says so instead of writing an
/// empty file (it used to print "wrote 0 observations" and exit 0).
#[test]
fn a_period_before_every_launch_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s");
    let o = crate::util::rentix(&[
        "simulate",
        "--out",
        p(&out),
        "--start",
        "2020-01-01",
        "--days",
        "30",
    ]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no GPU is on the market from 2020-01-01 to 2020-01-30")
            && err.contains("2020-11-16"),
        "{err}"
    );
    assert!(!out.join("observations.csv").exists());
}

/// A period that runs past today writes rows ingest will quarantine as future-dated:
/// the simulator says so (a 10M-row benchmark from 2025 lost a third of its rows
/// that way without a word), and a period in the past says nothing.
#[test]
fn a_period_past_today_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let today = chrono::Utc::now().date_naive();
    let start = today - chrono::Days::new(10);
    let run = |days: &str, name: &str| {
        crate::util::rentix(&[
            "simulate",
            "--out",
            p(&dir.path().join(name)),
            "--start",
            &start.to_string(),
            "--days",
            days,
            "--rows",
            "2000",
        ])
    };
    let o = run("30", "future");
    assert!(o.status.success(), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    // 30 days from today - 10 end on today + 19, 17 days past today + 2.
    assert!(
        err.contains("warning: the simulated period")
            && err.contains("runs 17 day(s) past")
            && err.contains("implausible_date"),
        "{err}"
    );
    let o = run("5", "past");
    assert!(o.status.success(), "{o:?}");
    assert!(!String::from_utf8_lossy(&o.stderr).contains("warning"));
}

#[test]
fn rows_flag_scales_the_market() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s");
    rentix_ok(&[
        "simulate",
        "--out",
        p(&out),
        "--days",
        "30",
        "--rows",
        "20000",
    ]);
    let n = rows(&out.join("observations.csv")).len() as f64;
    assert!(
        (n - 20000.0).abs() / 20000.0 < 0.1,
        "{n} rows for a 20000 target"
    );
}

#[test]
fn ingest_accounts_for_every_simulated_row() {
    let m = market();
    let n_rows = rows(&m.sim("observations.csv")).len() as u64;
    let run = std::fs::read_to_string(m.store().join("runs/run-000001.json")).unwrap();
    let s: serde_json::Value = serde_json::from_str(&run).unwrap();
    let g = |k: &str| s[k].as_u64().unwrap();
    assert_eq!(g("rows_read"), n_rows);
    assert_eq!(
        g("rows_read"),
        g("accepted") + g("quarantined") + g("duplicates")
    );
    assert!(
        g("quarantined") > 0 && g("duplicates") > 0,
        "the feed's noise is present: {s}"
    );
    for reason in [
        "non_finite_price",
        "unknown_gpu",
        "unparseable_date",
        "missing_quantity",
    ] {
        assert!(
            s["quarantined_by_reason"][reason].as_u64().unwrap_or(0) > 0,
            "{reason}"
        );
    }
}

#[test]
fn trades_centre_on_truth_and_listings_sit_above_it() {
    let m = market();
    let grade = "h100-sxm-80gb/bare-metal/on-demand";
    let truth = series(&m.sim("truth.csv"), grade, "fair_usd_per_gpu_hour");
    // Volume-weighted median of each day's trades, straight from the simulated file.
    let mut trades: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut listing_ratio = Vec::new();
    let mut trade_ratio = Vec::new();
    for r in rows(&m.sim("observations.csv")) {
        let h100 = ["h100-sxm-80gb", "NVIDIA H100 80GB HBM3", "H100_80GB SXM5"]
            .contains(&r["gpu"].as_str());
        let is_grade = h100 && r["scope"] == "bare-metal" && r["term"] == "on-demand";
        if !is_grade || r["price_unit"] != "gpu_hour" || r["currency"] != "USD" {
            continue;
        }
        let (Ok(price), Some(t)) = (
            r["price"].parse::<f64>(),
            truth.get(&r["observed_at"][..10]),
        ) else {
            continue;
        };
        if price.is_nan() || price <= 0.0 {
            continue;
        }
        match r["kind"].as_str() {
            "trade" => {
                let q: f64 = r["quantity_gpu_hours"].parse().unwrap_or(0.0);
                trades
                    .entry(r["observed_at"][..10].to_string())
                    .or_default()
                    .push((price, q));
                trade_ratio.push(price / t);
            }
            "listing" => listing_ratio.push(price / t),
            _ => {}
        }
    }
    let mut errs = Vec::new();
    for (day, mut v) in trades {
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        let total: f64 = v.iter().map(|x| x.1).sum();
        let mut cum = 0.0;
        let vwm = v.iter().find(|x| {
            cum += x.1;
            cum >= total / 2.0
        });
        if let (Some(w), Some(t)) = (vwm, truth.get(&day)) {
            errs.push(w.0 / t - 1.0);
        }
    }
    assert!(
        errs.len() > 500,
        "the liquid grade trades most days: {}",
        errs.len()
    );
    let mean_abs = errs.iter().map(|e| e.abs()).sum::<f64>() / errs.len() as f64;
    assert!(
        mean_abs < 0.03,
        "trade VW median within 3% of truth on average, got {mean_abs:.4}"
    );
    let med = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (l, t) = (med(listing_ratio), med(trade_ratio));
    eprintln!("median listing/truth {l:.3}, trade/truth {t:.3}");
    assert!(
        l > t + 0.03,
        "listings carry a premium over trades: {l:.3} vs {t:.3}"
    );
}

/// The simulated operators carry dated ratings: `ratings.csv` lists each change, and
/// every observation's tier is the rating in force on its day. `throughput.csv`
/// holds quarterly snapshots whose throughput improves at each operator's own speed.
#[test]
fn simulated_operators_carry_dated_ratings_and_improving_throughput() {
    let m = crate::fixture::market();
    let ratings = crate::csvutil::rows(&m.sim("ratings.csv"));
    let mut changed: Option<(String, String, String, String)> = None;
    for r in &ratings {
        if r["effective_from"] != "2024-01-01" {
            let before = ratings
                .iter()
                .find(|x| {
                    x["operator"] == r["operator"]
                        && x["scope"] == r["scope"]
                        && x["effective_from"] == "2024-01-01"
                })
                .unwrap();
            changed = Some((
                r["operator"].clone(),
                before["tier"].clone(),
                r["tier"].clone(),
                r["effective_from"].clone(),
            ));
            break;
        }
    }
    let (op, old, new, from) = changed.expect("at least one rating changes mid-history");
    assert_ne!(old, new);
    let obs = crate::csvutil::rows(&m.sim("observations.csv"));
    let mine: Vec<_> = obs
        .iter()
        .filter(|o| o["source"] == op && !o["operator_tier"].is_empty())
        .collect();
    // The day of a row's stamp; a row the simulator corrupted on purpose (a stamp
    // such as 31/12/2024, quarantined at ingest) has none and proves nothing.
    let day = |o: &std::collections::BTreeMap<String, String>| {
        o["observed_at"]
            .get(..10)
            .and_then(|d| chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
            .map_or_else(String::new, |d| d.to_string())
    };
    assert!(
        mine.iter()
            .filter(|o| !day(o).is_empty() && day(o) < from)
            .all(|o| o["operator_tier"] == old),
        "{op} before {from}"
    );
    assert!(
        mine.iter()
            .filter(|o| !day(o).is_empty() && day(o) > from)
            .all(|o| o["operator_tier"] == new),
        "{op} after {from}"
    );
    assert!(
        mine.iter().any(|o| day(o) > from),
        "{op} quotes after its change"
    );
    let t = crate::csvutil::rows(&m.sim("throughput.csv"));
    let tps = |name: &str| -> Vec<f64> {
        t.iter()
            .filter(|r| r["operator"] == name)
            .map(|r| r["output_tokens_per_s_per_gpu"].parse().unwrap())
            .collect()
    };
    let cumulus = tps("Cumulus Cloud");
    assert!(
        cumulus.len() >= 8 && cumulus.windows(2).all(|w| w[1] >= w[0]),
        "{cumulus:?}"
    );
    let growth: std::collections::BTreeSet<String> = t
        .iter()
        .map(|r| r["operator"].clone())
        .map(|o| {
            let v = tps(&o);
            format!("{:.3}", v.last().unwrap() / v.first().unwrap())
        })
        .collect();
    assert!(
        growth.len() > 5,
        "operators improve at different speeds: {growth:?}"
    );
}
