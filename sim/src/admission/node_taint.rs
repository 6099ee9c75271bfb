//! The TaintNodesByCondition plugin: every new Node gets the
//! `node.kubernetes.io/not-ready:NoSchedule` taint (unless it carries a
//! taint of that key and effect already), so that no pod is scheduled to
//! a node before the controller manager's node-lifecycle-controller has
//! seen it Ready and taken the taint off. kube-sim's own nodes (seeded,
//! or added with its controls) are registered past admission, as nodes
//! that controller has already seen Ready.

use serde_json::{Value, json};

/// The taint's key.
const NOT_READY: &str = "node.kubernetes.io/not-ready";

/// Adds the taint to a Node being created, as upstream's
/// `addNotReadyTaint` (a taint matches on key and effect).
pub(super) fn admit_node(node: &mut Value) {
    let Some(node) = node.as_object_mut() else { return };
    let spec = node.entry("spec").or_insert_with(|| json!({}));
    if !spec.is_object() {
        *spec = json!({});
    }
    let taints = &mut spec["taints"];
    if !taints.is_array() {
        *taints = json!([]);
    }
    let Some(list) = taints.as_array_mut() else { return };
    if !list.iter().any(|t| t["key"] == NOT_READY && t["effect"] == "NoSchedule") {
        list.push(json!({"key": NOT_READY, "effect": "NoSchedule"}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_node_gets_the_taint_once_beside_its_own() {
        let mut node =
            json!({"metadata": {"name": "n"}, "spec": {"taints": [{"key": "dedicated", "effect": "NoSchedule"}]}});
        admit_node(&mut node);
        admit_node(&mut node);
        assert_eq!(
            node["spec"]["taints"],
            json!([{"key": "dedicated", "effect": "NoSchedule"}, {"key": NOT_READY, "effect": "NoSchedule"}])
        );
        let mut bare = json!({"metadata": {"name": "n"}});
        admit_node(&mut bare);
        assert_eq!(bare["spec"]["taints"], json!([{"key": NOT_READY, "effect": "NoSchedule"}]));
        // The NoExecute taint of that key is another taint.
        let mut executing = json!({"spec": {"taints": [{"key": NOT_READY, "effect": "NoExecute"}]}});
        admit_node(&mut executing);
        assert_eq!(executing["spec"]["taints"].as_array().map(Vec::len), Some(2));
    }
}
