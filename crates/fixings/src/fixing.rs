//! The fixing of one grade (or composite) on one date: the row every fixings file
//! holds, the tier that fixed it and the unit it is in.

use crate::IndexId;
use serde::{Deserialize, Serialize};
use strum::VariantArray;

/// What an index's values are measured in. A grade's fixings are prices; a
/// composite's are index points (base 100 on its first date), which cannot be
/// compared with a rent or settle a USD contract without rebasing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::IntoStaticStr, strum::Display, strum::EnumString, strum::VariantArray)]
#[strum(serialize_all = "kebab-case")]
pub enum IndexUnit {
    /// USD per GPU-hour: a grade's fixing or a pooled composite.
    UsdPerGpuHour,
    /// Index points, base 100 (or the composite's `base`) on the first date: a
    /// chained or hedonic composite.
    Points,
}

impl IndexUnit {
    /// The unit a row of `method` is in: a composite method's
    /// ([`crate::COMPOSITE_METHODS`]), else USD per GPU-hour (a grade's aggregation).
    pub fn of_method(method: &str) -> Self {
        crate::IndexId::of_row("", method).unit()
    }

    /// The text of the `unit` column: `usd-per-gpu-hour` or `points`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Which tier of the hierarchy fixed a value (IOSCO principles 7 and 8: a trade
/// ranks above a firm offer, which ranks above a listing), or that it was carried
/// forward. Written as its number (1 to 4) in the `level` column; a worse level
/// orders after a better one, so a composite's level is the worst of its parts'.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "u8", try_from = "u8")]
#[derive(strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "lowercase")]
pub enum FixingLevel {
    /// Fixed from trades (level 1).
    Trades = 1,
    /// Fixed from firm offers (level 2).
    Firm = 2,
    /// Fixed from listings (level 3).
    Listings = 3,
    /// The last fix carried forward (within the methodology's carry days).
    Carried = 4,
}

impl FixingLevel {
    /// Every level, best first.
    pub const ALL: [Self; Self::VARIANTS.len()] = match Self::VARIANTS.first_chunk() {
        Some(all) => *all,
        None => unreachable!(),
    };

    /// The number the `level` column holds.
    pub fn number(self) -> u8 {
        self as u8
    }

    /// The level a number in the `level` column stands for.
    pub fn from_number(n: i64) -> Option<Self> {
        Self::ALL.into_iter().find(|l| i64::from(l.number()) == n)
    }

    /// The level a tier of observations fixes at.
    pub fn of_kind(kind: rentix_core::ObservationKind) -> Self {
        match kind {
            rentix_core::ObservationKind::Trade => Self::Trades,
            rentix_core::ObservationKind::Firm => Self::Firm,
            rentix_core::ObservationKind::Listing => Self::Listings,
        }
    }

    /// Fixed from the day's own observations (not carried).
    pub fn is_fixed(self) -> bool {
        self != Self::Carried
    }

    /// A word for a person: `trades`, `firm`, `listings`, `carried`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl From<FixingLevel> for u8 {
    fn from(l: FixingLevel) -> u8 {
        l.number()
    }
}

impl TryFrom<u8> for FixingLevel {
    type Error = rentix_core::Invalid;
    fn try_from(n: u8) -> Result<Self, rentix_core::Invalid> {
        Self::from_number(i64::from(n))
            .ok_or_else(|| rentix_core::Invalid(format!("level {n} is not 1 to 4")))
    }
}

impl std::fmt::Display for FixingLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.number())
    }
}

