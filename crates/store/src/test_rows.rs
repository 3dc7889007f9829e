//! Stored rows for the crate's unit tests.

use crate::schema::StoredObservation;
use chrono::NaiveDate;
use rentix_core::{GpuHours, Observation, ObservationKind, OperatorTier, PriceUnit, UsdPerGpuHour};

/// Rows that exercise every field's encodings: absent and present optional
/// fields, an empty and a non-ASCII text, more distinct sources than a one-byte
/// code holds, grades in stretches and alone, and the extreme numbers.
pub(crate) fn rows(date: NaiveDate, n: usize) -> Vec<StoredObservation> {
    let grades = [
        "h100-sxm-80gb/vm/on-demand",
        "a100-sxm-80gb/bare-metal/1m@apac",
    ];
    (0..n)
        .map(|i| {
            let at = date.and_hms_opt(0, 0, 0).unwrap().and_utc()
                + chrono::Duration::nanoseconds(i as i64 * 1_234_567_891);
            StoredObservation {
                obs: Observation {
                    obs_id: if i % 7 == 0 {
                        rentix_core::Id::default()
                    } else {
                        format!("id-{i}").into()
                    },
                    kind: [
                        ObservationKind::Trade,
                        ObservationKind::Firm,
                        ObservationKind::Listing,
                    ][i % 3],
                    observed_at: at,
                    fixing_date: date,
                    source: if i % 11 == 0 {
                        "Sakura クラウド".into()
                    } else {
                        format!("source {}", i % 200).into()
                    },
                    grade: grades[(i / 5) % 2].parse().unwrap(),
                    gpu_raw: format!("H100 spelling {}", i % 3).into(),
                    usd_per_gpu_hour: UsdPerGpuHour::positive(1.0 + i as f64 / 3.0).unwrap(),
                    quantity_gpu_hours: (i % 2 == 0)
                        .then(|| GpuHours::new(f64::MAX / (i + 1) as f64).unwrap()),
                    price_raw: -0.0 + i as f64 * 0.1,
                    price_unit: [PriceUnit::GpuHour, PriceUnit::NodeMonth][i % 2],
                    currency: ["USD", "EUR"][i % 2].into(),
                    gpus_per_unit: [None, Some(0), Some(8), Some(u32::MAX)][i % 4],
                    interconnect: [None, Some(""), Some("infiniband")][i % 3].map(Into::into),
                    cluster_gpus: [None, Some(127), Some(128), Some(16_384)][i % 4],
                    operator_tier: [None, Some(OperatorTier::Platinum)][i % 2],
                    upfront: (i % 5 == 0).then_some(1e9 + i as f64),
                    term_start: (i % 3 == 0).then_some(date),
                    input_file: "/data/in é.csv".into(),
                    input_row: [1, 127, 128, u64::MAX][i % 4],
                },
                dedupe_key: format!("{:032x}", i * 7919).into(),
            }
        })
        .collect()
}
