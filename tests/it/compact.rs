//! `rentix store compact`: a store that many runs wrote (one file per run per month)
//! becomes one file per month holding the same rows, with their provenance, and
//! gives the same fixings; the store stays checkable and later runs build on it.

use crate::util::{copy_tree, p, rentix, rentix_ok};
use rentix_store::{Store, StoredObservation};
use serde_json::Value;
use std::path::Path;

/// Every committed row, in dedupe-key order (a key is unique within its date).
pub(crate) fn rows(store: &Path) -> Vec<StoredObservation> {
    let mut rows = Store::open(store).unwrap().read(None, None).unwrap();
    rows.sort_by(|a, b| {
        (a.obs.fixing_date, &a.dedupe_key).cmp(&(b.obs.fixing_date, &b.dedupe_key))
    });
    rows
}

/// Files under `observations/`, relative to it.
pub(crate) fn files(store: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for day in std::fs::read_dir(store.join("observations")).unwrap() {
        let day = day.unwrap().path();
        for f in std::fs::read_dir(&day).unwrap() {
            let f = f.unwrap().path();
            out.push(format!(
                "{}/{}",
                day.file_name().unwrap().to_string_lossy(),
                f.file_name().unwrap().to_string_lossy()
            ));
        }
    }
    out.sort();
    out
}

pub(crate) fn compact(store: &Path) -> Value {
    serde_json::from_str(&rentix_ok(&[
        "store",
        "compact",
        "--json",
        "--store",
        p(store),
    ]))
    .unwrap()
}

/// `store compact` with ten rows in memory: every date is merged from its files a
/// few rows at a time.
fn compact_in_slices(store: &Path) -> std::process::Output {
    rentix(&[
        "store",
        "compact",
        "--json",
        "--store",
        p(store),
        "--batch-rows",
        "10",
    ])
}

pub(crate) fn check_is_sound(store: &Path) -> Value {
    serde_json::from_str(&rentix_ok(&[
        "store",
        "check",
        "--json",
        "--store",
        p(store),
    ]))
    .unwrap()
}

/// A simulated market of 60 days split row by row (round robin) into three files,
/// each ingested by a run of its own: every date gets three files.
pub(crate) fn three_runs(dir: &Path) -> std::path::PathBuf {
    three_runs_over(dir, "60")
}

/// [`three_runs`] of `days` days.
fn three_runs_over(dir: &Path, days: &str) -> std::path::PathBuf {
    let sim = dir.join("sim");
    rentix_ok(&[
        "simulate",
        "--out",
        p(&sim),
        "--rows",
        "6000",
        "--days",
        days,
        "--start",
        "2025-03-01",
    ]);
    let text = std::fs::read_to_string(sim.join("observations.csv")).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let mut parts = vec![format!("{header}\n"); 3];
    for (i, line) in lines.enumerate() {
        parts[i % 3].push_str(line);
        parts[i % 3].push('\n');
    }
    let store = dir.join("store");
    for (i, part) in parts.iter().enumerate() {
        let f = dir.join(format!("part{i}.csv"));
        std::fs::write(&f, part).unwrap();
        rentix_ok(&["ingest", "--json", "--store", p(&store), p(&f)]);
    }
    store
}

