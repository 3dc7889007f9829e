//! The lab's outputs: one [`CandidateRow`] per candidate (`comparison.csv`,
//! `comparison.json`) and one [`MonthRow`] per candidate and month (`by_month.csv`).
//! The JSON is the typed form the report reads back.

use crate::error::LabError;
use crate::hedgers::HedgerResult;
use crate::manipulation::Found;
use chrono::NaiveDate;
use rentix_table::{write_atomic, Col, Table};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One candidate's measures, over the history and summarized over months.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CandidateRow {
    /// The candidate's name.
    pub candidate: String,
    /// The methodology's version.
    pub methodology_version: String,
    /// The contract's name.
    pub contract: String,
    /// The grade evaluated: the contract's underlying.
    pub underlying: String,
    /// The settlement rule as a person reads it, e.g. `monthly-average (all days)`.
    pub settlement: String,
    /// Why the candidate could not be evaluated, or what limits its numbers.
    pub note: String,
    // Sufficiency.
    /// Fixings of the grade in the range (one a publication day), with a value or not.
    pub fixing_days: usize,
    /// Share of those fixings set from trades, 0 to 1.
    pub share_trades: f64,
    /// Share set from firm offers, 0 to 1.
    pub share_firm: f64,
    /// Share set from listings, 0 to 1.
    pub share_listings: f64,
    /// Share carried forward from an earlier fixing, 0 to 1.
    pub share_carried: f64,
    /// Share with no value, 0 to 1.
    pub share_no_value: f64,
    /// Fixings carried forward (the count behind `share_carried`).
    pub carried_days: usize,
    /// Calendar months from the grade's first observation to its last that begin or
    /// end within `--from`/`--to`.
    pub months: usize,
    /// Months the contract settles on the full history (months in review included).
    pub months_settled: usize,
    /// `months - months_settled`.
    pub months_not_settled: usize,
    /// Months with at least one settlement day whose fixing is missing or does not
    /// qualify (what a contract without a missing-day clause, as NYMEX GPU1/GPU2
    /// files, averages over fewer days).
    pub months_missing_a_settlement_day: usize,
    /// The candidate's months under a coverage rule: its own `[coverage]` table, or
    /// the reference one (settle at 98% with gaps of at most 2%, review at 90%, gaps
    /// filled by the mean of the last 5 fixings). This one counts those that settle.
    pub coverage_rule_settled: usize,
    /// Months in review under that rule.
    pub coverage_rule_review: usize,
    /// Months to determination under that rule.
    pub coverage_rule_determination: usize,
    /// Median contributors per fixing, over the fixings with a value not carried
    /// forward.
    pub median_contributors: Option<f64>,
    /// Median over those fixings of the largest contributor's share of the weight
    /// (after the cap), 0 to 1.
    pub median_max_contributor_share: Option<f64>,
    /// The largest such share of any of those fixings.
    pub max_max_contributor_share: Option<f64>,
    /// Median over those fixings of the Herfindahl-Hirschman index of contributors'
    /// weight shares (1 for one contributor, 1/n for n equal ones).
    pub median_hhi: Option<f64>,
    // Manipulation.
    /// The manipulator's price, percent above the honest settlement.
    pub attack_price_pct: f64,
    /// Median over settled months of the fake trade volume that moves the settlement
    /// one tick, as a share of the month's real trade volume; `None` when the median
    /// month is out of reach or no month has trades.
    pub fake_share_to_move_tick: Option<f64>,
    /// The same for a move of 1%.
    pub fake_share_to_move_1pct: Option<f64>,
    /// The same for a move of 5%.
    pub fake_share_to_move_5pct: Option<f64>,
    /// Settled months that no fake trade volume up to `max_fake_ratio` times the real
    /// one moves 1%.
    pub unmovable_months_1pct: usize,
    /// The same for 5%.
    pub unmovable_months_5pct: usize,
    /// Median over settled months of the fake listings (the total over the days whose
    /// observations feed the settlement) that move it 1%; `None` when the median
    /// month is out of reach.
    pub fake_listings_to_move_1pct: Option<f64>,
    /// The same for 5%.
    pub fake_listings_to_move_5pct: Option<f64>,
    /// Median over months of the settlement's move (percent) with fake trades of
    /// `max_fake_ratio` times the real volume: the most one contributor can do.
    pub max_move_pct_fake_trades: Option<f64>,
    /// The same with `max_fake_listings_per_day` fake listings a day.
    pub max_move_pct_fake_listings: Option<f64>,
    /// Median over settled months of the settlement's absolute move, percent, when the
    /// month's largest contributor withholds its observations (months it leaves
    /// unsettled left out).
    pub withholding_move_pct: Option<f64>,
    /// Settled months that this withholding leaves unable to settle.
    pub withholding_unsettles_months: usize,
    /// Months whose settlement recomputed over the month's slice of history differs
    /// from the full run (0 unless the slice margin is too short; reported, not hidden).
    pub slice_mismatch_months: usize,
    // Representativeness.
    /// Mean absolute difference, over settled months, between the settlement and the
    /// contract's rule applied to the simulated market's fair price, USD per GPU-hour;
    /// `None` without a truth file.
    pub truth_mae_usd: Option<f64>,
    /// The same in ticks.
    pub truth_mae_ticks: Option<f64>,
    /// Median over settled months of `100 (settlement - m) / m`, `m` the median price
    /// observed in the month: signed, percent.
    pub median_distance_from_obs_median_pct: Option<f64>,
    /// Share of settled months whose settlement lies between the 25th and 75th
    /// percentiles of the month's observed prices, 0 to 1.
    pub share_months_in_obs_iqr: Option<f64>,
    // Hedger utility.
    /// Hedgers whose backtest gave an effectiveness.
    pub hedgers: usize,
    /// Median of their walk-forward effectiveness, a share.
    pub effectiveness_median: Option<f64>,
    /// Its 25th percentile.
    pub effectiveness_p25: Option<f64>,
    /// Its 75th percentile.
    pub effectiveness_p75: Option<f64>,
    // Economics.
    /// Sample standard deviation of the log changes between consecutive settled
    /// calendar months.
    pub settlement_vol_monthly: Option<f64>,
    /// `settlement_vol_monthly x sqrt 12`.
    pub settlement_vol_annual: Option<f64>,
    /// Median settlement, USD per GPU-hour.
    pub median_settlement: Option<f64>,
    /// What one tick is worth on one contract, USD: `tick x contract_gpu_hours`.
    pub tick_value_usd: f64,
    /// One contract at the median settlement, USD: `median_settlement x
    /// contract_gpu_hours`.
    pub contract_value_usd: Option<f64>,
}

