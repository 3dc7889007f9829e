//! The flags a fixing row carries in its `flags` column (`;`-joined), each with one
//! text form. docs/formats.md lists every one (a test reads it).

use rentix_core::ObservationKind;
use std::fmt;

/// One flag of a fixing row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Flag {
    /// The row is not sufficient (first whenever present).
    LowConfidence,
    FewObs,
    FewValidDays,
    LowVolume,
    FewContributors,
    Concentrated,
    /// Too few contributors for the cap under `too_few_for_cap = "proportional"`.
    CapNotHeld,
    /// A level of the hierarchy that fell through, and why (`trade_failed=few_obs+low_volume`).
    Failed {
        kind: ObservationKind,
        reasons: Vec<Flag>,
    },
    /// Fixed on a lower level than the first (`fallback_firm`, `fallback_listing`).
    Fallback(ObservationKind),
    ListingSpreadAdjusted,
    ListingSpreadUnavailable,
    OutliersRemoved(usize),
    ContributorsCarried(usize),
    CapNotApplied,
    BelowFloor(usize),
    PercentilesWithheld,
    CarriedForward,
    NoData,
    Suppressed,
    /// Composites: components without a price today.
    MissingComponents(usize),
    NoLink,
    SingularRegression,
    ComponentsSuppressed,
}

impl Flag {
    /// Every flag, one of each (parameters as in docs/formats.md's list).
    pub fn all() -> Vec<Flag> {
        use Flag::*;
        let k = ObservationKind::Trade;
        vec![
            LowConfidence,
            FewObs,
            FewValidDays,
            LowVolume,
            FewContributors,
            Concentrated,
            CapNotHeld,
            Failed {
                kind: k,
                reasons: vec![FewObs],
            },
            Fallback(ObservationKind::Firm),
            Fallback(ObservationKind::Listing),
            ListingSpreadAdjusted,
            ListingSpreadUnavailable,
            OutliersRemoved(1),
            ContributorsCarried(1),
            CapNotApplied,
            BelowFloor(1),
            PercentilesWithheld,
            CarriedForward,
            NoData,
            Suppressed,
            MissingComponents(1),
            NoLink,
            SingularRegression,
            ComponentsSuppressed,
        ]
    }

    /// How docs/formats.md writes it: the text form with its parameter named
    /// (`outliers_removed=N`, `KIND_failed=REASONS`).
    pub fn documented(&self) -> String {
        match self {
            Flag::Failed { .. } => "KIND_failed=REASONS".into(),
            Flag::OutliersRemoved(_) => "outliers_removed=N".into(),
            Flag::ContributorsCarried(_) => "contributors_carried=N".into(),
            Flag::BelowFloor(_) => "below_floor=N".into(),
            Flag::MissingComponents(_) => "missing_components=N".into(),
            other => other.to_string(),
        }
    }

    /// Flags joined as the `flags` column writes them.
    pub fn join(flags: &[Flag]) -> String {
        flags
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(";")
    }
}

impl fmt::Display for Flag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Flag::LowConfidence => "low_confidence",
            Flag::FewObs => "few_obs",
            Flag::FewValidDays => "few_valid_days",
            Flag::LowVolume => "low_volume",
            Flag::FewContributors => "few_contributors",
            Flag::Concentrated => "concentrated",
            Flag::CapNotHeld => "cap_not_held",
            Flag::Failed { kind, reasons } => {
                let r: Vec<String> = reasons.iter().map(ToString::to_string).collect();
                return write!(f, "{kind}_failed={}", r.join("+"));
            }
            Flag::Fallback(kind) => return write!(f, "fallback_{kind}"),
            Flag::ListingSpreadAdjusted => "listing_spread_adjusted",
            Flag::ListingSpreadUnavailable => "listing_spread_unavailable",
            Flag::OutliersRemoved(n) => return write!(f, "outliers_removed={n}"),
            Flag::ContributorsCarried(n) => return write!(f, "contributors_carried={n}"),
            Flag::CapNotApplied => "cap_not_applied",
            Flag::BelowFloor(n) => return write!(f, "below_floor={n}"),
            Flag::PercentilesWithheld => "percentiles_withheld",
            Flag::CarriedForward => "carried_forward",
            Flag::NoData => "no_data",
            Flag::Suppressed => "suppressed",
            Flag::MissingComponents(n) => return write!(f, "missing_components={n}"),
            Flag::NoLink => "no_link",
            Flag::SingularRegression => "singular_regression",
            Flag::ComponentsSuppressed => "components_suppressed",
        };
        f.write_str(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_formats_lists_every_flag() {
        let doc = include_str!("../../../docs/formats.md");
        for flag in Flag::all() {
            let want = format!("`{}`", flag.documented());
            assert!(doc.contains(&want), "docs/formats.md does not list {want}");
        }
    }

    #[test]
    fn text_forms_are_the_published_ones() {
        let f = [
            Flag::LowConfidence,
            Flag::Failed {
                kind: ObservationKind::Trade,
                reasons: vec![Flag::FewObs, Flag::LowVolume],
            },
            Flag::Fallback(ObservationKind::Listing),
            Flag::OutliersRemoved(3),
        ];
        assert_eq!(
            Flag::join(&f),
            "low_confidence;trade_failed=few_obs+low_volume;fallback_listing;outliers_removed=3"
        );
    }
}
