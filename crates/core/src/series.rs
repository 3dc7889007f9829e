//! A date-keyed series of finite values with half-open range queries and alignment.

use crate::error::CoreError;
use chrono::NaiveDate;
use std::collections::BTreeMap;
use std::ops::Range;

/// Values keyed by date, one per date, every value finite.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DateSeries {
    points: BTreeMap<NaiveDate, f64>,
}

impl DateSeries {
    /// An empty series.
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds a series; refuses non-finite values and repeated dates.
    pub fn from_points(
        points: impl IntoIterator<Item = (NaiveDate, f64)>,
    ) -> Result<Self, CoreError> {
        let mut s = Self::new();
        for (d, v) in points {
            s.insert(d, v)?;
        }
        Ok(s)
    }

    /// Inserts one point; refuses NaN and infinities and a date already present.
    pub fn insert(&mut self, date: NaiveDate, value: f64) -> Result<(), CoreError> {
        if !value.is_finite() {
            return Err(CoreError::NonFinite {
                what: "series value",
                value,
            });
        }
        // Refused without touching the point already there.
        match self.points.entry(date) {
            std::collections::btree_map::Entry::Occupied(_) => Err(CoreError::InvalidTime {
                value: date.to_string(),
                reason: "date already present in series".into(),
            }),
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(value);
                Ok(())
            }
        }
    }

    /// The value on `date`, `None` if the series has no point there.
    pub fn get(&self, date: NaiveDate) -> Option<f64> {
        self.points.get(&date).copied()
    }

    /// Points with `range.start <= date < range.end`.
    pub fn range(&self, range: Range<NaiveDate>) -> impl Iterator<Item = (NaiveDate, f64)> + '_ {
        self.points.range(range).map(|(d, v)| (*d, *v))
    }

    /// The last point on or before `date`.
    pub fn last_on_or_before(&self, date: NaiveDate) -> Option<(NaiveDate, f64)> {
        self.points
            .range(..=date)
            .next_back()
            .map(|(d, v)| (*d, *v))
    }

    /// Every point, in date order.
    pub fn iter(&self) -> impl Iterator<Item = (NaiveDate, f64)> + '_ {
        self.points.iter().map(|(d, v)| (*d, *v))
    }

    /// Number of points (dates).
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Whether the series has no point.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The earliest date, `None` for an empty series.
    pub fn first_date(&self) -> Option<NaiveDate> {
        self.points.keys().next().copied()
    }

    /// The latest date, `None` for an empty series.
    pub fn last_date(&self) -> Option<NaiveDate> {
        self.points.keys().next_back().copied()
    }

    /// Aligns two series on the dates both have and combines them with `f`:
    /// `rent.intersection(&index, |r, i| r - i)` is the basis. A date where `f`
    /// returns NaN or an infinity is left out.
    pub fn intersection(&self, other: &DateSeries, f: impl Fn(f64, f64) -> f64) -> DateSeries {
        let points = self
            .points
            .iter()
            .filter_map(|(d, a)| other.points.get(d).map(|b| (*d, f(*a, *b))))
            .filter(|(_, v)| v.is_finite())
            .collect();
        DateSeries { points }
    }

    /// The values in date order, without their dates.
    pub fn values(&self) -> Vec<f64> {
        self.points.values().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_insert_leaves_the_series_as_it_was() {
        let d = NaiveDate::from_ymd_opt(2025, 6, 1).unwrap();
        let mut s = DateSeries::default();
        s.insert(d, 2.0).unwrap();
        assert!(s.insert(d, 3.0).is_err());
        assert_eq!(s.get(d), Some(2.0));
    }

    fn d(day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2025, 1, day).unwrap()
    }

    #[test]
    fn range_is_half_open_and_intersection_aligns() {
        let a = DateSeries::from_points([(d(1), 3.0), (d(2), 4.0), (d(3), 5.0)]).unwrap();
        let b = DateSeries::from_points([(d(2), 1.0), (d(3), 2.0), (d(4), 9.0)]).unwrap();
        assert_eq!(a.range(d(1)..d(3)).count(), 2);
        let basis = a.intersection(&b, |x, y| x - y);
        assert_eq!(basis.values(), vec![3.0, 3.0]);
        assert_eq!(a.last_on_or_before(d(9)), Some((d(3), 5.0)));
        assert!(DateSeries::from_points([(d(1), f64::NAN)]).is_err());
        assert!(DateSeries::from_points([(d(1), 1.0), (d(1), 2.0)]).is_err());
    }
}