#[test]
fn compaction_keeps_every_row_its_provenance_and_every_fixing() {
    let dir = tempfile::tempdir().unwrap();
    let store = three_runs(dir.path());
    let before_files = files(&store);
    let before_rows = rows(&store);
    let fix = |name: &str| {
        let out = dir.path().join(name);
        rentix_ok(&["index", "--store", p(&store), "--out", p(&out)]);
        std::fs::read(out).unwrap()
    };
    let fixings_before = fix("before.csv");
    // 60 days from 2025-03-01: March and April, a file of each run in each.
    let days = before_files.len() / 3;
    assert_eq!((days, before_files.len()), (2, 6), "three files a month");
    assert_eq!(check_is_sound(&store)["months_in_several_files"], days);

    let s = compact(&store);
    assert_eq!(s["run_id"], "run-000004");
    assert_eq!(s["months"], days);
    assert_eq!(s["files_replaced"], 3 * days);
    assert_eq!(s["files_written"], days);
    assert_eq!(s["files_before"], 3 * days);
    assert_eq!(s["files_after"], days);
    assert_eq!(s["rows"], before_rows.len());

    let after_files = files(&store);
    assert_eq!(after_files.len(), days);
    assert!(after_files
        .iter()
        .all(|f| f.ends_with("/run-000004.parquet")));
    // The same rows, field for field, file and row of origin included.
    assert_eq!(rows(&store), before_rows);
    assert_eq!(fix("after.csv"), fixings_before);
    let check = check_is_sound(&store);
    assert_eq!(check["rows"], before_rows.len());
    assert_eq!(check["uncommitted_files"].as_array().unwrap().len(), 0);
    assert_eq!(check["months_in_several_files"], 0);

    // Nothing left to do: no run, no record.
    let again = compact(&store);
    assert_eq!(again["run_id"], Value::Null);
    assert_eq!(again["files_after"], days);
    assert_eq!(Store::open(&store).unwrap().runs().unwrap().len(), 4);
}

