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
//! message (`Message`), written from upstream's `generated.proto` (field
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

mod message;
mod schema_apps;
mod schema_core;
mod schema_lease;
mod schema_meta;
mod schema_pod;
#[cfg(test)]
mod tests;
mod wire;

use message::{Message, decode_into};
use schema_apps::{DEPLOYMENT, REPLICA_SET};
use schema_core::{CONFIG_MAP, ENDPOINTS, NAMESPACE, SECRET, SERVICE, SERVICE_ACCOUNT};
use schema_lease::LEASE;
use schema_pod::{POD, POD_TEMPLATE};
use wire::Envelope;

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
        Builtin::Node
        | Builtin::CoreEvent
        | Builtin::EventsEvent
        | Builtin::PodDisruptionBudget
        | Builtin::ClusterRole
        | Builtin::ClusterRoleBinding
        | Builtin::Role
        | Builtin::RoleBinding => {
            return Err(ProtobufError::UnsupportedKind(kind));
        }
    })
}
