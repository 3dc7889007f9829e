//! The backtest: periods, strategies, P&L, statistics and margin for one rent series
//! against one underlying grade.

use crate::contract::{month_start, ContractSpec, EntryAssumption};
use crate::periods::{build_periods, Period};
use crate::pnl::{decompose, PeriodPnl, PnlInputs};
use crate::rent::{Event, RentSeries};
use crate::stats::basis::{basis_stats, BasisStats};
use crate::stats::bootstrap::{confidence_interval, Interval};
use crate::stats::break_test::{sup_f, BreakTest};
use crate::stats::correlation::correlation;
use crate::stats::dollar_offset::dollar_offset;
use crate::stats::effectiveness::effectiveness;
use crate::stats::hedge_ratio::{contracts, min_variance_hedge_ratio};
use crate::stats::moments::mean;
use crate::stats::regression::{regress, Regression};
use crate::stats::rolling::rolling_effectiveness;
use crate::stats::tracking_error::{tracking_error_annual, Periodicity};
use crate::stats::var::historical_var_cvar;
use crate::strategy::{mean_ratio, ratios, Strategy};
use chrono::{Days, Months, NaiveDate};
use rentix_core::DateSeries;
use serde::Serialize;
use std::collections::BTreeMap;

/// Options of a backtest run.
#[derive(Debug, Clone)]
pub struct BacktestConfig {
    pub contract: ContractSpec,
    pub strategies: Vec<Strategy>,
    pub bootstrap_resamples: usize,
    pub seed: u64,
    /// Rolling-effectiveness window, months.
    pub rolling_window: usize,
}

/// The index series a backtest needs: the underlying and, for the forward entry
/// assumption, the forward grade.
#[derive(Debug, Clone)]
pub struct IndexInputs {
    pub underlying: DateSeries,
    pub forward: Option<DateSeries>,
}

/// One row of `periods.csv`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeriodRow {
    pub strategy: Strategy,
    pub period_start: NaiveDate,
    pub period_end: NaiveDate,
    pub exposure_gpu_hours: f64,
    pub delivered_gpu_hours: f64,
    pub rent_usd_per_gpu_hour: f64,
    pub rent_change: f64,
    pub entry_price: f64,
    pub settlement: f64,
    pub futures_change: f64,
    pub hedge_ratio: f64,
    pub contracts_unrounded: f64,
    pub contracts: i64,
    pub pnl: PeriodPnl,
    pub operational_loss: f64,
}

/// Confidence intervals of the headline statistics.
#[derive(Debug, Clone, Serialize)]
pub struct Intervals {
    pub effectiveness: Option<Interval>,
    pub hedge_ratio: Option<Interval>,
    pub correlation_changes: Option<Interval>,
}

/// Cash the hedge account needs.
#[derive(Debug, Clone, Serialize)]
pub struct Margin {
    /// Largest initial margin posted for one month's position, USD.
    pub initial_margin_max: f64,
    /// Largest cash need in a month: initial margin plus the worst cumulative
    /// variation margin paid before settlement, USD.
    pub peak_cash_need: f64,
    /// Worst single day of variation margin, USD (negative = paid).
    pub worst_day_variation_margin: f64,
}

/// Operational losses, reported apart from the hedge.
#[derive(Debug, Clone, Serialize)]
pub struct OperationalLoss {
    pub total_usd: f64,
    pub by_kind: BTreeMap<String, f64>,
    pub lost_gpu_hours: f64,
    /// Futures P&L on hedged hours that events made undeliverable (inside the hedge
    /// P&L, shown here too because events caused it).
    pub volume_mismatch_usd: f64,
}

/// Sensitivity of the result to the futures entry-price assumption.
#[derive(Debug, Clone, Serialize)]
pub struct EntrySensitivity {
    pub assumption: String,
    pub effectiveness: Option<f64>,
    pub mean_futures_pnl: Option<f64>,
    pub periods_on_fallback: usize,
}

