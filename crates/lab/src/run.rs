//! A lab run from a store, as `rentix contract` and Python's `rentix.contract()`
//! make it: every candidate evaluated on the store's observations, the comparison
//! assembled and written with its charts' data.

use crate::{
    check_names, evaluate, read_hedgers, read_truth, write, Candidate, Comparison, LabError,
    LabOptions, MonthRow,
};
use std::path::Path;

/// What a lab run reads and how its comparison names its inputs.
#[derive(Debug, Clone)]
pub struct LabRun<'a> {
    /// The store the candidates are evaluated on.
    pub store: &'a Path,
    /// The candidates, in the comparison's order.
    pub candidates: &'a [Candidate],
    /// The simulator's truth, when known.
    pub truth: Option<&'a Path>,
    /// A directory of hedgers' rents (and events).
    pub rent_dir: Option<&'a Path>,
    /// The run's settings.
    pub options: &'a LabOptions,
    /// How comparison.json names the store, truth and rent directory.
    pub labels: (String, Option<String>, Option<String>),
}

/// Evaluates every candidate of `run` on its store (`each` is told of each before
/// it is evaluated: a progress line), assembles the comparison and writes it to
/// `out` (comparison.csv, by_month.csv, comparison.json; the charts are the
/// report's, drawn from it).
pub fn run_on_store(
    run: &LabRun<'_>,
    out: &Path,
    mut each: impl FnMut(&Candidate),
) -> Result<(Comparison, Vec<MonthRow>), LabError> {
    check_names(run.candidates)?;
    run.options.check()?;
    let truth = run.truth.map(read_truth).transpose()?;
    let hedgers = match run.rent_dir {
        Some(d) => read_hedgers(d)?,
        None => Vec::new(),
    };
    let store = rentix_store::Store::open(run.store)?;
    let rows = store.read_projected(None, None, rentix_store::Projection::Fixing)?;
    let mut evaluations = Vec::new();
    for c in run.candidates {
        each(c);
        evaluations.push(evaluate(&rows, c, truth.as_ref(), &hedgers, run.options)?);
    }
    // A comparison of no settled month reads as designs no attack moves: a hostile
    // run's `--from 2030-01-01` wrote every candidate at 0/0, its '-' cells saying
    // "neither fake trades ... move it" (exit 0).
    if evaluations.iter().all(|e| e.row.months_settled == 0) {
        return Err(LabError::Settings(format!(
            "no candidate settled a month{}: nothing to compare (a month settles when the candidate's fixings cover it as its contract requires); nothing was written",
            match (run.options.from, run.options.to) {
                (None, None) => " in the store".to_string(),
                (f, t) => format!(
                    " from {} to {}",
                    f.map_or("the store's first".into(), |d| d.to_string()),
                    t.map_or("its last".into(), |d| d.to_string())
                ),
            }
        )));
    }
    let (store_label, truth_label, rent_label) = run.labels.clone();
    let (comparison, months) = Comparison::assemble(
        store_label,
        truth_label,
        rent_label,
        run.options,
        evaluations,
    );
    write(out, &comparison, &months)?;
    Ok((comparison, months))
}
