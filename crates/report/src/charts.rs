//! Charts as PNG and SVG. Every chart is a function generic over the drawing backend,
//! drawn twice: once to a bitmap, once to SVG.

use crate::font::{ensure_font, FAMILY};
use crate::format::money_tick;
use chrono::NaiveDate;
use plotters::coord::Shift;
use plotters::prelude::*;
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

/// The one grid colour: major lines only, faint (no minor-grid mesh).
pub(crate) const GRID: RGBAColor = RGBAColor(0, 0, 0, 0.1);

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

/// The fixings where the hierarchy level differs from the day before (and the
/// first): a marker on every day of two years is a smear, a marker where the level
/// changes says when the index stopped (or started again) fixing on trades.
fn level_changes(pts: &[BandPoint]) -> impl Iterator<Item = &BandPoint> {
    pts.iter()
        .enumerate()
        .filter(|(i, p)| *i == 0 || pts[i - 1].level != p.level)
        .map(|(_, p)| p)
}

/// Index fixings with the p25-p75 band and a marker, coloured by the hierarchy
/// level (green trades, blue firm, orange listings, red carried), where the level
/// that fixed it changes; an optional truth line.
pub(crate) fn index_band<DB: DrawingBackend>(
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
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
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
                level_changes(pts)
                    .filter(|p| p.level == lvl)
                    .map(|p| Circle::new((day_num(p.date, origin), p.value), 3, c.filled())),
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
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
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
pub(crate) fn forward_curves<DB: DrawingBackend>(
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
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
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
pub(crate) fn pnl_histogram<DB: DrawingBackend>(
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
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
        .x_desc("P&L per month, USD")
        .y_desc("months")
        .x_label_formatter(&|x| money_tick(*x))
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
/// gap, because it is not part of the hedge. Bar names sit under the axis, one per
/// bar slot, so they never cross a bar.
pub(crate) fn waterfall<DB: DrawingBackend>(
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
    let names: Vec<String> = bars
        .iter()
        .map(|b| b.0.clone())
        .chain(["".to_string(), "operational loss (apart)".to_string()])
        .collect();
    let n = names.len() as u32;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FAMILY, 20))
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(70)
        .build_cartesian_2d((0u32..n).into_segmented(), lo..hi)
        .map_err(e)?;
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
        .disable_x_mesh()
        .set_tick_mark_size(LabelAreaPosition::Bottom, 0)
        .x_labels(names.len() + 1)
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => names.get(*i as usize).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .y_desc("USD, whole backtest")
        .y_label_formatter(&|y| money_tick(*y))
        .label_style((FAMILY, 12))
        .draw()
        .map_err(e)?;
    let bar = |i: usize, y0: f64, y1: f64, c: RGBColor| {
        let mut r = Rectangle::new(
            [
                (SegmentValue::Exact(i as u32), y0),
                (SegmentValue::Exact(i as u32 + 1), y1),
            ],
            c.filled(),
        );
        r.set_margin(0, 0, 14, 14);
        r
    };
    chart
        .draw_series(bars.iter().enumerate().map(|(i, b)| {
            let c = if i + 1 == bars.len() {
                PALETTE[0]
            } else if b.2 >= b.1 {
                PALETTE[2]
            } else {
                PALETTE[3]
            };
            bar(i, b.1, b.2, c)
        }))
        .map_err(e)?;
    chart
        .draw_series(std::iter::once(bar(
            names.len() - 1,
            0.0,
            -op_loss.abs(),
            PALETTE[7],
        )))
        .map_err(e)?;
    Ok(())
}

/// Rolling effectiveness per window end.
pub(crate) fn rolling<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    series: &[Line],
) -> R {
    lines(root, title, "1 - Var(hedged)/Var(unhedged)", series)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_only_where_the_level_changes() {
        let d =
            |i: u32| NaiveDate::from_ymd_opt(2025, 1, 1).unwrap() + chrono::Days::new(u64::from(i));
        let pts: Vec<BandPoint> = [1u8, 1, 1, 3, 3, 1, 4, 4]
            .iter()
            .enumerate()
            .map(|(i, l)| BandPoint {
                date: d(i as u32),
                value: 1.0,
                p25: None,
                p75: None,
                level: *l,
            })
            .collect();
        let at: Vec<u32> = level_changes(&pts)
            .map(|p| (p.date - d(0)).num_days() as u32)
            .collect();
        assert_eq!(at, vec![0, 3, 5, 6]);
    }
}
