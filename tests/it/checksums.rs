//! Partition checksums: the run record that commits a partition holds its SHA-256,
//! rows and size; every reader hashes a partition as it reads it and refuses one that
//! disagrees with its record; `store check` compares the SHA-256 (`--quick`: sizes
//! and rows only) and names the file; records written before checksums still read.

use crate::util::{p, rentix, rentix_ok, sha256sum};
use proptest::prelude::*;
use rentix_store::{check_store_deep, Store};
use std::path::{Path, PathBuf};

const PART: &str = "observations/month=2025-03/run-000001.parquet";

/// The price of listing `k`: 2 + ln(k + 2) / 10, whose mantissa bits look random
/// (k / 7 repeats `001` and the compressor folds it).
fn price(k: usize) -> f64 {
    2.0 + ((k + 2) as f64).ln() / 10.0
}

/// A store of one partition: 20 listings on 2025-03-03 priced [`price`].
fn one_partition(dir: &Path) -> PathBuf {
    listings_in(dir, &["03"])
}

fn record(store: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(store.join("runs/run-000001.json")).unwrap())
        .unwrap()
}

/// Byte offsets of the first copy of each price's 8 little-endian bytes: the
/// `usd_per_gpu_hour` column (written before `price`, which holds the same values).
fn value_offsets(bytes: &[u8]) -> Vec<usize> {
    (0..20)
        .filter_map(|k| {
            let needle = price(k).to_le_bytes();
            bytes.windows(8).position(|w| w == needle)
        })
        .collect()
}

fn check(store: &Path, deep: bool) -> (Option<i32>, String, String) {
    check_with(store, if deep { &["--deep"] } else { &[] })
}

fn check_with(store: &Path, flags: &[&str]) -> (Option<i32>, String, String) {
    let mut args = vec!["store", "check", "--json", "--store", p(store)];
    args.extend_from_slice(flags);
    let o = rentix(&args);
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

#[test]
fn the_run_record_holds_each_partitions_sha256_rows_and_size() {
    let dir = tempfile::tempdir().unwrap();
    let store = one_partition(dir.path());
    let c = &record(&store)["partition_checksums"][PART];
    let file = store.join(PART);
    assert_eq!(c["sha256"], sha256sum(&file).as_str());
    assert_eq!(c["rows"], 20);
    assert_eq!(c["bytes"], std::fs::metadata(&file).unwrap().len());
    let (code, out, err) = check(&store, true);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("\"checksums_verified\": 1"), "{out}");
}

/// One flipped bit in a stored price keeps the file's size and row count: only
/// `--quick` (sizes and rows) misses it; the default check (and `--deep`, its alias)
/// names the file and both digests.
#[test]
fn a_flipped_bit_in_a_price_is_named_by_the_default_check() {
    let dir = tempfile::tempdir().unwrap();
    let store = one_partition(dir.path());
    let file = store.join(PART);
    let recorded = sha256sum(&file);
    flip_a_price_bit(&file);
    let changed = sha256sum(&file);
    let (code, _, err) = check_with(&store, &["--quick"]);
    assert_eq!(code, Some(0), "size and rows are unchanged: {err}");
    for flags in [&[][..], &["--deep"][..]] {
        let (code, out, err) = check_with(&store, flags);
        assert_eq!(code, Some(1), "{flags:?}: {err}");
        assert!(err.contains(PART) && err.contains("SHA-256"), "{err}");
        assert!(out.contains(&recorded) && out.contains(&changed), "{out}");
    }
}

/// Flips one bit of the fourth stored price of `file` (its size and rows unchanged).
fn flip_a_price_bit(file: &Path) {
    let mut bytes = std::fs::read(file).unwrap();
    let at = value_offsets(&bytes);
    assert_eq!(at.len(), 20, "every price is stored as its 8 bytes");
    bytes[at[3] + 2] ^= 0x10;
    std::fs::write(file, &bytes).unwrap();
}

