//! Mapping files: how a foreign layout (a marketplace dump, a rate card) becomes
//! canonical observations.
//!
//! A mapping has one or more `[[emit]]` blocks; each turns one input record into one
//! candidate observation. Every canonical field of a block is a *template*: literal
//! text with `{Column}` placeholders, optionally filtered as `{Column|digits}`
//! (first run of digits; refused on a decimal field), `{Column|number}` (a price
//! cell without its leading currency sign: "$40.97" is 40.97), `{Column|lower}`,
//! `{Column|upper}`. A block with
//! `when = "Column"` emits only when that column is non-empty (a rate card with an
//! optional spot price). `[value_map.FIELD]` tables rewrite a field's value after the
//! template (e.g. `"Secure Cloud" = "vm"`), and `[aliases]` adds GPU aliases.
//! The canonical layout is the identity mapping built from the header.

use crate::error::{IngestError, Result};
use crate::raw::{is_canonical_field, RawObservation, REQUIRED_FIELDS};
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Filter {
    None,
    Digits,
    /// A price cell as rate cards write it: a leading currency sign (`$`, `US$`,
    /// `€`, `£`) and the spaces around it dropped, the rest as it stands ("$40.97"
    /// is 40.97; "$1,234.50" keeps its comma and is refused as a price).
    Number,
    Lower,
    Upper,
}

/// Canonical fields that hold a decimal number: `|digits` (the first run of
/// digits) would read "$1.99" as 1 in them, half the price, without a word.
const DECIMAL_FIELDS: [&str; 3] = ["price", "quantity_gpu_hours", "upfront"];

#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(String),
    Column { name: String, filter: Filter },
}

/// A parsed field template.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Template {
    pieces: Vec<Piece>,
}

impl Template {
    /// Parses literal text with `{Column}` and `{Column|digits|number|lower|upper}`
    /// placeholders; fails on an unclosed brace, an empty column name or an unknown
    /// filter.
    pub(crate) fn parse(text: &str) -> std::result::Result<Self, String> {
        // A record's fields are checked for control characters only when its bytes
        // hold one (`control_character`): the mapping's own text is checked here.
        if let Some(c) = text.chars().find(|c| c.is_control()) {
            return Err(format!(
                "template {text:?} holds the control character U+{:04X}: a field may not hold one",
                u32::from(c)
            ));
        }
        let mut pieces = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                pieces.push(Piece::Text(rest[..open].to_string()));
            }
            let close = rest[open..]
                .find('}')
                .ok_or_else(|| format!("unclosed '{{' in template {text:?}"))?;
            let inner = &rest[open + 1..open + close];
            let (name, filter) = match inner.split_once('|') {
                Some((n, "digits")) => (n, Filter::Digits),
                Some((n, "number")) => (n, Filter::Number),
                Some((n, "lower")) => (n, Filter::Lower),
                Some((n, "upper")) => (n, Filter::Upper),
                Some((_, f)) => return Err(format!("unknown filter {f:?} in template {text:?}")),
                None => (inner, Filter::None),
            };
            if name.is_empty() {
                return Err(format!("empty column name in template {text:?}"));
            }
            pieces.push(Piece::Column {
                name: name.to_string(),
                filter,
            });
            rest = &rest[open + close + 1..];
        }
        if !rest.is_empty() {
            pieces.push(Piece::Text(rest.to_string()));
        }
        Ok(Self { pieces })
    }

    /// Whether the template is one column as it stands (no text around it, no
    /// filter): the value is the cell itself.
    fn is_plain_column(&self) -> bool {
        matches!(
            self.pieces.as_slice(),
            [Piece::Column {
                filter: Filter::None,
                ..
            }]
        )
    }

    fn has_filter(&self, f: Filter) -> bool {
        self.pieces
            .iter()
            .any(|p| matches!(p, Piece::Column { filter, .. } if *filter == f))
    }

    fn columns(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().filter_map(|p| match p {
            Piece::Column { name, .. } => Some(name.as_str()),
            Piece::Text(_) => None,
        })
    }

    /// Renders against a record, `at` holding the record position of each of the
    /// template's columns in order ([`Mapping::bind`]). If every referenced column
    /// is empty the result is `None` (a missing value), whatever literal text
    /// surrounds them.
    fn render<'r, S: AsRef<str>>(
        &self,
        record: &'r [S],
        at: &[Option<usize>],
    ) -> Option<Cow<'r, str>> {
        let cell = |k: usize| {
            at.get(k)
                .copied()
                .flatten()
                .and_then(|i| record.get(i))
                .map(|s| crate::raw::trim(s.as_ref()))
                .unwrap_or("")
        };
        // The common case, one plain column: borrowed as it stands, no copy.
        if let [Piece::Column {
            filter: Filter::None,
            ..
        }] = self.pieces.as_slice()
        {
            let v = cell(0);
            return (!v.is_empty()).then_some(Cow::Borrowed(v));
        }
        let mut out = String::new();
        let mut columns = 0;
        let mut any_value = false;
        for p in &self.pieces {
            match p {
                Piece::Text(t) => out.push_str(t),
                Piece::Column { filter, .. } => {
                    let v = cell(columns);
                    columns += 1;
                    let v = match filter {
                        Filter::None => v.to_string(),
                        Filter::Lower => v.to_lowercase(),
                        Filter::Upper => v.to_uppercase(),
                        Filter::Digits => v
                            .chars()
                            .skip_while(|c| !c.is_ascii_digit())
                            .take_while(|c| c.is_ascii_digit())
                            .collect(),
                        Filter::Number => number_cell(v).to_string(),
                    };
                    any_value |= !v.is_empty();
                    out.push_str(&v);
                }
            }
        }
        if columns > 0 && !any_value {
            None
        } else {
            Some(Cow::Owned(out))
        }
    }
}

