//! The methodology file: everything that decides a fixing, versioned and echoed
//! into every output row. `data/methodologies/` ships the default and alternatives.

use crate::aggregation::{AggParams, Aggregation, TrimCount};
use crate::elementary::Elementary;
use crate::error::IndexError;
use crate::outliers::{FilterParams, OutlierFilter, SigmaScale};
use crate::weighted_quantile::TieRule;
use chrono::{Days, NaiveDate};
use rentix_core::{Cutoff, DayRule, GradePattern, Invalid, ObservationKind};
use rentix_fixings::{IndexId, IndexUnit};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use strum::VariantArray;

/// `n` publication days before `d` (`d` itself when `n` is 0).
fn publication_days_back(d: NaiveDate, n: u32, rule: Option<&DayRule>) -> NaiveDate {
    publication_days_walk(d, n, rule, |day| day - Days::new(1))
}

/// The `n`-th day after `d` that `rule` counts (every day without a rule): the
/// inverse of [`publication_days_back`] on counted days.
fn publication_days_forward(d: NaiveDate, n: u32, rule: Option<&DayRule>) -> NaiveDate {
    publication_days_walk(d, n, rule, |day| day + Days::new(1))
}

/// Steps from `d` until `n` days that `rule` counts (every day without a rule) are
/// passed. Bounded walk: at most 31 calendar days per publication day.
fn publication_days_walk(
    d: NaiveDate,
    n: u32,
    rule: Option<&DayRule>,
    step: impl Fn(NaiveDate) -> NaiveDate,
) -> NaiveDate {
    let mut day = d;
    let mut left = n;
    for _ in 0..(u64::from(n) * 31) {
        if left == 0 {
            break;
        }
        day = step(day);
        if rule.is_none_or(|r| r.counts(day)) {
            left -= 1;
        }
    }
    day
}

const DEFAULT: &str = rentix_core::bundled::DEFAULT_METHODOLOGY;
/// Longest methodology version label.
const MAX_VERSION_LEN: usize = 64;
/// Longest pooling window: ten years.
const MAX_DAYS: u32 = 3660;

/// `[calendar]`: when a fixing day ends and which days publish (docs/methodology.md,
/// "Calendar").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalendarSpec {
    /// `"1d"` (or absent): one fixing a day. An intraday cadence (`"15m"`) is a
    /// methodology of its own shape, read by `intraday`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cadence: Option<rentix_core::Cadence>,
    /// Cut-off `HH:MM` (24:00 = end of day).
    pub cutoff: String,
    /// IANA time zone the cut-off is read in (`UTC`, `America/New_York`).
    pub timezone: String,
    /// `all` or `business`.
    pub days: String,
    /// Holiday calendar for business days (`us-exchange`, `none`).
    #[serde(default = "none")]
    pub holidays: String,
    /// What happens to an observation whose fixing date is not a publication day:
    /// `none` (it stays on that day, outside every window counted in publication
    /// days) or `next-publication-day` (it counts for the next one: a trade after
    /// Thursday's cut-off before Good Friday fixes on Monday).
    #[serde(default)]
    pub roll: Roll,
}

/// See [`CalendarSpec::roll`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Roll {
    /// The observation stays on its fixing date (the default).
    #[default]
    None,
    /// The observation moves to the next publication day (looked for within 31
    /// days).
    NextPublicationDay,
}

fn none() -> String {
    "none".into()
}

/// `[grades]`: which grades the methodology fixes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GradeSpec {
    /// Grades to fix (glob patterns over `GPU/SCOPE/TERM`).
    pub patterns: Vec<String>,
    /// Also fix region-qualified grades (`...@us`).
    #[serde(default)]
    pub regional: bool,
    /// Also fix tier-qualified grades (`.../gold+`) for these floors: the same grade
    /// from the observations of operators rated at or above the floor only.
    #[serde(default)]
    pub tier_floors: Vec<rentix_core::OperatorTier>,
}

/// `[inputs]`: which kinds of observation may fix a grade, in which order, and how
/// many of each a level needs (docs/methodology.md, steps 2, 3 and 7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputSpec {
    /// Kinds in hierarchy order; a kind left out is never used.
    pub hierarchy: Vec<ObservationKind>,
    /// Minimum observations (after filtering, over the window) to fix on a kind.
    pub min_obs: BTreeMap<ObservationKind, usize>,
    /// Minimum GPU-hours (after filtering) to fix on a kind; absent = no minimum.
    #[serde(default)]
    pub min_volume_gpu_hours: BTreeMap<ObservationKind, f64>,
    /// A trade of fewer GPU-hours is left out of every fixing (and counted in the
    /// run's summary, never dropped silently): the minimum transaction size of SONIA
    /// (GBP 25m) and of the euro short-term rate. 0 = every trade counts.
    #[serde(default)]
    pub min_trade_gpu_hours: f64,
}