/// One row of the fixings output: the value of one grade (or composite) on one
/// fixing date, with everything that stood behind it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fixing {
    /// The fixing date (under the methodology's cut-off and calendar).
    pub date: chrono::NaiveDate,
    /// What the row is a fixing of: a grade (by its key) or a composite (by its
    /// name), with the unit of `value`. Written in the `grade` column.
    pub grade: IndexId,
    /// USD per GPU-hour for a grade; index points for a composite. `None` when no
    /// value could be fixed or carried.
    pub value: Option<f64>,
    /// The aggregation method (`vw-median`, ...) for a grade, the composite method
    /// (`jevons-chained`, `hedonic-time-dummy`, `pooled`, ...) for a composite.
    pub method: String,
    /// Which tier fixed the value, or carried; `None` without a value.
    pub level: Option<FixingLevel>,
    /// Observations that entered the value (after filters).
    pub n_obs: usize,
    /// Trades in the window, before filters (trades below
    /// `inputs.min_trade_gpu_hours` not counted).
    pub n_trades: usize,
    /// Firm offers in the window, before filters.
    pub n_firm: usize,
    /// Listings in the window, before filters.
    pub n_listings: usize,
    /// Distinct contributors among the observations used.
    pub n_contributors: usize,
    /// GPU-hours of the observations used (trades and sized offers).
    pub volume_gpu_hours: f64,
    /// 1st percentile of the values used (weighted, lower rule), in `value`'s unit;
    /// `None` when withheld (`percentiles_withheld`), carried, or for a chained or
    /// hedonic composite.
    pub p1: Option<f64>,
    /// 25th percentile, as `p1`; a carried row keeps the carried fix's.
    pub p25: Option<f64>,
    /// 75th percentile, as `p1`; a carried row keeps the carried fix's.
    pub p75: Option<f64>,
    /// 99th percentile, as `p1`.
    pub p99: Option<f64>,
    /// Largest contributor's share of the weight after the cap.
    pub max_contributor_share: Option<f64>,
    /// Herfindahl-Hirschman index of the contributors' weight shares after the cap
    /// (1 for one contributor, 1/n for n equal ones); `None` for carried values and
    /// composites.
    pub contributor_hhi: Option<f64>,
    /// The methodology's data-sufficiency rules held.
    pub sufficient: bool,
    /// Why not, and what was done: `;`-separated codes.
    pub flags: String,
    /// The `version` of the methodology that fixed the row.
    pub methodology_version: String,
    /// SHA-256 of the sorted dedupe keys of the observations used.
    pub input_sha256: String,
    /// 1 for a first publication; incremented by each restatement run.
    pub publication: u32,
    /// Change over 1, 7 and 30 days on matched samples: the geometric mean of the
    /// price relatives of the contributors present on both dates (each contributor's
    /// median on each date), minus 1; `None` without a common contributor.
    pub change_1d: Option<f64>,
    /// Change over 7 days, as `change_1d`.
    pub change_7d: Option<f64>,
    /// Change over 30 days, as `change_1d`.
    pub change_30d: Option<f64>,
}

impl Fixing {
    /// The unit of `value`: its index's ([`IndexId::unit`]).
    pub fn unit(&self) -> IndexUnit {
        self.grade.unit()
    }

    /// Whether the row's `flags` hold `flag`, compared by its one text form
    /// (a parameter included: `outliers_removed=2` is not `outliers_removed=1`).
    pub fn has_flag(&self, flag: &crate::Flag) -> bool {
        let text = flag.to_string();
        self.flags.split(';').any(|f| f == text)
    }

    /// The value a settlement or a hedge may use: a sufficient value that was not
    /// carried from an earlier day, or any value of a benchmark the user brought
    /// (`external`: its sufficiency is unknown, and every valued row settles).
    pub fn qualifying_value(&self) -> Option<f64> {
        let qualifies = self.has_flag(&crate::Flag::External)
            || (self.sufficient && self.level != Some(FixingLevel::Carried));
        self.value.filter(|_| qualifies)
    }
}

