//! What a rent hedge covers of a user's cost per useful token. The cost of a month is
//! `c = R / (T x 3600 x s) x 1e6` (rent R in USD per GPU-hour, throughput T output
//! tokens per second per GPU, success rate s). Its change from one hedge month to the
//! next is split exactly into three parts by the Shapley decomposition (each factor's
//! marginal effect averaged over the 3! orders in which the factors can change):
//!
//! - **rent**: what the index can hedge (the hedge's futures P&L for the month is
//!   shown beside, in USD and per million useful tokens);
//! - **throughput**: the operator's own software and settings;
//! - **failures**: requests that did not complete (operational, outside the hedge).
//!
//! `rent + throughput + failures = change` holds exactly. The user's percentile on
//! the cost curve of its model is computed each month from the throughput file's
//! other operators (priced at their own rent, or at the month's settlement when the
//! file gives none).
//!
//! Reference: A. Shorrocks, "Decomposition procedures for distributional analysis",
//! J. Economic Inequality 11 (2013).

use crate::backtest::PeriodRow;
use crate::cost::{cost_curves, usd_per_m_useful_tokens, CostError, Throughput};
use crate::rent::RentNames;
use chrono::{Days, NaiveDate};
use serde::Serialize;

/// One hedge month of the decomposition.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostMonth {
    /// First day of the hedge month.
    pub month: NaiveDate,
    /// The month's rent, USD per GPU-hour.
    pub usd_per_gpu_hour: f64,
    /// Output tokens per second per GPU of the operator's throughput row in force at
    /// the month's end.
    pub output_tokens_per_s_per_gpu: f64,
    /// Success rate of that row.
    pub success_rate: f64,
    /// The month's cost, USD per million useful output tokens.
    pub usd_per_m_useful_tokens: f64,
    /// Change of the cost from the previous hedge month, USD per million useful
    /// tokens (0 in the first); the three parts below add up to it.
    pub change: f64,
    /// The rent's part of the change (Shapley): what the index can hedge.
    pub rent_effect: f64,
    /// The throughput's part: the operator's software and settings.
    pub throughput_effect: f64,
    /// The success rate's part: failed requests, outside the hedge.
    pub failure_effect: f64,
    /// The hedge's futures P&L of the month, USD (a gain lowers the hedged cost).
    pub futures_pnl_usd: f64,
    /// The same per million useful tokens delivered (0 when none were).
    pub futures_pnl_per_m_useful_tokens: f64,
    /// The user's place on its model's cost curve that month (percent of capacity
    /// at or below its cost); `None` without other operators to compare with.
    pub percentile: Option<f64>,
}

/// Shapley split of `f(r1, t1, s1) - f(r0, t0, s0)` into the three factors' parts.
pub(crate) fn shapley3(r: (f64, f64), t: (f64, f64), s: (f64, f64)) -> (f64, f64, f64) {
    let f = |rr: f64, tt: f64, ss: f64| usd_per_m_useful_tokens(rr, tt, ss);
    // A factor's marginal effect when it changes first (weight 1/3), second after
    // either other factor (1/6 each) or last (1/3).
    let v = |a: bool, b: bool, c: bool| {
        f(
            if a { r.1 } else { r.0 },
            if b { t.1 } else { t.0 },
            if c { s.1 } else { s.0 },
        )
    };
    let rent = (v(true, false, false) - v(false, false, false)) / 3.0
        + (v(true, true, false) - v(false, true, false)) / 6.0
        + (v(true, false, true) - v(false, false, true)) / 6.0
        + (v(true, true, true) - v(false, true, true)) / 3.0;
    let thr = (v(false, true, false) - v(false, false, false)) / 3.0
        + (v(true, true, false) - v(true, false, false)) / 6.0
        + (v(false, true, true) - v(false, false, true)) / 6.0
        + (v(true, true, true) - v(true, false, true)) / 3.0;
    let fail = (v(false, false, true) - v(false, false, false)) / 3.0
        + (v(true, false, true) - v(true, false, false)) / 6.0
        + (v(false, true, true) - v(false, true, false)) / 6.0
        + (v(true, true, true) - v(true, true, false)) / 3.0;
    (rent, thr, fail)
}

