//! `rentix health`: what the feeds did (rentix_index::health).

use crate::cli::HealthArgs;
use anyhow::Context;
use rentix_index::health::{feed_health, reports_between, Health, HealthOptions};
use rentix_store::Store;
use rentix_table::{Col, Table};

pub(super) fn run(a: HealthArgs) -> anyhow::Result<()> {
    for (flag, x) in [("--jump", a.jump), ("--level-break", a.level_break)] {
        if !(x.is_finite() && x > 0.0 && x < 10.0) {
            crate::commands::usage!(
                "{flag} {x}: a relative move above 0 and below 10 (0.15 = 15%)"
            );
        }
    }
    let store = Store::open(&a.store)?;
    // A day outside the store's fixing dates is named as such: before the first
    // nothing was reported yet (not a quiet market); after the last, health is
    // through the last.
    let mut past_the_end = None;
    if let (Some(to), Some((first, last))) = (a.to, store.fixing_dates()?) {
        if to < first {
            crate::commands::usage!(
                "--to {to} is before the store's first fixing date ({first}): no feed had reported yet"
            );
        }
        past_the_end = (to > last).then_some(to);
    }
    let reports = reports_between(&store, None, a.to)?;
    let mut fixings = match &a.fixings {
        Some(f) => {
            rentix_index::check_published(f)?;
            rentix_index::read_fixings(f).with_context(|| format!("--fixings {}", f.display()))?
        }
        None => Vec::new(),
    };
    if let Some(to) = a.to {
        fixings.retain(|f| f.date <= to);
    }
    let o = HealthOptions {
        silent_days: a.silent_days,
        jump: a.jump,
        history_days: a.history_days,
        level_break: a.level_break,
    };
    let h = feed_health(&reports, &fixings, &o);
    {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        let mut said = text(&h, &o, a.fixings.is_some(), SHOWN);
        if let (Some(to), Some(through)) = (past_the_end, h.through) {
            said = said.replacen(
                &format!("through {through}:"),
                &format!(
                    "through {through} (the store's last fixing date; --to {to} is after it):"
                ),
                1,
            );
        }
        stdout.write_all(said.as_bytes())?;
    }
    if let Some(out) = &a.out {
        findings_table(&h).write(out)?;
    }
    if let Some(out) = &a.coverage {
        coverage_table(&h).write(out)?;
    }
    Ok(())
}

/// Findings printed; the rest are counted (all of them go to `--out`).
const SHOWN: usize = 40;

/// What `health` prints: a headline, then one line a finding, the latest `shown`
/// (the days a publication's hint points at), saying how many earlier ones
/// `--out` holds.
pub(crate) fn text(h: &Health, o: &HealthOptions, with_fixings: bool, shown: usize) -> String {
    let mut s = format!(
        "feed health through {}: {} contributor(s); {} finding(s) (silent {} days or more, jumps of {:.0}% against {} days of history{})\n",
        h.through.map_or("-".to_string(), |d| d.to_string()),
        h.contributors,
        h.findings.len(),
        o.silent_days,
        100.0 * o.jump,
        o.history_days,
        if with_fixings {
            format!(", level breaks of {:.0}%", 100.0 * o.level_break)
        } else {
            String::new()
        }
    );
    let kinds: std::collections::BTreeMap<&str, usize> =
        h.findings.iter().fold(Default::default(), |mut m, f| {
            *m.entry(f.kind).or_default() += 1;
            m
        });
    if !kinds.is_empty() {
        let by: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
        s.push_str(&format!("  by kind: {}\n", by.join(", ")));
    }
    let earlier = h.findings.len().saturating_sub(shown);
    if earlier > 0 {
        s.push_str(&format!(
            "  ... {earlier} earlier finding(s) not shown (--out FILE writes every one); the latest {shown}:\n"
        ));
    }
    for f in h.findings.iter().skip(earlier) {
        let who = match (f.grade.is_empty(), f.contributor.is_empty()) {
            (false, false) => format!("{} in {}", f.contributor, f.grade),
            (true, _) => f.contributor.clone(),
            (false, true) => f.grade.clone(),
        };
        s.push_str(&format!(
            "  {}  {:<18}  {who}: {}\n",
            f.date, f.kind, f.evidence
        ));
    }
    s
}

fn findings_table(h: &Health) -> Table {
    let f = &h.findings;
    let col = |g: &dyn Fn(&rentix_index::health::Finding) -> String| {
        Col::Str(f.iter().map(|x| Some(g(x))).collect())
    };
    let mut t = Table::new();
    t.push("date", Col::dates(f.iter().map(|x| x.date)));
    t.push("kind", col(&|x| x.kind.to_string()));
    t.push("grade", col(&|x| x.grade.clone()));
    t.push("contributor", col(&|x| x.contributor.clone()));
    t.push("evidence", col(&|x| x.evidence.clone()));
    t
}

fn coverage_table(h: &Health) -> Table {
    let c = &h.coverage;
    let mut t = Table::new();
    t.push(
        "grade",
        Col::Str(c.iter().map(|x| Some(x.grade.clone())).collect()),
    );
    t.push(
        "month",
        Col::Str(c.iter().map(|x| Some(x.month.clone())).collect()),
    );
    t.push(
        "days",
        Col::I64(c.iter().map(|x| Some(x.days as i64)).collect()),
    );
    t.push(
        "sufficient_days",
        Col::I64(c.iter().map(|x| Some(x.sufficient as i64)).collect()),
    );
    t
}
