//! The underlying index as a backtest sees it: its values by date, which of its
//! fixings may count towards a settlement (sufficient and not carried forward), and
//! the unit its values are in.

use chrono::NaiveDate;
use rentix_core::DateSeries;
use rentix_fixings::{Fixing, IndexId, IndexUnit};
use std::collections::{BTreeMap, BTreeSet};

/// An intraday index's stamps: every value it published, by instant.
#[derive(Debug, Clone, PartialEq)]
pub struct Stamps {
    /// Seconds between stamps (the cadence).
    pub step: i64,
    /// Valued, sufficient stamps: seconds since the epoch -> value.
    pub values: BTreeMap<i64, f64>,
}

/// One index of a fixings file, as a backtest settles on it.
#[derive(Debug, Clone, PartialEq)]
pub struct Underlying {
    /// Which index: a grade or a composite, and the unit of its values (USD per
    /// GPU-hour, or points for a chained or hedonic composite).
    pub id: IndexId,
    /// The index's value on each date it has one.
    pub values: DateSeries,
    /// Dates whose fixing is sufficient and was not carried forward.
    pub qualifying: BTreeSet<NaiveDate>,
    /// Rows in the fixings file for this index, with or without a value.
    pub rows: usize,
    /// How many of those rows were sufficient.
    pub sufficient_rows: usize,
    /// How many of those rows are of a benchmark the user brought (`external`):
    /// their sufficiency is unknown, and every one with a value qualifies.
    pub external_rows: usize,
    /// For an intraday index: its stamps, which a settlement averages (the daily
    /// `values` are each day's mean of them, for entry levels and charts).
    pub stamps: Option<Stamps>,
}

impl Underlying {
    /// A hand-built USD series in which every fixing qualifies.
    pub fn from_series(name: &str, values: DateSeries) -> Self {
        Self::of(IndexId::grade(name), values)
    }

    /// Index `id`'s series, every fixing qualifying.
    pub fn of(id: IndexId, values: DateSeries) -> Self {
        let qualifying = values.iter().map(|(d, _)| d).collect();
        let rows = values.len();
        Self {
            id,
            values,
            qualifying,
            rows,
            sufficient_rows: rows,
            external_rows: 0,
            stamps: None,
        }
    }

    /// The grade key or composite name.
    pub fn name(&self) -> &str {
        self.id.as_str()
    }

    /// What its values are measured in.
    pub fn unit(&self) -> IndexUnit {
        self.id.unit()
    }

    /// Share of the file's rows for this index that were sufficient; `None` for a
    /// benchmark the user brought, whose sufficiency is unknown.
    pub fn sufficient_share(&self) -> Option<f64> {
        (self.external_rows == 0).then(|| self.sufficient_rows as f64 / self.rows.max(1) as f64)
    }

    /// The same index with every value multiplied by `k`: a points composite
    /// rebased to USD per GPU-hour, and so in USD per GPU-hour from then on.
    pub fn scaled(&self, k: f64) -> Self {
        let values = DateSeries::from_points(self.values.iter().map(|(d, v)| (d, v * k)))
            .unwrap_or_default();
        let stamps = self.stamps.as_ref().map(|s| Stamps {
            step: s.step,
            values: s.values.iter().map(|(t, v)| (*t, v * k)).collect(),
        });
        let id = match &self.id {
            IndexId::Composite { name, .. } => {
                IndexId::composite(name.clone(), IndexUnit::UsdPerGpuHour)
            }
            grade => grade.clone(),
        };
        Self {
            id,
            values,
            stamps,
            ..self.clone()
        }
    }
}

/// Refuses a fixings file a backtest cannot settle on: a value at or below zero (no
/// rental price or index level is), two rows for one date and index (which of
/// them settles is ambiguous), or one index whose rows are of two kinds or units
/// (points on some dates, dollars on others). The error names the index and date.
pub fn check_fixings(fixings: &[Fixing]) -> Result<(), crate::error::BacktestError> {
    use crate::error::BacktestError::Fixings;
    let mut seen: BTreeSet<(&str, NaiveDate)> = BTreeSet::new();
    let mut ids: BTreeMap<&str, &IndexId> = BTreeMap::new();
    for f in fixings {
        let id = *ids.entry(f.grade.as_str()).or_insert(&f.grade);
        if id != &f.grade {
            return Err(Fixings(format!(
                "{} is in {} on some rows and in {} on {} (method {}): one index has one unit",
                f.grade,
                id.unit(),
                f.unit(),
                f.date,
                f.method
            )));
        }
        if let Some(v) = f.value.filter(|v| *v <= 0.0) {
            return Err(Fixings(format!(
                "the fixing of {} on {} is {v}: an index value must be above zero",
                f.grade, f.date
            )));
        }
        if !seen.insert((f.grade.as_str(), f.date)) {
            return Err(Fixings(format!(
                "{} has two rows on {}: a fixings file holds one row per date and index",
                f.grade, f.date
            )));
        }
    }
    Ok(())
}

