//! `verify`: anyone holding the store and the methodology can re-derive every
//! published fixing. The store is fixed again (over the whole history, as `index`
//! computes it), the rows of the published file's date range and grades are rendered
//! by the index writer into the published file's format, and the two are compared
//! cell by cell as text: every column of every row, rows the file lacks and rows it
//! has that the recomputation does not. The files `index` writes beside the fixings
//! (forward curve, tier spreads, tier differentials, receipts) are compared the same
//! way when present. [`check`] gives the differences; [`Differs`] is the finding
//! (the CLI exits 1), [`Unchecked`] the context of a check that could not be made
//! (exit 2 or 3 by its cause, never 1).

use anyhow::{bail, Context};
use chrono::NaiveDate;
use rentix_index::intraday::IntradayMethodology;
use rentix_index::{
    compute_from_store, fixings_table, forward_curves, forward_table, read_cells,
    read_restatements, restatements_path, tier_differentials_table, tier_spreads,
    tier_spreads_table, Fixing, IndexRequest, Methodology,
};
use rentix_store::Store;
use rentix_table::{Col, Table, TableFormat, TextTable};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What to verify: a published fixings file against a store, under a methodology
/// (`None`: the one the file's rows name, when it is shipped).
#[derive(Debug, Clone)]
pub struct VerifyRequest {
    /// The store the publication was fixed from.
    pub store: PathBuf,
    /// The published fixings file (daily or intraday, CSV or Parquet).
    pub fixings: PathBuf,
    /// The methodology file; absent: the shipped one whose version the file names.
    pub methodology: Option<PathBuf>,
}

/// The methodology to verify under cannot be told (the file names several
/// versions, or not the one given): a usage error (the CLI exits 2).
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

macro_rules! usage {
    ($($arg:tt)*) => {
        return Err(Usage(format!($($arg)*)).into())
    };
}

/// The publication and its recomputation differ: `verify` exits 1.
#[derive(Debug)]
pub struct Differs(pub String);

impl std::fmt::Display for Differs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Differs {}

/// `verify` could not make its check (the context of any error other than
/// [`Differs`]): it exits 2.
#[derive(Debug)]
pub struct Unchecked;

impl std::fmt::Display for Unchecked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("could not verify")
    }
}

/// One cell (or row, or column) where the published file and the recomputation
/// differ. A whole row is `column = "row"`, a whole column has no date nor key.
#[derive(Debug, Clone)]
pub struct Difference {
    /// The file it is in (its name).
    pub file: String,
    /// The row's date (empty for a whole column or file).
    pub date: String,
    /// The grade for fixings and tier spreads; the key columns after the date
    /// otherwise (`gpu scope term tenor` of a forward point).
    pub key: String,
    /// The column (`row` for a whole row, `sha256` for the digest).
    pub column: String,
    /// As published.
    pub published: String,
    /// As recomputed.
    pub recomputed: String,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = [self.date.as_str(), self.key.as_str()]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        let at = if at.is_empty() {
            String::new()
        } else {
            format!("{at} ")
        };
        match (self.column.as_str(), self.published.as_str()) {
            ("row", "absent") => write!(
                f,
                "{}: {at}row: missing (recomputed, not published)",
                self.file
            ),
            ("row", _) => write!(
                f,
                "{}: {at}row: extra ({}, not recomputed)",
                self.file, self.published
            ),
            ("order", _) => write!(
                f,
                "{}: {at}row: out of order ({}; {})",
                self.file, self.published, self.recomputed
            ),
            _ => write!(
                f,
                "{}: {at}{}: published {:?}, recomputed {:?}",
                self.file, self.column, self.published, self.recomputed
            ),
        }
    }
}

/// Compares `published` with `expected` (the recomputation rendered in the same
/// format), rows matched on the first `key` columns of `expected`.
/// Two cells say the same: equal text, or numbers that read as the same double (a
/// file published before CSV floats kept their decimal point wrote `500` where a
/// recomputation writes `500.0`; `2.90` and `2.9` are one value, `0.3` and
/// `0.30000000000000004` are not).
fn same_cell(published: &str, expected: &str) -> bool {
    published == expected
        || matches!(
            (published.parse::<f64>(), expected.parse::<f64>()),
            (Ok(a), Ok(b)) if a == b && a.is_finite()
        )
}

