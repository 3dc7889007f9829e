//! How `rentix cost` prices a throughput row that carries no rent of its own: the
//! on-demand grade of its GPU and scope, from a fixings file (the last fixing in the
//! 7 days to the row's date, else the first in the 7 days after it) or from stored
//! observations (their median over the 7 days to the date).

use crate::cost::Throughput;
use crate::underlying::Underlying;
use chrono::{Days, NaiveDate};
use std::collections::BTreeMap;

/// Days a price may be looked back (or, for a fixing, ahead) for.
pub(crate) const PRICE_LOOKBACK_DAYS: u64 = 7;

/// Why a throughput row could not be priced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PriceError {
    /// The row has no date and none was given for the run.
    #[error("no date to price it on: give the row a date or pass --date")]
    NoDate,
    /// Neither a fixings file nor a store was given.
    #[error("no usd_per_gpu_hour: pass --fixings or --store to price it")]
    NoSource,
    /// The fixings file has no fixing of the grade near the date.
    #[error("no fixing of {grade} within {PRICE_LOOKBACK_DAYS} days of {date}")]
    NoFixing {
        /// The grade priced (`GPU/SCOPE/on-demand`).
        grade: String,
        /// The date the row is priced on.
        date: NaiveDate,
    },
    /// The store has no observation of the grade in the days to the date.
    #[error("no observation of {grade} in the {PRICE_LOOKBACK_DAYS} days to {date}")]
    NoObservation {
        /// The grade priced (`GPU/SCOPE/on-demand`).
        grade: String,
        /// The date the row is priced on.
        date: NaiveDate,
    },
}

/// One stored observation as the pricer needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct ObservedPrice {
    /// The observation's grade key without its region (`GPU/SCOPE/TERM`).
    pub grade: String,
    /// The fixing date the observation counts for.
    pub fixing_date: NaiveDate,
    /// Its price, USD per GPU-hour.
    pub usd_per_gpu_hour: f64,
}

/// Where rows without a rent of their own are priced from.
#[derive(Debug, Clone)]
pub enum Pricer {
    /// Nowhere: such a row is an error.
    None,
    /// A fixings file's series, by index name.
    Fixings(BTreeMap<String, Underlying>),
    /// Stored observations.
    Observations(Vec<ObservedPrice>),
}

impl Pricer {
    /// The rent of row `r`, USD per GPU-hour, on its date or else on `date`.
    pub fn price(&self, r: &Throughput, date: Option<NaiveDate>) -> Result<f64, PriceError> {
        let grade = format!("{}/{}/on-demand", r.gpu, r.scope);
        let date = r.date.or(date).ok_or(PriceError::NoDate)?;
        let from = date - Days::new(PRICE_LOOKBACK_DAYS - 1);
        match self {
            Pricer::None => Err(PriceError::NoSource),
            // The last fixing in the 7 days to the date, else the first in the 7 days
            // after it (a snapshot at the start of a grade's history).
            Pricer::Fixings(u) => u
                .get(&grade)
                .and_then(|s| {
                    s.values
                        .last_on_or_before(date)
                        .filter(|(d, _)| *d >= from)
                        .or_else(|| {
                            s.values
                                .range(date..date + Days::new(PRICE_LOOKBACK_DAYS))
                                .next()
                        })
                })
                .map(|(_, v)| v)
                .ok_or(PriceError::NoFixing { grade, date }),
            Pricer::Observations(rows) => {
                let v: Vec<f64> = rows
                    .iter()
                    .filter(|o| o.grade == grade && (from..=date).contains(&o.fixing_date))
                    .map(|o| o.usd_per_gpu_hour)
                    .collect();
                rentix_core::stats::median(&v).ok_or(PriceError::NoObservation { grade, date })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(date: Option<NaiveDate>) -> Throughput {
        Throughput {
            operator: "op".into(),
            gpu: "h100-sxm-80gb".into(),
            scope: "vm".into(),
            model: "m".into(),
            input_tokens: 1.0,
            output_tokens: 1.0,
            target_tokens_per_s_per_user: 1.0,
            output_tokens_per_s_per_gpu: 1.0,
            success_rate: 1.0,
            capacity_gpus: 1.0,
            usd_per_gpu_hour: None,
            date,
            row: 1,
        }
    }

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn observations_price_at_their_median_over_seven_days() {
        let obs = |day: &str, p: f64| ObservedPrice {
            grade: "h100-sxm-80gb/vm/on-demand".into(),
            fixing_date: d(day),
            usd_per_gpu_hour: p,
        };
        // 2025-06-03 and 2025-06-09 are inside the 7 days to 2025-06-09, 2025-06-02
        // is not: median of 2.0 and 3.0 is 2.5 (by hand).
        let p = Pricer::Observations(vec![
            obs("2025-06-02", 100.0),
            obs("2025-06-03", 2.0),
            obs("2025-06-09", 3.0),
        ]);
        assert_eq!(p.price(&row(Some(d("2025-06-09"))), None), Ok(2.5));
        assert_eq!(
            p.price(&row(None), Some(d("2025-07-01"))),
            Err(PriceError::NoObservation {
                grade: "h100-sxm-80gb/vm/on-demand".into(),
                date: d("2025-07-01")
            })
        );
        assert_eq!(p.price(&row(None), None), Err(PriceError::NoDate));
        assert_eq!(
            Pricer::None.price(&row(Some(d("2025-06-09"))), None),
            Err(PriceError::NoSource)
        );
    }
}
