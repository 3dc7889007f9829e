//! `rentix settle`: a period's rate, coverage and verdict from a fixings file, on a
//! hand-built intraday file whose answers are worked out in the comments (the open
//! Computable index's settlement rule; its own synthetic vectors are the library's
//! tests, `period_rate.rs`).

use crate::util::{p, rentix, rentix_ok};
use serde_json::Value;

/// `rentix settle --json` of `[from, to)` on `file`, with `more` flags.
fn settle_json(file: &std::path::Path, from: &str, to: &str, more: &[&str]) -> Value {
    let mut args = vec![
        "settle",
        "--fixings",
        p(file),
        "--from",
        from,
        "--to",
        to,
        "--json",
    ];
    args.extend_from_slice(more);
    serde_json::from_str(&rentix_ok(&args)).unwrap()
}

/// `rentix settle` of `file` over 2025-06-01, as text.
fn settle_day(file: &std::path::Path) -> std::process::Output {
    rentix(&[
        "settle",
        "--fixings",
        p(file),
        "--from",
        "2025-06-01",
        "--to",
        "2025-06-02",
    ])
}

/// An hourly intraday file of one grade: `values[k]` at 2025-06-01 (k+1):00 UTC
/// (`None`: a stamp without a value, as a thin panel publishes it).
fn hourly(dir: &std::path::Path, values: &[Option<f64>]) -> std::path::PathBuf {
    let stamps: Vec<(i64, Option<f64>)> = values
        .iter()
        .enumerate()
        .map(|(k, v)| (60 * (k as i64 + 1), *v))
        .collect();
    stamped(dir, "hourly.csv", 60, &stamps)
}

/// The hourly file of 01:00 .. 06:00 = 3.0, 3.2, [gap], 3.4, 3.6, 3.8.
fn six_hours(dir: &std::path::Path) -> std::path::PathBuf {
    hourly(
        dir,
        &[Some(3.0), Some(3.2), None, Some(3.4), Some(3.6), Some(3.8)],
    )
}

/// An intraday file `name` of one grade, a stamp every `step` minutes: `(minutes
/// after 2025-06-01 00:00 UTC, value)`, `None` a stamp without a value. Stamps
/// label their interval's end, or with a negative `step` its start (slots: the
/// `date` column is then the stamp's own day).
fn stamped(
    dir: &std::path::Path,
    name: &str,
    step: i64,
    stamps: &[(i64, Option<f64>)],
) -> std::path::PathBuf {
    let (step, slot) = (step.abs(), step < 0);
    let mut s = String::from("date,fixed_at,grade,value,band,votes_p25_p75,method,n_contributors,n_observed,n_carried,n_rejected,sufficient,flags,methodology_version\n");
    let day0 = chrono::NaiveDate::from_ymd_opt(2025, 6, 1)
        .unwrap()
        .and_hms_opt(0, 0, 0)
        .unwrap()
        .and_utc();
    for (m, v) in stamps {
        let t = day0 + chrono::Duration::minutes(*m);
        let date = if slot {
            t.date_naive()
        } else {
            (t - chrono::Duration::minutes(step)).date_naive()
        };
        let (value, ok, flag) = match v {
            Some(x) => (format!("{x}"), "true", ""),
            None => (String::new(), "false", "thin_panel"),
        };
        s.push_str(&format!(
            "{date},{},g/vm/on-demand,{value},,,intraday,5,5,0,0,{ok},{flag},t-1\n",
            t.format("%Y-%m-%dT%H:%M:%S%.6fZ")
        ));
    }
    let path = dir.join(name);
    std::fs::write(&path, s).unwrap();
    path
}