/// The summary of one strategy.
#[derive(Debug, Clone, Serialize)]
pub struct StrategySummary {
    pub strategy: Strategy,
    /// Mean hedge ratio applied.
    pub hedge_ratio: f64,
    /// Contracts for the average month's exposure at that ratio.
    pub contracts: i64,
    pub contracts_unrounded: f64,
    pub effectiveness: Option<f64>,
    pub correlation_changes: Option<f64>,
    pub correlation_levels: Option<f64>,
    /// Rent change P&L regressed on minus futures P&L (USD): the hedge-accounting test.
    pub regression: Option<Regression>,
    pub dollar_offset: Option<f64>,
    /// Annualized (x sqrt 12) standard deviation of rent change minus futures change,
    /// USD per GPU-hour.
    pub tracking_error: Option<f64>,
    pub basis: Option<BasisStats>,
    pub var_95: Option<f64>,
    pub cvar_95: Option<f64>,
    pub var_99: Option<f64>,
    pub cvar_99: Option<f64>,
    pub unhedged_var_95: Option<f64>,
    pub confidence_intervals: Intervals,
    pub rolling_effectiveness: Vec<Option<f64>>,
    pub break_test: Option<BreakTest>,
    pub total_hedged_pnl: f64,
    pub total_unhedged_pnl: f64,
    pub total_fees: f64,
    pub contracts_rounding_gpu_hours: f64,
    pub margin: Margin,
    pub operational_loss: OperationalLoss,
}

/// Everything a backtest produces.
#[derive(Debug, Clone, Serialize)]
pub struct BacktestResult {
    pub contract: String,
    pub underlying: String,
    pub side: &'static str,
    pub entry_assumption: String,
    pub periods: usize,
    pub first_period: Option<NaiveDate>,
    pub last_period: Option<NaiveDate>,
    /// Price-change statistics independent of the strategy.
    pub min_variance_hedge_ratio: Option<f64>,
    pub price_change_regression: Option<Regression>,
    /// Per strategy, keyed by its name in `summary.json`.
    #[serde(serialize_with = "by_strategy_name")]
    pub strategies: Vec<StrategySummary>,
    pub entry_sensitivity: Vec<EntrySensitivity>,
    #[serde(skip)]
    pub rows: Vec<PeriodRow>,
    #[serde(skip)]
    pub daily: Vec<DailyPoint>,
}

/// Serializes the strategy summaries as an object keyed by strategy name, in run
/// order (`summary.json` reads `strategies["walk-forward"]["effectiveness"]`).
fn by_strategy_name<S: serde::Serializer>(v: &[StrategySummary], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(v.len()))?;
    for st in v {
        m.serialize_entry(st.strategy.as_str(), st)?;
    }
    m.end()
}

/// Daily rent against index, for charts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DailyPoint {
    pub date: NaiveDate,
    pub rent: f64,
    pub index: f64,
    pub basis: f64,
}

fn entry_price(
    contract: &ContractSpec,
    idx: &IndexInputs,
    assumption: EntryAssumption,
    day: NaiveDate,
) -> Option<(f64, bool)> {
    let base = contract.entry_level(&idx.underlying, day)?;
    let (p, fallback) = match assumption {
        EntryAssumption::Index => (base, false),
        EntryAssumption::Premium => (base + contract.entry.premium, false),
        EntryAssumption::Forward => {
            match idx.forward.as_ref().and_then(|f| f.last_on_or_before(day)) {
                Some((d, _)) if (day - d).num_days() <= 7 => (
                    contract
                        .entry_level(idx.forward.as_ref().expect("checked"), day)
                        .unwrap_or(base),
                    false,
                ),
                _ => (base, true),
            }
        }
    };
    Some((contract.to_tick(p), fallback))
}

/// Entry price of period `p` for a strategy: the month-end before, or for layered
/// the mean over the up-to-three month-ends before (bounded by listed months).
fn strategy_entry(
    contract: &ContractSpec,
    idx: &IndexInputs,
    assumption: EntryAssumption,
    strategy: Strategy,
    p: &Period,
) -> (f64, bool) {
    let layers = if strategy == Strategy::Layered {
        3.min(contract.listed_months)
    } else {
        1
    };
    let mut prices = Vec::new();
    let mut fallback = false;
    for k in 1..=layers {
        let day = p.start - Months::new(k - 1) - Days::new(1);
        if let Some((v, f)) = entry_price(contract, idx, assumption, day) {
            prices.push(v);
            fallback |= f;
        }
    }
    match mean(&prices) {
        Some(m) => (contract.to_tick(m), fallback),
        None => (p.index_at_entry, true),
    }
}

