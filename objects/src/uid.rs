//! A compact uid. The API server's uids are RFC 4122 UUIDs in canonical
//! lower-case text (36 bytes, a 48-byte heap block); a [`Uid`] holds one
//! in 16 bytes inline, and any other uid as it comes. The caches' metadata
//! and the garbage collector's graph keep uids so.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

/// A uid: 16 bytes for a canonical UUID, the text otherwise.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Uid {
    /// A canonical lower-case UUID, as bytes.
    Uuid([u8; 16]),
    /// Anything else, as given.
    Other(Box<str>),
}

impl Uid {
    /// The uid `text` stands for.
    pub fn new(text: &str) -> Self {
        parse_uuid(text).map_or_else(|| Uid::Other(text.into()), Uid::Uuid)
    }
}

impl Default for Uid {
    /// The empty uid (an object not yet created).
    fn default() -> Self {
        Uid::Other(Box::default())
    }
}

impl PartialEq<str> for Uid {
    fn eq(&self, other: &str) -> bool {
        match self {
            Uid::Uuid(bytes) => parse_uuid(other).as_ref() == Some(bytes),
            Uid::Other(text) => **text == *other,
        }
    }
}

impl PartialEq<&str> for Uid {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

impl<'de> Deserialize<'de> for Uid {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(UidVisitor)
    }
}

/// Reads a uid without an intermediate `String` when the decoder can lend
/// the text.
struct UidVisitor;

impl Visitor<'_> for UidVisitor {
    type Value = Uid;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a uid")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Uid, E> {
        Ok(Uid::new(v))
    }
}

impl From<&str> for Uid {
    fn from(text: &str) -> Self {
        Uid::new(text)
    }
}

impl fmt::Display for Uid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Uid::Other(text) => f.write_str(text),
            Uid::Uuid(bytes) => {
                for (i, b) in bytes.iter().enumerate() {
                    if matches!(i, 4 | 6 | 8 | 10) {
                        f.write_str("-")?;
                    }
                    write!(f, "{b:02x}")?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Debug for Uid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

/// The bytes of `text` if it is a UUID in canonical lower-case form (so
/// that printing it gives `text` back).
fn parse_uuid(text: &str) -> Option<[u8; 16]> {
    let raw = text.as_bytes();
    if raw.len() != 36 || [8, 13, 18, 23].iter().any(|&i| raw[i] != b'-') {
        return None;
    }
    let mut digits = raw.iter().filter(|&&c| c != b'-');
    let mut out = [0u8; 16];
    for byte in &mut out {
        let hi = hex(*digits.next()?)?;
        let lo = hex(*digits.next()?)?;
        *byte = hi << 4 | lo;
    }
    digits.next().is_none().then_some(out)
}

fn hex(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_uuids_are_packed_and_print_back() {
        let text = "0f8fad5b-d9cb-469f-a165-70867728950e";
        let uid = Uid::new(text);
        assert!(matches!(uid, Uid::Uuid(_)));
        assert_eq!(uid.to_string(), text);
    }

    #[test]
    fn anything_else_is_kept_as_text() {
        for text in ["uid-web", "0F8FAD5B-D9CB-469F-A165-70867728950E", "0f8fad5b-d9cb-469f-a165-70867728950", ""] {
            let uid = Uid::new(text);
            assert!(matches!(uid, Uid::Other(_)), "{text}");
            assert_eq!(uid.to_string(), text);
        }
    }

    #[test]
    fn compares_with_its_text() {
        let text = "0f8fad5b-d9cb-469f-a165-70867728950e";
        assert!(Uid::new(text) == text);
        assert!(Uid::new(text) != "0f8fad5b-d9cb-469f-a165-70867728950f");
        assert!(Uid::new("uid-web") == "uid-web");
        assert!(Uid::new("uid-web") != text);
    }

    #[test]
    fn decodes_from_json() {
        let uid: Uid = serde_json::from_str("\"0f8fad5b-d9cb-469f-a165-70867728950e\"").unwrap();
        assert!(matches!(uid, Uid::Uuid(_)));
        assert!(serde_json::from_str::<Uid>("7").is_err());
    }
}