#[test]
fn settle_fills_gaps_from_the_values_before_them_and_gives_a_verdict() {
    let dir = tempfile::tempdir().unwrap();
    // 01:00 .. 06:00: 3.0, 3.2, [gap], 3.4, 3.6, 3.8; the period 00:00 .. 06:00
    // holds the six stamps. The gap of one takes the last one value, 3.2:
    // (3.0 + 3.2 + 3.2 + 3.4 + 3.6 + 3.8) / 6 = 3.366667; 5 of 6 published (83%):
    // determination, the rate given as indicative.
    let f = six_hours(dir.path());
    let run = |from: &str, to: &str| settle_json(&f, from, to, &[]);
    let v = run("2025-06-01T00:00:00Z", "2025-06-01T06:00:00Z");
    assert_eq!(v["cadence_minutes"], 60, "{v}");
    assert_eq!(
        (v["scheduled"].as_u64(), v["published"].as_u64()),
        (Some(6), Some(5))
    );
    assert!(
        (v["rate"].as_f64().unwrap() - 20.2 / 6.0).abs() < 1e-12,
        "{v}"
    );
    assert_eq!(v["verdict"], "determination");
    assert_eq!(v["gaps"][0]["fill"], 3.2);
    // 03:00 .. 06:00 (stamps 04:00, 05:00, 06:00): all published, settled, (3.4 +
    // 3.6 + 3.8) / 3 = 3.6.
    let v = run("2025-06-01T03:00:00Z", "2025-06-01T06:00:00Z");
    assert_eq!(v["verdict"], "settled");
    assert!((v["rate"].as_f64().unwrap() - 3.6).abs() < 1e-12, "{v}");
    // The human lines say the same.
    let said = rentix_ok(&[
        "settle",
        "--fixings",
        p(&f),
        "--from",
        "2025-06-01",
        "--to",
        "2025-06-01T06:00:00Z",
    ]);
    assert!(said.contains("rate        3.366667"), "{said}");
    assert!(said.contains("5 of 6 stamps published (83.33%)"), "{said}");
    assert!(
        said.contains(
            "gap         2025-06-01T03:00Z .. 2025-06-01T03:00Z (1 stamps): filled with 3.200000"
        ),
        "{said}"
    );
}

#[test]
fn settle_refuses_what_it_cannot_settle_by_cause() {
    let dir = tempfile::tempdir().unwrap();
    let f = hourly(dir.path(), &[Some(3.0), Some(3.2)]);
    let code = |args: &[&str]| rentix(args).status.code();
    let base = ["settle", "--fixings", p(&f)];
    fn with<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
        [base, more].concat()
    }
    // --from not before --to, a share above 1, a bad time: usage (2).
    assert_eq!(
        code(&with(
            &base,
            &["--from", "2025-06-02", "--to", "2025-06-01"]
        )),
        Some(2)
    );
    assert_eq!(
        code(&with(
            &base,
            &[
                "--from",
                "2025-06-01",
                "--to",
                "2025-06-02",
                "--settle-at",
                "1.5"
            ]
        )),
        Some(2)
    );
    assert_eq!(
        code(&with(&base, &["--from", "June 1", "--to", "2025-06-02"])),
        Some(2)
    );
    // A grade the file lacks: input (3); a missing file: I/O (4).
    assert_eq!(
        code(&with(
            &base,
            &[
                "--grade",
                "x/vm/spot",
                "--from",
                "2025-06-01",
                "--to",
                "2025-06-02"
            ]
        )),
        Some(3)
    );
    let gone = dir.path().join("gone.csv");
    assert_eq!(
        code(&[
            "settle",
            "--fixings",
            p(&gone),
            "--from",
            "2025-06-01",
            "--to",
            "2025-06-02"
        ]),
        Some(4)
    );
}

