//! Feed health: what an administrator watches between publications (IOSCO
//! principle 18's oversight), each finding dated and with its evidence.
//!
//! - `contributor_silent`: a contributor that reported on most days stopped for
//!   `silent_days` or more (dated its first missing day; whether and when it came
//!   back).
//! - `contributor_jump`: a contributor's daily median price in a grade moved by
//!   `jump` or more against the median of its own previous `history_days` days, and
//!   stayed there for the next days it reported (a level shift, not one odd print).
//! - `sufficiency_drop`: a published grade that was sufficient on its previous
//!   row and on nine in ten of its previous 30 (at least five) is not.
//! - `level_break`: a sufficient published value that moved by `level_break` or
//!   more from the grade's previous sufficient value, and by five robust standard
//!   deviations of its previous 30 day-on-day moves (a move out of character; not
//!   before it has ten).
//!
//! Coverage per grade and settlement month: days published and days sufficient.
//! Contributor findings read the store; the others read the published fixings.

use crate::error::IndexError;
use crate::Fixing;
use chrono::{Datelike, Days, NaiveDate};
use std::collections::BTreeMap;

/// Thresholds of [`feed_health`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HealthOptions {
    /// Days without an observation that make a regular contributor silent.
    pub silent_days: u32,
    /// Relative move of a contributor's price against its own history.
    pub jump: f64,
    /// Days of a contributor's history its price is compared with.
    pub history_days: u32,
    /// Relative day-on-day move of a published value that is a level break.
    pub level_break: f64,
}

impl Default for HealthOptions {
    fn default() -> Self {
        Self {
            silent_days: 5,
            jump: 0.15,
            history_days: 14,
            level_break: 0.10,
        }
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The day it happened.
    pub date: NaiveDate,
    /// `contributor_silent`, `contributor_jump`, `sufficiency_drop`, `level_break`,
    /// `grade_stopped`.
    pub kind: &'static str,
    /// The grade (empty for a silence, which is the contributor's).
    pub grade: String,
    /// The contributor (empty for the fixings' findings).
    pub contributor: String,
    /// The numbers behind it, for a person.
    pub evidence: String,
}

/// A grade's coverage in one settlement month.
#[derive(Debug, Clone, PartialEq)]
pub struct MonthCoverage {
    /// The grade.
    pub grade: String,
    /// `YYYY-MM`.
    pub month: String,
    /// Days of the month with a published row.
    pub days: usize,
    /// Of those, days with a sufficient value.
    pub sufficient: usize,
}

/// What [`feed_health`] found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Health {
    /// Findings by date, then kind, grade and contributor.
    pub findings: Vec<Finding>,
    /// Coverage per grade and month (empty without fixings).
    pub coverage: Vec<MonthCoverage>,
    /// Contributors and grades read.
    pub contributors: usize,
    /// The last fixing date of the store.
    pub through: Option<NaiveDate>,
}

/// What one contributor reported in one grade: its prices per fixing date.
pub type Reports = BTreeMap<(String, String), BTreeMap<NaiveDate, Vec<f64>>>;

/// Reads a store's observations as [`Reports`]: `(contributor, grade)` -> fixing
/// date -> prices (USD per GPU-hour), contributors as written (trimmed, lowercase).
pub fn reports_of(store: &rentix_store::Store) -> Result<Reports, IndexError> {
    reports_between(store, None, None)
}

/// [`reports_of`] the fixing dates from `from` through `to`: only the partitions of
/// those dates are read (a damaged month outside them stops nothing), and no
/// price after `to` is seen (health as of `to` knows nothing later).
pub fn reports_between(
    store: &rentix_store::Store,
    from: Option<NaiveDate>,
    to: Option<NaiveDate>,
) -> Result<Reports, IndexError> {
    let mut out: Reports = BTreeMap::new();
    // The columns fixing reads, the repeated text as codes: each (contributor,
    // grade) pair of a partition is keyed once (a key, a lowercased name and a
    // grade's text, and a map search per row were a fifth of a full index run),
    // and no row is built (building every row was a third of a run's serial
    // end at two cores).
    let mut bad = Ok(());
    store.for_each_fixing_part(from, to, |delivery| match delivery {
        rentix_store::Delivery::Part(part) => {
            if bad.is_ok() {
                bad = add_part(&mut out, &part);
            }
        }
        // A compaction replaced files under the read: start again.
        rentix_store::Delivery::Again => {
            out.clear();
            bad = Ok(());
        }
    })?;
    bad?;
    Ok(out)
}

