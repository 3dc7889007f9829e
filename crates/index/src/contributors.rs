//! Contributor weight cap: no single contributor may carry more than a set share of
//! a fixing's total weight.
//!
//! With contributor totals `t_j` and cap `c`, find the set `C` of capped
//! contributors such that each gets `x = c U / (1 - c |C|)`, where `U` is the total
//! of the uncapped ones, and no uncapped contributor exceeds `x`. Observations of a
//! capped contributor are scaled by `x / t_j`. When fewer than `1 / c` contributors
//! exist the cap cannot hold; every contributor then gets an equal share
//! ([`cap_weights`], the `equal-shares` rule), or, under the `proportional` rule
//! ([`cap_weights_proportional`]), the weights stay proportional to volume and the
//! caller is told the cap did not hold. An equal share is weight a contributor's own
//! volume never gave it: with a 25% cap and two real contributors, a third quoting
//! 0.001 GPU-hours would carry a third of the fixing. Under `proportional` the cap
//! also does not hold at exactly `1 / c` contributors, where equal shares are the
//! only weights that meet it. Where the cap holds, no contributor ends with more
//! weight than its own volume: capped contributors are scaled down, the others keep
//! theirs.

/// The contributors of `sources` in their order (as a sorted map keeps them),
/// each observation's position among them, and each contributor's total weight,
/// added in observation order. Vectors rather than a map: the cap runs for every
/// level of every fixing (twice with weighted screening), and a map lookup per
/// observation was a tenth of a full index's time.
struct Totals {
    /// Observation `i`'s contributor is the `at[i]`-th.
    at: Vec<usize>,
    /// Each contributor's total weight.
    totals: Vec<f64>,
}

impl Totals {
    fn of<S: Ord + Copy>(sources: &[S], weights: &[f64]) -> Self {
        let mut keys: Vec<S> = Vec::new();
        for s in sources {
            if let Err(at) = keys.binary_search(s) {
                keys.insert(at, *s);
            }
        }
        let at: Vec<usize> = sources
            .iter()
            .map(|s| keys.binary_search(s).unwrap_or_default())
            .collect();
        let mut totals = vec![0.0; keys.len()];
        for (&k, w) in at.iter().zip(weights) {
            totals[k] += w;
        }
        Self { at, totals }
    }
}

/// The sum of each key's values, in key order (as a sorted map holds them), each
/// key's values added in the order given from 0.0 (as a map's default entry does):
/// the bits a `BTreeMap` entry sum gives, in one small vector searched by halves.
/// A fixing has a few contributors and sums them several times per level.
pub(crate) fn sums_by<S: Ord + Copy>(pairs: impl IntoIterator<Item = (S, f64)>) -> Vec<(S, f64)> {
    let mut out: Vec<(S, f64)> = Vec::new();
    let mut last = 0;
    for (k, v) in pairs {
        // Rows of one contributor often come together.
        if out.get(last).is_none_or(|(s, _)| *s != k) {
            last = match out.binary_search_by(|(s, _)| s.cmp(&k)) {
                Ok(at) => at,
                Err(at) => {
                    out.insert(at, (k, 0.0));
                    at
                }
            };
        }
        out[last].1 += v;
    }
    out
}

/// Scales `weights` (observation weights, with `sources[i]` the contributor of
/// observation `i`) so no contributor exceeds `cap` of the total. Returns the new
/// weights and the largest contributor share after capping.
pub(crate) fn cap_weights<S: Ord + Copy>(
    sources: &[S],
    weights: &[f64],
    cap: f64,
) -> (Vec<f64>, f64) {
    capped(&Totals::of(sources, weights), weights, cap)
}

/// [`cap_weights`] on the contributors' totals.
fn capped(t: &Totals, weights: &[f64], cap: f64) -> (Vec<f64>, f64) {
    let totals = &t.totals;
    let total: f64 = totals.iter().sum();
    if totals.is_empty() || total <= 0.0 {
        return (weights.to_vec(), 0.0);
    }
    let n = totals.len() as f64;
    let mut target: Vec<f64> = totals.clone();
    if cap < 1.0 {
        if n * cap < 1.0 - 1e-12 {
            for v in &mut target {
                *v = total / n;
            }
        } else {
            let mut is_capped = vec![false; totals.len()];
            let mut count = 0usize;
            loop {
                let uncapped: f64 = totals
                    .iter()
                    .zip(&is_capped)
                    .filter(|(_, c)| !**c)
                    .map(|(v, _)| v)
                    .sum();
                let denom = 1.0 - cap * count as f64;
                let x = if denom > 0.0 {
                    cap * uncapped / denom
                } else {
                    f64::INFINITY
                };
                // Cap the largest over x first (of equal totals, the smaller key);
                // the others may fall under the new x.
                let biggest = (0..totals.len())
                    .filter(|&k| !is_capped[k] && totals[k] > x * (1.0 + 1e-12))
                    .max_by(|&a, &b| totals[a].total_cmp(&totals[b]).then(b.cmp(&a)));
                let Some(biggest) = biggest else {
                    for (v, _) in target.iter_mut().zip(&is_capped).filter(|(_, c)| **c) {
                        *v = x;
                    }
                    break;
                };
                is_capped[biggest] = true;
                count += 1;
            }
        }
    }
    let new: Vec<f64> =
        t.at.iter()
            .zip(weights)
            .map(|(&k, w)| {
                let t = totals[k];
                if t > 0.0 {
                    w * target[k] / t
                } else {
                    *w
                }
            })
            .collect();
    let new_total: f64 = target.iter().sum();
    let max_share = target.iter().fold(0.0f64, |m, v| m.max(v / new_total));
    (new, max_share)
}

