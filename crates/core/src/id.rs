//! Identifiers that are usually a 128-bit digest written as hexadecimal.

use std::cmp::Ordering;
use std::fmt;

/// An identifier's text (an observation's id, a dedupe key). Thirty-two lowercase
/// hexadecimal digits, what ingest writes for every dedupe key and every id it
/// generates, are held as their sixteen bytes; any other text is held as it is.
/// The form is chosen from the text alone, so two ids are equal exactly when their
/// texts are, and they order as their texts do.
///
/// A `String` of such a digest was 56 bytes and an allocation per row; this is 24
/// and none (issue 48: two per accepted row, held until the dedupe).
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Id(Repr);

#[derive(Clone, PartialEq, Eq, Hash)]
enum Repr {
    Hex([u8; 16]),
    Text(Box<str>),
}

impl Default for Repr {
    fn default() -> Self {
        Repr::Text(Box::default())
    }
}

const DIGITS: &[u8; 16] = b"0123456789abcdef";

fn digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

impl Id {
    /// The id of `text`.
    pub fn new(text: &str) -> Self {
        match Self::parse_hex(text) {
            Some(bytes) => Id(Repr::Hex(bytes)),
            None => Id(Repr::Text(text.into())),
        }
    }

    /// The id whose text is the 32 lowercase hexadecimal digits of `bytes`.
    pub fn from_digest(bytes: [u8; 16]) -> Self {
        Id(Repr::Hex(bytes))
    }

    fn parse_hex(text: &str) -> Option<[u8; 16]> {
        let b = text.as_bytes();
        if b.len() != 32 {
            return None;
        }
        let mut out = [0u8; 16];
        for (o, pair) in out.iter_mut().zip(b.chunks_exact(2)) {
            *o = (digit(pair[0])? << 4) | digit(pair[1])?;
        }
        Some(out)
    }

    /// The 128-bit number 32 hexadecimal digits write; `None` for other text.
    pub fn as_u128(&self) -> Option<u128> {
        match &self.0 {
            Repr::Hex(b) => Some(u128::from_be_bytes(*b)),
            Repr::Text(_) => None,
        }
    }

    /// The text, borrowed or written into a buffer on the stack.
    pub fn text(&self) -> IdText<'_> {
        match &self.0 {
            Repr::Hex(bytes) => {
                let mut buf = [0u8; 32];
                for (pair, b) in buf.chunks_exact_mut(2).zip(bytes) {
                    pair[0] = DIGITS[usize::from(b >> 4)];
                    pair[1] = DIGITS[usize::from(b & 0xf)];
                }
                IdText::Hex(buf)
            }
            Repr::Text(t) => IdText::Text(t),
        }
    }

    /// Bytes of the text.
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Hex(_) => 32,
            Repr::Text(t) => t.len(),
        }
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An [`Id`]'s text ([`Id::text`]): dereferences to `str`.
pub enum IdText<'a> {
    /// Thirty-two lowercase hexadecimal digits, written out.
    Hex([u8; 32]),
    /// The text as held.
    Text(&'a str),
}

impl std::ops::Deref for IdText<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            // Only ASCII digits are ever written into the buffer.
            IdText::Hex(buf) => std::str::from_utf8(buf).unwrap_or_default(),
            IdText::Text(t) => t,
        }
    }
}

impl Ord for Id {
    fn cmp(&self, other: &Self) -> Ordering {
        match (&self.0, &other.0) {
            // Lowercase digits order as their values, so the bytes order as the text.
            (Repr::Hex(a), Repr::Hex(b)) => a.cmp(b),
            (Repr::Text(a), Repr::Text(b)) => a.cmp(b),
            _ => (*self.text()).cmp(&*other.text()),
        }
    }
}

impl PartialOrd for Id {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq<str> for Id {
    fn eq(&self, other: &str) -> bool {
        *self.text() == *other
    }
}

impl PartialEq<&str> for Id {
    fn eq(&self, other: &&str) -> bool {
        *self.text() == **other
    }
}

impl From<&str> for Id {
    fn from(text: &str) -> Self {
        Id::new(text)
    }
}

impl From<String> for Id {
    fn from(text: String) -> Self {
        match Self::parse_hex(&text) {
            Some(bytes) => Id(Repr::Hex(bytes)),
            None => Id(Repr::Text(text.into_boxed_str())),
        }
    }
}

impl From<Id> for String {
    fn from(id: Id) -> String {
        match id.0 {
            Repr::Text(t) => t.into_string(),
            Repr::Hex(_) => id.text().to_string(),
        }
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.text(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_digest_is_held_as_bytes_and_written_back_as_it_was() {
        let key = "00ff10a0b1c2d3e4f5061728394a5b6c";
        let id = Id::new(key);
        assert_eq!(id.as_u128(), Some(0x00ff10a0b1c2d3e4f5061728394a5b6c));
        assert_eq!((id.to_string(), id.len()), (key.to_string(), 32));
        assert_eq!(id, Id::from(key.to_string()));
        assert_eq!(
            Id::from_digest(0x00ff10a0b1c2d3e4f5061728394a5b6cu128.to_be_bytes()),
            id
        );
        // Uppercase, short, long or non-hex text is text.
        for other in [
            "00FF10A0B1C2D3E4F5061728394A5B6C",
            "00ff10a0b1c2d3e4f5061728394a5b6",
            "00ff10a0b1c2d3e4f5061728394a5b6c0",
            "g0ff10a0b1c2d3e4f5061728394a5b6c",
            "",
            "listing-7",
        ] {
            let o = Id::new(other);
            assert_eq!(
                (o.as_u128(), o.to_string(), o.len()),
                (None, other.to_string(), other.len())
            );
            assert_ne!(o, id);
        }
        assert!(Id::default().is_empty());
        assert_eq!(format!("{id:?}"), format!("{key:?}"));
    }

    proptest! {
        /// Equality and order are the texts', whichever form each is held in.
        #[test]
        fn ids_compare_as_their_texts(
            a in prop_oneof!["[0-9a-f]{32}", "[0-9a-g]{30,33}", ".{0,40}"],
            b in prop_oneof!["[0-9a-f]{32}", "[0-9a-g]{30,33}", ".{0,40}"],
        ) {
            let (x, y) = (Id::new(&a), Id::new(&b));
            prop_assert_eq!(x.cmp(&y), a.cmp(&b));
            prop_assert_eq!(x == y, a == b);
            prop_assert_eq!(x.to_string(), a.clone());
            prop_assert_eq!(String::from(x), a);
        }
    }
}
