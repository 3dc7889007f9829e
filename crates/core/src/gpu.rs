//! GPU models: the bundled catalog (`data/gpus.toml`) and the alias table that maps
//! the raw names providers use to canonical ids.

use crate::error::CoreError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Canonical GPU id, e.g. `h100-sxm-80gb`: lowercase ASCII letters, digits and `-`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct GpuModel(std::sync::Arc<str>);

impl GpuModel {
    /// Checks the id's syntax only; whether the catalog knows it is
    /// [`GpuCatalog::get`]'s question.
    pub fn new(id: &str) -> Result<Self, CoreError> {
        let ok = !id.is_empty()
            && id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if ok {
            Ok(Self(id.into()))
        } else {
            Err(CoreError::Unknown {
                what: "gpu id",
                value: id.to_string(),
                expected: "lowercase letters, digits and '-'".into(),
            })
        }
    }

    /// The canonical id, e.g. `h100-sxm-80gb`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for GpuModel {
    type Error = CoreError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        GpuModel::new(&s)
    }
}

impl From<GpuModel> for String {
    fn from(g: GpuModel) -> String {
        g.0.to_string()
    }
}

impl fmt::Display for GpuModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What the catalog knows about one GPU model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuSpec {
    /// Canonical id; it is also an alias of itself.
    pub id: GpuModel,
    /// Maker, lowercase: `nvidia`, `amd`, ...
    pub vendor: String,
    /// Product family without form factor or memory, e.g. `h100`.
    pub family: String,
    /// Architecture, lowercase, e.g. `hopper`, `blackwell`.
    pub arch: String,
    /// Year of first general availability.
    pub launch_year: i32,
    /// Package, lowercase: `sxm`, `pcie`, `superchip`, `oam` or `card` in the bundled
    /// catalog (not checked against a list).
    pub form_factor: String,
    /// Memory per GPU, in GB.
    pub memory_gb: f64,
    /// Raw provider names that resolve to this id (matched by `alias_key`);
    /// empty when the file gives none.
    #[serde(default)]
    pub aliases: Vec<String>,
}

#[derive(Deserialize)]
struct CatalogFile {
    gpu: Vec<GpuSpec>,
}

/// The GPU catalog with its alias index.
#[derive(Debug, Clone)]
pub struct GpuCatalog {
    specs: BTreeMap<GpuModel, GpuSpec>,
    /// alias key -> canonical id, looked up once per row read (never iterated).
    aliases: std::collections::HashMap<String, GpuModel, foldhash::fast::RandomState>,
}

const BUNDLED: &str = crate::bundled::data::GPUS;

