//! One candidate evaluated over the store's history: sufficiency, manipulation cost,
//! representativeness, hedger utility and economics.

use crate::candidate::Candidate;
use crate::comparison::{CandidateRow, MonthRow};
use crate::error::LabError;
use crate::hedgers::{hedge_all, Hedger, HedgerResult};
use crate::manipulation::{attack_month, median_found, Found, MonthAttack};
use crate::market::{Change, GradeMarket};
use crate::stats::{median, quantile, sample_std};
use chrono::NaiveDate;
use rayon::prelude::*;
use rentix_backtest::{ContractSpec, Settlement, Underlying};
use rentix_core::{DateSeries, GradePattern};
use rentix_index::{group_by_grade, Fixing, FixingLevel, IndexRequest};
use rentix_store::StoredObservation;
use std::collections::BTreeMap;

/// Settings shared by every candidate.
#[derive(Debug, Clone)]
pub struct LabOptions {
    /// The manipulator's price, percent above the honest settlement.
    pub attack_price_pct: f64,
    /// First day evaluated (`--from`); `None`: from the start of the history.
    pub from: Option<NaiveDate>,
    /// Last day evaluated (`--to`, inclusive); `None`: to its end.
    pub to: Option<NaiveDate>,
}

impl LabOptions {
    /// Refuses settings no run could mean: an attack price outside (0, 100] percent,
    /// a range that ends before it starts.
    pub fn check(&self) -> Result<(), LabError> {
        let p = self.attack_price_pct;
        if !(p.is_finite() && p > 0.0 && p <= 100.0) {
            return Err(LabError::Settings(format!(
                "--attack-price-pct {p} must be above 0 and at most 100"
            )));
        }
        if let (Some(f), Some(t)) = (self.from, self.to) {
            if f > t {
                return Err(LabError::Settings(format!("--from {f} is after --to {t}")));
            }
        }
        Ok(())
    }
}

impl Default for LabOptions {
    fn default() -> Self {
        Self {
            attack_price_pct: 10.0,
            from: None,
            to: None,
        }
    }
}

/// Everything measured for one candidate.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Evaluation {
    /// The candidate's row of `comparison.csv`.
    pub row: CandidateRow,
    /// Its rows of `by_month.csv`, in month order.
    pub months: Vec<MonthRow>,
    /// Each hedger's result on its contract, in the order of the hedgers given.
    pub hedgers: Vec<HedgerResult>,
}

fn settlement_label(c: &rentix_backtest::ContractSpec) -> String {
    match c.settlement {
        Settlement::MonthlyAverage => format!("monthly-average ({} days)", c.settlement_days),
        Settlement::Final => format!("final ({} days)", c.settlement_days),
        Settlement::LastNAverage => {
            format!("last-{}-average ({} days)", c.last_n, c.settlement_days)
        }
    }
}

/// The truth key of a grade: its GPU, scope and term (a tier floor or region
/// dropped: the simulator's fair price is per base grade).
fn truth_key(grade: &str) -> String {
    let base: Vec<&str> = grade.split('/').take(3).collect();
    let base = base.join("/");
    base.split('@').next().unwrap_or(&base).to_string()
}

/// Level shares of fixings: trades, firm, listings, carried, no value.
fn level_shares(fixings: &[&Fixing]) -> [f64; 5] {
    let mut c = [0usize; 5];
    for f in fixings {
        let k = match f.level {
            Some(FixingLevel::Trades) => 0,
            Some(FixingLevel::Firm) => 1,
            Some(FixingLevel::Listings) => 2,
            Some(FixingLevel::Carried) => 3,
            None => 4,
        };
        c[k] += 1;
    }
    let n = fixings.len().max(1) as f64;
    c.map(|x| x as f64 / n)
}

fn fixed<'a>(fixings: &'a [&'a Fixing]) -> impl Iterator<Item = &'a Fixing> + Clone + 'a {
    fixings
        .iter()
        .copied()
        .filter(|f| f.value.is_some() && f.level.is_some_and(FixingLevel::is_fixed))
}

