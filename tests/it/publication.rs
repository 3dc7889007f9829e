//! `index --out F` publishes as one transaction: a run killed at any step of a
//! restating publication (or failing on a full disk) is followed by a run whose
//! files are byte-identical to an uninterrupted run's, and concurrent publishers of
//! one file never archive or log twice.

use crate::util::{p, rentix, rentix_ok};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

const HEAD: &str =
    "kind,observed_at,source,gpu,scope,term,price,price_unit,currency,quantity_gpu_hours";

/// Every file of `dir` by name, with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().to_string(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for (name, bytes) in snapshot(from) {
        std::fs::write(to.join(name), bytes).unwrap();
    }
}

/// A store with a published `base/fix.csv` that late data will restate.
fn restating_setup(root: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let store = root.join("s");
    let a = root.join("a.csv");
    let body: Vec<String> = (0..3)
        .map(|i| format!("trade,2025-05-0{}T1{i}:00:00Z,s{i},h100-sxm-80gb,vm,on-demand,2.{i},gpu_hour,USD,100", 1 + i % 2))
        .collect();
    std::fs::write(&a, format!("{HEAD}\n{}\n", body.join("\n"))).unwrap();
    rentix_ok(&["ingest", "--json", "--store", p(&store), p(&a)]);
    let base = root.join("base");
    std::fs::create_dir_all(&base).unwrap();
    rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--out",
        p(&base.join("fix.csv")),
    ]);
    let b = root.join("b.csv");
    std::fs::write(&b, format!("{HEAD}\ntrade,2025-05-01T18:00:00Z,s9,h100-sxm-80gb,vm,on-demand,1.9,gpu_hour,USD,1000\n")).unwrap();
    rentix_ok(&["ingest", "--json", "--store", p(&store), p(&b)]);
    (store, base)
}

fn index_with(store: &Path, dir: &Path, fail_at: Option<&str>) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rentix"));
    c.args([
        "index",
        "--store",
        p(store),
        "--out",
        p(&dir.join("fix.csv")),
    ]);
    if let Some(f) = fail_at {
        c.env("RENTIX_FAIL_AT", f);
    }
    c.output().unwrap()
}

#[test]
fn a_publication_killed_at_any_step_is_finished_by_the_next_run() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, base) = restating_setup(tmp.path());
    let reference = tmp.path().join("ref");
    copy_dir(&base, &reference);
    let msg = rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--out",
        p(&reference.join("fix.csv")),
    ]);
    assert!(msg.contains("restated"), "{msg}");
    let want = snapshot(&reference);
    assert!(want.contains_key("fix.v1.csv") && want.contains_key("fix_restatements.csv"));
    assert!(!want.contains_key("fix.csv.lock"), "the lock is released");
    let mut pending = 0;
    for step in [
        "publish:archive_write",
        "publish:archive_staged",
        "publish:log_staged",
        "publish:staged",
        "publish:journal",
        "publish:renamed:fix.v1.csv",
        "publish:renamed:fix_restatements.csv",
        "publish:renamed:fix.csv",
    ] {
        let d = tmp.path().join(step.replace(':', "_"));
        copy_dir(&base, &d);
        let killed = index_with(&store, &d, Some(step));
        assert!(!killed.status.success(), "{step}: the hook did not fire");
        assert!(
            String::from_utf8_lossy(&killed.stderr).contains("RENTIX_FAIL_AT"),
            "{step}: {}",
            String::from_utf8_lossy(&killed.stderr)
        );
        // Killed with its journal in place: verify says a publication is pending
        // (a hostile round found 81 differences listed without a word of it).
        if d.join("fix.csv.publishing").exists() {
            pending += 1;
            let v = rentix(&[
                "verify",
                "--store",
                p(&store),
                "--fixings",
                p(&d.join("fix.csv")),
            ]);
            let said = String::from_utf8_lossy(&v.stderr).to_string()
                + &String::from_utf8_lossy(&v.stdout);
            assert!(
                said.contains("was interrupted and is pending")
                    && said.contains("fix.csv.publishing"),
                "{step}: {said}"
            );
        }
        let again = index_with(&store, &d, None);
        assert!(
            again.status.success(),
            "{step}: {}",
            String::from_utf8_lossy(&again.stderr)
        );
        let got = snapshot(&d);
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>(),
            "{step}: files differ"
        );
        for (name, bytes) in &want {
            assert!(&got[name] == bytes, "{step}: {name} differs");
        }
    }
    assert!(pending >= 3, "killed after the journal: {pending}");
}

