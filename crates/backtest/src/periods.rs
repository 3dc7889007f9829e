//! Monthly hedge periods: the user's exposure and average rent, the contract's
//! settlement, the operational events of each contract month, and the reference each
//! hedge tranche locked in when it was put on.
//!
//! ## The rent a month's change is measured from
//!
//! A hedge put on at the close of day `e` (a month-end) fixes the futures price `F`.
//! The hedged item is the rent, which is assumed to move with the index as
//! `R = a + beta S` (the relation a hedge designation documents; `beta` is the
//! *reference slope*). Its hypothetical derivative (IFRS 9 B6.5.5: a derivative whose
//! terms match the hedged item, priced at inception) locks in the rent that relation
//! expects at entry: with `m` the latest month completed by `e` that had a full
//! month of rent and a settlement (rent `R_m`, settlement `S_m`), `a = R_m - beta S_m`
//! and the expected rent at index level `I_e` (the mean of the lookback days'
//! fixings) is
//!
//! `R_ref = a + beta I_e = R_m + beta (I_e - S_m)`.
//!
//! The hedged item's change is `dR = R_M - R_ref`, the futures change `dF = S_M - F`.
//! For a rent that is exactly `a + beta S`, `dR = beta (S_M - I_e)`: the minimum-
//! variance ratio is `beta` and a `beta` hedge entered at the index offsets every
//! month exactly, whatever the index did inside month `m` (a one-to-one hedge then
//! leaves `(1 - beta) dI`, effectiveness `1 - (1 - beta)^2 / beta^2`). At `beta = 1`
//! the reference is `I_e + b` with `b = R_m - S_m`, the basis last observed.
//!
//! `beta` is the OLS slope of the monthly rent's month-over-month changes on the
//! settlement's (`R_k - R_{k-1}` on `S_k - S_{k-1}` over consecutive complete,
//! settled months), fitted once over the backtest: it describes the hedged item, as a
//! designation would, and is the same for every strategy, so that every strategy is
//! measured against the same rent changes. With fewer than
//! [`MIN_SLOPE_PAIRS`] such pairs, or settlements that never change, `beta = 1`
//! (`summary.json` says which: `reference_slope`, `reference_slope_pairs`). Both
//! `rent` and `S` are monthly averages, so the reference is the same whether the rent
//! file is daily, weekly, monthly or a bill that covers a quarter.
//!
//! Reference: IFRS 9 B6.5.5 (hypothetical derivative); KPMG, "Hedge effectiveness
//! testing" (2016), section 4.

use crate::contract::{month_start, ContractSpec};
use crate::rent::{events_over, Event, RentSeries};
use crate::stats::hedge_ratio::min_variance_hedge_ratio;
use crate::underlying::Underlying;
use chrono::{Days, Months, NaiveDate};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A basis older than this many months at entry is not used as the last observed one.
const MAX_BASIS_AGE_MONTHS: u32 = 3;
/// Tranches of a layered hedge: one put on at each of the three month-ends before
/// the contract month.
pub(crate) const LAYERS: u32 = 3;
/// Fewest consecutive-month change pairs the reference slope is fitted on; below
/// this it is 1.
pub(crate) const MIN_SLOPE_PAIRS: usize = 3;

/// One hedge tranche of a month: put on at the close of `entry_day`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Tranche {
    /// The last day of the 1st, 2nd or 3rd month before the contract month, at whose
    /// close the tranche was put on.
    pub entry_day: NaiveDate,
    /// Index level at entry (mean of the lookback days' fixings), on the tick.
    pub index_level: f64,
    /// The basis last observed at entry, `R_m - S_m`, USD per GPU-hour.
    pub basis: f64,
    /// First day of that basis' month `m`: the latest complete, settled month at most
    /// three months old at entry.
    pub basis_month: NaiveDate,
    /// Month `m`'s rent `R_m`, USD per GPU-hour.
    pub basis_rent: f64,
    /// Month `m`'s settlement `S_m`, USD per GPU-hour.
    pub basis_settlement: f64,
}

impl Tranche {
    /// The rent this tranche locked in at reference slope `beta`:
    /// `R_m + beta (I_e - S_m)`; at `beta = 1`, index level at entry plus the basis.
    pub(crate) fn rent_reference(&self, beta: f64) -> f64 {
        if beta == 1.0 {
            self.index_level + self.basis
        } else {
            self.basis_rent + beta * (self.index_level - self.basis_settlement)
        }
    }
}

/// The reference slope of [`build_periods`]' months and how many month-over-month
/// pairs it was fitted on (0 when it fell back to 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ReferenceSlope {
    /// The slope `beta`; exactly 1 when it fell back or lies within 1e-9 of 1.
    pub beta: f64,
    /// Consecutive-month pairs it was fitted on; 0 when it fell back to 1.
    pub pairs: usize,
}

