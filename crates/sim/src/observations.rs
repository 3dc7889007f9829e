//! Observations of one day: listings (stale, above the market), firm offers (close
//! to it), trades (around it, with volume), and the noise of a real feed.

use crate::market::Market;
use crate::params::SimParams;
use crate::providers::{raw_gpu_name, Offer, Provider, ProviderKind, Quote};
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
    /// Of `rows`, the listing reads at every stamp of `cadence_minutes`: a fixed
    /// schedule, not arrivals, so the activity does not scale them.
    pub scheduled: usize,
}

struct Quoted {
    price: String,
    unit: &'static str,
    gpus_per_unit: String,
    currency: &'static str,
    upfront: String,
}

/// Expected sightings, firm offers and trades a day of one offer of a provider,
/// before its GPU's liquidity and the activity multiplier.
#[derive(Debug, Clone, Copy)]
struct ArrivalRates {
    sightings: f64,
    firm: f64,
    trade: f64,
}

impl ArrivalRates {
    /// The rates of a provider of `kind`.
    fn of(kind: ProviderKind) -> Self {
        let (sightings, firm, trade) = match kind {
            ProviderKind::Hyperscaler => (0.5, 0.0, 0.0),
            ProviderKind::Neocloud => (1.0, 0.5, 1.2),
            ProviderKind::Marketplace => (2.0, 0.0, 1.5),
            ProviderKind::Broker => (0.0, 0.6, 0.8),
        };
        ArrivalRates {
            sightings,
            firm,
            trade,
        }
    }
}

/// One offer of one provider on one day: what every row drawn for it shares.
struct OfferDay<'p> {
    p: &'p Provider,
    /// The provider's roster position.
    pi: usize,
    o: &'p Offer,
    /// The offer's position in the provider's offers.
    oi: usize,
    day: u32,
    date: NaiveDate,
    /// The market's fair price of the offer's grade, USD per GPU-hour.
    fair: f64,
    /// The provider's tier premium on the day.
    tier_m: f64,
    /// The GPU's liquidity, times the benchmark activity for bare-metal on-demand.
    liquidity: f64,
    /// The provider's raw name of the GPU.
    gpu_raw: String,
    /// The region its listings are posted in.
    listing_region: &'static str,
    /// `infiniband`, `ethernet` or empty, by scope.
    interconnect: &'static str,
}

/// The fields of a row that differ between the rows of one offer on one day.
struct RowFields<'q> {
    id: String,
    kind: &'static str,
    /// Seconds after midnight UTC.
    secs: u32,
    region: &'static str,
    quoted: &'q Quoted,
    quantity: String,
    cluster: String,
}

