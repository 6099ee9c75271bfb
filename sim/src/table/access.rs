//! Reading the stored JSON the way the printers do: a missing or `null`
//! field is Go's zero value, never an error.

use jiff::Timestamp;
use serde_json::{Map, Value};

/// The value at `path`, treating `null` as absent.
pub(super) fn get<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |cur, key| cur.get(key)).filter(|v| !v.is_null())
}

/// The string at `path`, if it is one.
pub(super) fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    get(v, path).and_then(Value::as_str)
}

/// The string at `path`, or "" (Go's zero value).
pub(super) fn text<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    str_at(v, path).unwrap_or("")
}

/// The integer at `path`.
pub(super) fn int(v: &Value, path: &[&str]) -> Option<i64> {
    get(v, path).and_then(Value::as_i64)
}

/// The boolean at `path`, false when absent.
pub(super) fn flag(v: &Value, path: &[&str]) -> bool {
    get(v, path).and_then(Value::as_bool).unwrap_or(false)
}

/// The array at `path`, empty when absent.
pub(super) fn list<'a>(v: &'a Value, path: &[&str]) -> &'a [Value] {
    get(v, path).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// The strings of an array, skipping anything else.
pub(super) fn strings(values: &[Value]) -> Vec<&str> {
    values.iter().filter_map(Value::as_str).collect()
}

/// How many keys the object at `path` has.
pub(super) fn map_len(v: &Value, path: &[&str]) -> usize {
    get(v, path).and_then(Value::as_object).map_or(0, Map::len)
}

/// The RFC 3339 timestamp at `path`; absent or unparsable is no time.
pub(super) fn time(v: &Value, path: &[&str]) -> Option<Timestamp> {
    str_at(v, path).and_then(|s| s.parse().ok())
}
