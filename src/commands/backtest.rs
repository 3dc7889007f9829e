//! `rentix backtest`.

use crate::cli::BacktestArgs;
use anyhow::{bail, Context};
use rentix_backtest::{
    read_events, run as run_backtest, series_by_grade, write_backtest, BacktestConfig,
    BacktestResult, ContractSpec, EntryAssumption, IndexInputs, RentSeries, Strategy,
};
use rentix_core::Grade;
use rentix_index::read_fixings;
use std::path::{Path, PathBuf};

/// Validated backtest configuration.
pub struct BacktestPlan {
    pub index: PathBuf,
    pub rent: PathBuf,
    pub events: Option<PathBuf>,
    pub config: BacktestConfig,
    pub out: PathBuf,
}

pub fn contract_from(path: &Option<PathBuf>) -> anyhow::Result<ContractSpec> {
    Ok(match path {
        Some(p) => ContractSpec::from_file(p)?,
        None => ContractSpec::default_contract(),
    })
}

impl BacktestPlan {
    pub fn from_args(a: &BacktestArgs) -> anyhow::Result<Self> {
        let mut contract = contract_from(&a.contract)?;
        if let Some(u) = &a.underlying {
            u.parse::<Grade>()
                .with_context(|| format!("--underlying {u:?}"))?;
            contract.underlying = u.clone();
        }
        if let Some(e) = &a.entry {
            contract.entry.assumption = match e.as_str() {
                "index" => EntryAssumption::Index,
                "forward" => EntryAssumption::Forward,
                "premium" => EntryAssumption::Premium,
                other => bail!("--entry {other:?}: expected index, forward or premium"),
            };
        }
        contract
            .validate()
            .map_err(anyhow::Error::msg)
            .context("contract")?;
        let strategies = if a.strategies.is_empty() {
            Strategy::ALL.to_vec()
        } else {
            let mut v = a
                .strategies
                .iter()
                .map(|s| s.parse::<Strategy>().map_err(anyhow::Error::msg))
                .collect::<anyhow::Result<Vec<_>>>()?;
            v.sort();
            v.dedup();
            v
        };
        if a.resamples > 100_000 {
            bail!("--resamples {} is more than 100000", a.resamples);
        }
        Ok(Self {
            index: a.index.clone(),
            rent: a.rent.clone(),
            events: a.events.clone(),
            config: BacktestConfig {
                contract,
                strategies,
                bootstrap_resamples: a.resamples,
                seed: a.seed,
                rolling_window: 12,
            },
            out: a.out.clone(),
        })
    }
}

/// Loads inputs and runs the backtest.
pub fn execute(plan: &BacktestPlan) -> anyhow::Result<BacktestResult> {
    let fixings = read_fixings(&plan.index)?;
    let series = series_by_grade(&fixings);
    let c = &plan.config.contract;
    let underlying = series
        .get(&c.underlying)
        .map(|s| s.0.clone())
        .with_context(|| {
            format!(
                "{} has no fixing with a value for {}",
                plan.index.display(),
                c.underlying
            )
        })?;
    let forward = c
        .entry
        .forward_grade
        .as_ref()
        .and_then(|g| series.get(g))
        .map(|s| s.0.clone());
    let rent = RentSeries::from_csv(&plan.rent)?;
    let events = match &plan.events {
        Some(p) => read_events(p)?,
        None => Vec::new(),
    };
    let r = run_backtest(
        &rent,
        &events,
        &IndexInputs {
            underlying,
            forward,
        },
        &plan.config,
    )
    .map_err(anyhow::Error::msg)
    .with_context(|| format!("backtest of {} on {}", plan.rent.display(), c.underlying))?;
    write_backtest(&plan.out, &r)?;
    Ok(r)
}

/// A few lines a person reads first.
pub fn headline(r: &BacktestResult, out: &Path) -> String {
    let mut s = format!(
        "{} ({}), {} monthly periods {}..{}, entry price = {}\n",
        r.underlying,
        r.side,
        r.periods,
        r.first_period.map(|d| d.to_string()).unwrap_or_default(),
        r.last_period.map(|d| d.to_string()).unwrap_or_default(),
        r.entry_assumption
    );
    for st in &r.strategies {
        let ci = st
            .confidence_intervals
            .effectiveness
            .map(|i| format!(" [{:.2}, {:.2}]", i.low, i.high))
            .unwrap_or_default();
        s.push_str(&format!(
            "  {:<20} ratio {:>5.2}  contracts {:>5}  effectiveness {}{}\n",
            st.strategy.as_str(),
            st.hedge_ratio,
            st.contracts,
            st.effectiveness.map_or("n/a".into(), |e| format!("{e:.3}")),
            ci
        ));
    }
    if let Some(st) = r.strategies.first() {
        s.push_str(&format!(
            "  operational loss (never netted into the hedge): ${:.0}\n",
            st.operational_loss.total_usd
        ));
    }
    s.push_str(&format!("wrote {}", out.display()));
    s
}

pub fn run(a: BacktestArgs) -> anyhow::Result<()> {
    let plan = BacktestPlan::from_args(&a)?;
    let r = execute(&plan)?;
    rentix_report::backtest_charts(&plan.out, &r)
        .map_err(anyhow::Error::msg)
        .context("drawing charts")?;
    outln!("{}", headline(&r, &plan.out));
    Ok(())
}
