//! Playing the attacker against the confidential methodology: no published field
//! equals one contributor's quote, whether the contributor is alone, one of two,
//! dominant, or the one that joined between two fixings (differencing), and no
//! published file names a contributor.

use crate::util::{data, fix, p, rentix_ok};

const GRADE: &str = "h100-sxm-80gb/vm/on-demand";

#[test]
fn no_published_field_reveals_a_contributors_quote() {
    let dir = tempfile::tempdir().unwrap();
    let head = "kind,observed_at,source,gpu,scope,term,price,price_unit,currency,quantity_gpu_hours,obs_id";
    let mut body = vec![head.to_string()];
    let mut quotes: Vec<f64> = Vec::new();
    let mut add = |day: &str, src: &str, price: f64, n: usize| {
        for i in 0..n {
            body.push(format!("listing,{day}T12:00:00Z,{src},h100-sxm-80gb,vm,on-demand,{price},gpu_hour,USD,,{src}-{day}-{i}"));
        }
        quotes.push(price);
    };
    // Day 1: a lone contributor. Day 2: two. Day 3: one contributor holds 60%.
    add("2025-03-01", "acme-secret-cloud", 2.37, 3);
    add("2025-03-02", "acme-secret-cloud", 2.41, 2);
    add("2025-03-02", "bolt-gpu", 2.53, 2);
    add("2025-03-03", "acme-secret-cloud", 2.91, 6);
    for (s, q) in [
        ("bolt-gpu", 2.2),
        ("cirrus", 2.3),
        ("delta-nodes", 2.4),
        ("ember", 2.5),
    ] {
        add("2025-03-03", s, q, 1);
    }
    // Days 4 and 5: four contributors, then a fifth joins (the differencing attack).
    for (s, q) in [
        ("acme-secret-cloud", 2.11),
        ("bolt-gpu", 2.19),
        ("cirrus", 2.35),
        ("delta-nodes", 2.47),
    ] {
        add("2025-03-04", s, q, 1);
        add("2025-03-05", s, q, 1);
    }
    add("2025-03-05", "ember", 2.83, 1);
    let obs = dir.path().join("obs.csv");
    std::fs::write(&obs, body.join("\n") + "\n").unwrap();
    let store = dir.path().join("store");
    rentix_ok(&["ingest", "--json", "--store", p(&store), p(&obs)]);
    let out = dir.path().join("f.csv");
    let m = data("data/methodologies/confidential_listings.toml");
    let fixings: Vec<_> = fix(&store, &out, &m)
        .into_iter()
        .filter(|r| r["grade"] == GRADE)
        .collect();
    let get = |d: &str| {
        fixings
            .iter()
            .find(|r| r["date"] == d)
            .unwrap_or_else(|| panic!("{d}"))
    };

    // Lone, pair and dominant contributor: suppressed, nothing published.
    for d in ["2025-03-01", "2025-03-02", "2025-03-03"] {
        let r = get(d);
        for k in ["value", "p1", "p25", "p75", "p99"] {
            assert_eq!(r[k], "", "{d} {k} published: {r:?}");
        }
        assert_eq!(r["sufficient"], "false");
    }
    assert!(
        get("2025-03-03")["flags"].contains("listing_failed=concentrated"),
        "{:?}",
        get("2025-03-03")
    );
    // Four and five contributors: a value, percentiles withheld (fewer than 6).
    let v4: f64 = get("2025-03-04")["value"].parse().unwrap();
    let v5: f64 = get("2025-03-05")["value"].parse().unwrap();
    assert!(get("2025-03-04")["flags"].contains("percentiles_withheld"));
    // No published number equals a quote ...
    for r in &fixings {
        for k in ["value", "p1", "p25", "p75", "p99"] {
            if let Ok(x) = r[k].parse::<f64>() {
                assert!(
                    quotes.iter().all(|q| (q - x).abs() > 1e-9),
                    "{} {k} = {x} is a contributor's quote",
                    r["date"]
                );
            }
        }
    }
    // ... nor does differencing the two fixings around the fifth contributor's arrival
    // (for a plain mean, 5 v5 - 4 v4 would be its quote, 2.83).
    let diff = 5.0 * v5 - 4.0 * v4;
    assert!(
        quotes.iter().all(|q| (q - diff).abs() > 1e-6),
        "differencing reveals {diff}"
    );
    // No published file names a contributor.
    for f in std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
    {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        if f == obs {
            continue;
        }
        for name in [
            "acme-secret-cloud",
            "bolt-gpu",
            "cirrus",
            "delta-nodes",
            "ember",
        ] {
            assert!(!text.contains(name), "{} names {name}", f.display());
        }
    }
}

#[test]
fn five_spellings_of_one_contributor_count_once() {
    // One company quoting under five spellings of its name: before folding, five
    // contributors passed the minimum of four and its quotes were published (a
    // vw-trimmed mean of five of its own quotes). Folded, it is one contributor:
    // suppressed, as a lone contributor is.
    let dir = tempfile::tempdir().unwrap();
    let mut body =
        vec!["kind,observed_at,source,gpu,scope,term,price,price_unit,currency,obs_id".to_string()];
    for (i, src) in ["LoneCo", "loneco", "LONECO", "Lone Co", "LoneCo."]
        .iter()
        .enumerate()
    {
        let price = 2.10 + 0.1 * i as f64;
        body.push(format!(
            "listing,2025-03-01T12:00:00Z,{src},h100-sxm-80gb,vm,on-demand,{price:.2},gpu_hour,USD,q{i}"
        ));
    }
    let obs = dir.path().join("obs.csv");
    std::fs::write(&obs, body.join("\n") + "\n").unwrap();
    let store = dir.path().join("store");
    rentix_ok(&["ingest", "--json", "--store", p(&store), p(&obs)]);
    let out = dir.path().join("f.csv");
    let m = data("data/methodologies/confidential_listings.toml");
    let rows = fix(&store, &out, &m);
    let r = rows
        .iter()
        .find(|r| r["grade"] == GRADE && r["date"] == "2025-03-01")
        .expect("a row for the day");
    assert_eq!(r["value"], "", "published: {r:?}");
    assert_eq!(r["sufficient"], "false");
    assert!(
        r["flags"].contains("listing_failed=few_contributors"),
        "{r:?}"
    );
    assert!(r["flags"].contains("suppressed"), "{r:?}");
}
