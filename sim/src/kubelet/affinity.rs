//! Whether a node matches what a pod requires of it: its `nodeSelector` and
//! its required node affinity, as the scheduler's NodeAffinity plugin and
//! `k8s.io/component-helpers/scheduling/corev1` decide it.
//!
//! The node selector's pairs must all be among the node's labels. Of the
//! affinity's `nodeSelectorTerms` one must match (they are ORed; an empty
//! term matches nothing); within a term every `matchExpressions`
//! requirement on the node's labels and every `matchFields` requirement on
//! its `metadata.name` must hold (they are ANDed). Operators: `In`,
//! `NotIn` (also true without the label), `Exists`, `DoesNotExist`, and
//! `Gt`/`Lt` comparing the label as an integer with the one value given.
//! A malformed requirement (values where none belong, a field other than
//! `metadata.name`) makes its term match nothing, as upstream's parse
//! error does.
//!
//! [`required_node_names`] is the plugin's PreFilter: when every term pins
//! `metadata.name` with `In` (as the DaemonSet controller pins a daemon pod
//! to its node) only those nodes are considered at all.

use std::collections::BTreeSet;

use serde_json::Value;

/// The field a `matchFields` requirement may name.
const NODE_NAME_FIELD: &str = "metadata.name";

/// The required terms of a pod's node affinity, if it has any.
fn required_terms(pod: &Value) -> Option<&Vec<Value>> {
    pod.pointer("/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")
        .and_then(Value::as_array)
}

/// Whether `node` satisfies the pod's node selector and required node
/// affinity (upstream `GetRequiredNodeAffinity(pod).Match(node)`).
pub(super) fn matches(pod: &Value, node: &Value) -> bool {
    let labels = node.pointer("/metadata/labels");
    let selector_ok = pod
        .pointer("/spec/nodeSelector")
        .and_then(Value::as_object)
        .is_none_or(|sel| sel.iter().all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v)));
    let affinity = pod.pointer("/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution");
    let affinity_ok = match (affinity, required_terms(pod)) {
        (None | Some(Value::Null), _) => true,
        (Some(_), Some(terms)) => terms.iter().any(|term| term_matches(term, node)),
        (Some(_), None) => false,
    };
    selector_ok && affinity_ok
}

/// The nodes the required affinity pins the pod to by name (the union over
/// its terms of each term's `metadata.name In` values, intersected within
/// the term), or `None` when some term does not pin names and every node
/// may match. `Err` when every term pins names and they conflict.
pub(super) fn required_node_names(pod: &Value) -> Result<Option<BTreeSet<String>>, &'static str> {
    let Some(terms) = required_terms(pod).filter(|terms| !terms.is_empty()) else {
        return Ok(None);
    };
    let mut names = BTreeSet::new();
    for term in terms {
        let mut term_names: Option<BTreeSet<String>> = None;
        let fields = term.get("matchFields").and_then(Value::as_array).into_iter().flatten();
        for requirement in fields.filter(|r| r["key"] == NODE_NAME_FIELD && r["operator"] == "In") {
            let values: BTreeSet<String> = strings(requirement).map(str::to_owned).collect();
            term_names = Some(match term_names {
                None => values,
                Some(before) => before.intersection(&values).cloned().collect(),
            });
        }
        match term_names {
            None => return Ok(None),
            Some(term_names) => names.extend(term_names),
        }
    }
    if names.is_empty() { Err("pod affinity terms conflict") } else { Ok(Some(names)) }
}

/// One node selector term: not empty, and every requirement holds.
fn term_matches(term: &Value, node: &Value) -> bool {
    let expressions = term.get("matchExpressions").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let fields = term.get("matchFields").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    if expressions.is_empty() && fields.is_empty() {
        return false;
    }
    let labels = node.pointer("/metadata/labels");
    let name = node.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("");
    expressions.iter().all(|r| {
        let key = r["key"].as_str().unwrap_or("");
        requirement_holds(r, labels.and_then(|l| l.get(key)).and_then(Value::as_str))
    }) && fields.iter().all(|r| {
        r["key"] == NODE_NAME_FIELD
            && matches!(r["operator"].as_str(), Some("In" | "NotIn"))
            && requirement_holds(r, Some(name))
    })
}

