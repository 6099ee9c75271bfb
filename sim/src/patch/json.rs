//! RFC 6902 JSON patch and RFC 7386 JSON merge patch, through the
//! `json-patch` crate, and the shape checks they share.

use serde_json::{Map, Value};

use super::error::{PatchError, Result};

/// RFC 6902: the body must decode as a list of operations (else 400); an
/// operation that fails (`test` mismatch, missing path) is a 422.
pub(super) fn apply_json_patch(original: &Value, body: &[u8]) -> Result<Value> {
    let ops: json_patch::Patch =
        serde_json::from_slice(body).map_err(|e| PatchError::Malformed(format!("invalid JSON patch: {e}")))?;
    let mut doc = original.clone();
    json_patch::patch(&mut doc, &ops).map_err(|e| PatchError::Failed(e.to_string()))?;
    Ok(doc)
}

/// RFC 7386: the body must be a JSON object.
pub(super) fn apply_merge_patch(original: &Value, body: &[u8]) -> Result<Value> {
    let patch = parse_object(body, "JSON merge patch")?;
    let mut doc = original.clone();
    json_patch::merge(&mut doc, &Value::Object(patch));
    Ok(doc)
}

/// Decodes a body that must be one JSON object.
pub(super) fn parse_object(body: &[u8], what: &str) -> Result<Map<String, Value>> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(PatchError::Malformed(format!("a {what} must be a JSON object, not {}", json_type(&other)))),
        Err(e) => Err(PatchError::Malformed(format!("invalid {what}: {e}"))),
    }
}

/// The JSON type name of a value, for messages.
fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
