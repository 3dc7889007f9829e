//! `rentix._rentix`: the engine the CLI uses, for the Python package in
//! `python/rentix`. Functions take and write files (Parquet, CSV) that the Python
//! side hands to and reads with polars; errors are `rentix.RentixError` carrying the
//! CLI's file/row/field message. The GIL is released while the engine works.

use pyo3::create_exception;
use pyo3::prelude::*;
use rentix_backtest::{
    BacktestConfig, BacktestFiles, ContractSpec, PeriodEnd, RentSeries, Side, Strategy,
};
use rentix_index::{compute, compute_from_store, fixings_table, Fixing, IndexRequest, Methodology};
use rentix_ingest::IngestOptions;
use rentix_store::Store;
use std::path::{Path, PathBuf};

create_exception!(
    _rentix,
    RentixError,
    pyo3::exceptions::PyValueError,
    "A failure of rentix, with the CLI's message (file, row, field). Caught as one class, or by its subclasses: UsageError, InputError, IoError."
);
create_exception!(
    _rentix,
    UsageError,
    RentixError,
    "An argument, methodology, contract or mapping that cannot be run (the CLI exits 2)."
);
create_exception!(
    _rentix,
    InputError,
    RentixError,
    "A file, row or store that cannot be used, named in the message (the CLI exits 3)."
);
create_exception!(
    _rentix,
    IoError,
    RentixError,
    "A file that does not exist, could not be read or written (the CLI exits 4)."
);

/// The Python exception of a failure: its class as the CLI's exit code decides it
/// (`rentix_errors::class`), with the CLI's message (the error and its causes).
/// A Python exception raised from a read's hand-over of its dates
/// ([`rentix_ingest::Staged::each_date`]), the read's own errors included.
struct Raised(PyErr);

impl From<rentix_ingest::IngestError> for Raised {
    fn from(e: rentix_ingest::IngestError) -> Self {
        Raised(fail(e))
    }
}

fn fail<E: std::error::Error + 'static>(e: E) -> PyErr {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let said = c.to_string();
        if !text.ends_with(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        cause = c.source();
    }
    match rentix_errors::class(&e) {
        rentix_errors::Class::Usage => UsageError::new_err(text),
        rentix_errors::Class::Io => IoError::new_err(text),
        rentix_errors::Class::Input | rentix_errors::Class::Finding => InputError::new_err(text),
    }
}

/// The store at `path`: one that does not exist is an `IoError` (as the CLI's
/// exit 4), one that is not a store an `InputError`.
fn open_store(path: &str) -> PyResult<Store> {
    if !Path::new(path).exists() {
        return Err(IoError::new_err(format!("store {path} does not exist")));
    }
    Store::open(Path::new(path)).map_err(fail)
}

/// An argument that cannot be run: a date that is not one, a range that ends
/// before it starts, an option the function does not take.
fn usage(text: impl Into<String>) -> PyErr {
    UsageError::new_err(text.into())
}

/// A methodology, contract, mapping or perp named by a path that does not exist and
/// by no shipped file's name: an I/O failure as in the CLI (`IoError`), not a
/// methodology that cannot be run.
fn config_exists(spec: &str, kind: rentix_core::ConfigKind) -> PyResult<()> {
    let path = Path::new(spec);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    if path.exists() || rentix_core::bundled(kind, &name).is_some() {
        return Ok(());
    }
    let names: Vec<&str> = kind.bundled().iter().map(|(n, _)| *n).collect();
    Err(IoError::new_err(format!(
        "{spec} does not exist, and no shipped {} has that name (shipped: {})",
        kind.as_str(),
        names.join(", ")
    )))
}

/// A methodology given as a path, a shipped name (`"default"`,
/// `"settlement_business_days"`) or a JSON object (a Python dict, serialized).
fn methodology(spec: &str) -> PyResult<Methodology> {
    let spec = spec.trim();
    if spec.starts_with('{') {
        let value: serde_json::Value = serde_json::from_str(spec).map_err(fail)?;
        let text = toml::to_string(&value).map_err(fail)?;
        return Methodology::from_toml(&text, Path::new("<dict>")).map_err(fail);
    }
    if spec == "default" {
        return Ok(Methodology::default_methodology());
    }
    config_exists(spec, rentix_core::ConfigKind::Methodology)?;
    Methodology::from_file(Path::new(spec)).map_err(fail)
}

fn request(m: Methodology, grades: &[String]) -> PyResult<IndexRequest> {
    let grade_filters = grades
        .iter()
        .map(|g| rentix_core::GradePattern::new(g).map_err(|e| usage(format!("grade {g:?}: {e}"))))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(IndexRequest {
        methodology: m,
        grade_filters,
        from: None,
        to: None,
    })
}

