//! The contract design lab's charts: one per measure, one bar per candidate, each
//! candidate in the same colour on every chart.

use crate::charts::{save_both, GRID, PALETTE};
use crate::font::FAMILY;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use rentix_lab::{CandidateRow, Comparison};
use std::path::Path;

/// One candidate's bar: value (none: `missing` is written instead), optional
/// whisker (low, high).
struct Bar {
    name: String,
    value: Option<f64>,
    whisker: Option<(f64, f64)>,
}

/// A bar's value and whisker.
type BarValue = (Option<f64>, Option<(f64, f64)>);

struct Spec<'a> {
    title: &'a str,
    axis: &'a str,
    /// Text written for a candidate without a value.
    missing: &'a str,
    fmt: &'a dyn Fn(f64) -> String,
}

/// The candidate named at height `y` of a chart with one bar per candidate, the
/// first at the top: names sit at the bars' centres (k + 0.5), other ticks are blank.
fn candidate_at(names: &[String], y: f64) -> String {
    let k = (y - 0.5).round();
    if (y - 0.5 - k).abs() < 1e-6 && k >= 0.0 && (k as usize) < names.len() {
        names[names.len() - 1 - k as usize]
            .chars()
            .take(34)
            .collect()
    } else {
        String::new()
    }
}

/// The value axis of a bar chart: from zero (or 1.25 times the lowest value or
/// whisker, when one is negative: an effectiveness below zero is drawn left of zero,
/// to scale) to 1.25 times the highest.
fn x_range(bars: &[Bar]) -> (f64, f64) {
    let top = bars
        .iter()
        .flat_map(|b| [b.value, b.whisker.map(|w| w.1)])
        .flatten()
        .fold(0.0f64, f64::max)
        .max(1e-9)
        * 1.25;
    let bottom = bars
        .iter()
        .flat_map(|b| [b.value, b.whisker.map(|w| w.0)])
        .flatten()
        .fold(0.0f64, f64::min)
        * 1.25;
    (bottom, top)
}

/// The effectiveness bar: the median and its p25-p75 whisker as they are, negative
/// included (a hedge that adds variance is worse than none, not "0%").
fn effectiveness_bar(median: Option<f64>, p25: Option<f64>, p75: Option<f64>) -> BarValue {
    (median, p25.zip(p75))
}

fn draw_bars<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    spec: &Spec<'_>,
    bars: &[Bar],
) -> Result<(), String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let (bottom, top) = x_range(bars);
    let n = bars.len().max(1);
    let names: Vec<String> = bars.iter().map(|b| b.name.clone()).collect();
    let mut chart = ChartBuilder::on(&root)
        .caption(spec.title, (FAMILY, 20))
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(240)
        .build_cartesian_2d(bottom..top, 0f64..n as f64)
        .map_err(e)?;
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
        .disable_x_mesh()
        .disable_y_mesh()
        .x_desc(spec.axis)
        .x_label_formatter(&|x| (spec.fmt)(*x))
        .y_labels(n * 2 + 1)
        .y_label_formatter(&|y| candidate_at(&names, *y))
        .label_style((FAMILY, 12))
        .draw()
        .map_err(e)?;
    let label = TextStyle::from((FAMILY, 12).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    if bottom < 0.0 {
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(0.0, 0.0), (0.0, n as f64)],
                BLACK.stroke_width(1),
            )))
            .map_err(e)?;
    }
    for (i, b) in bars.iter().enumerate() {
        // The first candidate at the top.
        let y = (n - 1 - i) as f64;
        let c = PALETTE[i % PALETTE.len()];
        if let Some(v) = b.value {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(0.0, y + 0.2), (v, y + 0.8)],
                    c.mix(0.85).filled(),
                )))
                .map_err(e)?;
        }
        if let Some((lo, hi)) = b.whisker {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(lo, y + 0.5), (hi, y + 0.5)],
                    BLACK.stroke_width(2),
                )))
                .map_err(e)?;
        }
        let end = b
            .value
            .map_or(0.0, |v| v.max(b.whisker.map_or(v, |w| w.1)).max(0.0));
        let text = b.value.map_or(spec.missing.to_string(), |v| (spec.fmt)(v));
        chart
            .draw_series(std::iter::once(Text::new(
                text,
                (end + top * 0.01, y + 0.5),
                label.clone(),
            )))
            .map_err(e)?;
    }
    Ok(())
}

