//! Liveness weights (`[intraday.weights.liveness]`): contributor weights
//! recomputed at every stamp from the prints themselves, by the Computable GPU
//! Index's published method (its `METHODOLOGY.md` section 8 and
//! `src/gpu_index/index/weights.py`; restated in our words in
//! docs/research/computable-gpu-index.md, section 5):
//!
//! 1. **Predictiveness** `Q`: for each contributor, samples anchored at the stamps
//!    `tau` where it printed, in the `history` before the previous stamp `T` (the
//!    stamp's own prints never move its weights): features `r_i(tau - L, tau) -
//!    r_-i(tau - L, tau)` for each look-back `L` (its own log return less the
//!    leave-one-out panel's, the panel held at the weights in force at `tau`), target
//!    `r_-i(tau, tau + h)` for each horizon `h` with `tau + h <= T`; every log
//!    return clamped at `max_abs_log_return`. A ridge regression per horizon
//!    (samples weighted `2^-((T - tau) / half_life)`, features z-scored by their
//!    weighted mean and population sd, intercept unpenalized, `ridge_lambda` on the
//!    rest) scores its in-sample R² floored at 0; `Q` is the mean over the horizons,
//!    defined only when every horizon has `min_train` samples and a target variance
//!    of at least `target_variance_floor`.
//! 2. **Attendance** `A`: the share of the stamps before this one at which the
//!    contributor printed, each weighted `2^-(age / attendance_half_life)`; a stamp
//!    at which nobody printed (a missed stamp) counts for nobody.
//! 3. **Allocation** over the stamp's voters: each voter's ceiling is `cap x A`,
//!    its floor `min(floor, ceiling)`; the rest of the weight is shared by the
//!    softmax of `gamma Q + attendance_eta ln A`; a voter over its ceiling is held
//!    at it and the excess shared among the others by their softmax shares, until
//!    none is over. Ceilings that cannot hold the whole weight give each voter its
//!    ceiling's share; `floor x voters > 1` gives equal weights. Weights are rounded
//!    to 6 decimals once.
//! 4. **Mode**: until the switch the weights are the opening ones (a weights file,
//!    or equal); the model switches on, for good, at the first stamp where at least
//!    `switch_min_eligible` contributors print and every contributor that printed
//!    at `attendance_floor` or more of the history's stamps has a `Q`.
//!
//! Sums over a sliding history are kept as running weighted moments, decayed a
//! stamp at a time and recomputed from the samples once a day (so rounding cannot
//! build up); a feature whose spread is below a billionth of its magnitude is
//! neutralized as the peer neutralizes a constant one.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

/// `[intraday.weights.liveness]`: the model's parameters; every default is the
/// Computable index's live value (`config/index_panel_h100_sxm.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Liveness {
    /// Look-backs of the features (durations, multiples of the cadence).
    #[serde(default = "hours_6_24_48")]
    pub lookbacks: Vec<String>,
    /// Horizons of the targets, one regression each.
    #[serde(default = "hours_6_24_48")]
    pub horizons: Vec<String>,
    /// How far back samples and attendance reach.
    #[serde(default = "days_90")]
    pub history: String,
    /// Half-life of a sample's weight in the regressions.
    #[serde(default = "days_30")]
    pub half_life: String,
    /// Ridge penalty on the z-scored features (weights normalized to 1).
    #[serde(default = "one")]
    pub ridge_lambda: f64,
    /// Softmax temperature on `Q`.
    #[serde(default = "four")]
    pub gamma: f64,
    /// Samples a regression needs.
    #[serde(default = "ten")]
    pub min_train: usize,
    /// Least weighted variance of a regression's target.
    #[serde(default = "variance_floor")]
    pub target_variance_floor: f64,
    /// Every log return is clamped to +- this.
    #[serde(default = "half")]
    pub max_abs_log_return: f64,
    /// Half-life of a stamp in the attendance.
    #[serde(default = "hours_6")]
    pub attendance_half_life: String,
    /// Weight of `ln A` in the softmax (0: attendance neither tilts nor caps).
    #[serde(default = "half")]
    pub attendance_eta: f64,
    /// Share of the history's stamps a contributor must have printed at to hold
    /// the switch until it has a `Q`.
    #[serde(default = "half")]
    pub attendance_floor: f64,
    /// Contributors printing at a stamp for the model to switch on.
    #[serde(default = "five")]
    pub switch_min_eligible: usize,
}

fn hours_6_24_48() -> Vec<String> {
    vec!["6h".into(), "24h".into(), "48h".into()]
}
fn days_90() -> String {
    "90d".into()
}
fn days_30() -> String {
    "30d".into()
}
fn hours_6() -> String {
    "6h".into()
}
fn one() -> f64 {
    1.0
}
fn four() -> f64 {
    4.0
}
fn half() -> f64 {
    0.5
}
fn ten() -> usize {
    10
}
fn five() -> usize {
    5
}
fn variance_floor() -> f64 {
    1e-12
}

impl Default for Liveness {
    fn default() -> Self {
        toml::from_str("").unwrap_or_else(|_| unreachable!("every field has a default"))
    }
}

/// The model's durations in stamps of the cadence.
#[derive(Debug, Clone)]
pub(crate) struct Params {
    lookbacks: Vec<i64>,
    horizons: Vec<i64>,
    history: i64,
    /// Regression half-life, stamps.
    half_life: f64,
    /// Per-stamp decay of attendance, and its half-life in stamps.
    attendance_decay: f64,
    attendance_half_life: f64,
    lambda: f64,
    gamma: f64,
    min_train: usize,
    variance_floor: f64,
    max_abs: f64,
    eta: f64,
    attendance_floor: f64,
    switch_min: usize,
    floor: f64,
    cap: f64,
}

