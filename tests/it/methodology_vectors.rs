//! The methodology conformance suite: every case in
//! `tests/data/vectors/methodologies/` (one rule each, arithmetic in its comment) is
//! ingested and fixed through the CLI, and every expected field is checked; each
//! `[[contrast]]` re-runs the case with the rule switched off and checks the number
//! the old behaviour gives, so a case fails if its rule stops mattering.

use crate::csvutil::rows;
use crate::util::{data, fix, p, rentix_ok};
use std::collections::BTreeMap;
use std::path::Path;
use toml::Value;

fn text(v: &Value, k: &str) -> String {
    match v.get(k) {
        Some(Value::String(s)) => s.clone(),
        Some(x) => x.to_string(),
        None => String::new(),
    }
}

/// The methodology text with `replace = [[from, to], ...]` applied; every `from`
/// must occur, so a stale case cannot pass silently.
fn replaced(case: &str, mut m: String, v: &Value) -> String {
    for pair in v
        .get("replace")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let pair = pair.as_array().expect("replace pairs");
        let (from, to) = (pair[0].as_str().unwrap(), pair[1].as_str().unwrap());
        assert!(
            m.contains(from),
            "{case}: replace {from:?} not found in the methodology"
        );
        m = m.replace(from, to);
    }
    m
}

fn check(case: &str, fixings: &[BTreeMap<String, String>], e: &Value, errors: &mut Vec<String>) {
    let (date, grade) = (text(e, "date"), text(e, "grade"));
    let row = fixings
        .iter()
        .find(|r| r["date"] == date && r["grade"] == grade);
    let at = format!("{case} {date} {grade}");
    if e.get("present").and_then(Value::as_bool) == Some(false) {
        if row.is_some() {
            errors.push(format!("{at}: expected no fixing row"));
        }
        return;
    }
    let Some(row) = row else {
        errors.push(format!("{at}: no fixing row"));
        return;
    };
    for (k, want) in e.as_table().unwrap() {
        let got = row.get(k.as_str()).cloned().unwrap_or_default();
        let ok = match (k.as_str(), want) {
            ("date" | "grade" | "replace", _) => true,
            ("flags_contain", Value::Array(a)) => a
                .iter()
                .all(|f| row["flags"].split(';').any(|x| x == f.as_str().unwrap())),
            ("flags_exclude", Value::Array(a)) => a
                .iter()
                .all(|f| !row["flags"].contains(f.as_str().unwrap())),
            (_, Value::Float(x)) => got.parse::<f64>().is_ok_and(|g| (g - x).abs() < 1e-9),
            (_, Value::Integer(x)) => got.parse::<f64>().is_ok_and(|g| g == *x as f64),
            (_, Value::Boolean(b)) => got == b.to_string(),
            (_, Value::String(s)) => &got == s,
            _ => false,
        };
        if !ok {
            errors.push(format!(
                "{at}: {k} = {got:?} (flags {:?}), expected {want}",
                row["flags"]
            ));
        }
    }
}

fn run_case(path: &Path, errors: &mut Vec<String>) {
    let case = path.file_stem().unwrap().to_string_lossy().to_string();
    let v: Value = toml::from_str(&std::fs::read_to_string(path).unwrap())
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    let dir = tempfile::tempdir().unwrap();
    let obs = dir.path().join("observations.csv");
    std::fs::write(&obs, text(&v, "observations")).unwrap();
    let store = dir.path().join("store");
    rentix_ok(&["ingest", "--json", "--store", p(&store), p(&obs)]);
    let base = std::fs::read_to_string(data(&text(&v, "methodology"))).unwrap();
    let methodology = replaced(&case, base, &v);
    let fix_under = |m: &str, name: &str| {
        let mp = dir.path().join(format!("{name}.toml"));
        std::fs::write(&mp, m).unwrap();
        fix(&store, &dir.path().join(format!("{name}.csv")), &mp)
    };
    let fixings = fix_under(&methodology, "rule");
    for e in v.get("expect").and_then(Value::as_array).expect("expect") {
        check(&case, &fixings, e, errors);
    }
    for (i, c) in v
        .get("contrast")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let m = replaced(&case, methodology.clone(), c);
        let fixings = fix_under(&m, &format!("contrast{i}"));
        check(&format!("{case} (contrast)"), &fixings, c, errors);
    }
}

#[test]
fn every_methodology_rule_gives_its_hand_computed_numbers() {
    let dir = data("tests/data/vectors/methodologies");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 18, "{} cases", cases.len());
    let mut errors = Vec::new();
    for c in &cases {
        run_case(c, &mut errors);
    }
    assert!(
        errors.is_empty(),
        "{} failure(s):\n{}",
        errors.len(),
        errors.join("\n")
    );
}

#[test]
fn every_shipped_methodology_fixes_the_simulated_market() {
    let m = crate::fixture::market();
    let dir = tempfile::tempdir().unwrap();
    let mut files: Vec<_> = std::fs::read_dir(data("data/methodologies"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 15);
    for f in files {
        let out = dir
            .path()
            .join(format!("{}.csv", f.file_stem().unwrap().to_string_lossy()));
        rentix_ok(&[
            "index",
            "--store",
            p(&m.store()),
            "--out",
            p(&out),
            "--methodology",
            p(&f),
            "--grade",
            "h100-sxm-80gb/*/*",
        ]);
        let fixings = rows(&out);
        let valued = fixings.iter().filter(|r| !r["value"].is_empty()).count();
        assert!(
            valued > 100,
            "{}: {valued} fixings with a value",
            f.display()
        );
    }
}
