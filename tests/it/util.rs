//! Helpers: run the built binary, find the repository's files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub(crate) fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub(crate) fn data(rel: &str) -> PathBuf {
    repo().join(rel)
}

/// Runs `rentix ARGS` and returns its output.
pub(crate) fn rentix(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rentix"))
        .args(args)
        .output()
        .expect("run rentix")
}

/// Runs `rentix ARGS`, panicking with stderr when it fails.
pub(crate) fn rentix_ok(args: &[&str]) -> String {
    let out = rentix(args);
    assert!(
        out.status.success(),
        "rentix {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 stdout")
}

pub(crate) fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

/// Runs `rentix index` on `store` under `methodology` into `out` and returns the
/// fixings rows.
pub(crate) fn fix(
    store: &Path,
    out: &Path,
    methodology: &Path,
) -> Vec<std::collections::BTreeMap<String, String>> {
    rentix_ok(&[
        "index",
        "--store",
        p(store),
        "--out",
        p(out),
        "--methodology",
        p(methodology),
    ]);
    crate::csvutil::rows(out)
}

/// Removes the partition checksums from every run record of `store`, as a store
/// written before checksums has none: for tests of what readers do with a partition
/// edited by hand, which the size check would otherwise refuse first.
/// The SHA-256 of a file's bytes, lowercase hexadecimal, as `sha256sum` prints it:
/// computed outside the code under test.
pub(crate) fn sha256sum(path: &Path) -> String {
    let out = std::process::Command::new("sha256sum")
        .arg(path)
        .output()
        .expect("sha256sum");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .expect("a digest")
        .to_string()
}

pub(crate) fn forget_checksums(store: &Path) {
    for e in std::fs::read_dir(store.join("runs")).expect("runs/") {
        let path = e.expect("entry").path();
        let mut run: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("record")).expect("json");
        if let Some(o) = run.as_object_mut() {
            o.remove("partition_checksums");
        }
        std::fs::write(&path, serde_json::to_string_pretty(&run).expect("json")).expect("write");
    }
}

/// A canonical observations file: for each `(gpu, day)`, listings of `gpu`'s
/// `vm/on-demand` grade at noon UTC by five contributors `a`..`e`, priced by
/// `price(contributor index)`.
pub(crate) fn five_listings(pairs: &[(&str, &str)], price: impl Fn(usize) -> String) -> String {
    let mut text =
        String::from("kind,observed_at,source,gpu,scope,term,price,price_unit,currency\n");
    for (gpu, day) in pairs {
        for (i, src) in ["a", "b", "c", "d", "e"].iter().enumerate() {
            text.push_str(&format!(
                "listing,{day}T12:00:00Z,{src},{gpu},vm,on-demand,{},gpu_hour,USD\n",
                price(i)
            ));
        }
    }
    text
}

/// Copies a directory tree.
pub(crate) fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// `rentix ingest --json --store STORE FILE`'s summary.
pub(crate) fn ingest_json(store: &std::path::Path, file: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&rentix_ok(&[
        "ingest",
        "--json",
        "--store",
        p(store),
        p(file),
    ]))
    .unwrap()
}

/// Every path under `dir` (files and directories), sorted: what a test compares to
/// show that a refused run changed nothing.
pub(crate) fn tree(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut all = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                todo.push(path.clone());
            }
            all.push(path);
        }
    }
    all.sort();
    all
}