impl Liveness {
    /// Checks the parameters and converts the durations to stamps of `cadence`
    /// minutes; `floor` and `cap` are `[intraday.weights]`'s.
    pub(crate) fn params(&self, cadence: i64, floor: f64, cap: f64) -> Result<Params, String> {
        let stamps = |what: &str, text: &str| -> Result<i64, String> {
            let m = rentix_core::parse_minutes(text).map_err(|e| format!("{what}: {e}"))?;
            if m <= 0 || m % cadence != 0 {
                return Err(format!(
                    "intraday.weights.liveness.{what} = {text:?}: a positive multiple of the cadence ({cadence} minutes)"
                ));
            }
            Ok(m / cadence)
        };
        let many = |what: &str, v: &[String]| -> Result<Vec<i64>, String> {
            if v.is_empty() || v.len() > 8 {
                return Err(format!(
                    "intraday.weights.liveness.{what}: 1 to 8 durations"
                ));
            }
            v.iter().map(|x| stamps(what, x)).collect()
        };
        let lookbacks = many("lookbacks", &self.lookbacks)?;
        let horizons = many("horizons", &self.horizons)?;
        let history = stamps("history", &self.history)?;
        // Settings under which no score is ever defined (the model would never
        // switch on) are refused, not run.
        let distinct =
            |v: &[i64]| v.iter().collect::<std::collections::BTreeSet<_>>().len() == v.len();
        if !distinct(&lookbacks) || !distinct(&horizons) {
            return Err(
                "intraday.weights.liveness: a look-back or horizon given twice (its features would be one: no fit)".into(),
            );
        }
        let longest = horizons.iter().max().copied().unwrap_or(0)
            + lookbacks.iter().max().copied().unwrap_or(0);
        if history <= longest {
            return Err(format!(
                "intraday.weights.liveness.history = {:?} must be longer than the longest horizon and look-back together ({} stamps): no sample could be in it",
                self.history, longest
            ));
        }
        let half_life = stamps("half_life", &self.half_life)? as f64;
        let attendance = stamps("attendance_half_life", &self.attendance_half_life)? as f64;
        let finite_pos = [self.gamma, self.max_abs_log_return];
        if finite_pos.iter().any(|x| !(x.is_finite() && *x >= 0.0))
            || self.max_abs_log_return == 0.0
        {
            return Err("intraday.weights.liveness: gamma >= 0 and max_abs_log_return > 0".into());
        }
        let non_negative = [
            self.ridge_lambda,
            self.target_variance_floor,
            self.attendance_eta,
        ];
        if non_negative.iter().any(|x| !(x.is_finite() && *x >= 0.0)) {
            return Err(
                "intraday.weights.liveness: ridge_lambda, target_variance_floor and attendance_eta >= 0"
                    .into(),
            );
        }
        if !(self.attendance_floor > 0.0 && self.attendance_floor <= 1.0) {
            return Err("intraday.weights.liveness.attendance_floor: above 0 to 1".into());
        }
        if self.min_train < 2 {
            return Err("intraday.weights.liveness.min_train: at least 2".into());
        }
        Ok(Params {
            lookbacks,
            horizons,
            history,
            half_life,
            attendance_decay: (-1.0 / attendance).exp2(),
            attendance_half_life: attendance,
            lambda: self.ridge_lambda,
            gamma: self.gamma,
            min_train: self.min_train,
            variance_floor: self.target_variance_floor,
            max_abs: self.max_abs_log_return,
            eta: self.attendance_eta,
            attendance_floor: self.attendance_floor,
            switch_min: self.switch_min_eligible,
            floor,
            cap,
        })
    }
}

// ------------------------------------------------------------------ allocation

/// How an allocation came out when its bounds left no room for the scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Degenerate {
    /// Equal weights: the floors alone exceed the whole, or no ceiling holds any.
    Uniform,
    /// Each seat its ceiling's share: the ceilings together hold less than the
    /// whole.
    CapProportional,
}