/// One candidate and month.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MonthRow {
    /// The candidate's name.
    pub candidate: String,
    /// First day of the month.
    pub month: NaiveDate,
    /// The contract's settlement on the full history, USD per GPU-hour; `None` when the
    /// month does not settle.
    pub settlement: Option<f64>,
    /// Why the month does not settle (empty when it does).
    pub not_settled: String,
    /// The month's fixings, with a value or not.
    pub fixing_days: usize,
    /// Share of them set from trades, 0 to 1.
    pub share_trades: f64,
    /// Share set from listings, 0 to 1.
    pub share_listings: f64,
    /// Share carried forward, 0 to 1.
    pub share_carried: f64,
    /// Median contributors per fixing with a value not carried forward.
    pub median_contributors: Option<f64>,
    /// Largest contributor's share of any such fixing's weight, 0 to 1.
    pub max_contributor_share: Option<f64>,
    /// Median Herfindahl-Hirschman index of those fixings' contributors.
    pub median_hhi: Option<f64>,
    /// Fake trade volume over the month's real trade volume that moves the settlement
    /// one tick, 1% and 5% (the order of `Target::ALL`).
    pub fake_share: [Found; 3],
    /// Fake listings (the total over the days whose observations feed the
    /// settlement) that make the same moves.
    pub fake_listings: [Found; 3],
    /// The settlement's absolute move, percent, with fake trades at `max_fake_ratio`
    /// times the real volume.
    pub max_move_pct_trades: Option<f64>,
    /// The same with `max_fake_listings_per_day` fake listings a day.
    pub max_move_pct_listings: Option<f64>,
    /// The month's largest contributor's share of its volume (trades; every observation
    /// counted once when the month has no trades).
    pub withholder_share: Option<f64>,
    /// The settlement's absolute move, percent, when that contributor withholds; `None`
    /// when the month then does not settle.
    pub withholding_move_pct: Option<f64>,
    /// Withholding leaves the month unable to settle.
    pub withholding_unsettles: bool,
    /// The contract's rule applied to the simulated market's fair price, USD per
    /// GPU-hour; `None` without a truth file or when it does not settle.
    pub truth_settlement: Option<f64>,
    /// Median price observed in the month (every kind of observation), USD per
    /// GPU-hour.
    pub obs_median: Option<f64>,
    /// 25th percentile of those prices.
    pub obs_p25: Option<f64>,
    /// 75th percentile of those prices.
    pub obs_p75: Option<f64>,
}