/// `[aggregation]`: how a level's observations combine into one value
/// (docs/methodology.md, step 6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AggregationSpec {
    /// The aggregation; its name is the fixings' `method` column.
    pub method: Aggregation,
    /// The `vw-median`'s rule when the cumulative weight lands exactly on half:
    /// `lower` (the default, SOFR's) or `midpoint`. The percentiles always use
    /// `lower`, the `median` method always `midpoint`.
    #[serde(default)]
    pub tie_rule: TieRule,
    /// Tail share for trimmed and winsorized means.
    #[serde(default = "default_trim")]
    pub trim: f64,
    /// Values a trim drops per tail: `floor` or `at-least-one`.
    #[serde(default)]
    pub trim_count: TrimCount,
    /// `none`: every observation is a value. `median`: each contributor's
    /// observations are first reduced to their median, then the method combines one
    /// value per contributor with equal weight (one vote per contributor).
    #[serde(default)]
    pub per_contributor: PerContributor,
}

/// See [`AggregationSpec::per_contributor`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum PerContributor {
    /// Every observation is a value with its own weight (the default).
    #[default]
    None,
    /// One value per contributor, the median of its observations, with weight 1.
    Median,
}

fn default_trim() -> f64 {
    0.1
}

/// Where the outlier filter applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FilterScope {
    /// Each day of the window is filtered on its own; a day is valid when at least
    /// `min_obs_per_day` of its observations survive.
    PerDay,
    /// The window's observations are filtered together.
    Pooled,
}

/// `[outliers]`: the filter applied to each level's observations before they are
/// weighted (docs/methodology.md, step 4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutlierSpec {
    /// The filter: `none`, `sigma-around-trimmed-mean`, `mad` or `percentile`.
    pub filter: OutlierFilter,
    /// Share of each tail the sigma filter's trimmed-mean centre drops (default
    /// 0.1; in `[0, 0.5)`).
    #[serde(default = "default_trim")]
    pub trim: f64,
    /// Values that trim drops per tail, when the filter is unweighted (weighted, it
    /// trims a share of the weight).
    #[serde(default)]
    pub trim_count: TrimCount,
    /// Half-width of the band kept, in units of the scale, for the sigma and `mad`
    /// filters (default 3).
    #[serde(default = "default_k")]
    pub k: f64,
    /// Scale of the sigma filter: `sample-sd` or `mad` (robust).
    #[serde(default)]
    pub scale: SigmaScale,
    /// The `percentile` filter's lower cut: the weighted quantile (lower rule)
    /// below which values go (default 0.05).
    #[serde(default = "default_low")]
    pub low: f64,
    /// The `percentile` filter's upper cut, mirrored from the top: values in the
    /// top `1 - high` of the weight go (default 0.95).
    #[serde(default = "default_high")]
    pub high: f64,
    /// Filter each day (`per-day`) or the pooled window (`pooled`).
    pub apply: FilterScope,
    /// Centre and scale weighted by the aggregation's weights (GPU-hours for
    /// trades), so a print has as much say in the filter as in the fixing
    /// (`outliers.rs`). `false` (the default): every value counts once.
    #[serde(default)]
    pub weighted: bool,
}

fn default_k() -> f64 {
    3.0
}
fn default_low() -> f64 {
    0.05
}
fn default_high() -> f64 {
    0.95
}

/// `[pooling]`: which days a fixing pools and when a day counts (docs/methodology.md,
/// steps 1 and 3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoolingSpec {
    /// Trailing window length in calendar days (1 = the fixing day alone).
    pub window_days: u32,
    /// A day counts as valid when it has at least this many observations.
    pub min_obs_per_day: usize,
    /// Valid days needed for a sufficient fixing.
    pub min_valid_days: u32,
    /// Days between the window's last day and the fixing date (0 = ends on it).
    #[serde(default)]
    pub lag_days: u32,
    /// What `window_days` and `lag_days` count: `calendar-days` or
    /// `publication-days` (days the calendar publishes on).
    #[serde(default)]
    pub window_unit: WindowUnit,
    /// A day with fewer than `min_obs_per_day` observations (before filtering):
    /// `keep` its observations in the pool (it only stops counting as valid) or
    /// `drop` them.
    #[serde(default)]
    pub thin_days: ThinDays,
    /// When valid days fall short of `min_valid_days`: `suppress` the level, or
    /// `publish-flagged` its value as low confidence.
    #[serde(default)]
    pub short_window: WhenShort,
}

/// See `PoolingSpec::window_unit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum WindowUnit {
    /// Every calendar day counts (the default).
    #[default]
    CalendarDays,
    /// Only the days the calendar publishes on count.
    PublicationDays,
}

/// See [`PoolingSpec::thin_days`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ThinDays {
    /// A thin day stays in the pool and only stops counting as valid (the default).
    #[default]
    Keep,
    /// A thin day's observations leave the pool.
    Drop,
}

/// What to do with a level that falls short of a sufficiency rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum WhenShort {
    /// The level is never published for this shortfall (the default of
    /// `pooling.short_window`).
    #[default]
    Suppress,
    /// When no level is accepted, the level is published with `sufficient = false`,
    /// flagged `low_confidence` and the shortfall (the default of
    /// `contributors.below_minimum`).
    PublishFlagged,
}

