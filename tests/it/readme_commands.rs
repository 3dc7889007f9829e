//! Every `rentix` command in the README's `sh` blocks runs as written, in order, from
//! an empty directory holding only what a user brings (two marketplace exports, a
//! day's file, a rent, events and throughput taken from the simulator the README
//! runs first): the README's promise, checked (issue 29). `cargo` and `python3`
//! lines are the CI's and the Python package's own tests.

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
fn every_readme_command_runs_as_written_from_an_empty_directory() {
    let dir = tempfile::tempdir().unwrap();
    let here = dir.path();
    copy(
        &data("tests/data/real/primeintellect_by_provider_sample.csv"),
        &here.join("by_provider.csv"),
    );
    copy(
        &data("tests/data/real/fsdl_cloud_gpus_sample.csv"),
        &here.join("cloud_gpus_all_revisions.csv"),
    );
    // The binary on PATH, as `cargo install` or a release would put it.
    let bin = Path::new(env!("CARGO_BIN_EXE_rentix")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    for line in readme_commands() {
        if !line.starts_with("rentix ") {
            assert!(
                line.starts_with("cargo ") || line.starts_with("python3 "),
                "a README command this test does not know how to run: {line}"
            );
            continue;
        }
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
        if line.starts_with("rentix simulate --out sim") {
            // What the later examples call a user's own files.
            let sim = here.join("sim");
            copy(&sim.join("rent_neocloud_h200.csv"), &here.join("rent.csv"));
            copy(
                &sim.join("events_neocloud_h200.csv"),
                &here.join("events.csv"),
            );
            copy(&sim.join("throughput.csv"), &here.join("throughput.csv"));
            copy(
                &sim.join("observations.csv"),
                &here.join("today/quotes.csv"),
            );
        }
    }
    assert!(ran >= 19, "{ran} README commands ran");
}
