//! The one reader of a partition's bytes: every reader of the store (index, verify,
//! ingest's deduplication, compaction, `store check`) reads a partition through
//! [`read_checked`], which hashes the bytes as it reads them and refuses a file
//! whose SHA-256 is not the one its run record committed, before a byte of it is
//! decoded. A flipped bit that keeps the file's size and rows is found by the first
//! read, not only by `store check`.

use crate::error::{Result, StoreError};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::Path;

/// What a partition's run record committed: the run and the file's SHA-256 and
/// size. `None` for a record written before checksums: read unchecked.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Committed<'a> {
    /// The run that committed the file.
    pub run_id: &'a str,
    /// Its SHA-256, lowercase hexadecimal.
    pub sha256: &'a str,
    /// Its size in bytes.
    pub bytes: u64,
}

/// A reader that hashes what it hands over.
struct Hashing<R> {
    inner: R,
    hash: Sha256,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
}

/// The bytes of the file at `path`, hashed as they are read and compared with
/// `committed` (when there is a record). A file of another size or another SHA-256
/// is refused ([`StoreError::Integrity`]) naming it and both digests; no more than
/// one byte past the committed size is read, so a file grown without bound (a link
/// to a device) is refused, not read whole.
pub(crate) fn read_checked(path: &Path, committed: Option<Committed<'_>>) -> Result<Vec<u8>> {
    let read_err = |source| StoreError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(|e| gone_or(path, committed, e))?;
    let mut bytes = Vec::new();
    let Some(c) = committed else {
        file.read_to_end(&mut bytes).map_err(read_err)?;
        return Ok(bytes);
    };
    bytes.reserve(usize::try_from(c.bytes).unwrap_or(0));
    let mut reader = Hashing {
        inner: file.take(c.bytes.saturating_add(1)),
        hash: Sha256::new(),
    };
    reader.read_to_end(&mut bytes).map_err(read_err)?;
    let actual = crate::hash::hex(&reader.hash.finalize());
    compare(path, c, bytes.len() as u64, &actual)?;
    Ok(bytes)
}

/// Why a partition could not be opened: one its run record committed and that is
/// gone is a damaged store, as a changed one is (bad input, exit 3, naming the
/// run and `store check`), not an I/O error of a file never expected.
fn gone_or(path: &Path, committed: Option<Committed<'_>>, e: std::io::Error) -> StoreError {
    match committed {
        Some(c) if e.kind() == std::io::ErrorKind::NotFound => StoreError::Store {
            path: path.to_path_buf(),
            detail: format!(
                "{} committed this partition and it is gone: nothing is read from the store until it is restored; `rentix store check` lists every damaged file",
                c.run_id
            ),
        },
        _ => StoreError::Read {
            path: path.to_path_buf(),
            source: e,
        },
    }
}

/// [`read_checked`] of a file too large to hold: its bytes hashed and compared with
/// `committed`, not kept (a reader then reads it a slice at a time, under the
/// store's lock, which keeps every other run from changing it meanwhile).
pub(crate) fn check_file(path: &Path, committed: Option<Committed<'_>>) -> Result<()> {
    let Some(c) = committed else {
        return Ok(());
    };
    let read_err = |source| StoreError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(|e| gone_or(path, committed, e))?;
    let mut reader = Hashing {
        inner: file.take(c.bytes.saturating_add(1)),
        hash: Sha256::new(),
    };
    let n = std::io::copy(&mut reader, &mut std::io::sink()).map_err(read_err)?;
    compare(path, c, n, &crate::hash::hex(&reader.hash.finalize()))
}

/// Refuses `n` bytes hashing to `actual` read from `path` unless they are those of
/// `c`.
fn compare(path: &Path, c: Committed<'_>, n: u64, actual: &str) -> Result<()> {
    if n == c.bytes && actual == c.sha256 {
        return Ok(());
    }
    let actual = if n > c.bytes {
        format!("{actual} of its first {n} bytes (it is longer)")
    } else {
        actual.to_string()
    };
    Err(StoreError::Integrity {
        path: path.to_path_buf(),
        run_id: c.run_id.to_string(),
        recorded: c.sha256.to_string(),
        actual,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed bytes read back; one changed byte, one byte more or less, is
    /// refused naming both digests; no record, no check.
    #[test]
    fn bytes_that_are_not_the_committed_ones_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("abc");
        std::fs::write(&p, b"abc").unwrap();
        // FIPS 180-2: SHA-256("abc").
        let sha = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        let c = Committed {
            run_id: "run-000001",
            sha256: sha,
            bytes: 3,
        };
        assert_eq!(read_checked(&p, Some(c)).unwrap(), b"abc");
        check_file(&p, Some(c)).unwrap();
        for other in [&b"abd"[..], b"abcd", b"ab"] {
            std::fs::write(&p, other).unwrap();
            let e = read_checked(&p, Some(c)).unwrap_err();
            assert!(matches!(e, StoreError::Integrity { .. }), "{e}");
            let text = e.to_string();
            assert!(text.contains(sha) && text.contains("run-000001"), "{text}");
            assert_eq!(read_checked(&p, None).unwrap(), other);
            assert!(check_file(&p, Some(c)).is_err());
        }
        std::fs::write(&p, b"abd").unwrap();
        let text = read_checked(&p, Some(c)).unwrap_err().to_string();
        // SHA-256("abd").
        assert!(
            text.contains("a52d159f262b2c6ddb724a61840befc36eb30c88877a4030b65cbe86298449c9"),
            "{text}"
        );
    }
}