/// Adds a partition's prices to `out`, pair by pair in their first row's order,
/// each pair's in row order.
fn add_part(out: &mut Reports, part: &rentix_store::FixingPart) -> Result<(), IndexError> {
    let mut by_pair: std::collections::HashMap<(u32, u32), Vec<usize>, foldhash::fast::FixedState> =
        std::collections::HashMap::default();
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    for (i, pair) in part
        .source
        .iter()
        .copied()
        .zip(part.grade.iter().copied())
        .enumerate()
    {
        by_pair
            .entry(pair)
            .or_insert_with(|| {
                pairs.push(pair);
                Vec::new()
            })
            .push(i);
    }
    for pair in pairs {
        let (Some(source), Some(grade)) = (
            part.sources.get(pair.0 as usize),
            part.grades.get(pair.1 as usize),
        ) else {
            return Err(IndexError::Data(format!(
                "{}: a contributor or grade code out of range",
                part.path.display()
            )));
        };
        let days = out
            .entry((source.trim().to_lowercase(), grade.key()))
            .or_default();
        for &i in &by_pair[&pair] {
            days.entry(part.fixing_date[i])
                .or_default()
                .push(part.usd_per_gpu_hour[i]);
        }
    }
    Ok(())
}

/// The feed's health from the store's `reports` and, when given, the published
/// `fixings` (module doc).
pub fn feed_health(reports: &Reports, fixings: &[Fixing], o: &HealthOptions) -> Health {
    let through = reports
        .values()
        .filter_map(|d| d.keys().next_back())
        .max()
        .copied();
    let mut h = Health {
        through,
        contributors: reports
            .keys()
            .map(|(c, _)| c.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        ..Default::default()
    };
    // Silences, each pair's jumps and the published rows' findings are worked out
    // side by side (a store publication waited on this, one core idle), then put
    // together in that order, as one pass would have found them.
    use rayon::prelude::*;
    let (silent, (jumped, from_fixings)) = rayon::join(
        || {
            let mut out = Vec::new();
            if let Some(through) = through {
                silences(reports, through, o, &mut out);
            }
            out
        },
        || {
            rayon::join(
                || {
                    reports
                        .par_iter()
                        .map(|((c, g), days)| {
                            let mut out = Vec::new();
                            jumps(c, g, days, o, &mut out);
                            out
                        })
                        .collect::<Vec<_>>()
                },
                || {
                    let mut p = Health::default();
                    published(fixings, o, &mut p);
                    p
                },
            )
        },
    );
    h.findings = silent;
    h.findings.extend(jumped.into_iter().flatten());
    h.findings.extend(from_fixings.findings);
    h.coverage = from_fixings.coverage;
    h.findings.sort_by(|a, b| {
        (a.date, a.kind, &a.grade, &a.contributor).cmp(&(b.date, b.kind, &b.grade, &b.contributor))
    });
    h
}

fn median(v: &[f64]) -> f64 {
    rentix_core::stats::median(v).unwrap_or(f64::NAN)
}

/// Gaps of `silent_days` or more in a regular contributor's reports (any grade),
/// including one that runs to the store's last day.
fn silences(reports: &Reports, through: NaiveDate, o: &HealthOptions, out: &mut Vec<Finding>) {
    let mut days_of: BTreeMap<&str, std::collections::BTreeSet<NaiveDate>> = BTreeMap::new();
    for ((c, _), days) in reports {
        days_of.entry(c).or_default().extend(days.keys().copied());
    }
    let silent = i64::from(o.silent_days.max(1));
    for (c, days) in days_of {
        let list: Vec<NaiveDate> = days.iter().copied().collect();
        // The day after each report, and after the last one the store's end.
        for (i, &d) in list.iter().enumerate() {
            let next = list.get(i + 1).copied();
            let gap_end = next.unwrap_or(through + Days::new(1));
            let missing = (gap_end - d).num_days() - 1;
            if missing < silent {
                continue;
            }
            // Regular: it reported on at least half of the 30 days up to `d`.
            let since = d - Days::new(29);
            let reported = days.range(since..=d).count();
            if reported < 15 {
                continue;
            }
            out.push(Finding {
                date: d + Days::new(1),
                kind: "contributor_silent",
                grade: String::new(),
                contributor: c.to_string(),
                evidence: format!(
                    "last report {d} after {reported} of the 30 days before; {}",
                    match next {
                        Some(n) => format!("silent {missing} days, back on {n}"),
                        None => format!("silent {missing} days through {through}"),
                    }
                ),
            });
        }
    }
}

/// Level shifts of one contributor's daily median in one grade.
fn jumps(
    c: &str,
    g: &str,
    days: &BTreeMap<NaiveDate, Vec<f64>>,
    o: &HealthOptions,
    out: &mut Vec<Finding>,
) {
    let series: Vec<(NaiveDate, f64)> = days.iter().map(|(d, p)| (*d, median(p))).collect();
    let mut start = 0; // the history begins here (after a shift, at the shift)
    let mut i = 0;
    while i < series.len() {
        let (d, x) = series[i];
        let lo = d - Days::new(u64::from(o.history_days.max(1)));
        let hist: Vec<f64> = series[start..i]
            .iter()
            .filter(|(e, _)| *e >= lo)
            .map(|(_, v)| *v)
            .collect();
        if hist.len() < 5 {
            i += 1;
            continue;
        }
        let reference = median(&hist);
        let moved = |v: f64| v / reference - 1.0;
        let r = moved(x);
        let shifted = |v: f64| moved(v).abs() >= o.jump && moved(v).signum() == r.signum();
        let after = &series[i + 1..(i + 3).min(series.len())];
        if r.abs() >= o.jump && after.iter().all(|(_, v)| shifted(*v)) {
            out.push(Finding {
                date: d,
                kind: "contributor_jump",
                grade: g.to_string(),
                contributor: c.to_string(),
                evidence: format!(
                    "median {x:.4} against {reference:.4} over its {} reports since {lo} ({:+.1}%){}",
                    hist.len(),
                    100.0 * r,
                    if after.is_empty() {
                        " on its last day".to_string()
                    } else {
                        format!(", held for the next {} report days", after.len())
                    }
                ),
            });
            start = i;
        }
        i += 1;
    }
}

/// Day-on-day changes a grade's noise is measured over.
const NOISE_DAYS: usize = 30;
/// Robust standard deviations of its own noise a move must exceed to break.
const BREAK_SIGMAS: f64 = 5.0;

/// Rows a grade must have been sufficient on before a drop counts.
const STEADY: usize = 5;

/// Of `fixings`, those [`feed_health`] reads to judge the days from `from` on
/// exactly as over them all: each grade's rows from its `NOISE_DAYS + 2`-th row,
/// and its `NOISE_DAYS + 2`-th sufficient row with a value, before `from` (a drop
/// is judged against the previous `NOISE_DAYS` rows, a break against the
/// previous `NOISE_DAYS` changes between sufficient values). Coverage is only of
/// the rows kept. A publication's feed-health line held every fixing of a full
/// run (25 MiB more at its peak for 53,000 rows) to judge its last week.
pub fn fixings_judging<'a>(
    fixings: impl IntoIterator<Item = &'a Fixing>,
    from: NaiveDate,
) -> Vec<Fixing> {
    let mut by_grade: BTreeMap<&str, Vec<&Fixing>> = BTreeMap::new();
    for f in fixings {
        by_grade.entry(f.grade.as_str()).or_default().push(f);
    }
    let back = NOISE_DAYS + 2;
    let mut out = Vec::new();
    for (_, mut rows) in by_grade {
        rows.sort_by_key(|f| f.date);
        let first = rows.partition_point(|f| f.date < from);
        let by_rows = first.saturating_sub(back);
        let by_values = rows[..first]
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, f)| f.sufficient && f.value.is_some())
            .nth(back - 1)
            .map_or(0, |(i, _)| i);
        out.extend(rows[by_rows.min(by_values)..].iter().map(|f| (*f).clone()));
    }
    out
}

