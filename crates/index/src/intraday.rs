//! Intraday fixings: a methodology whose `[calendar] cadence` is shorter than a day
//! (`"15m"`, `"1h"`, any whole number of minutes that divides a day) is fixed at
//! every stamp of every day by the rules below, each generic, each optional where
//! it says so. A daily methodology (`cadence` absent or `"1d"`) never comes here.
//!
//! ## A stamp
//!
//! The fixing at stamp `t` (`fixed_at`, UTC; a day's stamps are 00:15 .. 24:00 for
//! 15 minutes, so a day has `1440 / cadence` of them, and `date` is the day the
//! stamp's interval starts in) reads the observations of `kinds` in `(t - cadence, t]`:
//!
//! 1. **Print**: each contributor's observations in the interval reduced to one
//!    price, `per_contributor = "lowest" | "median" | "last"` (the lowest eligible
//!    listing is what a renter could have had).
//! 2. **Screens** (`[intraday.screen]`, optional), against the contributor's own
//!    history: a print more than `jump` (a share) from the contributor's previous
//!    accepted print is accepted only if at least `corroborating` other contributors
//!    moved by more than `jump` the same way at this stamp; otherwise, once the
//!    contributor has `warm_up` accepted prints, a print more than `k_sigma` sigma
//!    from the mean of its last `history` accepted prints is rejected, sigma being
//!    their sample standard deviation over their mean, floored at `sigma_floor`. A
//!    rejected print leaves the contributor's previous vote in place (carried).
//! 3. **Vote**: an exponentially weighted average of the accepted prints with time
//!    constant `vote_ewma` (`v += (1 - exp(-dt / tau)) (p - v)`, `dt` the time since
//!    the previous accepted print; absent or `"0m"`: the print itself), or with
//!    half-life `vote_half_life` (`tau = half_life / ln 2`).
//! 4. **Panel**: a contributor votes while its last accepted print is at most
//!    `max_carry` old; it is *observed* when that print is inside `window`, else
//!    *carried*. Fewer than `min_panel` observed contributors: no value, flag
//!    `thin_panel` (carried votes never make a panel).
//! 5. **Weights** (`[intraday.weights]`, optional; equal weights otherwise): a file
//!    of `date,contributor,weight` (the latest row on or before the stamp's date; a
//!    contributor the file does not weigh does not vote, status `no_weight`), so an
//!    administrator's own relevance or quality scores can be used; normalized over
//!    the voters, raised to `floor` and capped at `cap` with the excess shared in
//!    proportion among the others (flag `cap_not_held` when `cap x voters < 1`);
//!    or, with `[intraday.weights.liveness]`, recomputed at every stamp from the
//!    prints before it by the liveness model (crate::liveness).
//! 6. **Sigma votes** (`[intraday.sigma_votes]`, optional): each contributor votes a
//!    third of its weight at `v`, `v (1 + s)` and `v (1 - s)`, `s` the standard
//!    deviation of its accepted prints over the last `days` days over their mean,
//!    floored at `floor`: a volatile contributor spreads its vote.
//! 7. **Value**: the weighted mean of the votes after cutting `trim` of the weight
//!    from each side (a fractional weight at each cut), or the interquantile mean
//!    by `iqm_alpha` (the cut is `1/2 - alpha`), or with `aggregate =
//!    "weighted_median"` their weighted median (the midpoint where the running
//!    weight is exactly half); rounded half-even to `decimals` places (a tie is a
//!    remainder within 1e-9 of a half).
//!
//! Every stamp's contributors are written as receipts (`<stem>_receipts.csv`: print,
//! vote, sigma and its unit, weight, status) when `publish_receipts = true`: for listings of
//! public rate cards, where confidentiality allows.

use crate::contributor_id::ContributorAliases;
use crate::error::IndexError;
use chrono::{DateTime, Days, NaiveDate, Utc};
use rayon::prelude::*;
use rentix_core::{GradePattern, Invalid, ObservationKind};
pub use rentix_fixings::intraday::{
    is_intraday_file, read_intraday, IntradayFixing, INTRADAY_COLUMNS,
};
pub use rentix_fixings::{canonical_sha256, canonical_sha256_text, digest_path};
use rentix_store::StoredObservation;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};

/// Most stamps one run may fix per grade (a year of minutes would be 525,600).
const MAX_STAMPS: i64 = 400_000;

pub use rentix_core::{parse_minutes, Cadence, DAY_MINUTES};

/// How a contributor's observations in a stamp become one print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reduction {
    /// The lowest price in the interval: the cheapest listing a renter could have
    /// had.
    Lowest,
    /// The median of the interval's prices (the mean of the middle two for an even
    /// count).
    Median,
    /// The latest price in the interval (of several in the same second, the
    /// highest).
    Last,
}

/// `[calendar]` of an intraday methodology: its cadence and how a stamp is labelled
/// (stamps are UTC).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntradayCalendar {
    /// `"15m"`, `"1h"`, ...: whole minutes dividing a day, shorter than a day.
    pub cadence: Cadence,
    /// Which end of its interval a stamp is labelled by: `end` (default: the stamp
    /// `t` holds the observations of `(t - cadence, t]`, a day's stamps are 00:15 ..
    /// 24:00) or `slot` (the Computable index's capture slots: the stamp `t` holds
    /// `[t, t + cadence)`, a capture is labelled by the latest mark at or before it,
    /// 22:16 in the 22:00 slot, and a day's stamps are 00:00 .. 23:45).
    #[serde(default, skip_serializing_if = "StampLabel::is_end")]
    pub label: StampLabel,
    /// Where the day's first slot opens (a duration shorter than the cadence;
    /// slot labels only): `cadence = "6h"`, `offset = "4h"` gives the slots 04:00,
    /// 10:00, 16:00 and 22:00, the Computable index's first grid, a capture before
    /// 04:00 belonging to the day before's 22:00 slot. Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<String>,
}

/// Which end of its interval an intraday stamp is labelled by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StampLabel {
    /// The interval's end: `(t - cadence, t]`.
    #[default]
    End,
    /// The interval's start, the capture slot: `[t, t + cadence)`.
    Slot,
}

impl StampLabel {
    fn is_end(&self) -> bool {
        *self == StampLabel::End
    }
}

/// `[grades]` of an intraday methodology.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntradayGrades {
    /// Grades to fix (glob patterns over `GPU/SCOPE/TERM`; regions are pooled).
    pub patterns: Vec<String>,
}

/// `[intraday.screen]`: each print checked against its contributor's own accepted
/// prints (module doc, step 2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Screen {
    /// Accepted prints kept per contributor for the sigma screen (at least 2).
    pub history: usize,
    /// Accepted prints a contributor needs before the sigma screen applies (at most
    /// `history`; fewer than 2 count as 2).
    pub warm_up: usize,
    /// A print further than this many sigmas from the mean of the kept prints is
    /// `rejected_sigma`.
    pub k_sigma: f64,
    /// Least sigma, as a share of that mean (0.03 = 3%).
    pub sigma_floor: f64,
    /// A move of more than this share from the previous accepted print (0.25 = 25%)
    /// needs corroboration.
    pub jump: f64,
    /// Other contributors that must move more than `jump` the same way at the stamp
    /// for a jump to be accepted; otherwise `rejected_jump`.
    pub corroborating: usize,
    /// How far another contributor must move the same way to corroborate a jump
    /// (default: `jump`; the Computable index: 0.10 against a 0.25 jump).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corroborating_move: Option<f64>,
    /// `"above"` (default): a move is a jump (or corroborates) when more than the
    /// threshold; `"at_or_above"`: from the threshold on (the Computable index).
    #[serde(default, skip_serializing_if = "Comparison::is_default")]
    pub comparison: Comparison,
    /// The sigma screen's standard deviation: `"sample"` (default, n - 1) or
    /// `"population"` (n).
    #[serde(default, skip_serializing_if = "Sd::is_default")]
    pub sd: Sd,
    /// Whether a print the sigma screen rejects stays in the history it is
    /// screened against (default false; the Computable index keeps it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rejected_in_history: bool,
    /// The jump screen stands down (every move passes it) while fewer than this
    /// many other contributors have a previous print to move from (default 0).
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub min_comparable: usize,
    /// Whether a corroborating move must go the jump's way (`"same"`, default) or
    /// may go either way (`"either"`: the Computable index counts any move of
    /// `corroborating_move` or more).
    #[serde(default, skip_serializing_if = "Direction::is_default")]
    pub corroborating_direction: Direction,
}

/// Which way a corroborating move must go (`[intraday.screen]
/// corroborating_direction`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// The jump's way.
    #[default]
    Same,
    /// Either way.
    Either,
}

impl Direction {
    fn is_default(&self) -> bool {
        *self == Direction::Same
    }
}

fn is_zero_usize(n: &usize) -> bool {
    *n == 0
}

/// A threshold's comparison (`[intraday.screen] comparison`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Comparison {
    /// More than the threshold.
    #[default]
    Above,
    /// The threshold or more.
    AtOrAbove,
}

impl Comparison {
    fn is_default(&self) -> bool {
        *self == Comparison::Above
    }

    fn passes(self, x: f64, threshold: f64) -> bool {
        match self {
            Comparison::Above => x > threshold,
            Comparison::AtOrAbove => x >= threshold,
        }
    }
}

/// A standard deviation's divisor.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sd {
    /// `n - 1` (an estimate of the population's).
    #[default]
    Sample,
    /// `n` (the Computable index's).
    Population,
}

impl Sd {
    fn is_default(&self) -> bool {
        *self == Sd::Sample
    }
}

/// What the sigma votes' spread is measured in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SigmaUnits {
    /// The sd over the mean: votes at `v (1 + s)` and `v (1 - s)` (default).
    #[default]
    Relative,
    /// The sd in dollars: votes at `v + s` and `v - s` (the Computable index).
    Dollars,
}

impl SigmaUnits {
    fn is_default(&self) -> bool {
        *self == SigmaUnits::Relative
    }

    /// Its text, as methodologies and receipts (`sigma_unit`) write it.
    pub fn as_str(self) -> &'static str {
        match self {
            SigmaUnits::Relative => "relative",
            SigmaUnits::Dollars => "dollars",
        }
    }

    /// The unit a receipt's `sigma_unit` names; `None` for any other text.
    pub fn parse(text: &str) -> Option<Self> {
        [SigmaUnits::Relative, SigmaUnits::Dollars]
            .into_iter()
            .find(|u| u.as_str() == text)
    }
}

/// What a sigma floor is a share of.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FloorOf {
    /// The contributor's vote (default).
    #[default]
    Vote,
    /// Its latest print, accepted or not (the Computable index: 3% of the print).
    Print,
}

impl FloorOf {
    fn is_default(&self) -> bool {
        *self == FloorOf::Vote
    }
}

/// `[intraday.sigma_votes]`: each vote split in three around the contributor's
/// volatility (module doc, step 6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SigmaVotes {
    /// Days of accepted prints the volatility `s` is measured over (at least 1).
    pub days: u32,
    /// Least `s`, a share of the mean (in `[0, 1)`).
    pub floor: f64,
    /// `"sample"` (default) or `"population"` standard deviation.
    #[serde(default, skip_serializing_if = "Sd::is_default")]
    pub sd: Sd,
    /// `"relative"` (default: sd over mean, votes at `v (1 +- s)`) or `"dollars"`
    /// (votes at `v +- s`, `s` rounded half-even to `decimals` as the receipts'
    /// `sigma` gives it).
    #[serde(default, skip_serializing_if = "SigmaUnits::is_default")]
    pub units: SigmaUnits,
    /// Whether the stamp's own print is among those measured (default true; the
    /// Computable index measures the previous `days` only).
    #[serde(default = "yes", skip_serializing_if = "Clone::clone")]
    pub include_current: bool,
    /// Whether prints a screen rejected are measured too (default false; the
    /// Computable index measures them).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub include_rejected: bool,
    /// What `floor` is a share of: `"vote"` (default) or `"print"`.
    #[serde(default, skip_serializing_if = "FloorOf::is_default")]
    pub floor_of: FloorOf,
    /// A least spread in dollars beside `floor` (default 0; the Computable index's
    /// older rule: 0.05).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub floor_usd: f64,
}

fn yes() -> bool {
    true
}

fn is_zero_f64(x: &f64) -> bool {
    *x == 0.0
}

/// `[intraday.weights]`: contributor weights, floored and capped (module doc,
/// step 5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WeightSpec {
    /// `date,contributor,weight` rows (relative to the methodology's folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// Least normalized weight a voter is raised to (default 0).
    #[serde(default)]
    pub floor: f64,
    /// Largest normalized weight of a voter, the excess shared in proportion among
    /// the others (default 1: no cap).
    #[serde(default = "whole")]
    pub cap: f64,
    /// The liveness model (`[intraday.weights.liveness]`, crate::liveness): weights
    /// recomputed at every stamp from the prints, `floor` and `cap` its floor and
    /// ceiling; the file's weights (or equal ones) until it switches on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liveness: Option<crate::liveness::Liveness>,
}

fn whole() -> f64 {
    1.0
}

/// `[intraday]`: the rules of every stamp (module doc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntradaySpec {
    /// The observation kinds read; rows of other kinds are left out.
    pub kinds: Vec<ObservationKind>,
    /// How a contributor's observations in an interval become one print.
    pub per_contributor: Reduction,
    /// A contributor is observed while its last accepted print is this recent.
    pub window: String,
    /// A contributor votes while its last accepted print is this recent.
    pub max_carry: String,
    /// Time constant `tau` of the vote's exponential average (a duration);
    /// absent or `"0m"`: the vote is the print.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vote_ewma: Option<String>,
    /// Half-life of the vote's exponential average (a duration), instead of
    /// `vote_ewma`: `tau = half_life / ln 2`, so a print's pull halves every
    /// half-life (the Computable index's "1 hour" is a half-life: tau 86.56 min).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vote_half_life: Option<String>,
    /// How the votes become the value: `trimmed_mean` (default: the weighted mean
    /// after `trim` or `iqm_alpha`) or `weighted_median`.
    #[serde(default, skip_serializing_if = "Aggregate::is_default")]
    pub aggregate: Aggregate,
    /// Observed contributors a stamp needs for a value; fewer: no value,
    /// `thin_panel`.
    pub min_panel: usize,
    /// Share of the votes' weight cut from each side before the mean (in
    /// `[0, 0.5)`; default 0).
    #[serde(default)]
    pub trim: f64,
    /// The interquantile mean by its half-width instead of `trim`: the votes
    /// between the `1/2 - alpha` and `1/2 + alpha` weight quantiles are averaged
    /// (in `(0, 0.5]`; 0.5 is the plain weighted mean). The Computable index writes
    /// `alpha = 0.16666`: it keeps the central third, where `trim = 0.1666667`
    /// keeps the central two thirds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iqm_alpha: Option<f64>,
    /// Decimal places of the value, band and quartiles, rounded half-even (at most
    /// 9).
    pub decimals: u32,
    /// Also write `<stem>_receipts` (every contributor of every stamp, named by its
    /// identity).
    #[serde(default)]
    pub publish_receipts: bool,
    /// The screens; absent: every print is accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen: Option<Screen>,
    /// Sigma votes; absent: one vote per contributor at its vote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sigma_votes: Option<SigmaVotes>,
    /// Weights; absent: equal weights, no floor or cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<WeightSpec>,
    /// Contributors whose interval is an order book; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub books: Option<Books>,
}

/// `[intraday.books]`: contributors whose offers in an interval are an order book
/// (a marketplace's asks): their print is the volume-weighted median of the asks
/// (each offer weighted by its GPUs; where the running volume is exactly half,
/// the midpoint of that ask and the next), and a book of fewer than `min_offers`
/// offers is held out (no print at the stamp, flag `thin_book`), as the
/// Computable index prints its marketplaces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Books {
    /// The contributors (names as the observations give them; folded and aliased
    /// as every contributor is).
    pub contributors: Vec<String>,
    /// Offers a book needs in the interval to print (default 1).
    #[serde(default = "one_offer")]
    pub min_offers: usize,
}

fn one_offer() -> usize {
    1
}

