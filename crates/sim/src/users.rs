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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::RentLeg;
    use crate::testing::{date, gpu, window};
    use rentix_core::{ContractTerm, ServiceScope};

    fn leg(grade: &str, share: f64, reprice_days: u32, markup: f64, add: f64) -> RentLeg {
        RentLeg {
            grade: grade.into(),
            share,
            reprice_days,
            markup,
            add,
        }
    }

    fn user(side: &str, gpus: u32, legs: Vec<RentLeg>) -> UserParams {
        UserParams {
            name: "u".into(),
            side: side.into(),
            gpus,
            outages_per_year: 0.0,
            failed_deployments_per_year: 0.0,
            customer_defaults_per_year: 0.0,
            billing: "daily".into(),
            leg: legs,
        }
    }

    const H100_OD: &str = "h100-sxm-80gb/bare-metal/on-demand";

    /// A fixed-premium payer (share 1, markup 1, add 0.45, daily repricing) pays the
    /// fair price plus 0.45 exactly, every day, on `gpus * 24` GPU-hours.
    #[test]
    fn a_fixed_premium_payer_pays_the_fair_price_plus_the_premium() {
        let p = window(date(2024, 1, 1), 120);
        let m = Market::build(&p);
        let h100 = gpu(&p, "h100-sxm-80gb");
        let u = user("pay", 128, vec![leg(H100_OD, 1.0, 1, 1.0, 0.45)]);
        let rows = rent(&p, &m, &u);
        assert_eq!(rows.len(), 120);
        for (d, r) in rows.iter().enumerate() {
            let fair = m
                .fair(
                    h100,
                    ServiceScope::BareMetal,
                    ContractTerm::OnDemand,
                    d as u32,
                )
                .unwrap();
            assert_eq!(r.day, d as u32);
            assert_eq!(r.usd_per_gpu_hour, fair + 0.45);
            // 128 GPUs for 24 hours.
            assert_eq!(r.gpu_hours, 3072.0);
        }
    }

    /// Two legs: 60% a yearly reservation repriced every 365 days, 40% on-demand
    /// repriced daily at 3% over. Day 400 takes the reservation's price of day 365.
    #[test]
    fn legs_mix_by_share_and_reprice_on_their_own_calendar() {
        let p = window(date(2024, 1, 1), 500);
        let m = Market::build(&p);
        let u = user(
            "pay",
            512,
            vec![
                leg("h100-sxm-80gb/bare-metal/1y", 0.6, 365, 1.0, 0.0),
                leg(H100_OD, 0.4, 1, 1.03, 0.0),
            ],
        );
        let rows = rent(&p, &m, &u);
        let h100 = gpu(&p, "h100-sxm-80gb");
        let f = |t, d| m.fair(h100, ServiceScope::BareMetal, t, d).unwrap();
        for (day, anchor) in [
            (0, 0),
            (200, 0),
            (364, 0),
            (365, 365),
            (400, 365),
            (499, 365),
        ] {
            let expected =
                0.6 * f(ContractTerm::Year1, anchor) + 0.4 * 1.03 * f(ContractTerm::OnDemand, day);
            let got = rows[day as usize].usd_per_gpu_hour;
            assert!(
                (got - expected).abs() < 1e-12,
                "day {day}: {got} vs {expected}"
            );
        }
    }

    /// H200 launches 2024-06-01; from 2024-05-01 that is day 31. A quarterly leg
    /// (91 days) is anchored there: constant on days 31..=121, repriced on day 122.
    #[test]
    fn rent_starts_when_every_legs_gpu_is_on_the_market() {
        let p = window(date(2024, 5, 1), 200);
        let m = Market::build(&p);
        let u = user(
            "earn",
            64,
            vec![leg("h200-sxm-141gb/bare-metal/3m", 1.0, 91, 1.0, 0.0)],
        );
        let rows = rent(&p, &m, &u);
        assert_eq!(rows[0].day, 31);
        assert_eq!(rows.len(), 200 - 31);
        let price = |d: u32| rows[(d - 31) as usize].usd_per_gpu_hour;
        assert!((31..=121).all(|d| price(d) == price(31)));
        assert_ne!(price(122), price(121));
        assert!((122..=199).all(|d| price(d) == price(122)));
        // A leg on a GPU launched after the window (B200, 2025-02-15): no rent at all.
        let later = user(
            "pay",
            8,
            vec![leg("b200-sxm-180gb/bare-metal/1y", 1.0, 1, 1.0, 0.0)],
        );
        assert!(rent(&p, &m, &later).is_empty());
        assert!(events(&p, &later, &[]).is_empty());
    }

    fn rows(days: std::ops::Range<u32>, price: impl Fn(u32) -> f64) -> Vec<RentRow> {
        days.map(|day| RentRow {
            day,
            usd_per_gpu_hour: price(day),
            gpu_hours: 24.0,
        })
        .collect()
    }

    /// From 2024-01-01, days 0..60 are January (31 days) and a leap February (29).
    /// Price = day number: January's average is (0 + 30) / 2 = 15, February's
    /// (31 + 59) / 2 = 45; 744 and 696 GPU-hours; `end` exclusive.
    #[test]
    fn monthly_billing_averages_each_calendar_month() {
        let p = window(date(2024, 1, 1), 60);
        let r = rows(0..60, f64::from);
        let b = billed(&p, &r, "monthly");
        assert_eq!(b.len(), 2);
        assert_eq!((b[0].start, b[0].end, b[0].gpu_hours), (0, 31, 744.0));
        assert_eq!((b[1].start, b[1].end, b[1].gpu_hours), (31, 60, 696.0));
        assert!((b[0].usd_per_gpu_hour - 15.0).abs() < 1e-12);
        assert!((b[1].usd_per_gpu_hour - 45.0).abs() < 1e-12);
        assert_eq!(day_text(&p, b[1].start), "2024-02-01");
        assert_eq!(day_text(&p, b[1].end), "2024-03-01");
    }

    /// Weighted by GPU-hours: 48 h at 100 and 30 days of 24 h at 10 give
    /// (4800 + 7200) / 768 = 15.625. A window starting mid-month bills the part.
    #[test]
    fn monthly_billing_weights_by_gpu_hours_and_bills_part_months() {
        let p = window(date(2024, 1, 1), 60);
        let mut r = rows(0..31, |_| 10.0);
        r[0].usd_per_gpu_hour = 100.0;
        r[0].gpu_hours = 48.0;
        let b = billed(&p, &r, "monthly");
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].gpu_hours, 768.0);
        assert!((b[0].usd_per_gpu_hour - 15.625).abs() < 1e-12);

        // Days 10..41: 2024-01-11 to 2024-02-10.
        let b = billed(&p, &rows(10..41, |_| 2.0), "monthly");
        let spans: Vec<(u32, u32)> = b.iter().map(|r| (r.start, r.end)).collect();
        assert_eq!(spans, [(10, 31), (31, 41)]);
    }

    #[test]
    fn daily_billing_is_one_row_a_day() {
        let p = window(date(2024, 1, 1), 60);
        let r = rows(5..9, |d| f64::from(d) / 10.0);
        let b = billed(&p, &r, "daily");
        assert_eq!(b.len(), 4);
        for (row, day) in b.iter().zip(5..) {
            assert_eq!((row.start, row.end), (day, day + 1));
            assert_eq!(row.usd_per_gpu_hour, f64::from(day) / 10.0);
            assert_eq!(row.gpu_hours, 24.0);
        }
    }

    /// Counts: Poisson with mean rate * span (365 days = 1 year), sd sqrt(1000) = 32,
    /// tolerance 15% (4.7 sd). Each event keeps to its documented length and share of
    /// the 100 GPUs, ends by the last rent day, and loses GPU-hours at the rent of its
    /// first day (price = 1 + day).
    #[test]
    fn events_follow_their_documented_rates_lengths_and_shares() {
        let p = window(date(2024, 1, 1), 365);
        let mut u = user("earn", 100, vec![leg(H100_OD, 1.0, 1, 1.0, 0.0)]);
        u.outages_per_year = 1000.0;
        u.failed_deployments_per_year = 1000.0;
        u.customer_defaults_per_year = 1000.0;
        let r = rows(0..365, |d| 1.0 + f64::from(d));
        let ev = events(&p, &u, &r);
        for (kind, days, share) in [
            ("outage", 1..=3, 0.05..0.3),
            ("failed_deployment", 7..=30, 0.1..0.4),
            ("customer_default", 30..=90, 0.05..0.2),
        ] {
            let of_kind: Vec<&EventRow> = ev.iter().filter(|e| e.kind == kind).collect();
            let n = of_kind.len() as f64;
            assert!((n / 1000.0 - 1.0).abs() < 0.15, "{kind}: {n}");
            for e in of_kind {
                let len = e.end - e.start;
                assert!(e.end <= 365 && len >= 1, "{e:?}");
                assert!(days.contains(&len) || e.end == 365, "{e:?}");
                let s = e.gpu_hours_lost / (100.0 * 24.0 * f64::from(len));
                assert!(share.start - 1e-12 <= s && s < share.end + 1e-12, "{e:?}");
                let usd = e.gpu_hours_lost * (1.0 + f64::from(e.start));
                assert!((e.usd_loss - usd).abs() <= 1e-9 * usd, "{e:?}");
            }
        }
        assert!(ev
            .windows(2)
            .all(|w| (w[0].start, w[0].kind) <= (w[1].start, w[1].kind)));
        // A producer has no customers to default.
        u.side = "pay".into();
        assert!(events(&p, &u, &r)
            .iter()
            .all(|e| e.kind != "customer_default"));
        // No rate, no event.
        u.outages_per_year = 0.0;
        u.failed_deployments_per_year = 0.0;
        assert!(events(&p, &u, &r).is_empty());
    }

    #[test]
    fn events_are_a_function_of_seed_and_user() {
        let p = window(date(2024, 1, 1), 365);
        let mut u = user("pay", 100, vec![leg(H100_OD, 1.0, 1, 1.0, 0.0)]);
        u.outages_per_year = 50.0;
        let r = rows(0..365, |_| 2.0);
        assert_eq!(events(&p, &u, &r), events(&p, &u, &r));
        let mut q = p.clone();
        q.seed += 1;
        assert_ne!(events(&p, &u, &r), events(&q, &u, &r));
    }

    /// 2024 is a leap year: day 59 from 2024-01-01 is February 29th.
    #[test]
    fn day_text_counts_calendar_days() {
        let p = window(date(2024, 1, 1), 400);
        assert_eq!(day_text(&p, 0), "2024-01-01");
        assert_eq!(day_text(&p, 59), "2024-02-29");
        assert_eq!(day_text(&p, 366), "2025-01-01");
    }
}
