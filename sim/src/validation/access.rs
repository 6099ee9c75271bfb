//! Reading the JSON under validation: a missing field, or one of the wrong
//! type, reads as Go's zero value; and upstream's semantic equality.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// The JSON null every missing field reads as.
static NULL: Value = Value::Null;

/// `value[key]`, null when absent or when `value` is not an object.
pub(super) fn at<'a>(value: &'a Value, key: &str) -> &'a Value {
    value.get(key).unwrap_or(&NULL)
}

/// A string field, "" when absent or not a string.
pub(super) fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    str_of(at(value, key))
}

/// A string value, "" when not a string.
pub(super) fn str_of(value: &Value) -> &str {
    value.as_str().unwrap_or("")
}

/// An integer field.
pub(super) fn int(value: &Value, key: &str) -> Option<i64> {
    at(value, key).as_i64()
}

/// An array field, empty when absent.
pub(super) fn list<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    at(value, key).as_array().map(Vec::as_slice).unwrap_or(&[])
}

/// An object field, empty when absent.
pub(super) fn map<'a>(value: &'a Value, key: &str) -> &'a Map<String, Value> {
    static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
    at(value, key).as_object().unwrap_or(&EMPTY)
}

/// Upstream semantic equality: null, absent, `{}` and `[]` are alike.
pub(super) fn semantic_eq(a: &Value, b: &Value) -> bool {
    fn is_empty(v: &Value) -> bool {
        v.is_null() || v.as_object().is_some_and(Map::is_empty) || v.as_array().is_some_and(Vec::is_empty)
    }
    match (a, b) {
        _ if is_empty(a) && is_empty(b) => true,
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().all(|k| semantic_eq(at(a, k), at(b, k)))
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| semantic_eq(p, q)),
        _ => a == b,
    }
}