/// The `proportional` rule: [`cap_weights`] when at least `1 / cap` contributors
/// exist (more than `1 / cap`, since exactly that many could only meet the cap with
/// equal shares); otherwise the weights unchanged. Returns the new weights, the
/// largest contributor share after capping, and whether the cap held.
pub(crate) fn cap_weights_proportional<S: Ord + Copy>(
    sources: &[S],
    weights: &[f64],
    cap: f64,
) -> (Vec<f64>, f64, bool) {
    let t = Totals::of(sources, weights);
    let total: f64 = t.totals.iter().sum();
    let largest = t.totals.iter().fold(0.0f64, |m, v| m.max(*v));
    if cap < 1.0 && t.totals.len() as f64 * cap <= 1.0 + 1e-12 {
        let share = if total > 0.0 { largest / total } else { 0.0 };
        // One contributor holds everything: the cap is not met, but no share moved.
        return (weights.to_vec(), share, false);
    }
    let (w, share) = capped(&t, weights, cap);
    (w, share, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// The cap as it was written first, with maps keyed by contributor: the
    /// definition the vector version must match bit for bit.
    fn cap_by_maps(sources: &[u32], weights: &[f64], cap: f64) -> (Vec<f64>, f64) {
        let mut totals: BTreeMap<u32, f64> = BTreeMap::new();
        for (s, w) in sources.iter().zip(weights) {
            *totals.entry(*s).or_default() += w;
        }
        let total: f64 = totals.values().sum();
        if totals.is_empty() || total <= 0.0 {
            return (weights.to_vec(), 0.0);
        }
        let n = totals.len() as f64;
        let mut target = totals.clone();
        if cap < 1.0 {
            if n * cap < 1.0 - 1e-12 {
                target.values_mut().for_each(|v| *v = total / n);
            } else {
                let mut capped: Vec<u32> = Vec::new();
                loop {
                    let uncapped: f64 = totals
                        .iter()
                        .filter(|(k, _)| !capped.contains(k))
                        .map(|(_, v)| v)
                        .sum();
                    let denom = 1.0 - cap * capped.len() as f64;
                    let x = if denom > 0.0 {
                        cap * uncapped / denom
                    } else {
                        f64::INFINITY
                    };
                    let over: Vec<u32> = totals
                        .iter()
                        .filter(|(k, v)| !capped.contains(k) && **v > x * (1.0 + 1e-12))
                        .map(|(k, _)| *k)
                        .collect();
                    if over.is_empty() {
                        capped.iter().for_each(|k| {
                            target.insert(*k, x);
                        });
                        break;
                    }
                    let biggest = over
                        .iter()
                        .copied()
                        .max_by(|a, b| totals[a].total_cmp(&totals[b]).then(b.cmp(a)))
                        .unwrap_or(over[0]);
                    capped.push(biggest);
                }
            }
        }
        let new = sources
            .iter()
            .zip(weights)
            .map(|(s, w)| {
                if totals[s] > 0.0 {
                    w * target[s] / totals[s]
                } else {
                    *w
                }
            })
            .collect();
        let new_total: f64 = target.values().sum();
        (
            new,
            target.values().fold(0.0f64, |m, v| m.max(v / new_total)),
        )
    }

    proptest! {
        /// Sums by key in a vector: the map's keys, order and bits.
        #[test]
        fn sums_by_key_are_the_maps(
            rows in prop::collection::vec((0u32..12, prop_oneof![Just(-0.0), Just(0.1), -1e3f64..1e3]), 0..80),
        ) {
            let mut map: BTreeMap<u32, f64> = BTreeMap::new();
            for (k, v) in &rows {
                *map.entry(*k).or_default() += v;
            }
            let want: Vec<(u32, u64)> = map.into_iter().map(|(k, v)| (k, v.to_bits())).collect();
            let got: Vec<(u32, u64)> = sums_by(rows).into_iter().map(|(k, v)| (k, v.to_bits())).collect();
            prop_assert_eq!(got, want);
        }

        /// Contributors drawn from a few (so that they repeat, in any order), weights
        /// with ties and zeros, caps on both sides of 1 / n: the same bits as the maps.
        #[test]
        fn vectors_give_the_bits_the_maps_gave(
            rows in prop::collection::vec((0u32..12, prop_oneof![Just(0.0), Just(1.0), 0.001f64..1000.0]), 0..60),
            cap in prop_oneof![Just(1.0), Just(0.25), Just(0.5), 0.01f64..1.0],
        ) {
            let (sources, weights): (Vec<u32>, Vec<f64>) = rows.into_iter().unzip();
            let (want, want_share) = cap_by_maps(&sources, &weights, cap);
            let (got, share) = cap_weights(&sources, &weights, cap);
            prop_assert_eq!(
                got.iter().map(|w| w.to_bits()).collect::<Vec<_>>(),
                want.iter().map(|w| w.to_bits()).collect::<Vec<_>>()
            );
            prop_assert_eq!(share.to_bits(), want_share.to_bits());
        }
    }

    #[test]
    fn proportional_rule_never_hands_out_equal_shares() {
        // Two real contributors (600 and 400 GPU-hours) and a 0.001 GPU-hour print
        // from a third, cap 25%: 3 x 0.25 < 1, so equal-shares gives each a third
        // (the print 1/3 of the fixing); proportional leaves 600 : 400 : 0.001
        // (the print 1e-6 of it) and says the cap did not hold.
        let src = ["a", "b", "c"];
        let w = [600.0, 400.0, 0.001];
        let (eq, share) = cap_weights(&src, &w, 0.25);
        assert!((eq[2] / eq.iter().sum::<f64>() - 1.0 / 3.0).abs() < 1e-12);
        assert!((share - 1.0 / 3.0).abs() < 1e-12);
        let (p, share, held) = cap_weights_proportional(&src, &w, 0.25);
        assert_eq!(p, w.to_vec());
        assert!(!held);
        assert!((share - 600.0 / 1000.001).abs() < 1e-12);
        // Four contributors at 25%: exactly 1 / c, met only by equal shares (three
        // of 100 and a print of 0.001 would each get 25%): not held either.
        let (p, _, held) =
            cap_weights_proportional(&["a", "b", "c", "d"], &[100.0, 100.0, 100.0, 0.001], 0.25);
        assert!(!held && p[3] == 0.001);
        // Five at 25% (70, 10, 10, 5, 5): held; a is capped at
        // x = 0.25 x 30 / 0.75 = 10, its own volume never exceeded.
        let (p, share, held) = cap_weights_proportional(
            &["a", "b", "c", "d", "e"],
            &[70.0, 10.0, 10.0, 5.0, 5.0],
            0.25,
        );
        assert!(held && (p[0] - 10.0).abs() < 1e-9 && p[1] == 10.0 && p[4] == 5.0);
        assert!((share - 0.25).abs() < 1e-12);
        // No cap (1.0): always held, weights unchanged.
        let (p, _, held) = cap_weights_proportional(&["a"], &[3.0], 1.0);
        assert!(held && p == vec![3.0]);
    }

    #[test]
    fn cap_by_hand() {
        // a: 70, b: 20, c: 10; cap 50% -> a gets x = 0.5 * 30 / 0.5 = 30.
        let (w, share) = cap_weights(&["a", "b", "c"], &[70.0, 20.0, 10.0], 0.5);
        assert!((w[0] - 30.0).abs() < 1e-12 && w[1] == 20.0 && w[2] == 10.0);
        assert!((share - 0.5).abs() < 1e-12);
        // cap 40%: a capped first -> x = .4*30/.6 = 20; b (20) is not over 20.
        let (w, share) = cap_weights(&["a", "b", "c"], &[70.0, 20.0, 10.0], 0.4);
        assert!(
            (w[0] - 20.0).abs() < 1e-9 && (share - 0.4).abs() < 1e-12,
            "{w:?} {share}"
        );
        // Two contributors cannot respect a 25% cap: equal shares.
        let (w, share) = cap_weights(&["a", "a", "b"], &[3.0, 3.0, 2.0], 0.25);
        assert!((w[0] + w[1] - 4.0).abs() < 1e-12 && (w[2] - 4.0).abs() < 1e-12);
        assert!((share - 0.5).abs() < 1e-12);
        // No cap.
        let (w, share) = cap_weights(&["a", "b"], &[3.0, 1.0], 1.0);
        assert_eq!(w, vec![3.0, 1.0]);
        assert!((share - 0.75).abs() < 1e-12);
    }
}
