//! The cost of useful output: what a GPU-hour buys once the operator's throughput and
//! failures are counted. "A GPU falls to the level of the operator": at the same
//! hourly rent, one serving stack's output tokens per second per GPU can be 1.5 times
//! another's, so its rent per token is 1/1.5 of the other's.
//!
//! `usd_per_m_useful_tokens = usd_per_gpu_hour / (output_tokens_per_s_per_gpu x 3600
//! x success_rate) x 1e6`: rent per million output tokens that were delivered
//! successfully (the practical proxy for cost per successfully completed task).
//! Operators serving the same model on the same date form a cost curve: sorted by
//! that cost, each occupies its capacity (GPUs); `percentile` is the share of the
//! curve's capacity at or below the operator's cost, in percent. Position on the curve
//! is relative: an operator that gets cheaper can still fall behind one that got
//! cheaper faster.
//!
//! Reference: O. Kennon (SemiAnalysis), "Same GPU, 50% More Output: Why the Operator
//! Matters" (talk, 2025).

use crate::error::BacktestError;
use chrono::NaiveDate;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// One row of a throughput file: an operator serving a model on GPUs of a grade.
#[derive(Debug, Clone, PartialEq)]
pub struct Throughput {
    /// The operator's name, as the file writes it.
    pub operator: String,
    /// Canonical GPU id, resolved through the GPU catalog (a row without a price is
    /// priced at the grade `gpu/scope/on-demand`).
    pub gpu: String,
    /// Canonical service scope.
    pub scope: String,
    /// The model served: operators of one model on one date form a cost curve.
    pub model: String,
    /// The workload measured: input tokens per request (checked, 0 to 1e9; no cost
    /// depends on it).
    pub input_tokens: f64,
    /// Output tokens per request of the workload (checked; no cost depends on it).
    pub output_tokens: f64,
    /// The workload's target output speed per user, tokens per second (checked; no cost
    /// depends on it).
    pub target_tokens_per_s_per_user: f64,
    /// Output tokens per second per GPU the operator's stack achieves, above 0.
    pub output_tokens_per_s_per_gpu: f64,
    /// Share of requests that complete, above 0 and at most 1.
    pub success_rate: f64,
    /// GPUs the operator serves the model on: its width on the cost curve.
    pub capacity_gpus: f64,
    /// The operator's rent, USD per GPU-hour; `None`: the row is priced by the caller
    /// ([`cost_curves`]' `price`).
    pub usd_per_gpu_hour: Option<f64>,
    /// The date the row holds from (a software release changes throughput); `None`:
    /// undated.
    pub date: Option<NaiveDate>,
    /// 1-based data row in its file.
    pub row: usize,
}

/// One point of a cost curve (`cost_curve.csv`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostPoint {
    /// The operator.
    pub operator: String,
    /// Canonical GPU id.
    pub gpu: String,
    /// Canonical service scope.
    pub scope: String,
    /// The model of the curve.
    pub model: String,
    /// The curve's date; `None` for undated rows.
    pub date: Option<NaiveDate>,
    /// The date of the throughput row in force (`date` when the row is of the
    /// curve's date, earlier when an earlier row still holds); not written.
    #[serde(skip)]
    pub row_date: Option<NaiveDate>,
    /// The rent the point is priced at, USD per GPU-hour.
    pub usd_per_gpu_hour: f64,
    /// Output tokens per second per GPU.
    pub output_tokens_per_s_per_gpu: f64,
    /// Share of requests that complete.
    pub success_rate: f64,
    /// Rent per million useful output tokens, USD: the curve's sort key.
    pub usd_per_m_useful_tokens: f64,
    /// The operator's GPUs.
    pub capacity_gpus: f64,
    /// GPUs of this point, of every cheaper one and of every other at the same cost.
    pub cumulative_capacity_gpus: f64,
    /// Share of the curve's capacity at or below this cost, percent (by operator count
    /// when the curve has no capacity).
    pub percentile: f64,
    /// 1 = cheapest on its curve; operators at one cost share a rank (1, 1, 3).
    pub rank: usize,
    /// Operators on the curve.
    pub operators: usize,
}

