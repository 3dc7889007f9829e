//! Grades (`GPU/SCOPE/TERM[@region]`), the unit of comparison, and grade patterns.

use crate::error::CoreError;
use crate::gpu::GpuModel;
use crate::scope::ServiceScope;
use crate::term::ContractTerm;
use crate::tier::OperatorTier;
use serde::{Deserialize, Serialize};
use std::{fmt, str::FromStr};

/// What makes two GPU-hours the same good: the GPU, what the operator includes, the
/// contract term, and optionally a region.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Grade {
    /// The GPU model, by canonical id.
    pub gpu: GpuModel,
    /// What the operator includes with the GPU-hour.
    pub scope: ServiceScope,
    /// The contract term the price is for.
    pub term: ContractTerm,
    /// The region after `@` (lowercased when parsed from a key); `None` for a grade
    /// that pools every region.
    pub region: Option<std::sync::Arc<str>>,
    /// A tier floor (`.../gold+`): only observations from operators rated at or
    /// above it, the way a futures contract names a deliverable grade.
    pub tier_floor: Option<OperatorTier>,
}

impl Grade {
    /// A grade over every region and without a tier floor.
    pub fn new(gpu: GpuModel, scope: ServiceScope, term: ContractTerm) -> Self {
        Self {
            gpu,
            scope,
            term,
            region: None,
            tier_floor: None,
        }
    }

    /// The same grade with its tier floor replaced (`None` removes it).
    pub fn with_tier_floor(mut self, floor: Option<OperatorTier>) -> Self {
        self.tier_floor = floor;
        self
    }

    /// The same grade with its region replaced (`None` removes it), lowercased as a
    /// parsed key's region is, so a grade built either way compares equal.
    /// Text already lowercase is kept as given (an interned region stays shared).
    pub fn with_region(mut self, region: Option<std::sync::Arc<str>>) -> Self {
        self.region = region.map(|r| {
            if r.bytes().any(|b| b.is_ascii_uppercase()) {
                r.to_ascii_lowercase().into()
            } else {
                r
            }
        });
        self
    }

    /// The key text, e.g. `h100-sxm-80gb/bare-metal/on-demand@us`.
    pub fn key(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Grade {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.gpu, self.scope, self.term)?;
        if let Some(t) = self.tier_floor {
            write!(f, "/{}+", t.as_str())?;
        }
        if let Some(r) = &self.region {
            write!(f, "@{r}")?;
        }
        Ok(())
    }
}

impl FromStr for Grade {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |reason: &str| CoreError::InvalidGrade {
            value: s.to_string(),
            reason: reason.to_string(),
        };
        let (body, region) = match s.split_once('@') {
            Some((b, r)) if !r.is_empty() => (b, Some(r.to_ascii_lowercase().into())),
            Some(_) => return Err(bad("empty region after '@'")),
            None => (s, None),
        };
        let parts: Vec<&str> = body.split('/').collect();
        if parts.len() != 3 && parts.len() != 4 {
            return Err(bad("expected GPU/SCOPE/TERM or GPU/SCOPE/TERM/TIER+"));
        }
        let tier_floor = match parts.get(3) {
            None => None,
            Some(t) => Some(
                t.strip_suffix('+')
                    .ok_or_else(|| bad("a tier floor ends in '+', e.g. gold+"))?
                    .parse::<OperatorTier>()
                    .map_err(|e| bad(&e.to_string()))?,
            ),
        };
        let gpu = GpuModel::new(parts[0]).map_err(|e| bad(&e.to_string()))?;
        let scope = parts[1]
            .parse()
            .map_err(|e: CoreError| bad(&e.to_string()))?;
        let term = parts[2]
            .parse()
            .map_err(|e: CoreError| bad(&e.to_string()))?;
        Ok(Grade {
            gpu,
            scope,
            term,
            region,
            tier_floor,
        })
    }
}

impl TryFrom<String> for Grade {
    type Error = CoreError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<Grade> for String {
    fn from(g: Grade) -> String {
        g.to_string()
    }
}

/// A glob over grade keys: `*` matches any run of characters within one segment
/// (`h100-*/*/on-demand`). A pattern without `@` matches only grades without a
/// region; `...@*` matches any region.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct GradePattern {
    text: String,
    segments: Vec<String>,
    region: Option<String>,
}

