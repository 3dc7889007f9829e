//! Every command in the README's `sh` blocks runs as written, in order, in a
//! directory holding only what a fresh clone has that they read (the public samples
//! in `data/real/`; shipped methodologies, mappings and contracts resolve by name):
//! the README's promise, checked (issues 29 and 49). A user's own files (a day's
//! quotes, a rent, events) are made by the README's own stand-in lines. `cargo` and
//! `python3` lines are the CI's and the Python package's own tests.

use crate::util::data;
use std::path::Path;
use std::process::Command;

/// The README's command lines: each `sh` block's lines, backslash continuations
/// joined.
fn readme_commands() -> Vec<String> {
    let text = std::fs::read_to_string(data("README.md")).unwrap();
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut cur = String::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_sh = line.trim() == "```sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        match line.trim_end().strip_suffix('\\') {
            Some(head) => {
                cur.push_str(head);
                cur.push(' ');
            }
            None => {
                cur.push_str(line.trim());
                out.push(std::mem::take(&mut cur));
            }
        }
    }
    out
}

fn copy(from: &Path, to: &Path) {
    if let Some(d) = to.parent() {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::copy(from, to).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
}

#[test]
fn every_readme_command_runs_as_written_in_a_fresh_clone() {
    let dir = tempfile::tempdir().unwrap();
    let here = dir.path();
    // A fresh clone's bundled samples, at the paths the README names.
    for f in [
        "primeintellect_by_provider_sample.csv",
        "fsdl_cloud_gpus_sample.csv",
    ] {
        copy(
            &data(&format!("data/real/{f}")),
            &here.join("data/real").join(f),
        );
    }
    // The binary on PATH, as `cargo install` or a release would put it.
    let bin = Path::new(env!("CARGO_BIN_EXE_rentix")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    for line in readme_commands() {
        if line.starts_with("cargo ") || line.starts_with("python3 ") {
            continue;
        }
        // `rentix` and the lines that make stand-ins for a user's own files.
        assert!(
            ["rentix ", "mkdir ", "cp "]
                .iter()
                .any(|w| line.starts_with(w)),
            "a README command this test does not know how to run: {line}"
        );
        let o = Command::new("sh")
            .args(["-c", &line])
            .env("PATH", &path)
            .current_dir(here)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "the README command `{line}` failed:\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        ran += 1;
    }
    assert!(ran >= 19, "{ran} README commands ran");
}
