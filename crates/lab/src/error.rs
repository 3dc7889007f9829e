//! What the contract lab refuses, typed: a candidate it cannot read or name, a
//! setting no run could mean, an input or output file, a grade it cannot evaluate.

use std::path::PathBuf;
use thiserror::Error;

/// Why the contract lab refused a run.
#[derive(Debug, Error)]
pub enum LabError {
    /// A `--candidate` that does not parse, or whose files do not read.
    #[error("--candidate {arg:?}: {detail}")]
    Candidate {
        /// The argument as given.
        arg: String,
        /// What is wrong with it.
        detail: String,
    },
    /// Two candidates share a name.
    #[error("two candidates are named {0:?}; name them with NAME=METHODOLOGY.toml:CONTRACT.toml")]
    DuplicateName(String),
    /// A setting of the run (`--attack-price-pct`, `--from`/`--to`).
    #[error("{0}")]
    Settings(String),
    /// A file the lab reads (truth, rents, a comparison.json).
    #[error("{}: {detail}", path.display())]
    Input {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// A rent or event file of `--rent-dir`, as its reader refused it.
    #[error(transparent)]
    Backtest(#[from] rentix_backtest::BacktestError),
    /// A file the lab reads or writes, as the table layer refused it.
    #[error(transparent)]
    Table(#[from] rentix_table::TableError),
    /// The store the candidates are evaluated on, as it refused a read.
    #[error("reading the store: {0}")]
    Store(#[from] rentix_store::StoreError),
    /// The candidate's grade or methodology, as the engine refused it.
    #[error("candidate {candidate}: {detail}")]
    Evaluate {
        /// The candidate's name.
        candidate: String,
        /// What the engine refused.
        detail: String,
    },
}
