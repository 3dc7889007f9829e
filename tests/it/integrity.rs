//! A publication that is always whole (issue 47): what would corrupt a published
//! file or what is read beside it is refused, naming the mismatch, and nothing is
//! published: a file continued from another store, an edited state or restatement
//! log, a methodology or `--valued-only` changed mid-file, sidecars that are not
//! what a publication writes.

use crate::util::{p, rentix, rentix_ok};
use std::path::{Path, PathBuf};

const DAYS: [&str; 4] = ["2025-03-03", "2025-03-04", "2025-03-05", "2025-03-06"];

/// A store of 5 contributors' listings of one H100 grade on each of `days` at
/// `price`.
fn store_of(dir: &Path, name: &str, days: &[&str], price: &str) -> PathBuf {
    let obs = dir.join(format!("{name}.csv"));
    let pairs: Vec<(&str, &str)> = days.iter().map(|d| ("h100-sxm-80gb", *d)).collect();
    std::fs::write(&obs, crate::util::five_listings(&pairs, |_| price.into())).unwrap();
    let store = dir.join(name);
    rentix_ok(&["ingest", "--json", "--store", p(&store), p(&obs)]);
    store
}

/// Adds, as a run of its own, listings of `day` by five more contributors at
/// `price` (late data for a published day).
fn late_data(dir: &Path, store: &Path, day: &str, price: &str) {
    let obs = dir.join(format!("late-{day}-{price}.csv"));
    let mut text =
        String::from("kind,observed_at,source,gpu,scope,term,price,price_unit,currency\n");
    for src in ["f", "g", "h", "i", "j"] {
        text.push_str(&format!(
            "listing,{day}T12:00:00Z,{src},h100-sxm-80gb,vm,on-demand,{price},gpu_hour,USD\n"
        ));
    }
    std::fs::write(&obs, text).unwrap();
    rentix_ok(&["ingest", "--json", "--store", p(store), p(&obs)]);
}

fn index(store: &Path, out: &Path, more: &[&str]) -> std::process::Output {
    let mut args = vec!["index", "--store", p(store), "--out", p(out)];
    args.extend_from_slice(more);
    rentix(&args)
}

/// Every file of `dir` and its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    v.sort();
    v
}

/// Asserts that `o` failed with exit `code`, its message holding every one of
/// `words`; returns the message.
fn refused(o: &std::process::Output, code: i32, words: &[&str]) -> String {
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(code), "{err}");
    for w in words {
        assert!(err.contains(w), "{w:?} not in: {err}");
    }
    err
}

/// A fixings file published from one store is not continued from another (a
/// store rebuilt under the same run ids with other prices): refused, exit 3,
/// naming the run that is gone and the state, and nothing is written.
#[test]
fn a_publication_from_another_store_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let store = store_of(dir, "store", &DAYS, "2.5");
    let out_dir = dir.join("pub");
    std::fs::create_dir_all(&out_dir).unwrap();
    let out = out_dir.join("f.csv");
    assert!(index(&store, &out, &["--to", "2025-03-05"])
        .status
        .success());
    let before = files(&out_dir);
    std::fs::remove_dir_all(&store).unwrap();
    let other = store_of(dir, "store", &DAYS, "3.5");
    for more in [&["--from", "2025-03-06", "--to", "2025-03-06"][..], &[]] {
        let o = index(&other, &out, more);
        refused(&o, 3, &["run-000001", "f_state.json", "another store"]);
        assert_eq!(files(&out_dir), before, "{more:?}: nothing is written");
    }
}

/// A state whose levels were edited (doubled) is not continued from: its own
/// digest no longer matches, exit 3, and nothing is written.
#[test]
fn an_edited_state_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let store = store_of(dir, "store", &DAYS, "2.5");
    let out_dir = dir.join("pub");
    std::fs::create_dir_all(&out_dir).unwrap();
    let out = out_dir.join("f.csv");
    assert!(index(&store, &out, &["--to", "2025-03-05"])
        .status
        .success());
    let state = out_dir.join("f_state.json");
    let mut s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    let mut doubled = 0;
    for levels in s["levels"].as_object_mut().unwrap().values_mut() {
        for l in levels.as_object_mut().unwrap().values_mut() {
            *l = serde_json::json!(l.as_f64().unwrap() * 2.0);
            doubled += 1;
        }
    }
    assert!(doubled > 0, "the state holds composite levels: {s}");
    std::fs::write(&state, serde_json::to_string_pretty(&s).unwrap()).unwrap();
    let before = files(&out_dir);
    let o = index(
        &store,
        &out,
        &["--from", "2025-03-06", "--to", "2025-03-06"],
    );
    refused(&o, 3, &["f_state.json", "digest"]);
    assert_eq!(files(&out_dir), before);
}

