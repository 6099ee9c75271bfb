//! Whether a node satisfies a pod's required node placement (upstream
//! `component-helpers/scheduling/corev1/nodeaffinity`
//! `GetRequiredNodeAffinity(pod).Match(node)`): every label of
//! `spec.nodeSelector`, and at least one term of `spec.affinity.nodeAffinity.
//! requiredDuringSchedulingIgnoredDuringExecution`.
//!
//! A term ANDs its `matchExpressions` (on the node's labels: `In`, `NotIn`,
//! `Exists`, `DoesNotExist`, `Gt`, `Lt`) and its `matchFields` (only
//! `metadata.name`, with `In` or `NotIn` and exactly one value). A term with
//! neither matches nothing; an invalid term (an unknown operator, a wrong
//! number of values, a non-integer for `Gt`/`Lt`, another field) is
//! ignored, as upstream ignores the terms it cannot parse. No term at all
//! means nothing matches.

use k8s_openapi::api::core::v1::{NodeSelectorRequirement, NodeSelectorTerm, PodSpec};
use kcm_objects::Node;

/// Whether `node` fits `spec`'s node selector and required node affinity.
pub fn required_node_affinity_matches(spec: &PodSpec, node: &Node) -> bool {
    let labels = &node.metadata.labels;
    let selector_fits = spec.node_selector.iter().flatten().all(|(k, v)| labels.get(k) == Some(v.as_str()));
    let required = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| n.required_during_scheduling_ignored_during_execution.as_ref());
    selector_fits && required.is_none_or(|r| r.node_selector_terms.iter().any(|t| term_matches(t, node)))
}

fn term_matches(term: &NodeSelectorTerm, node: &Node) -> bool {
    let expressions = term.match_expressions.as_deref().unwrap_or_default();
    let fields = term.match_fields.as_deref().unwrap_or_default();
    if expressions.is_empty() && fields.is_empty() {
        return false;
    }
    let label = |key: &str| node.metadata.labels.get(key);
    let expressions = expressions.iter().map(|r| expression_matches(r, label(&r.key)));
    let fields = fields.iter().map(|r| field_matches(r, &node.metadata.name));
    // An invalid requirement (None) makes the whole term invalid.
    let verdicts: Option<Vec<bool>> = expressions.chain(fields).collect();
    verdicts.is_some_and(|v| v.into_iter().all(|ok| ok))
}

/// A label requirement against the node's value for its key; `None` when
/// the requirement is invalid.
fn expression_matches(r: &NodeSelectorRequirement, value: Option<&str>) -> Option<bool> {
    let values = r.values.as_deref().unwrap_or_default();
    let number = |s: &str| s.parse::<i64>().ok();
    match r.operator.as_str() {
        "In" | "NotIn" if values.is_empty() => None,
        "In" => Some(value.is_some_and(|v| values.iter().any(|x| x == v))),
        "NotIn" => Some(value.is_none_or(|v| !values.iter().any(|x| x == v))),
        "Exists" | "DoesNotExist" if !values.is_empty() => None,
        "Exists" => Some(value.is_some()),
        "DoesNotExist" => Some(value.is_none()),
        "Gt" | "Lt" => {
            let [bound] = values else { return None };
            let bound = number(bound)?;
            let Some(v) = value.and_then(number) else { return Some(false) };
            Some(if r.operator == "Gt" { v > bound } else { v < bound })
        }
        _ => None,
    }
}

/// A field requirement against the node's name; `None` when invalid.
fn field_matches(r: &NodeSelectorRequirement, node_name: &str) -> Option<bool> {
    let [value] = r.values.as_deref().unwrap_or_default() else { return None };
    match (r.key.as_str(), r.operator.as_str()) {
        ("metadata.name", "In") => Some(value == node_name),
        ("metadata.name", "NotIn") => Some(value != node_name),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn node() -> Node {
        serde_json::from_value(json!({"metadata": {"name": "node-1", "labels": {"zone": "a", "cores": "8"}}})).unwrap()
    }

    /// `spec` from its JSON: `nodeSelector` and one required term per
    /// entry of `terms`.
    fn spec(node_selector: serde_json::Value, terms: serde_json::Value) -> PodSpec {
        let required = if terms.is_null() {
            serde_json::Value::Null
        } else {
            json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}})
        };
        serde_json::from_value(json!({"containers": [], "nodeSelector": node_selector, "affinity": required})).unwrap()
    }

    #[test]
    fn required_node_affinity_table() {
        let expr = |key: &str, op: &str, values: serde_json::Value| json!([{"matchExpressions": [{"key": key, "operator": op, "values": values}]}]);
        let field = |op: &str, values: serde_json::Value| json!([{"matchFields": [{"key": "metadata.name", "operator": op, "values": values}]}]);
        let cases = [
            ("nothing required", spec(json!(null), json!(null)), true),
            ("node selector matches", spec(json!({"zone": "a"}), json!(null)), true),
            ("node selector does not", spec(json!({"zone": "b"}), json!(null)), false),
            ("In", spec(json!(null), expr("zone", "In", json!(["a", "b"]))), true),
            ("NotIn of an absent label", spec(json!(null), expr("rack", "NotIn", json!(["x"]))), true),
            ("NotIn", spec(json!(null), expr("zone", "NotIn", json!(["a"]))), false),
            ("Exists", spec(json!(null), expr("zone", "Exists", json!(null))), true),
            ("DoesNotExist", spec(json!(null), expr("zone", "DoesNotExist", json!(null))), false),
            ("Gt", spec(json!(null), expr("cores", "Gt", json!(["4"]))), true),
            ("Lt", spec(json!(null), expr("cores", "Lt", json!(["4"]))), false),
            ("Gt on a non-integer label", spec(json!(null), expr("zone", "Gt", json!(["4"]))), false),
            ("Exists with values is invalid", spec(json!(null), expr("zone", "Exists", json!(["a"]))), false),
            ("unknown operator is invalid", spec(json!(null), expr("zone", "Near", json!(["a"]))), false),
            ("matchFields In", spec(json!(null), field("In", json!(["node-1"]))), true),
            ("matchFields NotIn", spec(json!(null), field("NotIn", json!(["node-1"]))), false),
            (
                "matchFields with two values is invalid",
                spec(json!(null), field("In", json!(["node-1", "node-2"]))),
                false,
            ),
            ("an empty term matches nothing", spec(json!(null), json!([{}])), false),
            ("no terms match nothing", spec(json!(null), json!([])), false),
            (
                "terms are ORed, an invalid one ignored",
                spec(
                    json!(null),
                    json!([{"matchExpressions": [{"key": "zone", "operator": "Near"}]},
                        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]),
                ),
                true,
            ),
            ("selector and affinity are ANDed", spec(json!({"zone": "b"}), expr("zone", "In", json!(["a"]))), false),
        ];
        for (name, spec, want) in cases {
            assert_eq!(required_node_affinity_matches(&spec, &node()), want, "{name}");
        }
    }
}
