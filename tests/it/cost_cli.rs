//! `rentix cost` on the talk's examples ("Same GPU, 50% More Output: Why the Operator
//! Matters", SemiAnalysis): the same B200 rent buys 1.5x the useful output from one
//! operator, and a producer that got cheaper can still end up the more expensive.

use crate::csvutil::rows;
use crate::util::{p, rentix, rentix_ok};

const HEAD: &str = "operator,gpu,scope,model,input_tokens,output_tokens,target_tokens_per_s_per_user,output_tokens_per_s_per_gpu,success_rate,capacity_gpus,usd_per_gpu_hour,date";

#[test]
fn same_b200_rent_one_and_a_half_times_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.csv");
    std::fs::write(
        &f,
        format!("{HEAD}\nstack-a,B200,managed-cluster,llm-70b,8000,1000,100,200,1.0,512,5.00,2025-06-01\nstack-b,B200,managed-cluster,llm-70b,8000,1000,100,300,1.0,256,5.00,2025-06-01\n"),
    )
    .unwrap();
    let out = dir.path().join("cost");
    let msg = rentix_ok(&["cost", "--throughput", p(&f), "--out", p(&out)]);
    let curve = rows(&out.join("cost_curve.csv"));
    let cost = |op: &str| -> f64 {
        curve.iter().find(|r| r["operator"] == op).unwrap()["usd_per_m_useful_tokens"]
            .parse()
            .unwrap()
    };
    assert!(
        (cost("stack-a") - 6.9444).abs() < 1e-4,
        "{}",
        cost("stack-a")
    );
    assert!(
        (cost("stack-b") - 4.6296).abs() < 1e-4,
        "{}",
        cost("stack-b")
    );
    assert!((cost("stack-a") / cost("stack-b") - 1.5).abs() < 1e-9);
    // Sorted by cost: stack-b first with its 256 GPUs (a third of the capacity).
    assert_eq!(curve[0]["operator"], "stack-b");
    assert_eq!(curve[0]["cumulative_capacity_gpus"], "256.0");
    assert!((curve[0]["percentile"].parse::<f64>().unwrap() - 100.0 / 3.0).abs() < 1e-9);
    assert_eq!(curve[1]["cumulative_capacity_gpus"], "768.0");
    assert!(msg.contains("stack-b") && msg.contains("4.6296"), "{msg}");
    for ext in ["png", "svg"] {
        assert!(
            std::fs::metadata(out.join(format!("cost_curve.{ext}")))
                .unwrap()
                .len()
                > 1000
        );
    }
}

#[test]
fn cheaper_yet_behind_a_competitor_that_improved_faster() {
    // Cost = 3.6 / (tps x 3600) x 1e6 = 1000 / tps USD per million useful tokens:
    // you 10 -> 8 (tps 100 -> 125), your competitor 12 -> 6 (tps 83.33 -> 166.67).
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.csv");
    let row = |op: &str, tps: f64, date: &str| {
        format!("{op},H100,managed-cluster,llm,8000,1000,50,{tps},1.0,100,3.6,{date}")
    };
    let body = [
        HEAD.to_string(),
        row("you", 100.0, "2025-01-01"),
        row("competitor", 1000.0 / 12.0, "2025-01-01"),
        row("you", 125.0, "2025-07-01"),
        row("competitor", 1000.0 / 6.0, "2025-07-01"),
    ];
    std::fs::write(&f, body.join("\n") + "\n").unwrap();
    let out = dir.path().join("cost");
    let msg = rentix_ok(&["cost", "--throughput", p(&f), "--out", p(&out)]);
    let changes = rows(&out.join("position_changes.csv"));
    let you = changes.iter().find(|r| r["operator"] == "you").unwrap();
    assert!((you["cost_from"].parse::<f64>().unwrap() - 10.0).abs() < 1e-9);
    assert!((you["cost_to"].parse::<f64>().unwrap() - 8.0).abs() < 1e-9);
    assert_eq!(
        (you["rank_from"].as_str(), you["rank_to"].as_str()),
        ("1", "2")
    );
    assert!(
        you["reading"].contains("the cheapest producer on 2025-01-01")
            && you["reading"].contains("the most expensive producer on 2025-07-01")
            && you["reading"].contains("competitors' fell faster"),
        "{}",
        you["reading"]
    );
    assert!(msg.contains("competitors' fell faster"), "{msg}");
}

