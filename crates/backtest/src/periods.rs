//! Monthly hedge periods: the user's exposure and average rent, the contract's
//! settlement, the operational events of each contract month, and the reference each
//! hedge tranche locked in when it was put on.
//!
//! ## The rent a month's change is measured from
//!
//! A hedge put on at the close of day `e` (a month-end) fixes the futures price `F`.
//! What it locks in for the hedged item is the index level at entry plus the basis
//! last observed: `R_ref = I_e + b`, where `I_e` is the index level at entry (the
//! mean of the lookback days' fixings) and `b = rent_m - S_m` is the basis of the
//! latest month `m` completed by `e` that had a full month of rent and a settlement.
//! This is the hypothetical-derivative idea of hedge accounting (a derivative whose
//! terms match the hedged item, priced at inception): the hedged item's change is
//! `dR = rent_M - R_ref`, the futures change is `dF = S_M - F`, and both legs start
//! from the same index level. Both `rent` and `S` are monthly averages, so the
//! reference is the same whether the rent file is daily, weekly, monthly or a bill
//! that covers a quarter. A rent that equals the settlement every month has
//! `b = 0` and `dR = dF` exactly; a rent that equals the settlement plus a constant
//! premium has `b = premium` and `dR = dF` too.
//!
//! Reference: IFRS 9 B6.5.5 (hypothetical derivative); KPMG, "Hedge effectiveness
//! testing" (2016), section 4.

use crate::contract::{month_start, ContractSpec};
use crate::rent::{daily_events, Event, RentSeries};
use crate::underlying::Underlying;
use chrono::{Days, Months, NaiveDate};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A basis older than this many months at entry is not used as the last observed one.
const MAX_BASIS_AGE_MONTHS: u32 = 3;
/// Tranches of a layered hedge: one put on at each of the three month-ends before
/// the contract month.
pub const LAYERS: u32 = 3;

/// One hedge tranche of a month: put on at the close of `entry_day`.
#[derive(Debug, Clone, PartialEq)]
pub struct Tranche {
    pub entry_day: NaiveDate,
    /// Index level at entry (mean of the lookback days' fixings), on the tick.
    pub index_level: f64,
    /// The basis last observed at entry, `rent_m - S_m`, and its month `m`.
    pub basis: f64,
    pub basis_month: NaiveDate,
}

impl Tranche {
    /// The rent this tranche locked in: index level at entry plus the basis.
    pub fn rent_reference(&self) -> f64 {
        self.index_level + self.basis
    }
}

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
    /// Tranches put on at the 1st, 2nd and 3rd month-end before the month, those
    /// that had an index level and a basis; the first is always present.
    pub tranches: Vec<Tranche>,
    /// GPU-hours operational events made undeliverable (or unpaid).
    pub lost_gpu_hours: f64,
    /// USD lost to operational events, and by kind.
    pub operational_loss: f64,
    pub loss_by_kind: BTreeMap<String, f64>,
    /// Days of the month with a rent.
    pub rent_days: u32,
}

/// A month of the rent file that is not a hedge period, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeftOut {
    pub month: NaiveDate,
    pub reason: String,
    /// Operational loss of the month's events (still counted apart).
    pub operational_loss: f64,
}

/// What every calendar month of the rent looks like before periods are chosen.
struct Month {
    start: NaiveDate,
    end: NaiveDate,
    rent_days: u32,
    days: u32,
    exposure: f64,
    rent: f64,
    settlement: Result<f64, String>,
}

impl Month {
    fn full(&self) -> bool {
        self.rent_days == self.days
    }
    /// `rent - settlement` of a complete, settled month.
    fn basis(&self) -> Option<f64> {
        match (&self.settlement, self.full()) {
            (Ok(s), true) => Some(self.rent - s),
            _ => None,
        }
    }
}

fn months(rent: &RentSeries, index: &Underlying, contract: &ContractSpec) -> Vec<Month> {
    let daily = rent.daily();
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
        let in_month: Vec<(f64, f64)> = daily.range(m..next).map(|(_, v)| *v).collect();
        let exposure: f64 = in_month.iter().map(|(_, h)| h).sum();
        let rent = if exposure > 0.0 {
            in_month.iter().map(|(p, h)| p * h).sum::<f64>() / exposure
        } else {
            in_month.iter().map(|(p, _)| p).sum::<f64>() / in_month.len().max(1) as f64
        };
        out.push(Month {
            start: m,
            end: next,
            rent_days: in_month.len() as u32,
            days: (next - m).num_days() as u32,
            exposure,
            rent,
            settlement: contract.settle(index, m),
        });
        m = next;
    }
    out
}

/// The basis last observed at the close of `day`: the latest complete, settled month
/// ending on or before the next day, at most three months old.
fn basis_at(months: &[Month], day: NaiveDate) -> Option<(f64, NaiveDate)> {
    let oldest = month_start(day) - Months::new(MAX_BASIS_AGE_MONTHS);
    months
        .iter()
        .rev()
        .filter(|m| m.end <= day + Days::new(1) && m.start >= oldest)
        .find_map(|m| m.basis().map(|b| (b, m.start)))
}

/// Builds the months in which the user has rent on every day, the contract settles
/// and a basis had been observed before entry; every other month of the rent file is
/// returned in the second list with the reason.
pub fn build_periods(
    rent: &RentSeries,
    events: &[Event],
    index: &Underlying,
    contract: &ContractSpec,
) -> (Vec<Period>, Vec<LeftOut>) {
    let all = months(rent, index, contract);
    let ev = daily_events(events);
    let mut periods = Vec::new();
    let mut left_out = Vec::new();
    for m in &all {
        let mut lost = 0.0;
        let mut loss = 0.0;
        let mut by_kind: BTreeMap<String, f64> = BTreeMap::new();
        for (_, (h, usd, kinds)) in ev.range(m.start..m.end) {
            lost += h;
            loss += usd;
            for (k, v) in kinds {
                *by_kind.entry(k.clone()).or_default() += v;
            }
        }
        let tranches: Vec<Tranche> = (1..=LAYERS)
            .map_while(|k| {
                let entry_day = m.start - Months::new(k - 1) - Days::new(1);
                let level = contract.entry_level(&index.values, entry_day)?;
                let (basis, basis_month) = basis_at(&all, entry_day)?;
                Some(Tranche {
                    entry_day,
                    index_level: contract.to_tick(level),
                    basis,
                    basis_month,
                })
            })
            .collect();
        let reason = if !m.full() {
            Some(format!(
                "the rent covers {} of the month's {} days",
                m.rent_days, m.days
            ))
        } else if let Err(e) = &m.settlement {
            Some(e.clone())
        } else if tranches.is_empty() {
            Some(format!(
                "no reference at entry: needs an index level on or before {} and a complete, settled month of rent in the {MAX_BASIS_AGE_MONTHS} months before",
                m.start - Days::new(1)
            ))
        } else {
            None
        };
        match (reason, &m.settlement) {
            (None, Ok(settlement)) => periods.push(Period {
                start: m.start,
                end: m.end,
                exposure: m.exposure,
                rent: m.rent,
                settlement: *settlement,
                tranches,
                lost_gpu_hours: lost.min(m.exposure),
                operational_loss: loss,
                loss_by_kind: by_kind,
                rent_days: m.rent_days,
            }),
            (reason, _) => left_out.push(LeftOut {
                month: m.start,
                reason: reason.unwrap_or_default(),
                operational_loss: loss,
            }),
        }
    }
    (periods, left_out)
}