/// `[fallback]`: the listing adjustment and the carry when no level fixes
/// (docs/methodology.md, steps 8 and 9).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FallbackSpec {
    /// Adjust listing-based fixings by the listing-to-trade spread.
    pub listing_spread: bool,
    /// Look-back for the spread (days that had both a trade and a listing fixing).
    pub spread_lookback_days: u32,
    /// Days with both needed to measure a spread.
    pub spread_min_days: u32,
    /// Days a last value may be carried forward.
    pub carry_forward_days: u32,
}

/// `[contributors]`: how contributors are counted, capped, floored and kept
/// confidential (docs/methodology.md, steps 5 and 7, "Contributor identity",
/// "Confidentiality").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContributorSpec {
    /// Largest share of the total weight any one contributor may carry (1 = no cap).
    pub max_share: f64,
    /// Distinct contributors needed for a sufficient fixing.
    pub min_contributors: usize,
    /// A level whose contributors are fewer: `publish-flagged` (its value published
    /// as low confidence when no level is sufficient) or `suppress` (never
    /// published: a fixing must not reveal one or two contributors' prices).
    #[serde(default = "publish_flagged")]
    pub below_minimum: WhenShort,
    /// A level is not accepted when one contributor holds more than this share of
    /// its weight before the cap (1 = no rule).
    #[serde(default = "one")]
    pub max_concentration: f64,
    /// Percentiles (p1, p25, p75, p99) are published only when the level had at least
    /// this many contributors: with few, an extreme percentile is one contributor's
    /// quote (0 = always published).
    #[serde(default)]
    pub min_for_percentiles: usize,
    /// A contributor with no observation of a kind in the window (a feed outage)
    /// keeps its last day's observations for up to this many days, flagged
    /// `contributors_carried=N` (0 = never).
    #[serde(default)]
    pub carry_missing_days: u32,
    /// When the cap cannot hold (fewer than `1 / max_share` contributors):
    /// `equal-shares` (every contributor the same share, whatever its volume: a
    /// 0.001 GPU-hour contributor then weighs as much as the largest) or
    /// `proportional` (weights left proportional to volume; the level is flagged
    /// `cap_not_held` and is not sufficient, publishable like too few contributors).
    /// With `proportional` the cap also counts as not holding at exactly
    /// `1 / max_share` contributors, where only equal shares meet it.
    #[serde(default)]
    pub too_few_for_cap: TooFewForCap,
    /// Weight floor: a contributor with less than this share of a level's weight
    /// (before the cap) and less than half an equal share (`1 / (2 n)`) is left out
    /// of the level, flagged `below_floor=N` (0 = no floor).
    #[serde(default)]
    pub min_share: f64,
    /// More contributor aliases (canonical name -> spellings), added to
    /// `data/contributors.toml` before contributors are counted.
    #[serde(default)]
    pub aliases: BTreeMap<String, Vec<String>>,
}

/// See `ContributorSpec::too_few_for_cap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum TooFewForCap {
    /// Every contributor gets an equal share (the default).
    #[default]
    EqualShares,
    /// Weights stay proportional to volume and the level is flagged `cap_not_held`.
    Proportional,
}

fn publish_flagged() -> WhenShort {
    WhenShort::PublishFlagged
}
fn one() -> f64 {
    1.0
}

/// `[rounding]`: how published values are rounded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoundingSpec {
    /// Decimal places of values and percentiles, half away from zero on the decimal
    /// digits (`round_to`); at most 10.
    pub decimals: u32,
}

/// How a composite combines grades.
///
/// Its `method` text ([`CompositeMethod::as_str`]) is its serde name but for
/// `hedonic`, written `hedonic-time-dummy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "kebab-case")]
pub enum CompositeMethod {
    /// Chained weighted geometric mean of the components' price relatives, in
    /// points.
    JevonsChained,
    /// Chained ratio of the components' weighted mean prices, in points.
    DutotChained,
    /// Adjacent-period time-dummy hedonic index over the observations of the
    /// matching grades.
    #[strum(to_string = "hedonic-time-dummy")]
    Hedonic,
    /// A "market" price over several grades (e.g. every scope of one GPU): the
    /// observations of the matching grades pooled and fixed like one grade, in USD
    /// per GPU-hour.
    Pooled,
}

/// One `[[composite]]` of the methodology: an index over several grades.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompositeSpec {
    /// Written in the fixings' `grade` column: 1-200 printable characters, unique,
    /// not shaped like a grade, not beginning with a character the CSV guard alters.
    pub name: String,
    /// How it combines its grades.
    pub method: CompositeMethod,
    /// Grade key -> weight (chained Jevons / Dutot).
    #[serde(default)]
    pub weights: BTreeMap<String, f64>,
    /// Grade patterns whose observations feed a hedonic or pooled composite.
    #[serde(default)]
    pub patterns: Vec<String>,
    /// Index level on the first date (chained and hedonic; default 100).
    #[serde(default = "hundred")]
    pub base: f64,
}

