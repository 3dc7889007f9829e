//! The hedge card: what a hedger reads first in a backtest report, in a hedger's words.
//! Rent against the index, how much of the rent's risk the hedge removes (with its
//! interval), the hedge ratio and contracts, the basis risk left, the cash the margin
//! account needs, and what the hedge never covers.

use crate::html::esc;
use serde_json::Value;
use std::fmt::Write;

/// Money as a desk prints it: `-$203k`, `$1.2M`, `$3.9k`, `$950` (two significant
/// figures at least).
pub fn money(x: f64) -> String {
    if !x.is_finite() {
        return "n/a".into();
    }
    let sign = if x < 0.0 { "-" } else { "" };
    let a = x.abs();
    if a >= 1e6 {
        format!("{sign}${:.1}M", a / 1e6)
    } else if a >= 1e4 {
        format!("{sign}${:.0}k", a / 1e3)
    } else if a >= 1e3 {
        format!("{sign}${:.1}k", a / 1e3)
    } else {
        format!("{sign}${a:.0}")
    }
}

/// The card for `summary` (a backtest's summary.json) and its featured strategy.
pub fn hedge_card(html: &mut String, summary: &Value, featured: &Value) {
    let f = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    let side = summary["side"].as_str().unwrap_or("");
    let eff = f(&featured["effectiveness"]);
    let ci = &featured["confidence_intervals"]["effectiveness"];
    let interval = match (ci["low"].as_f64(), ci["high"].as_f64()) {
        (Some(a), Some(b)) => format!(" (95% interval {:.0}% to {:.0}%)", 100.0 * a, 100.0 * b),
        _ => String::new(),
    };
    let basis = f(&featured["basis"]["mean"]);
    let op = f(&featured["operational_loss"]["total_usd"])
        + f(&featured["operational_loss"]["outside_periods_usd"]).max(0.0);
    let rows = [
        (
            "your rent against the index",
            if basis.is_finite() {
                format!(
                    "you {} {:+.3} USD per GPU-hour against the settlement on average; what matters is whether the changes track (correlation of monthly changes {:.2})",
                    if side == "pay" { "pay" } else { "earn" },
                    basis,
                    f(&featured["correlation_changes"])
                )
            } else {
                format!("an index in points (rebased); correlation of monthly changes {:.2}", f(&featured["correlation_changes"]))
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
                if side == "pay" { "buy" } else { "sell" },
                f(&featured["hedge_ratio"]),
                featured["contracts"].as_i64().unwrap_or(0),
                esc(featured["strategy"].as_str().unwrap_or(""))
            ),
        ),
        (
            "basis risk left",
            format!("a month worse than {} in 1 month of 20 (95% VaR of the hedged P&amp;L)", money(f(&featured["var_95"]))),
        ),
        (
            "cash for margin",
            format!("up to {} at the worst point of a month (initial plus variation margin)", money(f(&featured["margin"]["peak_cash_need"]))),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_as_a_desk_prints_it() {
        assert_eq!(money(-203_412.0), "-$203k");
        assert_eq!(money(1_234_567.0), "$1.2M");
        assert_eq!(money(950.4), "$950");
        assert_eq!(money(3_854.0), "$3.9k");
        assert_eq!(money(f64::NAN), "n/a");
    }
}
