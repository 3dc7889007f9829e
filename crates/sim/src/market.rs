//! The latent market: each GPU's fair price path and the factors that turn it into
//! the fair price of every grade. This is the truth the observations scatter around.
//!
//! Log price of a GPU's reference grade (bare metal, on-demand, silver operator):
//! `ln p_t = ln trend_t + z_t`, where `trend_t = floor + (launch - floor) e^{-k age_t}`
//! times a successor step-down, and `z_t` is mean-reverting,
//! `z_{t+1} = (1 - kappa) z_t + sigma_t e_t + J_t`, with GARCH(1,1) variance
//! `sigma^2_{t+1} = omega + alpha (sigma_t e_t)^2 + beta sigma^2_t` and rare jumps
//! `J_t` (mostly price cuts).

use crate::params::SimParams;
use crate::rng::{stream, tag};
use chrono::{Days, NaiveDate};
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use rentix_core::{ContractTerm, ServiceScope};

/// Terms the simulated market trades.
pub(crate) const TERMS: [ContractTerm; 7] = [
    ContractTerm::Spot,
    ContractTerm::OnDemand,
    ContractTerm::Month1,
    ContractTerm::Month3,
    ContractTerm::Month6,
    ContractTerm::Year1,
    ContractTerm::Year3,
];

/// The latent paths, one value per GPU per day (`None` before launch).
#[derive(Debug, Clone)]
pub struct Market {
    /// Simulation day 0.
    pub start: NaiveDate,
    /// Number of simulated days.
    pub days: u32,
    /// Reference fair price per GPU per day.
    base: Vec<Vec<Option<f64>>>,
    /// Spot / on-demand ratio per GPU per day.
    spot: Vec<Vec<f64>>,
    /// Term-structure slope per day.
    slope: Vec<f64>,
    scope_premium: [f64; 4],
}

fn scope_index(s: ServiceScope) -> usize {
    match s {
        ServiceScope::BareMetal => 0,
        ServiceScope::Vm => 1,
        ServiceScope::Container => 2,
        ServiceScope::ManagedCluster => 3,
    }
}

impl Market {
    /// Draws every GPU's fair-price and spot-ratio paths and the term slope from
    /// `p.seed`; the same parameters give the same market.
    pub fn build(p: &SimParams) -> Self {
        let m = &p.market;
        let n = p.days as usize;
        let date = |d: usize| p.start + Days::new(d as u64);
        let mut base = Vec::with_capacity(p.gpu.len());
        let mut spot = Vec::with_capacity(p.gpu.len());
        for g in &p.gpu {
            let mut rng = stream(p.seed, &[tag("base"), tag(&g.id)]);
            let vol = g.daily_vol.unwrap_or(m.daily_vol);
            let omega = vol.powi(2) * (1.0 - m.garch_alpha - m.garch_beta);
            let mut h = vol.powi(2);
            let mut z = 0.0f64;
            let succ_launch = g
                .successor
                .as_ref()
                .and_then(|s| p.gpu.iter().find(|x| &x.id == s))
                .map(|x| x.launch);
            let mut path = Vec::with_capacity(n);
            for d in 0..n {
                let today = date(d);
                // Draw every day, launched or not, so that the path of a day does not
                // depend on the start date of the window in a surprising way.
                let e: f64 = StandardNormal.sample(&mut rng);
                let jump_u: f64 = rng.gen();
                let jump_dir: f64 = rng.gen();
                let jump_size: f64 = rng.gen();
                if today < g.launch {
                    path.push(None);
                    continue;
                }
                let age = (today - g.launch).num_days() as f64 / 365.0;
                let mut trend =
                    g.floor + (g.launch_price - g.floor) * (-g.decay_per_year * age).exp();
                if let Some(sl) = succ_launch {
                    let since = (today - sl).num_days() as f64;
                    if since > 0.0 {
                        trend *= 1.0 - m.successor_cut * (since / 60.0).min(1.0);
                    }
                }
                path.push(Some(trend * z.exp()));
                let shock = h.sqrt() * e;
                let jump = if jump_u < m.jump_prob {
                    let sign = if jump_dir < m.jump_cut_share {
                        -1.0
                    } else {
                        1.0
                    };
                    sign * m.jump_mean_abs * (0.5 + jump_size)
                } else {
                    0.0
                };
                z = (1.0 - m.mean_reversion) * z + shock + jump;
                h = omega + m.garch_alpha * shock * shock + m.garch_beta * h;
            }
            base.push(path);

            let mut rng = stream(p.seed, &[tag("spot"), tag(&g.id)]);
            let mut u = 0.0f64;
            let mut s = Vec::with_capacity(n);
            for _ in 0..n {
                s.push(m.spot_ratio * u.exp());
                let e: f64 = StandardNormal.sample(&mut rng);
                u = 0.9 * u + m.spot_vol * e;
            }
            spot.push(s);
        }
        let mut rng = stream(p.seed, &[tag("slope")]);
        let mut slope = Vec::with_capacity(n);
        let mut s = m.term_slope;
        for _ in 0..n {
            slope.push(s);
            let e: f64 = StandardNormal.sample(&mut rng);
            s = s + 0.03 * (m.term_slope - s) + m.term_slope_vol * e;
            s = s.max(0.0);
        }
        let sp = |k: &str| p.scope_premium.get(k).copied().unwrap_or(1.0);
        Market {
            start: p.start,
            days: p.days,
            base,
            spot,
            slope,
            scope_premium: [
                sp("bare-metal"),
                sp("vm"),
                sp("container"),
                sp("managed-cluster"),
            ],
        }
    }

