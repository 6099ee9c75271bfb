//! The simulated nodes: seeding them (and the standard namespaces), the
//! [`Nodes`] handle that stops and starts them, and their heartbeats (the
//! Ready condition and the Lease in `kube-node-lease`).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use crate::api::{Api, KUBERNETES_VERSION};
use crate::object::now_rfc3339;
use crate::resources::Builtin;
use crate::store::{StoreError, TypeKey, UpdateError};

/// Namespace of the node Leases.
pub const NODE_LEASE_NAMESPACE: &str = "kube-node-lease";

/// Controls of a running stand-in. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Nodes {
    pub(super) stopped: Arc<Mutex<HashSet<String>>>,
    pub(super) commands: mpsc::UnboundedSender<String>,
}

impl Nodes {
    /// Stops a node: no heartbeats, its pods stop progressing.
    pub fn stop(&self, node: &str) {
        self.lock().insert(node.to_owned());
    }

    /// Starts a stopped node again: it heartbeats at once and its pods carry
    /// on.
    pub fn start(&self, node: &str) {
        self.lock().remove(node);
        // The task is gone only when the simulator is shut down.
        let _ = self.commands.send(node.to_owned());
    }

    /// Whether a node is stopped.
    pub fn is_stopped(&self, node: &str) -> bool {
        self.lock().contains(node)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.stopped.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Creates the cluster's standard namespaces and `count` Ready nodes named
/// `node-1` .. `node-N`, spread over zones `zone-a`, `zone-b`, `zone-c`.
pub fn seed(api: &Api, count: usize) {
    let ns_key = Api::type_key(&api.registry.builtin(Builtin::Namespace));
    for ns in ["default", "kube-system", "kube-public", NODE_LEASE_NAMESPACE] {
        let object = json!({
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": ns, "uid": uuid::Uuid::new_v4().to_string(), "creationTimestamp": now_rfc3339(),
                "labels": {"kubernetes.io/metadata.name": ns}},
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        });
        // Already there (a restart of the seeding) is fine.
        let _ = api.store.create(&ns_key, "", ns, object);
    }
    let node_key = Api::type_key(&api.registry.builtin(Builtin::Node));
    for i in 1..=count {
        let name = format!("node-{i}");
        let _ = api.store.create(&node_key, "", &name, node_object(&name, i, &Map::new(), &[]));
    }
}

/// A Ready node as kube-sim's kubelets register them: the well-known
/// labels (its zone one of `zone-a`, `zone-b`, `zone-c` by `index`) under
/// `labels`, `taints`, the pod range `10.244.<index>.0/24`, the address
/// `10.0.0.<index>`, capacity for 110 pods, and healthy conditions.
fn node_object(name: &str, index: usize, labels: &Map<String, Value>, taints: &[Value]) -> Value {
    let zone = ["zone-a", "zone-b", "zone-c"][index.saturating_sub(1) % 3];
    let mut all_labels = json!({
        "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
        "topology.kubernetes.io/zone": zone, "topology.kubernetes.io/region": "sim",
    });
    for (key, value) in labels {
        all_labels[key] = value.clone();
    }
    let mut spec = json!({"podCIDR": format!("10.244.{index}.0/24"), "podCIDRs": [format!("10.244.{index}.0/24")]});
    if !taints.is_empty() {
        spec["taints"] = json!(taints);
    }
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "uid": uuid::Uuid::new_v4().to_string(), "creationTimestamp": now_rfc3339(),
            "labels": all_labels},
        "spec": spec,
        "status": node_status(name, index),
    })
}

/// The host IP of `node` (its InternalIP) and the IP of the `index`th pod
/// placed, in the node's pod range; a node not found (or not registered by
/// kube-sim) gets addresses from the number in its name (`node-3`: 10.0.0.3
/// and 10.244.3.x).
pub(super) fn pod_addresses(node: Option<&Value>, name: &str, index: usize) -> (String, String) {
    let fallback = name.trim_start_matches("node-").parse::<usize>().unwrap_or(0);
    let host_ip = node
        .and_then(|n| n.pointer("/status/addresses").and_then(Value::as_array))
        .and_then(|addresses| addresses.iter().find(|a| a["type"] == "InternalIP"))
        .and_then(|a| a["address"].as_str())
        .map_or_else(|| format!("10.0.0.{fallback}"), str::to_owned);
    let prefix = node
        .and_then(|n| n.pointer("/spec/podCIDR").and_then(Value::as_str))
        .and_then(|cidr| cidr.split('/').next())
        .and_then(|base| base.rsplit_once('.'))
        .map_or_else(|| format!("10.244.{fallback}"), |(prefix, _)| prefix.to_owned());
    (host_ip, format!("{prefix}.{}", 2 + index % 250))
}

