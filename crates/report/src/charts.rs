//! Charts as PNG and SVG. Every chart is a function generic over the drawing backend,
//! drawn twice: once to a bitmap, once to SVG.

use crate::font::{ensure_font, FAMILY};
use crate::format::money_tick;
use chrono::{Datelike, NaiveDate};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// Chart size in pixels.
pub(crate) const SIZE: (u32, u32) = (1000, 480);

type R = Result<(), String>;

fn e<E: std::fmt::Display>(x: E) -> String {
    x.to_string()
}

/// A named date series for a line chart.
#[derive(Debug, Clone)]
pub struct Line {
    /// The legend label.
    pub name: String,
    /// (date, value) in date order: the chart's axis starts at the earliest first
    /// point and ends at the latest last one; a gap of days breaks the line.
    pub points: Vec<(NaiveDate, f64)>,
}

/// An index fixing for the band chart.
#[derive(Debug, Clone)]
pub(crate) struct BandPoint {
    /// The fixing date.
    pub date: NaiveDate,
    /// The fixing's value, USD per GPU-hour.
    pub value: f64,
    /// 25th percentile of the day's observations; `None` when the fixing has none
    /// (the band is drawn only over days with both percentiles).
    pub p25: Option<f64>,
    /// 75th percentile of the day's observations; `None` as for `p25`.
    pub p75: Option<f64>,
    /// Hierarchy level as in the fixings' `level` column: 1 trades, 2 firm offers,
    /// 3 listings, 4 carried forward; it colours the marker.
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
        (origin + chrono::Days::new(x.max(0.0).round() as u64))
            .format("%Y-%m")
            .to_string()
    }
}

/// Tick positions (days after `origin`, up to `end`) on the first of a month:
/// every month, or every quarter (January, April, July, October) or year when
/// that keeps them at most 12, so that no label repeats and each sits where its
/// month begins.
pub(crate) fn month_ticks(origin: NaiveDate, end: f64) -> Vec<f64> {
    let mut firsts = Vec::new();
    let mut d = NaiveDate::from_ymd_opt(origin.year(), origin.month(), 1).unwrap_or(origin);
    while day_num(d, origin) <= end {
        if d >= origin {
            firsts.push(d);
        }
        d = d + chrono::Months::new(1);
    }
    let every = |months: u32| -> Vec<NaiveDate> {
        firsts
            .iter()
            .copied()
            .filter(|d| d.month0() % months == 0)
            .collect()
    };
    let chosen = [1, 3, 6, 12]
        .into_iter()
        .map(|k| if k == 1 { firsts.clone() } else { every(k) })
        .find(|v| v.len() <= 12)
        .unwrap_or_else(|| every(12));
    chosen.into_iter().map(|d| day_num(d, origin)).collect()
}

/// An axis whose ticks are given: a date axis in days after an origin ticked on
/// [`month_ticks`], or the forward curve's tenors ticked where tenors are.
struct MonthAxis {
    inner: plotters::coord::types::RangedCoordf64,
    ticks: Vec<f64>,
}

impl MonthAxis {
    fn new(origin: NaiveDate, end: f64) -> Self {
        Self {
            inner: (0f64..end).into(),
            ticks: month_ticks(origin, end),
        }
    }

    fn ticked(range: std::ops::Range<f64>, ticks: Vec<f64>) -> Self {
        Self {
            inner: range.into(),
            ticks,
        }
    }
}

/// A value tick with as many decimals as the axis' span needs, and never `-0`.
pub(crate) fn value_tick(y: f64, span: f64) -> String {
    let decimals = if span > 0.0 {
        (2.0 - span.log10().floor()).clamp(0.0, 4.0) as usize
    } else {
        2
    };
    let text = format!("{y:.decimals$}");
    if text
        .trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        text.trim_start_matches('-').to_string()
    } else {
        text
    }
}

impl Ranged for MonthAxis {
    type ValueType = f64;
    // Labels come from the chart's `x_label_formatter`.
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<H: plotters::coord::ranged1d::KeyPointHint>(&self, _hint: H) -> Vec<f64> {
        self.ticks.clone()
    }
}

/// Runs of consecutive points with no gap of more than `max_gap` days: a line is
/// drawn through each run and not across a stretch with no fixing.
pub(crate) fn runs(points: &[(f64, f64)], max_gap: f64) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    for &p in points {
        match out.last_mut() {
            Some(run) if run.last().is_some_and(|q| p.0 - q.0 <= max_gap) => run.push(p),
            _ => out.push(vec![p]),
        }
    }
    out
}

/// Days without a fixing after which a line breaks.
const MAX_GAP_DAYS: f64 = 7.0;

