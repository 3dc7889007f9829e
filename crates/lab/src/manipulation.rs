//! Manipulation cost: the smallest fake volume (trades) or fake listings one
//! contributor must add at a chosen price to move a month's settlement by one tick,
//! 1% and 5%, and the move one contributor causes by withholding its observations.
//!
//! Every amount is found by running the real engine and settlement rule on the
//! month's observations with the fake ones added ([`GradeMarket::settle`]): a
//! doubling search for the first amount that moves the settlement far enough,
//! refined by bisection. A response that is not monotone in the amount (a level
//! switching in the hierarchy, say) may hide a smaller amount than the one found; an
//! attack that makes the month fail to settle counts as no move.
//!
//! The manipulator is one new contributor, quoting `attack_price_pct` above the
//! month's honest settlement on every day whose observations feed a fixing the
//! settlement uses (all month for a monthly average, the last window for a final
//! fixing). Fake trades on a day are a multiple `r` of that day's real trade volume
//! (the month's mean daily volume on a day without trades); the reported share is
//! the fake volume over the month's real trade volume. Fake listings are `n` a day;
//! the reported amount is the month's total.

use crate::market::{Change, GradeMarket};
use chrono::NaiveDate;
use rentix_core::ObservationKind;
use rentix_index::{EngineObs, ObsKey, SourceId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use strum::VariantArray;

/// The manipulator's contributor name.
pub(crate) const MANIPULATOR: &str = "lab-manipulator";

/// The manipulator's contributor id: past every real contributor's (ids number the
/// store's contributors from 0 in name order).
pub(crate) const MANIPULATOR_ID: SourceId = SourceId(u32::MAX);
/// Largest multiple of the real trade volume searched.
pub const MAX_FAKE_RATIO: f64 = 10.0;
/// Largest number of fake listings a day searched.
pub const MAX_FAKE_LISTINGS_PER_DAY: usize = 128;
/// Bisection steps after the doubling search (a relative precision of about 0.1%).
const BISECTION_STEPS: usize = 10;

/// The moves searched for: one tick, 1% and 5% of the honest settlement.
///
/// Its column suffix ([`Target::as_str`]) is not its serde name (`one-pct`) but for
/// `tick`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "kebab-case")]
pub(crate) enum Target {
    /// One tick of the contract.
    Tick,
    /// 1% of the honest settlement.
    #[strum(to_string = "1pct")]
    OnePct,
    /// 5% of the honest settlement.
    #[strum(to_string = "5pct")]
    FivePct,
}

impl Target {
    /// The three, in the order of `MonthAttack`'s arrays.
    pub(crate) const ALL: [Self; Self::VARIANTS.len()] = match Self::VARIANTS.first_chunk() {
        Some(all) => *all,
        None => unreachable!(),
    };

    /// The suffix `by_month.csv`'s columns use: `tick`, `1pct`, `5pct`.
    pub(crate) fn as_str(self) -> &'static str {
        self.into()
    }

    /// The move, USD per GPU-hour, on a settlement of `base`.
    pub(crate) fn size(self, base: f64, tick: f64) -> f64 {
        match self {
            Target::Tick => tick,
            Target::OnePct => 0.01 * base.abs(),
            Target::FivePct => 0.05 * base.abs(),
        }
    }
}

/// What a search found.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "outcome", content = "amount")]
pub enum Found {
    /// The smallest amount found that moves the settlement that far.
    Moved(f64),
    /// No amount up to the search's bound does.
    Unreachable,
    /// The attack is not defined for this month (fake trades in a month without
    /// real trades have no share).
    Undefined,
}

impl Found {
    /// The amount when the settlement moved, else `None`.
    pub fn amount(self) -> Option<f64> {
        match self {
            Found::Moved(x) => Some(x),
            _ => None,
        }
    }
}

/// One month's manipulation results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MonthAttack {
    /// First day of the month.
    pub month: NaiveDate,
    /// The honest settlement.
    pub settlement: f64,
    /// The manipulator's price, USD per GPU-hour: the honest settlement plus
    /// `attack_price_pct` percent.
    pub attack_price: f64,
    /// Fake trade volume over the month's real trade volume, per target.
    pub fake_share: [Found; 3],
    /// Fake listings over the month, per target.
    pub fake_listings: [Found; 3],
    /// The settlement's move (percent) with fake trades at the search's bound.
    pub max_move_pct_trades: Option<f64>,
    /// The settlement's move (percent) with fake listings at the search's bound.
    pub max_move_pct_listings: Option<f64>,
    /// The withholding contributor's share of the month's volume (trades; listings
    /// and offers counted one each when the month has no trades).
    pub withholder_share: Option<f64>,
    /// Absolute move of the settlement (percent) when that contributor withholds.
    pub withholding_move_pct: Option<f64>,
    /// Withholding leaves the month unable to settle.
    pub withholding_unsettles: bool,
}