/// Other names a canonical column goes by in files people export, folded as
/// [`look_alike_columns`] folds them.
const COLUMN_SYNONYMS: [(&str, &str); 22] = [
    ("id", "obs_id"),
    ("observationid", "obs_id"),
    ("tradeid", "obs_id"),
    ("tier", "operator_tier"),
    ("rating", "operator_tier"),
    ("gpus", "gpus_per_unit"),
    ("gpucount", "gpus_per_unit"),
    ("numgpus", "gpus_per_unit"),
    ("ngpus", "gpus_per_unit"),
    ("gpuspernode", "gpus_per_unit"),
    ("gpusperinstance", "gpus_per_unit"),
    ("quantity", "quantity_gpu_hours"),
    ("qty", "quantity_gpu_hours"),
    ("volume", "quantity_gpu_hours"),
    ("gpuhours", "quantity_gpu_hours"),
    ("ccy", "currency"),
    ("unit", "price_unit"),
    ("location", "region"),
    ("clustersize", "cluster_gpus"),
    ("network", "interconnect"),
    ("fabric", "interconnect"),
    ("start", "term_start"),
];

/// Columns of a canonical-layout header that no field reads but that look like a
/// canonical column the header lacks, each with that column: a name that holds
/// it (`upfront_usd`, `region_name`), one it ends (`tier`), or a common other
/// name (`gpu_count`, `quantity`, `id`). Each left every row without the field,
/// without a word (a hostile round: a one-year reservation's `upfront_usd` was
/// dropped and the fixing halved). Reported, not refused: a file may carry
/// columns of its own.
pub(crate) fn look_alike_columns(header: &[String]) -> BTreeMap<String, String> {
    let fold = |name: &str| -> String {
        name.chars()
            .filter(|c| !matches!(c, '_' | '-' | ' ' | '.'))
            .flat_map(char::to_lowercase)
            .collect()
    };
    let absent: Vec<(&str, String)> = rentix_core::CANONICAL_COLUMNS
        .iter()
        .filter(|c| !header.iter().any(|h| h == *c))
        .map(|c| (*c, fold(c)))
        .collect();
    let mut out = BTreeMap::new();
    for h in header.iter().filter(|h| !is_canonical_field(h)) {
        let f = fold(h);
        let synonym = COLUMN_SYNONYMS
            .iter()
            .find(|(s, c)| *s == f && absent.iter().any(|(a, _)| a == c))
            .map(|(_, c)| *c);
        let affix = || {
            absent
                .iter()
                .find(|(_, a)| {
                    a.len() >= 4 && (f.starts_with(a.as_str()) || f.ends_with(a.as_str()))
                        || f.len() >= 4 && a.ends_with(f.as_str())
                })
                .map(|(c, _)| *c)
        };
        if let Some(c) = synonym.or_else(affix) {
            out.insert(h.clone(), c.to_string());
        }
    }
    out
}

