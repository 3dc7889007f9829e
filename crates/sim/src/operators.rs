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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::roster;
    use crate::testing::{date, window};
    use std::collections::BTreeMap;

    #[test]
    fn ratings_list_every_scope_and_every_dated_tier_of_each_provider() {
        let p = window(date(2024, 1, 1), 731);
        let providers = roster(&p);
        let rows = ratings(&p, &providers);
        let expected: usize = providers
            .iter()
            .map(|pr| {
                let scopes: BTreeSet<_> = pr.offers.iter().map(|o| o.scope).collect();
                scopes.len() * pr.tier_history.len()
            })
            .sum();
        assert_eq!(rows.len(), expected);
        for pr in &providers {
            let mine: Vec<&[String; 5]> = rows.iter().filter(|r| r[0] == pr.name).collect();
            assert_eq!(mine[0][3], "2024-01-01");
            for r in mine {
                let on = r[3].parse::<chrono::NaiveDate>().unwrap();
                let day = (on - p.start).num_days() as u32;
                assert_eq!(r[2], pr.tier_on(day).as_str());
                assert!(pr.offers.iter().any(|o| o.scope.as_str() == r[1]));
                r[1].parse::<rentix_core::ServiceScope>().unwrap();
                r[2].parse::<OperatorTier>().unwrap();
            }
        }
    }

    /// 731 days: snapshots on days 0, 91, ..., 728 (8 * 91), nine per operator. The
    /// 3 hyperscalers and 10 neoclouds give 117 rows; the two earning users of the
    /// default, 9 (neocloud_a100, from day 0) and 8 (neocloud_h200, from day 152, the
    /// H200 launch: the snapshot of day 91 is moved to 152, then 182, ..., 728).
    #[test]
    fn throughput_is_snapshotted_every_quarter_and_improves_geometrically() {
        let p = window(date(2024, 1, 1), 731);
        let providers = roster(&p);
        let first = BTreeMap::from([
            ("neocloud_h200".to_string(), 152u32),
            ("neocloud_a100".to_string(), 0),
        ]);
        let rows = throughput(&p, &providers, &first);
        assert_eq!(rows.len(), 117 + 9 + 8);
        let mut by_operator: BTreeMap<&str, Vec<&Vec<String>>> = BTreeMap::new();
        for r in &rows {
            assert_eq!(r.len(), THROUGHPUT_HEADER.len());
            assert_eq!(r[3], "llm-70b");
            assert_eq!([&r[4], &r[5], &r[6]], ["8000", "1000", "100"]);
            assert_eq!(r[10], "", "prices are left to the index");
            let success: f64 = r[8].parse().unwrap();
            assert!((0.9..=0.999).contains(&success), "{success}");
            by_operator.entry(&r[0]).or_default().push(r);
        }
        for pr in &providers {
            let mine = by_operator.get(pr.name.as_str());
            if !matches!(pr.kind, ProviderKind::Neocloud | ProviderKind::Hyperscaler) {
                assert!(mine.is_none(), "{}", pr.name);
                continue;
            }
            let mine = mine.unwrap();
            assert_eq!(mine.len(), 9);
            assert_eq!(
                (mine[0][1].as_str(), mine[0][2].as_str()),
                ("h100-sxm-80gb", "managed-cluster")
            );
            let tps: Vec<f64> = mine.iter().map(|r| r[7].parse().unwrap()).collect();
            let base = base_tokens_per_s(pr.tier);
            assert!(
                tps[0] >= 0.92 * base - 0.05 && tps[0] <= 1.08 * base + 0.05,
                "{}",
                tps[0]
            );
            // One release rate, 0 to 8% a quarter (0.1 rounding: 5e-4 on ~200).
            let g = tps[1] / tps[0];
            assert!((1.0 - 1e-3..1.08 + 1e-3).contains(&g), "{g}");
            assert!(tps.windows(2).all(|w| (w[1] / w[0] - g).abs() < 1e-3));
            let dates: Vec<&str> = mine.iter().map(|r| r[11].as_str()).collect();
            assert_eq!(dates[0], "2024-01-01");
            assert_eq!(dates[1], "2024-04-01"); // day 91: 31 + 29 + 31 = 91
            let cap: u32 = mine[0][9].parse().unwrap();
            match pr.kind {
                ProviderKind::Hyperscaler => assert_eq!(cap, 4096),
                _ => assert!([512, 1024, 1536, 2048].contains(&cap), "{cap}"),
            }
        }
        let h200 = &by_operator["neocloud_h200"];
        assert_eq!(h200.len(), 8);
        assert_eq!(
            (h200[0][1].as_str(), h200[0][2].as_str()),
            ("h200-sxm-141gb", "bare-metal")
        );
        assert_eq!(h200[0][9], "1024");
        assert_eq!(h200[0][11], "2024-06-01");
        assert_eq!(h200[1][11], "2024-07-01"); // day 182 = 152 + 30
        assert_eq!(by_operator["neocloud_a100"][0][2], "vm");
        // Users that pay rent publish no throughput.
        assert!(!by_operator.contains_key("producer_h100"));
    }
}
