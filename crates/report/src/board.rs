//! The board: what a trader reads first in an index report. Each grade whose latest
//! fixing is sufficient, grouped by GPU, with the change on the day and over 30 days
//! (matched samples: the contributors present on both dates), the level that fixed it
//! and the data behind it. Grades whose latest fixing is carried or thin, and grades
//! that never had sufficient data, are listed apart, collapsed, with the reason.
//! Tier-qualified grades have their own table (the operator section). Each row says
//! when it was fixed (the date at the methodology's cut-off, when the methodology is
//! known) and the value before it; composites follow in a table of their own.
//! Grades whose latest value is more than [`CURRENT_DAYS`] days older than the
//! file's last date are listed apart too: the board is what fixes now.

use crate::html::esc;
use chrono::NaiveDate;
use rentix_index::{Fixing, IndexUnit};
use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::fmt::Write;

/// A grade whose latest value is more than this many days before the file's last
/// date is not current: it leaves the board (listed apart) and is charted last.
pub(crate) const CURRENT_DAYS: i64 = 30;

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

/// Where a grade stands, which the board's rows and the report's charts follow:
/// grades whose latest value is current first, benchmark GPUs in
/// [`BENCHMARK_GPUS`] order (the rest by name), bare metal on demand first within a
/// GPU, then the most-fed grades (most sufficient days, then most valued days), then
/// the name. It was alphabetical: on real data a stale 2022 A100 grade was charted
/// and the H100 at the top of the board was not (issue 49).
pub(crate) fn board_key<'a>(grade: &'a str, rows: &[&Fixing], last: NaiveDate) -> impl Ord + 'a {
    let latest = rows
        .iter()
        .filter(|f| f.value.is_some())
        .map(|f| f.date)
        .max();
    let current = latest.is_some_and(|d| (last - d).num_days() <= CURRENT_DAYS);
    let gpu = grade.split('/').next().unwrap_or(grade);
    (
        !current,
        board_order(gpu),
        !grade.ends_with("/bare-metal/on-demand"),
        Reverse(rows.iter().filter(|f| f.sufficient).count()),
        Reverse(rows.iter().filter(|f| f.value.is_some()).count()),
        grade,
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

/// The board's first row (grade, date, value), which the report's first screen
/// quotes: computed by the board's own rule, so the two never show different
/// grades. `None` when no grade is current and sufficient.
pub(crate) fn benchmark_latest(fixings: &[Fixing]) -> Option<(String, NaiveDate, f64)> {
    let b = Board::of(fixings)?;
    let (g, f) = b.live.first()?;
    Some((g.to_string(), f.date, f.value?))
}

/// Whether `f` is of a benchmark the user brought (`date, grade, value`): its tier,
/// counts and sufficiency are unknown.
pub(crate) fn external(f: &Fixing) -> bool {
    f.has_flag(&rentix_index::Flag::External)
}

/// The value before a row's: the grade's previous valued fixing, with its date.
fn previous(rows: &[&Fixing], latest: &Fixing) -> String {
    rows.iter()
        .filter(|f| f.date < latest.date)
        .filter_map(|f| Some((f.date, f.value?)))
        .max_by_key(|(d, _)| *d)
        .map_or("&ndash;".into(), |(d, v)| {
            format!("{v:.4} <small>({d})</small>")
        })
}

/// The "fixed at" column's heading: the methodology's cut-off when it is known
/// (each row's date is fixed at it).
fn fixed_at(cutoff: Option<&str>) -> String {
    cutoff.map_or("fixed on".into(), |c| {
        format!("fixed at<br><small>{}</small>", esc(c))
    })
}

/// The grades of a fixings file as the board sorts them.
struct Board<'a> {
    /// The file's last date.
    last: NaiveDate,
    /// Every USD grade's rows.
    by: BTreeMap<&'a str, Vec<&'a Fixing>>,
    /// Current grades whose latest value is sufficient (or the user's own
    /// benchmark), with that fixing, in the board's order.
    live: Vec<(&'a str, &'a Fixing)>,
    /// Grades whose latest value is not current, with it.
    old: Vec<(&'a str, &'a Fixing)>,
    /// Current grades whose latest value is not sufficient: date and reason.
    stale: Vec<(&'a str, NaiveDate, String)>,
    /// Grades never sufficient, with the reason.
    never: Vec<(&'a str, String)>,
}

impl<'a> Board<'a> {
    fn of(fixings: &'a [Fixing]) -> Option<Self> {
        let last = fixings.iter().map(|f| f.date).max()?;
        let mut by: BTreeMap<&str, Vec<&Fixing>> = BTreeMap::new();
        for f in fixings.iter().filter(|f| {
            f.unit() == IndexUnit::UsdPerGpuHour
                && !f.grade.is_composite()
                && !f.grade.contains('+')
        }) {
            by.entry(f.grade.as_str()).or_default().push(f);
        }
        let (mut live, mut old, mut stale, mut never) = (vec![], vec![], vec![], vec![]);
        for (grade, rows) in &by {
            let latest = rows
                .iter()
                .filter(|f| f.value.is_some())
                .max_by_key(|f| f.date);
            match latest {
                Some(l) if (last - l.date).num_days() > CURRENT_DAYS => old.push((*grade, *l)),
                // A benchmark the user brought has no sufficiency to judge: it is
                // shown with its provenance unknown.
                Some(l) if l.sufficient || external(l) => live.push((*grade, *l)),
                Some(l) if rows.iter().any(|f| f.sufficient) => {
                    stale.push((*grade, l.date, main_reason(&[*l])))
                }
                _ => never.push((*grade, main_reason(rows))),
            }
        }
        live.sort_by_cached_key(|(g, _)| board_key(g, &by[g], last));
        Some(Self {
            last,
            by,
            live,
            old,
            stale,
            never,
        })
    }
}

/// The board. `cutoff` is the methodology's cut-off and time zone (`24:00 UTC`)
/// when the report knows the methodology.
pub(crate) fn board(html: &mut String, fixings: &[Fixing], cutoff: Option<&str>) {
    let Some(b) = Board::of(fixings) else {
        return;
    };
    let (last, by) = (b.last, &b.by);
    let _ = writeln!(
        html,
        "<h3 id=\"board\">The board: latest fixings, {last}</h3><table class=board><tr><th class=l>grade</th><th>{}</th><th>USD / GPU-hour</th><th>previous</th><th>1 day</th><th>30 days</th><th>level</th><th>obs</th><th>contributors</th><th>sufficient</th></tr>",
        fixed_at(cutoff)
    );
    let mut gpu_shown = "";
    for (grade, f) in &b.live {
        let gpu = grade.split('/').next().unwrap_or(grade);
        if gpu != gpu_shown {
            let _ = writeln!(
                html,
                "<tr><td class=l colspan=10><b>{}</b></td></tr>",
                esc(gpu)
            );
            gpu_shown = gpu;
        }
        let name = grade.split_once('/').map_or(*grade, |(_, rest)| rest);
        let unknown = |s: String| if external(f) { "unknown".into() } else { s };
        let _ = writeln!(
            html,
            "<tr><td class=l>&nbsp;&nbsp;{}</td><td>{}</td><td>{:.4}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(name),
            f.date,
            f.value.unwrap_or(f64::NAN),
            previous(&by[grade], f),
            pct(f.change_1d),
            pct(f.change_30d),
            unknown(f.level.map_or("&ndash;".into(), |l| l.to_string())),
            unknown(f.n_obs.to_string()),
            unknown(f.n_contributors.to_string()),
            if external(f) {
                "unknown (your benchmark)"
            } else if f.sufficient {
                "yes"
            } else {
                "<span class=bad>no</span>"
            }
        );
    }
    let _ = writeln!(html, "</table><p><small>Changes are measured on matched samples: the contributors present on both dates, so a contributor joining or leaving is not a move. <i>previous</i> is the grade's fixing before the latest, with its date.</small></p>");
    composites(html, fixings, cutoff);
    for (title, list) in [
        (
            format!("whose latest value is more than {CURRENT_DAYS} days before {last}"),
            b.old
                .iter()
                .map(|(g, f)| {
                    format!(
                        "<code>{}</code>: {:.4} on {}",
                        esc(g),
                        f.value.unwrap_or(f64::NAN),
                        f.date
                    )
                })
                .collect::<Vec<_>>(),
        ),
        (
            "whose latest fixing is not sufficient".into(),
            b.stale
                .iter()
                .map(|(g, d, r)| format!("<code>{}</code>: {d}, {}", esc(g), esc(r)))
                .collect::<Vec<_>>(),
        ),
        (
            "that never had sufficient data".into(),
            b.never
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

/// The composites' latest values (index points, or USD for a pooled composite),
/// with the value before and the changes, in a table of their own under the board.
fn composites(html: &mut String, fixings: &[Fixing], cutoff: Option<&str>) {
    let mut by: BTreeMap<&str, Vec<&Fixing>> = BTreeMap::new();
    for f in fixings.iter().filter(|f| f.grade.is_composite()) {
        by.entry(f.grade.as_str()).or_default().push(f);
    }
    let rows: Vec<(&str, &Vec<&Fixing>, &Fixing)> = by
        .iter()
        .filter_map(|(g, rows)| {
            let l = rows
                .iter()
                .filter(|f| f.value.is_some())
                .max_by_key(|f| f.date)?;
            Some((*g, rows, *l))
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        html,
        "<table class=board><tr><th class=l>composite</th><th class=l>method</th><th>{}</th><th>value</th><th>unit</th><th>previous</th><th>1 day</th><th>30 days</th><th>sufficient</th></tr>",
        fixed_at(cutoff)
    );
    for (g, all, f) in rows {
        let _ = writeln!(
            html,
            "<tr><td class=l>{}</td><td class=l>{}</td><td>{}</td><td>{:.4}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(g),
            esc(&f.method),
            f.date,
            f.value.unwrap_or(f64::NAN),
            match f.unit() {
                IndexUnit::UsdPerGpuHour => "USD / GPU-hour",
                _ => "index points",
            },
            previous(all, f),
            pct(f.change_1d),
            pct(f.change_30d),
            if f.sufficient { "yes" } else { "<span class=bad>no</span>" }
        );
    }
    let _ = writeln!(html, "</table>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use rentix_index::IndexId;

    fn day(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    /// `n` daily fixings of `grade` ending on `last`, valued `v`.
    fn run(grade: &str, last: &str, n: i64, v: f64) -> Vec<Fixing> {
        (0..n)
            .map(|i| Fixing::for_test(day(last) - chrono::Days::new(i as u64), grade, Some(v)))
            .collect()
    }

    /// The board's order, which the charts follow: a grade last fixed in 2022 comes
    /// after every current one whatever its name (it came first, by name, on real
    /// data); the H100 before the A100 (benchmark order), bare metal on demand first
    /// within a GPU, then the most-fed grade, then the name.
    #[test]
    fn grades_stand_current_first_benchmarks_first_most_fed_first() {
        let mut f = run("a100-pcie-40gb/vm/on-demand", "2022-06-01", 300, 1.1);
        f.extend(run("a100-sxm-80gb/vm/on-demand", "2025-06-30", 10, 1.5));
        f.extend(run("h100-sxm-80gb/vm/1m", "2025-06-30", 20, 2.1));
        f.extend(run("h100-sxm-80gb/vm/on-demand", "2025-06-30", 40, 2.2));
        f.extend(run(
            "h100-sxm-80gb/bare-metal/on-demand",
            "2025-06-30",
            5,
            2.4,
        ));
        f.extend(run("rtx-4090/container/on-demand", "2025-06-30", 90, 0.4));
        let featured = crate::html::featured_grades(&f);
        assert_eq!(
            featured,
            [
                "h100-sxm-80gb/bare-metal/on-demand",
                "h100-sxm-80gb/vm/on-demand",
                "h100-sxm-80gb/vm/1m"
            ]
        );
        let mut html = String::new();
        board(&mut html, &f, Some("24:00 UTC"));
        let pos = |s: &str| html.find(s).unwrap_or_else(|| panic!("{s} not in {html}"));
        assert!(pos("<b>h100-sxm-80gb</b>") < pos("<b>a100-sxm-80gb</b>"));
        assert!(pos("<b>a100-sxm-80gb</b>") < pos("<b>rtx-4090</b>"));
        // The 2022 grade is not on the board: it is listed apart with its date.
        assert!(!html.contains("<b>a100-pcie-40gb</b>"), "{html}");
        assert!(html.contains("1 grades whose latest value is more than 30 days before 2025-06-30"));
        assert!(html.contains("<code>a100-pcie-40gb/vm/on-demand</code>: 1.1000 on 2022-06-01"));
        // The first screen quotes the board's first row.
        assert_eq!(
            benchmark_latest(&f).unwrap(),
            (
                "h100-sxm-80gb/bare-metal/on-demand".into(),
                day("2025-06-30"),
                2.4
            )
        );
        // A benchmark GPU's grade last fixed in 2022 is not quoted over a current
        // grade (the first screen quoted it).
        let mut g = run("a100-sxm-80gb/bare-metal/on-demand", "2022-06-01", 30, 1.1);
        g.extend(run("rtx-4090/container/on-demand", "2025-06-30", 9, 0.4));
        assert_eq!(
            benchmark_latest(&g).unwrap().0,
            "rtx-4090/container/on-demand"
        );
        // Each row says when it was fixed and the value before it.
        assert!(html.contains("<th>fixed at<br><small>24:00 UTC</small></th>"));
        assert!(html.contains(
            "<td>2025-06-30</td><td>2.4000</td><td>2.4000 <small>(2025-06-29)</small></td>"
        ));
        // Tier-qualified grades have their own table (the operator section).
        let mut t = run("h100-sxm-80gb/bare-metal/on-demand", "2025-06-30", 2, 2.4);
        t.extend(run(
            "h100-sxm-80gb/bare-metal/on-demand/gold+",
            "2025-06-30",
            2,
            2.5,
        ));
        let mut tiers = String::new();
        board(&mut tiers, &t, None);
        assert!(!tiers.contains("gold+"), "{tiers}");
    }

    /// Composites have a table of their own under the board, with their unit, the
    /// value before and the changes (the board had none).
    #[test]
    fn composites_are_shown_with_their_previous_value() {
        let mut f = run("h100-sxm-80gb/bare-metal/on-demand", "2025-06-30", 2, 2.4);
        for (d, v) in [("2025-06-29", 100.0), ("2025-06-30", 101.5)] {
            f.push(Fixing {
                grade: IndexId::composite("h100-all", IndexUnit::Points),
                method: "jevons-chained".into(),
                ..Fixing::for_test(day(d), "x", Some(v))
            });
        }
        let mut html = String::new();
        board(&mut html, &f, None);
        assert!(html.contains("<td class=l>h100-all</td><td class=l>jevons-chained</td><td>2025-06-30</td><td>101.5000</td><td>index points</td><td>100.0000 <small>(2025-06-29)</small></td>"), "{html}");
    }
}