/// The restatement log is checked against its digest (`<log>.sha256`, written
/// with it): an `old_value` edited by hand is refused by the next publication
/// (exit 3) and by every reader of the log, which settlements read.
#[test]
fn an_edited_restatement_log_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (store, out_dir, out) = restated(dir);
    let log = out_dir.join("f_restatements.csv");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("late_data"), "{text}");
    assert!(out_dir.join("f_restatements.csv.sha256").exists());
    assert_eq!(
        rentix_index::read_restatements(&log).unwrap().len(),
        text.lines().count() - 1
    );
    // The first restated row's old value, 2.5, made 2.
    let edited = text.replacen(",2.5,", ",2,", 1);
    assert_ne!(edited, text);
    std::fs::write(&log, &edited).unwrap();
    let e = rentix_index::read_restatements(&log).unwrap_err();
    assert!(e.to_string().contains("f_restatements.csv.sha256"), "{e}");
    late_data(dir, &store, "2025-03-05", "5");
    let before = files(&out_dir);
    let o = index(&store, &out, &[]);
    refused(&o, 3, &["f_restatements.csv", "digest"]);
    assert_eq!(files(&out_dir), before);
}

/// A publication into a file of another methodology would leave rows of two
/// methodologies in one file: refused (exit 2), naming both versions. A whole
/// republication under the new methodology restates every row and is allowed.
#[test]
fn a_methodology_changed_mid_file_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let store = store_of(dir, "store", &DAYS, "2.5");
    let out_dir = dir.join("pub");
    std::fs::create_dir_all(&out_dir).unwrap();
    let out = out_dir.join("f.csv");
    assert!(index(&store, &out, &["--to", "2025-03-05"])
        .status
        .success());
    let before = files(&out_dir);
    let other = ["--methodology", "listings_7d_sigma"];
    let mut more = vec!["--from", "2025-03-06"];
    more.extend(other);
    let o = index(&store, &out, &more);
    refused(
        &o,
        2,
        &["rentix-default-2.0", "rentix-listings-7d-1.0", "methodolog"],
    );
    assert_eq!(files(&out_dir), before);
    assert!(index(&store, &out, &other).status.success());
    let rows = crate::csvutil::rows(&out);
    assert!(rows
        .iter()
        .all(|r| r["methodology_version"] != "rentix-default-2.0"));
}

/// `a.csv` and `a.parquet` of one stem keep their own restatement log and state:
/// the CSV's keep their names (`a_restatements.csv`, `a_state.json`), the
/// Parquet's are `a.parquet_restatements.csv` and `a.parquet_state.json`.
#[test]
fn csv_and_parquet_of_one_stem_keep_their_own_sidecars() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let store = store_of(dir, "store", &DAYS, "2.5");
    let out_dir = dir.join("pub");
    std::fs::create_dir_all(&out_dir).unwrap();
    let csv = out_dir.join("a.csv");
    let parquet = out_dir.join("a.parquet");
    for f in [&csv, &parquet] {
        assert!(index(&store, f, &["--to", "2025-03-05"]).status.success());
    }
    let state = |name: &str| std::fs::read_to_string(out_dir.join(name)).unwrap();
    assert!(state("a_state.json").contains("\"published\": \"a.csv\""));
    assert!(state("a.parquet_state.json").contains("\"published\": \"a.parquet\""));
    // Each continues from its own state.
    for f in [&csv, &parquet] {
        let o = index(&store, f, &["--from", "2025-03-06"]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(out.contains("(incremental"), "{out}");
    }
    late_data(dir, &store, "2025-03-04", "4");
    for f in [&csv, &parquet] {
        assert!(index(&store, f, &[]).status.success());
    }
    // Each log holds its own file's restatements once (a shared log held both).
    let log = |name: &str| std::fs::read_to_string(out_dir.join(name)).unwrap();
    let csv_log = log("a_restatements.csv");
    assert!(csv_log.contains("late_data"), "{csv_log}");
    assert_eq!(log("a.parquet_restatements.csv"), csv_log);
}

