//! Every `Example:` of `rentix COMMAND --help` runs as written, in order, from an
//! empty directory holding only what a user brings (one marketplace export): the
//! shipped methodologies, contracts and mappings are named, not looked up in a
//! checkout (issue 29: `data/sample/observations.csv` did not exist, and every
//! `data/...` example needed the repository).

use crate::util::{data, rentix};
use std::process::Command;

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

#[test]
fn every_help_example_runs_as_written_from_an_empty_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        data("data/real/primeintellect_by_provider_sample.csv"),
        dir.path().join("by_provider.csv"),
    )
    .unwrap();
    // The order a user follows; `demo` and the 10M-row benchmark market are left out
    // (the demo has its own test).
    let commands: [&[&str]; 12] = [
        &["simulate"],
        &["ingest"],
        &["index"],
        &["backtest"],
        &["track"],
        &["report"],
        &["verify"],
        &["health"],
        &["cost"],
        &["contract"],
        &["store", "check"],
        &["store", "compact"],
    ];
    let mut ran = 0;
    for cmd in commands {
        let mut args: Vec<&str> = cmd.to_vec();
        args.push("--help");
        let help = String::from_utf8(rentix(&args).stdout).unwrap();
        let found = examples(&help);
        assert!(!found.is_empty(), "rentix {cmd:?} --help has no example");
        for ex in found {
            if ex.iter().any(|w| w == "10000000") {
                continue;
            }
            assert_eq!(ex[0], "rentix");
            let o = Command::new(env!("CARGO_BIN_EXE_rentix"))
                .args(&ex[1..])
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "the example `{}` failed:\n{}",
                ex.join(" "),
                String::from_utf8_lossy(&o.stderr)
            );
            ran += 1;
        }
    }
    assert!(ran >= 18, "{ran} examples ran");
}
