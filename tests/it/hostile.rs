//! The hostile-input catalogue (`tests/hostile/cases.toml`): every case writes its
//! files into a fresh directory, runs its steps through the binary and checks each
//! step's exit status, the words its messages must (and must not) contain, and the
//! files it must leave behind or not: a bad input gets a clear error or a quarantine
//! row, never a panic, a silent drop or a poisoned store.

use crate::util::{data, rentix};
use std::path::Path;
use toml::Value;

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

fn fill(s: &str, dir: &Path) -> String {
    s.replace("{dir}", &dir.to_string_lossy())
        .replace("{host}", &host())
        .replace("{repo}", data("").to_string_lossy().trim_end_matches('/'))
}

/// Expands `{repeat:N:TEXT}` (TEXT without `}`) to TEXT written N times: inputs too
/// large to keep in the catalogue.
fn expand_repeats(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(at) = rest.find("{repeat:") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "{repeat:".len()..];
        let end = after.find('}').expect("a {repeat:N:TEXT} closes");
        let (n, text) = after[..end].split_once(':').expect("{repeat:N:TEXT}");
        out.push_str(&text.repeat(n.parse().expect("a count")));
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Runs one case; returns what went wrong.
fn run_case(case: &Value) -> Vec<String> {
    let name = case
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_string();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut errors = Vec::new();
    if let Some(files) = case.get("files").and_then(Value::as_table) {
        for (f, text) in files {
            let body = fill(text.as_str().unwrap_or(""), dir);
            let body = expand_repeats(&body.replace("{big_version}", &"v".repeat(100_000)));
            let path = dir.join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, body).unwrap();
        }
    }
    for (i, step) in case
        .get("steps")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let args: Vec<String> = strings(step.get("args"))
            .iter()
            .map(|a| fill(a, dir))
            .collect();
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = rentix(&argv);
        let (so, se) = (
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        );
        let at = format!("{name} step {}: rentix {}", i + 1, args.join(" "));
        if se.contains("panicked") || out.status.code().is_none() {
            errors.push(format!("{at}: crashed ({:?}): {se}", out.status));
            continue;
        }
        if let Some(want) = step.get("exit").and_then(Value::as_integer) {
            if out.status.code() != Some(want as i32) {
                errors.push(format!(
                    "{at}: exit {:?}, expected {want}; stderr: {se}",
                    out.status.code()
                ));
            }
        }
        let want_ok = step.get("ok").and_then(Value::as_bool).unwrap_or(true);
        if out.status.success() != want_ok {
            errors.push(format!(
                "{at}: exit {:?}, expected {}; stderr: {se}",
                out.status.code(),
                if want_ok { "success" } else { "failure" }
            ));
        }
        for w in strings(step.get("stderr")) {
            if !se.contains(&fill(&w, dir)) {
                errors.push(format!("{at}: stderr lacks {w:?}: {se}"));
            }
        }
        for w in strings(step.get("stdout")) {
            if !so.contains(&fill(&w, dir)) {
                errors.push(format!(
                    "{at}: stdout lacks {w:?}: {}",
                    so.chars().take(2000).collect::<String>()
                ));
            }
        }
        for w in strings(step.get("not_stderr"))
            .into_iter()
            .chain(strings(step.get("not_stdout")))
        {
            if se.contains(&w) || so.contains(&w) {
                errors.push(format!("{at}: output has {w:?}"));
            }
        }
    }
    for f in strings(case.get("exists")) {
        if !dir.join(&f).exists() {
            errors.push(format!("{name}: {f} should exist"));
        }
    }
    for f in strings(case.get("absent")) {
        if dir.join(&f).exists() {
            errors.push(format!("{name}: {f} should not exist"));
        }
    }
    if let Some(t) = case.get("file_contains").and_then(Value::as_table) {
        for (f, words) in t {
            let text = std::fs::read_to_string(dir.join(f)).unwrap_or_default();
            for w in strings(Some(words)) {
                if !text.contains(&w) {
                    errors.push(format!("{name}: {f} lacks {w:?}"));
                }
            }
        }
    }
    errors
}

