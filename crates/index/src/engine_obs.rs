//! The engine's own row: one observation of one grade, in 48 bytes. Contributor
//! names become [`SourceId`]s numbered in name order, and dedupe keys the 128-bit
//! numbers the store writes as 32 hexadecimal digits, so the hot loops compare
//! integers and a million observations take 48 MB, not the 170 MB of owned strings.

use crate::contributor_id::ContributorAliases;
use chrono::NaiveDate;
use rayon::prelude::*;
use rentix_core::{ObservationKind, OperatorTier};
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// A contributor: its rank among the run's contributor names, so ids order exactly
/// as the names do (and every result keyed by contributor is the same either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SourceId(pub u32);

/// An observation's dedupe key. Ordered as its 32-digit lowercase hexadecimal text
/// is (fixed width), so sorting by key is unchanged from sorting the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObsKey {
    hi: u64,
    lo: u64,
}

impl ObsKey {
    /// A key from the store's text: exactly 32 lowercase hexadecimal digits.
    pub fn parse_hex(text: &str) -> Option<Self> {
        if text.len() != 32 {
            return None;
        }
        // One pass, checking and adding each digit (the engine reads a key per row).
        let mut n: u128 = 0;
        for b in text.bytes() {
            let digit = match b {
                b'0'..=b'9' => b - b'0',
                b'a'..=b'f' => b - b'a' + 10,
                _ => return None,
            };
            n = n << 4 | u128::from(digit);
        }
        Some(Self::from_u128(n))
    }

    /// The key whose 32 hexadecimal digits write `n`.
    pub fn from_u128(n: u128) -> Self {
        Self {
            hi: (n >> 64) as u64,
            lo: n as u64,
        }
    }

    /// The key of an observation named by free text (a test's or a simulated
    /// manipulator's): the first 128 bits of the text's SHA-256.
    pub fn digest(text: &str) -> Self {
        let h = Sha256::digest(text.as_bytes());
        let word = |b: &[u8]| b.iter().fold(0u64, |a, x| (a << 8) | u64::from(*x));
        Self {
            hi: word(&h[..8]),
            lo: word(&h[8..16]),
        }
    }

    /// The key as the store writes it.
    pub fn hex(&self) -> String {
        String::from_utf8_lossy(&self.hex_bytes()).into_owned()
    }

    fn hex_bytes(&self) -> [u8; 32] {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = [0u8; 32];
        for (i, word) in [self.hi, self.lo].into_iter().enumerate() {
            for j in 0..16 {
                out[i * 16 + j] = DIGITS[((word >> (60 - 4 * j)) & 0xf) as usize];
            }
        }
        out
    }
}

/// The input hash of a fixing: SHA-256 of the sorted keys' text, one per line.
pub(crate) fn keys_sha256(keys: impl Iterator<Item = ObsKey>) -> String {
    let mut keys: Vec<ObsKey> = keys.collect();
    keys.sort_unstable();
    let mut h = Sha256::new();
    for k in keys {
        h.update(k.hex_bytes());
        h.update(b"\n");
    }
    rentix_store::hex(&h.finalize())
}

/// An observation as the engine sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EngineObs {
    /// The store's dedupe key: what the fixing's `input_sha256` hashes.
    pub key: ObsKey,
    /// USD per GPU-hour, as normalized at ingest.
    pub price: f64,
    /// GPU-hours (0 when the observation does not say).
    pub quantity: f64,
    /// The fixing date under the methodology's cut-off, rolled to the next
    /// publication day when `calendar.roll` says so (not the store's
    /// `fixing_date`).
    pub day: NaiveDate,
    /// The contributor's identity (aliases folded), numbered in the run's
    /// [`Sources`].
    pub source: SourceId,
    /// Trade, firm offer or listing: the tier of the hierarchy it can fix.
    pub kind: ObservationKind,
    /// The operator's rating, `None` when unrated (never in a tier-qualified grade).
    pub tier: Option<OperatorTier>,
}