/// One requirement on the value `actual` (`None`: no such label).
fn requirement_holds(requirement: &Value, actual: Option<&str>) -> bool {
    let values: Vec<&str> = strings(requirement).collect();
    match requirement["operator"].as_str().unwrap_or("") {
        "In" => !values.is_empty() && actual.is_some_and(|a| values.contains(&a)),
        "NotIn" => !values.is_empty() && actual.is_none_or(|a| !values.contains(&a)),
        "Exists" => values.is_empty() && actual.is_some(),
        "DoesNotExist" => values.is_empty() && actual.is_none(),
        operator @ ("Gt" | "Lt") => {
            let [bound] = values[..] else { return false };
            let (Ok(bound), Some(Ok(actual))) = (bound.parse::<i64>(), actual.map(str::parse::<i64>)) else {
                return false;
            };
            if operator == "Gt" { actual > bound } else { actual < bound }
        }
        _ => false,
    }
}

/// The string values of a requirement.
fn strings(requirement: &Value) -> impl Iterator<Item = &str> {
    requirement.get("values").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn node(name: &str, labels: Value) -> Value {
        json!({"metadata": {"name": name, "labels": labels}})
    }

    fn pod_with_terms(terms: Value) -> Value {
        json!({"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
            {"nodeSelectorTerms": terms}}}}})
    }

    fn expression(key: &str, operator: &str, values: &[&str]) -> Value {
        json!({"matchExpressions": [{"key": key, "operator": operator, "values": values}]})
    }

    #[test]
    fn each_operator_decides_on_the_label() {
        let n = node("n1", json!({"zone": "a", "cores": "8"}));
        let cases = [
            (expression("zone", "In", &["a", "b"]), true),
            (expression("zone", "In", &["b"]), false),
            (expression("zone", "In", &[]), false),
            (expression("zone", "NotIn", &["b"]), true),
            (expression("rack", "NotIn", &["b"]), true),
            (expression("zone", "NotIn", &["a"]), false),
            (expression("zone", "Exists", &[]), true),
            (expression("zone", "Exists", &["a"]), false),
            (expression("rack", "DoesNotExist", &[]), true),
            (expression("zone", "DoesNotExist", &[]), false),
            (expression("cores", "Gt", &["4"]), true),
            (expression("cores", "Gt", &["8"]), false),
            (expression("cores", "Lt", &["16"]), true),
            (expression("zone", "Lt", &["16"]), false),
            (expression("cores", "Gt", &["4", "5"]), false),
            (expression("rack", "Gt", &["1"]), false),
        ];
        for (term, want) in cases {
            assert_eq!(matches(&pod_with_terms(json!([term])), &n), want, "{term}");
        }
    }

    #[test]
    fn terms_are_ored_requirements_anded_and_empty_terms_match_nothing() {
        let n = node("n1", json!({"zone": "a", "disk": "ssd"}));
        let both = json!({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]},
            {"key": "disk", "operator": "In", "values": ["hdd"]}]});
        assert!(!matches(&pod_with_terms(json!([both.clone()])), &n));
        assert!(matches(&pod_with_terms(json!([both, expression("disk", "Exists", &[])])), &n));
        assert!(!matches(&pod_with_terms(json!([{}])), &n));
        assert!(!matches(&pod_with_terms(json!([])), &n));
        let selector = json!({"spec": {"nodeSelector": {"disk": "ssd"}}});
        assert!(matches(&selector, &n));
        assert!(!matches(&json!({"spec": {"nodeSelector": {"disk": "hdd"}}}), &n));
        assert!(matches(&json!({"spec": {}}), &n));
    }

    #[test]
    fn match_fields_pin_a_pod_to_a_node_by_name() {
        let pinned = |op: &str, names: &[&str]| {
            pod_with_terms(json!([{"matchFields": [{"key": "metadata.name", "operator": op, "values": names}]}]))
        };
        let (n1, n2) = (node("n1", json!({})), node("n2", json!({})));
        assert!(matches(&pinned("In", &["n1"]), &n1));
        assert!(!matches(&pinned("In", &["n1"]), &n2));
        assert!(matches(&pinned("NotIn", &["n1"]), &n2));
        assert!(!matches(&pinned("Exists", &[]), &n1), "matchFields take In and NotIn only");
        let names = |pod: &Value| required_node_names(pod).map(|n| n.map(|s| s.into_iter().collect::<Vec<_>>()));
        assert_eq!(names(&pinned("In", &["n1"])), Ok(Some(vec!["n1".to_owned()])));
        assert_eq!(names(&pinned("NotIn", &["n1"])), Ok(None));
        let conflicting = pod_with_terms(json!([{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["n1"]},
            {"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]));
        assert_eq!(names(&conflicting), Err("pod affinity terms conflict"));
        let mixed =
            pod_with_terms(json!([{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]},
            expression("zone", "Exists", &[])]));
        assert_eq!(names(&mixed), Ok(None), "a term without names lets every node through");
    }
}
