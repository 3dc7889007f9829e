//! Messages and exit codes that say what happened (issue 47): a held publication
//! lock exits as the documented class table says, a leap-second trade counts on its
//! own day, a rent of no GPU-hours is refused, and a signal during a publication is
//! never reported both as committed and as not; a business-day methodology names
//! a day that is not a publication day.

use crate::util::{p, rentix, rentix_ok};
use std::path::{Path, PathBuf};

fn store_of(dir: &Path, csv: &str) -> PathBuf {
    let obs = dir.join("obs.csv");
    std::fs::write(&obs, csv).unwrap();
    let store = dir.join("store");
    rentix_ok(&["ingest", "--json", "--store", p(&store), p(&obs)]);
    store
}

fn listings(days: &[&str]) -> String {
    let pairs: Vec<(&str, &str)> = days.iter().map(|d| ("h100-sxm-80gb", *d)).collect();
    crate::util::five_listings(&pairs, |_| "2.5".into())
}

/// A publication lock held by a live process is refused with exit 3 (a file that
/// cannot be used now, the class table's "bad input data"), and the publication
/// docs say the same code.
#[test]
fn a_held_publication_lock_exits_as_documented() {
    let tmp = tempfile::tempdir().unwrap();
    let store = store_of(tmp.path(), &listings(&["2025-03-03", "2025-03-04"]));
    let out = tmp.path().join("f.csv");
    std::fs::write(
        tmp.path().join("f.csv.lock"),
        r#"{"pid":1,"host":"another-host","started":"2026-01-01T00:00:00Z","command":"index --out f.csv"}"#,
    )
    .unwrap();
    let o = rentix(&["index", "--store", p(&store), "--out", p(&out)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("locked by process 1 on host another-host"),
        "{err}"
    );
    let docs = std::fs::read_to_string(crate::util::data("docs/formats.md")).unwrap();
    let docs = docs.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        docs.contains("A second publisher of the same `F` fails at once (exit 3)"),
        "docs/formats.md gives another exit code for a held lock"
    );
}

/// A trade stamped in a leap second (`23:59:60Z`) is fixed on the UTC day the
/// second ends, not the next one.
#[test]
fn a_leap_second_trade_counts_on_its_own_day() {
    let tmp = tempfile::tempdir().unwrap();
    let mut csv = String::from(
        "kind,observed_at,source,gpu,scope,term,price,price_unit,currency,quantity_gpu_hours\n",
    );
    for src in ["a", "b", "c", "d", "e"] {
        csv.push_str(&format!(
            "trade,2016-12-31T23:59:60Z,{src},h100-sxm-80gb,vm,on-demand,2.5,gpu_hour,USD,1000\n"
        ));
    }
    let store = store_of(tmp.path(), &csv);
    let out = tmp.path().join("f.csv");
    rentix_ok(&["index", "--store", p(&store), "--out", p(&out)]);
    let rows = crate::csvutil::rows(&out);
    let grade = "h100-sxm-80gb/vm/on-demand";
    let trades = |date: &str| {
        rows.iter()
            .find(|r| r["grade"] == grade && r["date"] == date)
            .map(|r| r["n_trades"].clone())
    };
    assert_eq!(trades("2016-12-31").as_deref(), Some("5"), "{rows:?}");
    assert!(trades("2017-01-01").is_none_or(|n| n == "0"), "{rows:?}");
}

/// Fixings of two days of listings (`dir/f.csv`) and a rent file of `rows`
/// (`dir/rent.csv`, under its header).
fn two_days_and_a_rent(
    dir: &std::path::Path,
    rows: &str,
) -> (std::path::PathBuf, std::path::PathBuf) {
    let store = store_of(dir, &listings(&["2025-03-03", "2025-03-04"]));
    let out = dir.join("f.csv");
    rentix_ok(&["index", "--store", p(&store), "--out", p(&out)]);
    let rent = dir.join("rent.csv");
    std::fs::write(
        &rent,
        format!("period_start,period_end,usd_per_gpu_hour,gpu_hours,side\n{rows}"),
    )
    .unwrap();
    (out, rent)
}

