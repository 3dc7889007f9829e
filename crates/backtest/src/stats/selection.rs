//! Choosing among many hedges on few months, corrected for the choosing.
//!
//! `track` scores up to a few hundred candidate indices on 11 to 48 monthly points.
//! The best of many scores is an order statistic: with sixty indices of pure noise,
//! one of them clears a 95% interval above zero in almost every sample. Two steps
//! correct for that.
//!
//! ## 1. Which candidates beat no hedge: a Romano-Wolf stepdown
//!
//! Candidate `k`'s statistic is its out-of-sample effectiveness
//! `theta_k = 1 - Var(hedged_k) / Var(unhedged_k)` over its months. The months of all
//! candidates are resampled together (one stationary block bootstrap draw of the
//! month axis serves every candidate, so the resamples keep the candidates'
//! dependence on the same rent), giving `theta*_kb`. With `s_k` the bootstrap
//! standard deviation of `theta*_k`, the studentized statistic is
//! `t_k = theta_k / s_k`. The stepdown (Romano and Wolf, "Stepwise Multiple Testing
//! as Formalized Data Snooping", Econometrica 73, 2005, algorithm 4.1 with
//! studentization) takes the critical value `c` as the `1 - alpha` quantile over `b`
//! of `max_k (theta*_kb - theta_k) / s_k` among the candidates not yet rejected,
//! rejects `theta_k <= 0` for every `t_k > c`, and repeats on the rest until no more
//! are rejected. The chance that any candidate whose true effectiveness is at most
//! zero is declared a hedge is at most `alpha` (asymptotically), however many
//! candidates there are.
//!
//! ## 2. Which of those cannot be told apart from the best: a model confidence set
//!
//! Among the candidates that beat no hedge, the model confidence set of Hansen, Lunde
//! and Nason ("The Model Confidence Set", Econometrica 79, 2011) with their `T_max`
//! statistic: with `d_i = mean_j(theta_j) - theta_i` (how far `i` is below the set's
//! mean), `t_i = d_i / sd*(d_i)`, the set's `T_max = max_i t_i` is compared with the
//! bootstrap distribution of `max_i (d*_i - d_i) / sd*(d_i)`; when its p-value is
//! below `alpha_set` the worst (`argmax t_i`) is removed and the test repeats. What
//! remains contains the best candidate with probability at least `1 - alpha_set`.
//! Within it no ranking by score is meaningful; `track` orders it by what a hedger
//! prefers among equals.
//!
//! Resamples in which a candidate has fewer than three months, or a constant
//! unhedged P&L, give it no value; a candidate with values in fewer than half the
//! resamples is not tested.

use super::bootstrap::{mean_block_length, resample_indices};
use super::effectiveness::effectiveness;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// One candidate's monthly P&L on the common month axis: `(hedged, unhedged)` for
/// the months it was backtested on, `None` for the others.
pub type MonthlyPnl = Vec<Option<(f64, f64)>>;

/// What the selection found, one entry per candidate in the order given.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// Out-of-sample effectiveness over the candidate's months (`None`: under three
    /// months or a constant unhedged P&L).
    pub effectiveness: Vec<Option<f64>>,
    /// The studentized statistic `t_k` of `ln(Var(unhedged)/Var(hedged))` (`None`:
    /// not tested).
    pub t: Vec<Option<f64>>,
    /// Whether the stepdown declared the candidate better than no hedge.
    pub beats_no_hedge: Vec<bool>,
    /// Whether it is in the model confidence set of the best (only candidates that
    /// beat no hedge are).
    pub best_set: Vec<bool>,
    /// The first step's critical value (the one every candidate faced), if any
    /// candidate was tested.
    pub critical_value: Option<f64>,
}

