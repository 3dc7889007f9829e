//! Store invariants: row order does not change what is stored; the accounting
//! identity holds; a killed run leaves nothing behind that readers would see.

use proptest::prelude::*;
use rentix_ingest::{ingest, IngestOptions};
use rentix_store::{content_key, Store};
use std::path::Path;

const HEADER: &str = "kind,observed_at,source,gpu,scope,term,price,price_unit,currency,obs_id,quantity_gpu_hours,gpus_per_unit,region";

fn rows() -> Vec<String> {
    let mut v = vec![
        "trade,2025-03-01T10:00:00Z,acme,H100 SXM,bare-metal,on-demand,2.5,gpu_hour,USD,t1,800,,us".to_string(),
        "trade,2025-03-01T11:00:00Z,acme,H100 SXM,bare-metal,on-demand,2.6,gpu_hour,USD,t1,800,,us".to_string(),
        "trade,2025-03-01T12:00:00Z,beta,H100 SXM,bare-metal,on-demand,2.4,gpu_hour,USD,t2,400,,eu".to_string(),
        "listing,2025-03-01T08:00:00Z,gamma,NVIDIA H100 80GB HBM3,vm,on-demand,24,instance_hour,USD,,,8,us".to_string(),
        "listing,2025-03-01T20:00:00Z,gamma,NVIDIA H100 80GB HBM3,vm,on-demand,24,instance_hour,USD,,,8,us".to_string(),
        "listing,2025-03-02T08:00:00Z,gamma,NVIDIA H100 80GB HBM3,vm,on-demand,24,instance_hour,USD,,,8,us".to_string(),
        "firm,2025-03-02T09:00:00Z,delta,h200-sxm-141gb,bare-metal,1m,2000,gpu_month,EUR,f1,,,eu".to_string(),
        "trade,2025-03-02T09:00:00Z,delta,h200-sxm-141gb,bare-metal,1m,3.1,gpu_hour,USD,,,,eu".to_string(),
        "listing,2025-03-02T09:00:00Z,delta,H9000,bare-metal,1m,3.1,gpu_hour,USD,,,,eu".to_string(),
        "listing,2025-03-02T09:00:00Z,delta,h200-sxm-141gb,bare-metal,1m,NaN,gpu_hour,USD,,,,eu".to_string(),
        "listing,2025-03-02T09:00:00Z,delta,h200-sxm-141gb,bare-metal,1m,-2,gpu_hour,USD,,,,eu".to_string(),
        "listing,03/02/2025,delta,h200-sxm-141gb,bare-metal,1m,2,gpu_hour,USD,,,,eu".to_string(),
        "listing,2025-03-02,delta,h200-sxm-141gb,bare-metal,1m,2".to_string(),
    ];
    for i in 0..20 {
        v.push(format!(
            "trade,2025-03-0{}T{:02}:00:00Z,p{},a100-sxm-80gb,vm,spot,{:.2},gpu_hour,USD,x{i},{},,us",
            1 + i % 3,
            i % 24,
            i % 4,
            1.0 + f64::from(i) * 0.01,
            100 + i
        ));
    }
    v
}

fn write(path: &Path, rows: &[String]) {
    std::fs::write(path, format!("{HEADER}\n{}\n", rows.join("\n"))).unwrap();
}

/// The store's content: every observation's content key, sorted.
fn content(store: &Path) -> Vec<String> {
    let mut v: Vec<String> = Store::open(store)
        .unwrap()
        .read(None, None)
        .unwrap()
        .iter()
        .map(|r| format!("{}|{}", r.dedupe_key, content_key(&r.obs)))
        .collect();
    v.sort();
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn any_row_order_gives_the_same_store(seed in any::<u64>()) {
        use rand::seq::SliceRandom;
        use rand::SeedableRng;
        let dir = tempfile::tempdir().unwrap();
        let base = rows();
        let mut shuffled = base.clone();
        shuffled.shuffle(&mut rand::rngs::StdRng::seed_from_u64(seed));
        write(&dir.path().join("a.csv"), &base);
        write(&dir.path().join("b.csv"), &shuffled);
        let opts = IngestOptions { batch_rows: 3, ..Default::default() };
        let sa = ingest(&dir.path().join("sa"), &[dir.path().join("a.csv")], &opts, &mut |_| {}).unwrap();
        let sb = ingest(&dir.path().join("sb"), &[dir.path().join("b.csv")], &opts, &mut |_| {}).unwrap();
        prop_assert_eq!(sa.rows_read, sa.accepted + sa.quarantined + sa.duplicates);
        prop_assert_eq!((sa.accepted, sa.quarantined, sa.duplicates), (sb.accepted, sb.quarantined, sb.duplicates));
        prop_assert_eq!(&sa.quarantined_by_reason, &sb.quarantined_by_reason);
        prop_assert_eq!(content(&dir.path().join("sa")), content(&dir.path().join("sb")));
        // Spilling every 3 rows (binary staging) and never spilling give the same store.
        let whole = IngestOptions { batch_rows: 1_000_000, ..Default::default() };
        let sc = ingest(&dir.path().join("sc"), &[dir.path().join("b.csv")], &whole, &mut |_| {}).unwrap();
        prop_assert_eq!(sc.accepted, sb.accepted);
        prop_assert_eq!(content(&dir.path().join("sc")), content(&dir.path().join("sb")));
    }
}