/// Rent per million useful output tokens, USD:
/// `usd_per_gpu_hour / (tokens_per_s_per_gpu x 3600 x success_rate) x 1e6`.
pub(crate) fn usd_per_m_useful_tokens(
    usd_per_gpu_hour: f64,
    tokens_per_s_per_gpu: f64,
    success_rate: f64,
) -> f64 {
    usd_per_gpu_hour / (tokens_per_s_per_gpu * 3600.0 * success_rate) * 1e6
}

/// The required columns: all but the optional price and date.
const REQUIRED: &[&str] = rentix_core::THROUGHPUT_COLUMNS.split_at(10).0;

/// Reads a throughput file; `gpu` is resolved through the GPU catalog, every number
/// checked.
pub fn read_throughput(path: &Path) -> Result<Vec<Throughput>, BacktestError> {
    let file = |detail: String| BacktestError::File {
        path: path.to_path_buf(),
        detail,
    };
    let catalog = rentix_core::GpuCatalog::bundled();
    let mut out = Vec::new();
    // (operator, model, gpu, scope, date) -> the data row that gave it first.
    let mut seen: BTreeMap<(String, String, String, String, Option<NaiveDate>), usize> =
        BTreeMap::new();
    for (row, rec) in crate::rent::records(path, REQUIRED)? {
        let get = |name: &str| rec.get(name).cloned().unwrap_or_default();
        let bad = |field: &str, detail: String| BacktestError::Row {
            path: path.to_path_buf(),
            at: row,
            field: field.into(),
            detail,
        };
        let num = |field: &str, lo: f64, hi: f64| -> Result<f64, BacktestError> {
            let v = get(field);
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= lo && *x <= hi)
                .ok_or_else(|| bad(field, format!("{v:?} is not a number in {lo}..={hi}")))
        };
        let opt_num = |field: &str, lo: f64, hi: f64| -> Result<Option<f64>, BacktestError> {
            if get(field).is_empty() {
                Ok(None)
            } else {
                num(field, lo, hi).map(Some)
            }
        };
        let operator = get("operator");
        if operator.is_empty() {
            return Err(bad("operator", "empty".into()));
        }
        let raw_gpu = get("gpu");
        let gpu = catalog
            .resolve(&raw_gpu)
            .map_err(|_| bad("gpu", format!("{raw_gpu:?} is not in the GPU catalog")))?
            .id
            .to_string();
        let scope: rentix_core::ServiceScope = get("scope")
            .parse()
            .map_err(|e: rentix_core::CoreError| bad("scope", e.to_string()))?;
        let date = match get("date").as_str() {
            "" => None,
            d => Some(
                NaiveDate::parse_from_str(d, "%Y-%m-%d")
                    .map_err(|_| bad("date", format!("{d:?} is not a date (YYYY-MM-DD)")))?,
            ),
        };
        let model = get("model");
        if model.is_empty() {
            return Err(bad("model", "empty".into()));
        }
        let key = (
            operator.clone(),
            model.clone(),
            gpu.clone(),
            scope.as_str().to_string(),
            date,
        );
        if let Some(first) = seen.insert(key, row.row) {
            return Err(bad(
                "operator",
                format!(
                    "row {first} already gives {operator}'s {model} on {gpu} {} {}: one row per operator, model, GPU, scope and date (a second would put the operator on the cost curve twice)",
                    scope.as_str(),
                    date.map_or_else(|| "undated".to_string(), |d| format!("on {d}"))
                ),
            ));
        }
        out.push(Throughput {
            operator,
            gpu,
            scope: scope.as_str().to_string(),
            model,
            input_tokens: num("input_tokens", 0.0, 1e9)?,
            output_tokens: num("output_tokens", 0.0, 1e9)?,
            target_tokens_per_s_per_user: num("target_tokens_per_s_per_user", 0.0, 1e6)?,
            output_tokens_per_s_per_gpu: num("output_tokens_per_s_per_gpu", 1e-9, 1e9)?,
            success_rate: num("success_rate", 1e-9, 1.0)?,
            capacity_gpus: num("capacity_gpus", 0.0, 1e9)?,
            usd_per_gpu_hour: opt_num("usd_per_gpu_hour", 1e-9, 1e4)?,
            date,
            row: row.row,
        });
    }
    if out.is_empty() {
        return Err(file("no rows".into()));
    }
    Ok(out)
}