/// The statistic the tests run on: `ln(Var(unhedged) / Var(hedged))` of `pnl` over
/// the months `ix` draws (with repeats), which is above zero exactly when the
/// effectiveness `1 - Var(hedged)/Var(unhedged)` is. A ratio of variances on a dozen
/// points is skewed (effectiveness is bounded above by 1 and not below); its
/// logarithm is close to symmetric, which the studentized bootstrap needs. A hedged
/// variance below a millionth of the unhedged one counts as that millionth. `None`
/// below three months or for a constant unhedged P&L.
fn theta(pnl: &MonthlyPnl, ix: &[usize]) -> Option<f64> {
    let (h, u): (Vec<f64>, Vec<f64>) = ix.iter().filter_map(|&i| pnl[i]).unzip();
    if h.len() < 3 {
        return None;
    }
    let e = effectiveness(&h, &u).filter(|v| v.is_finite())?;
    Some(-(1.0 - e).max(1e-6).ln())
}

/// Smallest bootstrap standard deviation a statistic is divided by: a hedge that
/// offsets every month exactly has none.
const MIN_SD: f64 = 1e-9;

/// Sample standard deviation of the finite values, `None` below two.
fn sd(v: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = v.collect();
    if v.len() < 2 {
        return None;
    }
    let m = v.iter().sum::<f64>() / v.len() as f64;
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64;
    Some(var.sqrt())
}

/// The `q` quantile (0 to 1) of `v` by the same rule as the bootstrap intervals.
fn quantile(mut v: Vec<f64>, q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let k = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    Some(v[k - 1])
}

/// The resampled statistics: `draws[b][k]`.
fn draws(pnls: &[MonthlyPnl], resamples: usize, seed: u64) -> Vec<Vec<Option<f64>>> {
    let months = pnls.first().map_or(0, Vec::len);
    // The block length from the months' mean unhedged P&L (the rent's own
    // dependence, which every candidate shares).
    let basis: Vec<f64> = (0..months)
        .map(|i| {
            let v: Vec<f64> = pnls.iter().filter_map(|p| p[i].map(|x| x.1)).collect();
            v.iter().sum::<f64>() / v.len().max(1) as f64
        })
        .collect();
    let b = if months >= 4 {
        mean_block_length(&basis)
    } else {
        1.0
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..resamples)
        .map(|_| {
            let ix = resample_indices(months, b, &mut rng);
            pnls.iter().map(|p| theta(p, &ix)).collect()
        })
        .collect()
}

/// The stepdown and the confidence set (module doc) at `alpha` (0.05) and
/// `alpha_set` (0.10), on `resamples` draws from `seed`. Every series must have the
/// same length (the common month axis).
pub fn select(
    pnls: &[MonthlyPnl],
    resamples: usize,
    alpha: f64,
    alpha_set: f64,
    seed: u64,
) -> Selection {
    select_with(pnls, resamples, alpha, alpha_set, seed, &[])
}

/// [`select`], with the candidates whose `beats_no_hedge` was decided before the
/// search (`decided[k]`, `None` for the searched ones): a hypothesis named in
/// advance (the rent's own index) is not one chosen among many, and is judged by
/// the rule that named it. It still counts in the stepdown's maximum (the others'
/// bar is not lowered by it), and enters the confidence set as decided.
pub fn select_with(
    pnls: &[MonthlyPnl],
    resamples: usize,
    alpha: f64,
    alpha_set: f64,
    seed: u64,
    decided: &[Option<bool>],
) -> Selection {
    let n = pnls.len();
    let all: Vec<usize> = (0..pnls.first().map_or(0, Vec::len)).collect();
    let point: Vec<Option<f64>> = pnls.iter().map(|p| theta(p, &all)).collect();
    let mut out = Selection {
        effectiveness: point.iter().map(|l| l.map(|l| 1.0 - (-l).exp())).collect(),
        t: vec![None; n],
        beats_no_hedge: vec![false; n],
        best_set: vec![false; n],
        critical_value: None,
    };
    if resamples == 0 || n == 0 {
        return out;
    }
    let d = draws(pnls, resamples, seed);
    // The bootstrap standard deviation of each candidate's statistic.
    let s: Vec<Option<f64>> = (0..n)
        .map(|k| {
            let defined = d.iter().filter(|r| r[k].is_some()).count();
            if point[k].is_none() || defined * 2 < resamples {
                return None;
            }
            sd(d.iter().filter_map(|r| r[k])).map(|v| v.max(MIN_SD))
        })
        .collect();
    for k in 0..n {
        out.t[k] = point[k].zip(s[k]).map(|(p, sk)| p / sk);
    }
    stepdown(&mut out, &d, &point, &s, alpha);
    for (k, b) in decided.iter().enumerate().take(n) {
        if let Some(b) = b {
            out.beats_no_hedge[k] = *b;
        }
    }
    confidence_set(&mut out, &d, &point, alpha_set);
    out
}

