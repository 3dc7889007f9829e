//! `rentix index`: accuracy against the simulator's truth, the hierarchy fallback,
//! a hand-checked listings methodology on real data, determinism, restatements.

use crate::csvutil::{rows, series};
use crate::fixture::market;
use crate::util::{data, p, rentix, rentix_ok};
use std::collections::BTreeMap;
use std::process::Command;

fn mean_abs_rel_error(fix: &BTreeMap<String, f64>, truth: &BTreeMap<String, f64>) -> (f64, usize) {
    let errs: Vec<f64> = fix
        .iter()
        .filter_map(|(d, v)| truth.get(d).map(|t| (v / t - 1.0).abs()))
        .collect();
    (
        errs.iter().sum::<f64>() / errs.len().max(1) as f64,
        errs.len(),
    )
}

#[test]
fn trade_fixing_tracks_truth_closer_than_a_listing_fixing() {
    let m = market();
    let grade = "h100-sxm-80gb/bare-metal/on-demand";
    let truth = series(&m.sim("truth.csv"), grade, "fair_usd_per_gpu_hour");
    let default = series(&m.fixings(), grade, "value");
    let dir = tempfile::tempdir().unwrap();
    let naive_out = dir.path().join("naive.csv");
    rentix_ok(&[
        "index",
        "--store",
        p(&m.store()),
        "--out",
        p(&naive_out),
        "--methodology",
        p(&data("data/methodologies/listings_only_naive.toml")),
        "--grade",
        grade,
    ]);
    let naive = series(&naive_out, grade, "value");
    let (e_trade, n_trade) = mean_abs_rel_error(&default, &truth);
    let (e_list, n_list) = mean_abs_rel_error(&naive, &truth);
    eprintln!("mean abs relative error vs truth: trade-first {e_trade:.4} ({n_trade} days), listings-only {e_list:.4} ({n_list} days)");
    assert!(n_trade > 600 && n_list > 600);
    assert!(e_trade < 0.03, "{e_trade}");
    assert!(
        e_list > 2.0 * e_trade,
        "listings {e_list:.4} vs trades {e_trade:.4}"
    );
}

#[test]
fn thin_grades_fall_back_through_the_hierarchy_and_say_so() {
    let m = market();
    let all: Vec<_> = rows(&m.fixings())
        .into_iter()
        .filter(|r| r["method"] == "vw-median")
        .collect();
    let mut seen = BTreeMap::new();
    for r in &all {
        *seen.entry(r["level"].clone()).or_insert(0) += 1;
        match r["level"].as_str() {
            "2" => assert!(r["flags"].contains("fallback_firm"), "{r:?}"),
            "3" => assert!(r["flags"].contains("fallback_listing"), "{r:?}"),
            "4" => {
                assert!(
                    r["flags"].contains("carried_forward") && r["sufficient"] == "false",
                    "{r:?}"
                );
                assert_eq!(r["n_obs"], "0");
            }
            "1" => assert!(!r["flags"].contains("fallback")),
            _ => {}
        }
        if r["sufficient"] == "false" {
            assert!(r["flags"].starts_with("low_confidence"), "{r:?}");
        }
    }
    for level in ["1", "2", "3", "4"] {
        assert!(
            seen.get(level).copied().unwrap_or(0) > 100,
            "level {level}: {seen:?}"
        );
    }
    // A listing fallback adjusted by the measured listing-to-trade spread.
    assert!(all
        .iter()
        .any(|r| r["flags"].contains("listing_spread_adjusted")));
}

