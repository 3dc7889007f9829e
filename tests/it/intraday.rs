//! Intraday fixings end to end: observations in, a fixing at every stamp out, each
//! equal to its rule applied to its own window; the simulator's 15-minute market
//! gives 96 fixings a grade a day; a daily methodology is untouched.

use crate::csvutil::rows;
use crate::util::{p, rentix, rentix_ok};
use std::collections::BTreeMap;

/// A simple intraday methodology: each contributor's lowest listing of the 15
/// minutes, a vote carried (not observed) for one stamp, equal weights, plain mean.
const PLAIN: &str = r#"
version = "plain-15m"
[calendar]
cadence = "15m"
[grades]
patterns = ["h100-sxm-80gb/*/on-demand"]
[intraday]
kinds = ["listing"]
per_contributor = "lowest"
window = "15m"
max_carry = "15m"
min_panel = 5
decimals = 6
"#;

/// Provider `j` (1..=6) reads at minute 15k - 10 of stamp k two prices, `2 + 0.01 j
/// + 0.001 k` and 0.05 more; provider 6 misses every fourth stamp.
fn day_of_listings() -> String {
    let mut text =
        String::from("obs_id,kind,observed_at,source,gpu,scope,term,price,price_unit,currency\n");
    for k in 1..=96u32 {
        let minute = 15 * k - 10;
        let at = format!("2025-06-01T{:02}:{:02}:00Z", minute / 60, minute % 60);
        for j in 1..=6u32 {
            if j == 6 && k % 4 == 0 {
                continue;
            }
            let low = 2.0 + 0.01 * f64::from(j) + 0.001 * f64::from(k);
            for (n, price) in [low, low + 0.05].iter().enumerate() {
                text.push_str(&format!(
                    "p{j}-{k}-{n},listing,{at},Provider {j},H100 SXM 80GB,bare-metal,on-demand,{price:.4},gpu_hour,USD\n"
                ));
            }
        }
    }
    text
}

fn low(j: u32, k: u32) -> f64 {
    ((2.0 + 0.01 * f64::from(j) + 0.001 * f64::from(k)) * 1e4).round() / 1e4
}

#[test]
fn every_stamp_is_its_rule_applied_to_its_own_window() {
    let dir = tempfile::tempdir().unwrap();
    let obs = dir.path().join("obs.csv");
    std::fs::write(&obs, day_of_listings()).unwrap();
    let store = dir.path().join("store");
    rentix_ok(&["ingest", "--store", p(&store), p(&obs)]);
    let m = dir.path().join("plain.toml");
    std::fs::write(&m, PLAIN).unwrap();
    let out = dir.path().join("fx.csv");
    let said = rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--methodology",
        p(&m),
        "--out",
        p(&out),
    ]);
    assert!(said.contains("96 a day at 15m"), "{said}");
    let f = rows(&out);
    assert_eq!(f.len(), 96, "one grade, 96 stamps");
    for (i, r) in f.iter().enumerate() {
        let k = i as u32 + 1;
        // Providers 1..5 always print; provider 6's vote at a missed stamp is its
        // previous one, carried (a stamp old: inside max_carry, outside the window).
        let mut votes: Vec<f64> = (1..=5).map(|j| low(j, k)).collect();
        votes.push(if k % 4 == 0 { low(6, k - 1) } else { low(6, k) });
        let want = (votes.iter().sum::<f64>() / 6.0 * 1e6).round() / 1e6;
        let got: f64 = r["value"].parse().unwrap();
        assert!((got - want).abs() < 1e-9, "stamp {k}: {got} != {want}");
        let (observed, carried) = if k % 4 == 0 { ("5", "1") } else { ("6", "0") };
        assert_eq!(
            (r["n_observed"].as_str(), r["n_carried"].as_str()),
            (observed, carried),
            "stamp {k}"
        );
        let minute = 15 * k;
        let stamp = if k == 96 {
            "2025-06-02T00:00:00.000000Z".to_string()
        } else {
            format!(
                "2025-06-01T{:02}:{:02}:00.000000Z",
                minute / 60,
                minute % 60
            )
        };
        assert_eq!(r["fixed_at"], stamp);
        assert_eq!(r["date"], "2025-06-01");
        assert_eq!(r["methodology_version"], "plain-15m");
    }
    // A panel of six at min_panel 7: no values, each row saying why.
    // (Into a file of its own: published stamps are never revised.)
    std::fs::write(&m, PLAIN.replace("min_panel = 5", "min_panel = 7")).unwrap();
    let out = dir.path().join("thin.csv");
    rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--methodology",
        p(&m),
        "--out",
        p(&out),
    ]);
    let f = rows(&out);
    assert!(f.iter().all(|r| r["value"].is_empty()
        && r["flags"].contains("thin_panel")
        && r["sufficient"] == "false"));
}

