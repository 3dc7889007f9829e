//! Outlier filters applied before aggregation. Each returns the indices it keeps.
//!
//! - `sigma-around-trimmed-mean`: centre `c` = mean after dropping `trim` of each
//!   tail; `s` = sample standard deviation of all values (n - 1 denominator); keep
//!   `|v - c| <= k s`.
//! - `mad`: keep `|v - median| <= k * 1.4826 * MAD` (1.4826 makes the MAD a
//!   consistent estimator of the standard deviation under normality).
//! - `percentile`: keep values between the weighted `low` and `high` quantiles
//!   (lower rule), inclusive.
//!
//! With fewer than three values no filter removes anything: there is no basis to
//! call one value an outlier among two.

use crate::aggregation::trimmed_mean;
use crate::weighted_quantile::{weighted_quantile, TieRule};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum OutlierFilter {
    #[serde(rename = "none")]
    None,
    #[serde(rename = "sigma-around-trimmed-mean")]
    SigmaAroundTrimmedMean,
    #[serde(rename = "mad")]
    Mad,
    #[serde(rename = "percentile")]
    Percentile,
}

/// Parameters of the filters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FilterParams {
    pub trim: f64,
    pub k: f64,
    pub low: f64,
    pub high: f64,
}

/// Sample standard deviation (n - 1 denominator).
pub fn sample_std(values: &[f64]) -> Option<f64> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let ss: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
    Some((ss / (n - 1) as f64).sqrt())
}

/// Indices of the values the filter keeps, ascending.
pub fn keep(
    filter: OutlierFilter,
    values: &[f64],
    weights: &[f64],
    p: &FilterParams,
) -> Vec<usize> {
    let all: Vec<usize> = (0..values.len()).collect();
    if values.len() < 3 {
        return all;
    }
    match filter {
        OutlierFilter::None => all,
        OutlierFilter::SigmaAroundTrimmedMean => {
            let (Some(c), Some(s)) = (trimmed_mean(values, p.trim), sample_std(values)) else {
                return all;
            };
            all.into_iter()
                .filter(|&i| (values[i] - c).abs() <= p.k * s)
                .collect()
        }
        OutlierFilter::Mad => {
            let ones = vec![1.0; values.len()];
            let Some(med) = weighted_quantile(values, &ones, 0.5, TieRule::Midpoint) else {
                return all;
            };
            let dev: Vec<f64> = values.iter().map(|v| (v - med).abs()).collect();
            let mad = weighted_quantile(&dev, &ones, 0.5, TieRule::Midpoint).unwrap_or(0.0);
            all.into_iter()
                .filter(|&i| dev[i] <= p.k * 1.4826 * mad)
                .collect()
        }
        OutlierFilter::Percentile => {
            let (Some(lo), Some(hi)) = (
                weighted_quantile(values, weights, p.low, TieRule::Lower),
                weighted_quantile(values, weights, p.high, TieRule::Lower),
            ) else {
                return all;
            };
            all.into_iter()
                .filter(|&i| values[i] >= lo && values[i] <= hi)
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: FilterParams = FilterParams {
        trim: 0.2,
        k: 1.5,
        low: 0.1,
        high: 0.9,
    };

    #[test]
    fn sigma_filter_by_hand() {
        // trimmed mean (drop 1 of 5 each end) = mean(2, 2.1, 2.2) = 2.1;
        // sample sd of all five = 3.5571 (numpy std ddof=1); k = 1.5 -> band 5.34: 10 is out.
        let v = [2.0, 2.1, 2.2, 1.9, 10.0];
        let s = sample_std(&v).unwrap();
        assert!((s - 3.557_105_565).abs() < 1e-8, "{s}");
        assert_eq!(
            keep(OutlierFilter::SigmaAroundTrimmedMean, &v, &[1.0; 5], &P),
            vec![0, 1, 2, 3]
        );
    }

    #[test]
    fn mad_and_percentile_by_hand() {
        let v = [1.0, 1.1, 0.9, 1.05, 5.0];
        // median 1.05, deviations .05 .05 .15 0 3.95 -> MAD .05; band 1.5*1.4826*.05 = .111
        assert_eq!(keep(OutlierFilter::Mad, &v, &[1.0; 5], &P), vec![0, 1, 3]);
        // 10% quantile = 0.9, 90% = 5.0 (lower rule over 5 equal weights) -> all kept
        assert_eq!(keep(OutlierFilter::Percentile, &v, &[1.0; 5], &P).len(), 5);
        let q = FilterParams {
            low: 0.21,
            high: 0.79,
            ..P
        };
        assert_eq!(
            keep(OutlierFilter::Percentile, &v, &[1.0; 5], &q),
            vec![0, 1, 3]
        );
        assert_eq!(keep(OutlierFilter::Mad, &v[..2], &[1.0; 2], &P), vec![0, 1]);
    }
}
