//! Time-dummy hedonic index: the price change of a GPU-hour holding quality fixed.
//!
//! Model: `ln p_i = a + sum_k b_k x_ik + sum_{t>=1} d_t D_it + e_i`, where `x` are
//! characteristics (log memory, architecture generation, scope, term, operator
//! tier...) and `D_it` is 1 when observation `i` is from period `t`. The index of
//! period `t` against period 0 is `100 exp(d_t)`. Estimated by OLS.
//!
//! References: Eurostat, Handbook on Residential Property Prices Indices (2013),
//! ch. 5; ILO et al., CPI Manual (2020), ch. 6 (hedonic quality adjustment).

use crate::ols::ols;

/// One priced item: its period (0-based), characteristics and price (> 0).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HedonicObs {
    /// 0-based period; the time dummy of period `t >= 1` is 1 for its observations.
    pub period: usize,
    /// The regressors `x_ik`, the same number for every observation.
    pub characteristics: Vec<f64>,
    /// The price (USD per GPU-hour in the composite); its log is regressed.
    pub price: f64,
}

/// The fitted model: intercept, characteristic coefficients, time dummies (period 1
/// onward), and the index per period (period 0 = 100).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HedonicFit {
    /// OLS estimates in design order: `a`, then each `b_k`, then `d_1 ..`.
    pub coefficients: Vec<f64>,
    /// `100 exp(d_t)` per period, `index[0] = 100`.
    pub index: Vec<f64>,
}

/// Fits the time-dummy model over `periods` periods. `None` if a period has no
/// observation or the design is singular (a characteristic that never varies).
pub(crate) fn time_dummy(obs: &[HedonicObs], periods: usize) -> Option<HedonicFit> {
    if periods == 0 || (0..periods).any(|t| !obs.iter().any(|o| o.period == t)) {
        return None;
    }
    let k = obs.first()?.characteristics.len();
    let mut x = Vec::with_capacity(obs.len());
    let mut y = Vec::with_capacity(obs.len());
    for o in obs {
        if o.characteristics.len() != k || o.price.is_nan() || o.price <= 0.0 || o.period >= periods
        {
            return None;
        }
        let mut row = Vec::with_capacity(1 + k + periods - 1);
        row.push(1.0);
        row.extend_from_slice(&o.characteristics);
        for t in 1..periods {
            row.push(if o.period == t { 1.0 } else { 0.0 });
        }
        x.push(row);
        y.push(o.price.ln());
    }
    let coefficients = ols(&x, &y)?;
    let mut index = vec![100.0];
    index.extend(coefficients[1 + k..].iter().map(|d| 100.0 * d.exp()));
    Some(HedonicFit {
        coefficients,
        index,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Expected {
        coefficients: Vec<f64>,
        index_period_1: f64,
        matched_model_jevons: f64,
        tolerance: f64,
    }
    #[derive(serde::Deserialize)]
    struct Vectors {
        rows: Vec<Vec<f64>>,
        expected: Expected,
    }

    #[test]
    fn constructed_two_period_case() {
        let v: Vectors = toml::from_str(include_str!(
            "../../../tests/data/vectors/hedonic_time_dummy.toml"
        ))
        .unwrap();
        let obs: Vec<HedonicObs> = v
            .rows
            .iter()
            .map(|r| HedonicObs {
                period: r[0] as usize,
                characteristics: vec![r[1].ln(), r[2]],
                price: r[3],
            })
            .collect();
        let fit = time_dummy(&obs, 2).unwrap();
        let e = v.expected;
        for (g, w) in fit.coefficients.iter().zip(&e.coefficients) {
            assert!((g - w).abs() < e.tolerance, "{g} vs {w}");
        }
        assert!((fit.index[1] - e.index_period_1).abs() < e.tolerance);
        // Matched-model Jevons on the items present in both periods, for contrast.
        let mm = crate::elementary::link(
            crate::elementary::Elementary::Jevons,
            &[Some(1.50), Some(2.50)],
            &[Some(1.35), Some(2.20)],
            &[1.0, 1.0],
        )
        .unwrap();
        assert!((100.0 * mm - e.matched_model_jevons).abs() < e.tolerance);
    }

    #[test]
    fn empty_period_or_constant_characteristic_is_refused() {
        let o = |p, m: f64, price| HedonicObs {
            period: p,
            characteristics: vec![m],
            price,
        };
        assert!(time_dummy(&[o(0, 1.0, 1.0), o(0, 2.0, 2.0)], 2).is_none());
        assert!(time_dummy(&[o(0, 1.0, 1.0), o(1, 1.0, 2.0), o(1, 1.0, 3.0)], 2).is_none());
    }
}
