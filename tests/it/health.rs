//! `rentix health` end to end, on stores built the way feeds arrive: a quiet
//! market has no finding; a contributor that stops, one that shifts its prices 20%
//! and an index with a 15% step are each named on their day.

use crate::util::{p, rentix_ok};
use chrono::{Days, NaiveDate};
use std::path::{Path, PathBuf};

fn day(k: u64) -> NaiveDate {
    NaiveDate::from_ymd_opt(2025, 3, 1).unwrap() + Days::new(k)
}

/// Six providers listing one H100 grade at 2.50 with a +-1% wobble for 60 days,
/// each priced by `edit(provider, day, price)` (`None`: no listing).
fn store_of(dir: &Path, edit: impl Fn(usize, u64, f64) -> Option<f64>) -> PathBuf {
    let mut csv =
        String::from("kind,observed_at,source,gpu,scope,term,price,price_unit,currency\n");
    for k in 0..60u64 {
        for j in 0..6usize {
            let wobble = 0.01 * ((j as f64) * 1.7 + (k as f64) * 0.9).sin();
            if let Some(price) = edit(j, k, 2.5 * (1.0 + wobble)) {
                csv.push_str(&format!(
                    "listing,{}T12:00:00Z,provider {j},h100-sxm-80gb,vm,on-demand,{price:.4},gpu_hour,USD\n",
                    day(k)
                ));
            }
        }
    }
    let obs = dir.join("obs.csv");
    std::fs::write(&obs, csv).unwrap();
    let store = dir.join("store");
    rentix_ok(&["ingest", "--store", p(&store), p(&obs)]);
    store
}

/// `(date, kind, who)` of each finding `health` writes for `store` and its index.
fn findings(dir: &Path, store: &Path) -> Vec<(String, String, String)> {
    let fixings = dir.join("fixings.csv");
    let published = rentix_ok(&["index", "--store", p(store), "--out", p(&fixings)]);
    // Every publication says what the feeds did in its last days.
    assert!(published.contains("\nfeed health from "), "{published}");
    let out = dir.join("health.csv");
    let said = rentix_ok(&[
        "health",
        "--store",
        p(store),
        "--fixings",
        p(&fixings),
        "--out",
        p(&out),
    ]);
    assert!(said.starts_with("feed health through "), "{said}");
    crate::csvutil::rows(&out)
        .into_iter()
        .map(|r| {
            let who = if r["contributor"].is_empty() {
                r["grade"].clone()
            } else {
                r["contributor"].clone()
            };
            (r["date"].clone(), r["kind"].clone(), who)
        })
        .collect()
}

#[test]
fn a_quiet_market_has_no_finding() {
    let tmp = tempfile::tempdir().unwrap();
    let store = store_of(tmp.path(), |_, _, p| Some(p));
    assert_eq!(findings(tmp.path(), &store), vec![]);
}

#[test]
fn a_contributor_that_stops_and_one_that_shifts_are_named_on_their_days() {
    let tmp = tempfile::tempdir().unwrap();
    let store = store_of(tmp.path(), |j, k, p| match (j, k) {
        (4, k) if k >= 40 => None,
        (5, k) if k >= 57 => None, // silent its last 3 days: not yet 5
        (3, k) if k >= 30 => Some(p * 1.2),
        _ => Some(p),
    });
    let f = findings(tmp.path(), &store);
    let of = |kind: &str| -> Vec<(String, String)> {
        f.iter()
            .filter(|x| x.1 == kind)
            .map(|x| (x.0.clone(), x.2.clone()))
            .collect()
    };
    assert_eq!(
        of("contributor_jump"),
        vec![(day(30).to_string(), "provider 3".to_string())],
        "{f:?}"
    );
    assert_eq!(
        of("contributor_silent"),
        vec![(day(40).to_string(), "provider 4".to_string())],
        "{f:?}"
    );
}