/// `t` without its column `name` (unchanged when it has none).
fn without_column(t: &mut TextTable, name: &str) {
    if let Some(j) = t.names.iter().position(|n| n == name) {
        t.names.remove(j);
        for row in &mut t.rows {
            if j < row.len() {
                row.remove(j);
            }
        }
    }
}

fn compare(file: &str, published: &TextTable, expected: &TextTable, key: usize) -> Vec<Difference> {
    compare_in(file, published, expected, key, None)
}

/// [`compare`], where a file may also be in an older layout's order: grade by
/// grade, the grade being key column `grade_first` (intraday files written before
/// rows were in stamp order; their next publication rewrites them).
fn compare_in(
    file: &str,
    published: &TextTable,
    expected: &TextTable,
    key: usize,
    grade_first: Option<usize>,
) -> Vec<Difference> {
    let diff = |date: &str, k: &str, column: &str, p: &str, r: &str| Difference {
        file: file.to_string(),
        date: date.to_string(),
        key: k.to_string(),
        column: column.to_string(),
        published: p.to_string(),
        recomputed: r.to_string(),
    };
    let mut out = Vec::new();
    for n in expected
        .names
        .iter()
        .filter(|n| !published.names.contains(n))
    {
        out.push(diff("", "", n, "(no such column)", "(column)"));
    }
    for n in published
        .names
        .iter()
        .filter(|n| !expected.names.contains(n))
    {
        out.push(diff("", "", n, "(column)", "(no such column)"));
    }
    let position: Vec<Option<usize>> = expected
        .names
        .iter()
        .map(|n| published.names.iter().position(|p| p == n))
        .collect();
    let cell = |row: &[String], j: Option<usize>| -> String {
        j.and_then(|j| row.get(j)).cloned().unwrap_or_default()
    };
    let key_of = |row: &[String]| -> Vec<String> {
        position[..key.min(position.len())]
            .iter()
            .map(|&j| cell(row, j))
            .collect()
    };
    let split = |k: &[String]| {
        (
            k.first().cloned().unwrap_or_default(),
            k[1.min(k.len())..].join(" "),
        )
    };
    let mut by_key: BTreeMap<Vec<String>, &Vec<String>> = BTreeMap::new();
    let mut rows = Vec::new();
    for (n, row) in published.rows.iter().enumerate() {
        let k = key_of(row);
        if by_key.insert(k.clone(), row).is_some() {
            let (d, g) = split(&k);
            rows.push((
                k,
                diff(&d, &g, "row", &format!("repeated at row {}", n + 1), ""),
            ));
        }
    }
    let mut seen = BTreeSet::new();
    for row in &expected.rows {
        let k: Vec<String> = row[..key.min(row.len())].to_vec();
        let (d, g) = split(&k);
        seen.insert(k.clone());
        let Some(p) = by_key.get(&k) else {
            rows.push((k, diff(&d, &g, "row", "absent", "present")));
            continue;
        };
        for ((name, r), &j) in expected.names.iter().zip(row).zip(&position) {
            let pv = cell(p, j);
            if j.is_some() && !same_cell(&pv, r) {
                rows.push((k.clone(), diff(&d, &g, name, &pv, r)));
            }
        }
    }
    for (n, row) in published.rows.iter().enumerate() {
        let k = key_of(row);
        if !seen.contains(&k) {
            let (d, g) = split(&k);
            rows.push((
                k,
                diff(
                    &d,
                    &g,
                    "row",
                    &format!("published at row {}", n + 1),
                    "absent",
                ),
            ));
        }
    }
    // Stable: a row's cells stay in column order.
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    out.extend(rows.into_iter().map(|(_, d)| d));
    let orders = std::iter::once(None).chain(grade_first.map(Some));
    let misplaced: Vec<Difference> = orders
        .map(|g| out_of_order(published, expected, key, g, &key_of, &split, &diff))
        .collect::<Option<_>>()
        .unwrap_or_default();
    // Out of every order a writer of the file may have used: the current one named.
    out.extend(misplaced.into_iter().next());
    out
}

