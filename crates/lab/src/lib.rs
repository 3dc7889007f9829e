//! rentix-lab: is an index fit to settle a futures contract, and which candidate
//! design (grade, methodology, settlement rule) is best?
//!
//! Each candidate is a methodology and a contract. Over the store's history the lab
//! measures how well the index is fed (levels, carried days, unsettled months,
//! contributors, concentration), what it costs one contributor to move a settlement
//! (fake trades or listings, searched with the real engine) or to move it by
//! withholding, how close settlements sit to the truth of a simulated market and to
//! the month's observations, how well real rents would hedge on it (the backtester),
//! and the contract's economics.

mod candidate;
mod comparison;
mod error;
mod evaluate;
mod hedgers;
mod manipulation;
mod market;
mod run;
mod stats;
mod truth;
mod verdict;

pub use candidate::{check_names, Candidate};
pub use comparison::{write, CandidateRow, Comparison, MonthRow};
pub use error::LabError;
pub use evaluate::{evaluate, Evaluation, LabOptions};
pub use hedgers::{read_hedgers, Hedger, HedgerResult};
pub use manipulation::{
    attack_month, Found, MonthAttack, MAX_FAKE_LISTINGS_PER_DAY, MAX_FAKE_RATIO,
};
pub use market::{Change, GradeMarket, Settled};
pub use run::{run_on_store, LabRun};
pub use truth::read_truth;
pub use verdict::{utility_verdict, UtilityVerdict};
