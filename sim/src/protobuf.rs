//! Decoding of Kubernetes protobuf request bodies into JSON objects.
//!
//! kubectl's generator commands (`kubectl create deployment`, `configmap`,
//! `secret generic`, `namespace`, `service ...`, `serviceaccount`) send
//! their objects as `application/vnd.kubernetes.protobuf` and never retry
//! with JSON. kube-sim keeps objects as JSON, so this module turns such a
//! body into the JSON the API server would have printed for the same
//! object.
//!
//! A body is the magic `k8s\0` followed by a `runtime.Unknown` message: the
//! type meta (apiVersion, kind), the object's own encoding in `raw`, and the
//! content encoding and type. The object is decoded with a schema table per
//! message ([`Message`]), written from upstream's `generated.proto` (field
//! numbers and JSON names) and `types.go` (pointer fields and `omitempty`).
//!
//! Go's protobuf marshalling writes every non-pointer field, zero or not, so
//! a zero scalar is kept only where Go's JSON encoding would print it: in a
//! pointer field (`spec.replicas: 0`) or a field without `omitempty`
//! (`containerPort`). Message fields are printed whenever they are on the
//! wire, as Go prints non-pointer structs and set pointers, and a zero
//! `metav1.Time` prints as `null`, as in Go (`creationTimestamp: null`).
//!
//! Fields the tables do not know are never dropped silently: a zero value is
//! skipped (it is what Go writes for an unset field) and anything else is an
//! error, so the caller can ask for JSON instead.

use serde_json::{Map, Value};

use crate::resources::Builtin;

// The tables name field types without the `Ty::` prefix.
use Ty::{Bool, Bytes, Inline, Int, IntOrString, MicroTime, Msg, Quantity, Raw, Str, Time, Unsupported};

/// The media type of Kubernetes protobuf bodies.
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The four bytes every Kubernetes protobuf body starts with.
const MAGIC: &[u8; 4] = b"k8s\0";

/// Why a protobuf body could not be turned into JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtobufError {
    /// The body does not start with the `k8s\0` magic.
    #[error("protobuf body does not start with the Kubernetes magic bytes")]
    BadMagic,
    /// The body ends in the middle of a field, varint or length-delimited
    /// value.
    #[error("protobuf body is truncated")]
    Truncated,
    /// A varint is longer than ten bytes.
    #[error("protobuf body has a malformed varint")]
    BadVarint,
    /// A field uses a wire type protobuf 3 does not have (groups, or 6/7).
    #[error("field {number} of {message} uses unsupported wire type {wire_type}")]
    BadWireType {
        /// The message being decoded.
        message: &'static str,
        /// The field number.
        number: u64,
        /// The wire type found.
        wire_type: u64,
    },
    /// A known field arrived with a wire type that does not fit its type.
    #[error("field {field} of {message} has the wrong wire type")]
    WrongWireType {
        /// The message being decoded.
        message: &'static str,
        /// The JSON name of the field.
        field: &'static str,
    },
    /// A field number the schema does not know, with a non-zero value.
    #[error("field number {number} of {message} is not known to kube-sim; send JSON instead")]
    UnknownField {
        /// The message being decoded.
        message: &'static str,
        /// The field number.
        number: u64,
    },
    /// A known field whose type kube-sim does not decode (volumes, affinity,
    /// security contexts, ...), with a non-empty value.
    #[error("field {field} of {message} is not supported in protobuf bodies; send JSON instead")]
    UnsupportedField {
        /// The message being decoded.
        message: &'static str,
        /// The JSON name of the field.
        field: &'static str,
    },
    /// A string field holds bytes that are not UTF-8.
    #[error("field {field} of {message} is not valid UTF-8")]
    InvalidUtf8 {
        /// The message being decoded.
        message: &'static str,
        /// The JSON name of the field.
        field: &'static str,
    },
    /// A timestamp is outside the range kube-sim can print.
    #[error("field {field} of {message} holds an out-of-range timestamp")]
    BadTimestamp {
        /// The message being decoded.
        message: &'static str,
        /// The JSON name of the field.
        field: &'static str,
    },
    /// A `RawExtension` or `FieldsV1` field does not hold JSON.
    #[error("field {field} of {message} does not hold JSON")]
    EmbeddedNotJson {
        /// The message being decoded.
        message: &'static str,
        /// The JSON name of the field.
        field: &'static str,
    },
    /// The envelope names a content encoding (such as gzip) kube-sim does not
    /// undo.
    #[error("protobuf content encoding {0:?} is not supported")]
    UnsupportedEncoding(String),
    /// The resource type has no protobuf schema in kube-sim.
    #[error("protobuf bodies are not supported for {0:?}; send JSON instead")]
    UnsupportedKind(Builtin),
    /// The envelope's kind is not the kind of the resource being written.
    #[error("protobuf body holds a {found:?}, expected a {expected}")]
    KindMismatch {
        /// The kind the resource type stores.
        expected: &'static str,
        /// The kind named in the envelope.
        found: String,
    },
}

/// Decodes a Kubernetes protobuf body holding an object of type `kind` into
/// its JSON form.
///
/// # Errors
///
/// Fails when the body is not a well-formed envelope, when `kind` has no
/// schema here, or when the object holds a non-zero field the schema does
/// not know (see [`ProtobufError`]).
pub fn decode(kind: Builtin, body: &[u8]) -> Result<Value, ProtobufError> {
    let (expected, schema) = schema_for(kind)?;
    let raw = body.strip_prefix(MAGIC).ok_or(ProtobufError::BadMagic)?;
    let envelope = Envelope::parse(raw)?;
    if !envelope.content_encoding.is_empty() {
        return Err(ProtobufError::UnsupportedEncoding(envelope.content_encoding));
    }
    if !envelope.kind.is_empty() && envelope.kind != expected {
        return Err(ProtobufError::KindMismatch { expected, found: envelope.kind });
    }
    let mut object = Map::new();
    if !envelope.api_version.is_empty() {
        object.insert("apiVersion".to_owned(), Value::String(envelope.api_version));
    }
    if !envelope.kind.is_empty() {
        object.insert("kind".to_owned(), Value::String(envelope.kind));
    }
    decode_into(schema, envelope.raw, &mut object)?;
    Ok(Value::Object(object))
}

/// The kind name and top-level schema of a resource type.
fn schema_for(kind: Builtin) -> Result<(&'static str, &'static Message), ProtobufError> {
    Ok(match kind {
        Builtin::Namespace => ("Namespace", &NAMESPACE),
        Builtin::Pod => ("Pod", &POD),
        Builtin::Service => ("Service", &SERVICE),
        Builtin::Endpoints => ("Endpoints", &ENDPOINTS),
        Builtin::ConfigMap => ("ConfigMap", &CONFIG_MAP),
        Builtin::Secret => ("Secret", &SECRET),
        Builtin::ServiceAccount => ("ServiceAccount", &SERVICE_ACCOUNT),
        Builtin::PodTemplate => ("PodTemplate", &POD_TEMPLATE),
        Builtin::Deployment => ("Deployment", &DEPLOYMENT),
        Builtin::ReplicaSet => ("ReplicaSet", &REPLICA_SET),
        Builtin::Lease => ("Lease", &LEASE),
        Builtin::Node | Builtin::CoreEvent | Builtin::EventsEvent => {
            return Err(ProtobufError::UnsupportedKind(kind));
        }
    })
}

// === envelope ===

/// The fields of a `runtime.Unknown` envelope.
struct Envelope<'a> {
    /// `typeMeta.apiVersion`.
    api_version: String,
    /// `typeMeta.kind`.
    kind: String,
    /// The object's own encoding.
    raw: &'a [u8],
    /// `contentEncoding`; empty for plain bodies.
    content_encoding: String,
}

impl<'a> Envelope<'a> {
    /// Reads the envelope that follows the magic bytes.
    fn parse(bytes: &'a [u8]) -> Result<Self, ProtobufError> {
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
enum Wire<'a> {
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
    fn is_zero(self) -> bool {
        match self {
            Wire::Varint(v) | Wire::Fixed64(v) => v == 0,
            Wire::Fixed32(v) => v == 0,
            Wire::Bytes(b) => b.is_empty(),
        }
    }
}

/// A cursor over the fields of one encoded message.
struct Reader<'a> {
    /// The bytes not read yet.
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    /// Starts reading `bytes`.
    fn new(bytes: &'a [u8]) -> Self {
        Reader { rest: bytes }
    }