fn paths(v: &[String]) -> Vec<PathBuf> {
    v.iter().map(PathBuf::from).collect()
}

fn ingest_options(mapping: Option<String>, ratings: &[String]) -> PyResult<IngestOptions> {
    if let Some(m) = &mapping {
        config_exists(m, rentix_core::ConfigKind::Mapping)?;
    }
    Ok(IngestOptions {
        mapping: mapping.map(PathBuf::from),
        ratings: rentix_core::RatingTable::from_files(&paths(ratings)).map_err(fail)?,
        ..Default::default()
    })
}

/// How a range that holds no fixing is taken.
#[derive(Clone, Copy, PartialEq)]
enum Empty {
    /// Refused (`fix`, `Store.index`: what a user asked for, as the CLI refuses it).
    Refused,
    /// Written as an empty file (a Spark task's slice of a grade's history, which
    /// may hold none of the grade's days).
    Written,
}

/// Writes the fixings of `[from, to]` (every date when absent) to `out`.
fn write_fixings(
    fixings: Vec<Fixing>,
    from: Option<chrono::NaiveDate>,
    to: Option<chrono::NaiveDate>,
    out: &str,
    empty: Empty,
) -> PyResult<usize> {
    let span = fixings
        .iter()
        .map(|f| f.date)
        .min()
        .zip(fixings.iter().map(|f| f.date).max());
    let rows: Vec<Fixing> = fixings
        .into_iter()
        .filter(|f| from.is_none_or(|d| f.date >= d) && to.is_none_or(|d| f.date <= d))
        .collect();
    // Never an empty frame as if it were an answer (issue 49: the README's example
    // asked for a range past its data and got one): the CLI refuses it too.
    if rows.is_empty() && empty == Empty::Refused {
        let range = |d: Option<chrono::NaiveDate>| d.map_or("..".to_string(), |d| d.to_string());
        return Err(InputError::new_err(match span {
            Some((first, last)) => format!(
                "no fixing falls in the requested range {} to {}: the fixings run {first} to {last}",
                range(from),
                range(to)
            ),
            None => "no observation matches the methodology's grades".to_string(),
        }));
    }
    fixings_table(&rows).write(Path::new(out)).map_err(fail)?;
    Ok(rows.len())
}

fn date(s: Option<String>) -> PyResult<Option<chrono::NaiveDate>> {
    s.map(|d| {
        d.parse()
            .map_err(|_| usage(format!("{d:?} is not a date (YYYY-MM-DD)")))
    })
    .transpose()
}

/// Reads, validates, normalizes and deduplicates `files` as `rentix ingest` would;
/// writes the observations kept to `observations_out` (Parquet, the store's columns)
/// and the refused rows to `quarantine_out` (CSV). Returns the summary as JSON.
#[pyfunction]
#[pyo3(signature = (files, observations_out, quarantine_out, mapping=None, ratings=Vec::new()))]
fn read_files(
    py: Python<'_>,
    files: Vec<String>,
    observations_out: String,
    quarantine_out: String,
    mapping: Option<String>,
    ratings: Vec<String>,
) -> PyResult<String> {
    let options = ingest_options(mapping, &ratings)?;
    py.detach(|| {
        let mut read =
            rentix_ingest::read_in_memory(&paths(&files), &options, &mut |_| {}).map_err(fail)?;
        rentix_store::to_table(&mut read.rows)
            .write(Path::new(&observations_out))
            .map_err(fail)?;
        read.quarantine
            .write(Path::new(&quarantine_out))
            .map_err(fail)?;
        serde_json::to_string(&read.summary).map_err(fail)
    })
}

/// Fixes `files` in memory under `methodology` (as `rentix index --input`) and
/// writes the fixings of `[from_, to]` to `out`; returns how many.
#[pyfunction]
#[pyo3(signature = (files, methodology, out, mapping=None, grades=Vec::new(), from_=None, to=None, ratings=Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn fix_files(
    py: Python<'_>,
    files: Vec<String>,
    methodology: String,
    out: String,
    mapping: Option<String>,
    grades: Vec<String>,
    from_: Option<String>,
    to: Option<String>,
    ratings: Vec<String>,
) -> PyResult<usize> {
    let req = request(self::methodology(&methodology)?, &grades)?;
    let (from, to) = (date(from_)?, date(to)?);
    let options = ingest_options(mapping, &ratings)?;
    py.detach(|| {
        // A date's rows at a time, as `rentix index --input` fixes them.
        let staged =
            rentix_ingest::read_in_stages(&paths(&files), &options, &mut |_| {}).map_err(fail)?;
        let mut fixer = rentix_index::Fixer::new(&req).map_err(fail)?;
        let preparer = fixer.preparer();
        staged
            .each_date(
                |rows| preparer.prepare(rows.iter()),
                |_, prepared| fixer.add_prepared(prepared).map_err(|e| Raised(fail(e))),
            )
            .map_err(|e| e.0)?;
        let result = fixer.finish().map_err(fail)?;
        write_fixings(result.fixings, from, to, &out, Empty::Refused)
    })
}

