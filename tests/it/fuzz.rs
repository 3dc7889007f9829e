//! Fuzzing the readers with proptest: arbitrary bytes into ingest, and the shipped
//! methodology, contract and rent files with numbers replaced by hostile values. No
//! input may panic; every accepted ingest must account for every row.

use proptest::prelude::*;
use rentix_backtest::{
    read_events, run, BacktestConfig, ContractSpec, IndexInputs, PeriodEnd, RentSeries,
    Strategy as HedgeStrategy, Underlying,
};
use rentix_core::DateSeries;
use rentix_index::{compute, IndexRequest, Methodology};
use rentix_ingest::{ingest, IngestOptions, Mapping};
use rentix_store::{check_store, Store};
use std::path::Path;

const HEADER: &str =
    "kind,observed_at,source,gpu,scope,term,price,price_unit,currency,quantity_gpu_hours,obs_id\n";
const EDGE: [&str; 12] = [
    "0",
    "-1",
    "1e308",
    "nan",
    "inf",
    "-inf",
    "100000000",
    "0.5",
    "2",
    "-0.0",
    "4294967296",
    "1e-320",
];

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 48,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// `text` with its `k`-th number (mod the count) replaced by `v`.
fn mutate_number(text: &str, k: usize, v: &str) -> String {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = bytes[i].is_ascii_digit()
            && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric() && bytes[i - 1] != b'-');
        if starts {
            let s = i;
            while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
                i += 1;
            }
            spans.push((s, i));
        } else {
            i += 1;
        }
    }
    if spans.is_empty() {
        return text.to_string();
    }
    let (s, e) = spans[k % spans.len()];
    format!("{}{v}{}", &text[..s], &text[e..])
}

fn fields() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("listing".to_string()),
            Just("trade".to_string()),
            Just("2025-03-03T12:00:00Z".to_string()),
            Just("-2025-01-11".to_string()),
            Just("h100-sxm-80gb".to_string()),
            Just("vm".to_string()),
            Just("on-demand".to_string()),
            Just("gpu_hour".to_string()),
            Just("USD".to_string()),
            Just("\"".to_string()),
            "[0-9eE.+-]{0,8}",
            "\\PC{0,6}",
        ],
        0..14,
    )
    .prop_map(|v| v.join(","))
}