    /// Reads a base-128 varint.
    fn varint(&mut self) -> Result<u64, ProtobufError> {
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
    fn next_field(&mut self, message: &'static str) -> Result<Option<(u64, Wire<'a>)>, ProtobufError> {
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
fn unknown(message: &'static str, number: u64, value: Wire<'_>) -> Result<(), ProtobufError> {
    if value.is_zero() { Ok(()) } else { Err(ProtobufError::UnknownField { message, number }) }
}

/// Reads a string field.
fn utf8(bytes: &[u8], message: &'static str, field: &'static str) -> Result<String, ProtobufError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| ProtobufError::InvalidUtf8 { message, field })
}

// === schema ===

/// One message type: its Go name and its fields.
struct Message {
    /// The Go type name, for errors.
    name: &'static str,
    /// The fields, by number.
    fields: &'static [Field],
}

/// One field of a [`Message`].
struct Field {
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
enum Ty {
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
const fn omit(number: u64, json: &'static str, ty: Ty) -> Field {
    Field { number, json, ty, shape: Shape::One, keep_zero: false }
}

/// A single field whose zero value is printed (a pointer, or no
/// `omitempty`).
const fn keep(number: u64, json: &'static str, ty: Ty) -> Field {
    Field { number, json, ty, shape: Shape::One, keep_zero: true }
}

/// A single message-typed field: printed whenever it is on the wire.
const fn one(number: u64, json: &'static str, ty: Ty) -> Field {
    Field { number, json, ty, shape: Shape::One, keep_zero: true }
}

/// A repeated field.
const fn list(number: u64, json: &'static str, ty: Ty) -> Field {
    Field { number, json, ty, shape: Shape::List, keep_zero: true }
}

/// A `map<string, T>` field.
const fn map(number: u64, json: &'static str, ty: Ty) -> Field {
    Field { number, json, ty, shape: Shape::Map, keep_zero: true }
}

// === decoding ===

/// Decodes the fields of one `schema` message from `bytes` into `object`.
fn decode_into(schema: &'static Message, bytes: &[u8], object: &mut Map<String, Value>) -> Result<(), ProtobufError> {
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
fn base64(bytes: &[u8]) -> String {
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

// === tables ===
//
// One static per message, from upstream's generated.proto (numbers, JSON
// names) and types.go (pointers and omitempty). `omit` scalars drop their
// zero value; `keep` scalars print it.

/// `Deployment`.
static DEPLOYMENT: Message = Message {
    name: "Deployment",
    fields: &[
        one(1, "metadata", Msg(&OBJECT_META)),
        one(2, "spec", Msg(&DEPLOYMENT_SPEC)),
        one(3, "status", Msg(&DEPLOYMENT_STATUS)),
    ],
};

/// `ReplicaSet`.
static REPLICA_SET: Message = Message {
    name: "ReplicaSet",
    fields: &[
        one(1, "metadata", Msg(&OBJECT_META)),
        one(2, "spec", Msg(&REPLICA_SET_SPEC)),
        one(3, "status", Msg(&REPLICA_SET_STATUS)),
    ],
};

/// `Pod`.
static POD: Message = Message {
    name: "Pod",
    fields: &[
        one(1, "metadata", Msg(&OBJECT_META)),
        one(2, "spec", Msg(&POD_SPEC)),
        one(3, "status", Msg(&POD_STATUS)),
    ],
};

/// `PodTemplate`.
static POD_TEMPLATE: Message = Message {
    name: "PodTemplate",
    fields: &[one(1, "metadata", Msg(&OBJECT_META)), one(2, "template", Msg(&POD_TEMPLATE_SPEC))],
};

/// `Service`.
static SERVICE: Message = Message {
    name: "Service",
    fields: &[
        one(1, "metadata", Msg(&OBJECT_META)),
        one(2, "spec", Msg(&SERVICE_SPEC)),
        one(3, "status", Msg(&SERVICE_STATUS)),
    ],
};

/// `ConfigMap`.
static CONFIG_MAP: Message = Message {
    name: "ConfigMap",
    fields: &[
        one(1, "metadata", Msg(&OBJECT_META)),
        map(2, "data", Str),
        map(3, "binaryData", Bytes),
        keep(4, "immutable", Bool),
    ],
};

/// `Secret`.
static SECRET: Message = Message {
    name: "Secret",
    fields: &[
        one(1, "metadata", Msg(&OBJECT_META)),
        map(2, "data", Bytes),
        omit(3, "type", Str),
        map(4, "stringData", Str),
        keep(5, "immutable", Bool),
    ],
};

/// `Namespace`.
static NAMESPACE: Message = Message {
    name: "Namespace",
    fields: &[
        one(1, "metadata", Msg(&OBJECT_META)),
        one(2, "spec", Msg(&NAMESPACE_SPEC)),
        one(3, "status", Msg(&NAMESPACE_STATUS)),
    ],
};

/// `ServiceAccount`.
static SERVICE_ACCOUNT: Message = Message {
    name: "ServiceAccount",
    fields: &[
        one(1, "metadata", Msg(&OBJECT_META)),
        list(2, "secrets", Msg(&OBJECT_REFERENCE)),
        list(3, "imagePullSecrets", Msg(&LOCAL_OBJECT_REFERENCE)),
        keep(4, "automountServiceAccountToken", Bool),
    ],
};

/// `Endpoints`.
static ENDPOINTS: Message = Message {
    name: "Endpoints",
    fields: &[one(1, "metadata", Msg(&OBJECT_META)), list(2, "subsets", Msg(&ENDPOINT_SUBSET))],
};

/// `Lease`.
static LEASE: Message =
    Message { name: "Lease", fields: &[one(1, "metadata", Msg(&OBJECT_META)), one(2, "spec", Msg(&LEASE_SPEC))] };

/// `Condition`.
static CONDITION: Message = Message {
    name: "Condition",
    fields: &[
        keep(1, "type", Str),
        keep(2, "status", Str),
        omit(3, "observedGeneration", Int),
        one(4, "lastTransitionTime", Time),
        keep(5, "reason", Str),
        keep(6, "message", Str),
    ],
};

/// `ObjectMeta`.
static OBJECT_META: Message = Message {
    name: "ObjectMeta",
    fields: &[
        omit(1, "name", Str),
        omit(2, "generateName", Str),
        omit(3, "namespace", Str),
        omit(4, "selfLink", Str),
        omit(5, "uid", Str),
        omit(6, "resourceVersion", Str),
        omit(7, "generation", Int),
        one(8, "creationTimestamp", Time),
        one(9, "deletionTimestamp", Time),
        keep(10, "deletionGracePeriodSeconds", Int),
        map(11, "labels", Str),
        map(12, "annotations", Str),
        list(13, "ownerReferences", Msg(&OWNER_REFERENCE)),
        list(14, "finalizers", Str),
        list(17, "managedFields", Msg(&MANAGED_FIELDS_ENTRY)),
    ],
};

/// `DeploymentSpec`.
static DEPLOYMENT_SPEC: Message = Message {
    name: "DeploymentSpec",
    fields: &[
        keep(1, "replicas", Int),
        one(2, "selector", Msg(&LABEL_SELECTOR)),
        one(3, "template", Msg(&POD_TEMPLATE_SPEC)),
        one(4, "strategy", Msg(&DEPLOYMENT_STRATEGY)),
        omit(5, "minReadySeconds", Int),
        keep(6, "revisionHistoryLimit", Int),
        omit(7, "paused", Bool),
        keep(9, "progressDeadlineSeconds", Int),
    ],
};

/// `DeploymentStatus`.
static DEPLOYMENT_STATUS: Message = Message {
    name: "DeploymentStatus",
    fields: &[
        omit(1, "observedGeneration", Int),
        omit(2, "replicas", Int),
        omit(3, "updatedReplicas", Int),
        omit(4, "availableReplicas", Int),
        omit(5, "unavailableReplicas", Int),
        list(6, "conditions", Msg(&DEPLOYMENT_CONDITION)),
        omit(7, "readyReplicas", Int),
        keep(8, "collisionCount", Int),
        keep(9, "terminatingReplicas", Int),
    ],
};

/// `ReplicaSetSpec`.
static REPLICA_SET_SPEC: Message = Message {
    name: "ReplicaSetSpec",
    fields: &[
        keep(1, "replicas", Int),
        one(2, "selector", Msg(&LABEL_SELECTOR)),
        one(3, "template", Msg(&POD_TEMPLATE_SPEC)),
        omit(4, "minReadySeconds", Int),
    ],
};

/// `ReplicaSetStatus`.
static REPLICA_SET_STATUS: Message = Message {
    name: "ReplicaSetStatus",
    fields: &[
        keep(1, "replicas", Int),
        omit(2, "fullyLabeledReplicas", Int),
        omit(3, "observedGeneration", Int),
        omit(4, "readyReplicas", Int),
        omit(5, "availableReplicas", Int),
        list(6, "conditions", Msg(&REPLICA_SET_CONDITION)),
        keep(7, "terminatingReplicas", Int),
    ],
};

/// `PodSpec`.
static POD_SPEC: Message = Message {
    name: "PodSpec",
    fields: &[
        list(1, "volumes", Unsupported),
        list(2, "containers", Msg(&CONTAINER)),
        omit(3, "restartPolicy", Str),
        keep(4, "terminationGracePeriodSeconds", Int),
        keep(5, "activeDeadlineSeconds", Int),
        omit(6, "dnsPolicy", Str),
        map(7, "nodeSelector", Str),
        omit(8, "serviceAccountName", Str),
        omit(9, "serviceAccount", Str),
        omit(10, "nodeName", Str),
        omit(11, "hostNetwork", Bool),
        omit(12, "hostPID", Bool),
        omit(13, "hostIPC", Bool),
        one(14, "securityContext", Unsupported),
        list(15, "imagePullSecrets", Msg(&LOCAL_OBJECT_REFERENCE)),
        omit(16, "hostname", Str),
        omit(17, "subdomain", Str),
        one(18, "affinity", Unsupported),
        omit(19, "schedulerName", Str),
        list(20, "initContainers", Msg(&CONTAINER)),
        keep(21, "automountServiceAccountToken", Bool),
        list(22, "tolerations", Msg(&TOLERATION)),
        list(23, "hostAliases", Msg(&HOST_ALIAS)),
        omit(24, "priorityClassName", Str),
        keep(25, "priority", Int),
        one(26, "dnsConfig", Msg(&POD_DNS_CONFIG)),
        keep(27, "shareProcessNamespace", Bool),
        list(28, "readinessGates", Msg(&POD_READINESS_GATE)),
        keep(29, "runtimeClassName", Str),
        keep(30, "enableServiceLinks", Bool),
        keep(31, "preemptionPolicy", Str),
        map(32, "overhead", Quantity),
        list(33, "topologySpreadConstraints", Unsupported),
        list(34, "ephemeralContainers", Unsupported),
        keep(35, "setHostnameAsFQDN", Bool),
        one(36, "os", Msg(&POD_OS)),
        keep(37, "hostUsers", Bool),
        list(38, "schedulingGates", Msg(&POD_SCHEDULING_GATE)),
        list(39, "resourceClaims", Unsupported),
        one(40, "resources", Msg(&RESOURCE_REQUIREMENTS)),
        keep(41, "hostnameOverride", Str),
        one(42, "workloadRef", Unsupported),
    ],
};

/// `PodStatus`.
static POD_STATUS: Message = Message {
    name: "PodStatus",
    fields: &[
        omit(1, "phase", Str),
        list(2, "conditions", Msg(&POD_CONDITION)),
        omit(3, "message", Str),
        omit(4, "reason", Str),
        omit(5, "hostIP", Str),
        omit(6, "podIP", Str),
        one(7, "startTime", Time),
        list(8, "containerStatuses", Msg(&CONTAINER_STATUS)),
        omit(9, "qosClass", Str),
        list(10, "initContainerStatuses", Msg(&CONTAINER_STATUS)),
        omit(11, "nominatedNodeName", Str),
        list(12, "podIPs", Msg(&POD_IP)),
        list(13, "ephemeralContainerStatuses", Msg(&CONTAINER_STATUS)),
        omit(14, "resize", Str),
        list(15, "resourceClaimStatuses", Unsupported),
        list(16, "hostIPs", Msg(&HOST_IP)),
        omit(17, "observedGeneration", Int),
        one(18, "extendedResourceClaimStatus", Unsupported),
        map(19, "allocatedResources", Quantity),
        one(20, "resources", Msg(&RESOURCE_REQUIREMENTS)),
    ],
};

/// `PodTemplateSpec`.
static POD_TEMPLATE_SPEC: Message = Message {
    name: "PodTemplateSpec",
    fields: &[one(1, "metadata", Msg(&OBJECT_META)), one(2, "spec", Msg(&POD_SPEC))],
};

/// `ServiceSpec`.
static SERVICE_SPEC: Message = Message {
    name: "ServiceSpec",
    fields: &[
        list(1, "ports", Msg(&SERVICE_PORT)),
        map(2, "selector", Str),
        omit(3, "clusterIP", Str),
        omit(4, "type", Str),
        list(5, "externalIPs", Str),
        omit(7, "sessionAffinity", Str),
        omit(8, "loadBalancerIP", Str),
        list(9, "loadBalancerSourceRanges", Str),
        omit(10, "externalName", Str),
        omit(11, "externalTrafficPolicy", Str),
        omit(12, "healthCheckNodePort", Int),
        omit(13, "publishNotReadyAddresses", Bool),
        one(14, "sessionAffinityConfig", Msg(&SESSION_AFFINITY_CONFIG)),
        keep(17, "ipFamilyPolicy", Str),
        list(18, "clusterIPs", Str),
        list(19, "ipFamilies", Str),
        keep(20, "allocateLoadBalancerNodePorts", Bool),
        keep(21, "loadBalancerClass", Str),
        keep(22, "internalTrafficPolicy", Str),
        keep(23, "trafficDistribution", Str),
    ],
};

/// `ServiceStatus`.
static SERVICE_STATUS: Message = Message {
    name: "ServiceStatus",
    fields: &[one(1, "loadBalancer", Msg(&LOAD_BALANCER_STATUS)), list(2, "conditions", Msg(&CONDITION))],
};

/// `NamespaceSpec`.
static NAMESPACE_SPEC: Message = Message { name: "NamespaceSpec", fields: &[list(1, "finalizers", Str)] };

/// `NamespaceStatus`.
static NAMESPACE_STATUS: Message = Message {
    name: "NamespaceStatus",
    fields: &[omit(1, "phase", Str), list(2, "conditions", Msg(&NAMESPACE_CONDITION))],
};

/// `ObjectReference`.
static OBJECT_REFERENCE: Message = Message {
    name: "ObjectReference",
    fields: &[
        omit(1, "kind", Str),
        omit(2, "namespace", Str),
        omit(3, "name", Str),
        omit(4, "uid", Str),
        omit(5, "apiVersion", Str),
        omit(6, "resourceVersion", Str),
        omit(7, "fieldPath", Str),
    ],
};

/// `LocalObjectReference`.
static LOCAL_OBJECT_REFERENCE: Message = Message { name: "LocalObjectReference", fields: &[omit(1, "name", Str)] };

/// `EndpointSubset`.
static ENDPOINT_SUBSET: Message = Message {
    name: "EndpointSubset",
    fields: &[
        list(1, "addresses", Msg(&ENDPOINT_ADDRESS)),
        list(2, "notReadyAddresses", Msg(&ENDPOINT_ADDRESS)),
        list(3, "ports", Msg(&ENDPOINT_PORT)),
    ],
};

/// `LeaseSpec`.
static LEASE_SPEC: Message = Message {
    name: "LeaseSpec",
    fields: &[
        keep(1, "holderIdentity", Str),
        keep(2, "leaseDurationSeconds", Int),
        one(3, "acquireTime", MicroTime),
        one(4, "renewTime", MicroTime),
        keep(5, "leaseTransitions", Int),
        keep(6, "strategy", Str),
        keep(7, "preferredHolder", Str),
    ],
};

/// `OwnerReference`.
static OWNER_REFERENCE: Message = Message {
    name: "OwnerReference",
    fields: &[
        keep(1, "kind", Str),
        keep(3, "name", Str),
        keep(4, "uid", Str),
        keep(5, "apiVersion", Str),
        keep(6, "controller", Bool),
        keep(7, "blockOwnerDeletion", Bool),
    ],
};

/// `ManagedFieldsEntry`.
static MANAGED_FIELDS_ENTRY: Message = Message {
    name: "ManagedFieldsEntry",
    fields: &[
        omit(1, "manager", Str),
        omit(2, "operation", Str),
        omit(3, "apiVersion", Str),
        one(4, "time", Time),
        omit(6, "fieldsType", Str),
        one(7, "fieldsV1", Raw),
        omit(8, "subresource", Str),
    ],
};

/// `LabelSelector`.
static LABEL_SELECTOR: Message = Message {
    name: "LabelSelector",
    fields: &[map(1, "matchLabels", Str), list(2, "matchExpressions", Msg(&LABEL_SELECTOR_REQUIREMENT))],
};

/// `DeploymentStrategy`.
static DEPLOYMENT_STRATEGY: Message = Message {
    name: "DeploymentStrategy",
    fields: &[omit(1, "type", Str), one(2, "rollingUpdate", Msg(&ROLLING_UPDATE_DEPLOYMENT))],
};

/// `DeploymentCondition`.
static DEPLOYMENT_CONDITION: Message = Message {
    name: "DeploymentCondition",
    fields: &[
        keep(1, "type", Str),
        keep(2, "status", Str),
        omit(4, "reason", Str),
        omit(5, "message", Str),
        one(6, "lastUpdateTime", Time),
        one(7, "lastTransitionTime", Time),
    ],
};

/// `ReplicaSetCondition`.
static REPLICA_SET_CONDITION: Message = Message {
    name: "ReplicaSetCondition",
    fields: &[
        keep(1, "type", Str),
        keep(2, "status", Str),
        one(3, "lastTransitionTime", Time),
        omit(4, "reason", Str),
        omit(5, "message", Str),
    ],
};

/// `Container`.
static CONTAINER: Message = Message {
    name: "Container",
    fields: &[
        keep(1, "name", Str),
        omit(2, "image", Str),
        list(3, "command", Str),
        list(4, "args", Str),
        omit(5, "workingDir", Str),
        list(6, "ports", Msg(&CONTAINER_PORT)),
        list(7, "env", Msg(&ENV_VAR)),
        one(8, "resources", Msg(&RESOURCE_REQUIREMENTS)),
        list(9, "volumeMounts", Msg(&VOLUME_MOUNT)),
        one(10, "livenessProbe", Msg(&PROBE)),
        one(11, "readinessProbe", Msg(&PROBE)),
        one(12, "lifecycle", Msg(&LIFECYCLE)),
        omit(13, "terminationMessagePath", Str),
        omit(14, "imagePullPolicy", Str),
        one(15, "securityContext", Unsupported),
        omit(16, "stdin", Bool),
        omit(17, "stdinOnce", Bool),
        omit(18, "tty", Bool),
        list(19, "envFrom", Msg(&ENV_FROM_SOURCE)),
        omit(20, "terminationMessagePolicy", Str),
        list(21, "volumeDevices", Msg(&VOLUME_DEVICE)),
        one(22, "startupProbe", Msg(&PROBE)),
        list(23, "resizePolicy", Msg(&CONTAINER_RESIZE_POLICY)),
        keep(24, "restartPolicy", Str),
        list(25, "restartPolicyRules", Unsupported),
    ],
};

/// `Toleration`.
static TOLERATION: Message = Message {
    name: "Toleration",
    fields: &[
        omit(1, "key", Str),
        omit(2, "operator", Str),
        omit(3, "value", Str),
        omit(4, "effect", Str),
        keep(5, "tolerationSeconds", Int),
    ],
};

/// `HostAlias`.
static HOST_ALIAS: Message = Message { name: "HostAlias", fields: &[keep(1, "ip", Str), list(2, "hostnames", Str)] };

/// `PodDNSConfig`.
static POD_DNS_CONFIG: Message = Message {
    name: "PodDNSConfig",
    fields: &[list(1, "nameservers", Str), list(2, "searches", Str), list(3, "options", Msg(&POD_DNS_CONFIG_OPTION))],
};

/// `PodReadinessGate`.
static POD_READINESS_GATE: Message = Message { name: "PodReadinessGate", fields: &[keep(1, "conditionType", Str)] };

/// `PodOS`.
static POD_OS: Message = Message { name: "PodOS", fields: &[omit(1, "name", Str)] };

/// `PodSchedulingGate`.
static POD_SCHEDULING_GATE: Message = Message { name: "PodSchedulingGate", fields: &[keep(1, "name", Str)] };

/// `ResourceRequirements`.
static RESOURCE_REQUIREMENTS: Message = Message {
    name: "ResourceRequirements",
    fields: &[map(1, "limits", Quantity), map(2, "requests", Quantity), list(3, "claims", Msg(&RESOURCE_CLAIM))],
};

/// `PodCondition`.
static POD_CONDITION: Message = Message {
    name: "PodCondition",
    fields: &[
        keep(1, "type", Str),
        keep(2, "status", Str),
        one(3, "lastProbeTime", Time),
        one(4, "lastTransitionTime", Time),
        omit(5, "reason", Str),
        omit(6, "message", Str),
        omit(7, "observedGeneration", Int),
    ],
};

/// `HostIP`.
static HOST_IP: Message = Message { name: "HostIP", fields: &[keep(1, "ip", Str)] };

/// `PodIP`.
static POD_IP: Message = Message { name: "PodIP", fields: &[keep(1, "ip", Str)] };

/// `ContainerStatus`.
static CONTAINER_STATUS: Message = Message {
    name: "ContainerStatus",
    fields: &[
        keep(1, "name", Str),
        one(2, "state", Msg(&CONTAINER_STATE)),
        one(3, "lastState", Msg(&CONTAINER_STATE)),
        keep(4, "ready", Bool),
        keep(5, "restartCount", Int),
        keep(6, "image", Str),
        keep(7, "imageID", Str),
        omit(8, "containerID", Str),
        keep(9, "started", Bool),
        map(10, "allocatedResources", Quantity),
        one(11, "resources", Msg(&RESOURCE_REQUIREMENTS)),
        list(12, "volumeMounts", Unsupported),
        one(13, "user", Unsupported),
        list(14, "allocatedResourcesStatus", Unsupported),
        keep(15, "stopSignal", Str),
    ],
};

/// `ServicePort`.
static SERVICE_PORT: Message = Message {
    name: "ServicePort",
    fields: &[
        omit(1, "name", Str),
        omit(2, "protocol", Str),
        keep(3, "port", Int),
        one(4, "targetPort", IntOrString),
        omit(5, "nodePort", Int),
        keep(6, "appProtocol", Str),
    ],
};

/// `SessionAffinityConfig`.
static SESSION_AFFINITY_CONFIG: Message =
    Message { name: "SessionAffinityConfig", fields: &[one(1, "clientIP", Msg(&CLIENT_IP_CONFIG))] };

/// `LoadBalancerStatus`.
static LOAD_BALANCER_STATUS: Message =
    Message { name: "LoadBalancerStatus", fields: &[list(1, "ingress", Msg(&LOAD_BALANCER_INGRESS))] };

/// `NamespaceCondition`.
static NAMESPACE_CONDITION: Message = Message {
    name: "NamespaceCondition",
    fields: &[
        keep(1, "type", Str),
        keep(2, "status", Str),
        one(4, "lastTransitionTime", Time),
        omit(5, "reason", Str),
        omit(6, "message", Str),
    ],
};

/// `EndpointAddress`.
static ENDPOINT_ADDRESS: Message = Message {
    name: "EndpointAddress",
    fields: &[
        keep(1, "ip", Str),
        one(2, "targetRef", Msg(&OBJECT_REFERENCE)),
        omit(3, "hostname", Str),
        keep(4, "nodeName", Str),
    ],
};

/// `EndpointPort`.
static ENDPOINT_PORT: Message = Message {
    name: "EndpointPort",
    fields: &[omit(1, "name", Str), keep(2, "port", Int), omit(3, "protocol", Str), keep(4, "appProtocol", Str)],
};

/// `LabelSelectorRequirement`.
static LABEL_SELECTOR_REQUIREMENT: Message = Message {
    name: "LabelSelectorRequirement",
    fields: &[keep(1, "key", Str), keep(2, "operator", Str), list(3, "values", Str)],
};

/// `RollingUpdateDeployment`.
static ROLLING_UPDATE_DEPLOYMENT: Message = Message {
    name: "RollingUpdateDeployment",
    fields: &[one(1, "maxUnavailable", IntOrString), one(2, "maxSurge", IntOrString)],
};

/// `ContainerPort`.
static CONTAINER_PORT: Message = Message {
    name: "ContainerPort",
    fields: &[
        omit(1, "name", Str),
        omit(2, "hostPort", Int),
        keep(3, "containerPort", Int),
        omit(4, "protocol", Str),
        omit(5, "hostIP", Str),
    ],
};

/// `EnvFromSource`.
static ENV_FROM_SOURCE: Message = Message {
    name: "EnvFromSource",
    fields: &[
        omit(1, "prefix", Str),
        one(2, "configMapRef", Msg(&CONFIG_MAP_ENV_SOURCE)),
        one(3, "secretRef", Msg(&SECRET_ENV_SOURCE)),
    ],
};

/// `EnvVar`.
static ENV_VAR: Message = Message {
    name: "EnvVar",
    fields: &[keep(1, "name", Str), omit(2, "value", Str), one(3, "valueFrom", Msg(&ENV_VAR_SOURCE))],
};

/// `ContainerResizePolicy`.
static CONTAINER_RESIZE_POLICY: Message =
    Message { name: "ContainerResizePolicy", fields: &[keep(1, "resourceName", Str), keep(2, "restartPolicy", Str)] };

/// `VolumeMount`.
static VOLUME_MOUNT: Message = Message {
    name: "VolumeMount",
    fields: &[
        keep(1, "name", Str),
        omit(2, "readOnly", Bool),
        keep(3, "mountPath", Str),
        omit(4, "subPath", Str),
        keep(5, "mountPropagation", Str),
        omit(6, "subPathExpr", Str),
        keep(7, "recursiveReadOnly", Str),
    ],
};

/// `VolumeDevice`.
static VOLUME_DEVICE: Message =
    Message { name: "VolumeDevice", fields: &[keep(1, "name", Str), keep(2, "devicePath", Str)] };

/// `Probe`.
static PROBE: Message = Message {
    name: "Probe",
    fields: &[
        one(1, "", Inline(&PROBE_HANDLER)),
        omit(2, "initialDelaySeconds", Int),
        omit(3, "timeoutSeconds", Int),
        omit(4, "periodSeconds", Int),
        omit(5, "successThreshold", Int),
        omit(6, "failureThreshold", Int),
        keep(7, "terminationGracePeriodSeconds", Int),
    ],
};

/// `Lifecycle`.
static LIFECYCLE: Message = Message {
    name: "Lifecycle",
    fields: &[
        one(1, "postStart", Msg(&LIFECYCLE_HANDLER)),
        one(2, "preStop", Msg(&LIFECYCLE_HANDLER)),
        keep(3, "stopSignal", Str),
    ],
};

/// `PodDNSConfigOption`.
static POD_DNS_CONFIG_OPTION: Message =
    Message { name: "PodDNSConfigOption", fields: &[omit(1, "name", Str), keep(2, "value", Str)] };

/// `ResourceClaim`.
static RESOURCE_CLAIM: Message =
    Message { name: "ResourceClaim", fields: &[keep(1, "name", Str), omit(2, "request", Str)] };

/// `ContainerState`.
static CONTAINER_STATE: Message = Message {
    name: "ContainerState",
    fields: &[
        one(1, "waiting", Msg(&CONTAINER_STATE_WAITING)),
        one(2, "running", Msg(&CONTAINER_STATE_RUNNING)),
        one(3, "terminated", Msg(&CONTAINER_STATE_TERMINATED)),
    ],
};

/// `ClientIPConfig`.
static CLIENT_IP_CONFIG: Message = Message { name: "ClientIPConfig", fields: &[keep(1, "timeoutSeconds", Int)] };

/// `LoadBalancerIngress`.
static LOAD_BALANCER_INGRESS: Message = Message {
    name: "LoadBalancerIngress",
    fields: &[
        omit(1, "ip", Str),
        omit(2, "hostname", Str),
        keep(3, "ipMode", Str),
        list(4, "ports", Msg(&PORT_STATUS)),
    ],
};

/// `ConfigMapEnvSource`.
static CONFIG_MAP_ENV_SOURCE: Message = Message {
    name: "ConfigMapEnvSource",
    fields: &[one(1, "", Inline(&LOCAL_OBJECT_REFERENCE)), keep(2, "optional", Bool)],
};

/// `SecretEnvSource`.
static SECRET_ENV_SOURCE: Message = Message {
    name: "SecretEnvSource",
    fields: &[one(1, "", Inline(&LOCAL_OBJECT_REFERENCE)), keep(2, "optional", Bool)],
};

/// `EnvVarSource`.
static ENV_VAR_SOURCE: Message = Message {
    name: "EnvVarSource",
    fields: &[
        one(1, "fieldRef", Msg(&OBJECT_FIELD_SELECTOR)),
        one(2, "resourceFieldRef", Msg(&RESOURCE_FIELD_SELECTOR)),
        one(3, "configMapKeyRef", Msg(&CONFIG_MAP_KEY_SELECTOR)),
        one(4, "secretKeyRef", Msg(&SECRET_KEY_SELECTOR)),
        one(5, "fileKeyRef", Msg(&FILE_KEY_SELECTOR)),
    ],
};

/// `ProbeHandler`.
static PROBE_HANDLER: Message = Message {
    name: "ProbeHandler",
    fields: &[
        one(1, "exec", Msg(&EXEC_ACTION)),
        one(2, "httpGet", Msg(&HTTP_GET_ACTION)),
        one(3, "tcpSocket", Msg(&TCP_SOCKET_ACTION)),
        one(4, "grpc", Msg(&GRPC_ACTION)),
    ],
};

/// `LifecycleHandler`.
static LIFECYCLE_HANDLER: Message = Message {
    name: "LifecycleHandler",
    fields: &[
        one(1, "exec", Msg(&EXEC_ACTION)),
        one(2, "httpGet", Msg(&HTTP_GET_ACTION)),
        one(3, "tcpSocket", Msg(&TCP_SOCKET_ACTION)),
        one(4, "sleep", Msg(&SLEEP_ACTION)),
    ],
};

/// `ContainerStateWaiting`.
static CONTAINER_STATE_WAITING: Message =
    Message { name: "ContainerStateWaiting", fields: &[omit(1, "reason", Str), omit(2, "message", Str)] };

/// `ContainerStateRunning`.
static CONTAINER_STATE_RUNNING: Message =
    Message { name: "ContainerStateRunning", fields: &[one(1, "startedAt", Time)] };

/// `ContainerStateTerminated`.
static CONTAINER_STATE_TERMINATED: Message = Message {
    name: "ContainerStateTerminated",
    fields: &[
        keep(1, "exitCode", Int),
        omit(2, "signal", Int),
        omit(3, "reason", Str),
        omit(4, "message", Str),
        one(5, "startedAt", Time),
        one(6, "finishedAt", Time),
        omit(7, "containerID", Str),
    ],
};

/// `PortStatus`.
static PORT_STATUS: Message =
    Message { name: "PortStatus", fields: &[keep(1, "port", Int), keep(2, "protocol", Str), keep(3, "error", Str)] };

/// `ObjectFieldSelector`.
static OBJECT_FIELD_SELECTOR: Message =
    Message { name: "ObjectFieldSelector", fields: &[omit(1, "apiVersion", Str), keep(2, "fieldPath", Str)] };

/// `ResourceFieldSelector`.
static RESOURCE_FIELD_SELECTOR: Message = Message {
    name: "ResourceFieldSelector",
    fields: &[omit(1, "containerName", Str), keep(2, "resource", Str), one(3, "divisor", Quantity)],
};

/// `ConfigMapKeySelector`.
static CONFIG_MAP_KEY_SELECTOR: Message = Message {
    name: "ConfigMapKeySelector",
    fields: &[one(1, "", Inline(&LOCAL_OBJECT_REFERENCE)), keep(2, "key", Str), keep(3, "optional", Bool)],
};

/// `SecretKeySelector`.
static SECRET_KEY_SELECTOR: Message = Message {
    name: "SecretKeySelector",
    fields: &[one(1, "", Inline(&LOCAL_OBJECT_REFERENCE)), keep(2, "key", Str), keep(3, "optional", Bool)],
};

/// `FileKeySelector`.
static FILE_KEY_SELECTOR: Message = Message {
    name: "FileKeySelector",
    fields: &[keep(1, "volumeName", Str), keep(2, "path", Str), keep(3, "key", Str), keep(4, "optional", Bool)],
};

/// `ExecAction`.
static EXEC_ACTION: Message = Message { name: "ExecAction", fields: &[list(1, "command", Str)] };

/// `HTTPGetAction`.
static HTTP_GET_ACTION: Message = Message {
    name: "HTTPGetAction",
    fields: &[
        omit(1, "path", Str),
        one(2, "port", IntOrString),
        omit(3, "host", Str),
        omit(4, "scheme", Str),
        list(5, "httpHeaders", Msg(&HTTP_HEADER)),
    ],
};

/// `TCPSocketAction`.
static TCP_SOCKET_ACTION: Message =
    Message { name: "TCPSocketAction", fields: &[one(1, "port", IntOrString), omit(2, "host", Str)] };

/// `GRPCAction`.
static GRPC_ACTION: Message = Message { name: "GRPCAction", fields: &[keep(1, "port", Int), keep(2, "service", Str)] };

/// `SleepAction`.
static SLEEP_ACTION: Message = Message { name: "SleepAction", fields: &[keep(1, "seconds", Int)] };

/// `HTTPHeader`.
static HTTP_HEADER: Message = Message { name: "HTTPHeader", fields: &[omit(1, "name", Str), omit(2, "value", Str)] };

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes a captured body and compares it with the JSON kubectl builds
    /// for the same command (`--dry-run=client -o json`).
    fn check(kind: Builtin, body: &[u8], expected: &str) {
        let expected: Value = serde_json::from_str(expected).expect("fixture JSON");
        let decoded = decode(kind, body).expect("decodes");
        assert_eq!(decoded, expected);
    }

    /// `kubectl create deployment web --image=nginx --replicas=3 --port=80`.
    const DEPLOYMENT_WEB: &[u8] = b"k8s\x00\x0a\x15\x0a\x07apps/v1\x12\x0aDeployment\x12\xb8\x01\x0a\x1f\x0a\x03\
          web\x12\x00\x1a\x00\"\x00*\x002\x008\x00B\x00Z\x0a\x0a\x03app\x12\x03web\x12\
          \x86\x01\x08\x03\x12\x0c\x0a\x0a\x0a\x03app\x12\x03web\x1al\x0a\x1c\x0a\x00\
          \x12\x00\x1a\x00\"\x00*\x002\x008\x00B\x00Z\x0a\x0a\x03app\x12\x03web\x12L\
          \x12.\x0a\x05nginx\x12\x05nginx*\x002\x0a\x0a\x00\x10\x00\x18P\"\x00*\x00B\
          \x00j\x00r\x00\x80\x01\x00\x88\x01\x00\x90\x01\x00\xa2\x01\x00\x1a\x002\x00B\
          \x00J\x00R\x00X\x00`\x00h\x00\x82\x01\x00\x8a\x01\x00\x9a\x01\x00\xc2\x01\
          \x00\"\x02\x0a\x00(\x008\x00\x1a\x0c\x08\x00\x10\x00\x18\x00\x20\x00(\x008\
          \x00\x1a\x00\"\x00";

    #[test]
    fn deployment_web() {
        check(
            Builtin::Deployment,
            DEPLOYMENT_WEB,
            r#"{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"web","creationTimestamp":null,"labels":{"app":"web"}},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"web"}},"spec":{"containers":[{"name":"nginx","image":"nginx","ports":[{"containerPort":80}],"resources":{}}]}},"strategy":{}},"status":{}}"#,
        );
    }

    /// `kubectl create deployment zero --image=nginx --replicas=0`.
    const DEPLOYMENT_ZERO_REPLICAS: &[u8] =
        b"k8s\x00\x0a\x15\x0a\x07apps/v1\x12\x0aDeployment\x12\xaf\x01\x0a!\x0a\x04zer\
          o\x12\x00\x1a\x00\"\x00*\x002\x008\x00B\x00Z\x0b\x0a\x03app\x12\x04zero\x12|\
          \x08\x00\x12\x0d\x0a\x0b\x0a\x03app\x12\x04zero\x1aa\x0a\x1d\x0a\x00\x12\x00\
          \x1a\x00\"\x00*\x002\x008\x00B\x00Z\x0b\x0a\x03app\x12\x04zero\x12@\x12\"\
          \x0a\x05nginx\x12\x05nginx*\x00B\x00j\x00r\x00\x80\x01\x00\x88\x01\x00\x90\
          \x01\x00\xa2\x01\x00\x1a\x002\x00B\x00J\x00R\x00X\x00`\x00h\x00\x82\x01\x00\
          \x8a\x01\x00\x9a\x01\x00\xc2\x01\x00\"\x02\x0a\x00(\x008\x00\x1a\x0c\x08\x00\
          \x10\x00\x18\x00\x20\x00(\x008\x00\x1a\x00\"\x00";

    #[test]
    fn deployment_zero_replicas() {
        check(
            Builtin::Deployment,
            DEPLOYMENT_ZERO_REPLICAS,
            r#"{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"zero","creationTimestamp":null,"labels":{"app":"zero"}},"spec":{"replicas":0,"selector":{"matchLabels":{"app":"zero"}},"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"zero"}},"spec":{"containers":[{"name":"nginx","image":"nginx","resources":{}}]}},"strategy":{}},"status":{}}"#,
        );
    }

    /// `kubectl create deployment multi --image=nginx --image=busybox`.
    const DEPLOYMENT_TWO_IMAGES: &[u8] =
        b"k8s\x00\x0a\x15\x0a\x07apps/v1\x12\x0aDeployment\x12\xdd\x01\x0a#\x0a\x05mul\
          ti\x12\x00\x1a\x00\"\x00*\x002\x008\x00B\x00Z\x0c\x0a\x03app\x12\x05multi\
          \x12\xa7\x01\x08\x01\x12\x0e\x0a\x0c\x0a\x03app\x12\x05multi\x1a\x8a\x01\x0a\
          \x1e\x0a\x00\x12\x00\x1a\x00\"\x00*\x002\x008\x00B\x00Z\x0c\x0a\x03app\x12\
          \x05multi\x12h\x12\"\x0a\x05nginx\x12\x05nginx*\x00B\x00j\x00r\x00\x80\x01\
          \x00\x88\x01\x00\x90\x01\x00\xa2\x01\x00\x12&\x0a\x07busybox\x12\x07busybox*\
          \x00B\x00j\x00r\x00\x80\x01\x00\x88\x01\x00\x90\x01\x00\xa2\x01\x00\x1a\x002\
          \x00B\x00J\x00R\x00X\x00`\x00h\x00\x82\x01\x00\x8a\x01\x00\x9a\x01\x00\xc2\
          \x01\x00\"\x02\x0a\x00(\x008\x00\x1a\x0c\x08\x00\x10\x00\x18\x00\x20\x00(\
          \x008\x00\x1a\x00\"\x00";

    #[test]
    fn deployment_two_images() {
        check(
            Builtin::Deployment,
            DEPLOYMENT_TWO_IMAGES,
            r#"{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"multi","creationTimestamp":null,"labels":{"app":"multi"}},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"multi"}},"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"multi"}},"spec":{"containers":[{"name":"nginx","image":"nginx","resources":{}},{"name":"busybox","image":"busybox","resources":{}}]}},"strategy":{}},"status":{}}"#,
        );
    }

    /// `kubectl create configmap c --from-literal=a=b`.
    const CONFIGMAP_LITERAL: &[u8] = b"k8s\x00\x0a\x0f\x0a\x02v1\x12\x09ConfigMap\x12\x1b\x0a\x11\x0a\x01c\x12\x00\
          \x1a\x00\"\x00*\x002\x008\x00B\x00\x12\x06\x0a\x01a\x12\x01b\x1a\x00\"\x00";

    #[test]
    fn configmap_literal() {
        check(
            Builtin::ConfigMap,
            CONFIGMAP_LITERAL,
            r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","creationTimestamp":null},"data":{"a":"b"}}"#,
        );
    }

    /// `kubectl create configmap bin --from-literal=x=y --from-literal=e=`.
    const CONFIGMAP_EMPTY_VALUE: &[u8] = b"k8s\x00\x0a\x0f\x0a\x02v1\x12\x09ConfigMap\x12$\x0a\x13\x0a\x03bin\x12\x00\
          \x1a\x00\"\x00*\x002\x008\x00B\x00\x12\x05\x0a\x01e\x12\x00\x12\x06\x0a\x01x\
          \x12\x01y\x1a\x00\"\x00";

    #[test]
    fn configmap_empty_value() {
        check(
            Builtin::ConfigMap,
            CONFIGMAP_EMPTY_VALUE,
            r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"bin","creationTimestamp":null},"data":{"e":"","x":"y"}}"#,
        );
    }

