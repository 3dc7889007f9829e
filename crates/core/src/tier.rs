//! Operator tier: how well an operator runs its GPUs (ClusterMax-style rating).

use crate::error::{parse_variant, CoreError};
use serde::{Deserialize, Serialize};
use std::str::FromStr;
use strum::VariantArray;

/// Operator rating, best first. "A GPU falls to the level of the operator": the same
/// chip rents at different prices depending on who runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::IntoStaticStr, strum::Display, strum::VariantArray, strum::EnumMessage)]
#[strum(serialize_all = "lowercase")]
pub enum OperatorTier {
    /// The best rating (score 4).
    Platinum,
    /// Score 3.
    Gold,
    /// Score 2.
    Silver,
    /// Score 1.
    Bronze,
    /// Rated below bronze (score 0).
    Underperform,
}

impl OperatorTier {
    /// Every tier, best first.
    pub const ALL: [Self; Self::VARIANTS.len()] = match Self::VARIANTS.first_chunk() {
        Some(all) => *all,
        None => unreachable!(),
    };

    /// The lowercase name used in ratings files and tier floors (`gold+`).
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Ordinal score used as a hedonic regressor: platinum 4 ... underperform 0.
    pub fn score(self) -> f64 {
        match self {
            OperatorTier::Platinum => 4.0,
            OperatorTier::Gold => 3.0,
            OperatorTier::Silver => 2.0,
            OperatorTier::Bronze => 1.0,
            OperatorTier::Underperform => 0.0,
        }
    }
}

impl FromStr for OperatorTier {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_variant("operator_tier", s, |b| b.to_ascii_lowercase())
    }
}

#[cfg(test)]
mod text_tests {
    use super::*;

    /// Every variant's text as published before it was derived: ratings files and
    /// tier floors hold it, so it must not change by a byte.
    const TEXT: [(OperatorTier, &str); 5] = [
        (OperatorTier::Platinum, "platinum"),
        (OperatorTier::Gold, "gold"),
        (OperatorTier::Silver, "silver"),
        (OperatorTier::Bronze, "bronze"),
        (OperatorTier::Underperform, "underperform"),
    ];

    #[test]
    fn text_forms_are_pinned_and_agree_with_serde() {
        assert_eq!(OperatorTier::ALL.map(|v| v.as_str()), TEXT.map(|t| t.1));
        for (v, text) in TEXT {
            assert_eq!(v.as_str(), text);
            assert_eq!(v.to_string(), text);
            assert_eq!(text.parse::<OperatorTier>().unwrap(), v);
            assert_eq!(toml::Value::try_from(v).unwrap().as_str(), Some(text));
        }
        assert_eq!(
            " GOLD ".parse::<OperatorTier>().unwrap(),
            OperatorTier::Gold
        );
        assert_eq!(
            "x".parse::<OperatorTier>().unwrap_err().to_string(),
            "unknown operator_tier \"x\" (expected one of: platinum, gold, silver, bronze, underperform)"
        );
    }
}
