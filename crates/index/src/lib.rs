//! rentix-index: daily fixings per grade under a published methodology.
//!
//! Each fixing says which tier of the IOSCO input hierarchy fixed it (trades, firm
//! offers, listings, or a carried value), how much data stood behind it, how
//! concentrated its contributors were, and whether the methodology's sufficiency
//! rules held. Composites (chained Jevons and Dutot, hedonic time dummy) and forward
//! curves are built from the same run. Output is byte-identical for any input row
//! order and thread count.

mod aggregation;
mod append;
mod composite;
mod contributor_id;
mod contributors;
mod elementary;
mod engine;
mod engine_obs;
mod error;
mod for_publication;
mod forward;
pub mod health;
mod hedonic;
pub mod incremental;
pub mod intraday;
pub mod intraday_append;
pub mod intraday_publish;
pub mod liveness;
#[cfg(test)]
mod liveness_tests;
mod methodology;
mod ols;
mod outliers;
mod output;
mod restatement;
mod rounding;
mod tier_spread;
mod weighted_quantile;

pub use aggregation::{AggParams, Aggregation, TrimCount};
pub use composite::{ChainSeed, TierDifferential};
pub use elementary::{chained, direct, Elementary};
pub use engine::{fix_grade, group_by_grade, Grouped, IndexRequest, PreparedRows, RowPreparer};
pub use engine_obs::{sort_obs, EngineObs, ObsKey, SourceId, Sources};
pub use error::IndexError;
pub use for_publication::{
    carried_through, fix_for_publication, republished_through, uppercase_hint, StoreFixing,
};
pub use forward::{forward_curves, ForwardPoint};
pub use methodology::{
    AggregationSpec, CalendarSpec, CompositeMethod, CompositeSpec, ContributorSpec, FallbackSpec,
    FilterScope, GradeSpec, InputSpec, Methodology, MethodologySpec, OutlierSpec, PerContributor,
    PoolingSpec, RevisionPolicy, RevisionSpec, Roll, RoundingSpec, ThinDays, TooFewForCap,
    WhenShort, WindowUnit,
};
pub use outliers::{FilterParams, OutlierFilter, SigmaScale};
pub use output::{forward_table, read_forward};
pub use restatement::{publish, Publication, Revision, Window};
// The published fixings, re-exported: the engine writes what `rentix-fixings` reads.
pub use rentix_fixings::{
    canonical_sha256, canonical_sha256_text, check_log, check_published, digest_line, digest_path,
    first_published, fixings_table, read_cells, read_digest, read_fixings, read_restatements,
    restatements_path, Companions, Fixing, FixingLevel, FixingsError, Flag, IndexId, IndexUnit,
    Restatement, FIXING_COLUMNS, PLAUSIBLE_VALUES,
};
pub use tier_spread::{tier_differentials_table, tier_spreads, tier_spreads_table, TierSpread};
pub use weighted_quantile::{weighted_median, TieRule};

use composite::composites;
use engine::{fix_all, fixing_dates, GradeGrouper};
use rentix_store::StoredObservation;
use std::collections::BTreeMap;

/// The result of one index run.
#[derive(Debug, Clone, Default)]
pub struct IndexResult {
    /// Every grade's and composite's rows, sorted by date then grade.
    pub fixings: Vec<Fixing>,
    /// The forward curves' points (empty unless the methodology's `forward_curve`).
    pub forward: Vec<ForwardPoint>,
    /// The hedonic composites' quality differential per operator-tier step, by date.
    pub tier_differentials: Vec<TierDifferential>,
    /// Stored trades left out for being smaller than `inputs.min_trade_gpu_hours`.
    pub below_clip: usize,
    /// The chained and hedonic composites' unrounded level on each of their rows, by
    /// name: what an incremental run continues from ([`incremental`]).
    pub levels: BTreeMap<String, Vec<(chrono::NaiveDate, f64)>>,
    /// The slices of the store the run read one after the other (1: in one pass;
    /// see [`incremental::compute_in_slices`]).
    pub slices: usize,
}

/// The day a run must fix through although no observation reaches it (a feed
/// outage on the publication day): `to` if it is later than every partition the
/// store's `runs` committed, but never later than `today` (a date to come is not an
/// outage: its rows would be carried values published ahead of time).
pub fn past_the_store(
    runs: &[rentix_store::IngestSummary],
    to: Option<chrono::NaiveDate>,
    today: chrono::NaiveDate,
) -> Option<chrono::NaiveDate> {
    let last = rentix_store::fixing_dates_of(runs).map(|(_, last)| last);
    to.map(|t| t.min(today))
        .filter(|t| last.is_none_or(|l| *t > l))
}

/// Computes fixings, composites and forward curves from store observations.
pub fn compute(rows: &[StoredObservation], req: &IndexRequest) -> Result<IndexResult, IndexError> {
    let mut fixer = Fixer::new(req)?;
    fixer.add(rows)?;
    fixer.finish()
}

/// [`compute`] fed its rows a part at a time, in the order it would read them
/// whole (by fixing date, each date's rows in a store partition's order): the
/// same result, and the engine keeps what it fixes from, never every row. The
/// one-shot fixes its files' rows so a date at a time, as they are deduplicated.
pub struct Fixer<'a> {
    grouper: GradeGrouper<'a>,
    req: &'a IndexRequest,
}

