//! `report --in A --in B ...`: several methodologies' fixings of the same market
//! side by side: how each is fed, how far apart their values sit and how alike
//! their daily moves are, against the first file and against the truth of a
//! simulated market when given.

use crate::charts::{lines, save_both, Line};
use crate::html::{esc, featured_grades, img, CSS};
use chrono::NaiveDate;
use rentix_core::DateSeries;
use rentix_index::{read_fixings, Fixing, FixingLevel};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One input file: its label (the file name) and fixings.
struct Input {
    label: String,
    fixings: Vec<Fixing>,
}

/// A grade's valued fixings of one file, by date.
fn values(fixings: &[Fixing], grade: &str) -> BTreeMap<NaiveDate, f64> {
    fixings
        .iter()
        .filter(|f| f.grade == grade)
        .filter_map(|f| Some((f.date, f.value?)))
        .collect()
}

/// How two series of one grade compare on the dates both have a value: how many,
/// the mean and largest absolute difference, and the correlation of their daily
/// log changes (consecutive common dates).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Agreement {
    pub(crate) common: usize,
    pub(crate) mean_abs: Option<f64>,
    pub(crate) max_abs: Option<f64>,
    pub(crate) change_correlation: Option<f64>,
}

pub(crate) fn agreement(a: &BTreeMap<NaiveDate, f64>, b: &BTreeMap<NaiveDate, f64>) -> Agreement {
    let both: Vec<(f64, f64)> = a
        .iter()
        .filter_map(|(d, x)| Some((*x, *b.get(d)?)))
        .collect();
    let diffs: Vec<f64> = both.iter().map(|(x, y)| (x - y).abs()).collect();
    let moves: Vec<(f64, f64)> = both
        .windows(2)
        .filter(|w| w.iter().all(|(x, y)| *x > 0.0 && *y > 0.0))
        .map(|w| ((w[1].0 / w[0].0).ln(), (w[1].1 / w[0].1).ln()))
        .collect();
    Agreement {
        common: both.len(),
        mean_abs: (!diffs.is_empty()).then(|| diffs.iter().sum::<f64>() / diffs.len() as f64),
        max_abs: diffs.iter().copied().reduce(f64::max),
        change_correlation: correlation(&moves),
    }
}

/// Pearson's correlation; `None` under three pairs or without variation.
fn correlation(pairs: &[(f64, f64)]) -> Option<f64> {
    if pairs.len() < 3 {
        return None;
    }
    let n = pairs.len() as f64;
    let (mx, my) = pairs
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x / n, b + y / n));
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in pairs {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("&ndash;".into(), |x| format!("{x:.digits$}"))
}

/// Labels from the file names, with the parent directory where two names clash.
fn labels(files: &[PathBuf]) -> Vec<String> {
    let name = |p: &Path| {
        p.file_name()
            .map_or(String::new(), |n| n.to_string_lossy().to_string())
    };
    let names: Vec<String> = files.iter().map(|p| name(p)).collect();
    files
        .iter()
        .zip(&names)
        .map(|(p, n)| {
            if names.iter().filter(|m| *m == n).count() > 1 {
                p.display().to_string()
            } else {
                n.clone()
            }
        })
        .collect()
}

/// The feed of each file: rows, grades, dates, and the shares valued, sufficient
/// and fixed at each level.
fn feed_table(html: &mut String, inputs: &[Input]) {
    let _ = writeln!(html, "<h2>How each is fed</h2><table><tr><th class=l>file</th><th class=l>methodology</th><th>rows</th><th>grades</th><th>from</th><th>to</th><th>valued</th><th>sufficient</th><th>trades</th><th>firm</th><th>listings</th><th>carried</th></tr>");
    for i in inputs {
        let f = &i.fixings;
        let n = f.len().max(1) as f64;
        let share = |p: &dyn Fn(&Fixing) -> bool| {
            format!(
                "{:.0}%",
                100.0 * f.iter().filter(|x| p(x)).count() as f64 / n
            )
        };
        let versions: BTreeSet<&str> = f.iter().map(|x| x.methodology_version.as_str()).collect();
        let grades: BTreeSet<&str> = f.iter().map(|x| x.grade.as_str()).collect();
        let level = |l: FixingLevel| share(&|x: &Fixing| x.level == Some(l));
        let _ = writeln!(
            html,
            "<tr><td class=l>{}</td><td class=l>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&i.label),
            esc(&versions.into_iter().collect::<Vec<_>>().join(", ")),
            f.len(),
            grades.len(),
            f.first().map(|x| x.date.to_string()).unwrap_or_default(),
            f.last().map(|x| x.date.to_string()).unwrap_or_default(),
            share(&|x: &Fixing| x.value.is_some()),
            share(&|x: &Fixing| x.sufficient),
            level(FixingLevel::Trades),
            level(FixingLevel::Firm),
            level(FixingLevel::Listings),
            level(FixingLevel::Carried),
        );
    }
    html.push_str("</table>\n");
}

