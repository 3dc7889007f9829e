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