/// Weights for seats with scores `q` (an undefined score is 0): a floor for each,
/// the rest shared by the softmax of `gamma q + eta ln a` (`a` each seat's
/// attendance, `None` for no attendance: every `a = 1` and `eta` unused), each
/// held at its ceiling `cap x a`, the excess shared among the uncapped by their
/// shares (module doc, step 3). Full precision; the caller rounds.
pub fn allocate(
    q: &[f64],
    attendance: Option<&[f64]>,
    eta: f64,
    gamma: f64,
    floor: f64,
    cap: f64,
) -> (Vec<f64>, Option<Degenerate>) {
    const EPS: f64 = 1e-12;
    let n = q.len();
    if n == 0 {
        return (Vec::new(), None);
    }
    let uniform = vec![1.0 / n as f64; n];
    let a: Vec<f64> = attendance.map_or_else(|| vec![1.0; n], |a| a.to_vec());
    let armed = attendance.is_some() && eta > 0.0;
    let caps: Vec<f64> = if armed {
        a.iter().map(|x| cap * x).collect()
    } else {
        vec![cap; n]
    };
    if n as f64 * floor > 1.0 + EPS || (!armed && caps.iter().any(|c| *c < floor - EPS)) {
        return (uniform, Some(Degenerate::Uniform));
    }
    let cap_mass: f64 = caps.iter().sum();
    if cap_mass <= EPS {
        return (uniform, Some(Degenerate::Uniform));
    }
    if cap_mass < 1.0 - EPS {
        return (
            caps.iter().map(|c| c / cap_mass).collect(),
            Some(Degenerate::CapProportional),
        );
    }
    let floors: Vec<f64> = caps.iter().map(|c| floor.min(*c)).collect();
    let q_max = q.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    // Seats with no attendance leave the softmax before the logarithm.
    let x: Vec<Option<f64>> = q
        .iter()
        .zip(&a)
        .map(|(qi, ai)| {
            if !armed {
                Some(gamma * (qi - q_max))
            } else if *ai > 0.0 {
                Some(gamma * (qi - q_max) + eta * ai.ln())
            } else {
                None
            }
        })
        .collect();
    let x_max = x
        .iter()
        .flatten()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = x
        .iter()
        .map(|xi| xi.map_or(0.0, |v| (v - x_max).exp()))
        .collect();
    let total: f64 = e.iter().sum();
    let shares: Vec<f64> = e.iter().map(|v| v / total).collect();
    let deficit: f64 = floors.iter().map(|f| floor - f).sum();
    let spread = (1.0 - n as f64 * floor) + deficit;
    let mut w: Vec<f64> = floors
        .iter()
        .zip(&shares)
        .map(|(f, s)| f + spread * s)
        .collect();
    // Hold seats at their ceilings, sharing the excess among the others by their
    // shares; the capped set only grows, so n passes suffice.
    let mut capped = vec![false; n];
    for _ in 0..n {
        let over: Vec<usize> = (0..n)
            .filter(|&i| !capped[i] && w[i] > caps[i] + EPS)
            .collect();
        if over.is_empty() {
            break;
        }
        let mut excess = 0.0;
        for &i in &over {
            excess += w[i] - caps[i];
            w[i] = caps[i];
            capped[i] = true;
        }
        let open: Vec<usize> = (0..n).filter(|&i| !capped[i]).collect();
        if open.is_empty() {
            break;
        }
        let pool: f64 = open.iter().map(|&i| shares[i]).sum();
        for &i in &open {
            w[i] += if pool > 0.0 {
                excess * shares[i] / pool
            } else {
                excess / open.len() as f64
            };
        }
    }
    (w, None)
}

// ------------------------------------------------------------------ regression

/// Solves `a x = b` by Gaussian elimination with partial pivoting; `None` when a
/// pivot is below 1e-12 (singular).
pub fn solve_linear(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let (top, rest) = a.split_at_mut(col + 1);
        let pivot_row = &top[col];
        for (i, row) in rest.iter_mut().enumerate() {
            let f = row[col] / pivot_row[col];
            if f == 0.0 {
                continue;
            }
            for (x, p) in row[col..].iter_mut().zip(&pivot_row[col..]) {
                *x -= f * p;
            }
            b[col + 1 + i] -= f * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let acc = b[row] - (row + 1..n).map(|k| a[row][k] * x[k]).sum::<f64>();
        x[row] = acc / a[row][row];
    }
    Some(x)
}

/// Weighted moments of `(features, target)` samples: what a ridge fit and its R²
/// need, kept as sums so that samples can be added, removed and decayed.
#[derive(Debug, Clone)]
pub struct Moments {
    n: usize,
    s0: f64,
    sx: Vec<f64>,
    sxx: Vec<f64>,
    sy: f64,
    sxy: Vec<f64>,
    syy: f64,
}

impl Moments {
    /// No samples, `k` features.
    pub fn new(k: usize) -> Self {
        Self {
            n: 0,
            s0: 0.0,
            sx: vec![0.0; k],
            sxx: vec![0.0; k * k],
            sy: 0.0,
            sxy: vec![0.0; k],
            syy: 0.0,
        }
    }

    /// Adds (`sign` 1) or removes (`sign` -1) a sample at weight `w`.
    pub fn add(&mut self, x: &[f64], y: f64, w: f64, sign: f64) {
        let k = self.sx.len();
        let ws = w * sign;
        if sign > 0.0 {
            self.n += 1;
        } else {
            self.n = self.n.saturating_sub(1);
        }
        self.s0 += ws;
        self.sy += ws * y;
        self.syy += ws * y * y;
        for i in 0..k {
            self.sx[i] += ws * x[i];
            self.sxy[i] += ws * x[i] * y;
            for j in i..k {
                self.sxx[i * k + j] += ws * x[i] * x[j];
            }
        }
    }

    /// Multiplies every weight by `f` (the anchor moved on).
    fn decay(&mut self, f: f64) {
        self.s0 *= f;
        self.sy *= f;
        self.syy *= f;
        self.sx.iter_mut().for_each(|v| *v *= f);
        self.sxy.iter_mut().for_each(|v| *v *= f);
        self.sxx.iter_mut().for_each(|v| *v *= f);
    }