/// The truth key of a grade: GPU/SCOPE/TERM (the simulator's fair price is per
/// base grade).
fn truth_key(grade: &str) -> String {
    let base = grade.split('@').next().unwrap_or(grade);
    base.split('/').take(3).collect::<Vec<_>>().join("/")
}

/// Each file's mean absolute difference from the truth, on the dates every file
/// and the truth value (how many, and each file's mean): a file that leaves its
/// hard days unvalued is not scored on easier days than the others.
fn from_truth(
    mines: &[BTreeMap<NaiveDate, f64>],
    truth: &BTreeMap<NaiveDate, f64>,
) -> (usize, Vec<Option<f64>>) {
    let dates: Vec<NaiveDate> = truth
        .keys()
        .filter(|d| mines.iter().all(|m| m.contains_key(d)))
        .copied()
        .collect();
    let means = mines
        .iter()
        .map(|m| {
            let on: BTreeMap<NaiveDate, f64> = dates.iter().map(|d| (*d, m[d])).collect();
            agreement(&on, truth).mean_abs
        })
        .collect();
    (dates.len(), means)
}

/// For each featured grade, every file against the first and against the truth.
fn agreement_table(
    html: &mut String,
    inputs: &[Input],
    grades: &[String],
    truth: Option<&BTreeMap<String, DateSeries>>,
) {
    let _ = writeln!(html, "<h2>How far apart they sit</h2><p>On the dates both have a value: the mean and largest absolute difference (USD per GPU-hour) and the correlation of daily log changes, each file against <b>{}</b>{}.</p>", esc(&inputs[0].label), if truth.is_some() { " and against the simulated market's truth, every file on the same dates (those every file and the truth value)" } else { "" });
    let _ = writeln!(html, "<table><tr><th class=l>grade</th><th class=l>file</th><th>common dates</th><th>mean |diff|</th><th>max |diff|</th><th>corr. of daily changes</th><th>dates every file values</th><th>mean |diff| from truth</th></tr>");
    for g in grades {
        let reference = values(&inputs[0].fixings, g);
        let fair: Option<BTreeMap<NaiveDate, f64>> = truth
            .and_then(|t| t.get(&truth_key(g)))
            .map(|s| s.iter().collect());
        let mines: Vec<BTreeMap<NaiveDate, f64>> =
            inputs.iter().map(|i| values(&i.fixings, g)).collect();
        let (truth_dates, truth_means) =
            fair.as_ref().map_or((None, vec![None; mines.len()]), |t| {
                let (n, m) = from_truth(&mines, t);
                (Some(n), m)
            });
        for ((i, mine), vs_truth) in inputs.iter().zip(&mines).zip(truth_means) {
            let vs = agreement(mine, &reference);
            let _ = writeln!(
                html,
                "<tr><td class=l>{}</td><td class=l>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(g),
                esc(&i.label),
                vs.common,
                opt(vs.mean_abs, 4),
                opt(vs.max_abs, 4),
                opt(vs.change_correlation, 3),
                truth_dates.map_or("&ndash;".into(), |n| n.to_string()),
                opt(vs_truth, 4),
            );
        }
    }
    html.push_str("</table>\n");
}

