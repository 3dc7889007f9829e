//! What the simulated operators do besides quoting prices: their dated ratings
//! (`ratings.csv`, the layout of data/ratings/) and how much useful output their
//! serving stacks get from a GPU (`throughput.csv`, the layout of `rentix cost`),
//! improving with software releases at different speeds.

use crate::params::SimParams;
use crate::providers::{Provider, ProviderKind};
use crate::rng::{stream, tag};
use crate::users::day_text;
use rand::Rng;
use rentix_core::{Grade, OperatorTier};
use std::collections::BTreeSet;

/// Days between throughput snapshots (a quarter of software releases).
pub(crate) const RELEASE_EVERY_DAYS: u32 = 91;
/// The model every simulated operator serves, with the talk's workload.
const MODEL: &str = "llm-70b";
const WORKLOAD: (u32, u32, u32) = (8000, 1000, 100);

/// `operator, scope, tier, effective_from, source` rows: each provider's rating
/// history for every scope it offers.
pub(crate) fn ratings(p: &SimParams, providers: &[Provider]) -> Vec<[String; 5]> {
    let mut out = Vec::new();
    for pr in providers {
        let scopes: BTreeSet<&str> = pr.offers.iter().map(|o| o.scope.as_str()).collect();
        for scope in scopes {
            for (day, tier) in &pr.tier_history {
                out.push([
                    pr.name.clone(),
                    scope.to_string(),
                    tier.as_str().to_string(),
                    day_text(p, *day),
                    "rentix simulator (fictional providers)".to_string(),
                ]);
            }
        }
    }
    out
}

fn base_tokens_per_s(t: OperatorTier) -> f64 {
    match t {
        OperatorTier::Platinum => 300.0,
        OperatorTier::Gold => 260.0,
        OperatorTier::Silver => 220.0,
        OperatorTier::Bronze => 190.0,
        OperatorTier::Underperform => 160.0,
    }
}

/// Throughput snapshots every quarter for the neoclouds and hyperscalers (H100,
/// managed clusters) and for each user that earns rent (its own GPU and scope):
/// the CSV rows of `throughput.csv`, prices left to the index.
/// `first_rent_day` holds each user's first day with rent (its GPUs on the market).
pub(crate) fn throughput(
    p: &SimParams,
    providers: &[Provider],
    first_rent_day: &std::collections::BTreeMap<String, u32>,
) -> Vec<Vec<String>> {
    let snapshots: Vec<u32> = (0..p.days).step_by(RELEASE_EVERY_DAYS as usize).collect();
    let mut out = Vec::new();
    let mut emit = |name: &str,
                    gpu: &str,
                    scope: &str,
                    tps0: f64,
                    rate: f64,
                    success: f64,
                    capacity: u32,
                    from: u32| {
        // The first snapshot at or before `from` stands for the day the operator starts.
        let start = snapshots.iter().rposition(|d| *d <= from).unwrap_or(0);
        for (k, day) in snapshots.iter().enumerate().skip(start) {
            let day = &(*day).max(from);
            let tps = tps0 * (1.0 + rate).powi(k as i32);
            out.push(vec![
                name.to_string(),
                gpu.to_string(),
                scope.to_string(),
                MODEL.to_string(),
                WORKLOAD.0.to_string(),
                WORKLOAD.1.to_string(),
                WORKLOAD.2.to_string(),
                format!("{tps:.1}"),
                format!("{success:.4}"),
                capacity.to_string(),
                String::new(),
                day_text(p, *day),
            ]);
        }
    };
    for pr in providers
        .iter()
        .filter(|pr| matches!(pr.kind, ProviderKind::Neocloud | ProviderKind::Hyperscaler))
    {
        let mut rng = stream(p.seed, &[tag("throughput"), tag(&pr.name)]);
        let tps0 = base_tokens_per_s(pr.tier) * rng.gen_range(0.92..1.08);
        let rate = rng.gen_range(0.0..0.08);
        let success = (0.97 + 0.29 * (pr.reliability - 0.9)).clamp(0.9, 0.999);
        let capacity = match pr.kind {
            ProviderKind::Hyperscaler => 4096,
            _ => 512 * rng.gen_range(1..5),
        };
        emit(
            &pr.name,
            "h100-sxm-80gb",
            "managed-cluster",
            tps0,
            rate,
            success,
            capacity,
            0,
        );
    }
    for u in p.user.iter().filter(|u| u.side == "earn") {
        let Some(g) = u.leg.first().and_then(|l| l.grade.parse::<Grade>().ok()) else {
            continue;
        };
        let mut rng = stream(p.seed, &[tag("throughput"), tag(&u.name)]);
        let tps0 = 230.0 * rng.gen_range(0.95..1.05);
        let rate = rng.gen_range(0.02..0.06);
        let from = first_rent_day.get(&u.name).copied().unwrap_or(0);
        emit(
            &u.name,
            g.gpu.as_str(),
            g.scope.as_str(),
            tps0,
            rate,
            0.98,
            u.gpus,
            from,
        );
    }
    out
}

pub(crate) use rentix_core::THROUGHPUT_COLUMNS as THROUGHPUT_HEADER;