#[test]
fn rows_without_a_price_are_priced_from_fixings_or_refused() {
    let m = crate::fixture::market();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.csv");
    std::fs::write(
        &f,
        format!("{HEAD}\nop,H100 SXM,bare-metal,llm,8000,1000,50,250,0.9,64,,2025-06-30\n"),
    )
    .unwrap();
    let o = rentix(&[
        "cost",
        "--throughput",
        p(&f),
        "--out",
        p(&dir.path().join("x")),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    // The reason once: a typed error whose cause is also in its message printed it
    // twice under `{:#}`.
    assert_eq!(err.matches("pass --fixings or --store").count(), 1, "{err}");
    assert!(err.contains("row 1 (op): no usd_per_gpu_hour"), "{err}");
    // The first unpriced row of the file is named, and the others counted: a
    // first-hour run was told "row 91 (Basalt AI)" of a file whose every row is
    // unpriced, the first the curves reached (by model and operator).
    let two = dir.path().join("t2.csv");
    std::fs::write(
        &two,
        format!("{HEAD}\nzed,H100 SXM,bare-metal,llm,8000,1000,50,250,0.9,64,,2025-06-30\nabe,H100 SXM,bare-metal,llm,8000,1000,50,260,0.9,64,,2025-06-30\n"),
    )
    .unwrap();
    let o = rentix(&[
        "cost",
        "--throughput",
        p(&two),
        "--out",
        p(&dir.path().join("x2")),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("row 1 (zed) and 1 more row(s): no usd_per_gpu_hour"),
        "{err}"
    );
    assert_eq!(o.status.code(), Some(3));
    let out = dir.path().join("cost");
    rentix_ok(&[
        "cost",
        "--throughput",
        p(&f),
        "--fixings",
        p(&m.fixings()),
        "--out",
        p(&out),
    ]);
    let fix = crate::csvutil::series(&m.fixings(), "h100-sxm-80gb/bare-metal/on-demand", "value");
    let rent = fix["2025-06-30"];
    let r = &rows(&out.join("cost_curve.csv"))[0];
    assert!((r["usd_per_gpu_hour"].parse::<f64>().unwrap() - rent).abs() < 1e-12);
    let want = rent / (250.0 * 3600.0 * 0.9) * 1e6;
    assert!((r["usd_per_m_useful_tokens"].parse::<f64>().unwrap() - want).abs() < 1e-9);
}

#[test]
fn backtest_splits_the_cost_per_useful_token_into_rent_throughput_and_failures() {
    let m = crate::fixture::market();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.csv");
    // "me": a software release on 2025-01-01 lifts throughput 200 -> 260 and success
    // 0.95 -> 0.97. Peers: one priced at its own rent, one at the index.
    let body = [
        HEAD.to_string(),
        "me,H100 SXM,bare-metal,llm,8000,1000,50,200,0.95,256,,2024-01-01".into(),
        "me,H100 SXM,bare-metal,llm,8000,1000,50,260,0.97,256,,2025-01-01".into(),
        "peer-a,H100 SXM,bare-metal,llm,8000,1000,50,250,0.99,512,2.0,2024-01-01".into(),
        "peer-b,H100 SXM,bare-metal,llm,8000,1000,50,300,0.98,128,,".into(),
    ];
    std::fs::write(&f, body.join("\n") + "\n").unwrap();
    let out = dir.path().join("bt");
    let msg = rentix_ok(&[
        "backtest",
        "--index",
        p(&m.fixings()),
        "--rent",
        p(&m.sim("rent_producer_h100_spot_rate.csv")),
        "--underlying",
        "h100-sxm-80gb/bare-metal/on-demand",
        "--out",
        p(&out),
        "--resamples",
        "0",
        "--throughput",
        p(&f),
        "--operator",
        "me",
    ]);
    assert!(msg.contains("what the index can hedge"), "{msg}");
    let months = rows(&out.join("cost_decomposition.csv"));
    assert!(months.len() > 12);
    let num =
        |r: &std::collections::BTreeMap<String, String>, k: &str| -> f64 { r[k].parse().unwrap() };
    for (i, r) in months.iter().enumerate() {
        let (rent, thr, fail, change) = (
            num(r, "rent_effect"),
            num(r, "throughput_effect"),
            num(r, "failure_effect"),
            num(r, "change"),
        );
        assert!((rent + thr + fail - change).abs() < 1e-9, "{r:?}");
        let cost = num(r, "usd_per_gpu_hour")
            / (num(r, "output_tokens_per_s_per_gpu") * 3600.0 * num(r, "success_rate"))
            * 1e6;
        assert!((cost - num(r, "usd_per_m_useful_tokens")).abs() < 1e-9);
        let release = r["month"] == "2025-01-01";
        if i > 0 && !release {
            assert_eq!(
                (thr, fail),
                (0.0, 0.0),
                "only the rent moved in {}",
                r["month"]
            );
        }
        if release {
            assert!(
                thr < 0.0 && fail < 0.0,
                "the release lowered the cost: {r:?}"
            );
        }
        assert!(!r["percentile"].is_empty());
    }
    assert!(
        std::fs::metadata(out.join("cost_percentile.png"))
            .unwrap()
            .len()
            > 1000
    );
}

#[test]
fn an_operator_of_two_models_or_another_gpu_is_refused_and_a_refused_run_writes_nothing() {
    // A hostile run: one extra row of "me" for llm-8b at 3000 tokens/s made the
    // decomposition use it for two months and go back to llm, inventing
    // throughput effects of -2.98 and +2.61 USD per million tokens. And
    // `--operator nobody` exited 3 after the backtest's files were written.
    let m = crate::fixture::market();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.csv");
    let body = [
        HEAD.to_string(),
        "me,H100 SXM,bare-metal,llm,8000,1000,50,200,0.95,256,,2024-01-01".into(),
        "me,H100 SXM,bare-metal,llm-8b,8000,1000,50,3000,0.95,256,,2024-07-01".into(),
        "peer-a,H100 SXM,bare-metal,llm,8000,1000,50,250,0.99,512,2.0,2024-01-01".into(),
        // A managed cluster's and an H200's throughput, on a bare-metal H100 rent:
        // the decomposition took them and priced tokens nobody rented.
        "cluster,H100 SXM,managed-cluster,llm,8000,1000,50,400,0.99,512,,2024-01-01".into(),
        "h200,H200,bare-metal,llm,8000,1000,50,500,0.99,512,,2024-01-01".into(),
    ];
    std::fs::write(&f, body.join("\n") + "\n").unwrap();
    for (operator, says) in [
        ("me", "rows of \"me\" for llm, llm-8b"),
        ("nobody", "no row for operator \"nobody\""),
        (
            "cluster",
            "rows of \"cluster\" are h100-sxm-80gb/managed-cluster, the rent is h100-sxm-80gb/bare-metal",
        ),
        (
            "h200",
            "rows of \"h200\" are h200-sxm-141gb/bare-metal, the rent is h100-sxm-80gb/bare-metal",
        ),
    ] {
        let out = dir.path().join(format!("bt-{operator}"));
        let o = rentix(&[
            "backtest",
            "--index",
            p(&m.fixings()),
            "--rent",
            p(&m.sim("rent_producer_h100_spot_rate.csv")),
            "--underlying",
            "h100-sxm-80gb/bare-metal/on-demand",
            "--out",
            p(&out),
            "--resamples",
            "20",
            "--throughput",
            p(&f),
            "--operator",
            operator,
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{err}");
        assert!(err.contains(says), "{err}");
        assert!(
            !out.exists(),
            "{operator}: a refused run left {}",
            out.display()
        );
    }
}

#[test]
fn an_operator_given_twice_for_one_curve_is_refused_by_row() {
    // Rows 1 and 3 give stack-a's llm-70b on B200 managed-cluster on one date: the
    // curve counted its 512 GPUs twice (a third operator's percentile 25 instead of
    // 33.3). Refused, naming both rows; another GPU or date is another point.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.csv");
    std::fs::write(
        &f,
        format!("{HEAD}\nstack-a,B200,managed-cluster,llm-70b,8000,1000,100,200,1.0,512,5.00,2025-06-01\nstack-b,B200,managed-cluster,llm-70b,8000,1000,100,300,1.0,256,5.00,2025-06-01\nstack-a,b200,managed-cluster,llm-70b,8000,1000,100,200,1.0,512,5.00,2025-06-01\nstack-a,H100,managed-cluster,llm-70b,8000,1000,100,150,1.0,64,2.00,2025-06-01\n"),
    )
    .unwrap();
    let out = dir.path().join("cost");
    let o = rentix(&["cost", "--throughput", p(&f), "--out", p(&out)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains(
            "row 1 already gives stack-a's llm-70b on b200-sxm-180gb managed-cluster on 2025-06-01"
        ),
        "{err}"
    );
    assert!(!out.join("cost_curve.csv").exists());
}

/// The success rate is printed to three significant digits: a rate of 1e-7
/// printed "0% success" beside 55,555,555 USD per million useful tokens, and
/// 0.9975 printed "100% success".
#[test]
fn a_success_rate_is_printed_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.csv");
    std::fs::write(
        &f,
        format!("{HEAD}\nrare,B200,managed-cluster,llm-70b,8000,1000,100,200,0.0000001,512,5.00,2025-06-01\nmost,B200,managed-cluster,llm-70b,8000,1000,100,200,0.9975,512,5.00,2025-06-01\nnearly,B200,managed-cluster,llm-70b,8000,1000,100,200,0.99996,512,5.00,2025-06-01\n"),
    )
    .unwrap();
    let msg = rentix_ok(&[
        "cost",
        "--throughput",
        p(&f),
        "--out",
        p(&dir.path().join("c")),
    ]);
    assert!(msg.contains(", 0.00001% success)"), "{msg}");
    assert!(msg.contains(", 99.8% success)"), "{msg}");
    assert!(msg.contains(", 99.996% success)"), "{msg}");
}

/// An operator on two GPUs has a position change for each: its H200 row was
/// compared with its H100 row, "+66.7%, lost ground", where by hand (cost = price
/// / (tps x 3600 x success) x 1e6) its H100 went 2/(300 x 3600 x .99) x 1e6 =
/// 1.8706 -> 2.8058 (+50.0%) and its H200 3/(500 x 3600 x .99) x 1e6 = 1.6835 ->
/// 0.9353 (-44.4%) (a hostile round).
#[test]
fn an_operator_on_two_gpus_moves_on_each() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.csv");
    let row = |gpu: &str, tps: f64, price: f64, date: &str| {
        format!("A,{gpu},bare-metal,m,8000,1000,100,{tps},0.99,100,{price},{date}")
    };
    let body = [
        HEAD.to_string(),
        row("h100-sxm-80gb", 300.0, 2.0, "2024-06-01"),
        row("h200-sxm-141gb", 500.0, 3.0, "2024-06-01"),
        "B,h100-sxm-80gb,bare-metal,m,8000,1000,100,250,0.98,200,2.2,2024-06-01".to_string(),
        row("h100-sxm-80gb", 200.0, 2.0, "2024-07-01"),
        row("h200-sxm-141gb", 900.0, 3.0, "2024-07-01"),
    ];
    std::fs::write(&f, body.join("\n") + "\n").unwrap();
    let out = dir.path().join("cost");
    rentix_ok(&["cost", "--throughput", p(&f), "--out", p(&out)]);
    let changes = rows(&out.join("position_changes.csv"));
    let on = |gpu: &str| {
        changes
            .iter()
            .find(|r| r["operator"] == "A" && r["gpu"] == gpu)
            .unwrap_or_else(|| panic!("no change of A on {gpu}: {changes:?}"))
    };
    let cost =
        |r: &std::collections::BTreeMap<String, String>, k: &str| -> f64 { r[k].parse().unwrap() };
    let (h100, h200) = (on("h100-sxm-80gb"), on("h200-sxm-141gb"));
    assert!((cost(h100, "cost_to") / cost(h100, "cost_from") - 1.5).abs() < 1e-9);
    assert!((cost(h200, "cost_to") / cost(h200, "cost_from") - 5.0 / 9.0).abs() < 1e-9);
    assert!(
        h100["reading"].starts_with("A on h100-sxm-80gb/bare-metal (m)"),
        "{h100:?}"
    );
}

/// An offer an operator moved off (A's vm row of January, still in force in July
/// when A publishes bare metal) has one date of its own: no position change. It
/// read "2.5980 -> 2.5980, it lost ground", its January row compared with itself
/// (a hostile round).
#[test]
fn a_row_still_in_force_is_not_a_second_date() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.csv");
    let body = [
        HEAD,
        "A,h100-sxm-80gb,vm,m,8000,1000,100,270,0.99,100,2.5,2024-01-01",
        "A,h100-sxm-80gb,bare-metal,m,8000,1000,100,270,0.99,100,2.0,2024-07-01",
        "B,h100-sxm-80gb,vm,m,8000,1000,100,270,0.99,100,2.4,2024-01-01",
        "B,h100-sxm-80gb,vm,m,8000,1000,100,270,0.99,100,2.2,2024-07-01",
    ];
    std::fs::write(&f, body.join("\n") + "\n").unwrap();
    let out = dir.path().join("cost");
    rentix_ok(&["cost", "--throughput", p(&f), "--out", p(&out)]);
    let changes = rows(&out.join("position_changes.csv"));
    let who: Vec<(&str, &str)> = changes
        .iter()
        .map(|r| (r["operator"].as_str(), r["scope"].as_str()))
        .collect();
    assert_eq!(who, vec![("B", "vm")], "{changes:?}");
}
