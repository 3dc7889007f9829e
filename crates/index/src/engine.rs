//! The index engine: observations in, one [`Fixing`] per grade and date out.
//!
//! For each grade and fixing date `D`, the window is the `window_days` days (calendar
//! or publication days) ending `lag_days` before `D`. Each input kind of the
//! hierarchy is evaluated: its observations in the window (days thinner than
//! `min_obs_per_day` kept or dropped; a contributor missing from the window carried
//! from its last day when the methodology allows) are filtered for outliers (per day
//! or pooled), optionally reduced to one median per contributor, weighted (GPU-hours
//! for trades, 1 for offers and listings, one vote per contributor in two-stage
//! mode), capped per contributor, and aggregated.
//!
//! A level is **accepted** when it meets every sufficiency rule: `min_obs`
//! observations, `min_valid_days` valid days, `min_volume_gpu_hours`,
//! `min_contributors` and `max_concentration`. The first accepted level in hierarchy
//! order fixes the grade (`sufficient = true`); a level that fails falls through to
//! the next, and the failure is flagged (`trade_failed=few_contributors`). With no
//! level accepted, the first level whose only failures the methodology publishes
//! (`short_window`, `below_minimum` = `publish-flagged`) is published as low
//! confidence; otherwise the last value is carried forward for a bounded number of
//! days. A listing-based value is multiplied by the median trade/listing ratio of
//! recent days that had both.

use crate::aggregation::{aggregate, Aggregation};
use crate::contributor_id::ContributorAliases;
use crate::contributors::{cap_weights, cap_weights_proportional, sums_by};
use crate::engine_obs::{keys_sha256, sort_obs, EngineObs, Interner, ObsKey, SourceId, Sources};
use crate::error::IndexError;
use crate::methodology::{
    FilterScope, Methodology, PerContributor, Roll, ThinDays, TooFewForCap, WhenShort,
};
use crate::outliers::keep;
use crate::rounding::round_to;
use crate::weighted_quantile::{sorted_pairs, weighted_quantile_sorted, TieRule};
use chrono::{Days, NaiveDate};
use rayon::prelude::*;
use rentix_core::stats::median;
use rentix_core::{DayRule, FixingClock, Grade, GradePattern, ObservationKind, OperatorTier};
use rentix_fixings::Flag;
use rentix_fixings::{Fixing, FixingLevel, IndexId};
use rentix_store::{FixingPart, StoredObservation};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// What to fix and over which dates.
#[derive(Debug, Clone)]
pub struct IndexRequest {
    /// The rules every fixing of the run follows.
    pub methodology: Methodology,
    /// Extra grade filters from the command line (all grades when empty).
    pub grade_filters: Vec<GradePattern>,
    /// First fixing date to fix; `None`: the first observation day.
    pub from: Option<NaiveDate>,
    /// Last fixing date to fix, even past the last observation day (a feed outage
    /// still gets its carried rows); `None`: the last observation day plus the lag.
    pub to: Option<NaiveDate>,
}

/// Observations grouped by the grades a methodology fixes, each grade sorted as
/// [`fix_grade`] expects, and the contributor names their [`SourceId`]s stand for.
#[derive(Debug, Clone, Default)]
pub struct Grouped {
    /// Grade key (`GPU/SCOPE/TERM`, with `@region` or `/tier+` for the regional and
    /// tier-qualified grades) -> its observations, in [`sort_obs`] order; a grade
    /// without observations has no entry.
    pub grades: BTreeMap<String, Vec<EngineObs>>,
    /// The contributor names the observations' [`SourceId`]s number.
    pub sources: Sources,
    /// Stored trades left out for being smaller than `inputs.min_trade_gpu_hours`.
    pub below_clip: usize,
}

/// Groups store observations by the grades the methodology fixes, with fixing dates
/// recomputed under the methodology's cut-off.
pub fn group_by_grade(
    rows: &[StoredObservation],
    req: &IndexRequest,
    clock: &FixingClock,
) -> Result<Grouped, IndexError> {
    let mut g = GradeGrouper::new(req, *clock)?;
    g.add(rows)?;
    Ok(g.finish())
}

/// The grades (positions in [`GradeGrouper`]'s list) that observations of one
/// operator tier feed.
type TierSlots = (Option<OperatorTier>, Vec<usize>);

/// [`group_by_grade`] fed a batch at a time: reading a store partition by partition
/// and keeping only the engine's own rows holds a fraction of the memory of every
/// stored observation at once. The result does not depend on how rows are batched.
pub(crate) struct GradeGrouper<'a> {
    req: &'a IndexRequest,
    clock: FixingClock,
    patterns: Vec<GradePattern>,
    rule: DayRule,
    roll: bool,
    /// The grades an observation of a grade by an operator of a tier feeds, as
    /// positions in `grades`: worked out once per distinct pair, not once per row.
    targets: HashMap<Grade, Vec<TierSlots>, foldhash::fast::FixedState>,
    grades: Vec<(String, Vec<EngineObs>)>,
    slot_of: HashMap<String, usize, foldhash::fast::FixedState>,
    sources: Interner,
    below_clip: usize,
    /// The days whose clipped trades `below_clip` counts (open ends: every day).
    counted: (Option<NaiveDate>, Option<NaiveDate>),
}

impl<'a> GradeGrouper<'a> {
    /// An empty grouper for `req`, fixing dates worked out on `clock`; fails when
    /// the methodology's grade patterns, calendar or contributor aliases do not
    /// parse.
    pub(crate) fn new(req: &'a IndexRequest, clock: FixingClock) -> Result<Self, IndexError> {
        Ok(Self {
            req,
            clock,
            patterns: req.methodology.patterns().to_vec(),
            rule: req.methodology.day_rule().clone(),
            roll: req.methodology.calendar.roll == Roll::NextPublicationDay,
            targets: HashMap::default(),
            grades: Vec::new(),
            slot_of: HashMap::default(),
            sources: Interner::new(
                ContributorAliases::with(&req.methodology.contributors.aliases)
                    .map_err(IndexError::Config)?,
            ),
            below_clip: 0,
            counted: (None, None),
        })
    }

    /// Counts in [`Grouped::below_clip`] only the clipped trades of fixing days
    /// `from..=to` (the days a slice of a run owns: see
    /// [`crate::incremental::compute_in_slices`]); every day by default.
    pub(crate) fn count_clipped_within(&mut self, from: Option<NaiveDate>, to: Option<NaiveDate>) {
        self.counted = (from, to);
    }

