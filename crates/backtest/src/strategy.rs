//! Hedging strategies: the hedge ratio each applies to a month's exposure, using only
//! what was known before the month began (except the in-sample benchmark).

use crate::stats::hedge_ratio::min_variance_hedge_ratio;
use crate::stats::moments::mean;
use serde::{Deserialize, Serialize};
use strum::VariantArray;

/// A hedging strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::IntoStaticStr, strum::Display, strum::EnumString, strum::VariantArray)]
#[strum(
    serialize_all = "kebab-case",
    parse_err_ty = String,
    parse_err_fn = unknown_strategy
)]
pub enum Strategy {
    /// No hedge: the benchmark every other strategy is measured against.
    Unhedged,
    /// One contract GPU-hour per exposed GPU-hour.
    OneToOne,
    /// The minimum-variance ratio fitted on the whole sample: a benchmark that uses
    /// the future, not a tradable strategy.
    StaticMinVariance,
    /// Minimum-variance ratio re-fitted each month on the past `window` months only.
    WalkForward,
    /// Exponentially weighted (lambda 0.94) covariance over variance of past months.
    Ewma,
    /// Hedge one third of a month's exposure at each of the three month-ends before
    /// it: the entry price is the average of three entry prices.
    Layered,
}

impl Strategy {
    /// Whether it fits its ratio on the months (static, walk-forward, EWMA)
    /// rather than holding one given (one-to-one, layered, unhedged).
    pub fn fits_a_ratio(self) -> bool {
        matches!(
            self,
            Strategy::StaticMinVariance | Strategy::WalkForward | Strategy::Ewma
        )
    }

    /// Every strategy, in the order a backtest runs them by default.
    pub const ALL: [Self; Self::VARIANTS.len()] = match Self::VARIANTS.first_chunk() {
        Some(all) => *all,
        None => unreachable!(),
    };