fn median_of(v: impl Iterator<Item = f64>) -> Option<f64> {
    median(&v.collect::<Vec<_>>())
}

/// The candidate's row before anything is measured.
fn empty_row(cand: &Candidate, grade: &str, opts: &LabOptions) -> CandidateRow {
    let contract = &cand.contract;
    CandidateRow {
        candidate: cand.name.clone(),
        methodology_version: cand.methodology.version.clone(),
        contract: contract.name.clone(),
        underlying: grade.to_string(),
        settlement: settlement_label(contract),
        note: String::new(),
        fixing_days: 0,
        share_trades: 0.0,
        share_firm: 0.0,
        share_listings: 0.0,
        share_carried: 0.0,
        share_no_value: 0.0,
        carried_days: 0,
        months: 0,
        months_settled: 0,
        months_not_settled: 0,
        months_missing_a_settlement_day: 0,
        coverage_rule_settled: 0,
        coverage_rule_review: 0,
        coverage_rule_determination: 0,
        median_contributors: None,
        median_max_contributor_share: None,
        max_max_contributor_share: None,
        median_hhi: None,
        attack_price_pct: opts.attack_price_pct,
        fake_share_to_move_tick: None,
        fake_share_to_move_1pct: None,
        fake_share_to_move_5pct: None,
        unmovable_months_1pct: 0,
        unmovable_months_5pct: 0,
        fake_listings_to_move_1pct: None,
        fake_listings_to_move_5pct: None,
        max_move_pct_fake_trades: None,
        max_move_pct_fake_listings: None,
        withholding_move_pct: None,
        withholding_unsettles_months: 0,
        slice_mismatch_months: 0,
        truth_mae_usd: None,
        truth_mae_ticks: None,
        median_distance_from_obs_median_pct: None,
        share_months_in_obs_iqr: None,
        hedgers: 0,
        effectiveness_median: None,
        effectiveness_p25: None,
        effectiveness_p75: None,
        settlement_vol_monthly: None,
        settlement_vol_annual: None,
        median_settlement: None,
        tick_value_usd: contract.tick * contract.contract_gpu_hours,
        contract_value_usd: None,
    }
}