#[test]
fn the_simulated_15_minute_market_fixes_96_stamps_a_grade_a_day() {
    let dir = tempfile::tempdir().unwrap();
    let sim = dir.path().join("sim");
    rentix_ok(&[
        "simulate",
        "--out",
        p(&sim),
        "--days",
        "2",
        "--start",
        "2025-06-01",
        "--cadence",
        "15m",
    ]);
    let store = dir.path().join("store");
    rentix_ok(&[
        "ingest",
        "--store",
        p(&store),
        p(&sim.join("observations.csv")),
    ]);
    let out = dir.path().join("fx.parquet");
    rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--methodology",
        "intraday_lowest_listing_15m",
        "--out",
        p(&out),
    ]);
    let csv = dir.path().join("fx.csv");
    rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--methodology",
        "intraday_lowest_listing_15m",
        "--out",
        p(&csv),
    ]);
    // Verified with no --methodology: the version the file records is shipped.
    let said = rentix_ok(&["verify", "--store", p(&store), "--fixings", p(&out)]);
    assert!(
        said.contains("rentix-intraday-lowest-listing-1.1"),
        "{said}"
    );
    let f = rows(&csv);
    let mut per: BTreeMap<(String, String), usize> = BTreeMap::new();
    for r in &f {
        *per.entry((r["grade"].clone(), r["date"].clone()))
            .or_default() += 1;
    }
    assert!(per.len() >= 10, "{}", per.len());
    assert!(per.values().all(|n| *n == 96), "{per:?}");
    let valued = f.iter().filter(|r| !r["value"].is_empty()).count();
    assert!(
        valued * 2 > f.len(),
        "most stamps have a panel: {valued} of {}",
        f.len()
    );
    // Receipts beside it: every voter of every stamp, with a status.
    let receipts = rows(&dir.path().join("fx_receipts.csv"));
    assert!(!receipts.is_empty());
    assert!(receipts.iter().all(|r| [
        "observed",
        "carried",
        "rejected_sigma",
        "rejected_jump",
        "no_weight"
    ]
    .contains(&r["status"].as_str())));
    // A daily methodology cannot be asked for an intraday cadence by mistake.
    let m = dir.path().join("bad.toml");
    let daily =
        std::fs::read_to_string(crate::util::repo().join("data/methodologies/default.toml"))
            .unwrap();
    std::fs::write(
        &m,
        daily.replace("[calendar]\n", "[calendar]\ncadence = \"1d\"\n"),
    )
    .unwrap();
    rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--methodology",
        p(&m),
        "--out",
        p(&dir.path().join("d.csv")),
    ]);
    let o = rentix(&[
        "index",
        "--store",
        p(&store),
        "--methodology",
        "intraday_lowest_listing_15m",
        "--grade",
        "h100*",
        "--out",
        p(&dir.path().join("x.csv")),
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--grade"));
}

#[test]
fn verify_checks_an_intraday_publications_digest_and_every_stamp() {
    let dir = tempfile::tempdir().unwrap();
    let obs = dir.path().join("obs.csv");
    std::fs::write(&obs, day_of_listings()).unwrap();
    let store = dir.path().join("store");
    rentix_ok(&["ingest", "--store", p(&store), p(&obs)]);
    let m = dir.path().join("plain.toml");
    std::fs::write(
        &m,
        PLAIN.replace("decimals = 6", "decimals = 6\npublish_receipts = true"),
    )
    .unwrap();
    for ext in ["csv", "parquet"] {
        let out = dir.path().join(format!("fx.{ext}"));
        rentix_ok(&[
            "index",
            "--store",
            p(&store),
            "--methodology",
            p(&m),
            "--out",
            p(&out),
        ]);
        let said = rentix_ok(&[
            "verify",
            "--store",
            p(&store),
            "--fixings",
            p(&out),
            "--methodology",
            p(&m),
        ]);
        assert!(
            said.contains("verified 96") && said.contains("fx_receipts"),
            "{said}"
        );
        assert!(dir.path().join(format!("fx.{ext}.sha256")).exists());
    }
    let out = dir.path().join("fx.csv");
    let verify = || {
        rentix(&[
            "verify",
            "--store",
            p(&store),
            "--fixings",
            p(&out),
            "--methodology",
            p(&m),
        ])
    };
    let good = std::fs::read_to_string(&out).unwrap();
    // One digit of one value changed: the digest and the cell both say so (exit 1).
    let v = rows(&out)[40]["value"].clone();
    let changed = format!("{}9", &v[..v.len() - 1]);
    std::fs::write(
        &out,
        good.replacen(&format!(",{v},"), &format!(",{changed},"), 1),
    )
    .unwrap();
    let o = verify();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("sha256") && err.contains(&format!("published \"{changed}\"")),
        "{err}"
    );
    // A row removed: missing, named by its stamp.
    let lines: Vec<&str> = good.lines().collect();
    let gone = lines[10];
    let without: String = lines
        .iter()
        .filter(|l| **l != gone)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&out, without).unwrap();
    let o = verify();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1));
    assert!(err.contains("missing"), "{err}");
    // The digest file gone: reported, not ignored.
    std::fs::write(&out, &good).unwrap();
    std::fs::remove_file(dir.path().join("fx.csv.sha256")).unwrap();
    let o = verify();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no digest file"));
}