/// Fixes the store at `store` under `methodology` over its whole history (as
/// `rentix index`) and writes the fixings of `[from_, to]` to `out`; returns how
/// many.
#[pyfunction]
#[pyo3(signature = (store, methodology, out, grades=Vec::new(), from_=None, to=None))]
fn fix_store(
    py: Python<'_>,
    store: String,
    methodology: String,
    out: String,
    grades: Vec<String>,
    from_: Option<String>,
    to: Option<String>,
) -> PyResult<usize> {
    let (from, to) = (date(from_)?, date(to)?);
    if let Some(m) = intraday(&methodology)? {
        if !grades.is_empty() {
            return Err(usage(
                "an intraday methodology fixes its own grades: leave grades out",
            ));
        }
        return py.detach(|| {
            let store = open_store(&store)?;
            let (r, _, _, _) =
                rentix_index::intraday::fix_store(&store, &m, from, to).map_err(fail)?;
            rentix_index::intraday::intraday_table(&r, &m)
                .write(Path::new(&out))
                .map_err(fail)?;
            Ok(r.fixings.len())
        });
    }
    let req = request(self::methodology(&methodology)?, &grades)?;
    py.detach(|| {
        let store = open_store(&store)?;
        let result = compute_from_store(&store, &req).map_err(fail)?;
        write_fixings(result.fixings, from, to, &out, Empty::Refused)
    })
}

/// The intraday methodology `spec` names (a path or a shipped name whose
/// `[calendar] cadence` is shorter than a day), or `None` for a daily one.
fn intraday(spec: &str) -> PyResult<Option<rentix_index::intraday::IntradayMethodology>> {
    use rentix_index::intraday::IntradayMethodology;
    let spec = spec.trim();
    if spec.starts_with('{') {
        let value: serde_json::Value = serde_json::from_str(spec).map_err(fail)?;
        let text = toml::to_string(&value).map_err(fail)?;
        return match IntradayMethodology::cadence_of(&text) {
            Some(_) => Ok(Some(
                IntradayMethodology::from_toml(&text, Path::new("<dict>")).map_err(fail)?,
            )),
            None => Ok(None),
        };
    }
    if spec == "default" {
        return Ok(None);
    }
    let path = Path::new(spec);
    let text =
        rentix_core::read_config(path, rentix_core::ConfigKind::Methodology).map_err(fail)?;
    match IntradayMethodology::cadence_of(&text) {
        Some(_) => Ok(Some(IntradayMethodology::from_file(path).map_err(fail)?)),
        None => Ok(None),
    }
}

/// Fixes observations already normalized (a Parquet file in the store's columns: a
/// store partition, or rows of one from a Spark task) under `methodology` and writes
/// every fixing to `out`. With `grades_only`, the methodology's composites (which
/// span grades) are left out: what one task of a job split by grade can fix.
#[pyfunction]
#[pyo3(signature = (observations, methodology, out, grades_only=false, through=None, composite=None, keep_from=None, keep_to=None))]
#[allow(clippy::too_many_arguments)]
fn fix_observations(
    py: Python<'_>,
    observations: String,
    methodology: String,
    out: String,
    grades_only: bool,
    through: Option<String>,
    composite: Option<String>,
    keep_from: Option<String>,
    keep_to: Option<String>,
) -> PyResult<usize> {
    let m = self::methodology(&methodology)?
        .edited(Path::new(&methodology), |spec| {
            if grades_only {
                spec.composite.clear();
            }
            // One composite's rows alone, from its members' observations.
            if let Some(name) = &composite {
                spec.composite.retain(|c| &c.name == name);
            }
        })
        .map_err(fail)?;
    if let Some(name) = composite.as_ref().filter(|_| m.composite.is_empty()) {
        return Err(usage(format!("the methodology has no composite {name:?}")));
    }
    let mut req = request(m, &[])?;
    // A group's run ends where the whole store's does: a grade whose last
    // observation comes earlier is carried to there, as in one run. A task of one
    // date range ([`observation_days`]) fixes through its range and keeps it alone.
    let (keep_from, keep_to) = (date(keep_from)?, date(keep_to)?);
    req.to = keep_to.or(date(through)?);
    py.detach(|| {
        let path = Path::new(&observations);
        let table = rentix_table::Table::read_parquet(path).map_err(fail)?;
        let rows =
            rentix_store::from_table(table, path, rentix_store::Projection::All).map_err(fail)?;
        let mut fixings = compute(&rows, &req).map_err(fail)?.fixings;
        if let Some(name) = &composite {
            fixings.retain(|f| &f.grade == name);
        }
        write_fixings(fixings, keep_from, keep_to, &out, Empty::Written)
    })
}

