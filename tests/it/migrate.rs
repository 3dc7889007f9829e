//! Stores written before month partitions (a file per run and fixing date,
//! `observations/date=YYYY-MM-DD/`) read as they did and give the same fixings;
//! later ingests add month files beside them and deduplicate against them; `rentix
//! store migrate` rewrites them by month with the same rows, provenance and
//! fixings, and is a no-op on a store already by month. Stores whose `grade`
//! carried the region (`...@eu`) read alike too.

use crate::compact::{check_is_sound, files, late_trade, rows, three_runs};
use crate::util::{p, rentix_ok, sha256sum};
use rentix_store::{to_table, PartitionChecksum, Store, StoredObservation};
use rentix_table::{Col, Table};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Rewrites `store` as the layout before month partitions wrote it: each run's
/// month files split into a file per fixing date (rows in the order the store
/// keeps them), its record naming those files with their checksums.
fn to_date_layout(store: &Path) {
    let s = Store::open(store).unwrap();
    for e in std::fs::read_dir(store.join("runs")).unwrap() {
        let record = e.unwrap().path();
        let mut run: Value =
            serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
        let id = run["run_id"].as_str().unwrap().to_string();
        let months: Vec<String> = run["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        let mut parts = Vec::new();
        let mut sums = BTreeMap::new();
        for month in months {
            let mut by_date: BTreeMap<chrono::NaiveDate, Vec<StoredObservation>> = BTreeMap::new();
            for r in s.read_part(&month).unwrap() {
                by_date.entry(r.obs.fixing_date).or_default().push(r);
            }
            std::fs::remove_file(store.join(&month)).unwrap();
            let _ = std::fs::remove_dir(store.join(&month).parent().unwrap());
            for (date, mut rows) in by_date {
                let rel = format!("observations/date={date}/{id}.parquet");
                let path = store.join(&rel);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                to_table(&mut rows).write(&path).unwrap();
                let sum = PartitionChecksum {
                    sha256: sha256sum(&path),
                    rows: rows.len() as u64,
                    bytes: std::fs::metadata(&path).unwrap().len(),
                };
                sums.insert(rel.clone(), serde_json::to_value(sum).unwrap());
                parts.push(Value::String(rel));
            }
        }
        run["partitions"] = Value::Array(parts);
        run["partition_checksums"] = serde_json::to_value(sums).unwrap();
        std::fs::write(&record, serde_json::to_string_pretty(&run).unwrap()).unwrap();
    }
}

fn fixings(store: &Path, out: &Path) -> Vec<u8> {
    rentix_ok(&["index", "--store", p(store), "--out", p(out)]);
    std::fs::read(out).unwrap()
}

#[test]
fn a_store_of_date_partitions_reads_alike_and_migrates_to_months() {
    let dir = tempfile::tempdir().unwrap();
    let store = three_runs(dir.path());
    let by_month = fixings(&store, &dir.path().join("by_month.csv"));
    let rows_by_month = rows(&store);

    to_date_layout(&store);
    let dated = files(&store);
    assert!(dated.len() > 150, "{} files", dated.len());
    assert!(dated.iter().all(|f| f.starts_with("date=")), "{dated:?}");
    let check = check_is_sound(&store);
    assert_eq!(check["date_partitions"], dated.len());
    // 60 days from 2025-03-01: March and April, each in many files.
    assert_eq!(check["months_in_several_files"], 2);
    // Read as it is: the same rows and the same fixings, byte for byte.
    assert_eq!(rows(&store), rows_by_month);
    assert_eq!(fixings(&store, &dir.path().join("dated.csv")), by_month);

    let m: Value = serde_json::from_str(&rentix_ok(&[
        "store",
        "migrate",
        "--json",
        "--store",
        p(&store),
    ]))
    .unwrap();
    assert_eq!(m["months"], 2, "{m}");
    assert_eq!(m["files_replaced"], dated.len(), "{m}");
    assert_eq!(m["files_written"], 2, "{m}");
    assert_eq!(m["rows"], rows_by_month.len(), "{m}");
    let migrated = files(&store);
    assert_eq!(
        migrated,
        [
            "month=2025-03/run-000004.parquet",
            "month=2025-04/run-000004.parquet"
        ]
    );
    // No directory of a date is left behind, empty or not.
    let dirs: Vec<String> = std::fs::read_dir(store.join("observations"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(dirs.iter().all(|d| d.starts_with("month=")), "{dirs:?}");
    let check = check_is_sound(&store);
    assert_eq!(check["date_partitions"], 0);
    assert_eq!(check["months_in_several_files"], 0);
    assert_eq!(rows(&store), rows_by_month, "every row and its provenance");
    assert_eq!(fixings(&store, &dir.path().join("migrated.csv")), by_month);
    // The compaction run records the fixing dates it holds, not the months'.
    let runs = Store::open(&store).unwrap().runs().unwrap();
    let last = runs.last().unwrap();
    assert_eq!(
        last.first_fixing_date.as_deref(),
        runs[0].first_fixing_date.as_deref()
    );
    assert_eq!(
        last.last_fixing_date.as_deref(),
        runs[0].last_fixing_date.as_deref()
    );

    // Nothing left to migrate: no run, no record.
    let again: Value = serde_json::from_str(&rentix_ok(&[
        "store",
        "migrate",
        "--json",
        "--store",
        p(&store),
    ]))
    .unwrap();
    assert_eq!(again["run_id"], Value::Null, "{again}");
    assert_eq!(Store::open(&store).unwrap().runs().unwrap().len(), 4);
}

/// A legacy store keeps taking ingests before it is migrated: the new run writes a
/// month file beside the date files, rows it re-sends are duplicates of them, and
/// the migration merges both.
#[test]
fn an_ingest_into_a_store_of_date_partitions_deduplicates_against_them() {
    let dir = tempfile::tempdir().unwrap();
    let store = three_runs(dir.path());
    to_date_layout(&store);
    let before = rows(&store);
    let part0 = std::fs::read_to_string(dir.path().join("part0.csv")).unwrap();
    let resent: Vec<&str> = part0.lines().take(41).collect();
    let again = dir.path().join("again.csv");
    std::fs::write(&again, format!("{}\n", resent.join("\n"))).unwrap();
    let s: Value = serde_json::from_str(&rentix_ok(&[
        "ingest",
        "--json",
        "--store",
        p(&store),
        p(&again),
    ]))
    .unwrap();
    assert_eq!(s["duplicates_of_store"], 40, "{s}");
    assert_eq!(s["accepted"], 0, "{s}");
    assert_eq!(rows(&store), before);

    // One new trade: a month file beside the date files of its month.
    let header = resent[0];
    let late = dir.path().join("late.csv");
    std::fs::write(&late, format!("{header}\n{}\n", late_trade(header))).unwrap();
    rentix_ok(&["ingest", "--json", "--store", p(&store), p(&late)]);
    let now = files(&store);
    assert!(
        now.contains(&"month=2025-03/run-000005.parquet".to_string()),
        "{now:?}"
    );
    assert!(
        now.contains(&"date=2025-03-05/run-000001.parquet".to_string()),
        "{now:?}"
    );
    assert_eq!(rows(&store).len(), before.len() + 1);
    check_is_sound(&store);
    rentix_ok(&["store", "migrate", "--json", "--store", p(&store)]);
    assert_eq!(
        files(&store),
        [
            "month=2025-03/run-000006.parquet",
            "month=2025-04/run-000006.parquet"
        ]
    );
    assert_eq!(rows(&store).len(), before.len() + 1);
    assert_eq!(check_is_sound(&store)["date_partitions"], 0);
}

/// Rewrites every observation file of `store` with the `grade` column as stores wrote
/// it before the region had a column of its own (`GPU/SCOPE/TERM@region`), or with
/// `edit` applied to the table, the record's checksums updated.
fn rewrite_parts(store: &Path, edit: &dyn Fn(&mut Table, &[StoredObservation])) {
    let s = Store::open(store).unwrap();
    for e in std::fs::read_dir(store.join("runs")).unwrap() {
        let record = e.unwrap().path();
        let mut run: Value =
            serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
        let parts: Vec<String> = run["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        // Every partition read before any is rewritten: a read lists the store,
        // which refuses a file whose size is no longer its record's.
        let read: Vec<Vec<StoredObservation>> =
            parts.iter().map(|rel| s.read_part(rel).unwrap()).collect();
        for (rel, mut rows) in parts.into_iter().zip(read) {
            let kept = rows.clone();
            let mut t = to_table(&mut rows);
            edit(&mut t, &kept);
            let path = store.join(&rel);
            t.write(&path).unwrap();
            let sum = PartitionChecksum {
                sha256: sha256sum(&path),
                rows: kept.len() as u64,
                bytes: std::fs::metadata(&path).unwrap().len(),
            };
            run["partition_checksums"][&rel] = serde_json::to_value(sum).unwrap();
        }
        std::fs::write(&record, serde_json::to_string_pretty(&run).unwrap()).unwrap();
    }
}

fn set_col(t: &mut Table, name: &str, values: Vec<Option<String>>) {
    let i = t.names.iter().position(|n| n == name).unwrap();
    t.cols[i] = Col::Str(values);
}

/// A text column of a store file, whatever its encoding.
fn text_col(path: &Path, name: &str) -> Vec<Option<String>> {
    let t = Table::read_parquet(path).unwrap();
    let i = t.names.iter().position(|n| n == name).unwrap();
    match &t.cols[i] {
        Col::Str(v) => v.clone(),
        Col::Coded(c) => (0..c.codes.len())
            .map(|r| c.get(r).map(String::from))
            .collect(),
        _ => panic!("{name} is not text"),
    }
}

#[test]
fn the_store_keeps_the_region_apart_and_reads_stores_whose_grade_carried_it() {
    // The store's `grade` is the base grade, so it joins the fixings' `grade`; the
    // region is its own column. A store written when `grade` carried `@region` gives
    // the same rows and the same fixings, regional or not; a row whose two cells name
    // different regions is refused, naming the file and row.
    let dir = tempfile::tempdir().unwrap();
    let store = three_runs(dir.path());
    let first = store.join("observations").join(&files(&store)[0]);
    let grades = text_col(&first, "grade");
    let regions = text_col(&first, "region");
    assert!(
        grades.iter().flatten().all(|g| !g.contains('@')),
        "{grades:?}"
    );
    assert!(regions.iter().flatten().any(|r| r == "eu"), "{regions:?}");
    let regional = dir.path().join("regional.toml");
    let default =
        std::fs::read_to_string(crate::util::repo().join("data/methodologies/default.toml"))
            .unwrap();
    assert!(default.contains("regional = false"));
    std::fs::write(
        &regional,
        default
            .replace(
                "regional = false",
                "regional = true\npatterns = [\"*/*/*\", \"*/*/*@*\"]",
            )
            .replace("patterns = [\"*/*/*\"]\nregional", "regional"),
    )
    .unwrap();
    let index = |m: Option<&Path>, out: &str| {
        let out = dir.path().join(out);
        let mut args = vec!["index", "--store", p(&store), "--out", p(&out)];
        if let Some(m) = m {
            args.extend(["--methodology", p(m)]);
        }
        rentix_ok(&args);
        std::fs::read(out).unwrap()
    };
    let plain = index(None, "plain.csv");
    let by_region = index(Some(&regional), "by_region.csv");
    assert!(String::from_utf8_lossy(&by_region).contains("/on-demand@eu,"));
    let before = rows(&store);

    rewrite_parts(&store, &|t, rows| {
        set_col(
            t,
            "grade",
            rows.iter().map(|r| Some(r.obs.grade.key())).collect(),
        );
    });
    assert!(text_col(&first, "grade")
        .iter()
        .flatten()
        .any(|g| g.ends_with("@eu")));
    check_is_sound(&store);
    assert_eq!(rows(&store), before);
    assert_eq!(index(None, "plain_old.csv"), plain);
    assert_eq!(index(Some(&regional), "by_region_old.csv"), by_region);

    // One row's region cell edited against its grade (checksums kept valid).
    rewrite_parts(&store, &|t, rows| {
        set_col(
            t,
            "grade",
            rows.iter().map(|r| Some(r.obs.grade.key())).collect(),
        );
        let mut region: Vec<Option<String>> = rows
            .iter()
            .map(|r| r.obs.grade.region.as_deref().map(str::to_string))
            .collect();
        if let Some(i) = rows
            .iter()
            .position(|r| r.obs.grade.region.as_deref() == Some("eu"))
        {
            region[i] = Some("apac".into());
        }
        set_col(t, "region", region);
    });
    let o = crate::util::rentix(&[
        "index",
        "--store",
        p(&store),
        "--out",
        p(&dir.path().join("x.csv")),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "an edited region was accepted");
    assert!(
        err.contains("names region \"eu\" but the region column says \"apac\""),
        "{err}"
    );
    assert!(err.contains("row "), "{err}");
}
