//! The index engine: observations in, one [`Fixing`] per grade and date out.
//!
//! For each grade and fixing date `D`, the window is the `window_days` days ending
//! `lag_days` before `D`. Each input kind of the hierarchy is tried in order: its
//! observations in the window are filtered for outliers (per day or pooled), a day
//! is valid with `min_obs_per_day` of them, and the kind fixes the grade when it has
//! `min_obs` observations over `min_valid_days` valid days. Weights are GPU-hours for
//! trades and 1 for offers and listings, capped per contributor, then aggregated.
//! A listing-based value is multiplied by the median trade/listing ratio of recent
//! days that had both. With no kind able to fix, the last value is carried forward
//! for a bounded number of days.

use crate::aggregation::aggregate;
use crate::contributors::cap_weights;
use crate::fixing::{round_to, Fixing, LEVEL_CARRIED};
use crate::methodology::{FilterScope, Methodology};
use crate::outliers::keep;
use crate::weighted_quantile::{sorted_pairs, weighted_quantile_sorted, TieRule};
use chrono::{Days, NaiveDate};
use rayon::prelude::*;
use rentix_core::{DayRule, FixingClock, GradePattern, ObservationKind};
use rentix_ingest::StoredObservation;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};

/// An observation as the engine sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineObs {
    pub day: NaiveDate,
    pub kind: ObservationKind,
    pub source: String,
    pub price: f64,
    /// GPU-hours for trades, 1 otherwise.
    pub weight: f64,
    pub quantity: f64,
    pub key: String,
    /// Operator-tier score (platinum 4 ... underperform 0), when known.
    pub tier: Option<f64>,
}

/// What to fix and over which dates.
#[derive(Debug, Clone)]
pub struct IndexRequest {
    pub methodology: Methodology,
    /// Extra grade filters from the command line (all grades when empty).
    pub grade_filters: Vec<GradePattern>,
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
}

/// Groups store observations by the grades the methodology fixes, with fixing dates
/// recomputed under the methodology's cut-off.
pub fn group_by_grade(
    rows: &[StoredObservation],
    req: &IndexRequest,
    clock: &FixingClock,
) -> Result<BTreeMap<String, Vec<EngineObs>>, String> {
    let patterns = req.methodology.patterns()?;
    let mut out: BTreeMap<String, Vec<EngineObs>> = BTreeMap::new();
    for r in rows {
        let o = &r.obs;
        let mut grades = vec![o.grade.clone().with_region(None)];
        if req.methodology.grades.regional && o.grade.region.is_some() {
            grades.push(o.grade.clone());
        }
        for g in grades {
            let wanted = patterns.iter().any(|p| p.matches(&g))
                && (req.grade_filters.is_empty()
                    || req.grade_filters.iter().any(|p| p.matches(&g)));
            if !wanted {
                continue;
            }
            let quantity = o.quantity_gpu_hours.map_or(0.0, |q| q.get());
            out.entry(g.key()).or_default().push(EngineObs {
                day: clock.fixing_date(o.observed_at),
                kind: o.kind,
                source: o.source.clone(),
                price: o.usd_per_gpu_hour.get(),
                weight: if o.kind == ObservationKind::Trade {
                    quantity.max(f64::MIN_POSITIVE)
                } else {
                    1.0
                },
                quantity,
                key: r.dedupe_key.clone(),
                tier: o.operator_tier.map(|t| t.score()),
            });
        }
    }
    for v in out.values_mut() {
        v.sort_by(|a, b| {
            (a.day, a.kind, &a.source, &a.key)
                .cmp(&(b.day, b.kind, &b.source, &b.key))
                .then(a.price.total_cmp(&b.price))
        });
    }
    Ok(out)
}