/// The volume-weighted median of `asks` (`(price, volume)`): the first ask, in
/// price order, whose running volume passes half the total; where the running
/// volume is exactly half, the midpoint of that ask and the next (integer
/// volumes: the half is exact). `None` for no volume.
pub fn book_median(asks: &mut [(f64, u32)]) -> Option<f64> {
    asks.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let total: u64 = asks.iter().map(|a| u64::from(a.1)).sum();
    let mut cum = 0u64;
    for (i, &(p, v)) in asks.iter().enumerate() {
        cum += u64::from(v);
        if 2 * cum > total {
            return Some(p);
        }
        if 2 * cum == total && total > 0 {
            return Some(asks.get(i + 1).map_or(p, |n| (p + n.0) / 2.0));
        }
    }
    None
}

/// How a stamp's votes become its value (module doc, step 7).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Aggregate {
    /// The weighted mean after cutting weight from each side (`trim`, `iqm_alpha`).
    #[default]
    TrimmedMean,
    /// The weighted median: the first vote whose running weight passes half the
    /// total; where the running weight is exactly half, the midpoint of that vote
    /// and the next.
    WeightedMedian,
}

impl Aggregate {
    fn is_default(&self) -> bool {
        *self == Aggregate::TrimmedMean
    }
}

/// A methodology file of either kind, read and parsed once: its `[calendar]
/// cadence` decides (shorter than a day: intraday).
#[derive(Debug, Clone)]
pub enum AnyMethodology {
    /// A daily methodology (`crate::Methodology`).
    Daily(Box<crate::Methodology>),
    /// An intraday one.
    Intraday(Box<IntradayMethodology>),
}

impl AnyMethodology {
    /// Reads `path` (or the shipped methodology of that name) once and parses it as
    /// the kind its cadence says.
    pub fn from_file(path: &Path) -> Result<Self, IndexError> {
        let text = crate::Methodology::read_text(path)?;
        Ok(match IntradayMethodology::cadence_of(&text) {
            Some(_) => Self::Intraday(Box::new(IntradayMethodology::from_text_at(&text, path)?)),
            None => Self::Daily(Box::new(crate::Methodology::from_toml(&text, path)?)),
        })
    }
}

/// An intraday methodology file (module doc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntradayMethodology {
    /// Written into every row (`methodology_version`): 1 to 64 characters.
    pub version: String,
    /// Free text for a person.
    #[serde(default)]
    pub description: String,
    /// The cadence.
    pub calendar: IntradayCalendar,
    /// The grades fixed.
    pub grades: IntradayGrades,
    /// The rules of each stamp.
    pub intraday: IntradaySpec,
    #[serde(skip)]
    weights_table: Option<WeightTable>,
}

/// The parsed durations of a methodology, in minutes.
#[derive(Debug, Clone, Copy)]
struct Clock {
    cadence: i64,
    window: i64,
    max_carry: i64,
    /// The vote's time constant, minutes (0: the vote is the print).
    tau: f64,
}

impl IntradayMethodology {
    /// The cadence a methodology text asks for, without parsing the rest: `None`
    /// for a daily methodology (no `[calendar] cadence`, or a day: `"1d"`, `"24h"`).
    pub fn cadence_of(text: &str) -> Option<String> {
        let v: toml::Value = toml::from_str(text).ok()?;
        let c = v
            .get("calendar")?
            .get("cadence")?
            .as_str()?
            .trim()
            .to_string();
        // A text that is no cadence at all is read as intraday, whose parse says why.
        match c.parse::<Cadence>() {
            Ok(k) if k.is_daily() => None,
            _ => Some(c),
        }
    }

    /// Reads an intraday methodology (a path, or a shipped methodology's name) and
    /// its weights file.
    pub fn from_file(path: &Path) -> Result<Self, IndexError> {
        let text =
            rentix_core::read_config(path, rentix_core::ConfigKind::Methodology).map_err(|e| {
                IndexError::Methodology {
                    path: path.to_path_buf(),
                    detail: e.to_string(),
                }
            })?;
        Self::from_text_at(&text, path)
    }

    /// Parses `text`, read from `path`, and reads its weights file (relative to
    /// `path`'s folder).
    pub fn from_text_at(text: &str, path: &Path) -> Result<Self, IndexError> {
        let mut m = Self::from_toml(text, path)?;
        if let Some(file) = m.intraday.weights.as_ref().and_then(|w| w.file.clone()) {
            let file = if file.is_relative() {
                path.parent().unwrap_or(Path::new(".")).join(file)
            } else {
                file
            };
            m.weights_table = Some(WeightTable::read(&file)?);
        }
        Ok(m)
    }

    /// Parses and validates intraday methodology TOML; `path` names it in errors.
    /// A weights `file` is not read here ([`IntradayMethodology::from_file`] reads
    /// it, [`IntradayMethodology::with_weights`] gives one): without a table every
    /// voter weighs the same.
    pub fn from_toml(text: &str, path: &Path) -> Result<Self, IndexError> {
        let bad = |detail: String| IndexError::Methodology {
            path: path.to_path_buf(),
            detail,
        };
        let m: Self = toml::from_str(text).map_err(|e| bad(e.to_string()))?;
        m.validate().map_err(|e| bad(e.0))?;
        Ok(m)
    }

    /// Days of history a run from a date reads first (and does not publish) so
    /// that its stamps equal a run over the whole store: the longest of the sigma
    /// votes' window, the carry and a week (the screens' last prints), plus a day.
    pub fn warm_up_days(&self) -> u64 {
        let s = &self.intraday;
        let carry_minutes = self.clock().map_or(0, |c| c.max_carry).max(0) as u64;
        let carry = carry_minutes.div_ceil(DAY_MINUTES as u64);
        let sigma = s.sigma_votes.as_ref().map_or(0, |v| u64::from(v.days));
        // Liveness weights depend on the whole history (the switch, and the
        // weights in force at every sample): a run fixes from the first day.
        if self.liveness().is_some() {
            return u64::MAX;
        }
        carry.max(sigma).max(7) + 1
    }

    /// The liveness weight model, when the methodology has one.
    fn liveness(&self) -> Option<&crate::liveness::Liveness> {
        self.intraday.weights.as_ref()?.liveness.as_ref()
    }

    /// With weights given in code rather than a file.
    pub fn with_weights(mut self, table: WeightTable) -> Self {
        self.weights_table = Some(table);
        self
    }

    /// The first stamp of `day`: its midnight (UTC), past the grid's offset, and a
    /// cadence on under `end` labels.
    pub fn first_stamp_of(&self, day: NaiveDate) -> Result<DateTime<Utc>, Invalid> {
        let midnight = day.and_hms_opt(0, 0, 0).ok_or("bad day")?.and_utc();
        let step = match self.calendar.label {
            StampLabel::End => self.calendar.cadence.minutes(),
            StampLabel::Slot => 0,
        };
        Ok(midnight + chrono::Duration::minutes(self.offset_minutes()? + step))
    }

    /// When the interval a stamp stands for ends: the stamp itself under `end`
    /// labels, a cadence after it under `slot` labels.
    pub fn interval_end(&self, stamp: DateTime<Utc>) -> DateTime<Utc> {
        match self.calendar.label {
            StampLabel::End => stamp,
            StampLabel::Slot => stamp + chrono::Duration::minutes(self.calendar.cadence.minutes()),
        }
    }

    fn clock(&self) -> Result<Clock, Invalid> {
        let s = &self.intraday;
        Ok(Clock {
            cadence: self.calendar.cadence.minutes(),
            window: parse_minutes(&s.window)?,
            max_carry: parse_minutes(&s.max_carry)?,
            tau: match (&s.vote_ewma, &s.vote_half_life) {
                (Some(_), Some(_)) => {
                    return Err(
                        "intraday: vote_ewma (a time constant) or vote_half_life, not both".into(),
                    )
                }
                (Some(t), None) => parse_minutes(t)? as f64,
                (None, Some(h)) => parse_minutes(h)? as f64 / std::f64::consts::LN_2,
                (None, None) => 0.0,
            },
        })
    }

    /// Minutes from midnight UTC to the day's first slot (`[calendar] offset`).
    fn offset_minutes(&self) -> Result<i64, Invalid> {
        Ok(self
            .calendar
            .offset
            .as_deref()
            .map_or(Ok(0), parse_minutes)?)
    }

    /// Weight cut from each side of the votes before the mean: `trim`, or
    /// `1/2 - iqm_alpha`.
    pub fn cut(&self) -> f64 {
        let s = &self.intraday;
        s.iqm_alpha.map_or(s.trim, |a| 0.5 - a)
    }

    /// Checks the ranges a methodology must respect: the cadence divides a day, the
    /// window is at least the cadence and `max_carry` at least the window, and every
    /// share and count is in range.
    pub fn validate(&self) -> Result<(), Invalid> {
        if self.version.trim().is_empty() || self.version.len() > 64 {
            return Err("version: 1 to 64 characters".into());
        }
        let c = self.clock()?;
        if self.calendar.cadence.is_daily() {
            return Err(format!(
                "calendar.cadence = \"{}\": an intraday cadence is a whole number of minutes that divides a day (15m, 1h, 4h); a daily methodology writes \"1d\" or leaves it out",
                self.calendar.cadence
            ).into());
        }
        let offset = self.offset_minutes()?;
        if offset != 0 && (self.calendar.label != StampLabel::Slot || offset >= c.cadence) {
            return Err(format!(
                "calendar.offset = {:?}: slots open that long after midnight only with label = \"slot\" and an offset shorter than the cadence ({})",
                self.calendar.offset.as_deref().unwrap_or_default(),
                self.calendar.cadence
            )
            .into());
        }
        if c.window < c.cadence || c.max_carry < c.window {
            return Err(format!(
                "intraday.window ({}) must be at least the cadence and intraday.max_carry ({}) at least the window",
                self.intraday.window, self.intraday.max_carry
            ).into());
        }
        let s = &self.intraday;
        if s.kinds.is_empty() {
            return Err("intraday.kinds is empty".into());
        }
        if s.min_panel == 0 {
            return Err("intraday.min_panel must be at least 1".into());
        }
        if !(s.trim.is_finite() && (0.0..0.5).contains(&s.trim)) {
            return Err(format!("intraday.trim = {}: expected 0 to below 0.5", s.trim).into());
        }
        if let Some(a) = s.iqm_alpha {
            if !(a.is_finite() && a > 0.0 && a <= 0.5) {
                return Err(format!("intraday.iqm_alpha = {a}: expected above 0 to 0.5").into());
            }
            if s.trim != 0.0 {
                return Err(
                    "intraday: trim or iqm_alpha (the same cut, two ways), not both".into(),
                );
            }
        }
        if s.aggregate == Aggregate::WeightedMedian && (s.trim != 0.0 || s.iqm_alpha.is_some()) {
            return Err(
                "intraday: a weighted_median aggregate cuts nothing; leave out trim and iqm_alpha"
                    .into(),
            );
        }
        if s.decimals > 9 {
            return Err(format!("intraday.decimals = {}: at most 9", s.decimals).into());
        }
        if let Some(sc) = &s.screen {
            let shares = [sc.k_sigma, sc.sigma_floor, sc.jump];
            if shares.iter().any(|x| !(x.is_finite() && *x > 0.0)) || sc.history < 2 {
                return Err(
                    "intraday.screen: history >= 2 and k_sigma, sigma_floor, jump > 0".into(),
                );
            }
            if sc.warm_up > sc.history {
                return Err("intraday.screen.warm_up is more than history".into());
            }
            if sc
                .corroborating_move
                .is_some_and(|x| !(x.is_finite() && x > 0.0))
            {
                return Err("intraday.screen.corroborating_move: a share above 0".into());
            }
        }
        if let Some(sv) = &s.sigma_votes {
            if sv.days == 0 || !(sv.floor.is_finite() && sv.floor >= 0.0 && sv.floor < 1.0) {
                return Err("intraday.sigma_votes: days >= 1, 0 <= floor < 1".into());
            }
            if !(sv.floor_usd.is_finite() && sv.floor_usd >= 0.0) {
                return Err("intraday.sigma_votes.floor_usd: dollars >= 0".into());
            }
        }
        self.validate_weights_and_books(c.cadence)?;
        patterns(&self.grades.patterns)?;
        Ok(())
    }

    /// `validate`'s checks of `[intraday.weights]` (and its liveness model) and
    /// `[intraday.books]`.
    fn validate_weights_and_books(&self, cadence: i64) -> Result<(), Invalid> {
        let s = &self.intraday;
        if let Some(w) = &s.weights {
            if !(w.floor.is_finite()
                && w.cap.is_finite()
                && w.floor >= 0.0
                && w.cap > w.floor
                && w.cap <= 1.0)
            {
                return Err(format!(
                    "intraday.weights: 0 <= floor ({}) < cap ({}) <= 1",
                    w.floor, w.cap
                )
                .into());
            }
            if let Some(l) = &w.liveness {
                l.params(cadence, w.floor, w.cap)?;
            }
        }
        if let Some(b) = &s.books {
            if b.contributors.is_empty() || b.min_offers == 0 {
                return Err("intraday.books: at least one contributor, and min_offers >= 1".into());
            }
        }
        Ok(())
    }
}

fn patterns(p: &[String]) -> Result<Vec<GradePattern>, String> {
    if p.is_empty() {
        return Err("grades.patterns is empty".into());
    }
    p.iter()
        .map(|x| GradePattern::new(x).map_err(|e| format!("grades.patterns {x:?}: {e}")))
        .collect()
}

/// Dated contributor weights: for each contributor (folded name), its weights by
/// the moment they apply from. A row dated by a day applies from that day's first
/// stamp (the stamps whose interval starts in it: 00:15 on, not the 00:00 that ends
/// the day before); a row with a time (`2025-06-01T06:00:00Z`) applies from the
/// stamp at that time on, so that weights can change within a day.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WeightTable {
    /// Contributor -> (Unix seconds from which a weight applies -> the weight).
    by_contributor: HashMap<String, BTreeMap<i64, f64>>,
}

impl WeightTable {
    /// Reads `date,contributor,weight` rows, `date` a day (`2025-06-01`) or an RFC
    /// 3339 time (`2025-06-01T06:00:00Z`); a column named twice, a file over the
    /// table size limit, a date or weight that does not read are refused naming the
    /// file's line.
    pub fn read(path: &Path) -> Result<Self, IndexError> {
        let file = rentix_table::CsvFile::open(path, rentix_core::MAX_TABLE_BYTES)?;
        let [d, c, w] = file.require(["date", "contributor", "weight"])?;
        let aliases =
            ContributorAliases::with(&BTreeMap::new()).map_err(|detail| IndexError::Input {
                path: path.to_path_buf(),
                detail,
            })?;
        let bad = |line: u64, field: &str, detail: String| IndexError::Input {
            path: path.to_path_buf(),
            detail: format!("line {line}, field {field}: {detail}"),
        };
        let mut t = WeightTable::default();
        for row in file.rows() {
            let row = row?;
            let text = row.get(d);
            let from = match NaiveDate::parse_from_str(text, "%Y-%m-%d") {
                Ok(day) => Self::day_start(day),
                Err(_) => DateTime::parse_from_rfc3339(text)
                    .map(|at| at.timestamp())
                    .map_err(|_| {
                        bad(
                            row.line,
                            "date",
                            format!("{text:?} is not a date (YYYY-MM-DD) or an RFC 3339 time"),
                        )
                    })?,
            };
            let weight: f64 = row
                .get(w)
                .parse()
                .ok()
                .filter(|x: &f64| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| {
                    bad(
                        row.line,
                        "weight",
                        format!("{:?} is not a finite number >= 0", row.get(w)),
                    )
                })?;
            if row.get(c).is_empty() {
                return Err(bad(row.line, "contributor", "empty".into()));
            }
            t.insert_from(&aliases.identity(row.get(c)), from, weight);
        }
        Ok(t)
    }

    /// The first moment a day's weight applies: one second into the day, so that
    /// the stamp at 00:00 (the end of the day before) keeps the day before's.
    fn day_start(day: NaiveDate) -> i64 {
        day.and_hms_opt(0, 0, 1)
            .map_or(i64::MIN, |t| t.and_utc().timestamp())
    }

    /// Sets `contributor`'s weight from `date`'s first stamp on.
    pub fn insert(&mut self, contributor: &str, date: NaiveDate, weight: f64) {
        self.insert_from(contributor, Self::day_start(date), weight);
    }