/// A grade key's first three segments (GPU/SCOPE/TERM), without a region or tier.
fn base_of(key: &str) -> String {
    let key = key.split('@').next().unwrap_or(key);
    key.split('/').take(3).collect::<Vec<_>>().join("/")
}

/// The composites of `methodology` whose fixing can use observations of the base
/// grade `grade` (GPU/SCOPE/TERM): a superset (tier and region parts of patterns are
/// ignored; the engine itself picks the grades a composite covers), so that a group
/// of a composite's members holds every observation it needs.
#[pyfunction]
fn composite_members(methodology: String, grade: String) -> PyResult<Vec<String>> {
    let m = self::methodology(&methodology)?;
    let g: rentix_core::Grade = grade
        .parse()
        .map_err(|e| usage(format!("grade {grade:?}: {e}")))?;
    let mut out = Vec::new();
    for c in &m.composite {
        let member = match c.method {
            rentix_index::CompositeMethod::Hedonic | rentix_index::CompositeMethod::Pooled => c
                .patterns
                .iter()
                .any(|p| rentix_core::GradePattern::new(&base_of(p)).is_ok_and(|p| p.matches(&g))),
            _ => c.weights.keys().any(|k| base_of(k) == grade),
        };
        if member {
            out.push(c.name.clone());
        }
    }
    Ok(out)
}

/// The last fixing date of a run over the store at `store` under `methodology`: where
/// every group of a job split by grade must end (its tail is read: the last week of
/// partitions).
#[pyfunction]
fn fixing_end(py: Python<'_>, store: String, methodology: String) -> PyResult<Option<String>> {
    let req = request(self::methodology(&methodology)?, &[])?;
    py.detach(|| {
        let store = open_store(&store)?;
        let Some((_, last)) = store.fixing_dates().map_err(fail)? else {
            return Ok(None);
        };
        let tail = (last - chrono::Days::new(7), None);
        let result =
            rentix_index::compute_from_partitions(&store, &req, Some(tail), None).map_err(fail)?;
        Ok(result
            .fixings
            .iter()
            .map(|f| f.date)
            .max()
            .map(|d| d.to_string()))
    })
}

/// The observation days `(first, last)` that the grade rows of `from_` through
/// `to` depend on under `methodology`: a task fixing a grade from only these
/// observations and keeping its rows of `[from_, to]` gives the rows of one run
/// over the whole history.
#[pyfunction]
fn observation_days(methodology: String, from_: String, to: String) -> PyResult<(String, String)> {
    let m = self::methodology(&methodology)?;
    let (Some(d1), Some(d2)) = (date(Some(from_))?, date(Some(to))?) else {
        return Err(usage("a date range needs both ends"));
    };
    if d1 > d2 {
        return Err(usage(format!(
            "the range {d1} to {d2} ends before it starts"
        )));
    }
    let rule = m.day_rule();
    let exact = rentix_index::incremental::first_exact_day(d1);
    let (first, last) = rentix_index::incremental::observation_days(&m, rule, exact, Some(d2));
    let last = last.unwrap_or(d2);
    Ok((first.to_string(), last.to_string()))
}

/// The contract lab's candidates (`[NAME=]METHODOLOGY:CONTRACT`, as `rentix
/// contract --candidate`) parsed and checked: `(name, base grade)` each, the base
/// grade (GPU/SCOPE/TERM) being the observations its evaluation reads.
#[pyfunction]
fn lab_candidates(candidates: Vec<String>) -> PyResult<Vec<(String, String)>> {
    let parsed = candidates
        .iter()
        .map(|c| rentix_lab::Candidate::parse(c).map_err(fail))
        .collect::<PyResult<Vec<_>>>()?;
    rentix_lab::check_names(&parsed).map_err(fail)?;
    if parsed.is_empty() {
        return Err(usage("no candidate given"));
    }
    Ok(parsed
        .into_iter()
        .map(|c| {
            let base = base_of(&c.contract.underlying);
            (c.name, base)
        })
        .collect())
}

fn lab_options(
    attack_price_pct: f64,
    from_: Option<String>,
    to: Option<String>,
) -> PyResult<rentix_lab::LabOptions> {
    let options = rentix_lab::LabOptions {
        attack_price_pct,
        from: date(from_)?,
        to: date(to)?,
    };
    options.check().map_err(fail)?;
    Ok(options)
}

/// Refuses lab settings no run could mean (as `rentix contract` does).
#[pyfunction]
#[pyo3(signature = (attack_price_pct=10.0, from_=None, to=None))]
fn lab_check(attack_price_pct: f64, from_: Option<String>, to: Option<String>) -> PyResult<()> {
    lab_options(attack_price_pct, from_, to).map(|_| ())
}