    /// The grades (keys) an observation of `grade` by an operator of `tier` feeds.
    fn grades_fed(&self, grade: &Grade, tier: Option<OperatorTier>) -> Vec<String> {
        let (req, patterns) = (self.req, &self.patterns);
        let base = grade.clone().with_region(None);
        let mut grades = vec![base.clone()];
        if req.methodology.grades.regional && grade.region.is_some() {
            grades.push(grade.clone());
        }
        // Tier-qualified grades take the observations of operators rated at or above
        // the floor (tiers order best first); unrated observations never qualify.
        if let Some(t) = tier {
            for &floor in &req.methodology.grades.tier_floors {
                if t <= floor && patterns.iter().any(|p| p.matches(&base)) {
                    grades.push(base.clone().with_tier_floor(Some(floor)));
                }
            }
        }
        grades
            .into_iter()
            .filter(|g| {
                // A tier grade is wanted when its base grade is (checked above), and
                // the command-line filters name it or its base.
                let base_of = g.clone().with_tier_floor(None);
                let listed = |pats: &[GradePattern]| {
                    pats.iter()
                        .any(|p| p.matches(g) || (g.tier_floor.is_some() && p.matches(&base_of)))
                };
                (g.tier_floor.is_some() || patterns.iter().any(|p| p.matches(g)))
                    && (req.grade_filters.is_empty() || listed(&req.grade_filters))
            })
            .map(|g| g.key())
            .collect()
    }

    /// Adds a batch of store rows. Fails on a dedupe key that is not the store's
    /// 32 hexadecimal digits (a store edited by hand).
    pub(crate) fn add<'r>(
        &mut self,
        rows: impl IntoIterator<Item = &'r StoredObservation>,
    ) -> Result<(), IndexError> {
        let prepared = self.preparer().prepare(rows);
        self.add_prepared(prepared)
    }

    /// What works out a batch's engine rows apart from the grouper ([`Self::add`]
    /// is its [`RowPreparer::prepare`] and then [`Self::add_prepared`]), so that
    /// batches are prepared on other threads while the grouper takes earlier ones.
    pub(crate) fn preparer(&self) -> RowPreparer {
        RowPreparer {
            clock: self.clock,
            rule: self.rule.clone(),
            roll: self.roll,
            min_trade: self.req.methodology.inputs.min_trade_gpu_hours,
            counted: self.counted,
        }
    }

    /// Adds a batch prepared by [`Self::preparer`]: the rows of each run of one
    /// grade and tier go to the grades that run feeds (looked up once per run),
    /// contributors numbered as they are first added. Fails where [`Self::add`]
    /// fails, on the same row.
    pub(crate) fn add_prepared(&mut self, mut batch: PreparedRows) -> Result<(), IndexError> {
        let mut ids: Vec<Option<u32>> = vec![None; batch.names.len()];
        let mut start = 0;
        for run in &batch.runs {
            let (first, end) = (start, run.end);
            start = end;
            let slots = self.slots_fed(&run.grade, run.tier);
            if slots.is_empty() {
                continue;
            }
            for (at, r) in batch.rows[first..end].iter().enumerate() {
                match r.clip {
                    Clip::Kept => {}
                    Clip::Counted => {
                        self.below_clip += 1;
                        continue;
                    }
                    Clip::Uncounted => continue,
                }
                if let Some(e) = batch.bad_keys.remove(&(first + at)) {
                    return Err(e);
                }
                let local = r.obs.source.0 as usize;
                let id = match ids[local] {
                    Some(id) => id,
                    None => {
                        let id = self
                            .sources
                            .id(&batch.names[local])
                            .ok_or_else(too_many_contributors)?;
                        ids[local] = Some(id);
                        id
                    }
                };
                let row = EngineObs {
                    source: SourceId(id),
                    ..r.obs
                };
                for &s in &slots {
                    self.grades[s].1.push(row);
                }
            }
        }
        Ok(())
    }

    /// The positions in `grades` that an observation of `grade` by an operator of
    /// `tier` feeds (worked out on the pair's first row of the run).
    fn slots_fed(&mut self, grade: &Grade, tier: Option<OperatorTier>) -> Vec<usize> {
        let known = self
            .targets
            .get(grade)
            .and_then(|by_tier| by_tier.iter().position(|(t, _)| *t == tier));
        let at = match known {
            Some(at) => at,
            None => self.feed(grade, tier),
        };
        self.targets[grade][at].1.clone()
    }

    /// Adds a store partition read column by column: grades, tiers and
    /// contributors are worked out once per distinct value, not once per row.
    pub(crate) fn add_part(&mut self, part: &FixingPart) -> Result<(), IndexError> {
        let sources: Vec<u32> = part
            .sources
            .iter()
            .map(|name| self.sources.id(name).ok_or_else(too_many_contributors))
            .collect::<Result<_, _>>()?;
        // Per grade code: the grades its rows feed, by operator tier.
        let mut fed: Vec<Vec<TierSlots>> = vec![Vec::new(); part.grades.len()];
        for r in 0..part.len() {
            let (g, tier) = (part.grade[r] as usize, part.operator_tier[r]);
            let Some(by_tier) = fed.get_mut(g) else {
                return Err(IndexError::Data(format!(
                    "{}: row {}: grade code out of range",
                    part.path.display(),
                    r + 1
                )));
            };
            let at = match by_tier.iter().position(|(t, _)| *t == tier) {
                Some(at) => at,
                None => {
                    // Worked out once per run for each (grade, tier), not once per
                    // partition: a two-year store has 731 of them.
                    by_tier.push((tier, self.slots_fed(&part.grades[g], tier)));
                    by_tier.len() - 1
                }
            };
            let slots = &by_tier[at].1;
            if slots.is_empty() {
                continue;
            }
            let quantity = part.quantity_gpu_hours[r].unwrap_or(0.0);
            let day = day_of(&self.clock, &self.rule, self.roll, part.observed_at[r]);
            if self.clipped(part.kind[r], quantity, day) {
                continue;
            }
            let source = sources.get(part.source[r] as usize).ok_or_else(|| {
                IndexError::Data(format!(
                    "{}: row {}: source code out of range",
                    part.path.display(),
                    r + 1
                ))
            })?;
            let row = EngineObs {
                key: key_of_id(&part.dedupe_key[r], &part.path.display())?,
                price: part.usd_per_gpu_hour[r],
                quantity,
                day,
                source: SourceId(*source),
                kind: part.kind[r],
                tier,
            };
            for &s in slots {
                self.grades[s].1.push(row);
            }
        }
        Ok(())
    }

    /// Whether a row of `kind` and `quantity` is a trade below the minimum size, which
    /// is then left out (and counted, when `day` is one of the counted days).
    fn clipped(&mut self, kind: ObservationKind, quantity: f64, day: NaiveDate) -> bool {
        let min_trade = self.req.methodology.inputs.min_trade_gpu_hours;
        let clip = Clip::of(kind, quantity, day, min_trade, self.counted);
        self.below_clip += usize::from(clip == Clip::Counted);
        clip != Clip::Kept
    }

    /// Works out the grades an observation of `grade` by an operator of `tier`
    /// feeds and records them; returns their place among `grade`'s tiers.
    fn feed(&mut self, grade: &Grade, tier: Option<OperatorTier>) -> usize {
        let slots: Vec<usize> = self
            .grades_fed(grade, tier)
            .into_iter()
            .map(|key| {
                *self.slot_of.entry(key.clone()).or_insert_with(|| {
                    self.grades.push((key, Vec::new()));
                    self.grades.len() - 1
                })
            })
            .collect();
        let by_tier = self.targets.entry(grade.clone()).or_default();
        by_tier.push((tier, slots));
        by_tier.len() - 1
    }

    /// The grouped observations, contributors numbered in name order and each grade
    /// sorted as [`fix_grade`] expects.
    pub(crate) fn finish(self) -> Grouped {
        let (sources, remap) = self.sources.finish();
        // Each grade's rows are renumbered and sorted on their own, so in parallel:
        // the rows of a grade arrive in the same order whatever the thread count,
        // and each is sorted as it was one after the other.
        let mut fed: Vec<(String, Vec<EngineObs>)> = self
            .grades
            .into_iter()
            .filter(|(_, v)| !v.is_empty())
            .collect();
        fed.par_iter_mut().for_each(|(_, v)| {
            for o in v.iter_mut() {
                o.source = remap[o.source.0 as usize];
            }
            sort_obs(v);
            v.shrink_to_fit();
        });
        let grades: BTreeMap<String, Vec<EngineObs>> = fed.into_iter().collect();
        Grouped {
            grades,
            sources,
            below_clip: self.below_clip,
        }
    }
}