impl CompositeSpec {
    /// The identity its fixings carry: its name, in its method's unit.
    pub fn id(&self) -> IndexId {
        IndexId::composite(
            self.name.clone(),
            IndexUnit::of_method(self.method.as_str()),
        )
    }
}

fn hundred() -> f64 {
    100.0
}

/// A methodology as its TOML file spells it: the shape serde reads, before anything
/// is checked. The engine never takes one of these: [`Methodology::new`] validates it
/// and parses its calendar, cut-off and grade patterns once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MethodologySpec {
    /// Written into every fixing row (`methodology_version`): at most 64 printable
    /// characters.
    pub version: String,
    /// A name for a person (at most 1000 bytes).
    pub name: String,
    /// Free text for a person (at most 10,000 bytes).
    #[serde(default)]
    pub description: String,
    /// Cut-off, time zone and publication days.
    pub calendar: CalendarSpec,
    /// The grades fixed.
    pub grades: GradeSpec,
    /// The input hierarchy and its minimums.
    pub inputs: InputSpec,
    /// How a level becomes a value.
    pub aggregation: AggregationSpec,
    /// The outlier filter.
    pub outliers: OutlierSpec,
    /// The window and valid days.
    pub pooling: PoolingSpec,
    /// Listing adjustment and carry-forward.
    pub fallback: FallbackSpec,
    /// Contributor cap, minimums, floor and aliases.
    pub contributors: ContributorSpec,
    /// Decimal places of published values.
    pub rounding: RoundingSpec,
    /// Composites fixed beside the grades (`[[composite]]`).
    #[serde(default)]
    pub composite: Vec<CompositeSpec>,
    /// Write a forward curve per GPU and scope from the reserved-term grades.
    #[serde(default = "yes")]
    pub forward_curve: bool,
    /// What a publication may change of the rows it published before (`[revision]`);
    /// absent: every row a later run fixes differently is restated. Left out of the
    /// methodology's JSON form when absent, so that files published before it
    /// existed keep their fingerprint.
    #[serde(default, skip_serializing_if = "RevisionSpec::is_default")]
    pub revision: RevisionSpec,
}

/// `[revision]`: the revision policy, data like every other rule. A daily
/// publication (`index --from D`) re-fixes every earlier row the new data changes
/// (late observations, a grade's life that the day extends, a day the file skipped)
/// and restates those inside the policy; the rows outside it are kept as first
/// published and counted (`not restated: ...`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RevisionSpec {
    /// `restate` (the default) or `never`: an index that is never revised adds rows
    /// after its last published date and changes none it published.
    #[serde(default)]
    pub policy: RevisionPolicy,
    /// Rows dated more than this many days before a publication's first day are not
    /// restated (absent: however old).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_days: Option<u32>,
    /// A published value that moves by at most this share of itself is not
    /// restated (absent: any change is); in `[0, 1)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
}

impl RevisionSpec {
    /// Whether this is the default policy (restate any change, however old).
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// Whether published rows are ever restated ([`RevisionSpec::policy`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RevisionPolicy {
    /// A row a later run fixes differently is restated (within the window and
    /// threshold).
    #[default]
    Restate,
    /// Published rows never change; only dates after the last published are added.
    Never,
}

fn yes() -> bool {
    true
}

/// A validated methodology: the file's shape (read through `Deref`, never changed in
/// place) with its calendar, cut-off and grade patterns parsed once, so no caller
/// parses them again or can meet a parse error after loading.
#[derive(Debug, Clone)]
pub struct Methodology {
    spec: MethodologySpec,
    rule: DayRule,
    clock: rentix_core::FixingClock,
    patterns: Vec<GradePattern>,
}

impl std::ops::Deref for Methodology {
    type Target = MethodologySpec;

    fn deref(&self) -> &MethodologySpec {
        &self.spec
    }
}

/// Two methodologies are the same when their files say the same: what is parsed
/// follows from the file.
impl PartialEq for Methodology {
    fn eq(&self, other: &Self) -> bool {
        self.spec == other.spec
    }
}

/// Written as its file's shape, as before it was parsed.
impl Serialize for Methodology {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.spec.serialize(s)
    }
}