    /// Sets `contributor`'s weight from the stamp at `at` on.
    pub fn insert_at(&mut self, contributor: &str, at: DateTime<Utc>, weight: f64) {
        self.insert_from(contributor, at.timestamp(), weight);
    }

    fn insert_from(&mut self, contributor: &str, from: i64, weight: f64) {
        self.by_contributor
            .entry(contributor.to_string())
            .or_default()
            .insert(from, weight);
    }

    /// `contributor`'s weight at the stamp `t` (Unix seconds); `None` without one,
    /// or at 0.
    fn weight(&self, contributor: &str, t: i64) -> Option<f64> {
        self.by_contributor
            .get(contributor)?
            .range(..=t)
            .next_back()
            .map(|(_, w)| *w)
            .filter(|w| *w > 0.0)
    }
}

/// One observation as the intraday engine reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IntradayObs {
    /// Seconds since the epoch.
    pub at: i64,
    /// USD per GPU-hour.
    pub price: f64,
    /// Position of the contributor in [`IntradayInput::contributors`].
    pub contributor: u32,
    /// The GPUs the offer holds (`gpus_per_unit`, 1 when not given): its volume
    /// in an order book (`[intraday.books]`).
    pub volume: u32,
}

/// What one contributor contributed at one stamp.
#[derive(Debug, Clone, PartialEq)]
pub struct Receipt {
    /// The stamp.
    pub fixed_at: DateTime<Utc>,
    /// The grade key.
    pub grade: String,
    /// The contributor's identity: its name folded and aliased
    /// (`ContributorAliases`), not its raw spelling.
    pub contributor: String,
    /// Its print at this stamp, USD per GPU-hour; `None` when it did not print.
    pub print: Option<f64>,
    /// Its vote, the price it is counted at.
    pub vote: Option<f64>,
    /// Its sigma-vote spread `s`; `None` without sigma votes and for `no_weight`.
    pub sigma: Option<f64>,
    /// What `sigma` is in (the methodology's `[intraday.sigma_votes] units`), with
    /// every sigma; `None` without one, and in receipts written before the column.
    pub sigma_unit: Option<SigmaUnits>,
    /// Its normalized weight after floor and cap (0 for `no_weight`).
    pub weight: f64,
    /// `observed`, `carried`, `rejected_sigma`, `rejected_jump` or `no_weight`.
    pub status: &'static str,
}

/// Observations grouped by the grade they feed, and the contributor names.
#[derive(Debug, Clone, Default)]
pub struct IntradayInput {
    /// Grade key (regions pooled) -> its observations, in arrival order
    /// ([`fix_intraday`] sorts them).
    pub grades: BTreeMap<String, Vec<IntradayObs>>,
    /// Contributor identities (folded, aliased names), in the order first seen.
    pub contributors: Vec<String>,
    /// Grade key -> the time of its last observation before the read range (seconds
    /// since the epoch), from [`IntradayInputBuilder::look_back`]: whether the
    /// grade's life reaches into the range.
    pub last_before: BTreeMap<String, i64>,
}

impl IntradayInput {
    /// Groups store rows by the (region-pooled) grades `m` fixes, of its kinds.
    pub fn from_rows(rows: &[StoredObservation], m: &IntradayMethodology) -> Result<Self, Invalid> {
        let mut b = IntradayInputBuilder::new(m)?;
        b.add(rows);
        Ok(b.finish())
    }
}

/// [`IntradayInput`] fed a batch (a store partition) at a time: memory holds the
/// engine's compact rows, not the store's.
pub struct IntradayInputBuilder<'a> {
    m: &'a IntradayMethodology,
    patterns: Vec<GradePattern>,
    aliases: ContributorAliases,
    ids: HashMap<String, u32>,
    input: IntradayInput,
}

impl<'a> IntradayInputBuilder<'a> {
    /// An empty input for `m`; fails when its grade patterns do not parse.
    pub fn new(m: &'a IntradayMethodology) -> Result<Self, Invalid> {
        Ok(Self {
            m,
            patterns: patterns(&m.grades.patterns)?,
            aliases: ContributorAliases::with(&BTreeMap::new())?,
            ids: HashMap::new(),
            input: IntradayInput::default(),
        })
    }

    /// Adds a batch of store rows; rows of other kinds or of grades the methodology
    /// does not fix are left out.
    pub fn add(&mut self, rows: &[StoredObservation]) {
        for r in rows {
            let o = &r.obs;
            let Some(grade) = self.grade_of(o) else {
                continue;
            };
            let who = self.aliases.identity(&o.source);
            let next = self.ids.len() as u32;
            let contributors = &mut self.input.contributors;
            let id = *self.ids.entry(who.clone()).or_insert_with(|| {
                contributors.push(who);
                next
            });
            self.input
                .grades
                .entry(grade.key())
                .or_default()
                .push(IntradayObs {
                    at: o.observed_at.timestamp(),
                    price: o.usd_per_gpu_hour.get(),
                    contributor: id,
                    volume: o.gpus_per_unit.unwrap_or(1).max(1),
                });
        }
    }

    /// Adds a store partition read as columns ([`rentix_store::FixingPart`]): what
    /// [`IntradayInputBuilder::add`] does with its rows, each distinct grade and
    /// contributor looked up once.
    pub fn add_part(&mut self, part: &rentix_store::FixingPart) {
        let grades = self.part_grades(part);
        let mut ids: Vec<Option<u32>> = vec![None; part.sources.len()];
        for r in 0..part.len() {
            if !self.m.intraday.kinds.contains(&part.kind[r]) {
                continue;
            }
            let Some(Some(grade)) = grades.get(part.grade[r] as usize) else {
                continue;
            };
            let s = part.source[r] as usize;
            let id = match ids.get(s).copied().flatten() {
                Some(id) => id,
                None => {
                    let who = self.aliases.identity(&part.sources[s]);
                    let next = self.ids.len() as u32;
                    let contributors = &mut self.input.contributors;
                    let id = *self.ids.entry(who.clone()).or_insert_with(|| {
                        contributors.push(who);
                        next
                    });
                    if let Some(slot) = ids.get_mut(s) {
                        *slot = Some(id);
                    }
                    id
                }
            };
            let obs = IntradayObs {
                at: part.observed_at[r].timestamp(),
                price: part.usd_per_gpu_hour[r],
                contributor: id,
                volume: part.gpus_per_unit[r].unwrap_or(1).max(1),
            };
            match self.input.grades.get_mut(grade) {
                Some(v) => v.push(obs),
                None => {
                    self.input.grades.insert(grade.clone(), vec![obs]);
                }
            }
        }
    }

    /// [`IntradayInputBuilder::look_back`] of a store partition read as columns.
    pub fn look_back_part(&mut self, part: &rentix_store::FixingPart) {
        let grades = self.part_grades(part);
        for r in 0..part.len() {
            if !self.m.intraday.kinds.contains(&part.kind[r]) {
                continue;
            }
            let Some(Some(grade)) = grades.get(part.grade[r] as usize) else {
                continue;
            };
            let at = part.observed_at[r].timestamp();
            match self.input.last_before.get_mut(grade) {
                Some(e) => *e = (*e).max(at),
                None => {
                    self.input.last_before.insert(grade.clone(), at);
                }
            }
        }
    }

    /// Each of a partition's distinct grades as the key of the grade it feeds
    /// (regions pooled), or `None` when the methodology does not fix it.
    fn part_grades(&self, part: &rentix_store::FixingPart) -> Vec<Option<String>> {
        part.grades
            .iter()
            .map(|g| {
                let g = g.clone().with_region(None);
                self.patterns.iter().any(|p| p.matches(&g)).then(|| g.key())
            })
            .collect()
    }

    /// Notes, from a batch of store rows before the read range, only when each
    /// grade the methodology fixes was last observed (its life: a grade's stamps
    /// end `MAX_SILENT_DAYS` after its last observation).
    pub fn look_back(&mut self, rows: &[StoredObservation]) {
        for r in rows {
            let o = &r.obs;
            let Some(grade) = self.grade_of(o) else {
                continue;
            };
            let at = o.observed_at.timestamp();
            let e = self.input.last_before.entry(grade.key()).or_insert(at);
            *e = (*e).max(at);
        }
    }

    /// The grade (regions pooled) an observation feeds, when it is of a kind the
    /// methodology reads and of a grade it fixes.
    fn grade_of(&self, o: &rentix_core::Observation) -> Option<rentix_core::Grade> {
        if !self.m.intraday.kinds.contains(&o.kind) {
            return None;
        }
        let grade = o.grade.clone().with_region(None);
        self.patterns
            .iter()
            .any(|p| p.matches(&grade))
            .then_some(grade)
    }

    /// The grouped input.
    pub fn finish(self) -> IntradayInput {
        self.input
    }
}

/// Fixes `m` from `store` over `from..=to` (the store's first to last fixing date
/// by default), reading a partition at a time (memory holds the engine's compact
/// rows); returns the fixings in publication order (by stamp, then grade;
/// receipts then by contributor), how many grades were fixed, and the range.
pub fn fix_store(
    store: &rentix_store::Store,
    m: &IntradayMethodology,
    from: Option<NaiveDate>,
    to: Option<NaiveDate>,
) -> Result<(IntradayResult, usize, NaiveDate, NaiveDate), IndexError> {
    let input_err = |detail: String| IndexError::Input {
        path: store.root().to_path_buf(),
        detail,
    };
    // A range that is no range is the command line's, whatever the store holds
    // (exit 2, as the daily index's).
    if let (Some(f), Some(t)) = (from, to) {
        if f > t {
            return Err(IndexError::Config(format!("--from {f} is after --to {t}")));
        }
    }
    let runs = store.runs()?;
    let store_through = runs.iter().map(|r| &r.run_id).max().map(|run| StoreMark {
        run: run.clone(),
        runs_sha256: rentix_store::runs_sha256(&runs, run),
    });
    let Some((first, last)) = store.fixing_dates()? else {
        return Err(input_err("the store holds no observations".into()));
    };
    // The range ends at the data: stamps past the store's last fixing date (or
    // before its first) would all be thin, and a file of them says nothing.
    if let Some(f) = from.filter(|f| *f > last) {
        return Err(input_err(format!(
            "--from {f} is after the store's last fixing date {last}: no stamp to fix; nothing was published"
        )));
    }
    let from = from.unwrap_or(first).max(first);
    let to = to.unwrap_or(last).min(last);
    if from > to {
        return Err(input_err(format!(
            "--from {from} is after --to {to} (the store holds {first} to {last})"
        )));
    }
    // Screens, votes and sigmas carry state from stamp to stamp: a run from `from`
    // starts `warm_up_days` earlier (not published), so that its stamps are those a
    // run over the whole store gives. The day before that too: an observation just
    // before midnight UTC can sit in the previous fixing date's partition.
    let start = from
        .checked_sub_days(Days::new(m.warm_up_days()))
        .unwrap_or(first)
        .max(first)
        .min(from);
    let input = read_store(store, m, first, start, to).map_err(|e| match e {
        StoreRead::Store(e) => IndexError::from(e),
        StoreRead::Methodology(e) => input_err(e.0),
    })?;
    let mut r = fix_intraday_from(m, &input, start, to, Some(from)).map_err(|e| input_err(e.0))?;
    r.store_through = store_through;
    if start < from {
        let first_stamp = from.and_hms_opt(0, 0, 0).map(|t| t.and_utc());
        r.fixings.retain(|f| f.date >= from);
        // The day's first stamp: the one after its 00:00 (ends), or its 00:00
        // (slots), as the fixings' `date` says.
        let slot = m.calendar.label == StampLabel::Slot;
        r.receipts
            .retain(|x| first_stamp.is_some_and(|t| x.fixed_at > t || (slot && x.fixed_at == t)));
    }
    // In publication order: stamp by stamp, grade by grade, each stamp's
    // contributors by name (a run numbers them as it first sees them, which
    // depends on the days it read).
    r.fixings
        .sort_by(|a, b| (a.fixed_at, &a.grade).cmp(&(b.fixed_at, &b.grade)));
    r.receipts.sort_by(|a, b| {
        (a.fixed_at, &a.grade, &a.contributor).cmp(&(b.fixed_at, &b.grade, &b.contributor))
    });
    let grades = input
        .grades
        .keys()
        .chain(input.last_before.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    Ok((r, grades, from, to))
}

/// Why [`read_store`] failed.
enum StoreRead {
    Store(rentix_store::StoreError),
    Methodology(Invalid),
}

/// What a run of `m` from `start` to `to` reads of the store (whose first fixing
/// date is `first`), as columns: the observations of `start - 1 ..= to + 1` (an
/// observation just before midnight UTC can sit in the previous fixing date's
/// partition) and, of the `MAX_SILENT_DAYS` before, only when each grade was last
/// observed (a grade's life reaches that far past its last observation). Read
/// again from a fresh listing when a compaction replaces files under the read.
fn read_store(
    store: &rentix_store::Store,
    m: &IntradayMethodology,
    first: NaiveDate,
    start: NaiveDate,
    to: NaiveDate,
) -> Result<IntradayInput, StoreRead> {
    let mut builder = IntradayInputBuilder::new(m).map_err(StoreRead::Methodology)?;
    if start > first {
        let back = start - Days::new(crate::engine::MAX_SILENT_DAYS + 2);
        store
            .for_each_fixing_part(Some(back), Some(start - Days::new(2)), |d| match d {
                rentix_store::Delivery::Part(part) => builder.look_back_part(&part),
                // A compaction replaced files under the read: start again.
                rentix_store::Delivery::Again => builder.input.last_before.clear(),
            })
            .map_err(StoreRead::Store)?;
    }
    let looked_back = builder.input.last_before.clone();
    store
        .for_each_fixing_part(
            Some(start - Days::new(1)),
            Some(to + Days::new(1)),
            |d| match d {
                rentix_store::Delivery::Part(part) => builder.add_part(&part),
                // A compaction replaced files under the read: start again.
                rentix_store::Delivery::Again => {
                    if let Ok(mut fresh) = IntradayInputBuilder::new(m) {
                        fresh.input.last_before = looked_back.clone();
                        builder = fresh;
                    }
                }
            },
        )
        .map_err(StoreRead::Store)?;
    Ok(builder.finish())
}

/// Everything an intraday run publishes.
#[derive(Debug, Clone, Default)]
pub struct IntradayResult {
    /// One row per grade and stamp, grade by grade, each in stamp order.
    pub fixings: Vec<IntradayFixing>,
    /// Every contributor of every stamp; empty unless `publish_receipts`.
    pub receipts: Vec<Receipt>,
    /// The `[intraday.books]` contributors, as the methodology names them, that no
    /// observation the run read came from (a misspelt marketplace otherwise fixes
    /// as if it had no book, without a word).
    pub unheard_books: Vec<String>,
    /// The store's last ingest run when a run from a store read it (`None`
    /// otherwise): a CSV publication's state records it, so that the next
    /// publication can tell the runs committed since, and say when they brought
    /// rows for days already published (stamps that are never revised).
    pub store_through: Option<StoreMark>,
}

/// The store's last ingest run a publication read, and a digest of the runs
/// through it ([`rentix_store::runs_sha256`]): the next publication tells the
/// runs committed since from a store rebuilt in other runs under the same ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreMark {
    /// The run's id (`run-NNNNNN`).
    pub run: String,
    /// The digest of the store's runs through it.
    pub runs_sha256: String,
}

/// Fixes every grade of `input` at every stamp of the days `from..=to` (module doc).
pub fn fix_intraday(
    m: &IntradayMethodology,
    input: &IntradayInput,
    from: NaiveDate,
    to: NaiveDate,
) -> Result<IntradayResult, Invalid> {
    fix_intraday_from(m, input, from, to, None)
}

