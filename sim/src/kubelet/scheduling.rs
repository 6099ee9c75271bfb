//! The scheduler stand-in: binds a pending pod to the least loaded Ready,
//! schedulable node whose taints it tolerates and whose labels match its
//! `nodeSelector`, and remembers the pods that fit nowhere for the loop to
//! retry when something changes. What the bound pod then shows is
//! `status.rs`'s.
//!
//! A bind costs what the few nodes cost, not what the many pods do: the
//! pods on each node are counted as placements come and go, and each node
//! is parsed once per resourceVersion.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Value, json};

use super::nodes::Nodes;
use super::status::{PodRef, bound_status};
use crate::api::Api;
use crate::store::TypeKey;

/// What the scheduler stand-in keeps between decisions.
#[derive(Default)]
pub(super) struct Scheduler {
    /// Pods waiting for a node to fit on.
    pub(super) unschedulable: BTreeMap<(String, String), ()>,
    /// The node of each bound pod, for spreading.
    pub(super) placement: Placement,
    /// Each node as last parsed, by name, with the resourceVersion parsed.
    nodes: HashMap<String, (u64, Value)>,
}

/// The node of each bound pod (by pod uid), and the number of pods on
/// each node, kept in step.
#[derive(Default)]
pub(super) struct Placement {
    /// Pod uid -> node name.
    by_pod: HashMap<String, String>,
    /// Node name -> pods placed there.
    load: HashMap<String, usize>,
}

// === impl Placement ===

impl Placement {
    /// Records that pod `uid` is on `node`.
    pub(super) fn insert(&mut self, uid: String, node: String) {
        if self.by_pod.get(&uid) == Some(&node) {
            return;
        }
        *self.load.entry(node.clone()).or_default() += 1;
        if let Some(previous) = self.by_pod.insert(uid, node) {
            self.unload(&previous);
        }
    }

    /// Forgets pod `uid`.
    pub(super) fn remove(&mut self, uid: &str) {
        if let Some(node) = self.by_pod.remove(uid) {
            self.unload(&node);
        }
    }

    /// Number of pods placed.
    pub(super) fn len(&self) -> usize {
        self.by_pod.len()
    }

    /// Number of pods on `node`.
    fn load(&self, node: &str) -> usize {
        self.load.get(node).copied().unwrap_or(0)
    }

    fn unload(&mut self, node: &str) {
        if let Some(count) = self.load.get_mut(node) {
            *count -= 1;
            if *count == 0 {
                self.load.remove(node);
            }
        }
    }
}

// === impl Scheduler ===

/// Where the scheduler reads and writes: the store, and the keys of pods
/// and nodes in it.
pub(super) struct Cluster<'a> {
    /// The API server's state.
    pub(super) api: &'a Api,
    /// Pods' store key.
    pub(super) pod_key: &'a TypeKey,
    /// Nodes' store key.
    pub(super) node_key: &'a TypeKey,
    /// Which nodes are stopped.
    pub(super) nodes: &'a Nodes,
}

impl Scheduler {
    /// Binds a pod to the least loaded node it fits on.
    pub(super) fn bind(&mut self, cluster: &Cluster<'_>, pod: &Value, pod_ref: PodRef) {
        let key = (pod_ref.namespace.clone(), pod_ref.name.clone());
        self.refresh_nodes(cluster);
        let choice = self
            .nodes
            .values()
            .map(|(_, node)| node)
            .filter(|node| fits(pod, node))
            .map(|node| node.pointer("/metadata/name").and_then(Value::as_str).unwrap_or(""))
            .filter(|name| !cluster.nodes.is_stopped(name))
            .min_by_key(|name| (self.placement.load(name), *name))
            .map(str::to_owned);
        let Some(node) = choice else {
            self.unschedulable.insert(key, ());
            return;
        };
        self.unschedulable.remove(&key);
        let index = self.placement.len();
        let uid = pod_ref.uid.clone();
        let node_for_write = node.clone();
        let result = cluster.api.store.update::<()>(cluster.pod_key, &pod_ref.namespace, &pod_ref.name, |s| {
            let mut v = s.value();
            let unbound = v.pointer("/spec/nodeName").and_then(Value::as_str).is_none_or(str::is_empty);
            if !unbound || v.pointer("/metadata/uid").and_then(Value::as_str) != Some(uid.as_str()) {
                return Ok(None);
            }
            v["spec"]["nodeName"] = json!(node_for_write);
            let spec = v["spec"].clone();
            let mut status = v.get("status").cloned().unwrap_or_else(|| json!({}));
            bound_status(&mut status, &spec, &node_for_write, index);
            v["status"] = status;
            Ok(Some(v))
        });
        if result.is_ok() {
            self.placement.insert(pod_ref.uid, node);
        }
    }