/// A trade of 100 GPU-hours of H100 bare metal at 2.25 on 2025-03-05 (`late-1`,
/// from `late-desk`), as a line of a file whose header is `header`.
pub(crate) fn late_trade(header: &str) -> String {
    header
        .split(',')
        .map(|c| match c {
            "obs_id" => "late-1",
            "kind" => "trade",
            "observed_at" => "2025-03-05T12:00:00Z",
            "source" => "late-desk",
            "gpu" => "h100-sxm-80gb",
            "scope" => "bare-metal",
            "term" => "on-demand",
            "price" => "2.25",
            "price_unit" => "gpu_hour",
            "currency" => "USD",
            "quantity_gpu_hours" => "100",
            _ => "",
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn later_runs_deduplicate_against_compacted_rows_and_compact_again() {
    let dir = tempfile::tempdir().unwrap();
    let store = three_runs(dir.path());
    compact(&store);
    let before_rows = rows(&store);
    // Re-sent rows of part 0 (renamed, so not skipped as the same file) plus one
    // new trade: the re-sent rows are duplicates of the compacted store.
    let part0 = std::fs::read_to_string(dir.path().join("part0.csv")).unwrap();
    let header = part0.lines().next().unwrap().to_string();
    let resent: Vec<&str> = part0.lines().skip(1).take(50).collect();
    let new_row = late_trade(&header);
    let late = dir.path().join("late.csv");
    std::fs::write(
        &late,
        format!("{header}\n{}\n{new_row}\n", resent.join("\n")),
    )
    .unwrap();
    let summary: Value = serde_json::from_str(&rentix_ok(&[
        "ingest",
        "--json",
        "--store",
        p(&store),
        p(&late),
    ]))
    .unwrap();
    assert_eq!(summary["duplicates_of_store"], 50, "{summary}");
    assert_eq!(summary["accepted"], 1, "{summary}");
    assert_eq!(
        files(&store)
            .iter()
            .filter(|f| f.starts_with("month=2025-03/"))
            .count(),
        2
    );

    assert_eq!(check_is_sound(&store)["months_in_several_files"], 1);
    let s = compact(&store);
    assert_eq!(s["months"], 1);
    assert_eq!(s["files_replaced"], 2);
    assert_eq!(s["rows"].as_u64().unwrap(), {
        let n = before_rows
            .iter()
            .filter(|r| r.obs.fixing_date.to_string().starts_with("2025-03-"));
        n.count() as u64 + 1
    });
    let after = rows(&store);
    assert_eq!(after.len(), before_rows.len() + 1);
    assert!(after
        .iter()
        .any(|r| r.obs.obs_id == "late-1" && *r.obs.input_file == *p(&late)));
    let check = check_is_sound(&store);
    assert_eq!(check["rows"], after.len());
}

#[test]
fn a_compaction_killed_after_its_commit_leaves_files_the_next_run_removes() {
    let dir = tempfile::tempdir().unwrap();
    let store = three_runs(dir.path());
    let keep = dir.path().join("kept.parquet");
    let replaced = files(&store)[0].clone();
    std::fs::copy(store.join("observations").join(&replaced), &keep).unwrap();
    let before_rows = rows(&store);
    compact(&store);
    // As if killed between its run record and removing what it replaced.
    std::fs::copy(&keep, store.join("observations").join(&replaced)).unwrap();
    assert_eq!(rows(&store), before_rows, "readers skip a replaced file");
    let check = check_is_sound(&store);
    assert_eq!(
        check["uncommitted_files"],
        serde_json::json!([format!("observations/{replaced}")])
    );
    // The next run (here a compaction with nothing to merge) sweeps it.
    compact(&store);
    assert!(!store.join("observations").join(&replaced).exists());
    assert_eq!(rows(&store), before_rows);
}

#[test]
fn a_store_check_names_a_compaction_that_lost_rows() {
    let dir = tempfile::tempdir().unwrap();
    let store = three_runs(dir.path());
    compact(&store);
    // A compacted file deleted by hand: the store no longer holds what its runs
    // accepted, and the check says so.
    let gone = files(&store)[0].clone();
    std::fs::remove_file(store.join("observations").join(&gone)).unwrap();
    let out = rentix(&["store", "check", "--json", "--store", p(&store)]);
    assert!(!out.status.success());
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let problems = report["problems"].to_string();
    assert!(
        problems.contains(&format!("{gone} (run run-000004): unreadable")),
        "{problems}"
    );
    assert!(problems.contains("the runs accepted"), "{problems}");
}

#[test]
fn min_files_leaves_dates_with_fewer_files_alone() {
    let dir = tempfile::tempdir().unwrap();
    let store = three_runs(dir.path());
    let before = files(&store);
    let s: Value = serde_json::from_str(&rentix_ok(&[
        "store",
        "compact",
        "--json",
        "--store",
        p(&store),
        "--min-files",
        "4",
    ]))
    .unwrap();
    assert_eq!(s["run_id"], Value::Null);
    assert_eq!(files(&store), before);
    let out = rentix(&[
        "store",
        "compact",
        "--json",
        "--store",
        p(&store),
        "--min-files",
        "1",
    ]);
    assert!(!out.status.success(), "one file a date is already compact");
}

#[test]
fn a_date_whose_files_share_a_key_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let store = three_runs(dir.path());
    // A store no ingest writes: a run record naming a copy of another run's file,
    // so a date holds every row of that file twice.
    let date = files(&store)[0].split('/').next().unwrap().to_string();
    let copy = format!("observations/{date}/run-000004.parquet");
    std::fs::copy(
        store.join(format!("observations/{date}/run-000001.parquet")),
        store.join(&copy),
    )
    .unwrap();
    let n = rentix_store::Table::parquet_rows(&store.join(&copy)).unwrap();
    let mut record: Value =
        serde_json::from_str(&std::fs::read_to_string(store.join("runs/run-000001.json")).unwrap())
            .unwrap();
    record["run_id"] = "run-000004".into();
    record["partitions"] = serde_json::json!([copy]);
    record["files"] = serde_json::json!([]);
    record["input_sha256"] = serde_json::json!({});
    for k in ["rows_read", "accepted"] {
        record[k] = n.into();
    }
    for k in [
        "quarantined",
        "duplicates",
        "duplicates_within_run",
        "duplicates_of_store",
    ] {
        record[k] = 0.into();
    }
    record["quarantined_by_reason"] = serde_json::json!({});
    std::fs::write(store.join("runs/run-000004.json"), record.to_string()).unwrap();
    let before = files(&store);

    // In memory, and merged a slice at a time.
    for extra in [&[][..], &["--batch-rows", "10"][..]] {
        let mut args = vec!["store", "compact", "--json", "--store", p(&store)];
        args.extend(extra);
        let out = rentix(&args);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("is stored twice") && err.contains(&date[5..]),
            "{extra:?}: {err}"
        );
    }
    assert_eq!(files(&store), before, "nothing moved");
    assert_eq!(Store::open(&store).unwrap().runs().unwrap().len(), 4);
    assert!(!store.join(".lock").exists());
    assert!(!store.join("staging").exists(), "what was staged is gone");
}

#[test]
fn a_date_merged_a_slice_at_a_time_is_the_file_memory_would_write() {
    let dir = tempfile::tempdir().unwrap();
    let store = three_runs(dir.path());
    let streamed = dir.path().join("streamed");
    copy_tree(&store, &streamed);
    compact(&store);
    // Every date is too busy, and is merged from its three files three rows at a
    // time.
    let out = compact_in_slices(&streamed);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["files_after"], files(&store).len());
    assert_eq!(files(&streamed), files(&store));
    for f in files(&store) {
        let read = |root: &Path| std::fs::read(root.join("observations").join(&f)).unwrap();
        assert!(read(&streamed) == read(&store), "{f} differs");
    }
    check_is_sound(&streamed);
}