#[test]
fn seven_day_pooled_listings_on_real_data_checked_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let sample = data("data/real/primeintellect_by_provider_sample.csv");
    rentix_ok(&[
        "ingest",
        "--json",
        "--store",
        p(&store),
        "--mapping",
        p(&data("data/mappings/primeintellect_by_provider.toml")),
        p(&sample),
    ]);
    let out = dir.path().join("f.csv");
    rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--out",
        p(&out),
        "--methodology",
        p(&data("data/methodologies/listings_7d_sigma.toml")),
        "--grade",
        "h100-sxm-80gb/container/on-demand",
    ]);
    let got = rows(&out);
    let fix = got
        .iter()
        .find(|r| r["date"] == "2025-10-28")
        .expect("a fixing on 2025-10-28");

    // By hand: the H100 SXM5 provider averages of 2025-10-22..28, one per provider
    // and day and price (re-seen listings are duplicates).
    let mut seen = std::collections::BTreeSet::new();
    let mut v: Vec<f64> = Vec::new();
    for r in rows(&sample) {
        let day = &r["timestamp"][..10];
        if r["gpu_type"] != "H100_80GB"
            || r["socket_type"] != "SXM5"
            || !("2025-10-22"..="2025-10-28").contains(&day)
        {
            continue;
        }
        if seen.insert((day.to_string(), r["provider"].clone(), r["avg"].clone())) {
            v.push(r["avg"].parse().unwrap());
        }
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let cut = (0.2 * n as f64).floor() as usize;
    let centre = v[cut..n - cut].iter().sum::<f64>() / (n - 2 * cut) as f64;
    let mean = v.iter().sum::<f64>() / n as f64;
    let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    let kept: Vec<f64> = v
        .iter()
        .copied()
        .filter(|x| (x - centre).abs() <= 2.0 * sd)
        .collect();
    let k = kept.len();
    let median = if k % 2 == 1 {
        kept[k / 2]
    } else {
        (kept[k / 2 - 1] + kept[k / 2]) / 2.0
    };
    let want = (median * 1e4).round() / 1e4;
    assert_eq!(
        fix["value"].parse::<f64>().unwrap(),
        want,
        "hand: {v:?} -> kept {kept:?}"
    );
    assert_eq!(fix["n_obs"], k.to_string());
    assert_eq!(fix["n_listings"], n.to_string());
    assert_eq!(fix["level"], "3");
    assert_eq!(fix["method"], "median");
}

#[test]
fn shuffled_inputs_and_thread_counts_give_identical_bytes() {
    let m = market();
    let dir = tempfile::tempdir().unwrap();
    // Shuffle the simulated file's rows (keeping the header), ingest, index.
    let text = std::fs::read_to_string(m.sim("observations.csv")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let header = lines.remove(0);
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for i in (1..lines.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        lines.swap(i, (state % (i as u64 + 1)) as usize);
    }
    let shuffled = dir.path().join("shuffled.csv");
    std::fs::write(&shuffled, format!("{header}\n{}\n", lines.join("\n"))).unwrap();
    let store = dir.path().join("store");
    // Ingest on one thread; the fixture's store was ingested on all of them.
    let o = Command::new(env!("CARGO_BIN_EXE_rentix"))
        .args(["ingest", "--json", "--store", p(&store), p(&shuffled)])
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let run = |threads: &str, out: &str| {
        let out = dir.path().join(out);
        let o = Command::new(env!("CARGO_BIN_EXE_rentix"))
            .args(["index", "--store", p(&store), "--out", p(&out)])
            .env("RAYON_NUM_THREADS", threads)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read(out).unwrap()
    };
    let one = run("1", "one.csv");
    let four = run("4", "four.csv");
    assert!(one == four, "1 and 4 threads differ");
    assert!(
        one == std::fs::read(m.fixings()).unwrap(),
        "shuffled input changed the fixings"
    );
}

#[test]
fn late_data_restates_instead_of_overwriting() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let a = dir.path().join("a.csv");
    let head =
        "kind,observed_at,source,gpu,scope,term,price,price_unit,currency,quantity_gpu_hours";
    let body: Vec<String> = (0..3)
        .map(|i| format!("trade,2025-05-01T1{i}:00:00Z,s{i},h100-sxm-80gb,vm,on-demand,2.{i},gpu_hour,USD,100"))
        .collect();
    std::fs::write(&a, format!("{head}\n{}\n", body.join("\n"))).unwrap();
    rentix_ok(&["ingest", "--json", "--store", p(&store), p(&a)]);
    let out = dir.path().join("fix.csv");
    rentix_ok(&["index", "--store", p(&store), "--out", p(&out)]);
    let grade_rows = |path: &std::path::Path| -> Vec<BTreeMap<String, String>> {
        rows(path)
            .into_iter()
            .filter(|r| r["grade"] == "h100-sxm-80gb/vm/on-demand")
            .collect()
    };
    let first = grade_rows(&out);
    assert_eq!(first[0]["value"], "2.1");
    // A late trade for the same day arrives (1.9: within the robust 3-sigma band of
    // 2.0-2.2, so it is not filtered as an outlier).
    let b = dir.path().join("b.csv");
    std::fs::write(&b, format!("{head}\ntrade,2025-05-01T18:00:00Z,s9,h100-sxm-80gb,vm,on-demand,1.9,gpu_hour,USD,1000\n")).unwrap();
    rentix_ok(&["ingest", "--json", "--store", p(&store), p(&b)]);
    let msg = rentix_ok(&["index", "--store", p(&store), "--out", p(&out)]);
    assert!(msg.contains("restated"), "{msg}");
    let second = grade_rows(&out);
    assert_eq!(second[0]["publication"], "2");
    // Four equal-weight contributors after the 25% cap: the lower median moves to 2.0.
    assert_eq!(second[0]["value"], "2.0");
    let log: Vec<_> = rows(&dir.path().join("fix_restatements.csv"))
        .into_iter()
        .filter(|r| r["grade"] == "h100-sxm-80gb/vm/on-demand")
        .collect();
    assert_eq!(
        (log[0]["old_value"].as_str(), log[0]["reason"].as_str()),
        ("2.1", "late_data")
    );
    assert_eq!(
        grade_rows(&dir.path().join("fix.v1.csv")),
        first,
        "the first publication is kept"
    );
}

