//! The `autoscaling/v1` Scale view of an object with `spec.replicas`, as
//! the `/scale` subresource reads and writes it.

use serde_json::{Value, json};

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