/// The first published row out of the writer's order (the recomputation's), with
/// how many are: rows matched by key cannot tell a reordered file from the one
/// written, and a digest regenerated after the reorder matches it.
fn out_of_order(
    published: &TextTable,
    expected: &TextTable,
    key: usize,
    grade_first: Option<usize>,
    key_of: &dyn Fn(&[String]) -> Vec<String>,
    split: &dyn Fn(&[String]) -> (String, String),
    diff: &dyn Fn(&str, &str, &str, &str, &str) -> Difference,
) -> Option<Difference> {
    let mut keys: Vec<&[String]> = expected
        .rows
        .iter()
        .map(|row| &row[..key.min(row.len())])
        .collect();
    if let Some(g) = grade_first {
        keys.sort_by(|a, b| a.get(g).cmp(&b.get(g)).then_with(|| a.cmp(b)));
    }
    let place: std::collections::HashMap<&[String], usize> =
        keys.into_iter().enumerate().map(|(i, k)| (k, i)).collect();
    // Rows not recomputed (extra, repeated) are differences of their own.
    let mut last: Option<(usize, usize)> = None;
    let mut first = None;
    let mut misplaced = 0;
    for (n, row) in published.rows.iter().enumerate() {
        let k = key_of(row);
        let Some(&i) = place.get(k.as_slice()) else {
            continue;
        };
        match last {
            Some((at, j)) if i < j => {
                misplaced += 1;
                first.get_or_insert((n, at, k));
            }
            _ => last = Some((n, i)),
        }
    }
    let (n, before, k) = first?;
    let (d, g) = split(&k);
    let (bd, bg) = split(&key_of(&published.rows[before]));
    Some(diff(
        &d,
        &g,
        "order",
        &format!(
            "published at row {}, after row {} ({bd} {bg})",
            n + 1,
            before + 1
        ),
        &format!(
            "{misplaced} of {} rows out of the order rentix writes, by date then key",
            published.rows.len()
        ),
    ))
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().to_string(),
    )
}

/// The publication number each recomputed row should carry: 1, or what the latest
/// entry of the restatement log beside the file gave it (a row withdrawn and then
/// published again starts at 1 again, as `index` does).
fn publications(fixings: &Path) -> anyhow::Result<BTreeMap<(NaiveDate, String), u32>> {
    let log = restatements_path(fixings);
    let mut out = BTreeMap::new();
    if !log.exists() {
        return Ok(out);
    }
    for r in read_restatements(&log)? {
        let n = if r.reason == "withdrawn" {
            1
        } else {
            r.new_publication
        };
        out.insert((r.date, r.grade), n);
    }
    Ok(out)
}

/// What one check found: differences, and the companion files compared.
#[derive(Debug)]
pub struct Outcome {
    /// Rows of the published file.
    pub rows: usize,
    /// The methodology version it was checked under.
    pub version: String,
    /// Every difference (none: it verifies).
    pub differences: Vec<Difference>,
    /// The files beside it that were compared too (digest, forward curve,
    /// receipts...).
    pub companions: Vec<String>,
}

/// What a published file covers: its earliest to its latest date, its grades.
struct Scope {
    from: NaiveDate,
    to: NaiveDate,
    /// The grades and composites expected; `None`: every one (a publication of
    /// every grade).
    grades: Option<BTreeSet<String>>,
}

impl Scope {
    fn contains(&self, f: &Fixing) -> bool {
        f.date >= self.from
            && f.date <= self.to
            && self
                .grades
                .as_ref()
                .is_none_or(|g| g.contains(f.grade.as_str()))
    }
}

/// Whether the state beside `fixings`, sealed (its own digest holds) and written
/// for it, says it is a publication of every grade (no `--grade`): then every
/// grade recomputed in its dates is expected, not only those it holds (a grade's
/// rows cut from it, the digest regenerated, are missing).
fn of_every_grade(fixings: &Path, published: &TextTable) -> bool {
    use rentix_index::incremental::{content_sha256, read_state, state_path};
    let name = file_name(fixings);
    match read_state(&state_path(fixings)) {
        Ok(Some(s)) => s.published == name && s.sha256 == content_sha256(&s) && s.grades.is_empty(),
        // With no state (removing it is a documented remedy): a file that holds
        // composite rows is a publication of every grade (no other has them).
        Ok(None) => holds_composites(published),
        Err(_) => false,
    }
}