#[test]
fn bad_methodology_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.toml");
    let text = std::fs::read_to_string(data("data/methodologies/default.toml"))
        .unwrap()
        .replace("window_days = 1", "window_days = 0");
    std::fs::write(&m, text).unwrap();
    let o = rentix(&[
        "index",
        "--store",
        p(dir.path()),
        "--out",
        p(&dir.path().join("x.csv")),
        "--methodology",
        p(&m),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("m.toml") && err.contains("window_days"),
        "{err}"
    );
}

/// Reading the store a partition at a time (what `index` and `verify` do) fixes the
/// same values as grouping every stored observation at once, under a methodology
/// that pools days, caps contributors and fixes tier and regional grades.
#[test]
fn streaming_the_store_fixes_what_reading_it_whole_fixes() {
    use rentix_index::{compute, compute_from_store, IndexRequest, Methodology};
    let m = market();
    let store = rentix_store::Store::open(&m.store()).unwrap();
    for file in [
        "data/methodologies/default.toml",
        "data/methodologies/settlement_business_days.toml",
        "data/methodologies/listings_7d_sigma.toml",
    ] {
        let req = IndexRequest {
            methodology: Methodology::from_file(&data(file)).unwrap(),
            grade_filters: Vec::new(),
            from: None,
            to: None,
        };
        let whole = compute(&store.read(None, None).unwrap(), &req).unwrap();
        let streamed = compute_from_store(&store, &req).unwrap();
        assert!(!whole.fixings.is_empty(), "{file}");
        assert_eq!(whole.fixings, streamed.fixings, "{file}");
    }
}

/// A grade seen on 2011-01-03 and again on 2026-01-05 used to live every day in
/// between (5,481 rows, most `no_data`; a 216 KB file of such grades made 8.9 million
/// rows). A silence of more than 92 days now ends a life, so each observation day
/// gives its own short life: the default methodology (every day, lag 0, carry 5)
/// fixes the day and carries it five more, 6 rows in 2011, and 1 in 2026 (the run
/// ends on the store's last day). A gap of 10 days is still fixed day by day:
/// 2025-03-03 to 2025-03-13 is 11 days, plus 5 carried = 16. The chained blend of
/// H100 grades lives where a component does: 6 + 1 rows, not 5,481.
#[test]
fn a_long_silence_ends_a_grades_life_instead_of_filling_it_with_rows() {
    let dir = tempfile::tempdir().unwrap();
    let obs = dir.path().join("obs.csv");
    let pairs = [
        ("h100-sxm-80gb", "2011-01-03"),
        ("h100-sxm-80gb", "2026-01-05"),
        ("a100-sxm-80gb", "2025-03-03"),
        ("a100-sxm-80gb", "2025-03-13"),
    ];
    std::fs::write(&obs, crate::util::five_listings(&pairs, |_| "2.5".into())).unwrap();
    let store = dir.path().join("store");
    rentix_ok(&["ingest", "--json", "--store", p(&store), p(&obs)]);
    let out = dir.path().join("f.csv");
    rentix_ok(&["index", "--store", p(&store), "--out", p(&out)]);
    let rows = crate::csvutil::rows(&out);
    let count = |g: &str| rows.iter().filter(|r| r["grade"] == g).count();
    assert_eq!(count("h100-sxm-80gb/vm/on-demand"), 7);
    assert_eq!(count("a100-sxm-80gb/vm/on-demand"), 16);
    assert_eq!(count("h100-sxm-80gb/on-demand-blend"), 7);
    assert!(rows.len() < 40, "{} rows", rows.len());
}

