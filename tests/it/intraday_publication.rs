//! An intraday file published day by day, as the README's daily command does: it
//! grows by the day's stamps, equals one run over every day, passes `verify` after
//! every day, never revises a published stamp, and refuses, with nothing written,
//! what it cannot continue.

use crate::csvutil::rows;
use crate::util::{p, rentix, rentix_ok};
use std::path::{Path, PathBuf};

const M: &str = "intraday_lowest_listing_15m";

/// A store of three simulated days read every 15 minutes, and its observations.
fn store_of_three_days(dir: &Path) -> (PathBuf, PathBuf) {
    let sim = dir.join("sim");
    rentix_ok(&[
        "simulate",
        "--out",
        p(&sim),
        "--days",
        "3",
        "--start",
        "2025-06-01",
        "--cadence",
        "15m",
    ]);
    let store = dir.join("store");
    let obs = sim.join("observations.csv");
    rentix_ok(&["ingest", "--store", p(&store), p(&obs)]);
    (store, obs)
}

fn index(store: &Path, out: &Path, range: &[&str]) -> std::process::Output {
    index_with(store, M, out, range)
}

/// `rentix index` of `store` under the methodology `m` into `out`, over `range`.
fn index_with(store: &Path, m: &str, out: &Path, range: &[&str]) -> std::process::Output {
    let mut args = vec![
        "index",
        "--store",
        p(store),
        "--methodology",
        m,
        "--out",
        p(out),
    ];
    args.extend_from_slice(range);
    rentix(&args)
}

fn ok(o: &std::process::Output) -> String {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn verify(store: &Path, out: &Path) -> std::process::Output {
    rentix(&[
        "verify",
        "--store",
        p(store),
        "--fixings",
        p(out),
        "--methodology",
        M,
    ])
}

/// `daily.csv` (published day by day) and its receipts are `all.csv`'s (one run).
fn same_as_one_run(dir: &Path) {
    let read_in = |name: &str| read(&dir.join(name));
    assert_eq!(
        read_in("daily.csv"),
        read_in("all.csv"),
        "day by day differs from one run"
    );
    assert_eq!(read_in("daily_receipts.csv"), read_in("all_receipts.csv"));
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn day_by_day_an_intraday_file_grows_by_its_days_and_equals_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (store, _) = store_of_three_days(dir);
    let all = dir.join("all.csv");
    ok(&index(&store, &all, &[]));
    let daily = dir.join("daily.csv");
    let mut before = 0;
    for day in ["2025-06-01", "2025-06-02", "2025-06-03"] {
        let said = ok(&index(&store, &daily, &["--from", day, "--to", day]));
        let n = rows(&daily).len();
        assert!(n > before, "{day} added nothing: {said}");
        // Before the fix, the day's publication replaced the file with the day.
        assert!(
            rows(&daily).iter().any(|r| r["date"] == "2025-06-01"),
            "{day} erased the days before it"
        );
        before = n;
        ok(&verify(&store, &daily));
    }
    same_as_one_run(dir);
    // The same day again: nothing new, nothing changed.
    let said = ok(&index(
        &store,
        &daily,
        &["--from", "2025-06-03", "--to", "2025-06-03"],
    ));
    assert!(said.contains(": 0 new,"), "{said}");
    assert_eq!(read(&daily), read(&all));
}

/// The digest sidecar's words: each line's SHA-256, without the file names.
fn digests(sidecar: &Path) -> Vec<String> {
    read(sidecar)
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or_default().to_string())
        .collect()
}

fn sha256_hex(path: &Path) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(std::fs::read(path).unwrap());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// A day's stamps are appended to the published file (its history hashed and
/// copied, not read back), and the file equals one run byte for byte even when the
/// day's run reads far fewer days than a run over everything. Contributors are
/// numbered as a run first sees them: here "zeta" (seen 2025-01-01) comes first in
/// a run over every day, "alpha" (10:01 on 2025-04-15, before zeta's 10:02) in the
/// day's run, which starts 91 days back. Before the fix, each stamp's receipts came
/// in that numbering, so the day's receipts were zeta, alpha in one run and alpha,
/// zeta day by day: now they are by name in both. The sidecar names the receipts
/// with their SHA-256, as `sha256sum -c` checks them.
#[test]
fn a_day_is_appended_and_equals_one_run_whatever_days_its_run_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let obs = dir.join("obs.csv");
    let row = |at: &str, who: &str, price: &str, id: &str| {
        format!("listing,{at},{who},h100-sxm-80gb,vm,on-demand,{price},gpu_hour,USD,,,us,{id}\n")
    };
    let mut text = String::from(
        "kind,observed_at,source,gpu,scope,term,price,price_unit,currency,quantity_gpu_hours,gpus_per_unit,region,obs_id\n",
    );
    text.push_str(&row("2025-01-01T10:02:00Z", "zeta", "2.0", "z1"));
    text.push_str(&row("2025-04-15T10:01:00Z", "alpha", "2.1", "a1"));
    text.push_str(&row("2025-04-15T10:02:00Z", "zeta", "2.2", "z2"));
    std::fs::write(&obs, text).unwrap();
    let store = dir.join("store");
    rentix_ok(&["ingest", "--store", p(&store), p(&obs)]);
    let all = dir.join("all.csv");
    ok(&index(&store, &all, &[]));
    let daily = dir.join("daily.csv");
    let first = ok(&index(&store, &daily, &["--to", "2025-04-14"]));
    assert!(first.contains("; wrote "), "{first}");
    let said = ok(&index(
        &store,
        &daily,
        &["--from", "2025-04-15", "--to", "2025-04-15"],
    ));
    assert!(said.contains("appended the new stamps to"), "{said}");
    same_as_one_run(dir);
    let at_1015: Vec<String> = rows(&dir.join("daily_receipts.csv"))
        .into_iter()
        .filter(|r| r["fixed_at"].starts_with("2025-04-15T10:15"))
        .map(|r| r["contributor"].clone())
        .collect();
    assert_eq!(at_1015, ["alpha", "zeta"]);
    let sidecar = dir.join("daily.csv.sha256");
    assert_eq!(digests(&sidecar), digests(&dir.join("all.csv.sha256")));
    assert_eq!(
        digests(&sidecar),
        [
            sha256_hex(&daily),
            sha256_hex(&dir.join("daily_receipts.csv")),
            sha256_hex(&dir.join("daily_intraday_state.json"))
        ]
    );
    assert!(read(&sidecar).contains("  daily_receipts.csv\n"));
    ok(&verify(&store, &daily));
}