/// The fixing dates between the first and last observation day, clipped to the
/// request, that the calendar counts.
pub fn fixing_dates(
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
    end = end + Days::new(u64::from(req.methodology.pooling.lag_days));
    if let Some(f) = req.from {
        d = d.max(f);
    }
    if let Some(t) = req.to {
        end = end.min(t);
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

/// One kind's attempt at fixing: what it used and what it gave.
struct TierFix {
    value: f64,
    p: [f64; 4],
    used: Vec<usize>,
    max_share: f64,
    removed: usize,
}

struct GradeCtx<'a> {
    m: &'a Methodology,
    obs: &'a [EngineObs],
    /// (day, kind) -> indices into `obs`.
    by_day: BTreeMap<(NaiveDate, ObservationKind), Vec<usize>>,
}

impl GradeCtx<'_> {
    fn window(&self, d: NaiveDate) -> (NaiveDate, NaiveDate) {
        let p = &self.m.pooling;
        let end = d - Days::new(u64::from(p.lag_days));
        let start = end - Days::new(u64::from(p.window_days - 1));
        (start, end)
    }

    fn in_window(&self, d: NaiveDate, kind: ObservationKind) -> Vec<(NaiveDate, &Vec<usize>)> {
        let (start, end) = self.window(d);
        self.by_day
            .range((start, kind)..=(end, kind))
            .filter(|((_, k), _)| *k == kind)
            .map(|((day, _), v)| (*day, v))
            .collect()
    }

    fn filter(&self, idx: &[usize]) -> Vec<usize> {
        let values: Vec<f64> = idx.iter().map(|&i| self.obs[i].price).collect();
        let weights: Vec<f64> = idx.iter().map(|&i| self.obs[i].weight).collect();
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

    /// Tries to fix on `kind` for date `d`; `None` if the kind lacks data.
    fn tier(&self, d: NaiveDate, kind: ObservationKind) -> Option<TierFix> {
        let days = self.in_window(d, kind);
        let total: usize = days.iter().map(|(_, v)| v.len()).sum();
        let (used, valid_days) = match self.m.outliers.apply {
            FilterScope::PerDay => {
                let mut used = Vec::new();
                let mut valid = 0;
                for (_, idx) in &days {
                    let kept = self.filter(idx);
                    if kept.len() >= self.m.pooling.min_obs_per_day {
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
                    .filter(|(_, v)| {
                        v.iter().filter(|i| kept.contains(i)).count()
                            >= self.m.pooling.min_obs_per_day
                    })
                    .count() as u32;
                (kept.into_iter().collect(), valid)
            }
        };
        let min = self
            .m
            .inputs
            .min_obs
            .get(&kind)
            .copied()
            .unwrap_or(1)
            .max(1);
        if used.len() < min || valid_days < self.m.pooling.min_valid_days {
            return None;
        }
        let sources: Vec<&str> = used.iter().map(|&i| self.obs[i].source.as_str()).collect();
        let raw_w: Vec<f64> = used.iter().map(|&i| self.obs[i].weight).collect();
        let (w, max_share) = cap_weights(&sources, &raw_w, self.m.contributors.max_share);
        let values: Vec<f64> = used.iter().map(|&i| self.obs[i].price).collect();
        let a = &self.m.aggregation;
        let value = aggregate(a.method, &values, &w, a.trim, a.tie_rule)?;
        let pairs = sorted_pairs(&values, &w);
        let q = |x: f64| weighted_quantile_sorted(&pairs, x, TieRule::Lower).unwrap_or(value);
        let removed = total - used.len();
        Some(TierFix {
            value,
            p: [q(0.01), q(0.25), q(0.75), q(0.99)],
            used,
            max_share,
            removed,
        })
    }
}

fn input_hash(obs: &[EngineObs], used: &[usize]) -> String {
    let mut keys: Vec<&str> = used.iter().map(|&i| obs[i].key.as_str()).collect();
    keys.sort_unstable();
    let mut h = Sha256::new();
    for k in keys {
        h.update(k.as_bytes());
        h.update(b"\n");
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// Fixes one grade on every date of its life (first observation to last observation
/// plus the carry-forward limit).
pub fn fix_grade(
    grade: &str,
    obs: &[EngineObs],
    dates: &[NaiveDate],
    m: &Methodology,
) -> Vec<Fixing> {
    let mut by_day: BTreeMap<(NaiveDate, ObservationKind), Vec<usize>> = BTreeMap::new();
    for (i, o) in obs.iter().enumerate() {
        by_day.entry((o.day, o.kind)).or_default().push(i);
    }
    let ctx = GradeCtx { m, obs, by_day };
    let (Some(first), Some(last)) = (obs.first().map(|o| o.day), obs.last().map(|o| o.day)) else {
        return Vec::new();
    };
    let lag = u64::from(m.pooling.lag_days);
    let life_end = last + Days::new(lag + u64::from(m.fallback.carry_forward_days));
    let first_tier = m.inputs.hierarchy[0];
    let spread_on = m.fallback.listing_spread
        && m.inputs.hierarchy.contains(&ObservationKind::Trade)
        && m.inputs.hierarchy.contains(&ObservationKind::Listing);
    let mut spreads: BTreeMap<NaiveDate, f64> = BTreeMap::new();
    let mut last_fix: Option<(NaiveDate, Fixing)> = None;
    let mut out = Vec::new();
    let dec = m.rounding.decimals;

    for &d in dates
        .iter()
        .filter(|d| **d >= first + Days::new(lag) && **d <= life_end)
    {
        let (ws, we) = ctx.window(d);
        let count = |k: ObservationKind| -> usize {
            ctx.by_day
                .range((ws, k)..=(we, k))
                .filter(|((_, kk), _)| *kk == k)
                .map(|(_, v)| v.len())
                .sum()
        };
        let (n_trades, n_firm, n_listings) = (
            count(ObservationKind::Trade),
            count(ObservationKind::Firm),
            count(ObservationKind::Listing),
        );
        let mut tiers: BTreeMap<ObservationKind, TierFix> = BTreeMap::new();
        for &k in &m.inputs.hierarchy {
            if let Some(t) = ctx.tier(d, k) {
                tiers.insert(k, t);
            }
        }
        if spread_on {
            if let (Some(t), Some(l)) = (
                tiers.get(&ObservationKind::Trade),
                tiers.get(&ObservationKind::Listing),
            ) {
                spreads.insert(d, t.value / l.value);
            }
        }
        let chosen = m
            .inputs
            .hierarchy
            .iter()
            .find_map(|k| tiers.get(k).map(|t| (*k, t)));
        let mut flags: Vec<String> = Vec::new();
        let row = match chosen {
            Some((kind, t)) => {
                let mut factor = 1.0;
                if kind == ObservationKind::Listing && spread_on {
                    let from = d - Days::new(u64::from(m.fallback.spread_lookback_days));
                    let recent: Vec<f64> = spreads.range(from..d).map(|(_, v)| *v).collect();
                    if recent.len() as u32 >= m.fallback.spread_min_days {
                        factor = median(recent).unwrap_or(1.0);
                        flags.push("listing_spread_adjusted".into());
                    } else {
                        flags.push("listing_spread_unavailable".into());
                    }
                }
                if kind != first_tier {
                    flags.push(format!("fallback_{kind}"));
                }
                let contributors: BTreeSet<&str> =
                    t.used.iter().map(|&i| obs[i].source.as_str()).collect();
                let sufficient = contributors.len() >= m.contributors.min_contributors;
                if !sufficient {
                    flags.push("few_contributors".into());
                }
                if t.removed > 0 {
                    flags.push(format!("outliers_removed={}", t.removed));
                }
                Fixing {
                    date: d,
                    grade: grade.to_string(),
                    value: Some(round_to(t.value * factor, dec)),
                    method: m.method_label().to_string(),
                    level: Some(kind.level()),
                    n_obs: t.used.len(),
                    n_trades,
                    n_firm,
                    n_listings,
                    n_contributors: contributors.len(),
                    volume_gpu_hours: round_to(t.used.iter().map(|&i| obs[i].quantity).sum(), 4),
                    p1: Some(round_to(t.p[0] * factor, dec)),
                    p25: Some(round_to(t.p[1] * factor, dec)),
                    p75: Some(round_to(t.p[2] * factor, dec)),
                    p99: Some(round_to(t.p[3] * factor, dec)),
                    max_contributor_share: Some(round_to(t.max_share, 6)),
                    sufficient,
                    flags: String::new(),
                    methodology_version: m.version.clone(),
                    input_sha256: input_hash(obs, &t.used),
                    publication: 1,
                }
            }
            None => {
                let carry = last_fix.as_ref().filter(|(ld, _)| {
                    (d - *ld).num_days() <= i64::from(m.fallback.carry_forward_days)
                });
                let (value, level) = match carry {
                    Some((_, f)) => {
                        flags.push("carried_forward".into());
                        (f.value, Some(LEVEL_CARRIED))
                    }
                    None => {
                        flags.push("no_data".into());
                        (None, None)
                    }
                };
                Fixing {
                    date: d,
                    grade: grade.to_string(),
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
                    p25: carry.and_then(|(_, f)| f.p25),
                    p75: carry.and_then(|(_, f)| f.p75),
                    p99: None,
                    max_contributor_share: None,
                    sufficient: false,
                    flags: String::new(),
                    methodology_version: m.version.clone(),
                    input_sha256: carry
                        .map(|(_, f)| f.input_sha256.clone())
                        .unwrap_or_default(),
                    publication: 1,
                }
            }
        };
        let mut row = row;
        if !row.sufficient {
            flags.insert(0, "low_confidence".into());
        }
        row.flags = flags.join(";");
        if row.level.is_some_and(|l| l < LEVEL_CARRIED) {
            last_fix = Some((d, row.clone()));
        }
        out.push(row);
    }
    out
}

/// Fixes every grade in parallel; rows sorted by date then grade.
pub fn fix_all(
    groups: &BTreeMap<String, Vec<EngineObs>>,
    dates: &[NaiveDate],
    m: &Methodology,
) -> Vec<Fixing> {
    let grades: Vec<(&String, &Vec<EngineObs>)> = groups.iter().collect();
    let mut rows: Vec<Fixing> = grades
        .par_iter()
        .flat_map_iter(|(g, obs)| fix_grade(g, obs, dates, m))
        .collect();
    rows.sort_by(|a, b| (a.date, &a.grade).cmp(&(b.date, &b.grade)));
    rows
}
