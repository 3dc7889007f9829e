//! `rentix cost`: rent per million useful tokens by operator and the cost curve.

use crate::cli::CostArgs;
use anyhow::Context;
use rentix_backtest::{
    cost_curves, position_changes, read_throughput, underlyings, CostPoint, ObservedPrice, Pricer,
};
use rentix_report::{cost_curve_chart, CurveBar};
use rentix_store::Store;
use rentix_table::{Col, Table};
use std::collections::BTreeMap;

fn table(points: &[CostPoint]) -> Table {
    let s =
        |g: &dyn Fn(&CostPoint) -> String| Col::Str(points.iter().map(|p| Some(g(p))).collect());
    let f = |g: &dyn Fn(&CostPoint) -> f64| Col::F64(points.iter().map(|p| Some(g(p))).collect());
    let mut t = Table::new();
    t.push("operator", s(&|p| p.operator.clone()));
    t.push("gpu", s(&|p| p.gpu.clone()));
    t.push("scope", s(&|p| p.scope.clone()));
    t.push("model", s(&|p| p.model.clone()));
    t.push(
        "date",
        s(&|p| p.date.map(|d| d.to_string()).unwrap_or_default()),
    );
    t.push("usd_per_gpu_hour", f(&|p| p.usd_per_gpu_hour));
    t.push(
        "output_tokens_per_s_per_gpu",
        f(&|p| p.output_tokens_per_s_per_gpu),
    );
    t.push("success_rate", f(&|p| p.success_rate));
    t.push("usd_per_m_useful_tokens", f(&|p| p.usd_per_m_useful_tokens));
    t.push("capacity_gpus", f(&|p| p.capacity_gpus));
    t.push(
        "cumulative_capacity_gpus",
        f(&|p| p.cumulative_capacity_gpus),
    );
    t.push("percentile", f(&|p| p.percentile));
    t.push(
        "rank",
        Col::I64(points.iter().map(|p| Some(p.rank as i64)).collect()),
    );
    t.push(
        "operators",
        Col::I64(points.iter().map(|p| Some(p.operators as i64)).collect()),
    );
    t
}

/// Prices, writes `cost_curve.csv`, `position_changes.csv` and the chart; returns
/// the curve shown (the latest of the model with most capacity) and the changes.
pub(super) fn execute(
    a: &CostArgs,
) -> anyhow::Result<(Vec<CostPoint>, Vec<rentix_backtest::PositionChange>)> {
    if a.fixings.is_some() && a.store.is_some() {
        crate::commands::usage!("price from --fixings or from --store, not both");
    }
    let rows = read_throughput(&a.throughput)?;
    let pricer = match (&a.fixings, &a.store) {
        (Some(f), _) => {
            rentix_index::check_published(f)?;
            let fixings = rentix_index::read_fixings(f)?;
            rentix_backtest::check_fixings(&fixings).with_context(|| f.display().to_string())?;
            Pricer::Fixings(underlyings(&fixings))
        }
        (_, Some(s)) => Pricer::Observations(
            Store::open(s)?
                .read(None, None)
                .context("reading the store")?
                .into_iter()
                .map(|o| ObservedPrice {
                    grade: o.obs.grade.clone().with_region(None).key(),
                    fixing_date: o.obs.fixing_date,
                    usd_per_gpu_hour: o.obs.usd_per_gpu_hour.get(),
                })
                .collect(),
        ),
        _ => Pricer::None,
    };
    let points = cost_curves(&rows, |r| pricer.price(r, a.date))
        .with_context(|| format!("pricing {}", a.throughput.display()))?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    table(&points).write(&a.out.join("cost_curve.csv"))?;
    let changes = position_changes(&points);
    let mut t = Table::new();
    let s = |g: &dyn Fn(&rentix_backtest::PositionChange) -> String| {
        Col::Str(changes.iter().map(|c| Some(g(c))).collect())
    };
    t.push("operator", s(&|c| c.operator.clone()));
    t.push("gpu", s(&|c| c.gpu.clone()));
    t.push("scope", s(&|c| c.scope.clone()));
    t.push("model", s(&|c| c.model.clone()));
    t.push("from", s(&|c| c.from.to_string()));
    t.push("to", s(&|c| c.to.to_string()));
    t.push(
        "cost_from",
        Col::F64(changes.iter().map(|c| Some(c.cost_from)).collect()),
    );
    t.push(
        "cost_to",
        Col::F64(changes.iter().map(|c| Some(c.cost_to)).collect()),
    );
    t.push(
        "rank_from",
        Col::I64(changes.iter().map(|c| Some(c.rank_from as i64)).collect()),
    );
    t.push(
        "rank_to",
        Col::I64(changes.iter().map(|c| Some(c.rank_to as i64)).collect()),
    );
    t.push("reading", s(&|c| c.reading.clone()));
    t.write(&a.out.join("position_changes.csv"))?;
    // The chart: the latest curve of the model with the most capacity on it.
    let latest = points.iter().map(|p| p.date).max().flatten();
    let mut capacity: BTreeMap<&str, f64> = BTreeMap::new();
    for p in points.iter().filter(|p| p.date == latest) {
        *capacity.entry(p.model.as_str()).or_default() += p.capacity_gpus;
    }
    let model = capacity
        .iter()
        .max_by(|x, y| x.1.total_cmp(y.1).then(y.0.cmp(x.0)))
        .map(|(m, _)| m.to_string())
        .unwrap_or_default();
    let bars: Vec<CurveBar> = points
        .iter()
        .filter(|p| p.model == model && p.date == latest)
        .map(|p| CurveBar {
            operator: p.operator.clone(),
            usd_per_m_useful_tokens: p.usd_per_m_useful_tokens,
            capacity_gpus: p.capacity_gpus,
        })
        .collect();
    let title = format!(
        "Cost curve: {model}{}",
        latest.map(|d| format!(", {d}")).unwrap_or_default()
    );
    cost_curve_chart(&a.out.join("cost_curve"), &title, &bars)?;
    let shown: Vec<CostPoint> = points
        .into_iter()
        .filter(|p| p.model == model && p.date == latest)
        .collect();
    Ok((shown, changes))
}

/// `x` to three significant digits, trailing zeros dropped: a success rate of
/// 1e-7 is 0.00001%, not 0%, 99.75% is not 100%, and 99.996% is 99.996%.
fn three_digits(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let mut decimals = (2 - x.abs().log10().floor() as i64).clamp(0, 15) as usize;
    // A rate short of 100% is never printed as 100% (0.99996 was).
    while x < 100.0 && decimals < 15 && format!("{x:.decimals$}").parse::<f64>() == Ok(100.0) {
        decimals += 1;
    }
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

pub(super) fn run(a: CostArgs) -> anyhow::Result<()> {
    let (shown, changes) = execute(&a)?;
    for p in &shown {
        outln!(
            "{:>3}. {:<24} {:>9.4} USD per million useful tokens ({:.2} USD/GPU-h, {:.0} tokens/s/GPU, {}% success), percentile {:.0}",
            p.rank,
            p.operator,
            p.usd_per_m_useful_tokens,
            p.usd_per_gpu_hour,
            p.output_tokens_per_s_per_gpu,
            three_digits(100.0 * p.success_rate),
            p.percentile
        );
    }
    for c in &changes {
        outln!("{}", c.reading);
    }
    outln!("wrote {}", a.out.display());
    Ok(())
}