    /// `kubectl create configmap binc --from-file=bf=<bytes ff 00 01>`.
    const CONFIGMAP_BINARY_DATA: &[u8] = b"k8s\x00\x0a\x0f\x0a\x02v1\x12\x09ConfigMap\x12!\x0a\x14\x0a\x04binc\x12\x00\
          \x1a\x00\"\x00*\x002\x008\x00B\x00\x1a\x09\x0a\x02bf\x12\x03\xff\x00\x01\x1a\
          \x00\"\x00";

    #[test]
    fn configmap_binary_data() {
        check(
            Builtin::ConfigMap,
            CONFIGMAP_BINARY_DATA,
            r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"binc","creationTimestamp":null},"binaryData":{"bf":"/wAB"}}"#,
        );
    }

    /// `kubectl create secret generic s --from-literal=k=v`.
    const SECRET_GENERIC: &[u8] = b"k8s\x00\x0a\x0c\x0a\x02v1\x12\x06Secret\x12\x1d\x0a\x11\x0a\x01s\x12\x00\x1a\
          \x00\"\x00*\x002\x008\x00B\x00\x12\x06\x0a\x01k\x12\x01v\x1a\x00\x1a\x00\"\
          \x00";

    #[test]
    fn secret_generic() {
        check(
            Builtin::Secret,
            SECRET_GENERIC,
            r#"{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s","creationTimestamp":null},"data":{"k":"dg=="}}"#,
        );
    }