/// One lab candidate evaluated on the observations in `observations` (Parquet, the
/// store's columns; those of its base grade suffice): the evaluation as JSON, for
/// [`lab_write`].
#[pyfunction]
#[pyo3(signature = (observations, candidate, truth=None, rent_dir=None, attack_price_pct=10.0, from_=None, to=None))]
#[allow(clippy::too_many_arguments)]
fn lab_evaluate(
    py: Python<'_>,
    observations: String,
    candidate: String,
    truth: Option<String>,
    rent_dir: Option<String>,
    attack_price_pct: f64,
    from_: Option<String>,
    to: Option<String>,
) -> PyResult<String> {
    let options = lab_options(attack_price_pct, from_, to)?;
    let cand = rentix_lab::Candidate::parse(&candidate).map_err(fail)?;
    py.detach(|| {
        let truth = truth
            .map(|p| rentix_lab::read_truth(Path::new(&p)))
            .transpose()
            .map_err(fail)?;
        let hedgers = match rent_dir {
            Some(d) => rentix_lab::read_hedgers(Path::new(&d)).map_err(fail)?,
            None => Vec::new(),
        };
        let path = Path::new(&observations);
        let table = rentix_table::Table::read_parquet(path).map_err(fail)?;
        let rows = rentix_store::from_table(table, path, rentix_store::Projection::Fixing)
            .map_err(fail)?;
        let e =
            rentix_lab::evaluate(&rows, &cand, truth.as_ref(), &hedgers, &options).map_err(fail)?;
        serde_json::to_string(&e).map_err(fail)
    })
}

/// Writes what `rentix contract --out out` writes (comparison.csv, by_month.csv,
/// comparison.json, the charts) from evaluations ([`lab_evaluate`]) in candidate
/// order; `store`, `truth` and `rent_dir` are the labels comparison.json shows.
#[pyfunction]
#[pyo3(signature = (out, evaluations, store, truth=None, rent_dir=None, attack_price_pct=10.0, from_=None, to=None))]
#[allow(clippy::too_many_arguments)]
fn lab_write(
    py: Python<'_>,
    out: String,
    evaluations: Vec<String>,
    store: String,
    truth: Option<String>,
    rent_dir: Option<String>,
    attack_price_pct: f64,
    from_: Option<String>,
    to: Option<String>,
) -> PyResult<()> {
    let options = lab_options(attack_price_pct, from_, to)?;
    let evaluations = evaluations
        .iter()
        .map(|e| serde_json::from_str::<rentix_lab::Evaluation>(e).map_err(fail))
        .collect::<PyResult<Vec<_>>>()?;
    py.detach(|| {
        let (comparison, months) =
            rentix_lab::Comparison::assemble(store, truth, rent_dir, &options, evaluations);
        let out = Path::new(&out);
        rentix_lab::write(out, &comparison, &months).map_err(fail)?;
        rentix_report::contract_lab_charts(out, &comparison).map_err(fail)
    })
}

/// `rentix contract` as a call (`rentix_lab::run_on_store`, the CLI's own run):
/// every candidate (`[NAME=]METHODOLOGY:CONTRACT`) evaluated on the store, the
/// comparison and its charts written to `out` as the CLI writes them.
#[pyfunction(name = "contract")]
#[pyo3(signature = (store, candidates, out, truth=None, rent_dir=None, attack_price_pct=10.0, from_=None, to=None))]
#[allow(clippy::too_many_arguments)]
fn run_contract(
    py: Python<'_>,
    store: String,
    candidates: Vec<String>,
    out: String,
    truth: Option<String>,
    rent_dir: Option<String>,
    attack_price_pct: f64,
    from_: Option<String>,
    to: Option<String>,
) -> PyResult<()> {
    for p in std::iter::once(&store)
        .chain(truth.iter())
        .chain(rent_dir.iter())
    {
        if !Path::new(p).exists() {
            return Err(IoError::new_err(format!("{p} does not exist")));
        }
    }
    if candidates.is_empty() {
        return Err(usage("no candidate given"));
    }
    // A methodology or contract that is neither a file nor a shipped name is an
    // IoError, as the CLI exits 4 for it.
    for (m, c) in candidates
        .iter()
        .filter_map(|c| rentix_lab::Candidate::files(c))
    {
        config_exists(&m.to_string_lossy(), rentix_core::ConfigKind::Methodology)?;
        config_exists(&c.to_string_lossy(), rentix_core::ConfigKind::Contract)?;
    }
    let options = lab_options(attack_price_pct, from_, to)?;
    let cands = candidates
        .iter()
        .map(|c| rentix_lab::Candidate::parse(c).map_err(fail))
        .collect::<PyResult<Vec<_>>>()?;
    py.detach(|| {
        let run = rentix_lab::LabRun {
            store: Path::new(&store),
            candidates: &cands,
            truth: truth.as_deref().map(Path::new),
            rent_dir: rent_dir.as_deref().map(Path::new),
            options: &options,
            labels: (store.clone(), truth.clone(), rent_dir.clone()),
        };
        let out = Path::new(&out);
        let (comparison, _) = rentix_lab::run_on_store(&run, out, |_| {}).map_err(fail)?;
        rentix_report::contract_lab_charts(out, &comparison).map_err(fail)
    })
}

