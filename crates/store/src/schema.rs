//! The store's column layout: [`Observation`] to and from a [`Table`].

use crate::error::{Result, StoreError};
use chrono::{DateTime, NaiveDate, Utc};
use rentix_core::{GpuHours, Grade, Observation, UsdPerGpuHour};
use rentix_table::{
    epoch_days, from_epoch_days, from_micros, micros, timestamp_text, Coded, Col, Table,
};
use std::collections::BTreeMap;
use std::path::Path;

/// An accepted observation with the key that identifies its duplicates.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredObservation {
    /// The normalized observation with its provenance (`input_file`, `input_row`).
    pub obs: Observation,
    /// 32 lowercase hexadecimal digits, the first 128 bits of a SHA-256 over the
    /// source and its `obs_id` or, without one, over the normalized content
    /// (`dedupe_key`): duplicates share it.
    pub dedupe_key: rentix_core::Id,
}

/// `text` as an `Arc`, the `last` one again when it is the same text: the rows of a
/// partition or spill name a few input files, each shared rather than copied.
pub(crate) fn shared(last: &mut Option<std::sync::Arc<str>>, text: &str) -> std::sync::Arc<str> {
    match last {
        Some(l) if **l == *text => std::sync::Arc::clone(l),
        _ => std::sync::Arc::clone(last.insert(text.into())),
    }
}

/// Column names of a store partition, in file order.
pub const COLUMNS: [&str; 26] = [
    "obs_id",
    "dedupe_key",
    "kind",
    "observed_at",
    "fixing_date",
    "source",
    "grade",
    "gpu",
    "scope",
    "term",
    "region",
    "gpu_raw",
    "usd_per_gpu_hour",
    "quantity_gpu_hours",
    "price",
    "price_unit",
    "currency",
    "gpus_per_unit",
    "interconnect",
    "cluster_gpus",
    "operator_tier",
    "upfront",
    "term_start",
    "level",
    "input_file",
    "input_row",
];

