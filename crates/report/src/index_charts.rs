//! Charts of an index run: one grade's fixings with its band and levels, several
//! grades together, and the forward curve.

use crate::charts::{forward_curves, index_band, lines, save_both, BandPoint, Line};
use chrono::NaiveDate;
use rentix_index::{Fixing, ForwardPoint};
use std::collections::BTreeMap;
use std::path::Path;

/// Band points of one grade.
pub(crate) fn band_points(fixings: &[Fixing], grade: &str) -> Vec<BandPoint> {
    fixings
        .iter()
        .filter(|f| f.grade == grade)
        .filter_map(|f| {
            Some(BandPoint {
                date: f.date,
                value: f.value?,
                p25: f.p25,
                p75: f.p75,
                level: f.level?.number(),
            })
        })
        .collect()
}

/// Writes `index_<n>` band charts for `grades`, `grades` (all together) and
/// `forward_curve` into `dir`. `truth` maps grade -> series (simulated data only).
pub(crate) fn index_charts(
    dir: &Path,
    fixings: &[Fixing],
    grades: &[String],
    truth: &BTreeMap<String, Vec<(NaiveDate, f64)>>,
    forward: &[ForwardPoint],
) -> Result<Vec<String>, crate::ReportError> {
    let mut written = Vec::new();
    for (i, g) in grades.iter().enumerate() {
        let pts = band_points(fixings, g);
        if pts.is_empty() {
            continue;
        }
        let t = truth.get(g).cloned().unwrap_or_default();
        let title = format!("{g}: fixing, p25-p75, level");
        let stem = format!("index_{}", i + 1);
        save_both(
            &dir.join(&stem),
            |a| index_band(a, &title, &pts, &t),
            |a| index_band(a, &title, &pts, &t),
        )?;
        written.push(stem);
    }
    let series: Vec<Line> = grades
        .iter()
        .map(|g| Line {
            name: g.clone(),
            points: fixings
                .iter()
                .filter(|f| &f.grade == g)
                .filter_map(|f| Some((f.date, f.value?)))
                .collect(),
        })
        .filter(|l| !l.points.is_empty())
        .collect();
    if !series.is_empty() {
        let t = "Grades compared (USD per GPU-hour)";
        save_both(
            &dir.join("grades"),
            |a| lines(a, t, "USD per GPU-hour", &series),
            |a| lines(a, t, "USD per GPU-hour", &series),
        )?;
        written.push("grades".into());
    }
    // Forward curve of the first grade's GPU and scope on up to four dates.
    if let Some(g) = grades
        .first()
        .and_then(|g| g.parse::<rentix_core::Grade>().ok())
    {
        let pts: Vec<&ForwardPoint> = forward
            .iter()
            .filter(|p| p.gpu == g.gpu.as_str() && p.scope == g.scope.as_str())
            .collect();
        let dates: Vec<NaiveDate> = {
            let mut d: Vec<NaiveDate> = pts.iter().map(|p| p.date).collect();
            d.dedup();
            let full: Vec<NaiveDate> = d
                .iter()
                .copied()
                .filter(|x| pts.iter().filter(|p| p.date == *x).count() >= 3)
                .collect();
            if full.len() <= 4 {
                full
            } else {
                (0..4).map(|k| full[k * (full.len() - 1) / 3]).collect()
            }
        };
        let curves: Vec<(String, Vec<(f64, f64)>)> = dates
            .iter()
            .map(|d| {
                (
                    d.to_string(),
                    pts.iter()
                        .filter(|p| p.date == *d)
                        .map(|p| (p.tenor_months, p.value))
                        .collect(),
                )
            })
            .collect();
        if !curves.is_empty() {
            let t = format!("Forward curve: {} {}", g.gpu, g.scope);
            save_both(
                &dir.join("forward_curve"),
                |a| forward_curves(a, &t, &curves),
                |a| forward_curves(a, &t, &curves),
            )?;
            written.push("forward_curve".into());
        }
    }
    Ok(written)
}
