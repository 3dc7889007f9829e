//! Run ids and run records through the binary: an id is never given twice, and a
//! record the store did not name (a copy, a renamed file) is refused by readers and
//! named by `store check`.

use crate::util::{ingest_json, p, rentix, rentix_ok};
use std::path::Path;

/// An observations file of five listings on `date`, priced from `base`.
fn listings(path: &Path, date: &str, base: f64) {
    let mut s = String::from(
        "kind,observed_at,source,gpu,scope,term,price,price_unit,currency,quantity_gpu_hours\n",
    );
    for (k, src) in ["a", "b", "c", "d", "e"].iter().enumerate() {
        s.push_str(&format!(
            "listing,{date}T12:00:00Z,{src},h100-sxm-80gb,vm,on-demand,{:.2},gpu_hour,USD,\n",
            base + 0.1 * k as f64
        ));
    }
    std::fs::write(path, s).unwrap();
}

fn record(store: &Path, id: &str) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(store.join(format!("runs/{id}.json"))).unwrap())
        .unwrap()
}

/// Runs 1 and 2 committed; record 1 removed by hand. The next id was `runs + 1` = 2,
/// so run 3 overwrote run 2's record; it is now one past the highest, 3. (The
/// next ingest first refuses the store while run 1's files are there with no
/// record: it used to sweep them, every row run 1 committed; moved out, it runs.)
#[test]
fn a_record_removed_by_hand_does_not_make_its_id_given_again() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    for (f, date) in [
        ("a.csv", "2025-03-03"),
        ("b.csv", "2025-03-04"),
        ("c.csv", "2025-03-05"),
    ] {
        listings(&dir.path().join(f), date, 2.0);
    }
    assert_eq!(
        ingest_json(&store, &dir.path().join("a.csv"))["run_id"],
        "run-000001"
    );
    assert_eq!(
        ingest_json(&store, &dir.path().join("b.csv"))["run_id"],
        "run-000002"
    );
    std::fs::remove_file(store.join("runs/run-000001.json")).unwrap();
    let o = crate::util::rentix(&[
        "ingest",
        "--json",
        "--store",
        crate::util::p(&store),
        crate::util::p(&dir.path().join("c.csv")),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("run-000001.parquet"), "{err}");
    let moved = dir.path().join("moved");
    std::fs::create_dir_all(&moved).unwrap();
    for f in [
        "observations/month=2025-03/run-000001.parquet",
        "quarantine/run-000001.csv",
    ] {
        if store.join(f).exists() {
            std::fs::rename(store.join(f), moved.join(f.replace('/', "_"))).unwrap();
        }
    }
    assert_eq!(
        ingest_json(&store, &dir.path().join("c.csv"))["run_id"],
        "run-000003"
    );
    let two = record(&store, "run-000002");
    let inputs: Vec<&String> = two["input_sha256"].as_object().unwrap().keys().collect();
    assert!(
        inputs.len() == 1 && inputs[0].ends_with("b.csv"),
        "{inputs:?}"
    );
}

/// A copy `run-000001 (copy).json` was read as a second run: `index` read the month
/// twice while `store check` said sound. Readers now refuse the store naming the
/// copy, and `store check` names it as a problem.
#[test]
fn a_copied_record_is_refused_by_readers_and_named_by_check() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    listings(&dir.path().join("a.csv"), "2025-03-03", 2.0);
    ingest_json(&store, &dir.path().join("a.csv"));
    let copy = store.join("runs/run-000001 (copy).json");
    std::fs::copy(store.join("runs/run-000001.json"), &copy).unwrap();
    let out = dir.path().join("f.csv");
    for args in [
        vec!["index", "--store", p(&store), "--out", p(&out)],
        vec!["store", "check", "--json", "--store", p(&store)],
        vec![
            "ingest",
            "--json",
            "--store",
            p(&store),
            p(&dir.path().join("a.csv")),
        ],
    ] {
        let o = rentix(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        // store check's problems are its finding (1); a reader refuses the store as
        // bad input (3).
        let want = if args[0] == "store" { 1 } else { 3 };
        assert_eq!(o.status.code(), Some(want), "{args:?}: {err}");
        assert!(err.contains("run-000001 (copy).json"), "{args:?}: {err}");
        assert!(err.contains("run-NNNNNN.json"), "{args:?}: {err}");
    }
    assert!(!out.exists());
    std::fs::remove_file(&copy).unwrap();
    rentix_ok(&["store", "check", "--json", "--store", p(&store)]);
}

/// A record copied under a name of the store's form still says the run id it was
/// written with: two records claim `run-000001`; both are named.
#[test]
fn two_records_claiming_one_run_id_are_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    listings(&dir.path().join("a.csv"), "2025-03-03", 2.0);
    ingest_json(&store, &dir.path().join("a.csv"));
    std::fs::copy(
        store.join("runs/run-000001.json"),
        store.join("runs/run-000005.json"),
    )
    .unwrap();
    for args in [
        vec![
            "index",
            "--store",
            p(&store),
            "--out",
            p(&dir.path().join("f.csv")),
        ],
        vec!["store", "check", "--json", "--store", p(&store)],
    ] {
        let o = rentix(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        let want = if args[0] == "store" { 1 } else { 3 };
        assert_eq!(o.status.code(), Some(want), "{args:?}: {err}");
        assert!(
            err.contains("run-000005.json") && err.contains("runs/run-000001.json"),
            "{args:?}: {err}"
        );
    }
}
