//! `rentix settle`: a contract period's rate, coverage and verdict from a fixings
//! file (rentix_backtest::period_rate).

use crate::cli::SettleArgs;
use chrono::{DateTime, NaiveDate, Utc};
use rentix_backtest::{period_rate, Grid, PeriodRate, PeriodRule, StampSchedule};
use rentix_index::FixingsError;
use std::collections::BTreeMap;
use std::path::Path;

/// Most stamps a settlement's schedule may hold (a century of 15-minute stamps is
/// 3.5 million).
const MAX_SCHEDULE_STAMPS: i64 = 5_000_000;

pub(super) fn run(a: SettleArgs) -> anyhow::Result<()> {
    let rule = rule(&a)?;
    let (from, to) = bounds(&a)?;
    let series = series(&a.fixings, a.grade.as_deref())?;
    let lookback = minutes(&a.lookback, "--lookback")?;
    // The schedule is built stamp by stamp over the record and the period: bounded.
    let first = series
        .stamps
        .keys()
        .next()
        .copied()
        .unwrap_or(from.timestamp());
    let last = series
        .stamps
        .keys()
        .next_back()
        .copied()
        .unwrap_or(to.timestamp());
    let span_minutes = (to.timestamp().max(last) - from.timestamp().min(first)) / 60;
    let (schedule, cadence) = if a.schedule.is_empty() {
        let cadence = match &a.cadence {
            Some(c) => match c.parse::<rentix_core::Cadence>() {
                Ok(c) => c.minutes(),
                Err(e) => crate::commands::usage!("--cadence {e}"),
            },
            None => series.file_cadence(&a.fixings)?,
        };
        if cadence < 1 {
            crate::commands::usage!("--cadence must be at least a minute");
        }
        if span_minutes / cadence > MAX_SCHEDULE_STAMPS {
            crate::commands::usage!(
                "the record and the period span {} stamps of {cadence} minutes, more than {MAX_SCHEDULE_STAMPS}: settle a shorter period",
                span_minutes / cadence
            );
        }
        (
            Schedule::new(&series, from, to, cadence),
            Cadence::Step(cadence),
        )
    } else {
        // At most a stamp a minute: bounded as a one-minute cadence is.
        if span_minutes > MAX_SCHEDULE_STAMPS * 15 {
            crate::commands::usage!(
                "the record and the period span {} days: settle a shorter period with --schedule",
                span_minutes / 1440
            );
        }
        let plan = plan(&a.schedule)?;
        (
            Schedule::planned(&series, from, to, &plan),
            Cadence::Planned(a.schedule.join(" ")),
        )
    };
    // L in stamps: the look-back over the period's mean step.
    let (pa, pb) = schedule.period;
    let step_minutes = match &cadence {
        Cadence::Step(c) => *c as f64,
        Cadence::Planned(_) if pb > pa => {
            let start = schedule.times[pa] - schedule.step_before(pa);
            (schedule.times[pb - 1] - start) as f64 / 60.0 / (pb - pa) as f64
        }
        Cadence::Planned(_) => 1.0,
    };
    let stamps = match &cadence {
        Cadence::Step(c) => usize::try_from(lookback / c).unwrap_or(1),
        Cadence::Planned(_) => (lookback as f64 / step_minutes).round() as usize,
    };
    at_least_a_stamp(&a.lookback, stamps, step_minutes)?;
    let rule = PeriodRule {
        lookback: stamps,
        ..rule
    };
    let Some(r) = period_rate(&schedule.values, schedule.period, &rule) else {
        return Err(input(
            &a.fixings,
            format!(
                "the period {} .. {} holds no stamp of the schedule ({}){}",
                a.from,
                a.to,
                cadence.describe(),
                if schedule.cut > 0 {
                    format!(
                        ": a period holds the stamps whose intervals lie whole inside it, and its bounds fall inside {} stamp interval(s){}",
                        schedule.cut,
                        if schedule.daily { " (a daily file's rows are UTC days)" } else { "" }
                    )
                } else {
                    String::new()
                }
            ),
        ));
    };
    let out = if a.json {
        json(&series.grade, &schedule, &r, &cadence, &rule)?
    } else {
        text(&series.grade, &schedule, &r, &cadence, &rule)
    };
    use std::io::Write;
    std::io::stdout().lock().write_all(out.as_bytes())?;
    Ok(())
}