impl GradePattern {
    /// Parses `GPU/SCOPE/TERM[/TIER+][@REGION]` with `*` wildcards; refuses a
    /// pattern with fewer than three or more than four segments or an empty one.
    /// Segments are not checked against the vocabularies: a pattern that can match
    /// nothing is accepted.
    pub fn new(text: &str) -> Result<Self, CoreError> {
        let (body, region) = match text.split_once('@') {
            Some((b, r)) => (b, Some(r.to_ascii_lowercase())),
            None => (text, None),
        };
        let segments: Vec<String> = body.split('/').map(str::to_string).collect();
        if region.as_deref() == Some("") {
            return Err(CoreError::InvalidGrade {
                value: text.to_string(),
                reason: "an empty region after '@' matches no grade: name one or use '@*'".into(),
            });
        }
        if !(3..=4).contains(&segments.len()) || segments.iter().any(|s| s.is_empty()) {
            return Err(CoreError::InvalidGrade {
                value: text.to_string(),
                reason: "a pattern is GPU/SCOPE/TERM[/TIER+] with '*' wildcards".into(),
            });
        }
        Ok(Self {
            text: text.to_string(),
            segments,
            region,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether `grade` matches segment by segment. A three-segment pattern matches
    /// only grades without a tier floor, a four-segment one only grades with one;
    /// likewise for the region.
    pub fn matches(&self, grade: &Grade) -> bool {
        let values = [
            grade.gpu.as_str(),
            grade.scope.as_str(),
            grade.term.as_str(),
        ];
        let body = self
            .segments
            .iter()
            .zip(values)
            .all(|(p, v)| glob_match(p.as_bytes(), v.as_bytes()));
        // Three segments match grades without a tier floor; a fourth matches the
        // floor (`gold+`, or `*`).
        let tier = match (self.segments.get(3), grade.tier_floor) {
            (None, None) => true,
            (Some(p), Some(t)) => glob_match(p.as_bytes(), format!("{}+", t.as_str()).as_bytes()),
            _ => false,
        };
        let region = match (&self.region, &grade.region) {
            (None, None) => true,
            (Some(p), Some(r)) => glob_match(p.as_bytes(), r.as_bytes()),
            _ => false,
        };
        body && region && tier
    }
}

impl TryFrom<String> for GradePattern {
    type Error = CoreError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        GradePattern::new(&s)
    }
}

impl From<GradePattern> for String {
    fn from(p: GradePattern) -> String {
        p.text
    }
}

/// Glob with `*` only, iterative with backtracking to the last star.
fn glob_match(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, si));
            pi += 1;
        } else if pi < p.len() && p[pi] == s[si] {
            pi += 1;
            si += 1;
        } else if let Some((sp, ss)) = star {
            pi = sp + 1;
            si = ss + 1;
            star = Some((sp, ss + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_region_set_in_code_compares_like_a_parsed_one() {
        let parsed: Grade = "h100-sxm-80gb/bare-metal/on-demand@eu".parse().unwrap();
        let built: Grade = "h100-sxm-80gb/bare-metal/on-demand".parse().unwrap();
        assert_eq!(built.with_region(Some("EU".into())), parsed);
        assert!(GradePattern::new("h100-sxm-80gb/*/*@").is_err());
    }

    #[test]
    fn grade_round_trip() {
        let g: Grade = "h100-sxm-80gb/bare-metal/on-demand@US".parse().unwrap();
        assert_eq!(g.key(), "h100-sxm-80gb/bare-metal/on-demand@us");
        assert_eq!(g.term, ContractTerm::OnDemand);
        assert!("h100-sxm-80gb/bare-metal".parse::<Grade>().is_err());
        assert!("h100-sxm-80gb/cloud/on-demand".parse::<Grade>().is_err());
        assert!("H100/vm/spot".parse::<Grade>().is_err());
        let t: Grade = "h100-sxm-80gb/managed-cluster/on-demand/gold+@us"
            .parse()
            .unwrap();
        assert_eq!(t.tier_floor, Some(OperatorTier::Gold));
        assert_eq!(t.key(), "h100-sxm-80gb/managed-cluster/on-demand/gold+@us");
        assert!("h100-sxm-80gb/vm/on-demand/gold".parse::<Grade>().is_err());
        assert!("h100-sxm-80gb/vm/on-demand/diamond+"
            .parse::<Grade>()
            .is_err());
    }

    #[test]
    fn pattern_matching() {
        let cases: [(&str, &str, bool); 11] = [
            (
                "h100-sxm-80gb/*/on-demand",
                "h100-sxm-80gb/vm/on-demand",
                true,
            ),
            ("h100-*/*/*", "h100-pcie-80gb/container/spot", true),
            ("h100-*/*/*", "h200-sxm-141gb/container/spot", false),
            ("*/bare-metal/1y", "a100-sxm-80gb/bare-metal/1y", true),
            ("*/*/*", "a100-sxm-80gb/bare-metal/1y@eu", false),
            ("*/*/*@*", "a100-sxm-80gb/bare-metal/1y@eu", true),
            ("*/*/*@us", "a100-sxm-80gb/bare-metal/1y@eu", false),
            ("*/*/*", "h100-sxm-80gb/vm/on-demand/gold+", false),
            ("*/*/*/gold+", "h100-sxm-80gb/vm/on-demand/gold+", true),
            ("*/*/*/*", "h100-sxm-80gb/vm/on-demand/silver+", true),
            ("*/*/*/gold+", "h100-sxm-80gb/vm/on-demand", false),
        ];
        for (pat, grade, expect) in cases {
            let p = GradePattern::new(pat).unwrap();
            assert_eq!(p.matches(&grade.parse().unwrap()), expect, "{pat} {grade}");
        }
    }
}
