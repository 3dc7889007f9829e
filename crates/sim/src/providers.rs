//! The roster of (fictional) providers: who posts what, at which tier, where.

use crate::market::TERMS;
use crate::params::SimParams;
use crate::rng::{stream, tag};
use rand::seq::SliceRandom;
use rand::Rng;
use rentix_core::{ContractTerm, OperatorTier, ServiceScope};

/// The business a provider is in, which decides what it publishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProviderKind {
    /// Rate cards for VMs, repriced rarely, quoted per 8-GPU instance.
    Hyperscaler,
    /// Bare metal and managed clusters: listings, firm offers and trades.
    Neocloud,
    /// Container marketplaces: listings seen many times a day, small trades.
    Marketplace,
    /// Brokers of reserved capacity: firm offers and large trades, per node.
    Broker,
}

/// How a provider quotes its prices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quote {
    GpuHour,
    /// Whole instance or node of 8 GPUs per hour.
    Node8Hour,
    /// Per GPU per month for reserved terms, per GPU-hour otherwise.
    GpuMonthReserved,
}

/// Which raw GPU names a provider uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Naming {
    Canonical,
    Marketing,
    Underscore,
}

#[derive(Debug, Clone)]
pub(crate) struct Offer {
    pub gpu: usize,
    pub scope: ServiceScope,
    pub term: ContractTerm,
}

/// One fictional provider of the roster: what it offers, where, how it quotes and
/// how often it reprices and publishes.
#[derive(Debug, Clone)]
pub(crate) struct Provider {
    /// Display name, written as the observations' `source` and the ratings'
    /// `operator`.
    pub name: String,
    /// Short code `pNN` (roster position) used in observation ids.
    pub code: String,
    /// Business model, which decides what the provider publishes.
    pub kind: ProviderKind,
    /// The rating at the start of the simulation.
    pub tier: OperatorTier,
    /// Dated ratings (simulation day, tier), the first at day 0: operators improve or
    /// slip, and a rating moves with them.
    pub tier_history: Vec<(u32, OperatorTier)>,
    /// Regions it serves (`us`, `eu`, `apac`), at least one.
    pub regions: Vec<&'static str>,
    /// Share of days on which the provider publishes at all.
    pub reliability: f64,
    /// Listing price premium over the fair price at the last repricing.
    pub listing_premium: f64,
    /// Daily probability that a listing is repriced to the market.
    pub reprice_prob: f64,
    /// Currency of its quotes: `EUR` for Fjord Compute, `USD` for every other.
    pub currency: &'static str,
    /// The unit it quotes prices in.
    pub quote: Quote,
    /// Which raw GPU names it writes.
    pub naming: Naming,
    /// Every (GPU, scope, term) it offers.
    pub offers: Vec<Offer>,
}

const ROSTER: [(&str, ProviderKind); 22] = [
    ("Cumulus Cloud", ProviderKind::Hyperscaler),
    ("Stratus Compute", ProviderKind::Hyperscaler),
    ("Nimbus Web Services", ProviderKind::Hyperscaler),
    ("Voltage Labs", ProviderKind::Neocloud),
    ("Helios GPU", ProviderKind::Neocloud),
    ("Northwind AI Cloud", ProviderKind::Neocloud),
    ("Fjord Compute", ProviderKind::Neocloud),
    ("Sakura Cluster", ProviderKind::Neocloud),
    ("Corvid Cloud", ProviderKind::Neocloud),
    ("Lumen Grid", ProviderKind::Neocloud),
    ("Basalt AI", ProviderKind::Neocloud),
    ("Kestrel Compute", ProviderKind::Neocloud),
    ("Ember Cloud", ProviderKind::Neocloud),
    ("GridBazaar", ProviderKind::Marketplace),
    ("PodMarket", ProviderKind::Marketplace),
    ("SpareCycles", ProviderKind::Marketplace),
    ("HashHaus", ProviderKind::Marketplace),
    ("Meridian Capacity", ProviderKind::Broker),
    ("Atlas Brokerage", ProviderKind::Broker),
    ("Keystone GPU Desk", ProviderKind::Broker),
    ("Polaris Compute Exchange", ProviderKind::Broker),
    ("Anchor Compute Partners", ProviderKind::Broker),
];

