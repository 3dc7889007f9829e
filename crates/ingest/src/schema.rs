//! The store's column layout: [`Observation`] to and from a [`Table`].

use crate::error::{IngestError, Result};
use crate::table::{epoch_days, from_epoch_days, from_micros, micros, Col, Table};
use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
use rentix_core::{GpuHours, Grade, Observation, UsdPerGpuHour};
use std::path::Path;

/// An accepted observation with the key that identifies its duplicates.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredObservation {
    pub obs: Observation,
    pub dedupe_key: String,
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

pub fn timestamp_text(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// Converts observations to the store's table layout, moving their strings into the
/// columns (the rows are not needed after a partition is written).
pub fn to_table(mut rows: Vec<StoredObservation>) -> Table {
    let rows = rows.as_mut_slice();
    fn s(
        rows: &mut [StoredObservation],
        f: impl FnMut(&mut StoredObservation) -> Option<String>,
    ) -> Col {
        Col::Str(rows.iter_mut().map(f).collect())
    }
    fn f(rows: &[StoredObservation], g: impl Fn(&StoredObservation) -> Option<f64>) -> Col {
        Col::F64(rows.iter().map(g).collect())
    }
    fn i(rows: &[StoredObservation], g: impl Fn(&StoredObservation) -> Option<i64>) -> Col {
        Col::I64(rows.iter().map(g).collect())
    }
    let take = std::mem::take::<String>;
    let mut t = Table::new();
    t.push("obs_id", s(rows, |r| Some(take(&mut r.obs.obs_id))));
    t.push("dedupe_key", s(rows, |r| Some(take(&mut r.dedupe_key))));
    t.push("kind", s(rows, |r| Some(r.obs.kind.as_str().to_string())));
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
    t.push("source", s(rows, |r| Some(take(&mut r.obs.source))));
    t.push("grade", s(rows, |r| Some(r.obs.grade.key())));
    t.push("gpu", s(rows, |r| Some(r.obs.grade.gpu.to_string())));
    t.push("scope", s(rows, |r| Some(r.obs.grade.scope.to_string())));
    t.push(
        "term",
        s(rows, |r| Some(r.obs.grade.term.as_str().to_string())),
    );
    t.push("region", s(rows, |r| r.obs.grade.region.take()));
    t.push("gpu_raw", s(rows, |r| Some(take(&mut r.obs.gpu_raw))));
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
        s(rows, |r| Some(r.obs.price_unit.as_str().to_string())),
    );
    t.push("currency", s(rows, |r| Some(take(&mut r.obs.currency))));
    t.push(
        "gpus_per_unit",
        i(rows, |r| r.obs.gpus_per_unit.map(i64::from)),
    );
    t.push("interconnect", s(rows, |r| r.obs.interconnect.take()));
    t.push(
        "cluster_gpus",
        i(rows, |r| r.obs.cluster_gpus.map(i64::from)),
    );
    t.push(
        "operator_tier",
        s(rows, |r| {
            r.obs.operator_tier.map(|x| x.as_str().to_string())
        }),
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
    t.push("input_file", s(rows, |r| Some(take(&mut r.obs.input_file))));
    t.push("input_row", i(rows, |r| Some(r.obs.input_row as i64)));
    t
}

/// Reads observations back from a store table, re-checking every invariant: a
/// store file edited by hand is refused, not trusted.
pub fn from_table(t: &Table, path: &Path) -> Result<Vec<StoredObservation>> {
    let bad = |row: usize, detail: String| IngestError::Store {
        path: path.to_path_buf(),
        detail: format!("row {}: {detail}", row + 1),
    };
    let str_col = |name: &str| -> Result<&Vec<Option<String>>> {
        match t.col(name) {
            Some(Col::Str(v)) => Ok(v),
            _ => Err(IngestError::Store {
                path: path.to_path_buf(),
                detail: format!("missing or mistyped column {name}"),
            }),
        }
    };
    let f64_col = |name: &str| -> Result<&Vec<Option<f64>>> {
        match t.col(name) {
            Some(Col::F64(v)) => Ok(v),
            _ => Err(IngestError::Store {
                path: path.to_path_buf(),
                detail: format!("missing or mistyped column {name}"),
            }),
        }
    };
    let i64_col = |name: &str| -> Result<&Vec<Option<i64>>> {
        match t.col(name) {
            Some(Col::I64(v)) => Ok(v),
            _ => Err(IngestError::Store {
                path: path.to_path_buf(),
                detail: format!("missing or mistyped column {name}"),
            }),
        }
    };
    let (obs_id, key, kind, source, grade) = (
        str_col("obs_id")?,
        str_col("dedupe_key")?,
        str_col("kind")?,
        str_col("source")?,
        str_col("grade")?,
    );
    let (gpu_raw, price_unit, currency, interconnect, tier, file) = (
        str_col("gpu_raw")?,
        str_col("price_unit")?,
        str_col("currency")?,
        str_col("interconnect")?,
        str_col("operator_tier")?,
        str_col("input_file")?,
    );
    let (at, fd, term_start) = (
        TimeCol::of(t, "observed_at", path)?,
        TimeCol::of(t, "fixing_date", path)?,
        TimeCol::of(t, "term_start", path)?,
    );
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
    let need = |v: &Option<String>, r: usize, name: &str| -> Result<String> {
        v.clone().ok_or_else(|| bad(r, format!("{name} is empty")))
    };
    let mut out = Vec::with_capacity(t.height());
    for r in 0..t.height() {
        let g: Grade = need(&grade[r], r, "grade")?
            .parse()
            .map_err(|e| bad(r, format!("{e}")))?;
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
            obs_id: need(&obs_id[r], r, "obs_id")?,
            kind: need(&kind[r], r, "kind")?
                .parse()
                .map_err(|e| bad(r, format!("{e}")))?,
            observed_at,
            fixing_date,
            source: need(&source[r], r, "source")?,
            grade: g,
            gpu_raw: need(&gpu_raw[r], r, "gpu_raw")?,
            usd_per_gpu_hour: UsdPerGpuHour::positive(usd[r].unwrap_or(f64::NAN))
                .map_err(|e| bad(r, format!("{e}")))?,
            quantity_gpu_hours: qty[r]
                .map(GpuHours::new)
                .transpose()
                .map_err(|e| bad(r, format!("{e}")))?,
            price_raw: price[r].unwrap_or(f64::NAN),
            price_unit: need(&price_unit[r], r, "price_unit")?
                .parse()
                .map_err(|e| bad(r, format!("{e}")))?,
            currency: need(&currency[r], r, "currency")?,
            gpus_per_unit: to_u32(gpus[r]),
            interconnect: interconnect[r].clone(),
            cluster_gpus: to_u32(cluster[r]),
            operator_tier: tier[r]
                .as_deref()
                .map(str::parse)
                .transpose()
                .map_err(|e| bad(r, format!("{e}")))?,
            upfront: upfront[r],
            term_start: term_start
                .date(r)
                .map_err(|e| bad(r, format!("term_start: {e}")))?,
            input_file: need(&file[r], r, "input_file")?,
            input_row: row[r].unwrap_or(0).max(0) as u64,
        };
        out.push(StoredObservation {
            obs,
            dedupe_key: need(&key[r], r, "dedupe_key")?,
        });
    }
    Ok(out)
}

/// A time column of a partition: typed (what rentix writes) or, in a store written
/// before timestamps and dates were typed, RFC 3339 and `YYYY-MM-DD` text.
enum TimeCol<'a> {
    Timestamp(&'a [Option<i64>]),
    Date(&'a [Option<i32>]),
    Text(&'a [Option<String>]),
}

impl<'a> TimeCol<'a> {
    fn of(t: &'a Table, name: &str, path: &Path) -> Result<Self> {
        match t.col(name) {
            Some(Col::Timestamp(v)) => Ok(TimeCol::Timestamp(v)),
            Some(Col::Date(v)) => Ok(TimeCol::Date(v)),
            Some(Col::Str(v)) => Ok(TimeCol::Text(v)),
            _ => Err(IngestError::Store {
                path: path.to_path_buf(),
                detail: format!("missing or mistyped column {name}"),
            }),
        }
    }

    fn instant(&self, r: usize) -> std::result::Result<Option<DateTime<Utc>>, String> {
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

    fn date(&self, r: usize) -> std::result::Result<Option<NaiveDate>, String> {
        match self {
            TimeCol::Date(v) => v[r]
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
