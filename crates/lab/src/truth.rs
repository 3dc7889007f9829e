//! `truth.csv` of a simulated market: the latent fair price of each grade and day
//! (`date, grade, fair_usd_per_gpu_hour`), against which a settlement's error is
//! measured.

use chrono::NaiveDate;
use rentix_core::DateSeries;
use std::collections::BTreeMap;
use std::path::Path;

/// Largest truth file read (a simulated market of many years and grades).
const MAX_TRUTH_BYTES: u64 = 1 << 30;

/// Fair price series by grade key.
pub fn read_truth(path: &Path) -> Result<BTreeMap<String, DateSeries>, String> {
    let at = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    rentix_core::check_file(path, MAX_TRUTH_BYTES).map_err(|e| at(&e))?;
    let mut r = csv::Reader::from_path(path).map_err(|e| at(&e))?;
    let headers = r.headers().map_err(|e| at(&e))?.clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| at(&format!("no column {name:?}")))
    };
    let (cd, cg, cv) = (col("date")?, col("grade")?, col("fair_usd_per_gpu_hour")?);
    let mut points: BTreeMap<String, Vec<(NaiveDate, f64)>> = BTreeMap::new();
    for (i, rec) in r.records().enumerate() {
        let line = i + 2;
        let rec = rec.map_err(|e| at(&e))?;
        let get = |c: usize| rec.get(c).unwrap_or("");
        let date = NaiveDate::parse_from_str(get(cd), "%Y-%m-%d")
            .map_err(|e| at(&format!("line {line}: date {:?}: {e}", get(cd))))?;
        let v: f64 = get(cv)
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v > 0.0)
            .ok_or_else(|| {
                at(&format!(
                    "line {line}: fair price {:?} is not a positive number",
                    get(cv)
                ))
            })?;
        points
            .entry(get(cg).to_string())
            .or_default()
            .push((date, v));
    }
    points
        .into_iter()
        .map(|(g, p)| {
            DateSeries::from_points(p)
                .map(|s| (g.clone(), s))
                .map_err(|e| at(&format!("grade {g}: {e}")))
        })
        .collect()
}
