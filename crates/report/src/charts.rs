//! Charts as PNG and SVG. Every chart is a function generic over the drawing backend,
//! drawn twice: once to a bitmap, once to SVG.

use crate::font::{ensure_font, FAMILY};
use chrono::NaiveDate;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

/// Chart size in pixels.
pub const SIZE: (u32, u32) = (1000, 480);

type R = Result<(), String>;

fn e<E: std::fmt::Display>(x: E) -> String {
    x.to_string()
}

/// A named date series for a line chart.
#[derive(Debug, Clone)]
pub struct Line {
    pub name: String,
    pub points: Vec<(NaiveDate, f64)>,
}

/// An index fixing for the band chart.
#[derive(Debug, Clone)]
pub struct BandPoint {
    pub date: NaiveDate,
    pub value: f64,
    pub p25: Option<f64>,
    pub p75: Option<f64>,
    pub level: u8,
}

/// One palette across charts.
pub(crate) const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

fn level_color(level: u8) -> RGBColor {
    match level {
        1 => RGBColor(44, 160, 44),
        2 => RGBColor(31, 119, 180),
        3 => RGBColor(255, 127, 14),
        _ => RGBColor(214, 39, 40),
    }
}

fn day_num(d: NaiveDate, origin: NaiveDate) -> f64 {
    (d - origin).num_days() as f64
}

fn date_label(origin: NaiveDate) -> impl Fn(&f64) -> String {
    move |x: &f64| {
        (origin + chrono::Days::new(x.max(0.0) as u64))
            .format("%Y-%m")
            .to_string()
    }
}

fn range(vals: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.05).max(1e-6);
    (lo - pad, hi + pad)
}

/// Draws `f` to `<stem>.png` and `<stem>.svg`.
pub fn save_both(
    stem: &Path,
    png: impl FnOnce(DrawingArea<BitMapBackend<'_>, Shift>) -> R,
    svg: impl FnOnce(DrawingArea<SVGBackend<'_>, Shift>) -> R,
) -> R {
    ensure_font();
    if let Some(dir) = stem.parent() {
        std::fs::create_dir_all(dir).map_err(e)?;
    }
    let p = stem.with_extension("png");
    {
        let root = BitMapBackend::new(&p, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        png(root.clone())?;
        root.present().map_err(e)?;
    }
    let s = stem.with_extension("svg");
    {
        let root = SVGBackend::new(&s, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        svg(root.clone())?;
        root.present().map_err(e)?;
    }
    Ok(())
}

/// Index fixings with the p25-p75 band and a marker per fixing coloured by the
/// hierarchy level that fixed it (green trades, blue firm, orange listings, red
/// carried); an optional truth line.
pub fn index_band<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    pts: &[BandPoint],
    truth: &[(NaiveDate, f64)],
) -> R {
    let Some(origin) = pts.first().map(|p| p.date) else {
        return Ok(());
    };
    let end = pts.last().map_or(1.0, |p| day_num(p.date, origin)).max(1.0);
    let (lo, hi) = range(
        pts.iter()
            .flat_map(|p| [Some(p.value), p.p25, p.p75])
            .flatten()
            .chain(truth.iter().map(|t| t.1)),
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FAMILY, 20))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..end, lo..hi)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_label_formatter(&date_label(origin))
        .y_desc("USD per GPU-hour")
        .label_style((FAMILY, 13))
        .draw()
        .map_err(e)?;
    let band: Vec<(f64, f64, f64)> = pts
        .iter()
        .filter_map(|p| Some((day_num(p.date, origin), p.p25?, p.p75?)))
        .collect();
    if !band.is_empty() {
        let poly: Vec<(f64, f64)> = band
            .iter()
            .map(|b| (b.0, b.2))
            .chain(band.iter().rev().map(|b| (b.0, b.1)))
            .collect();
        chart
            .draw_series(std::iter::once(Polygon::new(
                poly,
                RGBColor(31, 119, 180).mix(0.18).filled(),
            )))
            .map_err(e)?
            .label("p25-p75")
            .legend(|(x, y)| {
                Rectangle::new(
                    [(x, y - 5), (x + 15, y + 5)],
                    RGBColor(31, 119, 180).mix(0.3).filled(),
                )
            });
    }
    chart
        .draw_series(LineSeries::new(
            pts.iter().map(|p| (day_num(p.date, origin), p.value)),
            BLACK.stroke_width(1),
        ))
        .map_err(e)?
        .label("fixing")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 15, y)], BLACK));
    if !truth.is_empty() {
        chart
            .draw_series(LineSeries::new(
                truth
                    .iter()
                    .filter(|t| t.0 >= origin)
                    .map(|t| (day_num(t.0, origin), t.1)),
                RGBColor(214, 39, 40).mix(0.7).stroke_width(1),
            ))
            .map_err(e)?
            .label("truth (simulator)")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 15, y)], RGBColor(214, 39, 40)));
    }
    for (lvl, name) in [
        (1u8, "level 1 trades"),
        (2, "level 2 firm"),
        (3, "level 3 listings"),
        (4, "level 4 carried"),
    ] {
        let c = level_color(lvl);
        chart
            .draw_series(
                pts.iter()
                    .filter(|p| p.level == lvl)
                    .map(|p| Circle::new((day_num(p.date, origin), p.value), 2, c.filled())),
            )
            .map_err(e)?
            .label(name)
            .legend(move |(x, y)| Circle::new((x + 7, y), 3, c.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FAMILY, 12))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(e)?;
    Ok(())
}