/// Every read of a partition is checked against its run record's SHA-256: `index`
/// refuses to fix from a partition with a flipped bit (exit 3, bad input data),
/// naming the file and both digests, and publishes nothing; the library's reader
/// refuses it too.
#[test]
fn a_flipped_bit_is_refused_by_every_reader() {
    let dir = tempfile::tempdir().unwrap();
    let store = one_partition(dir.path());
    let file = store.join(PART);
    let recorded = sha256sum(&file);
    let pristine = std::fs::read(&file).unwrap();
    flip_a_price_bit(&file);
    let changed = sha256sum(&file);
    let out_file = dir.path().join("f.csv");
    let o = rentix(&["index", "--store", p(&store), "--out", p(&out_file)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains(PART), "{err}");
    assert!(err.contains(&recorded) && err.contains(&changed), "{err}");
    assert!(
        !out_file.exists(),
        "nothing is published from a damaged store"
    );
    let e = Store::open(&store).unwrap().read_part(PART).unwrap_err();
    assert!(e.to_string().contains(&changed), "{e}");
    // Restored, it reads again.
    std::fs::write(&file, pristine).unwrap();
    assert_eq!(sha256sum(&file), recorded);
    rentix_ok(&["index", "--store", p(&store), "--out", p(&out_file)]);
}

/// A committed partition deleted is a damaged store, as a changed one is: exit 3
/// naming the file, the run that committed it and `store check` (it exited 4, "No
/// such file or directory", as for a file never expected), nothing published.
#[test]
fn a_deleted_partition_is_a_damaged_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = one_partition(dir.path());
    std::fs::remove_file(store.join(PART)).unwrap();
    let out_file = dir.path().join("f.csv");
    for args in [
        vec!["index", "--store", p(&store), "--out", p(&out_file)],
        vec!["health", "--store", p(&store)],
    ] {
        let o = rentix(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{args:?}: {err}");
        assert!(err.contains(PART), "{err}");
        assert!(
            err.contains("run-000001 committed this partition and it is gone"),
            "{err}"
        );
        assert!(err.contains("rentix store check"), "{err}");
    }
    assert!(
        !out_file.exists(),
        "nothing is published from a damaged store"
    );
}

#[test]
fn a_file_of_another_size_is_named_by_the_ordinary_check() {
    let dir = tempfile::tempdir().unwrap();
    let store = one_partition(dir.path());
    let file = store.join(PART);
    let mut bytes = std::fs::read(&file).unwrap();
    let n = bytes.len();
    bytes.insert(n / 2, 0);
    std::fs::write(&file, &bytes).unwrap();
    let (code, _, err) = check(&store, false);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(PART) && err.contains(&format!("{} bytes", n + 1)),
        "{err}"
    );
}

/// A record written before checksums (no `partition_checksums`) reads, checks sound
/// and says so; `index` reads it.
#[test]
fn a_store_without_checksums_reads_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let store = one_partition(dir.path());
    let mut r = record(&store);
    r.as_object_mut().unwrap().remove("partition_checksums");
    std::fs::write(
        store.join("runs/run-000001.json"),
        serde_json::to_string_pretty(&r).unwrap(),
    )
    .unwrap();
    for deep in [false, true] {
        let (code, out, err) = check(&store, deep);
        assert_eq!(code, Some(0), "{err}");
        assert!(
            out.contains("1 partition(s): no checksum recorded"),
            "{out}"
        );
    }
    rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--out",
        p(&dir.path().join("f.csv")),
    ]);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Any single bit flipped in any stored price of the value column is detected
    /// by the deep check, which names the file.
    #[test]
    fn any_flipped_bit_in_the_value_column_is_detected(which in 0usize..20, bit in 0usize..64) {
        let dir = tempfile::tempdir().unwrap();
        let store = pristine();
        let copy = dir.path().join("store");
        crate::util::copy_tree(store, &copy);
        let file = copy.join(PART);
        let mut bytes = std::fs::read(&file).unwrap();
        let at = value_offsets(&bytes);
        bytes[at[which] + bit / 8] ^= 1 << (bit % 8);
        std::fs::write(&file, &bytes).unwrap();
        let report = check_store_deep(&Store::open(&copy).unwrap());
        prop_assert!(
            report.problems.iter().any(|p| p.contains(PART) && p.contains("SHA-256")),
            "{:?}", report.problems
        );
    }
}

/// One store, made once, that the property test copies.
fn pristine() -> &'static Path {
    static STORE: std::sync::OnceLock<(tempfile::TempDir, PathBuf)> = std::sync::OnceLock::new();
    &STORE
        .get_or_init(|| {
            let tmp = tempfile::tempdir().unwrap();
            let store = one_partition(tmp.path());
            (tmp, store)
        })
        .1
}

