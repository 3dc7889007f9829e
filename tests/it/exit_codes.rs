//! Every command exits by the class of what happened (`rentix --help`): 2 usage or
//! configuration, 3 input it cannot use, 4 I/O; 1 is reserved for findings
//! (verify, store check: tested with them).

use crate::util::{p, rentix, rentix_ok};

fn code(args: &[&str]) -> (Option<i32>, String) {
    let o = rentix(args);
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

#[test]
#[allow(
    clippy::too_many_lines,
    reason = "not split yet (issue 26 lists it); new functions stay under 100 lines"
)]
fn failures_exit_by_their_class() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let obs = d.join("obs.csv");
    std::fs::write(
        &obs,
        crate::util::five_listings(&[("h100-sxm-80gb", "2025-03-03")], |i| format!("2.{i}")),
    )
    .unwrap();
    let store = d.join("store");
    rentix_ok(&["ingest", "--store", p(&store), p(&obs)]);
    let bad_methodology = d.join("m.toml");
    std::fs::write(&bad_methodology, "version = 3").unwrap();
    let rent = d.join("rent.csv");
    std::fs::write(&rent, "period_start,period_end,usd_per_gpu_hour,gpu_hours,side\n2025-01-01,2025-02-01,$2.95,730,pay\n").unwrap();
    rentix_ok(&["index", "--store", p(&store), "--out", p(&d.join("f.csv"))]);
    for (args, want, why) in [
        (
            vec![
                "index",
                "--store",
                p(&store),
                "--out",
                p(&d.join("x.csv")),
                "--from",
                "2025-03-04",
                "--to",
                "2025-03-01",
            ],
            2,
            "--from after --to",
        ),
        (
            vec![
                "index",
                "--store",
                p(&store),
                "--out",
                p(&d.join("x.csv")),
                "--methodology",
                p(&bad_methodology),
            ],
            2,
            "a methodology that is not one",
        ),
        (
            vec!["index", "--store", p(&store), "--out", p(&d.join("x.txt"))],
            2,
            "an output format that does not exist",
        ),
        (
            vec!["simulate", "--out", p(&d.join("s")), "--cadence", "7m"],
            2,
            "a cadence that does not divide a day",
        ),
        (
            vec![
                "backtest",
                "--index",
                p(&d.join("f.csv")),
                "--rent",
                p(&rent),
                "--out",
                p(&d.join("b")),
                "--strategy",
                "nope",
            ],
            2,
            "an unknown strategy",
        ),
        (
            vec![
                "index",
                "--store",
                p(&d.join("nowhere")),
                "--out",
                p(&d.join("x.csv")),
            ],
            4,
            "a store that does not exist (a missing input is I/O, issue 49)",
        ),
        (
            vec![
                "backtest",
                "--index",
                p(&d.join("f.csv")),
                "--rent",
                p(&rent),
                "--out",
                p(&d.join("b")),
            ],
            3,
            "a rent row with a currency sign",
        ),
        (
            vec![
                "index",
                "--store",
                p(&store),
                "--out",
                "/proc/rentix-cannot-write/f.csv",
            ],
            4,
            "a file that cannot be written",
        ),
    ] {
        let (c, err) = code(&args);
        assert_eq!(c, Some(want), "{why}: {args:?}: {err}");
        assert!(
            err.starts_with("rentix: error:") || want == 2,
            "{why}: {err}"
        );
    }
    // clap's own usage errors are 2 as well.
    assert_eq!(code(&["index", "--no-such-flag"]).0, Some(2));
}

/// The contract lab's refusals are typed (rentix_lab::LabError): a candidate that
/// does not parse or names a missing file, and two candidates of one name, are
/// usage errors (2), not unreadable input (3); the message says which candidate.
#[test]
fn contract_lab_refusals_exit_as_usage() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A directory that exists: the candidates are refused before it is read.
    let store = d.join("store");
    std::fs::create_dir(&store).unwrap();
    let out = d.join("lab");
    for (cands, words) in [
        (vec!["just-a-name"], "METHODOLOGY.toml:CONTRACT.toml"),
        (vec!["x=nope.toml:nymex-gpu1-h100"], "nope.toml"),
        (
            vec![
                "a=default:nymex-gpu1-h100",
                "a=settlement_business_days:nymex-gpu1-h100",
            ],
            "two candidates are named \"a\"",
        ),
    ] {
        let mut args = vec!["contract", "--store", p(&store), "--out", p(&out)];
        for c in &cands {
            args.extend(["--candidate", c]);
        }
        let (c, err) = code(&args);
        assert_eq!(c, Some(2), "{cands:?}: {err}");
        assert!(err.contains(words), "{cands:?}: {err}");
    }
}

