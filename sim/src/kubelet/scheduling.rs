//! The scheduler stand-in, kube-sim's `default-scheduler`: binds a pending
//! pod for it with no scheduling gates left to the least loaded node it
//! fits on, as the default scheduler's plugins decide fitting:
//! VolumeBinding's PreFilter (`claims.rs`: its claims exist and are bound),
//! NodeAffinity's PreFilter (`affinity.rs`: a pod pinned to nodes by name is
//! placed only there), then per node NodeUnschedulable, TaintToleration and
//! NodeAffinity (`fit.rs`). A pod that fits nowhere is remembered for the
//! loop to retry when a node, a claim or a pod changes, and the verdict is
//! reported as the scheduler reports it: the pod's `PodScheduled` condition
//! False with reason `Unschedulable`, and a `FailedScheduling` Warning
//! event, each time the message changes. What the bound pod then shows is
//! `status.rs`'s.
//!
//! A bind costs what the few nodes cost, not what the many pods do: the
//! pods on each node are counted as placements come and go, and each node
//! is parsed once per resourceVersion.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Value, json};

use super::affinity::required_node_names;
use super::claims::claims_blocking;
use super::events::{self, Reporter};
use super::fit::{FitError, REASON_NOT_PINNED, misfit};
use super::nodes::{Nodes, pod_addresses};
use super::status::{PodRef, bound_status, write_status};
use crate::api::Api;
use crate::defaults::DEFAULT_SCHEDULER_NAME;
use crate::object::now_rfc3339;
use crate::resources::Builtin;
use crate::store::TypeKey;

/// The scheduler's event reason (`FailedScheduling`).
const FAILED_SCHEDULING: &str = "FailedScheduling";

/// What the scheduler stand-in keeps between decisions.
pub(super) struct Scheduler {
    /// Pods waiting for a node to fit on, each with the verdict last
    /// reported.
    pub(super) unschedulable: BTreeMap<(String, String), String>,
    /// The node of each bound pod, for spreading.
    pub(super) placement: Placement,
    /// Each node as last parsed, by name, with the resourceVersion parsed.
    nodes: HashMap<String, (u64, Value)>,
    /// PersistentVolumeClaims' store key.
    claim_key: TypeKey,
    /// Core Events' store key.
    event_key: TypeKey,
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
    /// A scheduler for `api`'s store, with nothing placed or waiting yet.
    pub(super) fn new(api: &Api) -> Self {
        let key = |b| Api::type_key(&api.registry.builtin(b));
        Scheduler {
            unschedulable: BTreeMap::new(),
            placement: Placement::default(),
            nodes: HashMap::new(),
            claim_key: key(Builtin::PersistentVolumeClaim),
            event_key: key(Builtin::CoreEvent),
        }
    }

    /// Binds a pod to the least loaded node it fits on, or records why it
    /// fits none.
    pub(super) fn bind(&mut self, cluster: &Cluster<'_>, pod: &Value, pod_ref: PodRef) {
        let gated = pod.pointer("/spec/schedulingGates").and_then(Value::as_array).is_some_and(|g| !g.is_empty());
        let scheduler = pod.pointer("/spec/schedulerName").and_then(Value::as_str).unwrap_or(DEFAULT_SCHEDULER_NAME);
        if gated || scheduler != DEFAULT_SCHEDULER_NAME {
            // The SchedulingGates plugin keeps it out of the queue, silently
            // (removing its last gate is a change that brings it back); a
            // pod for another scheduler is that scheduler's.
            return;
        }
        self.refresh_nodes(cluster);
        match self.choose(cluster, pod, &pod_ref.namespace) {
            Ok(node) => self.place(cluster, pod_ref, node),
            Err(verdict) => self.unschedulable(cluster, pod, &pod_ref, verdict.to_string()),
        }
    }