/// A lane published four times a day (06:00, 12:00, 18:00, 24:00) through June 2,
/// then every 15 minutes from June 3. On the file's own step (15 minutes) June 2
/// counts 4 of 96 stamps published: determination (issue 50: "92 of 96 stamps as
/// missing"). On its schedule (`--schedule 6h --schedule 2025-06-03=15m`) it is 4 of
/// 4, settled, at (2 + 3 + 4 + 5) / 4 = 3.5; June 2 and 3 together are 4 + 96 = 100
/// stamps, all published: (14 + 96 x 6) / 100 = 5.9.
#[test]
fn a_publication_schedule_counts_only_the_stamps_the_lane_publishes() {
    let dir = tempfile::tempdir().unwrap();
    let day = 1440;
    let mut stamps = Vec::new();
    for d in 0..2 {
        for (k, v) in [(1, 2.0), (2, 3.0), (3, 4.0), (4, 5.0)] {
            stamps.push((d * day + k * 360, Some(v)));
        }
    }
    for k in 1..=96 {
        stamps.push((2 * day + k * 15, Some(6.0)));
    }
    let f = stamped(dir.path(), "lane.csv", 15, &stamps);
    let settle = |from: &str, to: &str, schedule: &[&str]| {
        let flags: Vec<&str> = schedule.iter().flat_map(|s| ["--schedule", s]).collect();
        settle_json(&f, from, to, &flags)
    };
    let plain = settle("2025-06-02", "2025-06-03", &[]);
    assert_eq!(plain["scheduled"], 96, "{plain}");
    assert_eq!(plain["published"], 4, "{plain}");
    assert_eq!(plain["verdict"], "determination", "{plain}");
    let eras = ["6h", "2025-06-03=15m"];
    let v = settle("2025-06-02", "2025-06-03", &eras);
    assert_eq!(
        (v["scheduled"].as_u64(), v["published"].as_u64()),
        (Some(4), Some(4)),
        "{v}"
    );
    assert_eq!(v["verdict"], "settled", "{v}");
    assert!((v["rate"].as_f64().unwrap() - 3.5).abs() < 1e-12, "{v}");
    assert_eq!(v["schedule"], "6h 2025-06-03=15m");
    let both = settle("2025-06-02", "2025-06-04", &eras);
    assert_eq!(both["scheduled"], 100, "{both}");
    assert_eq!(both["verdict"], "settled", "{both}");
    assert!(
        (both["rate"].as_f64().unwrap() - 5.9).abs() < 1e-12,
        "{both}"
    );
    // Times of day say the same as the 6-hour step here.
    let times = settle(
        "2025-06-02",
        "2025-06-03",
        &["00:00,06:00,12:00,18:00", "2025-06-03=15m"],
    );
    assert_eq!(times["rate"], v["rate"]);
    // A schedule with no first era, or a time that is not one: usage (2).
    for bad in [&["2025-06-03=15m"][..], &["6h", "x=15m"], &["25:00"]] {
        let mut args = vec![
            "settle",
            "--fixings",
            p(&f),
            "--from",
            "2025-06-02",
            "--to",
            "2025-06-03",
        ];
        for s in bad {
            args.extend(["--schedule", s]);
        }
        assert_eq!(rentix(&args).status.code(), Some(2), "{bad:?}");
    }
}

/// A slot-labelled file (`label = "slot"`: the stamp `t` covers `[t, t + 1h)`):
/// June 1 is its slots 00:00 .. 23:00, valued 1 .. 24, mean 12.5; June 2's 00:00
/// slot (100) is not in it. Read as interval ends the day would be 01:00 .. 24:00,
/// (2 + .. + 24 + 100) / 24 = 16.625. The slots are told from the file's `date`
/// column (a 00:00 stamp dated its own day).
#[test]
fn a_slot_labelled_file_settles_the_slots_a_period_opens() {
    let dir = tempfile::tempdir().unwrap();
    let mut stamps: Vec<(i64, Option<f64>)> =
        (0..24).map(|h| (60 * h, Some(h as f64 + 1.0))).collect();
    stamps.push((24 * 60, Some(100.0)));
    let f = stamped(dir.path(), "slots.csv", -60, &stamps);
    let v = settle_json(&f, "2025-06-01", "2025-06-02", &[]);
    assert_eq!(v["scheduled"], 24, "{v}");
    assert_eq!(v["first_stamp"], "2025-06-01T00:00Z", "{v}");
    assert_eq!(v["last_stamp"], "2025-06-01T23:00Z", "{v}");
    assert!((v["rate"].as_f64().unwrap() - 12.5).abs() < 1e-12, "{v}");
    let planned = settle_json(&f, "2025-06-01", "2025-06-02", &["--schedule", "1h"]);
    assert_eq!(planned["rate"], v["rate"], "{planned}");
}