/// The period `[--from, --to)`: in order, and ended. A period settles once it has
/// ended: its stamps to come are not published, and filling them from the last
/// published values would be a rate nobody fixed.
fn bounds(a: &SettleArgs) -> anyhow::Result<(DateTime<Utc>, DateTime<Utc>)> {
    let (from, to) = (instant(&a.from, "--from")?, instant(&a.to, "--to")?);
    if from >= to {
        crate::commands::usage!("--from {} is not before --to {}", a.from, a.to);
    }
    let now = Utc::now();
    if to > now {
        crate::commands::usage!(
            "--to {} has not come yet (it is {}): a period settles once it has ended; for the rate so far, pass --to {} (a shorter period, whose verdict is its own, not the whole period's)",
            a.to,
            now.format("%Y-%m-%dT%H:%MZ"),
            now.format("%Y-%m-%dT%H:00:00Z")
        );
    }
    Ok((from, to))
}

/// A look-back (`text`, `stamps` of about `step_minutes`) shorter than a stamp
/// holds no published value to fill from: it was taken as one stamp without a word.
fn at_least_a_stamp(text: &str, stamps: usize, step_minutes: f64) -> anyhow::Result<()> {
    if stamps == 0 {
        crate::commands::usage!(
            "--lookback {text} is shorter than one stamp of the schedule (about {} minutes): a gap is filled from at least the last published stamp; give at least {}",
            step_minutes.round(),
            cadence_text(step_minutes)
        );
    }
    Ok(())
}

/// `minutes` as a duration `--lookback` reads (`90m`, `6h`, `1d`).
fn cadence_text(minutes: f64) -> String {
    let m = minutes.ceil().max(1.0) as i64;
    if m % 1440 == 0 {
        format!("{}d", m / 1440)
    } else if m % 60 == 0 {
        format!("{}h", m / 60)
    } else {
        format!("{m}m")
    }
}

/// The schedule a period is counted on: one step, or `--schedule`'s eras.
enum Cadence {
    /// Every stamp of this many minutes.
    Step(i64),
    /// `--schedule`, as given.
    Planned(String),
}

impl Cadence {
    fn describe(&self) -> String {
        match self {
            Cadence::Step(c) => format!("{c}-minute stamps"),
            Cadence::Planned(s) => format!("--schedule {s}"),
        }
    }
}

/// `--schedule` values as a publication schedule.
fn plan(specs: &[String]) -> anyhow::Result<StampSchedule> {
    let mut eras = Vec::new();
    for spec in specs {
        let (from, grid) = match spec.split_once('=') {
            Some((f, g)) => (Some(instant(f.trim(), "--schedule")?.timestamp()), g),
            None => (None, spec.as_str()),
        };
        let grid = grid.trim();
        let grid = if grid.contains(':') {
            let mut times = Vec::new();
            for t in grid.split(',') {
                match chrono::NaiveTime::parse_from_str(t.trim(), "%H:%M") {
                    Ok(t) => times.push(i64::from(chrono::Timelike::num_seconds_from_midnight(&t))),
                    Err(_) => crate::commands::usage!(
                        "--schedule {spec:?}: {t:?} is not a time of day (HH:MM, UTC)"
                    ),
                }
            }
            Grid::TimesOfDay(times)
        } else {
            Grid::Every(minutes(grid, "--schedule")? * 60)
        };
        eras.push((from, grid));
    }
    match StampSchedule::new(eras) {
        Ok(s) => Ok(s),
        Err(e) => crate::commands::usage!("--schedule {}: {e}", specs.join(" ")),
    }
}

fn rule(a: &SettleArgs) -> anyhow::Result<PeriodRule> {
    for (flag, x) in [
        ("--settle-at", a.settle_at),
        ("--review-at", a.review_at),
        ("--max-gap", a.max_gap),
    ] {
        if !(x.is_finite() && (0.0..=1.0).contains(&x)) {
            crate::commands::usage!("{flag} {x}: a share from 0 to 1 (0.98 = 98%)");
        }
    }
    if a.review_at > a.settle_at {
        crate::commands::usage!(
            "--review-at {} is above --settle-at {}",
            a.review_at,
            a.settle_at
        );
    }
    Ok(PeriodRule {
        settle_at: a.settle_at,
        review_at: a.review_at,
        max_gap: a.max_gap,
        lookback: 1,
    })
}

fn minutes(text: &str, flag: &str) -> anyhow::Result<i64> {
    match rentix_core::parse_minutes(text) {
        Ok(m) => Ok(m),
        Err(e) => crate::commands::usage!("{flag} {e}"),
    }
}

