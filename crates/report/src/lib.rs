//! rentix-report: what a user sees. Charts drawn with plotters to PNG and SVG using
//! a bundled font (no system fonts), and a self-contained HTML report.

mod backtest_charts;
mod board;
mod charts;
mod compare;
mod cost_chart;
mod error;
mod font;
mod format;
mod hedge_card;
mod html;
mod index_charts;
mod index_notes;
mod intraday_section;
mod lab_charts;
mod lab_section;
mod operator_section;

pub use backtest_charts::backtest_charts;
pub use charts::{lines as line_chart, save_both, Line};
pub use compare::render_comparison;
pub use cost_chart::{cost_curve_chart, CurveBar};
pub use error::ReportError;
pub use format::money;
pub use html::{other_fixings, render_report};
pub use lab_charts::contract_lab_charts;