/// A fixing date under the methodology's clock, rolled to the next publication day
/// when the methodology says so (bounded: a calendar has a publication day within
/// any 31 days).
fn day_of(
    clock: &FixingClock,
    rule: &DayRule,
    roll: bool,
    t: chrono::DateTime<chrono::Utc>,
) -> NaiveDate {
    let mut d = clock.fixing_date(t);
    if roll {
        for _ in 0..31 {
            if rule.counts(d) {
                break;
            }
            d = d + Days::new(1);
        }
    }
    d
}

/// Works out store rows' engine rows apart from the engine's grouping maps (its
/// grades and contributors): the fixing day under the methodology's clock, the
/// dedupe key's bits, whether a trade is below the minimum size. Owns what it
/// reads, so that it runs on other threads while the grouper takes rows.
#[derive(Debug, Clone)]
pub struct RowPreparer {
    clock: FixingClock,
    rule: DayRule,
    roll: bool,
    min_trade: f64,
    counted: (Option<NaiveDate>, Option<NaiveDate>),
}

impl RowPreparer {
    /// The engine rows of `rows`, in their order, cut into runs of one grade and
    /// operator tier; contributors numbered within the batch.
    pub fn prepare<'r>(
        &self,
        rows: impl IntoIterator<Item = &'r StoredObservation>,
    ) -> PreparedRows {
        let mut batch = PreparedRows::default();
        let mut local: HashMap<&'r str, u32, foldhash::fast::FixedState> = HashMap::default();
        for (at, r) in rows.into_iter().enumerate() {
            let o = &r.obs;
            match batch.runs.last_mut() {
                Some(run) if run.grade == o.grade && run.tier == o.operator_tier => {
                    run.end = at + 1;
                }
                _ => batch.runs.push(PreparedRun {
                    grade: o.grade.clone(),
                    tier: o.operator_tier,
                    end: at + 1,
                }),
            }
            let quantity = o.quantity_gpu_hours.map_or(0.0, |q| q.get());
            let day = day_of(&self.clock, &self.rule, self.roll, o.observed_at);
            let clip = Clip::of(o.kind, quantity, day, self.min_trade, self.counted);
            let names = &mut batch.names;
            let source = *local.entry(&o.source).or_insert_with(|| {
                names.push(o.source.clone());
                // A batch is a date's rows: far fewer than 2^32 contributors.
                u32::try_from(names.len() - 1).unwrap_or(u32::MAX)
            });
            let key = match key_of_id(&r.dedupe_key, &o.fixing_date) {
                Ok(key) => key,
                Err(e) => {
                    batch.bad_keys.insert(at, e);
                    ObsKey::from_u128(0)
                }
            };
            batch.rows.push(PreparedRow {
                obs: EngineObs {
                    key,
                    price: o.usd_per_gpu_hour.get(),
                    quantity,
                    day,
                    source: SourceId(source),
                    kind: o.kind,
                    tier: o.operator_tier,
                },
                clip,
            });
        }
        batch
    }
}

/// A batch of store rows as [`RowPreparer::prepare`] works them out, for
/// [`crate::Fixer::add_prepared`].
#[derive(Debug, Default)]
pub struct PreparedRows {
    rows: Vec<PreparedRow>,
    runs: Vec<PreparedRun>,
    /// The contributors' names, numbered by the rows' `source` in the batch.
    names: Vec<std::sync::Arc<str>>,
    /// Why the keys of these rows (their positions) are refused.
    bad_keys: BTreeMap<usize, IndexError>,
}

/// Rows of one grade and operator tier, up to row `end` (from the run before's).
#[derive(Debug)]
struct PreparedRun {
    grade: Grade,
    tier: Option<OperatorTier>,
    end: usize,
}

/// An engine row, its contributor numbered in its batch, and whether it is left
/// out as a trade below the minimum size.
#[derive(Debug)]
struct PreparedRow {
    obs: EngineObs,
    clip: Clip,
}

/// A trade below `inputs.min_trade_gpu_hours` is left out, and counted in
/// [`Grouped::below_clip`] when its day is one of the counted days.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Clip {
    Kept,
    Counted,
    Uncounted,
}

impl Clip {
    /// Whether a row of `kind`, `quantity` and `day` is a trade below `min_trade`
    /// GPU-hours, and whether its day is one of the `counted` days (open ends:
    /// every day).
    fn of(
        kind: ObservationKind,
        quantity: f64,
        day: NaiveDate,
        min_trade: f64,
        counted: (Option<NaiveDate>, Option<NaiveDate>),
    ) -> Self {
        let (from, to) = counted;
        if !(kind == ObservationKind::Trade && quantity < min_trade) {
            Clip::Kept
        } else if from.is_some_and(|f| day < f) || to.is_some_and(|t| day > t) {
            Clip::Uncounted
        } else {
            Clip::Counted
        }
    }
}