/// `comparison.json`: the settings of the run and one row per candidate, with each
/// hedger's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The store, as a label.
    pub store: String,
    /// The manipulator's price, percent above the honest settlement.
    pub attack_price_pct: f64,
    /// The largest multiple of real trade volume the fake-trade search tries
    /// (`MAX_FAKE_RATIO`).
    pub max_fake_ratio: f64,
    /// The most fake listings a day the search tries (`MAX_FAKE_LISTINGS_PER_DAY`).
    pub max_fake_listings_per_day: usize,
    /// The truth file, as a label; `None` without one.
    pub truth: Option<String>,
    /// The hedgers' rent directory, as a label; `None` without one.
    pub rent_dir: Option<String>,
    /// One row per candidate, in the order evaluated.
    pub candidates: Vec<CandidateRow>,
    /// Each candidate's name with its hedgers' results.
    pub hedgers: Vec<(String, Vec<HedgerResult>)>,
    /// Which design hedges the users best, when the evidence tells
    /// ([`crate::utility_verdict`]): computed once here, shown as it is by the
    /// report and the demo.
    #[serde(default)]
    pub utility_verdict: Option<crate::UtilityVerdict>,
}

impl Comparison {
    /// The comparison of evaluated candidates, in their order, and their month rows:
    /// what `rentix contract` writes, however the evaluations were computed (one
    /// process or Spark tasks). `store`, `truth` and `rent_dir` are the labels the
    /// file shows.
    pub fn assemble(
        store: String,
        truth: Option<String>,
        rent_dir: Option<String>,
        options: &crate::LabOptions,
        evaluations: Vec<crate::Evaluation>,
    ) -> (Self, Vec<MonthRow>) {
        let mut candidates = Vec::new();
        let mut months = Vec::new();
        let mut hedgers = Vec::new();
        for e in evaluations {
            hedgers.push((e.row.candidate.clone(), e.hedgers));
            candidates.push(e.row);
            months.extend(e.months);
        }
        let mut comparison = Self {
            store,
            attack_price_pct: options.attack_price_pct,
            max_fake_ratio: crate::MAX_FAKE_RATIO,
            max_fake_listings_per_day: crate::MAX_FAKE_LISTINGS_PER_DAY,
            truth,
            rent_dir,
            candidates,
            hedgers,
            utility_verdict: None,
        };
        comparison.utility_verdict = crate::utility_verdict(&comparison, &months);
        (comparison, months)
    }

    /// Reads a `comparison.json` back.
    pub fn read(path: &Path) -> Result<Self, LabError> {
        let bad = |detail: String| LabError::Input {
            path: path.to_path_buf(),
            detail,
        };
        let text = rentix_core::read_text(path, rentix_core::MAX_TABLE_BYTES)
            .map_err(|e| bad(e.to_string()))?;
        serde_json::from_str(&text).map_err(|e| bad(e.to_string()))
    }
}

fn f(v: impl Iterator<Item = Option<f64>>) -> Col {
    Col::F64(v.collect())
}
fn n(v: impl Iterator<Item = usize>) -> Col {
    Col::I64(v.map(|x| Some(x as i64)).collect())
}
fn s(v: impl Iterator<Item = String>) -> Col {
    Col::Str(v.map(Some).collect())
}

/// `comparison.csv`: one row per candidate, one column per field (`note` last).
pub(crate) fn comparison_table(rows: &[CandidateRow]) -> Table {
    let mut t = Table::new();
    macro_rules! col {
        ($name:ident, str) => {
            t.push(stringify!($name), s(rows.iter().map(|r| r.$name.clone())))
        };
        ($name:ident, opt) => {
            t.push(stringify!($name), f(rows.iter().map(|r| r.$name)))
        };
        ($name:ident, num) => {
            t.push(stringify!($name), f(rows.iter().map(|r| Some(r.$name))))
        };
        ($name:ident, count) => {
            t.push(stringify!($name), n(rows.iter().map(|r| r.$name)))
        };
    }
    col!(candidate, str);
    col!(methodology_version, str);
    col!(contract, str);
    col!(underlying, str);
    col!(settlement, str);
    col!(fixing_days, count);
    col!(share_trades, num);
    col!(share_firm, num);
    col!(share_listings, num);
    col!(share_carried, num);
    col!(share_no_value, num);
    col!(carried_days, count);
    col!(months, count);
    col!(months_settled, count);
    col!(months_not_settled, count);
    col!(months_missing_a_settlement_day, count);
    col!(coverage_rule_settled, count);
    col!(coverage_rule_review, count);
    col!(coverage_rule_determination, count);
    col!(median_contributors, opt);
    col!(median_max_contributor_share, opt);
    col!(max_max_contributor_share, opt);
    col!(median_hhi, opt);
    col!(attack_price_pct, num);
    col!(fake_share_to_move_tick, opt);
    col!(fake_share_to_move_1pct, opt);
    col!(fake_share_to_move_5pct, opt);
    col!(unmovable_months_1pct, count);
    col!(unmovable_months_5pct, count);
    col!(fake_listings_to_move_1pct, opt);
    col!(fake_listings_to_move_5pct, opt);
    col!(max_move_pct_fake_trades, opt);
    col!(max_move_pct_fake_listings, opt);
    col!(withholding_move_pct, opt);
    col!(withholding_unsettles_months, count);
    col!(slice_mismatch_months, count);
    col!(truth_mae_usd, opt);
    col!(truth_mae_ticks, opt);
    col!(median_distance_from_obs_median_pct, opt);
    col!(share_months_in_obs_iqr, opt);
    col!(hedgers, count);
    col!(effectiveness_median, opt);
    col!(effectiveness_p25, opt);
    col!(effectiveness_p75, opt);
    col!(settlement_vol_monthly, opt);
    col!(settlement_vol_annual, opt);
    col!(median_settlement, opt);
    col!(tick_value_usd, num);
    col!(contract_value_usd, opt);
    col!(note, str);
    t
}