/// A grade whose rows stop before `through`, the last day published, has stopped
/// publishing: the finding is dated on that last day, the state as of it, so that
/// a publication's line says so for as long as it lasts (a dead feed read "nothing
/// to note" once its drop was more than a week old). Against the store's last day,
/// a methodology of business days was "stopped" on every Saturday (a recheck).
fn stopped(g: &str, rows: &[&Fixing], through: NaiveDate) -> Option<Finding> {
    let last = rows.last().filter(|l| l.date < through)?;
    let value = rows
        .iter()
        .rev()
        .find(|f| f.sufficient && f.value.is_some());
    Some(Finding {
        date: through,
        kind: "grade_stopped",
        grade: g.to_string(),
        contributor: String::new(),
        evidence: format!(
            "no row since {} ({} day(s) before the last day published, {through}); its last sufficient value {}",
            last.date,
            (through - last.date).num_days(),
            value.map_or("none in the rows read".to_string(), |f| format!(
                "{} on {}",
                f.value.unwrap_or_default(),
                f.date
            ))
        ),
    })
}

/// Sufficiency drops, level breaks and coverage of the published fixings.
fn published(fixings: &[Fixing], o: &HealthOptions, h: &mut Health) {
    let mut by_grade: BTreeMap<&str, Vec<&Fixing>> = BTreeMap::new();
    for f in fixings {
        by_grade.entry(f.grade.as_str()).or_default().push(f);
    }
    // The last day anything was published: a methodology of business days
    // publishes nothing on a Saturday, which the store's last day may be (every
    // grade was "stopped" on one: a hostile round).
    let through = fixings.iter().map(|f| f.date).max();
    for (g, mut rows) in by_grade {
        rows.sort_by_key(|f| f.date);
        if let Some(f) = through.and_then(|t| stopped(g, &rows, t)) {
            h.findings.push(f);
        }
        let mut months: BTreeMap<(i32, u32), (usize, usize)> = BTreeMap::new();
        for f in &rows {
            let m = months.entry((f.date.year(), f.date.month())).or_default();
            m.0 += 1;
            m.1 += usize::from(f.sufficient && f.value.is_some());
        }
        h.coverage.extend(
            months
                .into_iter()
                .map(|((y, m), (days, sufficient))| MonthCoverage {
                    grade: g.to_string(),
                    month: format!("{y:04}-{m:02}"),
                    days,
                    sufficient,
                }),
        );
        // A drop: a normally fed grade (sufficient on the row before and on nine
        // in ten of its previous rows, at least STEADY of them) that is not: a
        // grade that flickers between thin and sufficient has no level to drop from.
        for (i, b) in rows.iter().enumerate().skip(STEADY) {
            let before = &rows[i.saturating_sub(NOISE_DAYS)..i];
            let a = before[before.len() - 1];
            let fed = before.iter().filter(|f| f.sufficient).count();
            if a.sufficient && 10 * fed >= 9 * before.len() && !b.sufficient {
                h.findings.push(Finding {
                    date: b.date,
                    kind: "sufficiency_drop",
                    grade: g.to_string(),
                    contributor: String::new(),
                    // The fixing's flags say which rule failed: "0 contributors, 0
                    // observations" read as a day without data, on a day whose
                    // trades and quotes had all been refused (a hostile round).
                    evidence: format!(
                        "{} contributors, {} observations (the day before {} and {}; sufficient on {fed} of its previous {} rows){}",
                        b.n_contributors,
                        b.n_obs,
                        a.n_contributors,
                        a.n_obs,
                        before.len(),
                        if b.flags.is_empty() {
                            String::new()
                        } else {
                            format!("; its flags: {}", b.flags)
                        },
                    ),
                });
            }
        }
        // Between sufficient values: a carried or thin value is not a level.
        let valued: Vec<(NaiveDate, f64)> = rows
            .iter()
            .filter(|f| f.sufficient)
            .filter_map(|f| f.value.map(|v| (f.date, v)))
            .collect();
        // A break is a move out of the grade's character: at least `level_break`
        // and at least BREAK_SIGMAS robust standard deviations (1.4826 MAD) of its
        // previous NOISE_DAYS day-on-day changes (a thin grade that moves 10% on
        // an ordinary day does not break at 12%).
        let changes: Vec<f64> = valued.windows(2).map(|w| w[1].1 / w[0].1 - 1.0).collect();
        for (i, w) in valued.windows(2).enumerate() {
            let ((d0, v0), (d1, v1)) = (w[0], w[1]);
            let r = changes[i];
            let before = &changes[i.saturating_sub(NOISE_DAYS)..i];
            if before.len() < 10 {
                continue; // no character yet to break
            }
            let abs: Vec<f64> = before.iter().map(|c| c.abs()).collect();
            let sigma = 1.4826 * median(&abs);
            let bar = o.level_break.max(BREAK_SIGMAS * sigma);
            if v0 > 0.0 && r.abs() >= bar {
                h.findings.push(Finding {
                    date: d1,
                    kind: "level_break",
                    grade: g.to_string(),
                    contributor: String::new(),
                    evidence: format!(
                        "{v1} against {v0} on {d0} ({:+.1}%; its daily moves before: {:.1}% robust sd)",
                        100.0 * r,
                        100.0 * sigma
                    ),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(k: u64) -> NaiveDate {
        NaiveDate::from_ymd_opt(2025, 5, 1).unwrap() + Days::new(k)
    }

    /// A partition's prices go to each (contributor as written, trimmed and
    /// lowercased; grade) pair by day, a day's in row order, whether the part's rows
    /// are in date order (as the store writes them) or not, and a pair's days from
    /// a later part are added to those before. Expected maps written by hand.
    #[test]
    fn a_part_s_prices_go_to_their_pair_and_day_in_row_order() {
        let grade: rentix_core::Grade = "h100-sxm-80gb/vm/on-demand".parse().unwrap();
        let key = |c: &str| (c.to_string(), grade.key());
        let part = |rows: &[(u32, u64, f64)]| rentix_store::FixingPart {
            sources: vec!["Alpha ".into(), "beta".into(), "ALPHA".into()],
            grades: vec![grade.clone()],
            source: rows.iter().map(|r| r.0).collect(),
            grade: vec![0; rows.len()],
            fixing_date: rows.iter().map(|r| day(r.1)).collect(),
            usd_per_gpu_hour: rows.iter().map(|r| r.2).collect(),
            ..Default::default()
        };
        let days = |d: &[(u64, &[f64])]| -> BTreeMap<NaiveDate, Vec<f64>> {
            d.iter().map(|(k, p)| (day(*k), p.to_vec())).collect()
        };
        let in_order = part(&[
            (0, 1, 2.0),
            (1, 1, 3.0),
            (0, 1, 2.1),
            (2, 2, 2.2),
            (0, 3, 2.3),
        ]);
        let shuffled = part(&[
            (0, 3, 2.3),
            (1, 1, 3.0),
            (0, 1, 2.0),
            (2, 2, 2.2),
            (0, 1, 2.1),
        ]);
        let later = part(&[(1, 4, 3.1), (0, 3, 2.4)]);
        let mut a = Reports::new();
        add_part(&mut a, &in_order).unwrap();
        // "Alpha " (code 0) and "ALPHA" (code 2) are one contributor: 2.0 and 2.1
        // on day 1, 2.2 on day 2, 2.3 on day 3.
        assert_eq!(
            a[&key("alpha")],
            days(&[(1, &[2.0, 2.1]), (2, &[2.2]), (3, &[2.3])])
        );
        assert_eq!(a[&key("beta")], days(&[(1, &[3.0])]));
        let mut b = Reports::new();
        add_part(&mut b, &shuffled).unwrap();
        assert_eq!(
            b[&key("alpha")],
            days(&[(1, &[2.0, 2.1]), (2, &[2.2]), (3, &[2.3])])
        );
        add_part(&mut a, &later).unwrap();
        assert_eq!(
            a[&key("alpha")],
            days(&[(1, &[2.0, 2.1]), (2, &[2.2]), (3, &[2.3, 2.4])])
        );
        assert_eq!(a[&key("beta")], days(&[(1, &[3.0]), (4, &[3.1])]));
        assert_eq!(a.len(), 2);
    }

    /// Six contributors quoting 2.50 with a +-1% wobble for 60 days; `edit` changes
    /// contributor `j`'s price on day `k` (`None`: no report).
    fn market(edit: impl Fn(usize, u64, f64) -> Option<f64>) -> Reports {
        let mut r: Reports = BTreeMap::new();
        for j in 0..6usize {
            for k in 0..60u64 {
                let wobble = 0.01 * (((j as f64) * 1.7 + (k as f64) * 0.9).sin());
                if let Some(p) = edit(j, k, 2.5 * (1.0 + wobble)) {
                    r.entry((format!("p{j}"), "h100/vm/on-demand".into()))
                        .or_default()
                        .entry(day(k))
                        .or_default()
                        .push(p);
                }
            }
        }
        r
    }

    #[test]
    fn a_quiet_market_has_no_finding() {
        let h = feed_health(&market(|_, _, p| Some(p)), &[], &HealthOptions::default());
        assert_eq!(h.findings, vec![]);
        assert_eq!(h.contributors, 6);
        assert_eq!(h.through, Some(day(59)));
    }

    /// p4 stops after day 39 (silent from day 40 to the end); p3 raises its prices
    /// 20% from day 30: each named with its date, and nothing else.
    #[test]
    fn a_contributor_that_stops_and_one_that_shifts_are_named_on_their_days() {
        let r = market(|j, k, p| match (j, k) {
            (4, k) if k >= 40 => None,
            (3, k) if k >= 30 => Some(p * 1.2),
            _ => Some(p),
        });
        let h = feed_health(&r, &[], &HealthOptions::default());
        let got: Vec<(NaiveDate, &str, &str)> = h
            .findings
            .iter()
            .map(|f| (f.date, f.kind, f.contributor.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (day(30), "contributor_jump", "p3"),
                (day(40), "contributor_silent", "p4"),
            ]
        );
        assert!(
            h.findings[1].evidence.contains("silent 20 days through"),
            "{:?}",
            h.findings[1]
        );
        // A gap that ends: dated, with the day it came back; shorter gaps are not.
        let r = market(|j, k, p| (j != 2 || !(20..26).contains(&k)).then_some(p));
        let h = feed_health(&r, &[], &HealthOptions::default());
        assert_eq!(h.findings.len(), 1);
        assert_eq!(h.findings[0].date, day(20));
        assert!(h.findings[0].evidence.contains("back on 2025-05-27"));
        let r = market(|j, k, p| (j != 2 || !(20..24).contains(&k)).then_some(p));
        assert!(feed_health(&r, &[], &HealthOptions::default())
            .findings
            .is_empty());
        // One odd print is not a shift.
        let r = market(|j, k, p| Some(if (j, k) == (1, 33) { p * 1.3 } else { p }));
        assert!(feed_health(&r, &[], &HealthOptions::default())
            .findings
            .is_empty());
    }

    /// An index with a 15% step on day 45 (and a wobble of 1% elsewhere), and a
    /// grade that loses its panel on day 50.
    #[test]
    fn a_step_in_the_index_and_a_lost_panel_are_dated() {
        let fixing = |k: u64, v: f64, sufficient: bool| Fixing {
            sufficient,
            n_contributors: if sufficient { 6 } else { 2 },
            flags: if sufficient {
                String::new()
            } else {
                "trade_failed=few_contributors".into()
            },
            ..Fixing::for_test(day(k), "h100/vm/on-demand", Some(v))
        };
        let rows: Vec<Fixing> = (0..60u64)
            .map(|k| {
                let v = 2.5 * (1.0 + 0.01 * ((k as f64) * 0.9).sin());
                let v = if k >= 45 { v * 1.15 } else { v };
                fixing(k, v, k < 50)
            })
            .collect();
        let h = feed_health(&BTreeMap::new(), &rows, &HealthOptions::default());
        let got: Vec<(NaiveDate, &str)> = h.findings.iter().map(|f| (f.date, f.kind)).collect();
        assert_eq!(
            got,
            vec![(day(45), "level_break"), (day(50), "sufficiency_drop")]
        );
        assert!(
            h.findings[1]
                .evidence
                .ends_with("; its flags: trade_failed=few_contributors"),
            "{:?}",
            h.findings[1]
        );
        assert_eq!(h.coverage.len(), 2);
        assert_eq!(
            (h.coverage[0].month.as_str(), h.coverage[0].days),
            ("2025-05", 31)
        );
        assert_eq!(h.coverage[1].sufficient, 50 - 31);
    }

    /// A grade whose rows stop on day 44 while another publishes to day 58: named as
    /// stopped, dated on the last day published with its last row and value (a dead
    /// feed read "nothing to note" once its drop was a week old: a hostile round).
    /// A methodology of business days is not "stopped" because the store's last
    /// day (59, in the reports) is a weekend day it does not publish.
    #[test]
    fn a_grade_that_stops_publishing_is_named_as_of_the_last_day() {
        let row = |k: u64, grade: &str, sufficient: bool| Fixing {
            sufficient,
            n_contributors: 6,
            ..Fixing::for_test(day(k), grade, Some(2.5))
        };
        let mut rows: Vec<Fixing> = (0..45u64)
            .map(|k| row(k, "h100/vm/on-demand", k < 40))
            .collect();
        rows.extend((0..59u64).map(|k| row(k, "h200/vm/on-demand", true)));
        let h = feed_health(&market(|_, _, p| Some(p)), &rows, &HealthOptions::default());
        let stopped: Vec<&Finding> = h
            .findings
            .iter()
            .filter(|f| f.kind == "grade_stopped")
            .collect();
        assert_eq!(stopped.len(), 1, "{:?}", h.findings);
        assert_eq!(
            (stopped[0].date, stopped[0].grade.as_str()),
            (day(58), "h100/vm/on-demand")
        );
        assert!(
            stopped[0]
                .evidence
                .contains("no row since 2025-06-14 (14 day(s)")
                && stopped[0].evidence.contains("2.5 on 2025-06-09"),
            "{:?}",
            stopped[0]
        );
        // Weekdays only: the reports run to day 59 (a Sunday), the rows of both
        // grades to day 57 (a Friday): nothing stopped.
        let weekdays: Vec<Fixing> = (0..59u64)
            .filter(|k| {
                !matches!(
                    day(*k).weekday(),
                    chrono::Weekday::Sat | chrono::Weekday::Sun
                )
            })
            .flat_map(|k| {
                [
                    row(k, "h100/vm/on-demand", true),
                    row(k, "h200/vm/on-demand", true),
                ]
            })
            .collect();
        let h = feed_health(
            &market(|_, _, p| Some(p)),
            &weekdays,
            &HealthOptions::default(),
        );
        assert!(
            h.findings.iter().all(|f| f.kind != "grade_stopped"),
            "{:?}",
            h.findings
        );
    }

    /// The rows [`fixings_judging`] keeps give the findings from its day that
    /// every row gives: a sparse grade (sufficient every third day) with a 15%
    /// step on day 150, and the grade above, judged from day 140 on 200 days.
    #[test]
    fn the_rows_kept_to_judge_some_days_judge_them_as_every_row_does() {
        let rows: Vec<Fixing> = (0..200u64)
            .flat_map(|k| {
                let wobble = 1.0 + 0.01 * ((k as f64) * 0.9).sin();
                let step = if k >= 150 { 1.15 } else { 1.0 };
                [
                    Fixing {
                        sufficient: k % 3 == 0,
                        ..Fixing::for_test(day(k), "sparse/vm/on-demand", Some(2.0 * wobble * step))
                    },
                    Fixing {
                        sufficient: k < 170,
                        n_contributors: if k < 170 { 6 } else { 2 },
                        ..Fixing::for_test(day(k), "h100/vm/on-demand", Some(2.5 * wobble * step))
                    },
                ]
            })
            .collect();
        let from = day(140);
        let findings = |rows: &[Fixing]| {
            let h = feed_health(&BTreeMap::new(), rows, &HealthOptions::default());
            h.findings
                .into_iter()
                .filter(|f| f.date >= from)
                .map(|f| (f.date, f.kind, f.grade, f.evidence))
                .collect::<Vec<_>>()
        };
        let all = findings(&rows);
        assert_eq!(all.len(), 3, "{all:?}");
        let kept = fixings_judging(&rows, from);
        // The sparse grade from day 45 (its 32nd sufficient day before 140 of
        // 0, 3, .., 138), 155 rows; the other from day 108 (32 rows), 92 rows.
        assert_eq!(kept.len(), 155 + 92);
        assert_eq!(findings(&kept), all);
    }
}