/// A small store of trades, firm offers and listings over a week, read once.
fn small_store() -> &'static Vec<rentix_store::StoredObservation> {
    static ROWS: std::sync::OnceLock<Vec<rentix_store::StoredObservation>> =
        std::sync::OnceLock::new();
    ROWS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let mut body = String::from(HEADER);
        for day in 1..=7 {
            for (i, kind) in ["trade", "firm", "listing"].iter().enumerate() {
                for s in 0..4 {
                    body.push_str(&format!(
                        "{kind},2025-03-0{day}T1{s}:00:00Z,p{s},h100-sxm-80gb,{},on-demand,{:.2},gpu_hour,USD,100,{kind}{day}{s}\n",
                        ["vm", "bare-metal"][s % 2],
                        2.0 + 0.1 * s as f64 + 0.05 * i as f64
                    ));
                }
            }
        }
        let f = dir.path().join("obs.csv");
        std::fs::write(&f, body).unwrap();
        let store = dir.path().join("store");
        ingest(&store, &[f], &IngestOptions::default(), &mut |_| {}).unwrap();
        Store::open(&store).unwrap().read(None, None).unwrap()
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_observation_files_never_panic_and_always_add_up(
        lines in prop::collection::vec(fields(), 0..25),
        raw in prop::collection::vec(any::<u8>(), 0..200),
        with_header in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut body: Vec<u8> = if with_header { HEADER.as_bytes().to_vec() } else { Vec::new() };
        body.extend(lines.join("\n").into_bytes());
        body.extend(raw);
        let f = dir.path().join("obs.csv");
        std::fs::write(&f, &body).unwrap();
        let store = dir.path().join("store");
        if let Ok(s) = ingest(&store, &[f], &IngestOptions::default(), &mut |_| {}) {
            prop_assert_eq!(s.rows_read, s.accepted + s.quarantined + s.duplicates);
            let report = check_store(&Store::open(&store).unwrap());
            prop_assert!(report.is_sound(), "{:?}", report.problems);
            prop_assert_eq!(report.rows, s.accepted);
        }
        prop_assert!(!store.join(".lock").exists());
    }

    #[test]
    fn mutated_methodologies_are_refused_or_run(k in 0usize..200, v in 0usize..EDGE.len()) {
        let text = mutate_number(include_str!("../../data/methodologies/default.toml"), k, EDGE[v]);
        if let Ok(m) = Methodology::from_toml(&text, Path::new("m.toml")) {
            let req = IndexRequest { methodology: m, grade_filters: Vec::new(), from: None, to: None };
            let _ = compute(small_store(), &req);
        }
    }

    #[test]
    fn mutated_contracts_are_refused_or_run(k in 0usize..60, v in 0usize..EDGE.len()) {
        let text = mutate_number(include_str!("../../data/contracts/h100-sxm-80gb-bare-metal-on-demand.toml"), k, EDGE[v]);
        if let Ok(c) = ContractSpec::from_toml(&text, Path::new("c.toml")) {
            let mut rent = String::from("period_start,period_end,usd_per_gpu_hour,gpu_hours,side\n");
            let mut pts = Vec::new();
            for m in 1..=12u32 {
                let s = chrono::NaiveDate::from_ymd_opt(2025, m, 1).unwrap();
                let e = if m == 12 { chrono::NaiveDate::from_ymd_opt(2026, 1, 1).unwrap() } else { chrono::NaiveDate::from_ymd_opt(2025, m + 1, 1).unwrap() };
                rent.push_str(&format!("{s},{e},{},7300,pay\n", 2.0 + f64::from(m) * 0.01));
                let mut d = s;
                while d < e {
                    pts.push((d, 2.0 + f64::from(m) * 0.01));
                    d = d.succ_opt().unwrap();
                }
            }
            let dir = tempfile::tempdir().unwrap();
            let rp = dir.path().join("rent.csv");
            std::fs::write(&rp, rent).unwrap();
            let r = RentSeries::from_csv(&rp, PeriodEnd::Exclusive).unwrap();
            let u = Underlying::from_series(&c.underlying, DateSeries::from_points(pts).unwrap());
            let cfg = BacktestConfig { contract: c, strategies: HedgeStrategy::ALL.to_vec(), bootstrap_resamples: 10, seed: 1, rolling_window: 6, perp: None };
            let _ = run(&r, &[], &IndexInputs::of(u), &cfg);
        }
    }

    #[test]
    fn arbitrary_rent_and_event_files_never_panic(
        rows in prop::collection::vec((
            prop_oneof![Just("2025-01-01".to_string()), Just("9999-12-31".to_string()), Just("0001-01-01".to_string()), "[0-9-]{0,12}"],
            prop_oneof![Just("2025-02-01".to_string()), Just("2025-01-31".to_string()), "[0-9-]{0,12}"],
            prop_oneof![Just("2.5".to_string()), Just("nan".to_string()), Just("1e308".to_string()), Just("-1".to_string())],
            prop_oneof![Just("pay".to_string()), Just("earn".to_string()), Just("outage".to_string()), "\\PC{0,4}"],
        ), 0..8),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut rent = String::from("period_start,period_end,usd_per_gpu_hour,gpu_hours,side\n");
        let mut ev = String::from("start,end,kind,gpu_hours_lost,usd_loss,note\n");
        for (a, b, x, s) in &rows {
            rent.push_str(&format!("{a},{b},{x},{x},{s}\n"));
            ev.push_str(&format!("{a},{b},{s},{x},{x},n\n"));
        }
        let rp = dir.path().join("rent.csv");
        let ep = dir.path().join("ev.csv");
        std::fs::write(&rp, rent).unwrap();
        std::fs::write(&ep, ev).unwrap();
        let _ = RentSeries::from_csv(&rp, PeriodEnd::Exclusive);
        let _ = RentSeries::from_csv(&rp, PeriodEnd::Inclusive);
        let _ = read_events(&ep, rentix_backtest::PeriodEnd::Exclusive);
    }

    #[test]
    fn arbitrary_mappings_never_panic(k in 0usize..80, v in 0usize..EDGE.len(), junk in "\\PC{0,40}") {
        let base = include_str!("../../data/mappings/fsdl_cloud_gpus.toml");
        let dir = tempfile::tempdir().unwrap();
        for text in [mutate_number(base, k, EDGE[v]), format!("{base}\n{junk}"), junk.clone()] {
            let p = dir.path().join("m.toml");
            std::fs::write(&p, text).unwrap();
            let _ = Mapping::from_file(&p);
        }
    }
}
