//! What an index report says beside its board and charts: when the fixings were
//! fixed (the methodology's cut-off), the restatements the publication has made,
//! and why most of a file's rows are empty where they are (issue 49: a restated
//! publication's report never mentioned its restatements; a rate-card index that is
//! 94% empty rows was not explained).

use crate::html::esc;
use rentix_index::{Fixing, Methodology};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// Restatements listed in the report, the latest first; the rest are counted.
const RESTATEMENTS_SHOWN: usize = 25;

/// Share of empty rows above which the report explains them.
const EMPTY_SHARE_EXPLAINED: f64 = 0.5;

/// The methodology the fixings were published under: the `methodology.toml` beside
/// them when it reads, else the shipped methodology whose version every row names
/// (as `verify` finds it); `None` when neither (a methodology of the user's own, or
/// several versions).
pub(crate) fn methodology_of(beside: Option<&Path>, fixings: &[Fixing]) -> Option<Methodology> {
    if let Some(m) = beside.and_then(|p| Methodology::from_file(p).ok()) {
        return Some(m);
    }
    let mut versions = fixings.iter().map(|f| f.methodology_version.as_str());
    let first = versions.next()?;
    if versions.any(|v| v != first) {
        return None;
    }
    Methodology::shipped_with_version(first)
}

/// The cut-off as the board writes it after a date: `24:00 UTC`.
pub(crate) fn cutoff_text(m: &Methodology) -> String {
    let c = m.cutoff();
    format!("{} {}", c.time, c.timezone)
}

/// The publication's restatements (its `<stem>_restatements.csv`), folded: how many
/// rows, by reason, and the latest ones with the value before and after. A log that
/// cannot be read (its digest disagrees) is said so, not passed over.
pub(crate) fn write_restatements(html: &mut String, fixings: &Path) {
    let path = rentix_index::restatements_path(fixings);
    if !path.exists() {
        return;
    }
    let log = match rentix_index::read_restatements(&path) {
        Ok(log) => log,
        Err(e) => {
            let _ = writeln!(
                html,
                "<p class=\"note\"><b>Restatements</b>: the log {} cannot be read: {}</p>",
                esc(&path.display().to_string()),
                esc(&e.to_string())
            );
            return;
        }
    };
    if log.is_empty() {
        return;
    }
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &log {
        *reasons.entry(r.reason.as_str()).or_default() += 1;
    }
    let by: Vec<String> = reasons.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let rows: std::collections::BTreeSet<(chrono::NaiveDate, &str)> =
        log.iter().map(|r| (r.date, r.grade.as_str())).collect();
    let _ = writeln!(
        html,
        "<details id=\"restatements\"><summary><b>Restatements</b>: {} restatement(s) of {} published row(s) ({}) (click to open)</summary>\
         <p>A restated row keeps its date and grade and takes a new publication number; the value as first published stays in <code>{}</code>, \
         which settlements \"as first published\" read.</p>",
        log.len(),
        rows.len(),
        by.join(", "),
        esc(&path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default())
    );
    let _ = writeln!(
        html,
        "<table><tr><th class=l>date</th><th class=l>grade</th><th>before</th><th>after</th><th>publication</th><th class=l>reason</th></tr>"
    );
    let mut latest: Vec<_> = log.iter().collect();
    latest.sort_by(|a, b| {
        (b.new_publication, b.date, &b.grade).cmp(&(a.new_publication, a.date, &a.grade))
    });
    let v = |x: Option<f64>| x.map_or("&ndash;".into(), |x| format!("{x:.4}"));
    for r in latest.iter().take(RESTATEMENTS_SHOWN) {
        let _ = writeln!(
            html,
            "<tr><td class=l>{}</td><td class=l>{}</td><td>{}</td><td>{}</td><td>{} &rarr; {}</td><td class=l>{}</td></tr>",
            r.date,
            esc(&r.grade),
            v(r.old_value),
            v(r.new_value),
            r.old_publication,
            r.new_publication,
            esc(&r.reason)
        );
    }
    let _ = writeln!(html, "</table>");
    if log.len() > RESTATEMENTS_SHOWN {
        let _ = writeln!(
            html,
            "<p>... and {} earlier restatements.</p>",
            log.len() - RESTATEMENTS_SHOWN
        );
    }
    let _ = writeln!(html, "</details>");
}