impl Methodology {
    /// The bundled default, `data/methodologies/default.toml`.
    #[allow(
        clippy::expect_used,
        reason = "compiled-in data, checked by a unit test: failing is a build defect"
    )]
    pub fn default_methodology() -> Self {
        Self::from_toml(DEFAULT, Path::new("data/methodologies/default.toml"))
            .expect("default methodology is valid")
    }

    /// The shipped (daily) methodology whose `version` is `version`: how `verify`
    /// and the report find the methodology a fixings file names. `None` when no
    /// shipped file carries it (a methodology of the user's own).
    pub fn shipped_with_version(version: &str) -> Option<Self> {
        rentix_core::ConfigKind::Methodology
            .bundled()
            .iter()
            .filter_map(|(name, text)| Self::from_toml(text, Path::new(name)).ok())
            .find(|m| m.version == version)
    }

    /// Reads (within the config size limit), parses and validates a methodology file.
    pub fn from_file(path: &Path) -> Result<Self, IndexError> {
        Self::from_toml(&Self::read_text(path)?, path)
    }

    /// The text of the methodology file `path` (or of the shipped one of that
    /// name), unparsed.
    pub fn read_text(path: &Path) -> Result<String, IndexError> {
        rentix_core::read_config(path, rentix_core::ConfigKind::Methodology).map_err(|e| {
            IndexError::Input {
                path: path.to_path_buf(),
                detail: e.to_string(),
            }
        })
    }

    /// Parses and validates methodology TOML; `path` names it in errors.
    pub fn from_toml(text: &str, path: &Path) -> Result<Self, IndexError> {
        let spec: MethodologySpec = toml::from_str(text).map_err(|e| IndexError::Methodology {
            path: path.to_path_buf(),
            detail: e.to_string(),
        })?;
        Self::new(spec, path)
    }

    /// Validates `spec` and parses its rules; `path` names it in the error.
    pub fn new(spec: MethodologySpec, path: &Path) -> Result<Self, IndexError> {
        let parsed = (|| {
            spec.validate()?;
            Ok::<_, Invalid>((
                spec.parse_rule()?,
                spec.parse_clock()?,
                spec.parse_patterns()?,
            ))
        })();
        let (rule, clock, patterns) =
            parsed.map_err(|Invalid(detail)| IndexError::Methodology {
                path: path.to_path_buf(),
                detail,
            })?;
        Ok(Self {
            spec,
            rule,
            clock,
            patterns,
        })
    }

    /// The file's shape, to change and validate again with [`Methodology::new`].
    pub fn into_spec(self) -> MethodologySpec {
        self.spec
    }

    /// The methodology with `edit` applied to its file's shape, validated again
    /// (`path` names it in the error).
    pub fn edited(
        self,
        path: &Path,
        edit: impl FnOnce(&mut MethodologySpec),
    ) -> Result<Self, IndexError> {
        let mut spec = self.spec;
        edit(&mut spec);
        Self::new(spec, path)
    }

    /// Which days are publication days (`calendar.days`, `calendar.holidays`).
    pub fn day_rule(&self) -> &DayRule {
        &self.rule
    }

    /// The cut-off that assigns observations their fixing dates.
    pub fn cutoff_clock(&self) -> rentix_core::FixingClock {
        self.clock
    }

    /// The grade patterns to fix (`grades.patterns`).
    pub fn patterns(&self) -> &[GradePattern] {
        &self.patterns
    }
}

impl MethodologySpec {
    /// Checks the ranges a methodology must respect.
    pub fn validate(&self) -> Result<(), Invalid> {
        self.check_labels()?;
        self.check_ranges()?;
        self.check_composite_names()?;
        self.parse_clock()?;
        self.parse_rule()?;
        self.parse_patterns()?;
        self.check_rules()?;
        self.check_composite_members()
    }

    /// The version, name and description a fixing row and a reader see; a daily cadence.
    fn check_labels(&self) -> Result<(), Invalid> {
        if self.version.trim().is_empty() {
            return Err("version must not be empty".into());
        }
        // The version is echoed into every fixing row: keep it a short label.
        if self.version.len() > MAX_VERSION_LEN || self.version.chars().any(char::is_control) {
            return Err(format!(
                "version must be at most {MAX_VERSION_LEN} printable characters (it is written into every fixing)"
            ).into());
        }
        if let Some(c) = self.calendar.cadence.filter(|c| !c.is_daily()) {
            return Err(format!(
                "calendar.cadence = \"{c}\": this methodology's shape is a daily one; an intraday methodology has [calendar] cadence and an [intraday] table (docs/methodology.md, \"Intraday fixings\")"
            ).into());
        }
        if self.name.len() > 1000 || self.description.len() > 10_000 {
            return Err("name (1000) or description (10000 characters) too long".into());
        }
        Ok(())
    }

