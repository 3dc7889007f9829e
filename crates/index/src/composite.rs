//! Composite indices across grades: chained Jevons or Dutot over grade fixings with
//! explicit weights, and a quality-adjusted GPU-hour index by adjacent-period
//! time-dummy hedonic regression on the observations themselves.

use crate::elementary::{link, Elementary};
use crate::engine_obs::{keys_sha256, sort_obs, EngineObs, SourceId};
use crate::hedonic::{time_dummy, HedonicObs};
use crate::methodology::{CompositeMethod, CompositeSpec, Methodology, WhenShort};
use crate::outliers::keep;
use crate::rounding::round_to;
use chrono::NaiveDate;
use rayon::prelude::*;
use rentix_core::{
    DayRule, GpuCatalog, GpuSpec, Grade, GradePattern, ObservationKind, ServiceScope,
};
use rentix_fixings::Flag;
use rentix_fixings::{Fixing, FixingLevel};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

fn hash_strings<'a>(parts: impl Iterator<Item = &'a str>) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update(b"\n");
    }
    rentix_store::hex(&h.finalize())
}

/// Whether a composite's components on one date were all withheld: at least one
/// row, none with a value, and at least one suppressed (not merely without data).
/// A composite of suppressed grades is suppressed: it would otherwise publish,
/// through its link, what the grades' own rules refused to.
fn all_suppressed(rows: &[&Fixing]) -> bool {
    !rows.is_empty()
        && rows.iter().all(|f| f.value.is_none())
        && rows.iter().any(|f| f.has_flag(&Flag::Suppressed))
}

/// The grades' publication rules applied to a composite's date: contributors
/// counted across the observations it used (`by_contributor`: observations per
/// contributor), `min_contributors` (published flagged or suppressed as
/// `below_minimum` says), `max_concentration` (suppressed above it) and suppressed
/// components. Returns whether the value is published and the flags to add
/// (`sufficient` is false whenever there is one).
fn composite_rules(
    m: &Methodology,
    by_contributor: &BTreeMap<SourceId, usize>,
    components: &[&Fixing],
) -> (bool, Vec<Flag>) {
    let c = &m.contributors;
    let mut flags = Vec::new();
    let mut publish = true;
    if by_contributor.len() < c.min_contributors {
        flags.push(Flag::FewContributors);
        publish &= c.below_minimum == WhenShort::PublishFlagged;
    }
    let total: usize = by_contributor.values().sum();
    let largest = by_contributor.values().copied().max().unwrap_or(0);
    if total > 0 && largest as f64 / total as f64 > c.max_concentration + 1e-12 {
        flags.push(Flag::Concentrated);
        publish = false;
    }
    if all_suppressed(components) {
        flags.push(Flag::ComponentsSuppressed);
        publish = false;
    }
    if !publish {
        flags.insert(0, Flag::Suppressed);
    }
    (publish, flags)
}

/// The component grades' fixings by date and grade key.
fn by_date_and_grade(fixings: &[Fixing]) -> BTreeMap<(NaiveDate, &str), &Fixing> {
    let mut by_key: BTreeMap<(NaiveDate, &str), &Fixing> = BTreeMap::new();
    for f in fixings {
        by_key.insert((f.date, f.grade.as_str()), f);
    }
    by_key
}

/// A chained composite's rule and the component grades' fixings it links.
struct ChainedComposite<'a> {
    spec: &'a CompositeSpec,
    m: &'a Methodology,
    formula: Elementary,
    /// The component grades and their weights, in `spec.weights` order.
    comps: Vec<(&'a String, f64)>,
    weights: Vec<f64>,
    by_key: BTreeMap<(NaiveDate, &'a str), &'a Fixing>,
}

/// The components' rows on one date, in component order.
struct ComponentsOn<'a> {
    /// Each component's row (`None`: it has none on the date).
    rows: Vec<Option<&'a Fixing>>,
    /// Each component's value (`None`: no row, or a row without a value).
    prices: Vec<Option<f64>>,
    /// The rows with a value.
    present: Vec<&'a Fixing>,
}

impl<'a> ChainedComposite<'a> {
    /// The composite's components over `fixings`; `None` for a method that is not
    /// an elementary formula.
    fn new(spec: &'a CompositeSpec, fixings: &'a [Fixing], m: &'a Methodology) -> Option<Self> {
        let formula = spec.method.elementary()?;
        let comps: Vec<(&String, f64)> = spec.weights.iter().map(|(g, w)| (g, *w)).collect();
        let weights: Vec<f64> = comps.iter().map(|c| c.1).collect();
        Some(Self {
            spec,
            m,
            formula,
            comps,
            weights,
            by_key: by_date_and_grade(fixings),
        })
    }

    /// Each component's value on `d`.
    fn prices_on(&self, d: NaiveDate) -> Vec<Option<f64>> {
        self.comps
            .iter()
            .map(|(g, _)| self.by_key.get(&(d, g.as_str())).and_then(|f| f.value))
            .collect()
    }

