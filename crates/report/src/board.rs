//! The board: what a trader reads first in an index report. Each grade whose latest
//! fixing is sufficient, grouped by GPU, with the change on the day and over 30 days
//! (matched samples: the contributors present on both dates), the level that fixed it
//! and the data behind it. Grades whose latest fixing is carried or thin, and grades
//! that never had sufficient data, are listed apart, collapsed, with the reason.
//! Tier-qualified grades have their own table (the operator section).

use crate::html::esc;
use rentix_index::{Fixing, IndexUnit};
use std::collections::BTreeMap;
use std::fmt::Write;

/// GPUs that listed or filed contracts settle on, in the order a trader looks for
/// them (NYMEX GPU1/GPU2: H100, B200; Kalshi's monthly markets: H100, H200, B200,
/// A100): their groups open the board, the rest follow alphabetically.
const BENCHMARK_GPUS: [&str; 4] = [
    "h100-sxm-80gb",
    "h200-sxm-141gb",
    "b200-sxm-180gb",
    "a100-sxm-80gb",
];

/// Sort key of a GPU group on the board.
fn board_order(gpu: &str) -> (usize, &str) {
    (
        BENCHMARK_GPUS
            .iter()
            .position(|g| *g == gpu)
            .unwrap_or(BENCHMARK_GPUS.len()),
        gpu,
    )
}

fn pct(v: Option<f64>) -> String {
    v.map_or("&ndash;".into(), |x| format!("{:+.1}%", 100.0 * x))
}

/// The most frequent flag among rows (the reason a grade has no sufficient data).
fn main_reason(rows: &[&Fixing]) -> String {
    let mut n: BTreeMap<&str, usize> = BTreeMap::new();
    for f in rows {
        for flag in f
            .flags
            .split(';')
            .filter(|s| !s.is_empty() && *s != "low_confidence")
        {
            let code = flag.split('=').next().unwrap_or(flag);
            *n.entry(code).or_default() += 1;
        }
    }
    n.into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
        .map_or("no data".into(), |(k, _)| k.replace('_', " "))
}

/// The latest sufficient fixing of the first benchmark grade that has one (a USD
/// grade of a [`BENCHMARK_GPUS`] GPU, bare metal on demand first): grade, date, value.
pub(crate) fn benchmark_latest(fixings: &[Fixing]) -> Option<(String, chrono::NaiveDate, f64)> {
    let mut best: Option<(&Fixing, (usize, bool))> = None;
    for f in fixings
        .iter()
        .filter(|f| f.sufficient && f.unit() == IndexUnit::UsdPerGpuHour)
    {
        let (Some(_), Some(gpu)) = (f.value, f.grade.split('/').next()) else {
            continue;
        };
        let Some(rank) = BENCHMARK_GPUS.iter().position(|g| *g == gpu) else {
            continue;
        };
        let key = (rank, !f.grade.ends_with("/bare-metal/on-demand"));
        let better = match best {
            None => true,
            Some((b, k)) => key < k || (key == k && (f.date, &f.grade) > (b.date, &b.grade)),
        };
        if better {
            best = Some((f, key));
        }
    }
    best.and_then(|(f, _)| Some((f.grade.to_string(), f.date, f.value?)))
}

/// Whether `f` is of a benchmark the user brought (`date, grade, value`): its tier,
/// counts and sufficiency are unknown.
pub(crate) fn external(f: &Fixing) -> bool {
    f.has_flag(&rentix_index::Flag::External)
}

pub(crate) fn board(html: &mut String, fixings: &[Fixing]) {
    let mut by: BTreeMap<&str, Vec<&Fixing>> = BTreeMap::new();
    for f in fixings
        .iter()
        .filter(|f| f.unit() == IndexUnit::UsdPerGpuHour && !f.grade.contains('+'))
    {
        by.entry(f.grade.as_str()).or_default().push(f);
    }
    let Some(last) = fixings.iter().map(|f| f.date).max() else {
        return;
    };
    let mut live: BTreeMap<String, Vec<&Fixing>> = BTreeMap::new();
    let mut stale = Vec::new();
    let mut never = Vec::new();
    for (grade, rows) in &by {
        let latest = rows
            .iter()
            .filter(|f| f.value.is_some())
            .max_by_key(|f| f.date);
        match latest {
            // A benchmark the user brought has no sufficiency to judge: it is shown
            // with its provenance unknown.
            Some(l) if l.sufficient || external(l) => {
                let gpu = grade.split('/').next().unwrap_or(grade).to_string();
                live.entry(gpu).or_default().push(l);
            }
            Some(l) if rows.iter().any(|f| f.sufficient) => {
                stale.push((*grade, l.date, main_reason(&[*l])))
            }
            _ => never.push((*grade, main_reason(rows))),
        }
    }
    let _ = writeln!(
        html,
        "<h3 id=\"board\">The board: latest fixings, {last}</h3><table class=board><tr><th class=l>grade</th><th>date</th><th>USD / GPU-hour</th><th>1 day</th><th>30 days</th><th>level</th><th>obs</th><th>contributors</th><th>sufficient</th></tr>"
    );
    let mut groups: Vec<(&String, &Vec<&Fixing>)> = live.iter().collect();
    groups.sort_by_key(|(g, _)| board_order(g));
    for (gpu, rows) in groups {
        let _ = writeln!(
            html,
            "<tr><td class=l colspan=9><b>{}</b></td></tr>",
            esc(gpu)
        );
        for f in rows {
            let name = f
                .grade
                .split_once('/')
                .map_or(f.grade.as_str(), |(_, rest)| rest);
            let _ = writeln!(
                html,
                "<tr><td class=l>&nbsp;&nbsp;{}</td><td>{}</td><td>{:.4}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(name),
                f.date,
                f.value.unwrap_or(f64::NAN),
                pct(f.change_1d),
                pct(f.change_30d),
                if external(f) {
                    "unknown".into()
                } else {
                    f.level.map_or("&ndash;".into(), |l| l.to_string())
                },
                if external(f) { "unknown".into() } else { f.n_obs.to_string() },
                if external(f) { "unknown".into() } else { f.n_contributors.to_string() },
                if external(f) {
                    "unknown (your benchmark)"
                } else if f.sufficient {
                    "yes"
                } else {
                    "<span class=bad>no</span>"
                }
            );
        }
    }
    let _ = writeln!(html, "</table><p><small>Changes are measured on matched samples: the contributors present on both dates, so a contributor joining or leaving is not a move.</small></p>");
    for (title, list) in [
        (
            "whose latest fixing is not sufficient",
            stale
                .iter()
                .map(|(g, d, r)| format!("<code>{}</code>: {d}, {}", esc(g), esc(r)))
                .collect::<Vec<_>>(),
        ),
        (
            "that never had sufficient data",
            never
                .iter()
                .map(|(g, r)| format!("<code>{}</code>: {}", esc(g), esc(r)))
                .collect(),
        ),
    ] {
        if !list.is_empty() {
            let _ = writeln!(
                html,
                "<details><summary>{} grades {title}</summary><ul>",
                list.len()
            );
            for item in list {
                let _ = writeln!(html, "<li>{item}</li>");
            }
            let _ = writeln!(html, "</ul></details>");
        }
    }
}
