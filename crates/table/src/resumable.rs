//! SHA-256 whose state can be saved and resumed: the digest of a file that only
//! grows, continued from where the last publication left it, so that appending a
//! day never reads the history back to hash it.
//!
//! The block function is `sha2`'s (`compress256`, the same code `Sha256` runs);
//! what is written here is only what FIPS 180-4 section 5 puts around it: the
//! initial state, buffering to 64-byte blocks, and the final padding (a 1 bit,
//! zeros, the message length in bits as a big-endian 64-bit number). Tested against
//! `sha2::Sha256` on every split of random inputs.

use sha2::digest::generic_array::GenericArray;

/// FIPS 180-4, 5.3.3: the initial hash value of SHA-256.
const H0: [u32; 8] = [
    0x6a09_e667,
    0xbb67_ae85,
    0x3c6e_f372,
    0xa54f_f53a,
    0x510e_527f,
    0x9b05_688c,
    0x1f83_d9ab,
    0x5be0_cd19,
];

/// Blocks handed to the block function at once.
const BATCH: usize = 1024;

/// A SHA-256 in progress (see the module).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResumableSha256 {
    state: [u32; 8],
    /// Bytes hashed so far.
    len: u64,
    /// The bytes past the last whole block (fewer than 64).
    buffered: Vec<u8>,
}

impl Default for ResumableSha256 {
    fn default() -> Self {
        Self::new()
    }
}

/// What a [`ResumableSha256`] is saved as: the bytes hashed, the state after their
/// whole blocks (64 hex digits) and the bytes past them (hex).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SavedSha256 {
    /// Bytes hashed.
    pub bytes: u64,
    /// The eight state words after the whole blocks, big-endian, in hex.
    pub midstate: String,
    /// The bytes past the last whole block, in hex.
    pub buffered: String,
}

impl ResumableSha256 {
    /// The hash of no bytes yet.
    pub fn new() -> Self {
        Self {
            state: H0,
            len: 0,
            buffered: Vec::with_capacity(64),
        }
    }

    /// Bytes hashed so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether no byte was hashed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Hashes `data` after what was hashed before.
    pub fn update(&mut self, mut data: &[u8]) {
        self.len += data.len() as u64;
        if !self.buffered.is_empty() {
            let take = (64 - self.buffered.len()).min(data.len());
            self.buffered.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.buffered.len() < 64 {
                return;
            }
            let block = std::mem::take(&mut self.buffered);
            self.blocks(&block);
        }
        let whole = data.len() / 64 * 64;
        self.blocks(&data[..whole]);
        self.buffered.extend_from_slice(&data[whole..]);
    }

    /// Runs the block function over `data` (a multiple of 64 bytes).
    fn blocks(&mut self, data: &[u8]) {
        let mut batch: Vec<GenericArray<u8, sha2::digest::consts::U64>> =
            Vec::with_capacity(BATCH.min(data.len() / 64));
        for chunk in data.chunks_exact(64 * BATCH) {
            batch.clear();
            batch.extend(chunk.chunks_exact(64).map(GenericArray::clone_from_slice));
            sha2::compress256(&mut self.state, &batch);
        }
        let rest = data.chunks_exact(64 * BATCH).remainder();
        if !rest.is_empty() {
            batch.clear();
            batch.extend(rest.chunks_exact(64).map(GenericArray::clone_from_slice));
            sha2::compress256(&mut self.state, &batch);
        }
    }

    /// The digest of every byte hashed, in lowercase hex; the hash goes on.
    pub fn hex(&self) -> String {
        let mut done = self.clone();
        let bits = self.len.wrapping_mul(8);
        let mut pad = vec![0x80u8];
        let used = (self.buffered.len() + 1) % 64;
        pad.resize(1 + (56 + 64 - used) % 64, 0);
        pad.extend_from_slice(&bits.to_be_bytes());
        done.update(&pad);
        debug_assert!(done.buffered.is_empty());
        done.state.iter().map(|w| format!("{w:08x}")).collect()
    }

    /// The state to save (see [`SavedSha256`]).
    pub fn save(&self) -> SavedSha256 {
        SavedSha256 {
            bytes: self.len,
            midstate: self.state.iter().map(|w| format!("{w:08x}")).collect(),
            buffered: self.buffered.iter().map(|b| format!("{b:02x}")).collect(),
        }
    }

    /// The hash a [`SavedSha256`] was saved from; `None` when it cannot be one (the
    /// wrong lengths, a digit that is not hex, a byte count that disagrees).
    pub fn resume(saved: &SavedSha256) -> Option<Self> {
        let hex_bytes = |s: &str| -> Option<Vec<u8>> {
            if s.len() % 2 != 0 || !s.is_ascii() {
                return None;
            }
            (0..s.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
                .collect()
        };
        let words = hex_bytes(&saved.midstate).filter(|b| b.len() == 32)?;
        let buffered = hex_bytes(&saved.buffered).filter(|b| b.len() < 64)?;
        if saved.bytes % 64 != buffered.len() as u64 {
            return None;
        }
        let mut state = [0u32; 8];
        for (w, b) in state.iter_mut().zip(words.chunks_exact(4)) {
            *w = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        }
        Some(Self {
            state,
            len: saved.bytes,
            buffered,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use sha2::{Digest, Sha256};

    fn reference(data: &[u8]) -> String {
        Sha256::digest(data)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    #[test]
    fn the_fips_examples() {
        // FIPS 180-2 appendix B.1 and B.2: "abc" and the 448-bit message.
        let mut h = ResumableSha256::new();
        h.update(b"abc");
        assert_eq!(
            h.hex(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let mut h = ResumableSha256::new();
        h.update(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq");
        assert_eq!(
            h.hex(),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        assert_eq!(ResumableSha256::new().hex(), reference(b""));
    }

    proptest! {
        /// Any input, hashed in pieces, saved and resumed between them, gives the
        /// digest `sha2` gives of the whole.
        #[test]
        fn pieces_saved_and_resumed_hash_as_the_whole(
            data in proptest::collection::vec(any::<u8>(), 0..(64 * BATCH * 2 + 300)),
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..4),
        ) {
            let mut at: Vec<usize> = cuts.iter().map(|c| c.index(data.len() + 1)).collect();
            at.sort_unstable();
            let mut h = ResumableSha256::new();
            let mut from = 0;
            for cut in at.into_iter().chain([data.len()]) {
                h.update(&data[from..cut]);
                h = ResumableSha256::resume(&h.save()).unwrap();
                from = cut;
            }
            prop_assert_eq!(h.len(), data.len() as u64);
            prop_assert_eq!(h.hex(), reference(&data));
        }
    }

    #[test]
    fn a_saved_state_that_cannot_be_one_is_refused() {
        let mut h = ResumableSha256::new();
        h.update(&[7u8; 100]);
        let good = h.save();
        assert!(ResumableSha256::resume(&good).is_some());
        let bad = |f: &dyn Fn(&mut SavedSha256)| {
            let mut s = good.clone();
            f(&mut s);
            ResumableSha256::resume(&s)
        };
        assert!(bad(&|s| s.bytes = 101).is_none());
        assert!(bad(&|s| s.midstate.truncate(62)).is_none());
        assert!(bad(&|s| s.buffered.replace_range(0..1, "g")).is_none());
        assert!(bad(&|s| s.midstate.replace_range(0..1, "é")).is_none());
    }
}
