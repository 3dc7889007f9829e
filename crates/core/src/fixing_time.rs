//! The fixing calendar's cut-off: which fixing date an observation time belongs to.

use crate::error::CoreError;
use chrono::{DateTime, Days, NaiveDate, NaiveTime, TimeZone, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

/// A daily cut-off in a time zone. An observation at or before the cut-off on local
/// day D belongs to fixing D; one after it belongs to D + 1. The default cut-off
/// 24:00 UTC makes the fixing date the UTC calendar date.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cutoff {
    /// `HH:MM` local time; `24:00` means end of day.
    pub time: String,
    /// IANA time zone, e.g. `UTC`, `America/New_York`.
    pub timezone: String,
}

impl Default for Cutoff {
    fn default() -> Self {
        Self {
            time: "24:00".into(),
            timezone: "UTC".into(),
        }
    }
}

/// A [`Cutoff`] checked and ready to assign fixing dates.
#[derive(Debug, Clone, Copy)]
pub struct FixingClock {
    /// `None` = end of day.
    time: Option<NaiveTime>,
    tz: Tz,
    /// Whether `tz` is UTC under another name: its local time is the UTC time, with
    /// no gap or fold, so the zone's tables are not searched (twice) for every row.
    utc: bool,
}

/// The zones whose offset is zero at every instant (the test checks them).
const ZERO_OFFSET: [Tz; 12] = [
    Tz::UTC,
    Tz::Etc__UTC,
    Tz::Etc__UCT,
    Tz::UCT,
    Tz::Etc__Universal,
    Tz::Universal,
    Tz::Etc__Zulu,
    Tz::Zulu,
    Tz::GMT,
    Tz::Etc__GMT,
    Tz::Etc__Greenwich,
    Tz::Greenwich,
];

impl FixingClock {
    /// Checks a cut-off: the time zone must be an IANA name and the time `HH:MM` or
    /// `24:00`; otherwise [`CoreError::InvalidTime`].
    pub fn new(cutoff: &Cutoff) -> Result<Self, CoreError> {
        let tz: Tz = cutoff
            .timezone
            .parse()
            .map_err(|_| CoreError::InvalidTime {
                value: cutoff.timezone.clone(),
                reason: "not an IANA time zone name".into(),
            })?;
        let time = if cutoff.time == "24:00" {
            None
        } else {
            Some(
                NaiveTime::parse_from_str(&cutoff.time, "%H:%M").map_err(|e| {
                    CoreError::InvalidTime {
                        value: cutoff.time.clone(),
                        reason: format!("expected HH:MM: {e}"),
                    }
                })?,
            )
        };
        Ok(Self {
            time,
            tz,
            utc: ZERO_OFFSET.contains(&tz),
        })
    }

    /// The default clock (24:00 UTC): the fixing date is the UTC calendar date.
    pub fn utc_midnight() -> Self {
        Self {
            time: None,
            tz: Tz::UTC,
            utc: true,
        }
    }