#[test]
fn a_full_disk_while_archiving_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, base) = restating_setup(tmp.path());
    let reference = tmp.path().join("ref");
    copy_dir(&base, &reference);
    rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--out",
        p(&reference.join("fix.csv")),
    ]);
    let d = tmp.path().join("full");
    copy_dir(&base, &d);
    let o = index_with(&store, &d, Some("publish:archive_write:error"));
    assert_eq!(o.status.code(), Some(4), "a write that failed is I/O");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("fix.v1.csv") && err.contains("injected"),
        "{err}"
    );
    assert_eq!(
        snapshot(&d),
        snapshot(&base),
        "no truncated archive, no temporary"
    );
    assert!(index_with(&store, &d, None).status.success());
    assert_eq!(
        snapshot(&d),
        snapshot(&reference),
        "the archive is v1, not v2"
    );
}

#[test]
fn concurrent_publishers_of_one_file_archive_and_log_once() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, base) = restating_setup(tmp.path());
    let reference = tmp.path().join("ref");
    copy_dir(&base, &reference);
    rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--out",
        p(&reference.join("fix.csv")),
    ]);
    let d = tmp.path().join("six");
    copy_dir(&base, &d);
    let out = d.join("fix.csv");
    let children: Vec<_> = (0..6)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_rentix"))
                .args(["index", "--store", p(&store), "--out", p(&out)])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut ok = 0;
    for c in children {
        let o = c.wait_with_output().unwrap();
        if o.status.success() {
            ok += 1;
        } else {
            let err = String::from_utf8_lossy(&o.stderr);
            // A publication's lock is not called a store's.
            assert!(
                err.contains("fix.csv.lock: locked by") && !err.contains("store"),
                "{err}"
            );
        }
    }
    assert!(ok >= 1);
    assert_eq!(snapshot(&d), snapshot(&reference));
    // A lock held by a live process is named; one left by a killed one is replaced.
    let o = rentix(&["index", "--store", p(&store), "--out", p(&out)]);
    assert!(o.status.success());
}

/// Ctrl-C (SIGTERM) during a publication: the message on exit says what is on disk.
/// Inside the commit the signal waits for the renames, so the message says the
/// publication is in place, and the files are an uninterrupted run's; before the
/// commit it says nothing was committed, the previous publication is untouched, and
/// the next run gives the same files. (The message used to say "nothing was
/// committed" in both cases.) The signal is delivered to a handler thread: on a busy
/// machine it may come after the run finished, which then exits 0 with every file in
/// place; what is checked is that the message never disagrees with the files.
#[test]
fn ctrl_c_during_a_publication_says_what_was_committed() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, base) = restating_setup(tmp.path());
    let reference = tmp.path().join("ref");
    copy_dir(&base, &reference);
    rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--out",
        p(&reference.join("fix.csv")),
    ]);
    let want = snapshot(&reference);
    let mut interrupted = 0;
    for step in ["publish:journal:signal", "publish:staged:signal"] {
        let d = tmp.path().join(step.replace(':', "_"));
        copy_dir(&base, &d);
        let before = snapshot(&d);
        let out = index_with(&store, &d, Some(step));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!d.join("fix.csv.lock").exists(), "{step}: lock left");
        match out.status.code() {
            Some(0) => assert_eq!(snapshot(&d), want, "{step}"),
            Some(130) if stderr.contains("after the publication was put in place whole") => {
                interrupted += 1;
                assert_eq!(snapshot(&d), want, "{step}");
            }
            Some(130) if stderr.contains("nothing was committed") => {
                interrupted += 1;
                assert!(step.contains("staged"), "{step}: the commit had begun");
                assert_eq!(snapshot(&d)["fix.csv"], before["fix.csv"], "{step}");
                let again = index_with(&store, &d, None);
                assert!(again.status.success(), "{step}");
                assert_eq!(snapshot(&d), want, "{step}");
            }
            other => panic!("{step}: exit {other:?}: {stderr}"),
        }
    }
    assert!(interrupted > 0, "no signal arrived in time in either run");
}