/// [`fix_intraday`] over `from..=to` whose stamps before `publish_from`'s midnight
/// (UTC) only warm the contributors' state up: they are screened and remembered as
/// in a run over every day, but not valued, and neither they nor their receipts are
/// returned. A run's stamps from `publish_from` on are those of [`fix_intraday`]
/// over `from..=to`, at the cost of screening, not valuing, the warm-up: a day's
/// publication after 90 days of sigma-vote history valued 91 days of stamps to
/// keep one. A methodology with liveness weights values every stamp (its model
/// learns from the weights each stamp gave).
pub fn fix_intraday_from(
    m: &IntradayMethodology,
    input: &IntradayInput,
    from: NaiveDate,
    to: NaiveDate,
    publish_from: Option<NaiveDate>,
) -> Result<IntradayResult, Invalid> {
    let value_from = match publish_from {
        Some(d) if m.liveness().is_none() => d
            .and_hms_opt(0, 0, 0)
            .map_or(i64::MIN, |t| t.and_utc().timestamp()),
        _ => i64::MIN,
    };
    let clock = m.clock()?;
    // A weights file named but never read would fix on equal weights as if the
    // methodology had none: refuse instead (from_toml does not read files).
    if let (Some(file), None) = (
        m.intraday.weights.as_ref().and_then(|w| w.file.as_ref()),
        &m.weights_table,
    ) {
        return Err(format!(
            "intraday.weights.file {} was not read: load the methodology with from_file, or give the weights with with_weights",
            file.display()
        ).into());
    }
    let days = (to - from).num_days() + 1;
    if days < 1 {
        return Err(format!("--from {from} is after --to {to}").into());
    }
    let stamps = days * DAY_MINUTES / clock.cadence;
    if stamps > MAX_STAMPS {
        return Err(format!(
            "{days} days at {} are {stamps} stamps a grade, more than {MAX_STAMPS}: fix a shorter range (--from, --to)",
            m.calendar.cadence
        ).into());
    }
    let offset = m.offset_minutes()? * 60;
    let start = offset
        + from
            .and_hms_opt(0, 0, 0)
            .map(|t| t.and_utc().timestamp())
            .ok_or("bad --from")?;
    // Every grade with observations, and those only alive from before the range.
    let none = Vec::new();
    let grades: Vec<(&String, &Vec<IntradayObs>)> = input
        .grades
        .keys()
        .chain(input.last_before.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|g| (g, input.grades.get(g).unwrap_or(&none)))
        .collect();
    let per_grade: Vec<IntradayResult> = grades
        .par_iter()
        .map(|(grade, obs)| {
            let mut obs = (*obs).clone();
            obs.sort_by(|a, b| {
                (a.at, a.contributor)
                    .cmp(&(b.at, b.contributor))
                    .then(a.price.total_cmp(&b.price))
            });
            let seed = input.last_before.get(*grade).copied();
            fix_grade(
                m,
                clock,
                grade,
                &obs,
                &input.contributors,
                Span {
                    start,
                    stamps,
                    value_from,
                },
                seed,
            )
        })
        .collect();
    let mut out = IntradayResult {
        unheard_books: unheard_books(&m.intraday, &input.contributors),
        ..IntradayResult::default()
    };
    for r in per_grade {
        out.fixings.extend(r.fixings);
        out.receipts.extend(r.receipts);
    }
    Ok(out)
}

/// The book contributors of `s` (as named) whose identity is none of `heard`'s.
fn unheard_books(s: &IntradaySpec, heard: &[String]) -> Vec<String> {
    let Some(b) = &s.books else {
        return Vec::new();
    };
    let fold = ContributorAliases::with(&BTreeMap::new()).ok();
    b.contributors
        .iter()
        .filter(|c| {
            let id = fold
                .as_ref()
                .map_or_else(|| (*c).clone(), |f| f.identity(c));
            !heard.contains(&id)
        })
        .cloned()
        .collect()
}

/// A contributor's state as the stamps go by.
#[derive(Debug, Clone, Default)]
struct Contributor {
    vote: Option<f64>,
    last_accepted_at: Option<i64>,
    last_accepted: Option<f64>,
    history: VecDeque<f64>,
    dated: VecDeque<(i64, f64)>,
    /// Its latest print, accepted or not.
    last_print: Option<f64>,
}

/// Mean and standard deviation; `None` below two values.
fn mean_sd_by(v: impl Iterator<Item = f64> + Clone, sd: Sd) -> Option<(f64, f64)> {
    let n = v.clone().count();
    if n < 2 {
        return None;
    }
    let m = v.clone().sum::<f64>() / n as f64;
    let divisor = match sd {
        Sd::Sample => n - 1,
        Sd::Population => n,
    };
    let var = v.map(|x| (x - m) * (x - m)).sum::<f64>() / divisor as f64;
    Some((m, var.sqrt()))
}

fn reduce(prices: &mut [f64], how: Reduction, last: f64) -> f64 {
    match how {
        Reduction::Lowest => prices.iter().copied().fold(f64::INFINITY, f64::min),
        Reduction::Last => last,
        Reduction::Median => {
            prices.sort_by(f64::total_cmp);
            let n = prices.len();
            if n % 2 == 1 {
                prices[n / 2]
            } else {
                (prices[n / 2 - 1] + prices[n / 2]) / 2.0
            }
        }
    }
}

/// Each contributor's observations of `obs` from `*i` up to `end` (its asks with
/// their volumes, and its last price), moving `*i` past them and `last_seen` to
/// the last one's time.
#[allow(clippy::type_complexity)]
fn interval_prints(
    obs: &[IntradayObs],
    i: &mut usize,
    end: i64,
    last_seen: &mut Option<i64>,
) -> BTreeMap<u32, (Vec<(f64, u32)>, f64)> {
    let mut prints: BTreeMap<u32, (Vec<(f64, u32)>, f64)> = BTreeMap::new();
    while *i < obs.len() && obs[*i].at <= end {
        let o = obs[*i];
        *last_seen = Some(o.at);
        let e = prints
            .entry(o.contributor)
            .or_insert_with(|| (Vec::new(), o.price));
        e.0.push((o.price, o.volume));
        e.1 = o.price;
        *i += 1;
    }
    prints
}

/// The stamps a grade is fixed at: `stamps` from `start` (as the calendar labels
/// them), those before `value_from` only warming the state up.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: i64,
    stamps: i64,
    value_from: i64,
}

fn fix_grade(
    m: &IntradayMethodology,
    clock: Clock,
    grade: &str,
    obs: &[IntradayObs],
    names: &[String],
    span: Span,
    last_before: Option<i64>,
) -> IntradayResult {
    let Span {
        start,
        stamps,
        value_from,
    } = span;
    let s = &m.intraday;
    let step = clock.cadence * 60;
    let mut state: BTreeMap<u32, Contributor> = BTreeMap::new();
    let mut out = IntradayResult::default();
    // Observations before the first stamp's interval only warm the state up if they
    // fall in it; the cursor starts at the first one inside (start - step, ...], or
    // [start, ...) for slot labels.
    let slot = m.calendar.label == StampLabel::Slot;
    let mut i = obs.partition_point(|o| if slot { o.at < start } else { o.at <= start });
    // The grade's life: a stamp is fixed while its last observation is at most
    // MAX_SILENT_DAYS old (before its first, and after a longer silence, none is).
    let life = i64::try_from(crate::engine::MAX_SILENT_DAYS).unwrap_or(92) * 86_400;
    let mut last_seen = last_before.max(i.checked_sub(1).map(|j| obs[j].at));
    let books = book_contributors(s, names);
    let mut live = s.weights.as_ref().and_then(|w| {
        let p = w
            .liveness
            .as_ref()?
            .params(clock.cadence, w.floor, w.cap)
            .ok()?;
        Some(crate::liveness::State::new(p))
    });
    for k in 1..=stamps {
        // A slot-labelled stamp is its interval's start, `[t, t + step)`.
        let t = start + (k - i64::from(slot)) * step;
        let end = if slot { t + step - 1 } else { t };
        let prints = interval_prints(obs, &mut i, end, &mut last_seen);
        let (prints, thin_book) = reduce_prints(prints, &books, s.per_contributor);
        let statuses = screen(s.screen.as_ref(), &prints, &state);
        for (&c, &p) in &prints {
            let status = statuses.get(&c).copied().unwrap_or("observed");
            let st = state.entry(c).or_default();
            st.last_print = Some(p);
            if status != "observed" {
                remember_rejected(s, st, t, p, status);
                continue;
            }
            st.vote = Some(match (st.vote, st.last_accepted_at) {
                (Some(v), Some(at)) if clock.tau > 0.0 => {
                    let dt = (t - at) as f64 / 60.0;
                    v + (1.0 - (-dt / clock.tau).exp()) * (p - v)
                }
                _ => p,
            });
            st.last_accepted_at = Some(t);
            st.last_accepted = Some(p);
            if let Some(sc) = &s.screen {
                push_bounded(&mut st.history, p, sc.history);
            }
            remember(s, st, t, p);
        }
        // A warm-up stamp (before `value_from`, never with liveness weights) has
        // moved every contributor's state as a valued one would: nothing of it is
        // returned, so it is not valued.
        if t < value_from {
            continue;
        }
        // The liveness model's view from the stamps before this one; it learns
        // this stamp's trusted prints (all but jump-rejected ones) after.
        let view = live.as_mut().map(|l| {
            let eligible: Vec<u32> = statuses
                .iter()
                .filter_map(|(c, st)| (*st == "observed").then_some(*c))
                .collect();
            l.view(&eligible)
        });
        let (mut fixing, receipts, weights) = value_at(&Stamp {
            m,
            clock,
            grade,
            names,
            t,
            prints: &prints,
            statuses: &statuses,
            state: &state,
            live: live.as_ref().map(|l| l.params()).zip(view.as_ref()),
        });
        if thin_book {
            fixing.flags = if fixing.flags.is_empty() {
                "thin_book".into()
            } else {
                format!("{};thin_book", fixing.flags)
            };
        }
        if let Some(l) = live.as_mut() {
            let trusted: Vec<(u32, f64)> = prints
                .iter()
                .filter_map(|(c, p)| {
                    (statuses.get(c) != Some(&"rejected_jump")).then_some((*c, *p))
                })
                .collect();
            l.advance(&trusted, &weights);
        }
        if last_seen.is_none_or(|a| t - a > life) {
            continue;
        }
        out.fixings.push(fixing);
        if s.publish_receipts {
            out.receipts.extend(receipts);
        }
    }
    out
}

/// Order-book contributors (by their position in `names`) and the offers their
/// books need.
fn book_contributors(s: &IntradaySpec, names: &[String]) -> BTreeMap<u32, usize> {
    let Some(b) = &s.books else {
        return BTreeMap::new();
    };
    let fold = ContributorAliases::with(&BTreeMap::new()).ok();
    let wanted: std::collections::BTreeSet<String> = b
        .contributors
        .iter()
        .map(|c| fold.as_ref().map_or_else(|| c.clone(), |f| f.identity(c)))
        .collect();
    names
        .iter()
        .enumerate()
        .filter(|(_, n)| wanted.contains(*n))
        .map(|(c, _)| (c as u32, b.min_offers))
        .collect()
}

/// Each contributor's observations of an interval (price and volume, and its last
/// price) reduced to its print: a book's volume-weighted median, held out below
/// its offers (then `true`: a thin book), or `how`.
#[allow(clippy::type_complexity)]
fn reduce_prints(
    prints: BTreeMap<u32, (Vec<(f64, u32)>, f64)>,
    books: &BTreeMap<u32, usize>,
    how: Reduction,
) -> (BTreeMap<u32, f64>, bool) {
    let mut thin = false;
    let out = prints
        .into_iter()
        .filter_map(|(c, (mut v, last))| match books.get(&c) {
            Some(&least) if v.len() < least => {
                thin = true;
                None
            }
            Some(_) => book_median(&mut v).map(|p| (c, p)),
            None => {
                let mut p: Vec<f64> = v.iter().map(|x| x.0).collect();
                Some((c, reduce(&mut p, how, last)))
            }
        })
        .collect();
    (out, thin)
}

fn push_bounded(history: &mut VecDeque<f64>, p: f64, len: usize) {
    history.push_back(p);
    while history.len() > len {
        history.pop_front();
    }
}

/// An accepted print into the sigma votes' dated history (the last `days` days).
fn remember(s: &IntradaySpec, st: &mut Contributor, t: i64, p: f64) {
    if let Some(sv) = &s.sigma_votes {
        st.dated.push_back((t, p));
        let oldest = t - i64::from(sv.days) * 86_400;
        while st.dated.front().is_some_and(|(at, _)| *at <= oldest) {
            st.dated.pop_front();
        }
    }
}

/// A rejected print where the methodology keeps it: in the sigma screen's history
/// (`rejected_in_history`, for a `rejected_sigma` print) and in the sigma votes'
/// (`include_rejected`).
fn remember_rejected(s: &IntradaySpec, st: &mut Contributor, t: i64, p: f64, status: &str) {
    if let Some(sc) = s.screen.as_ref().filter(|sc| sc.rejected_in_history) {
        if status == "rejected_sigma" {
            push_bounded(&mut st.history, p, sc.history);
        }
    }
    if s.sigma_votes.as_ref().is_some_and(|sv| sv.include_rejected) {
        remember(s, st, t, p);
    }
}

/// Each printing contributor's status at this stamp: `observed` (accepted),
/// `rejected_jump` or `rejected_sigma`.
fn screen(
    sc: Option<&Screen>,
    prints: &BTreeMap<u32, f64>,
    state: &BTreeMap<u32, Contributor>,
) -> BTreeMap<u32, &'static str> {
    let Some(sc) = sc else {
        return prints.keys().map(|c| (*c, "observed")).collect();
    };
    let moves: BTreeMap<u32, f64> = prints
        .iter()
        .filter_map(|(c, p)| {
            let prev = state.get(c)?.last_accepted?;
            Some((*c, p / prev - 1.0))
        })
        .collect();
    let corroborate = sc.corroborating_move.unwrap_or(sc.jump);
    prints
        .iter()
        .map(|(c, p)| {
            let st = state.get(c);
            // Others with a previous print to move from: fewer than `min_comparable`
            // and the jump screen stands down.
            let comparable = moves.keys().filter(|o| *o != c).count() >= sc.min_comparable;
            let status = match moves.get(c) {
                Some(mv) if comparable && sc.comparison.passes(mv.abs(), sc.jump) => {
                    let with = moves
                        .iter()
                        .filter(|(o, x)| {
                            *o != c
                                && sc.comparison.passes(x.abs(), corroborate)
                                && (sc.corroborating_direction == Direction::Either
                                    || x.signum() == mv.signum())
                        })
                        .count();
                    if with >= sc.corroborating {
                        "observed"
                    } else {
                        "rejected_jump"
                    }
                }
                _ => match st.filter(|st| st.history.len() >= sc.warm_up.max(2)) {
                    Some(st) => {
                        let (mean, sd) =
                            mean_sd_by(st.history.iter().copied(), sc.sd).unwrap_or((*p, 0.0));
                        let sigma = (sd / mean).max(sc.sigma_floor);
                        if (p - mean).abs() > sc.k_sigma * sigma * mean {
                            "rejected_sigma"
                        } else {
                            "observed"
                        }
                    }
                    None => "observed",
                },
            };
            (*c, status)
        })
        .collect()
}

/// Normalizes `w`, raises each to `floor` and caps each at `cap`, sharing what is
/// moved in proportion among the others; `false` when the cap cannot hold.
pub fn floor_and_cap(w: &mut [f64], floor: f64, cap: f64) -> bool {
    let n = w.len() as f64;
    let total: f64 = w.iter().sum();
    if w.is_empty() || total <= 0.0 {
        return true;
    }
    w.iter_mut().for_each(|x| *x /= total);
    if cap * n < 1.0 - 1e-12 || floor * n > 1.0 + 1e-12 {
        w.iter_mut().for_each(|x| *x = 1.0 / n);
        return cap * n >= 1.0 - 1e-12;
    }
    for _ in 0..w.len() + 1 {
        let mut moved = false;
        // Raise to the floor, taking the shortfall from those above it.
        let short: f64 = w.iter().map(|x| (floor - x).max(0.0)).sum();
        if short > 1e-15 {
            let above: f64 = w.iter().filter(|x| **x > floor).map(|x| x - floor).sum();
            for x in w.iter_mut() {
                if *x < floor {
                    *x = floor;
                } else if above > 0.0 {
                    *x -= short * (*x - floor) / above;
                }
            }
            moved = true;
        }
        // Cap, sharing the excess among those below the cap.
        let excess: f64 = w.iter().map(|x| (x - cap).max(0.0)).sum();
        if excess > 1e-15 {
            let below: f64 = w.iter().filter(|x| **x < cap).sum();
            for x in w.iter_mut() {
                if *x > cap {
                    *x = cap;
                } else if below > 0.0 {
                    *x += excess * *x / below;
                }
            }
            moved = true;
        }
        if !moved {
            break;
        }
    }
    true
}

