//! The store is a Hive-partitioned Parquet dataset that other engines read unchanged:
//! Python polars, globbing `observations/`, sees exactly the rows and prices rentix
//! committed, and nothing of a run that was staged but never committed.

use crate::fixture::market;
use rentix_store::Store;
use std::process::Command;

fn python_polars() -> bool {
    Command::new("python3")
        .args(["-c", "import polars"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The stdout of Python running `script` (which must succeed); `None` when Python
/// polars is not installed outside CI (the test is then skipped).
fn python(script: &str) -> Option<String> {
    if !python_polars() {
        assert!(
            std::env::var("CI").is_err(),
            "CI must install Python polars (see .ci/run)"
        );
        eprintln!("python polars not installed: outside-reader test skipped");
        return None;
    }
    let out = Command::new("python3")
        .args(["-c", script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
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
        .join("staging/run-999999/commit/observations/month=2025-01");
    std::fs::create_dir_all(&leftover).unwrap();
    std::fs::copy(
        m.store().join(&store.runs().unwrap()[0].partitions[0]),
        leftover.join("run-999999.parquet"),
    )
    .unwrap();
    let script = format!(
        "import polars as pl\n\
         df = pl.scan_parquet('{}/observations/**/*.parquet', hive_partitioning=True).collect()\n\
         print(df.height, repr(df['usd_per_gpu_hour'].sum()), df.filter(pl.col('kind') == 'trade').height, \
               df.schema['observed_at'], df.schema['fixing_date'], df.schema['term_start'], \
               df['observed_at'].max().strftime('%Y-%m-%dT%H:%M:%S.%fZ'), df['fixing_date'].min())",
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
    // Typed columns: an outside engine filters on time without parsing text.
    assert_eq!(
        parts[3..7].join(" "),
        "Datetime(time_unit='us', time_zone='UTC') Date Date",
        "{text}"
    );
    let last = rows.iter().map(|r| r.obs.observed_at).max().unwrap();
    assert_eq!(parts[7], rentix_store::timestamp_text(last));
    let first = rows.iter().map(|r| r.obs.fixing_date).min().unwrap();
    assert_eq!(parts[8], first.to_string());
}

/// A store written before timestamps and dates were typed (RFC 3339 and
/// `YYYY-MM-DD` text) reads back to the same observations.
#[test]
fn a_store_with_text_time_columns_still_reads() {
    use rentix_store::{from_table, Col, Projection, Table};
    let m = market();
    let store = Store::open(&m.store()).unwrap();
    let part = m.store().join(&store.runs().unwrap()[0].partitions[0]);
    let typed = Table::read_parquet(&part).unwrap();
    assert!(matches!(typed.col("observed_at"), Some(Col::Timestamp(_))));
    let mut legacy = Table::new();
    for (name, col) in typed.names.iter().zip(&typed.cols) {
        let col = match col {
            Col::Timestamp(_) | Col::Date(_) => Col::Str(
                (0..col.len())
                    .map(|i| Some(col.cell(i)).filter(|c| !c.is_empty()))
                    .collect(),
            ),
            other => other.clone(),
        };
        legacy.push(name, col);
    }
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.parquet");
    legacy.write(&old).unwrap();
    let legacy = Table::read_parquet(&old).unwrap();
    assert!(matches!(legacy.col("observed_at"), Some(Col::Str(_))));
    assert_eq!(
        from_table(legacy, &old, Projection::All).unwrap(),
        from_table(typed, &part, Projection::All).unwrap()
    );
}

/// The fixing projection reads 9 of the 26 columns and gives the fixing engine the
/// same observations: every field it reads is equal, the rest stays empty.
#[test]
fn the_fixing_projection_reads_what_the_engine_needs() {
    let m = market();
    let store = Store::open(&m.store()).unwrap();
    let all = store.read(None, None).unwrap();
    let lean = store
        .read_projected(None, None, rentix_store::Projection::Fixing)
        .unwrap();
    assert_eq!(all.len(), lean.len());
    for (a, b) in all.iter().zip(&lean) {
        assert_eq!(a.dedupe_key, b.dedupe_key);
        let (a, b) = (&a.obs, &b.obs);
        assert_eq!(
            (a.kind, a.observed_at, a.fixing_date, &a.source, &a.grade),
            (b.kind, b.observed_at, b.fixing_date, &b.source, &b.grade)
        );
        assert_eq!(a.usd_per_gpu_hour, b.usd_per_gpu_hour);
        assert_eq!(a.quantity_gpu_hours, b.quantity_gpu_hours);
        assert_eq!(a.operator_tier, b.operator_tier);
        assert!(b.obs_id.is_empty() && b.input_file.is_empty() && b.gpu_raw.is_empty());
    }
}

/// The index reads a partition column by column, the repeated text as codes, and
/// re-checks what the engine relies on: a partition edited by hand is refused with
/// the row and the problem named, never fixed on a made-up value and never a panic.
#[test]
fn a_hand_edited_partition_is_refused_by_the_index() {
    use crate::util::{p, rentix, rentix_ok};
    use rentix_store::{Col, Table};
    let dir = tempfile::tempdir().unwrap();
    let (sim, store) = (dir.path().join("sim"), dir.path().join("store"));
    rentix_ok(&[
        "simulate",
        "--out",
        p(&sim),
        "--rows",
        "2000",
        "--days",
        "3",
    ]);
    rentix_ok(&[
        "ingest",
        "--json",
        "--store",
        p(&store),
        p(&sim.join("observations.csv")),
    ]);
    let part = store.join(&Store::open(&store).unwrap().runs().unwrap()[0].partitions[0]);
    let original = Table::read_parquet(&part).unwrap();
    let text = |v: &str| Col::Str(vec![Some(v.to_string())]);
    let cases: [(&str, Col, &str); 7] = [
        (
            "dedupe_key",
            text("row-2-edited-by-hand"),
            "dedupe_key is not 32",
        ),
        ("kind", text("bid"), "row 2"),
        ("grade", text("h100/cloud/forever"), "row 2"),
        ("operator_tier", text("diamond"), "row 2"),
        ("source", Col::Str(vec![None]), "row 2: source is empty"),
        ("usd_per_gpu_hour", Col::F64(vec![Some(-2.5)]), "row 2"),
        (
            "quantity_gpu_hours",
            Col::F64(vec![Some(f64::INFINITY)]),
            "row 2",
        ),
    ];
    // Edited without updating the run record's checksums (which the size check
    // would refuse first): what the index reads of the file itself.
    crate::util::forget_checksums(&store);
    for (column, value, expected) in cases {
        let mut t = original.clone();
        let at = t.names.iter().position(|n| n == column).unwrap();
        match (&mut t.cols[at], value) {
            (Col::Str(v), Col::Str(mut x)) => v[1] = x.remove(0),
            (Col::F64(v), Col::F64(x)) => v[1] = x[0],
            _ => panic!("{column} has another type"),
        }
        t.write(&part).unwrap();
        let out = rentix(&[
            "index",
            "--store",
            p(&store),
            "--out",
            p(&dir.path().join("f.csv")),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{column}: accepted");
        assert!(err.contains(expected), "{column}: {err}");
        assert!(!err.contains("panicked"), "{column}: {err}");
    }
    original.write(&part).unwrap();
    rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--out",
        p(&dir.path().join("f.csv")),
    ]);
}

/// Polars with default settings reads every Parquet publication with the types
/// docs/formats.md gives: `date` a Date (not text), counts Int64, `value` and the
/// percentiles Float64, `sufficient` Boolean, `unit` text that says dollars or
/// points. The committed demo files are read, so a change of type shows up there.
#[test]
fn python_polars_reads_the_publications_with_their_documented_types() {
    let demo = crate::util::data("reports/demo");
    let script = format!(
        "import polars as pl\n\
         d = '{}'\n\
         f = pl.read_parquet(d + '/fixings.parquet')\n\
         s = f.schema\n\
         print(s['date'], s['level'], s['n_obs'], s['value'], s['change_30d'], s['sufficient'], s['unit'])\n\
         print(sorted(f['unit'].unique().to_list()))\n\
         print(f.filter(pl.col('method').is_in(['jevons-chained', 'hedonic-time-dummy']))['unit'].unique().to_list())\n\
         for name in ['fixings_forward', 'fixings_tier_spreads', 'fixings_tier_differentials']:\n\
         \x20   print(pl.read_parquet(d + '/' + name + '.parquet').schema['date'])\n",
        demo.display()
    );
    let Some(text) = python(&script) else {
        return;
    };
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0], "Date Int64 Int64 Float64 Float64 Boolean String",
        "{text}"
    );
    assert_eq!(lines[1], "['points', 'usd-per-gpu-hour']", "{text}");
    assert_eq!(lines[2], "['points']", "{text}");
    assert_eq!(&lines[3..], ["Date", "Date", "Date"], "{text}");
}

/// Polars with default settings (types inferred from the first 100 rows) reads every
/// CSV output of the demo, and a float column reads as floats even where its first
/// values happen to be whole: `fees` of a backtest's periods, 0 until the first
/// contract trades, once inferred as integers and then made polars refuse the file
/// at `691.84008192`.
#[test]
fn python_polars_reads_every_csv_output_with_default_settings() {
    let demo = crate::util::data("reports/demo");
    let script = format!(
        "import glob, polars as pl\n\
         d = '{}'\n\
         files = [f for f in sorted(glob.glob(d + '/**/*.csv', recursive=True)) if not f[len(d):].startswith('/work/')]\n\
         assert len(files) > 10, files\n\
         for f in files:\n\
         \x20   pl.read_csv(f)\n\
         for f in glob.glob(d + '/backtest_*/periods.csv'):\n\
         \x20   s = pl.read_csv(f).schema\n\
         \x20   print(s['fees'], s['funding_pnl'], s['exposure_gpu_hours'], s['contracts'])\n",
        demo.display()
    );
    let Some(text) = python(&script) else {
        return;
    };
    assert!(text.lines().count() >= 4, "{text}");
    for l in text.lines() {
        assert_eq!(l, "Float64 Float64 Float64 Int64", "{text}");
    }
}