    /// `kubectl create secret docker-registry dr --docker-server=r.io --docker-username=u --docker-password=p`.
    const SECRET_DOCKER_REGISTRY: &[u8] = b"k8s\x00\x0a\x0c\x0a\x02v1\x12\x06Secret\x12\x8b\x01\x0a\x12\x0a\x02dr\x12\
          \x00\x1a\x00\"\x00*\x002\x008\x00B\x00\x12U\x0a\x11.dockerconfigjson\x12@{\"\
          auths\":{\"r.io\":{\"username\":\"u\",\"password\":\"p\",\"auth\":\"dTpw\"}}\
          }\x1a\x1ekubernetes.io/dockerconfigjson\x1a\x00\"\x00";

    #[test]
    fn secret_docker_registry() {
        check(
            Builtin::Secret,
            SECRET_DOCKER_REGISTRY,
            r#"{"kind":"Secret","apiVersion":"v1","metadata":{"name":"dr","creationTimestamp":null},"data":{".dockerconfigjson":"eyJhdXRocyI6eyJyLmlvIjp7InVzZXJuYW1lIjoidSIsInBhc3N3b3JkIjoicCIsImF1dGgiOiJkVHB3In19fQ=="},"type":"kubernetes.io/dockerconfigjson"}"#,
        );
    }