    /// Samples held.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether no sample is held.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The in-sample R² (floored at 0) of the ridge fit on these samples (module
    /// doc, step 1); `None` below `min_train` samples, below the target variance
    /// floor, or for a singular system.
    pub fn q(&self, lambda: f64, min_train: usize, variance_floor: f64) -> Option<f64> {
        if self.n < min_train || !(self.s0 > 0.0 && self.s0.is_finite()) {
            return None;
        }
        let k = self.sx.len();
        let s0 = self.s0;
        let y_bar = self.sy / s0;
        let y2 = self.syy / s0;
        let var = y2 - y_bar * y_bar;
        // A spread within rounding of the target's size is no spread.
        if var <= 0.0 || var < variance_floor || var <= 1e-9 * y2 {
            return None;
        }
        let mu: Vec<f64> = self.sx.iter().map(|v| v / s0).collect();
        let cov = |i: usize, j: usize| {
            let (a, b) = (i.min(j), i.max(j));
            self.sxx[a * k + b] / s0 - mu[i] * mu[j]
        };
        let sd: Vec<Option<f64>> = (0..k)
            .map(|i| {
                let v = cov(i, i);
                let x2 = self.sxx[i * k + i] / s0;
                (v > 0.0 && v.sqrt() >= 1e-9 && v > 1e-9 * x2).then(|| v.sqrt())
            })
            .collect();
        let czy: Vec<f64> = (0..k)
            .map(|i| sd[i].map_or(0.0, |s| (self.sxy[i] / s0 - mu[i] * y_bar) / s))
            .collect();
        let czz = |i: usize, j: usize| match (sd[i], sd[j]) {
            (Some(a), Some(b)) => cov(i, j) / (a * b),
            _ => 0.0,
        };
        // The normal equations over [1, z]: the intercept row is [1, 0..] (z has
        // weighted mean 0), the penalty on the z block only.
        let mut a = vec![vec![0.0; k + 1]; k + 1];
        a[0][0] = 1.0;
        for i in 0..k {
            for j in 0..k {
                a[i + 1][j + 1] = czz(i, j);
            }
            a[i + 1][i + 1] += lambda;
        }
        let mut b = vec![y_bar];
        b.extend(&czy);
        let theta = solve_linear(a, b)?;
        let beta = &theta[1..];
        let mut sse = var - 2.0 * (0..k).map(|i| beta[i] * czy[i]).sum::<f64>();
        for i in 0..k {
            for j in 0..k {
                sse += beta[i] * beta[j] * czz(i, j);
            }
        }
        let r2 = 1.0 - sse / var;
        r2.is_finite().then_some(r2.max(0.0))
    }
}

/// The in-sample R² score of `samples` (`(tau, features, target)`, `tau` in any
/// unit) anchored at `anchor` with `half_life` in the same unit: the direct form
/// of what the engine keeps as running sums (module doc, step 1).
pub fn in_sample_q(
    samples: &[(f64, Vec<f64>, f64)],
    anchor: f64,
    half_life: f64,
    lambda: f64,
    min_train: usize,
    variance_floor: f64,
) -> Option<f64> {
    let k = samples.first().map_or(0, |s| s.1.len());
    let mut m = Moments::new(k);
    for (tau, x, y) in samples {
        m.add(x, *y, (-(anchor - tau) / half_life).exp2(), 1.0);
    }
    m.q(lambda, min_train, variance_floor)
}

// ------------------------------------------------------------------ the state

/// One sample anchor: a stamp at which the contributor printed, its features
/// (`None`: undefined, no sample at any horizon) and its targets by horizon.
#[derive(Debug, Clone)]
struct Anchor {
    tau: i64,
    x: Option<Vec<f64>>,
    y: Vec<Option<f64>>,
}

/// A contributor as the model sees it.
#[derive(Debug, Clone)]
struct Seat {
    /// Attendance numerator (decayed presence).
    present: f64,
    /// Stamps (indices) it printed at within the history.
    printed: VecDeque<i64>,
    anchors: VecDeque<Anchor>,
    /// Running moments by horizon, anchored at the current cut-off.
    sums: Vec<Moments>,
}

/// What the model says at one stamp (before its prints are in): each known
/// contributor's `Q` and attendance, and whether the model is on.
#[derive(Debug, Clone, Default)]
pub(crate) struct View {
    pub dynamic: bool,
    pub switched: bool,
    q: BTreeMap<u32, Option<f64>>,
    attendance: BTreeMap<u32, f64>,
}

impl View {
    /// `c`'s score (0 when undefined or unknown) and attendance (0 when unknown).
    pub(crate) fn of(&self, c: u32) -> (f64, f64) {
        (
            self.q.get(&c).copied().flatten().unwrap_or(0.0),
            self.attendance.get(&c).copied().unwrap_or(0.0),
        )
    }
}

/// The model's state along a grade's stamps (module doc).
pub(crate) struct State {
    p: Params,
    /// Index of the stamp the next view is for.
    k: i64,
    ids: BTreeMap<u32, usize>,
    seats: Vec<Seat>,
    /// Trusted prints of the last stamps (by seat, NaN where none), oldest first;
    /// the back is stamp `k - 1`.
    prints: VecDeque<Vec<f64>>,
    /// The weights in force at each of the last stamps (by seat, 0 where none).
    vectors: VecDeque<Option<Rc<Vec<f64>>>>,
    /// Attendance denominator (decayed stamps that were not missed).
    scheduled: f64,
    /// Whether each stamp of the history was missed (nobody printed), oldest first.
    missed: VecDeque<bool>,
    dynamic: bool,
    since_recompute: i64,
}

/// The panel's weighted sums at two stamps (the seats printing at both, with a
/// weight) and each seat's own part, so that every leave-one-out return comes
/// from one pass.
struct LooSums {
    num: f64,
    den: f64,
    count: usize,
    own: Vec<Option<(f64, f64)>>,
}

/// Stamps between recomputations of the running moments from their samples.
const RECOMPUTE_EVERY: i64 = 96;