/// Whether `published` holds a composite's row (only a publication of every
/// grade does).
fn holds_composites(published: &TextTable) -> bool {
    let col = |name: &str| published.names.iter().position(|n| n == name);
    let (Some(g), Some(m)) = (col("grade"), col("method")) else {
        return false;
    };
    published.rows.iter().any(|r| match (r.get(g), r.get(m)) {
        (Some(g), Some(m)) => rentix_index::IndexId::of_row(g, m).is_composite(),
        _ => false,
    })
}

/// The scope of the published cells; refuses a file that is not fixings or that no
/// row of which names the methodology `version`.
fn scope(a: &VerifyRequest, published: &TextTable, version: &str) -> anyhow::Result<Scope> {
    let column = |name: &str| published.names.iter().position(|n| n == name);
    let (Some(di), Some(gi), Some(vi)) = (
        column("date"),
        column("grade"),
        column("methodology_version"),
    ) else {
        bail!(
            "{} is not a fixings file: it lacks a date, grade or methodology_version column",
            a.fixings.display()
        );
    };
    let cell = |r: &Vec<String>, j: usize| r.get(j).cloned().unwrap_or_default();
    if !published.rows.iter().any(|r| cell(r, vi) == version) {
        let other = published
            .rows
            .first()
            .map(|r| cell(r, vi))
            .unwrap_or_default();
        usage!(
            "{} was published under methodology {:?}, not {:?} ({}): no row names it",
            a.fixings.display(),
            other,
            version,
            a.methodology
                .as_ref()
                .map_or("the shipped methodology of that version".into(), |p| p
                    .display()
                    .to_string())
        );
    }
    let dates: Vec<NaiveDate> = published
        .rows
        .iter()
        .filter_map(|r| NaiveDate::parse_from_str(&cell(r, di), "%Y-%m-%d").ok())
        .collect();
    let (Some(&from), Some(&to)) = (dates.iter().min(), dates.iter().max()) else {
        bail!("{}: no row has a date (YYYY-MM-DD)", a.fixings.display());
    };
    let grades = (!of_every_grade(&a.fixings, published))
        .then(|| published.rows.iter().map(|r| cell(r, gi)).collect());
    Ok(Scope { from, to, grades })
}