    /// The hierarchy lists each kind once; day counts and minimums are in range.
    fn check_ranges(&self) -> Result<(), Invalid> {
        if let Some(t) = self.revision.threshold {
            if !(0.0..1.0).contains(&t) {
                return Err(format!(
                    "revision.threshold = {t}: a share of the published value in [0, 1)"
                )
                .into());
            }
        }
        if self.revision.window_days.is_some_and(|d| d > MAX_DAYS) {
            return Err(format!("revision.window_days must be at most {MAX_DAYS}").into());
        }
        let mut kinds = std::collections::BTreeSet::new();
        for k in &self.inputs.hierarchy {
            if !kinds.insert(k) {
                return Err(format!("inputs.hierarchy lists {k} twice").into());
            }
        }
        for (name, v, max) in [
            ("pooling.window_days", self.pooling.window_days, MAX_DAYS),
            ("pooling.lag_days", self.pooling.lag_days, 366),
            (
                "fallback.spread_lookback_days",
                self.fallback.spread_lookback_days,
                366,
            ),
            (
                "fallback.spread_min_days",
                self.fallback.spread_min_days,
                366,
            ),
            (
                "fallback.carry_forward_days",
                self.fallback.carry_forward_days,
                366,
            ),
        ] {
            if v > max {
                return Err(format!("{name} = {v} is more than {max}").into());
            }
        }
        if self.contributors.min_contributors == 0 {
            return Err("contributors.min_contributors must be at least 1".into());
        }
        if self.inputs.min_obs.values().any(|v| *v == 0) {
            return Err("inputs.min_obs must be at least 1 for every kind".into());
        }
        if self.pooling.min_obs_per_day == 0 {
            return Err("pooling.min_obs_per_day must be at least 1".into());
        }
        if !(self.outliers.k.is_finite() && self.outliers.k <= 1000.0) {
            return Err("outliers.k must be a finite number <= 1000".into());
        }
        Ok(())
    }

    /// Composite names: printable, unaltered by the CSV guard, unique, not grades; bases and weights.
    fn check_composite_names(&self) -> Result<(), Invalid> {
        let mut names = std::collections::BTreeSet::new();
        for c in &self.composite {
            if c.name.is_empty() || c.name.len() > 200 || c.name.chars().any(char::is_control) {
                return Err(format!(
                    "composite name {:?} must be 1-200 printable characters",
                    c.name
                )
                .into());
            }
            // A name the CSV guard would write with a leading ' would read back as
            // another name: every re-run would restate each of its rows.
            if rentix_table::neutralize(c.name.clone()) != c.name {
                return Err(format!(
                    "composite name {:?} begins with = + - @, a tab or a carriage return, which a CSV file cannot hold unaltered (a spreadsheet would run it as a formula); rename it",
                    c.name
                ).into());
            }
            if !names.insert(c.name.as_str()) {
                return Err(format!("composite {} is defined twice", c.name).into());
            }
            if c.name.parse::<rentix_core::Grade>().is_ok() {
                return Err(format!(
                    "composite {} is named like a grade; choose a name that is not GPU/SCOPE/TERM",
                    c.name
                )
                .into());
            }
            if !(c.base.is_finite() && c.base > 0.0) {
                return Err(format!("composite {}: base must be positive", c.name).into());
            }
            let sum: f64 = c.weights.values().sum();
            if !c.weights.is_empty() && (sum - 1.0).abs() > 1e-6 {
                return Err(format!("composite {}: weights add up to {sum}, not 1", c.name).into());
            }
        }
        Ok(())
    }

    /// Inputs, filters, caps and floors, aliases, carry and rounding.
    fn check_rules(&self) -> Result<(), Invalid> {
        if self.inputs.hierarchy.is_empty() {
            return Err("inputs.hierarchy needs at least one kind".into());
        }
        for k in &self.inputs.hierarchy {
            if !self.inputs.min_obs.contains_key(k) {
                return Err(format!("inputs.min_obs has no entry for {k}").into());
            }
        }
        let unit = |x: f64| (0.0..=1.0).contains(&x);
        if !(0.0..0.5).contains(&self.aggregation.trim) || !(0.0..0.5).contains(&self.outliers.trim)
        {
            return Err("trim must be in [0, 0.5)".into());
        }
        if self.outliers.k.is_nan() || self.outliers.k <= 0.0 {
            return Err("outliers.k must be positive".into());
        }
        if !(unit(self.outliers.low)
            && unit(self.outliers.high)
            && self.outliers.low < self.outliers.high)
        {
            return Err("outliers.low < outliers.high, both in [0, 1]".into());
        }
        if self.pooling.window_days == 0 {
            return Err("pooling.window_days must be >= 1".into());
        }
        if self.pooling.min_valid_days > self.pooling.window_days {
            return Err("pooling.min_valid_days cannot exceed window_days".into());
        }
        if !(0.0..=1.0).contains(&self.contributors.max_share) || self.contributors.max_share == 0.0
        {
            return Err("contributors.max_share must be in (0, 1]".into());
        }
        for (k, v) in &self.inputs.min_volume_gpu_hours {
            if !(v.is_finite() && *v >= 0.0) {
                return Err(
                    format!("inputs.min_volume_gpu_hours.{k} must be a number >= 0").into(),
                );
            }
        }
        if !(self.contributors.max_concentration > 0.0
            && self.contributors.max_concentration <= 1.0)
        {
            return Err("contributors.max_concentration must be in (0, 1]".into());
        }
        let clip = self.inputs.min_trade_gpu_hours;
        if !(clip.is_finite() && clip >= 0.0) {
            return Err("inputs.min_trade_gpu_hours must be a number >= 0".into());
        }
        let floor = self.contributors.min_share;
        if !(0.0..0.5).contains(&floor) {
            return Err("contributors.min_share must be in [0, 0.5)".into());
        }
        crate::contributor_id::ContributorAliases::with(&self.contributors.aliases)
            .map_err(|e| format!("contributors.aliases: {e}"))?;
        if self.contributors.carry_missing_days > 31 {
            return Err("contributors.carry_missing_days must be <= 31".into());
        }
        if self.rounding.decimals > 10 {
            return Err("rounding.decimals must be <= 10".into());
        }
        Ok(())
    }

