//! Contributor identity: the one name a contributor is counted, capped and kept
//! confidential under, whatever the spelling of its rows (`LoneCo`, `loneco`,
//! `LONECO`, `Lone Co` and `LoneCo.` are one contributor, not five that pass a
//! minimum of four). A name is folded (case, punctuation and whitespace, trailing
//! legal forms: [`fold`]) and looked up in the alias table `data/contributors.toml`,
//! plus any entries a methodology adds (`contributors.aliases`). The store keeps
//! the raw spelling; folding happens only where contributors are counted.

use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

const BUNDLED: &str = rentix_core::bundled::data::CONTRIBUTORS;

/// Trailing words that are a legal form, not part of a contributor's name.
const LEGAL_WORDS: [&str; 25] = [
    "inc",
    "incorporated",
    "llc",
    "llp",
    "lp",
    "ltd",
    "limited",
    "gmbh",
    "ag",
    "sa",
    "sas",
    "sarl",
    "srl",
    "bv",
    "nv",
    "plc",
    "pty",
    "pte",
    "oy",
    "ab",
    "kk",
    "co",
    "corp",
    "corporation",
    "company",
];

/// Legal forms also dropped when glued to the end of a name ("LoneCo").
const GLUED: [&str; 5] = ["inc", "llc", "ltd", "gmbh", "co"];

/// Characters a glued legal form must leave before it is dropped.
const MIN_STEM: usize = 3;

/// The folded form of a contributor name: lowercase letters and digits, trailing
/// legal forms dropped (as words, then one glued to the end), words joined.
/// `fold("LoneCo.") == fold("Lone Co") == "lone"`. A name that is nothing but a
/// legal form (`"Inc."`) keeps it, so no name folds to the empty string unless it
/// has no letter or digit at all.
pub(crate) fn fold(name: &str) -> String {
    let lower = name.to_lowercase();
    let mut words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    while words.len() > 1 && words.last().is_some_and(|w| LEGAL_WORDS.contains(w)) {
        words.pop();
    }
    let mut joined: String = words.concat();
    for g in GLUED {
        if joined.len() >= g.len() + MIN_STEM && joined.ends_with(g) {
            joined.truncate(joined.len() - g.len());
            break;
        }
    }
    joined
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    contributor: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    id: String,
    aliases: Vec<String>,
}

/// Folded alias -> folded identity.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ContributorAliases {
    to_id: HashMap<String, String>,
}

impl ContributorAliases {
    /// The bundled table (`data/contributors.toml`).
    pub(crate) fn bundled() -> &'static Self {
        static TABLE: OnceLock<ContributorAliases> = OnceLock::new();
        TABLE.get_or_init(|| {
            // The bundled file is checked by a test; a broken one would leave
            // folding alone in force rather than stop every run.
            Self::parse(BUNDLED).unwrap_or_default()
        })
    }

    fn parse(text: &str) -> Result<Self, String> {
        let file: File = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut t = Self::default();
        for e in file.contributor {
            t.add(&e.id, &e.aliases)?;
        }
        Ok(t)
    }

    /// The bundled table with `extra` (canonical name -> spellings) added.
    pub(crate) fn with(extra: &BTreeMap<String, Vec<String>>) -> Result<Self, String> {
        let mut t = Self::bundled().clone();
        for (id, aliases) in extra {
            t.add(id, aliases)?;
        }
        Ok(t)
    }

    fn add(&mut self, id: &str, aliases: &[String]) -> Result<(), String> {
        let target = fold(id);
        if target.is_empty() {
            return Err(format!(
                "contributor alias id {id:?} has no letter or digit"
            ));
        }
        for a in aliases.iter().map(String::as_str).chain([id]) {
            let key = fold(a);
            match self.to_id.get(&key) {
                Some(other) if *other != target => {
                    return Err(format!(
                        "contributor alias {a:?} is both {other:?} and {target:?}"
                    ))
                }
                _ => {
                    self.to_id.insert(key, target.clone());
                }
            }
        }
        Ok(())
    }

    /// The identity a raw contributor name counts as.
    pub(crate) fn identity(&self, raw: &str) -> String {
        let key = fold(raw);
        match self.to_id.get(&key) {
            Some(id) => id.clone(),
            None => key,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_spellings_of_one_company_fold_to_one_name() {
        for s in ["LoneCo", "loneco", "LONECO", "Lone Co", "LoneCo."] {
            assert_eq!(fold(s), "lone", "{s}");
        }
        assert_eq!(fold("Acme Cloud, Inc."), "acmecloud");
        assert_eq!(fold("  acme   CLOUD  "), "acmecloud");
        assert_eq!(fold("Fjord Compute GmbH"), "fjordcompute");
        assert_eq!(fold("Foo Pty Ltd"), "foo");
        // A glued form needs three characters before it; a bare legal form stays.
        assert_eq!(fold("Zinc"), "zinc");
        assert_eq!(fold("Inc."), "inc");
        assert_eq!(fold("Co"), "co");
        // Names of the simulated market stay distinct.
        assert_ne!(fold("Cumulus Cloud"), fold("Corvid Cloud"));
    }

    #[test]
    fn aliases_map_spellings_to_one_identity_and_refuse_conflicts() {
        let t = ContributorAliases::bundled();
        assert_eq!(t.identity("Lambda Labs"), "lambda");
        assert_eq!(t.identity("LAMBDA"), "lambda");
        assert_eq!(t.identity("vast.ai"), t.identity("Vast AI"));
        assert_eq!(t.identity("Unknown Cloud Ltd"), "unknowncloud");
        let extra = BTreeMap::from([("LoneCo".to_string(), vec!["Solitary Holdings".to_string()])]);
        let t = ContributorAliases::with(&extra).unwrap();
        assert_eq!(t.identity("Solitary Holdings"), "lone");
        assert_eq!(
            ContributorAliases::bundled().identity("Solitary Holdings"),
            "solitaryholdings"
        );
        // "AWS" is Amazon Web Services in the bundled table: not also Google.
        let bad = BTreeMap::from([("Google".to_string(), vec!["AWS".to_string()])]);
        let e = ContributorAliases::with(&bad).unwrap_err();
        assert!(e.contains("\"AWS\""), "{e}");
    }

    #[test]
    fn the_bundled_table_loads() {
        assert!(ContributorAliases::parse(BUNDLED).is_ok());
        assert!(ContributorAliases::bundled().to_id.len() > 20);
    }
}