    /// The components' rows, values and valued rows on `d`.
    fn components_on(&self, d: NaiveDate) -> ComponentsOn<'a> {
        let rows: Vec<Option<&Fixing>> = self
            .comps
            .iter()
            .map(|(g, _)| self.by_key.get(&(d, g.as_str())).copied())
            .collect();
        let prices: Vec<Option<f64>> = rows.iter().map(|r| r.and_then(|f| f.value)).collect();
        let present: Vec<&Fixing> = rows
            .iter()
            .flatten()
            .filter(|f| f.value.is_some())
            .copied()
            .collect();
        ComponentsOn {
            rows,
            prices,
            present,
        }
    }

    /// The level after linking `prices` to the previous date's `prev`: the base to
    /// start the chain, the level unchanged (flagged `no_link`) when no link can be
    /// formed.
    fn linked_level(
        &self,
        level: Option<f64>,
        prev: Option<&Vec<Option<f64>>>,
        prices: &[Option<f64>],
        flags: &mut Vec<Flag>,
    ) -> Option<f64> {
        match (level, prev) {
            (None, _) => Some(self.spec.base),
            (Some(l), Some(p)) => match link(self.formula, p, prices, &self.weights) {
                Some(x) => Some(l * x),
                None => {
                    flags.push(Flag::NoLink);
                    Some(l)
                }
            },
            (Some(l), None) => Some(l),
        }
    }

    /// The composite's row on `d` at `level`, with the link's `flags` and those of
    /// missing, suppressed and insufficient components.
    fn row(
        &self,
        d: NaiveDate,
        level: Option<f64>,
        on: &ComponentsOn<'_>,
        mut flags: Vec<Flag>,
    ) -> Fixing {
        let (spec, m, present) = (self.spec, self.m, &on.present);
        let missing = on.prices.iter().filter(|p| p.is_none()).count();
        if missing > 0 {
            flags.push(Flag::MissingComponents(missing));
        }
        let withheld = all_suppressed(&on.rows.iter().flatten().copied().collect::<Vec<_>>());
        if withheld {
            flags.insert(0, Flag::Suppressed);
            flags.push(Flag::ComponentsSuppressed);
        }
        let sufficient = !withheld && missing == 0 && present.iter().all(|f| f.sufficient);
        if !sufficient {
            flags.insert(0, Flag::LowConfidence);
        }
        Fixing {
            date: d,
            grade: spec.id(),
            value: level
                .filter(|_| !withheld)
                .map(|l| round_to(l, m.rounding.decimals)),
            method: spec.method.as_str().into(),
            level: present.iter().filter_map(|f| f.level).max(),
            n_obs: present.iter().map(|f| f.n_obs).sum(),
            n_trades: present.iter().map(|f| f.n_trades).sum(),
            n_firm: present.iter().map(|f| f.n_firm).sum(),
            n_listings: present.iter().map(|f| f.n_listings).sum(),
            n_contributors: present.iter().map(|f| f.n_contributors).min().unwrap_or(0),
            volume_gpu_hours: round_to(present.iter().map(|f| f.volume_gpu_hours).sum(), 4),
            p1: None,
            p25: None,
            p75: None,
            p99: None,
            max_contributor_share: present
                .iter()
                .filter_map(|f| f.max_contributor_share)
                .reduce(f64::max),
            contributor_hhi: None,
            sufficient,
            flags: Flag::join(&flags),
            methodology_version: m.version.clone(),
            input_sha256: hash_strings(present.iter().map(|f| f.input_sha256.as_str())),
            publication: 1,
            change_1d: None,
            change_7d: None,
            change_30d: None,
        }
    }
}

/// Chained Jevons or Dutot over the component grades' fixings, on the dates at least
/// one component has a row.
pub(crate) fn chained(
    spec: &CompositeSpec,
    fixings: &[Fixing],
    dates: &[NaiveDate],
    m: &Methodology,
    seed: Option<&ChainSeed>,
) -> (Vec<Fixing>, Vec<(NaiveDate, f64)>) {
    let Some(chain) = ChainedComposite::new(spec, fixings, m) else {
        return (Vec::new(), Vec::new());
    };
    let mut out = Vec::new();
    let mut levels = Vec::new();
    let mut level: Option<f64> = None;
    let mut prev: Option<Vec<Option<f64>>> = None;
    // Continued from a seed: where a full run stood at the end of `seed.after` (its
    // level, and the component prices of that date to link from).
    if let Some(seed) = seed {
        level = seed.level.map(|(_, l)| l);
        prev = level.map(|_| chain.prices_on(seed.after));
    }
    for &d in dates.iter().filter(|d| seed.is_none_or(|s| **d > s.after)) {
        let on = chain.components_on(d);
        if on.present.is_empty() && level.is_none() {
            continue;
        }
        // No component lives on `d` (each is silent beyond its carry): no row, as
        // for the components themselves; the next link starts afresh, as after a
        // day with every price missing.
        if on.rows.iter().all(Option::is_none) {
            prev = Some(vec![None; chain.comps.len()]);
            continue;
        }
        let mut flags = Vec::new();
        level = chain.linked_level(level, prev.as_ref(), &on.prices, &mut flags);
        out.push(chain.row(d, level, &on, flags));
        levels.extend(level.map(|l| (d, l)));
        prev = Some(on.prices);
    }
    (out, levels)
}