fn fake(kind: ObservationKind, day: NaiveDate, price: f64, qty: f64, i: usize) -> EngineObs {
    EngineObs {
        day,
        kind,
        source: MANIPULATOR_ID,
        price,
        quantity: if kind == ObservationKind::Trade {
            qty
        } else {
            0.0
        },
        key: ObsKey::digest(&format!("{MANIPULATOR}:{}:{day}:{i}", kind.as_str())),
        tier: None,
    }
}

/// Searches the smallest amount in `grid` (increasing; its last point is the
/// search's bound) whose move reaches each target, refining between grid points
/// with `mid`; `moved(x)` is the absolute move at amount `x`. Returns the amounts
/// (`None`: not reached at the bound) and the move at the bound.
fn search(
    grid: &[f64],
    targets: &[f64; 3],
    mid: impl Fn(f64, f64) -> Option<f64>,
    moved: impl Fn(f64) -> f64,
) -> ([Option<f64>; 3], f64) {
    let mut out = [None; 3];
    let Some(&bound) = grid.last() else {
        return (out, 0.0);
    };
    let at_bound = moved(bound);
    let reachable: Vec<usize> = (0..3).filter(|&k| at_bound >= targets[k]).collect();
    if reachable.is_empty() {
        return (out, at_bound);
    }
    let mut seen: Vec<(f64, f64)> = Vec::new();
    for &x in &grid[..grid.len() - 1] {
        let m = moved(x);
        seen.push((x, m));
        if reachable.iter().all(|&k| m >= targets[k]) {
            break;
        }
    }
    seen.push((bound, at_bound));
    for k in reachable {
        let t = targets[k];
        let Some(pos) = seen.iter().position(|(_, m)| *m >= t) else {
            continue;
        };
        let mut hi = seen[pos].0;
        let mut lo = if pos == 0 { 0.0 } else { seen[pos - 1].0 };
        for _ in 0..BISECTION_STEPS {
            let Some(x) = mid(lo, hi) else { break };
            if moved(x) >= t {
                hi = x;
            } else {
                lo = x;
            }
        }
        out[k] = Some(hi);
    }
    (out, at_bound)
}

/// Runs every attack on one month whose honest settlement is `base`.
pub fn attack_month(
    market: &GradeMarket<'_>,
    month: NaiveDate,
    base: &crate::market::Settled,
    attack_price_pct: f64,
) -> MonthAttack {
    let tick = market.contract.tick;
    let from = market.slice_start(month);
    let attack = Attack {
        market,
        month,
        base: base.value,
        price: base.value * (1.0 + attack_price_pct / 100.0),
        targets: Target::ALL.map(|t| t.size(base.value, tick) - 1e-9),
        days: market
            .window_days(&base.used)
            .into_iter()
            .filter(|d| *d >= from)
            .collect(),
    };
    let volume = attack.trade_volume();
    let (fake_share, max_move_pct_trades) = attack.fake_trades_search(&volume);
    let (fake_listings, max_move_pct_listings) = attack.fake_listings_search();
    let (withholder_share, withholding_move_pct, withholding_unsettles) =
        attack.withholding(volume.month > 0.0);
    MonthAttack {
        month,
        settlement: base.value,
        attack_price: attack.price,
        fake_share,
        fake_listings,
        max_move_pct_trades,
        max_move_pct_listings,
        withholder_share,
        withholding_move_pct,
        withholding_unsettles,
    }
}

/// One month under attack: what every attack on it shares.
struct Attack<'a, 'm> {
    market: &'a GradeMarket<'m>,
    /// First day of the month.
    month: NaiveDate,
    /// The honest settlement, USD per GPU-hour.
    base: f64,
    /// The manipulator's price, USD per GPU-hour.
    price: f64,
    /// The moves searched for ([`Target::ALL`]), USD per GPU-hour, less 1e-9.
    targets: [f64; 3],
    /// The days whose observations feed a fixing the settlement uses, from the
    /// month's slice start on.
    days: Vec<NaiveDate>,
}

/// Real trade volume of a month (GPU-hours).
struct TradeVolume {
    /// Over the calendar month.
    month: f64,
    /// On each of the attack's days; the month's mean daily volume on a day
    /// without trades.
    by_day: Vec<f64>,
}