/// Readers check the cheap part: `index` (and `verify`, which reads the same way)
/// refuses a partition whose size is not the committed one, naming the file and
/// pointing at `store check --deep`, instead of fixing from changed bytes.
#[test]
fn index_refuses_a_partition_whose_size_changed_since_its_commit() {
    let dir = tempfile::tempdir().unwrap();
    let store = one_partition(dir.path());
    let part = store.join(PART);
    let mut bytes = std::fs::read(&part).unwrap();
    bytes.extend_from_slice(b"appended");
    std::fs::write(&part, &bytes).unwrap();
    let out = rentix(&[
        "index",
        "--store",
        p(&store),
        "--out",
        p(&dir.path().join("f.csv")),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("run-000001.parquet") && err.contains("changed after its commit"),
        "{err}"
    );
    assert!(err.contains("store check --store"), "{err}");
    // store check still reports it (it does not stop at the first reader's refusal).
    let (code, stdout, stderr) = check(&store, false);
    assert_ne!(code, Some(0), "{stdout}{stderr}");
}

/// `ingest --json` prints the run record it committed, whole: each partition's
/// checksum (hashed by the month's writer once the file was written) included and
/// equal to `sha256sum` of the file in place.
#[test]
fn the_json_summary_is_the_run_record_with_its_checksums() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = String::from("kind,observed_at,source,gpu,scope,term,price,price_unit,currency\n");
    for (k, day) in ["2025-03-03", "2025-04-07", "2025-05-12"]
        .iter()
        .enumerate()
    {
        s.push_str(&format!(
            "listing,{day}T12:00:00Z,s{k},h100-sxm-80gb,vm,on-demand,{},gpu_hour,USD\n",
            price(k)
        ));
    }
    std::fs::write(dir.path().join("obs.csv"), &s).unwrap();
    let store = dir.path().join("store");
    let out = rentix_ok(&[
        "ingest",
        "--json",
        "--store",
        p(&store),
        p(&dir.path().join("obs.csv")),
    ]);
    let printed: serde_json::Value = serde_json::from_str(&out).unwrap();
    let record = record(&store);
    assert_eq!(printed, record);
    let sums = record["partition_checksums"].as_object().unwrap();
    assert_eq!(sums.len(), 3, "{sums:?}");
    for (rel, sum) in sums {
        assert_eq!(sum["sha256"], sha256sum(&store.join(rel)).as_str(), "{rel}");
        assert_eq!(sum["rows"], 1, "{rel}");
    }
}

/// A store of 20 listings on the 3rd of each 2025 month of `months` (`"03"`),
/// priced [`price`], in one run: a partition a month.
fn listings_in(dir: &Path, months: &[&str]) -> PathBuf {
    let mut s = String::from(
        "kind,observed_at,source,gpu,scope,term,price,price_unit,currency,quantity_gpu_hours\n",
    );
    for month in months {
        for k in 0..20 {
            s.push_str(&format!(
                "listing,2025-{month}-03T12:00:00Z,s{k},h100-sxm-80gb,vm,on-demand,{},gpu_hour,USD,\n",
                price(k)
            ));
        }
    }
    std::fs::write(dir.join("obs.csv"), s).unwrap();
    let store = dir.join("store");
    rentix_ok(&["ingest", "--store", p(&store), p(&dir.join("obs.csv"))]);
    store
}

/// A partition whose run record describes another file (a compaction or a
/// migration gone wrong; here another month's file, its record's digest and size
/// made to match) is a damaged store, by every reader: a hostile round found such
/// a file read without an error, its month's rows gone and another's counted
/// twice. Its rows are compared with the record's and with the file's month.
#[test]
fn a_partition_of_another_month_under_its_record_is_a_damaged_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = listings_in(dir.path(), &["03", "04"]);
    let april = "observations/month=2025-04/run-000001.parquet";
    let bytes = std::fs::read(store.join(PART)).unwrap();
    std::fs::write(store.join(april), &bytes).unwrap();
    let record = store.join("runs/run-000001.json");
    let mut r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    r["partition_checksums"][april]["sha256"] = sha256sum(&store.join(april)).into();
    r["partition_checksums"][april]["bytes"] = (bytes.len() as u64).into();
    std::fs::write(&record, serde_json::to_string_pretty(&r).unwrap()).unwrap();

    let late = dir.path().join("late.csv");
    std::fs::write(
        &late,
        "kind,observed_at,source,gpu,scope,term,price,price_unit,currency\nlisting,2025-04-03T13:00:00Z,t,h100-sxm-80gb,vm,on-demand,2.5,gpu_hour,USD\n",
    )
    .unwrap();
    let out_file = dir.path().join("f.csv");
    for args in [
        vec!["index", "--store", p(&store), "--out", p(&out_file)],
        vec!["health", "--store", p(&store)],
        vec!["ingest", "--store", p(&store), p(&late)],
    ] {
        let o = rentix(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{args:?}: {err}");
        assert!(
            err.contains(april) && err.contains("outside the file's month=2025-04"),
            "{args:?}: {err}"
        );
        assert!(err.contains("rentix store check"), "{err}");
    }
    assert!(
        !out_file.exists(),
        "nothing is published from a damaged store"
    );
}

