//! `truth.csv` of a simulated market: the latent fair price of each grade and day
//! (`date, grade, fair_usd_per_gpu_hour`), against which a settlement's error is
//! measured.

use chrono::NaiveDate;
use rentix_core::DateSeries;
use std::collections::BTreeMap;
use std::path::Path;

use crate::LabError;
use rentix_table::CsvFile;

/// Largest truth file read (a simulated market of many years and grades).
const MAX_TRUTH_BYTES: u64 = 1 << 30;

/// Fair price series by grade key. A file over the size limit, a column named
/// twice or missing, a row that does not parse, a date or a fair price that does
/// not read, or two prices for one grade and day are refused naming the file's
/// line: a truth file is what the lab scores settlements against, so no row of it
/// is skipped.
pub fn read_truth(path: &Path) -> Result<BTreeMap<String, DateSeries>, LabError> {
    let input = |detail: String| LabError::Input {
        path: path.to_path_buf(),
        detail,
    };
    let file = CsvFile::open(path, MAX_TRUTH_BYTES)?;
    let [cd, cg, cv] = file.require(["date", "grade", "fair_usd_per_gpu_hour"])?;
    let mut series: BTreeMap<String, DateSeries> = BTreeMap::new();
    for row in file.rows() {
        let row = row?;
        let line = row.line;
        let date = NaiveDate::parse_from_str(row.get(cd), "%Y-%m-%d")
            .map_err(|e| input(format!("line {line}: date {:?}: {e}", row.get(cd))))?;
        let grade = row.get(cg);
        if grade.is_empty() {
            return Err(input(format!("line {line}: the grade is empty")));
        }
        let v: f64 = row
            .get(cv)
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v > 0.0)
            .ok_or_else(|| {
                input(format!(
                    "line {line}: fair price {:?} is not a positive number",
                    row.get(cv)
                ))
            })?;
        series
            .entry(grade.to_string())
            .or_default()
            .insert(date, v)
            .map_err(|e| input(format!("line {line}: grade {grade}, {date}: {e}")))?;
    }
    Ok(series)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<BTreeMap<String, DateSeries>, LabError> {
        let dir = tempfile::tempdir().map_err(|e| LabError::Settings(e.to_string()))?;
        let p = dir.path().join("truth.csv");
        std::fs::write(&p, text).map_err(|e| LabError::Settings(e.to_string()))?;
        read_truth(&p)
    }

    #[test]
    fn reads_columns_by_name_in_any_order() -> Result<(), LabError> {
        let t = read("grade,fair_usd_per_gpu_hour,date\nh100/vm/on_demand,2.5,2025-01-02\nh100/vm/on_demand,2.25,2025-01-01\n")?;
        let s = &t["h100/vm/on_demand"];
        let d = |s: &str| NaiveDate::parse_from_str(s, "%Y-%m-%d").ok();
        assert_eq!(s.get(d("2025-01-01").unwrap_or_default()), Some(2.25));
        assert_eq!(s.len(), 2);
        Ok(())
    }

    /// Each refusal names the line a person would open (the header is line 1; a
    /// quoted cell over two lines moves the next row's line on by one).
    #[test]
    fn refuses_bad_rows_naming_their_line() {
        let head = "date,grade,fair_usd_per_gpu_hour\n";
        let ok = "2025-01-01,h100/vm/on_demand,2.5\n";
        for (body, wants) in [
            ("2025-13-01,h100/vm/on_demand,2.5\n", "line 3: date"),
            (
                "2025-01-02,h100/vm/on_demand,-1\n",
                "line 3: fair price \"-1\"",
            ),
            ("2025-01-02,h100/vm/on_demand,NaN\n", "line 3: fair price"),
            ("2025-01-02,,2.5\n", "line 3: the grade is empty"),
            (
                "2025-01-01,h100/vm/on_demand,2.6\n",
                "line 3: grade h100/vm/on_demand, 2025-01-01",
            ),
            (
                "\"2025-01-02\",\"a\nb\",2.5\n2025-01-03,x,oops\n",
                "line 5: fair price",
            ),
        ] {
            let text = format!("{head}{ok}{body}");
            match read(&text) {
                Err(e) => assert!(e.to_string().contains(wants), "{body:?}: {e}"),
                Ok(_) => panic!("{body:?} was read"),
            }
        }
        let twice = read("date,grade,date,fair_usd_per_gpu_hour\n");
        assert!(twice.is_err_and(|e| e.to_string().contains("twice")));
        let missing = read("date,grade\n2025-01-01,x\n");
        assert!(missing.is_err_and(|e| e.to_string().contains("fair_usd_per_gpu_hour")));
    }
}
