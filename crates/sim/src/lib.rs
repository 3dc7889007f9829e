//! rentix-sim: a synthetic GPU rental market whose true prices are known.
//!
//! GPUs with life cycles (launch high, decay as supply grows and successors land,
//! mean reversion, clustered volatility, jumps), a term structure and scope premia;
//! providers of four kinds and five operator tiers publishing listings, firm offers
//! and trades; users paying or earning rent with operational events; and the noise
//! of a real feed. Writes the canonical observations CSV, `truth.csv`, rent and
//! event files and a manifest. Same seed and parameters, same bytes, any thread count.

mod error;
mod market;
mod observations;
mod operators;
mod params;
mod providers;
mod rng;
mod simulate;
#[cfg(test)]
mod testing;
mod users;

pub use error::SimError;
pub use market::Market;
pub use params::{GpuLifeCycle, MarketParams, NoiseParams, RentLeg, SimParams, UserParams};
pub use simulate::{simulate, Manifest};