/// The day's publication continues from the file's state without reading its
/// history: an edit inside the history that keeps the file's length is not seen
/// by it, and never blessed either: the digest it writes continues the hash of the
/// bytes as published, so `verify` still names the edited row. Without the state
/// (deleted) the file is read once as bytes and hashed: the edit is seen, and the
/// file refused. A state edited since (the sidecar records its SHA-256) is not
/// used.
#[test]
fn a_day_continues_from_the_state_and_an_edit_is_never_blessed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (store, _) = store_of_three_days(dir);
    let out = dir.join("f.csv");
    ok(&index(&store, &out, &["--to", "2025-06-01"]));
    // One digit of the first row's n_observed, same length.
    let text = read(&out);
    let second = text.lines().nth(1).unwrap().to_string();
    let mut cells: Vec<String> = second.split(',').map(str::to_string).collect();
    cells[8] = if cells[8] == "1" {
        "2".into()
    } else {
        "1".into()
    };
    let edited = text.replacen(&second, &cells.join(","), 1);
    assert_eq!(edited.len(), text.len());
    std::fs::write(&out, &edited).unwrap();
    let day = |d: &str| index(&store, &out, &["--from", d, "--to", d]);
    let said = ok(&day("2025-06-02"));
    assert!(said.contains("(its history not read"), "{said}");
    // It says what it checked, not that the digests agree (a hostile round read
    // that of this very edit).
    assert!(
        said.contains("an edit inside the history is not seen here")
            && !said.contains("digests agree"),
        "{said}"
    );
    assert!(read(&out).starts_with(&edited));
    assert_ne!(digests(&dir.join("f.csv.sha256"))[0], sha256_hex(&out));
    let v = verify(&store, &out);
    let why = String::from_utf8_lossy(&v.stderr);
    assert_eq!(v.status.code(), Some(1), "{why}");
    assert!(why.contains("n_observed"), "{why}");
    // Without its state, the next day reads the bytes: the edit is seen.
    std::fs::remove_file(dir.join("f_intraday_state.json")).unwrap();
    let o = day("2025-06-03");
    let why = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{why}");
    assert!(why.contains("does not match its digest"), "{why}");
    // A clean file whose state was edited (its count of stamps): not used.
    let clean = dir.join("g.csv");
    let g = |range: &[&str]| ok(&index(&store, &clean, range));
    g(&["--to", "2025-06-01"]);
    let g_state = dir.join("g_intraday_state.json");
    let st = read(&g_state);
    let n = serde_json::from_str::<serde_json::Value>(&st).unwrap()["stamps"]
        .as_u64()
        .unwrap();
    std::fs::write(
        &g_state,
        st.replace(&format!("\"stamps\": {n},"), "\"stamps\": 5,"),
    )
    .unwrap();
    assert_ne!(read(&g_state), st);
    // verify names it (the publication below only declines to use it).
    let v = verify(&store, &clean);
    let why = String::from_utf8_lossy(&v.stderr);
    assert_eq!(v.status.code(), Some(1), "{why}");
    assert!(why.contains("g_intraday_state.json: state"), "{why}");
    let said = g(&["--from", "2025-06-02", "--to", "2025-06-02"]);
    assert!(
        said.contains("(its history read once as bytes and hashed"),
        "{said}"
    );
    assert!(!said.contains("holds 5 "), "{said}");
    ok(&verify(&store, &clean));
    let said = g(&["--from", "2025-06-03", "--to", "2025-06-03"]);
    assert!(said.contains("(its history not read"), "{said}");
    ok(&verify(&store, &clean));
}

/// A hard-linked snapshot of a publication (`cp -l`, `rsync --link-dest`) shares
/// its bytes: the next day is not appended into them (the snapshot would grow)
/// but the file written again whole, and the snapshot keeps what it held.
#[cfg(unix)]
#[test]
fn a_hard_linked_snapshot_is_not_appended_to() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (store, _) = store_of_three_days(dir);
    let out = dir.join("f.csv");
    ok(&index(&store, &out, &["--to", "2025-06-01"]));
    let snap = dir.join("snapshot");
    std::fs::create_dir(&snap).unwrap();
    std::fs::hard_link(&out, snap.join("f.csv")).unwrap();
    let before = read(&out);
    let said = ok(&index(
        &store,
        &out,
        &["--from", "2025-06-02", "--to", "2025-06-02"],
    ));
    assert!(said.contains("; wrote "), "{said}");
    assert_eq!(read(&snap.join("f.csv")), before);
    assert!(read(&out).len() > before.len());
    ok(&verify(&store, &out));
    // Its own file again, the day after is appended.
    let said = ok(&index(
        &store,
        &out,
        &["--from", "2025-06-03", "--to", "2025-06-03"],
    ));
    assert!(said.contains("(its history not read"), "{said}");
}

/// A day's publication killed at each step of its commit (before the first
/// append, after the file's append, after the receipts') is finished by the next
/// publication's recovery: the file, its receipts, state and sidecar are those of
/// an uninterrupted day, `verify` passes, and the day after is appended again.
#[test]
fn a_day_killed_while_it_is_appended_is_finished_by_the_next_publication() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (store, _) = store_of_three_days(dir);
    let all = dir.join("all.csv");
    ok(&index(&store, &all, &["--to", "2025-06-02"]));
    for step in [
        "publish:journal",
        "publish:renamed:f.csv",
        "publish:renamed:f_receipts.csv",
    ] {
        let out = dir.join("f.csv");
        for f in [
            "f.csv",
            "f.csv.sha256",
            "f_receipts.csv",
            "f_intraday_state.json",
        ] {
            let _ = std::fs::remove_file(dir.join(f));
        }
        ok(&index(&store, &out, &["--to", "2025-06-01"]));
        let killed = day_two_failing(&store, &out, step);
        assert!(
            String::from_utf8_lossy(&killed.stderr).contains("RENTIX_FAIL_AT"),
            "{step}: {}",
            String::from_utf8_lossy(&killed.stderr)
        );
        // The next publication (the same day again) recovers first.
        ok(&index(
            &store,
            &out,
            &["--from", "2025-06-02", "--to", "2025-06-02"],
        ));
        assert_eq!(read(&out), read(&all), "{step}");
        assert_eq!(
            read(&dir.join("f_receipts.csv")),
            read(&dir.join("all_receipts.csv")),
            "{step}"
        );
        assert_eq!(
            digests(&dir.join("f.csv.sha256")),
            digests(&dir.join("all.csv.sha256"))
        );
        ok(&verify(&store, &out));
        let said = ok(&index(
            &store,
            &out,
            &["--from", "2025-06-03", "--to", "2025-06-03"],
        ));
        assert!(said.contains("(its history not read"), "{step}: {said}");
    }
}