/// Weighted mean of `(value, weight)` after cutting `trim` of the weight from each
/// side, a fractional weight at each cut.
pub fn trimmed_weighted_mean(votes: &mut [(f64, f64)], trim: f64) -> Option<f64> {
    votes.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: f64 = votes.iter().map(|v| v.1).sum();
    if total <= 0.0 {
        return None;
    }
    let (lo, hi) = (trim * total, (1.0 - trim) * total);
    let (mut acc, mut sum, mut kept) = (0.0, 0.0, 0.0);
    for &(v, w) in votes.iter() {
        let (a, b) = (acc, acc + w);
        let part = (b.min(hi) - a.max(lo)).max(0.0);
        sum += v * part;
        kept += part;
        acc = b;
    }
    (kept > 0.0).then(|| sum / kept)
}

/// The weighted median of `(value, weight)`: the first value (in order) whose
/// running weight passes half the total; where the running weight equals half
/// exactly, the midpoint of that value and the next (so equal weights give the
/// textbook median of an even count).
pub fn weighted_median(votes: &mut [(f64, f64)]) -> Option<f64> {
    votes.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: f64 = votes.iter().map(|v| v.1).sum();
    if total.is_nan() || total <= 0.0 {
        return None;
    }
    let half = total / 2.0;
    let mut acc = 0.0;
    for (i, &(v, w)) in votes.iter().enumerate() {
        acc += w;
        // Within a billionth of the total counts as exactly half (binary noise).
        if (acc - half).abs() <= 1e-9 * total {
            let next = votes[i + 1..].iter().find(|x| x.1 > 0.0).map_or(v, |x| x.0);
            return Some((v + next) / 2.0);
        }
        if acc > half {
            return Some(v);
        }
    }
    votes.last().map(|x| x.0)
}

/// `x` rounded half-even to `decimals` places; a tie is a remainder within 1e-9 of
/// a half (binary noise).
pub fn round_half_even(x: f64, decimals: u32) -> f64 {
    let p = 10f64.powi(decimals as i32);
    let y = x * p;
    let f = y.floor();
    let r = if ((y - f) - 0.5).abs() < 1e-9 {
        if f % 2.0 == 0.0 {
            f
        } else {
            f + 1.0
        }
    } else {
        y.round()
    };
    let v = r / p;
    if v == 0.0 {
        0.0
    } else {
        v
    }
}

/// One stamp of one grade, as [`value_at`] fixes it: the methodology and its clock,
/// the contributors' names, the stamp's prints and their screen statuses, and the
/// contributors' state once the stamp's accepted prints are in.
struct Stamp<'a> {
    m: &'a IntradayMethodology,
    clock: Clock,
    grade: &'a str,
    names: &'a [String],
    /// The stamp, seconds since the epoch.
    t: i64,
    prints: &'a BTreeMap<u32, f64>,
    statuses: &'a BTreeMap<u32, &'static str>,
    state: &'a BTreeMap<u32, Contributor>,
    /// The liveness model and its view at this stamp, when the methodology has it.
    live: Option<(&'a crate::liveness::Params, &'a crate::liveness::View)>,
}

/// A contributor voting at a stamp.
struct Voter {
    contributor: u32,
    vote: f64,
    /// Its weight before normalization, floor and cap.
    base: f64,
    /// `observed`, `carried`, or the screen's rejection of its print at the stamp.
    status: &'static str,
}

/// A stamp's voters, and how many of them are observed and carried.
struct Panel {
    voters: Vec<Voter>,
    observed: usize,
    carried: usize,
}

impl Stamp<'_> {
    /// The stamp as a time.
    fn fixed_at(&self) -> DateTime<Utc> {
        DateTime::<Utc>::from_timestamp(self.t, 0).unwrap_or_default()
    }

    /// The day the stamp's interval starts in (an end-labelled 24:00 stamp belongs
    /// to the day it ends; a slot is its own day's).
    fn date(&self) -> NaiveDate {
        stamp_date(self.fixed_at(), self.m.calendar.label)
    }

    /// What contributor `c` contributed at this stamp.
    fn receipt(
        &self,
        c: u32,
        vote: f64,
        sigma: Option<f64>,
        weight: f64,
        status: &'static str,
    ) -> Receipt {
        Receipt {
            fixed_at: self.fixed_at(),
            grade: self.grade.into(),
            contributor: self.names[c as usize].clone(),
            print: self.prints.get(&c).copied(),
            vote: Some(vote),
            sigma,
            sigma_unit: sigma.and(self.m.intraday.sigma_votes.as_ref().map(|sv| sv.units)),
            weight,
            status,
        }
    }

    /// The contributors voting: a vote within `max_carry` and a weight at the
    /// stamp; a contributor without a weight gets a `no_weight` receipt instead.
    fn panel(&self, receipts: &mut Vec<Receipt>) -> Panel {
        let (s, t, clock) = (&self.m.intraday, self.t, self.clock);
        let mut voters = Vec::new();
        let mut observed = 0;
        let mut carried = 0;
        for (&c, st) in self.state {
            let (Some(vote), Some(at)) = (st.vote, st.last_accepted_at) else {
                continue;
            };
            if t - at > clock.max_carry * 60 {
                continue;
            }
            let printed = self.statuses.get(&c).copied();
            let status = match printed {
                Some("observed") => "observed",
                Some(rejected) => rejected,
                None if t - at < clock.window * 60 => "observed",
                None => "carried",
            };
            let base = match (&s.weights, &self.m.weights_table) {
                (Some(_), Some(table)) => table.weight(&self.names[c as usize], t),
                _ => Some(1.0),
            };
            let Some(base) = base else {
                receipts.push(self.receipt(c, vote, None, 0.0, "no_weight"));
                continue;
            };
            if status == "observed" {
                observed += 1;
            } else {
                carried += 1;
            }
            voters.push(Voter {
                contributor: c,
                vote,
                base,
                status,
            });
        }
        Panel {
            voters,
            observed,
            carried,
        }
    }

    /// The voters' weights normalized, floored and capped as `weights` says (equal
    /// shares without it); flags `cap_not_held` when the cap cannot hold.
    fn weights(&self, voters: &[Voter], flags: &mut Vec<&'static str>) -> Vec<f64> {
        let mut weights: Vec<f64> = voters.iter().map(|v| v.base).collect();
        if let Some((p, view)) = self.live {
            let ids: Vec<u32> = voters.iter().map(|v| v.contributor).collect();
            let (w, how) = crate::liveness::weights(p, view, &ids, &weights);
            match how {
                Some(crate::liveness::Degenerate::CapProportional) => flags.push("cap_not_held"),
                Some(crate::liveness::Degenerate::Uniform) => flags.push("equal_weights"),
                None => {}
            }
            if view.switched {
                flags.push("weights_switched");
            }
            return w;
        }
        if let Some(w) = &self.m.intraday.weights {
            if !floor_and_cap(&mut weights, w.floor, w.cap) {
                flags.push("cap_not_held");
            }
        } else {
            floor_and_cap(&mut weights, 0.0, 1.0);
        }
        weights
    }

    /// Contributor `c`'s sigma-vote spread under sigma votes (its vote is `vote`),
    /// in the methodology's units: the standard deviation of its prints of the
    /// last `days` days (the stamp's own unless `include_current = false`) over
    /// their mean (`relative`) or in dollars, at least `floor` of the vote or the
    /// print and `floor_usd` (both as a share of the vote when relative).
    fn sigma(&self, c: u32, vote: f64) -> Option<f64> {
        self.m.intraday.sigma_votes.as_ref().map(|sv| {
            let st = &self.state[&c];
            let measured = st
                .dated
                .iter()
                .filter(|(at, _)| sv.include_current || *at < self.t)
                .map(|x| x.1);
            let sd = mean_sd_by(measured, sv.sd);
            let floor = match sv.floor_of {
                FloorOf::Vote => sv.floor * vote,
                FloorOf::Print => sv.floor * st.last_print.unwrap_or(vote),
            }
            .max(sv.floor_usd);
            match sv.units {
                // The share of the vote written as before: `floor` itself when it
                // is a share of the vote and no dollar floor is set (same bytes).
                SigmaUnits::Relative => {
                    let least = if sv.floor_of == FloorOf::Vote && sv.floor_usd == 0.0 {
                        sv.floor
                    } else {
                        floor / vote
                    };
                    sd.map_or(least, |(mean, sd)| (sd / mean).max(least))
                }
                // Rounded as published, and voted as published, so that the
                // receipts recompute the value (the Computable index votes its
                // rounded `conf_usd_gpu_hr`).
                SigmaUnits::Dollars => round_half_even(
                    sd.map_or(floor, |(_, sd)| sd.max(floor)),
                    self.m.intraday.decimals,
                ),
            }
        })
    }

    /// The `(value, weight)` votes: each voter's vote at its weight, or its three
    /// sigma votes at a third of it each; a receipt for every voter.
    fn votes(
        &self,
        voters: &[Voter],
        weights: &[f64],
        receipts: &mut Vec<Receipt>,
    ) -> Vec<(f64, f64)> {
        let mut votes = Vec::new();
        for (voter, w) in voters.iter().zip(weights) {
            let (c, vote) = (voter.contributor, voter.vote);
            let sigma = self.sigma(c, vote);
            push_votes(self.m, &mut votes, vote, sigma, *w);
            receipts.push(self.receipt(c, vote, sigma, *w, voter.status));
        }
        votes
    }
}

/// A voter's votes at weight `w`: three at a third of it each around its `vote`
/// (`sigma` in the methodology's units), or one.
fn push_votes(
    m: &IntradayMethodology,
    votes: &mut Vec<(f64, f64)>,
    vote: f64,
    sigma: Option<f64>,
    w: f64,
) {
    let dollars = m
        .intraday
        .sigma_votes
        .as_ref()
        .is_some_and(|sv| sv.units == SigmaUnits::Dollars);
    match sigma {
        Some(sg) if dollars => {
            for v in [vote, vote + sg, vote - sg] {
                votes.push((v, w / 3.0));
            }
        }
        Some(sg) => {
            for v in [vote, vote * (1.0 + sg), vote * (1.0 - sg)] {
                votes.push((v, w / 3.0));
            }
        }
        None => votes.push((vote, w)),
    }
}

/// The value of a stamp's votes (none below `min_panel` observed voters, flag
/// `thin_panel`), its band and its rounded quartiles.
#[allow(clippy::type_complexity)]
fn aggregate(
    m: &IntradayMethodology,
    votes: &mut [(f64, f64)],
    observed: usize,
    flags: &mut Vec<&'static str>,
) -> (Option<f64>, Option<f64>, Option<(f64, f64)>) {
    let s = &m.intraday;
    let value = if observed < s.min_panel {
        flags.push("thin_panel");
        None
    } else {
        match s.aggregate {
            Aggregate::TrimmedMean => trimmed_weighted_mean(votes, m.cut()),
            Aggregate::WeightedMedian => weighted_median(votes),
        }
        .map(|v| round_half_even(v, s.decimals))
    };
    let (quartiles, band) = quartiles_and_band(votes, value, s.decimals);
    let quartiles = quartiles.map(|(a, b)| {
        (
            round_half_even(a, s.decimals),
            round_half_even(b, s.decimals),
        )
    });
    (value, band, quartiles)
}

/// The day a stamp's interval starts in: an end-labelled 24:00 stamp belongs to
/// the day it ends; a slot is its own day's.
fn stamp_date(t: DateTime<Utc>, label: StampLabel) -> NaiveDate {
    t.date_naive()
        - if t.timestamp() % 86_400 == 0 && label == StampLabel::End {
            Days::new(1)
        } else {
            Days::new(0)
        }
}

/// One ballot checked for [`fix_ballots`]: a contributor and a grade, on the
/// methodology's stamps (`step` and `offset` in seconds), a sigma only with sigma
/// votes (`relative`: in their relative units), a weight not negative, every vote a
/// positive price. Returns the contributor's folded name.
fn check_ballot(
    m: &IntradayMethodology,
    r: &Receipt,
    fold: &ContributorAliases,
    (step, offset, relative): (i64, i64, bool),
) -> Result<String, Invalid> {
    let at = r.fixed_at.to_rfc3339();
    let who = fold.identity(&r.contributor);
    if who.is_empty() || r.grade.trim().is_empty() {
        return Err(format!("a ballot at {at} names no contributor or no grade").into());
    }
    if (r.fixed_at.timestamp() - offset).rem_euclid(step) != 0
        || r.fixed_at.timestamp_subsec_nanos() != 0
    {
        return Err(format!(
            "the ballot of {} at {at} is not on the methodology's stamps (every {}{})",
            r.contributor,
            m.calendar.cadence,
            m.calendar
                .offset
                .as_ref()
                .map_or(String::new(), |o| format!(" from {o} after midnight"))
        )
        .into());
    }
    if r.sigma.is_some() && m.intraday.sigma_votes.is_none() {
        return Err(format!(
            "the ballot of {} at {at} gives a sigma but the methodology has no [intraday.sigma_votes]: its unit (relative or dollars) is unknown",
            r.contributor
        )
        .into());
    }
    // A receipt says what its sigma is in: read under a methodology that votes in
    // the other unit, a 0.05 dollar spread would count as 5% (or 5% as 5 cents).
    if let (Some(unit), Some(sv)) = (r.sigma_unit, &m.intraday.sigma_votes) {
        if unit != sv.units {
            return Err(format!(
                "the ballot of {} at {at} gives its sigma in {} (sigma_unit), and the methodology votes {} sigmas: fix the receipts again under the methodology that published them",
                r.contributor,
                unit.as_str(),
                sv.units.as_str()
            )
            .into());
        }
    }
    if r.weight < 0.0 {
        return Err(format!(
            "the ballot of {} at {at} has a negative weight {}",
            r.contributor, r.weight
        )
        .into());
    }
    // Every vote, the sigma ones included, is a positive price.
    let lowest = match (r.vote, r.sigma) {
        (Some(v), Some(s)) if relative => Some(v * (1.0 - s)),
        (Some(v), Some(s)) => Some(v - s),
        (v, _) => v,
    };
    if lowest.is_some_and(|v| v <= 0.0) || r.sigma.is_some_and(|s| s < 0.0) {
        return Err(format!(
            "the ballot of {} at {at} votes {:?} with sigma {:?}: a vote is a positive price, a sigma not negative, and a vote less its sigma still a price",
            r.contributor, r.vote, r.sigma
        )
        .into());
    }
    Ok(who)
}