    /// What each composite is made of: patterns for hedonic and pooled, positive grade weights otherwise.
    fn check_composite_members(&self) -> Result<(), Invalid> {
        for c in &self.composite {
            match c.method {
                CompositeMethod::Hedonic | CompositeMethod::Pooled => {
                    if c.patterns.is_empty() {
                        return Err(format!(
                            "composite {}: a {} composite needs patterns",
                            c.name,
                            c.method.as_str()
                        )
                        .into());
                    }
                    for p in &c.patterns {
                        GradePattern::new(p).map_err(|e| e.to_string())?;
                    }
                }
                _ => {
                    if c.weights.is_empty() || c.weights.values().any(|w| w.is_nan() || *w <= 0.0) {
                        return Err(format!("composite {}: needs positive weights", c.name).into());
                    }
                    for g in c.weights.keys() {
                        let grade = g
                            .parse::<rentix_core::Grade>()
                            .map_err(|e| format!("composite {}: {e}", c.name))?;
                        // Components are looked up by their key as fixings name it: a
                        // weight on another spelling would never find its grade.
                        if grade.key() != *g {
                            return Err(format!(
                                "composite {}: weight on {g:?}: write the grade as its key {:?}",
                                c.name,
                                grade.key()
                            )
                            .into());
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The cut-off and its time zone, as [`rentix_core::FixingClock`] takes them.
    pub fn cutoff(&self) -> Cutoff {
        Cutoff {
            time: self.calendar.cutoff.clone(),
            timezone: self.calendar.timezone.clone(),
        }
    }

    fn parse_clock(&self) -> Result<rentix_core::FixingClock, Invalid> {
        rentix_core::FixingClock::new(&self.cutoff()).map_err(|e| {
            // The clock's error quotes the value at fault: name its field.
            let field = match &e {
                rentix_core::CoreError::InvalidTime { value, .. }
                    if *value == self.calendar.timezone =>
                {
                    "calendar.timezone"
                }
                _ => "calendar.cutoff",
            };
            Invalid(format!("{field}: {e}"))
        })
    }

    /// First and last observation day of the window of fixing date `d`: `window_days`
    /// calendar or publication days (those `rule` counts; every day without a rule)
    /// ending `lag_days` before `d`.
    pub fn window_of(&self, d: NaiveDate, rule: Option<&DayRule>) -> (NaiveDate, NaiveDate) {
        let p = &self.pooling;
        match p.window_unit {
            WindowUnit::CalendarDays => {
                let end = d - Days::new(u64::from(p.lag_days));
                (end - Days::new(u64::from(p.window_days.max(1) - 1)), end)
            }
            WindowUnit::PublicationDays => {
                let end = publication_days_back(d, p.lag_days, rule);
                (
                    publication_days_back(end, p.window_days.max(1) - 1, rule),
                    end,
                )
            }
        }
    }

    /// At most how many calendar days the lag spans: the lag itself in calendar days;
    /// in publication days, 31 calendar days for each (the longest run of days a
    /// calendar may skip that [`window_of`](Self::window_of) looks through).
    pub fn lag_calendar_days_max(&self) -> u64 {
        let lag = u64::from(self.pooling.lag_days);
        match self.pooling.window_unit {
            WindowUnit::CalendarDays => lag,
            WindowUnit::PublicationDays => lag * 31,
        }
    }

    /// The first fixing date whose window can end on observation day `d`: `d` plus
    /// the lag, counted as [`window_of`](Self::window_of) counts it (calendar days,
    /// or the publication days of `rule`).
    pub fn lagged(&self, d: NaiveDate, rule: Option<&DayRule>) -> NaiveDate {
        let lag = self.pooling.lag_days;
        match self.pooling.window_unit {
            WindowUnit::CalendarDays => d + Days::new(u64::from(lag)),
            WindowUnit::PublicationDays => publication_days_forward(d, lag, rule),
        }
    }

    fn parse_rule(&self) -> Result<DayRule, Invalid> {
        DayRule::new(&self.calendar.days, &self.calendar.holidays).map_err(|e| {
            let field = match &e {
                rentix_core::CoreError::Unknown {
                    what: "day rule", ..
                } => "calendar.days",
                _ => "calendar.holidays",
            };
            Invalid(format!("{field}: {e}"))
        })
    }

    fn parse_patterns(&self) -> Result<Vec<GradePattern>, Invalid> {
        self.grades
            .patterns
            .iter()
            .map(|p| GradePattern::new(p).map_err(|e| Invalid(format!("grades.patterns: {e}"))))
            .collect()
    }

    /// The outlier filter's parameters, from `[outliers]`.
    pub fn filter_params(&self) -> FilterParams {
        FilterParams {
            trim: self.outliers.trim,
            trim_count: self.outliers.trim_count,
            k: self.outliers.k,
            scale: self.outliers.scale,
            low: self.outliers.low,
            high: self.outliers.high,
            weighted: self.outliers.weighted,
        }
    }

    /// The aggregation's parameters, from `[aggregation]`.
    pub fn agg_params(&self) -> AggParams {
        AggParams {
            trim: self.aggregation.trim,
            tie: self.aggregation.tie_rule,
            trim_count: self.aggregation.trim_count,
        }
    }

    /// The method column of the output, e.g. `vw-median`.
    pub fn method_label(&self) -> &'static str {
        self.aggregation.method.as_str()
    }
}

impl CompositeMethod {
    /// Every composite method.
    pub const ALL: [Self; Self::VARIANTS.len()] = match Self::VARIANTS.first_chunk() {
        Some(all) => *all,
        None => unreachable!(),
    };

    /// Whether the composite's values are index points (chained and hedonic) rather
    /// than a price (pooled).
    pub fn in_points(self) -> bool {
        IndexUnit::of_method(self.as_str()) == IndexUnit::Points
    }

    /// The elementary formula of a chained composite's links; `None` for hedonic and
    /// pooled.
    pub fn elementary(self) -> Option<Elementary> {
        match self {
            CompositeMethod::JevonsChained => Some(Elementary::Jevons),
            CompositeMethod::DutotChained => Some(Elementary::Dutot),
            CompositeMethod::Hedonic | CompositeMethod::Pooled => None,
        }
    }

    /// The fixings' `method` text (`hedonic-time-dummy` for `hedonic`).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

#[cfg(test)]
mod composite_unit_tests {
    use super::*;

    /// The published fixings know each composite method's text and unit
    /// ([`rentix_fixings::COMPOSITE_METHODS`]): a chained or hedonic composite is in
    /// points, a pooled one is a price.
    #[test]
    fn every_composite_method_is_published_with_its_unit() {
        let ours: Vec<(&str, IndexUnit)> = CompositeMethod::ALL
            .iter()
            .map(|m| (m.as_str(), IndexUnit::of_method(m.as_str())))
            .collect();
        assert_eq!(ours, rentix_fixings::COMPOSITE_METHODS);
        let points: Vec<&str> = CompositeMethod::ALL
            .iter()
            .filter(|m| m.in_points())
            .map(|m| m.as_str())
            .collect();
        assert_eq!(
            points,
            ["jevons-chained", "dutot-chained", "hedonic-time-dummy"]
        );
        assert!(!CompositeMethod::Pooled.in_points());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_composite_name_the_csv_guard_would_alter_is_refused_by_name() {
        for bad in ["+x", "-blend", "=SUM(A1)", "@h100", "\tx"] {
            let text = DEFAULT.replace(
                "name = \"h100-sxm-80gb/on-demand-blend\"",
                &format!("name = {bad:?}"),
            );
            let e = Methodology::from_toml(&text, Path::new("m.toml")).unwrap_err();
            let shown = e.to_string();
            assert!(shown.contains(&format!("{bad:?}")), "{bad}: {shown}");
        }
        // A name beginning with a letter is fine, and the bundled default loads.
        let ok = DEFAULT.replace("h100-sxm-80gb/on-demand-blend", "x+blend");
        assert!(Methodology::from_toml(&ok, Path::new("m.toml")).is_ok());
        Methodology::default_methodology();
    }
}

#[cfg(test)]
mod text_tests {
    use super::*;

    /// Every variant's `method` text as published before it was derived, and its
    /// serde name in methodology files: the two differ for `hedonic` alone.
    const TEXT: [(CompositeMethod, &str, &str); 4] = [
        (
            CompositeMethod::JevonsChained,
            "jevons-chained",
            "jevons-chained",
        ),
        (
            CompositeMethod::DutotChained,
            "dutot-chained",
            "dutot-chained",
        ),
        (CompositeMethod::Hedonic, "hedonic-time-dummy", "hedonic"),
        (CompositeMethod::Pooled, "pooled", "pooled"),
    ];

    #[test]
    fn text_forms_are_pinned_and_serde_names_too() {
        assert_eq!(CompositeMethod::ALL.map(|m| m.as_str()), TEXT.map(|t| t.1));
        for (m, text, serde_name) in TEXT {
            assert_eq!(m.as_str(), text);
            assert_eq!(serde_json::to_value(m).unwrap(), serde_name);
            assert_eq!(
                serde_json::from_value::<CompositeMethod>(serde_name.into()).unwrap(),
                m
            );
        }
    }
}

// The methodology's validation and parsing tests, kept apart from its code (the module is long).
#[cfg(test)]
#[path = "methodology_tests.rs"]
mod methodology_tests;