/// A date (its 00:00 UTC) or an RFC 3339 time.
fn instant(text: &str, flag: &str) -> anyhow::Result<DateTime<Utc>> {
    if let Ok(d) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(d.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc());
    }
    match DateTime::parse_from_rfc3339(text) {
        Ok(t) => Ok(t.with_timezone(&Utc)),
        Err(_) => crate::commands::usage!(
            "{flag} {text:?}: a date (YYYY-MM-DD) or an RFC 3339 time (2025-06-01T12:00:00Z)"
        ),
    }
}

fn input(path: &Path, detail: String) -> anyhow::Error {
    FixingsError::Input {
        path: path.to_path_buf(),
        detail,
    }
    .into()
}

/// One grade's published stamps: the end of each stamp's interval and its value
/// when it has a qualifying one.
struct Series {
    grade: String,
    /// Minutes between stamps, read from the file (0: its commonest step, `step`
    /// seconds, is no cadence).
    cadence: i64,
    step: i64,
    stamps: BTreeMap<i64, Option<f64>>,
    /// A daily file: a stamp is shown as its date.
    daily: bool,
    /// Stamps labelled by their interval's start (a methodology's `label = "slot"`:
    /// the stamp `t` covers `[t, t + cadence)`), as the file's `date` column shows
    /// (a 00:00 stamp of the day it opens); otherwise by its end.
    slot: bool,
}

impl Series {
    /// The cadence read from the file, in minutes, or a usage error saying why
    /// it cannot be read.
    fn file_cadence(&self, file: &Path) -> anyhow::Result<i64> {
        if self.stamps.len() < 2 && !self.daily {
            crate::commands::usage!(
                "{} holds one stamp of {}: its cadence cannot be read from it; give --cadence or --schedule",
                file.display(),
                self.grade
            );
        }
        if self.cadence == 0 {
            crate::commands::usage!(
                "the commonest step between {}'s stamps in {} is {} seconds, which is no cadence (whole minutes that divide a day): give --cadence or --schedule",
                self.grade,
                file.display(),
                self.step
            );
        }
        Ok(self.cadence)
    }
}

/// The grade's stamps of an intraday file (a value is qualifying), or its dates of a
/// daily one ([`rentix_index::Fixing::qualifying_value`]: a sufficient value that
/// was not carried, or any of a benchmark the user brought; each date's interval
/// ends at the next 00:00).
fn series(path: &Path, grade: Option<&str>) -> anyhow::Result<Series> {
    rentix_index::check_published(path)?;
    let daily = !rentix_index::intraday::is_intraday_file(path)?;
    let mut slot = false;
    let mut midnight = false;
    let mut by: BTreeMap<String, BTreeMap<i64, Option<f64>>> = BTreeMap::new();
    if daily {
        for f in rentix_index::read_fixings(path)? {
            let end = (f.date + chrono::Days::new(1))
                .and_hms_opt(0, 0, 0)
                .unwrap_or_default()
                .and_utc()
                .timestamp();
            by.entry(f.grade.to_string())
                .or_default()
                .insert(end, f.qualifying_value());
        }
    } else {
        for f in rentix_index::intraday::read_intraday(path)? {
            // A stamp at 00:00 dated its own day opens the day: a slot label.
            let t = f.fixed_at.timestamp();
            if t % 86_400 == 0 {
                midnight = true;
                if f.date == f.fixed_at.date_naive() {
                    slot = true;
                }
            }
            by.entry(f.grade.clone()).or_default().insert(t, f.value);
        }
    }
    let grade = match grade {
        Some(g) => g.to_string(),
        None if by.len() == 1 => by.keys().next().cloned().unwrap_or_default(),
        None => {
            let some: Vec<&str> = by.keys().take(5).map(String::as_str).collect();
            crate::commands::usage!(
                "--grade: the file holds {} grades ({}{}); name one",
                by.len(),
                some.join(", "),
                if by.len() > 5 { ", ..." } else { "" }
            );
        }
    };
    let Some(stamps) = by.remove(&grade) else {
        return Err(input(path, format!("no row of grade {grade:?}")));
    };
    // An end-labelled day closes at 24:00 (a 00:00 stamp); slots that open after
    // midnight (`[calendar] offset`, slot labels only) never hold one: a file of more
    // than a day without any 00:00 stamp is slot-labelled.
    let spans_days = stamps
        .keys()
        .next()
        .zip(stamps.keys().next_back())
        .is_some_and(|(a, b)| b - a >= 86_400);
    let slot = slot || (!daily && !midnight && spans_days);
    // The commonest step between stamps (the shorter of equally common ones): the
    // shortest let one off-grid stamp (05:07 among quarter hours) make the file's
    // cadence 7 minutes, which --cadence itself refuses, and put the period in
    // determination at 14 of 206 stamps. A stamp off the commonest step's grid is
    // counted off grid, never evidence.
    let mut steps: BTreeMap<i64, usize> = BTreeMap::new();
    for (a, b) in stamps.keys().zip(stamps.keys().skip(1)) {
        if b > a {
            *steps.entry(b - a).or_default() += 1;
        }
    }
    let step = steps
        .iter()
        .max_by(|x, y| x.1.cmp(y.1).then(y.0.cmp(x.0)))
        .map_or(86_400, |(d, _)| *d);
    let is_cadence = step % 60 == 0 && rentix_core::Cadence::from_minutes(step / 60).is_ok();
    Ok(Series {
        grade,
        cadence: if daily {
            1440
        } else if is_cadence {
            step / 60
        } else {
            0
        },
        step,
        stamps,
        daily,
        slot,
    })
}