/// Whether a methodology has composites (which a job split by grade cannot fix in
/// its tasks).
#[pyfunction]
fn has_composites(methodology: String) -> PyResult<bool> {
    Ok(!self::methodology(&methodology)?.composite.is_empty())
}

/// Ingests `files` into the store at `store` (as `rentix ingest`); returns the run's
/// summary as JSON.
#[pyfunction]
#[pyo3(signature = (store, files, mapping=None, ratings=Vec::new()))]
fn ingest(
    py: Python<'_>,
    store: String,
    files: Vec<String>,
    mapping: Option<String>,
    ratings: Vec<String>,
) -> PyResult<String> {
    let options = ingest_options(mapping, &ratings)?;
    py.detach(|| {
        let summary =
            rentix_ingest::ingest(Path::new(&store), &paths(&files), &options, &mut |_| {})
                .map_err(fail)?;
        serde_json::to_string(&summary).map_err(fail)
    })
}

/// The committed partition files of the store at `store` (paths relative to it).
#[pyfunction]
fn partitions(store: String) -> PyResult<Vec<String>> {
    let store = open_store(&store)?;
    Ok(store.partitions().map_err(fail)?.paths())
}

fn contract(path: Option<String>, underlying: Option<String>) -> PyResult<ContractSpec> {
    let mut c = match path {
        Some(p) => {
            config_exists(&p, rentix_core::ConfigKind::Contract)?;
            ContractSpec::from_file(Path::new(&p)).map_err(fail)?
        }
        None => ContractSpec::default_contract(),
    };
    if let Some(u) = underlying {
        rentix_backtest::validate_index_name(&u).map_err(|e| usage(format!("underlying: {e}")))?;
        c = c.on_underlying(&u);
    }
    Ok(c)
}

fn side(s: Option<String>) -> PyResult<Option<Side>> {
    match s.as_deref() {
        None => Ok(None),
        Some("pay") => Ok(Some(Side::Pay)),
        Some("earn") => Ok(Some(Side::Earn)),
        Some(other) => Err(usage(format!(
            "side {other:?}: expected \"pay\" or \"earn\""
        ))),
    }
}

/// Backtests a hedge of `rent` with futures on `index`'s fixings (and a perp beside
/// them when `perp` names one) (as `rentix backtest`) and writes `summary.json`, `periods.csv` and `daily.csv` to `out`;
/// returns the summary as JSON.
#[pyfunction]
#[pyo3(signature = (index, rent, out, events=None, contract=None, underlying=None, side=None,
    period_end="exclusive".to_string(), strategies=Vec::new(), resamples=1000, seed=20240101,
    as_restated=false, perp=None, perp_premium=None))]
#[allow(clippy::too_many_arguments)]
fn backtest(
    py: Python<'_>,
    index: String,
    rent: String,
    out: String,
    events: Option<String>,
    contract: Option<String>,
    underlying: Option<String>,
    side: Option<String>,
    period_end: String,
    strategies: Vec<String>,
    resamples: usize,
    seed: u64,
    as_restated: bool,
    perp: Option<String>,
    perp_premium: Option<f64>,
) -> PyResult<String> {
    let underlying_given = contract.is_some() || underlying.is_some();
    let contract = self::contract(contract, underlying)?;
    let perp = match perp {
        None if perp_premium.is_some() => {
            return Err(usage(
                "perp_premium needs perp (a perp spec or a shipped name)",
            ))
        }
        None => None,
        Some(p) => {
            config_exists(&p, rentix_core::ConfigKind::Perp)?;
            let spec = rentix_backtest::PerpSpec::from_file(Path::new(&p)).map_err(fail)?;
            Some(match perp_premium {
                Some(x) => spec.with_constant_premium(x).map_err(fail)?,
                None => spec,
            })
        }
    };
    let mut strategies = if strategies.is_empty() {
        Strategy::ALL.to_vec()
    } else {
        strategies
            .iter()
            .map(|s| s.parse::<Strategy>().map_err(usage))
            .collect::<PyResult<Vec<_>>>()?
    };
    strategies.sort();
    strategies.dedup();
    if resamples > 100_000 {
        return Err(usage(format!("resamples {resamples} is more than 100000")));
    }
    let files = BacktestFiles {
        index: PathBuf::from(index),
        rent: PathBuf::from(rent),
        period_end: period_end.parse::<PeriodEnd>().map_err(usage)?,
        side: self::side(side)?,
        events: events.map(PathBuf::from),
        // A contract that applies revisions after expiry settles on today's view.
        as_restated: as_restated || !contract.ignore_revisions_after_expiry,
        underlying_given,
    };
    let config = BacktestConfig {
        contract,
        strategies,
        bootstrap_resamples: resamples,
        seed,
        rolling_window: 12,
        perp,
    };
    py.detach(|| {
        let r = rentix_backtest::backtest_files(&files, &config).map_err(fail)?;
        rentix_backtest::write_backtest(Path::new(&out), &r).map_err(fail)?;
        serde_json::to_string(&r).map_err(fail)
    })
}

