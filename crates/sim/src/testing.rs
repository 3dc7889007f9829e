//! Parameters and helpers shared by the unit tests of this crate.

use crate::params::SimParams;
use chrono::NaiveDate;

/// A date from a literal that is known to be valid.
pub(crate) fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

/// The default parameters over `days` days from `start`.
pub(crate) fn window(start: NaiveDate, days: u32) -> SimParams {
    let mut p = SimParams::default_params();
    p.start = start;
    p.days = days;
    p
}

/// `window`, with a market that only follows its life-cycle trends: no volatility,
/// no jumps, a constant term slope and spot ratio. Prices are then known by hand.
pub(crate) fn quiet(start: NaiveDate, days: u32) -> SimParams {
    let mut p = window(start, days);
    p.market.daily_vol = 0.0;
    p.market.jump_prob = 0.0;
    p.market.term_slope_vol = 0.0;
    p.market.spot_vol = 0.0;
    for g in &mut p.gpu {
        g.daily_vol = None;
    }
    p
}

/// Index of the GPU `id` in `p.gpu`.
pub(crate) fn gpu(p: &SimParams, id: &str) -> usize {
    p.gpu.iter().position(|g| g.id == id).unwrap()
}