// Compiled always, not behind a feature: a `testing` feature that other crates'
// dev-dependencies turned on made `cargo test` build every crate above this one a
// second time after `cargo build` (two minutes of the newcomer's first hour).
#[doc(hidden)]
impl Fixing {
    /// A fixing for the crate's tests: three trades from three contributors, 30
    /// GPU-hours, `vw-median`, sufficient when it has a value (`no_data` when not),
    /// no dispersion and no changes; tests change what they look at with struct
    /// update syntax.
    pub fn for_test(date: chrono::NaiveDate, grade: &str, value: Option<f64>) -> Fixing {
        Fixing {
            date,
            grade: IndexId::grade(grade),
            value,
            method: "vw-median".into(),
            level: value.map(|_| FixingLevel::Trades),
            n_obs: 3,
            n_trades: 3,
            n_firm: 0,
            n_listings: 0,
            n_contributors: 3,
            volume_gpu_hours: 30.0,
            p1: None,
            p25: None,
            p75: None,
            p99: None,
            max_contributor_share: None,
            contributor_hhi: None,
            sufficient: value.is_some(),
            flags: if value.is_some() { "" } else { "no_data" }.into(),
            methodology_version: "rentix-default-2.0".into(),
            input_sha256: String::new(),
            publication: 1,
            change_1d: None,
            change_7d: None,
            change_30d: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_is_found_by_its_whole_text() {
        let mut f = Fixing::for_test(chrono::NaiveDate::MIN, "g", None);
        f.flags = "low_confidence;components_suppressed;outliers_removed=2".into();
        assert!(f.has_flag(&crate::Flag::LowConfidence));
        assert!(f.has_flag(&crate::Flag::OutliersRemoved(2)));
        assert!(!f.has_flag(&crate::Flag::OutliersRemoved(1)));
        // `suppressed` is not a prefix match of `components_suppressed`.
        assert!(!f.has_flag(&crate::Flag::Suppressed));
        f.flags = String::new();
        assert!(!f.has_flag(&crate::Flag::LowConfidence));
    }

    #[test]
    fn levels_are_their_numbers_and_order_from_best_to_carried() {
        // docs/formats.md: 1 trades, 2 firm offers, 3 listings, 4 carried forward.
        let numbers: Vec<u8> = FixingLevel::ALL.iter().map(|l| l.number()).collect();
        assert_eq!(numbers, [1, 2, 3, 4]);
        for l in FixingLevel::ALL {
            assert_eq!(FixingLevel::from_number(i64::from(l.number())), Some(l));
            assert_eq!(l.to_string(), l.number().to_string());
        }
        assert_eq!(FixingLevel::from_number(0), None);
        assert_eq!(FixingLevel::from_number(5), None);
        assert!(FixingLevel::Trades < FixingLevel::Listings);
        assert_eq!(
            [FixingLevel::Firm, FixingLevel::Carried, FixingLevel::Trades]
                .iter()
                .max(),
            Some(&FixingLevel::Carried)
        );
        assert!(!FixingLevel::Carried.is_fixed() && FixingLevel::Listings.is_fixed());
        let json = serde_json::to_string(&Some(FixingLevel::Firm)).unwrap();
        assert_eq!(json, "2");
        let err = serde_json::from_str::<FixingLevel>("7").unwrap_err();
        assert!(err.to_string().contains("level 7 is not 1 to 4"), "{err}");
        assert_eq!(
            FixingLevel::try_from(0u8).unwrap_err().to_string(),
            "level 0 is not 1 to 4"
        );
    }
}

#[cfg(test)]
mod text_tests {
    use super::*;

    /// Every variant's text as published before it was derived: the fixings' `unit`
    /// column holds it, so it must not change by a byte.
    const UNIT_TEXT: [(IndexUnit, &str); 2] = [
        (IndexUnit::UsdPerGpuHour, "usd-per-gpu-hour"),
        (IndexUnit::Points, "points"),
    ];
    /// A level's word and the number its Display (and the `level` column) writes.
    const LEVEL_TEXT: [(FixingLevel, &str, &str); 4] = [
        (FixingLevel::Trades, "trades", "1"),
        (FixingLevel::Firm, "firm", "2"),
        (FixingLevel::Listings, "listings", "3"),
        (FixingLevel::Carried, "carried", "4"),
    ];

    #[test]
    fn text_forms_are_pinned_and_agree_with_serde() {
        assert_eq!(
            <IndexUnit as strum::VariantArray>::VARIANTS.len(),
            UNIT_TEXT.len()
        );
        for (v, text) in UNIT_TEXT {
            assert_eq!(v.as_str(), text);
            assert_eq!(text.parse::<IndexUnit>().unwrap(), v);
            assert_eq!(v.to_string(), text);
            assert_eq!(serde_json::to_value(v).unwrap(), text);
            assert_eq!(serde_json::from_value::<IndexUnit>(text.into()).unwrap(), v);
        }
        assert_eq!(
            FixingLevel::ALL.map(|l| l.as_str()),
            LEVEL_TEXT.map(|t| t.1)
        );
        for (l, word, number) in LEVEL_TEXT {
            assert_eq!(l.as_str(), word);
            assert_eq!(l.to_string(), number);
            assert_eq!(serde_json::to_value(l).unwrap().to_string(), number);
        }
    }
}
