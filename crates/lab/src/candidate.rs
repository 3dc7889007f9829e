//! A candidate contract design: a methodology (how the index is fixed) and a contract
//! (what settles on it), named for the comparison table.

use crate::error::LabError;
use rentix_backtest::ContractSpec;
use rentix_index::Methodology;
use std::path::{Path, PathBuf};

/// One candidate design, read from `--candidate [NAME=]METHODOLOGY.toml:CONTRACT.toml`.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// `NAME=` given on the command line, or `<methodology stem>:<contract stem>`.
    pub name: String,
    /// The methodology file, as given.
    pub methodology_path: PathBuf,
    /// The contract file, as given.
    pub contract_path: PathBuf,
    /// How the index is fixed.
    pub methodology: Methodology,
    /// What settles on it; its `underlying` is the grade evaluated.
    pub contract: ContractSpec,
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default()
}

impl Candidate {
    /// The methodology and contract a `[NAME=]METHODOLOGY:CONTRACT` argument names,
    /// as given (files or shipped names), or `None` when it does not have that shape.
    pub fn files(arg: &str) -> Option<(PathBuf, PathBuf)> {
        let rest = match arg.split_once('=') {
            Some((n, r)) if !n.contains(':') => r,
            _ => arg,
        };
        let (m, c) = rest.rsplit_once(':')?;
        (!m.is_empty() && !c.is_empty()).then(|| (PathBuf::from(m), PathBuf::from(c)))
    }

    /// Parses `[NAME=]METHODOLOGY.toml:CONTRACT.toml` and reads both files.
    pub fn parse(arg: &str) -> Result<Self, LabError> {
        let bad = |detail: String| LabError::Candidate {
            arg: arg.to_string(),
            detail,
        };
        let name = match arg.split_once('=') {
            Some((n, _)) if !n.contains(':') => Some(n.trim().to_string()),
            _ => None,
        };
        let (mp, cp) = Self::files(arg).ok_or_else(|| {
            bad(
                "expected [NAME=]METHODOLOGY.toml:CONTRACT.toml, both a methodology and a contract"
                    .into(),
            )
        })?;
        let methodology = Methodology::from_file(&mp).map_err(|e| bad(e.to_string()))?;
        let contract = ContractSpec::from_file(&cp).map_err(|e| bad(e.to_string()))?;
        let name = name.unwrap_or_else(|| format!("{}:{}", stem(&mp), stem(&cp)));
        if name.is_empty() || name.len() > 80 || name.chars().any(char::is_control) {
            return Err(bad("a name is 1 to 80 printable characters".into()));
        }
        Ok(Self {
            name,
            methodology_path: mp,
            contract_path: cp,
            methodology,
            contract,
        })
    }
}

/// Refuses two candidates with the same name (their rows could not be told apart).
pub fn check_names(candidates: &[Candidate]) -> Result<(), LabError> {
    let mut seen = std::collections::BTreeSet::new();
    for c in candidates {
        if !seen.insert(c.name.as_str()) {
            return Err(LabError::DuplicateName(c.name.clone()));
        }
    }
    Ok(())
}
