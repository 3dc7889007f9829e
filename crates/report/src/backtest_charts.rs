//! The charts of one backtest, written beside its tables.

use crate::charts::{lines, pnl_histogram, rolling, save_both, waterfall, Line};
use rentix_backtest::BacktestResult;
use std::path::Path;

/// Writes rent_vs_index, basis, pnl_histogram, rolling_effectiveness and waterfall
/// (PNG and SVG) into `dir`.
pub fn backtest_charts(dir: &Path, r: &BacktestResult) -> Result<(), crate::ReportError> {
    let rent = Line {
        name: "your rent".into(),
        points: r.daily.iter().map(|d| (d.date, d.rent)).collect(),
    };
    let index = Line {
        name: format!("index {}", r.underlying),
        points: r.daily.iter().map(|d| (d.date, d.index)).collect(),
    };
    let title = "Rent against the index (USD per GPU-hour)";
    let series = [rent, index];
    save_both(
        &dir.join("rent_vs_index"),
        |a| lines(a, title, "USD per GPU-hour", &series),
        |a| lines(a, title, "USD per GPU-hour", &series),
    )?;
    let basis = [Line {
        name: "basis = rent - index".into(),
        points: r.daily.iter().map(|d| (d.date, d.basis)).collect(),
    }];
    let t = "Basis over time: a steady premium is harmless, a moving one is risk";
    save_both(
        &dir.join("basis"),
        |a| lines(a, t, "USD per GPU-hour", &basis),
        |a| lines(a, t, "USD per GPU-hour", &basis),
    )?;

    let Some(feat) = r.decided_strategy().map(|s| s.strategy) else {
        return Ok(());
    };
    let rows: Vec<_> = r.futures_rows().filter(|x| x.strategy == feat).collect();
    let hedged: Vec<f64> = rows.iter().map(|x| x.pnl.hedged_total).collect();
    let unhedged: Vec<f64> = rows.iter().map(|x| x.pnl.unhedged_total).collect();
    let t = format!("Monthly P&L, hedged ({feat}) vs unhedged");
    save_both(
        &dir.join("pnl_histogram"),
        |a| pnl_histogram(a, &t, &hedged, &unhedged),
        |a| pnl_histogram(a, &t, &hedged, &unhedged),
    )?;

    let roll: Vec<Line> = r
        .strategies
        .iter()
        .filter(|s| !s.rolling_effectiveness.is_empty())
        .map(|s| {
            let ends: Vec<_> = r
                .futures_rows()
                .filter(|x| x.strategy == s.strategy)
                .map(|x| x.period_start)
                .collect();
            let w = ends.len() + 1 - s.rolling_effectiveness.len();
            Line {
                name: s.strategy.to_string(),
                points: s
                    .rolling_effectiveness
                    .iter()
                    .enumerate()
                    .filter_map(|(i, v)| Some((*ends.get(i + w - 1)?, (*v)?.clamp(-1.0, 1.0))))
                    .collect(),
            }
        })
        .collect();
    let t = "Rolling 12-month hedge effectiveness";
    save_both(
        &dir.join("rolling_effectiveness"),
        |a| rolling(a, t, &roll),
        |a| rolling(a, t, &roll),
    )?;

    let sum =
        |f: &dyn Fn(&rentix_backtest::PeriodRow) -> f64| rows.iter().map(|x| f(x)).sum::<f64>();
    let parts = vec![
        ("rent change".to_string(), sum(&|x| x.pnl.rent_change)),
        ("futures".to_string(), sum(&|x| x.pnl.futures)),
        ("fees".to_string(), -sum(&|x| x.pnl.fees)),
    ];
    let op = sum(&|x| x.operational_loss);
    let basis_total = sum(&|x| x.pnl.basis);
    let vm_total = sum(&|x| x.pnl.volume_mismatch);
    let t = format!(
        "Where the money went ({feat}): basis {}, volume mismatch {}",
        crate::format::money(basis_total),
        crate::format::money(vm_total)
    );
    save_both(
        &dir.join("waterfall"),
        |a| waterfall(a, &t, &parts, op),
        |a| waterfall(a, &t, &parts, op),
    )?;
    Ok(())
}