/// Evaluates one candidate on the store's rows.
pub fn evaluate(
    rows: &[StoredObservation],
    cand: &Candidate,
    truth: Option<&BTreeMap<String, DateSeries>>,
    hedgers: &[Hedger],
    opts: &LabOptions,
) -> Result<Evaluation, LabError> {
    let m = &cand.methodology;
    let contract = &cand.contract;
    let grade = contract.underlying.clone();
    let refused = |detail: String| LabError::Evaluate {
        candidate: cand.name.clone(),
        detail,
    };
    let pattern = GradePattern::new(&grade).map_err(|e| {
        refused(format!(
            "the lab evaluates contracts on a grade, and {grade:?} is not one ({e})"
        ))
    })?;
    let req = IndexRequest {
        methodology: m.clone(),
        grade_filters: vec![pattern],
        from: None,
        to: None,
    };
    let clock = m.cutoff_clock();
    let obs = group_by_grade(rows, &req, &clock)
        .map_err(|e| refused(e.to_string()))?
        .grades
        .remove(&grade)
        .unwrap_or_default();
    let mut row = empty_row(cand, &grade, opts);
    if obs.is_empty() {
        row.note = format!(
            "no observation of {grade} in the store under methodology {} (a tier grade needs the floor in the methodology's tier_floors)",
            m.version
        );
        return Ok(Evaluation {
            row,
            months: Vec::new(),
            hedgers: Vec::new(),
        });
    }
    // The store's last fixing date: `rentix index` publishes through it.
    let data_end = rows.iter().map(|r| r.obs.fixing_date).max();
    let market = GradeMarket::new(&grade, obs, m, contract, data_end);
    let history = market.history();
    let Some(full) = market.underlying(&history) else {
        row.note = format!("{grade} has no fixing with a value");
        return Ok(Evaluation {
            row,
            months: Vec::new(),
            hedgers: Vec::new(),
        });
    };
    let in_range =
        |d: NaiveDate| opts.from.is_none_or(|f| d >= f) && opts.to.is_none_or(|t| d <= t);
    let months: Vec<NaiveDate> = market
        .months()
        .into_iter()
        .filter(|mo| in_range(*mo) || in_range(GradeMarket::month_end(*mo)))
        .collect();

    // Sufficiency over the history (within the range).
    let all: Vec<&Fixing> = history.iter().filter(|f| in_range(f.date)).collect();
    sufficiency(&mut row, &all);

    // Month by month: settlement, attacks, withholding, truth and the observations.
    let truth_u: Option<Underlying> = truth
        .and_then(|t| t.get(&truth_key(&grade)))
        .map(|s| Underlying::from_series(&grade, s.clone()));
    let month_rows: Vec<(MonthRow, bool)> = months
        .par_iter()
        .map(|&month| {
            let ctx = MonthContext {
                cand,
                market: &market,
                history: &history,
                full: &full,
                truth: truth_u.as_ref(),
                attack_price_pct: opts.attack_price_pct,
            };
            ctx.row(month)
        })
        .collect();
    row.slice_mismatch_months = month_rows.iter().filter(|(_, m)| *m).count();
    let month_rows: Vec<MonthRow> = month_rows.into_iter().map(|(r, _)| r).collect();
    let settled: Vec<&MonthRow> = month_rows
        .iter()
        .filter(|r| r.settlement.is_some())
        .collect();
    row.months = month_rows.len();
    row.months_settled = settled.len();
    row.months_not_settled = row.months - row.months_settled;
    coverage_counts(&mut row, contract, &full, &months);
    attack_summary(&mut row, &settled);
    representativeness(&mut row, &settled, contract);
    let hedger_results = hedge_all(hedgers, &full, contract);
    hedger_utility(&mut row, &hedger_results);
    economics(&mut row, &month_rows, &settled, contract);
    if row.slice_mismatch_months > 0 {
        row.note = format!(
            "{} months' settlement recomputed over their slice of history differs from the full run: their attack figures are approximate",
            row.slice_mismatch_months
        );
    }
    Ok(Evaluation {
        row,
        months: month_rows,
        hedgers: hedger_results,
    })
}

/// Level shares, carried days, contributors and concentration over the fixings.
fn sufficiency(row: &mut CandidateRow, all: &[&Fixing]) {
    let shares = level_shares(all);
    row.fixing_days = all.len();
    [
        row.share_trades,
        row.share_firm,
        row.share_listings,
        row.share_carried,
        row.share_no_value,
    ] = shares;
    row.carried_days = all
        .iter()
        .filter(|f| f.level == Some(FixingLevel::Carried))
        .count();
    row.median_contributors = median_of(fixed(all).map(|f| f.n_contributors as f64));
    row.median_max_contributor_share =
        median_of(fixed(all).filter_map(|f| f.max_contributor_share));
    row.max_max_contributor_share = fixed(all)
        .filter_map(|f| f.max_contributor_share)
        .reduce(f64::max);
    row.median_hhi = median_of(fixed(all).filter_map(|f| f.contributor_hhi));
}

/// What one month's row is computed from.
struct MonthContext<'a> {
    cand: &'a Candidate,
    market: &'a GradeMarket<'a>,
    history: &'a [Fixing],
    full: &'a Underlying,
    truth: Option<&'a Underlying>,
    attack_price_pct: f64,
}