/// When most rows have no value, why, and what to do about it: the grades whose
/// rows are mostly empty and the reason their rows give, and `index --valued-only`,
/// which writes only the valued rows.
pub(crate) fn write_empty_rows(html: &mut String, fixings: &[Fixing]) {
    let empty = fixings.iter().filter(|f| f.value.is_none()).count();
    if fixings.is_empty() || (empty as f64) <= EMPTY_SHARE_EXPLAINED * fixings.len() as f64 {
        return;
    }
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    for f in fixings.iter().filter(|f| f.value.is_none()) {
        let code = f
            .flags
            .split(';')
            .find(|s| !s.is_empty() && *s != "low_confidence")
            .map_or("no_data", |c| c.split('=').next().unwrap_or(c));
        *reasons.entry(code).or_default() += 1;
    }
    let mut reasons: Vec<(&str, usize)> = reasons.into_iter().collect();
    reasons.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let _ = writeln!(
        html,
        "<p class=\"note\" id=\"empty-rows\"><b>{} of {} rows ({}) have no value.</b> A row is written for every grade on every fixing day of its life, \
         so a sparse source (a rate card revised now and then, a grade listed once a month) leaves most days empty; each such row says why in its \
         <code>flags</code> ({}). The days with a value are the index; <code>rentix index --valued-only</code> writes only those, and <code>verify</code> \
         recognizes such a file.</p>",
        empty,
        fixings.len(),
        rentix_core::stats::percent(empty as f64 / fixings.len() as f64),
        reasons
            .iter()
            .take(3)
            .map(|(k, n)| format!("{n} <code>{}</code>", esc(k)))
            .collect::<Vec<_>>()
            .join(", ")
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(s: &str) -> chrono::NaiveDate {
        s.parse().unwrap()
    }

    /// 94 of 100 rows empty (a rate card revised now and then): the report says how
    /// many, why (the rows' own flag) and names `--valued-only`; 50 of 100 is not
    /// "most" and says nothing.
    #[test]
    fn mostly_empty_rows_are_explained_with_valued_only() {
        let rows = |empty: usize| -> Vec<Fixing> {
            (0..100)
                .map(|i| {
                    let mut f = Fixing::for_test(
                        day("2025-01-01") + chrono::Days::new(i),
                        "h100-sxm-80gb/bare-metal/on-demand",
                        (i as usize >= empty).then_some(2.0),
                    );
                    if f.value.is_none() {
                        f.flags = "insufficient_contributors".into();
                    }
                    f
                })
                .collect()
        };
        let mut html = String::new();
        write_empty_rows(&mut html, &rows(94));
        assert!(
            html.contains("94 of 100 rows (94%) have no value"),
            "{html}"
        );
        assert!(
            html.contains("94 <code>insufficient_contributors</code>"),
            "{html}"
        );
        assert!(html.contains("rentix index --valued-only"));
        let mut none = String::new();
        write_empty_rows(&mut none, &rows(50));
        assert!(none.is_empty(), "{none}");
    }

    /// A restated publication's report lists its restatements: how many rows, by
    /// reason, and each with the value before and after (the report never
    /// mentioned them). A file without a log says nothing.
    #[test]
    fn restatements_are_listed_with_before_and_after() {
        let dir = tempfile::tempdir().unwrap();
        let fixings = dir.path().join("f.csv");
        let mut html = String::new();
        write_restatements(&mut html, &fixings);
        assert!(html.is_empty());
        std::fs::write(
            rentix_index::restatements_path(&fixings),
            "date,grade,old_value,new_value,old_publication,new_publication,reason\n\
             2025-06-02,h100-sxm-80gb/bare-metal/on-demand,2.4901,2.5123,1,2,late_data\n\
             2025-06-02,h100-sxm-80gb/bare-metal/on-demand,2.5123,2.5200,2,3,late_data\n\
             2025-06-03,h100-all,101.2,,1,2,withdrawn\n",
        )
        .unwrap();
        write_restatements(&mut html, &fixings);
        assert!(
            html.contains("3 restatement(s) of 2 published row(s) (2 late_data, 1 withdrawn)"),
            "{html}"
        );
        assert!(
            html.contains("<td>2.5123</td><td>2.5200</td><td>2 &rarr; 3</td>"),
            "{html}"
        );
        assert!(html.contains("<td>101.2000</td><td>&ndash;</td>"), "{html}");
    }

    /// The fixing time comes from the methodology: the file beside the fixings, or
    /// the shipped one whose version the rows name; none for an unknown version.
    #[test]
    fn the_cutoff_is_the_methodologys() {
        let shipped = Methodology::from_toml(
            rentix_core::bundled(rentix_core::ConfigKind::Methodology, "default").unwrap(),
            Path::new("default"),
        )
        .unwrap();
        let mut f = Fixing::for_test(day("2025-01-01"), "g/x/y", Some(1.0));
        f.methodology_version = shipped.version.clone();
        let m = methodology_of(None, &[f.clone()]).unwrap();
        assert_eq!(cutoff_text(&m), cutoff_text(&shipped));
        f.methodology_version = "someone-elses-1.0".into();
        assert!(methodology_of(None, &[f]).is_none());
    }
}