#[test]
fn counts_of_the_fixed_sample() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("a.csv"), &rows());
    let s = ingest(
        &dir.path().join("s"),
        &[dir.path().join("a.csv")],
        &IngestOptions::default(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(s.rows_read, 33);
    // t1 twice (same source id), gamma's listing re-seen the same day at the same price.
    assert_eq!(s.duplicates, 2);
    let q = |r: &str| s.quarantined_by_reason.get(r).copied().unwrap_or(0);
    assert_eq!(
        (
            q("missing_quantity"),
            q("unknown_gpu"),
            q("non_finite_price"),
            q("non_positive_price"),
            q("unparseable_date"),
            q("wrong_column_count")
        ),
        (1, 1, 1, 1, 1, 1)
    );
    assert_eq!(s.accepted, 33 - 2 - 6);
}

#[test]
fn a_killed_run_leaves_the_store_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    write(&dir.path().join("a.csv"), &rows()[..3]);
    ingest(
        &store,
        &[dir.path().join("a.csv")],
        &IngestOptions::default(),
        &mut |_| {},
    )
    .unwrap();
    let before = content(&store);
    // What a run killed before its commit leaves: a partition file no run record
    // names, a staging directory, and its lock.
    let stray = store.join("observations/month=2025-03/run-000002.parquet");
    std::fs::copy(
        store.join("observations/month=2025-03/run-000001.parquet"),
        &stray,
    )
    .unwrap();
    std::fs::create_dir_all(store.join("staging/run-000002")).unwrap();
    assert_eq!(content(&store), before, "readers ignore uncommitted files");
    std::fs::write(store.join(".lock"), "").unwrap();
    let err = ingest(
        &store,
        &[dir.path().join("a.csv")],
        &IngestOptions::default(),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(err.to_string().contains(".lock"), "{err}");
    std::fs::remove_file(store.join(".lock")).unwrap();
    // The next run sweeps the leftovers and commits normally.
    write(&dir.path().join("b.csv"), &rows()[3..6]);
    let s = ingest(
        &store,
        &[dir.path().join("b.csv")],
        &IngestOptions::default(),
        &mut |_| {},
    )
    .unwrap();
    // The killed run's id 2 is not given again (its leftovers used it).
    assert_eq!(s.run_id, "run-000003");
    assert!(!store.join("staging").exists());
    assert_eq!(content(&store).len(), before.len() + 2);
}

/// A hostile run removed a store's only run record: `store check` called the store
/// sound, and the next ingest swept every partition the record had committed,
/// without a word. A file no record names is a killed run's leftover only while
/// that run's staging directory is there; any other such file (a record removed, a
/// file put there by hand) stops ingest before anything is removed, and `store
/// check` names it as a problem.
#[test]
fn files_no_record_names_and_no_killed_run_left_are_never_swept() {
    use crate::util::{p, rentix, rentix_ok};
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    write(&dir.path().join("a.csv"), &rows()[..3]);
    write(&dir.path().join("b.csv"), &rows()[3..6]);
    let opts = IngestOptions::default();
    ingest(&store, &[dir.path().join("a.csv")], &opts, &mut |_| {}).unwrap();
    let record = store.join("runs/run-000001.json");
    let kept = std::fs::read(&record).unwrap();
    std::fs::remove_file(&record).unwrap();
    let files = crate::util::tree;
    let before = files(&store);
    let check = rentix(&["store", "check", "--store", p(&store)]);
    let said = String::from_utf8_lossy(&check.stdout).to_string()
        + &String::from_utf8_lossy(&check.stderr);
    assert_eq!(check.status.code(), Some(1), "{said}");
    assert!(
        said.contains("observations/month=2025-03/run-000001.parquet"),
        "{said}"
    );
    let err = ingest(&store, &[dir.path().join("b.csv")], &opts, &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("no run record names"), "{err}");
    assert_eq!(files(&store), before, "nothing removed");
    // Restored, the store is whole again; a file dropped in by hand stops it too.
    std::fs::write(&record, kept).unwrap();
    let stray = store.join("observations/notes.txt");
    std::fs::write(&stray, "mine").unwrap();
    let err = ingest(&store, &[dir.path().join("b.csv")], &opts, &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("observations/notes.txt"), "{err}");
    assert!(stray.exists());
    std::fs::remove_file(&stray).unwrap();
    ingest(&store, &[dir.path().join("b.csv")], &opts, &mut |_| {}).unwrap();
    rentix_ok(&["store", "check", "--store", p(&store)]);
}

/// A date busier than the memory budget (`batch_rows`) is committed by merging its
/// sorted spills in bounded memory. It must store exactly what an all-in-memory
/// commit stores, in the same row order, with the same accounting: tried on a
/// simulated day with duplicates and conflicts, then on a second file that repeats
/// and contradicts part of the first (duplicates and conflicts of the store).
#[test]
fn a_busy_date_merged_in_bounded_memory_stores_what_memory_would() {
    use crate::util::{p, rentix_ok};
    let dir = tempfile::tempdir().unwrap();
    let sim = dir.path().join("sim");
    rentix_ok(&[
        "simulate",
        "--out",
        p(&sim),
        "--rows",
        "12000",
        "--days",
        "1",
        "--start",
        "2025-06-02",
    ]);
    // The day's file, its first 2,000 rows sent again at its end: identical rows whose
    // survivor must be the earliest, across spills and memory.
    let first = dir.path().join("day.csv");
    let text = std::fs::read_to_string(sim.join("observations.csv")).unwrap();
    let resent: Vec<&str> = text.lines().skip(1).take(2000).collect();
    std::fs::write(&first, format!("{text}{}\n", resent.join("\n"))).unwrap();
    // The second file: every third row of the first again, every ninth at another price.
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let price_at = header.split(',').position(|h| h == "price").unwrap();
    let mut again = vec![header.to_string()];
    for (i, line) in lines.enumerate().filter(|(i, _)| i % 3 == 0) {
        let mut f: Vec<String> = line.split(',').map(str::to_string).collect();
        if i % 9 == 0 {
            f[price_at] = format!("{}1", f[price_at]);
        }
        again.push(f.join(","));
    }
    let second = dir.path().join("again.csv");
    std::fs::write(&second, again.join("\n") + "\n").unwrap();

    let run = |store: &str, batch_rows: usize| {
        let opts = IngestOptions {
            batch_rows,
            ..Default::default()
        };
        let store = dir.path().join(store);
        let a = ingest(&store, std::slice::from_ref(&first), &opts, &mut |_| {}).unwrap();
        let b = ingest(&store, std::slice::from_ref(&second), &opts, &mut |_| {}).unwrap();
        let rows: Vec<String> = Store::open(&store)
            .unwrap()
            .read(None, None)
            .unwrap()
            .iter()
            .map(|r| {
                let o = &r.obs;
                format!(
                    "{}|{}|{}:{}",
                    r.dedupe_key,
                    content_key(o),
                    o.input_file,
                    o.input_row
                )
            })
            .collect();
        (a, b, rows)
    };
    let (ma, mb, merged) = run("merged", 700);
    let (wa, wb, whole) = run("whole", 10_000_000);
    assert!(
        ma.accepted > 2 * 700,
        "the day must need several runs of survivors"
    );
    assert!(mb.duplicates_of_store > 0 && mb.conflicts > 0 && ma.duplicates_within_run > 0);
    assert_eq!(merged, whole, "rows and their order");
    // The re-sent rows are duplicates of their first occurrence, which is kept.
    let original_rows = text.lines().count() - 1;
    assert!(whole.iter().all(|r| {
        let row: usize = r.rsplit(':').next().unwrap().parse().unwrap();
        !r.contains("day.csv:") || row <= original_rows
    }));
    for (m, w) in [(&ma, &wa), (&mb, &wb)] {
        assert_eq!(
            (
                m.accepted,
                m.duplicates_within_run,
                m.duplicates_of_store,
                m.conflicts
            ),
            (
                w.accepted,
                w.duplicates_within_run,
                w.duplicates_of_store,
                w.conflicts
            )
        );
        assert_eq!(m.conflict_examples, w.conflict_examples);
        assert_eq!(m.files, w.files);
    }
}