/// A day's append that fails (a full disk) leaves the published files as they
/// were, and the next run publishes the day; one interrupted by a signal waits
/// for the commit and says the publication was put in place whole. A hostile round
/// found a full disk leaving the file cut mid-row (settle of an earlier day then
/// refused the file), a signal saying "nothing was committed" above a file that
/// held the day's rows and failed its digest, and an error after the journal
/// leaving a journal that the next run refused as damaged.
#[test]
fn a_day_whose_append_fails_or_is_interrupted_is_whole_or_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (store, _) = store_of_three_days(dir);
    let all = dir.join("all.csv");
    ok(&index(&store, &all, &["--to", "2025-06-02"]));
    let out = dir.join("f.csv");
    let names = [
        "f.csv",
        "f.csv.sha256",
        "f_receipts.csv",
        "f_intraday_state.json",
    ];
    for step in [
        "publish:journal:error",
        "publish:renamed:f.csv:error",
        "publish:renamed:f_receipts.csv:error",
    ] {
        for f in names {
            let _ = std::fs::remove_file(dir.join(f));
        }
        ok(&index(&store, &out, &["--to", "2025-06-01"]));
        let before: Vec<Vec<u8>> = names.iter().map(|f| bytes(&dir.join(f))).collect();
        let failed = day_two_failing(&store, &out, step);
        assert_eq!(failed.status.code(), Some(4), "{step}");
        let after: Vec<Vec<u8>> = names.iter().map(|f| bytes(&dir.join(f))).collect();
        assert!(before == after, "{step}: the published files changed");
        let left: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .filter(|n| n.ends_with(".tmp") || n.ends_with(".publishing"))
            .collect();
        assert!(left.is_empty(), "{step}: {left:?}");
        ok(&verify(&store, &out));
        ok(&index(
            &store,
            &out,
            &["--from", "2025-06-02", "--to", "2025-06-02"],
        ));
        assert_eq!(read(&out), read(&all), "{step}");
        ok(&verify(&store, &out));
    }
    for step in [
        "publish:renamed:f.csv:signal",
        "publish:renamed:f_receipts.csv:signal",
    ] {
        for f in names {
            let _ = std::fs::remove_file(dir.join(f));
        }
        ok(&index(&store, &out, &["--to", "2025-06-01"]));
        let stopped = day_two_failing(&store, &out, step);
        let err = String::from_utf8_lossy(&stopped.stderr);
        assert_eq!(stopped.status.code(), Some(130), "{step}: {err}");
        assert!(
            err.contains("interrupted after the publication was put in place whole"),
            "{step}: {err}"
        );
        assert_eq!(read(&out), read(&all), "{step}");
        ok(&verify(&store, &out));
    }
}

/// A stamp whose interval has not ended is not published: a day published while
/// it is under way holds the stamps that have ended and says how many wait (a
/// hostile round published a day's 96 stamps at 15:51, three later ones valued
/// `sufficient` on the prints so far, and never revised them). The day published
/// again publishes the rest as they end; the file verifies.
#[test]
fn a_stamp_whose_interval_has_not_ended_waits() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let today = chrono::Utc::now().date_naive();
    let start = (today - chrono::Days::new(1)).to_string();
    let sim = dir.join("sim");
    rentix_ok(&[
        "simulate",
        "--out",
        p(&sim),
        "--days",
        "2",
        "--start",
        &start,
        "--cadence",
        "15m",
    ]);
    let store = dir.join("store");
    rentix_ok(&[
        "ingest",
        "--store",
        p(&store),
        p(&sim.join("observations.csv")),
    ]);
    let out = dir.join("f.csv");
    let day = today.to_string();
    let said = ok(&index(&store, &out, &["--to", &day]));
    let now = chrono::Utc::now();
    let stamps: Vec<chrono::DateTime<chrono::Utc>> = rows(&out)
        .iter()
        .map(|r| r["fixed_at"].parse().unwrap())
        .collect();
    assert!(!stamps.is_empty());
    assert!(stamps.iter().all(|t| *t <= now), "{said}");
    // A day ends at 24:00: unless the run is in its last quarter hour, stamps wait.
    let last_quarter = (today + chrono::Days::new(1))
        .and_hms_opt(0, 0, 0)
        .unwrap()
        .and_utc()
        - chrono::Duration::minutes(15);
    if stamps.iter().max().is_some_and(|t| *t < last_quarter) {
        assert!(said.contains("\nnot yet published: "), "{said}");
    }
    ok(&index(&store, &out, &["--from", &day, "--to", &day]));
    ok(&verify(&store, &out));
}

/// A day skipped in the daily cycle is fixed with the next one, as the daily
/// engine re-fixes skipped days: publishing 06-01 then 06-03 appended 06-03 after
/// 06-01 and left 06-02 a silent hole (`verify`: thousands of rows missing; a
/// settlement over it went to determination).
#[test]
fn a_skipped_day_is_fixed_with_the_next() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (store, _) = store_of_three_days(dir);
    let all = dir.join("all.csv");
    ok(&index(&store, &all, &[]));
    let out = dir.join("f.csv");
    ok(&index(&store, &out, &["--to", "2025-06-01"]));
    let said = ok(&index(
        &store,
        &out,
        &["--from", "2025-06-03", "--to", "2025-06-03"],
    ));
    assert!(said.contains("\nre-fixed from 2025-06-02: "), "{said}");
    assert_eq!(read(&out), read(&all));
    ok(&verify(&store, &out));
    // A Parquet file too (written again whole by each run).
    let pq = dir.join("g.parquet");
    ok(&index(&store, &pq, &["--to", "2025-06-01"]));
    let said = ok(&index(
        &store,
        &pq,
        &["--from", "2025-06-03", "--to", "2025-06-03"],
    ));
    assert!(said.contains("\nre-fixed from 2025-06-02: "), "{said}");
    ok(&verify(&store, &pq));
}

