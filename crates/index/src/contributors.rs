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

use std::collections::BTreeMap;

/// Scales `weights` (observation weights, with `sources[i]` the contributor of
/// observation `i`) so no contributor exceeds `cap` of the total. Returns the new
/// weights and the largest contributor share after capping.
pub(crate) fn cap_weights<S: Ord + Copy>(
    sources: &[S],
    weights: &[f64],
    cap: f64,
) -> (Vec<f64>, f64) {
    let mut totals: BTreeMap<S, f64> = BTreeMap::new();
    for (s, w) in sources.iter().zip(weights) {
        *totals.entry(*s).or_default() += w;
    }
    let total: f64 = totals.values().sum();
    if totals.is_empty() || total <= 0.0 {
        return (weights.to_vec(), 0.0);
    }
    let n = totals.len() as f64;
    let mut target: BTreeMap<S, f64> = totals.clone();
    if cap < 1.0 {
        if n * cap < 1.0 - 1e-12 {
            for v in target.values_mut() {
                *v = total / n;
            }
        } else {
            let mut capped: Vec<S> = Vec::new();
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
                let over: Vec<S> = totals
                    .iter()
                    .filter(|(k, v)| !capped.contains(k) && **v > x * (1.0 + 1e-12))
                    .map(|(k, _)| *k)
                    .collect();
                if over.is_empty() {
                    for k in &capped {
                        target.insert(*k, x);
                    }
                    break;
                }
                // Cap the largest first; the others may fall under the new x.
                let biggest = over
                    .iter()
                    .copied()
                    .max_by(|a, b| totals[a].total_cmp(&totals[b]).then(b.cmp(a)))
                    .unwrap_or(over[0]);
                capped.push(biggest);
            }
        }
    }
    let new: Vec<f64> = sources
        .iter()
        .zip(weights)
        .map(|(s, w)| {
            let t = totals[s];
            if t > 0.0 {
                w * target[s] / t
            } else {
                *w
            }
        })
        .collect();
    let new_total: f64 = target.values().sum();
    let max_share = target.values().fold(0.0f64, |m, v| m.max(v / new_total));
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
    let mut totals: BTreeMap<S, f64> = BTreeMap::new();
    for (s, w) in sources.iter().zip(weights) {
        *totals.entry(*s).or_default() += w;
    }
    let total: f64 = totals.values().sum();
    let largest = totals.values().fold(0.0f64, |m, v| m.max(*v));
    if cap < 1.0 && totals.len() as f64 * cap <= 1.0 + 1e-12 {
        let share = if total > 0.0 { largest / total } else { 0.0 };
        // One contributor holds everything: the cap is not met, but no share moved.
        return (weights.to_vec(), share, false);
    }
    let (w, share) = cap_weights(sources, weights, cap);
    (w, share, true)
}

#[cfg(test)]
mod tests {
    use super::*;

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
