//! The protobuf wire format: the `runtime.Unknown` envelope, varints,
//! tags and length-delimited values, read without a schema.

use super::error::ProtobufError;

// === envelope ===

/// The fields of a `runtime.Unknown` envelope.
pub(super) struct Envelope<'a> {
    /// `typeMeta.apiVersion`.
    pub(super) api_version: String,
    /// `typeMeta.kind`.
    pub(super) kind: String,
    /// The object's own encoding.
    pub(super) raw: &'a [u8],
    /// `contentEncoding`; empty for plain bodies.
    pub(super) content_encoding: String,
}

impl<'a> Envelope<'a> {
    /// Reads the envelope that follows the magic bytes.
    pub(super) fn parse(bytes: &'a [u8]) -> Result<Self, ProtobufError> {
        let mut envelope =
            Envelope { api_version: String::new(), kind: String::new(), raw: &[], content_encoding: String::new() };
        let mut reader = Reader::new(bytes);
        while let Some((number, value)) = reader.next_field("Unknown")? {
            match (number, value) {
                (1, Wire::Bytes(type_meta)) => {
                    let mut inner = Reader::new(type_meta);
                    while let Some((number, value)) = inner.next_field("TypeMeta")? {
                        match (number, value) {
                            (1, Wire::Bytes(b)) => envelope.api_version = utf8(b, "TypeMeta", "apiVersion")?,
                            (2, Wire::Bytes(b)) => envelope.kind = utf8(b, "TypeMeta", "kind")?,
                            (number, value) => unknown("TypeMeta", number, value)?,
                        }
                    }
                }
                (2, Wire::Bytes(raw)) => envelope.raw = raw,
                (3, Wire::Bytes(b)) => envelope.content_encoding = utf8(b, "Unknown", "contentEncoding")?,
                // contentType only repeats the media type.
                (4, Wire::Bytes(_)) => {}
                (number, value) => unknown("Unknown", number, value)?,
            }
        }
        Ok(envelope)
    }
}

// === wire format ===

/// One field value as it appears on the wire.
#[derive(Debug, Clone, Copy)]
pub(super) enum Wire<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1.
    Fixed64(u64),
    /// Wire type 2: strings, bytes, messages and packed scalars.
    Bytes(&'a [u8]),
    /// Wire type 5.
    Fixed32(u32),
}

impl Wire<'_> {
    /// Whether this is the value Go writes for an unset field.
    pub(super) fn is_zero(self) -> bool {
        match self {
            Wire::Varint(v) | Wire::Fixed64(v) => v == 0,
            Wire::Fixed32(v) => v == 0,
            Wire::Bytes(b) => b.is_empty(),
        }
    }
}

/// A cursor over the fields of one encoded message.
pub(super) struct Reader<'a> {
    /// The bytes not read yet.
    pub(super) rest: &'a [u8],
}

impl<'a> Reader<'a> {
    /// Starts reading `bytes`.
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Reader { rest: bytes }
    }

    /// Reads a base-128 varint.
    pub(super) fn varint(&mut self) -> Result<u64, ProtobufError> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let (&byte, rest) = self.rest.split_first().ok_or(ProtobufError::Truncated)?;
            self.rest = rest;
            if shift == 63 && byte > 1 {
                return Err(ProtobufError::BadVarint);
            }
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(ProtobufError::BadVarint)
    }

    /// Takes the next `len` bytes.
    fn take(&mut self, len: u64) -> Result<&'a [u8], ProtobufError> {
        let len = usize::try_from(len).map_err(|_| ProtobufError::Truncated)?;
        if len > self.rest.len() {
            return Err(ProtobufError::Truncated);
        }
        let (head, rest) = self.rest.split_at(len);
        self.rest = rest;
        Ok(head)
    }

    /// Reads the next field of `message`, or `None` at the end.
    pub(super) fn next_field(&mut self, message: &'static str) -> Result<Option<(u64, Wire<'a>)>, ProtobufError> {
        if self.rest.is_empty() {
            return Ok(None);
        }
        let key = self.varint()?;
        let number = key >> 3;
        let value = match key & 7 {
            0 => Wire::Varint(self.varint()?),
            1 => Wire::Fixed64(u64::from_le_bytes(fixed(self.take(8)?)?)),
            2 => {
                let len = self.varint()?;
                Wire::Bytes(self.take(len)?)
            }
            5 => Wire::Fixed32(u32::from_le_bytes(fixed(self.take(4)?)?)),
            wire_type => {
                return Err(ProtobufError::BadWireType { message, number, wire_type });
            }
        };
        Ok(Some((number, value)))
    }
}

/// Turns a slice taken with a known length into an array.
fn fixed<const N: usize>(bytes: &[u8]) -> Result<[u8; N], ProtobufError> {
    bytes.try_into().map_err(|_| ProtobufError::Truncated)
}

/// Accepts a field the schema does not know only if it holds a zero value.
pub(super) fn unknown(message: &'static str, number: u64, value: Wire<'_>) -> Result<(), ProtobufError> {
    if value.is_zero() { Ok(()) } else { Err(ProtobufError::UnknownField { message, number }) }
}

/// Reads a string field.
pub(super) fn utf8(bytes: &[u8], message: &'static str, field: &'static str) -> Result<String, ProtobufError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| ProtobufError::InvalidUtf8 { message, field })
}