/// Converts observations to the store's table layout. The text columns that repeat
/// (kind, source, grade and its parts, units, currency, provenance file) are coded by
/// their distinct values, each written as text once: a partition's rows are sorted by
/// grade, kind and time, so most cells cost a comparison rather than a string. The
/// unique text (ids and dedupe keys) moves out of the rows, which are left without it.
#[allow(
    clippy::too_many_lines,
    reason = "a column codec: one step per column, in the order of COLUMNS, which a reader checks it against; split, it would hand two dozen column vectors between steps"
)]
pub fn to_table(rows: &mut [StoredObservation]) -> Table {
    fn coded<'r, K: std::hash::Hash + Eq + Clone>(
        rows: &'r [StoredObservation],
        key: impl Fn(&'r StoredObservation) -> Option<K>,
        text: impl Fn(&K) -> String,
    ) -> Col {
        Col::Coded(Coded::from_keys(rows.iter().map(key), text))
    }
    fn words<'r>(
        rows: &'r [StoredObservation],
        key: impl Fn(&'r StoredObservation) -> Option<&'r str>,
    ) -> Col {
        coded(rows, key, |s: &&str| s.to_string())
    }
    fn f(rows: &[StoredObservation], g: impl Fn(&StoredObservation) -> Option<f64>) -> Col {
        Col::F64(rows.iter().map(g).collect())
    }
    fn i(rows: &[StoredObservation], g: impl Fn(&StoredObservation) -> Option<i64>) -> Col {
        Col::I64(rows.iter().map(g).collect())
    }
    let take = |id: &mut rentix_core::Id| Some(String::from(std::mem::take(id)));
    let obs_id = Col::Str(rows.iter_mut().map(|r| take(&mut r.obs.obs_id)).collect());
    let dedupe_key = Col::Str(rows.iter_mut().map(|r| take(&mut r.dedupe_key)).collect());
    let rows = &*rows;
    let mut t = Table::new();
    t.push("obs_id", obs_id);
    t.push("dedupe_key", dedupe_key);
    t.push(
        "kind",
        coded(rows, |r| Some(r.obs.kind), |k| k.as_str().to_string()),
    );
    t.push(
        "observed_at",
        Col::Timestamp(
            rows.iter()
                .map(|r| Some(micros(r.obs.observed_at)))
                .collect(),
        ),
    );
    t.push(
        "fixing_date",
        Col::Date(
            rows.iter()
                .map(|r| Some(epoch_days(r.obs.fixing_date)))
                .collect(),
        ),
    );
    t.push("source", words(rows, |r| Some(&*r.obs.source)));
    // The base grade: the region has a column of its own, so that the store's grade
    // joins the fixings' (a regional index names its grade `...@region` there).
    t.push(
        "grade",
        coded(
            rows,
            |r| {
                let g = &r.obs.grade;
                Some((&g.gpu, g.scope, g.term, g.tier_floor))
            },
            |(gpu, scope, term, floor)| {
                Grade::new((*gpu).clone(), *scope, *term)
                    .with_tier_floor(*floor)
                    .key()
            },
        ),
    );
    t.push(
        "gpu",
        coded(rows, |r| Some(&r.obs.grade.gpu), |g| g.to_string()),
    );
    t.push(
        "scope",
        coded(rows, |r| Some(r.obs.grade.scope), |s| s.to_string()),
    );
    t.push(
        "term",
        coded(rows, |r| Some(r.obs.grade.term), |t| t.as_str().to_string()),
    );
    t.push("region", words(rows, |r| r.obs.grade.region.as_deref()));
    t.push("gpu_raw", words(rows, |r| Some(&*r.obs.gpu_raw)));
    t.push(
        "usd_per_gpu_hour",
        f(rows, |r| Some(r.obs.usd_per_gpu_hour.get())),
    );
    t.push(
        "quantity_gpu_hours",
        f(rows, |r| r.obs.quantity_gpu_hours.map(|q| q.get())),
    );
    t.push("price", f(rows, |r| Some(r.obs.price_raw)));
    t.push(
        "price_unit",
        coded(rows, |r| Some(r.obs.price_unit), |u| u.as_str().to_string()),
    );
    t.push("currency", words(rows, |r| Some(&*r.obs.currency)));
    t.push(
        "gpus_per_unit",
        i(rows, |r| r.obs.gpus_per_unit.map(i64::from)),
    );
    t.push(
        "interconnect",
        words(rows, |r| r.obs.interconnect.as_deref()),
    );
    t.push(
        "cluster_gpus",
        i(rows, |r| r.obs.cluster_gpus.map(i64::from)),
    );
    t.push(
        "operator_tier",
        coded(rows, |r| r.obs.operator_tier, |x| x.as_str().to_string()),
    );
    t.push("upfront", f(rows, |r| r.obs.upfront));
    t.push(
        "term_start",
        Col::Date(
            rows.iter()
                .map(|r| r.obs.term_start.map(epoch_days))
                .collect(),
        ),
    );
    t.push("level", i(rows, |r| Some(i64::from(r.obs.kind.level()))));
    t.push("input_file", words(rows, |r| Some(&*r.obs.input_file)));
    t.push("input_row", i(rows, |r| Some(r.obs.input_row as i64)));
    t
}

/// The columns a store reader needs: all of them, or only those that fixing an
/// index reads (11 of 26), which is what `index`, `verify` and the contract lab ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Projection {
    /// Every column of [`COLUMNS`].
    All,
    /// Only `FIXING_INPUT_COLUMNS`; the other fields of the rows read are left at
    /// their defaults.
    Fixing,
}

/// The partition columns fixing an index reads (`gpus_per_unit`: an order book's
/// asks are weighed by their GPUs).
pub(crate) const FIXING_INPUT_COLUMNS: [&str; 11] = [
    "dedupe_key",
    "kind",
    "observed_at",
    "fixing_date",
    "source",
    "grade",
    "region",
    "usd_per_gpu_hour",
    "quantity_gpu_hours",
    "gpus_per_unit",
    "operator_tier",
];

