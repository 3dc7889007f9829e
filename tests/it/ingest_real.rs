//! The real public samples through their shipped mappings: exact normalized values,
//! grades, and the reason codes of the broken rows they contain.

use crate::util::data;
use rentix_ingest::{ingest, IngestOptions};
use rentix_store::{IngestSummary, Store, StoredObservation};
use std::path::PathBuf;

fn run(
    sample: &str,
    mapping: &str,
) -> (
    IngestSummary,
    Vec<StoredObservation>,
    String,
    tempfile::TempDir,
) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let opts = IngestOptions {
        mapping: Some(data(&format!("data/mappings/{mapping}"))),
        ..Default::default()
    };
    let file: PathBuf = data(&format!("data/real/{sample}"));
    let s = ingest(&store, &[file], &opts, &mut |_| {}).unwrap();
    let rows = Store::open(&store).unwrap().read(None, None).unwrap();
    let q = std::fs::read_to_string(store.join(&s.quarantine_file)).unwrap();
    (s, rows, q, dir)
}

fn find(rows: &[StoredObservation], f: impl Fn(&StoredObservation) -> bool) -> &StoredObservation {
    rows.iter().find(|r| f(r)).expect("row present")
}

#[test]
fn primeintellect_by_provider() {
    let (s, rows, _, _d) = run(
        "primeintellect_by_provider_sample.csv",
        "primeintellect_by_provider.toml",
    );
    assert_eq!(s.rows_read, 324);
    assert_eq!(s.quarantined, 0);
    assert_eq!(s.rows_read, s.accepted + s.quarantined + s.duplicates);
    // First data row: 2025-10-19T21:01:58, A100_80GB PCIe, runpod, 17 offers, avg 1.65.
    let r = find(&rows, |r| {
        &*r.obs.source == "runpod"
            && r.obs.grade.gpu.as_str() == "a100-pcie-80gb"
            && r.obs.fixing_date.to_string() == "2025-10-19"
    });
    assert_eq!(r.obs.usd_per_gpu_hour.get(), 1.65);
    assert_eq!(r.obs.grade.key(), "a100-pcie-80gb/container/on-demand");
    assert_eq!(&*r.obs.gpu_raw, "A100_80GB PCIe");
    assert_eq!(r.obs.kind.as_str(), "listing");
    // H200 has no socket type in the feed: "H200_141GB " resolves through the alias table.
    assert!(rows
        .iter()
        .any(|r| r.obs.grade.gpu.as_str() == "h200-sxm-141gb"));
    assert!(rows
        .iter()
        .any(|r| r.obs.grade.gpu.as_str() == "h100-sxm-80gb"));
    // The 21:02 and 21:06 re-runs of the 21:01 snapshot repeat its prices: duplicates.
    assert!(s.duplicates_within_run > 50, "{}", s.duplicates_within_run);
}

#[test]
fn primeintellect_by_config_keeps_node_size() {
    let (s, rows, _, _d) = run(
        "primeintellect_by_config_sample.csv",
        "primeintellect_by_config.toml",
    );
    assert_eq!(s.rows_read, 57);
    assert_eq!(s.accepted, 57);
    // 2025-10-19T21:01:58, A100_80GB, PCIe, 8x, count, min 0.99? avg_per_gpu -> price per GPU.
    let r = find(&rows, |r| {
        r.obs.grade.gpu.as_str() == "a100-pcie-80gb" && r.obs.cluster_gpus == Some(2)
    });
    assert_eq!(r.obs.usd_per_gpu_hour.get(), 1.51);
    assert_eq!(&*r.obs.source, "primeintellect");
}

#[test]
fn fsdl_rate_card_divides_instances_and_quarantines_broken_rows() {
    let (s, rows, quarantine, _d) = run("fsdl_cloud_gpus_sample.csv", "fsdl_cloud_gpus.toml");
    assert_eq!(s.rows_read, s.accepted + s.quarantined + s.duplicates);
    // AWS p4d.24xlarge: 8 x A100 40GB at 32.77 per instance-hour (the table's own
    // Per-GPU column says 4.10) -> 4.09625 per GPU-hour; spot 9.83 / 8.
    let od = find(&rows, |r| {
        &*r.obs.source == "AWS"
            && r.obs.price_raw == 32.77
            && r.obs.grade.term.as_str() == "on-demand"
    });
    assert_eq!(od.obs.grade.key(), "a100-sxm-40gb/vm/on-demand");
    assert_eq!(od.obs.usd_per_gpu_hour.get(), 32.77 / 8.0);
    assert_eq!(od.obs.gpus_per_unit, Some(8));
    let spot = find(&rows, |r| {
        &*r.obs.source == "AWS" && r.obs.price_raw == 9.83
    });
    assert_eq!(spot.obs.grade.term.as_str(), "spot");
    assert_eq!(spot.obs.usd_per_gpu_hour.get(), 9.83 / 8.0);
    // Broken rows: GPU counts "1-8" (6 rows), "1-7" (2) and "1-4" (1) from Oblivus;
    // "3080Ti ()" without memory (3 rows); 3 rows without an on-demand price.
    // The header row repeated as data (`GPU-Type` where the first says `GPU Type`)
    // is one `repeated_header` row (before: two unknown GPUs "GPU-Type", issue 49).
    let reasons = &s.quarantined_by_reason;
    assert_eq!(
        reasons.get("repeated_header").copied(),
        Some(1),
        "{reasons:?}"
    );
    assert_eq!(
        reasons.get("invalid_number").copied(),
        Some(9),
        "{reasons:?}"
    );
    assert_eq!(reasons.get("unknown_gpu").copied(), Some(3), "{reasons:?}");
    assert_eq!(
        reasons.get("missing_field").copied(),
        Some(3),
        "{reasons:?}"
    );
    assert!(
        quarantine.contains("\"\"GPUs\"\":\"\"1-8\"\""),
        "original fields are kept"
    );
    assert!(quarantine.contains("3080Ti ()"));
}
