//! Tier-qualified grades: `.../gold+` fixes from gold-or-better operators only, with
//! the rating in force on each date, and the tier spread is published beside.

use crate::csvutil::rows;
use crate::util::{data, fix, p, rentix_ok};

#[test]
fn a_gold_plus_grade_fixes_from_gold_or_better_with_point_in_time_ratings() {
    let dir = tempfile::tempdir().unwrap();
    // data/ratings/example.csv, managed clusters: Voltage Labs platinum (from
    // 2025-03-01), Corvid Cloud gold, Fjord Compute silver until 2025-06-01 then gold,
    // Sakura Cluster bronze, Lumen Grid underperform.
    let quotes = [
        ("Voltage Labs", 2.0),
        ("Corvid Cloud", 2.4),
        ("Fjord Compute", 3.0),
        ("Sakura Cluster", 1.0),
        ("Lumen Grid", 1.2),
    ];
    let mut body =
        vec!["kind,observed_at,source,gpu,scope,term,price,price_unit,currency".to_string()];
    for day in ["2025-05-31", "2025-06-01"] {
        for (op, px) in quotes {
            body.push(format!(
                "listing,{day}T12:00:00Z,{op},H100,managed-cluster,on-demand,{px},gpu_hour,USD"
            ));
        }
    }
    let obs = dir.path().join("obs.csv");
    std::fs::write(&obs, body.join("\n") + "\n").unwrap();
    let store = dir.path().join("store");
    rentix_ok(&[
        "ingest",
        "--json",
        "--store",
        p(&store),
        "--ratings",
        p(&data("data/ratings/example.csv")),
        p(&obs),
    ]);
    let m = std::fs::read_to_string(data("data/methodologies/listings_provider_medians.toml"))
        .unwrap()
        .replace(
            "[grades]\npatterns = [\"*/*/*\"]",
            "[grades]\npatterns = [\"*/*/*\"]\ntier_floors = [\"gold\"]",
        );
    assert!(m.contains("tier_floors"));
    let mp = dir.path().join("m.toml");
    std::fs::write(&mp, m).unwrap();
    let out = dir.path().join("f.csv");
    let f = fix(&store, &out, &mp);
    let value = |date: &str, grade: &str| -> f64 {
        f.iter()
            .find(|r| r["date"] == date && r["grade"] == grade)
            .unwrap_or_else(|| panic!("{date} {grade}"))["value"]
            .parse()
            .unwrap()
    };
    let base = "h100-sxm-80gb/managed-cluster/on-demand";
    let gold = "h100-sxm-80gb/managed-cluster/on-demand/gold+";
    // All five: median of 1.0 1.2 2.0 2.4 3.0 = 2.0 on both days.
    assert_eq!(value("2025-05-31", base), 2.0);
    assert_eq!(value("2025-06-01", base), 2.0);
    // Gold or better on 05-31: Voltage 2.0, Corvid 2.4 -> 2.2; from 06-01 Fjord (now
    // gold) joins: 2.0 2.4 3.0 -> 2.4.
    assert_eq!(value("2025-05-31", gold), 2.2);
    assert_eq!(value("2025-06-01", gold), 2.4);
    let spreads = rows(&dir.path().join("f_tier_spreads.csv"));
    let s: Vec<(String, f64)> = spreads
        .iter()
        .map(|r| (r["date"].clone(), r["spread"].parse().unwrap()))
        .collect();
    assert_eq!(
        s,
        vec![("2025-05-31".into(), 0.2), ("2025-06-01".into(), 0.4)]
    );
    // The same from the raw file in memory (`index --input --ratings`), byte for
    // byte; without the ratings the gold+ grade has no row at all.
    let one_shot = dir.path().join("g.csv");
    let ratings = data("data/ratings/example.csv");
    let with = [
        "index",
        "--input",
        p(&obs),
        "--ratings",
        p(&ratings),
        "--methodology",
        p(&mp),
        "--out",
        p(&one_shot),
    ];
    rentix_ok(&with);
    assert!(std::fs::read(&one_shot).unwrap() == std::fs::read(&out).unwrap());
    rentix_ok(&[with[..3].to_vec(), with[5..].to_vec()].concat());
    assert!(!rows(&one_shot).iter().any(|r| r["grade"] == gold));
    // backtest and track accept a tier-qualified grade as an underlying name.
    let o = crate::util::rentix(&[
        "backtest",
        "--index",
        p(&out),
        "--rent",
        p(&obs),
        "--underlying",
        gold,
        "--out",
        p(&dir.path().join("bt")),
    ]);
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("--underlying"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn the_hedonic_composite_publishes_its_tier_differential() {
    // Prices exactly 2 x exp(0.1 x tier score) (platinum 4 ... underperform 0), 3% higher
    // on the second day: the regression's tier coefficient is 0.1 per step, a premium
    // of exp(0.1) - 1 = 10.5171% per tier step.
    let dir = tempfile::tempdir().unwrap();
    let tiers = [
        ("platinum", 4.0),
        ("gold", 3.0),
        ("silver", 2.0),
        ("bronze", 1.0),
        ("underperform", 0.0),
    ];
    let mut body = vec![
        "kind,observed_at,source,gpu,scope,term,price,price_unit,currency,operator_tier"
            .to_string(),
    ];
    for (day, growth) in [("2025-03-03", 1.0), ("2025-03-04", 1.03)] {
        for (i, (t, score)) in tiers.iter().enumerate() {
            for k in 0..2 {
                let px = 2.0 * (0.1f64 * score).exp() * growth;
                body.push(format!(
                    "listing,{day}T12:00:00Z,op{i}{k},H100,vm,on-demand,{px},gpu_hour,USD,{t}"
                ));
            }
        }
    }
    let obs = dir.path().join("obs.csv");
    std::fs::write(&obs, body.join("\n") + "\n").unwrap();
    let store = dir.path().join("store");
    rentix_ok(&["ingest", "--json", "--store", p(&store), p(&obs)]);
    let out = dir.path().join("f.csv");
    fix(&store, &out, &data("data/methodologies/default.toml"));
    let d = rows(&dir.path().join("f_tier_differentials.csv"));
    let r = d
        .iter()
        .find(|r| r["date"] == "2025-03-04")
        .expect("a differential for the second day");
    assert_eq!(r["composite"], "gpu-hour/quality-adjusted/on-demand");
    assert!(
        (r["log_price_per_tier_step"].parse::<f64>().unwrap() - 0.1).abs() < 1e-6,
        "{r:?}"
    );
    assert!(
        (r["premium_per_tier_step"].parse::<f64>().unwrap() - 0.105171).abs() < 1e-6,
        "{r:?}"
    );
}