/// What a search returns: the amount per target, and the move (percent) at the
/// search's bound.
type Searched = ([Found; 3], Option<f64>);

impl Attack<'_, '_> {
    /// The absolute move of the settlement under `change`; 0 when the month fails
    /// to settle.
    fn move_of(&self, change: Change<'_>) -> f64 {
        self.market
            .settle(self.month, change)
            .map_or(0.0, |s| (s.value - self.base).abs())
    }

    /// A move as a percentage of the honest settlement.
    fn pct_of(&self, mv: f64) -> f64 {
        100.0 * mv / self.base.abs().max(f64::MIN_POSITIVE)
    }

    /// Real trade volume by day, and over the calendar month.
    fn trade_volume(&self) -> TradeVolume {
        let month_end = GradeMarket::month_end(self.month);
        let mut volume_by_day: BTreeMap<NaiveDate, f64> = BTreeMap::new();
        for o in self.market.slice(self.month) {
            if o.kind == ObservationKind::Trade {
                *volume_by_day.entry(o.day).or_default() += o.quantity;
            }
        }
        let month: f64 = volume_by_day
            .range(self.month..=month_end)
            .map(|(_, v)| v)
            .sum();
        let mean_daily = month / f64::from(GradeMarket::days_in_month(self.month));
        let by_day = self
            .days
            .iter()
            .map(|d| {
                volume_by_day
                    .get(d)
                    .copied()
                    .filter(|v| *v > 0.0)
                    .unwrap_or(mean_daily)
            })
            .collect();
        TradeVolume { month, by_day }
    }

    /// Fake trades at `r` times each day's real volume.
    fn fake_trades(&self, volume: &TradeVolume, r: f64) -> Vec<EngineObs> {
        self.days
            .iter()
            .zip(&volume.by_day)
            .enumerate()
            .map(|(i, (d, v))| fake(ObservationKind::Trade, *d, self.price, r * v, i))
            .collect()
    }

    /// `n` fake listings on each day.
    fn fake_listings(&self, n: usize) -> Vec<EngineObs> {
        self.days
            .iter()
            .flat_map(|d| (0..n).map(move |i| (*d, i)))
            .enumerate()
            .map(|(i, (d, _))| fake(ObservationKind::Listing, d, self.price, 0.0, i))
            .collect()
    }

    /// The smallest fake trade volume (share of the month's real volume) that
    /// reaches each target: undefined in a month without real trades.
    fn fake_trades_search(&self, volume: &TradeVolume) -> Searched {
        let defined = volume.month > 0.0 && !self.days.is_empty();
        if !defined {
            return ([Found::Undefined; 3], None);
        }
        let share_of = |r: f64| r * volume.by_day.iter().sum::<f64>() / volume.month;
        let mut grid: Vec<f64> = (0..14).map(|k| 0.001 * f64::powi(2.0, k)).collect();
        grid.push(MAX_FAKE_RATIO);
        let (found, last) = search(
            &grid,
            &self.targets,
            |lo, hi| Some(if lo > 0.0 { (lo * hi).sqrt() } else { hi / 2.0 }),
            |r| self.move_of(Change::Add(&self.fake_trades(volume, r))),
        );
        (
            found.map(|f| f.map_or(Found::Unreachable, |r| Found::Moved(share_of(r)))),
            Some(self.pct_of(last)),
        )
    }

    /// The smallest number of fake listings over the month that reaches each
    /// target.
    fn fake_listings_search(&self) -> Searched {
        if self.days.is_empty() {
            return ([Found::Undefined; 3], None);
        }
        let grid: Vec<f64> = (0..8).map(|k| f64::from(1u32 << k)).collect();
        debug_assert_eq!(grid.last(), Some(&(MAX_FAKE_LISTINGS_PER_DAY as f64)));
        let (found, last) = search(
            &grid,
            &self.targets,
            |lo, hi| {
                let m = ((lo + hi) / 2.0).floor();
                (m > lo && m < hi).then_some(m)
            },
            |n| self.move_of(Change::Add(&self.fake_listings(n as usize))),
        );
        let days = self.days.len() as f64;
        (
            found.map(|f| f.map_or(Found::Unreachable, |n| Found::Moved(n * days))),
            Some(self.pct_of(last)),
        )
    }