#[test]
fn a_run_from_a_date_gives_the_stamps_a_whole_run_gives() {
    // Screens, EWMA votes and sigma votes carry state from stamp to stamp: a run
    // from day 3 reads the days before it first, so its stamps equal those of one
    // run over the three days.
    let dir = tempfile::tempdir().unwrap();
    let sim = dir.path().join("sim");
    rentix_ok(&[
        "simulate",
        "--out",
        p(&sim),
        "--days",
        "3",
        "--start",
        "2025-06-01",
        "--cadence",
        "15m",
    ]);
    let store = dir.path().join("store");
    rentix_ok(&[
        "ingest",
        "--store",
        p(&store),
        p(&sim.join("observations.csv")),
    ]);
    let m = "intraday_lowest_listing_15m";
    let all = dir.path().join("all.csv");
    rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--methodology",
        m,
        "--out",
        p(&all),
    ]);
    let day = dir.path().join("day3.csv");
    rentix_ok(&[
        "index",
        "--store",
        p(&store),
        "--methodology",
        m,
        "--out",
        p(&day),
        "--from",
        "2025-06-03",
        "--to",
        "2025-06-03",
    ]);
    let want: Vec<_> = rows(&all)
        .into_iter()
        .filter(|r| r["date"] == "2025-06-03")
        .collect();
    let got = rows(&day);
    assert_eq!(got.len(), want.len());
    assert!(!got.is_empty());
    assert_eq!(got, want, "day 3 alone differs from day 3 of the whole run");
    let receipts_all: Vec<_> = rows(&dir.path().join("all_receipts.csv"))
        .into_iter()
        .filter(|r| r["fixed_at"].as_str() > "2025-06-03T00:00:00.000000Z")
        .collect();
    assert_eq!(rows(&dir.path().join("day3_receipts.csv")), receipts_all);
}