/// Why a cost curve or a cost decomposition could not be made from a throughput
/// file: a finding about its rows, in words naming the operator or the row.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CostError {
    /// A row without `usd_per_gpu_hour` that could not be priced. (The reason is
    /// part of the message, not a chained cause: `{:#}` would print it twice.)
    #[error("row {row} ({operator}){}: {why}", if *others > 0 { format!(" and {others} more row(s)") } else { String::new() })]
    Unpriced {
        /// The row's line in the file: the first in the file that could not be
        /// priced.
        row: usize,
        /// Its operator, as written.
        operator: String,
        /// How many other rows could not be priced.
        others: usize,
        /// Why it could not be priced.
        why: crate::pricing::PriceError,
    },
    /// Rows of one model measure two workloads: their costs per token are not one
    /// curve.
    #[error("{model} is measured under two workloads, {first} and {other}: operators are compared on one workload; give each workload its own model name (llm-70b@20tps)")]
    Workloads {
        /// The model.
        model: String,
        /// Its first row's workload, in words.
        first: String,
        /// A row of another workload, in words.
        other: String,
    },
    /// The user's operator has rows of more than one model: its cost per token
    /// would move between models from month to month.
    #[error("the throughput file has rows of {operator:?} for {models}: the decomposition follows one model; keep one model's rows")]
    ManyModels {
        /// The operator, as the user named it.
        operator: String,
        /// Its models, listed.
        models: String,
    },
    /// The user's operator has no row in the file.
    #[error("the throughput file has no row for operator {0:?}")]
    NoOperator(String),
    /// The user's operator's rows measure another GPU or scope than the rent file
    /// names: their tokens per GPU-hour say nothing of the GPU-hours rented.
    #[error("the throughput file's rows of {operator:?} are {theirs}, the rent is {rent}: throughput measured on one GPU or scope does not describe GPU-hours rented on another; give the operator whose rows measure the rented GPU and scope")]
    NotTheRent {
        /// The operator, as the user named it.
        operator: String,
        /// The GPU and scope of its row that differs, `gpu/scope`.
        theirs: String,
        /// The rent's GPU and scope as its file names them (`gpu/scope`, `gpu`).
        rent: String,
    },
    /// No throughput row of the operator was in force in a backtest month.
    #[error("no throughput of {operator} in force in {month}")]
    NoThroughput {
        /// The operator, as the user named it.
        operator: String,
        /// The month, `YYYY-MM`.
        month: String,
    },
}

/// The cost curves of `rows` (each priced: `price(row)` gives its rent), one per
/// model and date, points sorted by cost then operator. The curve of a date holds
/// every operator's row in force on it (its latest dated row on or before it, else
/// its undated row; one point per operator, GPU and scope), priced on that date:
/// a curve of the operators who happened to publish that day ranked an operator
/// first of one while eleven others' earlier rows still held. A model measured
/// under two workloads (tokens in and out, target speed per user) is refused:
/// costs per token under different workloads are not one curve.
pub fn cost_curves(
    rows: &[Throughput],
    price: impl Fn(&Throughput) -> Result<f64, crate::pricing::PriceError>,
) -> Result<Vec<CostPoint>, CostError> {
    let mut by_model: BTreeMap<&str, Vec<&Throughput>> = BTreeMap::new();
    for r in rows {
        by_model.entry(r.model.as_str()).or_default().push(r);
    }
    let mut out = Vec::new();
    let mut unpriced: Option<(usize, String, crate::pricing::PriceError)> = None;
    let mut failed = std::collections::BTreeSet::new();
    for (model, rs) in by_model {
        one_workload(model, &rs)?;
        let mut dates: Vec<Option<NaiveDate>> =
            rs.iter().filter_map(|r| r.date.map(Some)).collect();
        dates.sort();
        dates.dedup();
        if dates.is_empty() {
            dates.push(None);
        }
        for day in dates {
            let mut in_force: BTreeMap<(&str, &str, &str), &Throughput> = BTreeMap::new();
            for r in rs.iter().filter(|r| r.date.is_none() || r.date <= day) {
                let at = in_force
                    .entry((r.operator.as_str(), r.gpu.as_str(), r.scope.as_str()))
                    .or_insert(r);
                if r.date > at.date {
                    *at = r;
                }
            }
            let mut pts = Vec::with_capacity(in_force.len());
            for r in in_force.into_values() {
                let usd = match r.usd_per_gpu_hour {
                    Some(p) => p,
                    None => {
                        let mut on = r.clone();
                        on.date = day.or(r.date);
                        match price(&on) {
                            Ok(p) => p,
                            Err(why) => {
                                // The first row in the file is named, not the
                                // first the curves reach (by model and operator).
                                failed.insert(r.row);
                                if unpriced.as_ref().is_none_or(|(row, _, _)| r.row < *row) {
                                    unpriced = Some((r.row, r.operator.clone(), why));
                                }
                                continue;
                            }
                        }
                    }
                };
                pts.push(CostPoint {
                    operator: r.operator.clone(),
                    gpu: r.gpu.clone(),
                    scope: r.scope.clone(),
                    model: r.model.clone(),
                    date: day,
                    row_date: r.date,
                    usd_per_gpu_hour: usd,
                    output_tokens_per_s_per_gpu: r.output_tokens_per_s_per_gpu,
                    success_rate: r.success_rate,
                    usd_per_m_useful_tokens: usd_per_m_useful_tokens(
                        usd,
                        r.output_tokens_per_s_per_gpu,
                        r.success_rate,
                    ),
                    capacity_gpus: r.capacity_gpus,
                    cumulative_capacity_gpus: 0.0,
                    percentile: 0.0,
                    rank: 0,
                    operators: 0,
                });
            }
            rank(&mut pts);
            out.extend(pts);
        }
    }
    if let Some((row, operator, why)) = unpriced {
        return Err(CostError::Unpriced {
            row,
            operator,
            others: failed.len() - 1,
            why,
        });
    }
    Ok(out)
}

