//! The daily publication cycle: `index --from D --to D` into the published file adds
//! or re-fixes day D with the full history behind it and touches nothing else.

use crate::fixture::market;
use crate::util::{p, rentix_ok};
use std::path::Path;

fn bytes(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn a_full_run_then_a_one_day_rerun_gives_identical_bytes() {
    let m = market();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("f.csv");
    let store = m.store();
    rentix_ok(&["index", "--store", p(&store), "--out", p(&out)]);
    let full = bytes(&out);
    let forward = bytes(&dir.path().join("f_forward.csv"));
    // Re-fix one day in the middle (composites mid-chain, carried values, listing
    // spreads all depend on the days before) and the last day.
    for day in ["2025-04-18", "2025-12-31"] {
        let msg = rentix_ok(&[
            "index",
            "--store",
            p(&store),
            "--out",
            p(&out),
            "--from",
            day,
            "--to",
            day,
        ]);
        assert!(!msg.contains("restated"), "{day}: {msg}");
        assert!(bytes(&out) == full, "{day}: the published file changed");
        assert!(
            bytes(&dir.path().join("f_forward.csv")) == forward,
            "{day}: forward curve changed"
        );
    }
    assert!(
        !dir.path().join("f.v1.csv").exists(),
        "nothing restated, nothing archived"
    );
    assert!(!dir.path().join("f_restatements.csv").exists());
}

#[test]
fn publishing_day_by_day_builds_the_same_file_as_one_run() {
    let m = market();
    let dir = tempfile::tempdir().unwrap();
    let store = m.store();
    let grade = "h100-sxm-80gb/*/on-demand";
    let full = dir.path().join("full.csv");
    rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--out",
        p(&full),
        "--grade",
        grade,
        "--to",
        "2025-06-03",
    ]);
    // Yesterday's publication, then three daily runs.
    let daily = dir.path().join("daily.csv");
    rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--out",
        p(&daily),
        "--grade",
        grade,
        "--to",
        "2025-05-31",
    ]);
    for day in ["2025-06-01", "2025-06-02", "2025-06-03"] {
        let msg = rentix_ok(&[
            "index",
            "--store",
            p(&store),
            "--out",
            p(&daily),
            "--grade",
            grade,
            "--from",
            day,
            "--to",
            day,
        ]);
        assert!(msg.contains("published for the first time"), "{msg}");
    }
    assert!(
        bytes(&daily) == bytes(&full),
        "day-by-day publication differs from one run"
    );
}

/// A feed outage on the publication day: the store ends on 2025-03-05 and the day
/// published is 2025-03-06. The run used to stop at the last observation and refuse
/// ("no observation ... matches"); it now fixes through the requested day, so each
/// grade carries its last value (the default methodology carries up to 5 days) and
/// says so, and `verify` certifies the file. On 2025-03-12, past the carry, there is
/// nothing to publish and the refusal stands.
#[test]
fn an_outage_day_is_published_with_carried_values() {
    let dir = tempfile::tempdir().unwrap();
    let obs = dir.path().join("obs.csv");
    let days = ["2025-03-03", "2025-03-04", "2025-03-05"].map(|d| ("h100-sxm-80gb", d));
    std::fs::write(
        &obs,
        crate::util::five_listings(&days, |i| format!("2.{i}")),
    )
    .unwrap();
    let store = dir.path().join("store");
    rentix_ok(&["ingest", "--json", "--store", p(&store), p(&obs)]);
    let out = dir.path().join("f.csv");
    rentix_ok(&["index", "--store", p(&store), "--out", p(&out)]);
    let msg = rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--out",
        p(&out),
        "--from",
        "2025-03-06",
        "--to",
        "2025-03-06",
    ]);
    assert!(msg.contains("4 carried"), "{msg}");
    let rows = crate::csvutil::rows(&out);
    let day: Vec<_> = rows
        .iter()
        .filter(|r| r["date"] == "2025-03-06" && r["grade"] == "h100-sxm-80gb/vm/on-demand")
        .collect();
    assert_eq!(day.len(), 1, "{rows:?}");
    assert_eq!(day[0]["level"], "4");
    assert!(day[0]["flags"].contains("carried_forward"), "{:?}", day[0]);
    assert_eq!(day[0]["value"], "2.2", "the median of 2.0 .. 2.4, carried");
    let verify = crate::util::rentix(&["verify", "--store", p(&store), "--fixings", p(&out)]);
    assert_eq!(
        verify.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
    // A run over the whole store afterwards keeps the carried day: without `--to`
    // it publishes through the file's last day, where it used to stop at the
    // store's end and withdraw the carried rows (a hostile round: 438 rows).
    let before = std::fs::read(&out).unwrap();
    let whole = rentix_ok(&["index", "--store", p(&store), "--out", p(&out)]);
    assert!(
        whole.contains("published through 2025-03-06, the file's last day"),
        "{whole}"
    );
    assert!(!whole.contains("restated"), "{whole}");
    assert_eq!(std::fs::read(&out).unwrap(), before, "the same file");
    let past = crate::util::rentix(&[
        "index",
        "--store",
        p(&store),
        "--out",
        p(&out),
        "--from",
        "2025-03-12",
        "--to",
        "2025-03-12",
    ]);
    assert!(!past.status.success());
}

/// A day to come is not an outage: with observations through yesterday, `--to` a
/// week ahead publishes through today (carried), not carried values for days that
/// have not happened.
#[test]
fn a_to_date_in_the_future_publishes_through_today_only() {
    let dir = tempfile::tempdir().unwrap();
    let today = chrono::Utc::now().date_naive();
    let yesterday = today - chrono::Days::new(1);
    let obs = dir.path().join("obs.csv");
    let day = yesterday.to_string();
    let text = crate::util::five_listings(&[("h100-sxm-80gb", &day)], |_| "2.5".into());
    std::fs::write(&obs, text).unwrap();
    let store = dir.path().join("store");
    rentix_ok(&["ingest", "--json", "--store", p(&store), p(&obs)]);
    let out = dir.path().join("f.csv");
    let ahead = (today + chrono::Days::new(7)).to_string();
    rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--out",
        p(&out),
        "--to",
        &ahead,
    ]);
    let rows = crate::csvutil::rows(&out);
    let last = rows.iter().map(|r| r["date"].clone()).max().unwrap();
    assert_eq!(last, today.to_string(), "{rows:?}");
}