impl State {
    pub(crate) fn new(p: Params) -> Self {
        Self {
            p,
            k: 0,
            ids: BTreeMap::new(),
            seats: Vec::new(),
            prints: VecDeque::new(),
            vectors: VecDeque::new(),
            scheduled: 0.0,
            missed: VecDeque::new(),
            dynamic: false,
            since_recompute: 0,
        }
    }

    /// The model's parameters.
    pub(crate) fn params(&self) -> &Params {
        &self.p
    }

    fn price(&self, seat: usize, stamp: i64) -> Option<f64> {
        let back = self.k - 1 - stamp;
        if back < 0 || back >= self.prints.len() as i64 {
            return None;
        }
        let row = &self.prints[self.prints.len() - 1 - back as usize];
        row.get(seat).copied().filter(|p| *p > 0.0)
    }

    fn vector_at(&self, stamp: i64) -> Option<Rc<Vec<f64>>> {
        let back = self.k - 1 - stamp;
        if back < 0 || back >= self.vectors.len() as i64 {
            return None;
        }
        self.vectors[self.vectors.len() - 1 - back as usize].clone()
    }

    fn clamp(&self, r: f64) -> f64 {
        r.clamp(-self.p.max_abs, self.p.max_abs)
    }

    /// Leave-one-out sums of the panel from `t0` to `t1` under `v`: the totals and
    /// each seat's own part (seats printing at both ends with a positive weight).
    fn loo_sums(&self, v: &[f64], t0: i64, t1: i64) -> LooSums {
        let (mut num, mut den, mut count) = (0.0, 0.0, 0);
        let mut own = vec![None; self.seats.len()];
        for (j, w) in v.iter().enumerate() {
            if *w <= 0.0 {
                continue;
            }
            if let (Some(p0), Some(p1)) = (self.price(j, t0), self.price(j, t1)) {
                num += w * p1;
                den += w * p0;
                count += 1;
                own[j] = Some((w * p1, w * p0));
            }
        }
        LooSums {
            num,
            den,
            count,
            own,
        }
    }

    fn loo(&self, sums: &LooSums, seat: usize) -> Option<f64> {
        let (mut num, mut den, mut count) = (sums.num, sums.den, sums.count);
        if let Some((a, b)) = sums.own[seat] {
            num -= a;
            den -= b;
            count -= 1;
        }
        (count > 0 && num > 0.0 && den > 0.0).then(|| self.clamp((num / den).ln()))
    }

    /// Features of every seat printing at `tau`, under the weights in force then.
    fn features(&self, tau: i64, v: &[f64]) -> Vec<Option<Vec<f64>>> {
        let legs: Vec<_> = self
            .p
            .lookbacks
            .iter()
            .map(|l| self.loo_sums(v, tau - l, tau))
            .collect();
        (0..self.seats.len())
            .map(|i| {
                self.price(i, tau)?;
                self.p
                    .lookbacks
                    .iter()
                    .zip(&legs)
                    .map(|(l, leg)| {
                        let own = self.clamp((self.price(i, tau)? / self.price(i, tau - l)?).ln());
                        Some(own - self.loo(leg, i)?)
                    })
                    .collect()
            })
            .collect()
    }

    /// The view for the next stamp, the prints of `eligible` contributors accepted
    /// at it (module doc, steps 1, 2 and 4).
    pub(crate) fn view(&mut self, eligible: &[u32]) -> View {
        let t = self.k - 1; // the cut-off: the previous stamp
        let decay = (-1.0 / self.p.half_life).exp2();
        for seat in &mut self.seats {
            seat.sums.iter_mut().for_each(|m| m.decay(decay));
        }
        if t >= 0 {
            self.realize(t);
            self.expire(t);
        }
        self.since_recompute += 1;
        if self.since_recompute >= RECOMPUTE_EVERY {
            self.recompute(t);
            self.since_recompute = 0;
        }
        let in_window = self.k.min(self.p.history).max(0) as f64;
        let mut view = View::default();
        for (&c, &i) in &self.ids {
            let seat = &self.seats[i];
            let q: Option<Vec<f64>> = seat
                .sums
                .iter()
                .map(|m| m.q(self.p.lambda, self.p.min_train, self.p.variance_floor))
                .collect();
            let q = q.map(|v| v.iter().sum::<f64>() / v.len() as f64);
            view.q.insert(c, q);
            let a = if self.scheduled > 0.0 {
                seat.present / self.scheduled
            } else {
                1.0
            };
            view.attendance.insert(c, a);
        }
        if !self.dynamic && eligible.len() >= self.p.switch_min {
            // The scored: those printing now and those that printed in the
            // history; of them, those that printed at `attendance_floor` of the
            // history's stamps (everyone before any stamp) must have a score.
            let ratio = |c: &u32| {
                let printed = self.ids.get(c).map_or(0, |&i| self.seats[i].printed.len());
                if in_window > 0.0 {
                    printed as f64 / in_window
                } else {
                    1.0
                }
            };
            let recent = self
                .ids
                .iter()
                .filter(|(_, &i)| !self.seats[i].printed.is_empty())
                .map(|(c, _)| *c);
            let scored: std::collections::BTreeSet<u32> =
                eligible.iter().copied().chain(recent).collect();
            let passers: Vec<u32> = scored
                .into_iter()
                .filter(|c| ratio(c) >= self.p.attendance_floor)
                .collect();
            if !passers.is_empty()
                && passers
                    .iter()
                    .all(|c| view.q.get(c).copied().flatten().is_some())
            {
                self.dynamic = true;
                view.switched = true;
            }
        }
        view.dynamic = self.dynamic;
        view
    }

