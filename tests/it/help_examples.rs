//! Every `Example:` of `rentix COMMAND --help` runs as written, each command's
//! alone, from an empty directory holding only a clone's public samples: the
//! shipped methodologies, contracts and mappings are named, not looked up in a
//! checkout (issue 29), and each command's examples make the market they work on
//! (issue 49: 4 of 26 ran alone).

use crate::util::{copy_tree, data, rentix};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

/// What a run of example lines leaves: its last line's output and a copy of the
/// directory after it.
type Made = (String, tempfile::TempDir);

/// The directories the opening lines of the examples leave, by those lines. Most
/// commands' examples open with the same market (`simulate`, then `ingest`), and
/// both are deterministic (tests/it/index_cli.rs, ingest_cli.rs): the first command
/// to reach those lines runs them as written in its empty directory, the others
/// copy what they left. The suite ran the same 400-day market a dozen times (issue
/// 49: the suite under three minutes).
static MADE: Mutex<BTreeMap<Lines, Arc<OnceLock<Made>>>> = Mutex::new(BTreeMap::new());

/// Example lines, each as its words.
type Lines = Vec<Vec<String>>;

/// Runs `ex` in `dir`: its output, or the failure named.
fn run_in(dir: &Path, ex: &[String], cmd: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_rentix"))
        .args(&ex[1..])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "the example `{}` of `rentix {}` failed, run alone from an empty directory:\n{}",
        ex.join(" "),
        cmd.join(" "),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// The example command lines of a help text: the lines after `Example:` that start
/// with `rentix`, continuation lines joined, `# ...` comments dropped.
fn examples(help: &str) -> Vec<Vec<String>> {
    let Some((_, tail)) = help.split_once("Example:") else {
        return Vec::new();
    };
    let mut joined = Vec::new();
    let mut cur = String::new();
    for line in tail.lines() {
        let t = line.trim();
        let t = t.split(" # ").next().unwrap_or(t).trim();
        if cur.is_empty() && !t.starts_with("rentix ") {
            continue;
        }
        match t.strip_suffix('\\') {
            Some(head) => {
                cur.push_str(head);
                cur.push(' ');
            }
            None => {
                cur.push_str(t);
                joined.push(std::mem::take(&mut cur));
            }
        }
    }
    joined.iter().map(|l| words(l)).collect()
}

/// Shell words: whitespace-separated, single quotes kept together.
fn words(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '\'' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Runs one command's examples, in order, in a fresh directory holding only a
/// clone's public samples (`data/real/`); their outputs, by command line.
fn run_alone(cmd: &[&str]) -> Vec<(String, String)> {
    let dir = tempfile::tempdir().unwrap();
    for f in [
        "primeintellect_by_provider_sample.csv",
        "fsdl_cloud_gpus_sample.csv",
    ] {
        let to = dir.path().join("data/real").join(f);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(data(&format!("data/real/{f}")), to).unwrap();
    }
    let mut args: Vec<&str> = cmd.to_vec();
    args.push("--help");
    let help = String::from_utf8(rentix(&args).stdout).unwrap();
    let found = examples(&help);
    assert!(!found.is_empty(), "rentix {cmd:?} --help has no example");
    let mut out = Vec::new();
    // The lines run so far, while each only made the market (simulate, ingest).
    let mut opening: Option<Lines> = Some(Vec::new());
    for ex in found {
        if ex.iter().any(|w| w == "10000000") {
            continue;
        }
        assert_eq!(ex[0], "rentix");
        let makes_market = matches!(ex[1].as_str(), "simulate" | "ingest");
        let stdout = match opening.as_mut().filter(|_| makes_market) {
            Some(lines) => {
                lines.push(ex.clone());
                let cell = Arc::clone(MADE.lock().unwrap().entry(lines.clone()).or_default());
                let mut ran_here = false;
                let (stdout, after) = cell.get_or_init(|| {
                    ran_here = true;
                    let stdout = run_in(dir.path(), &ex, cmd);
                    let after = tempfile::tempdir().unwrap();
                    copy_tree(dir.path(), after.path());
                    (stdout, after)
                });
                if !ran_here {
                    copy_tree(after.path(), dir.path());
                }
                stdout.clone()
            }
            None => {
                opening = None;
                run_in(dir.path(), &ex, cmd)
            }
        };
        out.push((ex.join(" "), stdout));
    }
    out
}

/// Every command's examples stand alone: each runs in its own empty directory
/// (each command's examples make their own market with a `simulate` line), and the
/// decisions they show are answers (issue 49: three examples said "not enough
/// data", "nothing could be ranked" and a "do not hedge" their own table
/// contradicted).
#[test]
fn every_help_example_runs_alone_from_an_empty_directory_and_answers() {
    // `demo` has its own test.
    let commands: [&[&str]; 14] = [
        &["simulate"],
        &["ingest"],
        &["index"],
        &["backtest"],
        &["track"],
        &["report"],
        &["verify"],
        &["health"],
        &["settle"],
        &["cost"],
        &["contract"],
        &["store", "check"],
        &["store", "compact"],
        &["store", "migrate"],
    ];
    let ran: Vec<Vec<(String, String)>> = std::thread::scope(|s| {
        let handles: Vec<_> = commands
            .iter()
            .map(|cmd| s.spawn(move || run_alone(cmd)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let said = |prefix: &str| -> Vec<&String> {
        ran.iter()
            .flatten()
            .filter(|(line, _)| line.starts_with(prefix))
            .map(|(_, out)| out)
            .collect()
    };
    for out in said("rentix backtest") {
        assert!(
            out.starts_with("hedge: "),
            "a backtest example that decides nothing:\n{out}"
        );
    }
    for out in said("rentix track") {
        assert!(
            !out.starts_with("ranked 0 ") && out.starts_with("ranked "),
            "a track example that ranks nothing:\n{out}"
        );
    }
    let total: usize = ran.iter().map(Vec::len).sum();
    assert!(total >= 40, "{total} examples ran");
}