    /// The calendar date of simulation day `day`.
    pub fn date(&self, day: u32) -> NaiveDate {
        self.start + Days::new(u64::from(day))
    }

    /// Whether GPU `g` is on the market on `day`.
    pub fn launched(&self, g: usize, day: u32) -> bool {
        self.base[g][day as usize].is_some()
    }

    /// Multiplier of a term relative to on-demand on `day`.
    pub fn term_factor(&self, g: usize, term: ContractTerm, day: u32) -> f64 {
        match term {
            ContractTerm::Spot => self.spot[g][day as usize],
            ContractTerm::OnDemand => 1.0,
            t => {
                let years = t.hours().unwrap_or(0.0) / 8760.0;
                (-self.slope[day as usize] * years.sqrt()).exp()
            }
        }
    }

    /// Fair price of a grade (GPU index, scope, term) on `day`, before operator
    /// tier and region: the truth an index should recover.
    pub fn fair(&self, g: usize, scope: ServiceScope, term: ContractTerm, day: u32) -> Option<f64> {
        self.base[g][day as usize]
            .map(|b| b * self.scope_premium[scope_index(scope)] * self.term_factor(g, term, day))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{date, gpu, quiet, window};
    use ContractTerm::{OnDemand, Spot, Year1, Year3};
    use ServiceScope::BareMetal;

    fn reference(m: &Market, g: usize, day: u32) -> Option<f64> {
        m.fair(g, BareMetal, OnDemand, day)
    }

    /// Every (GPU, scope, term, day) fair price, in a fixed order.
    fn every_price(m: &Market, n_gpus: usize) -> Vec<Option<f64>> {
        let mut out = Vec::new();
        for g in 0..n_gpus {
            for s in ServiceScope::ALL {
                for t in TERMS {
                    out.extend((0..m.days).map(|d| m.fair(g, s, t, d)));
                }
            }
        }
        out
    }

    /// H200: launched 2024-06-01, 4.6 over a floor of 1.9. 2024-01-01 + 152 days
    /// (31 + 29 + 31 + 30 + 31) is 2024-06-01. On launch day the deviation from trend
    /// is still 0, so the fair price is the launch price whatever the volatility.
    #[test]
    fn a_gpu_has_no_price_before_launch_and_its_launch_price_on_the_day() {
        let p = window(date(2024, 1, 1), 200);
        let m = Market::build(&p);
        let h200 = gpu(&p, "h200-sxm-141gb");
        assert!(!m.launched(h200, 151));
        assert_eq!(reference(&m, h200, 151), None);
        assert!(m.launched(h200, 152));
        assert_eq!(m.date(152), date(2024, 6, 1));
        let launch = reference(&m, h200, 152).unwrap();
        assert!((launch - 4.6).abs() < 1e-12, "{launch}");
        // B200 launches 2025-02-15, after the window: never priced.
        let b200 = gpu(&p, "b200-sxm-180gb");
        assert!((0..200).all(|d| reference(&m, b200, d).is_none()));
    }

    /// Without noise the price is the trend `floor + (launch - floor) e^(-k age)`.
    /// H100 from its launch day, 2023-03-21: floor 1.5, launch 5.5, k = 0.6; a year on,
    /// 1.5 + 4 e^-0.6 = 3.695246544. Its successor (H200, 2024-06-01, day 438) is
    /// outside these 400 days.
    #[test]
    fn a_quiet_market_follows_the_life_cycle_trend() {
        let p = quiet(date(2023, 3, 21), 400);
        let m = Market::build(&p);
        let h100 = gpu(&p, "h100-sxm-80gb");
        let at = |d| reference(&m, h100, d).unwrap();
        assert!((at(0) - 5.5).abs() < 1e-12);
        assert!(
            (at(365) - 3.695_246_544_376_106).abs() < 1e-9,
            "{}",
            at(365)
        );
        // Half a year: 1.5 + 4 e^(-0.6 * 182.5 / 365) = 1.5 + 4 e^-0.3 = 4.463272883.
        let half = 0.5 * (at(182) + at(183));
        assert!((half - 4.463_272_883).abs() < 2e-3, "{half}");
        assert!((1..400).all(|d| at(d) < at(d - 1)), "the trend decays");
    }

    /// A100's successor is H100 (launch 2023-03-21 = day 20 from 2023-03-01): the step
    /// of 8% is phased in over 60 days, so the price is 4% lower 30 days on, 8% lower
    /// from 60 days on, and unchanged up to the launch day itself. The noise does not
    /// depend on the successor, so the ratio to the same market without one is exact.
    #[test]
    fn a_successor_steps_the_price_down_over_sixty_days() {
        let with = window(date(2023, 3, 1), 120);
        let mut without = with.clone();
        let a100 = gpu(&with, "a100-sxm-80gb");
        without.gpu[a100].successor = None;
        let (m1, m0) = (Market::build(&with), Market::build(&without));
        let ratio = |d| reference(&m1, a100, d).unwrap() / reference(&m0, a100, d).unwrap();
        for (day, expected) in [(0, 1.0), (20, 1.0), (50, 0.96), (80, 0.92), (119, 0.92)] {
            assert!(
                (ratio(day) - expected).abs() < 1e-12,
                "day {day}: {}",
                ratio(day)
            );
        }
        // A successor that is not simulated steps nothing.
        let mut absent = without.clone();
        absent.gpu[a100].successor = Some("z999-sxm-1gb".into());
        let ma = Market::build(&absent);
        assert!((0..120).all(|d| reference(&ma, a100, d) == reference(&m0, a100, d)));
    }

    /// Scope premia of the default file multiply the bare-metal price.
    #[test]
    fn scope_premia_multiply_the_fair_price() {
        let p = window(date(2024, 1, 1), 30);
        let m = Market::build(&p);
        for (scope, premium) in [
            (ServiceScope::Vm, 0.97),
            (ServiceScope::Container, 0.88),
            (ServiceScope::ManagedCluster, 1.18),
        ] {
            for d in [0, 29] {
                let r =
                    m.fair(1, scope, Year1, d).unwrap() / m.fair(1, BareMetal, Year1, d).unwrap();
                assert!((r - premium).abs() < 1e-12, "{scope} day {d}: {r}");
            }
        }
    }

    /// With a constant slope of 0.25 the reserved factor is `exp(-0.25 sqrt(years))`:
    /// 1m (730 h) 0.930373851, 1y 0.778800783, 3y exp(-0.25 sqrt 3) = 0.648552254;
    /// spot is the spot ratio, 0.62, when its noise is off.
    #[test]
    fn term_factors_follow_the_square_root_discount() {
        let p = quiet(date(2024, 1, 1), 50);
        let m = Market::build(&p);
        for day in [0, 49] {
            for (term, f) in [
                (OnDemand, 1.0),
                (Spot, 0.62),
                (ContractTerm::Month1, 0.930_373_850_665_078_8),
                (Year1, 0.778_800_783_071_404_9),
                (Year3, 0.648_552_253_911_83),
            ] {
                let got = m.term_factor(0, term, day);
                assert!((got - f).abs() < 1e-12, "{term} day {day}: {got}");
                let fair = m.fair(0, BareMetal, term, day).unwrap();
                let od = reference(&m, 0, day).unwrap();
                assert!((fair / od - f).abs() < 1e-12);
            }
        }
    }

    /// The slope never goes below 0 even when its noise dwarfs its mean, so a longer
    /// commitment is never dearer than a shorter one.
    #[test]
    fn the_term_slope_stays_non_negative() {
        let mut p = quiet(date(2024, 1, 1), 2000);
        p.market.term_slope = 0.0;
        p.market.term_slope_vol = 0.3;
        let m = Market::build(&p);
        let mut moved = false;
        for d in 0..p.days {
            let f: Vec<f64> = TERMS[1..].iter().map(|t| m.term_factor(0, *t, d)).collect();
            assert!(f.windows(2).all(|w| w[1] <= w[0]), "day {d}: {f:?}");
            moved |= f[f.len() - 1] < 1.0;
        }
        assert!(moved, "the slope never left 0");
    }

    /// The default dynamics over the longest allowed run (20 000 days) keep every fair
    /// price finite and positive.
    #[test]
    fn default_paths_stay_finite_and_positive() {
        let mut p = window(date(2024, 1, 1), 20_000);
        p.user.clear();
        let m = Market::build(&p);
        for (i, v) in every_price(&m, p.gpu.len()).into_iter().enumerate() {
            if let Some(v) = v {
                assert!(v.is_finite() && v > 0.0, "price {i}: {v}");
            }
        }
    }

    #[test]
    fn the_market_is_a_function_of_the_seed() {
        let p = window(date(2024, 1, 1), 365);
        let n = p.gpu.len();
        let a = every_price(&Market::build(&p), n);
        assert_eq!(a, every_price(&Market::build(&p), n));
        let mut q = p.clone();
        q.seed += 1;
        let b = every_price(&Market::build(&q), n);
        let same = a.iter().zip(&b).filter(|(x, y)| x == y).count();
        // Only days before a launch (None in both) and launch days coincide.
        let unpriced = a.iter().filter(|x| x.is_none()).count();
        assert!(same <= unpriced + 28 * n, "{same} of {} equal", a.len());
    }

    /// Each GPU draws from its own stream: listing the GPUs in another order changes
    /// no GPU's path.
    #[test]
    fn a_gpus_path_does_not_depend_on_the_other_gpus() {
        let p = window(date(2024, 1, 1), 400);
        let mut r = p.clone();
        r.gpu.reverse();
        let (m, mr) = (Market::build(&p), Market::build(&r));
        let n = p.gpu.len();
        for g in 0..n {
            for d in 0..p.days {
                for t in TERMS {
                    assert_eq!(
                        m.fair(g, BareMetal, t, d),
                        mr.fair(n - 1 - g, BareMetal, t, d)
                    );
                }
            }
        }
    }

    /// The log deviation from trend `z` of one GPU over 20 000 days, and its shocks
    /// `z_{t+1} - (1 - kappa) z_t`, from a market and its noiseless twin.
    fn deviations(p: &SimParams) -> (Vec<f64>, Vec<f64>) {
        let mut flat = p.clone();
        flat.market.daily_vol = 0.0;
        flat.market.jump_prob = 0.0;
        let (m, m0) = (Market::build(p), Market::build(&flat));
        let z: Vec<f64> = (0..p.days)
            .map(|d| (reference(&m, 0, d).unwrap() / reference(&m0, 0, d).unwrap()).ln())
            .collect();
        let k = p.market.mean_reversion;
        let e = z.windows(2).map(|w| w[1] - (1.0 - k) * w[0]).collect();
        (z, e)
    }

    fn mean(x: &[f64]) -> f64 {
        x.iter().sum::<f64>() / x.len() as f64
    }

    fn autocorrelation(x: &[f64]) -> f64 {
        let m = mean(x);
        let c0: f64 = x.iter().map(|v| (v - m).powi(2)).sum();
        let c1: f64 = x.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum();
        c1 / c0
    }

    fn one_gpu(vol: f64, alpha: f64, beta: f64) -> SimParams {
        let mut p = quiet(date(2023, 3, 21), 20_000);
        p.gpu.retain(|g| g.id == "h100-sxm-80gb");
        p.gpu[0].successor = None;
        p.user.clear();
        p.market.daily_vol = vol;
        p.market.garch_alpha = alpha;
        p.market.garch_beta = beta;
        p
    }

    /// Constant variance (alpha = beta = 0) and kappa = 0.06: `z` is an AR(1) with
    /// coefficient 0.94 and shock sd 0.01, so its variance is
    /// 1e-4 / (1 - 0.94^2) = 8.591e-4 and its lag-1 autocorrelation 0.94. Effective
    /// sample for the variance: 20 000 (1 - 0.8836) / 1.8836 = 1236, relative se
    /// sqrt(2 / 1236) = 4%; tolerance 20%.
    #[test]
    fn the_deviation_from_trend_reverts_at_the_documented_rate() {
        let (z, e) = deviations(&one_gpu(0.01, 0.0, 0.0));
        let m = mean(&z);
        let var = z.iter().map(|v| (v - m).powi(2)).sum::<f64>() / z.len() as f64;
        assert!((var / 8.591e-4 - 1.0).abs() < 0.2, "variance {var}");
        let rho = autocorrelation(&z);
        assert!((rho - 0.94).abs() < 0.02, "autocorrelation {rho}");
        // The shocks are the daily volatility: sd 0.01 (se of the sd 0.5%).
        let sd = (e.iter().map(|v| v * v).sum::<f64>() / e.len() as f64).sqrt();
        assert!((sd - 0.01).abs() < 0.0005, "shock sd {sd}");
    }

    /// GARCH(1,1) with alpha 0.08, beta 0.90: squared shocks have lag-1
    /// autocorrelation alpha (1 - alpha beta - beta^2) / (1 - 2 alpha beta - beta^2)
    /// = 0.08 * 0.118 / 0.046 = 0.205; with constant variance it is 0 (se
    /// 1/sqrt(20 000) = 0.007). The long-run shock sd is still `daily_vol`.
    #[test]
    fn volatility_clusters_under_garch() {
        let (_, e) = deviations(&one_gpu(0.01, 0.08, 0.90));
        let sq: Vec<f64> = e.iter().map(|v| v * v).collect();
        let rho = autocorrelation(&sq);
        assert!(rho > 0.1, "squared-shock autocorrelation {rho}");
        let sd = mean(&sq).sqrt();
        assert!((sd / 0.01 - 1.0).abs() < 0.3, "shock sd {sd}");
        let (_, e0) = deviations(&one_gpu(0.01, 0.0, 0.0));
        let sq0: Vec<f64> = e0.iter().map(|v| v * v).collect();
        assert!(autocorrelation(&sq0).abs() < 0.03);
    }

    /// A jump every day (probability 1), no volatility, no reversion: the log price
    /// moves by the jump alone, between 0.5 and 1.5 times 0.04, down when every jump
    /// is a cut and up when none is.
    #[test]
    fn jumps_have_the_documented_size_and_sign() {
        for (cut_share, sign) in [(1.0, -1.0), (0.0, 1.0)] {
            let mut p = one_gpu(0.0, 0.0, 0.0);
            p.days = 500;
            p.market.mean_reversion = 0.0;
            p.market.jump_prob = 1.0;
            p.market.jump_cut_share = cut_share;
            let (z, _) = deviations(&p);
            for (d, w) in z.windows(2).enumerate() {
                let step = sign * (w[1] - w[0]);
                assert!(
                    (0.02 - 1e-12..0.06 + 1e-12).contains(&step),
                    "day {d}: {step}"
                );
            }
        }
    }

    /// Parameters that pass [`SimParams::validate`] must give a market whose prices
    /// are finite and positive, as `truth.csv` promises a USD price per GPU-hour.
    /// Each case here is accepted by `validate` and is not.
    #[test]
    fn validated_parameters_give_finite_positive_prices() {
        type Case = (&'static str, fn(&mut SimParams));
        let cases: [Case; 5] = [
            // z_{t+1} = (1 - 3) z_t + ...: |1 - kappa| = 2, the deviation explodes.
            ("mean_reversion = 3", |p| p.market.mean_reversion = 3.0),
            ("successor_cut = 1.5", |p| p.market.successor_cut = 1.5),
            ("scope_premium.vm = NaN", |p| {
                p.scope_premium.insert("vm".into(), f64::NAN);
            }),
            ("scope_premium.container = -1", |p| {
                p.scope_premium.insert("container".into(), -1.0);
            }),
            ("decay_per_year = NaN", |p| {
                p.gpu[0].decay_per_year = f64::NAN
            }),
        ];
        let mut accepted_and_broken = Vec::new();
        for (name, c) in cases {
            let mut p = window(date(2024, 1, 1), 731);
            c(&mut p);
            if p.validate().is_err() {
                continue;
            }
            let m = Market::build(&p);
            let bad = every_price(&m, p.gpu.len())
                .into_iter()
                .flatten()
                .find(|v| !(v.is_finite() && *v > 0.0));
            if let Some(v) = bad {
                accepted_and_broken.push(format!("{name}: a fair price of {v}"));
            }
        }
        assert!(accepted_and_broken.is_empty(), "{accepted_and_broken:#?}");
    }
}
