//! Observation kinds and their rank in the IOSCO data-input hierarchy.

use crate::error::{parse_variant, CoreError};
use serde::{Deserialize, Serialize};
use std::str::FromStr;
use strum::VariantArray;

/// What kind of price an observation is. Declared in hierarchy order: a completed
/// trade outranks an executable (firm) offer, which outranks an advertised listing
/// (IOSCO Principles for Financial Benchmarks, 7 and 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::IntoStaticStr, strum::Display, strum::VariantArray, strum::EnumMessage)]
#[strum(serialize_all = "lowercase")]
pub enum ObservationKind {
    /// A completed rental at a known price (hierarchy level 1).
    Trade,
    /// An executable offer: capacity the operator commits to rent at this price
    /// (level 2).
    Firm,
    /// An advertised price with no commitment, e.g. a public rate card (level 3).
    Listing,
}

impl ObservationKind {
    /// Every kind, in hierarchy order.
    pub const ALL: [Self; Self::VARIANTS.len()] = match Self::VARIANTS.first_chunk() {
        Some(all) => *all,
        None => unreachable!(),
    };

    /// Hierarchy level as published in fixings: 1 trades, 2 firm offers, 3 listings.
    pub fn level(self) -> u8 {
        match self {
            ObservationKind::Trade => 1,
            ObservationKind::Firm => 2,
            ObservationKind::Listing => 3,
        }
    }

    /// The name used in CSV columns and keys: `trade`, `firm`, `listing`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl FromStr for ObservationKind {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_variant("kind", s, |b| b.to_ascii_lowercase())
    }
}

#[cfg(test)]
mod text_tests {
    use super::*;

    /// Every variant's text as published before it was derived: CSV columns and keys
    /// hold it, so it must not change by a byte.
    const TEXT: [(ObservationKind, &str); 3] = [
        (ObservationKind::Trade, "trade"),
        (ObservationKind::Firm, "firm"),
        (ObservationKind::Listing, "listing"),
    ];

    #[test]
    fn text_forms_are_pinned_and_agree_with_serde() {
        assert_eq!(ObservationKind::ALL.map(|v| v.as_str()), TEXT.map(|t| t.1));
        for (v, text) in TEXT {
            assert_eq!(v.as_str(), text);
            assert_eq!(v.to_string(), text);
            assert_eq!(text.parse::<ObservationKind>().unwrap(), v);
            assert_eq!(toml::Value::try_from(v).unwrap().as_str(), Some(text));
        }
        assert_eq!(
            " Trade ".parse::<ObservationKind>().unwrap(),
            ObservationKind::Trade
        );
        assert_eq!(
            "x".parse::<ObservationKind>().unwrap_err().to_string(),
            "unknown kind \"x\" (expected one of: trade, firm, listing)"
        );
    }
}