/// `track` on a rent of no GPU-hours has nothing to hedge: refused (exit 3) with a
/// message that says so, not a ranking of nothing that exits 0.
#[test]
fn track_refuses_a_rent_of_no_gpu_hours() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, rent) = two_days_and_a_rent(
        tmp.path(),
        "2025-01-01,2025-02-01,2.5,0,pay\n2025-02-01,2025-03-01,2.5,0,pay\n\
         2025-03-01,2025-04-01,2.5,0,pay\n",
    );
    let o = rentix(&["track", "--index", p(&out), "--rent", p(&rent)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("rent.csv") && err.contains("0 GPU-hours"),
        "{err}"
    );
}

/// `track --min-periods 1` ranked a rent of four periods first where `backtest`
/// of the same grade said "not enough data, needs 6": refused (exit 2) below the
/// periods a decision needs.
#[test]
fn track_refuses_fewer_periods_than_a_decision_needs() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, rent) = two_days_and_a_rent(
        tmp.path(),
        "2025-01-01,2025-02-01,2.5,730,pay\n2025-02-01,2025-03-01,2.6,730,pay\n",
    );
    let o = rentix(&[
        "track",
        "--index",
        p(&out),
        "--rent",
        p(&rent),
        "--min-periods",
        "1",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--min-periods 1 is below the 6 hedge periods a decision needs"),
        "{err}"
    );
}

/// A lock removed while a publication is live stops it before its commit, and the
/// message that says nothing was committed is true: the file is as it was. (The
/// lock used to be checked after the renames: the publication was in place and the
/// run still said "nothing was committed"; with SIGTERM, whose handler removes the
/// lock once the renames are done, the run said both.)
#[test]
fn a_publication_that_says_nothing_was_committed_committed_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let store = store_of(dir, &listings(&["2025-03-03", "2025-03-04"]));
    let out = dir.join("f.csv");
    rentix_ok(&["index", "--store", p(&store), "--out", p(&out)]);
    let before = std::fs::read(&out).unwrap();
    // Late data: the next publication restates, so its file differs.
    let late = dir.join("late.csv");
    let pairs = [("h100-sxm-80gb", "2025-03-04")];
    std::fs::write(&late, crate::util::five_listings(&pairs, |_| "4".into())).unwrap();
    let late_text = std::fs::read_to_string(&late)
        .unwrap()
        .replace(",a,", ",f,")
        .replace(",b,", ",g,")
        .replace(",c,", ",h,")
        .replace(",d,", ",i,")
        .replace(",e,", ",j,");
    std::fs::write(&late, late_text).unwrap();
    rentix_ok(&["ingest", "--json", "--store", p(&store), p(&late)]);
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_rentix"))
        .args(["index", "--store", p(&store), "--out", p(&out)])
        .env("RENTIX_FAIL_AT", "publish:staged:pause")
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let lock = dir.join("f.csv.lock");
    let start = std::time::Instant::now();
    while !lock.exists() && start.elapsed().as_secs() < 10 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    std::fs::remove_file(&lock).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("nothing was committed"), "{err}");
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert_eq!(
        std::fs::read(&out).unwrap(),
        before,
        "the file is as it was"
    );
    // Run again, it publishes.
    rentix_ok(&["index", "--store", p(&store), "--out", p(&out)]);
    assert_ne!(std::fs::read(&out).unwrap(), before);
}

/// Under a business-day methodology, a Saturday's daily command says it is not a
/// publication day and names the next one (it said "no observation matches"), and
/// a holiday says which (the table reaches 2035 now; a range past it is refused:
/// `for_publication`'s unit test, as observations from the future are refused at
/// ingest).
#[test]
fn a_business_day_methodology_names_a_day_that_is_not_one() {
    let tmp = tempfile::tempdir().unwrap();
    let store = store_of(
        tmp.path(),
        &listings(&["2025-06-05", "2025-06-06", "2025-06-07", "2025-06-09"]),
    );
    let out = tmp.path().join("f.csv");
    let index = |range: &[&str]| {
        let mut args = vec![
            "index",
            "--store",
            p(&store),
            "--methodology",
            "settlement_business_days",
            "--out",
            p(&out),
        ];
        args.extend_from_slice(range);
        rentix(&args)
    };
    let o = index(&["--from", "2025-06-07", "--to", "2025-06-07"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("2025-06-07 (a Saturday) is not a publication day")
            && err.contains("The next publication day is 2025-06-09"),
        "{err}"
    );
    assert!(!out.exists());
    let o = index(&["--from", "2025-12-25", "--to", "2025-12-25"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("Christmas Day, a us-exchange holiday"),
        "{err}"
    );
    assert!(!out.exists());
}