/// `index --input FILE...` fixes raw files in memory with no store: the same bytes as
/// `ingest` + `index` (the shared two-year market, every companion file), and the
/// same through a mapping (the Prime Intellect sample); refused rows go to
/// `<stem>_quarantine.csv`, and the console says how many rows it read and kept.
#[test]
fn one_shot_fixing_from_files_equals_ingest_then_index() {
    let m = crate::fixture::market();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fixings.csv");
    let msg = rentix_ok(&[
        "index",
        "--input",
        p(&m.sim("observations.csv")),
        "--out",
        p(&out),
    ]);
    assert!(msg.contains("in memory, no store"), "{msg}");
    assert!(
        std::fs::read(&out).unwrap() == std::fs::read(m.fixings()).unwrap(),
        "one-shot fixings differ from ingest + index"
    );
    let beside = |d: &std::path::Path, f: &str| std::fs::read(d.join(f)).unwrap();
    for f in ["fixings_forward.csv", "fixings_tier_differentials.csv"] {
        assert!(beside(dir.path(), f) == beside(&m.dir, f), "{f} differs");
    }
    assert!(
        dir.path().join("fixings_quarantine.csv").exists(),
        "the sim has bad rows"
    );
    assert!(!dir.path().join("fixings_state.json").exists());

    let sample = data("data/real/primeintellect_by_provider_sample.csv");
    let mapping = data("data/mappings/primeintellect_by_provider.toml");
    let store = dir.path().join("store");
    rentix_ok(&[
        "ingest",
        "--json",
        "--store",
        p(&store),
        "--mapping",
        p(&mapping),
        p(&sample),
    ]);
    let a = dir.path().join("a.csv");
    let b = dir.path().join("b.csv");
    rentix_ok(&["index", "--store", p(&store), "--out", p(&a)]);
    rentix_ok(&[
        "index",
        "--input",
        p(&sample),
        "--mapping",
        p(&mapping),
        "--out",
        p(&b),
    ]);
    assert!(std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap());

    let both = rentix(&[
        "index",
        "--store",
        p(&store),
        "--input",
        p(&sample),
        "--out",
        p(&b),
    ]);
    assert!(!both.status.success());
    let neither = rentix(&["index", "--out", p(&b)]);
    assert!(!neither.status.success());
    assert!(String::from_utf8_lossy(&neither.stderr).contains("--store"));
}

/// A one-shot interrupted while its files sit in the temporary store leaves no
/// trace of it, and says nothing was committed: the temporary store's run is its
/// own (a hostile round found the store left, 47 MB, and "interrupted after this
/// run was committed" with no fixings written).
#[test]
fn an_interrupted_one_shot_leaves_no_temporary_store() {
    let m = crate::fixture::market();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fixings.csv");
    let o = Command::new(env!("CARGO_BIN_EXE_rentix"))
        .args(through_a_temporary_store(m, &out))
        .env("RENTIX_FAIL_AT", "one-shot:stored:signal")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    // The signal reaches a handler thread; on a busy machine the run may finish
    // first (exit 0, every file in place).
    match o.status.code() {
        Some(130) => {
            assert!(stderr.contains("nothing was committed"), "{stderr}");
            assert!(!out.exists());
        }
        Some(0) => assert!(out.exists()),
        other => panic!("exit {other:?}: {stderr}"),
    }
    let left = temporary_stores(dir.path());
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// A one-shot of the market's observations into `out`, through a temporary store.
fn through_a_temporary_store(m: &crate::fixture::Market, out: &std::path::Path) -> Vec<String> {
    let input = m.sim("observations.csv");
    [
        "index",
        "--input",
        p(&input),
        "--in-memory-mib",
        "0",
        "--out",
        p(out),
    ]
    .map(String::from)
    .to_vec()
}

/// The one-shot temporary stores in `dir`.
fn temporary_stores(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".rentix-one-shot"))
        .collect()
}