/// An observation's dedupe key, refused unless it is the store's 32 hexadecimal
/// digits (a store edited by hand); `at` says where it was read.
/// `at` names where the row is, formatted only for an error.
fn key_of(text: &str, at: &dyn std::fmt::Display) -> Result<ObsKey, IndexError> {
    ObsKey::parse_hex(text).ok_or_else(|| {
        IndexError::Data(format!(
            "store observation {text:?} of {at}: dedupe_key is not 32 lowercase hexadecimal digits"
        ))
    })
}

/// [`key_of`] for a key read into an [`rentix_core::Id`]: its 128 bits, read
/// once when the row was.
fn key_of_id(id: &rentix_core::Id, at: &dyn std::fmt::Display) -> Result<ObsKey, IndexError> {
    match id.as_u128() {
        Some(n) => Ok(ObsKey::from_u128(n)),
        None => key_of(&id.text(), at),
    }
}

/// The engine numbers contributors with 32 bits.
fn too_many_contributors() -> IndexError {
    IndexError::Data("more than 2^32 distinct contributors".into())
}

/// The fixing dates from the first observation day (or the request's `from`) to the
/// last observation day plus the lag (or the request's `to`, earlier or later), that
/// the calendar counts.
pub(crate) fn fixing_dates(
    groups: &BTreeMap<String, Vec<EngineObs>>,
    req: &IndexRequest,
    rule: &DayRule,
) -> Vec<NaiveDate> {
    let first = groups
        .values()
        .filter_map(|v| v.first())
        .map(|o| o.day)
        .min();
    let last = groups
        .values()
        .filter_map(|v| v.last())
        .map(|o| o.day)
        .max();
    let (Some(mut d), Some(mut end)) = (first, last) else {
        return Vec::new();
    };
    end = req.methodology.lagged(end, Some(rule));
    if let Some(f) = req.from {
        d = d.max(f);
    }
    // Through the requested day, even past the last observation: a day of a feed
    // outage gets its carried rows (or none, past the carry) instead of no run.
    if let Some(t) = req.to {
        end = t;
    }
    let mut out = Vec::new();
    while d <= end {
        if rule.counts(d) {
            out.push(d);
        }
        d = d + Days::new(1);
    }
    out
}

/// Why a level was not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Shortfall {
    FewObs,
    FewValidDays,
    LowVolume,
    FewContributors,
    Concentrated,
    /// Too few contributors for the cap, under `too_few_for_cap = "proportional"`.
    CapNotHeld,
}

impl Shortfall {
    fn flag(self) -> Flag {
        match self {
            Shortfall::FewObs => Flag::FewObs,
            Shortfall::FewValidDays => Flag::FewValidDays,
            Shortfall::LowVolume => Flag::LowVolume,
            Shortfall::FewContributors => Flag::FewContributors,
            Shortfall::Concentrated => Flag::Concentrated,
            Shortfall::CapNotHeld => Flag::CapNotHeld,
        }
    }
}

/// One kind's attempt at fixing: what it used, what it gave, and what it lacked.
struct TierFix {
    value: f64,
    p: [f64; 4],
    used: Vec<usize>,
    max_share: f64,
    /// Herfindahl-Hirschman index of the contributors' final weight shares (0-1).
    hhi: f64,
    removed: usize,
    contributors: usize,
    /// Contributors whose last day was carried in for a missing one.
    carried_contributors: usize,
    /// Each contributor's median price among the observations used.
    by_contributor: BTreeMap<SourceId, f64>,
    shortfalls: Vec<Shortfall>,
    cap_not_applied: bool,
    /// Contributors left out under the weight floor (`contributors.min_share`).
    below_floor: usize,
}

impl TierFix {
    fn accepted(&self) -> bool {
        self.shortfalls.is_empty()
    }

    /// Whether the methodology publishes this level, flagged, despite its
    /// shortfalls.
    fn publishable(&self, m: &Methodology) -> bool {
        !self.shortfalls.is_empty()
            && self.shortfalls.iter().all(|s| match s {
                Shortfall::FewValidDays => m.pooling.short_window == WhenShort::PublishFlagged,
                Shortfall::FewContributors | Shortfall::CapNotHeld => {
                    m.contributors.below_minimum == WhenShort::PublishFlagged
                }
                _ => false,
            })
    }
}

/// One level's votes, weighed: values and their capped weights, and what the raw
/// (uncapped) weights say of the contributors.
struct Weighed {
    /// Each vote's contributor.
    sources: Vec<SourceId>,
    /// USD per GPU-hour: one per observation, or one median per contributor.
    values: Vec<f64>,
    /// The votes' weights after the per-contributor cap.
    weights: Vec<f64>,
    /// The largest contributor's share of the raw weight.
    concentration: f64,
    /// Contributors among the votes.
    raw_contributors: usize,
    /// The largest contributor's share after the cap.
    capped_share: f64,
    /// Whether the cap held (always under `too_few_for_cap = "equal-shares"`).
    cap_held: bool,
}

struct GradeCtx<'a> {
    m: &'a Methodology,
    obs: &'a [EngineObs],
    /// (day, kind) -> indices into `obs`.
    by_day: BTreeMap<(NaiveDate, ObservationKind), Vec<usize>>,
    rule: &'a DayRule,
}