/// Refuses a model whose rows measure two workloads.
fn one_workload(model: &str, rows: &[&Throughput]) -> Result<(), CostError> {
    let workload = |r: &Throughput| {
        (
            r.input_tokens.to_bits(),
            r.output_tokens.to_bits(),
            r.target_tokens_per_s_per_user.to_bits(),
        )
    };
    let Some(first) = rows.first() else {
        return Ok(());
    };
    match rows.iter().find(|r| workload(r) != workload(first)) {
        None => Ok(()),
        Some(other) => {
            let says = |r: &Throughput| {
                format!(
                    "row {} ({}): {} tokens in, {} out, {} tokens/s per user",
                    r.row,
                    r.operator,
                    r.input_tokens,
                    r.output_tokens,
                    r.target_tokens_per_s_per_user
                )
            };
            Err(CostError::Workloads {
                model: model.to_string(),
                first: says(first),
                other: says(other),
            })
        }
    }
}

/// Sorts one curve by cost (then operator) and fills its cumulative capacity,
/// percentiles and ranks.
fn rank(pts: &mut [CostPoint]) {
    pts.sort_by(|a, b| {
        a.usd_per_m_useful_tokens
            .total_cmp(&b.usd_per_m_useful_tokens)
            .then(a.operator.cmp(&b.operator))
    });
    let total: f64 = pts.iter().map(|p| p.capacity_gpus).sum();
    let n = pts.len();
    // Operators at one cost are one step of the curve: each is at the
    // capacity at or below that cost, and ranks after the cheaper ones only.
    let mut cum = 0.0;
    let mut first = 0;
    while first < n {
        let cost = pts[first].usd_per_m_useful_tokens;
        let end = first + pts[first..].partition_point(|p| p.usd_per_m_useful_tokens == cost);
        cum += pts[first..end].iter().map(|p| p.capacity_gpus).sum::<f64>();
        for p in &mut pts[first..end] {
            p.cumulative_capacity_gpus = cum;
            p.percentile = if total > 0.0 {
                100.0 * cum / total
            } else {
                100.0 * end as f64 / n as f64
            };
            p.rank = first + 1;
            p.operators = n;
        }
        first = end;
    }
}

/// How an operator's place on its model's curve moved from its first date to its
/// last: a cost that fell can still lose ground to a competitor that fell faster.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PositionChange {
    /// The operator.
    pub operator: String,
    /// The GPU it runs the model on.
    pub gpu: String,
    /// The scope it sells.
    pub scope: String,
    /// The model whose curves are compared.
    pub model: String,
    /// The operator's first date.
    pub from: NaiveDate,
    /// The operator's last date.
    pub to: NaiveDate,
    /// Cost on `from`, USD per million useful tokens.
    pub cost_from: f64,
    /// Cost on `to`, USD per million useful tokens.
    pub cost_to: f64,
    /// Rank on `from` (1 = cheapest).
    pub rank_from: usize,
    /// Rank on `to`.
    pub rank_to: usize,
    /// Operators on the curve of `from`.
    pub operators_from: usize,
    /// Operators on the curve of `to`.
    pub operators_to: usize,
    /// A sentence a person reads.
    pub reading: String,
}