/// Every index of a fixings file, by name. Rows without a value are counted but
/// carry no point.
pub fn underlyings(fixings: &[Fixing]) -> BTreeMap<String, Underlying> {
    type Points = Vec<(NaiveDate, f64)>;
    let mut acc: BTreeMap<&str, (Underlying, Points)> = BTreeMap::new();
    for f in fixings {
        let (u, points) = acc.entry(f.grade.as_str()).or_insert_with(|| {
            (
                Underlying::of(f.grade.clone(), DateSeries::new()),
                Vec::new(),
            )
        });
        u.rows += 1;
        u.sufficient_rows += usize::from(f.sufficient);
        let external = f.has_flag(&rentix_fixings::Flag::External);
        u.external_rows += usize::from(external);
        if let Some(v) = f.value {
            points.push((f.date, v));
            if f.qualifying_value().is_some() {
                u.qualifying.insert(f.date);
            }
        }
    }
    acc.into_iter()
        .filter_map(|(name, (u, points))| {
            let values = DateSeries::from_points(points).ok()?;
            Some((name.to_string(), Underlying { values, ..u }))
        })
        .collect()
}

/// Every grade of an intraday fixings file: its stamps, and each day's mean of them
/// as the daily values (a day qualifies when any of its stamps has a value).
pub(crate) fn intraday_underlyings(
    fixings: &[rentix_fixings::intraday::IntradayFixing],
) -> BTreeMap<String, Underlying> {
    let mut by: BTreeMap<&str, Vec<&rentix_fixings::intraday::IntradayFixing>> = BTreeMap::new();
    for f in fixings {
        by.entry(f.grade.as_str()).or_default().push(f);
    }
    by.into_iter()
        .filter_map(|(name, mut rows)| {
            rows.sort_by_key(|f| f.fixed_at);
            let times: Vec<i64> = rows.iter().map(|f| f.fixed_at.timestamp()).collect();
            let step = times
                .windows(2)
                .map(|w| w[1] - w[0])
                .filter(|d| *d > 0)
                .min()
                .unwrap_or(86_400);
            let mut days: BTreeMap<NaiveDate, (f64, usize)> = BTreeMap::new();
            let mut values = BTreeMap::new();
            for f in &rows {
                if let Some(v) = f.value {
                    values.insert(f.fixed_at.timestamp(), v);
                    let e = days.entry(f.date).or_default();
                    e.0 += v;
                    e.1 += 1;
                }
            }
            let daily =
                DateSeries::from_points(days.iter().map(|(d, (s, n))| (*d, s / *n as f64))).ok()?;
            let mut u = Underlying::from_series(name, daily);
            u.rows = rows.len();
            u.sufficient_rows = values.len();
            u.stamps = Some(Stamps { step, values });
            Some((name.to_string(), u))
        })
        .collect()
}

#[cfg(test)]
mod unit_tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    /// A points composite rebased on the rent's level is in dollars from then on.
    #[test]
    fn a_rebased_composite_is_in_dollars() {
        let values = DateSeries::from_points([(d("2025-03-01"), 100.0)]).unwrap();
        let u = Underlying::of(IndexId::composite("blend", IndexUnit::Points), values);
        let usd = u.scaled(0.025);
        assert_eq!(usd.unit(), IndexUnit::UsdPerGpuHour);
        assert_eq!(usd.name(), "blend");
        assert_eq!(usd.values.get(d("2025-03-01")), Some(2.5));
        assert_eq!(u.unit(), IndexUnit::Points);
    }

    /// A file whose one name is a chained composite on one day and a grade-like
    /// price on another cannot be settled on: which unit would the contract use?
    #[test]
    fn one_name_in_two_units_is_refused_naming_it() {
        let mut a = Fixing::for_test(d("2025-03-01"), "blend", Some(100.0));
        a.grade = IndexId::composite("blend", IndexUnit::Points);
        a.method = "jevons-chained".into();
        let b = Fixing::for_test(d("2025-03-02"), "blend", Some(2.5));
        let err = check_fixings(&[a.clone(), b]).unwrap_err().to_string();
        assert_eq!(
            err,
            "blend is in points on some rows and in usd-per-gpu-hour on 2025-03-02 (method vw-median): one index has one unit"
        );
        assert!(check_fixings(&[a]).is_ok());
    }
}
