//! What a file must be before rentix reads it: a regular file (never a device such as
//! `/dev/zero`, a directory or a pipe, which could be read forever) no larger than a
//! bound for its kind, so that a wrong path cannot exhaust memory.

use std::io::Read;
use std::path::Path;

/// Methodology, contract, mapping and simulator parameter files (TOML).
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;
/// Rent, events and FX tables, read whole.
pub const MAX_TABLE_BYTES: u64 = 256 << 20;
/// Fixings files and restatement logs.
pub const MAX_FIXINGS_BYTES: u64 = 8 << 30;
/// A `.sha256` sidecar: one digest and a file name, in `sha256sum`'s layout.
pub const MAX_DIGEST_BYTES: u64 = 64 << 10;
/// The incremental state beside a publication (`<stem>_state.json`): composite
/// levels by day, some 40 bytes each.
pub const MAX_STATE_BYTES: u64 = 256 << 20;

/// Checks that `path` is a regular file of at most `limit` bytes; returns its size.
pub fn check_file(path: &Path, limit: u64) -> std::io::Result<u64> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::other(
            "not a regular file (a device, directory or pipe cannot be read)",
        ));
    }
    if meta.len() > limit {
        return Err(std::io::Error::other(format!(
            "{} bytes is more than the {} bytes a file of this kind may have",
            meta.len(),
            limit
        )));
    }
    Ok(meta.len())
}

/// Reads a text file of at most `limit` bytes.
pub fn read_text(path: &Path, limit: u64) -> std::io::Result<String> {
    check_file(path, limit)?;
    let mut s = String::new();
    // The file may grow between the check and the read: never read past the limit.
    std::fs::File::open(path)?
        .take(limit + 1)
        .read_to_string(&mut s)?;
    if s.len() as u64 > limit {
        return Err(std::io::Error::other(format!("more than {limit} bytes")));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_directories_and_large_files_are_refused() {
        if Path::new("/dev/zero").exists() {
            assert!(read_text(Path::new("/dev/zero"), 10).is_err());
        }
        let dir = tempfile::tempdir().unwrap();
        assert!(read_text(dir.path(), 10).is_err());
        let f = dir.path().join("a.toml");
        std::fs::write(&f, "x".repeat(11)).unwrap();
        assert!(read_text(&f, 10)
            .unwrap_err()
            .to_string()
            .contains("11 bytes"));
        assert_eq!(read_text(&f, 11).unwrap().len(), 11);
    }
}
