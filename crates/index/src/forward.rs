//! Forward curve per GPU and scope on each date, from the fixings of the on-demand
//! (tenor 0) and reserved-term grades (1w ... 3y): the price of committing today
//! for each tenor.

use chrono::NaiveDate;
use rentix_core::{ContractTerm, Grade};
use rentix_fixings::Fixing;
use serde::{Deserialize, Serialize};

/// One point of a forward curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForwardPoint {
    /// The fixing date the point was read from.
    pub date: NaiveDate,
    /// Canonical GPU id of the grade (`h100-sxm-80gb`).
    pub gpu: String,
    /// Service scope of the grade (`bare-metal`, `vm`, ...).
    pub scope: String,
    /// Contract term of the grade (`on-demand`, `1w` ... `3y`; never `spot`).
    pub term: String,
    /// Tenor in months: 0 for on-demand, 12 for 1y.
    pub tenor_months: f64,
    /// The grade's fixing, USD per GPU-hour (rows without a value make no point).
    pub value: f64,
    /// The fixing's level: 1 trades, 2 firm offers, 3 listings, 4 carried.
    pub level: u8,
    /// The fixing's `sufficient`.
    pub sufficient: bool,
}

/// Builds the curves from grade fixings (region-less grades with a value).
pub fn forward_curves(fixings: &[Fixing]) -> Vec<ForwardPoint> {
    let mut out: Vec<ForwardPoint> = fixings
        .iter()
        .filter_map(|f| {
            let g: Grade = f.grade.parse().ok()?;
            if g.region.is_some() || g.tier_floor.is_some() {
                return None;
            }
            let tenor = match g.term {
                ContractTerm::OnDemand => 0.0,
                ContractTerm::Spot => return None,
                t => t.tenor_months()?,
            };
            Some(ForwardPoint {
                date: f.date,
                gpu: g.gpu.to_string(),
                scope: g.scope.to_string(),
                term: g.term.to_string(),
                tenor_months: (tenor * 1000.0).round() / 1000.0,
                value: f.value?,
                level: f.level?.number(),
                sufficient: f.sufficient,
            })
        })
        .collect();
    out.sort_by(|a, b| {
        (a.date, &a.gpu, &a.scope)
            .cmp(&(b.date, &b.gpu, &b.scope))
            .then(a.tenor_months.total_cmp(&b.tenor_months))
    });
    out
}