/// Step 1 of the module doc: marks `beats_no_hedge`.
fn stepdown(
    out: &mut Selection,
    d: &[Vec<Option<f64>>],
    point: &[Option<f64>],
    s: &[Option<f64>],
    alpha: f64,
) {
    let mut active: Vec<usize> = (0..point.len()).filter(|&k| out.t[k].is_some()).collect();
    loop {
        // A draw where a candidate has no value counts as no excess for it.
        let maxima: Vec<f64> = d
            .iter()
            .map(|r| {
                active
                    .iter()
                    .filter_map(|&k| Some((r[k]? - point[k]?) / s[k]?))
                    .fold(f64::NEG_INFINITY, f64::max)
            })
            .filter(|v| v.is_finite())
            .collect();
        let Some(c) = quantile(maxima, 1.0 - alpha) else {
            return;
        };
        out.critical_value.get_or_insert(c);
        let rejected: Vec<usize> = active
            .iter()
            .copied()
            .filter(|&k| out.t[k].is_some_and(|t| t > c.max(0.0)))
            .collect();
        if rejected.is_empty() {
            return;
        }
        for &k in &rejected {
            out.beats_no_hedge[k] = true;
        }
        active.retain(|k| !rejected.contains(k));
        if active.is_empty() {
            return;
        }
    }
}