/// Daily variation margin of a position of `q` GPU-hours in month `p`, marked to the
/// expected settlement (fixings so far, the latest one for the rest of the month).
fn margin_for(
    contract: &ContractSpec,
    index: &DateSeries,
    p: &Period,
    entry: f64,
    q: f64,
    sign: f64,
) -> (f64, f64) {
    let mut prev = entry;
    let mut cum = 0.0;
    let mut worst_cum = 0.0f64;
    let mut worst_day = 0.0f64;
    let days: Vec<(NaiveDate, f64)> = index.range(p.start..p.end).collect();
    let total_days = (p.end - p.start).num_days() as f64;
    let mut sum = 0.0;
    for (i, (_, v)) in days.iter().enumerate() {
        sum += v;
        let seen = (i + 1) as f64;
        let mark = if i + 1 == days.len() {
            p.settlement
        } else {
            contract.to_tick((sum + v * (total_days - seen).max(0.0)) / total_days.max(seen))
        };
        let vm = -sign * (mark - prev) * q;
        cum += vm;
        worst_cum = worst_cum.min(cum);
        worst_day = worst_day.min(vm);
        prev = mark;
    }
    (-worst_cum, worst_day)
}

/// Whole contracts for hedge ratio `h` on period `p`, and the period's P&L.
fn period_pnl(
    contract: &ContractSpec,
    sign: f64,
    p: &Period,
    dr: f64,
    df: f64,
    h: f64,
    fee: f64,
) -> (i64, PeriodPnl) {
    let n = contracts(h, p.exposure, contract.contract_gpu_hours).max(0);
    let pnl = decompose(PnlInputs {
        sign,
        rent_change: dr,
        futures_change: df,
        exposure: p.exposure,
        lost: p.lost_gpu_hours,
        hedged_gpu_hours: n as f64 * contract.contract_gpu_hours,
        fees: n as f64 * fee,
    });
    (n, pnl)
}