#[test]
fn an_index_with_a_15_percent_step_breaks_on_its_day() {
    let tmp = tempfile::tempdir().unwrap();
    let store = store_of(tmp.path(), |_, k, p| {
        Some(if k >= 45 { p * 1.15 } else { p })
    });
    let f = findings(tmp.path(), &store);
    let breaks: Vec<_> = f.iter().filter(|x| x.1 == "level_break").collect();
    assert!(!breaks.is_empty(), "{f:?}");
    assert!(breaks.iter().all(|x| x.0 == day(45).to_string()), "{f:?}");
    assert!(
        breaks.iter().any(|x| x.2 == "h100-sxm-80gb/vm/on-demand"),
        "{f:?}"
    );
    // The report shows the same finding, dated.
    let html = tmp.path().join("report.html");
    rentix_ok(&[
        "report",
        "--in",
        p(&tmp.path().join("fixings.csv")),
        "--out",
        p(&html),
    ]);
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(
        text.contains("<b>Feed health</b>: "),
        "no feed health section"
    );
    assert!(
        text.contains(&format!(
            "<tr><td class=l>{}</td><td class=l>level_break</td><td class=l>h100-sxm-80gb/vm/on-demand</td>",
            day(45)
        )),
        "the step is not in the report"
    );
}

/// The reports health reads from a store's coded columns are those of its rows read
/// whole, grouped by hand: contributors trimmed and lowercased (two spellings of
/// one provider are one), grades with their region, each date's prices in the
/// store's row order; and from a date on (through another), only those dates'.
#[test]
fn reports_read_from_coded_columns_are_the_rows_grouped_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv =
        String::from("kind,observed_at,source,gpu,scope,term,price,price_unit,currency,region\n");
    for k in 0..70u64 {
        for (j, source) in ["Acme", " acme", "Borealis", "Kestrel"].iter().enumerate() {
            // The two spellings of Acme share a region each day.
            let region = ["", "us", "eu"][(j / 2 + k as usize) % 3];
            let price = 2.0 + (k as f64) / 100.0 + (j as f64) / 10.0;
            csv.push_str(&format!(
                "listing,{}T{:02}:00:00Z,\"{source}\",h100-sxm-80gb,vm,on-demand,{price:.4},gpu_hour,USD,{region}\n",
                day(k),
                10 + j
            ));
        }
    }
    let obs = dir.path().join("obs.csv");
    std::fs::write(&obs, csv).unwrap();
    let path = dir.path().join("store");
    rentix_ok(&["ingest", "--store", p(&path), p(&obs)]);
    let store = rentix_store::Store::open(&path).unwrap();
    let by_hand = |from: Option<NaiveDate>, to: Option<NaiveDate>| {
        let mut out: rentix_index::health::Reports = Default::default();
        for r in store
            .read_projected(from, to, rentix_store::Projection::All)
            .unwrap()
        {
            out.entry((r.obs.source.trim().to_lowercase(), r.obs.grade.key()))
                .or_default()
                .entry(r.obs.fixing_date)
                .or_default()
                .push(r.obs.usd_per_gpu_hour.get());
        }
        out
    };
    let whole = rentix_index::health::reports_of(&store).unwrap();
    assert_eq!(whole, by_hand(None, None));
    assert!(whole.keys().any(|(c, _)| c == "acme"), "{:?}", whole.keys());
    assert!(
        whole.keys().any(|(_, g)| g.ends_with("@eu")),
        "{:?}",
        whole.keys()
    );
    assert!(
        whole
            .values()
            .any(|days| days.values().any(|p| p.len() == 2)),
        "two spellings of one provider report twice a day in some grade"
    );
    let (from, to) = (day(40), day(55));
    let since = rentix_index::health::reports_between(&store, Some(from), None).unwrap();
    assert_eq!(since, by_hand(Some(from), None));
    assert!(since.values().all(|days| days.keys().all(|d| *d >= from)));
    let between = rentix_index::health::reports_between(&store, Some(from), Some(to)).unwrap();
    assert_eq!(between, by_hand(Some(from), Some(to)));
    assert!(between
        .values()
        .all(|days| days.keys().all(|d| (from..=to).contains(d))));
    assert!(between.values().any(|days| days.contains_key(&to)));
}