#[test]
fn every_hostile_input_is_refused_or_quarantined_clearly() {
    let text = std::fs::read_to_string(data("tests/hostile/cases.toml")).unwrap();
    let v: Value = toml::from_str(&text).unwrap();
    let cases = v.get("case").and_then(Value::as_array).unwrap();
    assert!(cases.len() >= 55, "{} cases", cases.len());
    let errors: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = cases
            .chunks(cases.len().div_ceil(4))
            .map(|chunk| s.spawn(move || chunk.iter().flat_map(run_case).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(
        errors.is_empty(),
        "{} problem(s):\n{}",
        errors.len(),
        errors.join("\n")
    );
}

/// SIGTERM in the middle of an ingest releases the lock, commits nothing, and the
/// next ingest of the same file succeeds.
#[test]
#[cfg(unix)]
fn a_terminated_ingest_leaves_no_lock_and_no_data() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut body = String::from(
        "kind,observed_at,source,gpu,scope,term,price,price_unit,currency,quantity_gpu_hours\n",
    );
    for i in 0..400_000u32 {
        body.push_str(&format!(
            "trade,2025-03-{:02}T12:00:00Z,s{},h100-sxm-80gb,vm,on-demand,2.{},gpu_hour,USD,{}\n",
            1 + i % 28,
            i % 7,
            i % 10,
            10 + i
        ));
    }
    let obs = dir.join("obs.csv");
    std::fs::write(&obs, body).unwrap();
    let store = dir.join("store");
    let lock = store.join(".lock");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rentix"))
        .args([
            "ingest",
            "--json",
            "--store",
            store.to_str().unwrap(),
            obs.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A shell watches for the lock file and sends SIGTERM the moment it appears
    // (within microseconds, while the run may still be writing it: a signal there
    // once left the lock behind); it gives up after a few seconds of looking.
    let watcher = format!(
        "i=0; while [ ! -e '{}' ] && [ $i -lt 3000000 ]; do i=$((i+1)); done; kill -TERM {}",
        lock.display(),
        child.id()
    );
    let killed = std::process::Command::new("sh")
        .args(["-c", &watcher])
        .status()
        .unwrap();
    assert!(killed.success());
    assert!(
        lock.exists() || store.join("runs").exists(),
        "the ingest never took the lock"
    );
    let status = child.wait().unwrap();
    if status.success() {
        // The run finished before the signal: nothing to check but the lock.
        assert!(!lock.exists());
        return;
    }
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert!(!lock.exists(), "SIGTERM left the lock");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    let check = rentix(&[
        "store",
        "check",
        "--json",
        "--store",
        store.to_str().unwrap(),
    ]);
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let report = String::from_utf8_lossy(&check.stdout);
    if stderr.contains("after this run was committed") {
        // The signal came while the run published: it finished publishing first.
        assert!(report.contains("\"rows\": 400000"), "{report}");
        return;
    }
    assert!(stderr.contains("nothing was committed"), "{stderr}");
    assert!(report.contains("\"rows\": 0"), "{report}");
    let again = rentix(&[
        "ingest",
        "--json",
        "--store",
        store.to_str().unwrap(),
        obs.to_str().unwrap(),
    ]);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}

/// A grade named like a spreadsheet formula in a fixings file reaches `track.csv`
/// only as inert text.
#[test]
fn formula_grades_in_a_fixings_file_are_neutralized() {
    let m = crate::fixture::market();
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(m.fixings()).unwrap();
    let grade = "h100-sxm-80gb/bare-metal/on-demand";
    let evil = "=cmd|' /C calc'!A0";
    let mut out = text.clone();
    for line in text.lines().filter(|l| l.contains(&format!(",{grade},"))) {
        out.push_str(&line.replace(&format!(",{grade},"), &format!(",\"{evil}\",")));
        out.push('\n');
    }
    let fixings = tmp.path().join("f.csv");
    std::fs::write(&fixings, out).unwrap();
    let track = tmp.path().join("t.csv");
    let o = rentix(&[
        "track",
        "--index",
        fixings.to_str().unwrap(),
        "--rent",
        m.sim("rent_producer_h100_spot_rate.csv").to_str().unwrap(),
        "--resamples",
        "0",
        "--out",
        track.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let written = std::fs::read_to_string(&track).unwrap();
    assert!(
        written.contains(&format!("'{evil}")),
        "the grade is listed, quoted"
    );
    assert!(
        !written.lines().any(|l| l
            .split(',')
            .any(|c| c.starts_with('=') || c.starts_with("\"="))),
        "no cell starts a formula"
    );
}

/// A Parquet file whose damaged pages make polars' decoder panic is the file's
/// error (exit 3, the file named), with no panic line or backtrace on stderr: the
/// panic is caught and reported, so printing it too would only alarm.
#[test]
fn a_damaged_parquet_file_is_an_error_without_a_panic_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut bytes = std::fs::read(data("crates/table/tests/data/polars_zstd.parquet")).unwrap();
    // Found by overwriting each byte in turn: the decoder asserts on this one.
    bytes[345] ^= 0xff;
    let f = d.join("f.parquet");
    std::fs::write(&f, &bytes).unwrap();
    let rent = d.join("rent.csv");
    std::fs::write(
        &rent,
        "period_start,period_end,usd_per_gpu_hour,gpu_hours,side\n2025-01-01,2025-02-01,2.95,730,pay\n",
    )
    .unwrap();
    let o = rentix(&[
        "backtest",
        "--index",
        f.to_str().unwrap(),
        "--rent",
        rent.to_str().unwrap(),
        "--out",
        d.join("o").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("f.parquet") && err.contains("does not decode"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(!err.contains("backtrace"), "{err}");
}
