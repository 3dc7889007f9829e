//! A settled month is final: a late trade that restates a fixing after its month
//! settled leaves the backtest's settled P&L unchanged, unless `--as-restated`.

use crate::csvutil::rows;
use crate::util::{p, rentix_ok};
use chrono::{Days, NaiveDate};
use serde_json::Value;
use std::path::Path;

const GRADE: &str = "h100-sxm-80gb/bare-metal/on-demand";

/// Five contributors trading every day of 2025-01..2025-06, prices stepping up by
/// month; `extra` rows appended.
fn trades(path: &Path, from: &str, to: &str, price: impl Fn(NaiveDate, usize) -> f64, tag: &str) {
    let mut t = String::from("kind,observed_at,source,gpu,scope,term,price,price_unit,currency,quantity_gpu_hours,obs_id\n");
    let mut d = NaiveDate::parse_from_str(from, "%Y-%m-%d").unwrap();
    let end = NaiveDate::parse_from_str(to, "%Y-%m-%d").unwrap();
    while d <= end {
        for c in 0..5 {
            t.push_str(&format!(
                "trade,{d}T12:00:00Z,p{c},h100-sxm-80gb,bare-metal,on-demand,{:.4},gpu_hour,USD,100,{tag}-{d}-{c}\n",
                price(d, c)
            ));
        }
        d = d + Days::new(1);
    }
    std::fs::write(path, t).unwrap();
}

#[test]
#[allow(
    clippy::too_many_lines,
    reason = "not split yet (issue 26 lists it); new functions stay under 100 lines"
)]
fn a_late_trade_after_settlement_leaves_settled_pnl_unchanged() {
    use chrono::Datelike;
    let dir = tempfile::tempdir().unwrap();
    let dp = dir.path();
    let store = dp.join("store");
    let obs = dp.join("obs.csv");
    trades(
        &obs,
        "2025-01-01",
        "2025-06-30",
        |d, c| 2.0 + 0.1 * d.month() as f64 + 0.01 * c as f64 + 0.001 * d.day() as f64,
        "a",
    );
    rentix_ok(&["ingest", "--json", "--store", p(&store), p(&obs)]);
    let fixings = dp.join("fixings.csv");
    rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--out",
        p(&fixings),
        "--grade",
        GRADE,
    ]);
    let rent = dp.join("rent.csv");
    let mut r = String::from("period_start,period_end,usd_per_gpu_hour,gpu_hours,side\n");
    for (m, px) in [
        (1, 2.2),
        (2, 2.35),
        (3, 2.41),
        (4, 2.5),
        (5, 2.66),
        (6, 2.7),
    ] {
        r.push_str(&format!(
            "2025-{m:02}-01,{},{px},7300,pay\n",
            if m == 6 {
                "2025-07-01".to_string()
            } else {
                format!("2025-{:02}-01", m + 1)
            }
        ));
    }
    std::fs::write(&rent, r).unwrap();
    let bt = |out: &str, extra: &[&str]| -> (Value, String) {
        let o = dp.join(out);
        let mut args = vec![
            "backtest",
            "--index",
            p(&fixings),
            "--rent",
            p(&rent),
            "--underlying",
            GRADE,
            "--out",
            p(&o),
            "--resamples",
            "0",
        ];
        args.extend(extra);
        rentix_ok(&args);
        (
            serde_json::from_str(&std::fs::read_to_string(o.join("summary.json")).unwrap())
                .unwrap(),
            std::fs::read_to_string(o.join("periods.csv")).unwrap(),
        )
    };
    let (before, periods_before) = bt("before", &[]);
    assert_eq!(before["periods"], 5);
    assert_eq!(
        before["restated_after_settlement"]
            .as_array()
            .unwrap()
            .len(),
        0
    );

    // Late trades for 2025-03-10 at 9.00 with ten times the volume arrive in July.
    let late = dp.join("late.csv");
    trades(&late, "2025-03-10", "2025-03-10", |_, _| 9.0, "late");
    let text = std::fs::read_to_string(&late)
        .unwrap()
        .replace(",100,late", ",1000,late");
    std::fs::write(&late, text).unwrap();
    rentix_ok(&["ingest", "--json", "--store", p(&store), p(&late)]);
    rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--out",
        p(&fixings),
        "--grade",
        GRADE,
    ]);
    let log = rows(&dp.join("fixings_restatements.csv"));
    assert!(
        log.iter()
            .any(|r| r["date"] == "2025-03-10" && r["reason"] == "late_data"),
        "{log:?}"
    );

    let (after, periods_after) = bt("after", &[]);
    assert_eq!(periods_before, periods_after, "settled months are final");
    let restated = after["restated_after_settlement"].as_array().unwrap();
    assert_eq!(restated.len(), 1, "{restated:?}");
    assert_eq!(restated[0]["month"], "2025-03-01");
    let settled = restated[0]["settlement"].as_f64().unwrap();
    let today = restated[0]["restated_settlement"].as_f64().unwrap();
    assert!(today > settled, "{settled} -> {today}");

    let (_, periods_today) = bt("today", &["--as-restated"]);
    assert_ne!(
        periods_before, periods_today,
        "--as-restated settles on today's fixings"
    );
    let march = rows(&dp.join("today/periods.csv"))
        .into_iter()
        .find(|r| r["period_start"] == "2025-03-01" && r["strategy"] == "one-to-one")
        .unwrap();
    assert_eq!(march["settlement"].parse::<f64>().unwrap(), today);
}