    /// `kubectl create namespace x`.
    const NAMESPACE: &[u8] = b"k8s\x00\x0a\x0f\x0a\x02v1\x12\x09Namespace\x12\x19\x0a\x11\x0a\x01x\x12\x00\
          \x1a\x00\"\x00*\x002\x008\x00B\x00\x12\x00\x1a\x02\x0a\x00\x1a\x00\"\x00";

    #[test]
    fn namespace() {
        check(
            Builtin::Namespace,
            NAMESPACE,
            r#"{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"x","creationTimestamp":null},"spec":{},"status":{}}"#,
        );
    }

    /// `kubectl create service clusterip svc --tcp=80:8080`.
    const SERVICE_CLUSTERIP: &[u8] = b"k8s\x00\x0a\x0d\x0a\x02v1\x12\x07Service\x12i\x0a\x1f\x0a\x03svc\x12\x00\x1a\
          \x00\"\x00*\x002\x008\x00B\x00Z\x0a\x0a\x03app\x12\x03svc\x12B\x0a\x1b\x0a\
          \x0780-8080\x12\x03TCP\x18P\"\x07\x08\x00\x10\x90?\x1a\x00(\x00\x12\x0a\x0a\
          \x03app\x12\x03svc\x1a\x00\"\x09ClusterIP:\x00B\x00R\x00Z\x00`\x00h\x00\x1a\
          \x02\x0a\x00\x1a\x00\"\x00";

