//! Parquet in a build without the `parquet` feature: the functions `parquet.rs`
//! offers, each refusing with [`TableError::NoParquet`] naming the file, so that a
//! caller compiles the same way with or without polars' Parquet crates and a
//! `.parquet` path is a clear error, never a silent CSV.

use crate::{Result, Table, TableError};
use std::io::Write;
use std::path::Path;

fn refused<T>(path: &Path) -> Result<T> {
    Err(TableError::NoParquet {
        path: path.to_path_buf(),
    })
}

impl Table {
    pub(crate) fn write_parquet(&self, _w: &mut dyn Write, path: &Path) -> Result<()> {
        refused(path)
    }

    /// Refused: this build reads no Parquet ([`TableError::NoParquet`]).
    pub fn read_parquet(path: &Path) -> Result<Self> {
        refused(path)
    }

    /// Refused: this build reads no Parquet ([`TableError::NoParquet`]).
    pub fn parquet_rows(path: &Path) -> Result<usize> {
        refused(path)
    }

    /// Refused: this build reads no Parquet ([`TableError::NoParquet`]).
    pub fn read_parquet_columns(path: &Path, _columns: Option<&[&str]>) -> Result<Self> {
        refused(path)
    }

    /// Refused: this build reads no Parquet ([`TableError::NoParquet`]).
    pub fn read_parquet_coded(
        path: &Path,
        _columns: Option<&[&str]>,
        _coded: &[&str],
    ) -> Result<Self> {
        refused(path)
    }

    /// Refused: this build reads no Parquet ([`TableError::NoParquet`]).
    pub fn read_parquet_bytes(
        _bytes: &[u8],
        path: &Path,
        _columns: Option<&[&str]>,
        _coded: &[&str],
        _rows: Option<(usize, usize)>,
    ) -> Result<Self> {
        refused(path)
    }

    /// Refused: this build reads no Parquet ([`TableError::NoParquet`]).
    pub fn read_parquet_rows(path: &Path, _offset: usize, _len: usize) -> Result<Self> {
        refused(path)
    }
}

/// Row groups encoded for a Parquet file: none in this build (nothing can be
/// encoded without the `parquet` feature).
#[derive(Debug)]
pub struct EncodedGroups(());

impl EncodedGroups {
    /// The rows encoded.
    pub fn rows(&self) -> u64 {
        0
    }
}

impl Table {
    /// Refused: this build writes no Parquet ([`TableError::NoParquet`]).
    pub fn encode_row_groups(&self, path: &Path) -> Result<EncodedGroups> {
        refused(path)
    }
}

/// Refused: this build writes no Parquet ([`TableError::NoParquet`]); nothing is
/// created. No part at all writes nothing, as with the feature.
pub fn write_unsynced_parquet_encoded(
    path: &Path,
    mut parts: impl Iterator<Item = Result<EncodedGroups>>,
) -> Result<()> {
    match parts.next() {
        None => Ok(()),
        Some(_) => refused(path),
    }
}

/// Refused: this build writes no Parquet ([`TableError::NoParquet`]); nothing is
/// created. No table at all writes nothing, as with the feature.
pub fn write_unsynced_parquet_batches(
    path: &Path,
    mut batches: impl Iterator<Item = Table>,
) -> Result<()> {
    match batches.next() {
        None => Ok(()),
        Some(_) => refused(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_parquet_path_is_refused_by_name_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.parquet");
        let mut t = Table::new();
        t.push("x", crate::Col::I64(vec![Some(1)]));
        let err = t.write(&path).unwrap_err();
        assert!(matches!(err, TableError::NoParquet { .. }), "{err}");
        assert!(err
            .to_string()
            .starts_with(&format!("{}: ", path.display())));
        assert!(!path.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        assert!(matches!(
            Table::read_parquet(&path),
            Err(TableError::NoParquet { .. })
        ));
        assert!(matches!(
            crate::TextTable::read(&path),
            Err(TableError::NoParquet { .. })
        ));
        // CSV is untouched by the feature.
        let csv = dir.path().join("f.csv");
        t.write(&csv).unwrap();
        assert_eq!(std::fs::read_to_string(&csv).unwrap(), "x\n1\n");
    }
}
