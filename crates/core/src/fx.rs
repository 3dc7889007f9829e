//! Dated FX table: US dollars per unit of a foreign currency.

use crate::error::CoreError;
use chrono::NaiveDate;
use std::collections::BTreeMap;
use std::path::Path;

const BUNDLED: &str = crate::bundled::data::FX_USD_RATES;

type Result<T> = std::result::Result<T, CoreError>;

/// The columns of an FX table, in order.
const FX_COLUMNS: [&str; 3] = ["date", "currency", "usd_per_unit"];

/// Why a currency could not be converted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FxMiss {
    /// The table has no rate at all for the currency.
    UnknownCurrency,
    /// The currency's first rate is dated after the date asked for.
    NoRateBefore,
    /// The latest rate on or before the date is older than [`MAX_RATE_AGE_DAYS`].
    Stale {
        /// The date of that rate.
        rate_date: NaiveDate,
    },
}

/// The oldest a rate may be and still convert a price: a monthly table's rate
/// serves its month and the first days of the next one's. A 2022 EUR rate
/// converted 2025 and 2026 prices without a word (a hostile round).
pub const MAX_RATE_AGE_DAYS: i64 = 45;

/// Rates by currency and date. USD always converts at 1.
#[derive(Debug, Clone, Default)]
pub struct FxTable {
    rates: BTreeMap<String, BTreeMap<NaiveDate, f64>>,
}

