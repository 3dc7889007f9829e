//! Parquet files other tools write, read as rentix reads a user's file: pyarrow's
//! defaults, Spark's INT96 timestamps with gzip and no Arrow schema, polars' zstd
//! with string views and small row groups, a categorical and a 32-bit integer. The
//! files are in `tests/data/`, made by `tests/data/make_foreign.py` (each holds the
//! same five rows, written there by hand).
#![cfg(feature = "parquet")]

use rentix_table::{Col, Table};
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/{name}.parquet"))
}

fn text() -> Col {
    // "" and a missing value are both kept apart from each other.
    Col::Str(vec![
        Some("H100".into()),
        None,
        Some("A100 80GB, SXM".into()),
        Some("H100".into()),
        Some(String::new()),
    ])
}

/// 2025-06-01T12:30:15.123456Z, missing, 1969-12-31T23:59:59.999999Z,
/// 2025-06-02T00:00:00Z, 2030-01-01T00:00:00Z in microseconds since the epoch,
/// truncated to `unit_micros` (a millisecond file holds milliseconds: the instant
/// before the epoch floors to -1 ms).
fn instants(unit_micros: i64) -> Col {
    let at = [
        Some(1_748_781_015_123_456),
        None,
        Some(-1),
        Some(1_748_822_400_000_000),
        Some(1_893_456_000_000_000),
    ];
    Col::Timestamp(
        at.iter()
            .map(|v| v.map(|x: i64| x.div_euclid(unit_micros) * unit_micros))
            .collect(),
    )
}

/// 2025-06-01, 2025-06-02, missing, 1970-01-01, 1969-12-31 in days since the epoch.
fn days() -> Col {
    Col::Date(vec![Some(20_240), Some(20_241), None, Some(0), Some(-1)])
}

#[test]
fn pyarrow_defaults_read_as_written() {
    let t = Table::read_parquet(&data("pyarrow")).unwrap();
    let mut want = Table::new();
    want.push("text", text());
    want.push(
        "price",
        Col::F64(vec![Some(2.5), None, Some(1.25), Some(-0.0), Some(3.0)]),
    );
    want.push(
        "count",
        Col::I64(vec![Some(1), Some(2), None, Some(4), Some(5)]),
    );
    want.push(
        "firm",
        Col::Bool(vec![Some(true), Some(false), None, Some(true), Some(false)]),
    );
    want.push("at", instants(1));
    want.push("day", days());
    assert_eq!(t, want);
}

#[test]
fn spark_int96_timestamps_and_gzip_read_to_the_microsecond() {
    let t = Table::read_parquet(&data("int96_gzip")).unwrap();
    let mut want = Table::new();
    want.push("text", text());
    want.push("at", instants(1));
    assert_eq!(t, want);
}

#[test]
fn polars_zstd_file_reads_whole_and_in_slices_across_row_groups() {
    let p = data("polars_zstd");
    let t = Table::read_parquet(&p).unwrap();
    let mut want = Table::new();
    want.push("text", text());
    want.push("at", instants(1_000));
    want.push("day", days());
    assert_eq!(t, want);
    // Row groups of 2: rows 1..4 take the end of the first, all of the second and
    // the start of the third.
    let part = Table::read_parquet_rows(&p, 1, 3).unwrap();
    assert_eq!(part.height(), 3);
    for (a, b) in part.cols.iter().zip(&t.cols) {
        assert_eq!(
            (0..3).map(|i| a.cell(i)).collect::<Vec<_>>(),
            (1..4).map(|i| b.cell(i)).collect::<Vec<_>>()
        );
    }
    let only = Table::read_parquet_columns(&p, Some(&["day", "absent"])).unwrap();
    assert_eq!(only.names, ["day"]);
}

#[test]
fn a_categorical_reads_as_text_and_small_integers_widen() {
    let p = data("dictionary_int32");
    let t = Table::read_parquet(&p).unwrap();
    let mut want = Table::new();
    want.push("grade", text());
    want.push(
        "small",
        Col::I64(vec![Some(1), Some(2), None, Some(4), Some(5)]),
    );
    assert_eq!(t, want);
    let coded = Table::read_parquet_coded(&p, Some(&["grade"]), &["grade"]).unwrap();
    let Some(Col::Coded(c)) = coded.col("grade") else {
        panic!("grade is coded")
    };
    assert_eq!(c.values, ["H100", "A100 80GB, SXM", ""]);
    assert_eq!(c.codes, [Some(0), None, Some(1), Some(0), Some(2)]);
}

/// A damaged file is an error naming it, never a panic or a table: cut short, or
/// with bytes overwritten anywhere in its pages.
#[test]
fn a_damaged_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["pyarrow", "int96_gzip", "polars_zstd", "dictionary_int32"] {
        let bytes = std::fs::read(data(name)).unwrap();
        let p = dir.path().join("bad.parquet");
        for cut in [0, 4, bytes.len() / 2, bytes.len() - 9, bytes.len() - 1] {
            std::fs::write(&p, &bytes[..cut]).unwrap();
            let err = Table::read_parquet(&p).unwrap_err().to_string();
            assert!(err.contains("bad.parquet"), "{name} cut at {cut}: {err}");
        }
        // Every byte overwritten in turn: an error or a table (a changed value
        // reads as a value: the store's digests, not the format, catch those),
        // never a panic.
        for at in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[at] ^= 0xff;
            std::fs::write(&p, &bad).unwrap();
            let read = std::panic::catch_unwind(|| {
                (
                    Table::read_parquet(&p).is_ok(),
                    Table::parquet_rows(&p).is_ok(),
                )
            });
            assert!(read.is_ok(), "{name}: byte {at} overwritten panics");
        }
    }
}
