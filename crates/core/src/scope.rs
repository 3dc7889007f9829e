//! Service scope: what the operator includes with the GPU-hour.

use crate::error::{parse_variant, CoreError};
use serde::{Deserialize, Serialize};
use std::str::FromStr;
use strum::VariantArray;

/// What an operator sells with the GPU: the machine alone, a virtual machine, a
/// container slot on a marketplace, or a managed cluster with scheduling and support.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::IntoStaticStr, strum::Display, strum::VariantArray, strum::EnumMessage)]
#[strum(serialize_all = "kebab-case")]
pub enum ServiceScope {
    /// The whole machine, no virtualization layer (`bare-metal`).
    BareMetal,
    /// A virtual machine with the GPU passed through (`vm`).
    Vm,
    /// A container slot, typically on a marketplace (`container`).
    Container,
    /// A cluster the operator runs for the renter, with scheduling and support
    /// (`managed-cluster`).
    ManagedCluster,
}

impl ServiceScope {
    /// Every scope, in declaration order.
    pub const ALL: [Self; Self::VARIANTS.len()] = match Self::VARIANTS.first_chunk() {
        Some(all) => *all,
        None => unreachable!(),
    };

    /// The kebab-case name used in grade keys and CSV columns. Parsing also accepts
    /// `_` or spaces for `-`, in any case.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl FromStr for ServiceScope {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_variant("scope", s, |b| match b {
            b'_' | b' ' => b'-',
            b => b.to_ascii_lowercase(),
        })
    }
}

#[cfg(test)]
mod text_tests {
    use super::*;

    /// Every variant's text as published before it was derived: grade keys and CSV
    /// files hold it, so it must not change by a byte.
    const TEXT: [(ServiceScope, &str); 4] = [
        (ServiceScope::BareMetal, "bare-metal"),
        (ServiceScope::Vm, "vm"),
        (ServiceScope::Container, "container"),
        (ServiceScope::ManagedCluster, "managed-cluster"),
    ];

    #[test]
    fn text_forms_are_pinned_and_agree_with_serde() {
        assert_eq!(ServiceScope::ALL.map(|v| v.as_str()), TEXT.map(|t| t.1));
        for (v, text) in TEXT {
            assert_eq!(v.as_str(), text);
            assert_eq!(v.to_string(), text);
            assert_eq!(text.parse::<ServiceScope>().unwrap(), v);
            assert_eq!(toml::Value::try_from(v).unwrap().as_str(), Some(text));
        }
        for (alias, v) in [
            (" Bare_Metal ", ServiceScope::BareMetal),
            ("MANAGED CLUSTER", ServiceScope::ManagedCluster),
        ] {
            assert_eq!(alias.parse::<ServiceScope>().unwrap(), v);
        }
        assert_eq!(
            "x".parse::<ServiceScope>().unwrap_err().to_string(),
            "unknown scope \"x\" (expected one of: bare-metal, vm, container, managed-cluster)"
        );
    }
}