impl Projection {
    /// The columns to read (`None`: all).
    pub fn columns(self) -> Option<&'static [&'static str]> {
        match self {
            Projection::All => None,
            Projection::Fixing => Some(&FIXING_INPUT_COLUMNS),
        }
    }

    fn wants(self, name: &str) -> bool {
        self.columns().is_none_or(|c| c.contains(&name))
    }
}

/// Reads observations back from a store table, re-checking every invariant: a
/// store file edited by hand is refused, not trusted. Strings move out of the table.
/// Under [`Projection::Fixing`] the fields an index does not read stay empty (no
/// id, raw GPU name, quoted price, currency or input file): such rows serve the
/// fixing engine and nothing else.
#[allow(
    clippy::too_many_lines,
    reason = "a column codec: one step per column, in the order of COLUMNS, which a reader checks it against; split, it would hand two dozen column vectors between steps"
)]
pub fn from_table(t: Table, path: &Path, projection: Projection) -> Result<Vec<StoredObservation>> {
    let bad = |row: usize, detail: String| StoreError::Store {
        path: path.to_path_buf(),
        detail: format!("row {}: {detail}", row + 1),
    };
    let height = t.height();
    let mut cols: BTreeMap<String, Col> = t.names.into_iter().zip(t.cols).collect();
    let missing = |name: &str| StoreError::Store {
        path: path.to_path_buf(),
        detail: format!("missing or mistyped column {name}"),
    };
    let mut region = match cols.remove("region") {
        Some(Col::Str(v)) => v,
        // Absent from a store whose grades carried their region.
        None => vec![None; height],
        _ => return Err(missing("region")),
    };
    // A column the projection leaves out reads as all-empty.
    let mut str_col = |name: &str| -> Result<Vec<Option<String>>> {
        match cols.remove(name) {
            Some(Col::Str(v)) => Ok(v),
            None if !projection.wants(name) => Ok(vec![None; height]),
            _ => Err(missing(name)),
        }
    };
    let (mut obs_id, mut key, mut kind, mut source, mut grade) = (
        str_col("obs_id")?,
        str_col("dedupe_key")?,
        str_col("kind")?,
        str_col("source")?,
        str_col("grade")?,
    );
    let (mut gpu_raw, mut price_unit, mut currency, interconnect, tier, mut file) = (
        str_col("gpu_raw")?,
        str_col("price_unit")?,
        str_col("currency")?,
        str_col("interconnect")?,
        str_col("operator_tier")?,
        str_col("input_file")?,
    );
    let f64_col = |name: &str| -> Result<&[Option<f64>]> {
        match cols.get(name) {
            Some(Col::F64(v)) => Ok(v),
            None if !projection.wants(name) => Ok(&[]),
            _ => Err(missing(name)),
        }
    };
    let i64_col = |name: &str| -> Result<&[Option<i64>]> {
        match cols.get(name) {
            Some(Col::I64(v)) => Ok(v),
            None if !projection.wants(name) => Ok(&[]),
            _ => Err(missing(name)),
        }
    };
    let (usd, qty, price, upfront) = (
        f64_col("usd_per_gpu_hour")?,
        f64_col("quantity_gpu_hours")?,
        f64_col("price")?,
        f64_col("upfront")?,
    );
    let (gpus, cluster, row) = (
        i64_col("gpus_per_unit")?,
        i64_col("cluster_gpus")?,
        i64_col("input_row")?,
    );
    let (at, fd) = (
        TimeCol::of(&cols, "observed_at", path)?,
        TimeCol::of(&cols, "fixing_date", path)?,
    );
    let term_start = if projection.wants("term_start") {
        TimeCol::of(&cols, "term_start", path)?
    } else {
        TimeCol::Date(&[])
    };
    let at_most = |v: &[Option<f64>], r: usize| v.get(r).copied().flatten();
    let whole = |v: &[Option<i64>], r: usize| v.get(r).copied().flatten();
    let all = projection == Projection::All;
    // Take the value, or refuse an empty one the projection reads.
    let need = |v: &mut Option<String>, r: usize, name: &str, read: bool| -> Result<String> {
        match v.take() {
            Some(s) => Ok(s),
            None if !read => Ok(String::new()),
            None => Err(bad(r, format!("{name} is empty"))),
        }
    };
    // Repeated text (source, raw GPU name, currency, interconnect) is held once.
    let mut texts = rentix_core::Interner::default();
    let mut text = |s: &str| texts.get(s);
    // A partition holds a few grades and regions in many rows: each distinct pair
    // is parsed and checked once, and its rows share one grade.
    let mut grades: std::collections::HashMap<(String, Option<String>), Grade> =
        std::collections::HashMap::new();
    let mut out = Vec::with_capacity(height);
    let mut last_file = None;
    for r in 0..height {
        let pair = (need(&mut grade[r], r, "grade", true)?, region[r].take());
        let g = match grades.get(&pair) {
            Some(g) => g.clone(),
            None => {
                let g: Grade = pair.0.parse().map_err(|e| bad(r, format!("{e}")))?;
                let g = with_region(g, pair.1.as_deref()).map_err(|e| bad(r, e))?;
                grades.insert(pair, g.clone());
                g
            }
        };
        let observed_at = at
            .instant(r)
            .map_err(|e| bad(r, format!("observed_at: {e}")))?
            .ok_or_else(|| bad(r, "observed_at is empty".into()))?;
        let fixing_date = fd
            .date(r)
            .map_err(|e| bad(r, format!("fixing_date: {e}")))?
            .ok_or_else(|| bad(r, "fixing_date is empty".into()))?;
        let to_u32 = |v: Option<i64>| v.and_then(|x| u32::try_from(x).ok());
        let obs = Observation {
            obs_id: need(&mut obs_id[r], r, "obs_id", all)?.into(),
            kind: need(&mut kind[r], r, "kind", true)?
                .parse()
                .map_err(|e| bad(r, format!("{e}")))?,
            observed_at,
            fixing_date,
            source: text(&need(&mut source[r], r, "source", true)?),
            grade: g,
            gpu_raw: text(&need(&mut gpu_raw[r], r, "gpu_raw", all)?),
            usd_per_gpu_hour: UsdPerGpuHour::positive(at_most(usd, r).unwrap_or(f64::NAN))
                .map_err(|e| bad(r, format!("{e}")))?,
            quantity_gpu_hours: at_most(qty, r)
                .map(GpuHours::new)
                .transpose()
                .map_err(|e| bad(r, format!("{e}")))?,
            price_raw: at_most(price, r).unwrap_or(f64::NAN),
            price_unit: if all {
                need(&mut price_unit[r], r, "price_unit", true)?
                    .parse()
                    .map_err(|e| bad(r, format!("{e}")))?
            } else {
                rentix_core::PriceUnit::GpuHour
            },
            currency: text(&need(&mut currency[r], r, "currency", all)?),
            gpus_per_unit: to_u32(whole(gpus, r)),
            interconnect: interconnect[r].as_deref().map(&mut text),
            cluster_gpus: to_u32(whole(cluster, r)),
            operator_tier: tier[r]
                .as_deref()
                .map(str::parse)
                .transpose()
                .map_err(|e| bad(r, format!("{e}")))?,
            upfront: at_most(upfront, r),
            term_start: term_start
                .date(r)
                .map_err(|e| bad(r, format!("term_start: {e}")))?,
            input_file: shared(&mut last_file, &need(&mut file[r], r, "input_file", all)?),
            input_row: whole(row, r).unwrap_or(0).max(0) as u64,
        };
        out.push(StoredObservation {
            obs,
            dedupe_key: need(&mut key[r], r, "dedupe_key", true)?.into(),
        });
    }
    Ok(out)
}