/// Each stamp of `ballots` (receipts: a contributor's vote, sigma and weight at a
/// stamp of a grade, as `<stem>_receipts` publishes them) fixed again by `m`'s
/// sigma votes and aggregation alone, as an auditor recomputes a published record
/// from its ballots: a row with no vote or no weight (`no_weight`) does not vote;
/// `observed` rows make the panel, the others are carried (`rejected_*` ones also
/// counted rejected). Stamps in the publication's order: time, then grade.
pub fn fix_ballots(
    m: &IntradayMethodology,
    ballots: &[Receipt],
) -> Result<Vec<IntradayFixing>, Invalid> {
    if ballots.is_empty() {
        return Err("no ballot: the file holds no row".into());
    }
    let clock = m.clock()?;
    let (step, offset) = (clock.cadence * 60, m.offset_minutes()? * 60);
    let relative = m
        .intraday
        .sigma_votes
        .as_ref()
        .is_some_and(|sv| sv.units == SigmaUnits::Relative);
    let fold = ContributorAliases::with(&BTreeMap::new())?;
    let mut stamps: BTreeMap<(&str, DateTime<Utc>), Vec<&Receipt>> = BTreeMap::new();
    let mut seen: std::collections::HashSet<(&str, DateTime<Utc>, String)> =
        std::collections::HashSet::with_capacity(ballots.len());
    for r in ballots {
        let at = r.fixed_at.to_rfc3339();
        let who = check_ballot(m, r, &fold, (step, offset, relative))?;
        if !seen.insert((r.grade.as_str(), r.fixed_at, who)) {
            return Err(format!(
                "{} votes twice at {at} in {}: one ballot per contributor and stamp (names are folded: case and spacing do not make another contributor)",
                r.contributor, r.grade
            )
            .into());
        }
        stamps.entry((&r.grade, r.fixed_at)).or_default().push(r);
    }
    for ((grade, at), rows) in &stamps {
        let total: f64 = rows.iter().map(|r| r.weight).sum();
        if !total.is_finite() {
            return Err(format!(
                "the weights at {} in {grade} do not add up to a finite number: give them on a smaller scale",
                at.to_rfc3339()
            )
            .into());
        }
    }
    let mut out = Vec::with_capacity(stamps.len());
    // In the publication's order: stamp, then grade.
    let mut stamps: Vec<_> = stamps.into_iter().collect();
    stamps.sort_by(|((g1, t1), _), ((g2, t2), _)| (t1, g1).cmp(&(t2, g2)));
    for ((grade, fixed_at), rows) in stamps {
        let voters: Vec<&&Receipt> = rows
            .iter()
            .filter(|r| r.vote.is_some() && r.weight > 0.0 && r.status != "no_weight")
            .collect();
        let mut votes = Vec::new();
        for r in &voters {
            push_votes(m, &mut votes, r.vote.unwrap_or_default(), r.sigma, r.weight);
        }
        let observed = voters.iter().filter(|r| r.status == "observed").count();
        let mut flags = Vec::new();
        // A cap on the shares cannot hold under 1 / cap voters: the publication
        // gave them equal weights and said so. (The liveness model's flags come
        // from its scores and attendance, which receipts do not hold.)
        if let Some(w) = m.intraday.weights.as_ref().filter(|w| w.liveness.is_none()) {
            if !voters.is_empty() && w.cap * (voters.len() as f64) < 1.0 - 1e-12 {
                flags.push("cap_not_held");
            }
        }
        let (value, band, quartiles) = aggregate(m, &mut votes, observed, &mut flags);
        if voters.len() > observed {
            flags.push("carried_votes");
        }
        out.push(IntradayFixing {
            date: stamp_date(fixed_at, m.calendar.label),
            fixed_at,
            grade: grade.to_string(),
            value,
            band,
            quartiles,
            n_contributors: voters.len(),
            n_observed: observed,
            n_carried: voters.len() - observed,
            n_rejected: rows
                .iter()
                .filter(|r| r.status.starts_with("rejected"))
                .count(),
            flags: flags.join(";"),
        });
    }
    Ok(out)
}

/// The votes' weighted 25th and 75th percentiles when there is a `value`, and the
/// band: the larger distance from the value to either, rounded to `decimals`.
fn quartiles_and_band(
    votes: &[(f64, f64)],
    value: Option<f64>,
    decimals: u32,
) -> (Option<(f64, f64)>, Option<f64>) {
    let (vals, ws): (Vec<f64>, Vec<f64>) = votes.iter().copied().unzip();
    let q = |p: f64| {
        crate::weighted_quantile::weighted_quantile(
            &vals,
            &ws,
            p,
            crate::weighted_quantile::TieRule::Midpoint,
        )
    };
    let quartiles = value.and(q(0.25).zip(q(0.75)));
    let band = value
        .zip(quartiles)
        .map(|(v, (lo, hi))| round_half_even((v - lo).max(hi - v).max(0.0), decimals));
    (quartiles, band)
}

