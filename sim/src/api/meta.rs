//! Reading and writing the common parts of objects (`metadata`, `kind`),
//! and rendering objects in the representation a client asked for.

use bytes::Bytes;
use rand::Rng;
use serde_json::{Value, json};

use super::Representation;
use crate::resources::ResourceType;
use crate::table;

/// The current time as the API server writes timestamps (RFC 3339, seconds).
pub fn now_rfc3339() -> String {
    let now = jiff::Timestamp::now();
    jiff::Timestamp::from_second(now.as_second()).map_or_else(|_| now.to_string(), |t| t.to_string())
}

/// `metadata.name`, or "".
pub fn name(object: &Value) -> &str {
    object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("")
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

/// A name from `generateName`: the prefix plus five characters from the API
/// server's alphabet (no vowels, no look-alike digits).
pub fn generate_name(prefix: &str) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut rng = rand::rng();
    let suffix: String = (0..5).map(|_| char::from(ALPHABET[rng.random_range(0..ALPHABET.len())])).collect();
    format!("{prefix}{suffix}")
}

/// The `List` kind name of a type (`PodList`).
pub fn list_kind(rt: &ResourceType) -> String {
    format!("{}List", rt.kind)
}

/// The metadata-only form of an object.
pub fn partial_metadata(object: &Value) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": object.get("metadata").cloned().unwrap_or_else(|| json!({})),
    })
}

/// An object rendered for the client: the stored bytes as they are, or
/// transformed.
pub fn render(rt: &ResourceType, repr: Representation, bytes: &Bytes) -> Bytes {
    match repr {
        Representation::Object => bytes.clone(),
        Representation::Metadata => {
            let value: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
            Bytes::from(partial_metadata(&value).to_string())
        }
        Representation::Table(include) => {
            let value: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
            let meta = json!({"resourceVersion": resource_version(&value)});
            let t = table::table(rt.builtin, &[value], include, jiff::Timestamp::now(), meta);
            Bytes::from(t.to_string())
        }
    }
}

/// The `autoscaling/v1` Scale view of an object with `spec.replicas`.
pub fn scale_of(object: &Value) -> Value {
    let meta = object.get("metadata").cloned().unwrap_or_else(|| json!({}));
    let keep = ["name", "namespace", "uid", "resourceVersion", "creationTimestamp"];
    let metadata: serde_json::Map<String, Value> = meta
        .as_object()
        .map(|m| m.iter().filter(|(k, _)| keep.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": metadata,
        "spec": {"replicas": object.pointer("/spec/replicas").and_then(Value::as_i64).unwrap_or(0)},
        "status": {
            "replicas": object.pointer("/status/replicas").and_then(Value::as_i64).unwrap_or(0),
            "selector": selector_string(object.pointer("/spec/selector")),
        },
    })
}

/// A `LabelSelector` in the string syntax (`app=web,tier in (a,b)`).
fn selector_string(selector: Option<&Value>) -> String {
    let Some(selector) = selector else { return String::new() };
    let mut terms: Vec<String> = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or(""))).collect())
        .unwrap_or_default();
    for expr in selector.get("matchExpressions").and_then(Value::as_array).into_iter().flatten() {
        let key = expr.get("key").and_then(Value::as_str).unwrap_or("");
        let values: Vec<&str> = expr
            .get("values")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let term = match expr.get("operator").and_then(Value::as_str).unwrap_or("") {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_owned(),
            "DoesNotExist" => format!("!{key}"),
            _ => continue,
        };
        terms.push(term);
    }
    terms.sort();
    terms.join(",")
}
