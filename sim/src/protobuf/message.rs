//! Schema tables ([`Message`], [`Field`], [`Ty`]) and decoding one message
//! by its table into a JSON object, including the special types (times,
//! int-or-string, quantities, embedded JSON, bytes).

use serde_json::{Map, Value};

use super::error::ProtobufError;
use super::wire::{Reader, Wire, unknown, utf8};

// === schema ===

/// One message type: its Go name and its fields.
pub(super) struct Message {
    /// The Go type name, for errors.
    pub(super) name: &'static str,
    /// The fields, by number.
    pub(super) fields: &'static [Field],
}

/// One field of a [`Message`].
pub(super) struct Field {
    /// The protobuf field number.
    number: u64,
    /// The JSON name; empty for an embedded struct whose fields are inlined.
    json: &'static str,
    /// The element type.
    ty: Ty,
    /// Single value, list or string-keyed map.
    shape: Shape,
    /// Whether a zero scalar is printed: pointer fields and fields without
    /// `omitempty`.
    keep_zero: bool,
}

/// How many values a field holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// One value.
    One,
    /// A repeated field (JSON array).
    List,
    /// A `map<string, T>` field (JSON object), sent as entries with key 1 and
    /// value 2.
    Map,
}

/// The type of a field's values.
#[derive(Clone, Copy)]
pub(super) enum Ty {
    /// `string`.
    Str,
    /// `bool`.
    Bool,
    /// `int32` or `int64`.
    Int,
    /// `bytes`, printed as base64.
    Bytes,
    /// A nested message.
    Msg(&'static Message),
    /// An embedded Go struct: its fields are printed in the parent object.
    Inline(&'static Message),
    /// `meta/v1.Time`: RFC 3339 with seconds; empty is `null`.
    Time,
    /// `meta/v1.MicroTime`: RFC 3339 with microseconds; empty is `null`.
    MicroTime,
    /// `util/intstr.IntOrString`: a number or a string.
    IntOrString,
    /// `api/resource.Quantity`: its canonical string.
    Quantity,
    /// `runtime.RawExtension` or `meta/v1.FieldsV1`: embedded JSON.
    Raw,
    /// A message kube-sim does not decode; only an empty value is accepted.
    Unsupported,
}

/// A single field whose zero value Go's JSON encoding omits.
pub(super) const fn omit(number: u64, json: &'static str, ty: Ty) -> Field {
    Field { number, json, ty, shape: Shape::One, keep_zero: false }
}

/// A single field whose zero value is printed (a pointer, or no
/// `omitempty`).
pub(super) const fn keep(number: u64, json: &'static str, ty: Ty) -> Field {
    Field { number, json, ty, shape: Shape::One, keep_zero: true }
}

/// A single message-typed field: printed whenever it is on the wire.
pub(super) const fn one(number: u64, json: &'static str, ty: Ty) -> Field {
    Field { number, json, ty, shape: Shape::One, keep_zero: true }
}

/// A repeated field.
pub(super) const fn list(number: u64, json: &'static str, ty: Ty) -> Field {
    Field { number, json, ty, shape: Shape::List, keep_zero: true }
}

/// A `map<string, T>` field.
pub(super) const fn map(number: u64, json: &'static str, ty: Ty) -> Field {
    Field { number, json, ty, shape: Shape::Map, keep_zero: true }
}

// === decoding ===

/// Decodes the fields of one `schema` message from `bytes` into `object`.
pub(super) fn decode_into(
    schema: &'static Message,
    bytes: &[u8],
    object: &mut Map<String, Value>,
) -> Result<(), ProtobufError> {
    let mut reader = Reader::new(bytes);
    while let Some((number, wire)) = reader.next_field(schema.name)? {
        let Some(field) = schema.fields.iter().find(|f| f.number == number) else {
            unknown(schema.name, number, wire)?;
            continue;
        };
        match field.shape {
            Shape::One => {
                if let Ty::Inline(inner) = field.ty {
                    decode_into(inner, bytes_of(schema, field, wire)?, object)?;
                } else if let Some(value) = single(schema, field, wire)? {
                    object.insert(field.json.to_owned(), value);
                }
            }
            Shape::List => {
                let items = object.entry(field.json).or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(items) = items {
                    push_items(schema, field, wire, items)?;
                }
            }
            Shape::Map => {
                let (key, value) = map_entry(schema, field, bytes_of(schema, field, wire)?)?;
                let entries = object.entry(field.json).or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(entries) = entries {
                    entries.insert(key, value);
                }
            }
        }
    }
    Ok(())
}

/// The bytes of a length-delimited field.
fn bytes_of<'a>(schema: &'static Message, field: &Field, wire: Wire<'a>) -> Result<&'a [u8], ProtobufError> {
    match wire {
        Wire::Bytes(b) => Ok(b),
        _ => Err(wrong(schema, field)),
    }
}

/// The error for a field on the wire with the wrong wire type.
fn wrong(schema: &'static Message, field: &Field) -> ProtobufError {
    ProtobufError::WrongWireType { message: schema.name, field: field.json }
}

/// The JSON value of a single field, or `None` when Go's JSON would omit it.
fn single(schema: &'static Message, field: &Field, wire: Wire<'_>) -> Result<Option<Value>, ProtobufError> {
    if matches!(field.ty, Ty::Unsupported) {
        return if wire.is_zero() {
            Ok(None)
        } else {
            Err(ProtobufError::UnsupportedField { message: schema.name, field: field.json })
        };
    }
    let value = value_of(schema, field, wire)?;
    let zero = match &value {
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_i64() == Some(0) || n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty() && matches!(field.ty, Ty::Str | Ty::Bytes),
        _ => false,
    };
    Ok((field.keep_zero || !zero).then_some(value))
}

/// Appends the element(s) one occurrence of a repeated field carries: one
/// value, or several for a packed scalar list.
fn push_items(
    schema: &'static Message,
    field: &Field,
    wire: Wire<'_>,
    items: &mut Vec<Value>,
) -> Result<(), ProtobufError> {
    match (field.ty, wire) {
        (Ty::Int | Ty::Bool, Wire::Bytes(packed)) => {
            let mut reader = Reader::new(packed);
            while !reader.rest.is_empty() {
                items.push(value_of(schema, field, Wire::Varint(reader.varint()?))?);
            }
        }
        (Ty::Unsupported, _) => {
            return Err(ProtobufError::UnsupportedField { message: schema.name, field: field.json });
        }
        _ => items.push(value_of(schema, field, wire)?),
    }
    Ok(())
}

/// Decodes one map entry (key 1, value 2).
fn map_entry(schema: &'static Message, field: &Field, entry: &[u8]) -> Result<(String, Value), ProtobufError> {
    let mut key = String::new();
    let mut value = None;
    let mut reader = Reader::new(entry);
    while let Some((number, wire)) = reader.next_field(schema.name)? {
        match number {
            1 => key = utf8(bytes_of(schema, field, wire)?, schema.name, field.json)?,
            2 => value = Some(value_of(schema, field, wire)?),
            _ => unknown(schema.name, number, wire)?,
        }
    }
    // An absent value is the zero value of the value type.
    let value = match value {
        Some(value) => value,
        None => value_of(schema, field, Wire::Bytes(&[]))?,
    };
    Ok((key, value))
}

/// The JSON value of one element of `field`'s type.
fn value_of(schema: &'static Message, field: &Field, wire: Wire<'_>) -> Result<Value, ProtobufError> {
    let varint = |wire: Wire<'_>| match wire {
        Wire::Varint(v) => Ok(v),
        _ => Err(wrong(schema, field)),
    };
    Ok(match field.ty {
        Ty::Str => Value::String(utf8(bytes_of(schema, field, wire)?, schema.name, field.json)?),
        Ty::Bool => Value::Bool(varint(wire)? != 0),
        // Negative int32 values are sign-extended to 64 bits on the wire.
        Ty::Int => Value::from(varint(wire)? as i64),
        Ty::Bytes => Value::String(base64(bytes_of(schema, field, wire)?)),
        Ty::Msg(inner) | Ty::Inline(inner) => {
            let mut object = Map::new();
            decode_into(inner, bytes_of(schema, field, wire)?, &mut object)?;
            Value::Object(object)
        }
        Ty::Time | Ty::MicroTime => time(schema, field, bytes_of(schema, field, wire)?)?,
        Ty::IntOrString => int_or_string(schema, field, bytes_of(schema, field, wire)?)?,
        Ty::Quantity => quantity(schema, field, bytes_of(schema, field, wire)?)?,
        Ty::Raw => raw_json(schema, field, bytes_of(schema, field, wire)?)?,
        Ty::Unsupported => {
            return Err(ProtobufError::UnsupportedField { message: schema.name, field: field.json });
        }
    })
}

// === special types ===

/// Reads the fields of a small fixed-layout message, calling `each` with
/// every (number, value) pair.
fn fields_of<'a>(
    schema: &'static Message,
    bytes: &'a [u8],
    mut each: impl FnMut(u64, Wire<'a>) -> Result<(), ProtobufError>,
) -> Result<(), ProtobufError> {
    let mut reader = Reader::new(bytes);
    while let Some((number, wire)) = reader.next_field(schema.name)? {
        each(number, wire)?;
    }
    Ok(())
}

/// A `Time` or `MicroTime` (`{seconds: 1, nanos: 2}`) as Go's JSON prints it.
fn time(schema: &'static Message, field: &Field, bytes: &[u8]) -> Result<Value, ProtobufError> {
    if bytes.is_empty() {
        // Go encodes the zero time as an empty message and prints it as null.
        return Ok(Value::Null);
    }
    let (mut seconds, mut nanos) = (0i64, 0i64);
    fields_of(schema, bytes, |number, wire| match (number, wire) {
        (1, Wire::Varint(v)) => {
            seconds = v as i64;
            Ok(())
        }
        (2, Wire::Varint(v)) => {
            nanos = v as i64;
            Ok(())
        }
        (number, wire) => unknown("Timestamp", number, wire),
    })?;
    let bad = || ProtobufError::BadTimestamp { message: schema.name, field: field.json };
    let whole = jiff::Timestamp::new(seconds, 0).map_err(|_| bad())?;
    let base = whole.strftime("%Y-%m-%dT%H:%M:%S").to_string();
    Ok(Value::String(match field.ty {
        Ty::MicroTime => {
            let micros = u32::try_from(nanos / 1_000).map_err(|_| bad())?;
            if micros >= 1_000_000 {
                return Err(bad());
            }
            format!("{base}.{micros:06}Z")
        }
        _ => format!("{base}Z"),
    }))
}

/// An `IntOrString` (`{type: 1, intVal: 2, strVal: 3}`): type 1 is a string.
fn int_or_string(schema: &'static Message, field: &Field, bytes: &[u8]) -> Result<Value, ProtobufError> {
    let (mut is_string, mut int, mut string) = (false, 0i64, String::new());
    fields_of(schema, bytes, |number, wire| {
        match (number, wire) {
            (1, Wire::Varint(v)) => is_string = v == 1,
            (2, Wire::Varint(v)) => int = i64::from(v as i32),
            (3, Wire::Bytes(b)) => string = utf8(b, schema.name, field.json)?,
            (number, wire) => unknown("IntOrString", number, wire)?,
        }
        Ok(())
    })?;
    Ok(if is_string { Value::String(string) } else { Value::from(int) })
}

/// A `Quantity` (`{string: 1}`); the zero quantity prints as `"0"`.
fn quantity(schema: &'static Message, field: &Field, bytes: &[u8]) -> Result<Value, ProtobufError> {
    let mut text = String::new();
    fields_of(schema, bytes, |number, wire| {
        match (number, wire) {
            (1, Wire::Bytes(b)) => text = utf8(b, schema.name, field.json)?,
            (number, wire) => unknown("Quantity", number, wire)?,
        }
        Ok(())
    })?;
    if text.is_empty() {
        text.push('0');
    }
    Ok(Value::String(text))
}

/// A `RawExtension` or `FieldsV1` (`{raw: 1}`): the JSON it embeds, or
/// `null` when empty.
fn raw_json(schema: &'static Message, field: &Field, bytes: &[u8]) -> Result<Value, ProtobufError> {
    let mut raw: &[u8] = &[];
    fields_of(schema, bytes, |number, wire| {
        match (number, wire) {
            (1, Wire::Bytes(b)) => raw = b,
            (number, wire) => unknown("RawExtension", number, wire)?,
        }
        Ok(())
    })?;
    if raw.is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_slice(raw).map_err(|_| ProtobufError::EmbeddedNotJson { message: schema.name, field: field.json })
}

/// Standard base64 with padding, as Go's JSON prints `[]byte`.
pub(super) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_go() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"v"), "dg==");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"abc"), "YWJj");
        assert_eq!(base64(&[0xff, 0x00, 0x01]), "/wAB");
    }
}