/// A publication `--to D` before the store's last day reports health as of D (it
/// reads nothing later), and its hint is the command that shows the same: `health
/// --to D`. A hostile round followed the hint without the flag and saw other
/// counts (a shift seen on D's last report days is not yet held: not a finding as
/// of D, a finding once the days after it are read).
#[test]
fn a_publication_before_the_store_s_end_points_at_health_as_of_its_day() {
    let tmp = tempfile::tempdir().unwrap();
    let store = store_of(tmp.path(), |j, k, p| match (j, k) {
        (3, k) if k >= 30 => Some(p * 1.2),
        (4, k) if k >= 33 => None,
        _ => Some(p),
    });
    let fixings = tmp.path().join("fixings.csv");
    let d = day(31).to_string();
    let published = rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--to",
        &d,
        "--out",
        p(&fixings),
    ]);
    let line = published
        .lines()
        .find(|l| l.starts_with("feed health from"))
        .unwrap_or_else(|| panic!("{published}"));
    assert!(line.ends_with(&format!("--to {d}")), "{line}");
    let since = &line["feed health from ".len()..][..10];
    let said: usize = line
        .split(": ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    // The hinted command, as of the day, finds what the line counted from its
    // first day; the whole store finds more (the silence after the day).
    let count = |more: &[&str]| {
        let out = tmp.path().join("health.csv");
        let mut args = vec![
            "health",
            "--store",
            p(&store),
            "--fixings",
            p(&fixings),
            "--out",
            p(&out),
        ];
        args.extend_from_slice(more);
        let said = rentix_ok(&args);
        let rows = crate::csvutil::rows(&out);
        let within = rows
            .iter()
            .filter(|r| r["date"].as_str() >= since && r["date"].as_str() <= d.as_str())
            .count();
        (said, within, rows.len())
    };
    let (as_of, within, _) = count(&["--to", &d]);
    assert!(
        as_of.starts_with(&format!("feed health through {d}:")),
        "{as_of}"
    );
    assert_eq!(within, said, "{line}\n{as_of}");
    let (whole, _, all) = count(&[]);
    assert!(all > within, "{whole}");
}

/// A publication of some grades (`--grade`) notes what concerns them, and its
/// line is dated from the first day it read: a help example's line said "from
/// 2024-07-01" (its --from) over the last 60 days it reads, and counted the
/// contributor jumps of every grade in the store.
#[test]
fn a_publication_of_some_grades_notes_their_findings_from_the_days_it_read() {
    let tmp = tempfile::tempdir().unwrap();
    let mut csv =
        String::from("kind,observed_at,source,gpu,scope,term,price,price_unit,currency,region\n");
    for k in 0..100u64 {
        for j in 0..6usize {
            for gpu in ["h100-sxm-80gb", "a100-sxm-80gb"] {
                let wobble = 0.01 * ((j as f64) * 1.7 + (k as f64) * 0.9).sin();
                // Provider 3 shifts its A100 prices 20% from day 80 on.
                let shift = if gpu.starts_with("a100") && j == 3 && k >= 80 {
                    1.2
                } else {
                    1.0
                };
                csv.push_str(&format!(
                    "listing,{}T12:00:00Z,provider {j},{gpu},vm,on-demand,{:.4},gpu_hour,USD,eu-west\n",
                    day(k),
                    2.5 * (1.0 + wobble) * shift
                ));
            }
        }
    }
    let obs = tmp.path().join("obs.csv");
    std::fs::write(&obs, csv).unwrap();
    let store = tmp.path().join("store");
    rentix_ok(&["ingest", "--store", p(&store), p(&obs)]);
    let line = |out: &str, grade: &[&str]| {
        let out = tmp.path().join(out);
        let mut args = vec!["index", "--store", p(&store), "--out", p(&out)];
        args.extend_from_slice(&["--from", "2025-03-01"]);
        args.extend_from_slice(grade);
        let said = rentix_ok(&args);
        said.lines()
            .find(|l| l.starts_with("feed health from"))
            .unwrap_or_else(|| panic!("{said}"))
            .to_string()
    };
    // The last day is day 99; the line reads from day 99 - 60.
    let from = format!("feed health from {}:", day(39));
    let all = line("all.csv", &[]);
    assert!(
        all.starts_with(&from) && all.contains("contributor_jump"),
        "{all}"
    );
    let h100 = line("h100.csv", &["--grade", "h100-*/*/*"]);
    assert!(
        h100.starts_with(&from) && h100.contains("nothing to note"),
        "{h100}"
    );
    // Every row is of a region: the jump is found in the A100 grade's regional
    // report, and concerns the A100 grade a run of it publishes (a hostile round
    // found every regional jump dropped from a --grade run's line).
    let a100 = line("a100.csv", &["--grade", "a100-*/*/*"]);
    assert!(
        a100.starts_with(&from) && a100.contains("1 contributor_jump"),
        "{a100}"
    );
}