    /// Samples whose target ends at the cut-off `t` join their regressions.
    fn realize(&mut self, t: i64) {
        let weight = |tau: i64, p: &Params| (-((t - tau) as f64) / p.half_life).exp2();
        let first = *self.p.horizons.iter().min().unwrap_or(&1);
        let mut order: Vec<(usize, i64)> = self.p.horizons.iter().copied().enumerate().collect();
        order.sort_by_key(|(_, h)| *h);
        for (hi, h) in order {
            let tau = t - h;
            if tau < 0 {
                continue;
            }
            let Some(v) = self.vector_at(tau) else {
                continue;
            };
            if h == first {
                let feats = self.features(tau, &v);
                let nh = self.p.horizons.len();
                for (i, x) in feats.into_iter().enumerate() {
                    if self.price(i, tau).is_some() {
                        self.seats[i].anchors.push_back(Anchor {
                            tau,
                            x,
                            y: vec![None; nh],
                        });
                    }
                }
            }
            let target = self.loo_sums(&v, tau, t);
            for i in 0..self.seats.len() {
                let y = self.loo(&target, i);
                let w = weight(tau, &self.p);
                let seat = &mut self.seats[i];
                let Ok(at) = seat.anchors.binary_search_by_key(&tau, |a| a.tau) else {
                    continue;
                };
                let anchor = &mut seat.anchors[at];
                if let (Some(x), Some(y)) = (&anchor.x, y) {
                    anchor.y[hi] = Some(y);
                    seat.sums[hi].add(x, y, w, 1.0);
                }
            }
        }
    }

    /// Samples older than the history leave their regressions.
    fn expire(&mut self, t: i64) {
        let start = t - self.p.history;
        let half_life = self.p.half_life;
        for seat in &mut self.seats {
            while seat.anchors.front().is_some_and(|a| a.tau < start) {
                let Some(a) = seat.anchors.pop_front() else {
                    break;
                };
                let w = (-((t - a.tau) as f64) / half_life).exp2();
                if let Some(x) = &a.x {
                    for (hi, y) in a.y.iter().enumerate() {
                        if let Some(y) = y {
                            seat.sums[hi].add(x, *y, w, -1.0);
                        }
                    }
                }
            }
        }
    }

    /// The running moments summed afresh from their samples.
    fn recompute(&mut self, t: i64) {
        let k = self.p.lookbacks.len();
        let half_life = self.p.half_life;
        for seat in &mut self.seats {
            for (hi, m) in seat.sums.iter_mut().enumerate() {
                *m = Moments::new(k);
                for a in &seat.anchors {
                    if let (Some(x), Some(y)) = (&a.x, a.y[hi]) {
                        m.add(x, y, (-((t - a.tau) as f64) / half_life).exp2(), 1.0);
                    }
                }
            }
        }
    }

    /// The stamp's trusted prints (`prints`: contributor and price; none at all is
    /// a missed stamp) and the weights it was fixed with go into the state.
    pub(crate) fn advance(&mut self, prints: &[(u32, f64)], weights: &[(u32, f64)]) {
        let k = self.p.lookbacks.len();
        let nh = self.p.horizons.len();
        for (c, _) in prints.iter().chain(weights) {
            if !self.ids.contains_key(c) {
                self.ids.insert(*c, self.seats.len());
                self.seats.push(Seat {
                    present: 0.0,
                    printed: VecDeque::new(),
                    anchors: VecDeque::new(),
                    sums: vec![Moments::new(k); nh],
                });
            }
        }
        let n = self.seats.len();
        let mut row = vec![f64::NAN; n];
        for (c, p) in prints {
            row[self.ids[c]] = *p;
        }
        let keep = (self.p.lookbacks.iter().max().unwrap_or(&0)
            + self.p.horizons.iter().max().unwrap_or(&0)
            + 1) as usize;
        let here: Vec<bool> = row.iter().map(|p| !p.is_nan()).collect();
        self.prints.push_back(row);
        while self.prints.len() > keep {
            self.prints.pop_front();
        }
        let vector = if weights.iter().any(|(_, w)| *w > 0.0) {
            let mut v = vec![0.0; n];
            for (c, w) in weights {
                v[self.ids[c]] = *w;
            }
            Some(Rc::new(v))
        } else {
            self.vectors.back().cloned().flatten()
        };
        self.vectors.push_back(vector);
        let horizon = *self.p.horizons.iter().max().unwrap_or(&0) as usize + 1;
        while self.vectors.len() > horizon {
            self.vectors.pop_front();
        }
        // Attendance: a stamp nobody printed at counts for nobody; the stamp that
        // leaves the history (`k - history`, at age `history + 1` from the next
        // stamp) leaves both sums.
        let d = self.p.attendance_decay;
        let missed = prints.is_empty();
        let gone = (-((self.p.history + 1) as f64) / self.p.attendance_half_life).exp2();
        if !missed {
            self.scheduled += 1.0;
        }
        self.scheduled *= d;
        self.missed.push_back(missed);
        if self.missed.len() as i64 > self.p.history && self.missed.pop_front() == Some(false) {
            self.scheduled = (self.scheduled - gone).max(0.0);
        }
        let out = self.k - self.p.history;
        for (i, seat) in self.seats.iter_mut().enumerate() {
            if here[i] {
                seat.present += 1.0;
                seat.printed.push_back(self.k);
            }
            seat.present *= d;
            while let Some(&s) = seat.printed.front().filter(|s| **s <= out) {
                seat.printed.pop_front();
                if s == out {
                    seat.present = (seat.present - gone).max(0.0);
                }
            }
        }
        self.k += 1;
    }
}