/// A file published before rows were in stamp order (grade by grade, a one-line
/// sidecar) is read whole and written again in stamp order at its next
/// publication, which then equals one run; the day after is appended.
#[test]
fn a_file_in_the_older_grade_order_is_rewritten_in_stamp_order_then_appended() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (store, _) = store_of_three_days(dir);
    let daily = dir.join("daily.csv");
    ok(&index(&store, &daily, &["--to", "2025-06-01"]));
    // As the older layout wrote it: rows by grade then stamp, the sidecar naming
    // the fixings alone.
    let regrade = |path: &Path, grade_col: usize, stamp_col: usize| {
        let text = read(path);
        let mut lines = text.lines();
        let header = lines.next().unwrap().to_string();
        let mut body: Vec<&str> = lines.collect();
        body.sort_by_key(|l| {
            let c: Vec<&str> = l.split(',').collect();
            (c[grade_col].to_string(), c[stamp_col].to_string())
        });
        std::fs::write(path, format!("{header}\n{}\n", body.join("\n"))).unwrap();
    };
    regrade(&daily, 2, 1);
    regrade(&dir.join("daily_receipts.csv"), 1, 0);
    std::fs::write(
        dir.join("daily.csv.sha256"),
        format!("{}  daily.csv\n", sha256_hex(&daily)),
    )
    .unwrap();
    std::fs::remove_file(dir.join("daily_intraday_state.json")).unwrap();
    ok(&verify(&store, &daily));
    let said = ok(&index(
        &store,
        &daily,
        &["--from", "2025-06-02", "--to", "2025-06-02"],
    ));
    assert!(said.contains("; wrote "), "{said}");
    let all = dir.join("all.csv");
    ok(&index(&store, &all, &["--to", "2025-06-02"]));
    same_as_one_run(dir);
    let said = ok(&index(
        &store,
        &daily,
        &["--from", "2025-06-03", "--to", "2025-06-03"],
    ));
    assert!(said.contains("appended the new stamps to"), "{said}");
    ok(&index(
        &store,
        &all,
        &["--from", "2025-06-03", "--to", "2025-06-03"],
    ));
    same_as_one_run(dir);
}

/// Receipts edited since they were published (one cell quoted: every cell and
/// stamp as before) are refused with nothing written, and `verify` names them: the
/// sidecar records their SHA-256. Before, the edit passed into the next
/// publication and `verify` exited 0.
#[test]
fn receipts_edited_since_publication_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (store, _) = store_of_three_days(dir);
    let out = dir.join("f.csv");
    ok(&index(&store, &out, &["--to", "2025-06-01"]));
    let receipts = dir.join("f_receipts.csv");
    let text = read(&receipts);
    // The same cells, quoted: only the bytes say it is not what was published.
    let edited = text.replacen(",observed\n", ",\"observed\"\n", 1);
    assert_ne!(edited, text);
    std::fs::write(&receipts, &edited).unwrap();
    // verify names the file whose bytes are not those published.
    let v = verify(&store, &out);
    let said = String::from_utf8_lossy(&v.stderr);
    assert_eq!(v.status.code(), Some(1), "{said}");
    assert!(said.contains("1 difference(s)"), "{said}");
    assert!(said.contains("f_receipts.csv: sha256"), "{said}");
    let before = read(&out);
    let o = index(
        &store,
        &out,
        &["--from", "2025-06-02", "--to", "2025-06-02"],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("the receipts were edited since they were published"),
        "{stderr}"
    );
    assert_eq!(read(&out), before);
    assert_eq!(read(&receipts), edited);
}

/// Ingests a late listing 3% below a contributor's for 06-02 10:05 (every stamp
/// whose window reads it would change).
fn ingest_late_listing(dir: &Path, store: &Path, obs: &Path) {
    ingest_late_listing_at(dir, store, obs, "2025-06-02T10:05:00Z");
}

/// [`ingest_late_listing`] observed at `at`.
fn ingest_late_listing_at(dir: &Path, store: &Path, obs: &Path, at: &str) {
    let header = read(obs).lines().next().unwrap().to_string();
    let sample: Vec<_> = rows(obs)
        .into_iter()
        .filter(|r| r["kind"] == "listing" && r["gpu"].contains("H100"))
        .take(1)
        .collect();
    let r = &sample[0];
    let cols: Vec<&str> = header.split(',').collect();
    let line: Vec<String> = cols
        .iter()
        .map(|c| match *c {
            "obs_id" => "late-1".to_string(),
            "observed_at" => at.to_string(),
            "price" => format!("{:.4}", r["price"].parse::<f64>().unwrap() * 0.97),
            other => r[other].clone(),
        })
        .collect();
    let late = dir.join("late.csv");
    std::fs::write(&late, format!("{header}\n{}\n", line.join(","))).unwrap();
    rentix_ok(&["ingest", "--store", p(store), p(&late)]);
}

/// Late data for a day already published, and a run of the next day only: the
/// stamps it changes stay as first published (never revised), `verify` names
/// them, and the run said nothing (a hostile round). The run now says which
/// ingest runs brought rows for published days; a file published after them
/// hears nothing.
#[test]
fn late_data_for_a_published_day_is_named_by_the_next_day_s_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (store, obs) = store_of_three_days(dir);
    let out = dir.join("f.csv");
    ok(&index(&store, &out, &["--to", "2025-06-02"]));
    ingest_late_listing(dir, &store, &obs);
    let said = ok(&index(
        &store,
        &out,
        &["--from", "2025-06-03", "--to", "2025-06-03"],
    ));
    assert!(
        said.contains("late data: 1 ingest run(s) committed since this file was last published (run-000002) hold rows dated from 2025-06-02, on days it had published through 2025-06-02")
            && said.contains("never revised"),
        "{said}"
    );
    let v = verify(&store, &out);
    assert_eq!(v.status.code(), Some(1), "verify names the stamps");
    // A run past a gap fixes none of the published stamps again: late rows for
    // the file's last day were named by neither line (a hostile round).
    let gap = dir.join("h.csv");
    ok(&index(&store, &gap, &["--to", "2025-06-01"]));
    ingest_late_listing_at(dir, &store, &obs, "2025-06-01T10:05:00Z");
    let said = ok(&index(
        &store,
        &gap,
        &["--from", "2025-06-03", "--to", "2025-06-03"],
    ));
    assert!(
        said.contains("re-fixed from 2025-06-02")
            && said.contains(
                "hold rows dated from 2025-06-01, on days it had published through 2025-06-01"
            ),
        "{said}"
    );
    // Published after the late run: nothing to say.
    let after = dir.join("g.csv");
    ok(&index(&store, &after, &["--to", "2025-06-02"]));
    let said = ok(&index(
        &store,
        &after,
        &["--from", "2025-06-03", "--to", "2025-06-03"],
    ));
    assert!(!said.contains("late data"), "{said}");
}

