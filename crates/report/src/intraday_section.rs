//! The intraday index of a report directory (`intraday/fixings.parquet` or `.csv`,
//! written by `rentix index` under an intraday methodology): each grade's stamps on
//! one chart with the band of its votes, and a table of how well fed each grade was.

use crate::charts::{save_both, GRID, PALETTE};
use crate::font::FAMILY;
use crate::html::{esc, img};
use chrono::{DateTime, Utc};
use plotters::coord::Shift;
use plotters::prelude::*;
use rentix_index::intraday::{read_intraday, IntradayFixing};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

type R = Result<(), String>;

/// At most this many grades are drawn (the table lists all).
const DRAWN: usize = 4;

/// The intraday fixings file of `dir`, if it has one.
pub(crate) fn intraday_file(dir: &Path) -> Option<PathBuf> {
    ["fixings.parquet", "fixings.csv"]
        .iter()
        .map(|f| dir.join("intraday").join(f))
        .find(|p| p.exists())
}

/// One grade's stamps: (hours since the first stamp, value, band).
type Stamps = Vec<(f64, f64, f64)>;

/// Stamps on a time axis in quarter days (ticks at 00:00, 06:00, 12:00, 18:00 UTC
/// from the first day's midnight), each grade's band shaded around its line.
fn stamps_chart<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    origin: DateTime<Utc>,
    series: &[(String, Stamps)],
) -> R {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let q = |h: f64| h / 6.0;
    let end = series
        .iter()
        .flat_map(|s| s.1.iter().map(|p| q(p.0)))
        .fold(1.0, f64::max)
        .ceil();
    let (lo, hi) = series
        .iter()
        .flat_map(|s| s.1.iter().flat_map(|p| [p.1 - p.2, p.1 + p.2]))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    let (lo, hi) = if lo.is_finite() {
        let pad = ((hi - lo) * 0.05).max(1e-6);
        (lo - pad, hi + pad)
    } else {
        (0.0, 1.0)
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FAMILY, 20))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..end, lo..hi)
        .map_err(|e| err(&e))?;
    let label = move |x: &f64| {
        (origin + chrono::Duration::minutes((x * 360.0).round() as i64))
            .format("%m-%d %H:%M")
            .to_string()
    };
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
        .x_labels(end as usize + 1)
        .x_label_formatter(&label)
        .y_desc("USD per GPU-hour")
        .label_style((FAMILY, 13))
        .draw()
        .map_err(|e| err(&e))?;
    for (i, (name, pts)) in series.iter().enumerate() {
        let c = PALETTE[i % PALETTE.len()];
        // Runs of consecutive stamps: a stamp without a panel is a gap, not a line.
        let step = pts
            .windows(2)
            .map(|w| w[1].0 - w[0].0)
            .fold(f64::INFINITY, f64::min);
        let mut runs: Vec<Vec<(f64, f64, f64)>> = Vec::new();
        for p in pts {
            match runs.last_mut() {
                Some(r) if r.last().is_some_and(|x| p.0 - x.0 <= step * 1.5) => r.push(*p),
                _ => runs.push(vec![*p]),
            }
        }
        for (k, r) in runs.iter().enumerate() {
            // The band (the larger distance to the votes' p25/p75) as a shaded area.
            let ring: Vec<(f64, f64)> = r
                .iter()
                .map(|p| (q(p.0), p.1 + p.2))
                .chain(r.iter().rev().map(|p| (q(p.0), p.1 - p.2)))
                .collect();
            chart
                .draw_series(std::iter::once(Polygon::new(ring, c.mix(0.12).filled())))
                .map_err(|e| err(&e))?;
            let s = chart
                .draw_series(LineSeries::new(
                    r.iter().map(|p| (q(p.0), p.1)),
                    c.stroke_width(2),
                ))
                .map_err(|e| err(&e))?;
            if k == 0 {
                s.label(name.as_str()).legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 15, y)], c.stroke_width(2))
                });
            }
        }
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FAMILY, 12))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|e| err(&e))?;
    Ok(())
}