impl FxTable {
    /// The table shipped in `data/fx/usd_rates.csv`.
    #[allow(
        clippy::expect_used,
        reason = "compiled-in data, checked by a unit test: failing is a build defect"
    )]
    pub fn bundled() -> Self {
        Self::parse(BUNDLED, Path::new("data/fx/usd_rates.csv")).expect("bundled FX table is valid")
    }

    /// Reads and [parses](FxTable::parse) an FX file (size-limited); a file that
    /// cannot be read is an error on row 0.
    pub fn from_file(path: &Path) -> Result<Self> {
        let text = crate::limits::read_text(path, crate::limits::MAX_TABLE_BYTES).map_err(|e| {
            CoreError::Fx {
                path: path.display().to_string(),
                row: 0,
                detail: e.to_string(),
            }
        })?;
        Self::parse(&text, path)
    }

    /// Parses `date,currency,usd_per_unit` (the header must say so). Every rate must be finite and positive,
    /// every currency three ASCII letters (case-insensitive), a USD row must say 1,
    /// and a currency has at most one rate per date: a second one is refused naming
    /// both rows (the last used to win silently).
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let mut table = FxTable::default();
        let mut first_row: BTreeMap<(String, NaiveDate), (usize, f64)> = BTreeMap::new();
        let mut rdr = csv::Reader::from_reader(text.as_bytes());
        // The columns are read by position, so the header must name them as they
        // are read: a `date,currency,eur_per_usd` file would otherwise be read as
        // dollars per unit, every converted price inverted without a word.
        let header: Vec<String> = rdr
            .headers()
            .map_err(|e| CoreError::Fx {
                path: path.display().to_string(),
                row: 0,
                detail: e.to_string(),
            })?
            .iter()
            .map(|h| h.trim().trim_start_matches('\u{feff}').to_ascii_lowercase())
            .collect();
        if header != FX_COLUMNS {
            return Err(CoreError::Fx {
                path: path.display().to_string(),
                row: 0,
                detail: format!(
                    "the header is {:?}; an FX table's columns are {} (US dollars per unit of the currency), in that order",
                    header.join(","),
                    FX_COLUMNS.join(",")
                ),
            });
        }
        for (i, rec) in rdr.records().enumerate() {
            let row = i + 1;
            let err = |detail: String| CoreError::Fx {
                path: path.display().to_string(),
                row,
                detail,
            };
            let rec = rec.map_err(|e| err(e.to_string()))?;
            if rec.len() != 3 {
                return Err(err(format!("expected 3 fields, got {}", rec.len())));
            }
            let date = NaiveDate::parse_from_str(rec[0].trim(), "%Y-%m-%d")
                .map_err(|e| err(format!("date {:?}: {e}", &rec[0])))?;
            let cur = rec[1].trim().to_ascii_uppercase();
            let rate: f64 = rec[2]
                .trim()
                .parse()
                .map_err(|_| err(format!("rate {:?} is not a number", &rec[2])))?;
            if !(rate.is_finite() && rate > 0.0) {
                return Err(err(format!("rate {rate} must be finite and positive")));
            }
            if cur.len() != 3 || !cur.bytes().all(|b| b.is_ascii_uppercase()) {
                return Err(err(format!(
                    "currency {:?} is not a three-letter code",
                    &rec[1]
                )));
            }
            if cur == "USD" && rate != 1.0 {
                return Err(err(format!(
                    "a USD rate must be 1 (USD always converts at 1), not {rate}"
                )));
            }
            if let Some((before, old)) = first_row.insert((cur.clone(), date), (row, rate)) {
                return Err(CoreError::Fx {
                    path: path.display().to_string(),
                    row,
                    detail: format!(
                        "rows {before} and {row} both give {cur} on {date} ({old} and {rate} USD per unit); keep one"
                    ),
                });
            }
            table.rates.entry(cur).or_default().insert(date, rate);
        }
        Ok(table)
    }

    /// US dollars per unit of `currency` (any case) on `date`: the latest rate on or
    /// before it, when it is at most [`MAX_RATE_AGE_DAYS`] old; 1 for USD.
    pub fn usd_per_unit(
        &self,
        currency: &str,
        date: NaiveDate,
    ) -> std::result::Result<f64, FxMiss> {
        let cur = currency.trim().to_ascii_uppercase();
        if cur == "USD" {
            return Ok(1.0);
        }
        let series = self.rates.get(&cur).ok_or(FxMiss::UnknownCurrency)?;
        let (rate_date, rate) = series
            .range(..=date)
            .next_back()
            .ok_or(FxMiss::NoRateBefore)?;
        if (date - *rate_date).num_days() > MAX_RATE_AGE_DAYS {
            return Err(FxMiss::Stale {
                rate_date: *rate_date,
            });
        }
        Ok(*rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Columns are read by position: a header that names them otherwise (an
    /// inverse rate, another order, a missing column) is refused, not read.
    #[test]
    fn a_header_other_than_the_documented_one_is_refused() {
        for head in [
            "date,currency,eur_per_usd",
            "currency,date,usd_per_unit",
            "date,usd_per_unit",
            "date,currency,usd_per_unit,source",
        ] {
            let text = format!("{head}\n2025-01-01,EUR,1.04\n");
            let e = FxTable::parse(&text, Path::new("fx.csv"))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(head) && e.contains("in that order"),
                "{head}: {e}"
            );
        }
        // Case, spaces and a byte-order mark are not differences.
        assert!(FxTable::parse(
            "\u{feff}Date, Currency ,USD_per_unit\n2025-01-01,EUR,1.04\n",
            Path::new("fx.csv")
        )
        .is_ok());
    }

    #[test]
    fn latest_rate_on_or_before() {
        let t = FxTable::parse(
            "date,currency,usd_per_unit\n2025-01-01,EUR,1.04\n2025-02-01,EUR,1.05\n",
            Path::new("t.csv"),
        )
        .unwrap();
        let d = |s: &str| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
        assert_eq!(t.usd_per_unit("eur", d("2025-01-31")), Ok(1.04));
        assert_eq!(t.usd_per_unit("EUR", d("2025-02-01")), Ok(1.05));
        assert_eq!(
            t.usd_per_unit("EUR", d("2024-12-31")),
            Err(FxMiss::NoRateBefore)
        );
        assert_eq!(
            t.usd_per_unit("XYZ", d("2025-01-31")),
            Err(FxMiss::UnknownCurrency)
        );
        assert_eq!(t.usd_per_unit("USD", d("1999-01-01")), Ok(1.0));
        // February's rate serves 45 days (to 2025-03-18), not for ever.
        assert_eq!(t.usd_per_unit("EUR", d("2025-03-18")), Ok(1.05));
        assert_eq!(
            t.usd_per_unit("EUR", d("2025-03-19")),
            Err(FxMiss::Stale {
                rate_date: d("2025-02-01")
            })
        );
        assert!(FxTable::parse(
            "date,currency,usd_per_unit\n2025-01-01,EUR,-1\n",
            Path::new("t")
        )
        .is_err());
        assert!(FxTable::bundled()
            .usd_per_unit("EUR", d("2025-06-15"))
            .is_ok());
    }

    fn refusal(text: &str) -> String {
        match FxTable::parse(text, Path::new("fx.csv")) {
            Ok(_) => panic!("accepted: {text}"),
            Err(e) => e.to_string(),
        }
    }

    /// CHF at 1.10 and 2.20 on one date: the last used to win silently (a 2.60 CHF
    /// price became 2.60 x 2.20 = 5.72 USD instead of 2.60 x 1.10 = 2.86). Now both
    /// rows are named.
    #[test]
    fn two_rates_for_one_currency_and_date_are_refused_naming_both_rows() {
        let e = refusal(
            "date,currency,usd_per_unit\n2025-01-01,EUR,1.04\n2025-01-01,CHF,1.10\n2025-01-01,chf,2.20\n",
        );
        assert!(e.contains("rows 2 and 3"), "{e}");
        assert!(e.contains("CHF") && e.contains("2025-01-01"), "{e}");
        assert!(e.contains("1.1") && e.contains("2.2"), "{e}");
        // The same currency on two dates is a series, not a duplicate.
        let t = FxTable::parse(
            "date,currency,usd_per_unit\n2025-01-01,CHF,1.10\n2025-01-02,CHF,1.12\n",
            Path::new("t"),
        )
        .unwrap();
        let d = NaiveDate::from_ymd_opt(2025, 1, 2).unwrap();
        assert_eq!(t.usd_per_unit("CHF", d), Ok(1.12));
    }

    /// Rates of 0, -1.2, NaN and inf are refused naming the row; so are a currency
    /// that is not three letters and a USD rate other than 1 (USD always converts at
    /// 1, so such a row would be ignored silently).
    #[test]
    fn implausible_rates_and_currencies_are_refused() {
        for (row, want) in [
            ("2025-01-01,JPY,0", "row 1"),
            ("2025-01-01,JPY,-1.2", "row 1"),
            ("2025-01-01,JPY,NaN", "row 1"),
            ("2025-01-01,JPY,inf", "row 1"),
            ("2025-01-01,,0.0067", "currency"),
            ("2025-01-01,JP Y,0.0067", "currency"),
            ("2025-01-01,USD,0.9", "USD"),
        ] {
            let e = refusal(&format!("date,currency,usd_per_unit\n{row}\n"));
            assert!(e.contains(want), "{row}: {e}");
        }
        assert!(FxTable::parse(
            "date,currency,usd_per_unit\n2025-01-01,USD,1\n",
            Path::new("t")
        )
        .is_ok());
    }
}
