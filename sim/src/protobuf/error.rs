//! Why a protobuf body could not be turned into JSON.

use crate::resources::Builtin;

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
