//! Observations of one day: listings (stale, above the market), firm offers (close
//! to it), trades (around it, with volume), and the noise of a real feed.

use crate::market::Market;
use crate::params::SimParams;
use crate::providers::{raw_gpu_name, Provider, ProviderKind, Quote};
use crate::rng::{stream, tag, unit};
use chrono::{Days, NaiveDate};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal, Poisson};
use rentix_core::{hours_in_month, ContractTerm, FxTable, ServiceScope};

/// Columns of `observations.csv`: the canonical layout, in the order of each row's
/// fields below.
pub(crate) const HEADER: [&str; 18] = rentix_core::CANONICAL_COLUMNS;

/// Shared, read-only inputs of the per-day generator.
pub(crate) struct Context<'a> {
    pub params: &'a SimParams,
    pub market: &'a Market,
    pub providers: &'a [Provider],
    pub fx: &'a FxTable,
    /// Multiplier of every arrival rate (1 = natural activity).
    pub activity: f64,
}

/// CSV lines of one day: in-order rows, and late rows to append at the end.
#[derive(Debug, Default)]
pub(crate) struct DayRows {
    pub rows: Vec<[String; 18]>,
    pub late: Vec<[String; 18]>,
}

struct Quoted {
    price: String,
    unit: &'static str,
    gpus_per_unit: String,
    currency: &'static str,
    upfront: String,
}

fn poisson(rng: &mut ChaCha8Rng, lambda: f64) -> u64 {
    if lambda <= 0.0 {
        return 0;
    }
    Poisson::new(lambda)
        .map(|d| d.sample(rng) as u64)
        .unwrap_or(0)
}

fn scope_weight(s: ServiceScope) -> f64 {
    match s {
        ServiceScope::BareMetal => 1.0,
        ServiceScope::Vm => 0.6,
        ServiceScope::Container => 1.0,
        ServiceScope::ManagedCluster => 0.4,
    }
}

fn term_weight(t: ContractTerm) -> f64 {
    match t {
        ContractTerm::OnDemand => 1.0,
        ContractTerm::Spot => 0.6,
        ContractTerm::Month1 => 0.6,
        ContractTerm::Month3 => 0.5,
        ContractTerm::Month6 => 0.3,
        ContractTerm::Year1 => 0.4,
        _ => 0.15,
    }
}