impl EngineObs {
    /// Aggregation weight: GPU-hours for trades (never zero), 1 for offers and
    /// listings.
    pub fn weight(&self) -> f64 {
        if self.kind == ObservationKind::Trade {
            self.quantity.max(f64::MIN_POSITIVE)
        } else {
            1.0
        }
    }

    /// Operator-tier score (platinum 4 ... underperform 0), when rated.
    pub fn tier_score(&self) -> Option<f64> {
        self.tier.map(OperatorTier::score)
    }
}

/// The order [`crate::fix_grade`] expects its observations in (and the one that
/// makes its output independent of input row order): day, kind, source, key,
/// price, then quantity and tier, so that only rows equal in every field tie and
/// any sort gives the same order. A large grade is sorted in parallel.
pub fn sort_obs(v: &mut [EngineObs]) {
    /// Rows from which a grade's sort is split across the pool.
    const PARALLEL_ROWS: usize = 1 << 15;
    let order = |a: &EngineObs, b: &EngineObs| {
        (a.day, a.kind, a.source, a.key)
            .cmp(&(b.day, b.kind, b.source, b.key))
            .then(a.price.total_cmp(&b.price))
            .then(a.quantity.total_cmp(&b.quantity))
            .then(a.tier.cmp(&b.tier))
    };
    if v.len() >= PARALLEL_ROWS {
        v.par_sort_unstable_by(order);
    } else {
        v.sort_unstable_by(order);
    }
}

/// The contributor names of a run, sorted; a [`SourceId`] is a position here.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sources {
    names: Vec<String>,
}

impl Sources {
    /// The name an id stands for: the smallest raw spelling among its identity's
    /// rows; `None` for an id not of this run.
    pub fn name(&self, id: SourceId) -> Option<&str> {
        self.names.get(id.0 as usize).map(String::as_str)
    }

    /// The id of a name as [`Sources::name`] gives it (another spelling of the same
    /// identity is not found).
    pub fn id(&self, name: &str) -> Option<SourceId> {
        let i = self.names.binary_search_by(|n| n.as_str().cmp(name)).ok()?;
        Some(SourceId(u32::try_from(i).ok()?))
    }

    /// Distinct contributors (identities) of the run.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the run had no contributor.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// Numbers contributors as they arrive, one number per identity (the folded,
/// aliased name: [`ContributorAliases`]) however many spellings its rows use;
/// [`Interner::finish`] renumbers them in the order of each identity's first raw
/// spelling by name (the raw names' order when no two names share an identity).
#[derive(Debug, Default)]
pub(crate) struct Interner {
    aliases: ContributorAliases,
    /// Raw spelling -> provisional id (each spelling folded once), looked up per
    /// row (SipHash was 1% of a one-shot's CPU; these maps are never iterated).
    raw: HashMap<String, u32, foldhash::fast::RandomState>,
    /// Identity -> provisional id.
    ids: HashMap<String, u32, foldhash::fast::RandomState>,
    /// Per provisional id: the smallest raw spelling seen.
    names: Vec<String>,
}

impl Interner {
    pub(crate) fn new(aliases: ContributorAliases) -> Self {
        Self {
            aliases,
            ..Self::default()
        }
    }

    /// The provisional id of `name`'s identity; `None` past 2^32 identities.
    pub(crate) fn id(&mut self, name: &str) -> Option<u32> {
        if let Some(id) = self.raw.get(name) {
            return Some(*id);
        }
        let identity = self.aliases.identity(name);
        let id = match self.ids.get(&identity) {
            Some(id) => {
                let first = &mut self.names[*id as usize];
                if name < first.as_str() {
                    *first = name.to_string();
                }
                *id
            }
            None => {
                let id = u32::try_from(self.names.len()).ok()?;
                self.ids.insert(identity, id);
                self.names.push(name.to_string());
                id
            }
        };
        self.raw.insert(name.to_string(), id);
        Some(id)
    }