/// Files larger than `--in-memory-mib` are fixed through a temporary store beside
/// the output, in bounded memory: the same fixings, companions and quarantine as
/// `ingest` + `index`, the console says which way they were read, and nothing of
/// the temporary store is left.
#[test]
fn one_shot_over_the_memory_limit_goes_through_a_temporary_store() {
    let m = crate::fixture::market();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fixings.csv");
    let args = through_a_temporary_store(m, &out);
    let msg = rentix_ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(msg.contains("through a temporary store"), "{msg}");
    assert!(!msg.contains("in memory, no store"), "{msg}");
    assert!(
        std::fs::read(&out).unwrap() == std::fs::read(m.fixings()).unwrap(),
        "fixings through a temporary store differ from ingest + index"
    );
    let beside = |d: &std::path::Path, f: &str| std::fs::read(d.join(f)).unwrap();
    for f in ["fixings_forward.csv", "fixings_tier_differentials.csv"] {
        assert!(beside(dir.path(), f) == beside(&m.dir, f), "{f} differs");
    }
    // The quarantine is the in-memory route's, byte for byte.
    let mem = tempfile::tempdir().unwrap();
    rentix_ok(&[
        "index",
        "--input",
        p(&m.sim("observations.csv")),
        "--out",
        p(&mem.path().join("fixings.csv")),
    ]);
    assert!(
        beside(dir.path(), "fixings_quarantine.csv")
            == beside(mem.path(), "fixings_quarantine.csv"),
        "the quarantine differs between the two routes"
    );
    let left = temporary_stores(dir.path());
    assert!(left.is_empty(), "left behind: {left:?}");
    // The limit is for --input runs only.
    let store_run = rentix(&[
        "index",
        "--store",
        p(&m.store()),
        "--in-memory-mib",
        "1",
        "--out",
        p(&out),
    ]);
    assert_eq!(store_run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&store_run.stderr).contains("--in-memory-mib is for --input"));
    // As are a mapping and ratings, which were silently ignored beside --store.
    let mapping = data("data/mappings/primeintellect_by_provider.toml");
    for (flag, value) in [("--mapping", p(&mapping)), ("--ratings", p(&mapping))] {
        let r = rentix(&[
            "index",
            "--store",
            p(&m.store()),
            flag,
            value,
            "--out",
            p(&out),
        ]);
        assert_eq!(r.status.code(), Some(2), "{flag}");
        let err = String::from_utf8_lossy(&r.stderr).into_owned();
        assert!(err.contains(&format!("{flag} is for --input")), "{err}");
    }
}

/// An output directory that does not exist is refused with the system's reason
/// said once (it was said twice: the table error printed its declared source).
#[test]
fn a_missing_output_directory_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let sample = data("data/real/primeintellect_by_provider_sample.csv");
    let mapping = data("data/mappings/primeintellect_by_provider.toml");
    let out = dir.path().join("missing").join("f.csv");
    let r = rentix(&[
        "index",
        "--input",
        p(&sample),
        "--mapping",
        p(&mapping),
        "--out",
        p(&out),
    ]);
    assert!(!r.status.success());
    let err = String::from_utf8_lossy(&r.stderr).into_owned();
    assert_eq!(err.matches("os error 2").count(), 1, "{err}");
    assert!(err.contains("f.csv"), "{err}");
}

