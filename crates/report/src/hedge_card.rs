//! The hedge card: what a hedger reads first in a backtest report, in a hedger's words.
//! Rent against the index, how much of the rent's risk the hedge removes (with its
//! interval), the hedge ratio and contracts, the basis risk left, the cash the margin
//! account needs, and what the hedge never covers.

use crate::format::money;
use crate::html::esc;
use rentix_backtest::{BacktestResult, Side, StrategySummary};
use std::fmt::Write;

/// The card for a backtest and its featured strategy.
pub fn hedge_card(html: &mut String, summary: &BacktestResult, featured: &StrategySummary) {
    let opt = |v: Option<f64>| v.unwrap_or(f64::NAN);
    let pays = summary.side == Side::Pay;
    let eff = opt(featured.effectiveness);
    let interval = match &featured.confidence_intervals.effectiveness {
        Some(ci) => format!(
            " (95% interval {:.0}% to {:.0}%)",
            100.0 * ci.low,
            100.0 * ci.high
        ),
        None => String::new(),
    };
    let basis = featured.basis.map_or(f64::NAN, |b| b.mean);
    let corr = opt(featured.correlation_changes);
    let op = featured.operational_loss.total_usd
        + featured.operational_loss.outside_periods_usd.max(0.0);
    let rows = [
        (
            "your rent against the index",
            if basis.is_finite() {
                format!(
                    "you {} {:+.3} USD per GPU-hour against the settlement on average; what matters is whether the changes track (correlation of monthly changes {:.2})",
                    if pays { "pay" } else { "earn" },
                    basis,
                    corr
                )
            } else {
                format!("an index in points (rebased); correlation of monthly changes {corr:.2}")
            },
        ),
        (
            "risk the hedge removes",
            format!("{:.0}% of the month-to-month variance of your rent P&amp;L{}", 100.0 * eff, interval),
        ),
        (
            "how to hedge",
            format!(
                "{} futures, hedge ratio {:.2}: about {} contracts a month ({})",
                if pays { "buy" } else { "sell" },
                featured.hedge_ratio,
                featured.contracts,
                esc(featured.strategy.as_str())
            ),
        ),
        (
            "basis risk left",
            format!("a month worse than {} in 1 month of 20 (95% VaR of the hedged P&amp;L)", money(opt(featured.var_95))),
        ),
        (
            "cash for margin",
            format!("up to {} at the worst point of a month (initial plus variation margin)", money(featured.margin.peak_cash_need)),
        ),
        (
            "never covered",
            format!("{} of outages, failed deployments and customers who did not pay: reported beside the hedge, never netted into it", money(op)),
        ),
    ];
    let _ = writeln!(html, "<table class=card>");
    for (k, v) in rows {
        let _ = writeln!(html, "<tr><th class=l>{k}</th><td class=l>{v}</td></tr>");
    }
    let _ = writeln!(html, "</table>");
}