/// Characteristics of an observation of `grade` for the hedonic regression:
/// ln(memory GB), years since 2020 of the GPU's launch, scope dummies (bare metal is
/// the base), spot dummy, ln(1 + tenor months) for reserved terms, operator-tier
/// score, and kind dummies (trades are the base).
fn characteristics(grade: &Grade, spec: &GpuSpec, o: &EngineObs) -> Vec<f64> {
    let d = |b: bool| if b { 1.0 } else { 0.0 };
    vec![
        spec.memory_gb.ln(),
        f64::from(spec.launch_year - 2020),
        d(grade.scope == ServiceScope::Vm),
        d(grade.scope == ServiceScope::Container),
        d(grade.scope == ServiceScope::ManagedCluster),
        d(grade.term == rentix_core::ContractTerm::Spot),
        grade.term.tenor_months().map_or(0.0, |t| (1.0 + t).ln()),
        o.tier_score().unwrap_or(2.0),
        d(o.kind == ObservationKind::Firm),
        d(o.kind == ObservationKind::Listing),
    ]
}

/// Position of the operator-tier score among the hedonic characteristics.
const TIER_CHARACTERISTIC: usize = 7;

/// The hedonic composite's quality differential for operator tier on one date: the
/// coefficient of the tier score (platinum 4 ... underperform 0) in the adjacent-day
/// regression, in log price per tier step, and as a premium (`exp(b) - 1`).
#[derive(Debug, Clone, PartialEq)]
pub struct TierDifferential {
    /// The later date of the regressed day pair.
    pub date: NaiveDate,
    /// The hedonic composite's name.
    pub composite: String,
    /// The tier score's coefficient `b` (change in ln price per tier step),
    /// rounded to 6 decimals.
    pub log_price_per_tier_step: f64,
    /// `exp(b) - 1`: the price premium per tier step as a share (0.05 = 5%),
    /// rounded to 6 decimals.
    pub premium_per_tier_step: f64,
    /// Observations in the day pair's regression (both days).
    pub n_obs: usize,
}

/// Drops regressors that do not vary in the sample (they would make the design
/// singular); the intercept absorbs them. Returns the kept characteristics' positions.
fn drop_constant(obs: &mut [HedonicObs]) -> Vec<usize> {
    let Some(k) = obs.first().map(|o| o.characteristics.len()) else {
        return Vec::new();
    };
    let varying: Vec<usize> = (0..k)
        .filter(|&j| {
            let first = obs[0].characteristics[j];
            obs.iter()
                .any(|o| (o.characteristics[j] - first).abs() > 1e-12)
        })
        .collect();
    for o in obs.iter_mut() {
        o.characteristics = varying.iter().map(|&j| o.characteristics[j]).collect();
    }
    varying
}

/// A grade's observations that survive the methodology's outlier filter, applied per
/// day and kind as the grade's own fixing applies it: one fat-finger price must not
/// move a regression over every grade.
fn filtered<'a>(obs: &'a [EngineObs], m: &Methodology) -> Vec<&'a EngineObs> {
    let mut groups: BTreeMap<(NaiveDate, ObservationKind), Vec<&EngineObs>> = BTreeMap::new();
    for o in obs {
        groups.entry((o.day, o.kind)).or_default().push(o);
    }
    let params = m.filter_params();
    groups
        .into_values()
        .flat_map(|g| {
            let values: Vec<f64> = g.iter().map(|o| o.price).collect();
            let weights = crate::engine::screening_weights(g.iter().copied(), m);
            keep(m.outliers.filter, &values, &weights, &params)
                .into_iter()
                .map(move |k| g[k])
                .collect::<Vec<_>>()
        })
        .collect()
}

/// An observation entering the regression, with its grade and the grade's GPU
/// (characteristics are computed when a sample is built, not held per row).
type HedonicRow<'a> = (&'a (Grade, &'a GpuSpec), &'a EngineObs);

/// One fitted link of the hedonic chain: today's index with the previous day with
/// data at 100, and the operator-tier coefficient when the tier varied.
struct Link {
    index: f64,
    tier_coefficient: Option<f64>,
    n_obs: usize,
}

/// A grade the hedonic composite covers: the grade and its GPU, and its observations.
type CoveredGrade<'a> = ((Grade, &'a GpuSpec), &'a Vec<EngineObs>);

/// The grades whose key one of the composite's patterns matches and whose GPU the
/// catalog describes, in key order.
fn covered_grades<'a>(
    spec: &CompositeSpec,
    groups: &'a BTreeMap<String, Vec<EngineObs>>,
    cat: &'a GpuCatalog,
) -> Vec<CoveredGrade<'a>> {
    let patterns: Vec<GradePattern> = spec
        .patterns
        .iter()
        .filter_map(|p| GradePattern::new(p).ok())
        .collect();
    groups
        .iter()
        .filter_map(|(key, obs)| {
            let grade = key.parse::<Grade>().ok()?;
            if !patterns.iter().any(|p| p.matches(&grade)) {
                return None;
            }
            let spec = cat.get(&grade.gpu)?;
            Some(((grade, spec), obs))
        })
        .collect()
}

