//! The configuration files rentix ships (`data/methodologies/`, `data/contracts/`,
//! `data/mappings/`, `data/perps/`), compiled into the binary so that a methodology, a contract or
//! a mapping can be named (`--methodology settlement_business_days`) from any
//! directory, with nothing but the binary. A path that exists on disk always wins;
//! a path that does not is looked up by its file stem among the shipped files of its
//! kind, so the README's `data/methodologies/...` examples run outside the checkout
//! too. A test checks that every shipped file is here.

use std::path::Path;

/// What kind of configuration file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "lowercase")]
pub enum ConfigKind {
    /// An index methodology (`data/methodologies/`, intraday ones included).
    Methodology,
    /// A contract specification (`data/contracts/`).
    Contract,
    /// A mapping from a foreign layout to canonical observations (`data/mappings/`).
    Mapping,
    /// A perpetual-contract specification (`data/perps/`).
    Perp,
}

impl ConfigKind {
    /// The kind's name for messages: `methodology`, `contract`, `mapping`, `perp`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The shipped files of this kind: (name, text).
    pub fn bundled(self) -> &'static [(&'static str, &'static str)] {
        match self {
            ConfigKind::Methodology => METHODOLOGIES,
            ConfigKind::Contract => CONTRACTS,
            ConfigKind::Mapping => MAPPINGS,
            ConfigKind::Perp => PERPS,
        }
    }

    /// The folder of the checkout its files ship in.
    pub fn folder(self) -> &'static str {
        match self {
            ConfigKind::Methodology => "data/methodologies",
            ConfigKind::Contract => "data/contracts",
            ConfigKind::Mapping => "data/mappings",
            ConfigKind::Perp => "data/perps",
        }
    }
}

/// The methodology used when none is named (`data/methodologies/default.toml`).
pub const DEFAULT_METHODOLOGY: &str = include_str!("../../../data/methodologies/default.toml");

/// The contract used when none is named: H100 SXM bare-metal on-demand, monthly
/// average settlement (`data/contracts/h100-sxm-80gb-bare-metal-on-demand.toml`).
pub const DEFAULT_CONTRACT: &str =
    include_str!("../../../data/contracts/h100-sxm-80gb-bare-metal-on-demand.toml");

/// Data files the crates read, not configurations a user names: every file of
/// `data/` compiled into the binary is embedded here, in one place.
pub mod data {
    /// The GPU catalogue: canonical names, aliases, specifications (`data/gpus.toml`).
    pub const GPUS: &str = include_str!("../../../data/gpus.toml");
    /// Daily USD exchange rates for converting quotes (`data/fx/usd_rates.csv`).
    pub const FX_USD_RATES: &str = include_str!("../../../data/fx/usd_rates.csv");
    /// US exchange holidays for business-day rules (`data/calendars/us-exchange.csv`).
    pub const US_EXCHANGE_CALENDAR: &str = include_str!("../../../data/calendars/us-exchange.csv");
    /// Known contributors' names and aliases (`data/contributors.toml`).
    pub const CONTRIBUTORS: &str = include_str!("../../../data/contributors.toml");
    /// The simulator's default market (`data/sim/default.toml`).
    pub const SIM_DEFAULT: &str = include_str!("../../../data/sim/default.toml");
}

/// Intraday methodologies ship in `data/methodologies/intraday/` (a folder of their
/// own: they are not daily methodologies) and are named like the others.
static METHODOLOGIES: &[(&str, &str)] = &[
    (
        "intraday_computable_15m",
        include_str!("../../../data/methodologies/intraday/intraday_computable_15m.toml"),
    ),
    (
        "intraday_lowest_listing_15m",
        include_str!("../../../data/methodologies/intraday/intraday_lowest_listing_15m.toml"),
    ),
    (
        "confidential_listings",
        include_str!("../../../data/methodologies/confidential_listings.toml"),
    ),
    ("default", DEFAULT_METHODOLOGY),
    (
        "listings_3d_publish_flagged",
        include_str!("../../../data/methodologies/listings_3d_publish_flagged.toml"),
    ),
    (
        "listings_3d_thin_days_dropped",
        include_str!("../../../data/methodologies/listings_3d_thin_days_dropped.toml"),
    ),
    (
        "listings_7d_sigma",
        include_str!("../../../data/methodologies/listings_7d_sigma.toml"),
    ),
    (
        "listings_capped_median",
        include_str!("../../../data/methodologies/listings_capped_median.toml"),
    ),
    (
        "listings_mad_filter",
        include_str!("../../../data/methodologies/listings_mad_filter.toml"),
    ),
    (
        "listings_only_naive",
        include_str!("../../../data/methodologies/listings_only_naive.toml"),
    ),
    (
        "listings_outage_carry",
        include_str!("../../../data/methodologies/listings_outage_carry.toml"),
    ),
    (
        "listings_provider_medians",
        include_str!("../../../data/methodologies/listings_provider_medians.toml"),
    ),
    (
        "listings_trimmed_at_least_one",
        include_str!("../../../data/methodologies/listings_trimmed_at_least_one.toml"),
    ),
    (
        "listings_winsorized",
        include_str!("../../../data/methodologies/listings_winsorized.toml"),
    ),
    (
        "market_all_scopes",
        include_str!("../../../data/methodologies/market_all_scopes.toml"),
    ),
    (
        "rentix-default-1.1",
        include_str!("../../../data/methodologies/rentix-default-1.1.toml"),
    ),
    (
        "settlement_business_days",
        include_str!("../../../data/methodologies/settlement_business_days.toml"),
    ),
    (
        "trades_business_days_rolled",
        include_str!("../../../data/methodologies/trades_business_days_rolled.toml"),
    ),
    (
        "trades_vw_trimmed_mean_central_50",
        include_str!("../../../data/methodologies/trades_vw_trimmed_mean_central_50.toml"),
    ),
];