fn draw_levels<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    rows: &[CandidateRow],
) -> Result<(), String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let n = rows.len().max(1);
    let names: Vec<String> = rows.iter().map(|r| r.candidate.clone()).collect();
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "What fixed the index: share of fixing days by level",
            (FAMILY, 20),
        )
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(240)
        // Room on the right for the legend, beside the bars rather than over them.
        .build_cartesian_2d(0f64..1.3, 0f64..n as f64)
        .map_err(e)?;
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
        .disable_x_mesh()
        .disable_y_mesh()
        .x_label_formatter(&|x| {
            if *x <= 1.0 + 1e-9 {
                format!("{:.0}%", x * 100.0)
            } else {
                String::new()
            }
        })
        .y_labels(n * 2 + 1)
        .y_label_formatter(&|y| candidate_at(&names, *y))
        .label_style((FAMILY, 12))
        .draw()
        .map_err(e)?;
    let parts: [(&str, RGBColor); 5] = [
        ("trades", RGBColor(44, 160, 44)),
        ("firm offers", RGBColor(31, 119, 180)),
        ("listings", RGBColor(255, 127, 14)),
        ("carried", RGBColor(214, 39, 40)),
        ("no value", RGBColor(190, 190, 190)),
    ];
    for (k, &(name, color)) in parts.iter().enumerate() {
        let rects: Vec<Rectangle<(f64, f64)>> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let s = [
                    r.share_trades,
                    r.share_firm,
                    r.share_listings,
                    r.share_carried,
                    r.share_no_value,
                ];
                let x0: f64 = s[..k].iter().sum();
                let y = (n - 1 - i) as f64;
                Rectangle::new([(x0, y + 0.2), (x0 + s[k], y + 0.8)], color.filled())
            })
            .collect();
        chart
            .draw_series(rects)
            .map_err(e)?
            .label(name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK.mix(0.3))
        .label_font((FAMILY, 12))
        .draw()
        .map_err(e)?;
    Ok(())
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// The chart files (stems under `<out>/charts/`) and their captions, in report order.
pub(crate) const LAB_CHARTS: [(&str, &str); 6] = [
    (
        "lab_levels",
        "Sufficiency: which level of the hierarchy fixed each day",
    ),
    (
        "lab_fake_volume",
        "Manipulation: fake trade volume one contributor needs to move the settlement 1%",
    ),
    (
        "lab_withholding",
        "Manipulation: settlement move when the largest contributor withholds",
    ),
    (
        "lab_truth_error",
        "Representativeness: settlement error against the simulated fair price",
    ),
    (
        "lab_effectiveness",
        "Hedger utility: walk-forward effectiveness of the rents tested",
    ),
    (
        "lab_volatility",
        "Economics: annualized settlement volatility",
    ),
];