    /// The fixing date an observation made at `t` contributes to: its local date, or
    /// the next one when `t` is after that date's cut-off instant. The cut-off is an
    /// instant, not a wall time: in a DST fold (01:30 twice in New York in November)
    /// it is the first 01:30, and in a gap (spring forward) the first valid minute
    /// after it, so a later observation never lands on an earlier fixing date.
    pub fn fixing_date(&self, t: DateTime<Utc>) -> NaiveDate {
        if self.utc {
            let day = t.date_naive();
            return match self.time {
                Some(cut) if t.naive_utc() > day.and_time(cut) => {
                    day.checked_add_days(Days::new(1)).unwrap_or(day)
                }
                _ => day,
            };
        }
        let local = self.tz.from_utc_datetime(&t.naive_utc());
        let day = local.date_naive();
        let Some(cut) = self.time else {
            return day;
        };
        let mut wall = day.and_time(cut);
        // A gap is at most a few hours: step to the first minute that exists.
        let mut instant = None;
        for _ in 0..=240 {
            if let Some(i) = self.tz.from_local_datetime(&wall).earliest() {
                instant = Some(i.with_timezone(&Utc));
                break;
            }
            wall += chrono::Duration::minutes(1);
        }
        match instant {
            Some(i) if t > i => day.checked_add_days(Days::new(1)).unwrap_or(day),
            Some(_) => day,
            None if local.time() > cut => day.checked_add_days(Days::new(1)).unwrap_or(day),
            None => day,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn zones_taken_for_utc_give_the_dates_their_tables_give() {
        // Every zone on the list, with and without a cut-off, at instants from 1850
        // to 2150 (every 7 days and 3 hours and 7 minutes and 11 seconds, so that
        // times of day vary): the shortcut against the zone's own tables.
        for tz in ZERO_OFFSET {
            for time in ["24:00", "00:00", "17:30", "23:59"] {
                let fast = FixingClock::new(&Cutoff {
                    time: time.into(),
                    timezone: tz.name().into(),
                })
                .unwrap();
                assert!(fast.utc, "{tz:?}");
                let slow = FixingClock { utc: false, ..fast };
                let mut t = at("1850-01-01T00:00:00Z");
                while t < at("2150-01-01T00:00:00Z") {
                    assert_eq!(
                        fast.fixing_date(t),
                        slow.fixing_date(t),
                        "{tz:?} {time} {t}"
                    );
                    t += chrono::Duration::seconds(7 * 86_400 + 3 * 3600 + 7 * 60 + 11);
                }
            }
        }
        // Zones with an offset are not taken for UTC.
        for tz in [
            "Europe/London",
            "Africa/Abidjan",
            "Etc/GMT+1",
            "America/New_York",
        ] {
            let c = FixingClock::new(&Cutoff {
                time: "24:00".into(),
                timezone: tz.into(),
            })
            .unwrap();
            assert!(!c.utc, "{tz}");
        }
    }

    #[test]
    fn a_cutoff_in_a_dst_fold_is_an_instant() {
        let c = FixingClock::new(&Cutoff {
            time: "01:30".into(),
            timezone: "America/New_York".into(),
        })
        .unwrap();
        let d = |s| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
        // 2025-11-02: 01:30 EDT is 05:30Z, 01:30 EST is 06:30Z.
        assert_eq!(c.fixing_date(at("2025-11-02T05:15:00Z")), d("2025-11-02"));
        assert_eq!(c.fixing_date(at("2025-11-02T05:45:00Z")), d("2025-11-03"));
        // 30 minutes later, 01:15 EST on the wall clock: still after the cut-off.
        assert_eq!(c.fixing_date(at("2025-11-02T06:15:00Z")), d("2025-11-03"));
        // A leap second at the end of a UTC day stays on that day.
        let utc = FixingClock::utc_midnight();
        let leap = DateTime::parse_from_rfc3339("2016-12-31T23:59:60Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(utc.fixing_date(leap), d("2016-12-31"));
    }

    #[test]
    fn utc_default_is_calendar_date() {
        let c = FixingClock::new(&Cutoff::default()).unwrap();
        assert_eq!(
            c.fixing_date(at("2025-03-01T23:59:59Z")).to_string(),
            "2025-03-01"
        );
        assert_eq!(
            c.fixing_date(at("2025-03-02T00:00:00Z")).to_string(),
            "2025-03-02"
        );
    }

    #[test]
    fn new_york_four_pm_cutoff() {
        let c = FixingClock::new(&Cutoff {
            time: "16:00".into(),
            timezone: "America/New_York".into(),
        })
        .unwrap();
        // 20:59 UTC = 15:59 EST: same day; 21:01 UTC = 16:01 EST: next day.
        assert_eq!(
            c.fixing_date(at("2025-01-10T20:59:00Z")).to_string(),
            "2025-01-10"
        );
        assert_eq!(
            c.fixing_date(at("2025-01-10T21:01:00Z")).to_string(),
            "2025-01-11"
        );
        // In July New York is on EDT (UTC-4): 20:30 UTC = 16:30 local.
        assert_eq!(
            c.fixing_date(at("2025-07-10T20:30:00Z")).to_string(),
            "2025-07-11"
        );
        assert!(FixingClock::new(&Cutoff {
            time: "25:00".into(),
            timezone: "UTC".into()
        })
        .is_err());
        // A hostile run read `invalid time "Mars/Olympus"` for a time zone.
        let zone = FixingClock::new(&Cutoff {
            time: "16:00".into(),
            timezone: "Mars/Olympus".into(),
        })
        .err()
        .map(|e| e.to_string());
        assert_eq!(
            zone.as_deref(),
            Some("invalid \"Mars/Olympus\": not an IANA time zone name")
        );
    }
}
