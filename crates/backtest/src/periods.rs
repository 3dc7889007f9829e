//! Monthly hedge periods: the user's exposure and average rent, the contract's
//! settlement, and the operational events of each contract month.

use crate::contract::{month_start, ContractSpec};
use crate::rent::{daily_events, Event, RentSeries};
use chrono::{Days, Months, NaiveDate};
use rentix_core::DateSeries;
use std::collections::BTreeMap;

/// One contract month as the backtest sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Period {
    pub start: NaiveDate,
    /// Exclusive.
    pub end: NaiveDate,
    /// Contracted GPU-hours of the month.
    pub exposure: f64,
    /// GPU-hour-weighted average rent, USD per GPU-hour.
    pub rent: f64,
    /// Final settlement of the month's contract.
    pub settlement: f64,
    /// Index level at entry: mean of the fixings of the lookback days before the
    /// month (what "no drift" prices the month at).
    pub index_at_entry: f64,
    /// The user's rent over the same lookback days: the level a change is measured
    /// from.
    pub rent_at_entry: f64,
    /// GPU-hours operational events made undeliverable (or unpaid).
    pub lost_gpu_hours: f64,
    /// USD lost to operational events, and by kind.
    pub operational_loss: f64,
    pub loss_by_kind: BTreeMap<String, f64>,
    /// Days of the month with a rent.
    pub rent_days: u32,
}

/// Builds the months in which the user has rent on every day (and on the lookback
/// days before), and the contract settles. Months with partial rent are left out
/// (their exposure is not a month's).
pub fn build_periods(
    rent: &RentSeries,
    events: &[Event],
    index: &DateSeries,
    contract: &ContractSpec,
) -> Vec<Period> {
    let daily = rent.daily();
    let ev = daily_events(events);
    let (Some(first), Some(last)) = (
        daily.keys().next().copied(),
        daily.keys().next_back().copied(),
    ) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut m = month_start(first);
    while m <= last {
        let next = m + Months::new(1);
        let days = (next - m).num_days() as u32;
        let in_month: Vec<(f64, f64)> = daily.range(m..next).map(|(_, v)| *v).collect();
        let settlement = contract.settle(index, m);
        let entry_day = m - Days::new(1);
        let entry = contract.entry_level(index, entry_day);
        let lb = u64::from(contract.entry.lookback_days.max(1));
        let before: Vec<f64> = daily
            .range(entry_day - Days::new(lb - 1)..m)
            .map(|(_, v)| v.0)
            .collect();
        let rent_at_entry =
            (!before.is_empty()).then(|| before.iter().sum::<f64>() / before.len() as f64);
        if in_month.len() as u32 == days {
            if let (Some(settlement), Some(entry), Some(rent_at_entry)) =
                (settlement, entry, rent_at_entry)
            {
                let exposure: f64 = in_month.iter().map(|(_, h)| h).sum();
                let rent_avg = if exposure > 0.0 {
                    in_month.iter().map(|(p, h)| p * h).sum::<f64>() / exposure
                } else {
                    in_month.iter().map(|(p, _)| p).sum::<f64>() / in_month.len() as f64
                };
                let mut lost = 0.0;
                let mut loss = 0.0;
                let mut by_kind: BTreeMap<String, f64> = BTreeMap::new();
                for (_, (h, usd, kinds)) in ev.range(m..next) {
                    lost += h;
                    loss += usd;
                    for (k, v) in kinds {
                        *by_kind.entry(k.clone()).or_default() += v;
                    }
                }
                out.push(Period {
                    start: m,
                    end: next,
                    exposure,
                    rent: rent_avg,
                    settlement,
                    index_at_entry: contract.to_tick(entry),
                    rent_at_entry,
                    lost_gpu_hours: lost.min(exposure),
                    operational_loss: loss,
                    loss_by_kind: by_kind,
                    rent_days: days,
                });
            }
        }
        m = next;
    }
    out
}