impl Provider {
    /// The rating in force on simulation day `day`.
    pub(crate) fn tier_on(&self, day: u32) -> OperatorTier {
        self.tier_history
            .iter()
            .rev()
            .find(|(d, _)| *d <= day)
            .map_or(self.tier, |(_, t)| *t)
    }
}

/// A neocloud's rating may rise (40%) or slip (15%) once, in the middle third of
/// the simulation; hyperscalers, marketplaces and brokers keep theirs. Drawn from a
/// stream of its own, so the rest of the market is unchanged.
fn tier_history(
    p: &SimParams,
    name: &str,
    kind: ProviderKind,
    tier: OperatorTier,
) -> Vec<(u32, OperatorTier)> {
    let mut out = vec![(0, tier)];
    if kind != ProviderKind::Neocloud || p.days < 3 {
        return out;
    }
    let mut rng = stream(p.seed, &[tag("rating"), tag(name)]);
    let u: f64 = rng.gen();
    let day = rng.gen_range(p.days / 3..(2 * p.days / 3).max(p.days / 3 + 1));
    let i = OperatorTier::ALL
        .iter()
        .position(|t| *t == tier)
        .unwrap_or(2);
    let next = if u < 0.40 && i > 0 {
        Some(OperatorTier::ALL[i - 1])
    } else if u > 0.85 && i + 1 < OperatorTier::ALL.len() {
        Some(OperatorTier::ALL[i + 1])
    } else {
        None
    };
    if let Some(t) = next {
        out.push((day, t));
    }
    out
}

fn pick<T: Copy>(rng: &mut impl Rng, items: &[(T, f64)]) -> T {
    let total: f64 = items.iter().map(|(_, w)| w).sum();
    let mut u = rng.gen::<f64>() * total;
    for (v, w) in items {
        if u < *w {
            return *v;
        }
        u -= w;
    }
    items[items.len() - 1].0
}