/// Renders the comparison of `files` (fixings files, CSV or Parquet) to `out`, with
/// its charts in `<out stem>_charts/` beside it; `truth` is a simulator's
/// truth.csv.
pub fn render_comparison(
    files: &[PathBuf],
    truth: Option<&Path>,
    out: &Path,
) -> Result<(), crate::ReportError> {
    if files.len() < 2 {
        return Err(crate::ReportError::Usage(
            "a comparison needs at least two fixings files".into(),
        ));
    }
    let mut inputs = Vec::new();
    for (p, label) in files.iter().zip(labels(files)) {
        if !p.is_file() {
            return Err(crate::ReportError::Usage(format!(
                "{} is not a fixings file (a comparison takes files, not directories)",
                p.display()
            )));
        }
        let fixings = read_fixings(p)?;
        inputs.push(Input { label, fixings });
    }
    let truth = truth.map(rentix_lab::read_truth).transpose()?;
    let common: BTreeSet<String> = inputs
        .iter()
        .map(|i| {
            i.fixings
                .iter()
                .filter(|f| f.value.is_some())
                .map(|f| f.grade.to_string())
                .collect::<BTreeSet<_>>()
        })
        .reduce(|a, b| a.intersection(&b).cloned().collect())
        .unwrap_or_default();
    let mut grades: Vec<String> = featured_grades(&inputs[0].fixings)
        .into_iter()
        .filter(|g| common.contains(g))
        .collect();
    if grades.is_empty() {
        grades = common
            .iter()
            .filter(|g| g.contains('/'))
            .take(3)
            .cloned()
            .collect();
    }
    let mut html = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>rentix: methodologies compared</title><style>{CSS}</style></head><body>\n<h1>rentix: {} methodologies' fixings compared</h1>\n",
        inputs.len()
    );
    if grades.is_empty() {
        let _ = writeln!(html, "<p><b>No grade has a value in every file</b>: there is nothing to compare value by value. Each file's feed is below.</p>");
    }
    feed_table(&mut html, &inputs);
    agreement_table(&mut html, &inputs, &grades, truth.as_ref());
    let stem = out
        .file_stem()
        .map_or("report".into(), |s| s.to_string_lossy().to_string());
    let chart_dir = out
        .parent()
        .unwrap_or(Path::new("."))
        .join(format!("{stem}_charts"));
    for (k, g) in grades.iter().enumerate() {
        let mut series: Vec<Line> = inputs
            .iter()
            .map(|i| Line {
                name: i.label.clone(),
                points: values(&i.fixings, g).into_iter().collect(),
            })
            .collect();
        if let Some(t) = truth.as_ref().and_then(|t| t.get(&truth_key(g))) {
            series.push(Line {
                name: "truth (simulator)".into(),
                points: t.iter().collect(),
            });
        }
        let stem = chart_dir.join(format!("compare_{}", k + 1));
        let title = format!("{g}: each methodology's fixings");
        save_both(
            &stem,
            |a| lines(a, &title, "USD per GPU-hour", &series),
            |a| lines(a, &title, "USD per GPU-hour", &series),
        )?;
        html.push_str(&img(&stem.with_extension("png"), &title));
    }
    html.push_str("<hr><p><small>Generated by rentix. Self-contained: no script, no external resource.</small></p></body></html>\n");
    rentix_table::write_atomic(out, |w| {
        std::io::Write::write_all(w, html.as_bytes()).map_err(|source| {
            rentix_table::TableError::Write {
                path: out.to_path_buf(),
                source,
            }
        })
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(v: &[(u32, f64)]) -> BTreeMap<NaiveDate, f64> {
        let d0 = NaiveDate::from_ymd_opt(2025, 1, 1).unwrap_or_default();
        v.iter()
            .map(|(i, x)| (d0 + chrono::Days::new(u64::from(*i)), *x))
            .collect()
    }

    #[test]
    fn agreement_on_common_dates_by_hand() {
        // Common dates 0, 1, 2 (day 3 only in a): |2.0-2.1| + |2.2-2.2| + |2.4-2.2|
        // = 0.1 + 0 + 0.2 = 0.3 over 3 = 0.1, largest 0.2.
        let a = series(&[(0, 2.0), (1, 2.2), (2, 2.4), (3, 9.0)]);
        let b = series(&[(0, 2.1), (1, 2.2), (2, 2.2)]);
        let g = agreement(&a, &b);
        assert_eq!(g.common, 3);
        assert!((g.mean_abs.unwrap() - 0.1).abs() < 1e-12);
        assert!((g.max_abs.unwrap() - 0.2).abs() < 1e-12);
        // Two daily changes only: no correlation (three pairs needed).
        assert_eq!(g.change_correlation, None);
        // A series against twice itself moves identically: correlation 1.
        let c = series(&[(0, 2.0), (1, 2.2), (2, 2.1), (3, 2.5)]);
        let d = series(&[(0, 4.0), (1, 4.4), (2, 4.2), (3, 5.0)]);
        assert!((agreement(&c, &d).change_correlation.unwrap() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn every_file_is_scored_against_the_truth_on_the_same_dates() {
        // Truth 2.0 on days 0-3. File a values every day, 0.1 off on days 0-2
        // and 1.0 off on the hard day 3; file b leaves day 3 unvalued and is 0.2
        // off on days 0-2. Each on its own dates: a (0.1 x 3 + 1.0) / 4 = 0.325,
        // b 0.2, so b looked closer. On the three dates both value: a 0.1, b 0.2.
        let truth = series(&[(0, 2.0), (1, 2.0), (2, 2.0), (3, 2.0)]);
        let a = series(&[(0, 2.1), (1, 2.1), (2, 2.1), (3, 3.0)]);
        let b = series(&[(0, 2.2), (1, 2.2), (2, 2.2)]);
        let (n, m) = from_truth(&[a, b], &truth);
        assert_eq!(n, 3);
        assert!((m[0].unwrap() - 0.1).abs() < 1e-12, "{m:?}");
        assert!((m[1].unwrap() - 0.2).abs() < 1e-12, "{m:?}");
    }
}
