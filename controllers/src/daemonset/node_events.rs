//! What a node event means for the DaemonSets, for the driver's node
//! handler (upstream `updateNode`, `shouldIgnoreNodeUpdate`,
//! `nodeInSameCondition`, `syncNodeUpdate`): an update that changes only
//! the resourceVersion or conditions without changing which are True is
//! ignored; otherwise a DaemonSet is synced when the node's
//! `(should_run, should_continue_running)` for it changed.

use std::collections::BTreeSet;

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::NodeCondition;
use kcm_objects::Node;

use super::placement::node_should_run_daemon_pod;

/// Whether the update from `old` to `new` can matter to no DaemonSet
/// (upstream `shouldIgnoreNodeUpdate`): the same True conditions and
/// nothing else changed but the resourceVersion and the conditions.
pub fn should_ignore_node_update(old: &Node, new: &Node) -> bool {
    if !node_in_same_condition(&old.status.conditions, &new.status.conditions) {
        return false;
    }
    let mut old = old.clone();
    old.metadata.resource_version = new.metadata.resource_version.clone();
    old.status.conditions = new.status.conditions.clone();
    old == *new
}

/// Whether the same condition types are True in both lists.
fn node_in_same_condition(old: &[NodeCondition], new: &[NodeCondition]) -> bool {
    let trues = |c: &[NodeCondition]| -> BTreeSet<String> {
        c.iter().filter(|c| c.status == "True").map(|c| c.type_.clone()).collect()
    };
    trues(old) == trues(new)
}

/// Whether `ds` must be synced after its node changed from `old` to `new`.
pub fn node_update_requires_sync(old: &Node, new: &Node, ds: &DaemonSet) -> bool {
    node_should_run_daemon_pod(old, ds) != node_should_run_daemon_pod(new, ds)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::daemonset::testing::{SIMPLE_NODE_LABEL, new_daemon_set, new_node, node_from};
    use crate::testing::labels;

    fn tainted(name: &str) -> Node {
        node_from(json!({"metadata": {"name": name},
            "spec": {"taints": [{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}]},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}))
    }

    #[test]
    fn should_ignore_node_update_table() {
        let mut heartbeat = new_node("node1", &[]);
        heartbeat.metadata.resource_version = "2".into();
        let cases = [
            ("Nothing changed", new_node("node1", &[]), new_node("node1", &[]), true),
            ("Only the resourceVersion", new_node("node1", &[]), heartbeat, true),
            ("Node labels changed", new_node("node1", &[]), new_node("node1", SIMPLE_NODE_LABEL), false),
            ("Node taints changed", tainted("node1"), new_node("node1", &[]), false),
            (
                "A condition turned True",
                new_node("node1", &[]),
                node_from(json!({"metadata": {"name": "node1"}, "status": {"conditions": [
                    {"type": "Ready", "status": "True"}, {"type": "DiskPressure", "status": "True"}]}})),
                false,
            ),
        ];
        for (name, old, new, want) in cases {
            assert_eq!(should_ignore_node_update(&old, &new), want, "{name}");
        }
    }

    /// Upstream `TestUpdateNode`'s enqueue decisions.
    #[test]
    fn update_node() {
        let mut selecting = new_daemon_set("ds");
        selecting.spec.template.spec.as_mut().unwrap().node_selector = Some(labels(SIMPLE_NODE_LABEL));
        let cases = [
            ("Nothing changed, should not enqueue", new_node("node1", &[]), new_node("node1", &[]), &selecting, false),
            ("Node labels changed", new_node("node1", &[]), new_node("node1", SIMPLE_NODE_LABEL), &selecting, true),
            ("Node taints changed", tainted("node1"), new_node("node1", &[]), &new_daemon_set("ds"), true),
        ];
        for (name, old, new, ds, want) in cases {
            assert_eq!(node_update_requires_sync(&old, &new, ds), want, "{name}");
        }
    }
}