/// Ranks every grade and composite of `index` by how well it tracks (and would
/// hedge) `rent` (as `rentix track`) and writes the ranking to `out`.
#[pyfunction]
#[pyo3(signature = (index, rent, out, events=None, contract=None, side=None,
    period_end="exclusive".to_string(), min_periods=rentix_backtest::DEFAULT_MIN_PERIODS,
    min_sufficient_share=rentix_backtest::DEFAULT_MIN_SUFFICIENT_SHARE, resamples=1000,
    seed=20240101))]
#[allow(clippy::too_many_arguments)]
fn track(
    py: Python<'_>,
    index: String,
    rent: String,
    out: String,
    events: Option<String>,
    contract: Option<String>,
    side: Option<String>,
    period_end: String,
    min_periods: usize,
    min_sufficient_share: f64,
    resamples: usize,
    seed: u64,
) -> PyResult<usize> {
    if !(0.0..=1.0).contains(&min_sufficient_share) {
        return Err(usage(format!(
            "min_sufficient_share {min_sufficient_share} is not a share between 0 and 1"
        )));
    }
    let underlying_given = contract.is_some();
    let contract = self::contract(contract, None)?;
    let period_end = period_end.parse::<PeriodEnd>().map_err(usage)?;
    let side = self::side(side)?;
    let opt = rentix_backtest::TrackOptions {
        min_periods,
        min_sufficient_share,
        resamples,
        seed,
        underlying_given,
    };
    py.detach(|| {
        let (fixings, _) =
            rentix_backtest::fixings_views(Path::new(&index), false).map_err(fail)?;
        let rent = RentSeries::from_csv_with(Path::new(&rent), period_end, side).map_err(fail)?;
        let events = match events {
            Some(p) => rentix_backtest::read_events(Path::new(&p), period_end).map_err(fail)?,
            None => Vec::new(),
        };
        let rows =
            rentix_backtest::track(&rent, &events, &fixings, &contract, &opt).map_err(fail)?;
        rentix_backtest::track_table(&rows)
            .write(Path::new(&out))
            .map_err(fail)?;
        Ok(rows.iter().filter(|r| r.rank.is_some()).count())
    })
}

/// The version of the engine.
/// Writes a simulated market into `out` as `rentix simulate` does (the bundled
/// parameters, or `params`, with the overrides given); returns its manifest as JSON.
#[pyfunction]
#[pyo3(signature = (out, params=None, seed=None, start=None, days=None, rows=None, cadence=None))]
#[allow(
    clippy::too_many_arguments,
    reason = "the CLI's flags, as keyword arguments"
)]
fn simulate(
    py: Python<'_>,
    out: String,
    params: Option<String>,
    seed: Option<u64>,
    start: Option<String>,
    days: Option<u32>,
    rows: Option<u64>,
    cadence: Option<String>,
) -> PyResult<String> {
    let mut p = match &params {
        Some(path) => {
            if !Path::new(path).exists() {
                return Err(IoError::new_err(format!(
                    "parameter file {path} does not exist"
                )));
            }
            let text = rentix_core::read_text(Path::new(path), rentix_core::MAX_CONFIG_BYTES)
                .map_err(fail)?;
            rentix_sim::SimParams::from_toml(&text).map_err(fail)?
        }
        None => rentix_sim::SimParams::default_params(),
    };
    if let Some(s) = seed {
        p.seed = s;
    }
    if let Some(s) = date(start)? {
        p.start = s;
    }
    if let Some(d) = days {
        p.days = d;
    }
    if let Some(r) = rows {
        if r == 0 {
            return Err(usage("rows=0: a market needs at least one observation"));
        }
        p.rows = r;
    }
    if let Some(c) = &cadence {
        let c: rentix_core::Cadence = c.parse().map_err(|e| usage(format!("cadence: {e}")))?;
        p.cadence_minutes = (!c.is_daily()).then_some(c.minutes() as u32);
    }
    p.validate().map_err(fail)?;
    py.detach(|| {
        let m = rentix_sim::simulate(Path::new(&out), &p, &|_| {}).map_err(fail)?;
        serde_json::to_string(&m).map_err(fail)
    })
}

