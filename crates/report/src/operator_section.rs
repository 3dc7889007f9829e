//! The report's "operator matters" section: the tier spread of tier-qualified grades
//! (`<stem>_tier_spreads`), the industry cost curve (`cost/`), and, in a backtest's
//! section, the split of the user's cost per useful token (`cost_decomposition.csv`).
//! Every text from a file is escaped.

use crate::html::{esc, img};
use crate::ReportError;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// The cost curve's numeric columns.
const CURVE_NUMBERS: [&str; 5] = [
    "usd_per_gpu_hour",
    "output_tokens_per_s_per_gpu",
    "success_rate",
    "usd_per_m_useful_tokens",
    "percentile",
];

/// The cost decomposition's numeric columns.
const DECOMPOSITION_NUMBERS: [&str; 5] = [
    "usd_per_m_useful_tokens",
    "rent_effect",
    "futures_pnl_usd",
    "throughput_effect",
    "failure_effect",
];

/// A table the report reads, one map per row from column name to cell.
type Rows = Vec<BTreeMap<String, String>>;

/// The rows of a CSV file rentix wrote beside its outputs; none when there is no
/// such file (the section is left out). A file that is there but lacks one of
/// `columns`, has a row of another width, or a cell of `numbers` that is neither
/// empty nor a number is refused naming its line, rather than rendered as a
/// table of blanks or NaNs.
fn csv_rows(path: &Path, columns: &[&str], numbers: &[&str]) -> Result<Rows, ReportError> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let file = rentix_table::CsvFile::open(path, rentix_core::MAX_TABLE_BYTES)?;
    let names = file.names().to_vec();
    let input = |detail: String| ReportError::Input {
        path: path.to_path_buf(),
        detail,
    };
    if let Some(c) = missing(&names, columns, numbers) {
        return Err(input(format!(
            "line 1: the header has no column {c:?} (it has {})",
            names.join(", ")
        )));
    }
    let mut out = Vec::new();
    for row in file.rows() {
        let row = row?;
        if row.record.len() != names.len() {
            return Err(input(format!(
                "line {}: {} cells, the header has {}",
                row.line,
                row.record.len(),
                names.len()
            )));
        }
        let map: BTreeMap<String, String> = names
            .iter()
            .cloned()
            .zip(row.record.iter().map(|c| c.trim().to_string()))
            .collect();
        check_numbers(&map, numbers).map_err(|(c, v)| {
            input(format!(
                "line {}, column {c}: {v:?} is not a number",
                row.line
            ))
        })?;
        out.push(map);
    }
    Ok(out)
}

/// The first of `columns` and `numbers` that `names` lacks.
fn missing<'a>(names: &[String], columns: &[&'a str], numbers: &[&'a str]) -> Option<&'a str> {
    columns
        .iter()
        .chain(numbers)
        .find(|c| !names.iter().any(|n| n == *c))
        .copied()
}

/// The first cell of `numbers` that is neither empty nor a number, with its column.
fn check_numbers(row: &BTreeMap<String, String>, numbers: &[&str]) -> Result<(), (String, String)> {
    for c in numbers {
        let v = row.get(*c).map_or("", String::as_str);
        if !v.is_empty() && v.parse::<f64>().is_err() {
            return Err((c.to_string(), v.to_string()));
        }
    }
    Ok(())
}

/// The rows of a Parquet table, held to the same columns and numbers as
/// [`csv_rows`].
fn parquet_rows(path: &Path, columns: &[&str], numbers: &[&str]) -> Result<Rows, ReportError> {
    let t = rentix_table::Table::read_parquet(path)?;
    let input = |detail: String| ReportError::Input {
        path: path.to_path_buf(),
        detail,
    };
    if let Some(c) = missing(&t.names, columns, numbers) {
        return Err(input(format!("the table has no column {c:?}")));
    }
    (0..t.height())
        .map(|i| {
            let row: BTreeMap<String, String> = t
                .names
                .iter()
                .zip(&t.cols)
                .map(|(n, c)| (n.clone(), c.cell(i)))
                .collect();
            check_numbers(&row, numbers).map_err(|(c, v)| {
                input(format!("row {}, column {c}: {v:?} is not a number", i + 1))
            })?;
            Ok(row)
        })
        .collect()
}

/// A cell of a column [`csv_rows`] required (empty when absent, which it was not).
fn cell<'a>(r: &'a BTreeMap<String, String>, k: &str) -> &'a str {
    r.get(k).map_or("", String::as_str)
}

fn num(r: &BTreeMap<String, String>, k: &str) -> f64 {
    r.get(k).and_then(|v| v.parse().ok()).unwrap_or(f64::NAN)
}