/// `health --to` outside the store's fixing dates says so: a day before the
/// first was answered "through -: 0 contributor(s)", exit 0, as if the feeds had
/// been quiet; a day after the last was capped at it without a word.
#[test]
fn a_day_outside_the_store_is_named_as_outside_it() {
    let tmp = tempfile::tempdir().unwrap();
    let store = store_of(tmp.path(), |_, _, p| Some(p));
    let before = crate::util::rentix(&["health", "--store", p(&store), "--to", "2025-01-31"]);
    let err = String::from_utf8_lossy(&before.stderr);
    assert_eq!(before.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--to 2025-01-31 is before the store's first fixing date (2025-03-01)"),
        "{err}"
    );
    let after = rentix_ok(&["health", "--store", p(&store), "--to", "2026-01-31"]);
    assert!(
        after.starts_with(&format!(
            "feed health through {} (the store's last fixing date; --to 2026-01-31 is after it):",
            day(59)
        )),
        "{after}"
    );
}

/// A first-hour run: a full publication's feed-health line counted findings the
/// `rentix health` it points to does not list, and missed some it does (on the
/// README's simulated market, 26 findings with 5 level breaks against 27 with
/// 6): the line judged breaks on the last 60 days of fixings, a shorter history
/// than a grade's 30 previous changes. The line now reads every fixing the run
/// computed: its counts by kind are health's, over the same days.
#[test]
fn a_full_publication_s_health_line_is_what_health_says_of_its_days() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sim = d.join("sim");
    rentix_ok(&["simulate", "--out", p(&sim), "--seed", "7", "--days", "200"]);
    let store = d.join("store");
    rentix_ok(&[
        "ingest",
        "--store",
        p(&store),
        p(&sim.join("observations.csv")),
    ]);
    let out = d.join("f.csv");
    let said = rentix_ok(&["index", "--store", p(&store), "--out", p(&out)]);
    let line = said
        .lines()
        .find(|l| l.starts_with("feed health from "))
        .expect(&said);
    let from = &line["feed health from ".len().."feed health from ".len() + 10];
    let health = d.join("h.csv");
    rentix_ok(&[
        "health",
        "--store",
        p(&store),
        "--fixings",
        p(&out),
        "--out",
        p(&health),
    ]);
    let same = |line: &str, from: &str| {
        let mut kinds: std::collections::BTreeMap<String, usize> = Default::default();
        for r in crate::csvutil::rows(&health) {
            if r["date"].as_str() >= from {
                *kinds.entry(r["kind"].clone()).or_default() += 1;
            }
        }
        let total: usize = kinds.values().sum();
        let by: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
        assert!(
            line.contains(&format!("{total} finding(s) ({};", by.join(", "))),
            "{line}\nhealth from {from}: {kinds:?}"
        );
    };
    same(line, from);
    // A publication from 54 days before the end: the line covers its first days
    // too, each judged on a contributor's previous fortnight of reports (a
    // hostile round found the line's first fortnight read without it).
    let last: NaiveDate = from.parse::<NaiveDate>().unwrap() + Days::new(6);
    let early = (last - Days::new(54)).to_string();
    let said = rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--out",
        p(&d.join("g.csv")),
        "--from",
        &early,
    ]);
    let line = said
        .lines()
        .find(|l| l.starts_with("feed health from "))
        .expect(&said);
    assert!(
        line.starts_with(&format!("feed health from {early}:")),
        "{line}"
    );
    same(line, &early);
}
