//! Test fixtures shared by the validation tests: editing JSON objects by
//! pointer, and causes as the lines kubectl prints.

use serde_json::Value;

use super::Cause;

/// `object` with the JSON pointer `path` set to `value` (objects on the
/// way are created).
pub(super) fn with(mut object: Value, path: &str, value: Value) -> Value {
    let mut target = &mut object;
    for part in path.split('/').filter(|p| !p.is_empty()) {
        target = match part.parse::<usize>() {
            Ok(i) => &mut target[i],
            Err(_) => &mut target[part],
        };
    }
    *target = value;
    object
}

/// `object` without the field at the JSON pointer `path`.
pub(super) fn without(mut object: Value, path: &str) -> Value {
    let (parent, last) = path.rsplit_once('/').unwrap_or(("", path));
    if let Some(parent) = object.pointer_mut(parent).and_then(Value::as_object_mut) {
        parent.remove(last);
    }
    object
}

/// The causes as `field: message` lines, as kubectl prints them.
pub(super) fn lines(causes: &[Cause]) -> Vec<String> {
    causes.iter().map(ToString::to_string).collect()
}
