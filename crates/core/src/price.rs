//! Price and quantity newtypes. A value that exists is finite and not negative.

use crate::error::CoreError;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A normalized rental price in US dollars per GPU-hour. Finite and `>= 0`.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct UsdPerGpuHour(f64);

impl UsdPerGpuHour {
    /// Checked constructor: rejects NaN, infinities and negatives.
    pub fn new(value: f64) -> Result<Self, CoreError> {
        check_non_negative("usd_per_gpu_hour", value).map(Self)
    }

    /// Like [`UsdPerGpuHour::new`] but also rejects zero: a market price of zero is
    /// not a price.
    pub fn positive(value: f64) -> Result<Self, CoreError> {
        let v = Self::new(value)?;
        if value == 0.0 {
            return Err(CoreError::NonPositive {
                what: "usd_per_gpu_hour",
                value,
            });
        }
        Ok(v)
    }

    /// The price in USD per GPU-hour.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl TryFrom<f64> for UsdPerGpuHour {
    type Error = CoreError;
    fn try_from(value: f64) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

impl From<UsdPerGpuHour> for f64 {
    fn from(v: UsdPerGpuHour) -> f64 {
        v.0
    }
}

impl fmt::Display for UsdPerGpuHour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A quantity of GPU time in GPU-hours. Finite and `>= 0`.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct GpuHours(f64);

impl GpuHours {
    /// Checked constructor: rejects NaN, infinities and negatives.
    pub fn new(value: f64) -> Result<Self, CoreError> {
        check_non_negative("gpu_hours", value).map(Self)
    }

    /// The quantity in GPU-hours.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl TryFrom<f64> for GpuHours {
    type Error = CoreError;
    fn try_from(value: f64) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

impl From<GpuHours> for f64 {
    fn from(v: GpuHours) -> f64 {
        v.0
    }
}

fn check_non_negative(what: &'static str, value: f64) -> Result<f64, CoreError> {
    if !value.is_finite() {
        return Err(CoreError::NonFinite { what, value });
    }
    if value < 0.0 {
        return Err(CoreError::Negative { what, value });
    }
    // Normalise -0.0 so that equal prices serialize identically.
    Ok(if value == 0.0 { 0.0 } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn price_rejects_bad_values() {
        let cases: [f64; 4] = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.01];
        for v in cases {
            assert!(UsdPerGpuHour::new(v).is_err(), "{v}");
            assert!(GpuHours::new(v).is_err(), "{v}");
        }
    }

    #[test]
    fn zero_is_a_quantity_but_not_a_positive_price() {
        assert_eq!(GpuHours::new(0.0).unwrap().get(), 0.0);
        assert!(UsdPerGpuHour::positive(0.0).is_err());
        assert_eq!(
            UsdPerGpuHour::new(-0.0).unwrap().get().to_bits(),
            0f64.to_bits()
        );
        assert_eq!(UsdPerGpuHour::positive(2.49).unwrap().get(), 2.49);
    }
}
