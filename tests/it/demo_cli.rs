//! `rentix demo` reproduces the committed `reports/demo/` byte for byte.

use crate::util::{p, rentix_ok, repo};

#[test]
fn demo_reproduces_the_committed_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("demo");
    let printed = rentix_ok(&["demo", "--out", p(&out)]);
    assert!(printed.starts_with("report: "), "{printed}");
    assert!(printed.lines().count() >= 5, "{printed}");
    let committed = repo().join("reports/demo");
    for f in [
        "report.html",
        "fixings.parquet",
        "fixings_forward.parquet",
        "ingest_summary.json",
        "track_neocloud_h200.csv",
        "backtest_producer_h100_spot_rate/summary.json",
        "backtest_producer_h100_spot_rate/periods.csv",
        "backtest_neocloud_h200/summary.json",
        "backtest_producer_premium/periods.csv",
    ] {
        let a = std::fs::read(out.join(f)).unwrap();
        let b = std::fs::read(committed.join(f)).unwrap_or_default();
        assert!(
            a == b,
            "reports/demo/{f} differs from what the demo produces: run `cargo run --release -- demo` and commit reports/demo"
        );
    }
}
