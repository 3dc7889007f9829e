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