/// A file published `--valued-only` is not continued without the flag, nor the
/// other way round: refused (exit 2), naming the flag.
#[test]
fn valued_only_is_kept_for_the_life_of_a_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let store = store_of(dir, "store", &DAYS, "2.5");
    let out_dir = dir.join("pub");
    std::fs::create_dir_all(&out_dir).unwrap();
    for (first, then) in [(true, false), (false, true)] {
        let out = out_dir.join(format!("f{first}.csv"));
        let flag = |on: bool| if on { vec!["--valued-only"] } else { vec![] };
        let mut a = vec!["--to", "2025-03-05"];
        a.extend(flag(first));
        assert!(index(&store, &out, &a).status.success());
        let before = files(&out_dir);
        let mut b = vec!["--from", "2025-03-06"];
        b.extend(flag(then));
        // The refusal says where it read how the file was published.
        refused(
            &index(&store, &out, &b),
            2,
            &["--valued-only", "_state.json records"],
        );
        assert_eq!(files(&out_dir), before);
    }
}

/// A digest sidecar is read bounded: a 200 MB `.sha256` (sparse) and one linked
/// to `/dev/zero` are refused naming the file, not read whole nor echoed.
#[test]
fn sidecars_are_read_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let store = store_of(dir, "store", &DAYS, "2.5");
    let out = dir.join("f.csv");
    assert!(index(&store, &out, &["--to", "2025-03-05"])
        .status
        .success());
    let digest = dir.join("f.csv.sha256");
    std::fs::remove_file(&digest).unwrap();
    let f = std::fs::File::create(&digest).unwrap();
    f.set_len(200 << 20).unwrap();
    drop(f);
    let o = rentix(&["verify", "--store", p(&store), "--fixings", p(&out)]);
    let err = refused(&o, 3, &["f.csv.sha256"]);
    assert!(o.stdout.len() + err.len() < 10_000, "not echoed");
    let o = index(&store, &out, &["--from", "2025-03-06"]);
    refused(&o, 3, &["f.csv.sha256"]);
    if Path::new("/dev/zero").exists() {
        std::fs::remove_file(&digest).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &digest).unwrap();
        let o = index(&store, &out, &["--from", "2025-03-06"]);
        refused(&o, 3, &["f.csv.sha256", "not a regular file"]);
    }
}

/// `--out X_forward.csv` published, then `--out X.csv`: X's forward curves were
/// written over the publication `X_forward.csv`, exit 0, nothing archived (and
/// `verify` of it then could not read it). And `--out F_restatements.csv` beside
/// a published `F.csv` made F's next restatement fail. A publication whose name
/// is another publication's companion, or whose companions would overwrite
/// another publication, is refused (exit 2, nothing written).
#[test]
fn a_publication_never_writes_over_another() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let store = store_of(dir, "store", &DAYS, "2.5");
    let out_dir = dir.join("pub");
    std::fs::create_dir_all(&out_dir).unwrap();
    assert!(index(&store, &out_dir.join("x_forward.csv"), &[])
        .status
        .success());
    let before = files(&out_dir);
    let o = index(&store, &out_dir.join("x.csv"), &[]);
    refused(&o, 2, &["x_forward.csv", "nothing was published"]);
    assert_eq!(files(&out_dir), before);
    assert!(index(&store, &out_dir.join("f.csv"), &[]).status.success());
    let before = files(&out_dir);
    for name in ["f_restatements.csv", "f_forward.csv", "f.v2.csv"] {
        let o = index(&store, &out_dir.join(name), &[]);
        refused(&o, 2, &["f.csv", "nothing was published"]);
        assert_eq!(files(&out_dir), before, "{name}");
    }
}

/// A published file that no longer matches its digest is refused by every command
/// that reads it as a publication (`settle`, `backtest`, `track`, `health
/// --fixings`, `cost --fixings`), naming the digest: a flipped bit settled a month
/// at 4.0157 where it had been 3.8778, exit 0, and a backtest's effectiveness went
/// from -1.1 to -263.9 without a word (a hostile round). A file without a digest
/// (a benchmark the user brought) is read as it is.
#[test]
fn a_file_that_fails_its_digest_is_not_read_as_published() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let store = store_of(dir, "s", &DAYS, "2.5000");
    let out = dir.join("f.csv");
    assert_eq!(index(&store, &out, &[]).status.code(), Some(0));
    let settle = |f: &Path| {
        rentix(&[
            "settle",
            "--fixings",
            p(f),
            "--from",
            DAYS[0],
            "--to",
            "2025-03-07",
            "--grade",
            "h100-sxm-80gb/vm/on-demand",
        ])
    };
    assert_eq!(settle(&out).status.code(), Some(0));
    let text = std::fs::read_to_string(&out).unwrap();
    std::fs::write(&out, text.replacen(",2.5,", ",6.5,", 1)).unwrap();
    assert_ne!(std::fs::read_to_string(&out).unwrap(), text);
    refused(&settle(&out), 3, &["f.csv.sha256", "does not match"]);
    let rent = dir.join("rent.csv");
    std::fs::write(&rent, "period_start,period_end,usd_per_gpu_hour,gpu_hours,side\n2025-03-01,2025-04-01,2.5,730,pay\n").unwrap();
    let bt = rentix(&[
        "backtest",
        "--index",
        p(&out),
        "--rent",
        p(&rent),
        "--out",
        p(&dir.join("bt")),
    ]);
    refused(&bt, 3, &["f.csv.sha256", "does not match"]);
    let track = rentix(&["track", "--index", p(&out), "--rent", p(&rent)]);
    refused(&track, 3, &["f.csv.sha256", "does not match"]);
    let health = rentix(&["health", "--store", p(&store), "--fixings", p(&out)]);
    refused(&health, 3, &["f.csv.sha256", "does not match"]);
    // Without its digest the file is the user's own: read.
    std::fs::remove_file(dir.join("f.csv.sha256")).unwrap();
    assert_eq!(settle(&out).status.code(), Some(0));
}