/// A stored row's grade from its `grade` and `region` cells. The store writes the
/// base grade (`GPU/SCOPE/TERM`) and the region apart; a store written before they
/// were split carries `@region` in `grade` too, read as it is. A row whose two
/// cells name different regions is refused: one of them was edited.
pub(crate) fn with_region(
    grade: Grade,
    region: Option<&str>,
) -> std::result::Result<Grade, String> {
    match (region, grade.region.as_deref()) {
        (None, _) => Ok(grade),
        (Some(r), None) => {
            let r = r.to_ascii_lowercase();
            if r.is_empty() || r.contains(['/', '@']) {
                return Err(format!("region {r:?} is not a region"));
            }
            Ok(grade.with_region(Some(r.into())))
        }
        (Some(r), Some(g)) if r.eq_ignore_ascii_case(g) => Ok(grade),
        (Some(r), Some(g)) => Err(format!(
            "grade {grade} names region {g:?} but the region column says {r:?}"
        )),
    }
}

/// A time column of a partition: typed (what rentix writes) or, in a store written
/// before timestamps and dates were typed, RFC 3339 and `YYYY-MM-DD` text.
pub(crate) enum TimeCol<'a> {
    Timestamp(&'a [Option<i64>]),
    Date(&'a [Option<i32>]),
    Text(&'a [Option<String>]),
}

impl<'a> TimeCol<'a> {
    pub(crate) fn of(cols: &'a BTreeMap<String, Col>, name: &str, path: &Path) -> Result<Self> {
        match cols.get(name) {
            Some(Col::Timestamp(v)) => Ok(TimeCol::Timestamp(v)),
            Some(Col::Date(v)) => Ok(TimeCol::Date(v)),
            Some(Col::Str(v)) => Ok(TimeCol::Text(v)),
            _ => Err(StoreError::Store {
                path: path.to_path_buf(),
                detail: format!("missing or mistyped column {name}"),
            }),
        }
    }

    pub(crate) fn instant(&self, r: usize) -> std::result::Result<Option<DateTime<Utc>>, String> {
        match self {
            TimeCol::Timestamp(v) => v[r]
                .map(|us| from_micros(us).ok_or_else(|| format!("{us} us is out of range")))
                .transpose(),
            TimeCol::Text(v) => v[r]
                .as_deref()
                .map(|s| {
                    DateTime::parse_from_rfc3339(s)
                        .map(|t| t.with_timezone(&Utc))
                        .map_err(|e| e.to_string())
                })
                .transpose(),
            TimeCol::Date(_) => Err("a date where a timestamp belongs".into()),
        }
    }

    pub(crate) fn date(&self, r: usize) -> std::result::Result<Option<NaiveDate>, String> {
        match self {
            TimeCol::Date(v) => v
                .get(r)
                .copied()
                .flatten()
                .map(|d| from_epoch_days(d).ok_or_else(|| format!("day {d} is out of range")))
                .transpose(),
            TimeCol::Text(v) => v[r]
                .as_deref()
                .map(|s| NaiveDate::parse_from_str(s, "%Y-%m-%d").map_err(|e| e.to_string()))
                .transpose(),
            TimeCol::Timestamp(_) => Err("a timestamp where a date belongs".into()),
        }
    }
}

/// Everything about an observation except where it was read from (file and row):
/// two rows with equal content are the same observation. Used to choose, among
/// duplicates, the same survivor whatever the input order.
pub fn content_key(o: &Observation) -> String {
    format!(
        "{}|{}|{}|{}|{}|{:?}|{:?}|{:?}|{}|{}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{}",
        timestamp_text(o.observed_at),
        o.kind,
        o.source,
        o.grade,
        o.obs_id,
        o.usd_per_gpu_hour.get(),
        o.quantity_gpu_hours.map(|q| q.get()),
        o.price_raw,
        o.price_unit,
        o.currency,
        o.gpus_per_unit,
        o.interconnect,
        o.cluster_gpus,
        o.operator_tier,
        o.upfront,
        o.term_start,
        o.gpu_raw,
    )
}