    /// The name `--strategy`, `summary.json` and `periods.csv` use.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// `--strategy`'s message for a name that is no strategy (parsing is exact).
fn unknown_strategy(s: &str) -> String {
    format!(
        "unknown strategy {s:?}; expected one of {}",
        Strategy::ALL.map(Strategy::as_str).join(", ")
    )
}

/// Months of history a fitted strategy needs before it trusts its own ratio;
/// before that it hedges one-to-one.
pub(crate) const MIN_HISTORY: usize = 6;
/// Rolling window of the walk-forward fit, in months.
pub(crate) const WALK_FORWARD_WINDOW: usize = 24;
/// EWMA decay.
pub(crate) const EWMA_LAMBDA: f64 = 0.94;

/// EWMA slope of `y` on `x`, weights `lambda^(n-1-i)`.
pub(crate) fn ewma_ratio(y: &[f64], x: &[f64], lambda: f64) -> Option<f64> {
    let n = x.len();
    if n < 2 {
        return None;
    }
    let w: Vec<f64> = (0..n).map(|i| lambda.powi((n - 1 - i) as i32)).collect();
    let ws: f64 = w.iter().sum();
    let mx = x.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>() / ws;
    let my = y.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>() / ws;
    let cov: f64 = (0..n).map(|i| w[i] * (x[i] - mx) * (y[i] - my)).sum();
    let var: f64 = (0..n).map(|i| w[i] * (x[i] - mx).powi(2)).sum();
    (var > 0.0).then(|| cov / var)
}

/// Hedge ratio per period. `dr` and `df` are the per-period changes of rent and of
/// the futures; period `t`'s ratio may use only indices `< t` (except the in-sample
/// benchmark). A fitted ratio below zero (rent and index moved against each other)
/// is applied as 0: a negative ratio would take the other side of the market, a
/// bet on the index rather than a hedge of the rent; the strategies never do, and
/// every output (console, `summary.json`, `periods.csv`) shows the ratio applied.
pub(crate) fn ratios(strategy: Strategy, dr: &[f64], df: &[f64]) -> Vec<f64> {
    fitted(strategy, dr, df)
        .into_iter()
        .map(|h| h.max(0.0))
        .collect()
}

/// The ratio `strategy` would apply to the month after the last of `dr`, `df`
/// (what a hedger would trade next).
pub(crate) fn next_ratio(strategy: Strategy, dr: &[f64], df: &[f64]) -> f64 {
    let (mut r, mut f) = (dr.to_vec(), df.to_vec());
    r.push(0.0);
    f.push(0.0);
    // Period n's ratio uses indices < n only, so the padding is never read (except by
    // the in-sample benchmark, which is refitted on the real points).
    match strategy {
        Strategy::StaticMinVariance => ratios(strategy, dr, df).last().copied().unwrap_or(1.0),
        _ => ratios(strategy, &r, &f).last().copied().unwrap_or(1.0),
    }
}

fn fitted(strategy: Strategy, dr: &[f64], df: &[f64]) -> Vec<f64> {
    let n = dr.len();
    match strategy {
        Strategy::Unhedged => vec![0.0; n],
        Strategy::OneToOne | Strategy::Layered => vec![1.0; n],
        Strategy::StaticMinVariance => vec![min_variance_hedge_ratio(dr, df).unwrap_or(1.0); n],
        Strategy::WalkForward => (0..n)
            .map(|t| {
                if t < MIN_HISTORY {
                    return 1.0;
                }
                let lo = t.saturating_sub(WALK_FORWARD_WINDOW);
                min_variance_hedge_ratio(&dr[lo..t], &df[lo..t]).unwrap_or(1.0)
            })
            .collect(),
        Strategy::Ewma => (0..n)
            .map(|t| {
                if t < MIN_HISTORY {
                    return 1.0;
                }
                ewma_ratio(&dr[..t], &df[..t], EWMA_LAMBDA).unwrap_or(1.0)
            })
            .collect(),
    }
}

/// The minimum-variance ratio of each period fitted on every other period (leave one
/// out), applied as 0 when negative like every fitted ratio; 1 where the other
/// periods cannot fit one (fewer than two, or a constant futures change).
///
/// This is how the in-sample ratio is judged out of sample: each period is hedged at
/// a ratio that did not see it, so the hedged P&L of the periods is a prediction
/// error, and its effectiveness is the PRESS (predicted residual) form of the
/// in-sample effectiveness (Allen, "The relationship between variable selection and
/// data augmentation and a method for prediction", Technometrics 16, 1974). Unlike a
/// walk-forward it uses later periods too, so it can judge a ratio on ten months
/// that a walk-forward would still be hedging one-to-one.
pub(crate) fn leave_one_out_ratios(dr: &[f64], df: &[f64]) -> Vec<f64> {
    (0..dr.len())
        .map(|t| {
            let r: Vec<f64> = dr
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != t)
                .map(|(_, v)| *v)
                .collect();
            let f: Vec<f64> = df
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != t)
                .map(|(_, v)| *v)
                .collect();
            min_variance_hedge_ratio(&r, &f).unwrap_or(1.0).max(0.0)
        })
        .collect()
}