/// A file or directory that does not exist exits 4 (I/O) whichever command and flag
/// names it, and says which flag (issue 49: `report` exited 2, `backtest --index`,
/// `track` and `verify` 3, `backtest --rent`, `ingest`, `cost` and `contract` 4).
#[test]
fn a_missing_input_is_io_for_every_command_and_flag() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let f = crate::util::repo().join("reports/demo/fixings.parquet");
    let fixings = p(&f);
    let rent_file = d.join("rent.csv");
    std::fs::write(
        &rent_file,
        "period_start,period_end,usd_per_gpu_hour,gpu_hours,side\n2025-01-01,2025-02-01,2.95,730,pay\n",
    )
    .unwrap();
    let gone_path = d.join("gone");
    let (rent, gone) = (p(&rent_file), p(&gone_path));
    let out = p(d);
    let cases: [(&str, Vec<&str>); 16] = [
        (
            "--index",
            vec!["backtest", "--index", gone, "--rent", rent, "--out", out],
        ),
        (
            "--rent",
            vec!["backtest", "--index", fixings, "--rent", gone, "--out", out],
        ),
        (
            "--events",
            vec![
                "backtest", "--index", fixings, "--rent", rent, "--events", gone, "--out", out,
            ],
        ),
        ("--index", vec!["track", "--index", gone, "--rent", rent]),
        ("--rent", vec!["track", "--index", fixings, "--rent", gone]),
        (
            "--events",
            vec![
                "track", "--index", fixings, "--rent", rent, "--events", gone,
            ],
        ),
        ("--in", vec!["report", "--in", gone, "--out", out]),
        (
            "--store",
            vec!["verify", "--store", gone, "--fixings", fixings],
        ),
        (
            "--fixings",
            vec!["verify", "--store", out, "--fixings", gone],
        ),
        ("--store", vec!["index", "--store", gone, "--out", out]),
        ("--input", vec!["index", "--input", gone, "--out", out]),
        ("FILE", vec!["ingest", "--store", out, gone]),
        (
            "--fx",
            vec!["ingest", "--store", out, "--fx", gone, fixings],
        ),
        (
            "--throughput",
            vec!["cost", "--throughput", gone, "--out", out],
        ),
        (
            "--store",
            vec![
                "contract",
                "--store",
                gone,
                "--candidate",
                "a=default:nymex-gpu1-h100",
                "--out",
                out,
            ],
        ),
        (
            "--truth",
            vec![
                "contract",
                "--store",
                out,
                "--candidate",
                "a=default:nymex-gpu1-h100",
                "--truth",
                gone,
                "--out",
                out,
            ],
        ),
    ];
    for (flag, args) in cases {
        let (c, err) = code(&args);
        assert_eq!(c, Some(4), "{args:?}: {err}");
        assert!(
            err.contains(&format!("{flag} {gone} does not exist")),
            "{args:?}: {err}"
        );
    }
}

/// The report's refusals are typed (rentix_report::ReportError): a directory that
/// does not exist or holds nothing to render is a usage error (2), a fixings file
/// that cannot be read is input (3), a report that cannot be written is I/O (4).
/// They all exited 3 while the report crate returned strings.
#[test]
fn report_failures_exit_by_their_class() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bad = d.join("bad.csv");
    std::fs::write(&bad, "date,grade\n2025-01-01\n").unwrap();
    let empty = d.join("empty");
    std::fs::create_dir(&empty).unwrap();
    let fixings = d.join("fixings.parquet");
    std::fs::copy(
        crate::util::repo().join("reports/demo/fixings.parquet"),
        &fixings,
    )
    .unwrap();
    for (args, want, why) in [
        (
            vec![
                "report",
                "--in",
                p(&d.join("missing")),
                "--out",
                p(&d.join("r.html")),
            ],
            4,
            "no such directory (a missing input is I/O, issue 49)",
        ),
        (
            vec!["report", "--in", p(&empty), "--out", p(&d.join("r.html"))],
            2,
            "nothing to render",
        ),
        (
            vec!["report", "--in", p(&bad), "--out", p(&d.join("r.html"))],
            3,
            "not a fixings file",
        ),
        (
            vec![
                "report",
                "--in",
                p(&fixings),
                "--out",
                "/proc/rentix-cannot-write/r.html",
            ],
            4,
            "a report that cannot be written",
        ),
    ] {
        let (c, err) = code(&args);
        assert_eq!(c, Some(want), "{why}: {args:?}: {err}");
    }
}