    #[test]
    fn service_clusterip() {
        check(
            Builtin::Service,
            SERVICE_CLUSTERIP,
            r#"{"kind":"Service","apiVersion":"v1","metadata":{"name":"svc","creationTimestamp":null,"labels":{"app":"svc"}},"spec":{"ports":[{"name":"80-8080","protocol":"TCP","port":80,"targetPort":8080}],"selector":{"app":"svc"},"type":"ClusterIP"},"status":{"loadBalancer":{}}}"#,
        );
    }

    /// `kubectl create service nodeport np --tcp=80:8080 --node-port=30080`.
    const SERVICE_NODEPORT: &[u8] = b"k8s\x00\x0a\x0d\x0a\x02v1\x12\x07Service\x12g\x0a\x1d\x0a\x02np\x12\x00\x1a\
          \x00\"\x00*\x002\x008\x00B\x00Z\x09\x0a\x03app\x12\x02np\x12B\x0a\x1d\x0a\
          \x0780-8080\x12\x03TCP\x18P\"\x07\x08\x00\x10\x90?\x1a\x00(\x80\xeb\x01\x12\
          \x09\x0a\x03app\x12\x02np\x1a\x00\"\x08NodePort:\x00B\x00R\x00Z\x00`\x00h\
          \x00\x1a\x02\x0a\x00\x1a\x00\"\x00";