impl GradeCtx<'_> {
    /// First and last day of the window of fixing date `d`.
    fn window(&self, d: NaiveDate) -> (NaiveDate, NaiveDate) {
        self.m.window_of(d, Some(self.rule))
    }

    fn in_window(&self, d: NaiveDate, kind: ObservationKind) -> Vec<(NaiveDate, Vec<usize>)> {
        let (start, end) = self.window(d);
        let mut days: Vec<(NaiveDate, Vec<usize>)> = self
            .by_day
            .range((start, kind)..=(end, kind))
            .filter(|((_, k), _)| *k == kind)
            .map(|((day, _), v)| (*day, v.clone()))
            .collect();
        if self.m.pooling.thin_days == ThinDays::Drop {
            days.retain(|(_, v)| v.len() >= self.m.pooling.min_obs_per_day);
        }
        days
    }

    /// Contributors missing from the window, carried from their last day within
    /// `carry_missing_days` before it: (their observations, how many contributors).
    fn carried_in(
        &self,
        d: NaiveDate,
        kind: ObservationKind,
        days: &[(NaiveDate, Vec<usize>)],
    ) -> (Vec<usize>, usize) {
        let n = self.m.contributors.carry_missing_days;
        if n == 0 {
            return (Vec::new(), 0);
        }
        // The contributors present in the window.
        let mut seen: BTreeSet<SourceId> = days
            .iter()
            .flat_map(|(_, v)| v.iter().map(|&i| self.obs[i].source))
            .collect();
        let (start, _) = self.window(d);
        let mut out = Vec::new();
        let mut carried = 0;
        for back in 1..=u64::from(n) {
            let day = start - Days::new(back);
            let Some(idx) = self.by_day.get(&(day, kind)) else {
                continue;
            };
            let fresh: BTreeSet<SourceId> = idx
                .iter()
                .map(|&i| self.obs[i].source)
                .filter(|s| !seen.contains(s))
                .collect();
            for &i in idx {
                if fresh.contains(&self.obs[i].source) {
                    out.push(i);
                }
            }
            carried += fresh.len();
            seen.extend(fresh);
        }
        (out, carried)
    }

    fn filter(&self, idx: &[usize]) -> Vec<usize> {
        let values: Vec<f64> = idx.iter().map(|&i| self.obs[i].price).collect();
        let weights = screening_weights(idx.iter().map(|&i| &self.obs[i]), self.m);
        keep(
            self.m.outliers.filter,
            &values,
            &weights,
            &self.m.filter_params(),
        )
        .into_iter()
        .map(|k| idx[k])
        .collect()
    }

    /// Observations kept after filtering, and the number of valid days.
    fn filtered(&self, days: &[(NaiveDate, Vec<usize>)]) -> (Vec<usize>, u32) {
        let min_day = self.m.pooling.min_obs_per_day;
        match self.m.outliers.apply {
            FilterScope::PerDay => {
                let mut used = Vec::new();
                let mut valid = 0;
                for (_, idx) in days {
                    let kept = self.filter(idx);
                    if kept.len() >= min_day {
                        valid += 1;
                    }
                    used.extend(kept);
                }
                (used, valid)
            }
            FilterScope::Pooled => {
                let all: Vec<usize> = days.iter().flat_map(|(_, v)| v.iter().copied()).collect();
                let kept: BTreeSet<usize> = self.filter(&all).into_iter().collect();
                let valid = days
                    .iter()
                    .filter(|(_, v)| v.iter().filter(|i| kept.contains(i)).count() >= min_day)
                    .count() as u32;
                (kept.into_iter().collect(), valid)
            }
        }
    }

    /// The window's observations of `kind` for date `d` by day, the carried-in
    /// contributors' observations as one more day on `d`, and how many were carried.
    fn window_with_carried(
        &self,
        d: NaiveDate,
        kind: ObservationKind,
    ) -> (Vec<(NaiveDate, Vec<usize>)>, usize) {
        let mut days = self.in_window(d, kind);
        let (carried, carried_contributors) = self.carried_in(d, kind, &days);
        if !carried.is_empty() {
            days.push((d, carried));
        }
        (days, carried_contributors)
    }

    /// Each contributor's median price among the observations `used` (one entry per
    /// contributor of `used`).
    fn by_contributor(&self, used: &[usize]) -> BTreeMap<SourceId, f64> {
        let mut prices: Vec<(SourceId, f64)> = used
            .iter()
            .map(|&i| (self.obs[i].source, self.obs[i].price))
            .collect();
        // A median does not depend on the order of its values.
        prices.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        prices
            .chunk_by(|a, b| a.0 == b.0)
            .filter_map(|c| Some((c[0].0, median(&c.iter().map(|p| p.1).collect::<Vec<_>>())?)))
            .collect()
    }

    /// The votes and their weights: one per observation `used`, or one per
    /// contributor (its median) in two-stage mode, capped per contributor.
    fn weighed(&self, used: &[usize], by_contributor: &BTreeMap<SourceId, f64>) -> Weighed {
        let m = self.m;
        // Values and raw weights: one per observation, or one per contributor.
        let (sources, values, raw_w): (Vec<SourceId>, Vec<f64>, Vec<f64>) =
            match m.aggregation.per_contributor {
                PerContributor::None => (
                    used.iter().map(|&i| self.obs[i].source).collect(),
                    used.iter().map(|&i| self.obs[i].price).collect(),
                    used.iter().map(|&i| self.obs[i].weight()).collect(),
                ),
                PerContributor::Median => (
                    by_contributor.keys().copied().collect(),
                    by_contributor.values().copied().collect(),
                    vec![1.0; by_contributor.len()],
                ),
            };
        let raw_total: f64 = raw_w.iter().sum();
        let raw_by = sums_by(sources.iter().copied().zip(raw_w.iter().copied()));
        let concentration =
            raw_by.iter().fold(0.0f64, |a, (_, w)| a.max(*w)) / raw_total.max(f64::MIN_POSITIVE);
        let (weights, capped_share, cap_held) = match m.contributors.too_few_for_cap {
            TooFewForCap::EqualShares => {
                let (w, share) = cap_weights(&sources, &raw_w, m.contributors.max_share);
                (w, share, true)
            }
            TooFewForCap::Proportional => {
                cap_weights_proportional(&sources, &raw_w, m.contributors.max_share)
            }
        };
        Weighed {
            sources,
            values,
            weights,
            concentration,
            raw_contributors: raw_by.len(),
            capped_share,
            cap_held,
        }
    }

    /// The largest contributor's share, whether the cap could not be applied, and
    /// the Herfindahl index of the shares. The trimmed mean is unweighted: report
    /// the share it really gives the largest contributor, and flag a cap it cannot
    /// apply.
    fn shares(&self, v: &Weighed) -> (f64, bool, f64) {
        let m = self.m;
        let sources = &v.sources;
        if m.aggregation.method == Aggregation::TrimmedMean {
            let counts = v.raw_contributors.max(1);
            let n_by = sums_by(sources.iter().map(|s| (*s, 1.0)));
            let share =
                n_by.iter().fold(0.0f64, |a, (_, n)| a.max(*n)) / sources.len().max(1) as f64;
            (
                share,
                counts > 0 && share > m.contributors.max_share + 1e-12,
                herfindahl(n_by.iter().map(|(_, n)| n)),
            )
        } else {
            let w_by = sums_by(sources.iter().copied().zip(v.weights.iter().copied()));
            (
                v.capped_share,
                false,
                herfindahl(w_by.iter().map(|(_, w)| w)),
            )
        }
    }

    /// The sufficiency rules `kind`'s level fails with the observations `used` over
    /// `valid_days` valid days, from `contributors` contributors weighed as `v`.
    fn shortfalls(
        &self,
        kind: ObservationKind,
        used: &[usize],
        valid_days: u32,
        contributors: usize,
        v: &Weighed,
    ) -> Vec<Shortfall> {
        let m = self.m;
        let volume: f64 = used.iter().map(|&i| self.obs[i].quantity).sum();
        let min_obs = m.inputs.min_obs.get(&kind).copied().unwrap_or(1).max(1);
        let mut shortfalls = Vec::new();
        if used.len() < min_obs {
            shortfalls.push(Shortfall::FewObs);
        }
        if valid_days < m.pooling.min_valid_days {
            shortfalls.push(Shortfall::FewValidDays);
        }
        if m.inputs
            .min_volume_gpu_hours
            .get(&kind)
            .is_some_and(|v| volume < *v)
        {
            shortfalls.push(Shortfall::LowVolume);
        }
        if contributors < m.contributors.min_contributors {
            shortfalls.push(Shortfall::FewContributors);
        }
        if v.concentration > m.contributors.max_concentration + 1e-12 {
            shortfalls.push(Shortfall::Concentrated);
        }
        if !v.cap_held && m.aggregation.method != Aggregation::TrimmedMean {
            shortfalls.push(Shortfall::CapNotHeld);
        }
        shortfalls
    }

    /// Evaluates `kind` for date `d`; `None` if the kind has no observation to use.
    fn tier(&self, d: NaiveDate, kind: ObservationKind) -> Option<TierFix> {
        let (days, carried_contributors) = self.window_with_carried(d, kind);
        let total: usize = days.iter().map(|(_, v)| v.len()).sum();
        let (used, valid_days) = self.filtered(&days);
        // Outliers are counted apart from the contributors the floor leaves out.
        let removed = total - used.len();
        let m = self.m;
        let (used, below_floor) = self.floored(used);
        if used.is_empty() {
            return None;
        }
        let by_contributor = self.by_contributor(&used);
        let v = self.weighed(&used, &by_contributor);
        let value = aggregate(m.aggregation.method, &v.values, &v.weights, m.agg_params())?;
        let (max_share, cap_not_applied, hhi) = self.shares(&v);
        let pairs = sorted_pairs(&v.values, &v.weights);
        let q = |x: f64| weighted_quantile_sorted(&pairs, x, TieRule::Lower).unwrap_or(value);
        let shortfalls = self.shortfalls(kind, &used, valid_days, by_contributor.len(), &v);
        Some(TierFix {
            value,
            p: [q(0.01), q(0.25), q(0.75), q(0.99)],
            removed,
            contributors: by_contributor.len(),
            used,
            max_share,
            hhi,
            carried_contributors,
            by_contributor,
            shortfalls,
            cap_not_applied,
            below_floor,
        })
    }

    /// The observations of the contributors the weight floor keeps, and how many
    /// contributors it left out: those with less than `min_share` of the weight
    /// (aggregation weights, before the cap) and less than half an equal share.
    fn floored(&self, used: Vec<usize>) -> (Vec<usize>, usize) {
        let floor = self.m.contributors.min_share;
        if floor <= 0.0 || used.is_empty() {
            return (used, 0);
        }
        // One vote per contributor: every contributor has an equal share.
        if self.m.aggregation.per_contributor == PerContributor::Median {
            return (used, 0);
        }
        let by = sums_by(
            used.iter()
                .map(|&i| (self.obs[i].source, self.obs[i].weight())),
        );
        let total: f64 = by.iter().map(|(_, w)| w).sum();
        let limit = floor.min(0.5 / by.len() as f64) * total;
        // In contributor order, as `by`.
        let out: Vec<SourceId> = by
            .iter()
            .filter(|(_, w)| *w < limit)
            .map(|(s, _)| *s)
            .collect();
        if out.is_empty() {
            return (used, 0);
        }
        let kept = used
            .into_iter()
            .filter(|i| out.binary_search(&self.obs[*i].source).is_err())
            .collect();
        (kept, out.len())
    }
}