/// The schedule's stamps around the period (the record before it, for fills; after
/// it, for a gap's end) and the period's place in it.
struct Schedule {
    times: Vec<i64>,
    values: Vec<Option<f64>>,
    period: (usize, usize),
    /// Published stamps off the schedule's grid (never evidence).
    off_grid: usize,
    /// Stamps shown as the date their day-long interval covers.
    daily: bool,
    /// Stamps whose intervals a bound of the period falls inside: partly in the
    /// period, not counted.
    cut: usize,
}

impl Schedule {
    fn new(series: &Series, from: DateTime<Utc>, to: DateTime<Utc>, cadence: i64) -> Self {
        let step = cadence * 60;
        // The period's first stamp: the one closing its first interval, or the
        // slot opening it.
        let first = from.timestamp() + if series.slot { 0 } else { step };
        let last = to.timestamp();
        let lo = series
            .stamps
            .keys()
            .next()
            .copied()
            .unwrap_or(first)
            .min(first);
        let hi = series
            .stamps
            .keys()
            .next_back()
            .copied()
            .unwrap_or(last)
            .max(last);
        // The grid through the record's first stamp (a grid may open its days
        // after midnight: `[calendar] offset`), or through the period's first
        // stamp without a record, from the earlier of the two.
        let anchor = series.stamps.keys().next().copied().unwrap_or(first);
        let start = anchor - (anchor - lo + step - 1).div_euclid(step) * step;
        let mut times = Vec::new();
        let mut t = start;
        while t <= hi {
            times.push(t);
            t += step;
        }
        Self::over(series, times, from, to, series.daily && cadence == 1440)
    }

    /// The schedule of `--schedule` around the period: its stamps from the record's
    /// start (or the period's) to the record's end (or the period's); the period
    /// holds the stamps after `from` through `to`.
    fn planned(
        series: &Series,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        plan: &StampSchedule,
    ) -> Self {
        let (f, l) = (from.timestamp(), to.timestamp());
        let lo = series.stamps.keys().next().copied().unwrap_or(f).min(f);
        let hi = series
            .stamps
            .keys()
            .next_back()
            .copied()
            .unwrap_or(l)
            .max(l);
        Self::over(series, plan.stamps(lo, hi, series.slot), from, to, false)
    }