/// The covered grades' observations entering the regression, by day: each grade
/// filtered on its own (in parallel), then gathered in grade order.
fn rows_by_day<'a>(
    grades: &'a [CoveredGrade<'a>],
    m: &Methodology,
) -> BTreeMap<NaiveDate, Vec<HedonicRow<'a>>> {
    let kept: Vec<Vec<&EngineObs>> = grades
        .par_iter()
        .map(|(_, obs)| {
            filtered(obs, m)
                .into_iter()
                .filter(|o| m.inputs.hierarchy.contains(&o.kind))
                .collect()
        })
        .collect();
    let mut by_day: BTreeMap<NaiveDate, Vec<HedonicRow<'_>>> = BTreeMap::new();
    for ((grade, _), obs) in grades.iter().zip(kept) {
        for o in obs {
            by_day.entry(o.day).or_default().push((grade, o));
        }
    }
    by_day
}

/// A row's observation in the regression sample of a day pair (`period` 0 or 1).
fn sample_obs(period: usize, (g, o): &HedonicRow<'_>) -> HedonicObs {
    HedonicObs {
        period,
        characteristics: characteristics(&g.0, g.1, o),
        price: o.price,
    }
}

/// The link of `later` on `earlier` (two consecutive days with data): their
/// observations regressed with one time dummy; `None` when the fit is singular.
fn fit_link(earlier: &[HedonicRow<'_>], later: &[HedonicRow<'_>]) -> Option<Link> {
    let mut sample: Vec<HedonicObs> = earlier
        .iter()
        .map(|r| sample_obs(0, r))
        .chain(later.iter().map(|r| sample_obs(1, r)))
        .collect();
    let kept = drop_constant(&mut sample);
    time_dummy(&sample, 2).map(|fit| Link {
        index: fit.index[1],
        tier_coefficient: kept
            .iter()
            .position(|&j| j == TIER_CHARACTERISTIC)
            .map(|pos| fit.coefficients[1 + pos]),
        n_obs: sample.len(),
    })
}

/// The fitted links by their later date. Each link regresses two consecutive days
/// with data; links are independent of one another, so they are fitted in
/// parallel and chained in date order after.
fn fitted_links(
    dates: &[NaiveDate],
    by_day: &BTreeMap<NaiveDate, Vec<HedonicRow<'_>>>,
) -> BTreeMap<NaiveDate, Link> {
    let data_days: Vec<NaiveDate> = dates
        .iter()
        .copied()
        .filter(|d| by_day.contains_key(d))
        .collect();
    data_days
        .par_windows(2)
        .map(|w| (w[1], fit_link(&by_day[&w[0]], &by_day[&w[1]])))
        .collect::<Vec<_>>()
        .into_iter()
        .filter_map(|(d, l)| Some((d, l?)))
        .collect()
}

/// A hedonic composite's rule and the covered grades' own fixings, whose
/// publication it respects.
struct HedonicComposite<'a> {
    spec: &'a CompositeSpec,
    m: &'a Methodology,
    /// The covered grades' keys, in key order.
    covered: Vec<String>,
    fixing_of: BTreeMap<(NaiveDate, &'a str), &'a Fixing>,
}

impl HedonicComposite<'_> {
    /// The operator-tier differential of `link`, the link of `d`, when the tier
    /// varied in its regression.
    fn tier_differential(&self, d: NaiveDate, link: &Link) -> Option<TierDifferential> {
        let b = link.tier_coefficient?;
        Some(TierDifferential {
            date: d,
            composite: self.spec.name.clone(),
            log_price_per_tier_step: round_to(b, 6),
            premium_per_tier_step: round_to(b.exp() - 1.0, 6),
            n_obs: link.n_obs,
        })
    }

    /// The composite's row on `d` at `level` over `today`'s regression rows, with
    /// the link's `flags` and those of the grades' publication rules.
    fn row(
        &self,
        d: NaiveDate,
        level: Option<f64>,
        today: &[HedonicRow<'_>],
        mut flags: Vec<Flag>,
    ) -> Fixing {
        let (spec, m) = (self.spec, self.m);
        let mut by_contributor: BTreeMap<SourceId, usize> = BTreeMap::new();
        for (_, o) in today {
            *by_contributor.entry(o.source).or_default() += 1;
        }
        let components: Vec<&Fixing> = self
            .covered
            .iter()
            .filter_map(|g| self.fixing_of.get(&(d, g.as_str())).copied())
            .collect();
        let (publish, rules) = composite_rules(m, &by_contributor, &components);
        let sufficient = flags.is_empty() && rules.is_empty() && today.len() >= 20;
        flags.extend(rules);
        if !sufficient {
            flags.insert(0, Flag::LowConfidence);
        }
        Fixing {
            date: d,
            grade: spec.id(),
            value: level
                .filter(|_| publish)
                .map(|l| round_to(l, m.rounding.decimals)),
            method: spec.method.as_str().into(),
            // The worst input tier that entered the regression.
            level: today.iter().map(|t| FixingLevel::of_kind(t.1.kind)).max(),
            n_obs: today.len(),
            n_trades: today
                .iter()
                .filter(|t| t.1.kind == ObservationKind::Trade)
                .count(),
            n_firm: today
                .iter()
                .filter(|t| t.1.kind == ObservationKind::Firm)
                .count(),
            n_listings: today
                .iter()
                .filter(|t| t.1.kind == ObservationKind::Listing)
                .count(),
            n_contributors: by_contributor.len(),
            volume_gpu_hours: 0.0,
            p1: None,
            p25: None,
            p75: None,
            p99: None,
            max_contributor_share: None,
            contributor_hhi: None,
            sufficient,
            flags: Flag::join(&flags),
            methodology_version: m.version.clone(),
            input_sha256: keys_sha256(today.iter().map(|t| t.1.key)),
            publication: 1,
            change_1d: None,
            change_7d: None,
            change_30d: None,
        }
    }
}