/// Step 2 of the module doc: marks `best_set` among the candidates that beat no
/// hedge.
fn confidence_set(out: &mut Selection, d: &[Vec<Option<f64>>], point: &[Option<f64>], alpha: f64) {
    let mut set: Vec<usize> = (0..point.len())
        .filter(|&k| out.beats_no_hedge[k])
        .collect();
    while set.len() > 1 {
        // Draws where every member has a value.
        let rows: Vec<Vec<f64>> = d
            .iter()
            .filter_map(|r| set.iter().map(|&k| r[k]).collect::<Option<Vec<f64>>>())
            .collect();
        let pts: Vec<f64> = set.iter().filter_map(|&k| point[k]).collect();
        if rows.len() < 2 || pts.len() != set.len() {
            break;
        }
        let m = set.len() as f64;
        let mean_pt = pts.iter().sum::<f64>() / m;
        let dev = |v: &[f64], i: usize| v.iter().sum::<f64>() / m - v[i];
        let sds: Vec<Option<f64>> = (0..set.len())
            .map(|i| sd(rows.iter().map(|r| dev(r, i))).filter(|v| *v > 0.0))
            .collect();
        if sds.iter().all(Option::is_none) {
            // Every member's deviation from the set's mean is the same in every
            // draw: identical candidates, which nothing can tell apart.
            break;
        }
        let t: Vec<f64> = (0..set.len())
            .map(|i| sds[i].map_or(0.0, |s| (mean_pt - pts[i]) / s))
            .collect();
        let (worst, t_max) =
            t.iter()
                .copied()
                .enumerate()
                .fold(
                    (0, f64::NEG_INFINITY),
                    |b, (i, v)| if v > b.1 { (i, v) } else { b },
                );
        let exceed = rows
            .iter()
            .filter(|r| {
                let centred = (0..set.len())
                    .filter_map(|i| Some((dev(r, i) - (mean_pt - pts[i])) / sds[i]?))
                    .fold(f64::NEG_INFINITY, f64::max);
                centred >= t_max
            })
            .count();
        let p = exceed as f64 / rows.len() as f64;
        if p >= alpha {
            break;
        }
        set.remove(worst);
    }
    for k in set {
        out.best_set[k] = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;
    use rand_distr::{Distribution, StandardNormal};

    /// `months` of an unhedged rent P&L and the P&L of a hedge whose futures move
    /// `track` times with the rent plus independent noise of sd `noise`.
    fn series(rng: &mut ChaCha8Rng, rent: &[f64], track: f64, noise: f64) -> MonthlyPnl {
        rent.iter()
            .map(|u| {
                let e: f64 = StandardNormal.sample(rng);
                let f = track * u + noise * e;
                Some((u - f, *u))
            })
            .collect()
    }

    #[test]
    fn pure_noise_is_declared_a_hedge_in_few_samples_and_a_tracker_almost_always() {
        // 60 candidates whose futures are independent of an 18-month rent: a hedge
        // at ratio 1 adds their variance, but a lucky one can look good on 18
        // points. Uncorrected, one of 60 clears its own 95% bound in most samples;
        // the stepdown allows at most 5% of samples (FWER), here checked over 40.
        let mut false_hits = 0;
        let mut tracker_first = 0;
        for seed in 0..40u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let rent: Vec<f64> = (0..18).map(|_| StandardNormal.sample(&mut rng)).collect();
            let noise: Vec<MonthlyPnl> = (0..60)
                .map(|_| {
                    let scale = rng.gen_range(0.2..1.5);
                    series(&mut rng, &rent, 0.0, scale)
                })
                .collect();
            let sel = select(&noise, 400, 0.05, 0.10, seed);
            false_hits += usize::from(sel.beats_no_hedge.iter().any(|b| *b));
            // The same noise plus one tracker (futures = rent + 25% noise: it
            // removes about 94% of the rent's variance).
            let mut with = noise.clone();
            with.push(series(&mut rng, &rent, 1.0, 0.25));
            let sel = select(&with, 400, 0.05, 0.10, seed);
            let hits: Vec<usize> = (0..with.len()).filter(|&k| sel.beats_no_hedge[k]).collect();
            tracker_first += usize::from(hits == [60] && sel.best_set[60]);
        }
        assert!(
            false_hits <= 2,
            "noise declared a hedge in {false_hits} of 40"
        );
        assert!(
            tracker_first >= 38,
            "the tracker alone in {tracker_first} of 40"
        );
    }

    #[test]
    fn equal_hedges_share_the_best_set_and_a_worse_one_leaves_it() {
        // Two candidates with the same futures (identical P&L) cannot be told apart;
        // a third whose hedge leaves five times the residual is removed.
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let rent: Vec<f64> = (0..36).map(|_| StandardNormal.sample(&mut rng)).collect();
        let a = series(&mut rng, &rent, 1.0, 0.05);
        let c = series(&mut rng, &rent, 1.0, 0.25);
        let sel = select(&[a.clone(), a, c], 500, 0.05, 0.10, 1);
        assert_eq!(sel.beats_no_hedge, vec![true, true, true]);
        assert_eq!(sel.best_set, vec![true, true, false]);
    }

    #[test]
    fn no_resamples_test_nothing() {
        let rent: MonthlyPnl = (0..12).map(|i| Some((0.1 * i as f64, i as f64))).collect();
        let sel = select(&[rent], 0, 0.05, 0.1, 1);
        assert_eq!(sel.beats_no_hedge, vec![false]);
        assert!(sel.effectiveness[0].is_some_and(|e| e > 0.9));
        assert_eq!(sel.t, vec![None]);
    }
}