    /// The series on the schedule's `times` (in order); the period holds the stamps
    /// after `from` through `to`, and a published stamp not among `times` is off
    /// the grid.
    fn over(
        series: &Series,
        times: Vec<i64>,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        daily: bool,
    ) -> Self {
        let values = times
            .iter()
            .map(|t| series.stamps.get(t).copied().flatten())
            .collect();
        // Published stamps off the schedule, of the period only (by their label:
        // after `from` through `to` for stamps that label their interval's end,
        // from `from` before `to` for slots).
        let (f, l) = (from.timestamp(), to.timestamp());
        let in_period = |t: i64| {
            if series.slot {
                f <= t && t < l
            } else {
                f < t && t <= l
            }
        };
        let off_grid = series
            .stamps
            .keys()
            .filter(|t| in_period(**t) && times.binary_search(t).is_err())
            .count();
        let mut s = Self {
            times,
            values,
            period: (0, 0),
            off_grid,
            daily,
            cut: 0,
        };
        // The period's stamps: those whose intervals lie whole in [from, to). A
        // bound inside an interval (a two-minute window, a month's start at +14:00
        // on a daily file of UTC days) leaves that stamp out: its interval is partly
        // another period's, and settling it into this one would settle a day twice.
        let n = s.times.len();
        let a = (0..n).position(|i| s.interval(i, series.slot).0 >= f);
        let a = a.unwrap_or(n);
        let b = (a..n)
            .position(|i| s.interval(i, series.slot).1 > l)
            .map_or(n, |k| a + k);
        // Stamps that straddle a bound: partly inside the period, left out.
        s.cut = (0..n)
            .filter(|&i| {
                let (x, y) = s.interval(i, series.slot);
                (x < f && y > f) || (x < l && y > l)
            })
            .count();
        s.period = (a, b);
        s
    }

    /// The length of the interval stamp `i` covers, in seconds: back to the stamp
    /// before it (the one after it for the first).
    fn step_before(&self, i: usize) -> i64 {
        match (
            i.checked_sub(1).map(|j| self.times[j]),
            self.times.get(i + 1),
        ) {
            (Some(prev), _) => self.times[i] - prev,
            (None, Some(next)) => next - self.times[i],
            (None, None) => 60,
        }
    }

    /// The interval `[start, end)` stamp `i` covers, as seconds: back to the stamp
    /// before it for a stamp that labels its interval's end, on to the next one for
    /// a slot (the last slot as long as the one before it).
    fn interval(&self, i: usize, slot: bool) -> (i64, i64) {
        let t = self.times[i];
        if !slot {
            return (t - self.step_before(i), t);
        }
        let len = match self.times.get(i + 1) {
            Some(next) => next - t,
            None => self.step_before(i),
        };
        (t, t + len)
    }

    /// Stamp `i` as a time (the end of its interval), or a daily file's date.
    fn at(&self, i: usize) -> String {
        let t = self.times[i] - if self.daily { 86_400 } else { 0 };
        let format = if self.daily {
            "%Y-%m-%d"
        } else {
            "%Y-%m-%dT%H:%MZ"
        };
        DateTime::from_timestamp(t, 0).map_or_else(String::new, |t| t.format(format).to_string())
    }
}

fn pct(k: usize, n: usize) -> String {
    format!("{:.2}%", 100.0 * k as f64 / n.max(1) as f64)
}

/// Which of the rule's two conditions sent a period to determination: it said
/// "coverage below 90% or a gap over 2%" beside a coverage of 96.67%, and a
/// hostile round could not tell that one missing day of a daily month (3.3% of
/// it) is over the gap bound, which makes review unreachable for such periods.
fn determination_causes(r: &PeriodRate, rule: &PeriodRule) -> String {
    let share = |k: usize| k as f64 / r.scheduled.max(1) as f64;
    let mut causes = Vec::new();
    if share(r.filled) < rule.review_at {
        causes.push(format!(
            "coverage {} below {:.0}%",
            pct(r.filled, r.scheduled),
            100.0 * rule.review_at
        ));
    }
    if share(r.longest_gap) > rule.max_gap {
        let mut gap = format!(
            "a gap of {} stamp(s), {} of the period, over --max-gap {:.0}%",
            r.longest_gap,
            pct(r.longest_gap, r.scheduled),
            100.0 * rule.max_gap
        );
        if share(1) > rule.max_gap {
            gap.push_str(&format!(
                "; one stamp is {} of this period, so at this --max-gap any missing stamp sends it to determination and review cannot be reached",
                pct(1, r.scheduled)
            ));
        }
        causes.push(gap);
    }
    if causes.is_empty() {
        // The rule's own arithmetic (shares in ten-thousandths) at a bound.
        causes.push(format!(
            "coverage {}, longest gap {}: at the bound of --review-at {:.0}% or --max-gap {:.0}%",
            pct(r.filled, r.scheduled),
            pct(r.longest_gap, r.scheduled),
            100.0 * rule.review_at,
            100.0 * rule.max_gap
        ));
    }
    causes.join(" and ")
}

