//! Holiday calendars for business-day rules (`data/calendars/`).

use crate::error::CoreError;
use chrono::{Datelike, NaiveDate, Weekday};
use std::collections::BTreeSet;

const US_EXCHANGE: &str = crate::bundled::data::US_EXCHANGE_CALENDAR;

/// Which days count: every day, or business days of a holiday calendar.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DayRule {
    /// Every calendar day counts (`all`, the default).
    #[default]
    AllDays,
    /// Monday to Friday, less the calendar's holidays (`business`).
    Business(HolidayCalendar),
}

impl DayRule {
    /// Parses `all` or `business` with a calendar name (`us-exchange`).
    pub fn new(days: &str, calendar: &str) -> Result<Self, CoreError> {
        match days {
            "all" => Ok(DayRule::AllDays),
            "business" => Ok(DayRule::Business(HolidayCalendar::named(calendar)?)),
            other => Err(CoreError::Unknown {
                what: "day rule",
                value: other.into(),
                expected: "all, business".into(),
            }),
        }
    }

    /// Whether day `d` counts under this rule.
    pub fn counts(&self, d: NaiveDate) -> bool {
        match self {
            DayRule::AllDays => true,
            DayRule::Business(c) => c.is_business_day(d),
        }
    }
}

/// A set of full-day holidays; weekends are never business days.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HolidayCalendar {
    /// The calendar's name: `us-exchange`, `none`, or the name given to
    /// [`HolidayCalendar::parse`].
    pub name: String,
    holidays: BTreeSet<NaiveDate>,
}

impl HolidayCalendar {
    /// A bundled calendar by name.
    pub fn named(name: &str) -> Result<Self, CoreError> {
        match name {
            // Parsed once per process: settlement rules ask for it month by month.
            "us-exchange" => {
                static PARSED: std::sync::OnceLock<Result<HolidayCalendar, CoreError>> =
                    std::sync::OnceLock::new();
                PARSED
                    .get_or_init(|| Self::parse(name, US_EXCHANGE))
                    .clone()
            }
            "none" => Ok(Self {
                name: "none".into(),
                holidays: BTreeSet::new(),
            }),
            other => Err(CoreError::Unknown {
                what: "holiday calendar",
                value: other.into(),
                expected: "us-exchange, none".into(),
            }),
        }
    }

    /// Parses `date,name` rows after a header line (`YYYY-MM-DD` dates; blank lines
    /// are skipped); `name` names the calendar and its errors.
    pub fn parse(name: &str, text: &str) -> Result<Self, CoreError> {
        let mut holidays = BTreeSet::new();
        for (i, line) in text.lines().enumerate().skip(1) {
            let d = line.split(',').next().unwrap_or("").trim();
            if d.is_empty() {
                continue;
            }
            let date =
                NaiveDate::parse_from_str(d, "%Y-%m-%d").map_err(|e| CoreError::InvalidTime {
                    value: d.into(),
                    reason: format!("calendar {name}, line {}: {e}", i + 1),
                })?;
            holidays.insert(date);
        }
        Ok(Self {
            name: name.into(),
            holidays,
        })
    }

    /// Whether `d` is neither a Saturday, a Sunday nor a holiday.
    pub fn is_business_day(&self, d: NaiveDate) -> bool {
        !matches!(d.weekday(), Weekday::Sat | Weekday::Sun) && !self.holidays.contains(&d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn us_exchange_days() {
        let c = HolidayCalendar::named("us-exchange").unwrap();
        let d = |s| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
        assert!(!c.is_business_day(d("2025-07-04")));
        assert!(!c.is_business_day(d("2025-04-18")));
        assert!(!c.is_business_day(d("2025-07-05")));
        assert!(c.is_business_day(d("2025-07-07")));
        assert!(HolidayCalendar::named("mars").is_err());
        assert!(DayRule::new("business", "us-exchange")
            .unwrap()
            .counts(d("2025-07-07")));
        assert!(DayRule::new("weekly", "none").is_err());
    }
}
