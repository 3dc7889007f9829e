//! Dated FX table: US dollars per unit of a foreign currency.

use crate::error::CoreError;
use chrono::NaiveDate;
use std::collections::BTreeMap;
use std::path::Path;

const BUNDLED: &str = include_str!("../../../data/fx/usd_rates.csv");

type Result<T> = std::result::Result<T, CoreError>;

/// Why a currency could not be converted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FxMiss {
    UnknownCurrency,
    NoRateBefore,
}

/// Rates by currency and date. USD always converts at 1.
#[derive(Debug, Clone, Default)]
pub struct FxTable {
    rates: BTreeMap<String, BTreeMap<NaiveDate, f64>>,
}

impl FxTable {
    /// The table shipped in `data/fx/usd_rates.csv`.
    pub fn bundled() -> Self {
        Self::parse(BUNDLED, Path::new("data/fx/usd_rates.csv")).expect("bundled FX table is valid")
    }

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

    /// Parses `date,currency,usd_per_unit`; every rate must be finite and positive.
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let mut table = FxTable::default();
        let mut rdr = csv::Reader::from_reader(text.as_bytes());
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
            table.rates.entry(cur).or_default().insert(date, rate);
        }
        Ok(table)
    }

    /// US dollars per unit of `currency` on `date`.
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
        series
            .range(..=date)
            .next_back()
            .map(|(_, r)| *r)
            .ok_or(FxMiss::NoRateBefore)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(FxTable::parse(
            "date,currency,usd_per_unit\n2025-01-01,EUR,-1\n",
            Path::new("t")
        )
        .is_err());
        assert!(FxTable::bundled()
            .usd_per_unit("EUR", d("2025-06-15"))
            .is_ok());
    }
}