/// Weights of the voters `ids` at a stamp under the model's `view`: the opening
/// weights `base` (normalized) before the switch, the allocation after it rounded
/// to 6 decimals; with the allocation's degenerate case, if any.
pub(crate) fn weights(
    p: &Params,
    view: &View,
    ids: &[u32],
    base: &[f64],
) -> (Vec<f64>, Option<Degenerate>) {
    if !view.dynamic {
        let total: f64 = base.iter().sum();
        return (
            base.iter()
                .map(|b| if total > 0.0 { b / total } else { 0.0 })
                .collect(),
            None,
        );
    }
    let (q, a): (Vec<f64>, Vec<f64>) = ids.iter().map(|c| view.of(*c)).unzip();
    let armed = p.eta > 0.0;
    let (w, how) = allocate(&q, armed.then_some(&a[..]), p.eta, p.gamma, p.floor, p.cap);
    (w.iter().map(|x| (x * 1e6).round() / 1e6).collect(), how)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f64], b: &[f64], tol: f64) {
        assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() <= tol, "{a:?} vs {b:?}");
        }
    }

    // The peer's METHODOLOGY.md section 8.7 table: scores 0.20, 0.10, 0.05, 0.00,
    // floor 2.5%, no cap: weight = 0.025 + 0.9 softmax(gamma Q), in percent.
    #[test]
    fn the_peers_gamma_table() {
        let q = [0.20, 0.10, 0.05, 0.0];
        let table = [
            (0.0, [25.0, 25.0, 25.0, 25.0]),
            (1.0, [27.6, 25.2, 24.1, 23.1]),
            (4.0, [36.2, 25.1, 21.0, 17.7]),
            (10.0, [54.6, 21.7, 14.1, 9.6]),
            (25.0, [83.4, 9.1, 4.4, 3.0]),
        ];
        for (gamma, want) in table {
            let (w, how) = allocate(&q, None, 0.0, gamma, 0.025, 1.0);
            assert_eq!(how, None);
            let pct: Vec<f64> = w.iter().map(|x| (x * 1000.0).round() / 10.0).collect();
            close(&pct, &want, 1e-9);
        }
        // With the live 30% cap at gamma 4: the first seat held at 0.3 and its
        // excess 0.062 shared by the others' softmax shares (hand arithmetic:
        // shares e^0.4, e^0.2, 1 over their sum; 0.2511 + 0.062 x 0.4011 = 0.2761).
        let (w, _) = allocate(&q, None, 0.0, 4.0, 0.025, 0.30);
        close(&w, &[0.3, 0.2761, 0.230583, 0.193317], 5e-7);
    }

    // The peer's allocation cases (its tests/unit/test_dynamic_weights.py, restated).
    #[test]
    fn the_peers_allocation_corners() {
        // Equal scores: equal weights.
        let (w, _) = allocate(&[0.3; 5], None, 0.0, 4.0, 0.025, 0.30);
        close(&w, &[0.2; 5], 1e-12);
        // Two seats under a 30% cap hold 60%: each its cap's share.
        let (w, how) = allocate(&[1.0, 0.0], None, 0.0, 4.0, 0.025, 0.30);
        assert_eq!(how, Some(Degenerate::CapProportional));
        close(&w, &[0.5, 0.5], 1e-12);
        // Floors alone over the whole: equal.
        let (w, how) = allocate(&[1.0, 0.0, 0.0], None, 0.0, 4.0, 0.4, 0.5);
        assert_eq!(how, Some(Degenerate::Uniform));
        close(&w, &[1.0 / 3.0; 3], 1e-12);
        // A cap below the floor (no attendance): equal.
        let (w, how) = allocate(&[1.0, 0.0, 0.0, 0.0, 0.0], None, 0.0, 4.0, 0.025, 0.02);
        assert_eq!(how, Some(Degenerate::Uniform));
        close(&w, &[0.2; 5], 1e-12);
        // {a:1, b:.9, c..f:0}, gamma 8: a and b both held at the cap.
        let (w, _) = allocate(&[1.0, 0.9, 0.0, 0.0, 0.0, 0.0], None, 0.0, 8.0, 0.025, 0.30);
        close(&w[..2], &[0.3, 0.3], 1e-12);
        // {a:1, b..e:0}, gamma 4: a at 0.3, the others share 0.7 equally.
        let (w, _) = allocate(&[1.0, 0.0, 0.0, 0.0, 0.0], None, 0.0, 4.0, 0.025, 0.30);
        close(&w, &[0.3, 0.175, 0.175, 0.175, 0.175], 1e-12);
    }

    // The peer's attendance cases (its tests/unit/test_attendance_weighting.py):
    // scores 0.05 i for i = 0..4, gamma 4, floor 2.5%, cap 30%, eta 0.5.
    #[test]
    fn the_peers_attendance_corners() {
        let q: Vec<f64> = (0..5).map(|i| 0.05 * i as f64).collect();
        let legacy = allocate(&q, None, 0.0, 4.0, 0.025, 0.30).0;
        // Full attendance is the model without attendance, bit for bit.
        let (w, _) = allocate(&q, Some(&[1.0; 5]), 0.5, 4.0, 0.025, 0.30);
        assert_eq!(w, legacy);
        // 0.025 + 0.875 softmax(0.2 i): e^{0.2 i} / 7.3891 ... (hand: e^0 / sum of
        // e^{0, .2, .4, .6, .8} = 1 / 7.44049 = 0.134400; 0.025 + 0.875 x 0.1344).
        close(
            &legacy,
            &[0.137745, 0.162707, 0.193196, 0.230434, 0.275918],
            5e-7,
        );
        // Attendance 0.1 everywhere: ceilings of 3% hold 15%: each a fifth.
        let (w, how) = allocate(&q, Some(&[0.1; 5]), 0.5, 4.0, 0.025, 0.30);
        assert_eq!(how, Some(Degenerate::CapProportional));
        close(&w, &[0.2; 5], 1e-12);
        // No attendance anywhere: equal.
        let (w, how) = allocate(&q, Some(&[0.0; 5]), 0.5, 4.0, 0.025, 0.30);
        assert_eq!(how, Some(Degenerate::Uniform));
        close(&w, &[0.2; 5], 1e-12);
        // A seat never present gets nothing.
        let (w, _) = allocate(&q, Some(&[0.0, 1.0, 1.0, 1.0, 1.0]), 0.5, 4.0, 0.025, 0.30);
        assert_eq!(w[0], 0.0);
        // A seat present 4% of the time is held at its ceiling, 0.3 x 0.04.
        let (w, _) = allocate(&q, Some(&[0.04, 1.0, 1.0, 1.0, 1.0]), 0.5, 4.0, 0.025, 0.30);
        close(&w[..1], &[0.012], 1e-12);
    }

    #[test]
    fn the_solver_by_hand() {
        assert_eq!(
            solve_linear(vec![vec![2.0, 0.0], vec![0.0, 4.0]], vec![2.0, 8.0]),
            Some(vec![1.0, 2.0])
        );
        assert_eq!(
            solve_linear(vec![vec![1.0, 2.0], vec![2.0, 4.0]], vec![1.0, 2.0]),
            None
        );
        // Pivoting: the zero on the diagonal is swapped away.
        close(
            &solve_linear(vec![vec![0.0, 1.0], vec![1.0, 1.0]], vec![2.0, 3.0]).unwrap(),
            &[1.0, 2.0],
            1e-15,
        );
    }

    // One feature x = +-0.1, target y = +-0.05, equal weights: z = +-1, the fit
    // beta = cov(z, y) / (1 + lambda) = 0.05 / (1 + lambda); R^2 = 1 - (1 - 1 /
    // (1 + lambda))^2, so lambda 1 gives 0.75 and lambda 1e-9 gives 1.
    #[test]
    fn ridge_r2_by_hand() {
        let samples: Vec<(f64, Vec<f64>, f64)> = (0..12)
            .map(|i| {
                let s = if i % 2 == 0 { 1.0 } else { -1.0 };
                (0.0, vec![0.1 * s], 0.05 * s)
            })
            .collect();
        let q = |lambda| in_sample_q(&samples, 0.0, 1.0, lambda, 10, 1e-12).unwrap();
        assert!((q(1.0) - 0.75).abs() < 1e-12);
        assert!((q(1e-9) - 1.0).abs() < 1e-8);
        // lambda 1e9: R^2 = 1 - (1e9 / (1 + 1e9))^2, about 2e-9.
        assert!(q(1e9) < 3e-9);
        // Fewer than min_train samples, or a target that never moves: undefined.
        assert_eq!(in_sample_q(&samples[..9], 0.0, 1.0, 1.0, 10, 1e-12), None);
        let flat: Vec<_> = samples
            .iter()
            .map(|(t, x, _)| (*t, x.clone(), 0.02))
            .collect();
        assert_eq!(in_sample_q(&flat, 0.0, 1.0, 1.0, 10, 1e-12), None);
        // A constant feature carries nothing: R^2 0.
        let constant: Vec<_> = samples
            .iter()
            .map(|(t, _, y)| (*t, vec![0.3], *y))
            .collect();
        assert_eq!(in_sample_q(&constant, 0.0, 1.0, 1.0, 10, 1e-12), Some(0.0));
    }

    // The running moments against the direct sum: samples added, decayed and some
    // removed give the score of the samples left, weighted from the new anchor.
    #[test]
    fn running_moments_equal_the_direct_sum() {
        let mut rng = 7u64;
        let mut next = || {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((rng >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        let samples: Vec<(f64, Vec<f64>, f64)> = (0..200)
            .map(|i| {
                let x = vec![next() * 0.1, next() * 0.1, next() * 0.01];
                let y = 0.3 * x[0] - 0.1 * x[1] + next() * 0.02;
                (i as f64, x, y)
            })
            .collect();
        let h = 30.0;
        let mut m = Moments::new(3);
        for (i, (tau, x, y)) in samples.iter().enumerate() {
            if i > 0 {
                m.decay((-1.0f64 / h).exp2());
            }
            m.add(x, *y, (-(i as f64 - tau) / h).exp2(), 1.0);
        }
        let anchor = 199.0;
        for (tau, x, y) in &samples[..50] {
            m.add(x, *y, (-(anchor - tau) / h).exp2(), -1.0);
        }
        let running = m.q(1.0, 10, 1e-12).unwrap();
        let direct = in_sample_q(&samples[50..], anchor, h, 1.0, 10, 1e-12).unwrap();
        assert!(running > 0.1, "{running}");
        assert!((running - direct).abs() < 1e-9, "{running} vs {direct}");
    }
}