/// One contract month as the backtest sees it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Period {
    /// First day of the contract month.
    pub start: NaiveDate,
    /// Exclusive.
    pub end: NaiveDate,
    /// Contracted GPU-hours of the month.
    pub exposure: f64,
    /// GPU-hour-weighted average rent, USD per GPU-hour.
    pub rent: f64,
    /// Final settlement of the month's contract, USD per GPU-hour.
    pub settlement: f64,
    /// Tranches put on at the 1st, 2nd and 3rd month-end before the month, those
    /// that had an index level and a basis; the first is always present.
    pub tranches: Vec<Tranche>,
    /// GPU-hours operational events made undeliverable (or unpaid).
    pub lost_gpu_hours: f64,
    /// USD lost to operational events.
    pub operational_loss: f64,
    /// `operational_loss` by event kind.
    pub loss_by_kind: BTreeMap<String, f64>,
    /// Days of the month with a rent.
    pub rent_days: u32,
    /// Why the settlement went to review under the contract's coverage rule (it
    /// settled on its computed value), if it did.
    pub settlement_review: Option<String>,
}

/// A month of the rent file that is not a hedge period, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeftOut {
    /// First day of the month.
    pub month: NaiveDate,
    /// Why it is not a hedge period (or, in `months_in_review`, why it went to review).
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
    /// Why the month's settlement went to review (a `[coverage]` rule), if it did.
    review: Option<String>,
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
    let (Some(first), Some(last)) = (
        rent.periods.iter().map(|p| p.start).min(),
        rent.periods.iter().map(|p| p.end).max(),
    ) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut m = month_start(first);
    while m < last {
        let next = m + Months::new(1);
        let c = rent.over(m, next);
        let outcome = contract.settle_outcome(index, m);
        let review = (outcome.status == crate::settlement_rule::SettlementStatus::Review)
            .then(|| outcome.reason.clone());
        out.push(Month {
            start: m,
            end: next,
            rent_days: c.days,
            days: (next - m).num_days() as u32,
            exposure: c.gpu_hours,
            rent: c.rent,
            settlement: outcome.value.ok_or(outcome.reason),
            review,
        });
        m = next;
    }
    out
}

/// The OLS slope of month-over-month rent changes on settlement changes over
/// consecutive complete, settled months (the module doc); 1 with too few pairs.
fn reference_slope(months: &[Month]) -> ReferenceSlope {
    let (dr, ds): (Vec<f64>, Vec<f64>) = months
        .windows(2)
        .filter(|w| w[0].end == w[1].start)
        .filter_map(|w| match (&w[0].settlement, &w[1].settlement) {
            (Ok(s0), Ok(s1)) if w[0].full() && w[1].full() => {
                Some((w[1].rent - w[0].rent, s1 - s0))
            }
            _ => None,
        })
        .unzip();
    match min_variance_hedge_ratio(&dr, &ds) {
        Some(b) if dr.len() >= MIN_SLOPE_PAIRS && b.is_finite() => ReferenceSlope {
            // A slope within float noise of one is one: a rent that tracks the index
            // keeps the reference `I_e + b` exactly.
            beta: if (b - 1.0).abs() < 1e-9 { 1.0 } else { b },
            pairs: dr.len(),
        },
        _ => ReferenceSlope {
            beta: 1.0,
            pairs: 0,
        },
    }
}

/// The basis last observed at the close of `day`: the latest complete, settled month
/// ending on or before the next day, at most three months old.
fn basis_at(months: &[Month], day: NaiveDate) -> Option<&Month> {
    let oldest = month_start(day) - Months::new(MAX_BASIS_AGE_MONTHS);
    months
        .iter()
        .rev()
        .filter(|m| m.end <= day + Days::new(1) && m.start >= oldest)
        .find_map(|m| m.basis().map(|_| m))
}

/// The hedge periods of a rent against an index, the months left out, and the
/// reference slope the periods' rent changes are measured with.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Periods {
    /// The hedge periods, in month order.
    pub periods: Vec<Period>,
    /// Every other month of the rent, in month order, with the reason.
    pub left_out: Vec<LeftOut>,
    /// The reference slope the rent changes are measured with.
    pub slope: ReferenceSlope,
}

/// Builds the months in which the user has rent on every day, the contract settles
/// and a basis had been observed before entry; every other month of the rent file is
/// listed in `left_out` with the reason.
pub(crate) fn build_periods(
    rent: &RentSeries,
    events: &[Event],
    index: &Underlying,
    contract: &ContractSpec,
) -> Periods {
    let all = months(rent, index, contract);
    let slope = reference_slope(&all);
    let mut periods = Vec::new();
    let mut left_out = Vec::new();
    for m in &all {
        let (lost, loss, by_kind) = events_over(events, m.start, m.end);
        let tranches: Vec<Tranche> = (1..=LAYERS)
            .map_while(|k| {
                let entry_day = m.start - Months::new(k - 1) - Days::new(1);
                let level = contract.entry_level(&index.values, entry_day)?;
                let b = basis_at(&all, entry_day)?;
                let s = b.settlement.as_ref().ok().copied()?;
                Some(Tranche {
                    entry_day,
                    index_level: contract.to_tick(level),
                    basis: b.rent - s,
                    basis_month: b.start,
                    basis_rent: b.rent,
                    basis_settlement: s,
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
                settlement_review: m.review.clone(),
            }),
            (reason, _) => left_out.push(LeftOut {
                month: m.start,
                reason: reason.unwrap_or_default(),
                operational_loss: loss,
            }),
        }
    }
    Periods {
        periods,
        left_out,
        slope,
    }
}
