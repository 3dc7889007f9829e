//! Durations written as people write them (`15m`, `1h`, `7d`) and the cadence of a
//! publication: parsed once, into whole minutes, wherever a methodology, a flag or
//! Python names one.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Minutes in a day.
pub const DAY_MINUTES: i64 = 1440;

/// The longest duration any setting takes: ten years of days.
const MAX_MINUTES: i64 = 3660 * DAY_MINUTES;

/// A duration written `"15m"`, `"1h"` or `"7d"`: a whole number and its unit
/// (minutes, hours, days), from 0 minutes to 3,660 days; the result in minutes.
///
/// # Errors
/// A text of another form, or a duration past 3,660 days (checked before any
/// multiplication, so that no value wraps into range).
pub fn parse_minutes(text: &str) -> Result<i64, String> {
    let t = text.trim();
    let (num, unit) = t.split_at(t.len() - t.chars().last().map_or(0, char::len_utf8));
    let form = || format!("{text:?} is not a duration (15m, 1h, 7d)");
    let per = match unit {
        "m" => 1,
        "h" => 60,
        "d" => DAY_MINUTES,
        _ => return Err(form()),
    };
    let n: i64 = num.parse().map_err(|_| form())?;
    match n.checked_mul(per) {
        Some(m) if (0..=MAX_MINUTES).contains(&m) => Ok(m),
        _ => Err(format!("{text:?} is outside 0 minutes .. 3660 days")),
    }
}

/// How often a series is published: whole minutes that divide a day (1m, 5m, 15m,
/// 1h, 4h, ...), or once a day (`1d`). Written and shown as its shortest text
/// (`60m` reads as `1h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Cadence {
    minutes: u16,
}

impl Cadence {
    /// Once a day.
    pub const DAILY: Cadence = Cadence { minutes: 1440 };

    /// The cadence of `minutes` minutes.
    ///
    /// # Errors
    /// Minutes that do not divide a day (0, 7, 90, two days...).
    pub fn from_minutes(minutes: i64) -> Result<Self, String> {
        match u16::try_from(minutes) {
            Ok(m) if m >= 1 && DAY_MINUTES % minutes == 0 => Ok(Cadence { minutes: m }),
            _ => Err(format!(
                "{minutes} minutes is not a cadence: whole minutes that divide a day (1m, 5m, 15m, 1h, 4h) or 1d"
            )),
        }
    }

    /// Minutes between two stamps (1440 for a daily cadence).
    pub fn minutes(self) -> i64 {
        i64::from(self.minutes)
    }

    /// Seconds between two stamps.
    pub fn seconds(self) -> i64 {
        self.minutes() * 60
    }

    /// Stamps in a day (1 for a daily cadence).
    pub fn per_day(self) -> u32 {
        1440 / u32::from(self.minutes)
    }

    /// Once a day.
    pub fn is_daily(self) -> bool {
        self.minutes == 1440
    }
}

impl FromStr for Cadence {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let m = parse_minutes(text)?;
        Cadence::from_minutes(m).map_err(|_| {
            format!(
                "{text:?} is not a cadence: whole minutes that divide a day (1m, 5m, 15m, 1h, 4h) or 1d"
            )
        })
    }
}

impl TryFrom<String> for Cadence {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        text.parse()
    }
}

impl From<Cadence> for String {
    fn from(c: Cadence) -> String {
        c.to_string()
    }
}

impl fmt::Display for Cadence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.minutes {
            1440 => f.write_str("1d"),
            m if m % 60 == 0 => write!(f, "{}h", m / 60),
            m => write!(f, "{m}m"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_to_minutes_and_never_wrap() {
        assert_eq!(parse_minutes("15m"), Ok(15));
        assert_eq!(parse_minutes(" 1h "), Ok(60));
        assert_eq!(parse_minutes("7d"), Ok(7 * 1440));
        assert_eq!(parse_minutes("0m"), Ok(0));
        assert_eq!(parse_minutes("3660d"), Ok(3660 * 1440));
        for bad in [
            "",
            "m",
            "15",
            "1.5h",
            "-1m",
            "15s",
            "1w",
            "3661d",
            "1h30m",
            "15 m",
            "١٥m",
            "15é",
            // 307,445,734,561,825,861 hours are 2^64 + 44 minutes: a wrapping
            // multiplication read them as 44 minutes. Refused.
            "307445734561825861h",
            "9223372036854775807h",
        ] {
            assert!(parse_minutes(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_cadence_divides_a_day_and_reads_back_as_its_shortest_text() {
        for (text, minutes, per_day, shown) in [
            ("1m", 1, 1440, "1m"),
            ("15m", 15, 96, "15m"),
            ("60m", 60, 24, "1h"),
            ("4h", 240, 6, "4h"),
            ("90m", 90, 16, "90m"),
            ("24h", 1440, 1, "1d"),
            ("1d", 1440, 1, "1d"),
        ] {
            let c: Cadence = text.parse().unwrap();
            assert_eq!((c.minutes(), c.per_day()), (minutes, per_day), "{text}");
            assert_eq!(c.to_string(), shown);
            assert_eq!(shown.parse::<Cadence>(), Ok(c));
            assert_eq!(c.is_daily(), minutes == 1440);
            assert_eq!(c.seconds(), minutes * 60);
        }
        for bad in ["0m", "7m", "11h", "2d", "25h", "7d", "oops"] {
            let err = bad.parse::<Cadence>().unwrap_err();
            assert!(err.contains(bad), "{bad}: {err}");
        }
        // In a TOML document it is its text.
        #[derive(Serialize, Deserialize, Debug, PartialEq)]
        struct Doc {
            cadence: Cadence,
        }
        let d: Doc = toml::from_str("cadence = \"60m\"").unwrap();
        assert_eq!(d.cadence.minutes(), 60);
        assert_eq!(toml::to_string(&d).unwrap(), "cadence = \"1h\"\n");
        let err = toml::from_str::<Doc>("cadence = \"7m\"").unwrap_err();
        assert!(err.to_string().contains("not a cadence"), "{err}");
    }
}
