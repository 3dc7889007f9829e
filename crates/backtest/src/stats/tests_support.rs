//! Published test vectors shared by the statistics tests.

#[derive(serde::Deserialize)]
pub(super) struct HullExpected {
    pub sigma_futures: f64,
    pub sigma_spot: f64,
    pub correlation: f64,
    pub hedge_ratio: f64,
    pub effectiveness_at_hedge_ratio: f64,
    pub effectiveness_naive_one_to_one: f64,
    pub exposure_units: f64,
    pub contract_units: f64,
    pub contracts_unrounded: f64,
    pub contracts: i64,
    pub tolerance: f64,
}

#[derive(serde::Deserialize)]
pub(super) struct Hull {
    pub delta_futures: Vec<f64>,
    pub delta_spot: Vec<f64>,
    pub expected: HullExpected,
}

/// Hull, Options, Futures, and Other Derivatives, Table 3.2 (jet fuel / heating oil).
pub(super) fn hull() -> Hull {
    toml::from_str(include_str!(
        "../../../../tests/data/vectors/min_variance_hedge.toml"
    ))
    .expect("vector file")
}