/// Adjacent-period time-dummy hedonic index, chained: each link regresses the
/// observations of two consecutive fixing dates with one time dummy.
pub(crate) fn hedonic(
    spec: &CompositeSpec,
    groups: &BTreeMap<String, Vec<EngineObs>>,
    fixings: &[Fixing],
    dates: &[NaiveDate],
    m: &Methodology,
    seed: Option<&ChainSeed>,
) -> Chain {
    let cat = GpuCatalog::bundled();
    let grades = covered_grades(spec, groups, &cat);
    let composite = HedonicComposite {
        spec,
        m,
        covered: grades.iter().map(|((g, _), _)| g.key()).collect(),
        fixing_of: by_date_and_grade(fixings),
    };
    let by_day = rows_by_day(&grades, m);
    let links = fitted_links(dates, &by_day);
    let mut chain = Chain::default();
    let mut level: Option<f64> = None;
    let mut prev: Option<NaiveDate> = None;
    // Continued from a seed: the level of the last day with data on or before
    // `seed.after`, that day being the one the next link regresses against.
    if let Some((day, l)) = seed.and_then(|s| s.level) {
        level = Some(l);
        prev = Some(day);
    }
    for &d in dates.iter().filter(|d| seed.is_none_or(|s| **d > s.after)) {
        let Some(today) = by_day.get(&d) else {
            continue;
        };
        let mut flags = Vec::new();
        level = match (level, prev) {
            (None, _) => Some(spec.base),
            (Some(l), Some(_)) => match links.get(&d) {
                Some(link) => {
                    chain.tiers.extend(composite.tier_differential(d, link));
                    Some(l * link.index / 100.0)
                }
                None => {
                    flags.push(Flag::SingularRegression);
                    Some(l)
                }
            },
            (Some(l), None) => Some(l),
        };
        chain.rows.push(composite.row(d, level, today, flags));
        chain.levels.extend(level.map(|l| (d, l)));
        prev = Some(d);
    }
    chain
}

/// A market price over several grades: their observations pooled and fixed as one
/// grade under the methodology's rules (USD per GPU-hour; `method` = `pooled`).
fn pooled(
    spec: &CompositeSpec,
    groups: &BTreeMap<String, Vec<EngineObs>>,
    dates: &[NaiveDate],
    m: &Methodology,
    rule: &DayRule,
) -> Vec<Fixing> {
    let patterns: Vec<GradePattern> = spec
        .patterns
        .iter()
        .filter_map(|p| GradePattern::new(p).ok())
        .collect();
    let mut obs: Vec<EngineObs> = groups
        .iter()
        .filter(|(g, _)| {
            g.parse::<Grade>()
                .is_ok_and(|g| g.region.is_none() && patterns.iter().any(|p| p.matches(&g)))
        })
        .flat_map(|(_, v)| v.iter().cloned())
        .collect();
    sort_obs(&mut obs);
    let mut rows = crate::engine::fix_grade(&spec.name, &obs, dates, m, rule);
    for r in &mut rows {
        r.grade = spec.id();
        r.method = CompositeMethod::Pooled.as_str().into();
    }
    rows
}

/// Where a chained composite stood at the end of a date, as a full run computed it:
/// an incremental run ([`crate::incremental`]) continues the chain from here.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChainSeed {
    /// Dates up to this one are not fixed again.
    pub after: NaiveDate,
    /// The composite's last row on or before `after`: its date and unrounded level
    /// (`None`: the chain had not started).
    pub level: Option<(NaiveDate, f64)>,
}

/// A chained composite's rows, its tier differentials (hedonic) and the unrounded
/// level of each row.
#[derive(Debug, Clone, Default)]
pub(crate) struct Chain {
    /// The composites' fixing rows (values rounded to `rounding.decimals`).
    pub rows: Vec<Fixing>,
    /// The hedonic composites' tier differentials, one per date whose link was
    /// fitted with an operator-tier score that varied.
    pub tiers: Vec<TierDifferential>,
    /// One composite's unrounded level (points) on each of its rows, withheld rows
    /// included; empty in the `Chain` [`composites`] returns, which gives the levels
    /// by name beside it.
    pub levels: Vec<(NaiveDate, f64)>,
}

