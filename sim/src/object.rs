//! Reading and writing the common parts of stored objects: the fields of
//! `metadata` every layer looks at, on schemaless JSON as the store keeps
//! it, and the API server's timestamp format.
//!
//! A leaf: it needs nothing else from kube-sim.

use rand::Rng;
use serde_json::{Value, json};

/// The annotation that named a PersistentVolumeClaim's storage class
/// before `spec.storageClassName` existed; upstream still honours it.
pub const BETA_STORAGE_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";

/// The current time as the API server writes timestamps (RFC 3339, seconds).
pub fn now_rfc3339() -> String {
    let now = jiff::Timestamp::now();
    jiff::Timestamp::from_second(now.as_second()).map_or_else(|_| now.to_string(), |t| t.to_string())
}

/// `metadata.name`, or "".
pub fn name(object: &Value) -> &str {
    object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("")
}

/// The name admission reports an object by: `metadata.name`, or before one
/// is generated its `generateName` prefix (as `admission.NewForbidden` names
/// a pod whose name is not generated yet).
pub fn admission_name(object: &Value) -> &str {
    match name(object) {
        "" => object.pointer("/metadata/generateName").and_then(Value::as_str).unwrap_or(""),
        given => given,
    }
}

/// A name from a prefix: the prefix plus five characters from the API
/// server's alphabet (no vowels, no look-alike digits), as
/// `names.SimpleNameGenerator` makes them.
pub fn generate_name(prefix: &str) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut rng = rand::rng();
    let suffix: String = (0..5).map(|_| char::from(ALPHABET[rng.random_range(0..ALPHABET.len())])).collect();
    format!("{prefix}{suffix}")
}

/// `metadata.namespace`, or "".
pub fn namespace(object: &Value) -> &str {
    object.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or("")
}

/// `metadata.resourceVersion`, or "".
pub fn resource_version(object: &Value) -> &str {
    object.pointer("/metadata/resourceVersion").and_then(Value::as_str).unwrap_or("")
}

/// `metadata.finalizers`.
pub fn finalizers(object: &Value) -> Vec<String> {
    object
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

/// Whether `metadata.deletionTimestamp` is set.
pub fn is_terminating(object: &Value) -> bool {
    object.pointer("/metadata/deletionTimestamp").is_some_and(|v| !v.is_null())
}

/// The metadata map, created if missing.
pub fn metadata_mut(object: &mut Value) -> &mut serde_json::Map<String, Value> {
    if !object.get("metadata").is_some_and(Value::is_object) {
        object["metadata"] = json!({});
    }
    match object.get_mut("metadata") {
        Some(Value::Object(m)) => m,
        _ => unreachable!("metadata was just made an object"),
    }
}
