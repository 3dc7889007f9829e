//! The report's "operator matters" section: the tier spread of tier-qualified grades
//! (`<stem>_tier_spreads`), the industry cost curve (`cost/`), and, in a backtest's
//! section, the split of the user's cost per useful token (`cost_decomposition.csv`).
//! Every text from a file is escaped.

use crate::html::{esc, img};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

fn csv_rows(path: &Path) -> Vec<BTreeMap<String, String>> {
    let Ok(mut rdr) = csv::Reader::from_path(path) else {
        return Vec::new();
    };
    let Ok(header) = rdr.headers().cloned() else {
        return Vec::new();
    };
    rdr.records()
        .flatten()
        .map(|r| {
            header
                .iter()
                .map(str::to_string)
                .zip(r.iter().map(str::to_string))
                .collect()
        })
        .collect()
}

fn num(r: &BTreeMap<String, String>, k: &str) -> f64 {
    r.get(k).and_then(|v| v.parse().ok()).unwrap_or(f64::NAN)
}

/// Tier spreads and the cost curve, when the inputs have them.
pub(crate) fn operator_section(html: &mut String, in_dir: &Path, fixings: Option<&Path>) {
    let spreads = fixings.and_then(|f| {
        let c = rentix_index::Companions::of(f);
        let (p, q) = (
            c.named("_tier_spreads", "csv"),
            c.named("_tier_spreads", "parquet"),
        );
        if p.exists() {
            Some(csv_rows(&p))
        } else if q.exists() {
            rentix_table::Table::read_parquet(&q).ok().map(|t| {
                (0..t.height())
                    .map(|i| {
                        t.names
                            .iter()
                            .zip(&t.cols)
                            .map(|(n, c)| (n.clone(), c.cell(i)))
                            .collect()
                    })
                    .collect()
            })
        } else {
            None
        }
    });
    let curve = csv_rows(&in_dir.join("cost/cost_curve.csv"));
    if spreads.as_ref().is_none_or(Vec::is_empty) && curve.is_empty() {
        return;
    }
    let _ = writeln!(html, "<h2 id=\"operators\">The operator matters</h2><p>The same GPU rents at different prices, and yields different useful output, depending on who runs it. A rental hedge offsets rent changes; it does not fix throughput or failures.</p>");
    if let Some(spreads) = spreads.filter(|s| !s.is_empty()) {
        let mut by: BTreeMap<&str, Vec<&BTreeMap<String, String>>> = BTreeMap::new();
        for r in &spreads {
            by.entry(r["grade"].as_str()).or_default().push(r);
        }
        let mut grades: Vec<(&str, Vec<&BTreeMap<String, String>>)> = by.into_iter().collect();
        grades.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
        let _ = writeln!(html, "<p>Tier-qualified grades fix the same GPU-hour from gold-or-better operators only; the spread is that fixing minus the all-operator fixing, what the market pays for operating quality.</p><table><tr><th class=l>tier-qualified grade</th><th>days</th><th>mean spread (USD/GPU-h)</th><th>latest spread</th><th>days both sufficient</th></tr>");
        for (g, rows) in grades.iter().take(8) {
            let mean = rows.iter().map(|r| num(r, "spread")).sum::<f64>() / rows.len() as f64;
            let last = rows.last().map_or(f64::NAN, |r| num(r, "spread"));
            let both = rows.iter().filter(|r| r["sufficient"] == "true").count();
            let _ = writeln!(
                html,
                "<tr><td class=l><code>{}</code></td><td>{}</td><td>{:+.3}</td><td>{:+.3}</td><td>{}</td></tr>",
                esc(g),
                rows.len(),
                mean,
                last,
                both
            );
        }
        let _ = writeln!(html, "</table>");
    }
    if !curve.is_empty() {
        let latest = curve
            .iter()
            .map(|r| r["date"].clone())
            .max()
            .unwrap_or_default();
        let _ = writeln!(html, "<h3>The cost of useful output</h3><p>Rent per million useful output tokens = rent / (output tokens per second per GPU x 3600 x success rate) x 1e6. Operators sorted by that cost, each bar as wide as its capacity: the industry cost curve.</p>");
        html.push_str(&img(&in_dir.join("cost/cost_curve.png"), "cost curve"));
        let _ = writeln!(html, "<table><tr><th>rank</th><th class=l>operator</th><th class=l>GPU / scope</th><th>USD per GPU-hour</th><th>tokens/s per GPU</th><th>success</th><th>USD per M useful tokens</th><th>percentile</th></tr>");
        for r in curve.iter().filter(|r| r["date"] == latest) {
            let _ = writeln!(
                html,
                "<tr><td>{}</td><td class=l>{}</td><td class=l>{} / {}</td><td>{:.2}</td><td>{:.0}</td><td>{:.1}%</td><td>{:.2}</td><td>{:.0}</td></tr>",
                esc(&r["rank"]),
                esc(&r["operator"]),
                esc(&r["gpu"]),
                esc(&r["scope"]),
                num(r, "usd_per_gpu_hour"),
                num(r, "output_tokens_per_s_per_gpu"),
                100.0 * num(r, "success_rate"),
                num(r, "usd_per_m_useful_tokens"),
                num(r, "percentile")
            );
        }
        let _ = writeln!(html, "</table>");
        let changes = csv_rows(&in_dir.join("cost/position_changes.csv"));
        let moved: Vec<_> = changes
            .iter()
            .filter(|c| c["rank_from"] != c["rank_to"])
            .collect();
        if !moved.is_empty() {
            let _ = writeln!(html, "<p>Cost position is relative:</p><ul>");
            for c in moved.iter().take(8) {
                let _ = writeln!(html, "<li>{}</li>", esc(&c["reading"]));
            }
            let _ = writeln!(html, "</ul>");
        }
    }
}

/// In a backtest's section: what the hedge covers of the user's cost per useful token.
pub(crate) fn cost_decomposition_section(html: &mut String, dir: &Path) {
    let months = csv_rows(&dir.join("cost_decomposition.csv"));
    let (Some(first), Some(last)) = (months.first(), months.last()) else {
        return;
    };
    let sum = |k: &str| months.iter().map(|r| num(r, k)).sum::<f64>();
    let _ = writeln!(
        html,
        "<h3 id=\"cost-decomposition\">Cost per useful token: what the hedge covers</h3><p>From {} to {} your rent per million useful tokens went from {:.2} to {:.2} USD. Of that change, <b>{:+.2}</b> came from rent (what the index hedges; the futures P&amp;L over the same months was {:+.0} USD), <b>{:+.2}</b> from your throughput and <b>{:+.2}</b> from failures: those two are yours alone (Shapley split, exact).</p>",
        esc(&first["month"]),
        esc(&last["month"]),
        num(first, "usd_per_m_useful_tokens"),
        num(last, "usd_per_m_useful_tokens"),
        sum("rent_effect"),
        sum("futures_pnl_usd"),
        sum("throughput_effect"),
        sum("failure_effect")
    );
    html.push_str(&img(
        &dir.join("cost_percentile.png"),
        "your place on the cost curve",
    ));
}