/// Herfindahl-Hirschman index of shares proportional to `weights`: 1 for a single
/// contributor, 1/n for n equal ones.
fn herfindahl<'a>(weights: impl Iterator<Item = &'a f64> + Clone) -> f64 {
    let total: f64 = weights.clone().sum();
    if total <= 0.0 {
        return 0.0;
    }
    weights.map(|w| (w / total).powi(2)).sum()
}

/// Matched-sample change: the geometric mean of the price relatives of the
/// contributors present on both dates, minus 1.
fn matched_change(
    now: &BTreeMap<SourceId, f64>,
    then: Option<&BTreeMap<SourceId, f64>>,
) -> Option<f64> {
    let then = then?;
    let logs: Vec<f64> = now
        .iter()
        .filter_map(|(s, p)| {
            let q = then.get(s)?;
            (*p > 0.0 && *q > 0.0).then(|| (p / q).ln())
        })
        .collect();
    if logs.is_empty() {
        return None;
    }
    Some(round_to(
        (logs.iter().sum::<f64>() / logs.len() as f64).exp() - 1.0,
        6,
    ))
}

/// The weights the outlier filter screens `obs` with: their aggregation weights
/// (GPU-hours for trades, 1 otherwise); under `outliers.weighted`, capped per
/// contributor as the aggregation caps them, so that no contributor, a manipulator
/// with ten times the day's volume included, carries more than `max_share` of the
/// say in what is an outlier (uncapped, it would be the median and declare every
/// honest trade an outlier).
pub(crate) fn screening_weights<'a>(
    obs: impl Iterator<Item = &'a EngineObs>,
    m: &Methodology,
) -> Vec<f64> {
    let (sources, raw): (Vec<SourceId>, Vec<f64>) = obs.map(|o| (o.source, o.weight())).unzip();
    if !m.outliers.weighted {
        return raw;
    }
    let cap = m.contributors.max_share;
    match m.contributors.too_few_for_cap {
        TooFewForCap::EqualShares => cap_weights(&sources, &raw, cap).0,
        TooFewForCap::Proportional => cap_weights_proportional(&sources, &raw, cap).0,
    }
}

/// Whether `o` is a trade smaller than the methodology's minimum trade size
/// (`inputs.min_trade_gpu_hours`): such trades enter no fixing and no count of the
/// fixings; [`crate::IndexResult::below_clip`] counts them.
pub(crate) fn below_clip(o: &EngineObs, m: &Methodology) -> bool {
    o.kind == ObservationKind::Trade && o.quantity < m.inputs.min_trade_gpu_hours
}