/// A damaged partition stops only the reads that need it: `index --to` a day
/// whose rows cannot depend on its month (past a grade's longest life, some 100
/// days) publishes (a hostile round found a damaged November stopping a
/// publication of January to March: the run read the whole store, and so did the
/// feed-health line, from its horizon to the store's end). A range whose rows can
/// depend on the damaged month is still refused.
#[test]
fn a_damaged_month_after_the_requested_range_does_not_stop_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = listings_in(dir.path(), &["03", "09"]);
    let september = "observations/month=2025-09/run-000001.parquet";
    flip_a_price_bit(&store.join(september));

    let out_file = dir.path().join("f.csv");
    let o = rentix(&[
        "index",
        "--store",
        p(&store),
        "--to",
        "2025-03-31",
        "--out",
        p(&out_file),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let published = std::fs::read_to_string(&out_file).unwrap();
    assert!(published.contains("2025-03-03,"), "{published}");
    assert!(!published.contains("2025-09-"), "{published}");
    // ... and verifies: verify reads what the publication read, no further.
    let o = rentix(&["verify", "--store", p(&store), "--fixings", p(&out_file)]);
    let said = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{said}");

    let o = rentix(&[
        "index",
        "--store",
        p(&store),
        "--to",
        "2025-09-30",
        "--out",
        p(&dir.path().join("g.csv")),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains(september), "{err}");

    // A month cut short (the commonest damage: an interrupted copy, a full disk)
    // is as far from the read: the sizes checked before a read are those of the
    // files it covers (every file's size was checked when the store was listed).
    let bytes = std::fs::read(store.join(september)).unwrap();
    std::fs::write(store.join(september), &bytes[..bytes.len() / 2]).unwrap();
    std::fs::remove_file(&out_file).unwrap();
    for args in [
        vec![
            "index",
            "--store",
            p(&store),
            "--to",
            "2025-03-31",
            "--out",
            p(&out_file),
        ],
        vec!["verify", "--store", p(&store), "--fixings", p(&out_file)],
    ] {
        let o = rentix(&args);
        let said =
            String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {said}");
    }
    let (code, _, err) = check(&store, false);
    assert_eq!(code, Some(1), "store check still names it: {err}");
}

/// A partition file that no run record names, in a month a read covers, stops the
/// read, naming it: with a run record moved out (a `runs/` restored from an older
/// backup), `index` published January alone and `verify` passed, where `ingest`
/// and `store check` refused (a hostile round). A month the read does not cover
/// (a back-fill of January reads to early May) stops nothing.
#[test]
fn a_partition_no_run_record_names_stops_a_read_of_its_month() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let obs = |name: &str, days: &[&str]| {
        let f = dir.join(name);
        let pairs: Vec<(&str, &str)> = days.iter().map(|d| ("h100-sxm-80gb", *d)).collect();
        std::fs::write(&f, crate::util::five_listings(&pairs, |_| "2.5".into())).unwrap();
        f
    };
    let store = dir.join("store");
    let jan = obs("jan.csv", &["2025-01-10", "2025-01-11"]);
    let jul = obs("jul.csv", &["2025-07-10", "2025-07-11"]);
    rentix_ok(&["ingest", "--store", p(&store), p(&jan)]);
    rentix_ok(&["ingest", "--store", p(&store), p(&jul)]);
    std::fs::rename(
        store.join("runs/run-000002.json"),
        dir.join("run-000002.json"),
    )
    .unwrap();
    let out = dir.join("f.csv");
    let o = rentix(&["index", "--store", p(&store), "--out", p(&out)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("observations/month=2025-07/run-000002.parquet")
            && err.contains("no run record names"),
        "{err}"
    );
    assert!(!out.exists());
    // January alone does not read February.
    rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--to",
        "2025-01-31",
        "--out",
        p(&out),
    ]);
}
