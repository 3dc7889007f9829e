//! The tier spread: a tier-qualified fixing (`.../gold+`) minus the all-operator
//! fixing of the same grade on the same date, in USD per GPU-hour. It prices what
//! the market pays for operating quality, date by date, and is published beside the
//! fixings as `<stem>_tier_spreads.<ext>`.

use chrono::NaiveDate;
use rentix_core::Grade;
use rentix_fixings::Fixing;
use rentix_table::{Col, Table};
use std::collections::BTreeMap;

/// One date's spread of one tier-qualified grade.
#[derive(Debug, Clone, PartialEq)]
pub struct TierSpread {
    /// The fixing date of both fixings.
    pub date: NaiveDate,
    /// The tier-qualified grade (`GPU/SCOPE/TERM/gold+`).
    pub grade: String,
    /// The same grade over every operator (its tier floor removed).
    pub base_grade: String,
    /// The tier-qualified fixing, USD per GPU-hour.
    pub tier_value: f64,
    /// The all-operator fixing, USD per GPU-hour.
    pub base_value: f64,
    /// `tier_value - base_value`, USD per GPU-hour, rounded to 6 decimals.
    pub spread: f64,
    /// Both fixings were sufficient.
    pub sufficient: bool,
}

/// Spreads of every tier-qualified grade whose base grade has a value that date.
pub fn tier_spreads(fixings: &[Fixing]) -> Vec<TierSpread> {
    let by: BTreeMap<(NaiveDate, &str), &Fixing> = fixings
        .iter()
        .map(|f| ((f.date, f.grade.as_str()), f))
        .collect();
    let mut out = Vec::new();
    for f in fixings {
        let Ok(g) = f.grade.parse::<Grade>() else {
            continue;
        };
        if g.tier_floor.is_none() {
            continue;
        }
        let base = g.clone().with_tier_floor(None).key();
        let (Some(tv), Some(b)) = (f.value, by.get(&(f.date, base.as_str()))) else {
            continue;
        };
        let Some(bv) = b.value else { continue };
        out.push(TierSpread {
            date: f.date,
            grade: f.grade.to_string(),
            base_grade: base.clone(),
            tier_value: tv,
            base_value: bv,
            spread: crate::rounding::round_to(tv - bv, 6),
            sufficient: f.sufficient && b.sufficient,
        });
    }
    out
}

/// `<stem>_tier_spreads.<ext>`: one row per [`TierSpread`], columns named as its
/// fields.
pub fn tier_spreads_table(rows: &[TierSpread]) -> Table {
    let s = |g: &dyn Fn(&TierSpread) -> String| Col::Str(rows.iter().map(|r| Some(g(r))).collect());
    let f = |g: &dyn Fn(&TierSpread) -> f64| Col::F64(rows.iter().map(|r| Some(g(r))).collect());
    let mut t = Table::new();
    t.push("date", Col::dates(rows.iter().map(|r| r.date)));
    t.push("grade", s(&|r| r.grade.clone()));
    t.push("base_grade", s(&|r| r.base_grade.clone()));
    t.push("tier_value", f(&|r| r.tier_value));
    t.push("base_value", f(&|r| r.base_value));
    t.push("spread", f(&|r| r.spread));
    t.push(
        "sufficient",
        Col::Bool(rows.iter().map(|r| Some(r.sufficient)).collect()),
    );
    t
}

/// `<stem>_tier_differentials.<ext>`: the hedonic composites' quality differential
/// per operator-tier step, by date.
pub fn tier_differentials_table(rows: &[crate::composite::TierDifferential]) -> Table {
    let mut t = Table::new();
    t.push("date", Col::dates(rows.iter().map(|r| r.date)));
    t.push(
        "composite",
        Col::Str(rows.iter().map(|r| Some(r.composite.clone())).collect()),
    );
    t.push(
        "log_price_per_tier_step",
        Col::F64(
            rows.iter()
                .map(|r| Some(r.log_price_per_tier_step))
                .collect(),
        ),
    );
    t.push(
        "premium_per_tier_step",
        Col::F64(rows.iter().map(|r| Some(r.premium_per_tier_step)).collect()),
    );
    t.push(
        "n_obs",
        Col::I64(rows.iter().map(|r| Some(r.n_obs as i64)).collect()),
    );
    t
}