/// The alias key of a raw name: lowercase, with everything except `a-z0-9` removed.
/// "H100_80GB/SXM5" and "h100 80gb sxm5" share the key `h10080gbsxm5`.
pub(crate) fn alias_key(raw: &str) -> String {
    raw.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

impl GpuCatalog {
    /// The catalog shipped in `data/gpus.toml`, compiled into the binary.
    #[allow(
        clippy::expect_used,
        reason = "compiled-in data, checked by a unit test"
    )]
    pub fn bundled() -> Self {
        // The bundled file is checked by a unit test; failing here is a build defect.
        Self::from_toml(BUNDLED).expect("data/gpus.toml is valid")
    }

    /// Parses a catalog file; refuses an alias that points at two ids.
    pub fn from_toml(text: &str) -> Result<Self, CoreError> {
        let file: CatalogFile =
            toml::from_str(text).map_err(|e| CoreError::Catalog(e.to_string()))?;
        let mut cat = GpuCatalog {
            specs: BTreeMap::new(),
            aliases: std::collections::HashMap::default(),
        };
        for spec in file.gpu {
            if cat.specs.contains_key(&spec.id) {
                return Err(CoreError::Catalog(format!("duplicate id {}", spec.id)));
            }
            let id = spec.id.clone();
            let names: Vec<String> = std::iter::once(id.to_string())
                .chain(spec.aliases.iter().cloned())
                .collect();
            cat.specs.insert(id.clone(), spec);
            for name in names {
                cat.add_alias(&name, &id)?;
            }
        }
        Ok(cat)
    }

    /// Adds an alias (for example from a mapping file). An alias that already maps
    /// to a different id is an error; re-adding the same mapping is a no-op.
    pub fn add_alias(&mut self, raw: &str, id: &GpuModel) -> Result<(), CoreError> {
        if !self.specs.contains_key(id) {
            return Err(CoreError::Catalog(format!(
                "alias {raw:?} points at unknown GPU id {id}"
            )));
        }
        let key = alias_key(raw);
        if key.is_empty() {
            return Err(CoreError::Catalog(format!(
                "alias {raw:?} has no letters or digits"
            )));
        }
        match self.aliases.get(&key) {
            Some(existing) if existing != id => Err(CoreError::Catalog(format!(
                "alias {raw:?} maps to both {existing} and {id}"
            ))),
            _ => {
                self.aliases.insert(key, id.clone());
                Ok(())
            }
        }
    }

    /// Resolves a raw provider name to its catalog entry.
    pub fn resolve(&self, raw: &str) -> Result<&GpuSpec, CoreError> {
        // The key of a name of up to 64 bytes is built on the stack: this runs once
        // per observation read.
        let mut buf = [0u8; 64];
        let mut len = 0;
        let key = if raw.len() <= buf.len() {
            for b in raw.bytes().filter(u8::is_ascii_alphanumeric) {
                buf[len] = b.to_ascii_lowercase();
                len += 1;
            }
            // ASCII letters and digits only: always UTF-8.
            std::borrow::Cow::Borrowed(std::str::from_utf8(&buf[..len]).unwrap_or_default())
        } else {
            std::borrow::Cow::Owned(alias_key(raw))
        };
        self.aliases
            .get(key.as_ref())
            .and_then(|id| self.specs.get(id))
            .ok_or_else(|| CoreError::Unknown {
                what: "gpu",
                value: raw.to_string(),
                expected: "a canonical id or an alias in data/gpus.toml".into(),
            })
    }

    /// The entry for a canonical id; `None` if the catalog does not know it.
    /// Aliases are not resolved here (see [`GpuCatalog::resolve`]).
    pub fn get(&self, id: &GpuModel) -> Option<&GpuSpec> {
        self.specs.get(id)
    }

    /// Every entry, in id order.
    pub fn specs(&self) -> impl Iterator<Item = &GpuSpec> {
        self.specs.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_resolve() {
        let cases: [(&str, &str); 11] = [
            ("NVIDIA H100 80GB HBM3", "h100-sxm-80gb"),
            ("H100 SXM", "h100-sxm-80gb"),
            ("H100_80GB/SXM5", "h100-sxm-80gb"),
            ("a3-highgpu-8g", "h100-sxm-80gb"),
            ("h100-sxm-80gb", "h100-sxm-80gb"),
            ("H100_80GB PCIe", "h100-pcie-80gb"),
            ("H200_141GB ", "h200-sxm-141gb"),
            ("B200_180GB", "b200-sxm-180gb"),
            ("A100 (80 GB)", "a100-sxm-80gb"),
            ("T4 (16)", "t4-16gb"),
            ("AMD Instinct MI300X", "mi300x-192gb"),
        ];
        for (raw, id) in cases {
            let cat = GpuCatalog::bundled();
            assert_eq!(cat.resolve(raw).unwrap().id.as_str(), id, "{raw}");
        }
    }

    /// The key is built on the stack up to 64 bytes and on the heap beyond: both
    /// resolve the same, and a non-ASCII letter is left out as punctuation is.
    #[test]
    fn long_and_non_ascii_names_resolve_as_short_ones() {
        let cat = GpuCatalog::bundled();
        let padded = format!("{:-<70}", "NVIDIA H100 80GB HBM3");
        assert!(padded.len() > 64);
        assert_eq!(cat.resolve(&padded).unwrap().id.as_str(), "h100-sxm-80gb");
        let at_64 = format!("{:-<64}", "H100 SXM");
        assert_eq!(cat.resolve(&at_64).unwrap().id.as_str(), "h100-sxm-80gb");
        assert_eq!(
            cat.resolve("H100 \u{2013} SXM").unwrap().id.as_str(),
            "h100-sxm-80gb"
        );
        assert_eq!(
            cat.resolve("H100é SXM").unwrap().id.as_str(),
            "h100-sxm-80gb"
        );
        assert!(cat.resolve(&format!("{:-<70}", "3080Ti")).is_err());
    }

    #[test]
    fn unknown_and_conflicting_names_are_errors() {
        let mut cat = GpuCatalog::bundled();
        assert!(cat.resolve("3080Ti ()").is_err());
        assert!(cat.resolve("").is_err());
        let pcie = GpuModel::new("h100-pcie-80gb").unwrap();
        assert!(cat.add_alias("H100 SXM", &pcie).is_err());
        assert!(cat.add_alias("my-h100-pcie", &pcie).is_ok());
        assert_eq!(cat.resolve("MY H100 PCIE").unwrap().id, pcie);
    }

    #[test]
    fn catalog_has_the_spec_gpus() {
        let cat = GpuCatalog::bundled();
        for id in [
            "a100-sxm-80gb",
            "a100-pcie-40gb",
            "h100-sxm-80gb",
            "h100-pcie-80gb",
            "h200-sxm-141gb",
            "b200-sxm-180gb",
            "gh200-96gb",
            "mi300x-192gb",
            "l40s-48gb",
            "l4-24gb",
            "rtx4090-24gb",
        ] {
            assert!(cat.get(&GpuModel::new(id).unwrap()).is_some(), "{id}");
        }
    }
}
