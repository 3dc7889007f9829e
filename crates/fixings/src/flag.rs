//! The flags a fixing row carries in its `flags` column (`;`-joined), each with one
//! text form. docs/formats.md lists every one (a test reads it).

use rentix_core::ObservationKind;
use std::fmt;

/// One flag of a fixing row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Flag {
    /// The row is not sufficient (first whenever present).
    LowConfidence,
    /// Fewer observations (after the outlier filter and the weight floor) than
    /// `inputs.min_obs` for the level's kind.
    FewObs,
    /// Fewer valid days in the window than `pooling.min_valid_days`.
    FewValidDays,
    /// Fewer GPU-hours than `inputs.min_volume_gpu_hours` for the level's kind.
    LowVolume,
    /// Fewer distinct contributors than `contributors.min_contributors` (a grade's
    /// level, or a hedonic composite's sample of the day).
    FewContributors,
    /// One contributor holds more than `contributors.max_concentration` of the
    /// weight before the cap (of the observations, for a hedonic composite).
    Concentrated,
    /// Too few contributors for the cap under `too_few_for_cap = "proportional"`.
    CapNotHeld,
    /// A level of the hierarchy that fell through, and why (`trade_failed=few_obs+low_volume`).
    Failed {
        /// The kind of the level that was not accepted.
        kind: ObservationKind,
        /// Its shortfalls, each one of the sufficiency flags above.
        reasons: Vec<Flag>,
    },
    /// Fixed on a lower level than the first (`fallback_firm`, `fallback_listing`).
    Fallback(ObservationKind),
    /// A listing-based value multiplied by the median trade/listing ratio of the
    /// look-back days (`fallback.spread_lookback_days`).
    ListingSpreadAdjusted,
    /// A listing-based value published unadjusted: fewer than
    /// `fallback.spread_min_days` look-back days had both levels accepted.
    ListingSpreadUnavailable,
    /// Observations the outlier filter removed from the level that fixed.
    OutliersRemoved(usize),
    /// Contributors missing from the window that entered with their last day's
    /// observations (`contributors.carry_missing_days`).
    ContributorsCarried(usize),
    /// The unweighted trimmed mean gave one contributor more than
    /// `contributors.max_share` of the values: a cap it cannot apply.
    CapNotApplied,
    /// Contributors left out of the level under the weight floor
    /// (`contributors.min_share`).
    BelowFloor(usize),
    /// p1 to p99 left empty: the level had fewer than
    /// `contributors.min_for_percentiles` contributors.
    PercentilesWithheld,
    /// No level fixed: the last fixed value is carried (level 4), within
    /// `fallback.carry_forward_days`.
    CarriedForward,
    /// No value: no level had an observation left to use in the window (after the
    /// filters), and there was nothing to carry.
    NoData,
    /// No value: data existed but the methodology's rules refused to publish it
    /// (for a composite: its own rules or its suppressed components).
    Suppressed,
    /// Composites: components without a price today.
    MissingComponents(usize),
    /// A chained composite whose link to the previous date could not be formed (no
    /// component priced on both dates): the level is held.
    NoLink,
    /// A hedonic composite whose day-pair regression could not be solved: the level
    /// is held.
    SingularRegression,
    /// Every component grade of the composite was without a value on the date and
    /// at least one was suppressed, so the composite is suppressed too.
    ComponentsSuppressed,
    /// A benchmark the user brought (`date, grade, value`, optionally `unit`): its
    /// tier, the data behind it and its sufficiency are unknown, never reported as
    /// a level or as sufficient.
    External,
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
            External,
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
            Flag::External => "external",
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
