//! Writing a backtest: `summary.json` (pretty, stable key order), `periods.csv`,
//! `daily.csv`.

use crate::backtest::BacktestResult;
use crate::error::BacktestError;
use rentix_table::{write_atomic, Col, Table};
use std::path::Path;

/// A number as `periods.csv` and `daily.csv` write it: to 12 significant digits and
/// at most 9 decimals, and never `-0`, so that a move of 3.847 - 3.915 reads
/// `-0.068`, not `-0.06800000000000006` (`summary.json` keeps every digit).
pub(crate) fn as_written(x: f64) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return if x == 0.0 { 0.0 } else { x };
    }
    let digits = x.abs().log10().floor() as i32 + 1;
    let p = 10f64.powi((12 - digits).clamp(0, 9));
    let r = (x * p).round() / p;
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

/// `periods.csv`: one row per instrument, strategy and month.
pub(crate) fn periods_table(r: &BacktestResult) -> Table {
    let rows = &r.rows;
    let f = |g: &dyn Fn(&crate::backtest::PeriodRow) -> f64| {
        Col::F64(rows.iter().map(|x| Some(as_written(g(x)))).collect())
    };
    let mut t = Table::new();
    t.push(
        "instrument",
        Col::Str(
            rows.iter()
                .map(|x| Some(x.instrument.to_string()))
                .collect(),
        ),
    );
    t.push(
        "strategy",
        Col::Str(rows.iter().map(|x| Some(x.strategy.to_string())).collect()),
    );
    t.push(
        "period_start",
        Col::Str(
            rows.iter()
                .map(|x| Some(x.period_start.to_string()))
                .collect(),
        ),
    );
    // In the convention the rent file used: exclusive (the first day not covered)
    // or inclusive (the last day billed).
    let back = match r.period_end {
        crate::rent::PeriodEnd::Exclusive => 0,
        crate::rent::PeriodEnd::Inclusive => 1,
    };
    t.push(
        "period_end",
        Col::Str(
            rows.iter()
                .map(|x| Some((x.period_end - chrono::Days::new(back)).to_string()))
                .collect(),
        ),
    );
    t.push("exposure_gpu_hours", f(&|x| x.exposure_gpu_hours));
    t.push("delivered_gpu_hours", f(&|x| x.delivered_gpu_hours));
    t.push("rent_usd_per_gpu_hour", f(&|x| x.rent_usd_per_gpu_hour));
    t.push("rent_reference", f(&|x| x.rent_reference));
    t.push("rent_change", f(&|x| x.rent_change));
    t.push("index_at_entry", f(&|x| x.index_at_entry));
    t.push("entry_price", f(&|x| x.entry_price));
    t.push("settlement", f(&|x| x.settlement));
    t.push("futures_change", f(&|x| x.futures_change));
    t.push("carry", f(&|x| x.carry));
    t.push(
        "tranches",
        Col::I64(rows.iter().map(|x| Some(x.tranches as i64)).collect()),
    );
    t.push("hedge_ratio", f(&|x| x.hedge_ratio));
    t.push("contracts_unrounded", f(&|x| x.contracts_unrounded));
    t.push(
        "contracts",
        Col::I64(rows.iter().map(|x| Some(x.contracts)).collect()),
    );
    t.push("rent_change_pnl", f(&|x| x.pnl.rent_change));
    t.push("futures_pnl", f(&|x| x.pnl.futures));
    t.push("basis_pnl", f(&|x| x.pnl.basis));
    t.push("entry_carry_pnl", f(&|x| x.pnl.entry_carry));
    t.push("volume_mismatch_pnl", f(&|x| x.pnl.volume_mismatch));
    t.push("unhedged_remainder_pnl", f(&|x| x.pnl.unhedged_remainder));
    t.push("over_hedge_pnl", f(&|x| x.pnl.over_hedge));
    t.push("funding_pnl", f(&|x| x.pnl.funding));
    t.push("fees", f(&|x| x.pnl.fees));
    t.push("operational_loss", f(&|x| x.operational_loss));
    t.push("hedged_before_fees", f(&|x| x.pnl.hedged_before_fees));
    t.push("hedged_total", f(&|x| x.pnl.hedged_total));
    t.push("unhedged_total", f(&|x| x.pnl.unhedged_total));
    t
}

/// `daily.csv`: rent, index and basis per day.
pub(crate) fn daily_table(r: &BacktestResult) -> Table {
    let d = &r.daily;
    let mut t = Table::new();
    t.push(
        "date",
        Col::Str(d.iter().map(|x| Some(x.date.to_string())).collect()),
    );
    t.push(
        "rent_usd_per_gpu_hour",
        Col::F64(d.iter().map(|x| Some(as_written(x.rent))).collect()),
    );
    t.push(
        "index_usd_per_gpu_hour",
        Col::F64(d.iter().map(|x| Some(as_written(x.index))).collect()),
    );
    t.push(
        "basis",
        Col::F64(d.iter().map(|x| Some(as_written(x.basis))).collect()),
    );
    t
}

/// Writes `summary.json`, `periods.csv` and `daily.csv` into `dir`.
pub fn write_backtest(dir: &Path, r: &BacktestResult) -> Result<(), BacktestError> {
    std::fs::create_dir_all(dir).map_err(|e| BacktestError::File {
        path: dir.to_path_buf(),
        detail: e.to_string(),
    })?;
    periods_table(r).write(&dir.join("periods.csv"))?;
    daily_table(r).write(&dir.join("daily.csv"))?;
    let json = serde_json::to_string_pretty(r).map_err(|e| BacktestError::Data(e.to_string()))?;
    let path = dir.join("summary.json");
    write_atomic(&path, |w| {
        w.write_all(json.as_bytes())
            .and_then(|_| w.write_all(b"\n"))
            .map_err(|source| rentix_table::TableError::Write {
                path: path.clone(),
                source,
            })
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::as_written;

    /// Hand arithmetic: 3.847 - 3.915 in f64 is -0.06800000000000006; 2.90 built as
    /// 3.1 - 0.2 is 2.9000000000000004; a P&L of 1604.7797182839192 USD keeps 12
    /// significant digits; -0.0 is written 0; a million-dollar figure keeps cents'
    /// worth and more (12 digits).
    #[test]
    fn numbers_are_written_at_the_precision_they_carry() {
        assert_eq!(as_written(3.847 - 3.915), -0.068);
        assert_eq!(as_written(3.1 - 0.2), 2.9);
        assert_eq!(as_written(1604.7797182839192), 1604.77971828);
        assert_eq!(as_written(-0.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(as_written(1_234_567.891_234_567), 1_234_567.891_23);
        assert_eq!(as_written(0.000_123_456_789_123_4), 0.000_123_457);
    }
}