    /// Brings the parsed nodes up to date with the store: nodes whose
    /// resourceVersion changed are parsed again, deleted ones forgotten.
    fn refresh_nodes(&mut self, cluster: &Cluster<'_>) {
        let (stored, _) = cluster.api.store.list(cluster.node_key, None);
        if self.nodes.len() != stored.len() || stored.iter().any(|((_, name), _)| !self.nodes.contains_key(name)) {
            let names: std::collections::HashSet<&str> = stored.iter().map(|((_, name), _)| name.as_str()).collect();
            self.nodes.retain(|name, _| names.contains(name.as_str()));
        }
        for ((_, name), node) in stored {
            if self.nodes.get(&name).is_none_or(|(rv, _)| *rv != node.rv) {
                self.nodes.insert(name, (node.rv, node.value()));
            }
        }
    }
}

/// Whether the scheduler may place `pod` on `node`.
pub(super) fn fits(pod: &Value, node: &Value) -> bool {
    let ready = node
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"));
    let unschedulable = node.pointer("/spec/unschedulable").and_then(Value::as_bool).unwrap_or(false);
    if !ready || unschedulable {
        return false;
    }
    let labels = node.pointer("/metadata/labels").and_then(Value::as_object);
    let selector_ok = pod
        .pointer("/spec/nodeSelector")
        .and_then(Value::as_object)
        .is_none_or(|sel| sel.iter().all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v)));
    let tolerations = pod.pointer("/spec/tolerations").and_then(Value::as_array).cloned().unwrap_or_default();
    let taints_ok = node.pointer("/spec/taints").and_then(Value::as_array).is_none_or(|taints| {
        taints
            .iter()
            .filter(|t| matches!(t["effect"].as_str(), Some("NoSchedule" | "NoExecute")))
            .all(|t| tolerations.iter().any(|tol| tolerates(tol, t)))
    });
    selector_ok && taints_ok
}

/// Whether a toleration tolerates a taint (as `v1.Toleration.ToleratesTaint`).
pub fn tolerates(toleration: &Value, taint: &Value) -> bool {
    let effect = toleration["effect"].as_str().unwrap_or("");
    if !effect.is_empty() && Some(effect) != taint["effect"].as_str() {
        return false;
    }
    let key = toleration["key"].as_str().unwrap_or("");
    if !key.is_empty() && Some(key) != taint["key"].as_str() {
        return false;
    }
    match toleration["operator"].as_str().unwrap_or("Equal") {
        "Exists" => true,
        "Equal" | "" => toleration["value"].as_str().unwrap_or("") == taint["value"].as_str().unwrap_or(""),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ready_node(taints: Value) -> Value {
        json!({"metadata": {"name": "n", "labels": {"disk": "ssd"}},
        "spec": {"taints": taints},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    }

    #[test]
    fn pods_fit_only_where_taints_are_tolerated_and_selectors_match() {
        let taint = json!([{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]);
        let plain = json!({"spec": {}});
        let tolerant = json!({"spec": {"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "db"}]}});
        assert!(!fits(&plain, &ready_node(taint.clone())));
        assert!(fits(&tolerant, &ready_node(taint)));
        assert!(fits(&plain, &ready_node(json!([{"key": "x", "effect": "PreferNoSchedule"}]))));
        let wants_hdd = json!({"spec": {"nodeSelector": {"disk": "hdd"}}});
        assert!(!fits(&wants_hdd, &ready_node(json!([]))));
        let mut not_ready = ready_node(json!([]));
        not_ready["status"]["conditions"][0]["status"] = json!("Unknown");
        assert!(!fits(&plain, &not_ready));
    }

    #[test]
    fn node_loads_follow_placements() {
        let mut placement = Placement::default();
        placement.insert("a".into(), "node-1".into());
        placement.insert("b".into(), "node-1".into());
        placement.insert("b".into(), "node-1".into());
        placement.insert("c".into(), "node-2".into());
        assert_eq!((placement.len(), placement.load("node-1"), placement.load("node-2")), (3, 2, 1));
        placement.insert("c".into(), "node-1".into());
        placement.remove("a");
        placement.remove("unknown");
        assert_eq!((placement.len(), placement.load("node-1"), placement.load("node-2")), (2, 2, 0));
        assert!(!placement.load.contains_key("node-2"), "a node left with no pod is dropped");
    }
}