/// Tier spreads and the cost curve, when the inputs have them.
pub(crate) fn operator_section(
    html: &mut String,
    in_dir: &Path,
    fixings: Option<&Path>,
) -> Result<(), ReportError> {
    const SPREADS: [&str; 3] = ["grade", "spread", "sufficient"];
    let spreads = match fixings.map(rentix_index::Companions::of) {
        Some(c) => {
            let (p, q) = (
                c.named("_tier_spreads", "csv"),
                c.named("_tier_spreads", "parquet"),
            );
            if p.exists() {
                Some(csv_rows(&p, &SPREADS, &["spread"])?)
            } else if q.exists() {
                Some(parquet_rows(&q, &SPREADS, &["spread"])?)
            } else {
                None
            }
        }
        None => None,
    };
    let curve = csv_rows(
        &in_dir.join("cost/cost_curve.csv"),
        &["date", "rank", "operator", "gpu", "scope"],
        &CURVE_NUMBERS,
    )?;
    if spreads.as_ref().is_none_or(Vec::is_empty) && curve.is_empty() {
        return Ok(());
    }
    let _ = writeln!(html, "<h2 id=\"operators\">The operator matters</h2><p>The same GPU rents at different prices, and yields different useful output, depending on who runs it. A rental hedge offsets rent changes; it does not fix throughput or failures.</p>");
    if let Some(spreads) = spreads.filter(|s| !s.is_empty()) {
        let mut by: BTreeMap<&str, Vec<&BTreeMap<String, String>>> = BTreeMap::new();
        for r in &spreads {
            by.entry(cell(r, "grade")).or_default().push(r);
        }
        let mut grades: Vec<(&str, Vec<&BTreeMap<String, String>>)> = by.into_iter().collect();
        grades.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
        let _ = writeln!(html, "<p>Tier-qualified grades fix the same GPU-hour from gold-or-better operators only; the spread is that fixing minus the all-operator fixing, what the market pays for operating quality.</p><table><tr><th class=l>tier-qualified grade</th><th>days</th><th>mean spread (USD/GPU-h)</th><th>latest spread</th><th>days both sufficient</th></tr>");
        for (g, rows) in grades.iter().take(8) {
            let mean = rows.iter().map(|r| num(r, "spread")).sum::<f64>() / rows.len() as f64;
            let last = rows.last().map_or(f64::NAN, |r| num(r, "spread"));
            let both = rows
                .iter()
                .filter(|r| cell(r, "sufficient") == "true")
                .count();
            let _ = writeln!(
                html,
                "<tr><td class=l><code>{}</code></td><td>{}</td><td>{:+.3}</td><td>{:+.3}</td><td>{}</td></tr>",
                esc(g),
                rows.len(),
                mean,
                last,
                both
            );
        }
        let _ = writeln!(html, "</table>");
    }
    if !curve.is_empty() {
        let latest = curve
            .iter()
            .map(|r| cell(r, "date"))
            .max()
            .unwrap_or_default();
        let _ = writeln!(html, "<h3>The cost of useful output</h3><p>Rent per million useful output tokens = rent / (output tokens per second per GPU x 3600 x success rate) x 1e6. Operators sorted by that cost, each bar as wide as its capacity: the industry cost curve.</p>");
        html.push_str(&img(&in_dir.join("cost/cost_curve.png"), "cost curve"));
        let _ = writeln!(html, "<table><tr><th>rank</th><th class=l>operator</th><th class=l>GPU / scope</th><th>USD per GPU-hour</th><th>tokens/s per GPU</th><th>success</th><th>USD per M useful tokens</th><th>percentile</th></tr>");
        for r in curve.iter().filter(|r| cell(r, "date") == latest) {
            let _ = writeln!(
                html,
                "<tr><td>{}</td><td class=l>{}</td><td class=l>{} / {}</td><td>{:.2}</td><td>{:.0}</td><td>{:.1}%</td><td>{:.2}</td><td>{:.0}</td></tr>",
                esc(cell(r, "rank")),
                esc(cell(r, "operator")),
                esc(cell(r, "gpu")),
                esc(cell(r, "scope")),
                num(r, "usd_per_gpu_hour"),
                num(r, "output_tokens_per_s_per_gpu"),
                100.0 * num(r, "success_rate"),
                num(r, "usd_per_m_useful_tokens"),
                num(r, "percentile")
            );
        }
        let _ = writeln!(html, "</table>");
        let changes = csv_rows(
            &in_dir.join("cost/position_changes.csv"),
            &["rank_from", "rank_to", "reading"],
            &[],
        )?;
        let moved: Vec<_> = changes
            .iter()
            .filter(|c| cell(c, "rank_from") != cell(c, "rank_to"))
            .collect();
        if !moved.is_empty() {
            let _ = writeln!(html, "<p>Cost position is relative:</p><ul>");
            for c in moved.iter().take(8) {
                let _ = writeln!(html, "<li>{}</li>", esc(cell(c, "reading")));
            }
            let _ = writeln!(html, "</ul>");
        }
    }
    Ok(())
}