/// The methodology to verify under: `--methodology`, or else the shipped methodology
/// whose version the published rows name.
fn methodology_of(a: &VerifyRequest, published: &TextTable) -> anyhow::Result<Methodology> {
    if let Some(p) = &a.methodology {
        return Ok(Methodology::from_file(p)?);
    }
    let vi = published
        .names
        .iter()
        .position(|n| n == "methodology_version");
    let versions: BTreeSet<String> = published
        .rows
        .iter()
        .filter_map(|r| r.get(vi?).cloned())
        .collect();
    let [version] = versions.iter().collect::<Vec<_>>()[..] else {
        usage!(
            "{} names {} methodology versions ({}): pass --methodology FILE",
            a.fixings.display(),
            versions.len(),
            versions.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    };
    Methodology::shipped_with_version(version).with_context(|| {
            format!(
                "{} was published under {version:?}, which no shipped methodology carries: pass --methodology FILE",
                a.fixings.display()
            )
        })
}

/// Whether a published file has a value in every row (`index --valued-only`).
fn valued_only(published: &TextTable) -> bool {
    published
        .names
        .iter()
        .position(|n| n == "value")
        .is_some_and(|v| {
            published
                .rows
                .iter()
                .all(|r| r.get(v).is_some_and(|c| !c.is_empty()))
        })
}

/// Fixes the publication `a.fixings` again from `a.store` and compares every cell of
/// it, its digest and the files beside it; the differences (none: it verifies).
pub fn check(a: &VerifyRequest) -> anyhow::Result<Outcome> {
    let format = TableFormat::of(&a.fixings)
        .with_context(|| format!("--fixings {}", a.fixings.display()))?;
    let checked = match rentix_index::intraday::is_intraday_file(&a.fixings) {
        Ok(true) => check_intraday(a, format),
        Ok(false) => check_daily(a, format),
        Err(e) => Err(e.into()),
    };
    checked.or_else(|e| changed_past_reading(a, format, e))
}

/// [`check`] of a daily publication.
fn check_daily(a: &VerifyRequest, format: TableFormat) -> anyhow::Result<Outcome> {
    let published = read_cells(&a.fixings)?;
    if published.rows.is_empty() {
        // Emptied or cut to (part of) its header: no publication writes that, and
        // no methodology is missing to check it (the fault is the file's: exit 3).
        bail!(
            "{} holds no fixing row: it is not a publication (emptied, or cut to its header?); restore it from the publication",
            a.fixings.display()
        );
    }
    let methodology = methodology_of(a, &published)?;
    let scope = scope(a, &published, &methodology.version)?;
    let publication = publications(&a.fixings)?;
    let store = Store::open(&a.store)?;
    // Through the publication's last day when it is past the store's (an outage day
    // published with carried rows).
    let req = IndexRequest {
        methodology,
        grade_filters: Vec::new(),
        from: None,
        // Through the file's last day (past the store's, for an outage): the
        // read then stops where rows through it stop depending on observations,
        // as the publication's did, so a damaged month after that stops neither.
        to: rentix_index::past_the_store(
            &store.runs()?,
            Some(scope.to),
            chrono::Utc::now().date_naive(),
        )
        .or(Some(scope.to)),
    };
    let again = compute_from_store(&store, &req)?;
    // A file published with `--valued-only` has a value in every row: rows without
    // one are not expected in it.
    let valued_only = valued_only(&published);
    let expected: Vec<Fixing> = again
        .fixings
        .into_iter()
        .filter(|f| scope.contains(f) && (!valued_only || f.value.is_some()))
        .map(|mut f| {
            if let Some(&n) = publication.get(&(f.date, f.grade.to_string())) {
                f.publication = n;
            }
            f
        })
        .collect();
    let rendered = fixings_table(&expected).rendered(format)?;
    let (digest_diff, digest_name) = digest_check(&a.fixings, format, &published)?;
    let mut differences: Vec<Difference> = digest_diff.into_iter().collect();
    differences.extend(compare(&file_name(&a.fixings), &published, &rendered, 2));
    let m = &req.methodology;
    let mut companions = vec![digest_name];
    let differentials_due = differentials_written(&a.fixings, &published);
    let mut beside = |suffix: &str, table: Option<Table>, key: usize| -> anyhow::Result<()> {
        let Some(table) = table else {
            return Ok(());
        };
        let due = suffix != "_tier_differentials" || differentials_due;
        let found =
            companion_differences(&a.fixings, suffix, &table, key, format, (scope.to, due))?;
        differences.extend(found.differences);
        companions.extend(found.checked);
        Ok(())
    };
    beside(
        "_forward",
        m.forward_curve
            .then(|| forward_table(&forward_curves(&expected))),
        4,
    )?;
    beside(
        "_tier_spreads",
        (!m.grades.tier_floors.is_empty()).then(|| tier_spreads_table(&tier_spreads(&expected))),
        2,
    )?;
    // Through the file's last day on both sides: a full run writes them through
    // the store's end, past the file's last day, and a store that grew since has
    // more.
    let differentials: Vec<_> = again
        .tier_differentials
        .iter()
        .filter(|d| d.date <= scope.to)
        .cloned()
        .collect();
    beside(
        "_tier_differentials",
        (!differentials.is_empty()).then(|| tier_differentials_table(&differentials)),
        2,
    )?;
    // The state the next publication continues from describes the file as it
    // stands (a forged or edited one: the next publication is refused).
    let v = rentix_index::incremental::Verified {
        out: &a.fixings,
        values: &agreeing_values(&published, &expected, m.rounding.decimals),
        last: Some(scope.to),
        methodology: m,
        unvalued_rows: !valued_only,
        store: &a.store,
        runs: &store.runs()?,
    };
    if let Some(state) = state_differences(&v, &mut differences) {
        companions.push(state);
    }
    Ok(Outcome {
        rows: published.rows.len(),
        version: m.version.clone(),
        differences,
        companions,
    })
}

/// What comparing a companion file found: its differences, and its name when it
/// was there to compare.
struct Found {
    differences: Vec<Difference>,
    checked: Option<String>,
}

/// Whether the publication `fixings` wrote tier differentials beside it (when the
/// methodology makes any): its state says so, or, with no state to read, the file
/// holds composite rows (only a publication of every grade does, and it writes
/// them). A publication of some grades (`--grade`) writes none.
fn differentials_written(fixings: &Path, published: &TextTable) -> bool {
    let state = rentix_index::incremental::state_path(fixings);
    if let Ok(Some(s)) = rentix_index::incremental::read_state(&state) {
        return s.tier_differentials;
    }
    holds_composites(published)
}

/// The companion `suffix` beside `fixings` against its recomputation `table`
/// (rows keyed by their first `key` cells). One the publication wrote (`due`:
/// forward curves and tier spreads at every publication, tier differentials at
/// one of every grade) is a difference when it is gone; the tier differentials
/// are compared through the file's last date `through`.
fn companion_differences(
    fixings: &Path,
    suffix: &str,
    table: &Table,
    key: usize,
    format: TableFormat,
    (through, due): (NaiveDate, bool),
) -> anyhow::Result<Found> {
    let path = rentix_index::Companions::of(fixings).beside(suffix);
    let differentials = suffix == "_tier_differentials";
    if !path.exists() {
        let differences = if !due {
            Vec::new()
        } else {
            vec![Difference {
                file: file_name(&path),
                date: String::new(),
                key: String::new(),
                column: "file".into(),
                published: "(no such file)".into(),
                recomputed: format!("({} rows)", table.height()),
            }]
        };
        return Ok(Found {
            differences,
            checked: None,
        });
    }
    let mut written = read_cells(&path)?;
    if let (true, Some(d)) = (
        differentials,
        written.names.iter().position(|n| n == "date"),
    ) {
        let to = through.to_string();
        // ISO dates order as text.
        written
            .rows
            .retain(|r| r.get(d).is_none_or(|c| c.as_str() <= to.as_str()));
    }
    Ok(Found {
        differences: compare(&file_name(&path), &written, &table.rendered(format)?, key),
        checked: Some(file_name(&path)),
    })
}

/// The differences of the state beside the publication `v` describes (column
/// `state`), added to `differences`; the state's name when it was checked.
fn state_differences(
    v: &rentix_index::incremental::Verified<'_>,
    differences: &mut Vec<Difference>,
) -> Option<String> {
    let problems = rentix_index::incremental::state_problems(v)?;
    let name = file_name(&rentix_index::incremental::state_path(v.out));
    differences.extend(problems.into_iter().map(|problem| Difference {
        file: name.clone(),
        date: String::new(),
        key: String::new(),
        column: "state".into(),
        published: problem,
        recomputed: String::new(),
    }));
    Some(name)
}

/// Each grade's values by date as the file holds them, where they are what was
/// recomputed (`expected`, to within half the last decimal).
fn agreeing_values(
    published: &TextTable,
    expected: &[Fixing],
    decimals: u32,
) -> BTreeMap<String, BTreeMap<NaiveDate, f64>> {
    let half = 0.5 * 10f64.powi(-(decimals.min(15) as i32));
    let again: BTreeMap<(NaiveDate, &str), f64> = expected
        .iter()
        .filter_map(|f| Some(((f.date, f.grade.as_str()), f.value?)))
        .collect();
    let col = |name: &str| published.names.iter().position(|n| n == name);
    let (Some(d), Some(g), Some(v)) = (col("date"), col("grade"), col("value")) else {
        return BTreeMap::new();
    };
    let mut values: BTreeMap<String, BTreeMap<NaiveDate, f64>> = BTreeMap::new();
    for row in &published.rows {
        let cell = |i: usize| row.get(i).map_or("", String::as_str);
        let (Ok(date), Ok(value)) = (cell(d).parse::<NaiveDate>(), cell(v).parse::<f64>()) else {
            continue;
        };
        let agrees = again
            .get(&(date, cell(g)))
            .is_some_and(|x| (x - value).abs() <= half * (1.0 + 1e-9));
        if agrees {
            values
                .entry(cell(g).to_string())
                .or_default()
                .insert(date, value);
        }
    }
    values
}

/// A published CSV file that cannot be checked (cut mid-row or in its header,
/// emptied, bytes changed so that it no longer reads as a publication) whose bytes
/// are not those its digest records was changed since it was published: that is
/// its difference (exit 1, as for a file cut at a row's end), the reason it cannot
/// be checked beside it. Without a digest, with one its bytes match, or a Parquet
/// file (whose digest is of its cells, which cannot be read), the reason is the
/// error: it could not be verified.
fn changed_past_reading(
    a: &VerifyRequest,
    format: TableFormat,
    unreadable: anyhow::Error,
) -> anyhow::Result<Outcome> {
    let digest = rentix_index::digest_path(&a.fixings);
    // A digest or a file that cannot be read either leaves the first reason.
    let recorded = match format {
        TableFormat::Csv => rentix_index::read_digest(&digest).ok().flatten(),
        TableFormat::Parquet => None,
    };
    let (Some(recorded), Ok(actual)) = (recorded, rentix_store::sha256_file(&a.fixings)) else {
        return Err(unreadable);
    };
    if actual == recorded {
        return Err(unreadable);
    }
    Ok(Outcome {
        rows: 0,
        version: String::new(),
        differences: vec![Difference {
            file: file_name(&a.fixings),
            date: String::new(),
            key: String::new(),
            column: "sha256".into(),
            published: recorded,
            recomputed: format!("{actual} (the file cannot be checked: {unreadable:#})"),
        }],
        companions: vec![file_name(&digest)],
    })
}

/// The digest beside a publication against the file: a difference when it differs
/// or is missing, and the digest file's name when it was checked. A CSV file's
/// digest is of its bytes (what `sha256sum -c` checks: a file whose line endings,
/// quoting or byte order mark changed is not the one published, though its cells
/// are, and the difference says so); a Parquet file's, of its cells as text. A
/// digest file that is not one (a device, larger than a digest) cannot be checked:
/// refused, read bounded, never echoed.
fn digest_check(
    fixings: &Path,
    format: TableFormat,
    published: &TextTable,
) -> anyhow::Result<(Option<Difference>, String)> {
    let digest = rentix_index::digest_path(fixings);
    let cells = rentix_index::canonical_sha256_text(published);
    let actual = match format {
        TableFormat::Csv => rentix_store::sha256_file(fixings)?,
        TableFormat::Parquet => cells.clone(),
    };
    let diff = |file: String, recorded: String| {
        let recomputed = if recorded == cells && actual != cells {
            format!("{actual} (the file's bytes: its cells are as published, written otherwise: line endings, quoting or a byte order mark)")
        } else {
            actual.clone()
        };
        Difference {
            file,
            date: String::new(),
            key: String::new(),
            column: "sha256".into(),
            published: recorded,
            recomputed,
        }
    };
    let d = match rentix_index::read_digest(&digest)? {
        Some(recorded) => (recorded != actual).then(|| diff(file_name(fixings), recorded)),
        None => Some(diff(file_name(&digest), "(no digest file)".into())),
    };
    Ok((d, file_name(&digest)))
}

/// The intraday methodology of `--methodology`, or the shipped one whose version
/// the file records.
fn intraday_methodology_of(
    a: &VerifyRequest,
    published: &TextTable,
) -> anyhow::Result<IntradayMethodology> {
    if let Some(p) = &a.methodology {
        return Ok(IntradayMethodology::from_file(p)?);
    }
    let vi = published
        .names
        .iter()
        .position(|n| n == "methodology_version")
        .context("the file has no methodology_version column: pass --methodology FILE")?;
    let versions: BTreeSet<&String> = published.rows.iter().filter_map(|r| r.get(vi)).collect();
    let [version] = versions.iter().collect::<Vec<_>>()[..] else {
        usage!(
            "{} names {} methodology versions: pass --methodology FILE",
            a.fixings.display(),
            versions.len()
        );
    };
    rentix_core::ConfigKind::Methodology
        .bundled()
        .iter()
        .filter_map(|(name, text)| IntradayMethodology::from_toml(text, Path::new(name)).ok())
        .find(|m| &m.version == *version)
        .with_context(|| format!("{} was published under {version:?}, which no shipped intraday methodology carries: pass --methodology FILE", a.fixings.display()))
}

/// `verify` of an intraday publication: its digest, then every cell of every stamp
/// (and of the receipts beside it) against a recomputation over its dates.
fn check_intraday(a: &VerifyRequest, format: TableFormat) -> anyhow::Result<Outcome> {
    use rentix_index::intraday::{intraday_table, receipts_table};
    let published = read_cells(&a.fixings)?;
    let (digest_diff, digest_name) = digest_check(&a.fixings, format, &published)?;
    let mut differences: Vec<Difference> = digest_diff.into_iter().collect();
    let m = intraday_methodology_of(a, &published)?;
    let di = published
        .names
        .iter()
        .position(|n| n == "date")
        .context("no date column")?;
    let dates: Vec<NaiveDate> = published
        .rows
        .iter()
        .filter_map(|r| NaiveDate::parse_from_str(r.get(di)?, "%Y-%m-%d").ok())
        .collect();
    let (Some(&from), Some(&to)) = (dates.iter().min(), dates.iter().max()) else {
        bail!("{} has no dated row to verify", a.fixings.display());
    };
    let (mut r, _, _, _) = crate::intraday::from_store(&a.store, &m, Some(from), Some(to))?;
    // A day published while under way stops at its last stamp whose interval had
    // ended: the stamps after the file's last one are not yet published, not missing.
    let ti = published.names.iter().position(|n| n == "fixed_at");
    let last = published
        .rows
        .iter()
        .filter_map(|row| chrono::DateTime::parse_from_rfc3339(row.get(ti?)?).ok())
        .max()
        .map(|t| t.with_timezone(&chrono::Utc));
    if let Some(last) = last {
        r.fixings.retain(|f| f.fixed_at <= last);
        r.receipts.retain(|x| x.fixed_at <= last);
    }
    // Key: date, fixed_at, grade.
    differences.extend(compare_in(
        &file_name(&a.fixings),
        &published,
        &intraday_table(&r, &m).rendered(format)?,
        3,
        Some(2),
    ));
    let mut companions = vec![digest_name];
    let receipts = rentix_index::Companions::of(&a.fixings).receipts();
    if m.intraday.publish_receipts && receipts.exists() {
        let written = read_cells(&receipts)?;
        let mut expected = receipts_table(&r).rendered(format)?;
        // Receipts published before the `sigma_unit` column are checked on the
        // columns they have (the next publication writes the column).
        if !written.names.iter().any(|n| n == "sigma_unit") {
            without_column(&mut expected, "sigma_unit");
        }
        // Key: fixed_at, grade, contributor.
        differences.extend(compare_in(
            &file_name(&receipts),
            &written,
            &expected,
            3,
            Some(1),
        ));
        // The receipts' bytes as the sidecar records them (publications since it
        // names them): an edit that leaves the cells recomputable is still one.
        let sidecar = rentix_index::digest_path(&a.fixings);
        if let Some(recorded) = rentix_index::intraday_publish::recorded_for(&sidecar, &receipts) {
            let actual = rentix_store::sha256_file(&receipts)?;
            if actual != recorded {
                differences.push(Difference {
                    file: file_name(&receipts),
                    date: String::new(),
                    key: String::new(),
                    column: "sha256".into(),
                    published: recorded,
                    recomputed: actual,
                });
            }
        }
        companions.push(file_name(&receipts));
    } else if m.intraday.publish_receipts && !published.rows.is_empty() {
        // The methodology publishes receipts: a publication without them is not whole.
        differences.push(Difference {
            file: file_name(&receipts),
            date: String::new(),
            key: String::new(),
            column: "file".into(),
            published: "(missing)".into(),
            recomputed: format!("{} receipts", r.receipts.len()),
        });
    }
    // The state a CSV publication's next day continues from describes the files
    // as they stand (a publication checks only what it can without reading them).
    for problem in rentix_index::intraday_append::state_problems(&a.fixings)? {
        let state = rentix_index::Companions::of(&a.fixings).intraday_state();
        differences.push(Difference {
            file: file_name(&state),
            date: String::new(),
            key: String::new(),
            column: "state".into(),
            published: problem,
            recomputed: String::new(),
        });
    }
    Ok(Outcome {
        rows: published.rows.len(),
        version: m.version.clone(),
        differences,
        companions,
    })
}

/// Writes every difference to `out` (CSV or Parquet: file, date, grade, column,
/// published, recomputed).
pub fn write_differences(out: &Path, diffs: &[Difference]) -> anyhow::Result<()> {
    let col =
        |g: &dyn Fn(&Difference) -> String| Col::Str(diffs.iter().map(|d| Some(g(d))).collect());
    let mut t = Table::new();
    t.push("file", col(&|d| d.file.clone()));
    t.push("date", col(&|d| d.date.clone()));
    t.push("grade", col(&|d| d.key.clone()));
    t.push("column", col(&|d| d.column.clone()));
    t.push("published", col(&|d| d.published.clone()));
    t.push("recomputed", col(&|d| d.recomputed.clone()));
    t.write(out)?;
    Ok(())
}