/// Several date series on one chart.
pub fn lines<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    y_desc: &str,
    series: &[Line],
) -> R {
    let Some(origin) = series
        .iter()
        .filter_map(|s| s.points.first().map(|p| p.0))
        .min()
    else {
        return Ok(());
    };
    let end = series
        .iter()
        .filter_map(|s| s.points.last().map(|p| day_num(p.0, origin)))
        .fold(1.0, f64::max);
    let (lo, hi) = range(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)));
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FAMILY, 20))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..end, lo..hi)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_label_formatter(&date_label(origin))
        .y_desc(y_desc)
        .label_style((FAMILY, 13))
        .draw()
        .map_err(e)?;
    for (i, s) in series.iter().enumerate() {
        let c = PALETTE[i % PALETTE.len()];
        chart
            .draw_series(LineSeries::new(
                s.points.iter().map(|p| (day_num(p.0, origin), p.1)),
                c.stroke_width(2),
            ))
            .map_err(e)?
            .label(s.name.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 15, y)], c.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FAMILY, 12))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(e)?;
    Ok(())
}

/// Forward curves: value against tenor in months, one line per date.
pub fn forward_curves<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    curves: &[(String, Vec<(f64, f64)>)],
) -> R {
    let (lo, hi) = range(curves.iter().flat_map(|c| c.1.iter().map(|p| p.1)));
    let max_t = curves
        .iter()
        .flat_map(|c| c.1.iter().map(|p| p.0))
        .fold(1.0, f64::max);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FAMILY, 20))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..max_t * 1.02, lo..hi)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("tenor (months; 0 = on-demand)")
        .y_desc("USD per GPU-hour")
        .label_style((FAMILY, 13))
        .draw()
        .map_err(e)?;
    for (i, (name, pts)) in curves.iter().enumerate() {
        let c = PALETTE[i % PALETTE.len()];
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))
            .map_err(e)?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 15, y)], c.stroke_width(2)));
        chart
            .draw_series(pts.iter().map(|p| Circle::new(*p, 3, c.filled())))
            .map_err(e)?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FAMILY, 12))
        .draw()
        .map_err(e)?;
    Ok(())
}