/// A grid whose days open after midnight (`[calendar] offset`: the Computable
/// index's first slots, 04:00, 10:00, 16:00, 22:00): the schedule runs through
/// the record's own stamps, so a day of four published slots is four of four, not
/// four off a midnight grid. Two days, the second's 10:00 missing: 7 of 8, the gap
/// filled from the last value (2.2): (2.0 + 2.1 + 2.2 + 2.3 + 2.4 + 2.4 + 2.6 +
/// 2.7) / 8 = 18.7 / 8 = 2.3375.
#[test]
fn a_grid_opening_after_midnight_is_settled_on_its_own_slots() {
    let tmp = tempfile::tempdir().unwrap();
    let h = 60;
    let f = stamped(
        tmp.path(),
        "offset.csv",
        -360,
        &[
            (4 * h, Some(2.0)),
            (10 * h, Some(2.1)),
            (16 * h, Some(2.2)),
            (22 * h, Some(2.3)),
            (28 * h, Some(2.4)),
            (40 * h, Some(2.6)),
            (46 * h, Some(2.7)),
        ],
    );
    // The grid's two days run from 04:00 to 04:00.
    let j = settle_json(
        &f,
        "2025-06-01T04:00:00Z",
        "2025-06-03T04:00:00Z",
        &["--cadence", "6h"],
    );
    assert_eq!(j["scheduled"], 8, "{j}");
    assert_eq!(j["published"], 7, "{j}");
    assert_eq!(j["off_grid"], 0, "{j}");
    assert_eq!(j["rate"], 2.3375, "{j}");
    // Two UTC days (00:00 to 00:00) cut two slots, May 31's 22:00 (to 04:00 June
    // 1) and June 2's (to 04:00 June 3), each partly outside: left out, named.
    // 7 slots, 6 published: (2.0 + 2.1 + 2.2 + 2.3 + 2.4 + 2.4 + 2.6) / 7 = 16 / 7.
    let j = settle_json(&f, "2025-06-01", "2025-06-03", &["--cadence", "6h"]);
    assert_eq!(
        (&j["scheduled"], &j["stamps_cut_by_bounds"]),
        (&7.into(), &2.into()),
        "{j}"
    );
    assert!(
        (j["rate"].as_f64().unwrap() - 16.0 / 7.0).abs() < 1e-12,
        "{j}"
    );
    // The file holds no 00:00 stamp: its slots open after midnight, so [04:00,
    // 16:00) holds the 04:00 and 10:00 slots: (2.0 + 2.1) / 2 = 2.05 (read as
    // end labels it took 10:00 and 16:00).
    let j = settle_json(
        &f,
        "2025-06-01T04:00:00Z",
        "2025-06-01T16:00:00Z",
        &["--cadence", "6h"],
    );
    assert_eq!(
        (j["scheduled"].clone(), j["rate"].clone()),
        (2.into(), 2.05.into()),
        "{j}"
    );
    // A schedule longer than five million stamps is refused, not allocated.
    let long = rentix(&[
        "settle",
        "--fixings",
        p(&f),
        "--cadence",
        "1m",
        "--from",
        "1900-01-01",
        "--to",
        "2100-01-01",
    ]);
    assert_eq!(long.status.code(), Some(2));
    // One stamp says no cadence: --cadence is asked for.
    let one = stamped(tmp.path(), "one.csv", -360, &[(4 * h, Some(2.0))]);
    let o = rentix(&[
        "settle",
        "--fixings",
        p(&one),
        "--from",
        "2025-06-01",
        "--to",
        "2025-06-02",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--cadence"));
}

/// A hostile run: a benchmark of the user's (`date, grade, value, unit`) settled
/// "0 of 31 stamps published" and no rate, exit 0, without a reason: its rows are
/// never sufficient (their sufficiency is unknown), and settle counted only
/// sufficient ones. Every valued row of such a file settles, as the backtest
/// settles it (one rule, `Fixing::qualifying_value`); an empty value is a gap.
#[test]
fn a_benchmark_of_your_own_settles_every_valued_row() {
    let dir = tempfile::tempdir().unwrap();
    let bench = dir.path().join("bench.csv");
    let mut text = String::from("date,grade,value,unit\n");
    for d in 1..=31 {
        let v = if d == 15 {
            String::new()
        } else {
            format!("{}", 2.0 + f64::from(d) / 100.0)
        };
        text.push_str(&format!("2025-01-{d:02},mine,{v},usd-per-gpu-hour\n"));
    }
    std::fs::write(&bench, text).unwrap();
    let r = settle_json(&bench, "2025-01-01", "2025-02-01", &[]);
    assert_eq!(r["published"], 30, "{r}");
    assert_eq!(r["scheduled"], 31, "{r}");
    // The 15th's gap (one stamp) is filled by the mean of the last min(1, L)
    // published values, the 14th's 2.14: (sum over d of 2 + d/100, less 2.15, plus
    // 2.14) / 31 = (62 + 4.96 - 2.15 + 2.14) / 31 = 66.95 / 31.
    let rate = r["rate"].as_f64().unwrap();
    assert!((rate - 66.95 / 31.0).abs() < 1e-9, "{r}");
    // The verdict says which condition fired: one missing day is 3.23% of the
    // month, over the 2% gap bound, with coverage at 96.77%. It said "coverage
    // below 90% or a gap over 2%" beside 96.67% (a hostile round).
    let o = rentix_ok(&[
        "settle",
        "--fixings",
        p(&bench),
        "--from",
        "2025-01-01",
        "--to",
        "2025-02-01",
    ]);
    assert!(
        o.contains("determination (a gap of 1 stamp(s), 3.23% of the period, over --max-gap 2%; one stamp is 3.23% of this period")
            && !o.contains("coverage below"),
        "{o}"
    );
}

/// A hostile run moved one stamp of a day of quarter hours to 05:07: settle read
/// the file's cadence as its shortest step, 7 minutes (which `--cadence 7m`
/// refuses), and the day went to determination at 14 of 206 stamps. The cadence
/// is the commonest step: the day is 96 stamps of 15 minutes, the moved stamp off
/// grid (its slot a gap of one); a file whose commonest step is no cadence asks
/// for --cadence.
#[test]
fn one_stamp_off_the_grid_does_not_change_the_cadence() {
    let dir = tempfile::tempdir().unwrap();
    let mut stamps: Vec<(i64, Option<f64>)> = (1..=96).map(|k| (15 * k, Some(4.9))).collect();
    stamps[20].0 = 20 * 15 + 7; // 05:07 instead of 05:15
    let f = stamped(dir.path(), "q.csv", 15, &stamps);
    let r = settle_json(&f, "2025-06-01", "2025-06-02", &[]);
    assert_eq!(
        (r["cadence_minutes"].as_i64(), r["scheduled"].as_i64()),
        (Some(15), Some(96)),
        "{r}"
    );
    assert_eq!(
        (r["published"].as_i64(), r["off_grid"].as_i64()),
        (Some(95), Some(1)),
        "{r}"
    );
    assert_eq!(r["verdict"], "settled", "{r}");
    // Stamps 7 minutes apart (no cadence divides a day so): refused, asking for it.
    let odd: Vec<(i64, Option<f64>)> = (1..=20).map(|k| (7 * k, Some(4.9))).collect();
    let f = stamped(dir.path(), "odd.csv", 7, &odd);
    let o = settle_day(&f);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("420 seconds, which is no cadence") && err.contains("--cadence"),
        "{err}"
    );
}

/// A hostile run: a period's bound inside a stamp's interval counted that stamp
/// whole. A month at +14:00 (Kiritimati) on a daily file of UTC days settled 30
/// days, October 31 among them, and a two-minute window settled a whole day. The
/// period holds the stamps whose intervals lie whole inside [from, to), as the
/// help says; the others are named, never counted.
#[test]
fn a_bound_inside_a_stamp_leaves_that_stamp_out() {
    let dir = tempfile::tempdir().unwrap();
    // Hourly: 01:00 .. 06:00 = 3.0, 3.2, [gap], 3.4, 3.6, 3.8. From 00:30 the
    // 01:00 stamp covers 00:00 .. 01:00, half before the period: left out. The
    // period holds 02:00 .. 06:00, the gap filled with the last one value, 3.2:
    // (3.2 + 3.2 + 3.4 + 3.6 + 3.8) / 5 = 17.2 / 5 = 3.44.
    let f = six_hours(dir.path());
    let v = settle_json(&f, "2025-06-01T00:30:00Z", "2025-06-01T06:00:00Z", &[]);
    assert_eq!(v["scheduled"], 5, "{v}");
    assert_eq!(v["first_stamp"], "2025-06-01T02:00Z", "{v}");
    assert_eq!(v["stamps_cut_by_bounds"], 1, "{v}");
    assert!((v["rate"].as_f64().unwrap() - 3.44).abs() < 1e-12, "{v}");
    // Both bounds inside one stamp's interval: nothing to settle, said why.
    let out = rentix(&[
        "settle",
        "--fixings",
        p(&f),
        "--from",
        "2025-06-01T00:59:00Z",
        "--to",
        "2025-06-01T01:01:00Z",
    ]);
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("lie whole inside it"), "{err}");
    // A daily file (rows are UTC days), 2025-05-29 .. 2025-07-02 at 2 + day/100 of
    // June (May 29-31 at 1.0, July at 9.0). June at +14:00 runs from 2025-05-31
    // 10:00 UTC to 2025-06-30 10:00 UTC: May 31 and June 30 are each partly
    // outside, so the period is June 1 .. 29, 29 days: mean of 2 + d/100 for d = 1
    // .. 29 = 2 + (29 x 30 / 2) / 100 / 29 = 2 + 0.15 = 2.15.
    let bench = dir.path().join("daily.csv");
    let mut text = String::from("date,grade,value,unit\n");
    for d in 29..=31 {
        text.push_str(&format!("2025-05-{d:02},mine,1.0,usd-per-gpu-hour\n"));
    }
    for d in 1..=30 {
        let v = 2.0 + f64::from(d) / 100.0;
        text.push_str(&format!("2025-06-{d:02},mine,{v},usd-per-gpu-hour\n"));
    }
    for d in 1..=2 {
        text.push_str(&format!("2025-07-{d:02},mine,9.0,usd-per-gpu-hour\n"));
    }
    std::fs::write(&bench, text).unwrap();
    let r = settle_json(
        &bench,
        "2025-06-01T00:00:00+14:00",
        "2025-07-01T00:00:00+14:00",
        &[],
    );
    assert_eq!(
        (&r["scheduled"], &r["first_stamp"], &r["last_stamp"]),
        (&29.into(), &"2025-06-01".into(), &"2025-06-29".into()),
        "{r}"
    );
    assert_eq!(r["stamps_cut_by_bounds"], 2, "{r}");
    assert!((r["rate"].as_f64().unwrap() - 2.15).abs() < 1e-9, "{r}");
    // The same month in UTC: 30 days, nothing cut.
    let utc = settle_json(&bench, "2025-06-01", "2025-07-01", &[]);
    assert_eq!(
        (&utc["scheduled"], &utc["stamps_cut_by_bounds"]),
        (&30.into(), &0.into()),
        "{utc}"
    );
    let said = rentix_ok(&[
        "settle",
        "--fixings",
        p(&bench),
        "--from",
        "2025-06-01T00:00:00+14:00",
        "--to",
        "2025-07-01T00:00:00+14:00",
    ]);
    assert!(
        said.contains("falls inside 2 stamp interval(s) (a daily file's rows are UTC days)"),
        "{said}"
    );
}

