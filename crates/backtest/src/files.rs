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
    /// Whether the user chose the underlying (`--underlying`, or a contract file):
    /// when not, it is taken from the GPU (and scope) the rent file names, and a rent
    /// that names none is refused with the candidates ([`choose_underlying`]).
    pub underlying_given: bool,
}

/// At most this many grades are listed in a refusal.
const LISTED: usize = 12;

/// `names` (a list of index names) as a short text: the first [`LISTED`], then how
/// many more.
fn listed<'a>(names: impl Iterator<Item = &'a String>) -> String {
    let all: Vec<&String> = names.collect();
    let mut text = all
        .iter()
        .take(LISTED)
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    if all.len() > LISTED {
        text.push_str(&format!(" and {} more", all.len() - LISTED));
    }
    text
}

/// The index a rent is hedged with when the user named none: the grade of the rent's
/// GPU with the rent's scope (else the default contract's) and the default contract's
/// term, else the one grade of that GPU (and scope). Refused, listing what the
/// fixings hold, when the rent names no GPU or several grades fit.
pub fn choose_underlying(
    rent: &RentSeries,
    default: &str,
    names: &[String],
) -> Result<String, BacktestError> {
    let Some(gpu) = rent.names.gpu.as_deref() else {
        return Err(BacktestError::Underlying(format!(
            "which index hedges this rent? The rent file names no GPU: pass --underlying GRADE (or --contract FILE), or add a gpu column to the rent file (and a scope column to choose among scopes). The fixings hold {}",
            listed(names.iter())
        )));
    };
    let mut parts: Vec<&str> = default.split('/').collect();
    if parts.len() >= 3 {
        parts[0] = gpu;
        if let Some(sc) = rent.names.scope {
            parts[1] = sc.as_str();
        }
        let key = parts.join("/");
        if names.contains(&key) {
            return Ok(key);
        }
    }
    let fits: Vec<&String> = names
        .iter()
        .filter(|n| {
            rent.names
                .owns(n)
                .is_some_and(|(g, s)| g && (s || rent.names.scope.is_none()))
        })
        .collect();
    match fits.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(BacktestError::Underlying(format!(
            "the rent is for {gpu}{}, and the fixings hold no grade of it: pass --underlying GRADE to hedge across GPUs (a cross-hedge), or run `rentix track` to rank them; the fixings hold {}",
            rent.names.scope.map_or(String::new(), |s| format!(" ({s})")),
            listed(names.iter())
        ))),
        many => Err(BacktestError::Underlying(format!(
            "the rent is for {gpu} and the fixings hold {} grades of it: pass --underlying with one of {}",
            many.len(),
            listed(many.iter().copied())
        ))),
    }
}

/// The refusal of an underlying the fixings do not hold: the names closest to it
/// (same GPU first, then by edit distance), so a near miss gets "did you mean".
fn unknown_underlying(path: &Path, wanted: &str, names: &[String]) -> BacktestError {
    let gpu = wanted.split('/').next().unwrap_or(wanted);
    let mut close: Vec<(usize, &String)> = names
        .iter()
        .map(|n| {
            let same_gpu = n.split('/').next() == Some(gpu) || n.starts_with(wanted);
            (
                usize::from(!same_gpu) * 1000 + strsim::levenshtein(wanted, n),
                n,
            )
        })
        .collect();
    close.sort();
    let hint = match close.first() {
        Some((d, best)) if *d < 1000 || *d <= wanted.len() / 2 => format!(
            "; did you mean {best}?{}",
            if close.len() > 1 {
                format!(
                    " Closest: {}",
                    listed(close.iter().take(5).map(|(_, n)| *n))
                )
            } else {
                String::new()
            }
        ),
        _ => format!("; the file holds {}", listed(names.iter())),
    };
    BacktestError::File {
        path: path.to_path_buf(),
        detail: format!("has no fixing with a value for {wanted}{hint}"),
    }
}