/// A publication over a fixings file that no longer matches its digest is refused,
/// window or not, and changes nothing: publishing over it would archive the edited
/// row as a past publication and log the forged value as first published, the
/// value a backtest settles on by default (found by a hostile run: a value edited
/// to 9.9999 became the restatement log's publication 1). A file whose digest is
/// gone is refused the same way; restored, it publishes again.
#[test]
fn nothing_is_published_over_an_edited_file() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, base) = restating_setup(tmp.path());
    let fix = base.join("fix.csv");
    let published = std::fs::read(&fix).unwrap();
    let text = String::from_utf8(published.clone()).unwrap();
    let row = text.lines().nth(1).unwrap();
    let cells: Vec<&str> = row.split(',').collect();
    let forged = [&[cells[0], cells[1], "9.9999"][..], &cells[3..]]
        .concat()
        .join(",");
    std::fs::write(&fix, text.replacen(row, &forged, 1)).unwrap();
    let digest = base.join("fix.csv.sha256");
    let recorded = std::fs::read(&digest).unwrap();
    for (what, range) in [
        ("whole", &[][..]),
        ("from a date", &["--from", "2025-05-02"][..]),
    ] {
        let before = snapshot(&base);
        let mut args = vec!["index", "--store", p(&store), "--out", p(&fix)];
        args.extend_from_slice(range);
        let o = rentix(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{what}: {err}");
        assert!(
            err.contains("fix.csv does not match its digest fix.csv.sha256"),
            "{what}: {err}"
        );
        assert!(err.contains("nothing was published"), "{what}: {err}");
        assert_eq!(snapshot(&base), before, "{what}: a file changed");
    }
    std::fs::remove_file(&digest).unwrap();
    let o = rentix(&["index", "--store", p(&store), "--out", p(&fix)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("(no digest file)"), "{err}");
    // Restored as published: the late trade restates the row, from its true value.
    std::fs::write(&fix, &published).unwrap();
    std::fs::write(&digest, &recorded).unwrap();
    rentix_ok(&["index", "--store", p(&store), "--out", p(&fix)]);
    let log = std::fs::read_to_string(base.join("fix_restatements.csv")).unwrap();
    assert!(!log.contains("9.9999"), "{log}");
    assert!(log.contains(cells[2]), "{log}");
    // Line endings rewritten by an editor change no cell (the digest is of the
    // cells, as `verify` reads them): published over, window or not, and written
    // back as published.
    let as_published = std::fs::read(&fix).unwrap();
    let crlf = String::from_utf8(as_published.clone())
        .unwrap()
        .replace('\n', "\r\n");
    for range in [&[][..], &["--from", "2025-05-02"][..]] {
        std::fs::write(&fix, &crlf).unwrap();
        let mut args = vec!["index", "--store", p(&store), "--out", p(&fix)];
        args.extend_from_slice(range);
        rentix_ok(&args);
        assert_eq!(std::fs::read(&fix).unwrap(), as_published, "{range:?}");
    }
}

/// A publication named through a symbolic link: refused as "changed since it was
/// published (no digest file)", and verify through it named three differences (a
/// hostile round), since its digest, state and companions are beside the
/// target. Both now work on the target, and say so; the link stays a link.
#[test]
fn a_publication_through_a_symbolic_link_is_its_target_s() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, base) = restating_setup(tmp.path());
    let link = tmp.path().join("fix.csv");
    std::os::unix::fs::symlink(base.join("fix.csv"), &link).unwrap();
    let o = rentix(&["index", "--store", p(&store), "--out", p(&link)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("is a symbolic link"), "{err}");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let v = rentix(&["verify", "--store", p(&store), "--fixings", p(&link)]);
    assert_eq!(
        v.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&v.stderr)
    );
}