/// Runs every strategy of `cfg` for `rent` against `idx`.
pub fn run(
    rent: &RentSeries,
    events: &[Event],
    idx: &IndexInputs,
    cfg: &BacktestConfig,
) -> Result<BacktestResult, String> {
    let contract = &cfg.contract;
    let all = build_periods(rent, events, &idx.underlying, contract);
    if all.len() < 3 {
        return Err(format!(
            "only {} full month(s) where the rent covers every day and {} settles; a backtest needs at least 3",
            all.len(),
            contract.underlying
        ));
    }
    let sign = rent.side.sign();
    let assumption = contract.entry.assumption;
    // A month's rent change is measured from the rent level when its hedge is put on.
    let pnl_periods = &all[..];
    let dr: Vec<f64> = all.iter().map(|p| p.rent - p.rent_at_entry).collect();
    let levels_rent: Vec<f64> = pnl_periods.iter().map(|p| p.rent).collect();
    let levels_index: Vec<f64> = pnl_periods.iter().map(|p| p.settlement).collect();
    let basis: Vec<f64> = pnl_periods.iter().map(|p| p.rent - p.settlement).collect();

    let mut rows = Vec::new();
    let mut summaries = Vec::new();
    let mut df_index: Vec<f64> = Vec::new();
    for &strategy in &cfg.strategies {
        let entries: Vec<(f64, bool)> = pnl_periods
            .iter()
            .map(|p| strategy_entry(contract, idx, assumption, strategy, p))
            .collect();
        let df: Vec<f64> = pnl_periods
            .iter()
            .zip(&entries)
            .map(|(p, e)| p.settlement - e.0)
            .collect();
        if df_index.is_empty() {
            df_index = df.clone();
        }
        let h = ratios(strategy, &dr, &df);
        let mut pnls = Vec::new();
        let mut fees_total = 0.0;
        let mut rounding = 0.0;
        let mut margin = Margin {
            initial_margin_max: 0.0,
            peak_cash_need: 0.0,
            worst_day_variation_margin: 0.0,
        };
        for (t, p) in pnl_periods.iter().enumerate() {
            let unrounded = h[t] * p.exposure / contract.contract_gpu_hours;
            let (n, pnl) = period_pnl(
                contract,
                sign,
                p,
                dr[t],
                df[t],
                h[t],
                contract.fee_per_contract,
            );
            rounding += (n as f64 - unrounded) * contract.contract_gpu_hours;
            let q = n as f64 * contract.contract_gpu_hours;
            fees_total += pnl.fees;
            if n > 0 {
                let im = contract.initial_margin * entries[t].0 * q;
                let (paid, worst_day) =
                    margin_for(contract, &idx.underlying, p, entries[t].0, q, sign);
                margin.initial_margin_max = margin.initial_margin_max.max(im);
                margin.peak_cash_need = margin.peak_cash_need.max(im + paid);
                margin.worst_day_variation_margin =
                    margin.worst_day_variation_margin.min(worst_day);
            }
            rows.push(PeriodRow {
                strategy,
                period_start: p.start,
                period_end: p.end,
                exposure_gpu_hours: p.exposure,
                delivered_gpu_hours: (p.exposure - p.lost_gpu_hours).max(0.0),
                rent_usd_per_gpu_hour: p.rent,
                rent_change: dr[t],
                entry_price: entries[t].0,
                settlement: p.settlement,
                futures_change: df[t],
                hedge_ratio: h[t],
                contracts_unrounded: unrounded,
                contracts: n,
                pnl,
                operational_loss: p.operational_loss,
            });
            pnls.push(pnl);
        }
        let hedged: Vec<f64> = pnls.iter().map(|p| p.hedged_total).collect();
        let unhedged: Vec<f64> = pnls.iter().map(|p| p.unhedged_total).collect();
        let futures: Vec<f64> = pnls.iter().map(|p| p.futures).collect();
        let item: Vec<f64> = pnls.iter().map(|p| p.rent_change).collect();
        let minus_fut: Vec<f64> = futures.iter().map(|f| -f).collect();
        let mean_exposure =
            mean(&pnl_periods.iter().map(|p| p.exposure).collect::<Vec<_>>()).unwrap_or(0.0);
        let hr = mean_ratio(&h);
        let n_periods = hedged.len();
        let seed = cfg.seed ^ (strategy as u64);
        let ci_eff = confidence_interval(
            n_periods,
            &unhedged,
            cfg.bootstrap_resamples,
            0.95,
            seed,
            |ix| {
                let a: Vec<f64> = ix.iter().map(|&i| hedged[i]).collect();
                let b: Vec<f64> = ix.iter().map(|&i| unhedged[i]).collect();
                effectiveness(&a, &b)
            },
        );
        let ci_hr = confidence_interval(
            n_periods,
            &dr,
            cfg.bootstrap_resamples,
            0.95,
            seed.wrapping_add(1),
            |ix| {
                let a: Vec<f64> = ix.iter().map(|&i| dr[i]).collect();
                let b: Vec<f64> = ix.iter().map(|&i| df[i]).collect();
                min_variance_hedge_ratio(&a, &b)
            },
        );
        let ci_rho = confidence_interval(
            n_periods,
            &dr,
            cfg.bootstrap_resamples,
            0.95,
            seed.wrapping_add(2),
            |ix| {
                let a: Vec<f64> = ix.iter().map(|&i| dr[i]).collect();
                let b: Vec<f64> = ix.iter().map(|&i| df[i]).collect();
                correlation(&a, &b)
            },
        );
        let var95 = historical_var_cvar(&hedged, 0.95);
        let var99 = historical_var_cvar(&hedged, 0.99);
        let mut by_kind: BTreeMap<String, f64> = BTreeMap::new();
        for p in pnl_periods {
            for (k, v) in &p.loss_by_kind {
                *by_kind.entry(k.clone()).or_default() += v;
            }
        }
        summaries.push(StrategySummary {
            strategy,
            hedge_ratio: hr,
            contracts: contracts(hr, mean_exposure, contract.contract_gpu_hours),
            contracts_unrounded: hr * mean_exposure / contract.contract_gpu_hours,
            effectiveness: if strategy == Strategy::Unhedged {
                Some(0.0)
            } else {
                effectiveness(&hedged, &unhedged)
            },
            correlation_changes: correlation(&dr, &df),
            correlation_levels: correlation(&levels_rent, &levels_index),
            regression: if strategy == Strategy::Unhedged {
                None
            } else {
                regress(&item, &minus_fut)
            },
            dollar_offset: if strategy == Strategy::Unhedged {
                None
            } else {
                dollar_offset(&futures, &item)
            },
            tracking_error: tracking_error_annual(&dr, &df, Periodicity::Monthly),
            basis: basis_stats(&basis),
            var_95: var95.map(|v| v.0),
            cvar_95: var95.map(|v| v.1),
            var_99: var99.map(|v| v.0),
            cvar_99: var99.map(|v| v.1),
            unhedged_var_95: historical_var_cvar(&unhedged, 0.95).map(|v| v.0),
            confidence_intervals: Intervals {
                effectiveness: if strategy == Strategy::Unhedged {
                    None
                } else {
                    ci_eff
                },
                hedge_ratio: ci_hr,
                correlation_changes: ci_rho,
            },
            rolling_effectiveness: if strategy == Strategy::Unhedged {
                Vec::new()
            } else {
                rolling_effectiveness(&hedged, &unhedged, cfg.rolling_window)
            },
            break_test: sup_f(&dr, &df),
            total_hedged_pnl: hedged.iter().sum(),
            total_unhedged_pnl: unhedged.iter().sum(),
            total_fees: fees_total,
            contracts_rounding_gpu_hours: rounding,
            margin,
            operational_loss: OperationalLoss {
                total_usd: pnl_periods.iter().map(|p| p.operational_loss).sum(),
                by_kind,
                lost_gpu_hours: pnl_periods.iter().map(|p| p.lost_gpu_hours).sum(),
                volume_mismatch_usd: pnls.iter().map(|p| p.volume_mismatch).sum(),
            },
        });
    }

    // How much the answer depends on the entry assumption: one-to-one under each.
    let entry_sensitivity = EntryAssumption::ALL
        .iter()
        .map(|&a| {
            let mut fallback = 0;
            let df: Vec<f64> = pnl_periods
                .iter()
                .map(|p| {
                    let (e, f) = strategy_entry(contract, idx, a, Strategy::OneToOne, p);
                    fallback += usize::from(f);
                    p.settlement - e
                })
                .collect();
            let pnls: Vec<PeriodPnl> = pnl_periods
                .iter()
                .enumerate()
                .map(|(t, p)| period_pnl(contract, sign, p, dr[t], df[t], 1.0, 0.0).1)
                .collect();
            let hedged: Vec<f64> = pnls.iter().map(|p| p.hedged_total).collect();
            let unhedged: Vec<f64> = pnls.iter().map(|p| p.unhedged_total).collect();
            let fut: Vec<f64> = hedged.iter().zip(&unhedged).map(|(h, u)| h - u).collect();
            EntrySensitivity {
                assumption: a.as_str().into(),
                effectiveness: effectiveness(&hedged, &unhedged),
                mean_futures_pnl: mean(&fut),
                periods_on_fallback: fallback,
            }
        })
        .collect();

    let daily_rent = rent.daily();
    let daily = daily_rent
        .iter()
        .filter_map(|(d, (r, _))| {
            let i = idx.underlying.get(*d)?;
            Some(DailyPoint {
                date: *d,
                rent: *r,
                index: i,
                basis: r - i,
            })
        })
        .collect();

    Ok(BacktestResult {
        contract: contract.name.clone(),
        underlying: contract.underlying.clone(),
        side: rent.side.as_str(),
        entry_assumption: assumption.as_str().into(),
        periods: pnl_periods.len(),
        first_period: pnl_periods.first().map(|p| p.start),
        last_period: pnl_periods.last().map(|p| month_start(p.start)),
        min_variance_hedge_ratio: min_variance_hedge_ratio(&dr, &df_index),
        price_change_regression: regress(&dr, &df_index),
        strategies: summaries,
        entry_sensitivity,
        rows,
        daily,
    })
}