/// The operator's throughput row in force at the end of `month` (the latest dated
/// row on or before it, else an undated row).
fn in_force<'a>(rows: &[&'a Throughput], last_day: NaiveDate) -> Option<&'a Throughput> {
    rows.iter()
        .filter(|r| r.date.is_none_or(|d| d <= last_day))
        .max_by_key(|r| r.date)
        .copied()
}

/// The operator's rows (its name trimmed, case folded) and their one model.
fn operator_rows<'a>(
    throughput: &'a [Throughput],
    operator: &str,
) -> Result<(Vec<&'a Throughput>, String), CostError> {
    let key = operator.trim().to_lowercase();
    let mine: Vec<&Throughput> = throughput
        .iter()
        .filter(|t| t.operator.trim().to_lowercase() == key)
        .collect();
    let Some(model) = mine.first().map(|t| t.model.clone()) else {
        return Err(CostError::NoOperator(operator.to_string()));
    };
    let models: std::collections::BTreeSet<&str> = mine.iter().map(|t| t.model.as_str()).collect();
    if models.len() > 1 {
        return Err(CostError::ManyModels {
            operator: operator.to_string(),
            models: models.into_iter().collect::<Vec<_>>().join(", "),
        });
    }
    Ok((mine, model))
}

/// Refuses the operator's rows when one measures another GPU, or another scope,
/// than the rent file names (`rent`: nothing is checked of what it leaves
/// unnamed): a managed cluster's throughput on a bare-metal rent, or an H100's on
/// an H200 rent, would price useful tokens nobody rented.
fn same_as_rent(mine: &[&Throughput], operator: &str, rent: &RentNames) -> Result<(), CostError> {
    let named = |gpu: &str, scope: Option<&str>| match scope {
        Some(s) => format!("{gpu}/{s}"),
        None => gpu.to_string(),
    };
    let scope = rent.scope.map(<&'static str>::from);
    for t in mine {
        let gpu_differs = rent.gpu.as_deref().is_some_and(|g| g != t.gpu);
        let scope_differs = scope.is_some_and(|s| s != t.scope);
        if gpu_differs || scope_differs {
            return Err(CostError::NotTheRent {
                operator: operator.to_string(),
                theirs: named(&t.gpu, Some(&t.scope)),
                rent: match &rent.gpu {
                    Some(g) => named(g, scope),
                    None => format!("scope {}", scope.unwrap_or_default()),
                },
            });
        }
    }
    Ok(())
}

/// The decomposition of the user's months: `periods` are one strategy's rows of the
/// backtest, `throughput` the whole file, `operator` the user's name in it, `rent`
/// the GPU and scope the rent file names (the operator's rows must measure them).
pub fn decompose_cost(
    periods: &[PeriodRow],
    throughput: &[Throughput],
    operator: &str,
    rent: &RentNames,
) -> Result<Vec<CostMonth>, CostError> {
    let key = operator.trim().to_lowercase();
    let (mine, model) = operator_rows(throughput, operator)?;
    same_as_rent(&mine, operator, rent)?;
    let mut out: Vec<CostMonth> = Vec::new();
    for p in periods {
        let last_day = p.period_end - Days::new(1);
        let t = in_force(&mine, last_day).ok_or_else(|| CostError::NoThroughput {
            operator: operator.to_string(),
            month: p.period_start.format("%Y-%m").to_string(),
        })?;
        let cost = usd_per_m_useful_tokens(
            p.rent_usd_per_gpu_hour,
            t.output_tokens_per_s_per_gpu,
            t.success_rate,
        );
        let useful_m =
            p.delivered_gpu_hours * t.output_tokens_per_s_per_gpu * 3600.0 * t.success_rate / 1e6;
        // Others on the same model that month, at their rent or the settlement.
        let mut curve: Vec<Throughput> = throughput
            .iter()
            .filter(|o| o.model == model && o.operator.trim().to_lowercase() != key)
            .filter(|o| o.date.is_none_or(|d| d <= last_day))
            .cloned()
            .collect();
        curve.sort_by(|a, b| (a.operator.as_str(), a.date).cmp(&(b.operator.as_str(), b.date)));
        curve.dedup_by(|later, earlier| {
            // keep the latest row per operator (sorted by date within an operator)
            if later.operator == earlier.operator {
                *earlier = later.clone();
                true
            } else {
                false
            }
        });
        let percentile = if curve.is_empty() {
            None
        } else {
            let mut me = t.clone();
            me.usd_per_gpu_hour = Some(p.rent_usd_per_gpu_hour);
            me.date = None;
            let mut all: Vec<Throughput> = curve
                .into_iter()
                .map(|mut o| {
                    o.usd_per_gpu_hour = o.usd_per_gpu_hour.or(Some(p.settlement));
                    o.date = None;
                    o
                })
                .collect();
            all.push(me);
            // Every row carries its price: none is priced.
            cost_curves(&all, |_| Err(crate::pricing::PriceError::NoSource))
                .ok()
                .and_then(|pts| {
                    pts.into_iter()
                        .find(|x| x.operator.trim().to_lowercase() == key)
                        .map(|x| x.percentile)
                })
        };
        let (change, rent_effect, throughput_effect, failure_effect) = match out.last() {
            Some(prev) => {
                let (r, th, f) = shapley3(
                    (prev.usd_per_gpu_hour, p.rent_usd_per_gpu_hour),
                    (
                        prev.output_tokens_per_s_per_gpu,
                        t.output_tokens_per_s_per_gpu,
                    ),
                    (prev.success_rate, t.success_rate),
                );
                (cost - prev.usd_per_m_useful_tokens, r, th, f)
            }
            None => (0.0, 0.0, 0.0, 0.0),
        };
        out.push(CostMonth {
            month: p.period_start,
            usd_per_gpu_hour: p.rent_usd_per_gpu_hour,
            output_tokens_per_s_per_gpu: t.output_tokens_per_s_per_gpu,
            success_rate: t.success_rate,
            usd_per_m_useful_tokens: cost,
            change,
            rent_effect,
            throughput_effect,
            failure_effect,
            futures_pnl_usd: p.pnl.futures,
            futures_pnl_per_m_useful_tokens: if useful_m > 0.0 {
                p.pnl.futures / useful_m
            } else {
                0.0
            },
            percentile,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_parts_add_up_exactly_and_are_symmetric() {
        for (r, t, s) in [
            ((5.0, 4.0), (200.0, 300.0), (1.0, 0.9)),
            ((2.0, 2.5), (100.0, 90.0), (0.95, 0.99)),
            ((3.0, 3.0), (150.0, 150.0), (0.8, 0.8)),
        ] {
            let (a, b, c) = shapley3(r, t, s);
            let total =
                usd_per_m_useful_tokens(r.1, t.1, s.1) - usd_per_m_useful_tokens(r.0, t.0, s.0);
            assert!((a + b + c - total).abs() < 1e-9, "{a} {b} {c} {total}");
        }
        // Only the rent changes: everything is rent.
        let (a, b, c) = shapley3((5.0, 4.0), (200.0, 200.0), (1.0, 1.0));
        assert!(
            (a - (usd_per_m_useful_tokens(4.0, 200.0, 1.0)
                - usd_per_m_useful_tokens(5.0, 200.0, 1.0)))
            .abs()
                < 1e-12
        );
        assert_eq!((b, c), (0.0, 0.0));
    }
}
