//! `rentix report`: one self-contained HTML file (inline CSS, charts inlined as
//! base64 PNG, no script, no network) for an index run, a backtest, or a directory
//! holding both (the demo's layout). Every string that came from input data is
//! HTML-escaped.

use crate::format::{money, whole};
use crate::index_charts::index_charts;
use crate::ReportError;
use base64::Engine;
use chrono::NaiveDate;
use rentix_backtest::{BacktestResult, Side, StrategySummary};
use rentix_index::{read_fixings, Fixing, ForwardPoint};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Escapes text for HTML element content and attribute values.
pub(crate) fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

pub(crate) fn img(path: &Path, alt: &str) -> String {
    match std::fs::read(path) {
        Ok(bytes) => format!(
            "<figure><img alt=\"{}\" src=\"data:image/png;base64,{}\"></figure>\n",
            esc(alt),
            base64::engine::general_purpose::STANDARD.encode(bytes)
        ),
        Err(_) => String::new(),
    }
}

pub(crate) const CSS: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}\
h1{font-size:1.7em}h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}\
table{border-collapse:collapse;margin:1em 0;font-size:.9em}th,td{border:1px solid #ccc;padding:.3em .6em;text-align:right}\
th{background:#f3f3f3}td.l,th.l{text-align:left}figure{margin:1em 0}img{max-width:100%;border:1px solid #eee}\
pre{background:#f7f7f7;padding:1em;overflow-x:auto;font-size:.85em}.note{background:#fff8e1;border-left:4px solid #f0b400;padding:.6em 1em}\
.ok{color:#1a7f37;font-weight:600}.bad{color:#b42318;font-weight:600}\
table.card{border:2px solid #1f77b4;font-size:1em;max-width:100%}table.card th{width:14em;background:#eef5fb}\
.decision{font-size:1.15em;font-weight:600;padding:.6em 1em;border-radius:4px}.decision.hedge{background:#e6f4ea;border-left:6px solid #1a7f37}\
.decision.nohedge{background:#fdecea;border-left:6px solid #b42318}.decision.nodata{background:#fff8e1;border-left:6px solid #f0b400}.warn{color:#8a5a00}\
ul.glance{font-size:1.05em;background:#f3f6fa;padding:.6em 2em;border-radius:4px}ul.glance li{margin:.3em 0}\
.contents{background:#f3f6fa;padding:.5em 1em;border-radius:4px}.contents a{color:#1f5f99}table.board td{white-space:nowrap}";

/// What a report directory holds.
#[derive(Debug, Default)]
pub(crate) struct ReportInputs {
    /// `fixings.csv`, else `fixings.parquet`; `None` when neither exists.
    pub fixings: Option<PathBuf>,
    /// `methodology.toml`, shown in the report when present.
    pub methodology: Option<PathBuf>,
    /// A simulator's `truth.csv`: in the directory, else in `sim/` or `work/sim/`;
    /// `None` for a market without known truth.
    pub truth: Option<PathBuf>,
    /// `ingest_summary.json`, when present.
    pub ingest_summary: Option<PathBuf>,
    /// Backtest output directories (each holding `summary.json`): the directory
    /// itself, then its subdirectories in name order; empty when none.
    pub backtests: Vec<PathBuf>,
    /// A contract lab's output directory (holding comparison.json).
    pub lab: Option<PathBuf>,
    /// The directory has an intraday index (`intraday/fixings.parquet`).
    pub intraday: bool,
}

/// The fixings files of `dir` other than `chosen`, in name order: CSV files whose
/// header is a fixings file's (daily or intraday), and Parquet files named like
/// fixings (`*fixings*.parquet`), companions (`_forward`, `_tier_differentials`,
/// `_receipts`, `_restatements`) and archived vintages (`.v1`) left out. A report of
/// the directory reports one; these it names, so that none is passed over
/// silently (issue 49).
pub fn other_fixings(dir: &Path, chosen: Option<&Path>) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let companion = |stem: &str| {
        [
            "_forward",
            "_tier_differentials",
            "_tier_spreads",
            "_receipts",
            "_restatements",
            "_quarantine",
            "_coverage",
        ]
        .iter()
        .any(|c| stem.ends_with(c))
            || stem
                .rsplit_once(".v")
                .is_some_and(|(_, n)| n.parse::<u32>().is_ok())
    };
    // Compared as canonical paths: `--in real.csv` lists its directory as
    // `./real.csv`, which is the same file (the report named itself as left out).
    let chosen = chosen.and_then(|c| std::fs::canonicalize(c).ok());
    let mut out: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && std::fs::canonicalize(p).ok() != chosen)
        .filter(|p| {
            let stem = p
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string();
            if companion(&stem) {
                return false;
            }
            match p.extension().and_then(|e| e.to_str()) {
                Some("csv") => first_line(p).is_some_and(|h| {
                    h.starts_with("date,grade,value,method,")
                        || h.starts_with("date,fixed_at,grade,value,")
                }),
                Some("parquet") => stem.contains("fixings"),
                _ => false,
            }
        })
        .collect();
    out.sort();
    out
}

/// The first line of a file (at most 4 KiB read).
fn first_line(p: &Path) -> Option<String> {
    use std::io::Read;
    let mut buf = vec![0u8; 4096];
    let n = std::fs::File::open(p).ok()?.read(&mut buf).ok()?;
    let text = String::from_utf8_lossy(&buf[..n]).to_string();
    text.lines().next().map(str::to_string)
}

/// A paragraph naming the fixings files of the directory this report leaves out.
fn others_note(others: &[PathBuf], chosen: Option<&Path>) -> String {
    if others.is_empty() {
        return String::new();
    }
    let names: Vec<String> = others
        .iter()
        .map(|p| format!("<code>{}</code>", esc(&p.display().to_string())))
        .collect();
    let one = chosen.map_or_else(|| "fixings.csv".to_string(), |c| c.display().to_string());
    format!(
        "<p class=\"warn\">Also in this directory and not in this report: {} ({} fixings file(s)). Report one with <code>rentix report --in FILE</code>, or compare them side by side: <code>rentix report --in {} --in {}</code>.</p>\n",
        names.join(", "),
        others.len(),
        esc(&one),
        esc(&others[0].display().to_string())
    )
}

/// Finds the parts of a report in `dir`.
pub(crate) fn discover(dir: &Path) -> ReportInputs {
    let some = |p: PathBuf| p.exists().then_some(p);
    let mut backtests: Vec<PathBuf> = Vec::new();
    if dir.join("summary.json").exists() {
        backtests.push(dir.to_path_buf());
    }
    if let Ok(rd) = std::fs::read_dir(dir) {
        let mut subs: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir() && p.join("summary.json").exists())
            .collect();
        subs.sort();
        backtests.extend(subs);
    }
    ReportInputs {
        fixings: some(dir.join("fixings.csv")).or_else(|| some(dir.join("fixings.parquet"))),
        methodology: some(dir.join("methodology.toml")),
        truth: some(dir.join("truth.csv"))
            .or_else(|| some(dir.join("sim").join("truth.csv")))
            .or_else(|| some(dir.join("work").join("sim").join("truth.csv"))),
        ingest_summary: some(dir.join("ingest_summary.json")),
        backtests,
        lab: [dir.to_path_buf(), dir.join("contract_lab")]
            .into_iter()
            .find(|d| d.join("comparison.json").exists()),
        intraday: crate::intraday_section::intraday_file(dir).is_some(),
    }
}

/// The simulator's fair prices of `grades` (the lab's reader: a bad row is refused
/// naming its line, never skipped).
fn read_truth(
    path: &Path,
    grades: &[String],
) -> Result<BTreeMap<String, Vec<(NaiveDate, f64)>>, ReportError> {
    Ok(rentix_lab::read_truth(path)?
        .into_iter()
        .filter(|(g, _)| grades.contains(g))
        .map(|(g, s)| (g, s.iter().collect()))
        .collect())
}

/// The forward curves beside a fixings file (`<stem>_forward.<ext>`, CSV or Parquet
/// like the fixings); none when there is no such file.
fn read_forward(fixings: &Path) -> Result<Vec<ForwardPoint>, ReportError> {
    let p = rentix_index::Companions::of(fixings).forward();
    if !p.exists() {
        return Ok(Vec::new());
    }
    Ok(rentix_index::read_forward(&p)?)
}

/// Per-grade data-sufficiency figures.
struct GradeStats {
    grade: String,
    days: usize,
    by_level: [usize; 5],
    sufficient: usize,
    /// A benchmark the user brought: levels and sufficiency unknown.
    external: bool,
    median_contributors: f64,
    median_obs: f64,
}

/// The median of a grade's per-day counts (midpoint rule, as everywhere else).
/// A grade's group always holds at least one fixing, so the empty case is never
/// shown; it reads as 0 rather than failing the report.
fn median(v: &[f64]) -> f64 {
    rentix_core::stats::median(v).unwrap_or(0.0)
}

fn grade_stats(fixings: &[Fixing]) -> Vec<GradeStats> {
    let mut by: BTreeMap<&str, Vec<&Fixing>> = BTreeMap::new();
    for f in fixings {
        by.entry(f.grade.as_str()).or_default().push(f);
    }
    by.into_iter()
        .map(|(g, v)| {
            let mut by_level = [0usize; 5];
            for f in &v {
                by_level[f.level.map_or(0, |l| usize::from(l.number()))] += 1;
            }
            GradeStats {
                grade: g.to_string(),
                days: v.len(),
                by_level,
                sufficient: v.iter().filter(|f| f.sufficient).count(),
                external: v.iter().all(|f| crate::board::external(f)),
                median_contributors: median(
                    &v.iter()
                        .map(|f| f.n_contributors as f64)
                        .collect::<Vec<_>>(),
                ),
                median_obs: median(&v.iter().map(|f| f.n_obs as f64).collect::<Vec<_>>()),
            }
        })
        .collect()
}

/// Picks up to three grades worth charting, in the board's order
/// ([`crate::board::board_key`]): current grades first, benchmark GPUs first, bare
/// metal on demand first, then the most-fed. Composites are not charted here; a
/// benchmark the user brought, whatever its name, is charted by its values.
pub(crate) fn featured_grades(fixings: &[Fixing]) -> Vec<String> {
    let Some(last) = fixings.iter().map(|f| f.date).max() else {
        return Vec::new();
    };
    let mut by: BTreeMap<&str, Vec<&Fixing>> = BTreeMap::new();
    for f in fixings {
        by.entry(f.grade.as_str()).or_default().push(f);
    }
    let mut s: Vec<(&str, &Vec<&Fixing>)> = by
        .iter()
        .filter(|(g, rows)| {
            (g.contains('/') || rows.iter().all(|f| crate::board::external(f)))
                && !g.contains('+')
                && rows.iter().any(|f| f.value.is_some())
        })
        .map(|(g, rows)| (*g, rows))
        .collect();
    s.sort_by_cached_key(|(g, rows)| crate::board::board_key(g, rows, last));
    s.into_iter().take(3).map(|(g, _)| g.to_string()).collect()
}

/// The index part: a summary, the board, charts of the featured grades, their
/// error against the simulator's truth, data sufficiency and the methodology.
fn index_section(
    html: &mut String,
    inputs: &ReportInputs,
    chart_dir: &Path,
) -> Result<(), ReportError> {
    let Some(path) = &inputs.fixings else {
        return Ok(());
    };
    let fixings = read_fixings(path)?;
    write_index_summary(html, &fixings);
    let methodology = crate::index_notes::methodology_of(inputs.methodology.as_deref(), &fixings);
    let cutoff = methodology.as_ref().map(crate::index_notes::cutoff_text);
    crate::board::board(html, &fixings, cutoff.as_deref());
    crate::index_notes::write_empty_rows(html, &fixings);
    crate::index_notes::write_restatements(html, path);
    let featured = featured_grades(&fixings);
    let truth = inputs
        .truth
        .as_ref()
        .map(|t| read_truth(t, &featured))
        .transpose()?
        .unwrap_or_default();
    let forward = read_forward(path)?;
    let written = index_charts(chart_dir, &fixings, &featured, &truth, &forward)?;
    for stem in &written {
        html.push_str(&img(&chart_dir.join(format!("{stem}.png")), stem));
    }
    if !truth.is_empty() {
        write_truth_errors(html, &fixings, &featured, &truth);
    }
    write_sufficiency_table(html, &fixings);
    write_feed_health(html, &fixings);
    if let Some(m) = &inputs.methodology {
        write_methodology(html, m, &fixings);
    }
    Ok(())
}

/// The index's heading, what the fixings cover, and how to read a fixing's level.
fn write_index_summary(html: &mut String, fixings: &[Fixing]) {
    let _ = writeln!(html, "<h2 id=\"index\">The index</h2>");
    let _ = writeln!(
        html,
        "<p>{} fixings of {} grades and composites from {} to {}, methodology {}.</p>",
        fixings.len(),
        fixings
            .iter()
            .map(|f| f.grade.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        fixings
            .first()
            .map(|f| f.date.to_string())
            .unwrap_or_default(),
        fixings
            .last()
            .map(|f| f.date.to_string())
            .unwrap_or_default(),
        esc(&versions_line(fixings))
    );
    let _ = writeln!(
        html,
        "<p class=\"note\">Every fixing says which tier fixed it: <b>level 1</b> trades, <b>level 2</b> firm offers, \
         <b>level 3</b> listings (adjusted by the listing-to-trade spread when one could be measured), <b>level 4</b> \
         the last value carried forward. A fixing is <i>sufficient</i> when the methodology's data rules held \
         (enough observations, valid days and contributors).</p>"
    );
}

/// The featured grades' mean absolute and mean error against the simulator's
/// fair prices, over the days both have.
fn write_truth_errors(
    html: &mut String,
    fixings: &[Fixing],
    featured: &[String],
    truth: &BTreeMap<String, Vec<(NaiveDate, f64)>>,
) {
    let _ = writeln!(html, "<h3>Error against the simulator's truth</h3><table><tr><th class=l>grade</th><th>days</th><th>mean abs. error</th><th>mean error</th></tr>");
    for g in featured {
        let Some(t) = truth.get(g) else { continue };
        let tmap: BTreeMap<NaiveDate, f64> = t.iter().copied().collect();
        let errs: Vec<f64> = fixings
            .iter()
            .filter(|f| &f.grade == g)
            .filter_map(|f| Some(f.value? - tmap.get(&f.date)?))
            .collect();
        if errs.is_empty() {
            continue;
        }
        let n = errs.len() as f64;
        let _ = writeln!(
            html,
            "<tr><td class=l>{}</td><td>{}</td><td>{:.4}</td><td>{:+.4}</td></tr>",
            esc(g),
            errs.len(),
            errs.iter().map(|e| e.abs()).sum::<f64>() / n,
            errs.iter().sum::<f64>() / n
        );
    }
    let _ = writeln!(html, "</table>");
}

/// Data sufficiency by grade (folded): the share of days fixed at each level,
/// sufficient, and the median contributors and observations.
/// Findings shown in the report; the rest are counted.
const HEALTH_SHOWN: usize = 25;

/// The fixings' side of `rentix health`: level breaks and sufficiency drops, the
/// latest first, each dated with its evidence (contributor findings need the store).
fn write_feed_health(html: &mut String, fixings: &[Fixing]) {
    use rentix_index::health::{feed_health, HealthOptions, Reports};
    let h = feed_health(&Reports::new(), fixings, &HealthOptions::default());
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &h.findings {
        *kinds.entry(f.kind).or_default() += 1;
    }
    let by: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let _ = writeln!(
        html,
        "<details><summary><b>Feed health</b>: {} (click to open)</summary><p>A level break is a sufficient value 10% or more from the grade's previous one and five robust standard deviations of its previous 30 daily moves; a sufficiency drop is a grade sufficient the day before and on nine in ten of its previous 30 rows that is not. Contributors gone silent or whose prices shifted need the store: <code>rentix health --store STORE --fixings FIXINGS</code>.</p>",
        if by.is_empty() {
            "nothing to note".to_string()
        } else {
            by.join(", ")
        }
    );
    if !h.findings.is_empty() {
        let _ = writeln!(
            html,
            "<table><tr><th class=l>date</th><th class=l>finding</th><th class=l>grade</th><th class=l>evidence</th></tr>"
        );
        for f in h.findings.iter().rev().take(HEALTH_SHOWN) {
            let _ = writeln!(
                html,
                "<tr><td class=l>{}</td><td class=l>{}</td><td class=l>{}</td><td class=l>{}</td></tr>",
                f.date,
                f.kind,
                esc(&f.grade),
                esc(&f.evidence)
            );
        }
        let _ = writeln!(html, "</table>");
        if h.findings.len() > HEALTH_SHOWN {
            let _ = writeln!(
                html,
                "<p>... and {} earlier findings.</p>",
                h.findings.len() - HEALTH_SHOWN
            );
        }
    }
    let _ = writeln!(html, "</details>");
}

fn write_sufficiency_table(html: &mut String, fixings: &[Fixing]) {
    let stats = grade_stats(fixings);
    let _ = writeln!(
        html,
        "<details><summary><b>Data sufficiency by grade</b>: {} grades and composites, {} with no sufficient fixing (click to open)</summary>",
        stats.len(),
        stats.iter().filter(|g| g.sufficient == 0).count()
    );
    let _ = writeln!(html, "<table><tr><th class=l>grade</th><th>days</th><th>L1 trades</th><th>L2 firm</th><th>L3 listings</th><th>L4 carried</th><th>no value</th><th>sufficient</th><th>median contributors</th><th>median obs.</th></tr>");
    for g in stats {
        let p = |n: usize| {
            if g.external {
                "unknown".to_string()
            } else {
                rentix_core::stats::percent(n as f64 / g.days.max(1) as f64)
            }
        };
        let _ = writeln!(
            html,
            "<tr><td class=l>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&g.grade),
            g.days,
            p(g.by_level[1]),
            p(g.by_level[2]),
            p(g.by_level[3]),
            p(g.by_level[4]),
            p(g.by_level[0]),
            p(g.sufficient),
            g.median_contributors,
            g.median_obs
        );
    }
    let _ = writeln!(html, "</table></details>");
}

/// The methodology file as published (folded); nothing when it cannot be read.
fn write_methodology(html: &mut String, path: &Path, fixings: &[Fixing]) {
    if let Ok(text) = std::fs::read_to_string(path) {
        let _ = writeln!(
            html,
            "<details><summary><b>Methodology</b> {} (the file, as published: click to open)</summary><pre>{}</pre></details>",
            esc(&versions_line(fixings)),
            esc(&text)
        );
    }
}

/// The methodology versions a fixings file was published under.
fn versions_line(fixings: &[Fixing]) -> String {
    let v: std::collections::BTreeSet<&str> = fixings
        .iter()
        .map(|f| f.methodology_version.as_str())
        .collect();
    v.into_iter().collect::<Vec<_>>().join(", ")
}

/// The report's first screen: one line per part, each linked to its section. The
/// index's latest benchmark fixing, each backtest's decision, the lab's verdict.
fn at_a_glance(inputs: &ReportInputs) -> String {
    let mut lines = Vec::new();
    if let Some(f) = inputs.fixings.as_ref().and_then(|p| read_fixings(p).ok()) {
        let suff = f.iter().filter(|x| x.sufficient).count();
        let bench = crate::board::benchmark_latest(&f);
        lines.push(format!(
            "<a href=\"#index\">index</a>: {} fixings, {:.0}% sufficient{}",
            f.len(),
            100.0 * suff as f64 / f.len().max(1) as f64,
            bench
                .map(|(g, d, v)| format!(
                    "; <code>{}</code> {v:.4} USD per GPU-hour on {d}",
                    esc(&g)
                ))
                .unwrap_or_default()
        ));
    }
    for b in &inputs.backtests {
        let name = b
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        if let Ok(v) = BacktestResult::read(&b.join("summary.json")) {
            lines.push(format!(
                "<a href=\"#{}\">{}</a>: {}",
                esc(&anchor(&name)),
                esc(name.trim_start_matches("backtest_")),
                esc(&v.recommendation.reason)
            ));
        }
    }
    if let Some(l) = inputs
        .lab
        .as_ref()
        .and_then(|l| crate::lab_section::verdict(l))
    {
        lines.push(format!("<a href=\"#lab\">contract lab</a>: {}", esc(&l)));
    }
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "<h2 id=\"glance\">At a glance</h2><ul class=glance>{}</ul>",
        lines
            .iter()
            .map(|l| format!("<li>{l}</li>"))
            .collect::<String>()
    )
}

/// A number with `digits` decimals, `n/a` when absent or not finite.
fn num(v: Option<f64>, digits: usize) -> String {
    match v.filter(|x| x.is_finite()) {
        Some(x) => format!("{x:.digits$}"),
        None => "n/a".into(),
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or("n/a".into(), rentix_core::stats::percent)
}

/// A mean hedge ratio this far from one hedges a basis that moves with the index.
const RATIO_NOT_ONE: f64 = 0.15;
/// A mean hedge ratio below this holds no contracts to speak of.
pub(crate) const NO_RATIO: f64 = 0.005;

fn reading(s: &StrategySummary, side: Side) -> String {
    let op = s.operational_loss.described(money);
    let vm = s.operational_loss.volume_mismatch_usd;
    let mut t = String::new();
    // A ratio fitted on every month is scored on the months it was fitted on; its
    // cross-validated figure (each month hedged at the ratio of the others) is the
    // one the decision and the headline use, and comes first here: the card said
    // 64% at the top and "removed 69%" below it, of one strategy.
    let cv = s
        .cross_validated
        .as_ref()
        .filter(|c| c.effectiveness.is_some());
    let (e, ci) = match cv {
        Some(c) => (c.effectiveness, c.effectiveness_interval.as_ref()),
        None => (
            s.effectiveness,
            s.confidence_intervals.effectiveness.as_ref(),
        ),
    };
    if let Some(e) = e {
        let _ = write!(
            t,
            "With the <b>{}</b> strategy{} the hedge {} <b>{}</b> {} the month-to-month variance of your rent P&L",
            esc(s.strategy.as_str()),
            if cv.is_some() {
                ", each month hedged at the ratio fitted on the other months (cross-validated),"
            } else {
                ""
            },
            if e < 0.0 { "added" } else { "removed" },
            rentix_core::stats::percent(e.abs()),
            if e < 0.0 { "to" } else { "of" }
        );
        if let Some(ci) = ci {
            let _ = write!(
                t,
                " (95% bootstrap interval {} to {})",
                rentix_core::stats::percent(ci.low),
                rentix_core::stats::percent(ci.high)
            );
        }
        if let (Some(_), Some(in_sample)) = (cv, s.effectiveness) {
            let _ = write!(
                t,
                "; at the ratio fitted on all months, scored on the months it was fitted on (in sample, never deciding), {}",
                rentix_core::stats::percent(in_sample)
            );
        }
        t.push_str(". ");
    }
    if let (Some(r), Some(rl)) = (s.correlation_changes, s.correlation_levels) {
        let _ = write!(
            t,
            "Monthly changes of your rent and of the index correlate at {r:.2}; their levels at {rl:.2}. Judge the hedge on the first number: levels of two trending prices correlate even when their changes do not. "
        );
    }
    if let Some(b) = &s.basis {
        let verb = if side == Side::Pay { "pay" } else { "earn" };
        // Against a hedge at a ratio other than one the basis moves with the index
        // by construction (a rent of 0.41 times the index plus 1), and the hedge
        // takes that in: "a moving one weakens it" stood above a hedge removing
        // >99.99%.
        let why = if s.hedge_ratio < NO_RATIO {
            format!(
                "at this strategy's ratio of {:.2} it held no contracts, and none of it is hedged",
                s.hedge_ratio
            )
        } else if (s.hedge_ratio - 1.0).abs() > RATIO_NOT_ONE {
            format!(
                "at this hedge's ratio of {:.2} the part of it that moves with the index is hedged too; the effectiveness above counts what is left",
                s.hedge_ratio
            )
        } else {
            "a steady premium does not weaken a hedge, a moving one does".into()
        };
        let _ = write!(
            t,
            "You {verb} on average {:+.3} USD per GPU-hour against the index (basis), moving by {:.3} from month to month: {why}. ",
            b.mean, b.std
        );
    }
    match &s.regression {
        Some(r) if r.passes_80_125 => {
            t.push_str("The hedge passes the 80-125% regression test used in hedge accounting. ")
        }
        Some(_) => t.push_str(
            "The hedge does not pass the 80-125% regression test used in hedge accounting. ",
        ),
        None => {}
    }
    let _ = write!(
        t,
        "Operational events cost {}: the hedge does not cover them. They also left hedged GPU-hours without rent to offset, worth {} of futures P&L (volume mismatch).",
        op,
        money(vm)
    );
    t
}

/// One backtest's part: what was hedged, the hedge card of the featured strategy,
/// every strategy's figures, the perp, sensitivities and what a hedge cannot cover.
fn backtest_section(html: &mut String, dir: &Path) -> Result<(), ReportError> {
    let v = BacktestResult::read(&dir.join("summary.json"))?;
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    write_backtest_heading(html, &v, &name);
    let featured = v.decided_strategy();
    if let Some(s) = featured {
        crate::hedge_card::hedge_card(html, &v, s);
        let _ = writeln!(html, "<p class=\"note\">{}</p>", reading(s, v.side));
    }
    write_strategy_table(html, &v);
    perp_section(html, &v);
    if !v.entry_sensitivity.is_empty() {
        write_entry_sensitivity(html, &v);
    }
    if !v.months_left_out.is_empty() {
        write_months_left_out(html, &v);
    }
    if !v.restated_after_settlement.is_empty() {
        write_restated_months(html, &v);
    }
    for (stem, alt) in [
        ("rent_vs_index", "rent against index"),
        ("basis", "basis over time"),
        ("pnl_histogram", "hedged and unhedged P&L"),
        ("rolling_effectiveness", "rolling effectiveness"),
        ("waterfall", "P&L waterfall"),
    ] {
        html.push_str(&img(&dir.join(format!("{stem}.png")), alt));
    }
    if let Some(s) = featured {
        write_operational_loss(html, s);
    }
    Ok(())
}

/// The backtest's heading (anchored by directory name) and what it hedged: side,
/// contract, underlying, periods and the futures entry-price assumption.
fn write_backtest_heading(html: &mut String, v: &BacktestResult, name: &str) {
    let date = |d: Option<NaiveDate>| d.map(|d| d.to_string()).unwrap_or_default();
    let _ = writeln!(
        html,
        "<h2 id=\"{}\">Hedge backtest: {}</h2><p>Rent side: <b>{}</b>. Contract: {} on <code>{}</code>, {} monthly periods from {} to {}. Futures entry price assumption: <b>{}</b>.</p>",
        esc(&anchor(name)),
        esc(name),
        if v.side == Side::Pay { "pays rent (producer)" } else { "earns rent (neocloud)" },
        esc(&v.contract),
        esc(&v.underlying),
        v.periods,
        esc(&date(v.first_period)),
        esc(&date(v.last_period)),
        esc(&v.entry_assumption)
    );
}

/// One row per strategy: ratio, effectiveness, correlations, the regression test,
/// tracking error, risk and peak cash need.
fn write_strategy_table(html: &mut String, v: &BacktestResult) {
    let _ = writeln!(html, "<table><tr><th class=l>strategy</th><th>next month: ratio</th><th>next month: contracts</th><th>mean ratio applied</th><th>effectiveness [95% CI]</th><th>corr. changes</th><th>corr. levels</th><th>regression slope / R&sup2; / t</th><th>regression test (slope 0.8&ndash;1.25, R&sup2; &ge; 0.8)</th><th>dollar offset</th><th>tracking error (annual)</th><th>VaR 95</th><th>CVaR 95</th><th>peak cash need</th></tr>");
    for s in &v.strategies {
        let ci_txt = match &s.confidence_intervals.effectiveness {
            Some(ci) => format!(" [{:.2}, {:.2}]", ci.low, ci.high),
            None => String::new(),
        };
        // The in-sample benchmark is judged (and decided) cross-validated.
        let ci_txt = match &s.cross_validated {
            Some(cv) => format!(
                "{ci_txt} in sample; {}{} cross-validated",
                num(cv.effectiveness, 3),
                cv.effectiveness_interval
                    .map(|ci| format!(" [{:.2}, {:.2}]", ci.low, ci.high))
                    .unwrap_or_default()
            ),
            None => ci_txt,
        };
        let reg = s.regression.as_ref();
        let pass = match reg.map(|r| r.passes_80_125) {
            Some(true) => "<span class=ok>pass</span>",
            Some(false) => "<span class=bad>fail</span>",
            None => "",
        };
        let _ = writeln!(
            html,
            "<tr><td class=l>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}{}</td><td>{}</td><td>{}</td><td>{} / {} / {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(s.strategy.as_str()),
            num(s.next_hedge_ratio, 2),
            s.next_contracts.map_or(String::new(), |n| n.to_string()),
            num(Some(s.hedge_ratio), 3),
            num(s.effectiveness, 3),
            ci_txt,
            num(s.correlation_changes, 3),
            num(s.correlation_levels, 3),
            num(reg.map(|r| r.slope), 2),
            num(reg.map(|r| r.r2), 2),
            // An exact fit's t is +-f64::MAX in the summary: shown as such, not
            // as 309 digits.
            match reg.map(|r| r.slope_t) {
                Some(t) if t.abs() == f64::MAX => "exact fit".to_string(),
                t => num(t, 1),
            },
            pass,
            pct(s.dollar_offset),
            num(s.tracking_error, 3),
            whole(s.var_95),
            whole(s.cvar_95),
            whole(Some(s.margin.peak_cash_need))
        );
    }
    let _ = writeln!(html, "</table>");
}

/// How the one-to-one result depends on the futures entry-price assumption.
fn write_entry_sensitivity(html: &mut String, v: &BacktestResult) {
    let _ = writeln!(html, "<p>How the one-to-one result depends on the futures entry-price assumption (no futures price history exists):</p><table><tr><th class=l>entry price</th><th>effectiveness</th><th>mean futures P&L per month</th><th>of which entry carry</th><th>months without a forward</th></tr>");
    for e in &v.entry_sensitivity {
        let _ = writeln!(
            html,
            "<tr><td class=l>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&e.assumption),
            num(e.effectiveness, 3),
            whole(e.mean_futures_pnl),
            whole(e.mean_entry_carry_pnl),
            e.periods_on_fallback
        );
    }
    let _ = writeln!(html, "</table>");
}

/// The rent file's months that are not hedge periods, why, and their operational
/// loss.
fn write_months_left_out(html: &mut String, v: &BacktestResult) {
    let _ = writeln!(html, "<p>Months of the rent file that are not hedge periods:</p><table><tr><th class=l>month</th><th class=l>why</th><th>operational loss</th></tr>");
    for l in &v.months_left_out {
        let _ = writeln!(
            html,
            "<tr><td class=l>{}</td><td class=l>{}</td><td>{}</td></tr>",
            l.month,
            esc(&l.reason),
            whole(Some(l.operational_loss))
        );
    }
    let _ = writeln!(html, "</table>");
}

/// Settled months restated after settlement: the settlement as first published
/// beside what today's fixings would give.
fn write_restated_months(html: &mut String, v: &BacktestResult) {
    let rs = &v.restated_after_settlement;
    let _ = writeln!(html, "<p class=\"note\">{} settled month(s) were restated after settlement. The backtest keeps each settlement as first published; today's fixings would give:</p><table><tr><th class=l>month</th><th>settled</th><th>restated</th></tr>", rs.len());
    for r in rs {
        let _ = writeln!(
            html,
            "<tr><td class=l>{}</td><td>{}</td><td>{}</td></tr>",
            r.month,
            num(Some(r.settlement), 3),
            num(r.restated_settlement, 3)
        );
    }
    let _ = writeln!(html, "</table>");
}

/// What the hedge can never cover: the featured strategy's operational losses by
/// kind, in and outside hedge periods, and the GPU-hours lost.
fn write_operational_loss(html: &mut String, s: &StrategySummary) {
    let op = &s.operational_loss;
    let _ = writeln!(html, "<h3>What the hedge can never cover</h3><table><tr><th class=l>operational loss</th><th>USD</th></tr>");
    for (k, val) in &op.by_kind {
        let _ = writeln!(
            html,
            "<tr><td class=l>{}</td><td>{}</td></tr>",
            esc(k),
            whole(Some(*val))
        );
    }
    let _ = writeln!(
        html,
        "<tr><td class=l><b>total in hedge periods</b></td><td><b>{}</b></td></tr><tr><td class=l>in months that are not hedge periods</td><td>{}</td></tr><tr><td class=l>GPU-hours lost</td><td>{}</td></tr></table>",
        whole(Some(op.total_usd)),
        whole(Some(op.outside_periods_usd)),
        whole(Some(op.lost_gpu_hours))
    );
}

/// A perpetual swap run beside the futures: its decision, and each strategy's
/// effectiveness beside the futures', with the funding the futures do not pay.
fn perp_section(html: &mut String, v: &BacktestResult) {
    let Some(perp) = &v.perp else {
        return;
    };
    let _ = writeln!(
        html,
        "<h3>Perpetual swap beside the futures, on {}</h3><p><b>{}</b></p><p class=\"note\">Terms of {}, on the index the futures settle on: mark = index + premium ({}), funding paid in full every {} hours, rebalanced every {} day(s) to what is left of the month to deliver. A premium of 0.01 USD per GPU-hour held throughout would cost {} USD per GPU-hour hedged a month. A perp has no monthly-average mismatch with the rent but pays funding; the futures pay none.</p>",
        esc(&v.underlying),
        esc(&perp.recommendation.reason),
        esc(&perp.spec.name),
        esc(&perp.premium),
        perp.spec.funding_period_hours,
        perp.spec.rebalance_days,
        num(Some(0.01 * perp.funding_per_unit_premium), 4)
    );
    if let Some(w) = &perp.recommendation.warning {
        let _ = writeln!(html, "<p class=\"warn\">{}</p>", esc(w));
    }
    let _ = writeln!(html, "<table><tr><th class=l>strategy</th><th>futures effectiveness</th><th>perp effectiveness [95% CI]</th><th>perp funding</th><th>perp fees</th><th>futures fees</th><th>perp peak cash need</th><th>futures peak cash need</th></tr>");
    for s in &perp.strategies {
        let fut = v.strategy(s.strategy);
        let ci = s
            .confidence_intervals
            .effectiveness
            .map(|ci| format!(" [{:.2}, {:.2}]", ci.low, ci.high))
            .unwrap_or_default();
        let _ = writeln!(
            html,
            "<tr><td class=l>{}</td><td>{}</td><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(s.strategy.as_str()),
            num(fut.and_then(|f| f.effectiveness), 3),
            num(s.effectiveness, 3),
            ci,
            whole(Some(s.total_funding_pnl)),
            whole(Some(s.total_fees)),
            whole(fut.map(|f| f.total_fees)),
            whole(Some(s.margin.peak_cash_need)),
            whole(fut.map(|f| f.margin.peak_cash_need))
        );
    }
    let _ = writeln!(html, "</table>");
}

/// Where the data came from: rows read, accepted, quarantined by reason, per file.
/// Provenance, so it closes the report rather than opening it.
fn inputs_section(html: &mut String, p: &Path) -> Result<(), ReportError> {
    let v = read_ingest_summary(p)?;
    let _ = writeln!(
        html,
        "<h2 id=\"inputs\">Inputs</h2><p>Rows read {}, accepted {}, quarantined {}, duplicates {}.</p>",
        v.rows_read, v.accepted, v.quarantined, v.duplicates
    );
    if !v.files.is_empty() {
        let _ = writeln!(html, "<table><tr><th class=l>input file</th><th class=l>SHA-256</th><th>rows read</th><th>accepted</th><th>quarantined</th><th>duplicates</th></tr>");
        for f in &v.files {
            let _ = writeln!(
                html,
                "<tr><td class=l>{}</td><td class=l><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&f.path),
                esc(&f.input_sha256),
                f.rows_read,
                f.accepted,
                f.quarantined,
                f.duplicates
            );
        }
        let _ = writeln!(html, "</table>");
    }
    let _ = writeln!(
        html,
        "<table><tr><th class=l>quarantine reason</th><th>rows</th></tr>"
    );
    for (k, n) in &v.quarantined_by_reason {
        let _ = writeln!(html, "<tr><td class=l>{}</td><td>{}</td></tr>", esc(k), n);
    }
    let _ = writeln!(html, "</table>");
    Ok(())
}

/// One line of links to the report's sections, so a hedger reaches the hedge card
/// without scrolling past the index.
fn contents(inputs: &ReportInputs) -> String {
    let mut links = Vec::new();
    if inputs.fixings.is_some() {
        links.push("<a href=\"#index\">the board</a>".to_string());
    }
    for b in &inputs.backtests {
        let name = b
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        links.push(format!(
            "<a href=\"#{}\">hedge card: {}</a>",
            esc(&anchor(&name)),
            esc(name.trim_start_matches("backtest_"))
        ));
    }
    if inputs.lab.is_some() {
        links.push("<a href=\"#lab\">contract lab</a>".to_string());
    }
    if inputs.intraday {
        links.push("<a href=\"#intraday\">intraday index</a>".to_string());
    }
    if inputs.ingest_summary.is_some() {
        links.push("<a href=\"#inputs\">inputs</a>".to_string());
    }
    if links.len() < 2 {
        return String::new();
    }
    format!("<p class=\"contents\">{}</p>", links.join(" &middot; "))
}

/// An HTML id from a directory name: letters, digits, `-` and `_` only.
fn anchor(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("bt-{s}")
}

/// Reads an ingest summary with the ingest crate's own type: a renamed field is an
/// error naming it, not a silent gap.
fn read_ingest_summary(p: &Path) -> Result<rentix_store::IngestSummary, ReportError> {
    let input = |detail: String| ReportError::Input {
        path: p.to_path_buf(),
        detail,
    };
    let text = rentix_core::read_text(p, rentix_core::MAX_TABLE_BYTES)
        .map_err(|e| input(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| input(format!("not an ingest summary: {e}")))
}

/// The report's title, named for its reader: an index, a hedge, a contract lab, or
/// all of them (the demo's).
fn title(inputs: &ReportInputs) -> &'static str {
    match (
        inputs.fixings.is_some(),
        !inputs.backtests.is_empty(),
        inputs.lab.is_some(),
    ) {
        (true, false, false) => "rentix: GPU rental index report",
        (false, true, false) => "rentix: hedge report",
        (false, false, true) => "rentix: contract design lab",
        _ => "rentix: GPU rental index and hedge report",
    }
}

/// Renders the report of `in_dir` to `out` (charts for the index part are drawn
/// into `in_dir/charts`).
pub fn render_report(in_dir: &Path, out: &Path) -> Result<(), ReportError> {
    if !in_dir.exists() {
        return Err(ReportError::Usage(format!(
            "{} does not exist",
            in_dir.display()
        )));
    }
    // A fixings file itself (CSV or Parquet, any name): the index report of it.
    let (inputs, in_dir) = if in_dir.is_file() {
        let dir = in_dir
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let mut inputs = discover(dir);
        inputs.fixings = Some(in_dir.to_path_buf());
        inputs.backtests.clear();
        inputs.lab = None;
        (inputs, dir)
    } else {
        (discover(in_dir), in_dir)
    };
    if inputs.fixings.is_none() && inputs.backtests.is_empty() && inputs.lab.is_none() {
        return Err(ReportError::Usage(format!(
            "{} holds neither fixings.csv (or fixings.parquet), a backtest's summary.json nor a contract lab's comparison.json; pass a fixings file of another name itself (report --in real.csv)",
            in_dir.display()
        )));
    }
    let mut html = String::new();
    let title = title(&inputs);
    let _ = write!(
        html,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title><style>{CSS}</style></head><body>\n<h1>{title}</h1>\n"
    );
    if !inputs.backtests.is_empty() {
        let _ = writeln!(
            html,
            "<p>A rental price hedge offsets changes in rent. It does not fix a failed deployment or make a customer pay: \
             operational losses are reported beside the hedge, never netted into basis.</p>"
        );
    }
    html.push_str(&at_a_glance(&inputs));
    html.push_str(&contents(&inputs));
    html.push_str(&others_note(
        &other_fixings(in_dir, inputs.fixings.as_deref()),
        inputs.fixings.as_deref(),
    ));
    index_section(&mut html, &inputs, &in_dir.join("charts"))?;
    crate::intraday_section::intraday_section(&mut html, in_dir)?;
    crate::operator_section::operator_section(&mut html, in_dir, inputs.fixings.as_deref())?;
    for b in &inputs.backtests {
        backtest_section(&mut html, b)?;
        crate::operator_section::cost_decomposition_section(&mut html, b)?;
    }
    if let Some(lab) = &inputs.lab {
        crate::lab_section::lab_section(&mut html, lab)?;
    }
    if let Some(p) = &inputs.ingest_summary {
        inputs_section(&mut html, p)?;
    }
    html.push_str("<hr><p><small>Generated by rentix. Self-contained: no script, no external resource.</small></p></body></html>\n");
    rentix_table::write_atomic(out, |w| {
        w.write_all(html.as_bytes())
            .map_err(|source| rentix_table::TableError::Write {
                path: out.to_path_buf(),
                source,
            })
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report's own fixings file is not "also in this directory", however its
    /// path is written (`--in real.csv` against the listing's `./real.csv`: the
    /// report named itself as left out); another fixings file is.
    #[test]
    fn the_chosen_file_is_not_named_as_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("sub")).unwrap();
        for f in ["real.csv", "other.csv"] {
            std::fs::write(d.join(f), "date,grade,value,method,level\n").unwrap();
        }
        let chosen = d.join("sub/../real.csv");
        assert_eq!(other_fixings(d, Some(&chosen)), [d.join("other.csv")]);
    }

    #[test]
    fn escaping() {
        assert_eq!(
            esc("<script>alert('x')</script> & \""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;"
        );
    }

    #[test]
    fn the_sufficiency_table_uses_the_one_median() {
        // Fixed on 3 contributors one day and 4 the next: the median is 3.5 (the
        // report's own median said 4, the upper middle value).
        assert_eq!(median(&[4.0, 3.0]), 3.5);
        assert_eq!(median(&[5.0, 1.0, 3.0]), 3.0);
    }
}
