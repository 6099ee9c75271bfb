//! Field access and Go-style defaulting on schemaless JSON: a default is
//! set only where Go would see the zero value of the field's type (an
//! absent or null pointer, an empty string, a zero int).

use serde_json::{Map, Value, json};

/// The object under `key`, when `value` is an object and it is one too.
pub(super) fn child<'a>(value: &'a mut Value, key: &str) -> Option<&'a mut Map<String, Value>> {
    value.get_mut(key).and_then(Value::as_object_mut)
}

/// The objects in the array under `key` (non-objects are skipped).
pub(super) fn children<'a>(
    map: &'a mut Map<String, Value>,
    key: &str,
) -> impl Iterator<Item = &'a mut Map<String, Value>> {
    map.get_mut(key).and_then(Value::as_array_mut).into_iter().flatten().filter_map(Value::as_object_mut)
}

/// Whether a string field is unset in Go terms: absent, null or "".
pub(super) fn is_unset_str(value: Option<&Value>) -> bool {
    value.is_none_or(|v| v.is_null() || v == "")
}

/// Sets a string field that is absent, null or empty (a Go string field).
pub(super) fn default_str(map: &mut Map<String, Value>, key: &str, default: &str) {
    if is_unset_str(map.get(key)) {
        map.insert(key.to_owned(), json!(default));
    }
}

/// Sets a field that is absent or null (a Go pointer field).
pub(super) fn default_value(map: &mut Map<String, Value>, key: &str, default: Value) {
    if map.get(key).is_none_or(Value::is_null) {
        map.insert(key.to_owned(), default);
    }
}

/// Sets an integer field that is absent, null or 0 (a Go int field).
pub(super) fn default_nonzero(map: &mut Map<String, Value>, key: &str, default: i64) {
    if map.get(key).is_none_or(|v| v.is_null() || v == 0) {
        map.insert(key.to_owned(), json!(default));
    }
}

/// The object under `key`, created empty when absent or null (a Go struct
/// field, or a pointer to one the defaulter allocates); `None` when `key`
/// holds something else.
pub(super) fn object_entry<'a>(map: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Map<String, Value>> {
    let entry = map.entry(key).or_insert_with(|| json!({}));
    if entry.is_null() {
        *entry = json!({});
    }
    entry.as_object_mut()
}