fn text(grade: &str, s: &Schedule, r: &PeriodRate, cadence: &Cadence, rule: &PeriodRule) -> String {
    let (a, b) = s.period;
    let mut out = match cadence {
        Cadence::Step(c) => format!(
            "{grade}: {} stamps of {c} minutes, {} to {}\n",
            r.scheduled,
            s.at(a),
            s.at(b - 1)
        ),
        Cadence::Planned(p) => format!(
            "{grade}: {} scheduled stamps (--schedule {p}), {} to {}\n",
            r.scheduled,
            s.at(a),
            s.at(b - 1)
        ),
    };
    let rate = r
        .rate
        .map_or("none (no value before or in the period)".to_string(), |v| {
            format!("{v:.6}")
        });
    let verdict = match r.verdict {
        rentix_backtest::SettlementStatus::Settled => "settled".to_string(),
        rentix_backtest::SettlementStatus::Review => format!(
            "review (coverage below {:.0}%: the rate is published, flagged for review)",
            100.0 * rule.settle_at
        ),
        rentix_backtest::SettlementStatus::Determination => format!(
            "determination ({}): the rate is indicative, a calculation agent decides",
            determination_causes(r, rule)
        ),
    };
    out.push_str(&format!("  rate        {rate}\n  verdict     {verdict}\n"));
    out.push_str(&format!(
        "  coverage    {} of {} stamps published ({}); longest gap {} stamps ({})\n",
        r.filled,
        r.scheduled,
        pct(r.filled, r.scheduled),
        r.longest_gap,
        pct(r.longest_gap, r.scheduled)
    ));
    if let Some(m) = r.published_mean {
        out.push_str(&format!(
            "  published   mean of the published stamps only {m:.6}\n"
        ));
    }
    let shown = 10;
    for g in r.gaps.iter().take(shown) {
        let fill = g
            .fill
            .map_or("left out (nothing published before it)".to_string(), |f| {
                format!(
                    "filled with {f:.6}, the mean of the last {} published",
                    g.window
                )
            });
        let (whole, inside) = (g.last - g.first + 1, g.in_period(s.period));
        let part = if inside < whole {
            format!(", {inside} in the period")
        } else {
            String::new()
        };
        out.push_str(&format!(
            "  gap         {} .. {} ({whole} stamps{part}): {fill}\n",
            s.at(g.first),
            s.at(g.last),
        ));
    }
    if r.gaps.len() > shown {
        out.push_str(&format!(
            "  ... {} more gaps (--json: all)\n",
            r.gaps.len() - shown
        ));
    }
    if s.cut > 0 {
        out.push_str(&format!(
            "  bounds      --from or --to falls inside {} stamp interval(s){}: a stamp partly outside the period is not counted\n",
            s.cut,
            if s.daily {
                " (a daily file's rows are UTC days)"
            } else {
                ""
            }
        ));
    }
    if s.off_grid > 0 {
        out.push_str(&format!(
            "  off grid    {} published stamps are not on the schedule ({}): not counted\n",
            s.off_grid,
            cadence.describe()
        ));
    }
    out
}

fn json(
    grade: &str,
    s: &Schedule,
    r: &PeriodRate,
    cadence: &Cadence,
    rule: &PeriodRule,
) -> anyhow::Result<String> {
    let (cadence_minutes, schedule) = match cadence {
        Cadence::Step(c) => (Some(*c), None),
        Cadence::Planned(p) => (None, Some(p.as_str())),
    };
    let (a, b) = s.period;
    let gaps: Vec<serde_json::Value> = r
        .gaps
        .iter()
        .map(|g| {
            serde_json::json!({
                "from": s.at(g.first), "to": s.at(g.last),
                "stamps": g.last - g.first + 1, "in_period": g.in_period(s.period),
                "window": g.window, "fill": g.fill,
            })
        })
        .collect();
    let v = serde_json::json!({
        "grade": grade,
        "first_stamp": s.at(a),
        "last_stamp": s.at(b - 1),
        "cadence_minutes": cadence_minutes,
        "schedule": schedule,
        "lookback_stamps": rule.lookback,
        "scheduled": r.scheduled,
        "published": r.filled,
        "coverage": r.filled as f64 / r.scheduled as f64,
        "longest_gap": r.longest_gap,
        "dropped": r.dropped,
        "rate": r.rate,
        "published_mean": r.published_mean,
        "verdict": r.verdict.as_str(),
        "off_grid": s.off_grid,
        "stamps_cut_by_bounds": s.cut,
        "gaps": gaps,
    });
    Ok(serde_json::to_string_pretty(&v)? + "\n")
}