    #[test]
    fn service_nodeport() {
        check(
            Builtin::Service,
            SERVICE_NODEPORT,
            r#"{"kind":"Service","apiVersion":"v1","metadata":{"name":"np","creationTimestamp":null,"labels":{"app":"np"}},"spec":{"ports":[{"name":"80-8080","protocol":"TCP","port":80,"targetPort":8080,"nodePort":30080}],"selector":{"app":"np"},"type":"NodePort"},"status":{"loadBalancer":{}}}"#,
        );
    }

    /// `kubectl create service externalname en --external-name=example.com`.
    const SERVICE_EXTERNALNAME: &[u8] = b"k8s\x00\x0a\x0d\x0a\x02v1\x12\x07Service\x12W\x0a\x1d\x0a\x02en\x12\x00\x1a\
          \x00\"\x00*\x002\x008\x00B\x00Z\x09\x0a\x03app\x12\x02en\x122\x12\x09\x0a\
          \x03app\x12\x02en\x1a\x00\"\x0cExternalName:\x00B\x00R\x0bexample.comZ\x00`\
          \x00h\x00\x1a\x02\x0a\x00\x1a\x00\"\x00";

    #[test]
    fn service_externalname() {
        check(
            Builtin::Service,
            SERVICE_EXTERNALNAME,
            r#"{"kind":"Service","apiVersion":"v1","metadata":{"name":"en","creationTimestamp":null,"labels":{"app":"en"}},"spec":{"selector":{"app":"en"},"type":"ExternalName","externalName":"example.com"},"status":{"loadBalancer":{}}}"#,
        );
    }

    /// `kubectl create service loadbalancer lb --tcp=443:8443`.
    const SERVICE_LOADBALANCER: &[u8] = b"k8s\x00\x0a\x0d\x0a\x02v1\x12\x07Service\x12k\x0a\x1d\x0a\x02lb\x12\x00\x1a\
          \x00\"\x00*\x002\x008\x00B\x00Z\x09\x0a\x03app\x12\x02lb\x12F\x0a\x1d\x0a\
          \x08443-8443\x12\x03TCP\x18\xbb\x03\"\x07\x08\x00\x10\xfbA\x1a\x00(\x00\x12\
          \x09\x0a\x03app\x12\x02lb\x1a\x00\"\x0cLoadBalancer:\x00B\x00R\x00Z\x00`\x00\
          h\x00\x1a\x02\x0a\x00\x1a\x00\"\x00";

    #[test]
    fn service_loadbalancer() {
        check(
            Builtin::Service,
            SERVICE_LOADBALANCER,
            r#"{"kind":"Service","apiVersion":"v1","metadata":{"name":"lb","creationTimestamp":null,"labels":{"app":"lb"}},"spec":{"ports":[{"name":"443-8443","protocol":"TCP","port":443,"targetPort":8443}],"selector":{"app":"lb"},"type":"LoadBalancer"},"status":{"loadBalancer":{}}}"#,
        );
    }

    /// `kubectl create serviceaccount sa`.
    const SERVICEACCOUNT: &[u8] = b"k8s\x00\x0a\x14\x0a\x02v1\x12\x0eServiceAccount\x12\x14\x0a\x12\x0a\x02sa\
          \x12\x00\x1a\x00\"\x00*\x002\x008\x00B\x00\x1a\x00\"\x00";

    #[test]
    fn serviceaccount() {
        check(
            Builtin::ServiceAccount,
            SERVICEACCOUNT,
            r#"{"kind":"ServiceAccount","apiVersion":"v1","metadata":{"name":"sa","creationTimestamp":null}}"#,
        );
    }

    // === hand-built bodies ===

    /// Encodes a length-delimited field.
    fn bytes_field(number: u64, value: &[u8]) -> Vec<u8> {
        let mut out = varint(number << 3 | 2);
        out.extend(varint(value.len() as u64));
        out.extend_from_slice(value);
        out
    }

    /// Encodes a varint field.
    fn varint_field(number: u64, value: u64) -> Vec<u8> {
        let mut out = varint(number << 3);
        out.extend(varint(value));
        out
    }

    /// Encodes a base-128 varint.
    fn varint(mut value: u64) -> Vec<u8> {
        let mut out = Vec::new();
        while value >= 0x80 {
            out.push((value as u8) | 0x80);
            value >>= 7;
        }
        out.push(value as u8);
        out
    }