/// `cell` without a leading currency sign and the spaces after it (`|number`); a
/// cell that starts otherwise ("-$5", "1,234") stands as it is and is refused, or
/// read, as the field's own rules say.
fn number_cell(cell: &str) -> &str {
    let t = cell.trim();
    ["US$", "$", "€", "£"]
        .iter()
        .find_map(|c| t.strip_prefix(c))
        .map_or(t, str::trim_start)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MappingFile {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    emit: Vec<BTreeMap<String, String>>,
    #[serde(default)]
    value_map: BTreeMap<String, BTreeMap<String, String>>,
    #[serde(default)]
    aliases: BTreeMap<String, String>,
}

#[derive(Debug, Clone)]
struct Emit {
    when: Option<String>,
    fields: Vec<(String, Template)>,
}

/// A validated mapping from some layout to canonical observations.
#[derive(Debug, Clone)]
pub struct Mapping {
    /// The mapping's `name`, recorded as the run summary's `mapping`
    /// (`canonical` for the identity mapping).
    pub name: String,
    /// Free text for a person.
    pub description: String,
    emits: Vec<Emit>,
    value_map: BTreeMap<String, BTreeMap<String, String>>,
    /// Extra GPU aliases: raw name -> canonical id.
    pub aliases: BTreeMap<String, String>,
}

impl Mapping {
    /// Reads (within the config size limit) and validates a mapping file.
    pub fn from_file(path: &Path) -> Result<Self> {
        let text =
            rentix_core::read_config(path, rentix_core::ConfigKind::Mapping).map_err(|source| {
                IngestError::Read {
                    path: path.to_path_buf(),
                    source,
                }
            })?;
        Self::from_toml(&text, path)
    }

    /// Parses and validates mapping TOML: at least one `[[emit]]` block (or
    /// `[aliases]` or `[value_map]` alone, for the canonical layout), at most
    /// `MAX_EMIT_BLOCKS`; `path` names it in errors.
    pub fn from_toml(text: &str, path: &Path) -> Result<Self> {
        let err = |detail: String| IngestError::Mapping {
            path: path.to_path_buf(),
            detail,
        };
        let file: MappingFile = toml::from_str(text).map_err(|e| err(e.to_string()))?;
        if file.emit.is_empty() && file.aliases.is_empty() && file.value_map.is_empty() {
            return Err(err(
                "at least one [[emit]] block is needed (or, for files in the canonical layout, [aliases] or [value_map] alone)".into(),
            ));
        }
        if file.emit.len() > crate::sizes::MAX_EMIT_BLOCKS {
            return Err(err(format!(
                "{} [[emit]] blocks is more than the {} a mapping may have (each block makes one observation of every record)",
                file.emit.len(),
                crate::sizes::MAX_EMIT_BLOCKS
            )));
        }
        let mut emits = Vec::new();
        for (i, block) in file.emit.into_iter().enumerate() {
            let mut when = None;
            let mut fields = Vec::new();
            for (field, tpl) in block {
                if field == "when" {
                    when = Some(tpl);
                    continue;
                }
                if !is_canonical_field(&field) {
                    return Err(err(format!(
                        "emit block {}: {field:?} is not a canonical field",
                        i + 1
                    )));
                }
                let t =
                    Template::parse(&tpl).map_err(|e| err(format!("emit block {}: {e}", i + 1)))?;
                if DECIMAL_FIELDS.contains(&field.as_str()) && t.has_filter(Filter::Digits) {
                    return Err(err(format!(
                        "emit block {}: {field} = {tpl:?}: |digits keeps the first run of digits and would read \"$1.99\" as 1; a decimal field takes |number (\"$40.97\" is 40.97) or the column as it stands",
                        i + 1
                    )));
                }
                fields.push((field, t));
            }
            for req in REQUIRED_FIELDS {
                if !fields.iter().any(|(f, _)| f == req) {
                    return Err(err(format!(
                        "emit block {}: required field {req:?} is not mapped",
                        i + 1
                    )));
                }
            }
            emits.push(Emit { when, fields });
        }
        for field in file.value_map.keys() {
            if !is_canonical_field(field) {
                return Err(err(format!("value_map.{field}: not a canonical field")));
            }
        }
        Ok(Self {
            name: file.name,
            description: file.description,
            emits,
            value_map: file.value_map,
            aliases: file.aliases,
        })
    }

    /// The mapping that reads a file with `header`: this one, or, when it has no
    /// `[[emit]]` block (only `[aliases]` or `[value_map]`), the canonical layout with
    /// its value maps. Errors if a column it needs is absent.
    pub fn for_header(&self, header: &[String], path: &Path) -> Result<Cow<'_, Self>> {
        if self.emits.is_empty() {
            let mut canonical = Self::canonical(header, path)?;
            canonical.name.clone_from(&self.name);
            canonical.value_map.clone_from(&self.value_map);
            canonical.aliases.clone_from(&self.aliases);
            return Ok(Cow::Owned(canonical));
        }
        self.check_header(header, path)?;
        Ok(Cow::Borrowed(self))
    }

    /// Whether the mapping reads the canonical layout (no `[[emit]]` block of its
    /// own): its columns are the canonical names, and a column of another name is
    /// not read.
    pub fn reads_canonical_layout(&self) -> bool {
        self.emits.is_empty()
    }

    /// The identity mapping for the canonical layout, built from a file's header.
    /// Errors if a required column is absent.
    pub fn canonical(header: &[String], path: &Path) -> Result<Self> {
        let mut fields = Vec::new();
        // A column named as a canonical one but for its case or separators (`Price`,
        // `Quantity-GPU-Hours`) was read as no column at all: beside `price`, a
        // second price column silently ignored; alone, an optional field (a region,
        // a quantity) silently empty.
        let fold = |name: &str| -> String {
            name.chars()
                .filter(|c| !matches!(c, '_' | '-' | ' '))
                .flat_map(char::to_lowercase)
                .collect()
        };
        for h in header.iter().filter(|h| !is_canonical_field(h)) {
            if let Some(field) = rentix_core::CANONICAL_COLUMNS
                .iter()
                .find(|c| fold(c) == fold(h))
            {
                return Err(IngestError::BadHeader {
                    path: path.to_path_buf(),
                    detail: format!(
                        "column {h:?} is not read: the canonical column is {field:?} (names are exact); rename it{}",
                        if header.iter().any(|x| x == field) {
                            format!(", or drop it: the file has {field:?} too")
                        } else {
                            String::new()
                        }
                    ),
                });
            }
        }
        // A column one or two letters from a canonical column the file lacks
        // (`operater_tier`) left every row without that field, without a word.
        for h in header.iter().filter(|h| !is_canonical_field(h)) {
            let near = rentix_core::CANONICAL_COLUMNS.iter().find(|c| {
                let (a, b) = (fold(c), fold(h));
                let most = if a.chars().count() <= 5 { 1 } else { 2 };
                !header.iter().any(|x| x == *c) && strsim::levenshtein(&a, &b) <= most
            });
            if let Some(field) = near {
                return Err(IngestError::BadHeader {
                    path: path.to_path_buf(),
                    detail: format!(
                        "column {h:?} is not a canonical column: did you mean {field:?}? (names are exact; a misspelt column would leave every row without {field})"
                    ),
                });
            }
        }
        // Checked after the names above, so that `KIND` is told it is `kind`
        // rather than that the header has no column "kind".
        for req in REQUIRED_FIELDS {
            if !header.iter().any(|h| h == req) {
                return Err(IngestError::MissingColumn {
                    path: path.to_path_buf(),
                    column: req.to_string(),
                    field: req.to_string(),
                });
            }
        }
        for h in header {
            if is_canonical_field(h) {
                let t = Template {
                    pieces: vec![Piece::Column {
                        name: h.clone(),
                        filter: Filter::None,
                    }],
                };
                fields.push((h.clone(), t));
            }
        }
        Ok(Self {
            name: "canonical".into(),
            description: "rentix canonical observations CSV".into(),
            emits: vec![Emit { when: None, fields }],
            value_map: BTreeMap::new(),
            aliases: BTreeMap::new(),
        })
    }

    /// Checks that every column the mapping reads exists in `header`.
    pub fn check_header(&self, header: &[String], path: &Path) -> Result<()> {
        for emit in &self.emits {
            let cols = emit
                .fields
                .iter()
                .flat_map(|(f, t)| t.columns().map(move |c| (f.as_str(), c)))
                .chain(emit.when.iter().map(|w| ("when", w.as_str())));
            for (field, col) in cols {
                if !header.iter().any(|h| h == col) {
                    return Err(IngestError::MissingColumn {
                        path: PathBuf::from(path),
                        column: col.to_string(),
                        field: field.to_string(),
                    });
                }
            }
        }
        Ok(())
    }

    /// The mapping resolved against a file's header ([`Mapping::check_header`]
    /// first): every column it reads becomes a record position and every field a
    /// slot, so that mapping a record looks up no name.
    pub fn bind(&self, header: &[String]) -> BoundMapping<'_> {
        let position = |col: &str| header.iter().position(|h| h == col);
        let emits = self
            .emits
            .iter()
            .map(|emit| {
                let fields: Vec<BoundField<'_>> = emit
                    .fields
                    .iter()
                    .filter_map(|(field, template)| {
                        Some(BoundField {
                            slot: crate::raw::field_position(field)?,
                            template,
                            columns: template.columns().map(position).collect(),
                            value_map: self.value_map.get(field),
                        })
                    })
                    .collect();
                let direct = fields
                    .iter()
                    .all(|f| f.template.is_plain_column() && f.value_map.is_none())
                    .then(|| fields.iter().map(|f| (f.columns[0], f.slot)).collect());
                BoundEmit {
                    when: emit.when.as_deref().map(position),
                    fields,
                    direct,
                }
            })
            .collect();
        BoundMapping { emits }
    }
}

