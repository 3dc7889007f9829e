//! The store is a Hive-partitioned Parquet dataset that other engines read unchanged:
//! Python polars, globbing `observations/`, sees exactly the rows and prices rentix
//! committed, and nothing of a run that was staged but never committed.

use crate::fixture::market;
use rentix_ingest::Store;
use std::process::Command;

fn python_polars() -> bool {
    Command::new("python3")
        .args(["-c", "import polars"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn python_polars_reads_the_same_store() {
    if !python_polars() {
        assert!(
            std::env::var("CI").is_err(),
            "CI must install Python polars (see .ci/run)"
        );
        eprintln!("python polars not installed: outside-reader test skipped");
        return;
    }
    let m = market();
    let store = Store::open(&m.store()).unwrap();
    let rows = store.read(None, None).unwrap();
    let n = rows.len();
    let sum: f64 = rows.iter().map(|r| r.obs.usd_per_gpu_hour.get()).sum();
    let trades = rows
        .iter()
        .filter(|r| r.obs.kind.as_str() == "trade")
        .count();
    // A staged, uncommitted file where a killed run would leave it: outside readers
    // must not see it, because staging lives outside observations/.
    let leftover = m
        .store()
        .join("staging/run-999999/commit/observations/date=2025-01-01");
    std::fs::create_dir_all(&leftover).unwrap();
    std::fs::copy(
        m.store().join(&store.runs().unwrap()[0].partitions[0]),
        leftover.join("run-999999.parquet"),
    )
    .unwrap();
    let script = format!(
        "import polars as pl\n\
         df = pl.scan_parquet('{}/observations/**/*.parquet', hive_partitioning=True).collect()\n\
         print(df.height, repr(df['usd_per_gpu_hour'].sum()), df.filter(pl.col('kind') == 'trade').height)",
        m.store().display()
    );
    let out = Command::new("python3")
        .args(["-c", &script])
        .output()
        .unwrap();
    std::fs::remove_dir_all(m.store().join("staging")).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let parts: Vec<&str> = text.split_whitespace().collect();
    assert_eq!(parts[0].parse::<usize>().unwrap(), n, "row count");
    let py_sum: f64 = parts[1].parse().unwrap();
    assert!((py_sum - sum).abs() < 1e-6 * sum, "{py_sum} vs {sum}");
    assert_eq!(parts[2].parse::<usize>().unwrap(), trades);
}