impl<'a> Fixer<'a> {
    /// A fixer of `req`; fails when the methodology's grade patterns, calendar or
    /// contributor aliases do not parse.
    pub fn new(req: &'a IndexRequest) -> Result<Self, IndexError> {
        Ok(Self {
            grouper: GradeGrouper::new(req, req.methodology.cutoff_clock())?,
            req,
        })
    }

    /// Adds rows, after those added before.
    pub fn add<'r>(
        &mut self,
        rows: impl IntoIterator<Item = &'r StoredObservation>,
    ) -> Result<(), IndexError> {
        self.grouper.add(rows)
    }

    /// What prepares rows for [`Self::add_prepared`] on other threads (owned: it
    /// does not borrow the fixer).
    pub fn preparer(&self) -> RowPreparer {
        self.grouper.preparer()
    }

    /// Adds rows [`Self::preparer`] prepared, after those added before: what
    /// [`Self::add`] of the same rows does.
    pub fn add_prepared(&mut self, rows: PreparedRows) -> Result<(), IndexError> {
        self.grouper.add_prepared(rows)
    }

    /// Fixes what was added.
    pub fn finish(self) -> Result<IndexResult, IndexError> {
        compute_grouped(self.grouper.finish(), self.req)
    }
}

/// [`compute`] over a whole store, read a few partitions at a time and only the
/// columns fixing reads, the repeated text as codes ([`rentix_store::FixingPart`]):
/// memory holds the engine's rows and those partitions, never every stored
/// observation at once. The result is [`compute`]'s on the store's rows (tested).
///
/// A store of more than [`incremental::SLICE_ROWS`] observations is fixed a slice
/// of months at a time ([`incremental::compute_in_slices`]), so that memory holds a
/// slice's observations and their look-back, not the history's.
pub fn compute_from_store(
    store: &rentix_store::Store,
    req: &IndexRequest,
) -> Result<IndexResult, IndexError> {
    incremental::compute_in_slices(store, req, incremental::SLICE_ROWS)
}

/// [`compute_from_store`] on the partitions of fixing dates `from..=to` only, the
/// chained composites continued from `seeds`: the incremental run's read
/// ([`incremental::Plan`]).
pub fn compute_from_partitions(
    store: &rentix_store::Store,
    req: &IndexRequest,
    partitions: Option<(chrono::NaiveDate, Option<chrono::NaiveDate>)>,
    seeds: Option<&BTreeMap<String, ChainSeed>>,
) -> Result<IndexResult, IndexError> {
    compute_read(store, req, partitions, seeds, (None, None))
}

/// [`compute_from_partitions`], counting the clipped trades of the fixing days
/// `counted` only.
pub(crate) fn compute_read(
    store: &rentix_store::Store,
    req: &IndexRequest,
    partitions: Option<(chrono::NaiveDate, Option<chrono::NaiveDate>)>,
    seeds: Option<&BTreeMap<String, ChainSeed>>,
    counted: (Option<chrono::NaiveDate>, Option<chrono::NaiveDate>),
) -> Result<IndexResult, IndexError> {
    let clock = req.methodology.cutoff_clock();
    let new_grouper = || {
        GradeGrouper::new(req, clock).map(|mut g| {
            g.count_clipped_within(counted.0, counted.1);
            g
        })
    };
    let mut grouper = new_grouper()?;
    let mut bad = Ok(());
    let (from, to) = match partitions {
        Some((from, to)) => (Some(from), to),
        None => (None, None),
    };
    store.for_each_fixing_part(from, to, |delivery| match delivery {
        rentix_store::Delivery::Part(part) => {
            if bad.is_ok() {
                bad = grouper.add_part(&part);
            }
        }
        // A compaction replaced files under the read: start again.
        rentix_store::Delivery::Again => {
            bad = new_grouper().map(|g| grouper = g);
        }
    })?;
    bad?;
    rentix_core::phases::mark("index: store read, grouped by grade");
    compute_seeded(grouper.finish(), req, seeds)
}

/// [`compute`] on observations already grouped ([`group_by_grade`], or the
/// crate's grade grouper fed one store partition at a time).
pub fn compute_grouped(grouped: Grouped, req: &IndexRequest) -> Result<IndexResult, IndexError> {
    compute_seeded(grouped, req, None)
}

fn compute_seeded(
    grouped: Grouped,
    req: &IndexRequest,
    seeds: Option<&BTreeMap<String, ChainSeed>>,
) -> Result<IndexResult, IndexError> {
    let below_clip = grouped.below_clip;
    let groups = grouped.grades;
    let m = &req.methodology;
    let rule = m.day_rule();
    let dates = fixing_dates(&groups, req, rule);
    let mut fixings = fix_all(&groups, &dates, m, rule);
    rentix_core::phases::mark("index: grades fixed");
    // The forward curves and the composites read the fixings and nothing else
    // of each other: worked out side by side.
    let (forward, (chain, levels)) = rayon::join(
        || {
            if m.forward_curve {
                forward_curves(&fixings)
            } else {
                Vec::new()
            }
        },
        || composites(&groups, &fixings, &dates, m, rule, seeds),
    );
    rentix_core::phases::mark("index: composites, forward curves");
    fixings.extend(chain.rows);
    fixings.sort_by(|a, b| (a.date, &a.grade).cmp(&(b.date, &b.grade)));
    rentix_core::phases::mark("index: sorted");
    Ok(IndexResult {
        fixings,
        forward,
        tier_differentials: chain.tiers,
        below_clip,
        levels,
        slices: 1,
    })
}
