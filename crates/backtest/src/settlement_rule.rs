//! What a contract does when its index was not published on every day the
//! settlement counts: coverage thresholds (settle, review, determination), the
//! longest gap, and how a gap is filled.
//!
//! `coverage` = settlement days with a qualifying fixing (sufficient, not carried)
//! over the settlement days of the period; the longest gap is the longest run of
//! consecutive settlement days without one, as a share of the period's settlement
//! days. A period **settles** when `coverage >= settle_at` and the longest gap is at
//! most `max_gap_share`; it goes to **review** when it does not settle but
//! `coverage >= review_at` (the value is computed and published, flagged for the
//! administrator's review); below that it goes to **determination** by a calculation
//! agent: the rule gives no number. A gap day is filled (`gap_fill`) by the mean of
//! the last `gap_fill_n` qualifying fixings before it (`mean-last-n`), by the last one
//! (`carry`), or left out of the average (`none`).
//!
//! Source: the Computable GPU index's contract defaults (settle at >= 98% coverage of
//! the period's publications with the longest gap <= 2% of the period, review at
//! 90-98%, a calculation agent below 90%; a gap filled by the mean of the last
//! observations before it rather than one carried value). A contract without a
//! `[coverage]` table keeps the `min_settlement_fixings` rule alone.

use serde::{Deserialize, Serialize};

/// How a settlement day without a qualifying fixing is filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GapFill {
    /// Left out of the average.
    #[default]
    None,
    /// The last qualifying fixing before the gap.
    Carry,
    /// The mean of the last `gap_fill_n` qualifying fixings before the gap.
    MeanLastN,
}

/// The `[coverage]` table of a contract file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoverageRule {
    /// Coverage at or above which a period settles (with its gaps short enough), 0 to
    /// 1.
    pub settle_at: f64,
    /// Coverage at or above which a period that does not settle goes to review rather
    /// than determination, 0 to `settle_at`.
    pub review_at: f64,
    /// Longest gap a settling period may have, as a share of its settlement days
    /// (default 0.02).
    #[serde(default = "default_max_gap_share")]
    pub max_gap_share: f64,
    /// How a gap day is filled (default `none`: left out of the average).
    #[serde(default)]
    pub gap_fill: GapFill,
    /// Qualifying fixings `mean-last-n` averages (default 5, 1 to 100).
    #[serde(default = "default_gap_fill_n")]
    pub gap_fill_n: usize,
}

fn default_max_gap_share() -> f64 {
    0.02
}
fn default_gap_fill_n() -> usize {
    5
}

impl CoverageRule {
    /// Checks that the thresholds are shares with `review_at <= settle_at` and that
    /// `gap_fill_n` is 1 to 100.
    pub fn validate(&self) -> Result<(), rentix_core::Invalid> {
        let share = |x: f64| x.is_finite() && (0.0..=1.0).contains(&x);
        if !(share(self.settle_at) && share(self.review_at) && share(self.max_gap_share)) {
            return Err(
                "coverage: settle_at, review_at and max_gap_share are shares in [0, 1]".into(),
            );
        }
        if self.review_at > self.settle_at {
            return Err(format!(
                "coverage: review_at {} is above settle_at {}",
                self.review_at, self.settle_at
            )
            .into());
        }
        if !(1..=100).contains(&self.gap_fill_n) {
            return Err("coverage: gap_fill_n must be 1..=100".into());
        }
        Ok(())
    }
}

/// What the rule decides for one period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::IntoStaticStr, strum::Display, strum::EnumString, strum::VariantArray)]
#[strum(serialize_all = "kebab-case")]
pub enum SettlementStatus {
    /// Coverage and longest gap meet `settle_at` and `max_gap_share`: the value
    /// settles.
    Settled,
    /// Below that but at or above `review_at`: the value is computed and published,
    /// flagged for review.
    Review,
    /// Below `review_at`: a calculation agent decides, the rule gives no number.
    Determination,
}

