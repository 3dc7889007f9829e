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
pub(crate) fn roster(p: &SimParams) -> Vec<Provider> {
    ROSTER
        .iter()
        .enumerate()
        .map(|(i, (name, kind))| provider(p, i, name, *kind))
        .collect()
}

/// Draws one provider of the roster, at position `i`, from a stream of its own.
fn provider(p: &SimParams, i: usize, name: &str, kind: ProviderKind) -> Provider {
    use ProviderKind::*;
    let mut rng = stream(p.seed, &[tag("provider"), tag(name)]);
    let tier = draw_tier(&mut rng, kind);
    let regions = draw_regions(&mut rng, name);
    let currency = if name == "Fjord Compute" {
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
    let (scopes, terms) = draw_scopes_and_terms(&mut rng, kind);
    let gpus = draw_gpus(&mut rng, kind, p.gpu.len());
    let offers = offers_of(&gpus, &scopes, &terms);
    Provider {
        name: name.to_string(),
        code: format!("p{i:02}"),
        kind,
        tier,
        tier_history: tier_history(p, name, kind, tier),
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
}

/// The rating a provider of `kind` starts with, drawn with the kind's shares.
fn draw_tier(rng: &mut impl Rng, kind: ProviderKind) -> OperatorTier {
    use OperatorTier::*;
    match kind {
        ProviderKind::Hyperscaler => pick(rng, &[(Platinum, 0.5), (Gold, 0.5)]),
        ProviderKind::Neocloud => pick(
            rng,
            &[
                (Platinum, 0.15),
                (Gold, 0.3),
                (Silver, 0.3),
                (Bronze, 0.15),
                (Underperform, 0.1),
            ],
        ),
        ProviderKind::Marketplace => {
            pick(rng, &[(Silver, 0.3), (Bronze, 0.4), (Underperform, 0.3)])
        }
        ProviderKind::Broker => pick(rng, &[(Gold, 0.4), (Silver, 0.6)]),
    }
}

/// The regions a provider serves: Fjord `eu` and Sakura `apac` alone, every other
/// `us`, with `eu` (chance 0.6) and `apac` (0.35).
fn draw_regions(rng: &mut impl Rng, name: &str) -> Vec<&'static str> {
    match name {
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
    }
}

/// The scopes and terms a provider of `kind` offers (a neocloud's drawn).
fn draw_scopes_and_terms(
    rng: &mut impl Rng,
    kind: ProviderKind,
) -> (Vec<ServiceScope>, Vec<ContractTerm>) {
    match kind {
        ProviderKind::Hyperscaler => (
            vec![ServiceScope::Vm],
            vec![
                ContractTerm::OnDemand,
                ContractTerm::Spot,
                ContractTerm::Year1,
                ContractTerm::Year3,
            ],
        ),
        ProviderKind::Neocloud => {
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
        ProviderKind::Marketplace => (
            vec![ServiceScope::Container],
            vec![ContractTerm::OnDemand, ContractTerm::Spot],
        ),
        ProviderKind::Broker => (
            vec![ServiceScope::BareMetal, ServiceScope::Vm],
            vec![
                ContractTerm::Month1,
                ContractTerm::Month3,
                ContractTerm::Month6,
                ContractTerm::Year1,
                ContractTerm::Year3,
            ],
        ),
    }
}

/// The GPUs (indices into the parameters' `gpu`, sorted) a provider offers: every
/// one for hyperscalers and marketplaces, a random two or more for the others.
fn draw_gpus(rng: &mut impl Rng, kind: ProviderKind, n_gpus: usize) -> Vec<usize> {
    let mut gpus: Vec<usize> = (0..n_gpus).collect();
    gpus.shuffle(rng);
    let keep = match kind {
        ProviderKind::Hyperscaler | ProviderKind::Marketplace => n_gpus,
        ProviderKind::Neocloud | ProviderKind::Broker => {
            rng.gen_range(2..=n_gpus.max(2)).min(n_gpus)
        }
    };
    gpus.truncate(keep);
    gpus.sort_unstable();
    gpus
}

/// Every (GPU, scope, term) of the given ones, GPU first, term last.
fn offers_of(gpus: &[usize], scopes: &[ServiceScope], terms: &[ContractTerm]) -> Vec<Offer> {
    let mut offers = Vec::new();
    for &g in gpus {
        for &s in scopes {
            for &t in terms {
                debug_assert!(TERMS.contains(&t));
                offers.push(Offer {
                    gpu: g,
                    scope: s,
                    term: t,
                });
            }
        }
    }
    offers
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{date, window};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use std::collections::BTreeMap;
    use OperatorTier::*;
    use ProviderKind::*;

    const SEEDS: u64 = 4000;

    /// Rosters of `SEEDS` seeds over the default GPUs and 731 days, drawn once.
    fn rosters() -> &'static [Vec<Provider>] {
        static ALL: std::sync::OnceLock<Vec<Vec<Provider>>> = std::sync::OnceLock::new();
        ALL.get_or_init(|| {
            let mut p = window(date(2024, 1, 1), 731);
            (0..SEEDS)
                .map(|s| {
                    p.seed = s;
                    roster(&p)
                })
                .collect()
        })
    }

    /// Share of `kind`'s providers, over every roster, for which `f` holds.
    fn share(all: &[Vec<Provider>], kind: ProviderKind, f: impl Fn(&Provider) -> bool) -> f64 {
        let of_kind: Vec<&Provider> = all.iter().flatten().filter(|p| p.kind == kind).collect();
        of_kind.iter().filter(|p| f(p)).count() as f64 / of_kind.len() as f64
    }

    #[test]
    fn the_roster_has_its_fixed_members_and_their_fixed_traits() {
        let p = window(date(2024, 1, 1), 731);
        let r = roster(&p);
        assert_eq!(r.len(), 22);
        let count = |k| r.iter().filter(|x| x.kind == k).count();
        assert_eq!(
            [
                count(Hyperscaler),
                count(Neocloud),
                count(Marketplace),
                count(Broker)
            ],
            [3, 10, 4, 5]
        );
        for (i, pr) in r.iter().enumerate() {
            assert_eq!(pr.code, format!("p{i:02}"));
            assert!(
                !pr.regions.is_empty() && !pr.offers.is_empty(),
                "{}",
                pr.name
            );
            assert_eq!(pr.tier_history[0], (0, pr.tier));
            assert!(pr
                .offers
                .iter()
                .all(|o| o.gpu < p.gpu.len() && TERMS.contains(&o.term)));
            let scopes: Vec<ServiceScope> = pr.offers.iter().map(|o| o.scope).collect();
            let gpus: std::collections::BTreeSet<usize> = pr.offers.iter().map(|o| o.gpu).collect();
            match pr.kind {
                Hyperscaler => {
                    assert!(scopes.iter().all(|s| *s == ServiceScope::Vm));
                    assert_eq!(pr.quote, Quote::Node8Hour);
                    assert!(matches!(pr.tier, Platinum | Gold));
                    assert_eq!(gpus.len(), 5);
                }
                Marketplace => {
                    assert!(scopes.iter().all(|s| *s == ServiceScope::Container));
                    assert_eq!(pr.quote, Quote::GpuHour);
                    assert_eq!(gpus.len(), 5);
                }
                Broker => {
                    assert_eq!(pr.quote, Quote::Node8Hour);
                    assert!(pr.offers.iter().all(|o| o.term.is_reserved()));
                    assert!(gpus.len() >= 2);
                }
                Neocloud => {
                    assert!(scopes.contains(&ServiceScope::BareMetal));
                    assert!(gpus.len() >= 2);
                }
            }
            let (currency, regions): (&str, Option<Vec<&str>>) = match pr.name.as_str() {
                "Fjord Compute" => ("EUR", Some(vec!["eu"])),
                "Sakura Cluster" => ("USD", Some(vec!["apac"])),
                _ => ("USD", None),
            };
            assert_eq!(pr.currency, currency);
            match regions {
                Some(r) => assert_eq!(pr.regions, r),
                None => assert_eq!(pr.regions[0], "us"),
            }
        }
        // Same seed, same roster.
        let again = roster(&p);
        assert!(r
            .iter()
            .zip(&again)
            .all(|(a, b)| format!("{a:?}") == format!("{b:?}")));
    }

    /// Tier shares by kind over 4000 rosters, tolerance at least 4 standard errors:
    /// neoclouds (40 000 draws, se <= 0.0023, tol 0.01), hyperscalers (12 000, se
    /// 0.0046, tol 0.02), marketplaces (16 000, se <= 0.0039, tol 0.016), brokers
    /// (20 000, se 0.0035, tol 0.015).
    #[test]
    fn tiers_are_drawn_with_the_configured_shares() {
        let all = rosters();
        type Shares = &'static [(OperatorTier, f64)];
        let cases: [(ProviderKind, Shares, f64); 4] = [
            (
                Neocloud,
                &[
                    (Platinum, 0.15),
                    (Gold, 0.3),
                    (Silver, 0.3),
                    (Bronze, 0.15),
                    (Underperform, 0.1),
                ],
                0.01,
            ),
            (Hyperscaler, &[(Platinum, 0.5), (Gold, 0.5)], 0.02),
            (
                Marketplace,
                &[(Silver, 0.3), (Bronze, 0.4), (Underperform, 0.3)],
                0.016,
            ),
            (Broker, &[(Gold, 0.4), (Silver, 0.6)], 0.015),
        ];
        for (kind, shares, tol) in cases {
            for (tier, expected) in shares {
                let got = share(all, kind, |p| p.tier == *tier);
                assert!((got - expected).abs() < tol, "{kind:?} {tier}: {got}");
            }
        }
    }

    /// Regions: every provider but Fjord and Sakura serves `us`, `eu` with chance 0.6
    /// and `apac` with 0.35 (80 000 draws, se 0.0017, tol 0.01). Neoclouds: managed
    /// clusters 0.6, VMs 0.4, 6-month terms 0.5, spot 0.3, monthly reserved quotes 0.3
    /// (40 000 draws, se <= 0.0025, tol 0.012).
    #[test]
    fn regions_scopes_terms_and_quotes_have_the_configured_shares() {
        let all = rosters();
        let free: Vec<&Provider> = all
            .iter()
            .flatten()
            .filter(|p| p.name != "Fjord Compute" && p.name != "Sakura Cluster")
            .collect();
        let region = |r: &str| {
            free.iter().filter(|p| p.regions.contains(&r)).count() as f64 / free.len() as f64
        };
        assert!((region("eu") - 0.6).abs() < 0.01, "eu {}", region("eu"));
        assert!(
            (region("apac") - 0.35).abs() < 0.01,
            "apac {}",
            region("apac")
        );
        let offers = |p: &Provider, f: &dyn Fn(&Offer) -> bool| p.offers.iter().any(f);
        for (what, got, expected) in [
            (
                "managed cluster",
                share(all, Neocloud, |p| {
                    offers(p, &|o| o.scope == ServiceScope::ManagedCluster)
                }),
                0.6,
            ),
            (
                "vm",
                share(all, Neocloud, |p| {
                    offers(p, &|o| o.scope == ServiceScope::Vm)
                }),
                0.4,
            ),
            (
                "6m",
                share(all, Neocloud, |p| {
                    offers(p, &|o| o.term == ContractTerm::Month6)
                }),
                0.5,
            ),
            (
                "spot",
                share(all, Neocloud, |p| {
                    offers(p, &|o| o.term == ContractTerm::Spot)
                }),
                0.3,
            ),
            (
                "gpu_month",
                share(all, Neocloud, |p| p.quote == Quote::GpuMonthReserved),
                0.3,
            ),
        ] {
            assert!((got - expected).abs() < 0.012, "{what}: {got}");
        }
    }

    /// A neocloud's rating rises a tier with chance 0.40 (not from platinum) and slips
    /// one with 0.15 (not from underperform), once, on a day in the middle third
    /// [243, 487) of 731 days. Gold neoclouds: 12 000 draws, se <= 0.0045, tol 0.02.
    /// Other kinds keep their rating.
    #[test]
    fn neocloud_ratings_move_once_in_the_middle_third() {
        let all = rosters();
        let mut moves: BTreeMap<&str, u32> = BTreeMap::new();
        let mut gold = 0u32;
        for pr in all.iter().flatten() {
            if pr.kind != Neocloud {
                assert_eq!(pr.tier_history.len(), 1, "{}", pr.name);
                continue;
            }
            assert!(pr.tier_history.len() <= 2);
            if pr.tier == Gold {
                gold += 1;
            }
            if let Some(&(day, to)) = pr.tier_history.get(1) {
                assert!((243..487).contains(&day), "{day}");
                let step = OperatorTier::ALL.iter().position(|t| *t == to).unwrap() as i32
                    - OperatorTier::ALL
                        .iter()
                        .position(|t| *t == pr.tier)
                        .unwrap() as i32;
                assert!(step == -1 || step == 1, "{:?}", pr.tier_history);
                assert_eq!(pr.tier_on(day - 1), pr.tier);
                assert_eq!(pr.tier_on(day), to);
                assert_eq!(pr.tier_on(730), to);
                if pr.tier == Gold {
                    *moves
                        .entry(if step < 0 { "up" } else { "down" })
                        .or_default() += 1;
                }
                // Nothing above platinum, nothing below underperform.
                assert_ne!(pr.tier, to);
            }
        }
        let rate = |k| f64::from(moves.get(k).copied().unwrap_or(0)) / f64::from(gold);
        assert!((rate("up") - 0.40).abs() < 0.02, "up {}", rate("up"));
        assert!((rate("down") - 0.15).abs() < 0.02, "down {}", rate("down"));
        // Too short a window to have a middle third: no move.
        let short = window(date(2024, 1, 1), 2);
        assert!(roster(&short).iter().all(|p| p.tier_history.len() == 1));
    }

    /// Weights 1 and 3: the second item comes out 75% of the time (100 000 draws, se
    /// 0.0014, tol 0.007).
    #[test]
    fn pick_draws_in_proportion_to_the_weights() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let n = 100_000;
        let b = (0..n)
            .filter(|_| pick(&mut rng, &[('a', 1.0), ('b', 3.0)]) == 'b')
            .count();
        assert!((b as f64 / n as f64 - 0.75).abs() < 0.007);
        assert!((0..100).all(|_| pick(&mut rng, &[('a', 0.0), ('b', 1.0)]) == 'b'));
    }

    #[test]
    fn raw_names_are_the_catalogue_spellings() {
        assert_eq!(
            raw_gpu_name("h100-sxm-80gb", Naming::Canonical),
            "h100-sxm-80gb"
        );
        assert_eq!(
            raw_gpu_name("h100-sxm-80gb", Naming::Marketing),
            "NVIDIA H100 80GB HBM3"
        );
        assert_eq!(
            raw_gpu_name("a100-sxm-80gb", Naming::Underscore),
            "A100_80GB SXM4"
        );
        assert_eq!(
            raw_gpu_name("mi300x-192gb", Naming::Marketing),
            "AMD Instinct MI300X"
        );
        // A GPU without spellings of its own is written by its id.
        assert_eq!(raw_gpu_name("l40s-48gb", Naming::Marketing), "l40s-48gb");
        // Every default GPU's raw names resolve to it in the bundled alias table.
        let catalog = rentix_core::GpuCatalog::bundled();
        for g in SimParams::default_params().gpu {
            for n in [Naming::Canonical, Naming::Marketing, Naming::Underscore] {
                let raw = raw_gpu_name(&g.id, n);
                let resolved = catalog.resolve(&raw).map(|s| s.id.as_str().to_string());
                assert_eq!(resolved.ok(), Some(g.id.clone()), "{raw}");
            }
        }
    }
}