/// A store rebuilt from the same rows in more runs: the run the file was last
/// published through is there by name, and the runs after it bring rows of the
/// published days. A hostile round found them named as late data, where
/// `verify` passes. The runs through the recorded one are now compared by
/// digest: the run says it cannot tell, and names no late data.
#[test]
fn a_store_rebuilt_in_more_runs_is_not_late_data() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (store, obs) = store_of_three_days(dir);
    let out = dir.join("f.csv");
    ok(&index(&store, &out, &["--to", "2025-06-02"]));
    std::fs::remove_dir_all(&store).unwrap();
    let text = read(&obs);
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let (mut odd, mut even) = (vec![header], vec![header]);
    for (i, l) in lines.enumerate() {
        if i % 2 == 0 { &mut even } else { &mut odd }.push(l);
    }
    for (name, rows) in [("even.csv", even), ("odd.csv", odd)] {
        let f = dir.join(name);
        std::fs::write(&f, rows.join("\n") + "\n").unwrap();
        rentix_ok(&["ingest", "--store", p(&store), p(&f)]);
    }
    let said = ok(&index(
        &store,
        &out,
        &["--from", "2025-06-03", "--to", "2025-06-03"],
    ));
    assert!(!said.contains("late data"), "{said}");
    assert!(
        said.contains("note: the store's runs through run-000001 are not those this file was last published from"),
        "{said}"
    );
    assert_eq!(verify(&store, &out).status.code(), Some(0));
}

#[test]
fn a_published_stamp_is_never_revised_and_the_publication_says_what_it_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (store, obs) = store_of_three_days(dir);
    let out = dir.join("f.csv");
    ok(&index(&store, &out, &["--to", "2025-06-02"]));
    let first = read(&out);
    ingest_late_listing(dir, &store, &obs);
    let said = ok(&index(
        &store,
        &out,
        &["--from", "2025-06-02", "--to", "2025-06-03"],
    ));
    let after = read(&out);
    let kept: Vec<&str> = after
        .lines()
        .filter(|l| !l.starts_with("2025-06-03,"))
        .collect();
    let was: Vec<&str> = first.lines().collect();
    let changed: Vec<_> = was
        .iter()
        .zip(&kept)
        .filter(|(a, b)| a != b)
        .take(2)
        .collect();
    assert!(
        changed.is_empty(),
        "a published stamp changed: {changed:#?}"
    );
    assert_eq!(kept.len(), was.len());
    assert!(
        said.contains("not revised: ") && said.contains("never revised"),
        "{said}"
    );
}

#[test]
fn an_intraday_publication_refuses_what_it_cannot_continue() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (store, _) = store_of_three_days(dir);
    let refused = |out: &Path, range: &[&str], code: i32, words: &[&str]| {
        let before = read(out);
        let o = index(&store, out, range);
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(o.status.code(), Some(code), "{err}");
        for w in words {
            assert!(err.contains(w), "{w:?} not in {err}");
        }
        assert_eq!(read(out), before, "a refused publication wrote");
    };
    // A range past the data: refused, no header-only file.
    let none = dir.join("none.csv");
    refused(&none, &["--from", "2030-01-01"], 3, &["last fixing date"]);
    assert!(!none.exists());
    // A range that runs past the data ends at the data (three days of stamps).
    let out = dir.join("f.csv");
    let said = ok(&index(&store, &out, &["--to", "2029-12-31"]));
    assert!(said.contains("to 2025-06-03"), "{said}");
    let last = rows(&out).iter().map(|r| r["date"].clone()).max().unwrap();
    assert!(last.as_str() <= "2025-06-04", "{last}");
    // A daily fixings file is not continued by an intraday methodology.
    let daily = dir.join("daily.csv");
    rentix_ok(&["index", "--store", p(&store), "--out", p(&daily)]);
    refused(&daily, &[], 2, &["daily fixings"]);
    // An edited stamp: the file no longer matches its digest.
    let good = read(&out);
    let v = rows(&out)[5]["value"].clone();
    std::fs::write(&out, good.replacen(&format!(",{v},"), ",9.9,", 1)).unwrap();
    refused(&out, &["--from", "2025-06-03"], 3, &["digest"]);
    std::fs::write(&out, &good).unwrap();
    // Receipts deleted: refused by index, reported by verify.
    let receipts = dir.join("f_receipts.csv");
    let kept = read(&receipts);
    std::fs::remove_file(&receipts).unwrap();
    refused(
        &out,
        &["--from", "2025-06-03"],
        3,
        &["f_receipts.csv is missing"],
    );
    let v = verify(&store, &out);
    assert_eq!(v.status.code(), Some(1), "receipts deleted, verify passed");
    std::fs::write(&receipts, kept).unwrap();
    ok(&verify(&store, &out));
    // Another intraday methodology over the same file.
    let other = dir.join("other.toml");
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("data/methodologies/intraday/{M}.toml")),
    )
    .unwrap();
    let version = text
        .lines()
        .find(|l| l.starts_with("version"))
        .unwrap()
        .to_string();
    std::fs::write(
        &other,
        text.replacen(&version, "version = \"other-15m\"", 1),
    )
    .unwrap();
    let before = read(&out);
    let o = rentix(&[
        "index",
        "--store",
        p(&store),
        "--methodology",
        p(&other),
        "--out",
        p(&out),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("other-15m"));
    assert_eq!(read(&out), before);
}

