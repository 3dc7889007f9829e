//! A backtest from files, as the CLI and the Python package run it: the fixings
//! (each as first published when a restatement log lies beside them), the rent, the
//! events, and the contract's underlying and forward grade found in the fixings.

use crate::error::BacktestError;
use crate::{
    check_fixings, read_events, run, underlyings, BacktestConfig, BacktestResult, IndexInputs,
    PeriodEnd, RentSeries, Side,
};
use rentix_fixings::{first_published, read_fixings, read_restatements, restatements_path, Fixing};
use std::path::{Path, PathBuf};

/// The files of one backtest.
#[derive(Debug, Clone)]
pub struct BacktestFiles {
    /// Fixings written by `rentix index`.
    pub index: PathBuf,
    /// The rent series (`period_start, period_end, usd_per_gpu_hour, gpu_hours[, side]`).
    pub rent: PathBuf,
    /// How the rent's and events' period ends read.
    pub period_end: PeriodEnd,
    /// The rent's side for a file without a `side` column.
    pub side: Option<Side>,
    /// Operational events (`start, end, kind, gpu_hours_lost, usd_loss[, note]`);
    /// `None`: no events.
    pub events: Option<PathBuf>,
    /// Settle on today's restated fixings rather than as first published.
    pub as_restated: bool,
}

/// The fixings as the backtest should see them, and today's view when that differs:
/// with a restatement log beside the file, each fixing as first published (unless
/// `as_restated`).
pub fn fixings_views(
    index: &Path,
    as_restated: bool,
) -> Result<(Vec<Fixing>, Option<Vec<Fixing>>), BacktestError> {
    let today = read_fixings(index)?;
    check_fixings(&today).map_err(|e| BacktestError::File {
        path: index.to_path_buf(),
        detail: e.to_string(),
    })?;
    let log = restatements_path(index);
    if as_restated || !log.exists() {
        return Ok((today, None));
    }
    let log = read_restatements(&log)?;
    Ok((first_published(&today, &log), Some(today)))
}

/// Loads the files and runs the backtest of `config` on them.
pub fn backtest_files(
    files: &BacktestFiles,
    config: &BacktestConfig,
) -> Result<BacktestResult, BacktestError> {
    let (mut series, today) = if rentix_fixings::intraday::is_intraday_file(&files.index)? {
        // An intraday index has no restatement log: published stamps are final.
        let f = rentix_fixings::intraday::read_intraday(&files.index)?;
        (crate::underlying::intraday_underlyings(&f), None)
    } else {
        let (fixings, today) = fixings_views(&files.index, files.as_restated)?;
        (underlyings(&fixings), today)
    };
    let c = &config.contract;
    let underlying = series
        .remove(&c.underlying)
        .ok_or_else(|| BacktestError::File {
            path: files.index.clone(),
            detail: format!("has no fixing with a value for {}", c.underlying),
        })?;
    let forward = c
        .entry
        .forward_grade
        .as_ref()
        .and_then(|g| series.remove(g))
        .map(|u| u.values);
    let restated = today.and_then(|t| underlyings(&t).remove(&c.underlying));
    let rent = RentSeries::from_csv_with(&files.rent, files.period_end, files.side)?;
    let events = match &files.events {
        Some(p) => read_events(p, files.period_end)?,
        None => Vec::new(),
    };
    let inputs = IndexInputs {
        underlying,
        forward,
        restated,
    };
    let mut r = run(&rent, &events, &inputs, config)?;
    r.period_end = files.period_end;
    Ok(r)
}