/// Draws every lab chart into `<out>/charts/`.
pub fn contract_lab_charts(out: &Path, c: &Comparison) -> Result<(), crate::ReportError> {
    let dir = out.join("charts");
    let rows = &c.candidates;
    let bars = |f: &dyn Fn(&CandidateRow) -> BarValue| -> Vec<Bar> {
        rows.iter()
            .map(|r| {
                let (value, whisker) = f(r);
                Bar {
                    name: r.candidate.clone(),
                    value,
                    whisker,
                }
            })
            .collect()
    };
    let charts: Vec<(&str, Spec<'_>, Vec<Bar>)> = vec![
        (
            "lab_fake_volume",
            Spec {
                title: "The most one contributor moves the settlement with fake quotes (median month)",
                axis: "move, percent (fake trades up to the bound, or fake listings up to the bound a day)",
                missing: "no settled month",
                fmt: &|x| format!("{x:.2}%"),
            },
            bars(&|r| {
                (
                    match (r.max_move_pct_fake_trades, r.max_move_pct_fake_listings) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        (a, b) => a.or(b),
                    },
                    None,
                )
            }),
        ),
        (
            "lab_withholding",
            Spec {
                title: "Settlement move when the largest contributor withholds (median month)",
                axis: "absolute move, percent",
                missing: "no settled month",
                fmt: &|x| format!("{x:.2}%"),
            },
            bars(&|r| (r.withholding_move_pct, None)),
        ),
        (
            "lab_truth_error",
            Spec {
                title: "Settlement error against the fair price (mean absolute)",
                axis: "USD per GPU-hour",
                missing: "no truth for this grade",
                fmt: &|x| format!("${x:.3}"),
            },
            bars(&|r| (r.truth_mae_usd, None)),
        ),
        (
            "lab_effectiveness",
            Spec {
                title: "Walk-forward hedge effectiveness of the rents tested (median, p25-p75)",
                axis: "share of the rent's monthly variance removed",
                missing: "no rent could be backtested",
                fmt: &|x| format!("{:.0}%", x * 100.0),
            },
            bars(&|r| {
                effectiveness_bar(
                    r.effectiveness_median,
                    r.effectiveness_p25,
                    r.effectiveness_p75,
                )
            }),
        ),
        (
            "lab_volatility",
            Spec {
                title: "Annualized volatility of the monthly settlement",
                axis: "standard deviation of monthly log changes x sqrt(12)",
                missing: "fewer than three settled months",
                fmt: &pct,
            },
            bars(&|r| (r.settlement_vol_annual, None)),
        ),
    ];
    save_both(
        &dir.join("lab_levels"),
        |r| draw_levels(r, rows),
        |r| draw_levels(r, rows),
    )?;
    for (stem, spec, b) in &charts {
        save_both(
            &dir.join(stem),
            |r| draw_bars(r, spec, b),
            |r| draw_bars(r, spec, b),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_effectiveness_is_drawn_below_zero() {
        // The final-fixing design of the demo: median -15%, p25-p75 -83% to -1%.
        // It was drawn as 0% (clamped); now the bar and whisker keep their sign and
        // the axis reaches 1.25 x -83% = -103.75% on the left.
        let v = effectiveness_bar(Some(-0.15), Some(-0.83), Some(-0.01));
        assert_eq!(v, (Some(-0.15), Some((-0.83, -0.01))));
        let bars = [
            Bar {
                name: "final".into(),
                value: v.0,
                whisker: v.1,
            },
            Bar {
                name: "monthly".into(),
                value: Some(0.60),
                whisker: Some((0.11, 0.98)),
            },
        ];
        let (lo, hi) = x_range(&bars);
        assert!(
            (lo + 1.0375).abs() < 1e-12 && (hi - 1.225).abs() < 1e-12,
            "{lo} {hi}"
        );
        // Drawn: the label reads -15%, not 0%.
        crate::font::ensure_font();
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (800, 300)).into_drawing_area();
            let spec = Spec {
                title: "t",
                axis: "a",
                missing: "none",
                fmt: &|x| format!("{:.0}%", x * 100.0),
            };
            draw_bars(root, &spec, &bars).unwrap();
        }
        let texts: Vec<&str> = svg.split('>').filter(|t| t.contains('%')).collect();
        // The axis now reaches below zero, and the bar's label is -15%.
        let has = |label: &str| {
            texts
                .iter()
                .any(|t| t.split_whitespace().next() == Some(label))
        };
        assert!(has("-15%") && has("-100%"), "{texts:?}");
    }
}
