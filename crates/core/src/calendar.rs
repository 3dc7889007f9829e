//! Holiday calendars for business-day rules (`data/calendars/`).

use crate::error::CoreError;
use chrono::{Datelike, NaiveDate, Weekday};
use std::collections::BTreeMap;

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
    /// Parses `all` or `business` with a calendar name (`us-exchange`). The name is
    /// checked with `all` too, where no calendar is used: a hostile run's
    /// `holidays = "/nonexistent.csv"` was accepted until `days` became `business`.
    pub fn new(days: &str, calendar: &str) -> Result<Self, CoreError> {
        match days {
            "all" => HolidayCalendar::named(calendar).map(|_| DayRule::AllDays),
            "business" => Ok(DayRule::Business(HolidayCalendar::named(calendar)?)),
            other => Err(CoreError::Unknown {
                what: "day rule",
                value: other.into(),
                expected: "all, business".into(),
            }),
        }
    }

    /// The last day the rule's holiday calendar is known for (`None`: every day,
    /// or a calendar without holidays).
    pub fn covered_through(&self) -> Option<NaiveDate> {
        match self {
            DayRule::AllDays => None,
            DayRule::Business(c) => c.covered_through(),
        }
    }

    /// Why `d` does not count under this rule; `None` when it does.
    pub fn why_not(&self, d: NaiveDate) -> Option<String> {
        match self {
            DayRule::AllDays => None,
            DayRule::Business(c) => c.why_closed(d),
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
    /// Each holiday and its name.
    holidays: BTreeMap<NaiveDate, String>,
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
                holidays: BTreeMap::new(),
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
        let mut holidays = BTreeMap::new();
        for (i, line) in text.lines().enumerate().skip(1) {
            let (d, what) = line.split_once(',').unwrap_or((line, "holiday"));
            let d = d.trim();
            if d.is_empty() {
                continue;
            }
            let date =
                NaiveDate::parse_from_str(d, "%Y-%m-%d").map_err(|e| CoreError::InvalidTime {
                    value: d.into(),
                    reason: format!("calendar {name}, line {}: {e}", i + 1),
                })?;
            holidays.insert(date, what.trim().to_string());
        }
        Ok(Self {
            name: name.into(),
            holidays,
        })
    }

    /// Whether `d` is neither a Saturday, a Sunday nor a holiday.
    pub fn is_business_day(&self, d: NaiveDate) -> bool {
        !matches!(d.weekday(), Weekday::Sat | Weekday::Sun) && !self.holidays.contains_key(&d)
    }

    /// The last day the calendar is known for: December 31 of the last year it
    /// lists a holiday in (`None`: it lists none, weekends are its only rule). A
    /// business day after it may be a holiday the table does not hold yet.
    pub fn covered_through(&self) -> Option<NaiveDate> {
        let (last, _) = self.holidays.last_key_value()?;
        NaiveDate::from_ymd_opt(last.year(), 12, 31)
    }

    /// Why `d` is not a business day (`a Saturday`, `Christmas Day, a us-exchange
    /// holiday`); `None` when it is one.
    pub fn why_closed(&self, d: NaiveDate) -> Option<String> {
        match (d.weekday(), self.holidays.get(&d)) {
            (Weekday::Sat, _) => Some("a Saturday".into()),
            (Weekday::Sun, _) => Some("a Sunday".into()),
            (_, Some(name)) => Some(format!("{name}, a {} holiday", self.name)),
            _ => None,
        }
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
        assert!(DayRule::new("all", "/nonexistent.csv").is_err());
        assert!(DayRule::new("all", "us-exchange").is_ok());
    }

    /// The table runs through 2035 (NYSE rules: a Saturday holiday closes the
    /// Friday before, a Sunday one the Monday after, except New Year's Day on a
    /// Saturday); the 2028 Christmas is a holiday, and a day past the table
    /// is known to be past it.
    #[test]
    fn the_us_exchange_table_reaches_2035_and_says_where_it_ends() {
        let c = HolidayCalendar::named("us-exchange").unwrap();
        let d = |s| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
        // 2028-12-25 is a Monday; Good Friday 2028 is April 14 (Easter April 16);
        // 2033-12-25 is a Sunday, observed Monday the 26th; 2032-07-04 a Sunday.
        for h in [
            "2028-12-25",
            "2028-04-14",
            "2033-12-26",
            "2032-07-05",
            "2035-11-22",
        ] {
            assert!(!c.is_business_day(d(h)), "{h}");
        }
        // New Year's Day 2028 is a Saturday: Friday 2027-12-31 stays open.
        assert!(c.is_business_day(d("2027-12-31")));
        assert_eq!(c.covered_through(), Some(d("2035-12-31")));
        assert_eq!(
            c.why_closed(d("2028-12-25")).as_deref(),
            Some("Christmas Day, a us-exchange holiday")
        );
        assert_eq!(c.why_closed(d("2025-06-07")).as_deref(), Some("a Saturday"));
        assert_eq!(c.why_closed(d("2025-06-09")), None);
        assert_eq!(
            HolidayCalendar::named("none").unwrap().covered_through(),
            None
        );
    }
}
