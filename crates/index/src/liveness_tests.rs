//! The liveness weights as the engine publishes them, recomputed from the
//! published receipts alone by the model's rules written out directly (no running
//! sums): what a reader of the receipts would do to check them.

use crate::intraday::{fix_intraday, IntradayInput, IntradayMethodology, IntradayObs, Receipt};
use crate::liveness::{allocate, in_sample_q};
use chrono::NaiveDate;
use std::collections::BTreeMap;
use std::path::Path;

const METHOD: &str = r#"
version = "liveness-test"
[calendar]
cadence = "1h"
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
[intraday.weights]
floor = 0.025
cap = 0.30
[intraday.weights.liveness]
lookbacks = ["6h", "24h"]
horizons = ["6h", "24h"]
history = "4d"
half_life = "2d"
attendance_half_life = "6h"
"#;

const NAMES: [&str; 7] = ["lead", "f1", "f2", "f3", "noise", "half", "late"];

/// Twelve days of hourly prints: `lead` walks at random, three followers take its
/// price six hours later, `noise` walks on its own, `half` prints every other
/// hour, `late` only from day 6; nobody prints in hour 100 (a missed stamp).
fn market() -> (IntradayInput, NaiveDate, NaiveDate) {
    let mut rng = 11u64;
    let mut step = || {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((rng >> 11) as f64 / (1u64 << 53) as f64) - 0.5
    };
    let hours: usize = 12 * 24;
    let (mut lead, mut noise) = (vec![2.0f64], vec![2.2f64]);
    for _ in 1..hours {
        let l = *lead.last().unwrap_or(&2.0);
        lead.push((l * (1.0 + 0.04 * step())).max(0.5));
        let n = *noise.last().unwrap_or(&2.2);
        noise.push((n * (1.0 + 0.04 * step())).max(0.5));
    }
    let day = NaiveDate::from_ymd_opt(2025, 6, 1).unwrap_or_default();
    let start = day
        .and_hms_opt(0, 0, 0)
        .map_or(0, |t| t.and_utc().timestamp());
    let mut obs = Vec::new();
    for h in 0..hours {
        if h == 100 {
            continue;
        }
        let at = start + h as i64 * 3600 + 600;
        let follow = lead[h.saturating_sub(6)];
        let mut put = |c: u32, price: f64| {
            obs.push(IntradayObs {
                at,
                price,
                contributor: c,
                volume: 1,
            })
        };
        put(0, lead[h]);
        put(1, follow * 1.01);
        put(2, follow * 0.99);
        put(3, follow * 1.02);
        put(4, noise[h]);
        if h % 2 == 0 {
            put(5, 2.1 + 0.01 * (h % 5) as f64);
        }
        if h >= 6 * 24 {
            put(6, lead[h] * 1.05);
        }
    }
    let input = IntradayInput {
        grades: BTreeMap::from([("g".to_string(), obs)]),
        contributors: NAMES.iter().map(|s| s.to_string()).collect(),
        last_before: BTreeMap::new(),
    };
    (input, day, day + chrono::Days::new(11))
}

/// Per stamp (index from 0): each voter's print (`None`: carried) and weight.
type Stamps = Vec<BTreeMap<String, (Option<f64>, f64)>>;

/// `who`'s print at stamp `k`.
fn print(s: &Stamps, who: &str, k: usize) -> Option<f64> {
    s[k].get(who)?.0
}

/// Whether anybody printed at stamp `k`.
fn printed(s: &Stamps, k: usize) -> bool {
    s[k].values().any(|x| x.0.is_some())
}

fn by_stamp(receipts: &[Receipt], stamps: usize) -> Stamps {
    let mut out = vec![BTreeMap::new(); stamps];
    let first = receipts
        .iter()
        .map(|r| r.fixed_at)
        .min()
        .unwrap_or_default();
    for r in receipts {
        let k = ((r.fixed_at - first).num_minutes() / 60) as usize;
        out[k].insert(r.contributor.clone(), (r.print, r.weight));
    }
    out
}

/// The leave-one-out log return of the panel from stamp `a` to `b` under `v`.
fn loo(
    s: &Stamps,
    v: &BTreeMap<String, (Option<f64>, f64)>,
    who: &str,
    a: usize,
    b: usize,
) -> Option<f64> {
    let (mut num, mut den) = (0.0, 0.0);
    let mut any = false;
    for (c, (_, w)) in v {
        if c == who || *w <= 0.0 {
            continue;
        }
        if let (Some(p0), Some(p1)) = (print(s, c, a), print(s, c, b)) {
            num += w * p1;
            den += w * p0;
            any = true;
        }
    }
    (any && num > 0.0 && den > 0.0).then(|| (num / den).ln().clamp(-0.5, 0.5))
}

/// The model's `Q` of `who` at stamp `k`, from the receipts, directly.
fn q_at(s: &Stamps, who: &str, k: usize) -> Option<f64> {
    let t = k - 1;
    let mut qs = Vec::new();
    for h in [6usize, 24] {
        let mut samples = Vec::new();
        for tau in t.saturating_sub(96)..=t.saturating_sub(h) {
            if tau + h > t || print(s, who, tau).is_none() {
                continue;
            }
            // The weights in force at tau: the latest stamp at or before it with any.
            let Some(v) = (0..=tau).rev().map(|j| &s[j]).find(|m| !m.is_empty()) else {
                continue;
            };
            let Some(y) = loo(s, v, who, tau, tau + h) else {
                continue;
            };
            let x: Option<Vec<f64>> = [6usize, 24]
                .iter()
                .map(|l| {
                    let a = tau.checked_sub(*l)?;
                    let own = (print(s, who, tau)? / print(s, who, a)?)
                        .ln()
                        .clamp(-0.5, 0.5);
                    Some(own - loo(s, v, who, a, tau)?)
                })
                .collect();
            let Some(x) = x else { continue };
            samples.push((tau as f64, x, y));
        }
        qs.push(in_sample_q(&samples, t as f64, 48.0, 1.0, 10, 1e-12)?);
    }
    Some(qs.iter().sum::<f64>() / qs.len() as f64)
}