    /// Wraps an object encoding in the magic and a `runtime.Unknown`.
    fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
        let type_meta = [bytes_field(1, api_version.as_bytes()), bytes_field(2, kind.as_bytes())].concat();
        [b"k8s\0".to_vec(), bytes_field(1, &type_meta), bytes_field(2, raw), bytes_field(3, b""), bytes_field(4, b"")]
            .concat()
    }

    /// A `Time`/`MicroTime` message.
    fn timestamp(seconds: u64, nanos: u64) -> Vec<u8> {
        [varint_field(1, seconds), varint_field(2, nanos)].concat()
    }

    /// A map entry.
    fn entry(key: &str, value: &[u8]) -> Vec<u8> {
        [bytes_field(1, key.as_bytes()), bytes_field(2, value)].concat()
    }

    #[test]
    fn lease_times_managed_fields_and_pointers() {
        let managed = [
            bytes_field(1, b"kcm"),
            bytes_field(2, b"Update"),
            bytes_field(3, b"coordination.k8s.io/v1"),
            bytes_field(4, &timestamp(1_700_000_000, 0)),
            bytes_field(6, b"FieldsV1"),
            bytes_field(7, &bytes_field(1, br#"{"f:spec":{"f:holderIdentity":{}}}"#)),
            bytes_field(8, b""),
        ]
        .concat();
        let meta = [
            bytes_field(1, b"l"),
            bytes_field(3, b"kube-node-lease"),
            varint_field(7, 0),
            bytes_field(8, &timestamp(1_700_000_000, 999_999_999)),
            bytes_field(17, &managed),
        ]
        .concat();
        let spec = [
            bytes_field(1, b"node-1"),
            varint_field(2, 0),
            bytes_field(4, &timestamp(1_700_000_001, 123_456_789)),
            varint_field(5, 7),
        ]
        .concat();
        let body =
            envelope("coordination.k8s.io/v1", "Lease", &[bytes_field(1, &meta), bytes_field(2, &spec)].concat());
        let expected = serde_json::json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": "l",
                "namespace": "kube-node-lease",
                "creationTimestamp": "2023-11-14T22:13:20Z",
                "managedFields": [{
                    "manager": "kcm",
                    "operation": "Update",
                    "apiVersion": "coordination.k8s.io/v1",
                    "time": "2023-11-14T22:13:20Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {"f:holderIdentity": {}}},
                }],
            },
            "spec": {
                "holderIdentity": "node-1",
                "leaseDurationSeconds": 0,
                "renewTime": "2023-11-14T22:13:21.123456Z",
                "leaseTransitions": 7,
            },
        });
        assert_eq!(decode(Builtin::Lease, &body), Ok(expected));
    }

    #[test]
    fn deployment_int_or_string_quantities_and_inlined_refs() {
        let int_or_string_int = [varint_field(1, 0), varint_field(2, 1), bytes_field(3, b"")].concat();
        let int_or_string_str = [varint_field(1, 1), varint_field(2, 0), bytes_field(3, b"25%")].concat();
        let rolling = [bytes_field(1, &int_or_string_int), bytes_field(2, &int_or_string_str)].concat();
        let strategy = [bytes_field(1, b"RollingUpdate"), bytes_field(2, &rolling)].concat();
        let key_ref = [bytes_field(1, &bytes_field(1, b"cm")), bytes_field(2, b"k")].concat();
        let env = [bytes_field(1, b"FROM_CM"), bytes_field(2, b""), bytes_field(3, &bytes_field(3, &key_ref))].concat();
        let resources = [
            bytes_field(1, &entry("cpu", &bytes_field(1, b"100m"))),
            bytes_field(2, &entry("memory", &bytes_field(1, b"64Mi"))),
        ]
        .concat();
        let probe_port = [varint_field(1, 1), varint_field(2, 0), bytes_field(3, b"http")].concat();
        let http_get = [bytes_field(1, b"/healthz"), bytes_field(2, &probe_port)].concat();
        let probe =
            [bytes_field(1, &bytes_field(2, &http_get)), varint_field(2, 0), varint_field(3, 5), varint_field(7, 0)]
                .concat();
        let container = [
            bytes_field(1, b"app"),
            bytes_field(2, b"nginx"),
            bytes_field(3, b"sh"),
            bytes_field(3, b""),
            bytes_field(7, &env),
            bytes_field(8, &resources),
            bytes_field(10, &probe),
        ]
        .concat();
        let toleration = [bytes_field(1, b"k"), bytes_field(2, b"Exists"), varint_field(5, (-1i64) as u64)].concat();
        let pod_spec = [
            bytes_field(2, &container),
            varint_field(4, 0),
            varint_field(11, 0),
            varint_field(21, 0),
            bytes_field(22, &toleration),
        ]
        .concat();
        let template = [bytes_field(1, b""), bytes_field(2, &pod_spec)].concat();
        let spec = [
            varint_field(1, 2),
            bytes_field(3, &template),
            bytes_field(4, &strategy),
            varint_field(5, 0),
            varint_field(6, 0),
        ]
        .concat();
        let body =
            envelope("apps/v1", "Deployment", &[bytes_field(1, &bytes_field(1, b"d")), bytes_field(2, &spec)].concat());
        let expected = serde_json::json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "d"},
            "spec": {
                "replicas": 2,
                "revisionHistoryLimit": 0,
                "template": {
                    "metadata": {},
                    "spec": {
                        "containers": [{
                            "name": "app",
                            "image": "nginx",
                            "command": ["sh", ""],
                            "env": [{
                                "name": "FROM_CM",
                                "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}},
                            }],
                            "resources": {"limits": {"cpu": "100m"}, "requests": {"memory": "64Mi"}},
                            "livenessProbe": {
                                "httpGet": {"path": "/healthz", "port": "http"},
                                "timeoutSeconds": 5,
                                "terminationGracePeriodSeconds": 0,
                            },
                        }],
                        "terminationGracePeriodSeconds": 0,
                        "automountServiceAccountToken": false,
                        "tolerations": [{"key": "k", "operator": "Exists", "tolerationSeconds": -1}],
                    },
                },
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "25%"},
                },
            },
        });
        assert_eq!(decode(Builtin::Deployment, &body), Ok(expected));
    }

    // === errors ===

    #[test]
    fn bad_magic_is_rejected() {
        assert_eq!(decode(Builtin::ConfigMap, br#"{"kind":"ConfigMap"}"#), Err(ProtobufError::BadMagic));
        assert_eq!(decode(Builtin::ConfigMap, b"k8s"), Err(ProtobufError::BadMagic));
    }

    #[test]
    fn truncated_body_is_rejected() {
        for len in [5, 20, 40, DEPLOYMENT_WEB.len() - 1] {
            assert_eq!(
                decode(Builtin::Deployment, &DEPLOYMENT_WEB[..len]),
                Err(ProtobufError::Truncated),
                "cut at {len}"
            );
        }
    }

    #[test]
    fn unknown_field_with_a_value_is_rejected() {
        let raw = [bytes_field(1, &bytes_field(1, b"c")), varint_field(99, 1)].concat();
        let body = envelope("v1", "ConfigMap", &raw);
        assert_eq!(
            decode(Builtin::ConfigMap, &body),
            Err(ProtobufError::UnknownField { message: "ConfigMap", number: 99 })
        );
    }

    #[test]
    fn unknown_field_with_zero_value_is_skipped() {
        let raw = [bytes_field(1, &bytes_field(1, b"c")), varint_field(99, 0), bytes_field(98, b"")].concat();
        let body = envelope("v1", "ConfigMap", &raw);
        let expected = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
        assert_eq!(decode(Builtin::ConfigMap, &body), Ok(expected));
    }

    #[test]
    fn unsupported_field_with_a_value_is_rejected() {
        let volume = bytes_field(1, b"data");
        let pod_spec = [bytes_field(1, &volume), bytes_field(2, &bytes_field(1, b"c"))].concat();
        let body = envelope("v1", "Pod", &bytes_field(2, &pod_spec));
        assert_eq!(
            decode(Builtin::Pod, &body),
            Err(ProtobufError::UnsupportedField { message: "PodSpec", field: "volumes" })
        );
    }

    #[test]
    fn unsupported_kind_and_kind_mismatch_are_rejected() {
        assert_eq!(decode(Builtin::Node, SERVICEACCOUNT), Err(ProtobufError::UnsupportedKind(Builtin::Node)));
        assert_eq!(
            decode(Builtin::Secret, CONFIGMAP_LITERAL),
            Err(ProtobufError::KindMismatch { expected: "Secret", found: "ConfigMap".to_owned() })
        );
    }

    #[test]
    fn content_encoding_is_rejected() {
        let mut body = envelope("v1", "ConfigMap", b"");
        body.extend(bytes_field(3, b"gzip"));
        assert_eq!(decode(Builtin::ConfigMap, &body), Err(ProtobufError::UnsupportedEncoding("gzip".to_owned())));
    }

    #[test]
    fn base64_matches_go() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"v"), "dg==");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"abc"), "YWJj");
        assert_eq!(base64(&[0xff, 0x00, 0x01]), "/wAB");
    }
}