/// Histogram of hedged and unhedged P&L per period (USD), overlaid.
pub fn pnl_histogram<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    hedged: &[f64],
    unhedged: &[f64],
) -> R {
    let (lo, hi) = range(hedged.iter().chain(unhedged).copied());
    let bins = 20usize;
    let width = (hi - lo) / bins as f64;
    let count = |v: &[f64]| {
        let mut c = vec![0u32; bins];
        for x in v {
            let b = (((x - lo) / width).floor() as usize).min(bins - 1);
            c[b] += 1;
        }
        c
    };
    let (ch, cu) = (count(hedged), count(unhedged));
    let top = ch.iter().chain(&cu).copied().max().unwrap_or(1).max(1);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FAMILY, 20))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(50)
        .build_cartesian_2d(lo..hi, 0u32..top + 1)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("P&L per month, USD")
        .y_desc("months")
        .x_label_formatter(&|x| format!("{:.0}k", x / 1000.0))
        .label_style((FAMILY, 13))
        .draw()
        .map_err(e)?;
    for (counts, color, name) in [
        (&cu, RGBColor(214, 39, 40), "unhedged"),
        (&ch, RGBColor(31, 119, 180), "hedged"),
    ] {
        chart
            .draw_series(counts.iter().enumerate().map(|(i, c)| {
                let x0 = lo + i as f64 * width;
                Rectangle::new([(x0, 0), (x0 + width, *c)], color.mix(0.45).filled())
            }))
            .map_err(e)?
            .label(name)
            .legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 15, y + 5)], color.mix(0.45).filled())
            });
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FAMILY, 12))
        .draw()
        .map_err(e)?;
    Ok(())
}

/// Waterfall of cumulative P&L components (USD): each bar starts where the previous
/// ended; the last bar is the hedged total. Operational loss is drawn apart, after a
/// gap, because it is not part of the hedge.
pub fn waterfall<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    parts: &[(String, f64)],
    op_loss: f64,
) -> R {
    let mut bars = Vec::new();
    let mut level = 0.0;
    for (name, v) in parts {
        bars.push((name.clone(), level, level + v));
        level += v;
    }
    bars.push(("hedged total".to_string(), 0.0, level));
    let (lo, hi) = range(
        bars.iter()
            .flat_map(|b| [b.1, b.2])
            .chain([0.0, -op_loss.abs()]),
    );
    let n = bars.len() + 2;
    let names: Vec<String> = bars
        .iter()
        .map(|b| b.0.clone())
        .chain(["".to_string(), "operational loss (apart)".to_string()])
        .collect();
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FAMILY, 20))
        .margin(12)
        .x_label_area_size(10)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..n as f64, lo..hi)
        .map_err(e)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc("USD, whole backtest")
        .y_label_formatter(&|y| format!("{:.0}k", y / 1000.0))
        .label_style((FAMILY, 11))
        .draw()
        .map_err(e)?;
    // Bar names inside the plot, under the zero line, so every bar is labelled.
    let label_y = lo + 0.03 * (hi - lo);
    let style = TextStyle::from((FAMILY, 12).into_font()).pos(Pos::new(HPos::Center, VPos::Bottom));
    chart
        .draw_series(
            names
                .iter()
                .enumerate()
                .filter(|(_, n)| !n.is_empty())
                .map(|(i, name)| Text::new(name.clone(), (i as f64 + 0.5, label_y), style.clone())),
        )
        .map_err(e)?;
    chart
        .draw_series(bars.iter().enumerate().map(|(i, b)| {
            let up = b.2 >= b.1;
            let c = if i + 1 == bars.len() {
                RGBColor(31, 119, 180)
            } else if up {
                RGBColor(44, 160, 44)
            } else {
                RGBColor(214, 39, 40)
            };
            Rectangle::new([(i as f64 + 0.15, b.1), (i as f64 + 0.85, b.2)], c.filled())
        }))
        .map_err(e)?;
    let k = (n - 1) as f64;
    chart
        .draw_series(std::iter::once(Rectangle::new(
            [(k + 0.15, 0.0), (k + 0.85, -op_loss.abs())],
            RGBColor(127, 127, 127).filled(),
        )))
        .map_err(e)?;
    Ok(())
}

/// Rolling effectiveness per window end.
pub fn rolling<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    series: &[Line],
) -> R {
    lines(root, title, "1 - Var(hedged)/Var(unhedged)", series)
}