/// Mean of the ratios actually applied.
pub(crate) fn mean_ratio(r: &[f64]) -> f64 {
    mean(r).unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk_forward_never_sees_the_period_it_hedges() {
        // df is noise; dr equals df until period 10, then becomes -df. A one-day
        // (one-period) look-ahead would give period 10 a ratio far below the
        // previous ones; the walk-forward ratio at 10 must equal the one fitted on
        // 0..10 alone.
        let df: Vec<f64> = (0..20).map(|i| ((i * 7 % 5) as f64) - 2.0).collect();
        let dr: Vec<f64> = df
            .iter()
            .enumerate()
            .map(|(i, x)| if i < 10 { *x } else { -*x })
            .collect();
        let r = ratios(Strategy::WalkForward, &dr, &df);
        let past_only = min_variance_hedge_ratio(&dr[..10], &df[..10]).unwrap();
        assert!((r[10] - past_only).abs() < 1e-12);
        assert!(
            (r[10] - 1.0).abs() < 1e-12,
            "the past says 1.0, the future says -1.0"
        );
        // Changing a future value leaves earlier ratios untouched.
        let mut dr2 = dr.clone();
        dr2[15] = 100.0;
        let r2 = ratios(Strategy::WalkForward, &dr2, &df);
        assert_eq!(r[..=15], r2[..=15]);
        let e2 = ratios(Strategy::Ewma, &dr2, &df);
        assert_eq!(ratios(Strategy::Ewma, &dr, &df)[..=15], e2[..=15]);
    }

    #[test]
    fn a_negative_fitted_ratio_is_applied_as_no_hedge() {
        // dr = -0.5 df exactly: the fitted ratio is -0.5 (buy futures to hedge a
        // rent that falls when the index rises would add risk the other way); the
        // ratio applied is 0 in every fitted strategy, and the next month's too.
        let df: Vec<f64> = (0..12).map(|i| ((i * 7 % 5) as f64) - 2.0).collect();
        let dr: Vec<f64> = df.iter().map(|x| -0.5 * x).collect();
        assert!((min_variance_hedge_ratio(&dr, &df).unwrap() + 0.5).abs() < 1e-12);
        for s in [
            Strategy::StaticMinVariance,
            Strategy::WalkForward,
            Strategy::Ewma,
        ] {
            let r = ratios(s, &dr, &df);
            assert!(r.iter().all(|h| *h >= 0.0), "{s}: {r:?}");
            assert_eq!(next_ratio(s, &dr, &df), 0.0, "{s}");
        }
        assert_eq!(ratios(Strategy::StaticMinVariance, &dr, &df), vec![0.0; 12]);
    }

    #[test]
    fn leave_one_out_ratios_never_see_their_period() {
        // dr = 0.41 df on every period but the third, where dr = 10: the ratio of the
        // third period is fitted on the other four alone, so it is exactly 0.41; the
        // others see the outlier and move off 0.41.
        let df = [1.0, -2.0, 0.5, 3.0, -1.0];
        let mut dr: Vec<f64> = df.iter().map(|x| 0.41 * x).collect();
        dr[2] = 10.0;
        let h = leave_one_out_ratios(&dr, &df);
        assert!((h[2] - 0.41).abs() < 1e-12, "{h:?}");
        assert!(h
            .iter()
            .enumerate()
            .all(|(i, r)| i == 2 || (r - 0.41).abs() > 1e-3));
        // Two periods: each is fitted on one point, which fits no slope: 1.
        assert_eq!(
            leave_one_out_ratios(&[1.0, 2.0], &[1.0, 2.0]),
            vec![1.0, 1.0]
        );
    }

    #[test]
    fn names_round_trip() {
        for s in Strategy::ALL {
            assert_eq!(s.as_str().parse::<Strategy>().unwrap(), s);
        }
        assert!("yolo".parse::<Strategy>().is_err());
    }
}

#[cfg(test)]
mod text_tests {
    use super::*;

    /// Every variant's text as published before it was derived: `--strategy`,
    /// `summary.json` and `periods.csv` hold it, so it must not change by a byte.
    const TEXT: [(Strategy, &str); 6] = [
        (Strategy::Unhedged, "unhedged"),
        (Strategy::OneToOne, "one-to-one"),
        (Strategy::StaticMinVariance, "static-min-variance"),
        (Strategy::WalkForward, "walk-forward"),
        (Strategy::Ewma, "ewma"),
        (Strategy::Layered, "layered"),
    ];

    #[test]
    fn text_forms_are_pinned_and_agree_with_serde() {
        assert_eq!(Strategy::ALL.map(|v| v.as_str()), TEXT.map(|t| t.1));
        for (v, text) in TEXT {
            assert_eq!(v.as_str(), text);
            assert_eq!(v.to_string(), text);
            assert_eq!(text.parse::<Strategy>().unwrap(), v);
            assert_eq!(serde_json::to_value(v).unwrap(), text);
            assert_eq!(serde_json::from_value::<Strategy>(text.into()).unwrap(), v);
        }
        assert_eq!(
            "One-To-One".parse::<Strategy>().unwrap_err(),
            "unknown strategy \"One-To-One\"; expected one of unhedged, one-to-one, \
             static-min-variance, walk-forward, ewma, layered"
        );
    }
}