impl SettlementStatus {
    /// The status's name, as it is serialized.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Coverage and longest gap (both shares of the period's settlement days) of a
/// period whose settlement days are `qualifying[i]` in order.
pub(crate) fn coverage_of(qualifying: &[bool]) -> (f64, f64) {
    if qualifying.is_empty() {
        return (0.0, 1.0);
    }
    let n = qualifying.len() as f64;
    let covered = qualifying.iter().filter(|q| **q).count() as f64;
    let (mut run, mut longest) = (0usize, 0usize);
    for q in qualifying {
        run = if *q { 0 } else { run + 1 };
        longest = longest.max(run);
    }
    (covered / n, longest as f64 / n)
}

/// The status of a period with `coverage` and `longest_gap` under `rule`.
pub(crate) fn classify(rule: &CoverageRule, coverage: f64, longest_gap: f64) -> SettlementStatus {
    if coverage >= rule.settle_at && longest_gap <= rule.max_gap_share {
        SettlementStatus::Settled
    } else if coverage >= rule.review_at {
        SettlementStatus::Review
    } else {
        SettlementStatus::Determination
    }
}

/// The value a gap day takes under `fill`, from the qualifying values before it
/// (oldest first); `None` when the day is left out.
pub(crate) fn fill_value(fill: GapFill, n: usize, before: &[f64]) -> Option<f64> {
    match fill {
        GapFill::None => None,
        GapFill::Carry => before.last().copied(),
        GapFill::MeanLastN => {
            let tail = &before[before.len().saturating_sub(n)..];
            (!tail.is_empty()).then(|| tail.iter().sum::<f64>() / tail.len() as f64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule() -> CoverageRule {
        CoverageRule {
            settle_at: 0.98,
            review_at: 0.90,
            max_gap_share: 0.02,
            gap_fill: GapFill::MeanLastN,
            gap_fill_n: 3,
        }
    }

    /// 100 publications with the given days missing.
    fn period(missing: &[usize]) -> Vec<bool> {
        (0..100).map(|i| !missing.contains(&i)).collect()
    }

    #[test]
    fn coverage_thresholds_by_hand() {
        // 98 of 100 published, the two gaps one publication each (1%): settles.
        let (c, g) = coverage_of(&period(&[10, 50]));
        assert_eq!((c, g), (0.98, 0.01));
        assert_eq!(classify(&rule(), c, g), SettlementStatus::Settled);
        // 98% but one gap of two publications in a row... still 2% <= 2%: settles;
        // three in a row (97%, 3%) reviews.
        let (c, g) = coverage_of(&period(&[10, 11]));
        assert_eq!(classify(&rule(), c, g), SettlementStatus::Settled);
        let (c, g) = coverage_of(&period(&[10, 11, 12]));
        assert_eq!((c, g), (0.97, 0.03));
        assert_eq!(classify(&rule(), c, g), SettlementStatus::Review);
        // 95%: review; 89%: determination.
        let five: Vec<usize> = (0..5).map(|i| i * 20).collect();
        let (c, g) = coverage_of(&period(&five));
        assert_eq!(c, 0.95);
        assert_eq!(classify(&rule(), c, g), SettlementStatus::Review);
        let eleven: Vec<usize> = (0..11).map(|i| i * 9).collect();
        let (c, g) = coverage_of(&period(&eleven));
        assert_eq!(c, 0.89);
        assert_eq!(classify(&rule(), c, g), SettlementStatus::Determination);
        assert_eq!(coverage_of(&[]), (0.0, 1.0));
    }

    #[test]
    fn a_gap_is_filled_by_the_mean_of_the_last_values() {
        // Qualifying values before the gap 2.0, 2.3, 2.6, 3.2: the last three average
        // (2.3 + 2.6 + 3.2) / 3 = 2.7; carry takes 3.2; none leaves the day out.
        let before = [2.0, 2.3, 2.6, 3.2];
        let m = fill_value(GapFill::MeanLastN, 3, &before).unwrap();
        assert!((m - 2.7).abs() < 1e-12, "{m}");
        assert_eq!(fill_value(GapFill::Carry, 3, &before), Some(3.2));
        assert_eq!(fill_value(GapFill::None, 3, &before), None);
        assert_eq!(fill_value(GapFill::MeanLastN, 3, &[]), None);
        assert_eq!(fill_value(GapFill::MeanLastN, 10, &[1.0, 3.0]), Some(2.0));
    }

    #[test]
    fn review_above_settle_is_refused() {
        let mut r = rule();
        assert!(r.validate().is_ok());
        r.review_at = 0.99;
        assert!(r.validate().is_err());
        r.review_at = f64::NAN;
        assert!(r.validate().is_err());
    }
}

#[cfg(test)]
mod text_tests {
    use super::*;

    /// Every variant's text as published before it was derived: settlement outputs
    /// hold it, so it must not change by a byte.
    const TEXT: [(SettlementStatus, &str); 3] = [
        (SettlementStatus::Settled, "settled"),
        (SettlementStatus::Review, "review"),
        (SettlementStatus::Determination, "determination"),
    ];

    #[test]
    fn text_forms_are_pinned_and_agree_with_serde() {
        assert_eq!(
            <SettlementStatus as strum::VariantArray>::VARIANTS.len(),
            TEXT.len()
        );
        for (v, text) in TEXT {
            assert_eq!(v.as_str(), text);
            assert_eq!(text.parse::<SettlementStatus>().unwrap(), v);
            assert_eq!(v.to_string(), text);
            assert_eq!(serde_json::to_value(v).unwrap(), text);
            assert_eq!(
                serde_json::from_value::<SettlementStatus>(text.into()).unwrap(),
                v
            );
        }
    }
}