    /// The sorted names, and for each provisional id its final one.
    pub(crate) fn finish(self) -> (Sources, Vec<SourceId>) {
        let mut order: Vec<u32> = (0..self.names.len() as u32).collect();
        order.sort_unstable_by(|a, b| self.names[*a as usize].cmp(&self.names[*b as usize]));
        let mut remap = vec![SourceId(0); order.len()];
        for (rank, provisional) in order.iter().enumerate() {
            remap[*provisional as usize] = SourceId(rank as u32);
        }
        let mut names = self.names;
        names.sort_unstable();
        (Sources { names }, remap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_order_as_their_hex_text() {
        let texts = [
            "00000000000000000000000000000001",
            "0000000000000000ffffffffffffffff",
            "00000000000000010000000000000000",
            "7dfd00be6a8d1e6cb9f04bf06dda8871",
            "ecd47947b095e337835f1569787f214c",
            "ffffffffffffffffffffffffffffffff",
        ];
        let keys: Vec<ObsKey> = texts
            .iter()
            .map(|t| ObsKey::parse_hex(t).unwrap())
            .collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
        for (k, t) in keys.iter().zip(texts) {
            assert_eq!(k.hex(), t);
        }
    }

    #[test]
    fn the_input_hash_is_that_of_the_sorted_key_text() {
        let texts = [
            "ecd47947b095e337835f1569787f214c",
            "7dfd00be6a8d1e6cb9f04bf06dda8871",
        ];
        let keys = texts.iter().map(|t| ObsKey::parse_hex(t).unwrap());
        // sha256("7dfd...8871\necd4...214c\n"), computed outside the code.
        assert_eq!(
            keys_sha256(keys),
            "bb213ae322a96569c96198f084df1cb22742b0c055c70ef1df21b3b35537ab74"
        );
    }

    #[test]
    fn only_32_lowercase_hex_digits_parse() {
        for bad in [
            "",
            "7dfd00be6a8d1e6cb9f04bf06dda887",
            "7dfd00be6a8d1e6cb9f04bf06dda88711",
            "7DFD00BE6A8D1E6CB9F04BF06DDA8871",
            "+dfd00be6a8d1e6cb9f04bf06dda8871",
            "7dfd00be6a8d1e6c-9f04bf06dda8871",
        ] {
            assert_eq!(ObsKey::parse_hex(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn ids_follow_name_order_whatever_the_arrival_order() {
        let mut i = Interner::default();
        let arrival = ["Kestrel", "Acme", "lab-manipulator", "Acme", "Zeta"];
        let provisional: Vec<u32> = arrival.iter().map(|n| i.id(n).unwrap()).collect();
        let (sources, remap) = i.finish();
        let names: Vec<&str> = (0..4).map(|k| sources.name(SourceId(k)).unwrap()).collect();
        assert_eq!(names, ["Acme", "Kestrel", "Zeta", "lab-manipulator"]);
        for (name, p) in arrival.iter().zip(provisional) {
            assert_eq!(sources.name(remap[p as usize]), Some(*name));
            assert_eq!(sources.id(name), Some(remap[p as usize]));
        }
        assert_eq!(sources.id("nobody"), None);
    }

    #[test]
    fn spellings_of_one_contributor_get_one_id() {
        let mut i = Interner::new(ContributorAliases::bundled().clone());
        let spellings = ["LoneCo", "loneco", "LONECO", "Lone Co", "LoneCo.", "Acme"];
        let ids: Vec<u32> = spellings.iter().map(|n| i.id(n).unwrap()).collect();
        assert!(ids[..5].iter().all(|x| *x == ids[0]) && ids[5] != ids[0]);
        let (sources, remap) = i.finish();
        // Two identities, named by their smallest raw spelling ("LONECO" < "Lone Co").
        assert_eq!(sources.len(), 2);
        assert_eq!(sources.name(remap[ids[0] as usize]), Some("LONECO"));
        assert_eq!(sources.name(remap[ids[5] as usize]), Some("Acme"));
    }

    #[test]
    fn an_engine_row_is_48_bytes() {
        assert_eq!(std::mem::size_of::<EngineObs>(), 48);
    }
}
