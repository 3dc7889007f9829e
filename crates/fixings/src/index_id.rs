//! The identity of an index: a grade or a composite, and the unit its values are
//! in (OpenGamma Strata's `Index`, nautilus' `InstrumentId`). A fixing's value means
//! nothing without it: a composite's points are not dollars and cannot settle a USD
//! contract unrebased.

use crate::fixing::IndexUnit;
use std::cmp::Ordering;
use std::fmt;

/// The composite methods as the fixings' `method` column writes them, each with the
/// unit its values are in. A row whose method is none of these is a grade's fixing
/// (its method is an aggregation: `vw-median`, ...). The index engine's composite
/// methods draw their text and unit from here (a test there pins it).
pub const COMPOSITE_METHODS: [(&str, IndexUnit); 4] = [
    ("jevons-chained", IndexUnit::Points),
    ("dutot-chained", IndexUnit::Points),
    ("hedonic-time-dummy", IndexUnit::Points),
    ("pooled", IndexUnit::UsdPerGpuHour),
];

/// What a fixing is of: one grade, or a composite over several.
///
/// Written as its text in the fixings' `grade` column; identities order by that
/// text (then a grade before a composite of the same text, which a methodology
/// never allows), so files sort as they always have. It dereferences to the text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IndexId {
    /// A grade, by its key as written (`GPU/SCOPE/TERM[@region][/tier+]`): its
    /// fixings are prices, USD per GPU-hour.
    Grade(String),
    /// A composite, by its name (never shaped like a grade), in the unit its method
    /// makes: points for a chained or hedonic composite, USD per GPU-hour for a
    /// pooled one.
    Composite {
        /// The composite's name.
        name: String,
        /// What its values are measured in.
        unit: IndexUnit,
    },
}

impl IndexId {
    /// A grade's identity, by its key.
    pub fn grade(key: impl Into<String>) -> Self {
        IndexId::Grade(key.into())
    }

    /// A composite's identity: its name and unit.
    pub fn composite(name: impl Into<String>, unit: IndexUnit) -> Self {
        IndexId::Composite {
            name: name.into(),
            unit,
        }
    }

    /// The identity a fixings row names: a composite when its `method` is one of
    /// [`COMPOSITE_METHODS`] (in that method's unit), else a grade.
    pub fn of_row(name: &str, method: &str) -> Self {
        match COMPOSITE_METHODS.iter().find(|(m, _)| *m == method) {
            Some((_, unit)) => IndexId::composite(name, *unit),
            None => IndexId::grade(name),
        }
    }

    /// The text of the `grade` column: the grade key or the composite's name.
    pub fn as_str(&self) -> &str {
        match self {
            IndexId::Grade(key) => key,
            IndexId::Composite { name, .. } => name,
        }
    }

    /// What the index's values are measured in.
    pub fn unit(&self) -> IndexUnit {
        match self {
            IndexId::Grade(_) => IndexUnit::UsdPerGpuHour,
            IndexId::Composite { unit, .. } => *unit,
        }
    }

    /// Whether this is a composite over several grades.
    pub fn is_composite(&self) -> bool {
        matches!(self, IndexId::Composite { .. })
    }
}

impl std::ops::Deref for IndexId {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for IndexId {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Display for IndexId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for IndexId {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for IndexId {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for IndexId {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl Ord for IndexId {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_str()
            .cmp(other.as_str())
            .then_with(|| self.is_composite().cmp(&other.is_composite()))
            .then_with(|| self.unit().as_str().cmp(other.unit().as_str()))
    }
}

impl PartialOrd for IndexId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl serde::Serialize for IndexId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_is_a_composite_exactly_when_its_method_is_a_composite_method() {
        let g = IndexId::of_row("h100-sxm-80gb/bare-metal/on-demand", "vw-median");
        assert_eq!(g, IndexId::grade("h100-sxm-80gb/bare-metal/on-demand"));
        assert_eq!(g.unit(), IndexUnit::UsdPerGpuHour);
        assert!(!g.is_composite());
        let c = IndexId::of_row("h100-market", "jevons-chained");
        assert_eq!((c.unit(), c.is_composite()), (IndexUnit::Points, true));
        assert_eq!(
            IndexId::of_row("hedonic", "hedonic-time-dummy").unit(),
            IndexUnit::Points
        );
        let pooled = IndexId::of_row("h100-sxm-80gb/any-scope", "pooled");
        assert_eq!(
            (pooled.unit(), pooled.is_composite()),
            (IndexUnit::UsdPerGpuHour, true)
        );
    }

    /// Files are sorted by date then this text: the order must be the text's,
    /// byte for byte, whatever the kind (`Z` sorts before `a`).
    #[test]
    fn identities_order_by_their_text() {
        let mut v = [
            IndexId::grade("h100-sxm-80gb/vm/on-demand"),
            IndexId::composite("Zeta", IndexUnit::Points),
            IndexId::grade("a100-sxm-80gb/vm/on-demand"),
            IndexId::composite("h100-sxm-80gb/blend", IndexUnit::UsdPerGpuHour),
        ];
        v.sort();
        let text: Vec<&str> = v.iter().map(IndexId::as_str).collect();
        assert_eq!(
            text,
            [
                "Zeta",
                "a100-sxm-80gb/vm/on-demand",
                "h100-sxm-80gb/blend",
                "h100-sxm-80gb/vm/on-demand"
            ]
        );
        assert_eq!(v[0].to_string(), "Zeta");
        assert!(v[1] == "a100-sxm-80gb/vm/on-demand");
    }
}