/// A node to add at run time, as `POST /sim/v1/nodes` takes it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// The node's name.
    pub name: String,
    /// Labels beside (or overriding) the well-known ones kube-sim sets.
    #[serde(default)]
    pub labels: Map<String, Value>,
    /// `spec.taints`, as on a Node.
    #[serde(default)]
    pub taints: Vec<Value>,
}

/// Why a node could not be added or removed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NodeError {
    /// A node of that name exists.
    #[error("node {0:?} already exists")]
    Exists(String),
    /// No node of that name exists.
    #[error("node {0:?} not found")]
    NotFound(String),
    /// The node would not be a valid Node.
    #[error("invalid node: {0}")]
    Invalid(String),
}

/// Registers a new Ready node, as a kubelet joining does: the Node (at the
/// first index no node's pod range uses) with its kubelet heartbeating at
/// once.
pub(crate) fn add(api: &Api, nodes: &Nodes, spec: &NodeSpec) -> Result<(), NodeError> {
    let node_key = Api::type_key(&api.registry.builtin(Builtin::Node));
    let (stored, _) = api.store.list(&node_key, None);
    let used: HashSet<usize> = stored.iter().filter_map(|(_, n)| range_index(&n.value())).collect();
    let index = (1..).find(|i| !used.contains(i)).unwrap_or(1);
    let mut node = node_object(&spec.name, index, &spec.labels, &spec.taints);
    crate::defaults::apply(Builtin::Node, &mut node);
    let causes = crate::validation::validate_create(Builtin::Node, &node);
    if !causes.is_empty() {
        let causes: Vec<String> = causes.iter().map(ToString::to_string).collect();
        return Err(NodeError::Invalid(causes.join(", ")));
    }
    match api.store.create(&node_key, "", &spec.name, node) {
        Ok(_) => {
            nodes.start(&spec.name);
            Ok(())
        }
        Err(StoreError::AlreadyExists) => Err(NodeError::Exists(spec.name.clone())),
        Err(e) => Err(NodeError::Invalid(e.to_string())),
    }
}

/// Removes a node, as deleting its Node does, and stops its kubelet: its
/// pods stay as they are (removing them is the pod garbage collector's
/// work), and its Lease is left to the garbage collector (it is owned by
/// the Node).
pub(crate) fn remove(api: &Api, nodes: &Nodes, name: &str) -> Result<(), NodeError> {
    let node_key = Api::type_key(&api.registry.builtin(Builtin::Node));
    nodes.stop(name);
    match api.store.delete(&node_key, "", name, None) {
        Ok(_) => Ok(()),
        Err(_) => {
            nodes.lock().remove(name);
            Err(NodeError::NotFound(name.to_owned()))
        }
    }
}

/// The `<index>` of a node's pod range `10.244.<index>.0/24`.
fn range_index(node: &Value) -> Option<usize> {
    let cidr = node.pointer("/spec/podCIDR").and_then(Value::as_str)?;
    cidr.strip_prefix("10.244.")?.split('.').next()?.parse().ok()
}

/// The conditions a healthy kubelet posts: type, status, reason, message.
const HEALTHY_CONDITIONS: [(&str, &str, &str, &str); 4] = [
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
];

/// One heartbeat on a node's conditions: every `lastHeartbeatTime` is
/// `now`; Ready goes back to True if it is not, and a pressure condition
/// left `Unknown` (by the node lifecycle controller, while the node was
/// silent) back to False, each with a transition at `now`, as a kubelet
/// posting its status again does. A pressure condition set True on
/// purpose is left alone.
pub(super) fn heartbeat_conditions(conditions: &mut [Value], now: &str) {
    for c in conditions.iter_mut() {
        c["lastHeartbeatTime"] = json!(now);
        let Some((_, healthy, reason, message)) = HEALTHY_CONDITIONS.iter().find(|h| c["type"] == h.0) else {
            continue;
        };
        let stale = if c["type"] == "Ready" { c["status"] != *healthy } else { c["status"] == "Unknown" };
        if stale {
            c["status"] = json!(healthy);
            c["reason"] = json!(reason);
            c["message"] = json!(message);
            c["lastTransitionTime"] = json!(now);
        }
    }
}