/// A grade's stamps end `MAX_SILENT_DAYS` (92) after its last observation: eight
/// listings nine years apart gave 1.26 M stamps and 1.9 GB; two lives now give two
/// short runs of stamps, and a run from a day inside a life (read from the days
/// before it) gives the full run's stamps of that day.
#[test]
fn a_grade_silent_past_its_life_gets_no_stamps() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut csv =
        String::from("kind,observed_at,source,gpu,scope,term,price,price_unit,currency\n");
    for day in ["2016-01-01", "2025-01-01"] {
        for j in 1..=6 {
            csv.push_str(&format!(
                "listing,{day}T12:00:00Z,provider {j},h100-sxm-80gb,vm,on-demand,2.{j}0,gpu_hour,USD\n"
            ));
        }
    }
    let obs = dir.join("obs.csv");
    std::fs::write(&obs, csv).unwrap();
    let store = dir.join("store");
    rentix_ok(&["ingest", "--store", p(&store), p(&obs)]);
    let all = dir.join("all.csv");
    ok(&index(&store, &all, &[]));
    let rows_all = rows(&all);
    // First life: the 12:00 stamp of 2016-01-01 (its interval (11:45, 12:00] holds
    // the listings) to 12:00 on 2016-04-02, 92 days later: 92 x 96 + 1 = 8833
    // stamps; second: 12:00 to 24:00 on 2025-01-01: 49.
    assert_eq!(rows_all.len(), 8833 + 49, "stamps of two lives");
    let last_2016 = rows_all
        .iter()
        .map(|r| r["fixed_at"].clone())
        .filter(|t| t.starts_with("2016"))
        .max()
        .unwrap();
    assert_eq!(last_2016, "2016-04-02T12:00:00.000000Z");
    // A day inside the first life, published alone, equals the full run's day.
    let day = dir.join("day.csv");
    ok(&index(
        &store,
        &day,
        &["--from", "2016-03-01", "--to", "2016-03-01"],
    ));
    let want: Vec<_> = rows_all
        .iter()
        .filter(|r| r["date"] == "2016-03-01")
        .cloned()
        .collect();
    assert_eq!(want.len(), 96);
    assert_eq!(rows(&day), want);
}

/// A slot-labelled methodology (`label = "slot"`: a stamp is its interval's start,
/// the Computable index's capture slots) publishes day by day what one run
/// publishes, receipts included (the day's 00:00 slot's receipts were dropped as
/// the day before's), verifies after every day, and each day opens at its 00:00
/// slot, dated that day.
#[test]
fn a_slot_labelled_publication_grows_by_its_days_and_equals_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (store, _) = store_of_three_days(dir);
    let shipped = rentix_core::bundled(
        rentix_core::ConfigKind::Methodology,
        "intraday_lowest_listing_15m",
    )
    .unwrap();
    let slot = shipped
        .replacen(
            "cadence = \"15m\"",
            "cadence = \"15m\"\nlabel = \"slot\"",
            1,
        )
        .replacen("version = \"", "version = \"slot-", 1);
    assert_ne!(slot, shipped);
    let m = dir.join("slot.toml");
    std::fs::write(&m, slot).unwrap();
    let run = |out: &Path, range: &[&str]| ok(&index_with(&store, p(&m), out, range));
    let all = dir.join("all.csv");
    run(&all, &[]);
    let daily = dir.join("daily.csv");
    for day in ["2025-06-01", "2025-06-02", "2025-06-03"] {
        run(&daily, &["--from", day, "--to", day]);
        ok(&rentix(&[
            "verify",
            "--store",
            p(&store),
            "--fixings",
            p(&daily),
            "--methodology",
            p(&m),
        ]));
        let opening = format!("{day}T00:00:00");
        assert!(
            rows(&daily)
                .iter()
                .any(|r| r["fixed_at"].starts_with(&opening) && r["date"] == day),
            "{day} does not open at its 00:00 slot"
        );
    }
    same_as_one_run(dir);
}

/// Liveness weights (`[intraday.weights.liveness]`) depend on the whole history:
/// the switch to the model and the weights in force at every sample. A day's
/// publication fixes from the store's first day, so that publishing the last
/// days one at a time gives what one run over every day gives (a warm-up of the
/// usual eight days restarted the model in its opening weights and differed).
#[test]
fn liveness_weights_published_day_by_day_equal_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let sim = dir.join("sim");
    rentix_ok(&[
        "simulate",
        "--out",
        p(&sim),
        "--days",
        "12",
        "--start",
        "2025-06-01",
        "--cadence",
        "1h",
    ]);
    let store = dir.join("store");
    rentix_ok(&[
        "ingest",
        "--store",
        p(&store),
        p(&sim.join("observations.csv")),
    ]);
    let shipped = rentix_core::bundled(
        rentix_core::ConfigKind::Methodology,
        "intraday_computable_15m",
    )
    .unwrap();
    // Hourly, with horizons and a history short enough to switch on in a day.
    let mut hourly = shipped
        .replacen("version = \"", "version = \"hourly-", 1)
        .replacen("cadence = \"15m\"", "cadence = \"1h\"", 1)
        .replacen("window = \"15m\"", "window = \"1h\"", 1)
        .replacen("max_carry = \"24h\"", "max_carry = \"2h\"", 1)
        .replacen("days = 90", "days = 1", 1);
    let live = hourly.find("lookbacks").unwrap();
    hourly.truncate(live);
    hourly.push_str(
        "lookbacks = [\"1h\", \"3h\"]\nhorizons = [\"1h\", \"3h\"]\nhistory = \"3d\"\nhalf_life = \"1d\"\nattendance_half_life = \"3h\"\n",
    );
    let m = dir.join("hourly.toml");
    std::fs::write(&m, &hourly).unwrap();
    let run = |out: &Path, range: &[&str]| ok(&index_with(&store, p(&m), out, range));
    let all = dir.join("all.csv");
    run(&all, &[]);
    assert!(
        rows(&all)
            .iter()
            .any(|r| r["flags"].contains("weights_switched")),
        "the model never switched on"
    );
    let daily = dir.join("daily.csv");
    run(&daily, &["--to", "2025-06-09"]);
    for day in ["2025-06-10", "2025-06-11", "2025-06-12"] {
        run(&daily, &["--from", day, "--to", day]);
    }
    ok(&rentix(&[
        "verify",
        "--store",
        p(&store),
        "--fixings",
        p(&daily),
        "--methodology",
        p(&m),
    ]));
    same_as_one_run(dir);
}