static CONTRACTS: &[(&str, &str)] = &[
    (
        "h100-sxm-80gb-bare-metal-1m",
        include_str!("../../../data/contracts/h100-sxm-80gb-bare-metal-1m.toml"),
    ),
    (
        "h100-sxm-80gb-bare-metal-on-demand-final",
        include_str!("../../../data/contracts/h100-sxm-80gb-bare-metal-on-demand-final.toml"),
    ),
    (
        "h100-sxm-80gb-bare-metal-on-demand-gold",
        include_str!("../../../data/contracts/h100-sxm-80gb-bare-metal-on-demand-gold.toml"),
    ),
    ("h100-sxm-80gb-bare-metal-on-demand", DEFAULT_CONTRACT),
    (
        "nymex-gpu1-h100",
        include_str!("../../../data/contracts/nymex-gpu1-h100.toml"),
    ),
    (
        "nymex-gpu2-b200",
        include_str!("../../../data/contracts/nymex-gpu2-b200.toml"),
    ),
];

static PERPS: &[(&str, &str)] = &[(
    "h100-sxm-80gb-bare-metal-perp",
    include_str!("../../../data/perps/h100-sxm-80gb-bare-metal-perp.toml"),
)];

static MAPPINGS: &[(&str, &str)] = &[
    (
        "fsdl_cloud_gpus",
        include_str!("../../../data/mappings/fsdl_cloud_gpus.toml"),
    ),
    (
        "primeintellect_by_config",
        include_str!("../../../data/mappings/primeintellect_by_config.toml"),
    ),
    (
        "primeintellect_by_provider",
        include_str!("../../../data/mappings/primeintellect_by_provider.toml"),
    ),
];

/// The shipped file of `kind` named `name` (a file stem, with or without `.toml`).
pub fn bundled(kind: ConfigKind, name: &str) -> Option<&'static str> {
    let name = name.strip_suffix(".toml").unwrap_or(name);
    kind.bundled()
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// Reads a configuration file: from disk when `path` exists, else the shipped file of
/// `kind` with `path`'s file stem; an error naming both the path and the shipped
/// names when neither exists. Reads are size-limited like every config read.
pub fn read_config(path: &Path, kind: ConfigKind) -> std::io::Result<String> {
    if path.exists() {
        return crate::read_text(path, crate::MAX_CONFIG_BYTES);
    }
    let stem = path
        .file_name()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    if let Some(text) = bundled(kind, &stem) {
        return Ok(text.to_string());
    }
    let names: Vec<&str> = kind.bundled().iter().map(|(n, _)| *n).collect();
    Err(std::io::Error::new(
        std::io::ErrorKind::NotFound,
        format!(
            "no such file, and no shipped {} of that name (shipped: {})",
            kind.as_str(),
            names.join(", ")
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_file_is_bundled_by_its_name() {
        for &kind in <ConfigKind as strum::VariantArray>::VARIANTS {
            let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
            let mut files: Vec<_> = std::fs::read_dir(root.join(kind.folder()))
                .unwrap()
                .collect();
            if kind == ConfigKind::Methodology {
                files.extend(std::fs::read_dir(root.join("data/methodologies/intraday")).unwrap());
            }
            for e in files {
                let p = e.unwrap().path();
                if p.extension().and_then(|x| x.to_str()) != Some("toml") {
                    continue;
                }
                let stem = p.file_stem().unwrap().to_string_lossy().to_string();
                let text = std::fs::read_to_string(&p).unwrap();
                assert_eq!(
                    bundled(kind, &stem),
                    Some(text.as_str()),
                    "{} is not in src/bundled.rs's {} table",
                    p.display(),
                    kind.as_str()
                );
            }
        }
    }

    #[test]
    fn a_missing_path_falls_back_to_the_shipped_file_of_its_name() {
        let text = read_config(
            Path::new("/nowhere/data/methodologies/settlement_business_days.toml"),
            ConfigKind::Methodology,
        )
        .unwrap();
        assert!(text.contains("version"));
        assert!(read_config(Path::new("default"), ConfigKind::Methodology).is_ok());
        let err = read_config(Path::new("nope.toml"), ConfigKind::Contract).unwrap_err();
        assert!(err.to_string().contains("nymex-gpu1-h100"), "{err}");
    }
}

#[cfg(test)]
mod text_tests {
    use super::*;

    /// Every kind's name as messages wrote it before it was derived.
    const TEXT: [(ConfigKind, &str); 4] = [
        (ConfigKind::Methodology, "methodology"),
        (ConfigKind::Contract, "contract"),
        (ConfigKind::Mapping, "mapping"),
        (ConfigKind::Perp, "perp"),
    ];

    #[test]
    fn text_forms_are_pinned() {
        assert_eq!(
            <ConfigKind as strum::VariantArray>::VARIANTS.len(),
            TEXT.len()
        );
        for (v, text) in TEXT {
            assert_eq!(v.as_str(), text);
        }
    }
}