impl Context<'_> {
    fn date(&self, day: u32) -> NaiveDate {
        self.params.start + Days::new(u64::from(day))
    }

    fn premium(map: &std::collections::BTreeMap<String, f64>, key: &str) -> f64 {
        map.get(key).copied().unwrap_or(1.0)
    }

    /// The listing price a provider shows on `day`: the market at the last day it
    /// repriced, marked up. Stale by construction.
    fn listing_usd(
        &self,
        p: &Provider,
        pi: usize,
        oi: usize,
        day: u32,
        region: &str,
    ) -> Option<f64> {
        let o = &p.offers[oi];
        let mut r = day;
        let mut steps = 0;
        while r > 0 && self.market.launched(o.gpu, r - 1) && steps < 400 {
            if unit(
                self.params.seed,
                &[tag("reprice"), pi as u64, oi as u64, u64::from(r)],
            ) < p.reprice_prob
            {
                break;
            }
            r -= 1;
            steps += 1;
        }
        let fair = self.market.fair(o.gpu, o.scope, o.term, r)?;
        Some(
            fair * Self::premium(&self.params.tier_premium, p.tier_on(r).as_str())
                * Self::premium(&self.params.region_premium, region)
                * (1.0 + p.listing_premium),
        )
    }

    fn quote(
        &self,
        p: &Provider,
        usd: f64,
        term: ContractTerm,
        date: NaiveDate,
        with_upfront: bool,
    ) -> Quoted {
        let fx = if p.currency == "USD" {
            1.0
        } else {
            self.fx.usd_per_unit(p.currency, date).unwrap_or(1.0)
        };
        let local = usd / fx;
        let (hourly, upfront_per_gpu) = match term.hours() {
            Some(h) if with_upfront => (local * 0.7, local * 0.3 * h),
            _ => (local, 0.0),
        };
        let (price, unit, gpus, up) = match p.quote {
            Quote::Node8Hour => (
                hourly * 8.0,
                if p.kind == ProviderKind::Hyperscaler {
                    "instance_hour"
                } else {
                    "node_hour"
                },
                "8".to_string(),
                upfront_per_gpu * 8.0,
            ),
            Quote::GpuMonthReserved if term.is_reserved() => (
                hourly * hours_in_month(date),
                "gpu_month",
                String::new(),
                upfront_per_gpu,
            ),
            _ => (hourly, "gpu_hour", String::new(), upfront_per_gpu),
        };
        Quoted {
            price: format!("{price:.4}"),
            unit,
            gpus_per_unit: gpus,
            currency: p.currency,
            upfront: if up > 0.0 {
                format!("{up:.2}")
            } else {
                String::new()
            },
        }
    }

    /// Generates every observation of `day`.
    #[allow(
        clippy::too_many_lines,
        reason = "not split yet (issue 26 lists it); new functions stay under 100 lines"
    )]
    pub(crate) fn day(&self, day: u32) -> DayRows {
        let seed = self.params.seed;
        let date = self.date(day);
        let noise = &self.params.noise;
        let mut out = DayRows::default();
        let mut rng = stream(seed, &[tag("day"), u64::from(day)]);
        let lognorm: Normal<f64> = centred_normal(1.0);
        for (pi, p) in self.providers.iter().enumerate() {
            if rng.gen::<f64>() > p.reliability {
                continue;
            }
            let tier_m = Self::premium(&self.params.tier_premium, p.tier_on(day).as_str());
            let (sightings, firm_rate, trade_rate) = match p.kind {
                ProviderKind::Hyperscaler => (0.5, 0.0, 0.0),
                ProviderKind::Neocloud => (1.0, 0.5, 1.2),
                ProviderKind::Marketplace => (2.0, 0.0, 1.5),
                ProviderKind::Broker => (0.0, 0.6, 0.8),
            };
            for (oi, o) in p.offers.iter().enumerate() {
                let Some(fair) = self.market.fair(o.gpu, o.scope, o.term, day) else {
                    continue;
                };
                let gpu_id = &self.params.gpu[o.gpu].id;
                let benchmark =
                    o.scope == ServiceScope::BareMetal && o.term == ContractTerm::OnDemand;
                let liquidity = self.params.gpu[o.gpu].liquidity
                    * if benchmark {
                        self.params.market.benchmark_activity
                    } else {
                        1.0
                    };
                let gpu_raw = raw_gpu_name(gpu_id, p.naming);
                let listing_region = p.regions[(rentix_hash(pi, oi) as usize) % p.regions.len()];
                let interconnect = match o.scope {
                    ServiceScope::BareMetal | ServiceScope::ManagedCluster => "infiniband",
                    ServiceScope::Vm => "ethernet",
                    ServiceScope::Container => "",
                };
                let base_row = |obs_id: String,
                                kind: &str,
                                secs: u32,
                                region: &str,
                                q: &Quoted,
                                qty: String,
                                cluster: String|
                 -> [String; 18] {
                    [
                        obs_id,
                        kind.to_string(),
                        format!(
                            "{date}T{:02}:{:02}:{:02}Z",
                            secs / 3600,
                            (secs / 60) % 60,
                            secs % 60
                        ),
                        p.name.clone(),
                        gpu_raw.clone(),
                        o.scope.to_string(),
                        o.term.to_string(),
                        q.price.clone(),
                        q.unit.to_string(),
                        q.currency.to_string(),
                        qty,
                        q.gpus_per_unit.clone(),
                        region.to_string(),
                        interconnect.to_string(),
                        cluster,
                        p.tier_on(day).to_string(),
                        q.upfront.clone(),
                        String::new(),
                    ]
                };

                // Listings: the same posted price, seen zero or more times today.
                let n_list = poisson(&mut rng, sightings * self.activity);
                if let Some(c) = self.params.cadence_minutes {
                    // Read at every stamp instead (the draw above is kept, so the
                    // rest of the day is the daily market's): the posted price
                    // drifts within the day, and 3% of reads miss.
                    if let Some(usd) = self.listing_usd(p, pi, oi, day, listing_region) {
                        let mut r = stream(
                            seed,
                            &[tag("intraday"), u64::from(day), pi as u64, oi as u64],
                        );
                        let step: Normal<f64> = centred_normal(0.004);
                        let mut x = 0.0f64;
                        for s in 0..(1440 / c) {
                            x = 0.9 * x + step.sample(&mut r);
                            if r.gen::<f64>() < 0.03 {
                                continue;
                            }
                            let q = self.quote(p, usd * x.exp(), o.term, date, false);
                            let secs = s * c * 60 + r.gen_range(0..c * 60);
                            // A read of the page has an id of its own: a listing
                            // without one is deduplicated by its content per day,
                            // and an unchanged price at two stamps is two reads.
                            let row = base_row(
                                format!("L-{}-{day}-{oi}-{s}", p.code),
                                "listing",
                                secs,
                                listing_region,
                                &q,
                                String::new(),
                                String::new(),
                            );
                            out.rows.push(row);
                        }
                    }
                } else if n_list > 0 {
                    if let Some(usd) = self.listing_usd(p, pi, oi, day, listing_region) {
                        let q = self.quote(p, usd, o.term, date, false);
                        for _ in 0..n_list {
                            let secs = rng.gen_range(0..86_400);
                            let row = base_row(
                                String::new(),
                                "listing",
                                secs,
                                listing_region,
                                &q,
                                String::new(),
                                String::new(),
                            );
                            self.emit(&mut out, &mut rng, row, false);
                        }
                    }
                }

                // Firm offers: executable, close to the market.
                let n_firm = poisson(&mut rng, firm_rate * liquidity * self.activity);
                for k in 0..n_firm {
                    let region = p.regions[rng.gen_range(0..p.regions.len())];
                    let usd = fair
                        * tier_m
                        * Self::premium(&self.params.region_premium, region)
                        * (0.01 + 0.015 * lognorm.sample(&mut rng)).exp();
                    let q = self.quote(p, usd, o.term, date, false);
                    let cluster = [8u32, 16, 32, 64][rng.gen_range(0..4)];
                    let qty = if rng.gen::<f64>() < 0.5 {
                        format!("{}", cluster * 24 * rng.gen_range(1..31))
                    } else {
                        String::new()
                    };
                    let secs = rng.gen_range(0..86_400);
                    let id = format!("F-{}-{day}-{oi}-{k}", p.code);
                    let row = base_row(id, "firm", secs, region, &q, qty, cluster.to_string());
                    self.emit(&mut out, &mut rng, row, false);
                }

                // Trades: around the fair price, with volume.
                let lambda = trade_rate
                    * liquidity
                    * scope_weight(o.scope)
                    * term_weight(o.term)
                    * self.activity;
                let n_trade = poisson(&mut rng, lambda);
                for k in 0..n_trade {
                    let region = p.regions[rng.gen_range(0..p.regions.len())];
                    let usd = fair
                        * tier_m.sqrt()
                        * Self::premium(&self.params.region_premium, region)
                        * (self.params.market.trade_dispersion * lognorm.sample(&mut rng)).exp();
                    let with_upfront = p.kind == ProviderKind::Broker
                        && o.term >= ContractTerm::Year1
                        && rng.gen::<f64>() < 0.3;
                    let q = self.quote(p, usd, o.term, date, with_upfront);
                    let (gpus, hours) = match p.kind {
                        ProviderKind::Marketplace => {
                            (rng.gen_range(1..=8u32), rng.gen_range(1..=72u32))
                        }
                        _ => {
                            let g = [8u32, 16, 32, 64, 128][rng.gen_range(0..5)];
                            let h = match o.term.hours() {
                                Some(h) => h.min(730.0) as u32,
                                None => rng.gen_range(24..=720),
                            };
                            (g, h)
                        }
                    };
                    let secs = rng.gen_range(0..86_400);
                    let id = format!("T-{}-{day}-{oi}-{k}", p.code);
                    let row = base_row(
                        id,
                        "trade",
                        secs,
                        region,
                        &q,
                        format!("{}", gpus * hours),
                        gpus.to_string(),
                    );
                    let late = day > 3 && rng.gen::<f64>() < noise.late_share;
                    self.emit(&mut out, &mut rng, row, late);
                }
            }
        }
        out
    }

    /// Pushes a row, sometimes corrupted, duplicated, or held back as late.
    fn emit(&self, out: &mut DayRows, rng: &mut ChaCha8Rng, mut row: [String; 18], late: bool) {
        let noise = &self.params.noise;
        if rng.gen::<f64>() < noise.bad_row_share {
            match rng.gen_range(0..7) {
                0 => row[7] = "NaN".into(),
                1 => row[7] = format!("-{}", row[7]),
                2 => row[4] = "H100X-TURBO".into(),
                3 => row[2] = "31/12/2024".into(),
                4 => {
                    row[1] = "trade".into();
                    row[10] = String::new();
                }
                5 => row[9] = "XYZ".into(),
                _ => row[8] = "gpu_minute".into(),
            }
        }
        let dup = !row[0].is_empty() && rng.gen::<f64>() < noise.duplicate_share;
        let target = if late { &mut out.late } else { &mut out.rows };
        if dup {
            target.push(row.clone());
        }
        target.push(row);
    }
}

fn rentix_hash(a: usize, b: usize) -> u64 {
    crate::rng::hash(a as u64, &[b as u64])
}

/// A normal distribution of mean 0 and standard deviation `sd`, a positive
/// constant of this file (a non-positive one is a programming error).
#[allow(clippy::expect_used, reason = "called with positive constants only")]
fn centred_normal(sd: f64) -> Normal<f64> {
    Normal::new(0.0, sd).expect("a positive standard deviation")
}
