//! `rentix index`.

use crate::cli::IndexArgs;
use anyhow::{bail, Context};
use chrono::Days;
use rentix_core::GradePattern;
use rentix_index::{compute, forward_table, publish, IndexRequest, Methodology};
use rentix_ingest::{Store, TableFormat};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Validated index configuration.
pub struct IndexConfig {
    pub store: PathBuf,
    pub out: PathBuf,
    pub request: IndexRequest,
}

impl IndexConfig {
    pub fn from_args(a: &IndexArgs) -> anyhow::Result<Self> {
        TableFormat::of(&a.out).with_context(|| format!("--out {}", a.out.display()))?;
        let methodology = match &a.methodology {
            Some(p) => Methodology::from_file(p)?,
            None => Methodology::default_methodology(),
        };
        let grade_filters = a
            .grades
            .iter()
            .map(|g| GradePattern::new(g).with_context(|| format!("--grade {g:?}")))
            .collect::<anyhow::Result<Vec<_>>>()?;
        if let (Some(f), Some(t)) = (a.from, a.to) {
            if f > t {
                bail!("--from {f} is after --to {t}");
            }
        }
        Ok(Self {
            store: a.store.clone(),
            out: a.out.clone(),
            request: IndexRequest {
                methodology,
                grade_filters,
                from: a.from,
                to: a.to,
            },
        })
    }
}

/// `<dir>/<stem>_forward.<ext>` beside a fixings file.
pub fn forward_path(out: &Path) -> PathBuf {
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let ext = out
        .extension()
        .map(|e| e.to_string_lossy().to_string())
        .unwrap_or_else(|| "csv".into());
    out.with_file_name(format!("{stem}_forward.{ext}"))
}

/// Runs the index and publishes it; returns a printable summary.
pub fn execute(cfg: &IndexConfig) -> anyhow::Result<String> {
    let store = Store::open(&cfg.store)?;
    let m = &cfg.request.methodology;
    // Read a margin around the range: the pooling window and lag reach back, and a
    // different cut-off can move an observation across a partition boundary.
    let margin =
        u64::from(m.pooling.window_days + m.pooling.lag_days + m.fallback.spread_lookback_days) + 2;
    let from = cfg.request.from.map(|f| f - Days::new(margin));
    let to = cfg.request.to.map(|t| t + Days::new(2));
    let rows = store.read(from, to).context("reading the store")?;
    let mut result = compute(&rows, &cfg.request).map_err(anyhow::Error::msg)?;
    if result.fixings.is_empty() {
        bail!(
            "no observation in {} matches the methodology's grades and the requested range",
            cfg.store.display()
        );
    }
    let publication = publish(&cfg.out, &mut result.fixings)
        .with_context(|| format!("writing {}", cfg.out.display()))?;
    if m.forward_curve {
        forward_table(&result.forward).write(&forward_path(&cfg.out))?;
    }
    let mut by_level: BTreeMap<String, usize> = BTreeMap::new();
    for f in &result.fixings {
        let k = f.level.map_or("none".to_string(), |l| l.to_string());
        *by_level.entry(k).or_default() += 1;
    }
    let grades: std::collections::BTreeSet<&str> =
        result.fixings.iter().map(|f| f.grade.as_str()).collect();
    let sufficient = result.fixings.iter().filter(|f| f.sufficient).count();
    let mut s = format!(
        "{} fixings for {} grades/composites, {} to {}, methodology {}\n",
        result.fixings.len(),
        grades.len(),
        result
            .fixings
            .first()
            .map(|f| f.date.to_string())
            .unwrap_or_default(),
        result
            .fixings
            .last()
            .map(|f| f.date.to_string())
            .unwrap_or_default(),
        m.version
    );
    s.push_str(&format!(
        "by level (1 trades, 2 firm, 3 listings, 4 carried): {}\n",
        by_level
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    s.push_str(&format!(
        "sufficient: {sufficient} of {}\n",
        result.fixings.len()
    ));
    if !publication.restatements.is_empty() {
        s.push_str(&format!(
            "restated {} fixings; previous file kept as {}\n",
            publication.restatements.len(),
            publication
                .archived
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        ));
    }
    s.push_str(&format!("wrote {}", cfg.out.display()));
    Ok(s)
}

pub fn run(a: IndexArgs) -> anyhow::Result<()> {
    let cfg = IndexConfig::from_args(&a)?;
    outln!("{}", execute(&cfg)?);
    Ok(())
}