/// How each operator's cost and rank moved between its first and last dated point
/// on its model's curves, one change per GPU and scope it runs the model on (an
/// operator on an H100 and an H200 was compared from its H200 row to its H100 row,
/// "+66.7%, lost ground", where its H100 went +50% and its H200 -44%: a hostile
/// round); undated points and those with one date of their own are left out: a
/// point whose row is an earlier one still in force is that row again (an offer
/// an operator moved off read "2.5980 -> 2.5980, lost ground").
pub fn position_changes(points: &[CostPoint]) -> Vec<PositionChange> {
    type Key<'a> = (&'a str, &'a str, &'a str, &'a str);
    let mut by: BTreeMap<Key<'_>, Vec<&CostPoint>> = BTreeMap::new();
    for p in points
        .iter()
        .filter(|p| p.date.is_some() && p.row_date == p.date)
    {
        by.entry((
            p.model.as_str(),
            p.operator.as_str(),
            p.gpu.as_str(),
            p.scope.as_str(),
        ))
        .or_default()
        .push(p);
    }
    // An operator on one GPU and scope is named alone; on several, with each.
    let mut offers: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for (model, operator, _, _) in by.keys() {
        *offers.entry((model, operator)).or_default() += 1;
    }
    let mut out = Vec::new();
    for ((model, operator, gpu, scope), mut pts) in by {
        let who = if offers[&(model, operator)] > 1 {
            format!("{operator} on {gpu}/{scope}")
        } else {
            operator.to_string()
        };
        pts.sort_by_key(|p| p.date);
        let (Some(a), Some(b)) = (pts.first(), pts.last()) else {
            continue;
        };
        if a.date == b.date {
            continue;
        }
        let place = |p: &CostPoint| {
            if p.rank == 1 {
                "the cheapest producer".to_string()
            } else if p.rank == p.operators {
                "the most expensive producer".to_string()
            } else {
                format!("number {} of {} by cost", p.rank, p.operators)
            }
        };
        let change = 100.0 * (b.usd_per_m_useful_tokens / a.usd_per_m_useful_tokens - 1.0);
        let verdict = match b.rank.cmp(&a.rank) {
            std::cmp::Ordering::Greater if change < 0.0 => {
                ": its cost fell, but competitors' fell faster"
            }
            std::cmp::Ordering::Greater => ": it lost ground",
            std::cmp::Ordering::Less => ": it gained ground",
            std::cmp::Ordering::Equal => "",
        };
        out.push(PositionChange {
            operator: operator.to_string(),
            gpu: gpu.to_string(),
            scope: scope.to_string(),
            model: model.to_string(),
            from: a.date.unwrap_or_default(),
            to: b.date.unwrap_or_default(),
            cost_from: a.usd_per_m_useful_tokens,
            cost_to: b.usd_per_m_useful_tokens,
            rank_from: a.rank,
            rank_to: b.rank,
            operators_from: a.operators,
            operators_to: b.operators,
            reading: format!(
                "{who} ({model}): {:.4} -> {:.4} USD per million useful tokens ({change:+.1}%); {} on {} and {} on {}{verdict}",
                a.usd_per_m_useful_tokens,
                b.usd_per_m_useful_tokens,
                place(a),
                a.date.unwrap_or_default(),
                place(b),
                b.date.unwrap_or_default(),
            ),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(operator: &str, tokens: f64, capacity: f64) -> Throughput {
        Throughput {
            operator: operator.into(),
            gpu: "h100-sxm-80gb".into(),
            scope: "managed-cluster".into(),
            model: "llm-70b".into(),
            input_tokens: 8000.0,
            output_tokens: 1000.0,
            target_tokens_per_s_per_user: 100.0,
            output_tokens_per_s_per_gpu: tokens,
            success_rate: 1.0,
            capacity_gpus: capacity,
            usd_per_gpu_hour: Some(2.0),
            date: None,
            row: 1,
        }
    }

    #[test]
    fn operators_at_one_cost_share_its_percentile_and_rank() {
        // A (100 GPUs) and B (100 GPUs) at 300 tokens/s, C (200 GPUs) at 200: A and
        // B cost the same, so the capacity at or below either's cost is 200 of 400
        // GPUs: 50% and rank 1 for both (it was 25% and 50%, ranks 1 and 2, by
        // name); C is 100% and rank 3.
        let rows = [
            point("B", 300.0, 100.0),
            point("C", 200.0, 200.0),
            point("A", 300.0, 100.0),
        ];
        let c = cost_curves(&rows, |_| unreachable!()).unwrap();
        let got: Vec<(&str, f64, usize)> = c
            .iter()
            .map(|p| (p.operator.as_str(), p.percentile, p.rank))
            .collect();
        assert_eq!(got, [("A", 50.0, 1), ("B", 50.0, 1), ("C", 100.0, 3)]);
        // Without capacities the operators count one each: 2 of 3 at or below.
        let rows = [
            point("B", 300.0, 0.0),
            point("C", 200.0, 0.0),
            point("A", 300.0, 0.0),
        ];
        let c = cost_curves(&rows, |_| unreachable!()).unwrap();
        let pct: Vec<f64> = c
            .iter()
            .map(|p| (p.percentile * 1e6).round() / 1e6)
            .collect();
        assert_eq!(pct, [66.666667, 66.666667, 100.0]);
    }

    #[test]
    fn a_curve_holds_every_row_in_force_on_its_date() {
        // A hostile run: the sim's neocloud_h200 published alone on 2024-06-01 and
        // was "rank 1 of 1, the cheapest producer", though eleven operators' rows
        // of 2024-04-01 still held. Here A and B publish on April 1 (A at 300
        // tokens/s, B at 200), C alone on June 1 at 250: June's curve is A (still
        // in force), C, B; April's holds A and B only.
        let on = |mut t: Throughput, d: &str| {
            t.date = Some(NaiveDate::parse_from_str(d, "%Y-%m-%d").unwrap());
            t
        };
        let rows = [
            on(point("A", 300.0, 100.0), "2024-04-01"),
            on(point("B", 200.0, 100.0), "2024-04-01"),
            on(point("C", 250.0, 100.0), "2024-06-01"),
        ];
        let c = cost_curves(&rows, |_| unreachable!()).unwrap();
        let got: Vec<(String, &str, usize, usize)> = c
            .iter()
            .map(|p| {
                (
                    p.date.unwrap().to_string(),
                    p.operator.as_str(),
                    p.rank,
                    p.operators,
                )
            })
            .collect();
        let want = [
            ("2024-04-01", "A", 1, 2),
            ("2024-04-01", "B", 2, 2),
            ("2024-06-01", "A", 1, 3),
            ("2024-06-01", "C", 2, 3),
            ("2024-06-01", "B", 3, 3),
        ];
        assert_eq!(got.len(), want.len(), "{got:?}");
        for (g, w) in got.iter().zip(want) {
            assert_eq!((g.0.as_str(), g.1, g.2, g.3), w);
        }
    }

    #[test]
    fn a_model_under_two_workloads_is_refused() {
        // 8000 tokens in and 1000 out at 100 tokens/s per user against 20 tokens/s
        // per user: costs per token under different service levels ranked as one.
        let mut slow = point("B", 300.0, 100.0);
        slow.target_tokens_per_s_per_user = 20.0;
        slow.row = 2;
        let e = cost_curves(&[point("A", 200.0, 100.0), slow], |_| unreachable!())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("llm-70b is measured under two workloads, row 1 (A): 8000 tokens in, 1000 out, 100 tokens/s per user and row 2 (B): 8000 tokens in, 1000 out, 20 tokens/s per user"),
            "{e}"
        );
    }

    #[test]
    fn the_talks_b200_example() {
        // Same rent 5.00 USD per GPU-hour, 200 vs 300 output tokens/s per GPU.
        let a = usd_per_m_useful_tokens(5.0, 200.0, 1.0);
        let b = usd_per_m_useful_tokens(5.0, 300.0, 1.0);
        assert!(
            (a - 6.944_444).abs() < 1e-4 && (b - 4.629_630).abs() < 1e-4,
            "{a} {b}"
        );
        assert!((a / b - 1.5).abs() < 1e-12);
        // Half the requests failing doubles the cost of what is useful.
        assert!((usd_per_m_useful_tokens(5.0, 300.0, 0.5) - 2.0 * b).abs() < 1e-9);
    }
}