/// `index --ballots`: a publication's receipts fixed again by the methodology's
/// sigma votes and aggregation give back every published stamp's value, band,
/// quartiles and panel, as an auditor with the receipts alone would check them;
/// an existing `--out` is not overwritten, and a daily methodology is refused.
#[test]
fn a_publication_fixed_again_from_its_receipts_gives_every_stamp_back() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (store, _) = store_of_three_days(dir);
    let all = dir.join("all.csv");
    ok(&index(&store, &all, &[]));
    let again = dir.join("again.csv");
    let ballots = dir.join("all_receipts.csv");
    let fix_again = |out: &Path, m: &str| {
        rentix(&[
            "index",
            "--ballots",
            p(&ballots),
            "--methodology",
            m,
            "--out",
            p(out),
        ])
    };
    let said = ok(&fix_again(&again, M));
    assert!(said.contains("stamps fixed again"), "{said}");
    let key = |r: &std::collections::BTreeMap<String, String>| {
        (r["grade"].clone(), r["fixed_at"].clone())
    };
    let published: std::collections::BTreeMap<_, _> =
        rows(&all).into_iter().map(|r| (key(&r), r)).collect();
    let recomputed = rows(&again);
    let with_voters = published
        .values()
        .filter(|r| r["n_contributors"] != "0")
        .count();
    assert_eq!(recomputed.len(), with_voters);
    let mut valued = 0;
    for r in &recomputed {
        let p = &published[&key(r)];
        for col in [
            "date",
            "value",
            "band",
            "votes_p25_p75",
            "n_contributors",
            "n_observed",
            "n_carried",
            "sufficient",
            // The cap on equal weights cannot hold under four voters: a first
            // version gave the values back without saying so (193 of 1536
            // stamps of the README's run lost `cap_not_held`).
            "flags",
        ] {
            assert_eq!(r[col], p[col], "{col} at {:?}", key(r));
        }
        valued += usize::from(!r["value"].is_empty());
    }
    assert!(valued > 100, "{valued} stamps with a value");
    assert!(
        recomputed
            .iter()
            .any(|r| r["flags"].contains("cap_not_held")),
        "no stamp tests the cap's flag"
    );
    // In the publication's order (stamp, then grade): the files compare line by line.
    let order: Vec<_> = rows(&all)
        .iter()
        .filter(|r| r["n_contributors"] != "0")
        .map(key)
        .collect();
    assert_eq!(recomputed.iter().map(key).collect::<Vec<_>>(), order);
    // Not over a file, not with a daily methodology.
    assert_eq!(fix_again(&again, M).status.code(), Some(2));
    assert_eq!(
        fix_again(&dir.join("d.csv"), "default").status.code(),
        Some(2)
    );
}

/// `verify` is a library call (`rentix_publish::verify::check`), not a rule of the
/// binary: the same publication checks the same through it and through the CLI, a
/// cell changed by hand is named by both (the CLI exits 1).
#[test]
fn verify_is_one_library_call_for_every_surface() {
    use rentix_publish::verify::{check, VerifyRequest};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (store, _) = store_of_three_days(dir);
    let out = dir.join("f.csv");
    ok(&index(
        &store,
        &out,
        &["--from", "2025-06-02", "--to", "2025-06-02"],
    ));
    let req = VerifyRequest {
        store: store.clone(),
        fixings: out.clone(),
        methodology: None,
    };
    let o = check(&req).unwrap();
    assert!(o.differences.is_empty(), "{:?}", o.differences);
    assert_eq!(o.rows, rows(&out).len());
    ok(&verify(&store, &out));
    // One value changed by hand (and the digest with it).
    let text = read(&out);
    let line = text.lines().nth(40).unwrap().to_string();
    let value = line.split(',').nth(3).unwrap().to_string();
    assert!(!value.is_empty(), "{line}");
    let edited = line.replacen(&value, "9.999999", 1);
    std::fs::write(&out, text.replacen(&line, &edited, 1)).unwrap();
    let o = check(&req).unwrap();
    assert!(
        o.differences
            .iter()
            .any(|d| d.column == "value" && d.published == "9.999999"),
        "{:?}",
        o.differences
    );
    assert_eq!(verify(&store, &out).status.code(), Some(1));
}