    /// The node for `pod`, or why there is none.
    fn choose(&self, cluster: &Cluster<'_>, pod: &Value, namespace: &str) -> Result<String, FitError> {
        let mut verdict = FitError { nodes: self.nodes.len(), ..FitError::default() };
        if let Some(blocked) = claims_blocking(&cluster.api.store, &self.claim_key, pod, namespace) {
            verdict.pre_filter = Some(blocked);
            return Err(verdict);
        }
        let pinned = required_node_names(pod)
            .map_err(|conflict| FitError { pre_filter: Some(conflict.to_owned()), ..verdict.clone() })?;
        let mut candidates = Vec::new();
        for (name, (_, node)) in &self.nodes {
            let reason = if pinned.as_ref().is_some_and(|names| !names.contains(name)) {
                Some(REASON_NOT_PINNED)
            } else {
                misfit(pod, node, cluster.nodes.is_stopped(name))
            };
            match reason {
                Some(reason) => *verdict.reasons.entry(reason).or_default() += 1,
                None => candidates.push(name.as_str()),
            }
        }
        let best = candidates.into_iter().min_by_key(|name| (self.placement.load(name), *name));
        best.map(str::to_owned).ok_or(verdict)
    }

    /// Binds the pod to `node`, with the status the kubelet then reports.
    fn place(&mut self, cluster: &Cluster<'_>, pod_ref: PodRef, node: String) {
        self.unschedulable.remove(&(pod_ref.namespace.clone(), pod_ref.name.clone()));
        let (host_ip, pod_ip) = pod_addresses(self.nodes.get(&node).map(|(_, n)| n), &node, self.placement.len());
        let uid = pod_ref.uid.clone();
        let result = cluster.api.store.update::<()>(cluster.pod_key, &pod_ref.namespace, &pod_ref.name, |s| {
            let mut v = s.value();
            let unbound = v.pointer("/spec/nodeName").and_then(Value::as_str).is_none_or(str::is_empty);
            if !unbound || v.pointer("/metadata/uid").and_then(Value::as_str) != Some(uid.as_str()) {
                return Ok(None);
            }
            v["spec"]["nodeName"] = json!(node);
            let spec = v["spec"].clone();
            let mut status = v.get("status").cloned().unwrap_or_else(|| json!({}));
            bound_status(&mut status, &spec, &host_ip, &pod_ip);
            v["status"] = status;
            Ok(Some(v))
        });
        if result.is_ok() {
            self.placement.insert(pod_ref.uid, node);
        }
    }

    /// Remembers that the pod fits nowhere; a new verdict is reported on
    /// its `PodScheduled` condition and in a `FailedScheduling` event.
    fn unschedulable(&mut self, cluster: &Cluster<'_>, pod: &Value, pod_ref: &PodRef, message: String) {
        let key = (pod_ref.namespace.clone(), pod_ref.name.clone());
        if self.unschedulable.get(&key) == Some(&message) {
            return;
        }
        write_status(&cluster.api.store, cluster.pod_key, pod_ref, |status, _| {
            unschedulable_condition(status, &message)
        });
        let store = &cluster.api.store;
        events::warn(store, &self.event_key, pod, pod_ref, &Reporter::Scheduler, FAILED_SCHEDULING, &message);
        self.unschedulable.insert(key, message);
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

/// Sets the `PodScheduled` condition the scheduler writes on a pod it
/// cannot place (its transition time kept while it stays False).
fn unschedulable_condition(status: &mut Value, message: &str) {
    let condition = json!({"type": "PodScheduled", "status": "False", "lastProbeTime": null,
        "lastTransitionTime": now_rfc3339(), "reason": "Unschedulable", "message": message});
    if !status.get("conditions").is_some_and(Value::is_array) {
        status["conditions"] = json!([]);
    }
    let Some(conditions) = status["conditions"].as_array_mut() else { return };
    match conditions.iter_mut().find(|c| c["type"] == "PodScheduled") {
        Some(existing) if existing["status"] == "False" => {
            existing["reason"] = condition["reason"].clone();
            existing["message"] = condition["message"].clone();
        }
        Some(existing) => *existing = condition,
        None => conditions.push(condition),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
