//! `rentix backtest`.

use crate::cli::BacktestArgs;
use anyhow::Context;
use rentix_backtest::{
    backtest_files, decompose_cost, read_throughput, validate_index_name, write_backtest,
    BacktestConfig, BacktestFiles, BacktestResult, ContractSpec, CostMonth, EntryAssumption,
    PeriodEnd, PerpSpec, Side, Strategy,
};
use rentix_core::stats::fixed;
use rentix_table::{Col, Table};
use std::path::{Path, PathBuf};

/// Validated backtest configuration.
pub(super) struct BacktestPlan {
    pub index: PathBuf,
    pub rent: PathBuf,
    pub period_end: PeriodEnd,
    /// `--side`, for a rent file without a `side` column.
    pub side: Option<Side>,
    pub events: Option<PathBuf>,
    pub config: BacktestConfig,
    /// Settle on today's restated fixings rather than as first published.
    pub as_restated: bool,
    /// `--underlying` or `--contract` was given; otherwise the rent's GPU decides.
    pub underlying_given: bool,
    pub out: PathBuf,
}

/// `--side pay|earn` (clap has checked the spelling).
pub(super) fn side_arg(s: &Option<String>) -> Option<Side> {
    match s.as_deref() {
        Some("pay") => Some(Side::Pay),
        Some("earn") => Some(Side::Earn),
        _ => None,
    }
}

pub(super) fn contract_from(path: &Option<PathBuf>) -> anyhow::Result<ContractSpec> {
    Ok(match path {
        Some(p) => ContractSpec::from_file(p)?,
        None => ContractSpec::default_contract(),
    })
}

