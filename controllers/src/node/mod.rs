//! Node controllers: the node-lifecycle-controller (upstream
//! `pkg/controller/nodelifecycle`) and the taint-eviction-controller.
//!
//! The node lifecycle controller watches NodeStatus heartbeats and node
//! Leases, judges each node's health on the controller's own clock, sets
//! the conditions of silent nodes to `Unknown`, marks their pods not ready,
//! keeps the `NoSchedule` condition taints in step with the conditions and
//! adds the `NoExecute` not-ready / unreachable taints through a per-zone
//! rate-limited queue, which the zone states slow down or stop when a whole
//! zone (or the whole cluster) looks down. The taint-eviction-controller
//! then deletes the pods that do not tolerate those taints.
//!
//! Everything here is sans-IO: time is an input and nothing reads a clock.
//!
//! # Layout
//! - [`health`]: one node's health from its status, its Lease, what was
//!   remembered and `now` (upstream `tryUpdateNodeHealth`);
//! - [`zone`]: zone keys, zone states and the disruption decisions
//!   (upstream `ComputeZoneState`, `handleDisruption`);
//! - [`monitor`]: the controller's remembered state and the steps of a
//!   monitor pass (which node is new or gone, what to do per node, zone
//!   rates, the tainting pass's decision);
//! - [`queue`]: the per-zone rate-limited timed queue, a pure structure
//!   (upstream `scheduler.RateLimitedTimedQueue`);
//! - [`taints`]: the taint plans (the `NoSchedule` condition taints, the
//!   `NoExecute` swap, the taint list a patch sends), the beta os/arch
//!   labels and `MarkPodsNotReady`'s pod status.

pub mod eviction;
pub mod health;
pub mod monitor;
pub mod queue;
pub mod taints;
pub mod zone;

/// Namespace of the node Leases (`v1.NamespaceNodeLease`).
pub const NODE_LEASE_NAMESPACE: &str = "kube-node-lease";

/// Label that keeps a node out of the zone disruption computation
/// (upstream `labelNodeDisruptionExclusion`).
pub const LABEL_EXCLUDE_DISRUPTION: &str = "node.kubernetes.io/exclude-disruption";

/// Name of the Pod index by `spec.nodeName` (upstream
/// `controller.PodNodeNameKeyIndex`), shared with the taint-eviction
/// controller.
pub const POD_NODE_NAME_INDEX: &str = "spec.nodeName";

#[cfg(test)]
#[allow(missing_docs)]
mod testing;

// === events ===

/// Event reason on a node first seen by the controller.
pub const EVENT_REGISTERED_NODE: &str = "RegisteredNode";
/// Event reason on a node gone from the cluster.
pub const EVENT_REMOVING_NODE: &str = "RemovingNode";
/// Event reason on a node (Normal) and its pods (Warning) when the node
/// stops being ready.
pub const EVENT_NODE_NOT_READY: &str = "NodeNotReady";

/// Message of [`EVENT_REGISTERED_NODE`].
pub fn registered_node_message(node: &str) -> String {
    format!("Node {node} event: Registered Node {node} in Controller")
}

/// Message of [`EVENT_REMOVING_NODE`].
pub fn removing_node_message(node: &str) -> String {
    format!("Node {node} event: Removing Node {node} from Controller")
}

/// Message of [`EVENT_NODE_NOT_READY`] on the node (upstream
/// `RecordNodeStatusChange`).
pub fn node_not_ready_message(node: &str) -> String {
    format!("Node {node} status is now: {EVENT_NODE_NOT_READY}")
}

/// Message of [`EVENT_NODE_NOT_READY`] on each of its pods.
pub const POD_NODE_NOT_READY_MESSAGE: &str = "Node is not ready";