/// A hostile run published into the store: `--out STORE/runs/x.csv` made every later
/// ingest, index and verify of the store fail (a run record it could not name), and
/// `--out STORE/observations/p.csv` was deleted, with its digest and companions, by
/// the next ingest without a word. An `--out` inside the store (a link to it too)
/// is refused before anything is written.
#[test]
fn a_publication_inside_the_store_is_refused() {
    let (dir, store) = sample_store();
    let ingest = || sample_store_ingest(&store);
    #[cfg(unix)]
    std::os::unix::fs::symlink(&store, dir.path().join("link")).unwrap();
    let before: Vec<_> = crate::util::tree(&store);
    for out in [
        store.join("runs/x.csv"),
        store.join("observations/p.csv"),
        store.join("new/p.csv"),
        store.join("../st/q.csv"),
        dir.path().join("link/z.csv"),
    ] {
        if !cfg!(unix) && out.starts_with(dir.path().join("link")) {
            continue;
        }
        let r = rentix(&["index", "--store", p(&store), "--out", p(&out)]);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{}: {err}", out.display());
        assert!(err.contains("is inside the store"), "{err}");
        assert_eq!(
            crate::util::tree(&store),
            before,
            "{}: the store changed",
            out.display()
        );
    }
    ingest();
    let out = dir.path().join("f.csv");
    rentix_ok(&["index", "--store", p(&store), "--out", p(&out)]);
}

/// The Prime Intellect sample and its mapping.
fn sample_and_mapping() -> (std::path::PathBuf, std::path::PathBuf) {
    (
        data("data/real/primeintellect_by_provider_sample.csv"),
        data("data/mappings/primeintellect_by_provider.toml"),
    )
}

/// Ingests the Prime Intellect sample into `store`.
fn sample_store_ingest(store: &std::path::Path) {
    let (sample, mapping) = sample_and_mapping();
    let args = [
        "ingest",
        "--store",
        p(store),
        "--mapping",
        p(&mapping),
        p(&sample),
    ];
    rentix_ok(&args);
}

/// A temporary directory with the Prime Intellect sample ingested into `st`.
fn sample_store() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("st");
    sample_store_ingest(&store);
    (dir, store)
}

/// A hostile run: `--grade 'H100-SXM-80GB/*/*'` matched nothing and the refusal
/// did not say why. Grade ids are lowercase and patterns match exactly: the
/// refusal names the pattern and the lowercase one to try, from a store and from
/// files alike.
#[test]
fn an_uppercase_grade_pattern_is_refused_with_its_lowercase() {
    let (dir, store) = sample_store();
    let (sample, mapping) = sample_and_mapping();
    let out = dir.path().join("f.csv");
    for source in [
        vec!["--store", p(&store)],
        vec!["--input", p(&sample), "--mapping", p(&mapping)],
    ] {
        let mut args = vec!["index", "--out", p(&out), "--grade", "H100-SXM-80GB/*/*"];
        args.extend(source);
        let r = rentix(&args);
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(!r.status.success(), "{err}");
        assert!(err.contains("try h100-sxm-80gb/*/*"), "{err}");
    }
}