    /// The month's largest contributor and its share: of trade volume when
    /// `use_volume`, else of observations counted one each.
    fn largest_contributor(&self, use_volume: bool) -> Option<(SourceId, f64)> {
        let month_end = GradeMarket::month_end(self.month);
        let mut by_source: BTreeMap<SourceId, f64> = BTreeMap::new();
        let in_month = self
            .market
            .slice(self.month)
            .iter()
            .filter(|o| o.day >= self.month && o.day <= month_end);
        for o in in_month {
            if use_volume && o.kind != ObservationKind::Trade {
                continue;
            }
            *by_source.entry(o.source).or_default() += if use_volume { o.quantity } else { 1.0 };
        }
        let total: f64 = by_source.values().sum();
        by_source
            .iter()
            .max_by(|a, b| a.1.total_cmp(b.1).then(b.0.cmp(a.0)))
            .map(|(s, v)| (*s, v / total.max(f64::MIN_POSITIVE)))
    }

    /// The largest contributor of the month withholds everything on the days that
    /// feed the settlement: (its share, the move in percent, the month unsettled).
    fn withholding(&self, use_volume: bool) -> (Option<f64>, Option<f64>, bool) {
        let Some((source, share)) = self.largest_contributor(use_volume) else {
            return (None, None, false);
        };
        match self
            .market
            .settle(self.month, Change::Withhold(source, &self.days))
        {
            Ok(s) => (
                Some(share),
                Some(self.pct_of((s.value - self.base).abs())),
                false,
            ),
            Err(_) => (Some(share), None, true),
        }
    }
}

/// Median of amounts over months, unreachable months counted above every reachable
/// one and undefined months left out: `(median, unreachable months)`, the median
/// `None` when it falls on an unreachable month or no month is defined.
pub(crate) fn median_found(found: impl Iterator<Item = Found>) -> (Option<f64>, usize) {
    let mut v: Vec<f64> = Vec::new();
    let mut unreachable = 0;
    for f in found {
        match f {
            Found::Moved(x) => v.push(x),
            Found::Unreachable => {
                unreachable += 1;
                v.push(f64::INFINITY);
            }
            Found::Undefined => {}
        }
    }
    (
        crate::stats::median(&v).filter(|m| m.is_finite()),
        unreachable,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_finds_a_linear_threshold() {
        // move = x, targets 0.1, 0.5, 20 on a doubling grid up to 10.
        let grid: Vec<f64> = (0..14).map(|k| 0.001 * f64::powi(2.0, k)).collect();
        let (f, last) = search(
            &grid,
            &[0.1, 0.5, 20.0],
            |lo, hi| Some(if lo > 0.0 { (lo * hi).sqrt() } else { hi / 2.0 }),
            |x| x,
        );
        assert!((f[0].unwrap() - 0.1).abs() < 0.1 * 0.002);
        assert!((f[1].unwrap() - 0.5).abs() < 0.5 * 0.002);
        assert_eq!(f[2], None);
        assert_eq!(last, 8.192);
        // A target reached only at the bound is found between the last two points.
        let (f, _) = search(
            &[1.0, 2.0, 10.0],
            &[5.0, 5.0, 50.0],
            |lo, hi| Some((lo + hi) / 2.0),
            |x| x,
        );
        assert!((f[0].unwrap() - 5.0).abs() < 0.01);
    }

    #[test]
    fn medians_count_unreachable_months_as_the_largest() {
        let (m, u) =
            median_found([Found::Moved(1.0), Found::Unreachable, Found::Moved(3.0)].into_iter());
        assert_eq!((m, u), (Some(3.0), 1));
        let (m, u) = median_found([Found::Unreachable, Found::Undefined].into_iter());
        assert_eq!((m, u), (None, 1));
    }
}

#[cfg(test)]
mod text_tests {
    use super::*;

    /// Every variant's column suffix as published before it was derived
    /// (`by_month.csv`), and its serde name: the two differ but for `tick`.
    const TEXT: [(Target, &str, &str); 3] = [
        (Target::Tick, "tick", "tick"),
        (Target::OnePct, "1pct", "one-pct"),
        (Target::FivePct, "5pct", "five-pct"),
    ];

    #[test]
    fn text_forms_are_pinned_and_serde_names_too() {
        assert_eq!(Target::ALL.map(|t| t.as_str()), TEXT.map(|t| t.1));
        for (t, text, serde_name) in TEXT {
            assert_eq!(t.as_str(), text);
            assert_eq!(serde_json::to_value(t).unwrap(), serde_name);
            assert_eq!(
                serde_json::from_value::<Target>(serde_name.into()).unwrap(),
                t
            );
        }
    }
}