fn node_status(name: &str, i: usize) -> Value {
    let now = now_rfc3339();
    let conditions: Vec<Value> = HEALTHY_CONDITIONS
        .iter()
        .map(|(kind, status, reason, message)| {
            json!({"type": kind, "status": status, "lastHeartbeatTime": now, "lastTransitionTime": now,
                "reason": reason, "message": message})
        })
        .collect();
    json!({
        "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"},
        "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"},
        "conditions": conditions,
        "addresses": [
            {"type": "InternalIP", "address": format!("10.0.0.{i}")},
            {"type": "Hostname", "address": name},
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "machineID": format!("{i:032x}"), "systemUUID": format!("{i:032x}"), "bootID": format!("{i:032x}"),
            "kernelVersion": "6.1.0-kube-sim", "osImage": "kube-sim", "containerRuntimeVersion": "kube-sim://1.0",
            "kubeletVersion": KUBERNETES_VERSION, "kubeProxyVersion": KUBERNETES_VERSION,
            "operatingSystem": "linux", "architecture": "amd64",
        },
    })
}

/// One heartbeat of every running node (stored under `node_key`): its
/// conditions ([`heartbeat_conditions`]) and its Lease (under `lease_key`)
/// renewed, or created if missing.
pub(super) fn heartbeat(api: &Api, nodes: &Nodes, node_key: &TypeKey, lease_key: &TypeKey) {
    let (stored, _) = api.store.list(node_key, None);
    let now = now_rfc3339();
    let micro = now_micro();
    for ((_, name), _) in stored {
        if nodes.is_stopped(&name) {
            continue;
        }
        let _ = api.store.update::<()>(node_key, "", &name, |s| {
            let mut v = s.value();
            if let Some(conditions) = v.pointer_mut("/status/conditions").and_then(Value::as_array_mut) {
                heartbeat_conditions(conditions, &now);
            }
            Ok(Some(v))
        });
        renew_lease(api, node_key, lease_key, &name, &micro);
    }
}

fn renew_lease(api: &Api, node_key: &TypeKey, lease_key: &TypeKey, node: &str, micro: &str) {
    let renewed = api.store.update::<()>(lease_key, NODE_LEASE_NAMESPACE, node, |s| {
        let mut v = s.value();
        v["spec"]["renewTime"] = json!(micro);
        Ok(Some(v))
    });
    if let Err(UpdateError::Store(StoreError::NotFound)) = renewed {
        let node_uid = api
            .store
            .get(node_key, "", node)
            .and_then(|s| s.value().pointer("/metadata/uid").and_then(Value::as_str).map(str::to_owned))
            .unwrap_or_default();
        let lease = json!({
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": node, "namespace": NODE_LEASE_NAMESPACE,
                "uid": uuid::Uuid::new_v4().to_string(), "creationTimestamp": now_rfc3339(),
                "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": node, "uid": node_uid}]},
            "spec": {"holderIdentity": node, "leaseDurationSeconds": 40, "renewTime": micro},
        });
        let _ = api.store.create(lease_key, NODE_LEASE_NAMESPACE, node, lease);
    }
}

fn now_micro() -> String {
    let now = jiff::Timestamp::now();
    let micros = now.as_microsecond();
    jiff::Timestamp::from_microsecond(micros).map_or_else(|_| now.to_string(), |t| format!("{t:.6}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heartbeat_after_silence_restores_the_conditions_the_controller_set_unknown() {
        let unknown = |kind: &str| {
            json!({"type": kind, "status": "Unknown", "reason": "NodeStatusUnknown",
            "message": "Kubelet stopped posting node status.", "lastHeartbeatTime": "t0", "lastTransitionTime": "t1"})
        };
        let mut conditions = vec![
            unknown("MemoryPressure"),
            json!({"type": "DiskPressure", "status": "True", "reason": "Set", "lastTransitionTime": "t0"}),
            unknown("PIDPressure"),
            unknown("Ready"),
            json!({"type": "NetworkUnavailable", "status": "False", "lastTransitionTime": "t0"}),
        ];
        heartbeat_conditions(&mut conditions, "t2");
        let seen: Vec<(&str, &str, &str, &str)> = conditions
            .iter()
            .map(|c| {
                let s = |k: &str| c[k].as_str().unwrap_or("");
                (s("type"), s("status"), s("lastHeartbeatTime"), s("lastTransitionTime"))
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("MemoryPressure", "False", "t2", "t2"),
                ("DiskPressure", "True", "t2", "t0"),
                ("PIDPressure", "False", "t2", "t2"),
                ("Ready", "True", "t2", "t2"),
                ("NetworkUnavailable", "False", "t2", "t0"),
            ]
        );
        assert_eq!(conditions[3]["reason"], "KubeletReady");
        assert_eq!(conditions[0]["message"], "kubelet has sufficient memory available");
    }
}
