//! The industry cost curve: operators sorted by cost per million useful tokens, each
//! bar as wide as its capacity in GPUs.

use crate::charts::{save_both, GRID};
use crate::font::FAMILY;
use crate::format::thousands;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

/// Approximate width of the plotting area, pixels.
const PLOT_PX: f64 = 900.0;

/// One operator on the curve: name, cost, capacity.
#[derive(Debug, Clone, PartialEq)]
pub struct CurveBar {
    /// The bar's label.
    pub operator: String,
    /// Height: USD per million useful output tokens (those delivered at the
    /// operator's success rate).
    pub usd_per_m_useful_tokens: f64,
    /// Width: the operator's capacity in GPUs; the x axis runs over all bars' total.
    pub capacity_gpus: f64,
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    bars: &[CurveBar],
) -> Result<(), String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let total: f64 = bars.iter().map(|b| b.capacity_gpus).sum::<f64>().max(1.0);
    let top = bars
        .iter()
        .map(|b| b.usd_per_m_useful_tokens)
        .fold(0.0f64, f64::max)
        * 1.15
        + 1e-9;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FAMILY, 20))
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..total, 0f64..top)
        .map_err(e)?;
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
        .disable_x_mesh()
        .disable_y_mesh()
        .x_desc("cumulative capacity, GPUs")
        .y_desc("USD per million useful output tokens")
        .x_label_formatter(&|x| thousands(*x))
        .y_label_formatter(&|y| format!("${y:.2}"))
        .label_style((FAMILY, 12))
        .draw()
        .map_err(e)?;
    let palette = crate::charts::PALETTE;
    let mut x = 0.0;
    let mut labels = Vec::new();
    let mut rects = Vec::new();
    for (i, b) in bars.iter().enumerate() {
        let c = palette[i % palette.len()];
        rects.push(Rectangle::new(
            [(x, 0.0), (x + b.capacity_gpus, b.usd_per_m_useful_tokens)],
            c.mix(0.8).filled(),
        ));
        // Only bars wide enough for their label are named (the table lists all), so
        // labels never overlap: about 7 px a character on a plot about 900 px wide.
        let width_px = b.capacity_gpus / total * PLOT_PX;
        let fits = |s: &str| width_px >= 7.0 * s.chars().count() as f64 + 8.0;
        let full = format!("{} ${:.2}", b.operator, b.usd_per_m_useful_tokens);
        let price = format!("${:.2}", b.usd_per_m_useful_tokens);
        let label = if fits(&full) {
            Some(full)
        } else {
            fits(&price).then_some(price)
        };
        if let Some(label) = label {
            labels.push((
                label,
                (x + b.capacity_gpus / 2.0, b.usd_per_m_useful_tokens),
            ));
        }
        x += b.capacity_gpus;
    }
    chart.draw_series(rects).map_err(e)?;
    let style = TextStyle::from((FAMILY, 12).into_font()).pos(Pos::new(HPos::Center, VPos::Bottom));
    chart
        .draw_series(
            labels
                .into_iter()
                .map(|(t, p)| Text::new(t, p, style.clone())),
        )
        .map_err(e)?;
    Ok(())
}

/// Writes `<stem>.png` and `<stem>.svg`.
pub fn cost_curve_chart(
    stem: &Path,
    title: &str,
    bars: &[CurveBar],
) -> Result<(), crate::ReportError> {
    save_both(stem, |r| draw(r, title, bars), |r| draw(r, title, bars))
}