/// Renders `rentix report`'s HTML for `inputs` into `out`: one input (a fixings
/// file, a backtest or contract lab directory, or a directory holding them) or
/// several fixings files compared, measured against `truth` when given.
#[pyfunction]
#[pyo3(signature = (inputs, out, truth=None))]
fn report(py: Python<'_>, inputs: Vec<String>, out: String, truth: Option<String>) -> PyResult<()> {
    if !out.ends_with(".html") {
        return Err(usage(format!("out {out} must end in .html")));
    }
    for p in inputs.iter().chain(truth.iter()) {
        if !Path::new(p).exists() {
            return Err(IoError::new_err(format!("{p} does not exist")));
        }
    }
    py.detach(|| match inputs.as_slice() {
        [] => Err(usage("no input given")),
        [one] if truth.is_some() => Err(usage(format!(
            "truth measures several compared fixings files; a single input {one} finds sim/truth.csv itself"
        ))),
        [one] => rentix_report::render_report(Path::new(one), Path::new(&out)).map_err(fail),
        many => {
            let many: Vec<PathBuf> = paths(many);
            rentix_report::render_comparison(&many, truth.as_deref().map(Path::new), Path::new(&out))
                .map_err(fail)
        }
    })
}

/// `rentix verify` as a call (`rentix_publish::verify`, the CLI's own check): the
/// publication `fixings` fixed again from `store` under `methodology` (absent: the
/// shipped one its rows name), every cell compared; returns its rows, the
/// methodology version and every difference as (file, date, grade, column,
/// published, recomputed). A check that cannot be made raises by its cause.
#[pyfunction]
#[pyo3(signature = (store, fixings, methodology=None))]
#[allow(clippy::type_complexity)]
fn verify(
    py: Python<'_>,
    store: String,
    fixings: String,
    methodology: Option<String>,
) -> PyResult<(
    usize,
    String,
    Vec<(String, String, String, String, String, String)>,
)> {
    for p in [&store, &fixings] {
        if !Path::new(p).exists() {
            return Err(IoError::new_err(format!("{p} does not exist")));
        }
    }
    if let Some(m) = &methodology {
        config_exists(m, rentix_core::ConfigKind::Methodology)?;
    }
    let req = rentix_publish::verify::VerifyRequest {
        store: store.into(),
        fixings: fixings.into(),
        methodology: methodology.map(PathBuf::from),
    };
    let o = py
        .detach(|| rentix_publish::verify::check(&req))
        .map_err(|e| fail(AnyError(e)))?;
    let rows = o
        .differences
        .into_iter()
        .map(|d| (d.file, d.date, d.key, d.column, d.published, d.recomputed))
        .collect();
    Ok((o.rows, o.version, rows))
}

/// An `anyhow` error as a standard one, its causes kept, for [`fail`].
#[derive(Debug)]
struct AnyError(anyhow::Error);

impl std::fmt::Display for AnyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl std::error::Error for AnyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _rentix(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // A damaged Parquet file's decoder panic is caught and raised as InputError:
    // not printed above it (every other panic still is).
    rentix_table::quiet_caught_panics();
    m.add("RentixError", m.py().get_type::<RentixError>())?;
    m.add("UsageError", m.py().get_type::<UsageError>())?;
    m.add("InputError", m.py().get_type::<InputError>())?;
    m.add("IoError", m.py().get_type::<IoError>())?;
    m.add_function(wrap_pyfunction!(read_files, m)?)?;
    m.add_function(wrap_pyfunction!(fix_files, m)?)?;
    m.add_function(wrap_pyfunction!(fix_store, m)?)?;
    m.add_function(wrap_pyfunction!(ingest, m)?)?;
    m.add_function(wrap_pyfunction!(partitions, m)?)?;
    m.add_function(wrap_pyfunction!(backtest, m)?)?;
    m.add_function(wrap_pyfunction!(fix_observations, m)?)?;
    m.add_function(wrap_pyfunction!(has_composites, m)?)?;
    m.add_function(wrap_pyfunction!(observation_days, m)?)?;
    m.add_function(wrap_pyfunction!(lab_candidates, m)?)?;
    m.add_function(wrap_pyfunction!(lab_check, m)?)?;
    m.add_function(wrap_pyfunction!(lab_evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(lab_write, m)?)?;
    m.add_function(wrap_pyfunction!(fixing_end, m)?)?;
    m.add_function(wrap_pyfunction!(composite_members, m)?)?;
    m.add_function(wrap_pyfunction!(track, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(report, m)?)?;
    m.add_function(wrap_pyfunction!(verify, m)?)?;
    m.add_function(wrap_pyfunction!(run_contract, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