#[test]
fn a_file_out_of_partition_order_is_sorted_in_memory_and_refused_by_slices() {
    let dir = tempfile::tempdir().unwrap();
    let store = three_runs(dir.path());
    // A file rewritten with its rows reversed (rentix never writes one).
    let rel = format!("observations/{}", files(&store)[0]);
    let mut rows = Store::open(&store).unwrap().read_part(&rel).unwrap();
    assert!(rows.len() > 2);
    rows.reverse();
    rentix_store::to_table(&mut rows)
        .write(&store.join(&rel))
        .unwrap();
    crate::util::forget_checksums(&store);
    let streamed = dir.path().join("streamed");
    copy_tree(&store, &streamed);
    let out = compact_in_slices(&streamed);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&rel) && err.contains("out of partition order"),
        "{err}"
    );
    // Held in memory, the date is sorted as it is merged.
    let before = self::rows(&store);
    compact(&store);
    assert_eq!(self::rows(&store), before);
}

#[test]
fn a_read_that_a_compaction_overtakes_starts_again_and_sees_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let store_dir = three_runs_over(dir.path(), "730");
    let store = Store::open(&store_dir).unwrap();
    let rows_before = rows(&store_dir).len();
    // The reader lists the store's 3 x 24 files (a file per run and month); after
    // the first file is handed over, a compaction commits and deletes them: the
    // files not read yet are gone.
    let (mut compacted, mut agains, mut seen) = (false, 0, 0usize);
    store
        .for_each_fixing_part(None, None, |delivery| match delivery {
            rentix_store::Delivery::Part(part) => {
                if !compacted {
                    compacted = true;
                    rentix_store::compact(
                        &store_dir,
                        rentix_store::Compaction::MinFiles(2),
                        250_000,
                    )
                    .unwrap();
                }
                seen += part.len();
            }
            rentix_store::Delivery::Again => {
                agains += 1;
                seen = 0;
            }
        })
        .unwrap();
    assert_eq!(agains, 1, "told to start again once");
    assert_eq!(
        seen, rows_before,
        "then every row, from the compacted files"
    );
    // Reading whole tables starts again too.
    assert_eq!(store.read(None, None).unwrap().len(), rows_before);
}

/// Without `--json` the store commands print a few lines for a person (they
/// printed only JSON): what was checked and whether the store is sound, what a
/// compaction did, and a problem named on its own line.
#[test]
fn the_store_commands_speak_to_a_person_and_give_json_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let store = three_runs(dir.path());
    let said = rentix_ok(&["store", "check", "--store", p(&store)]);
    assert!(!said.trim_start().starts_with('{'), "{said}");
    assert!(
        said.contains("3 run(s)") && said.contains("checksum(s) recomputed and matched; sound"),
        "{said}"
    );
    assert!(
        said.contains("`rentix store compact` merges them"),
        "{said}"
    );
    let said = rentix_ok(&["store", "compact", "--store", p(&store)]);
    assert!(
        said.contains("merged") && said.contains("rows, the same"),
        "{said}"
    );
    let said = rentix_ok(&["store", "compact", "--store", p(&store)]);
    assert!(said.contains("nothing to do"), "{said}");
    let gone = files(&store)[0].clone();
    std::fs::remove_file(store.join("observations").join(&gone)).unwrap();
    let out = rentix(&["store", "check", "--store", p(&store)]);
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.lines()
            .any(|l| l.starts_with("problem: ") && l.contains(&gone)),
        "{said}"
    );
}