/// A stamp without its offset (`2025-06-01T03:00`) was refused as "premature end
/// of input": the message says what a stamp must be.
#[test]
fn a_stamp_without_an_offset_is_refused_saying_what_a_stamp_is() {
    let dir = tempfile::tempdir().unwrap();
    let f = hourly(dir.path(), &[Some(3.0), Some(3.2), Some(3.4)]);
    let text = std::fs::read_to_string(&f)
        .unwrap()
        .replace("2025-06-01T02:00:00.000000Z", "2025-06-01T02:00");
    std::fs::write(&f, text).unwrap();
    let o = settle_day(&f);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("\"2025-06-01T02:00\"") && err.contains("with seconds and an offset"),
        "{err}"
    );
}

/// A gap that runs across the period's start is listed whole (its length sets
/// how many values fill it), and said to be partly outside: a user summing the
/// listed gaps of a month on the demo's fixings got 19 stamps where the coverage
/// line said 18 were missing. Hourly stamps 01:00 .. 06:00 = 3.0, [gap, gap], 3.4,
/// 3.6, 3.8, settled from 02:00 (the stamps 03:00 .. 06:00): the run 02:00 ..
/// 03:00 is 2 stamps, 1 in the period; filled with mean(3.0) = 3.0 (the last
/// min(2, 72) values before it: only one): (3.0 + 3.4 + 3.6 + 3.8) / 4 = 3.45.
#[test]
fn a_gap_across_the_period_s_start_says_how_much_of_it_is_inside() {
    let dir = tempfile::tempdir().unwrap();
    let f = hourly(
        dir.path(),
        &[Some(3.0), None, None, Some(3.4), Some(3.6), Some(3.8)],
    );
    let v = settle_json(&f, "2025-06-01T02:00:00Z", "2025-06-01T06:00:00Z", &[]);
    assert_eq!(v["scheduled"], 4);
    assert_eq!(v["longest_gap"], 1);
    assert!((v["rate"].as_f64().unwrap() - 3.45).abs() < 1e-9, "{v}");
    let gap = &v["gaps"][0];
    assert_eq!(
        (gap["stamps"].as_u64(), gap["in_period"].as_u64()),
        (Some(2), Some(1)),
        "{v}"
    );
    let o = rentix(&[
        "settle",
        "--fixings",
        p(&f),
        "--from",
        "2025-06-01T02:00:00Z",
        "--to",
        "2025-06-01T06:00:00Z",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("gap         2025-06-01T02:00Z .. 2025-06-01T03:00Z (2 stamps, 1 in the period): filled with 3.000000"),
        "{text}"
    );
}

/// A period that has not ended is not settled: a hostile round's period of 2030,
/// five years past the file's last stamp, printed a rate (the file's last value
/// filled forward over 1,847 stamps) as an indicative determination, exit 0. It is
/// refused as a request that cannot be answered yet (exit 2), pointing at the
/// rate so far; a period that ended past the file's end is still a determination.
#[test]
fn a_period_that_has_not_ended_is_not_settled() {
    let dir = tempfile::tempdir().unwrap();
    let file = six_hours(dir.path());
    let o = rentix(&[
        "settle",
        "--fixings",
        p(&file),
        "--from",
        "2030-03-01",
        "--to",
        "2999-04-01",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--to 2999-04-01 has not come yet") && err.contains("the rate so far"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
    let past = settle_json(&file, "2025-06-01", "2025-06-03", &[]);
    assert_eq!(past["verdict"], "determination", "{past}");
}

/// A look-back shorter than one stamp was taken as one stamp ("the mean of the
/// last 1 published") without a word: refused, naming the shortest one.
#[test]
fn a_lookback_shorter_than_a_stamp_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = six_hours(dir.path());
    for short in ["0h", "30m"] {
        let o = rentix(&[
            "settle",
            "--fixings",
            p(&file),
            "--from",
            "2025-06-01",
            "--to",
            "2025-06-02",
            "--lookback",
            short,
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{short}: {err}");
        assert!(
            err.contains(&format!("--lookback {short} is shorter than one stamp"))
                && err.contains("give at least 1h"),
            "{err}"
        );
    }
    let ok = settle_json(&file, "2025-06-01", "2025-06-02", &["--lookback", "1h"]);
    assert!(ok["rate"].is_number(), "{ok}");
}

/// A first-hour run of the README's `settle --schedule 1h` over one day of a
/// two-day file of quarter hours said "off grid 144 published stamps": the whole
/// file's, where the day holds 96 stamps, 24 on the hourly schedule and 72 off
/// it; a six-hour period said 144 too. Off-grid stamps are counted in the period.
#[test]
fn off_grid_stamps_are_counted_in_the_period() {
    let dir = tempfile::tempdir().unwrap();
    let two_days: Vec<(i64, Option<f64>)> = (1..=192).map(|k| (15 * k, Some(4.9))).collect();
    let f = stamped(dir.path(), "q.csv", 15, &two_days);
    let day = settle_json(&f, "2025-06-01", "2025-06-02", &["--schedule", "1h"]);
    assert_eq!(
        (day["scheduled"].as_i64(), day["off_grid"].as_i64()),
        (Some(24), Some(72)),
        "{day}"
    );
    // 00:00 to 06:00: the hourly stamps 01:00 .. 06:00, and 18 quarter hours off it.
    let six = settle_json(
        &f,
        "2025-06-01T00:00:00Z",
        "2025-06-01T06:00:00Z",
        &["--schedule", "1h"],
    );
    assert_eq!(
        (six["scheduled"].as_i64(), six["off_grid"].as_i64()),
        (Some(6), Some(18)),
        "{six}"
    );
}
