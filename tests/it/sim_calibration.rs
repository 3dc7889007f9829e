//! The simulated market is priced like the real one: over the four weeks the real
//! Prime Intellect marketplace feed covers (2025-10-19 to 2025-11-16), the median
//! simulated on-demand listing of each GPU falls within a documented band of the
//! feed's median advertised price (docs/calibration.md). Both sides are advertised
//! offers, so the comparison is like for like; the real medians are computed here
//! from the bundled sample, not typed in. And the default methodology's benchmark
//! fixings move like the published indices: their annualized volatility of daily
//! changes falls within a band of the figures Silicon Data reports.

use crate::csvutil::rows;
use crate::fixture::market;
use crate::util::{data, p, rentix_ok};
use chrono::NaiveDate;
use rentix_core::{ContractTerm, ObservationKind};
use rentix_store::Store;
use std::collections::BTreeMap;

/// Relative band around the real median (docs/calibration.md says why 20%: the
/// feed's own two summaries of one GPU, the median offer and the median provider
/// average, differ by up to 17%).
const BAND: f64 = 0.20;

/// The feed's GPU and socket, and the simulated GPU that stands for it.
const PAIRS: [(&str, &str, &str); 4] = [
    ("A100_80GB", "SXM4", "a100-sxm-80gb"),
    ("H100_80GB", "SXM5", "h100-sxm-80gb"),
    ("H200_141GB", "", "h200-sxm-141gb"),
    ("B200_180GB", "", "b200-sxm-180gb"),
];

fn median(mut v: Vec<f64>) -> f64 {
    assert!(!v.is_empty());
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Median over the daily snapshots of the feed's median offer, per (GPU, socket).
fn real_medians() -> BTreeMap<(String, String), f64> {
    let mut by: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    for r in rows(&data("data/real/primeintellect_summary_daily_sample.csv")) {
        by.entry((r["gpu_type"].clone(), r["socket_type"].clone()))
            .or_default()
            .push(r["median"].parse().expect("numeric median"));
    }
    by.into_iter().map(|(k, v)| (k, median(v))).collect()
}

#[test]
fn simulated_listing_medians_sit_within_the_band_of_the_real_feed() {
    let real = real_medians();
    let d = |s: &str| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
    let obs = Store::open(&market().store())
        .unwrap()
        .read(Some(d("2025-10-19")), Some(d("2025-11-16")))
        .unwrap();
    let mut sim: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for o in &obs {
        let o = &o.obs;
        if o.kind == ObservationKind::Listing && o.grade.term == ContractTerm::OnDemand {
            sim.entry(o.grade.gpu.as_str())
                .or_default()
                .push(o.usd_per_gpu_hour.get());
        }
    }
    let mut report = Vec::new();
    for (gpu_type, socket, id) in PAIRS {
        let r = real[&(gpu_type.to_string(), socket.to_string())];
        let listings = sim.remove(id).unwrap_or_default();
        assert!(listings.len() > 100, "{id}: {} listings", listings.len());
        let s = median(listings);
        report.push(format!("{id}: simulated {s:.2}, real {r:.2}"));
        assert!(
            (s / r - 1.0).abs() <= BAND,
            "{id}: simulated median listing {s:.2} USD/GPU-hour is outside +-{:.0}% of the real feed's {r:.2}\n{}",
            BAND * 100.0,
            report.join("\n")
        );
    }
}

#[test]
fn the_real_sample_gives_the_documented_medians() {
    // The calibration table in docs/calibration.md quotes these; a changed sample
    // must change the table too.
    let real = real_medians();
    let at = |g: &str, s: &str| real[&(g.to_string(), s.to_string())];
    assert_eq!(at("A100_80GB", "SXM4"), 1.75);
    assert_eq!(at("H100_80GB", "SXM5"), 2.49);
    assert_eq!(at("H200_141GB", ""), 3.59);
    assert_eq!(at("B200_180GB", ""), 5.69);
}

/// Annualized realized volatility of daily log changes Silicon Data reports for its
/// benchmark rental indices (quoted in issue 29 and docs/calibration.md).
const REAL_VOLATILITY: [(&str, f64); 3] = [
    ("h100-sxm-80gb/bare-metal/on-demand", 0.26),
    ("b200-sxm-180gb/bare-metal/on-demand", 0.30),
    ("a100-sxm-80gb/bare-metal/on-demand", 0.15),
];

/// Relative band around the real volatility. Two years of daily changes estimate a
/// volatility only so well: the default parameters give the A100 12.4% with seed 11
/// and 16.8% with the default seed (docs/calibration.md), a quarter apart.
const VOL_BAND: f64 = 0.25;

#[test]
fn benchmark_fixings_move_like_the_published_indices() {
    // sqrt(365) x the sample standard deviation of ln(v_t / v_{t-1}) over pairs of
    // consecutive calendar days with a value (the default methodology fixes every
    // day), from the default fixings of a two-year market at the simulator's default
    // activity (the shared fixture is thinner: its noisier fixings move more).
    let dir = tempfile::tempdir().unwrap();
    let (sim, out) = (dir.path().join("sim"), dir.path().join("f.csv"));
    rentix_ok(&["simulate", "--out", p(&sim), "--seed", "11"]);
    let input = sim.join("observations.csv");
    let mut args = vec!["index", "--input", p(&input), "--out", p(&out)];
    for (grade, _) in REAL_VOLATILITY {
        args.extend(["--grade", grade]);
    }
    rentix_ok(&args);
    let fixings = rows(&out);
    let mut report = Vec::new();
    for (grade, real) in REAL_VOLATILITY {
        let series: BTreeMap<NaiveDate, f64> = fixings
            .iter()
            .filter(|r| r["grade"] == grade && !r["value"].is_empty())
            .map(|r| (r["date"].parse().unwrap(), r["value"].parse().unwrap()))
            .collect();
        let changes: Vec<f64> = series
            .iter()
            .zip(series.iter().skip(1))
            .filter(|((d0, _), (d1, _))| (**d1 - **d0).num_days() == 1)
            .map(|((_, v0), (_, v1))| (v1 / v0).ln())
            .collect();
        assert!(
            changes.len() > 250,
            "{grade}: {} daily changes",
            changes.len()
        );
        let n = changes.len() as f64;
        let mean = changes.iter().sum::<f64>() / n;
        let var = changes.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let vol = (var * 365.0).sqrt();
        report.push(format!("{grade}: simulated {vol:.3}, real {real:.2}"));
        assert!(
            (vol / real - 1.0).abs() <= VOL_BAND,
            "{grade}: annualized volatility {vol:.3} is outside +-{:.0}% of the published {real:.2}\n{}",
            VOL_BAND * 100.0,
            report.join("\n")
        );
    }
}
