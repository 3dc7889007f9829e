//! Users' rent series and operational events.

use crate::market::Market;
use crate::params::{SimParams, UserParams};
use crate::rng::{stream, tag};
use chrono::{Datelike, Days};
use rand::Rng;
use rand_distr::{Distribution, Poisson};
use rentix_core::Grade;

/// One row of `rent_<user>.csv`: a day's rent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RentRow {
    pub day: u32,
    pub usd_per_gpu_hour: f64,
    pub gpu_hours: f64,
}

/// One row of `events_<user>.csv`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EventRow {
    pub start: u32,
    /// Exclusive end day.
    pub end: u32,
    pub kind: &'static str,
    pub gpu_hours_lost: f64,
    pub usd_loss: f64,
    pub note: String,
}

fn gpu_index(p: &SimParams, g: &Grade) -> Option<usize> {
    p.gpu.iter().position(|x| x.id == g.gpu.as_str())
}

/// The user's rent per day: every leg priced at the fair price of its grade on its
/// last repricing day. Days before all legs' GPUs are on the market are skipped.
pub(crate) fn rent(p: &SimParams, m: &Market, u: &UserParams) -> Vec<RentRow> {
    let legs: Vec<(usize, Grade, &crate::params::RentLeg)> = u
        .leg
        .iter()
        .filter_map(|l| {
            let g: Grade = l.grade.parse().ok()?;
            Some((gpu_index(p, &g)?, g, l))
        })
        .collect();
    let mut out = Vec::new();
    // Repricing is anchored on the first day all legs can be priced.
    let first = (0..p.days).find(|&d| legs.iter().all(|(gi, _, _)| m.launched(*gi, d)));
    let Some(first) = first else { return out };
    for day in first..p.days {
        let mut price = 0.0;
        for (gi, g, l) in &legs {
            let anchor = first + (day - first) / l.reprice_days * l.reprice_days;
            let fair = m.fair(*gi, g.scope, g.term, anchor).unwrap_or(0.0);
            price += l.share * (fair * l.markup + l.add);
        }
        out.push(RentRow {
            day,
            usd_per_gpu_hour: price,
            gpu_hours: f64::from(u.gpus) * 24.0,
        });
    }
    out
}

/// One row of a rent file: `[start, end)` in simulation days.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BilledRow {
    pub start: u32,
    pub end: u32,
    pub usd_per_gpu_hour: f64,
    pub gpu_hours: f64,
}

/// The rent as the user's file shows it: a row a day, or a row a calendar month
/// (GPU-hour-weighted average price, total GPU-hours), as an invoice bills it.
pub(crate) fn billed(p: &SimParams, rows: &[RentRow], billing: &str) -> Vec<BilledRow> {
    let daily = rows.iter().map(|r| BilledRow {
        start: r.day,
        end: r.day + 1,
        usd_per_gpu_hour: r.usd_per_gpu_hour,
        gpu_hours: r.gpu_hours,
    });
    if billing != "monthly" {
        return daily.collect();
    }
    let month = |day: u32| {
        let d = p.start + Days::new(u64::from(day));
        (d.year(), d.month())
    };
    let mut out: Vec<BilledRow> = Vec::new();
    let mut cost = 0.0;
    for r in daily {
        match out.last_mut() {
            Some(last) if month(last.start) == month(r.start) && last.end == r.start => {
                last.end = r.end;
                last.gpu_hours += r.gpu_hours;
                cost += r.usd_per_gpu_hour * r.gpu_hours;
                last.usd_per_gpu_hour = cost / last.gpu_hours;
            }
            _ => {
                cost = r.usd_per_gpu_hour * r.gpu_hours;
                out.push(r);
            }
        }
    }
    out
}

/// Operational events, drawn from yearly Poisson rates.
pub(crate) fn events(p: &SimParams, u: &UserParams, rent: &[RentRow]) -> Vec<EventRow> {
    let mut rng = stream(p.seed, &[tag("events"), tag(&u.name)]);
    let (Some(first), Some(last)) = (rent.first(), rent.last()) else {
        return Vec::new();
    };
    let span_years = f64::from(last.day - first.day + 1) / 365.0;
    let price_on = |d: u32| {
        rent.iter()
            .find(|r| r.day == d)
            .map_or(rent[0].usd_per_gpu_hour, |r| r.usd_per_gpu_hour)
    };
    let gpus = f64::from(u.gpus);
    let mut out = Vec::new();
    let kinds: [(&'static str, f64); 3] = [
        ("outage", u.outages_per_year),
        ("failed_deployment", u.failed_deployments_per_year),
        (
            "customer_default",
            if u.side == "earn" {
                u.customer_defaults_per_year
            } else {
                0.0
            },
        ),
    ];
    for (kind, rate) in kinds {
        let n = Poisson::new(rate * span_years)
            .map(|d| d.sample(&mut rng) as u64)
            .unwrap_or(0);
        for _ in 0..n {
            let start = rng.gen_range(first.day..=last.day);
            let (days, share, note) = match kind {
                "outage" => (
                    rng.gen_range(1..=3u32),
                    rng.gen_range(0.05..0.3),
                    "power or network outage",
                ),
                "failed_deployment" => (
                    rng.gen_range(7..=30u32),
                    rng.gen_range(0.1..0.4),
                    "cluster failed acceptance; reserved capacity stranded",
                ),
                _ => (
                    rng.gen_range(30..=90u32),
                    rng.gen_range(0.05..0.2),
                    "customer stopped paying",
                ),
            };
            let end = (start + days).min(last.day + 1);
            let hours = gpus * share * 24.0 * f64::from(end - start);
            let usd = hours * price_on(start);
            out.push(EventRow {
                start,
                end,
                kind,
                gpu_hours_lost: hours,
                usd_loss: usd,
                note: note.to_string(),
            });
        }
    }
    out.sort_by(|a, b| (a.start, a.kind).cmp(&(b.start, b.kind)));
    out
}

/// `YYYY-MM-DD` of a simulation day.
pub(crate) fn day_text(p: &SimParams, day: u32) -> String {
    (p.start + Days::new(u64::from(day))).to_string()
}