/// The gap that breaks a series' line: a week, or one and a half times its usual
/// spacing for a sparser one (a monthly series breaks where a month is missing).
fn max_gap(pts: &[(f64, f64)]) -> f64 {
    let steps: Vec<f64> = pts.windows(2).map(|w| w[1].0 - w[0].0).collect();
    let usual = rentix_core::stats::median(&steps).unwrap_or(1.0);
    (1.5 * usual).max(MAX_GAP_DAYS)
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

/// Draws `f` to `<stem>.png` and `<stem>.svg`; an error names the chart.
pub fn save_both(
    stem: &Path,
    png: impl FnOnce(DrawingArea<BitMapBackend<'_>, Shift>) -> R,
    svg: impl FnOnce(DrawingArea<SVGBackend<'_>, Shift>) -> R,
) -> Result<(), crate::ReportError> {
    draw_both(stem, png, svg).map_err(|detail| crate::ReportError::Chart {
        path: stem.to_path_buf(),
        detail,
    })
}

fn draw_both(
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

/// A chart over dates ([`MonthAxis`]) against a value.
type DateChart<'a, DB> =
    ChartContext<'a, DB, Cartesian2d<MonthAxis, plotters::coord::types::RangedCoordf64>>;

/// The p25-p75 band of each run of days with percentiles (`(day, p25, p75)`): none
/// drawn across a gap.
fn draw_band<DB: DrawingBackend>(chart: &mut DateChart<'_, DB>, band: &[(f64, f64, f64)]) -> R {
    let band_color = RGBColor(31, 119, 180).mix(0.3);
    let lows: Vec<(f64, f64)> = band.iter().map(|b| (b.0, b.1)).collect();
    for (k, run) in runs(&lows, MAX_GAP_DAYS).into_iter().enumerate() {
        let (a, b) = (run[0].0, run[run.len() - 1].0);
        let poly: Vec<(f64, f64)> = band
            .iter()
            .filter(|p| p.0 >= a && p.0 <= b)
            .map(|p| (p.0, p.2))
            .chain(
                band.iter()
                    .rev()
                    .filter(|p| p.0 >= a && p.0 <= b)
                    .map(|p| (p.0, p.1)),
            )
            .collect();
        let drawn = chart
            .draw_series(std::iter::once(Polygon::new(poly, band_color.filled())))
            .map_err(e)?;
        if k == 0 {
            drawn
                .label("p25-p75 of the observations")
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 15, y + 5)], band_color.filled())
                });
        }
    }
    Ok(())
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
        .margin_right(32)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(MonthAxis::new(origin, end), lo..hi)
        .map_err(e)?;
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
        .x_label_formatter(&date_label(origin))
        .y_label_formatter(&|y| value_tick(*y, hi - lo))
        .y_desc("USD per GPU-hour")
        .label_style((FAMILY, 13))
        .draw()
        .map_err(e)?;
    let band: Vec<(f64, f64, f64)> = pts
        .iter()
        .filter_map(|p| Some((day_num(p.date, origin), p.p25?, p.p75?)))
        .collect();
    draw_band(&mut chart, &band)?;
    let values: Vec<(f64, f64)> = pts
        .iter()
        .map(|p| (day_num(p.date, origin), p.value))
        .collect();
    for (k, run) in runs(&values, MAX_GAP_DAYS).into_iter().enumerate() {
        let drawn = chart
            .draw_series(LineSeries::new(run, BLACK.stroke_width(1)))
            .map_err(e)?;
        if k == 0 {
            drawn
                .label("fixing")
                .legend(|(x, y)| PathElement::new([(x, y), (x + 15, y)], BLACK));
        }
    }
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
        (1u8, "fixed on trades from here"),
        (2, "fixed on firm offers from here"),
        (3, "fixed on listings from here"),
        (4, "carried forward from here"),
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
        return empty_panel(&root, title, "No values to draw.");
    };
    let end = series
        .iter()
        .filter_map(|s| s.points.last().map(|p| day_num(p.0, origin)))
        .fold(1.0, f64::max);
    let (lo, hi) = range(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)));
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FAMILY, 20))
        .margin(12)
        .margin_right(32)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(MonthAxis::new(origin, end), lo..hi)
        .map_err(e)?;
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
        .x_label_formatter(&date_label(origin))
        .y_label_formatter(&|y| value_tick(*y, hi - lo))
        .y_desc(y_desc)
        .label_style((FAMILY, 13))
        .draw()
        .map_err(e)?;
    for (i, s) in series.iter().enumerate() {
        let c = PALETTE[i % PALETTE.len()];
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .map(|p| (day_num(p.0, origin), p.1))
            .collect();
        for (k, run) in runs(&pts, max_gap(&pts)).into_iter().enumerate() {
            // A lone point of a run (a month between gaps) is a dot, not nothing.
            let drawn = if run.len() == 1 {
                chart
                    .draw_series(run.iter().map(|p| Circle::new(*p, 3, c.filled())))
                    .map_err(e)?
            } else {
                chart
                    .draw_series(LineSeries::new(run, c.stroke_width(2)))
                    .map_err(e)?
            };
            if k == 0 {
                drawn.label(s.name.as_str()).legend(move |(x, y)| {
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
        .map_err(e)?;
    Ok(())
}

/// The tenors the curves have a point at, each once: the forward chart's ticks.
fn tenors(curves: &[(String, Vec<(f64, f64)>)]) -> Vec<f64> {
    let mut t: Vec<f64> = curves
        .iter()
        .flat_map(|c| c.1.iter().map(|p| p.0))
        .collect();
    t.sort_by(f64::total_cmp);
    t.dedup();
    t
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
        .build_cartesian_2d(
            MonthAxis::ticked(0f64..max_t * 1.02, tenors(curves)),
            lo..hi,
        )
        .map_err(e)?;
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
        .x_label_formatter(&|t| format!("{t:.0}"))
        .y_label_formatter(&|y| value_tick(*y, hi - lo))
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
    if series.iter().all(|s| s.points.is_empty()) {
        return empty_panel(
            &root,
            title,
            "Not enough hedge periods yet: a 12-month window needs 12 periods.",
        );
    }
    lines(root, title, "1 - Var(hedged)/Var(unhedged)", series)
}

/// A chart with nothing to draw says so, instead of an empty white frame.
pub(crate) fn empty_panel<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    why: &str,
) -> R {
    let titled = root.titled(title, (FAMILY, 20)).map_err(e)?;
    let (_, h) = titled.dim_in_pixel();
    titled
        .draw(&Text::new(
            why.to_string(),
            (40, (h / 2) as i32),
            (FAMILY, 16).into_font().color(&RGBColor(90, 90, 90)),
        ))
        .map_err(e)?;
    Ok(())
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

#[cfg(test)]
mod axis_tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn month_ticks_sit_on_month_starts_and_never_repeat() {
        // 2025-01-15 + 100 days = 2025-04-25: the firsts of Feb, Mar, Apr are days
        // 17, 45 (17 + 28) and 76 (45 + 31) after the origin.
        assert_eq!(month_ticks(d("2025-01-15"), 100.0), [17.0, 45.0, 76.0]);
        // Two years from 2024-01-01 (730 days): 24 months is too many, quarters
        // give 8 (Jan, Apr, Jul, Oct of each year), the first on day 0.
        let q = month_ticks(d("2024-01-01"), 730.0);
        assert_eq!(q.len(), 8);
        assert_eq!(q[..3], [0.0, 91.0, 182.0]); // 2024 is a leap year: 31+29+31 = 91
        let labels: Vec<String> = q.iter().map(|x| date_label(d("2024-01-01"))(x)).collect();
        assert_eq!(labels[..4], ["2024-01", "2024-04", "2024-07", "2024-10"]);
        // Eight years: yearly ticks, each a January.
        let y = month_ticks(d("2018-01-01"), 2922.0);
        assert!(y.len() <= 12 && y.len() >= 8, "{y:?}");
    }

    #[test]
    fn value_ticks_are_never_minus_zero() {
        // A span of 1.1 USD: two decimals (2 - floor(log10 1.1) = 2).
        assert_eq!(value_tick(-0.000_01, 1.1), "0.00");
        assert_eq!(value_tick(-0.2, 1.1), "-0.20");
        assert_eq!(value_tick(0.4, 1.1), "0.40");
        // Effectiveness from 0.975 to 0.996: a span of 0.021, four decimals.
        assert_eq!(value_tick(0.975, 0.021), "0.9750");
    }

    #[test]
    fn a_line_breaks_where_fixings_stop() {
        // Days 0, 1, 2, then nothing until day 20: two runs at a 7-day gap limit.
        let pts = [(0.0, 1.0), (1.0, 1.1), (2.0, 1.2), (20.0, 2.0), (21.0, 2.1)];
        let r = runs(&pts, MAX_GAP_DAYS);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].len(), 3);
        // A monthly series breaks only where a month is missing: its usual step is
        // the median of 31, 28, 61, 31 = 31 days, so the limit is 1.5 x 31 = 46.5 and
        // the 61-day step breaks.
        let monthly = [
            (0.0, 1.0),
            (31.0, 1.0),
            (59.0, 1.0),
            (120.0, 1.0),
            (151.0, 1.0),
        ];
        assert_eq!(runs(&monthly, max_gap(&monthly)).len(), 2);
    }
}