/// A published record's seats written without their prints (`fixed_at, grade,
/// contributor, vote, sigma, weight, status`, as the docs give the layout) are
/// ballots; an empty file is refused (exit 3).
#[test]
fn ballots_without_prints_are_read_and_an_empty_file_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let seats = dir.join("seats.csv");
    let mut text = String::from("fixed_at,grade,contributor,vote,sigma,weight,status\n");
    for (who, vote) in [("a", 2.0), ("b", 2.1), ("c", 2.2), ("d", 2.3), ("e", 2.4)] {
        text.push_str(&format!(
            "2025-06-01T10:00:00Z,g,{who},{vote},,0.2,observed\n"
        ));
    }
    std::fs::write(&seats, text).unwrap();
    let out = dir.join("again.csv");
    let said = ok(&rentix(&[
        "index",
        "--ballots",
        p(&seats),
        "--methodology",
        M,
        "--out",
        p(&out),
    ]));
    assert!(said.contains("1 stamps fixed again"), "{said}");
    // The shipped methodology's interquantile mean (alpha 0.16666) of five equal
    // votes 2.0 .. 2.4 is their middle third: 2.2.
    assert_eq!(rows(&out)[0]["value"], "2.2");
    let empty = dir.join("empty.csv");
    std::fs::write(&empty, "").unwrap();
    let o = rentix(&[
        "index",
        "--ballots",
        p(&empty),
        "--methodology",
        M,
        "--out",
        p(&dir.join("e.csv")),
    ]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A marketplace named in `[intraday.books]` that no observation comes from (a
/// misspelling: "GridBazar" for the simulated "GridBazaar") is said, naming it; a
/// run that reads its book says nothing (the hostile run of issue 50: the misspelt
/// seat fixed as if it had no book, without a word).
#[test]
fn a_book_contributor_no_observation_comes_from_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = store_of_three_days(dir.path());
    let shipped = std::fs::read_to_string(crate::util::data(&format!(
        "data/methodologies/intraday/{M}.toml"
    )))
    .unwrap();
    let with_books = |name: &str| {
        let path = dir.path().join(format!("{name}.toml"));
        std::fs::write(
            &path,
            format!("{shipped}\n[intraday.books]\ncontributors = [\"{name}\"]\n"),
        )
        .unwrap();
        path
    };
    let misspelt = ok(&index_with(
        &store,
        p(&with_books("GridBazar")),
        &dir.path().join("a.csv"),
        &[],
    ));
    assert!(
        misspelt.contains("note: [intraday.books] names \"GridBazar\", from which no observation"),
        "{misspelt}"
    );
    let right = ok(&index_with(
        &store,
        p(&with_books("GridBazaar")),
        &dir.path().join("b.csv"),
        &[],
    ));
    assert!(!right.contains("[intraday.books]"), "{right}");
}

/// A marketplace's print is the volume-weighted median of its asks, each weighted
/// by its GPUs, when the book is read from a store as when it is fixed in memory.
/// Three asks in the 10:00-10:15 interval: 1.00 for 8 GPUs, 2.00 and 3.00 for one
/// each; 8 of the 10 GPUs ask 1.00, so the book prints 1.00 (by hand). Before the
/// fix, the store's rows reached the engine without `gpus_per_unit` (the fixing
/// columns left it out), every ask weighed one GPU, and the book printed the
/// middle ask, 2.00.
#[test]
fn a_book_read_from_the_store_weighs_each_ask_by_its_gpus() {
    let dir = tempfile::tempdir().unwrap();
    let obs = dir.path().join("asks.csv");
    std::fs::write(
        &obs,
        "kind,observed_at,source,gpu,scope,term,price,price_unit,currency,quantity_gpu_hours,gpus_per_unit,region,obs_id\n\
         listing,2025-06-01T10:05:00Z,GridBazaar,h100-sxm-80gb,vm,on-demand,1.0,gpu_hour,USD,,8,us,a1\n\
         listing,2025-06-01T10:06:00Z,GridBazaar,h100-sxm-80gb,vm,on-demand,2.0,gpu_hour,USD,,1,us,a2\n\
         listing,2025-06-01T10:07:00Z,GridBazaar,h100-sxm-80gb,vm,on-demand,3.0,gpu_hour,USD,,1,us,a3\n",
    )
    .unwrap();
    let store = dir.path().join("store");
    rentix_ok(&["ingest", "--store", p(&store), p(&obs)]);
    let shipped = std::fs::read_to_string(crate::util::data(&format!(
        "data/methodologies/intraday/{M}.toml"
    )))
    .unwrap();
    let m = dir.path().join("books.toml");
    std::fs::write(
        &m,
        format!("{shipped}\n[intraday.books]\ncontributors = [\"GridBazaar\"]\n"),
    )
    .unwrap();
    let out = dir.path().join("f.csv");
    ok(&index_with(&store, p(&m), &out, &[]));
    let receipts = rows(&dir.path().join("f_receipts.csv"));
    let at_1015: Vec<_> = receipts
        .iter()
        .filter(|r| r["fixed_at"].starts_with("2025-06-01T10:15:00"))
        .collect();
    assert_eq!(at_1015.len(), 1, "{receipts:?}");
    assert_eq!(at_1015[0]["contributor"], "gridbazaar");
    assert_eq!(at_1015[0]["print"], "1.0", "{:?}", at_1015[0]);
}

/// Receipts name their sigma's unit beside every sigma; `--ballots` refuses a
/// receipt whose unit is not the methodology's (the hostile run of issue 50: relative
/// sigmas read under a dollar methodology counted 0.05 as five cents, without a
/// word); receipts written before the column are verified on the columns they have
/// and get it back at the next publication.
#[test]
fn receipts_name_their_sigma_unit_and_ballots_in_another_unit_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = store_of_three_days(dir.path());
    let out = dir.path().join("f.csv");
    ok(&index(&store, &out, &["--to", "2025-06-01"]));
    let receipts = dir.path().join("f_receipts.csv");
    let written = rows(&receipts);
    assert!(written.iter().any(|r| !r["sigma"].is_empty()));
    for r in &written {
        let want = if r["sigma"].is_empty() {
            ""
        } else {
            "relative"
        };
        assert_eq!(r["sigma_unit"], want, "{r:?}");
    }
    // The same receipts fixed again under the dollar methodology: refused.
    let o = rentix(&[
        "index",
        "--ballots",
        p(&receipts),
        "--methodology",
        "intraday_computable_15m",
        "--out",
        p(&dir.path().join("again.csv")),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(
            "gives its sigma in relative (sigma_unit), and the methodology votes dollars sigmas"
        ),
        "{stderr}"
    );
    // Receipts as published before the column: verify checks what they hold.
    let text = std::fs::read_to_string(&receipts).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let j = header.iter().position(|h| *h == "sigma_unit").unwrap();
    let old: String = text
        .lines()
        .map(|l| {
            let mut cells: Vec<&str> = l.split(',').collect();
            cells.remove(j);
            cells.join(",") + "\n"
        })
        .collect();
    std::fs::write(&receipts, old).unwrap();
    // Such receipts were published before the digest sidecar named them too (its
    // first line only) and before the state.
    let sidecar = dir.path().join("f.csv.sha256");
    let first = std::fs::read_to_string(&sidecar).unwrap();
    std::fs::write(&sidecar, first.lines().next().unwrap().to_string() + "\n").unwrap();
    std::fs::remove_file(dir.path().join("f_intraday_state.json")).unwrap();
    let o = verify(&store, &out);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // The next day's publication writes the column for every receipt.
    ok(&index(
        &store,
        &out,
        &["--from", "2025-06-02", "--to", "2025-06-02"],
    ));
    let again = rows(&receipts);
    assert!(again.len() > written.len());
    for r in &again {
        let want = if r["sigma"].is_empty() {
            ""
        } else {
            "relative"
        };
        assert_eq!(r["sigma_unit"], want, "{r:?}");
    }
    assert_eq!(verify(&store, &out).status.code(), Some(0));
}

/// The bytes of `path`, empty when it is not there.
fn bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_default()
}

/// `index` of 2025-06-02 alone into `out` under the test hook
/// `RENTIX_FAIL_AT=fail` (docs/formats.md).
fn day_two_failing(store: &Path, out: &Path, fail: &str) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_rentix"))
        .args([
            "index",
            "--store",
            p(store),
            "--methodology",
            M,
            "--out",
            p(out),
            "--from",
            "2025-06-02",
            "--to",
            "2025-06-02",
        ])
        .env("RENTIX_FAIL_AT", fail)
        .output()
        .unwrap()
}