/// Calendar days of silence (between two days with observations that count) after
/// which a grade's life ends and a new one starts: the days in between get no rows.
/// Shorter gaps are fixed day by day (carried, then `no_data`), as a contract's
/// coverage rules need; without a bound, two observations sixteen years apart gave a
/// grade 5,800 rows, and a 216 KB file of such grades 8.9 million.
pub(crate) const MAX_SILENT_DAYS: u64 = 92;

/// The stretches of fixing dates a grade lives, from its days with observations that
/// count (in order): each runs from a first day plus the lag (`lagged`, which counts
/// it as the methodology's window does) to a last day plus the lag and the
/// carry-forward limit, and a new one starts after a silence of more than
/// [`MAX_SILENT_DAYS`]. A grade therefore has at most about
/// `MAX_SILENT_DAYS + lag + carry` rows per day with observations.
pub(crate) fn lives(
    days: impl Iterator<Item = NaiveDate>,
    lagged: impl Fn(NaiveDate) -> NaiveDate,
    carry: u64,
) -> Vec<(NaiveDate, NaiveDate)> {
    let mut spans: Vec<(NaiveDate, NaiveDate)> = Vec::new();
    for d in days {
        match spans.last_mut() {
            Some((_, last)) if d <= *last + Days::new(MAX_SILENT_DAYS) => *last = (*last).max(d),
            _ => spans.push((d, d)),
        }
    }
    spans
        .into_iter()
        .map(|(a, b)| (lagged(a), lagged(b) + Days::new(carry)))
        .collect()
}

/// Fixes one grade on every date of its lives (`lives`: first observation to last
/// observation plus the carry-forward limit, split by long silences).
pub fn fix_grade(
    grade: &str,
    obs: &[EngineObs],
    dates: &[NaiveDate],
    m: &Methodology,
    rule: &DayRule,
) -> Vec<Fixing> {
    let ctx = GradeCtx::new(m, obs, rule);
    let lives = lives(
        obs.iter().filter(|o| !below_clip(o, m)).map(|o| o.day),
        |d| m.lagged(d, Some(rule)),
        u64::from(m.fallback.carry_forward_days),
    );
    if lives.is_empty() {
        return Vec::new();
    }
    let first_tier = m.inputs.hierarchy[0];
    let spread_on = m.fallback.listing_spread
        && m.inputs.hierarchy.contains(&ObservationKind::Trade)
        && m.inputs.hierarchy.contains(&ObservationKind::Listing);
    let mut spreads: BTreeMap<NaiveDate, f64> = BTreeMap::new();
    let mut last_fix: Option<(NaiveDate, Fixing)> = None;
    let mut panel: BTreeMap<NaiveDate, BTreeMap<SourceId, f64>> = BTreeMap::new();
    let mut out = Vec::new();

    for &d in dates
        .iter()
        .filter(|d| lives.iter().any(|(a, b)| *a <= **d && **d <= *b))
    {
        let counts = ctx.counts(d);
        let tiers: Vec<(ObservationKind, TierFix)> = m
            .inputs
            .hierarchy
            .iter()
            .filter_map(|&k| ctx.tier(d, k).map(|t| (k, t)))
            .collect();
        let get = |k: ObservationKind| tiers.iter().find(|(kk, _)| *kk == k).map(|(_, t)| t);
        if spread_on {
            if let (Some(t), Some(l)) = (get(ObservationKind::Trade), get(ObservationKind::Listing))
            {
                if t.accepted() && l.accepted() {
                    spreads.insert(d, t.value / l.value);
                }
            }
        }
        let mut flags: Vec<Flag> = Vec::new();
        let accepted = tiers.iter().find(|(_, t)| t.accepted());
        for (k, t) in tiers.iter().take_while(|(_, t)| !t.accepted()) {
            flags.push(Flag::Failed {
                kind: *k,
                reasons: t.shortfalls.iter().map(|s| s.flag()).collect(),
            });
        }
        let chosen = accepted.or_else(|| tiers.iter().find(|(_, t)| t.publishable(m)));
        let row = match chosen {
            Some((kind, t)) => {
                let kind = *kind;
                let factor = if kind == ObservationKind::Listing && spread_on {
                    spread_factor(m, &spreads, d, &mut flags)
                } else {
                    1.0
                };
                if kind != first_tier {
                    flags.push(Flag::Fallback(kind));
                }
                let now = t.by_contributor.clone();
                let change = |k: u64| matched_change(&now, panel.get(&(d - Days::new(k))));
                let changes = [change(1), change(7), change(30)];
                panel.insert(d, now);
                let fixed = Fixed {
                    kind,
                    tier: t,
                    factor,
                    changes,
                };
                ctx.fixed_row(grade, d, &fixed, counts, &mut flags)
            }
            None => {
                let carry = last_fix.as_ref().filter(|(ld, _)| {
                    (d - *ld).num_days() <= i64::from(m.fallback.carry_forward_days)
                });
                ctx.unfixed_row(
                    grade,
                    d,
                    carry.map(|(_, f)| f),
                    tiers.is_empty(),
                    counts,
                    &mut flags,
                )
            }
        };
        let mut row = row;
        if !row.sufficient {
            flags.insert(0, Flag::LowConfidence);
        }
        row.flags = Flag::join(&flags);
        if row.level.is_some_and(FixingLevel::is_fixed) {
            last_fix = Some((d, row.clone()));
        }
        out.push(row);
    }
    out
}

/// A tier that fixed the day: its kind and fix, the listing spread factor applied
/// to it and the matched-sample changes over 1, 7 and 30 days.
struct Fixed<'a> {
    kind: ObservationKind,
    tier: &'a TierFix,
    factor: f64,
    changes: [Option<f64>; 3],
}

/// The listings-to-trades spread a listing fix on `d` is scaled by: the median
/// of the spreads of the look-back days before it, when enough days have one
/// (flagged either way).
fn spread_factor(
    m: &Methodology,
    spreads: &BTreeMap<NaiveDate, f64>,
    d: NaiveDate,
    flags: &mut Vec<Flag>,
) -> f64 {
    let from = d - Days::new(u64::from(m.fallback.spread_lookback_days));
    let recent: Vec<f64> = spreads.range(from..d).map(|(_, v)| *v).collect();
    if recent.len() as u32 >= m.fallback.spread_min_days {
        flags.push(Flag::ListingSpreadAdjusted);
        median(&recent).unwrap_or(1.0)
    } else {
        flags.push(Flag::ListingSpreadUnavailable);
        1.0
    }
}

impl<'a> GradeCtx<'a> {
    /// A grade's observations indexed by day and kind (prints below the clip left
    /// out).
    fn new(m: &'a Methodology, obs: &'a [EngineObs], rule: &'a DayRule) -> Self {
        let mut by_day: BTreeMap<(NaiveDate, ObservationKind), Vec<usize>> = BTreeMap::new();
        for (i, o) in obs.iter().enumerate() {
            if !below_clip(o, m) {
                by_day.entry((o.day, o.kind)).or_default().push(i);
            }
        }
        Self {
            m,
            obs,
            by_day,
            rule,
        }
    }
}