/// A rate card revised now and then leaves most days of a grade without a value:
/// `--valued-only` writes only the rows with one (the Prime Intellect sample under
/// the 7-day listings methodology: every row has a value, fewer rows than the full
/// grid), and `verify` certifies such a file.
#[test]
fn valued_only_writes_rows_with_a_value_and_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let sample = data("data/real/primeintellect_by_provider_sample.csv");
    let mapping = data("data/mappings/primeintellect_by_provider.toml");
    let store = dir.path().join("store");
    rentix_ok(&[
        "ingest",
        "--store",
        p(&store),
        "--mapping",
        p(&mapping),
        p(&sample),
    ]);
    let all = dir.path().join("all.csv");
    let valued = dir.path().join("valued.csv");
    let m = "listings_7d_sigma";
    rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--out",
        p(&all),
        "--methodology",
        m,
    ]);
    rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--out",
        p(&valued),
        "--methodology",
        m,
        "--valued-only",
    ]);
    let (all, valued_rows) = (rows(&all), rows(&valued));
    let with_value = all.iter().filter(|r| !r["value"].is_empty()).count();
    assert!(
        with_value < all.len(),
        "the sample should leave some days empty"
    );
    assert_eq!(valued_rows.len(), with_value);
    assert!(valued_rows.iter().all(|r| !r["value"].is_empty()));
    let out = rentix(&["verify", "--store", p(&store), "--fixings", p(&valued)]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Prices a loosened ingest lets in (`--min-price 0`) fix to values no reader of
/// a fixings file accepts: a hostile round got `0.0` (marked sufficient, the
/// prices rounded away at four decimals) published with exit 0, and then
/// `settle`, `health`, the next day's publication and a whole republication all
/// refused the file. The publication now refuses first (exit 3, nothing
/// written), naming the row and the cause; and ingest refuses a `--max-price`
/// above what a fixings file may hold.
#[test]
fn a_value_no_reader_accepts_is_never_published() {
    let dir = tempfile::tempdir().unwrap();
    let obs = dir.path().join("obs.csv");
    let mut text =
        String::from("kind,observed_at,source,gpu,scope,term,price,price_unit,currency\n");
    for (source, price) in [
        ("alpha", "0.00002"),
        ("beta", "0.00003"),
        ("gamma", "0.00004"),
    ] {
        text.push_str(&format!(
            "listing,2025-05-01T10:00:00Z,{source},a100-sxm-80gb,vm,on-demand,{price},gpu_hour,USD\n"
        ));
    }
    std::fs::write(&obs, text).unwrap();
    let store = dir.path().join("store");
    let big = rentix(&[
        "ingest",
        "--store",
        p(&store),
        p(&obs),
        "--max-price",
        "1e9",
    ]);
    assert_eq!(
        big.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&big.stderr)
    );
    rentix_ok(&["ingest", "--store", p(&store), p(&obs), "--min-price", "0"]);
    let out = dir.path().join("f.csv");
    let o = rentix(&["index", "--store", p(&store), "--out", p(&out)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("publication of")
            && err.contains("a100-sxm-80gb/vm/on-demand on 2025-05-01 is 0")
            && err.contains("nothing was published"),
        "{err}"
    );
    assert!(!out.exists(), "nothing written");
}

/// One trade typed in cents (204 for 2.04) among five honest ones of the same size,
/// under the default methodology: its 10%-trimmed mean keeps 40% of the typo and
/// sits at 18.9, and the MAD band around it (0.13) refused every trade, so the day
/// fell to the listings at 3.04, +49%, "sufficient" (a hostile round). The band is
/// centred on the median when it would keep half the weight or less: the trades
/// fix the day and the typo is the one outlier removed.
#[test]
fn one_typo_among_few_trades_does_not_throw_out_the_day() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from(
        "kind,observed_at,source,gpu,scope,term,price,price_unit,currency,quantity_gpu_hours\n",
    );
    for day in [1, 2] {
        for i in 0..5 {
            let t = 2.0 + 0.02 * f64::from(i);
            let l = 3.0 + 0.02 * f64::from(i);
            text.push_str(&format!("trade,2025-03-0{day}T10:00:00Z,c{i},h100-sxm-80gb,bare-metal,on-demand,{t:.2},gpu_hour,USD,100\n"));
            text.push_str(&format!("listing,2025-03-0{day}T10:00:00Z,c{i},h100-sxm-80gb,bare-metal,on-demand,{l:.2},gpu_hour,USD,\n"));
        }
    }
    text.push_str(
        "trade,2025-03-02T11:00:00Z,typo,h100-sxm-80gb,bare-metal,on-demand,204,gpu_hour,USD,100\n",
    );
    let input = dir.path().join("obs.csv");
    std::fs::write(&input, text).unwrap();
    let out = dir.path().join("fx.csv");
    rentix_ok(&["index", "--input", p(&input), "--out", p(&out)]);
    let day = crate::csvutil::rows(&out)
        .into_iter()
        .find(|r| r["date"] == "2025-03-02" && r["grade"] == "h100-sxm-80gb/bare-metal/on-demand")
        .unwrap();
    assert_eq!(
        (
            day["value"].as_str(),
            day["level"].as_str(),
            day["sufficient"].as_str()
        ),
        ("2.04", "1", "true"),
        "{day:?}"
    );
    assert_eq!(day["flags"], "outliers_removed=1", "{day:?}");
}
