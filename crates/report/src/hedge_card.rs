//! The hedge card: what a hedger reads first in a backtest report, in a hedger's words.
//! It opens with the decision (hedge, do not hedge, not enough data: `summary.json`'s
//! `recommendation`), then rent against the index, how much of the rent's risk the hedge removes (with its
//! interval), the hedge ratio and contracts, the basis risk left, the cash the margin
//! account needs, and what the hedge never covers.

use crate::format::money;
use crate::html::esc;
use rentix_backtest::{BacktestResult, Decision, Side, StrategySummary};
use rentix_core::stats::percent;
use std::fmt::Write;

/// The card for a backtest and its featured strategy.
pub(crate) fn hedge_card(html: &mut String, summary: &BacktestResult, featured: &StrategySummary) {
    let opt = |v: Option<f64>| v.unwrap_or(f64::NAN);
    let pays = summary.side == Side::Pay;
    let rec = &summary.recommendation;
    // The decision's own effectiveness and interval where it rests on this strategy
    // (for static-min-variance the cross-validated one): one number for one thing.
    let decided = rec.strategy == Some(featured.strategy);
    let (eff, interval) = if decided {
        (rec.effectiveness, rec.effectiveness_interval)
    } else {
        (
            featured.effectiveness,
            featured.confidence_intervals.effectiveness,
        )
    };
    let eff = opt(eff);
    let interval = match &interval {
        Some(ci) => format!(
            " (95% interval {} to {})",
            percent(ci.low),
            percent(ci.high)
        ),
        None => String::new(),
    };
    let basis = featured.basis.map_or(f64::NAN, |b| b.mean);
    let corr = opt(featured.correlation_changes);
    let op = featured.operational_loss.all_usd();
    let anyway = rejected(rec.decision, featured);
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
            if eff < 0.0 {
                format!("none: it adds {} to the month-to-month variance of your rent P&amp;L{}", percent(-eff), interval)
            } else {
                format!("{} of the month-to-month variance of your rent P&amp;L{} (fees of {} are a cost known at entry, not counted here)", percent(eff), interval, money(featured.total_fees))
            },
        ),
        (
            "how to hedge",
            match (rec.decision, rec.contracts) {
                (Decision::Hedge, Some(n)) => format!(
                    "{} {n} futures contracts a month ({}, hedge ratio {:.2}){}",
                    if pays { "buy" } else { "sell" },
                    esc(rec.strategy.map_or("", |s| s.as_str())),
                    rec.hedge_ratio.unwrap_or(f64::NAN),
                    if rec.strategy == Some(featured.strategy) {
                        String::new()
                    } else {
                        format!("; this card's figures are those of {}", esc(featured.strategy.as_str()))
                    }
                ),
                (Decision::NotEnoughData, _) => format!(
                    "no decision yet: {} hedge periods, {} needed",
                    rec.periods, rec.periods_needed
                ),
                _ => "do not hedge with this index: no contracts. <code>rentix track</code> ranks every index of the fixings file by how well it tracks this rent".into(),
            },
        ),
        (
            "basis risk left",
            format!("a month worse than {} in 1 month of 20 (95% VaR of the hedged P&amp;L){anyway}", money(opt(featured.var_95))),
        ),
        (
            "cash for margin",
            format!("up to {} at the worst point of a month (initial plus variation margin){anyway}", money(featured.margin.peak_cash_need)),
        ),
        (
            "never covered",
            format!("{} of outages, failed deployments and customers who did not pay: reported beside the hedge, never netted into it", money(op)),
        ),
    ];
    let class = match rec.decision {
        Decision::Hedge => "hedge",
        Decision::DoNotHedge => "nohedge",
        Decision::NotEnoughData => "nodata",
    };
    let _ = writeln!(
        html,
        "<p class=\"decision {class}\">{}</p>",
        esc(&rec.reason)
    );
    if let Some(w) = &rec.warning {
        let _ = writeln!(html, "<p class=warn>warning: {}</p>", esc(w));
    }
    let _ = writeln!(html, "<table class=card>");
    for (k, v) in rows {
        let _ = writeln!(html, "<tr><th class=l>{k}</th><td class=l>{v}</td></tr>");
    }
    let _ = writeln!(html, "</table>");
}

/// What the card's margin and basis-risk rows are, when the decision is not to
/// hedge: the rejected hedge's (or none, at ratio 0), said so, or they read as the
/// costs of the advice. Empty under a decision to hedge.
fn rejected(decision: Decision, featured: &StrategySummary) -> String {
    if decision == Decision::Hedge {
        String::new()
    } else if featured.hedge_ratio < crate::html::NO_RATIO {
        format!(
            ": {} held no contracts (ratio {:.2})",
            esc(featured.strategy.as_str()),
            featured.hedge_ratio
        )
    } else {
        format!(
            ", had you hedged anyway with {}",
            esc(featured.strategy.as_str())
        )
    }
}
