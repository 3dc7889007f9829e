//! Operator ratings as dated data: who rated which operator, for which service
//! scope, at which tier, from which date. A rating is bound to its scope (a
//! managed-cluster rating says nothing about bare metal) and is point in time: an
//! observation dated D gets the rating in force on D.

use crate::error::CoreError;
use crate::scope::ServiceScope;
use crate::tier::OperatorTier;
use chrono::NaiveDate;
use std::collections::BTreeMap;
use std::path::Path;

/// One rating row, as a ratings file lays it out. [`RatingTable`] does not build
/// these: it keeps (date, tier) per operator and scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rating {
    /// The operator as named in observations' `source` (matched trimmed, any case).
    pub operator: String,
    /// The service scope the rating is for; it says nothing about other scopes.
    pub scope: ServiceScope,
    /// The tier given.
    pub tier: OperatorTier,
    /// The first date the rating is in force; it holds until a later one.
    pub effective_from: NaiveDate,
    /// Who gave the rating.
    pub source: String,
}

/// Ratings by (normalized operator, scope), each list sorted by date.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RatingTable {
    by_key: BTreeMap<(String, ServiceScope), Vec<(NaiveDate, OperatorTier)>>,
}

fn operator_key(name: &str) -> String {
    name.trim().to_lowercase()
}

fn bad(path: &str, row: usize, detail: String) -> CoreError {
    CoreError::Ratings {
        path: path.to_string(),
        row,
        detail,
    }
}

impl RatingTable {
    /// Reads `operator, scope, tier, effective_from, source` (header required).
    pub fn from_file(path: &Path) -> Result<Self, CoreError> {
        let shown = path.display().to_string();
        let text = crate::limits::read_text(path, crate::limits::MAX_TABLE_BYTES)
            .map_err(|e| bad(&shown, 0, e.to_string()))?;
        Self::from_csv_text(&text, &shown)
    }

    /// Parses the CSV text of a ratings file; `path` names it in errors.
    pub fn from_csv_text(text: &str, path: &str) -> Result<Self, CoreError> {
        let mut rdr = csv::Reader::from_reader(text.as_bytes());
        let header: Vec<String> = rdr
            .headers()
            .map_err(|e| bad(path, 0, e.to_string()))?
            .iter()
            .map(|h| h.trim().to_string())
            .collect();
        // A column named twice: which one holds the tier would be a guess.
        for (i, h) in header.iter().enumerate() {
            if let Some(j) = header[..i].iter().position(|x| x == h) {
                return Err(bad(
                    path,
                    0,
                    format!(
                        "the header names column {h:?} twice (columns {} and {})",
                        j + 1,
                        i + 1
                    ),
                ));
            }
        }
        let col = |name: &str| {
            header
                .iter()
                .position(|h| h == name)
                .ok_or_else(|| bad(path, 0, format!("the header has no column {name:?}")))
        };
        let (io, is, it, id) = (
            col("operator")?,
            col("scope")?,
            col("tier")?,
            col("effective_from")?,
        );
        let mut rows = Vec::new();
        for (i, rec) in rdr.records().enumerate() {
            let row = i + 1;
            let rec = rec.map_err(|e| bad(path, row, e.to_string()))?;
            let f = |j: usize| rec.get(j).unwrap_or("").trim();
            if f(io).is_empty() {
                return Err(bad(path, row, "operator is empty".into()));
            }
            let scope: ServiceScope = f(is)
                .parse()
                .map_err(|e: CoreError| bad(path, row, e.to_string()))?;
            let tier: OperatorTier = f(it)
                .parse()
                .map_err(|e: CoreError| bad(path, row, e.to_string()))?;
            let date = NaiveDate::parse_from_str(f(id), "%Y-%m-%d").map_err(|_| {
                bad(
                    path,
                    row,
                    format!("effective_from {:?} is not a date", f(id)),
                )
            })?;
            rows.push(((operator_key(f(io)), scope), date, tier, row));
        }
        let mut t = Self::default();
        for (key, date, tier, row) in rows {
            let list = t.by_key.entry(key.clone()).or_default();
            if list.iter().any(|(d, _)| *d == date) {
                return Err(bad(
                    path,
                    row,
                    format!("{} ({}) is rated twice from {date}", key.0, key.1),
                ));
            }
            list.push((date, tier));
            list.sort();
        }
        Ok(t)
    }

    /// The tier in force on `date` for `operator` in `scope`, if rated.
    pub fn tier_on(
        &self,
        operator: &str,
        scope: ServiceScope,
        date: NaiveDate,
    ) -> Option<OperatorTier> {
        self.by_key
            .get(&(operator_key(operator), scope))?
            .iter()
            .rev()
            .find(|(d, _)| *d <= date)
            .map(|(_, t)| *t)
    }

    /// Adds another table's ratings; the same operator and scope rated from the same
    /// date twice is an error naming them.
    pub fn merge(&mut self, other: RatingTable) -> Result<(), crate::Invalid> {
        for (key, list) in other.by_key {
            let mine = self.by_key.entry(key.clone()).or_default();
            for (date, tier) in list {
                if mine.iter().any(|(d, _)| *d == date) {
                    return Err(format!("{} ({}) is rated twice from {date}", key.0, key.1).into());
                }
                mine.push((date, tier));
            }
            mine.sort();
        }
        Ok(())
    }

    /// Whether the table holds no rating.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    /// Every file's ratings in one table (`--ratings` given several times); an
    /// operator and scope rated from the same date in two files is an error naming
    /// the second file.
    pub fn from_files(paths: &[std::path::PathBuf]) -> Result<Self, CoreError> {
        let mut all = Self::default();
        for p in paths {
            let shown = p.display().to_string();
            all.merge(Self::from_file(p)?)
                .map_err(|detail| bad(&shown, 0, detail.0))?;
        }
        Ok(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_named_twice_is_refused() {
        let e = RatingTable::from_csv_text(
            "operator,scope,tier,effective_from,tier\nacme,vm,gold,2025-01-01,bronze\n",
            "r.csv",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("\"tier\" twice (columns 3 and 5)"), "{e}");
    }

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn point_in_time_and_scope_bound() {
        let t = RatingTable::from_csv_text(
            "operator,scope,tier,effective_from,source\nAcme,managed-cluster,gold,2025-01-01,x\n acme ,managed-cluster,platinum,2025-03-01,x\n",
            "r.csv",
        )
        .unwrap();
        let mc = ServiceScope::ManagedCluster;
        assert_eq!(t.tier_on("Acme", mc, d("2024-12-31")), None);
        assert_eq!(
            t.tier_on("Acme", mc, d("2025-02-28")),
            Some(OperatorTier::Gold)
        );
        assert_eq!(
            t.tier_on("ACME", mc, d("2025-03-01")),
            Some(OperatorTier::Platinum)
        );
        assert_eq!(
            t.tier_on("Acme", ServiceScope::BareMetal, d("2025-06-01")),
            None,
            "scope-bound"
        );
        let err = RatingTable::from_csv_text(
            "operator,scope,tier,effective_from,source\nA,vm,diamond,2025-01-01,x\n",
            "r.csv",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("r.csv") && err.contains("row 1") && err.contains("diamond"),
            "{err}"
        );
    }
}