impl MonthContext<'_> {
    /// The month's settlement, attacks, withholding, truth and observations, and
    /// whether the settlement recomputed over the month's slice of history differs
    /// from the full run's.
    fn row(&self, month: NaiveDate) -> (MonthRow, bool) {
        let contract = &self.cand.contract;
        let end = GradeMarket::month_end(month);
        let in_month: Vec<&Fixing> = self
            .history
            .iter()
            .filter(|f| f.date >= month && f.date <= end)
            .collect();
        let sh = level_shares(&in_month);
        let settled = contract.settle(self.full, month);
        let mut mismatch = false;
        let attack: Option<MonthAttack> = match &settled {
            Ok(v) => match self.market.settle(month, Change::None) {
                Ok(base) => {
                    mismatch = (base.value - v).abs() > 1e-9;
                    Some(attack_month(
                        self.market,
                        month,
                        &base,
                        self.attack_price_pct,
                    ))
                }
                Err(_) => {
                    mismatch = true;
                    None
                }
            },
            Err(_) => None,
        };
        let prices: Vec<f64> = self
            .market
            .slice(month)
            .iter()
            .filter(|o| o.day >= month && o.day <= end)
            .map(|o| o.price)
            .collect();
        let undefined = [Found::Undefined; 3];
        let a = attack.as_ref();
        let row = MonthRow {
            candidate: self.cand.name.clone(),
            month,
            settlement: settled.as_ref().ok().copied(),
            not_settled: settled
                .as_ref()
                .err()
                .map(ToString::to_string)
                .unwrap_or_default(),
            fixing_days: in_month.len(),
            share_trades: sh[0],
            share_listings: sh[2],
            share_carried: sh[3],
            median_contributors: median_of(fixed(&in_month).map(|f| f.n_contributors as f64)),
            max_contributor_share: fixed(&in_month)
                .filter_map(|f| f.max_contributor_share)
                .reduce(f64::max),
            median_hhi: median_of(fixed(&in_month).filter_map(|f| f.contributor_hhi)),
            fake_share: a.map_or(undefined, |a| a.fake_share),
            fake_listings: a.map_or(undefined, |a| a.fake_listings),
            max_move_pct_trades: a.and_then(|a| a.max_move_pct_trades),
            max_move_pct_listings: a.and_then(|a| a.max_move_pct_listings),
            withholder_share: a.and_then(|a| a.withholder_share),
            withholding_move_pct: a.and_then(|a| a.withholding_move_pct),
            withholding_unsettles: a.is_some_and(|a| a.withholding_unsettles),
            truth_settlement: self.truth.and_then(|t| contract.settle(t, month).ok()),
            obs_median: median(&prices),
            obs_p25: quantile(&prices, 0.25),
            obs_p75: quantile(&prices, 0.75),
        };
        (row, mismatch)
    }
}

/// The fake volume or listings that move the median settled month, and what
/// withholding does.
fn attack_summary(row: &mut CandidateRow, settled: &[&MonthRow]) {
    let pick = |k: usize| median_found(settled.iter().map(|r| r.fake_share[k]));
    row.fake_share_to_move_tick = pick(0).0;
    (row.fake_share_to_move_1pct, row.unmovable_months_1pct) = pick(1);
    (row.fake_share_to_move_5pct, row.unmovable_months_5pct) = pick(2);
    row.fake_listings_to_move_1pct = median_found(settled.iter().map(|r| r.fake_listings[1])).0;
    row.fake_listings_to_move_5pct = median_found(settled.iter().map(|r| r.fake_listings[2])).0;
    row.max_move_pct_fake_trades = median_of(settled.iter().filter_map(|r| r.max_move_pct_trades));
    row.max_move_pct_fake_listings =
        median_of(settled.iter().filter_map(|r| r.max_move_pct_listings));
    row.withholding_move_pct = median_of(settled.iter().filter_map(|r| r.withholding_move_pct));
    row.withholding_unsettles_months = settled.iter().filter(|r| r.withholding_unsettles).count();
}

