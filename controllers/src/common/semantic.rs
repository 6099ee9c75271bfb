//! Upstream's semantic equality (`apiequality.Semantic.DeepEqual`) on
//! objects as JSON: a nil and an empty map or slice are equal, and so are a
//! field Go always writes (`"creationTimestamp": null`, `"resources": {}`)
//! and the same field left out, as k8s-openapi leaves it out. Pruning both
//! sides of a comparison with [`prune`] gives that equality on
//! `serde_json::Value`s.

use serde_json::Value;

/// Removes nulls, empty arrays and empty objects, innermost first; false
/// when `value` itself is left empty. Array elements keep their positions
/// (a pruned element becomes null).
///
/// Example: `{"metadata": {"creationTimestamp": null, "labels": {"a": "b"}},
/// "spec": {"containers": [{"name": "c", "resources": {}}]}}` becomes
/// `{"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c"}]}}`.
pub fn prune(value: &mut Value) -> bool {
    match value {
        Value::Null => false,
        Value::Array(items) => {
            for item in items.iter_mut() {
                if !prune(item) {
                    *item = Value::Null;
                }
            }
            !items.is_empty()
        }
        Value::Object(map) => {
            map.retain(|_, v| prune(v));
            !map.is_empty()
        }
        _ => true,
    }
}

/// Whether `a` and `b` are semantically equal: equal once both are pruned.
pub fn semantically_equal(a: &Value, b: &Value) -> bool {
    let (mut a, mut b) = (a.clone(), b.clone());
    prune(&mut a);
    prune(&mut b);
    a == b
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn go_defaults_equal_absent_fields() {
        let go = json!({"metadata": {"creationTimestamp": null, "labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "resources": {}}], "volumes": []}});
        let rust = json!({"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c"}]}});
        assert!(semantically_equal(&go, &rust));
        assert!(!semantically_equal(&go, &json!({"metadata": {"labels": {"a": "c"}}})));
        let mut pruned = go.clone();
        prune(&mut pruned);
        assert_eq!(pruned, json!({"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c"}]}}));
    }
}