/// A [`Mapping`] resolved against one file's header ([`Mapping::bind`]).
#[derive(Debug)]
pub struct BoundMapping<'m> {
    emits: Vec<BoundEmit<'m>>,
}

#[derive(Debug)]
struct BoundEmit<'m> {
    /// The column that must be non-empty for the block to emit (`Some(None)`: a
    /// column the header lacks, so never).
    when: Option<Option<usize>>,
    fields: Vec<BoundField<'m>>,
    /// Where every field is one column as it stands (the canonical file's
    /// mapping): each field's record position and slot, so that a record is
    /// copied cell by cell without rendering templates (the rendering was 6% of
    /// a one-shot's CPU, issue 48). The same values as rendering.
    direct: Option<Vec<(Option<usize>, usize)>>,
}

#[derive(Debug)]
struct BoundField<'m> {
    /// Position in [`rentix_core::CANONICAL_COLUMNS`].
    slot: usize,
    template: &'m Template,
    /// Record position of each of the template's columns, in order.
    columns: Vec<Option<usize>>,
    value_map: Option<&'m BTreeMap<String, String>>,
}

/// The candidates one record makes: one, for nearly every mapping, held inline
/// (a vector per record was an allocation and a free per row on the read path).
#[cfg(test)]
pub(crate) type Emitted<'r> = smallvec::SmallVec<[RawObservation<'r>; 1]>;