/// In a backtest's section: what the hedge covers of the user's cost per useful token.
pub(crate) fn cost_decomposition_section(html: &mut String, dir: &Path) -> Result<(), ReportError> {
    let months = csv_rows(
        &dir.join("cost_decomposition.csv"),
        &["month"],
        &DECOMPOSITION_NUMBERS,
    )?;
    let (Some(first), Some(last)) = (months.first(), months.last()) else {
        return Ok(());
    };
    let sum = |k: &str| months.iter().map(|r| num(r, k)).sum::<f64>();
    let _ = writeln!(
        html,
        "<h3 id=\"cost-decomposition\">Cost per useful token: what the hedge covers</h3><p>From {} to {} your rent per million useful tokens went from {:.2} to {:.2} USD. Of that change, <b>{:+.2}</b> came from rent (what the index hedges; the futures P&amp;L over the same months was {:+.0} USD), <b>{:+.2}</b> from your throughput and <b>{:+.2}</b> from failures: those two are yours alone (Shapley split, exact).</p>",
        esc(cell(first, "month")),
        esc(cell(last, "month")),
        num(first, "usd_per_m_useful_tokens"),
        num(last, "usd_per_m_useful_tokens"),
        sum("rent_effect"),
        sum("futures_pnl_usd"),
        sum("throughput_effect"),
        sum("failure_effect")
    );
    html.push_str(&img(
        &dir.join("cost_percentile.png"),
        "your place on the cost curve",
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Renders the operator section of a directory holding `cost/cost_curve.csv`.
    fn curve_section(curve: &str) -> Result<String, ReportError> {
        let dir = tempfile::tempdir().map_err(|e| ReportError::Usage(e.to_string()))?;
        std::fs::create_dir_all(dir.path().join("cost"))
            .and_then(|()| std::fs::write(dir.path().join("cost/cost_curve.csv"), curve))
            .map_err(|e| ReportError::Usage(e.to_string()))?;
        let mut html = String::new();
        operator_section(&mut html, dir.path(), None)?;
        Ok(html)
    }

    const HEAD: &str = "date,rank,operator,gpu,scope,usd_per_gpu_hour,output_tokens_per_s_per_gpu,success_rate,usd_per_m_useful_tokens,percentile\n";

    #[test]
    fn a_cost_curve_renders_its_latest_day() -> Result<(), ReportError> {
        let html = curve_section(&format!(
            "{HEAD}2025-01-01,1,old,h100,vm,9,1,1,1,1\n2025-01-02,1,acme,h100,vm,2.5,1000,0.99,0.70,10\n"
        ))?;
        // 2.5 / (1000 x 3600 x 0.99) x 1e6 = 0.70 USD per M useful tokens.
        assert!(html.contains("<td class=l>acme</td>"), "{html}");
        assert!(html.contains("<td>0.70</td>") && html.contains("<td>99.0%</td>"));
        assert!(!html.contains(">old<"), "only the latest day is ranked");
        Ok(())
    }

    /// A file rentix did not write as it reads it is refused naming what is wrong;
    /// before, a missing column panicked (`row["date"]`) and a bad number showed as
    /// NaN in the report.
    #[test]
    fn a_damaged_cost_curve_is_refused_not_rendered() {
        let no_date =
            HEAD.replacen("date,", "day,", 1) + "2025-01-02,1,a,h100,vm,2.5,1000,0.99,0.7,10\n";
        let e = curve_section(&no_date).map(|_| ()).unwrap_err();
        assert!(e.to_string().contains("no column \"date\""), "{e}");
        let e = curve_section(&format!(
            "{HEAD}2025-01-02,1,a,h100,vm,2.5 USD,1000,0.99,0.7,10\n"
        ))
        .map(|_| ())
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("line 2, column usd_per_gpu_hour: \"2.5 USD\""),
            "{e}"
        );
        let e = curve_section(&format!("{HEAD}2025-01-02,1,a\n"))
            .map(|_| ())
            .unwrap_err();
        assert!(
            e.to_string().contains("line 2: 3 cells, the header has 10"),
            "{e}"
        );
    }

    #[test]
    fn no_file_leaves_the_section_out() -> Result<(), ReportError> {
        let dir = tempfile::tempdir().map_err(|e| ReportError::Usage(e.to_string()))?;
        let mut html = String::new();
        operator_section(&mut html, dir.path(), None)?;
        assert!(html.is_empty());
        Ok(())
    }
}
