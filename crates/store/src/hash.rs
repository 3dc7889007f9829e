//! SHA-256 in the text form the store records: of a file, and of bytes.

use crate::error::{Result, StoreError};
use sha2::{Digest, Sha256};
use std::path::Path;

pub use rentix_core::hex;

/// The SHA-256 of a file's bytes, as 64 lowercase hexadecimal digits.
pub fn sha256_file(path: &Path) -> Result<String> {
    let read_err = |source| StoreError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut f = std::fs::File::open(path).map_err(read_err)?;
    let mut hash = Sha256::new();
    std::io::copy(&mut f, &mut hash).map_err(read_err)?;
    Ok(hex(&hash.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_match_published_vectors() {
        // FIPS 180-2 example: SHA-256("abc").
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("abc");
        std::fs::write(&p, b"abc").unwrap();
        assert_eq!(
            sha256_file(&p).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert!(matches!(
            sha256_file(&dir.path().join("absent")),
            Err(StoreError::Read { .. })
        ));
    }
}