/// Builds the roster from the seed.
#[allow(
    clippy::too_many_lines,
    reason = "not split yet (issue 26 lists it); new functions stay under 100 lines"
)]
pub(crate) fn roster(p: &SimParams) -> Vec<Provider> {
    use OperatorTier::*;
    use ProviderKind::*;
    let n_gpus = p.gpu.len();
    ROSTER
        .iter()
        .enumerate()
        .map(|(i, (name, kind))| {
            let mut rng = stream(p.seed, &[tag("provider"), tag(name)]);
            let tier = match kind {
                Hyperscaler => pick(&mut rng, &[(Platinum, 0.5), (Gold, 0.5)]),
                Neocloud => pick(
                    &mut rng,
                    &[
                        (Platinum, 0.15),
                        (Gold, 0.3),
                        (Silver, 0.3),
                        (Bronze, 0.15),
                        (Underperform, 0.1),
                    ],
                ),
                Marketplace => pick(
                    &mut rng,
                    &[(Silver, 0.3), (Bronze, 0.4), (Underperform, 0.3)],
                ),
                Broker => pick(&mut rng, &[(Gold, 0.4), (Silver, 0.6)]),
            };
            let regions: Vec<&'static str> = match *name {
                "Fjord Compute" => vec!["eu"],
                "Sakura Cluster" => vec!["apac"],
                _ => {
                    let mut r = vec!["us"];
                    if rng.gen::<f64>() < 0.6 {
                        r.push("eu");
                    }
                    if rng.gen::<f64>() < 0.35 {
                        r.push("apac");
                    }
                    r
                }
            };
            let currency = if *name == "Fjord Compute" {
                "EUR"
            } else {
                "USD"
            };
            let quote = match kind {
                Hyperscaler | Broker => Quote::Node8Hour,
                Neocloud if rng.gen::<f64>() < 0.3 => Quote::GpuMonthReserved,
                _ => Quote::GpuHour,
            };
            let naming = match rng.gen_range(0..3) {
                0 => Naming::Canonical,
                1 => Naming::Marketing,
                _ => Naming::Underscore,
            };
            let (scopes, terms): (Vec<ServiceScope>, Vec<ContractTerm>) = match kind {
                Hyperscaler => (
                    vec![ServiceScope::Vm],
                    vec![
                        ContractTerm::OnDemand,
                        ContractTerm::Spot,
                        ContractTerm::Year1,
                        ContractTerm::Year3,
                    ],
                ),
                Neocloud => {
                    let mut s = vec![ServiceScope::BareMetal];
                    if rng.gen::<f64>() < 0.6 {
                        s.push(ServiceScope::ManagedCluster);
                    }
                    if rng.gen::<f64>() < 0.4 {
                        s.push(ServiceScope::Vm);
                    }
                    let mut t = vec![
                        ContractTerm::OnDemand,
                        ContractTerm::Month1,
                        ContractTerm::Month3,
                        ContractTerm::Year1,
                    ];
                    if rng.gen::<f64>() < 0.5 {
                        t.push(ContractTerm::Month6);
                    }
                    if rng.gen::<f64>() < 0.3 {
                        t.push(ContractTerm::Spot);
                    }
                    (s, t)
                }
                Marketplace => (
                    vec![ServiceScope::Container],
                    vec![ContractTerm::OnDemand, ContractTerm::Spot],
                ),
                Broker => (
                    vec![ServiceScope::BareMetal, ServiceScope::Vm],
                    vec![
                        ContractTerm::Month1,
                        ContractTerm::Month3,
                        ContractTerm::Month6,
                        ContractTerm::Year1,
                        ContractTerm::Year3,
                    ],
                ),
            };
            let mut gpus: Vec<usize> = (0..n_gpus).collect();
            gpus.shuffle(&mut rng);
            let keep = match kind {
                Hyperscaler | Marketplace => n_gpus,
                Neocloud => rng.gen_range(2..=n_gpus.max(2)).min(n_gpus),
                Broker => rng.gen_range(2..=n_gpus.max(2)).min(n_gpus),
            };
            gpus.truncate(keep);
            gpus.sort_unstable();
            let mut offers = Vec::new();
            for &g in &gpus {
                for &s in &scopes {
                    for &t in &terms {
                        debug_assert!(TERMS.contains(&t));
                        offers.push(Offer {
                            gpu: g,
                            scope: s,
                            term: t,
                        });
                    }
                }
            }
            Provider {
                name: name.to_string(),
                code: format!("p{i:02}"),
                kind: *kind,
                tier,
                tier_history: tier_history(p, name, *kind, tier),
                regions,
                reliability: match kind {
                    Hyperscaler => 0.995,
                    Neocloud => 0.95,
                    Marketplace => 0.98,
                    Broker => 0.9,
                },
                listing_premium: match kind {
                    Hyperscaler => rng.gen_range(0.25..0.45),
                    Neocloud => rng.gen_range(0.05..0.2),
                    Marketplace => rng.gen_range(0.02..0.1),
                    Broker => rng.gen_range(0.03..0.1),
                },
                reprice_prob: match kind {
                    Hyperscaler => 0.01,
                    Neocloud => 0.06,
                    Marketplace => 0.35,
                    Broker => 0.2,
                },
                currency,
                quote,
                naming,
                offers,
            }
        })
        .collect()
}

/// The raw name a provider uses for a catalogued GPU.
pub(crate) fn raw_gpu_name(id: &str, naming: Naming) -> String {
    let (marketing, underscore) = match id {
        "a100-sxm-80gb" => ("NVIDIA A100-SXM4-80GB", "A100_80GB SXM4"),
        "h100-sxm-80gb" => ("NVIDIA H100 80GB HBM3", "H100_80GB SXM5"),
        "h200-sxm-141gb" => ("NVIDIA H200 141GB HBM3e", "H200_141GB"),
        "b200-sxm-180gb" => ("NVIDIA B200", "B200_180GB"),
        "mi300x-192gb" => ("AMD Instinct MI300X", "MI300X_192GB"),
        _ => (id, id),
    };
    match naming {
        Naming::Canonical => id.to_string(),
        Naming::Marketing => marketing.to_string(),
        Naming::Underscore => underscore.to_string(),
    }
}
