//! A raw observation: the canonical fields as text, before any validation.

/// Required canonical fields.
pub use rentix_core::REQUIRED_COLUMNS as REQUIRED_FIELDS;

/// One candidate observation as text. An empty field is `None`. Built by a
/// [`crate::Mapping`] from one input record; validated by [`crate::Normalizer`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawObservation {
    pub kind: Option<String>,
    pub observed_at: Option<String>,
    pub source: Option<String>,
    pub gpu: Option<String>,
    pub scope: Option<String>,
    pub term: Option<String>,
    pub price: Option<String>,
    pub price_unit: Option<String>,
    pub currency: Option<String>,
    pub obs_id: Option<String>,
    pub quantity_gpu_hours: Option<String>,
    pub gpus_per_unit: Option<String>,
    pub region: Option<String>,
    pub interconnect: Option<String>,
    pub cluster_gpus: Option<String>,
    pub operator_tier: Option<String>,
    pub upfront: Option<String>,
    pub term_start: Option<String>,
}

impl RawObservation {
    /// Sets a canonical field by name (trimmed; empty becomes `None`); returns false
    /// for a name that is not a canonical field.
    pub fn set(&mut self, field: &str, value: Option<String>) -> bool {
        let value = value
            .map(|v| {
                if v.trim().len() == v.len() {
                    v
                } else {
                    v.trim().to_string()
                }
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