impl BoundMapping<'_> {
    /// Applies every emit block to one record.
    #[cfg(test)]
    pub fn apply<'r, S: AsRef<str>>(&self, record: &'r [S]) -> Emitted<'r> {
        let mut out = Emitted::new();
        self.each(record, |raw| out.push(raw.clone()));
        out
    }

    /// Applies every emit block to one record, showing `take` each candidate
    /// made, in order: one on the stack at a time (a candidate is 432 bytes; a
    /// vector of them moved each one twice more, 2% of a one-shot).
    pub fn each<'r, S: AsRef<str>>(
        &self,
        record: &'r [S],
        mut take: impl FnMut(&RawObservation<'r>),
    ) {
        let mut raw = RawObservation::default();
        for emit in &self.emits {
            if let Some(col) = emit.when {
                let present = col
                    .and_then(|i| record.get(i))
                    .is_some_and(|v| !crate::raw::trim(v.as_ref()).is_empty());
                if !present {
                    continue;
                }
            }
            raw.clear();
            if let Some(direct) = &emit.direct {
                for &(col, slot) in direct {
                    let v = col
                        .and_then(|i| record.get(i))
                        .map(|v| crate::raw::trim(v.as_ref()))
                        .filter(|v| !v.is_empty());
                    raw.put_trimmed(slot, v.map(Cow::Borrowed));
                }
                take(&raw);
                continue;
            }
            for f in &emit.fields {
                let mut v = f.template.render(record, &f.columns);
                if let (Some(map), Some(val)) = (f.value_map, v.as_ref()) {
                    if let Some(m) = map.get(val.trim()) {
                        v = Some(Cow::Owned(m.clone()));
                    }
                }
                raw.set_at(f.slot, v);
            }
            take(&raw);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idx(h: &[&str]) -> Vec<String> {
        h.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn templates_filters_when_and_value_maps() {
        let m = Mapping::from_toml(
            r#"
name = "t"
[[emit]]
kind = "listing"
observed_at = "{ts}"
source = "x:{who|lower}"
gpu = "{g} {sock}"
scope = "{plan}"
term = "on-demand"
price = "{od}"
price_unit = "instance_hour"
gpus_per_unit = "{cfg|digits}"
currency = "USD"
[[emit]]
when = "spot"
kind = "listing"
observed_at = "{ts}"
source = "x:{who|lower}"
gpu = "{g} {sock}"
scope = "{plan}"
term = "spot"
price = "{spot}"
price_unit = "instance_hour"
gpus_per_unit = "{cfg|digits}"
currency = "USD"
[value_map.scope]
"Secure Cloud" = "vm"
"#,
            Path::new("m.toml"),
        )
        .unwrap();
        let header = idx(&["ts", "who", "g", "sock", "plan", "od", "spot", "cfg"]);
        m.check_header(&header, Path::new("f.csv")).unwrap();
        let rec: Vec<String> = [
            "2025-01-01",
            "ACME",
            "H100_80GB",
            "",
            "Secure Cloud",
            "16",
            "",
            "8x",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let out = m.bind(&header).apply(&rec);
        assert_eq!(
            out.len(),
            1,
            "no spot column value, so only the on-demand block emits"
        );
        assert_eq!(out[0].source.as_deref(), Some("x:acme"));
        assert_eq!(out[0].gpu.as_deref(), Some("H100_80GB"));
        assert_eq!(out[0].scope.as_deref(), Some("vm"));
        assert_eq!(out[0].gpus_per_unit.as_deref(), Some("8"));
        let bad_header = idx(&["ts", "who"]);
        let e = m.check_header(&bad_header, Path::new("f.csv")).unwrap_err();
        assert!(e.to_string().contains("\"g\""), "{e}");
    }

    /// Each emit block starts from empty fields: a field the first block sets
    /// and the second does not is empty in the second candidate (candidates are
    /// built one after another in the same place).
    #[test]
    fn each_block_starts_empty() {
        let m = Mapping::from_toml(
            r#"
name = "t"
[[emit]]
kind = "trade"
observed_at = "{ts}"
source = "s"
gpu = "h100"
scope = "vm"
term = "1y"
price = "{p}"
price_unit = "gpu_hour"
currency = "USD"
quantity_gpu_hours = "{q}"
region = "eu"
[[emit]]
kind = "listing"
observed_at = "{ts}"
source = "s"
gpu = "h100"
scope = "vm"
term = "on-demand"
price = "{p}"
price_unit = "gpu_hour"
currency = "USD"
"#,
            Path::new("m.toml"),
        )
        .unwrap();
        let header = idx(&["ts", "p", "q"]);
        let rec = ["2025-01-01", "2.5", "100"];
        let out = m.bind(&header).apply(&rec);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].quantity_gpu_hours.as_deref(), Some("100"));
        assert_eq!(out[0].region.as_deref(), Some("eu"));
        assert_eq!(out[1].kind.as_deref(), Some("listing"));
        assert_eq!(out[1].quantity_gpu_hours, None);
        assert_eq!(out[1].region, None);
    }

    /// A hostile run: a header with both `price` and `Price` read the second as no
    /// column, without a word, and an optional column cased otherwise
    /// (`Quantity_GPU_Hours`) left every row without it. A column that is a
    /// canonical one but for case and separators is refused naming both; a column
    /// of another name is still not read (a file's own notes).
    #[test]
    fn a_canonical_column_cased_otherwise_is_refused_naming_it() {
        let required: Vec<String> = rentix_core::CANONICAL_COLUMNS[1..10]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let refusal = |extra: &str| {
            let mut header = required.clone();
            header.push(extra.to_string());
            match Mapping::canonical(&header, Path::new("f.csv")) {
                Err(IngestError::BadHeader { detail, .. }) => Some(detail),
                Err(e) => panic!("{extra}: {e}"),
                Ok(_) => None,
            }
        };
        let both = refusal("Price").expect("Price beside price");
        assert!(
            both.contains("\"Price\"") && both.contains("the file has \"price\" too"),
            "{both}"
        );
        let alone = refusal("Quantity-GPU-Hours").expect("a cased optional column");
        assert!(alone.contains("\"quantity_gpu_hours\""), "{alone}");
        assert!(!alone.contains("too"), "{alone}");
        assert_eq!(refusal("note"), None);
        assert_eq!(refusal("region_name"), None);
        // A misspelt optional column (`operater_tier`) left every row without an
        // operator tier, without a word: refused when the column it is one or two
        // letters from (one for names of five letters or fewer) is not in the file.
        let typo = refusal("operater_tier").expect("a misspelt optional column");
        assert!(
            typo.contains("\"operater_tier\"") && typo.contains("did you mean \"operator_tier\""),
            "{typo}"
        );
        assert!(refusal("regoin").is_some_and(|d| d.contains("\"region\"")));
        assert_eq!(refusal("notes"), None);
        assert_eq!(
            refusal("team"),
            None,
            "two letters from term, a four-letter name"
        );
        // Beside the column it is close to, another column is the file's own.
        let mut header = required.clone();
        header.extend(["region".to_string(), "regions".to_string()]);
        assert!(Mapping::canonical(&header, Path::new("f.csv")).is_ok());
        // A required column cased otherwise is named too (`KIND` was "the header
        // has no column \"kind\"", while `Region` had the hint).
        let mut upper = required.clone();
        upper[0] = upper[0].to_uppercase();
        match Mapping::canonical(&upper, Path::new("f.csv")) {
            Err(IngestError::BadHeader { detail, .. }) => assert!(
                detail.contains(&format!("{:?}", required[0])) && detail.contains("rename it"),
                "{detail}"
            ),
            other => panic!("{other:?}"),
        }
    }

    /// A mapping of plain columns (the canonical file's, or a mapping file's
    /// `{column}` fields with a column the header lacks) copies cells as the
    /// templates render them: trimmed as `str::trim` trims (Unicode white space
    /// included), empty as missing. It fails when the direct copy skips the trim
    /// or keeps an empty cell.
    #[test]
    fn plain_columns_copy_cells_as_templates_render_them() {
        use proptest::prelude::*;
        // The required columns in reverse order, then one that is not a field.
        let mut header: Vec<String> = rentix_core::CANONICAL_COLUMNS[1..10]
            .iter()
            .rev()
            .map(|s| s.to_string())
            .collect();
        header.push("note".into());
        let canonical = Mapping::canonical(&header, Path::new("f.csv")).unwrap();
        let file = Mapping::from_toml(
            r#"
name = "plain"
[[emit]]
kind = "{kind}"
observed_at = "{observed_at}"
source = "{source}"
gpu = "{gpu}"
scope = "{scope}"
term = "{term}"
price = "{price}"
price_unit = "{price_unit}"
currency = "{currency}"
region = "{not_in_the_header}"
"#,
            Path::new("m.toml"),
        )
        .unwrap();
        let cell = proptest::sample::select(vec![
            "",
            " ",
            "vm",
            " vm ",
            "\tH100\u{a0}",
            "\u{2003}",
            "2.5\r",
            "é",
            "a b",
            "\u{3000}x\u{3000}",
        ]);
        proptest!(|(cells in proptest::collection::vec(cell, header.len()))| {
            for mapping in [&canonical, &file] {
                let direct = mapping.bind(&header);
                prop_assert!(direct.emits.iter().all(|e| e.direct.is_some()));
                let mut rendered = mapping.bind(&header);
                for e in &mut rendered.emits {
                    e.direct = None;
                }
                prop_assert_eq!(direct.apply(&cells), rendered.apply(&cells));
            }
        });
    }

    #[test]
    fn look_alike_columns_are_named_with_the_column_they_resemble() {
        let h = |cols: &[&str]| -> Vec<String> { cols.iter().map(|c| (*c).to_string()).collect() };
        // The required columns, then five look-alikes and a column of the file's own.
        let mut header = h(&rentix_core::CANONICAL_COLUMNS[1..10]);
        header.extend(h(&[
            "upfront_usd",
            "gpu_count",
            "tier",
            "id",
            "quantity",
            "my_notes",
        ]));
        let found = look_alike_columns(&header);
        let want: BTreeMap<String, String> = [
            ("upfront_usd", "upfront"),
            ("gpu_count", "gpus_per_unit"),
            ("tier", "operator_tier"),
            ("id", "obs_id"),
            ("quantity", "quantity_gpu_hours"),
        ]
        .iter()
        .map(|(a, b)| ((*a).to_string(), (*b).to_string()))
        .collect();
        assert_eq!(found, want);
        // A look-alike of a column the file has is its own column.
        assert!(look_alike_columns(&h(&["upfront", "upfront_usd"])).is_empty());
    }

    #[test]
    fn bad_mappings_are_refused() {
        let p = Path::new("m.toml");
        assert!(Mapping::from_toml("name='x'\nemit=[]", p).is_err());
        assert!(Mapping::from_toml("name='x'\n[[emit]]\nkind='trade'", p).is_err());
        assert!(Template::parse("{open").is_err());
        assert!(Template::parse("{a|nope}").is_err());
        assert_eq!(number_cell(" $40.97 "), "40.97");
        assert_eq!(number_cell("US$ 1.99"), "1.99");
        assert_eq!(number_cell("€2,50"), "2,50");
        assert_eq!(number_cell("-$5"), "-$5");
        assert_eq!(number_cell("3.10"), "3.10");
        // A mapping's literal text holding a control character would put it in
        // every row's field, unseen by the record's byte scan.
        let err = Mapping::from_toml(
            "name='x'\n[[emit]]\nkind='listing'\nobserved_at='{t}'\nsource=\"acme\\u0000\"\ngpu='{g}'\nscope='vm'\nterm='on-demand'\nprice='{p}'\nprice_unit='gpu_hour'\ncurrency='USD'",
            p,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("U+0000"), "{err}");
        // |digits on a price read "$1.99" as 1 and "$32.77" as 32 (a hostile round:
        // 65 of 73 FSDL rate-card rows stored at the truncated price).
        let block = |price: &str| {
            format!("name='x'\n[[emit]]\nkind='listing'\nobserved_at='{{t}}'\nsource='acme'\ngpu='{{g}}'\nscope='vm'\nterm='on-demand'\nprice='{price}'\nprice_unit='gpu_hour'\ncurrency='USD'")
        };
        let err = Mapping::from_toml(&block("{p|digits}"), p)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("price = \"{p|digits}\"") && err.contains("|number"),
            "{err}"
        );
        let m = Mapping::from_toml(&block("{p|number}"), p).unwrap();
        let t = &m.emits[0]
            .fields
            .iter()
            .find(|(f, _)| f == "price")
            .unwrap()
            .1;
        assert_eq!(t.render(&["$1.99"], &[Some(0)]).as_deref(), Some("1.99"));
    }
}
