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
            // It exited 3 under an intraday methodology (the store's range named).
            vec![
                "index",
                "--store",
                p(&store),
                "--out",
                p(&d.join("x.csv")),
                "--methodology",
                "intraday_lowest_listing_15m",
                "--from",
                "2025-03-04",
                "--to",
                "2025-03-01",
            ],
            2,
            "--from after --to, intraday",
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
            // It exited 4, as if the file could not be read.
            vec!["ingest", "--store", p(&d.join("twice")), p(&obs), p(&obs)],
            2,
            "one input named twice",
        ),
        (
            vec!["simulate", "--out", p(&d.join("s")), "--cadence", "7m"],
            2,
            "a cadence that does not divide a day",
        ),
        (
            // Cut inside the last character's bytes, the duration parser panicked.
            vec!["simulate", "--out", p(&d.join("s")), "--cadence", "15é"],
            2,
            "a cadence whose unit is not a letter it knows",
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
/// does not parse, and two candidates of one name, are usage errors (2), not
/// unreadable input (3); the message says which candidate. (One that names a file
/// that does not exist is a missing input, 4, in the table below.)
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
    let mut cases: Vec<(&str, Vec<&str>)> = vec![
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
    let candidates = [
        format!("a={gone}:nymex-gpu1-h100"),
        format!("a=default:{gone}"),
    ];
    let more = more_missing_inputs(fixings, rent, gone, out, &candidates);
    cases.extend(
        more.iter()
            .map(|(flag, args)| (*flag, args.iter().map(String::as_str).collect())),
    );
    for (flag, args) in cases {
        let (c, err) = code(&args);
        assert_eq!(c, Some(4), "{args:?}: {err}");
        assert!(
            err.contains(&format!("{flag} {gone} does not exist")),
            "{args:?}: {err}"
        );
    }
}

/// The rest of the table: every other flag that names an input (the store
/// commands, settle, health, the optional inputs), and the flags that take a file or
/// a shipped name, where a name that is neither is the same missing input (it was 3
/// for `backtest --contract`/`--perp`, `track --contract` and `verify --methodology`,
/// 2 for a lab candidate). Each line is a template: `F` the fixings, `R` a rent
/// file, `G` the missing path, `O` an output directory, `C0`/`C1` lab candidates.
fn more_missing_inputs(
    fixings: &str,
    rent: &str,
    gone: &str,
    out: &str,
    candidates: &[String; 2],
) -> Vec<(&'static str, Vec<String>)> {
    let bt = "backtest --index F --rent R --out O";
    let lab = "contract --store O --candidate";
    [
        ("--truth", "report --in F --truth G --out O".to_string()),
        ("--throughput", format!("{bt} --throughput G --operator x")),
        ("--contract", format!("{bt} --contract G")),
        ("--perp", format!("{bt} --perp G")),
        ("--contract", "track --index F --rent R --contract G".into()),
        (
            "--methodology",
            "verify --store O --fixings F --methodology G".into(),
        ),
        (
            "--methodology",
            "index --store O --out O --methodology G".into(),
        ),
        ("--mapping", "index --input R --mapping G --out O".into()),
        (
            "--ballots",
            "index --ballots G --methodology intraday_lowest_listing_15m --out O".into(),
        ),
        ("--ratings", "index --input R --ratings G --out O".into()),
        ("--mapping", "ingest --store O --mapping G R".into()),
        ("--ratings", "ingest --store O --ratings G R".into()),
        (
            "--fixings",
            "cost --throughput R --fixings G --out O".into(),
        ),
        ("--store", "cost --throughput R --store G --out O".into()),
        ("--candidate", format!("{lab} C0 --out O")),
        ("--candidate", format!("{lab} C1 --out O")),
        (
            "--rent-dir",
            format!("{lab} a=default:nymex-gpu1-h100 --rent-dir G --out O"),
        ),
        (
            "--fixings",
            "settle --fixings G --from 2025-01-01 --to 2025-02-01".into(),
        ),
        ("--store", "health --store G".into()),
        ("--fixings", "health --store O --fixings G".into()),
        ("--store", "store check --store G".into()),
        ("--store", "store compact --store G".into()),
        ("--store", "store migrate --store G".into()),
        ("--params", "simulate --out O --params G".into()),
    ]
    .into_iter()
    .map(|(flag, line)| {
        let args = line
            .split(' ')
            .map(|t| {
                match t {
                    "F" => fixings,
                    "R" => rent,
                    "G" => gone,
                    "O" => out,
                    "C0" => &candidates[0],
                    "C1" => &candidates[1],
                    t => t,
                }
                .to_string()
            })
            .collect();
        (flag, args)
    })
    .collect()
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