/// How close settlements sit to the truth and to the month's observations.
fn representativeness(row: &mut CandidateRow, settled: &[&MonthRow], contract: &ContractSpec) {
    let errors: Vec<f64> = settled
        .iter()
        .filter_map(|r| Some((r.settlement? - r.truth_settlement?).abs()))
        .collect();
    if !errors.is_empty() {
        let mae = errors.iter().sum::<f64>() / errors.len() as f64;
        row.truth_mae_usd = Some(mae);
        row.truth_mae_ticks = Some(mae / contract.tick);
    }
    let dist: Vec<f64> = settled
        .iter()
        .filter_map(|r| Some(100.0 * (r.settlement? - r.obs_median?) / r.obs_median?))
        .collect();
    row.median_distance_from_obs_median_pct = median(&dist);
    let iqr: Vec<bool> = settled
        .iter()
        .filter_map(|r| Some(r.settlement? >= r.obs_p25? && r.settlement? <= r.obs_p75?))
        .collect();
    if !iqr.is_empty() {
        row.share_months_in_obs_iqr =
            Some(iqr.iter().filter(|b| **b).count() as f64 / iqr.len() as f64);
    }
}

/// The hedgers' effectiveness: how many, median and quartiles.
fn hedger_utility(row: &mut CandidateRow, results: &[HedgerResult]) {
    let eff: Vec<f64> = results.iter().filter_map(HedgerResult::counted).collect();
    row.hedgers = eff.len();
    row.effectiveness_median = median(&eff);
    row.effectiveness_p25 = quantile(&eff, 0.25);
    row.effectiveness_p75 = quantile(&eff, 0.75);
}

/// Economics: log changes between consecutive settled calendar months, the median
/// settlement and a contract's value.
fn economics(
    row: &mut CandidateRow,
    month_rows: &[MonthRow],
    settled: &[&MonthRow],
    contract: &ContractSpec,
) {
    let values: Vec<f64> = settled.iter().filter_map(|r| r.settlement).collect();
    let changes: Vec<f64> = month_rows
        .windows(2)
        .filter_map(|w| {
            let (a, b) = (w[0].settlement?, w[1].settlement?);
            (a > 0.0 && b > 0.0).then(|| (b / a).ln())
        })
        .collect();
    row.settlement_vol_monthly = sample_std(&changes);
    row.settlement_vol_annual = row.settlement_vol_monthly.map(|s| s * 12f64.sqrt());
    row.median_settlement = median(&values);
    row.contract_value_usd = row
        .median_settlement
        .map(|p| p * contract.contract_gpu_hours);
}

/// The reference coverage rule a candidate without one is judged under: the
/// Computable GPU index's contract defaults.
fn reference_coverage() -> rentix_backtest::CoverageRule {
    rentix_backtest::CoverageRule {
        settle_at: 0.98,
        review_at: 0.90,
        max_gap_share: 0.02,
        gap_fill: rentix_backtest::GapFill::MeanLastN,
        gap_fill_n: 5,
    }
}

/// Counts the candidate's months by coverage status (its own `[coverage]` rule or
/// the reference one) and those missing a settlement day.
fn coverage_counts(
    row: &mut CandidateRow,
    contract: &ContractSpec,
    full: &Underlying,
    months: &[NaiveDate],
) {
    use rentix_backtest::SettlementStatus;
    let judged = match contract.edited(|t| {
        t.coverage = Some(t.coverage.clone().unwrap_or_else(reference_coverage));
    }) {
        Ok(c) => c,
        Err(e) => {
            // Both rules were checked already; said rather than dropped if not.
            if !row.note.is_empty() {
                row.note.push_str("; ");
            }
            row.note.push_str(&format!("coverage not judged: {e}"));
            return;
        }
    };
    for &m in months {
        let o = judged.settle_outcome(full, m);
        if o.coverage < 1.0 {
            row.months_missing_a_settlement_day += 1;
        }
        match o.status {
            SettlementStatus::Settled => row.coverage_rule_settled += 1,
            SettlementStatus::Review => row.coverage_rule_review += 1,
            SettlementStatus::Determination => row.coverage_rule_determination += 1,
        }
    }
}