/// A one-shot (`index --input`) into a file published from a store is refused,
/// nothing written: it removed the store's state and wrote a file that was neither
/// the store's publication nor the one-shot's, and the store's next publication
/// read everything and logged the flip-flop as restatements (a hostile round).
#[test]
fn a_one_shot_into_a_file_published_from_a_store_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let store = store_of(dir, "s", &DAYS, "2.5000");
    let out = dir.join("f.csv");
    assert_eq!(index(&store, &out, &[]).status.code(), Some(0));
    let before = files(dir);
    let input = dir.join("s.csv");
    let o = rentix(&["index", "--input", p(&input), "--out", p(&out)]);
    refused(&o, 3, &["f_state.json", "published from a store"]);
    assert!(files(dir) == before, "files changed");
}

/// A restatement log deleted with its own digest, or edited with its digest
/// deleted, is refused at the next publication: the file's digest records the
/// log's. A hostile round deleted both and the next publication started a new log
/// with its own restatements alone (the first-published values backtests settle on
/// gone; only `verify` noticed), and an edited log without its digest was taken
/// for one written before logs had digests.
#[test]
fn a_restatement_log_the_file_s_digest_records_is_not_lost() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (store, out_dir, out) = restated(dir);
    let log = out_dir.join("f_restatements.csv");
    let log_digest = out_dir.join("f_restatements.csv.sha256");
    let sidecar = std::fs::read_to_string(out_dir.join("f.csv.sha256")).unwrap();
    assert!(
        sidecar
            .lines()
            .nth(1)
            .is_some_and(|l| l.ends_with("  f_restatements.csv")),
        "{sidecar}"
    );
    // `sha256sum -c` checks both lines.
    let text = std::fs::read_to_string(&log).unwrap();
    let digest_text = std::fs::read_to_string(&log_digest).unwrap();
    late_data(dir, &store, "2025-03-05", "5");
    std::fs::remove_file(&log).unwrap();
    std::fs::remove_file(&log_digest).unwrap();
    let before = files(&out_dir);
    refused(
        &index(&store, &out, &[]),
        3,
        &["f_restatements.csv", "is gone", "f.csv.sha256"],
    );
    assert_eq!(files(&out_dir), before);
    std::fs::write(&log, text.replacen(",2.5,", ",2,", 1)).unwrap();
    refused(
        &index(&store, &out, &[]),
        3,
        &["f_restatements.csv", "does not match"],
    );
    // Edited with its own digest made again: the file's digest still names it.
    let sum = crate::util::sha256sum(&log);
    std::fs::write(&log_digest, format!("{sum}  f_restatements.csv\n")).unwrap();
    refused(
        &index(&store, &out, &[]),
        3,
        &["f_restatements.csv", "does not match", "f.csv.sha256"],
    );
    // Restored, the publication goes on.
    std::fs::write(&log, &text).unwrap();
    std::fs::write(&log_digest, &digest_text).unwrap();
    assert!(index(&store, &out, &[]).status.success());
    assert!(rentix_index::read_restatements(&log).unwrap().len() > text.lines().count() - 1);
}

/// A store, and `pub/f.csv` published from it then restated by late data (its
/// restatement log written): the store, the publication's directory and file.
fn restated(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let store = store_of(dir, "store", &DAYS, "2.5");
    let out_dir = dir.join("pub");
    std::fs::create_dir_all(&out_dir).unwrap();
    let out = out_dir.join("f.csv");
    assert!(index(&store, &out, &[]).status.success());
    late_data(dir, &store, "2025-03-04", "4");
    assert!(index(&store, &out, &[]).status.success());
    (store, out_dir, out)
}
