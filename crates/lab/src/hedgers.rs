//! Hedger utility: the walk-forward effectiveness each rent of a directory would get
//! hedging with the candidate's contract, from the backtester itself.

use crate::LabError;
use rentix_backtest::{
    read_events, run, BacktestConfig, ContractSpec, IndexInputs, PeriodEnd, RentSeries, Strategy,
    Underlying,
};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A rent file of `--rent-dir`, with the events file beside it when there is one
/// (`rent_X.csv` and `events_X.csv`).
#[derive(Debug, Clone)]
pub struct Hedger {
    /// `X` of `rent_X.csv`.
    pub name: String,
    /// The rent series, period ends read as exclusive.
    pub rent: RentSeries,
    /// The events of `events_X.csv`; empty without that file.
    pub events: Vec<rentix_backtest::Event>,
}

/// One hedger's result against one candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HedgerResult {
    /// The hedger's name.
    pub hedger: String,
    /// Walk-forward effectiveness, a share (point estimate); `None` when the backtest
    /// failed or the rent never varied.
    pub effectiveness: Option<f64>,
    /// Why the backtest could not run (too few settled months, say).
    pub failed: Option<String>,
    /// The GPU of a rent of another GPU than the contract's (a cross-hedge): its
    /// effectiveness is reported and left out of the design's hedge utility,
    /// which is of the rents the contract is for. A hostile round found an
    /// H100 design's "49.8%" the midpoint of an A100 rent's -781% and H100 rents'
    /// 99.7%.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cross_hedge: Option<String>,
}

impl HedgerResult {
    /// Its effectiveness, when it counts in the hedge utility (not a cross-hedge).
    pub fn counted(&self) -> Option<f64> {
        self.cross_hedge
            .is_none()
            .then_some(self.effectiveness)
            .flatten()
    }
}

/// Reads every `rent_*.csv` of `dir` (sorted by name) and its events.
pub fn read_hedgers(dir: &Path) -> Result<Vec<Hedger>, LabError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|source| rentix_table::TableError::Read {
            path: dir.to_path_buf(),
            source,
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("rent_") && n.ends_with(".csv"))
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(LabError::Input {
            path: dir.to_path_buf(),
            detail: "--rent-dir: no rent_*.csv file in it".into(),
        });
    }
    files
        .iter()
        .map(|p| {
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default();
            let name = stem.trim_start_matches("rent_").to_string();
            let rent = RentSeries::from_csv(p, PeriodEnd::Exclusive)?;
            let ev = dir.join(format!("events_{name}.csv"));
            let events = if ev.exists() {
                read_events(&ev, PeriodEnd::Exclusive)?
            } else {
                Vec::new()
            };
            Ok(Hedger { name, rent, events })
        })
        .collect()
}

/// Walk-forward effectiveness of each hedger on `underlying` under `contract`.
pub(crate) fn hedge_all(
    hedgers: &[Hedger],
    underlying: &Underlying,
    contract: &ContractSpec,
) -> Vec<HedgerResult> {
    let cfg = BacktestConfig {
        contract: contract.clone(),
        strategies: vec![Strategy::Unhedged, Strategy::WalkForward],
        // Only the point estimate is used: no resampling.
        bootstrap_resamples: 0,
        seed: 0,
        rolling_window: 12,
        perp: None,
    };
    let idx = IndexInputs::of(underlying.clone());
    // A rent that names another GPU than a grade's is a cross-hedge; a
    // composite's GPUs cannot be told, and a rent naming none counts.
    let cross = |h: &Hedger| {
        if underlying.id.is_composite() {
            return None;
        }
        match h.rent.names.owns(underlying.name()) {
            Some((false, _)) => h.rent.names.gpu.clone(),
            _ => None,
        }
    };
    hedgers
        .iter()
        .map(|h| match run(&h.rent, &h.events, &idx, &cfg) {
            Ok(r) => HedgerResult {
                hedger: h.name.clone(),
                effectiveness: r
                    .strategies
                    .iter()
                    .find(|s| s.strategy == Strategy::WalkForward)
                    .and_then(|s| s.effectiveness),
                failed: None,
                cross_hedge: cross(h),
            },
            Err(e) => HedgerResult {
                hedger: h.name.clone(),
                effectiveness: None,
                failed: Some(e.to_string()),
                cross_hedge: cross(h),
            },
        })
        .collect()
}
