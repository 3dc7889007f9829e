//! Reading CSV outputs in tests.

use std::collections::BTreeMap;
use std::path::Path;

/// Every row as column -> text.
pub(crate) fn rows(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut rdr = csv::Reader::from_path(path).expect("open csv");
    let header: Vec<String> = rdr
        .headers()
        .expect("header")
        .iter()
        .map(str::to_string)
        .collect();
    rdr.records()
        .map(|r| {
            let r = r.expect("record");
            header
                .iter()
                .cloned()
                .zip(r.iter().map(str::to_string))
                .collect()
        })
        .collect()
}

/// `date -> value` of one grade in a fixings or truth file.
pub(crate) fn series(path: &Path, grade: &str, value_col: &str) -> BTreeMap<String, f64> {
    rows(path)
        .into_iter()
        .filter(|r| r["grade"] == grade)
        .filter_map(|r| Some((r["date"].clone(), r[value_col].parse::<f64>().ok()?)))
        .collect()
}