impl OfferDay<'_> {
    /// A row in the canonical layout ([`HEADER`]).
    fn row(&self, f: RowFields<'_>) -> [String; 18] {
        let (p, o, q, secs) = (self.p, self.o, f.quoted, f.secs);
        [
            f.id,
            f.kind.to_string(),
            format!(
                "{}T{:02}:{:02}:{:02}Z",
                self.date,
                secs / 3600,
                (secs / 60) % 60,
                secs % 60
            ),
            p.name.clone(),
            self.gpu_raw.clone(),
            o.scope.to_string(),
            o.term.to_string(),
            q.price.clone(),
            q.unit.to_string(),
            q.currency.to_string(),
            f.quantity,
            q.gpus_per_unit.clone(),
            f.region.to_string(),
            self.interconnect.to_string(),
            f.cluster,
            p.tier_on(self.day).to_string(),
            q.upfront.clone(),
            String::new(),
        ]
    }
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
    pub(crate) fn day(&self, day: u32) -> DayRows {
        let mut out = DayRows::default();
        let mut rng = stream(self.params.seed, &[tag("day"), u64::from(day)]);
        for (pi, p) in self.providers.iter().enumerate() {
            if rng.gen::<f64>() > p.reliability {
                continue;
            }
            let rates = ArrivalRates::of(p.kind);
            for oi in 0..p.offers.len() {
                let Some(od) = self.offer_day(p, pi, oi, day) else {
                    continue;
                };
                self.listings(&mut out, &mut rng, &od, rates.sightings);
                self.firm_offers(&mut out, &mut rng, &od, rates.firm);
                self.trades(&mut out, &mut rng, &od, rates.trade);
            }
        }
        out
    }

    /// What every row of offer `oi` of provider `pi` shares on `day`; `None` when
    /// its GPU is not on the market that day.
    fn offer_day<'p>(
        &self,
        p: &'p Provider,
        pi: usize,
        oi: usize,
        day: u32,
    ) -> Option<OfferDay<'p>> {
        let o = &p.offers[oi];
        let fair = self.market.fair(o.gpu, o.scope, o.term, day)?;
        let gpu = &self.params.gpu[o.gpu];
        let benchmark = o.scope == ServiceScope::BareMetal && o.term == ContractTerm::OnDemand;
        let liquidity = gpu.liquidity
            * if benchmark {
                self.params.market.benchmark_activity
            } else {
                1.0
            };
        Some(OfferDay {
            p,
            pi,
            o,
            oi,
            day,
            date: self.date(day),
            fair,
            tier_m: Self::premium(&self.params.tier_premium, p.tier_on(day).as_str()),
            liquidity,
            gpu_raw: raw_gpu_name(&gpu.id, p.naming),
            listing_region: p.regions[(rentix_hash(pi, oi) as usize) % p.regions.len()],
            interconnect: match o.scope {
                ServiceScope::BareMetal | ServiceScope::ManagedCluster => "infiniband",
                ServiceScope::Vm => "ethernet",
                ServiceScope::Container => "",
            },
        })
    }

    /// Listings: the same posted price, seen a Poisson number of times today, or read
    /// at every stamp of the cadence when there is one.
    fn listings(&self, out: &mut DayRows, rng: &mut ChaCha8Rng, od: &OfferDay<'_>, rate: f64) {
        let n_list = poisson(rng, rate * self.activity);
        if let Some(c) = self.params.cadence_minutes {
            // Read at every stamp instead (the draw above is kept, so the rest of
            // the day is the daily market's).
            self.listing_reads(out, od, c);
        } else if n_list > 0 {
            let (p, day) = (od.p, od.day);
            if let Some(usd) = self.listing_usd(p, od.pi, od.oi, day, od.listing_region) {
                let q = self.quote(p, usd, od.o.term, od.date, false);
                for _ in 0..n_list {
                    let secs = rng.gen_range(0..86_400);
                    let row = od.row(RowFields {
                        id: String::new(),
                        kind: "listing",
                        secs,
                        region: od.listing_region,
                        quoted: &q,
                        quantity: String::new(),
                        cluster: String::new(),
                    });
                    self.emit(out, rng, row, false);
                }
            }
        }
    }

    /// Listing reads at every stamp of a `c`-minute cadence, from a stream of their
    /// own: the posted price drifts within the day, and 3% of reads miss.
    fn listing_reads(&self, out: &mut DayRows, od: &OfferDay<'_>, c: u32) {
        let (p, day, oi) = (od.p, od.day, od.oi);
        let Some(usd) = self.listing_usd(p, od.pi, oi, day, od.listing_region) else {
            return;
        };
        let mut r = stream(
            self.params.seed,
            &[tag("intraday"), u64::from(day), od.pi as u64, oi as u64],
        );
        let step: Normal<f64> = centred_normal(0.004);
        let mut x = 0.0f64;
        for s in 0..(1440 / c) {
            x = 0.9 * x + step.sample(&mut r);
            if r.gen::<f64>() < 0.03 {
                continue;
            }
            let q = self.quote(p, usd * x.exp(), od.o.term, od.date, false);
            let secs = s * c * 60 + r.gen_range(0..c * 60);
            // A read of the page has an id of its own: a listing without one is
            // deduplicated by its content per day, and an unchanged price at two
            // stamps is two reads.
            let row = od.row(RowFields {
                id: format!("L-{}-{day}-{oi}-{s}", p.code),
                kind: "listing",
                secs,
                region: od.listing_region,
                quoted: &q,
                quantity: String::new(),
                cluster: String::new(),
            });
            out.rows.push(row);
            out.scheduled += 1;
        }
    }

    /// Firm offers: executable, close to the market, a Poisson number of them.
    fn firm_offers(&self, out: &mut DayRows, rng: &mut ChaCha8Rng, od: &OfferDay<'_>, rate: f64) {
        let p = od.p;
        let lognorm: Normal<f64> = centred_normal(1.0);
        let n_firm = poisson(rng, rate * od.liquidity * self.activity);
        for k in 0..n_firm {
            let region = p.regions[rng.gen_range(0..p.regions.len())];
            let usd = od.fair
                * od.tier_m
                * Self::premium(&self.params.region_premium, region)
                * (0.01 + 0.015 * lognorm.sample(rng)).exp();
            let q = self.quote(p, usd, od.o.term, od.date, false);
            let cluster = [8u32, 16, 32, 64][rng.gen_range(0..4)];
            let quantity = if rng.gen::<f64>() < 0.5 {
                format!("{}", cluster * 24 * rng.gen_range(1..31))
            } else {
                String::new()
            };
            let secs = rng.gen_range(0..86_400);
            let row = od.row(RowFields {
                id: format!("F-{}-{}-{}-{k}", p.code, od.day, od.oi),
                kind: "firm",
                secs,
                region,
                quoted: &q,
                quantity,
                cluster: cluster.to_string(),
            });
            self.emit(out, rng, row, false);
        }
    }

    /// Trades: around the fair price, with volume, a Poisson number of them; some
    /// reported late.
    fn trades(&self, out: &mut DayRows, rng: &mut ChaCha8Rng, od: &OfferDay<'_>, rate: f64) {
        let (p, o) = (od.p, od.o);
        let lognorm: Normal<f64> = centred_normal(1.0);
        let lambda =
            rate * od.liquidity * scope_weight(o.scope) * term_weight(o.term) * self.activity;
        let n_trade = poisson(rng, lambda);
        for k in 0..n_trade {
            let region = p.regions[rng.gen_range(0..p.regions.len())];
            let usd = od.fair
                * od.tier_m.sqrt()
                * Self::premium(&self.params.region_premium, region)
                * (self.params.market.trade_dispersion * lognorm.sample(rng)).exp();
            let with_upfront = p.kind == ProviderKind::Broker
                && o.term >= ContractTerm::Year1
                && rng.gen::<f64>() < 0.3;
            let q = self.quote(p, usd, o.term, od.date, with_upfront);
            let (gpus, hours) = match p.kind {
                ProviderKind::Marketplace => (rng.gen_range(1..=8u32), rng.gen_range(1..=72u32)),
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
            let row = od.row(RowFields {
                id: format!("T-{}-{}-{}-{k}", p.code, od.day, od.oi),
                kind: "trade",
                secs,
                region,
                quoted: &q,
                quantity: format!("{}", gpus * hours),
                cluster: gpus.to_string(),
            });
            let late = od.day > 3 && rng.gen::<f64>() < self.params.noise.late_share;
            self.emit(out, rng, row, late);
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::roster;
    use crate::testing::{date, window};
    use std::collections::{BTreeMap, BTreeSet};

    /// Rows, each with its simulation day.
    type Rows = Vec<(u32, [String; 18])>;

    /// A market, its roster and the bundled FX table, from which days are drawn.
    struct Setup {
        p: SimParams,
        market: Market,
        providers: Vec<Provider>,
        fx: FxTable,
    }

    impl Setup {
        fn new(p: SimParams) -> Self {
            Setup {
                market: Market::build(&p),
                providers: roster(&p),
                fx: FxTable::bundled(),
                p,
            }
        }

        fn ctx(&self, activity: f64) -> Context<'_> {
            Context {
                params: &self.p,
                market: &self.market,
                providers: &self.providers,
                fx: &self.fx,
                activity,
            }
        }

        /// Every day's in-order and late rows, each with its day.
        fn days(&self, activity: f64) -> (Rows, Rows) {
            let ctx = self.ctx(activity);
            let (mut rows, mut late) = (Vec::new(), Vec::new());
            for d in 0..self.p.days {
                let r = ctx.day(d);
                rows.extend(r.rows.into_iter().map(|x| (d, x)));
                late.extend(r.late.into_iter().map(|x| (d, x)));
            }
            (rows, late)
        }

        fn provider(&self, row: &[String; 18]) -> (usize, &Provider) {
            let i = self
                .providers
                .iter()
                .position(|p| p.name == row[3])
                .unwrap();
            (i, &self.providers[i])
        }

        /// The simulated GPU a provider's raw name stands for.
        fn gpu(&self, pr: &Provider, raw: &str) -> Option<usize> {
            (0..self.p.gpu.len()).find(|g| raw_gpu_name(&self.p.gpu[*g].id, pr.naming) == raw)
        }

        /// The USD per GPU-hour a clean row quotes (before any upfront part), and the
        /// relative error of its price's 4-decimal rounding.
        fn usd(&self, row: &[String; 18], day: NaiveDate) -> (f64, f64) {
            let price: f64 = row[7].parse().unwrap();
            let per_gpu_hour = match row[8].as_str() {
                "gpu_hour" => price,
                "node_hour" | "instance_hour" => price / 8.0,
                "gpu_month" => price / hours_in_month(day),
                u => panic!("unit {u}"),
            };
            let local = if row[16].is_empty() {
                per_gpu_hour
            } else {
                per_gpu_hour / 0.7
            };
            let fx = self.fx.usd_per_unit(&row[9], day).unwrap();
            (local * fx, 0.5e-4 / price)
        }
    }

    /// The default market without feed noise, over `days` from 2024-05-20 (the H200
    /// launches on day 12, 2024-06-01).
    fn clean(days: u32) -> SimParams {
        let mut p = window(date(2024, 5, 20), days);
        p.noise = crate::params::NoiseParams {
            duplicate_share: 0.0,
            bad_row_share: 0.0,
            late_share: 0.0,
        };
        p
    }

    fn time(row: &[String; 18]) -> Option<chrono::NaiveDateTime> {
        chrono::NaiveDateTime::parse_from_str(&row[2], "%Y-%m-%dT%H:%M:%SZ").ok()
    }

    /// The ways `emit` corrupts a row, found in `row`: a clean row has none.
    fn defects(s: &Setup, row: &[String; 18]) -> Vec<&'static str> {
        let mut out = Vec::new();
        if row[7] == "NaN" {
            out.push("nan price");
        }
        if row[7].starts_with('-') {
            out.push("negative price");
        }
        let (_, pr) = s.provider(row);
        if s.gpu(pr, &row[4]).is_none() {
            out.push("unknown gpu");
        }
        if time(row).is_none() {
            out.push("bad date");
        }
        if row[1] == "trade" && row[10].is_empty() {
            out.push("trade without quantity");
        }
        if row[9] != "USD" && row[9] != "EUR" {
            out.push("unknown currency");
        }
        if !["gpu_hour", "node_hour", "instance_hour", "gpu_month"].contains(&row[8].as_str()) {
            out.push("unknown unit");
        }
        out
    }

    /// Every row of a noiseless feed is well formed and consistent with the provider
    /// that published it: an offer it has, a launched GPU, its tier that day, one of
    /// its regions, its currency and unit, the kind's id and quantity rules.
    #[test]
    fn a_clean_feed_is_well_formed_and_consistent_with_its_providers() {
        let s = Setup::new(clean(20));
        let (rows, late) = s.days(1.0);
        assert!(late.is_empty());
        assert!(rows.len() > 5_000, "{}", rows.len());
        let mut kinds = BTreeSet::new();
        for (day, row) in &rows {
            let on = s.market.date(*day);
            assert_eq!(defects(&s, row), Vec::<&str>::new(), "{row:?}");
            assert_eq!(time(row).unwrap().date(), on);
            let (_, pr) = s.provider(row);
            let g = s.gpu(pr, &row[4]).unwrap();
            assert!(s.market.launched(g, *day), "{row:?}");
            let scope: ServiceScope = row[5].parse().unwrap();
            let term: ContractTerm = row[6].parse().unwrap();
            assert!(pr
                .offers
                .iter()
                .any(|o| o.gpu == g && o.scope == scope && o.term == term));
            let price: f64 = row[7].parse().unwrap();
            assert!(price.is_finite() && price > 0.0, "{row:?}");
            assert_eq!(row[9], pr.currency);
            let unit = match pr.quote {
                Quote::Node8Hour if pr.kind == ProviderKind::Hyperscaler => "instance_hour",
                Quote::Node8Hour => "node_hour",
                Quote::GpuMonthReserved if term.is_reserved() => "gpu_month",
                _ => "gpu_hour",
            };
            assert_eq!(row[8], unit);
            assert_eq!(
                row[11],
                if pr.quote == Quote::Node8Hour {
                    "8"
                } else {
                    ""
                }
            );
            assert!(pr.regions.contains(&row[12].as_str()));
            let interconnect = match scope {
                ServiceScope::BareMetal | ServiceScope::ManagedCluster => "infiniband",
                ServiceScope::Vm => "ethernet",
                ServiceScope::Container => "",
            };
            assert_eq!(row[13], interconnect);
            assert_eq!(row[15], pr.tier_on(*day).as_str());
            assert_eq!(row[17], "");
            let prefix = |k: &str| format!("{k}-{}-{day}-", pr.code);
            match row[1].as_str() {
                "listing" => assert_eq!([&row[0], &row[10], &row[14]], ["", "", ""]),
                "firm" => assert!(row[0].starts_with(&prefix("F")), "{row:?}"),
                "trade" => {
                    assert!(row[0].starts_with(&prefix("T")), "{row:?}");
                    assert!(row[10].parse::<u32>().unwrap() > 0);
                    assert!(row[14].parse::<u32>().unwrap() > 0);
                }
                k => panic!("kind {k}"),
            }
            if !row[16].is_empty() {
                assert!(
                    row[1] == "trade"
                        && pr.kind == ProviderKind::Broker
                        && term >= ContractTerm::Year1
                );
            }
            kinds.insert(row[1].clone());
        }
        assert_eq!(kinds.len(), 3);
        // A day is a function of the seed and its number alone.
        let ctx = s.ctx(1.0);
        assert_eq!(ctx.day(7).rows, ctx.day(7).rows);
        assert_ne!(ctx.day(7).rows, ctx.day(8).rows);
    }

    /// With no trade dispersion a trade is priced at the fair price times the square
    /// root of its provider's tier premium and its region's premium, whatever unit and
    /// currency it is quoted in (to the rounding of its 4-decimal price); a broker's
    /// upfront part is 30% of the term's cost. Firm offers sit at the fair price times
    /// the full tier and region premia times `exp(0.01 + 0.015 N)`: the log ratio has
    /// mean 0.01 and sd 0.015.
    #[test]
    fn trades_and_firm_offers_are_priced_from_the_fair_price() {
        let mut p = clean(20);
        p.market.trade_dispersion = 0.0;
        let s = Setup::new(p);
        let (rows, _) = s.days(1.0);
        let (mut trades, mut upfronts, mut firm) = (0, 0, Vec::new());
        for (day, row) in &rows {
            if row[1] == "listing" {
                continue;
            }
            let on = s.market.date(*day);
            let (_, pr) = s.provider(row);
            let g = s.gpu(pr, &row[4]).unwrap();
            let term: ContractTerm = row[6].parse().unwrap();
            let fair = s
                .market
                .fair(g, row[5].parse().unwrap(), term, *day)
                .unwrap();
            let tier = s.p.tier_premium[row[15].as_str()];
            let region = s.p.region_premium[row[12].as_str()];
            let (usd, rounding) = s.usd(row, on);
            if row[1] == "firm" {
                firm.push((usd / (fair * tier * region)).ln());
                continue;
            }
            let expected = fair * tier.sqrt() * region;
            assert!(
                (usd / expected - 1.0).abs() <= rounding + 1e-12,
                "{row:?}: {usd} vs {expected}"
            );
            trades += 1;
            if !row[16].is_empty() {
                // Per GPU (or per node of 8): 30% of the local hourly price times the hours.
                let local = usd / s.fx.usd_per_unit(&row[9], on).unwrap();
                let per = if row[11] == "8" { 8.0 } else { 1.0 };
                let up = local * 0.3 * term.hours().unwrap() * per;
                let got: f64 = row[16].parse().unwrap();
                assert!((got - up).abs() <= 0.005 + up * rounding, "{row:?}: {up}");
                upfronts += 1;
            }
        }
        assert!(
            trades > 1_000 && upfronts > 0,
            "{trades} trades, {upfronts} upfronts"
        );
        let n = firm.len() as f64;
        let mean = firm.iter().sum::<f64>() / n;
        let sd = (firm.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
        // About 6 000 offers: se of the mean 0.015 / sqrt(n) < 0.0003.
        assert!(n > 3_000.0, "{n} firm offers");
        assert!((mean - 0.01).abs() < 0.002, "mean {mean}");
        assert!((sd / 0.015 - 1.0).abs() < 0.1, "sd {sd}");
    }

    /// A provider that reprices every day lists the market of the day; one that never
    /// reprices lists the market of the first day it could (the window's first day,
    /// or a GPU's launch within it). Both marked up by tier, region and its premium.
    #[test]
    fn a_listing_shows_the_market_of_its_last_repricing() {
        for (prob, anchored) in [(1.0, false), (0.0, true)] {
            let mut s = Setup::new(clean(60));
            for pr in &mut s.providers {
                pr.reprice_prob = prob;
            }
            let ctx = s.ctx(1.0);
            for (pi, pr) in s.providers.iter().enumerate() {
                for (oi, o) in pr.offers.iter().enumerate() {
                    let first = (0..60).find(|d| s.market.launched(o.gpu, *d));
                    let Some(first) = first else { continue };
                    for day in [first, first + 5, 59] {
                        let r = if anchored { first } else { day };
                        let fair = s.market.fair(o.gpu, o.scope, o.term, r).unwrap();
                        let expected = fair
                            * s.p.tier_premium[pr.tier_on(r).as_str()]
                            * s.p.region_premium["eu"]
                            * (1.0 + pr.listing_premium);
                        let got = ctx.listing_usd(pr, pi, oi, day, "eu").unwrap();
                        assert!(
                            (got / expected - 1.0).abs() < 1e-12,
                            "{} {oi} day {day}",
                            pr.name
                        );
                    }
                }
            }
        }
    }

    /// The share of days on which a listing changes is the provider's daily repricing
    /// probability: hyperscalers 0.01 (about 14 600 offer-days, se 0.0008, tol 0.004),
    /// neoclouds 0.06, brokers 0.2, marketplaces 0.35 (se <= 0.005, tol 0.025).
    #[test]
    fn listings_are_repriced_at_their_providers_daily_rate() {
        let s = Setup::new(clean(300));
        let ctx = s.ctx(1.0);
        for (kind, rate, tol) in [
            (ProviderKind::Hyperscaler, 0.01, 0.004),
            (ProviderKind::Neocloud, 0.06, 0.01),
            (ProviderKind::Broker, 0.2, 0.025),
            (ProviderKind::Marketplace, 0.35, 0.025),
        ] {
            let (mut days, mut changes) = (0u32, 0u32);
            for (pi, pr) in s
                .providers
                .iter()
                .enumerate()
                .filter(|(_, p)| p.kind == kind)
            {
                for (oi, o) in pr.offers.iter().enumerate() {
                    let mut last = None;
                    for day in 0..300 {
                        if !s.market.launched(o.gpu, day) {
                            continue;
                        }
                        let l = ctx.listing_usd(pr, pi, oi, day, "us");
                        if let (Some(a), Some(b)) = (last, l) {
                            days += 1;
                            changes += u32::from(a != b);
                        }
                        last = l;
                    }
                }
            }
            let share = f64::from(changes) / f64::from(days);
            assert!((share - rate).abs() < tol, "{kind:?}: {share} of {days}");
        }
    }

    /// Every arrival is Poisson with a rate proportional to `activity`: twice the
    /// activity, twice the rows (about 22 000 and 44 000 here, se of the ratio 0.8%,
    /// tolerance 5%); none at 0.
    #[test]
    fn activity_scales_every_arrival_rate() {
        let s = Setup::new(clean(20));
        let one = s.days(1.0).0.len() as f64;
        let two = s.days(2.0).0.len() as f64;
        assert!((two / one - 2.0).abs() < 0.1, "{one} then {two}");
        assert!(s.days(0.0).0.is_empty());
    }

    /// `benchmark_activity` multiplies the firm offers and trades of bare-metal
    /// on-demand grades only: 16 times as many (about 670 at 1: se of the ratio 4%,
    /// tolerance 15%), the other grades' counts unchanged (about 5 400: se 1.9%,
    /// tolerance 8%).
    #[test]
    fn benchmark_grades_trade_benchmark_activity_times_as_often() {
        let count = |bench: f64| {
            let mut p = clean(20);
            p.market.benchmark_activity = bench;
            let s = Setup::new(p);
            let (mut b, mut other) = (0f64, 0f64);
            for (_, row) in s.days(1.0).0 {
                if row[1] == "listing" {
                    continue;
                }
                if row[5] == "bare-metal" && row[6] == "on-demand" {
                    b += 1.0;
                } else {
                    other += 1.0;
                }
            }
            (b, other)
        };
        let (b1, o1) = count(1.0);
        let (b16, o16) = count(16.0);
        assert!((b16 / b1 / 16.0 - 1.0).abs() < 0.15, "{b1} then {b16}");
        assert!((o16 / o1 - 1.0).abs() < 0.08, "{o1} then {o16}");
    }

    /// At a cadence of 60 minutes a provider's page is read at each of the 24 stamps,
    /// 3% of reads missed (about 80 000 reads, se 0.0006, tolerance 0.005): each read
    /// has its own id and falls in its stamp's hour. Intraday listings are never
    /// corrupted, even when every other row is.
    #[test]
    fn intraday_listings_are_read_at_every_stamp() {
        let mut p = clean(10);
        p.cadence_minutes = Some(60);
        p.noise.bad_row_share = 1.0;
        let s = Setup::new(p);
        let (rows, _) = s.days(1.0);
        let mut offer_days: BTreeMap<(String, u32, usize), BTreeSet<u32>> = BTreeMap::new();
        let mut reads = 0u32;
        for (day, row) in &rows {
            let clean = defects(&s, row).is_empty();
            if row[1] != "listing" {
                assert!(!clean, "{row:?}");
                continue;
            }
            assert!(clean, "{row:?}");
            let (_, pr) = s.provider(row);
            let id: Vec<&str> = row[0].split('-').collect();
            assert_eq!(id[..3], ["L", pr.code.as_str(), day.to_string().as_str()]);
            let (oi, stamp): (usize, u32) = (id[3].parse().unwrap(), id[4].parse().unwrap());
            assert!(stamp < 24);
            let t = time(row).unwrap().time();
            assert_eq!(chrono::Timelike::hour(&t), stamp, "{row:?}");
            assert!(offer_days
                .entry((pr.code.clone(), *day, oi))
                .or_default()
                .insert(stamp));
            reads += 1;
        }
        let share = f64::from(reads) / (24.0 * offer_days.len() as f64);
        assert!(
            (share - 0.97).abs() < 0.005,
            "{share} of {} offer-days",
            offer_days.len()
        );
    }

    /// With `bad_row_share` 1 every listing, firm offer and trade is corrupted in
    /// exactly one of the seven documented ways, each about a seventh of the time
    /// (about 22 000 rows, se 0.0024, tolerance 0.015).
    #[test]
    fn bad_rows_are_corrupted_in_one_of_seven_ways() {
        let mut p = clean(20);
        p.noise.bad_row_share = 1.0;
        let s = Setup::new(p);
        let (rows, _) = s.days(1.0);
        let mut by_kind: BTreeMap<&str, u32> = BTreeMap::new();
        for (_, row) in &rows {
            let d = defects(&s, row);
            assert_eq!(d.len(), 1, "{row:?}: {d:?}");
            *by_kind.entry(d[0]).or_default() += 1;
        }
        assert_eq!(by_kind.len(), 7, "{by_kind:?}");
        for (k, n) in &by_kind {
            let share = f64::from(*n) / rows.len() as f64;
            assert!((share - 1.0 / 7.0).abs() < 0.015, "{k}: {share}");
        }
    }

    /// Without duplicates every id is unique; with `duplicate_share` 1 every row with
    /// an id is written twice in a row, verbatim; at 0.1 a tenth of the ids are
    /// doubled (about 16 000 ids, se 0.0024, tol 0.02).
    #[test]
    fn rows_with_an_id_are_duplicated_at_the_configured_share() {
        let ids = |share: f64| {
            let mut p = clean(20);
            p.noise.duplicate_share = share;
            let (rows, _) = Setup::new(p).days(1.0);
            let mut seen: BTreeMap<String, u32> = BTreeMap::new();
            for (_, r) in rows.iter().filter(|(_, r)| !r[0].is_empty()) {
                *seen.entry(r[0].clone()).or_default() += 1;
            }
            (rows, seen)
        };
        let (_, none) = ids(0.0);
        assert!(none.values().all(|n| *n == 1));
        let (rows, all) = ids(1.0);
        assert!(all.values().all(|n| *n == 2));
        for (i, (_, r)) in rows
            .iter()
            .enumerate()
            .filter(|(_, (_, r))| !r[0].is_empty())
        {
            let twin = if i > 0 && rows[i - 1].1 == *r {
                i - 1
            } else {
                i + 1
            };
            assert_eq!(rows[twin].1, *r, "row {i}");
        }
        let (_, tenth) = ids(0.1);
        let doubled = tenth.values().filter(|n| **n == 2).count() as f64 / tenth.len() as f64;
        assert!((doubled - 0.1).abs() < 0.02, "{doubled}");
    }

    /// Late rows are trades of day 4 onwards only, about `late_share` of them (0.2
    /// here; about 8 000 trades, se 0.0044, tolerance 0.03).
    #[test]
    fn late_rows_are_trades_after_day_three() {
        let mut p = clean(20);
        p.noise.late_share = 0.2;
        let (rows, late) = Setup::new(p).days(1.0);
        assert!(late.iter().all(|(d, r)| *d > 3 && r[1] == "trade"));
        let on_time = rows
            .iter()
            .filter(|(d, r)| *d > 3 && r[1] == "trade")
            .count() as f64;
        let share = late.len() as f64 / (late.len() as f64 + on_time);
        assert!((share - 0.2).abs() < 0.03, "{share}");
    }
}
