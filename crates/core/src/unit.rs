//! Price units and their conversion to USD per GPU-hour (before currency).

use crate::error::{parse_variant, CoreError};
use chrono::{Datelike, NaiveDate};
use serde::{Deserialize, Serialize};
use std::str::FromStr;
use strum::VariantArray;

/// The unit a raw price is quoted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::IntoStaticStr, strum::Display, strum::VariantArray, strum::EnumMessage)]
#[strum(serialize_all = "snake_case")]
pub enum PriceUnit {
    /// Per GPU per hour: already normalized.
    GpuHour,
    /// Per node (server) per hour: divide by GPUs per node.
    NodeHour,
    /// Per cloud instance per hour: divide by GPUs per instance.
    InstanceHour,
    /// Per GPU per calendar month: divide by the hours in that month.
    GpuMonth,
    /// Per node per calendar month: divide by GPUs per node and hours in the month.
    NodeMonth,
}

impl PriceUnit {
    /// Every unit, in declaration order.
    pub const ALL: [Self; Self::VARIANTS.len()] = match Self::VARIANTS.first_chunk() {
        Some(all) => *all,
        None => unreachable!(),
    };

    /// The snake_case name used in the `price_unit` column: `gpu_hour`, `node_hour`,
    /// `instance_hour`, `gpu_month`, `node_month`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Whether the price is for a whole node or instance, so that it needs
    /// `gpus_per_unit` to become a per-GPU price.
    pub fn needs_gpus_per_unit(self) -> bool {
        matches!(
            self,
            PriceUnit::NodeHour | PriceUnit::InstanceHour | PriceUnit::NodeMonth
        )
    }

    /// Converts `price` in this unit to a price per GPU-hour in the same currency.
    /// `month` is any date in the month a monthly price applies to.
    pub fn to_per_gpu_hour(
        self,
        price: f64,
        gpus_per_unit: Option<u32>,
        month: NaiveDate,
    ) -> Result<f64, CoreError> {
        let gpus = if self.needs_gpus_per_unit() {
            match gpus_per_unit {
                Some(n) if n > 0 => f64::from(n),
                _ => {
                    return Err(CoreError::NonPositive {
                        what: "gpus_per_unit",
                        value: gpus_per_unit.map_or(0.0, f64::from),
                    })
                }
            }
        } else {
            1.0
        };
        let hours = match self {
            PriceUnit::GpuMonth | PriceUnit::NodeMonth => hours_in_month(month),
            _ => 1.0,
        };
        Ok(price / gpus / hours)
    }
}

/// Hours in the calendar month containing `d` (672, 696, 720 or 744).
pub fn hours_in_month(d: NaiveDate) -> f64 {
    let first = d.with_day(1).unwrap_or(d);
    let next = if first.month() == 12 {
        NaiveDate::from_ymd_opt(first.year() + 1, 1, 1)
    } else {
        NaiveDate::from_ymd_opt(first.year(), first.month() + 1, 1)
    };
    let days = next.map_or(30, |n| (n - first).num_days());
    days as f64 * 24.0
}

impl FromStr for PriceUnit {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_variant("price_unit", s, |b| match b {
            b'-' | b' ' => b'_',
            b => b.to_ascii_lowercase(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    #[test]
    fn conversions() {
        let jan = d(2025, 1, 15);
        assert_eq!(
            PriceUnit::NodeHour
                .to_per_gpu_hour(20.0, Some(8), jan)
                .unwrap(),
            2.5
        );
        assert_eq!(
            PriceUnit::GpuMonth
                .to_per_gpu_hour(1488.0, None, jan)
                .unwrap(),
            2.0
        );
        assert_eq!(hours_in_month(d(2024, 2, 29)), 696.0);
        assert_eq!(hours_in_month(d(2025, 2, 1)), 672.0);
        assert_eq!(hours_in_month(d(2025, 12, 31)), 744.0);
        assert!(PriceUnit::InstanceHour
            .to_per_gpu_hour(1.0, None, jan)
            .is_err());
        assert!(PriceUnit::NodeMonth
            .to_per_gpu_hour(1.0, Some(0), jan)
            .is_err());
    }

    /// Every text type reads its value trimmed, in any ASCII case and with the
    /// separators it accepts; anything else (a non-ASCII letter, a longer word) is
    /// refused with the value as given.
    #[test]
    fn text_values_read_trimmed_in_any_case_with_their_separators() {
        use crate::{ContractTerm, ObservationKind, OperatorTier};
        assert_eq!(
            " GPU-Hour ".parse::<PriceUnit>().unwrap(),
            PriceUnit::GpuHour
        );
        assert_eq!(
            "node month".parse::<PriceUnit>().unwrap(),
            PriceUnit::NodeMonth
        );
        assert_eq!(
            "On_Demand".parse::<ContractTerm>().unwrap(),
            ContractTerm::OnDemand
        );
        assert_eq!(
            "LISTING".parse::<ObservationKind>().unwrap(),
            ObservationKind::Listing
        );
        assert_eq!(" Gold".parse::<OperatorTier>().unwrap(), OperatorTier::Gold);
        assert!("gpu_hours".parse::<PriceUnit>().is_err());
        assert!("gpu_hou".parse::<PriceUnit>().is_err());
        assert!("listíng".parse::<ObservationKind>().is_err());
        assert!("gold-".parse::<OperatorTier>().is_err());
        assert!(" ".parse::<OperatorTier>().is_err());
    }

    proptest! {
        #[test]
        fn node_price_round_trips(p in 0.01f64..1.0e4, n in 1u32..257) {
            let jan = d(2025, 1, 1);
            let per_gpu = PriceUnit::NodeHour.to_per_gpu_hour(p, Some(n), jan).unwrap();
            prop_assert!((per_gpu * f64::from(n) - p).abs() <= 1e-9 * p);
            let monthly = PriceUnit::NodeMonth.to_per_gpu_hour(p * 744.0, Some(n), jan).unwrap();
            prop_assert!((monthly - per_gpu).abs() <= 1e-9 * p);
        }
    }
}

#[cfg(test)]
mod text_tests {
    use super::*;

    /// Every variant's text as published before it was derived: the `price_unit`
    /// column holds it, so it must not change by a byte.
    const TEXT: [(PriceUnit, &str); 5] = [
        (PriceUnit::GpuHour, "gpu_hour"),
        (PriceUnit::NodeHour, "node_hour"),
        (PriceUnit::InstanceHour, "instance_hour"),
        (PriceUnit::GpuMonth, "gpu_month"),
        (PriceUnit::NodeMonth, "node_month"),
    ];

    #[test]
    fn text_forms_are_pinned_and_agree_with_serde() {
        assert_eq!(PriceUnit::ALL.map(|v| v.as_str()), TEXT.map(|t| t.1));
        for (v, text) in TEXT {
            assert_eq!(v.as_str(), text);
            assert_eq!(v.to_string(), text);
            assert_eq!(text.parse::<PriceUnit>().unwrap(), v);
            assert_eq!(toml::Value::try_from(v).unwrap().as_str(), Some(text));
        }
        for alias in [" GPU-Hour ", "gpu hour"] {
            assert_eq!(alias.parse::<PriceUnit>().unwrap(), PriceUnit::GpuHour);
        }
        assert_eq!(
            "x".parse::<PriceUnit>().unwrap_err().to_string(),
            "unknown price_unit \"x\" (expected one of: gpu_hour, node_hour, instance_hour, gpu_month, node_month)"
        );
    }
}
