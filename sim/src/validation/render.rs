//! Go value rendering for messages, as `field.Error` prints values with
//! `%q`, `%v` and `%#v`: quoted strings, string maps and slices, pointers,
//! label selectors, owner references and taints.

use std::collections::BTreeMap;

use serde_json::Value;

use super::access::{at, str_of, text};

/// Go's `%q` / `%#v` of a string.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `%#v` of a `map[string]string` (keys sorted; absent is nil).
pub(super) fn go_string_map(value: &Value) -> String {
    match value.as_object() {
        None => "map[string]string(nil)".to_owned(),
        Some(entries) => {
            let sorted: BTreeMap<&String, &Value> = entries.iter().collect();
            let body: Vec<String> =
                sorted.into_iter().map(|(k, v)| format!("{}:{}", go_quote(k), go_quote(str_of(v)))).collect();
            format!("map[string]string{{{}}}", body.join(", "))
        }
    }
}

/// Go's `%#v` of a `[]string` (absent is nil).
pub(crate) fn go_string_slice(value: &Value) -> String {
    match value.as_array() {
        None => "[]string(nil)".to_owned(),
        Some(items) => {
            let body: Vec<String> = items.iter().map(|v| go_quote(str_of(v))).collect();
            format!("[]string{{{}}}", body.join(", "))
        }
    }
}

/// Go's `%#v` of a `metav1.LabelSelector` (a nil pointer prints `null`).
pub(super) fn go_label_selector(selector: &Value) -> String {
    if selector.is_null() {
        return "null".to_owned();
    }
    let expressions = match at(selector, "matchExpressions").as_array() {
        None => "[]v1.LabelSelectorRequirement(nil)".to_owned(),
        Some(items) => {
            let body: Vec<String> = items
                .iter()
                .map(|r| {
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{}}}",
                        go_quote(text(r, "key")),
                        go_quote(text(r, "operator")),
                        go_string_slice(at(r, "values"))
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", body.join(", "))
        }
    };
    format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{expressions}}}",
        go_string_map(at(selector, "matchLabels"))
    )
}

/// Go's `%#v` of a pointer field of type `*ty`: `(*ty)(nil)` when absent,
/// else an address (Go prints the real one, which differs every run).
pub(super) fn go_pointer(value: &Value, ty: &str) -> String {
    if value.is_null() { format!("(*{ty})(nil)") } else { format!("(*{ty})(0xc000000000)") }
}

/// Go's `%#v` of a `metav1.OwnerReference`.
pub(super) fn go_owner_reference(reference: &Value) -> String {
    format!(
        "v1.OwnerReference{{APIVersion:{}, Kind:{}, Name:{}, UID:{}, Controller:{}, BlockOwnerDeletion:{}}}",
        go_quote(text(reference, "apiVersion")),
        go_quote(text(reference, "kind")),
        go_quote(text(reference, "name")),
        go_quote(text(reference, "uid")),
        go_pointer(at(reference, "controller"), "bool"),
        go_pointer(at(reference, "blockOwnerDeletion"), "bool"),
    )
}

/// Go's `%#v` of a `[]metav1.OwnerReference`.
pub(super) fn go_owner_references(references: &[Value]) -> String {
    let body: Vec<String> = references.iter().map(go_owner_reference).collect();
    format!("[]v1.OwnerReference{{{}}}", body.join(", "))
}

/// Go's `%#v` of a `core.Taint`.
pub(super) fn go_taint(taint: &Value) -> String {
    format!(
        "core.Taint{{Key:{}, Value:{}, Effect:{}, TimeAdded:{}}}",
        go_quote(text(taint, "key")),
        go_quote(text(taint, "value")),
        go_quote(text(taint, "effect")),
        go_pointer(at(taint, "timeAdded"), "v1.Time"),
    )
}

/// Go's `time.Time.String()` of an RFC 3339 timestamp, as a `metav1.Time`
/// prints in a message (`2026-01-02 03:04:05 +0000 UTC`).
pub(super) fn go_time(rfc3339: &str) -> String {
    match rfc3339.parse::<jiff::Timestamp>() {
        Ok(t) => t.strftime("%Y-%m-%d %H:%M:%S +0000 UTC").to_string(),
        Err(_) => rfc3339.to_owned(),
    }
}