impl BacktestPlan {
    pub(super) fn from_args(a: &BacktestArgs) -> anyhow::Result<Self> {
        let mut contract = contract_from(&a.contract)?;
        if let Some(u) = &a.underlying {
            validate_index_name(u)
                .map_err(|e| crate::commands::Usage(format!("--underlying: {e}")))?;
            contract = contract.on_underlying(u);
        }
        if let Some(e) = &a.entry {
            let assumption = match e.as_str() {
                "index" => EntryAssumption::Index,
                "forward" => EntryAssumption::Forward,
                "premium" => EntryAssumption::Premium,
                other => {
                    crate::commands::usage!("--entry {other:?}: expected index, forward or premium")
                }
            };
            // Checked again: `forward` needs the contract's forward grade.
            contract = contract
                .edited(|t| t.entry.assumption = assumption)
                .map_err(|e| {
                    crate::commands::Usage(format!("--entry {}: {e}", assumption.as_str()))
                })?;
        }
        let strategies = if a.strategies.is_empty() {
            Strategy::ALL.to_vec()
        } else {
            let mut v = a
                .strategies
                .iter()
                .map(|s| {
                    s.parse::<Strategy>()
                        .map_err(|e| crate::commands::Usage(e).into())
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            v.sort();
            v.dedup();
            v
        };
        let perp = match &a.perp {
            None => None,
            Some(p) => {
                let mut spec = PerpSpec::from_file(p)?;
                if let Some(premium) = a.perp_premium {
                    spec = spec
                        .with_constant_premium(premium)
                        .map_err(|e| crate::commands::Usage(format!("--perp-premium: {e}")))?;
                }
                Some(spec)
            }
        };
        if a.resamples > 100_000 {
            crate::commands::usage!("--resamples {} is more than 100000", a.resamples);
        }
        Ok(Self {
            index: a.index.clone(),
            rent: a.rent.clone(),
            period_end: a
                .period_end
                .parse()
                .map_err(|e| crate::commands::Usage(format!("--period-end: {e}")))?,
            side: side_arg(&a.side),
            events: a.events.clone(),
            // A contract that applies revisions after expiry settles on today's view.
            as_restated: a.as_restated || !contract.ignore_revisions_after_expiry,
            underlying_given: a.underlying.is_some() || a.contract.is_some(),
            config: BacktestConfig {
                contract,
                strategies,
                bootstrap_resamples: a.resamples,
                seed: a.seed,
                rolling_window: 12,
                perp,
            },
            out: a.out.clone(),
        })
    }
}

/// Loads inputs and runs the backtest.
pub(super) fn execute(plan: &BacktestPlan) -> anyhow::Result<BacktestResult> {
    let r = compute(plan)?;
    write_backtest(&plan.out, &r)?;
    Ok(r)
}

/// The backtest of `plan`, nothing written.
fn compute(plan: &BacktestPlan) -> anyhow::Result<BacktestResult> {
    let files = BacktestFiles {
        index: plan.index.clone(),
        rent: plan.rent.clone(),
        period_end: plan.period_end,
        side: plan.side,
        events: plan.events.clone(),
        as_restated: plan.as_restated,
        underlying_given: plan.underlying_given,
    };
    // The default contract's underlying is not the one a rent is hedged on
    // unless the user gave it: the rent's GPU chooses the grade.
    let r = backtest_files(&files, &plan.config).with_context(|| {
        if plan.underlying_given {
            format!(
                "backtest of {} on {}",
                plan.rent.display(),
                plan.config.contract.underlying
            )
        } else {
            format!("backtest of {}", plan.rent.display())
        }
    })?;
    Ok(r)
}

/// A few lines a person reads first: the decision, then the strategies.
pub(super) fn headline(r: &BacktestResult, out: &Path) -> String {
    let rec = &r.recommendation;
    let mut s = format!("{}\n", rec.reason);
    if let Some(w) = &rec.warning {
        s.push_str(&format!("  warning: {w}\n"));
    }
    s.push_str(&format!(
        "{} ({}), {} monthly periods {}..{}, entry price = {}\n",
        r.underlying,
        r.side.as_str(),
        r.periods,
        r.first_period.map(|d| d.to_string()).unwrap_or_default(),
        r.last_period.map(|d| d.to_string()).unwrap_or_default(),
        r.entry_assumption
    ));
    // Next month's ratio and contracts: the numbers the decision trades, so that the
    // decided row and the first line agree; the mean ratio applied comes after.
    for st in &r.strategies {
        let ci = |i: Option<rentix_backtest::stats::bootstrap::Interval>| {
            // The interval to the point's three decimals: at two, 0.998 was shown
            // as [1.00, 1.00], an interval without its own estimate (a hostile
            // round).
            i.map(|i| format!(" [{}, {}]", fixed(i.low, 3), fixed(i.high, 3)))
                .unwrap_or_default()
        };
        let eff = |e: Option<f64>| e.map_or("n/a".into(), |e| fixed(e, 3));
        let mut effect = format!(
            "{}{}",
            eff(st.effectiveness),
            ci(st.confidence_intervals.effectiveness)
        );
        if let Some(cv) = &st.cross_validated {
            effect = format!(
                "{effect} in sample, {}{} cross-validated",
                eff(cv.effectiveness),
                ci(cv.effectiveness_interval)
            );
        }
        let next = match (st.next_hedge_ratio, st.next_contracts) {
            (Some(h), Some(n)) => format!("next ratio {h:>5.2}  contracts {n:>5}"),
            _ => format!("{:<30}", "no hedge"),
        };
        let decided = if rec.strategy == Some(st.strategy) {
            "*"
        } else {
            " "
        };
        s.push_str(&format!(
            " {decided}{:<20} {next}  (mean ratio applied {:.2})  effectiveness {effect}  fees ${:.0}\n",
            st.strategy.as_str(),
            st.hedge_ratio,
            st.total_fees
        ));
    }
    if let Some(perp) = &r.perp {
        s.push_str(&format!(
            "perp beside the futures, on {} (terms of {}; mark = index + premium {}, funding per {} h): {}\n",
            r.underlying,
            perp.spec.name,
            perp.premium,
            perp.spec.funding_period_hours,
            perp.recommendation.reason
        ));
        if let Some(w) = &perp.recommendation.warning {
            s.push_str(&format!("  warning: {w}\n"));
        }
        // Whole dollars, never "-0".
        let usd = |x: f64| if x.abs() < 0.5 { 0.0 } else { x };
        for (st, fut) in perp.strategies.iter().zip(&r.strategies) {
            s.push_str(&format!(
                "  {:<20} ratio {:>5.2}  effectiveness {} (futures {})  funding ${:.0}  fees ${:.0}\n",
                st.strategy.as_str(),
                st.hedge_ratio,
                st.effectiveness.map_or("n/a".into(), |e| fixed(e, 3)),
                fut.effectiveness.map_or("n/a".into(), |e| fixed(e, 3)),
                usd(st.total_funding_pnl),
                usd(st.total_fees)
            ));
        }
    }
    s.push_str(&operational_loss_line(r));
    if !r.months_left_out.is_empty() {
        s.push_str(&format!(
            "  {} month(s) of the rent left out (summary.json months_left_out), e.g. {}: {}\n",
            r.months_left_out.len(),
            r.months_left_out[0].month.format("%Y-%m"),
            r.months_left_out[0].reason
        ));
    }
    if !r.months_in_review.is_empty() {
        s.push_str(&format!(
            "  {} month(s) settled in review under the contract's coverage rule (summary.json months_in_review), e.g. {}: {}\n",
            r.months_in_review.len(),
            r.months_in_review[0].month.format("%Y-%m"),
            r.months_in_review[0].reason
        ));
    }
    if !r.restated_after_settlement.is_empty() {
        s.push_str(&format!(
            "  {} settled month(s) were restated later; settled as first published (--as-restated for today's view)\n",
            r.restated_after_settlement.len()
        ));
    }
    s.push_str(&format!("wrote {}", out.display()));
    s
}

/// The cost-per-useful-token decomposition of the featured strategy's months:
/// `cost_decomposition.csv` and the percentile chart; returns a line to print.
pub(super) fn cost_decomposition(
    r: &BacktestResult,
    throughput: &Path,
    operator: &str,
    out: &Path,
) -> anyhow::Result<String> {
    let months = cost_months(r, throughput, operator)?;
    write_cost_decomposition(&months, operator, out)
}

/// The decomposition's months, computed before anything is written: a run that
/// cannot decompose (no such operator, two models) leaves no outputs behind.
fn cost_months(
    r: &BacktestResult,
    throughput: &Path,
    operator: &str,
) -> anyhow::Result<Vec<CostMonth>> {
    let rows = read_throughput(throughput)?;
    let featured = r.decided_strategy().map(|s| s.strategy);
    let periods: Vec<_> = r
        .futures_rows()
        .filter(|p| Some(p.strategy) == featured)
        .cloned()
        .collect();
    decompose_cost(&periods, &rows, operator, &r.rent_names)
        .with_context(|| format!("{}", throughput.display()))
}

/// Writes `cost_decomposition.csv` and the percentile chart; returns a line to
/// print.
fn write_cost_decomposition(
    months: &[CostMonth],
    operator: &str,
    out: &Path,
) -> anyhow::Result<String> {
    let f = |g: &dyn Fn(&CostMonth) -> Option<f64>| Col::F64(months.iter().map(g).collect());
    let mut t = Table::new();
    t.push(
        "month",
        Col::Str(months.iter().map(|m| Some(m.month.to_string())).collect()),
    );
    t.push("usd_per_gpu_hour", f(&|m| Some(m.usd_per_gpu_hour)));
    t.push(
        "output_tokens_per_s_per_gpu",
        f(&|m| Some(m.output_tokens_per_s_per_gpu)),
    );
    t.push("success_rate", f(&|m| Some(m.success_rate)));
    t.push(
        "usd_per_m_useful_tokens",
        f(&|m| Some(m.usd_per_m_useful_tokens)),
    );
    t.push("change", f(&|m| Some(m.change)));
    t.push("rent_effect", f(&|m| Some(m.rent_effect)));
    t.push("throughput_effect", f(&|m| Some(m.throughput_effect)));
    t.push("failure_effect", f(&|m| Some(m.failure_effect)));
    t.push("futures_pnl_usd", f(&|m| Some(m.futures_pnl_usd)));
    t.push(
        "futures_pnl_per_m_useful_tokens",
        f(&|m| Some(m.futures_pnl_per_m_useful_tokens)),
    );
    t.push("percentile", f(&|m| m.percentile));
    t.write(&out.join("cost_decomposition.csv"))?;
    let pts: Vec<(chrono::NaiveDate, f64)> = months
        .iter()
        .filter_map(|m| m.percentile.map(|p| (m.month, p)))
        .collect();
    if !pts.is_empty() {
        let line = [rentix_report::Line {
            name: format!("{operator}: percentile on the cost curve"),
            points: pts,
        }];
        let title = "Your place on the cost curve (percent of capacity at or below your cost)";
        rentix_report::save_both(
            &out.join("cost_percentile"),
            |root| rentix_report::line_chart(root, title, "percentile", &line),
            |root| rentix_report::line_chart(root, title, "percentile", &line),
        )?;
    }
    let (Some(first), Some(last)) = (months.first(), months.last()) else {
        return Ok(String::new());
    };
    let sum = |g: &dyn Fn(&CostMonth) -> f64| months.iter().map(g).sum::<f64>();
    Ok(format!(
        "  cost per million useful tokens {:.4} -> {:.4} USD: rent {:+.4} (what the index can hedge), throughput {:+.4}, failures {:+.4}",
        first.usd_per_m_useful_tokens,
        last.usd_per_m_useful_tokens,
        sum(&|m| m.rent_effect),
        sum(&|m| m.throughput_effect),
        sum(&|m| m.failure_effect)
    ))
}

pub(super) fn run(a: BacktestArgs) -> anyhow::Result<()> {
    let plan = BacktestPlan::from_args(&a)?;
    let r = compute(&plan)?;
    // Everything that can fail on the inputs before the first file is written.
    let months = match (&a.throughput, &a.operator) {
        (Some(t), Some(op)) => Some((cost_months(&r, t, op)?, op)),
        _ => None,
    };
    write_backtest(&plan.out, &r)?;
    rentix_report::backtest_charts(&plan.out, &r).context("drawing charts")?;
    outln!("{}", headline(&r, &plan.out));
    if let Some((months, op)) = months {
        outln!("{}", write_cost_decomposition(&months, op, &plan.out)?);
    }
    Ok(())
}

/// The console's operational-loss line: the events' cost, never netted, and what
/// the GPU-hours they made undeliverable did to the decided strategy's hedge.
fn operational_loss_line(r: &BacktestResult) -> String {
    // The decided strategy's figures (the first hedging one without a decision):
    // the first in run order is often `unhedged`, whose volume mismatch is $0.
    let shown = r
        .strategies
        .iter()
        .find(|st| Some(st.strategy) == r.recommendation.strategy)
        .or_else(|| {
            r.strategies
                .iter()
                .find(|st| st.strategy != Strategy::Unhedged)
        })
        .or(r.strategies.first());
    let Some(st) = shown else {
        return String::new();
    };
    let op = &st.operational_loss;
    // The lost hours are not netted, but they change what the hedge offsets: said
    // here, beside the effectiveness they moved.
    let lost = if op.lost_gpu_hours > 0.0 {
        format!(
            "; the {:.0} GPU-hours events made undeliverable left hedged hours without rent to offset: ${:.0} of futures P&L ({}, volume mismatch), inside the hedged P&L and its effectiveness",
            op.lost_gpu_hours,
            // Whole dollars, never "-0".
            if op.volume_mismatch_usd.abs() < 0.5 { 0.0 } else { op.volume_mismatch_usd },
            st.strategy.as_str()
        )
    } else {
        String::new()
    };
    format!(
        "  operational loss (never netted into the hedge): {}{lost}\n",
        op.described(|x| format!("${x:.0}"))
    )
}