/// The grade's fixing at the stamp, every voter's receipt, and the voters'
/// weights.
fn value_at(stamp: &Stamp<'_>) -> (IntradayFixing, Vec<Receipt>, Vec<(u32, f64)>) {
    let fixed_at = stamp.fixed_at();
    let date = stamp.date();
    let mut flags = Vec::new();
    let mut receipts = Vec::new();
    let panel = stamp.panel(&mut receipts);
    let rejected = stamp
        .statuses
        .values()
        .filter(|s| **s != "observed")
        .count();
    let weights = stamp.weights(&panel.voters, &mut flags);
    let mut votes = stamp.votes(&panel.voters, &weights, &mut receipts);
    let (value, band, quartiles) = aggregate(stamp.m, &mut votes, panel.observed, &mut flags);
    if panel.carried > 0 {
        flags.push("carried_votes");
    }
    (
        IntradayFixing {
            date,
            fixed_at,
            grade: stamp.grade.into(),
            value,
            band,
            quartiles,
            n_contributors: panel.voters.len(),
            n_observed: panel.observed,
            n_carried: panel.carried,
            n_rejected: rejected,
            flags: flags.join(";"),
        },
        receipts,
        panel
            .voters
            .iter()
            .map(|v| v.contributor)
            .zip(weights)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_even_rounding_by_hand() {
        // 2.0000005 is a tie at 6 places: the even neighbour 2.000000; 2.0000015 ->
        // 2.000002; 2.0000016 -> 2.000002 (not a tie).
        assert_eq!(round_half_even(2.0000005, 6), 2.0);
        assert_eq!(round_half_even(2.0000015, 6), 2.000002);
        assert_eq!(round_half_even(2.0000016, 6), 2.000002);
        assert_eq!(round_half_even(2.5, 0), 2.0);
        assert_eq!(round_half_even(3.5, 0), 4.0);
    }

    #[test]
    fn a_trimmed_weighted_mean_cuts_fractional_weights() {
        // Six equal votes 1..6, trim 1/6 from each side: drop 1 and 6, mean of 2..5 = 3.5.
        let mut v: Vec<(f64, f64)> = (1..=6).map(|x| (x as f64, 1.0)).collect();
        assert!((trimmed_weighted_mean(&mut v, 1.0 / 6.0).unwrap() - 3.5).abs() < 1e-12);
        // Votes 1 (w 1), 2 (w 1), 10 (w 2), trim 0.25 of 4: cut 1 from the bottom
        // (the whole vote at 1) and 1 from the top (half of 10's): (2 + 10) / 2 = 6.
        let mut v = vec![(10.0, 2.0), (1.0, 1.0), (2.0, 1.0)];
        assert!((trimmed_weighted_mean(&mut v, 0.25).unwrap() - 6.0).abs() < 1e-12);
    }

    /// The interquantile mean by alpha and the weighted median, against hand
    /// arithmetic and the Computable index's own published examples (its code and
    /// docs, Apache-2.0; no published index value is copied here).
    #[test]
    fn interquantile_means_by_alpha_and_weighted_medians_by_hand() {
        let iqm = |votes: &[(f64, f64)], alpha: f64| {
            trimmed_weighted_mean(&mut votes.to_vec(), 0.5 - alpha).map(|v| round_half_even(v, 6))
        };
        let ones = |v: &[f64]| v.iter().map(|x| (*x, 1.0)).collect::<Vec<_>>();
        // {1, 2, 4, 7, 11, 16, 100}, alpha 0.16666: band [0.33334 x 7, 0.66666 x 7] =
        // [2.33338, 4.66662]; 4 keeps 3 - 2.33338 = 0.66662, 7 all of 1, 11 keeps
        // 0.66662: (2.66648 + 7 + 7.33282) / 2.33324 = 7.2857057 -> 7.285706 (alpha 1/6
        // exactly: 51/7 = 7.285714). `trim = 1/6` (1.0's reading) cuts 7/6 from each
        // side: (2 x 5/6 + 4 + 7 + 11 + 16 x 5/6) / (14/3) = 37 / 4.666667 = 7.928571.
        let seven = ones(&[1.0, 2.0, 4.0, 7.0, 11.0, 16.0, 100.0]);
        assert_eq!(iqm(&seven, 0.16666), Some(7.285706));
        assert_eq!(iqm(&seven, 1.0 / 6.0), Some(7.285714));
        assert_eq!(
            trimmed_weighted_mean(&mut seven.clone(), 1.0 / 6.0).map(|v| round_half_even(v, 6)),
            Some(7.928571)
        );
        // Six values: band [2.00004, 3.99996], 4 and 7 kept alike: 5.5.
        assert_eq!(
            iqm(&ones(&[1.0, 2.0, 4.0, 7.0, 11.0, 16.0]), 0.16666),
            Some(5.5)
        );
        // The peer's unit test: 1, 2, 10 at alpha 1/4: band [0.75, 2.25], overlaps
        // 0.25, 1, 0.25: (0.25 + 2 + 2.5) / 1.5 = 19/6.
        assert_eq!(iqm(&ones(&[1.0, 2.0, 10.0]), 0.25), Some(3.166667));
        // The peer's methodology example (section 7.2): five providers each voting
        // price - sd, price, price + sd at their weight, alpha 1/6: the band [1, 2]
        // of the weight 3 holds 6.54 (.25), 6.60 (.30), 6.70 (.20), 6.75 (.25):
        // (1.635 + 1.98 + 1.34 + 1.6875) / 1 = 6.6425.
        let book = [
            (0.30, 6.60, 0.20),
            (0.25, 6.75, 0.21),
            (0.20, 6.50, 0.20),
            (0.15, 7.20, 0.25),
            (0.10, 5.80, 0.45),
        ];
        let votes: Vec<(f64, f64)> = book
            .iter()
            .flat_map(|&(w, p, sd)| [(p - sd, w), (p, w), (p + sd, w)])
            .collect();
        assert_eq!(iqm(&votes, 1.0 / 6.0), Some(6.6425));
        assert_eq!(iqm(&votes, 0.16666), Some(6.6425));
        // Weighted medians: 4 of 7 passes half (3.5) -> 7; six equal: the running
        // weight is exactly 3 at 4 -> (4 + 7) / 2; (2.00 w8, 2.50 w4, 3.00 w4): 8 is
        // half at 2.00 -> 2.25; (2.0 w1, 2.5 w8, 3.0 w1) -> 2.5.
        assert_eq!(weighted_median(&mut seven.clone()), Some(7.0));
        assert_eq!(
            weighted_median(&mut ones(&[16.0, 1.0, 7.0, 4.0, 11.0, 2.0])),
            Some(5.5)
        );
        assert_eq!(
            weighted_median(&mut [(3.0, 4.0), (2.0, 8.0), (2.5, 4.0)]),
            Some(2.25)
        );
        assert_eq!(
            weighted_median(&mut [(2.0, 1.0), (2.5, 8.0), (3.0, 1.0)]),
            Some(2.5)
        );
        assert_eq!(weighted_median(&mut [(2.0, 0.0)]), None);
    }

    #[test]
    fn weights_floored_and_capped_with_the_excess_shared() {
        // 0.6, 0.2, 0.1, 0.1 capped at 0.4: 0.2 excess shared 2:1:1 over the others ->
        // 0.4, 0.3, 0.15, 0.15.
        let mut w = vec![0.6, 0.2, 0.1, 0.1];
        assert!(floor_and_cap(&mut w, 0.0, 0.4));
        for (a, b) in w.iter().zip([0.4, 0.3, 0.15, 0.15]) {
            assert!((a - b).abs() < 1e-12, "{w:?}");
        }
        // A floor of 0.2 on 0.7, 0.25, 0.05: 0.15 short, taken from those above the
        // floor in proportion to (0.5, 0.05): 0.7 - 0.136364, 0.25 - 0.013636, 0.2.
        let mut w = vec![0.7, 0.25, 0.05];
        assert!(floor_and_cap(&mut w, 0.2, 1.0));
        assert!((w[2] - 0.2).abs() < 1e-12 && (w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((w[0] - (0.7 - 0.15 * 0.5 / 0.55)).abs() < 1e-12, "{w:?}");
        // Three voters cannot hold a 30% cap.
        let mut w = vec![1.0, 1.0, 1.0];
        assert!(!floor_and_cap(&mut w, 0.0, 0.3));
    }
}

/// The intraday fixings as a table ([`INTRADAY_COLUMNS`]).
pub fn intraday_table(r: &IntradayResult, m: &IntradayMethodology) -> rentix_table::Table {
    use rentix_table::{Col, Table};
    let f = &r.fixings;
    let text =
        |g: &dyn Fn(&IntradayFixing) -> String| Col::Str(f.iter().map(|x| Some(g(x))).collect());
    let int = |g: &dyn Fn(&IntradayFixing) -> usize| {
        Col::I64(f.iter().map(|x| Some(g(x) as i64)).collect())
    };
    let mut t = Table::new();
    // Typed: a Parquet DATE and TIMESTAMP(UTC), YYYY-MM-DD and RFC 3339 in CSV.
    t.push("date", Col::dates(f.iter().map(|x| x.date)));
    t.push(
        "fixed_at",
        Col::Timestamp(
            f.iter()
                .map(|x| Some(rentix_table::micros(x.fixed_at)))
                .collect(),
        ),
    );
    t.push("grade", text(&|x| x.grade.clone()));
    t.push("value", Col::F64(f.iter().map(|x| x.value).collect()));
    t.push("band", Col::F64(f.iter().map(|x| x.band).collect()));
    t.push(
        "votes_p25_p75",
        Col::Str(
            f.iter()
                .map(|x| x.quartiles.map(|(a, b)| format!("{a};{b}")))
                .collect(),
        ),
    );
    t.push("method", text(&|_| "intraday".into()));
    t.push("n_contributors", int(&|x| x.n_contributors));
    t.push("n_observed", int(&|x| x.n_observed));
    t.push("n_carried", int(&|x| x.n_carried));
    t.push("n_rejected", int(&|x| x.n_rejected));
    t.push(
        "sufficient",
        Col::Bool(f.iter().map(|x| Some(x.value.is_some())).collect()),
    );
    t.push("flags", text(&|x| x.flags.clone()));
    t.push("methodology_version", text(&|_| m.version.clone()));
    t
}

/// What each contributor contributed at each stamp (`<stem>_receipts`).
pub fn receipts_table(r: &IntradayResult) -> rentix_table::Table {
    use rentix_table::{Col, Table};
    let v = &r.receipts;
    let text = |g: &dyn Fn(&Receipt) -> String| Col::Str(v.iter().map(|x| Some(g(x))).collect());
    let mut t = Table::new();
    t.push(
        "fixed_at",
        Col::Timestamp(
            v.iter()
                .map(|x| Some(rentix_table::micros(x.fixed_at)))
                .collect(),
        ),
    );
    t.push("grade", text(&|x| x.grade.clone()));
    t.push("contributor", text(&|x| x.contributor.clone()));
    t.push("print", Col::F64(v.iter().map(|x| x.print).collect()));
    t.push("vote", Col::F64(v.iter().map(|x| x.vote).collect()));
    t.push("sigma", Col::F64(v.iter().map(|x| x.sigma).collect()));
    t.push(
        "sigma_unit",
        text(&|x| x.sigma_unit.map_or("", SigmaUnits::as_str).to_string()),
    );
    t.push(
        "weight",
        Col::F64(v.iter().map(|x| Some(x.weight)).collect()),
    );
    t.push("status", text(&|x| x.status.to_string()));
    t
}

#[cfg(test)]
mod stamp_tests {
    use super::*;

    const BASE: &str = r#"
version = "t"
[calendar]
cadence = "15m"
[grades]
patterns = ["*/*/*"]
[intraday]
kinds = ["listing"]
per_contributor = "lowest"
window = "1h"
max_carry = "1h"
min_panel = 3
decimals = 6
publish_receipts = true
"#;

    fn method(extra: &str) -> IntradayMethodology {
        IntradayMethodology::from_toml(&format!("{BASE}{extra}"), Path::new("t.toml")).unwrap()
    }

    /// `prints[k]` are the (contributor, price) of stamp k + 1 of 2025-06-01, each
    /// seen 5 minutes before the stamp.
    fn run(m: &IntradayMethodology, prints: &[Vec<(u32, f64)>]) -> IntradayResult {
        let day = NaiveDate::from_ymd_opt(2025, 6, 1).unwrap();
        let start = day.and_hms_opt(0, 0, 0).unwrap().and_utc().timestamp();
        let mut obs = Vec::new();
        for (k, stamp) in prints.iter().enumerate() {
            for &(c, price) in stamp {
                let at = start + (k as i64 + 1) * 900 - 300;
                obs.push(IntradayObs {
                    at,
                    price,
                    contributor: c,
                    volume: 1,
                });
            }
        }
        let input = IntradayInput {
            grades: BTreeMap::from([("g".to_string(), obs)]),
            contributors: vec!["a".into(), "b".into(), "c".into(), "d".into()],
            last_before: BTreeMap::new(),
        };
        fix_intraday(m, &input, day, day).unwrap()
    }

    /// Slot labels (the Computable index's capture slots): a print seen at 00:10 is
    /// in the 00:00 slot, which is June 1's (end labels put it in the 00:15 stamp).
    /// A print at exactly 00:15 opens the 00:15 slot, and closes the end-labelled
    /// 00:15 stamp: the same label either way. A day's slots are 00:00 .. 23:45.
    #[test]
    fn slot_labels_stamp_a_capture_by_the_latest_mark_at_or_before_it() {
        let slot = IntradayMethodology::from_toml(
            &BASE
                .replace("cadence = \"15m\"", "cadence = \"15m\"\nlabel = \"slot\"")
                .replace("min_panel = 3", "min_panel = 1"),
            Path::new("t.toml"),
        )
        .unwrap();
        let end = IntradayMethodology::from_toml(
            &BASE.replace("min_panel = 3", "min_panel = 1"),
            Path::new("t.toml"),
        )
        .unwrap();
        let r = run(&slot, &[vec![(0, 2.0)]]);
        let first = &r.fixings[0];
        assert_eq!(first.fixed_at.to_rfc3339(), "2025-06-01T00:00:00+00:00");
        assert_eq!(first.date, NaiveDate::from_ymd_opt(2025, 6, 1).unwrap());
        assert_eq!(first.value, Some(2.0));
        let last = r.fixings.last().unwrap();
        assert_eq!(last.fixed_at.to_rfc3339(), "2025-06-01T23:45:00+00:00");
        assert_eq!(r.fixings.len(), 96);
        let e = run(&end, &[vec![(0, 2.0)]]);
        assert_eq!(
            e.fixings[0].fixed_at.to_rfc3339(),
            "2025-06-01T00:15:00+00:00"
        );
        assert_eq!(e.fixings[0].value, Some(2.0));
        // A print exactly on a mark: the slot it opens, or the stamp it closes.
        let day = NaiveDate::from_ymd_opt(2025, 6, 1).unwrap();
        let at = day.and_hms_opt(0, 15, 0).unwrap().and_utc().timestamp();
        let input = IntradayInput {
            grades: BTreeMap::from([(
                "g".to_string(),
                vec![IntradayObs {
                    at,
                    price: 3.0,
                    contributor: 0,
                    volume: 1,
                }],
            )]),
            contributors: vec!["a".into()],
            last_before: BTreeMap::new(),
        };
        let valued = |m: &IntradayMethodology| {
            fix_intraday(m, &input, day, day)
                .unwrap()
                .fixings
                .iter()
                .find(|f| f.value.is_some())
                .map(|f| f.fixed_at.format("%H:%M").to_string())
        };
        assert_eq!(valued(&slot).as_deref(), Some("00:15"));
        assert_eq!(valued(&end).as_deref(), Some("00:15"));
    }

    /// The screen's status of `a` at stamp 2 under `[intraday.screen]` (history 5,
    /// a 25% jump, two corroborating) and `extra`: every contributor at 2.0, then a
    /// at 2.5 (+25%), b and c at `others`, d flat.
    fn jump_status(extra: &str, others: f64) -> &'static str {
        let m = method(&format!(
            "[intraday.screen]\nhistory = 5\nwarm_up = 5\nk_sigma = 3.0\nsigma_floor = 0.03\njump = 0.25\ncorroborating = 2\n{extra}"
        ));
        let p = vec![
            vec![(0, 2.0), (1, 2.0), (2, 2.0), (3, 2.0)],
            vec![(0, 2.5), (1, others), (2, others), (3, 2.0)],
        ];
        let r = run(&m, &p);
        let t = r.fixings[1].fixed_at;
        r.receipts
            .iter()
            .find(|x| x.fixed_at == t && x.contributor == "a")
            .unwrap()
            .status
    }

    /// The screens' options, by hand: a move of exactly 25% is a jump only `at_or_above`,
    /// and two others moving exactly 10% corroborate it only with
    /// `corroborating_move = 0.10` (others moving 10% never corroborate a 25% rule
    /// by default); with `min_comparable = 4` the jump screen stands down.
    #[test]
    fn screen_thresholds_comparison_and_standing_down() {
        // Stamp 2: a 2.0 -> 2.5 (+25% exactly), b and c 2.0 -> 2.2 (+10%), d flat.
        let status_of_a = |extra: &str| jump_status(extra, 2.2);
        // Default: 25% is not more than 25%: no jump; the sigma screen waits for 5.
        assert_eq!(status_of_a(""), "observed");
        // At or above: a jump, and b, c's 10% are not 25%: rejected.
        assert_eq!(
            status_of_a("comparison = \"at_or_above\"\n"),
            "rejected_jump"
        );
        // Others moving 10% or more corroborate: accepted.
        assert_eq!(
            status_of_a("comparison = \"at_or_above\"\ncorroborating_move = 0.10\n"),
            "observed"
        );
        // Three others have a previous print: fewer than 4, the screen stands down.
        assert_eq!(
            status_of_a("comparison = \"at_or_above\"\nmin_comparable = 4\n"),
            "observed"
        );
    }

    /// A jump of +25% while two others move -15%: the same way only (default) they
    /// do not corroborate it; either way (the Computable index) they do.
    #[test]
    fn corroborating_moves_the_same_way_or_either_way() {
        let status_of_a = |extra: &str| {
            jump_status(
                &format!("comparison = \"at_or_above\"\ncorroborating_move = 0.10\n{extra}"),
                1.7,
            )
        };
        assert_eq!(status_of_a(""), "rejected_jump");
        assert_eq!(
            status_of_a("corroborating_direction = \"either\"\n"),
            "observed"
        );
    }

    /// The sigma-vote options, by hand: prints 2.0, 2.0 (stamps 1, 2), then 3.0 an
    /// hour later (stamp 6), a one-hour half-life: vote 2.5. In dollars, the
    /// population sd of the previous prints {2.0, 2.0} is 0, floored at 3% of the
    /// print 3.0: sigma 0.09, votes 2.41, 2.5, 2.59. By default (relative sample sd
    /// of {2.0, 2.0, 3.0}: mean 7/3, sd 0.57735, over the mean 0.247436) the votes
    /// are 2.5 x (1 +- 0.247436). Prints {2.0, 2.2} then 2.4: population sd of the
    /// previous two in dollars 0.1.
    #[test]
    fn sigma_votes_in_dollars_from_the_previous_prints_floored_at_the_print() {
        let receipt_sigma = |extra: &str, p: &[Vec<(u32, f64)>], k: usize| {
            let m = method(&format!(
                "vote_half_life = \"1h\"\n[intraday.sigma_votes]\ndays = 90\nfloor = 0.03\n{extra}"
            ));
            let r = run(&m, p);
            let t = r.fixings[k].fixed_at;
            let x = r.receipts.iter().find(|x| x.fixed_at == t).unwrap();
            (x.vote, x.sigma.map(|s| round_half_even(s, 6)))
        };
        let peer = "sd = \"population\"\nunits = \"dollars\"\ninclude_current = false\nfloor_of = \"print\"\n";
        let mut p = vec![vec![(0, 2.0)], vec![(0, 2.0)]];
        p.extend(std::iter::repeat_n(Vec::new(), 3));
        p.push(vec![(0, 3.0)]);
        assert_eq!(receipt_sigma(peer, &p, 5), (Some(2.5), Some(0.09)));
        assert_eq!(receipt_sigma("", &p, 5), (Some(2.5), Some(0.247436)));
        // Floored at 3% of the vote instead: 0.075; at an absolute 0.1: 0.1.
        let of_vote = peer.replace("floor_of = \"print\"\n", "");
        assert_eq!(receipt_sigma(&of_vote, &p, 5).1, Some(0.075));
        assert_eq!(
            receipt_sigma(&format!("{peer}floor_usd = 0.1\n"), &p, 5).1,
            Some(0.1)
        );
        let q = vec![vec![(0, 2.0)], vec![(0, 2.2)], vec![(0, 2.4)]];
        assert_eq!(receipt_sigma(peer, &q, 2).1, Some(0.1));
    }

    #[test]
    fn screens_reject_a_spike_and_a_lone_jump_and_pass_a_corroborated_one() {
        let m = method(
            "[intraday.screen]\nhistory = 5\nwarm_up = 3\nk_sigma = 3.0\nsigma_floor = 0.03\njump = 0.25\ncorroborating = 2\n",
        );
        let calm = vec![(0, 2.00), (1, 2.02), (2, 1.98), (3, 2.00)];
        let mut p = vec![calm.clone(); 4];
        // Stamp 5: a's 2.20 is 10% up (no jump) but more than 3 x 3% (the floor: its
        // history never moved) from its mean 2.00: rejected, its 2.00 carried.
        // (2.00 + 2.02 + 1.98 + 2.00) / 4 = 2.00, three observed, one carried.
        p.push(vec![(0, 2.20), (1, 2.02), (2, 1.98), (3, 2.00)]);
        // Stamp 6: a, b, c up 30% together: each jump has two corroborating, so all
        // pass (the sigma screen is not asked): (2.6 + 2.626 + 2.574 + 2.0) / 4 = 2.45.
        let up = vec![(0, 2.6), (1, 2.626), (2, 2.574), (3, 2.00)];
        p.push(up);
        // Stamp 7: d alone up 30%: no one corroborates, rejected, 2.00 carried: 2.45.
        p.push(vec![(0, 2.6), (1, 2.626), (2, 2.574), (3, 2.6)]);
        let r = run(&m, &p);
        let f = &r.fixings;
        assert_eq!(f.len(), 96, "a stamp every 15 minutes");
        assert_eq!(f[3].value, Some(2.0));
        assert_eq!(
            (f[4].value, f[4].n_observed, f[4].n_carried, f[4].n_rejected),
            (Some(2.0), 3, 1, 1)
        );
        assert_eq!((f[5].value, f[5].n_rejected), (Some(2.45), 0));
        // Its band: equal weights on 2.0, 2.574, 2.6, 2.626; the weighted p25 falls on
        // the boundary after 2.0 (midpoint 2.287), p75 after 2.6 (2.613): both 0.163
        // from 2.45.
        assert_eq!(f[5].quartiles, Some((2.287, 2.613)));
        assert_eq!(f[5].band, Some(0.163));
        assert_eq!((f[6].value, f[6].n_rejected), (Some(2.45), 1));
        let status = |k: usize, who: &str| {
            let t = f[k].fixed_at;
            r.receipts
                .iter()
                .find(|x| x.fixed_at == t && x.contributor == who)
                .unwrap()
                .status
        };
        assert_eq!(status(4, "a"), "rejected_sigma");
        assert_eq!(status(5, "a"), "observed");
        assert_eq!(status(6, "d"), "rejected_jump");
        // No prints after stamp 7: a print under an hour old is still observed (the
        // window), so stamp 8 keeps its value; at stamp 11 a, b and c's prints are an
        // hour old: carried, no panel, no value (d's, from stamp 6, is past
        // max_carry); from stamp 12 nobody votes.
        assert_eq!(
            (f[7].value, f[7].n_observed),
            (Some(2.45), 4),
            "inside the 1h window"
        );
        assert!(
            f[10].value.is_none() && f[10].flags.contains("thin_panel"),
            "{:?}",
            f[10]
        );
        assert_eq!((f[10].n_carried, f[10].n_observed), (3, 0));
        assert_eq!(f[11].n_contributors, 0, "past max_carry");
        assert_eq!(f[0].date.to_string(), "2025-06-01");
        assert_eq!(f[95].date.to_string(), "2025-06-01", "24:00 closes the day");
        assert_eq!(f[95].fixed_at.to_rfc3339(), "2025-06-02T00:00:00+00:00");
    }

    /// A half-life of an hour is a time constant of 60 / ln 2 = 86.56 minutes: two
    /// prints 2.0 then 3.0 an hour apart give a vote half way, 2.5 (a time constant
    /// of an hour: 2 + (1 - e^-1) = 2.632121); both at once, or an alpha outside
    /// (0, 0.5] or beside a trim, are refused.
    #[test]
    fn an_ewma_by_half_life_halves_the_gap_each_half_life() {
        let votes = |key: &str| {
            let m = IntradayMethodology::from_toml(
                &format!("{BASE}{key} = \"1h\"\n").replace("min_panel = 3", "min_panel = 1"),
                Path::new("t.toml"),
            )
            .unwrap();
            let mut prints = vec![vec![(0, 2.0)]];
            prints.extend(std::iter::repeat_n(Vec::new(), 3));
            prints.push(vec![(0, 3.0)]);
            run(&m, &prints).fixings[4].value
        };
        assert_eq!(votes("vote_half_life"), Some(2.5));
        assert_eq!(votes("vote_ewma"), Some(2.632121));
        for bad in [
            "vote_ewma = \"1h\"\nvote_half_life = \"1h\"\n",
            "iqm_alpha = 0.0\n",
            "iqm_alpha = 0.6\n",
            "iqm_alpha = 0.2\ntrim = 0.1\n",
            "aggregate = \"weighted_median\"\ntrim = 0.1\n",
        ] {
            let text = format!("{BASE}{bad}");
            let m = IntradayMethodology::from_toml(&text, Path::new("m.toml"));
            assert!(m.is_err(), "{bad}");
        }
    }

    #[test]
    fn an_ewma_vote_moves_a_share_of_the_way() {
        // tau = 1h, prints 2.0 then 3.0 fifteen minutes later: 2 + (1 - e^-0.25) x 1
        // = 2.221199 (e^-0.25 = 0.7788008).
        let m = IntradayMethodology::from_toml(
            &format!("{BASE}vote_ewma = \"1h\"\n").replace("min_panel = 3", "min_panel = 1"),
            Path::new("t.toml"),
        )
        .unwrap();
        let r = run(&m, &[vec![(0, 2.0)], vec![(0, 3.0)]]);
        assert_eq!(r.fixings[0].value, Some(2.0));
        assert_eq!(r.fixings[1].value, Some(2.221199));
    }

    #[test]
    fn sigma_votes_and_weights_from_a_file() {
        // Weights: a 3, b 1 (c unweighted: it does not vote). Capped at 0.6: 0.75 ->
        // 0.6, b 0.4. Prices a 2.0, b 3.0: 0.6 x 2 + 0.4 x 3 = 2.4. Sigma votes at the
        // 3% floor are symmetric, so the mean is unchanged.
        let mut w = WeightTable::default();
        let d = NaiveDate::from_ymd_opt(2025, 1, 1).unwrap();
        w.insert("a", d, 3.0);
        w.insert("b", d, 1.0);
        let m = IntradayMethodology::from_toml(
            &format!(
                "{}[intraday.sigma_votes]\ndays = 90\nfloor = 0.03\n[intraday.weights]\nfloor = 0.0\ncap = 0.6\n",
                BASE.replace("min_panel = 3", "min_panel = 2")
            ),
            Path::new("t.toml"),
        )
        .unwrap()
        .with_weights(w);
        let r = run(&m, &[vec![(0, 2.0), (1, 3.0), (2, 9.0)]]);
        assert_eq!(r.fixings[0].value, Some(2.4));
        assert_eq!(r.fixings[0].n_contributors, 2);
        let c = r.receipts.iter().find(|x| x.contributor == "c").unwrap();
        assert_eq!(c.status, "no_weight");
    }

    /// A weight with a time of day applies from the stamp at that time: a 3, b 1
    /// from the day (capped at 0.6: 0.6 x 2 + 0.4 x 3 = 2.4 at 00:15), then a 1 from
    /// 00:30 (0.5 x 2 + 0.5 x 3 = 2.5 at 00:30 and 00:45). The same rows read from a
    /// file, the day's row and the timed one, give the same values; a row dated the
    /// next day leaves the 24:00 stamp of this one alone.
    #[test]
    fn weights_change_within_a_day_from_the_stamp_at_their_time() {
        let m = |w: WeightTable| {
            IntradayMethodology::from_toml(
                &format!(
                    "{}[intraday.weights]\nfloor = 0.0\ncap = 0.6\n",
                    BASE.replace("min_panel = 3", "min_panel = 2")
                ),
                Path::new("t.toml"),
            )
            .unwrap()
            .with_weights(w)
        };
        let p = vec![vec![(0, 2.0), (1, 3.0)]; 3];
        let mut w = WeightTable::default();
        let d = NaiveDate::from_ymd_opt(2025, 6, 1).unwrap();
        w.insert("a", d, 3.0);
        w.insert("b", d, 1.0);
        let at = d.and_hms_opt(0, 30, 0).unwrap().and_utc();
        w.insert_at("a", at, 1.0);
        let values: Vec<_> = run(&m(w), &p).fixings[..3]
            .iter()
            .map(|f| f.value)
            .collect();
        assert_eq!(values, [Some(2.4), Some(2.5), Some(2.5)]);
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("w.csv");
        std::fs::write(
            &f,
            "date,contributor,weight\n2025-06-01,a,3\n2025-06-01,b,1\n2025-06-01T00:30:00Z,a,1\n",
        )
        .unwrap();
        let from_file: Vec<_> = run(&m(WeightTable::read(&f).unwrap()), &p).fixings[..3]
            .iter()
            .map(|f| f.value)
            .collect();
        assert_eq!(from_file, values);
        // The 24:00 stamp of May 31 is May 31's: a row of June 1 does not reach it.
        let mut next = WeightTable::default();
        next.insert("a", d, 1.0);
        let t = d.and_hms_opt(0, 0, 0).unwrap().and_utc().timestamp();
        assert_eq!(next.weight("a", t), None);
        assert_eq!(next.weight("a", t + 900), Some(1.0));
    }

    #[test]
    fn a_weights_file_never_read_is_refused_not_fixed_on_equal_weights() {
        let m = IntradayMethodology::from_toml(
            &format!("{BASE}[intraday.weights]\nfile = \"w.csv\"\n"),
            Path::new("t.toml"),
        )
        .unwrap();
        let day = NaiveDate::from_ymd_opt(2025, 6, 1).unwrap();
        let input = IntradayInput {
            grades: BTreeMap::new(),
            contributors: Vec::new(),
            last_before: BTreeMap::new(),
        };
        let e = fix_intraday(&m, &input, day, day).unwrap_err();
        assert!(e.0.contains("w.csv was not read"), "{e}");
    }

    #[test]
    fn a_daily_cadence_or_a_bad_one_is_not_intraday() {
        for day in ["1d", "24h", " 1440m "] {
            assert_eq!(
                IntradayMethodology::cadence_of(&format!("[calendar]\ncadence = \"{day}\"\n")),
                None,
                "{day}"
            );
        }
        // Not a cadence at all: read as intraday, whose parse names the error.
        assert_eq!(
            IntradayMethodology::cadence_of("[calendar]\ncadence = \"7m\"\n").as_deref(),
            Some("7m")
        );
        assert_eq!(
            IntradayMethodology::cadence_of("[calendar]\ncutoff = \"24:00\"\n"),
            None
        );
        assert_eq!(
            IntradayMethodology::cadence_of("[calendar]\ncadence = \"15m\"\n").as_deref(),
            Some("15m")
        );
        for bad in ["7m", "1d", "25h", "0m"] {
            let e = IntradayMethodology::from_toml(
                &BASE.replace("\"15m\"", &format!("\"{bad}\"")),
                Path::new("t.toml"),
            )
            .unwrap_err()
            .to_string();
            assert!(e.contains("cadence") || e.contains("window"), "{bad}: {e}");
        }
    }

    /// A weights file is read through the shared CSV reader: the line of the bad
    /// cell (a quoted contributor spanning two lines makes the third row line 5), a
    /// column named twice, and a missing column are refused naming the file.
    #[test]
    fn a_weights_file_names_the_line_of_a_bad_cell() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("w.csv");
        let read = |text: &str| {
            std::fs::write(&p, text).unwrap();
            WeightTable::read(&p).err().map(|e| e.to_string())
        };
        let ok = "date,contributor,weight\n2025-01-01,a,1\n2025-01-01,\"b\nc\",2\n";
        assert_eq!(read(ok), None);
        let e = read(&format!("{ok}2025-01-02,d,-1\n")).unwrap();
        assert!(e.contains("line 5, field weight: \"-1\""), "{e}");
        let e = read("date,contributor,weight,date\n").unwrap();
        assert!(e.contains("names column \"date\" twice"), "{e}");
        let e = read("date,weight\n").unwrap();
        assert!(e.contains("no column \"contributor\""), "{e}");
    }
}

#[cfg(test)]
mod book_tests {
    use super::*;

    // The peer's weighted-median convention (its composite.py `_weighted_median`,
    // cases from docs/research/computable-gpu-index.md 9.2 A9): an exact half
    // averages the two asks that straddle it.
    #[test]
    fn the_volume_weighted_median_of_asks_by_hand() {
        let cases: [(&[(f64, u32)], f64); 6] = [
            (&[(5.0, 1)], 5.0),
            (&[(5.0, 1), (7.0, 1)], 6.0),
            (&[(3.0, 1), (5.0, 1), (9.0, 1)], 5.0),
            (&[(4.0, 2), (8.0, 2)], 6.0),
            (&[(4.0, 1), (6.0, 4), (9.0, 1)], 6.0),
            // Volumes 3, 1, 2, 2: running 3, 4 = half of 8 at the 2.0 ask: (2 + 3) / 2.
            (&[(10.0, 2), (2.0, 1), (1.0, 3), (3.0, 2)], 2.5),
        ];
        for (asks, want) in cases {
            let mut v = asks.to_vec();
            assert_eq!(book_median(&mut v), Some(want), "{asks:?}");
        }
        assert_eq!(book_median(&mut []), None);
    }

    /// A marketplace (`books`) prints the volume-weighted median of its asks where
    /// a listing provider prints its lowest; below `min_offers` asks it does not
    /// print (its vote is carried) and the stamp says `thin_book`.
    #[test]
    fn a_book_prints_its_volume_weighted_median_and_a_thin_one_is_held_out() {
        let m = IntradayMethodology::from_toml(
            r#"
version = "t"
[calendar]
cadence = "15m"
[grades]
patterns = ["*/*/*"]
[intraday]
kinds = ["listing"]
per_contributor = "lowest"
window = "15m"
max_carry = "1h"
min_panel = 1
decimals = 6
publish_receipts = true
[intraday.books]
contributors = ["Market Place"]
min_offers = 3
"#,
            Path::new("t.toml"),
        )
        .unwrap();
        let day = NaiveDate::from_ymd_opt(2025, 6, 1).unwrap();
        let start = day.and_hms_opt(0, 0, 0).unwrap().and_utc().timestamp();
        let ask = |k: i64, c: u32, price: f64, volume: u32| IntradayObs {
            at: start + k * 900 + 60,
            price,
            contributor: c,
            volume,
        };
        // Stamp 1: asks 2.0 x1, 2.5 x8, 3.0 x1 -> 2.5 (lowest would be 2.0).
        // Stamp 2: two asks only -> held out, the 2.5 vote carried.
        let obs = vec![
            ask(0, 0, 2.0, 1),
            ask(0, 0, 2.5, 8),
            ask(0, 0, 3.0, 1),
            ask(0, 1, 2.2, 1),
            ask(0, 1, 2.4, 1),
            ask(1, 0, 1.0, 1),
            ask(1, 0, 1.1, 1),
            ask(1, 1, 2.3, 1),
        ];
        let input = IntradayInput {
            grades: BTreeMap::from([("g".to_string(), obs)]),
            contributors: vec!["marketplace".into(), "lister".into()],
            last_before: BTreeMap::new(),
        };
        let r = fix_intraday(&m, &input, day, day).unwrap();
        let book = |k: usize| {
            r.receipts
                .iter()
                .filter(|x| x.contributor == "marketplace")
                .nth(k)
                .cloned()
                .unwrap()
        };
        assert_eq!(book(0).print, Some(2.5));
        assert_eq!(book(0).status, "observed");
        assert_eq!(book(1).print, None);
        assert_eq!(book(1).vote, Some(2.5));
        assert_eq!(book(1).status, "carried");
        assert!(
            r.fixings[1].flags.contains("thin_book"),
            "{:?}",
            r.fixings[1]
        );
        assert!(!r.fixings[0].flags.contains("thin_book"));
        // The listing provider still prints its lowest.
        let lister = r
            .receipts
            .iter()
            .find(|x| x.contributor == "lister")
            .unwrap();
        assert_eq!(lister.print, Some(2.2));
    }
}

#[cfg(test)]
mod ballot_tests {
    use super::*;

    fn ballots(seats: &[(&str, f64, f64, f64)]) -> Vec<Receipt> {
        let at = DateTime::parse_from_rfc3339("2026-08-25T14:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        seats
            .iter()
            .map(|&(who, weight, vote, sd)| Receipt {
                fixed_at: at,
                grade: "h100".into(),
                contributor: who.into(),
                print: Some(vote),
                vote: Some(vote),
                sigma: Some(sd),
                sigma_unit: None,
                weight,
                status: "observed",
            })
            .collect()
    }

    fn method(aggregate: &str) -> IntradayMethodology {
        IntradayMethodology::from_toml(
            &format!(
                r#"
version = "ballots"
[calendar]
cadence = "1h"
[grades]
patterns = ["*/*/*"]
[intraday]
kinds = ["listing"]
per_contributor = "lowest"
window = "1h"
max_carry = "1h"
min_panel = 5
decimals = 6
{aggregate}
[intraday.sigma_votes]
days = 90
floor = 0.03
units = "dollars"
"#
            ),
            Path::new("t.toml"),
        )
        .unwrap()
    }

    // The Computable index's worked examples (its METHODOLOGY.md section 7.2 and
    // tests/unit/test_methodology_worked_example.py, Apache-2.0), each seat
    // (weight, price, sigma in dollars) voting at price - sigma, price, price + sigma.
    #[test]
    fn the_peers_worked_ballots_fix_to_its_published_numbers() {
        // Alpha 0 (the weighted median) on the older sigmas: value 6.64, p25 6.54,
        // p75 6.75, band 0.11.
        let older = ballots(&[
            ("a", 0.30, 6.60, 0.06),
            ("b", 0.25, 6.75, 0.05),
            ("c", 0.20, 6.50, 0.12),
            ("d", 0.15, 7.20, 0.25),
            ("e", 0.10, 5.80, 0.45),
        ]);
        let f = &fix_ballots(&method("aggregate = \"weighted_median\""), &older).unwrap()[0];
        assert_eq!(f.value, Some(6.64));
        assert_eq!(f.quartiles, Some((6.54, 6.75)));
        assert_eq!(f.band, Some(0.11));
        assert_eq!((f.n_observed, f.n_contributors), (5, 5));
        // The interquantile mean (alpha 0.16666) on the current sigmas: 6.6425,
        // p25 6.40, p75 6.80, band 0.2425.
        let current = ballots(&[
            ("a", 0.30, 6.60, 0.20),
            ("b", 0.25, 6.75, 0.21),
            ("c", 0.20, 6.50, 0.20),
            ("d", 0.15, 7.20, 0.25),
            ("e", 0.10, 5.80, 0.45),
        ]);
        let f = &fix_ballots(&method("iqm_alpha = 0.16666"), &current).unwrap()[0];
        assert_eq!(f.value, Some(6.6425));
        assert_eq!(f.quartiles, Some((6.4, 6.8)));
        assert_eq!(f.band, Some(0.2425));
        // Four observed seats are below the panel: no value.
        let f = &fix_ballots(&method("iqm_alpha = 0.16666"), &current[..4]).unwrap()[0];
        assert_eq!(f.value, None);
        assert!(f.flags.contains("thin_panel"));
    }

    #[test]
    fn a_ballot_the_methodology_cannot_read_is_refused() {
        let mut b = ballots(&[("a", 0.3, 6.6, 0.2)]);
        let mut plain = method("");
        plain.intraday.sigma_votes = None;
        assert!(fix_ballots(&plain, &b)
            .unwrap_err()
            .0
            .contains("sigma_votes"));
        b[0].weight = -1.0;
        assert!(fix_ballots(&method(""), &b)
            .unwrap_err()
            .0
            .contains("negative weight"));
        b[0].weight = 0.3;
        b[0].vote = Some(0.0);
        let err = fix_ballots(&method(""), &b).unwrap_err().0;
        assert!(err.contains("positive price"), "{err}");
        b[0].vote = Some(6.6);
        let twice = vec![b[0].clone(), b[0].clone()];
        let err = fix_ballots(&method(""), &twice).unwrap_err().0;
        assert!(err.contains("votes twice"), "{err}");
        // Names are folded: " A" is "a" again.
        let mut other = b[0].clone();
        other.contributor = " A".into();
        let err = fix_ballots(&method(""), &[b[0].clone(), other])
            .unwrap_err()
            .0;
        assert!(err.contains("votes twice"), "{err}");
        // No ballot at all; a stamp off the hourly grid; weights that overflow; a
        // sigma that takes a vote below zero.
        assert!(fix_ballots(&method(""), &[])
            .unwrap_err()
            .0
            .contains("no ballot"));
        let mut off = b[0].clone();
        off.fixed_at += chrono::Duration::minutes(7);
        let err = fix_ballots(&method(""), &[off]).unwrap_err().0;
        assert!(err.contains("not on the methodology's stamps"), "{err}");
        let mut huge = ballots(&[("a", 1e308, 6.6, 0.2), ("b", 1e308, 6.7, 0.2)]);
        let err = fix_ballots(&method(""), &huge).unwrap_err().0;
        assert!(err.contains("finite"), "{err}");
        huge[0].weight = 0.5;
        huge[1].weight = 0.5;
        huge[1].sigma = Some(7.0);
        let err = fix_ballots(&method(""), &huge).unwrap_err().0;
        assert!(err.contains("still a price"), "{err}");
    }
}

#[cfg(test)]
mod offset_tests {
    use super::*;

    const SIX: &str = r#"
version = "six"
[calendar]
cadence = "6h"
label = "slot"
offset = "4h"
[grades]
patterns = ["*/*/*"]
[intraday]
kinds = ["listing"]
per_contributor = "last"
window = "6h"
max_carry = "6h"
min_panel = 1
decimals = 6
publish_receipts = true
"#;

    /// The Computable index's first grid (slots at 04:00, 10:00, 16:00, 22:00): a
    /// capture at 22:16 and one at 02:00 the next day are both in the 22:00 slot
    /// (the later one is the slot's print, `last`), one at 04:05 opens the next
    /// day's 04:00 slot; a day's slots are 04:00 to 22:00, each dated its own day.
    #[test]
    fn slots_offset_from_midnight() {
        let m = IntradayMethodology::from_toml(SIX, Path::new("t.toml")).unwrap();
        let day = NaiveDate::from_ymd_opt(2026, 8, 16).unwrap();
        let at = |d: u64, h: u32, min: u32| {
            (day + Days::new(d))
                .and_hms_opt(h, min, 0)
                .unwrap()
                .and_utc()
                .timestamp()
        };
        let obs = [(at(0, 22, 16), 6.0), (at(1, 2, 0), 6.5), (at(1, 4, 5), 7.0)]
            .map(|(at, price)| IntradayObs {
                at,
                price,
                contributor: 0,
                volume: 1,
            })
            .to_vec();
        let input = IntradayInput {
            grades: BTreeMap::from([("g".to_string(), obs)]),
            contributors: vec!["a".into()],
            last_before: BTreeMap::new(),
        };
        let r = fix_intraday(&m, &input, day, day + Days::new(1)).unwrap();
        let stamps: Vec<String> = r
            .fixings
            .iter()
            .map(|f| format!("{} {}", f.date, f.fixed_at.format("%H:%M")))
            .collect();
        assert_eq!(
            stamps,
            [
                // The grade's life starts at its first capture: its slot first.
                "2026-08-16 22:00",
                "2026-08-17 04:00",
                "2026-08-17 10:00",
                "2026-08-17 16:00",
                "2026-08-17 22:00"
            ]
        );
        let value = |k: usize| r.fixings[k].value;
        assert_eq!((value(0), value(1)), (Some(6.5), Some(7.0)));
        // Slots only, and shorter than the cadence.
        for bad in [
            SIX.replace("label = \"slot\"\n", ""),
            SIX.replace("offset = \"4h\"", "offset = \"6h\""),
        ] {
            let err = IntradayMethodology::from_toml(&bad, Path::new("t.toml"))
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(err.contains("calendar.offset"), "{err}");
        }
    }
}
