//! A raw observation: the canonical fields as text, before any validation.

use std::borrow::Cow;

/// Required canonical fields.
pub use rentix_core::REQUIRED_COLUMNS as REQUIRED_FIELDS;

/// One candidate observation as text. An empty field is `None`. Built by a
/// [`crate::Mapping`] from one input record, borrowing its fields where a field is
/// one column as it stands (no copy per field per row); validated by
/// [`crate::Normalizer`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawObservation<'a> {
    pub kind: Option<Cow<'a, str>>,
    pub observed_at: Option<Cow<'a, str>>,
    pub source: Option<Cow<'a, str>>,
    pub gpu: Option<Cow<'a, str>>,
    pub scope: Option<Cow<'a, str>>,
    pub term: Option<Cow<'a, str>>,
    pub price: Option<Cow<'a, str>>,
    pub price_unit: Option<Cow<'a, str>>,
    pub currency: Option<Cow<'a, str>>,
    pub obs_id: Option<Cow<'a, str>>,
    pub quantity_gpu_hours: Option<Cow<'a, str>>,
    pub gpus_per_unit: Option<Cow<'a, str>>,
    pub region: Option<Cow<'a, str>>,
    pub interconnect: Option<Cow<'a, str>>,
    pub cluster_gpus: Option<Cow<'a, str>>,
    pub operator_tier: Option<Cow<'a, str>>,
    pub upfront: Option<Cow<'a, str>>,
    pub term_start: Option<Cow<'a, str>>,
}

impl<'a> RawObservation<'a> {
    /// Sets a canonical field by name (trimmed; empty becomes `None`); returns false
    /// for a name that is not a canonical field.
    pub fn set(&mut self, field: &str, value: Option<Cow<'a, str>>) -> bool {
        let value = value
            .map(|v| match v {
                Cow::Borrowed(b) => Cow::Borrowed(b.trim()),
                Cow::Owned(o) if o.trim().len() == o.len() => Cow::Owned(o),
                Cow::Owned(o) => Cow::Owned(o.trim().to_string()),
            })
            .filter(|v| !v.is_empty());
        let slot = match field {
            "kind" => &mut self.kind,
            "observed_at" => &mut self.observed_at,
            "source" => &mut self.source,
            "gpu" => &mut self.gpu,
            "scope" => &mut self.scope,
            "term" => &mut self.term,
            "price" => &mut self.price,
            "price_unit" => &mut self.price_unit,
            "currency" => &mut self.currency,
            "obs_id" => &mut self.obs_id,
            "quantity_gpu_hours" => &mut self.quantity_gpu_hours,
            "gpus_per_unit" => &mut self.gpus_per_unit,
            "region" => &mut self.region,
            "interconnect" => &mut self.interconnect,
            "cluster_gpus" => &mut self.cluster_gpus,
            "operator_tier" => &mut self.operator_tier,
            "upfront" => &mut self.upfront,
            "term_start" => &mut self.term_start,
            _ => return false,
        };
        *slot = value;
        true
    }
}

/// Whether `name` is a field of the canonical observations layout.
pub fn is_canonical_field(name: &str) -> bool {
    rentix_core::CANONICAL_COLUMNS.contains(&name)
}