/// The intraday section of the report, when `dir` has an intraday fixings file.
pub(crate) fn intraday_section(html: &mut String, dir: &Path) -> Result<(), crate::ReportError> {
    let Some(file) = intraday_file(dir) else {
        return Ok(());
    };
    let rows = read_intraday(&file)?;
    let mut by: BTreeMap<&str, Vec<&IntradayFixing>> = BTreeMap::new();
    for f in &rows {
        by.entry(f.grade.as_str()).or_default().push(f);
    }
    let Some(first) = rows.iter().map(|f| f.date).min() else {
        return Ok(());
    };
    let origin = first.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc();
    let per_day = rows
        .iter()
        .filter(|f| f.date == rows[0].date && f.grade == rows[0].grade)
        .count();
    let _ = writeln!(
        html,
        "<h2 id=\"intraday\">Intraday index</h2><p>{} fixings every {} minutes ({per_day} a day) of {} grade(s), in <code>intraday/{}</code>: each provider's lowest listing of the interval, screened against its own history, voted as an EWMA at its price and its price plus and minus its sigma, the central band of the votes averaged; no value below five providers observed. The shaded area around each line is its band (at each stamp, the larger distance to the votes' 25th or 75th percentile); a gap in a line is a stamp without a panel. Every stamp's contributors are in <code>{}</code>.</p>",
        rows.len(),
        1440usize.checked_div(per_day).unwrap_or(0),
        by.len(),
        esc(&file.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default()),
        esc("intraday/fixings_receipts.parquet")
    );
    let mut drawn: Vec<(&str, usize)> = by
        .iter()
        .map(|(g, v)| (*g, v.iter().filter(|f| f.value.is_some()).count()))
        .filter(|(_, n)| *n > 0)
        .collect();
    drawn.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let series: Vec<(String, Stamps)> = drawn
        .iter()
        .take(DRAWN)
        .map(|(g, _)| {
            let pts = by[g]
                .iter()
                .filter_map(|f| {
                    let v = f.value?;
                    let h = (f.fixed_at - origin).num_minutes() as f64 / 60.0;
                    Some((h, v, f.band.unwrap_or(0.0)))
                })
                .collect();
            (g.to_string(), pts)
        })
        .collect();
    let stem = file.with_file_name("stamps");
    let title = "15-minute fixings with the band of their votes";
    save_both(
        &stem,
        |a| stamps_chart(a, title, origin, &series),
        |a| stamps_chart(a, title, origin, &series),
    )?;
    html.push_str(&img(
        &stem.with_extension("png"),
        "intraday fixings by stamp",
    ));
    let _ = writeln!(html, "<table><tr><th class=l>grade</th><th>stamps</th><th>with a value</th><th>median band</th><th>prints rejected</th><th>votes carried</th><th>last value</th><th class=l>at</th></tr>");
    for (g, v) in &by {
        let valued: Vec<&&IntradayFixing> = v.iter().filter(|f| f.value.is_some()).collect();
        let last = valued.last();
        let _ = writeln!(
            html,
            "<tr><td class=l>{}</td><td>{}</td><td>{:.0}%</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=l>{}</td></tr>",
            esc(g),
            v.len(),
            100.0 * valued.len() as f64 / v.len().max(1) as f64,
            rentix_core::stats::median(&valued.iter().filter_map(|f| f.band).collect::<Vec<_>>()).map_or("n/a".into(), |b| format!("{b:.4}")),
            v.iter().map(|f| f.n_rejected).sum::<usize>(),
            v.iter().map(|f| f.n_carried).sum::<usize>(),
            last.and_then(|f| f.value).map_or("n/a".into(), |x| format!("{x:.4}")),
            last.map_or(String::new(), |f| f.fixed_at.format("%Y-%m-%d %H:%M UTC").to_string())
        );
    }
    let _ = writeln!(html, "</table>");
    Ok(())
}