impl GradeCtx<'_> {
    /// The trades, firm offers and listings in the window of `d`.
    fn counts(&self, d: NaiveDate) -> (usize, usize, usize) {
        let (ws, we) = self.window(d);
        let count = |k: ObservationKind| -> usize {
            self.by_day
                .range((ws, k)..=(we, k))
                .filter(|((_, kk), _)| *kk == k)
                .map(|(_, v)| v.len())
                .sum()
        };
        (
            count(ObservationKind::Trade),
            count(ObservationKind::Firm),
            count(ObservationKind::Listing),
        )
    }

    /// The row of a day a tier fixed; its shortfalls and adjustments go to `flags`.
    fn fixed_row(
        &self,
        grade: &str,
        d: NaiveDate,
        f: &Fixed<'_>,
        (n_trades, n_firm, n_listings): (usize, usize, usize),
        flags: &mut Vec<Flag>,
    ) -> Fixing {
        let (m, t, obs) = (self.m, f.tier, self.obs);
        let dec = m.rounding.decimals;
        for s in &t.shortfalls {
            flags.push(s.flag());
        }
        if t.removed > 0 {
            flags.push(Flag::OutliersRemoved(t.removed));
        }
        if t.carried_contributors > 0 {
            flags.push(Flag::ContributorsCarried(t.carried_contributors));
        }
        if t.cap_not_applied {
            flags.push(Flag::CapNotApplied);
        }
        if t.below_floor > 0 {
            flags.push(Flag::BelowFloor(t.below_floor));
        }
        let show_p = t.contributors >= m.contributors.min_for_percentiles;
        if !show_p {
            flags.push(Flag::PercentilesWithheld);
        }
        let pct = |x: f64| show_p.then(|| round_to(x * f.factor, dec));
        let [c1, c7, c30] = f.changes;
        Fixing {
            date: d,
            grade: IndexId::grade(grade),
            value: Some(round_to(t.value * f.factor, dec)),
            method: m.method_label().to_string(),
            level: Some(FixingLevel::of_kind(f.kind)),
            n_obs: t.used.len(),
            n_trades,
            n_firm,
            n_listings,
            n_contributors: t.contributors,
            volume_gpu_hours: round_to(t.used.iter().map(|&i| obs[i].quantity).sum(), 4),
            p1: pct(t.p[0]),
            p25: pct(t.p[1]),
            p75: pct(t.p[2]),
            p99: pct(t.p[3]),
            max_contributor_share: Some(round_to(t.max_share, 6)),
            contributor_hhi: Some(round_to(t.hhi, 6)),
            sufficient: t.accepted(),
            flags: String::new(),
            methodology_version: m.version.clone(),
            input_sha256: keys_sha256(t.used.iter().map(|&i| obs[i].key)),
            publication: 1,
            change_1d: c1,
            change_7d: c7,
            change_30d: c30,
        }
    }

    /// The row of a day no tier fixed: the last fix carried (`carry`, within the
    /// carry-forward days), else no value, flagged `no_data` when no tier had any
    /// observation and `suppressed` otherwise.
    fn unfixed_row(
        &self,
        grade: &str,
        d: NaiveDate,
        carry: Option<&Fixing>,
        no_tier: bool,
        (n_trades, n_firm, n_listings): (usize, usize, usize),
        flags: &mut Vec<Flag>,
    ) -> Fixing {
        let m = self.m;
        let (value, level) = match carry {
            Some(f) => {
                flags.push(Flag::CarriedForward);
                (f.value, Some(FixingLevel::Carried))
            }
            None => {
                flags.push(if no_tier {
                    Flag::NoData
                } else {
                    Flag::Suppressed
                });
                (None, None)
            }
        };
        Fixing {
            date: d,
            grade: IndexId::grade(grade),
            value,
            method: m.method_label().to_string(),
            level,
            n_obs: 0,
            n_trades,
            n_firm,
            n_listings,
            n_contributors: 0,
            volume_gpu_hours: 0.0,
            p1: None,
            p25: carry.and_then(|f| f.p25),
            p75: carry.and_then(|f| f.p75),
            p99: None,
            max_contributor_share: None,
            contributor_hhi: None,
            sufficient: false,
            flags: String::new(),
            methodology_version: m.version.clone(),
            input_sha256: carry.map(|f| f.input_sha256.clone()).unwrap_or_default(),
            publication: 1,
            change_1d: None,
            change_7d: None,
            change_30d: None,
        }
    }
}

/// Fixes every grade in parallel; rows sorted by date then grade.
pub(crate) fn fix_all(
    groups: &BTreeMap<String, Vec<EngineObs>>,
    dates: &[NaiveDate],
    m: &Methodology,
    rule: &DayRule,
) -> Vec<Fixing> {
    let grades: Vec<(&String, &Vec<EngineObs>)> = groups.iter().collect();
    let by_grade: Vec<Vec<Fixing>> = grades
        .par_iter()
        .map(|(g, obs)| fix_grade(g, obs, dates, m, rule))
        .collect();
    // Moved grade by grade into one vector: each grade's rows are freed as they go,
    // so the fixings are never held twice.
    let mut rows = Vec::with_capacity(by_grade.iter().map(Vec::len).sum());
    for v in by_grade {
        rows.extend(v);
    }
    // A stable sort, so the same order on any pool (ties keep their grade order).
    rows.par_sort_by(|a, b| (a.date, &a.grade).cmp(&(b.date, &b.grade)));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    /// Hand arithmetic: lag 1, carry 5. Days 03-01 and 06-01 are 92 days apart (one
    /// life: 03-02 .. 06-07); 06-01 to 09-02 is 93 days (a new life 09-03 .. 09-08).
    #[test]
    fn a_silence_longer_than_the_bound_starts_a_new_life() {
        let days = ["2025-03-01", "2025-03-01", "2025-06-01", "2025-09-02"].map(day);
        assert_eq!(
            lives(days.into_iter(), |d| d + Days::new(1), 5),
            vec![
                (day("2025-03-02"), day("2025-06-07")),
                (day("2025-09-03"), day("2025-09-08")),
            ]
        );
        assert!(lives(std::iter::empty(), |d| d, 0).is_empty());
    }
}

// The engine's behaviour tests, kept apart from its code (the module is long).
#[cfg(test)]
#[path = "engine_tests.rs"]
mod engine_tests;