/// The attendance of `who` at stamp `k`: printed stamps of the 96 before it,
/// each at `2^-(age / 6)`, over the stamps somebody printed at.
fn attendance_at(s: &Stamps, who: &str, k: usize) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    for j in k.saturating_sub(96)..k {
        if !printed(s, j) {
            continue;
        }
        let w = (-((k - j) as f64) / 6.0).exp2();
        den += w;
        if print(s, who, j).is_some() {
            num += w;
        }
    }
    if den > 0.0 {
        num / den
    } else {
        1.0
    }
}

#[test]
fn liveness_weights_are_what_the_receipts_say_they_should_be() {
    let m = IntradayMethodology::from_toml(METHOD, Path::new("t.toml")).unwrap();
    let (input, from, to) = market();
    let r = fix_intraday(&m, &input, from, to).unwrap();
    let stamps = 12 * 24;
    let s = by_stamp(&r.receipts, stamps);
    let switched: Vec<usize> = r
        .fixings
        .iter()
        .enumerate()
        .filter(|(_, f)| f.flags.contains("weights_switched"))
        .map(|(k, _)| k)
        .collect();
    assert_eq!(switched.len(), 1, "the model switches on once");
    let on = switched[0];
    // Before the switch: equal weights.
    for (k, m) in s.iter().enumerate().take(on) {
        let n = m.len() as f64;
        assert!(
            m.values().all(|(_, w)| (w - 1.0 / n).abs() < 1e-12),
            "stamp {k}"
        );
    }
    // From the switch: every stamp's weights are the allocation of the scores and
    // attendances recomputed from the receipts.
    let mut checked = 0;
    let mut lead_over_noise = 0;
    for k in on..stamps {
        if s[k].is_empty() {
            continue;
        }
        let who: Vec<&String> = s[k].keys().collect();
        let q: Vec<f64> = who.iter().map(|c| q_at(&s, c, k).unwrap_or(0.0)).collect();
        let a: Vec<f64> = who.iter().map(|c| attendance_at(&s, c, k)).collect();
        let (w, _) = allocate(&q, Some(&a), 0.5, 4.0, 0.025, 0.30);
        for (c, w) in who.iter().zip(&w) {
            let published = s[k][*c].1;
            assert!(
                (published - w).abs() <= 1.000001e-6,
                "stamp {k} {c}: published {published}, recomputed {w}"
            );
        }
        checked += 1;
        if s[k]["lead"].1 > s[k]["noise"].1 {
            lead_over_noise += 1;
        }
    }
    // Scores need ten samples of the 24-hour horizon and its 24-hour look-back:
    // not before the third day (the switch came at stamp 67 when written).
    assert!((48..96).contains(&on), "switched at {on}");
    assert!(s[200]["lead"].1 > 0.25, "{:?}", s[200]);
    assert!(
        checked > 150,
        "{checked} stamps checked after the switch at {on}"
    );
    // The contributor whose moves the others follow outweighs the one that walks
    // alone at most stamps.
    assert!(
        lead_over_noise * 4 > checked * 3,
        "{lead_over_noise} of {checked}"
    );
    // A contributor's first print has no attendance behind it: weight 0.
    let late_first = (0..stamps)
        .find(|k| print(&s, "late", *k).is_some())
        .unwrap();
    assert_eq!(s[late_first]["late"].1, 0.0);
    // Every stamp's weights sum to one within the rounding.
    for (k, m) in s.iter().enumerate().filter(|(_, m)| !m.is_empty()) {
        let total: f64 = m.values().map(|x| x.1).sum();
        assert!((total - 1.0).abs() < 1e-5, "stamp {k}: {total}");
    }
}

#[test]
fn liveness_runs_are_the_same_whatever_the_row_order() {
    let m = IntradayMethodology::from_toml(METHOD, Path::new("t.toml")).unwrap();
    let (mut input, from, to) = market();
    let a = fix_intraday(&m, &input, from, to).unwrap();
    for v in input.grades.values_mut() {
        v.reverse();
    }
    let b = fix_intraday(&m, &input, from, to).unwrap();
    assert_eq!(a.fixings, b.fixings);
    assert_eq!(a.receipts, b.receipts);
}

#[test]
fn liveness_parameters_are_checked() {
    for (from, to, says) in [
        (
            "lookbacks = [\"6h\", \"24h\"]",
            "lookbacks = [\"90m\"]",
            "multiple of the cadence",
        ),
        ("horizons = [\"6h\", \"24h\"]", "horizons = []", "1 to 8"),
        // No sample could ever be in a history this short: the model never switches.
        (
            "history = \"4d\"",
            "history = \"2d\"",
            "longer than the longest",
        ),
        (
            "horizons = [\"6h\", \"24h\"]",
            "horizons = [\"6h\", \"6h\"]",
            "given twice",
        ),
    ] {
        let text = METHOD.replace(from, to);
        let err = IntradayMethodology::from_toml(&text, Path::new("t.toml"))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains(says), "{to}: {err}");
    }
    for (bad, says) in [
        ("attendance_floor = 0.0", "attendance_floor"),
        ("min_train = 1", "min_train"),
        ("ridge_lambda = -1.0", "ridge_lambda"),
        ("colour = 1", "unknown field"),
    ] {
        let text = format!("{METHOD}{bad}\n");
        let err = IntradayMethodology::from_toml(&text, Path::new("t.toml"))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains(says), "{bad}: {err}");
    }
}