/// The fixings as the backtest should see them, and today's view when that differs:
/// with a restatement log beside the file, each fixing as first published (unless
/// `as_restated`).
pub fn fixings_views(
    index: &Path,
    as_restated: bool,
) -> Result<(Vec<Fixing>, Option<Vec<Fixing>>), BacktestError> {
    rentix_fixings::check_published(index)?;
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
        rentix_fixings::check_published(&files.index)?;
        let f = rentix_fixings::intraday::read_intraday(&files.index)?;
        (crate::underlying::intraday_underlyings(&f), None)
    } else {
        let (fixings, today) = fixings_views(&files.index, files.as_restated)?;
        (underlyings(&fixings), today)
    };
    let rent = RentSeries::from_csv_with(&files.rent, files.period_end, files.side)?;
    let names: Vec<String> = series.keys().cloned().collect();
    let chosen;
    let config = if files.underlying_given {
        config
    } else {
        let u = choose_underlying(&rent, &config.contract.underlying, &names)?;
        chosen = BacktestConfig {
            contract: config.contract.clone().on_underlying(&u),
            ..config.clone()
        };
        &chosen
    };
    let c = &config.contract;
    let underlying = series
        .remove(&c.underlying)
        .ok_or_else(|| unknown_underlying(&files.index, &c.underlying, &names))?;
    let forward = c
        .entry
        .forward_grade
        .as_ref()
        .and_then(|g| series.remove(g))
        .map(|u| u.values);
    let restated = today.and_then(|t| underlyings(&t).remove(&c.underlying));
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
    if let Some(gpu) = rent.names.gpu.as_deref() {
        let index_gpu = c.underlying.split('/').next().unwrap_or_default();
        if c.underlying.contains('/') && index_gpu != gpu {
            let cross = format!(
                "cross-hedge: the rent is for {gpu}, the futures settle on {}: a hedge across GPUs carries the basis between them",
                c.underlying
            );
            let w = &mut r.recommendation.warning;
            *w = Some(w.take().map_or(cross.clone(), |w| format!("{w}; {cross}")));
        }
    }
    Ok(r)
}

/// How far a rent's level may be from its index's (both USD per GPU-hour) before it
/// is read as another unit: a GPU's rent across operators, scopes and GPUs spans
/// a few times the index, not fifty.
const MAX_LEVEL_RATIO: f64 = 50.0;

/// A rent this many times its index's level (or 1/x of it) is run, with a warning
/// that names the units it could be in: a rent per GPU-day (24 times) was hedged
/// with 5,273 contracts where 220 hedge it (a hostile round).
const WARN_LEVEL_RATIO: f64 = 5.0;

/// Refuses a rent whose median price is more than [`MAX_LEVEL_RATIO`] times the
/// median of its index over the rent's months, or less than its inverse: a rent
/// written per GPU-month (730 times its hourly rate) was hedged with 7,300
/// contracts for ten GPUs, "100% removed" (a hostile round). Beyond
/// [`WARN_LEVEL_RATIO`] it returns the warning to give. An index in points (a
/// chained or hedonic composite) has no such scale and is not compared. Every
/// backtest runs it: `backtest`, `track`'s candidates, the lab's hedgers.
pub(crate) fn rent_on_the_index_s_scale(
    rent: &RentSeries,
    underlying: &crate::underlying::Underlying,
) -> Result<Option<String>, BacktestError> {
    use rentix_fixings::IndexUnit;
    if underlying.id.unit() != IndexUnit::UsdPerGpuHour {
        return Ok(None);
    }
    let (Some(first), Some(last)) = (rent.periods.first(), rent.periods.last()) else {
        return Ok(None);
    };
    let prices: Vec<f64> = rent.periods.iter().map(|p| p.price.get()).collect();
    let index: Vec<f64> = underlying
        .values
        .range(first.start..last.end)
        .map(|(_, v)| v)
        .collect();
    let (Some(r), Some(i)) = (
        rentix_core::stats::median(&prices),
        rentix_core::stats::median(&index),
    ) else {
        return Ok(None);
    };
    if i <= 0.0 || r <= 0.0 {
        return Ok(None);
    }
    let ratio = r / i;
    let far = |bound: f64| !(1.0 / bound..=bound).contains(&ratio);
    if !far(WARN_LEVEL_RATIO) {
        return Ok(None);
    }
    let how = if ratio > 1.0 {
        format!("{ratio:.0} times")
    } else {
        format!("1/{:.0} of", 1.0 / ratio)
    };
    let levels = format!(
        "the rent's median price, {r:.4} USD per GPU-hour, is {how} the median of {} over the same months ({i:.4})",
        underlying.id
    );
    let units = "usd_per_gpu_hour must be per GPU and per hour (a price per GPU-month is about 730 times the hourly rate, per GPU-day 24 times, per 8-GPU node-hour 8 times)";
    if far(MAX_LEVEL_RATIO) {
        return Err(BacktestError::Data(format!(
            "{levels}: {units}, and a hedge sized on this rent would be off by as much; convert the column and run again"
        )));
    }
    Ok(Some(format!(
        "{levels}: check the unit, {units}; a hedge sized on a rent in another unit is off by as much"
    )))
}