/// `by_month.csv`: one row per candidate and month.
pub(crate) fn by_month_table(rows: &[MonthRow]) -> Table {
    let mut t = Table::new();
    t.push("candidate", s(rows.iter().map(|r| r.candidate.clone())));
    t.push(
        "month",
        s(rows.iter().map(|r| r.month.format("%Y-%m").to_string())),
    );
    t.push("settlement", f(rows.iter().map(|r| r.settlement)));
    t.push("not_settled", s(rows.iter().map(|r| r.not_settled.clone())));
    t.push("fixing_days", n(rows.iter().map(|r| r.fixing_days)));
    t.push("share_trades", f(rows.iter().map(|r| Some(r.share_trades))));
    t.push(
        "share_listings",
        f(rows.iter().map(|r| Some(r.share_listings))),
    );
    t.push(
        "share_carried",
        f(rows.iter().map(|r| Some(r.share_carried))),
    );
    t.push(
        "median_contributors",
        f(rows.iter().map(|r| r.median_contributors)),
    );
    t.push(
        "max_contributor_share",
        f(rows.iter().map(|r| r.max_contributor_share)),
    );
    t.push("median_hhi", f(rows.iter().map(|r| r.median_hhi)));
    for (k, target) in crate::manipulation::Target::ALL.iter().enumerate() {
        t.push(
            &format!("fake_share_to_move_{}", target.as_str()),
            f(rows.iter().map(|r| r.fake_share[k].amount())),
        );
    }
    for (k, target) in crate::manipulation::Target::ALL.iter().enumerate() {
        t.push(
            &format!("fake_listings_to_move_{}", target.as_str()),
            f(rows.iter().map(|r| r.fake_listings[k].amount())),
        );
    }
    t.push(
        "max_move_pct_trades",
        f(rows.iter().map(|r| r.max_move_pct_trades)),
    );
    t.push(
        "max_move_pct_listings",
        f(rows.iter().map(|r| r.max_move_pct_listings)),
    );
    t.push(
        "withholder_share",
        f(rows.iter().map(|r| r.withholder_share)),
    );
    t.push(
        "withholding_move_pct",
        f(rows.iter().map(|r| r.withholding_move_pct)),
    );
    t.push(
        "withholding_unsettles",
        Col::Bool(rows.iter().map(|r| Some(r.withholding_unsettles)).collect()),
    );
    t.push(
        "truth_settlement",
        f(rows.iter().map(|r| r.truth_settlement)),
    );
    t.push("obs_median", f(rows.iter().map(|r| r.obs_median)));
    t.push("obs_p25", f(rows.iter().map(|r| r.obs_p25)));
    t.push("obs_p75", f(rows.iter().map(|r| r.obs_p75)));
    t
}

/// Writes `comparison.csv`, `comparison.json` and `by_month.csv` into `out`.
pub fn write(out: &Path, comparison: &Comparison, months: &[MonthRow]) -> Result<(), LabError> {
    std::fs::create_dir_all(out).map_err(|source| rentix_table::TableError::Write {
        path: out.to_path_buf(),
        source,
    })?;
    comparison_table(&comparison.candidates).write(&out.join("comparison.csv"))?;
    by_month_table(months).write(&out.join("by_month.csv"))?;
    let json = serde_json::to_string_pretty(comparison).map_err(|e| LabError::Input {
        path: out.join("comparison.json"),
        detail: e.to_string(),
    })? + "\n";
    write_atomic(&out.join("comparison.json"), |w| {
        w.write_all(json.as_bytes())
            .map_err(|source| rentix_table::TableError::Write {
                path: out.join("comparison.json"),
                source,
            })
    })?;
    Ok(())
}