/// Every composite of the methodology, the hedonic composites' daily tier
/// differentials, and the chained composites' unrounded levels by name. With
/// `seeds` (by composite name, every chained composite present), the chained
/// composites continue from them and fix only the dates after.
pub(crate) fn composites(
    groups: &BTreeMap<String, Vec<EngineObs>>,
    fixings: &[Fixing],
    dates: &[NaiveDate],
    m: &Methodology,
    rule: &DayRule,
    seeds: Option<&BTreeMap<String, ChainSeed>>,
) -> (Chain, BTreeMap<String, Vec<(NaiveDate, f64)>>) {
    // Each composite on its own (a hedonic one is most of the work, and its days
    // were fitted with the other side idle), put together in the methodology's order.
    let each: Vec<(Chain, Option<&String>)> = m
        .composite
        .par_iter()
        .map(|c| {
            let seed = seeds.and_then(|s| s.get(&c.name));
            match c.method {
                CompositeMethod::Hedonic => {
                    (hedonic(c, groups, fixings, dates, m, seed), Some(&c.name))
                }
                CompositeMethod::Pooled => (
                    Chain {
                        rows: pooled(c, groups, dates, m, rule),
                        ..Chain::default()
                    },
                    None,
                ),
                _ => {
                    let (rows, levels) = chained(c, fixings, dates, m, seed);
                    let chain = Chain {
                        rows,
                        levels,
                        ..Chain::default()
                    };
                    (chain, Some(&c.name))
                }
            }
        })
        .collect();
    let mut all = Chain::default();
    let mut levels = BTreeMap::new();
    for (chain, name) in each {
        all.rows.extend(chain.rows);
        all.tiers.extend(chain.tiers);
        if let Some(name) = name {
            levels.insert(name.clone(), chain.levels);
        }
    }
    (all, levels)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BM: &str = "h100-sxm-80gb/bare-metal/on-demand";
    const VM: &str = "h100-sxm-80gb/vm/on-demand";
    const CT: &str = "h100-sxm-80gb/container/on-demand";

    fn day(n: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2025, 3, n).unwrap()
    }

    /// A sufficient grade fixing from trades.
    fn fix(d: NaiveDate, grade: &str, value: Option<f64>) -> Fixing {
        Fixing {
            max_contributor_share: Some(0.34),
            input_sha256: format!("{grade}@{d}"),
            ..Fixing::for_test(d, grade, value)
        }
    }

    fn spec(method: CompositeMethod, weights: &[(&str, f64)], base: f64) -> CompositeSpec {
        CompositeSpec {
            name: "blend".into(),
            method,
            weights: weights
                .iter()
                .map(|(g, w)| ((*g).to_string(), *w))
                .collect(),
            patterns: Vec::new(),
            base,
        }
    }

    /// The default blend's weights: bare metal 0.5, VM 0.3, container 0.2.
    fn blend(base: f64) -> CompositeSpec {
        spec(
            CompositeMethod::JevonsChained,
            &[(BM, 0.5), (VM, 0.3), (CT, 0.2)],
            base,
        )
    }

    fn values(rows: &[Fixing]) -> Vec<Option<f64>> {
        rows.iter().map(|f| f.value).collect()
    }

    /// Hand arithmetic (weighted Jevons, CPI manual ch. 8): day 1 is the base, 100.
    /// Day 2: bare metal 2.00 -> 2.42 (relative 1.21), VM and container unchanged, so
    /// the link is 1.21^0.5 * 1^0.3 * 1^0.2 = 1.1 and the level 110. Day 3: every
    /// price x 1.1, link 1.1, level 121.
    #[test]
    fn jevons_chained_levels_start_at_base_100_and_multiply_weighted_links() {
        let m = Methodology::default_methodology();
        let fixings = [
            fix(day(1), BM, Some(2.0)),
            fix(day(1), VM, Some(3.0)),
            fix(day(1), CT, Some(4.0)),
            fix(day(2), BM, Some(2.42)),
            fix(day(2), VM, Some(3.0)),
            fix(day(2), CT, Some(4.0)),
            fix(day(3), BM, Some(2.662)),
            fix(day(3), VM, Some(3.3)),
            fix(day(3), CT, Some(4.4)),
        ];
        let (rows, levels) = chained(&blend(100.0), &fixings, &[day(1), day(2), day(3)], &m, None);
        assert_eq!(values(&rows), [Some(100.0), Some(110.0), Some(121.0)]);
        assert_eq!(levels.len(), 3);
        assert!((levels[2].1 - 121.0).abs() < 1e-9);
        for r in &rows {
            assert_eq!(r.grade, "blend");
            assert_eq!(r.method, "jevons-chained");
            assert_eq!(r.unit(), rentix_fixings::IndexUnit::Points);
            assert!(r.sufficient, "{}: {}", r.date, r.flags);
            assert_eq!(r.flags, "");
            // Counts are the components' sums: 3 x 3 observations, 3 x 30 GPU-hours.
            assert_eq!((r.n_obs, r.volume_gpu_hours), (9, 90.0));
        }
    }

    /// Hand arithmetic, equal weights, prices 2 and 4 -> 2 and 5. Dutot: ratio of the
    /// mean prices, 3.5 / 3 = 1.1666..., level 116.6667 (4 decimals). Jevons:
    /// sqrt(1 x 1.25) = 1.118034, level 111.8034.
    #[test]
    fn dutot_links_the_mean_prices_and_jevons_the_mean_relatives() {
        let m = Methodology::default_methodology();
        let fixings = [
            fix(day(1), BM, Some(2.0)),
            fix(day(1), VM, Some(4.0)),
            fix(day(2), BM, Some(2.0)),
            fix(day(2), VM, Some(5.0)),
        ];
        let dates = [day(1), day(2)];
        let w = [(BM, 0.5), (VM, 0.5)];
        let (dutot, _) = chained(
            &spec(CompositeMethod::DutotChained, &w, 100.0),
            &fixings,
            &dates,
            &m,
            None,
        );
        let (jevons, _) = chained(
            &spec(CompositeMethod::JevonsChained, &w, 100.0),
            &fixings,
            &dates,
            &m,
            None,
        );
        assert_eq!(values(&dutot), [Some(100.0), Some(116.6667)]);
        assert_eq!(values(&jevons), [Some(100.0), Some(111.8034)]);
        assert_eq!(dutot[0].method, "dutot-chained");
    }

    #[test]
    fn the_first_date_is_the_composites_base() {
        let m = Methodology::default_methodology();
        let fixings = [
            fix(day(1), BM, Some(2.0)),
            fix(day(1), VM, Some(3.0)),
            fix(day(1), CT, Some(4.0)),
            fix(day(2), BM, Some(2.42)),
            fix(day(2), VM, Some(3.0)),
            fix(day(2), CT, Some(4.0)),
        ];
        // Base 1000: the day-2 link of 1.1 (as above) gives 1100.
        let (rows, _) = chained(&blend(1000.0), &fixings, &[day(1), day(2)], &m, None);
        assert_eq!(values(&rows), [Some(1000.0), Some(1100.0)]);
    }

    /// Day 2 has no VM row. The link uses the components priced on both dates,
    /// weights renormalized: bare metal and container both x 1.1, so the link is 1.1
    /// whatever the weights, and the level 110; the row says a component is missing.
    #[test]
    fn a_missing_component_is_left_out_of_the_link_and_flagged() {
        let m = Methodology::default_methodology();
        let fixings = [
            fix(day(1), BM, Some(2.0)),
            fix(day(1), VM, Some(3.0)),
            fix(day(1), CT, Some(4.0)),
            fix(day(2), BM, Some(2.2)),
            fix(day(2), CT, Some(4.4)),
        ];
        let (rows, _) = chained(&blend(100.0), &fixings, &[day(1), day(2)], &m, None);
        assert_eq!(values(&rows), [Some(100.0), Some(110.0)]);
        assert!(!rows[1].sufficient);
        assert_eq!(rows[1].flags, "low_confidence;missing_components=1");
        // Only the two components present count: 2 x 3 observations.
        assert_eq!(rows[1].n_obs, 6);
    }

    /// Day 2: every component has a row but no price, so no link can be formed and
    /// the level is held at 100. Day 3 links from day 2, which had no price either:
    /// held again. Day 4 links from day 3 (x 1.1 each): 110.
    #[test]
    fn a_day_without_any_price_holds_the_level_and_the_chain_resumes_after() {
        let m = Methodology::default_methodology();
        let mut fixings = Vec::new();
        for (d, scale) in [(1, Some(1.0)), (2, None), (3, Some(1.0)), (4, Some(1.1))] {
            for (g, p) in [(BM, 2.0), (VM, 3.0), (CT, 4.0)] {
                fixings.push(fix(day(d), g, scale.map(|s| p * s)));
            }
        }
        let dates = [day(1), day(2), day(3), day(4)];
        let (rows, _) = chained(&blend(100.0), &fixings, &dates, &m, None);
        assert_eq!(
            values(&rows),
            [Some(100.0), Some(100.0), Some(100.0), Some(110.0)]
        );
        assert!(rows[1].flags.split(';').any(|f| f == "no_link"));
        assert!(rows[1]
            .flags
            .split(';')
            .any(|f| f == "missing_components=3"));
        assert!(rows[2].flags.split(';').any(|f| f == "no_link"));
        assert_eq!(rows[3].flags, "");
    }

    /// Every component without a value and one of them suppressed: the composite
    /// must not publish, through its held level, what the grade's rules withheld.
    #[test]
    fn a_composite_of_suppressed_components_is_suppressed() {
        let m = Methodology::default_methodology();
        let mut fixings = vec![
            fix(day(1), BM, Some(2.0)),
            fix(day(1), VM, Some(3.0)),
            fix(day(1), CT, Some(4.0)),
            fix(day(2), BM, None),
            fix(day(2), VM, None),
            fix(day(2), CT, None),
        ];
        fixings[3].flags = "low_confidence;suppressed;few_contributors".into();
        let (rows, levels) = chained(&blend(100.0), &fixings, &[day(1), day(2)], &m, None);
        assert_eq!(values(&rows), [Some(100.0), None]);
        let flags: Vec<&str> = rows[1].flags.split(';').collect();
        assert!(flags.contains(&"suppressed") && flags.contains(&"components_suppressed"));
        assert!(!rows[1].sufficient);
        // The unrounded level is still kept for the chain: 100 held.
        assert_eq!(levels[1], (day(2), 100.0));
    }

    /// An incremental run seeded where a full run stood after day 2 (level 110, as
    /// in the Jevons test) fixes day 3 as the full run does: 110 x 1.1 = 121.
    #[test]
    fn a_chain_continued_from_a_seed_matches_the_full_run() {
        let m = Methodology::default_methodology();
        let fixings = [
            fix(day(1), BM, Some(2.0)),
            fix(day(1), VM, Some(3.0)),
            fix(day(1), CT, Some(4.0)),
            fix(day(2), BM, Some(2.42)),
            fix(day(2), VM, Some(3.0)),
            fix(day(2), CT, Some(4.0)),
            fix(day(3), BM, Some(2.662)),
            fix(day(3), VM, Some(3.3)),
            fix(day(3), CT, Some(4.4)),
        ];
        let seed = ChainSeed {
            after: day(2),
            level: Some((day(2), 110.0)),
        };
        let dates = [day(1), day(2), day(3)];
        let (rows, _) = chained(&blend(100.0), &fixings, &dates, &m, Some(&seed));
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].date, rows[0].value), (day(3), Some(121.0)));
    }

    fn trade(grade_day: NaiveDate, source: u32, price: f64, name: &str) -> EngineObs {
        EngineObs {
            key: crate::engine_obs::ObsKey::digest(name),
            price,
            quantity: 10.0,
            day: grade_day,
            source: SourceId(source),
            kind: ObservationKind::Trade,
            tier: None,
        }
    }

    /// Neither grade alone has the default's three contributors; pooled, three
    /// trades of 10 GPU-hours each at 2, 3 and 4 from three contributors (a third of
    /// the weight each, under the 35% cap) fix the volume-weighted median, 3.0 USD.
    #[test]
    fn a_pooled_composite_fixes_the_grades_observations_as_one_grade_in_usd() {
        let m = Methodology::default_methodology();
        let mut groups = BTreeMap::new();
        groups.insert(VM.to_string(), vec![trade(day(1), 0, 2.0, "a")]);
        groups.insert(
            BM.to_string(),
            vec![trade(day(1), 1, 3.0, "b"), trade(day(1), 2, 4.0, "c")],
        );
        // An A100 grade the pattern does not match: its price must not enter.
        groups.insert(
            "a100-sxm-80gb/vm/on-demand".to_string(),
            vec![trade(day(1), 3, 90.0, "d")],
        );
        let spec = CompositeSpec {
            name: "h100-market".into(),
            method: CompositeMethod::Pooled,
            weights: BTreeMap::new(),
            patterns: vec!["h100-sxm-80gb/*/on-demand".into()],
            base: 100.0,
        };
        let rows = pooled(&spec, &groups, &[day(1)], &m, m.day_rule());
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].value, Some(3.0));
        assert_eq!(rows[0].method, "pooled");
        assert_eq!(rows[0].unit(), rentix_fixings::IndexUnit::UsdPerGpuHour);
        assert_eq!((rows[0].n_obs, rows[0].n_contributors), (3, 3));
    }

    /// One GPU, one scope, trades only, no tier: every characteristic is constant and
    /// dropped, so the day pair's regression is ln p = a + d (day 2). OLS gives d =
    /// mean ln p(day 2) - mean ln p(day 1) = ln 2.2 - ln 2 = ln 1.1 (prices 1, 2, 4
    /// then 1.1, 2.2, 4.4), so the index goes 100 -> 110.
    #[test]
    fn the_hedonic_time_dummy_of_a_uniform_price_rise_is_that_rise() {
        let m = Methodology::default_methodology();
        let mut groups = BTreeMap::new();
        let obs: Vec<EngineObs> = [(1, 1.0), (1, 2.0), (1, 4.0), (2, 1.1), (2, 2.2), (2, 4.4)]
            .iter()
            .enumerate()
            .map(|(i, &(d, p))| trade(day(d), (i % 3) as u32, p, &format!("o{i}")))
            .collect();
        groups.insert(VM.to_string(), obs);
        let spec = CompositeSpec {
            name: "quality-adjusted".into(),
            method: CompositeMethod::Hedonic,
            weights: BTreeMap::new(),
            patterns: vec!["*/*/on-demand".into()],
            base: 100.0,
        };
        let chain = hedonic(&spec, &groups, &[], &[day(1), day(2)], &m, None);
        assert_eq!(values(&chain.rows), [Some(100.0), Some(110.0)]);
        assert_eq!(chain.rows[1].method, "hedonic-time-dummy");
        assert_eq!((chain.rows[1].n_obs, chain.rows[1].n_contributors), (3, 3));
        // The tier score never varied: no tier differential.
        assert!(chain.tiers.is_empty());
        // Fewer than 20 observations a day: published, but low confidence.
        assert!(!chain.rows[1].sufficient);
        assert_eq!(chain.rows[1].flags, "low_confidence");
    }
}
