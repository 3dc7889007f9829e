//! The test build must reuse the release build of the binary: every dependency the
//! binary compiles is compiled with the same features when the tests' dev-dependencies
//! join the graph. Otherwise `cargo test --release` after `cargo run --release -- demo`
//! builds polars a second time (issue 31: rstest turned on syn's `visit`, tempfile's
//! rustix turned on bitflags' `std`, and polars was rebuilt above both). The
//! workspace's own crates too (issue 49: a `testing` feature of rentix-fixings that
//! dev-dependencies turned on rebuilt every crate above it and the binary).

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// `package version -> feature set` of one `cargo tree` invocation (a package that
/// appears with two feature sets, as host and target builds, keeps both).
fn features(args: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let out = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["tree", "--offline", "--locked", "--prefix", "none"])
        .args(["--format", "{p}|{f}"])
        .args(args)
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut m: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let line = line.replace(" (*)", "").replace(" (proc-macro)", "");
        if let Some((pkg, f)) = line.split_once('|') {
            m.entry(pkg.trim().to_string())
                .or_default()
                .insert(f.to_string());
        }
    }
    m
}

#[test]
fn tests_build_every_binary_dependency_with_the_binarys_features() {
    let binary = features(&["-p", "rentix", "-e", "no-dev"]);
    // What `cargo test --release` builds: the default members (the Python extension,
    // python/, is built by maturin alone; pyo3's macros turn on syn features).
    let tests = features(&["--workspace", "--exclude", "rentix-python"]);
    let differ: Vec<String> = binary
        .iter()
        .filter_map(|(pkg, f)| {
            let t = tests.get(pkg)?;
            (t != f).then(|| format!("{pkg}: binary {f:?}, tests {t:?}"))
        })
        .collect();
    assert!(
        differ.is_empty(),
        "these dependencies would be compiled twice (align their features in the \
         normal graph, or drop the dev-dependency that changes them):\n{}",
        differ.join("\n")
    );
}

/// Crates that settle on, simulate or describe CSV need no Parquet: built alone (as
/// `cargo test -p rentix-backtest` builds them), their graph holds no polars. Parquet
/// is the `parquet` feature of rentix-table, which only the store, the engine and the
/// binary turn on (issue 26).
#[test]
fn crates_without_parquet_build_without_polars() {
    for krate in [
        "rentix-core",
        "rentix-fixings",
        "rentix-backtest",
        "rentix-sim",
    ] {
        let graph = features(&["-p", krate, "-e", "normal,dev"]);
        let polars: Vec<&String> = graph.keys().filter(|p| p.starts_with("polars")).collect();
        assert!(
            polars.is_empty(),
            "{krate} built alone compiles {polars:?}: which of its dependencies turned on rentix-table's parquet feature?"
        );
        assert!(!graph.is_empty(), "{krate}: cargo tree listed nothing");
    }
    // The binary reads Parquet fixings: it must have polars' Parquet crate.
    let binary = features(&["-p", "rentix", "-e", "no-dev"]);
    assert!(binary.keys().any(|p| p.starts_with("polars-parquet ")));
}

/// Parquet is polars' own Parquet and Arrow crates, without its data frame: the
/// frame library (polars-core, then polars-ops, -time, -io above it) was 413 s of a
/// cold build's 1,059 s of compiling and half of its critical path (issue 49: the two
/// commands in under twelve minutes). Nothing in the binary's or the tests' graph
/// may bring it back.
#[test]
fn nothing_builds_polars_data_frames() {
    let frames = [
        "polars ",
        "polars-core ",
        "polars-ops ",
        "polars-io ",
        "polars-time ",
    ];
    for graph in [
        features(&["-p", "rentix", "-e", "no-dev"]),
        features(&["--workspace", "--exclude", "rentix-python"]),
    ] {
        let found: Vec<&String> = graph
            .keys()
            .filter(|p| frames.iter().any(|f| p.starts_with(f)))
            .collect();
        assert!(
            found.is_empty(),
            "the build compiles {found:?}: Parquet goes through polars-parquet and \
             polars-arrow (crates/table/src/parquet.rs), not a data frame"
        );
    }
}
