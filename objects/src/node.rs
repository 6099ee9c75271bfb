//! The slim Node: what the node lifecycle, taint eviction, node IPAM,
//! EndpointSlice and attach/detach controllers read of a node, decoded straight from the API
//! server's JSON. The rest (addresses, capacity, allocatable but its CPU,
//! images, daemon endpoints, node info) is skipped unread.
//!
//! A controller needing another field of a node adds it here, naming
//! itself in the field's doc. Writes never start from this projection: the
//! taint and label patches carry only what they change (with the cached
//! resourceVersion), and the status write is made on the node read live.

use k8s_openapi::api::core::v1::{AttachedVolume, NodeCondition, Taint};
use serde::Deserialize;

use crate::meta::{Meta, nullable};

/// A node as the caches hold it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Node {
    /// `metadata` (labels give the zone and the beta os/arch labels).
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    /// The part of `spec` kept.
    #[serde(deserialize_with = "nullable")]
    pub spec: NodeSpec,
    /// The part of `status` kept.
    #[serde(deserialize_with = "nullable")]
    pub status: NodeStatus,
}

/// What is kept of `spec`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeSpec {
    /// `spec.taints`, whole (node lifecycle swaps them, taint eviction
    /// matches pods' tolerations against the `NoExecute` ones).
    #[serde(deserialize_with = "nullable")]
    pub taints: Box<[Taint]>,
    /// `spec.unschedulable` (the `unschedulable` taint follows it).
    #[serde(deserialize_with = "nullable")]
    pub unschedulable: bool,
    /// `spec.podCIDRs` (the node IPAM controller occupies them at start,
    /// leaves a node having them alone, releases them when it goes).
    #[serde(rename = "podCIDRs", deserialize_with = "nullable")]
    pub pod_cidrs: Box<[Box<str>]>,
}

/// What is kept of `status`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeStatus {
    /// `status.conditions`, whole (node lifecycle judges health by them and
    /// writes them back set to Unknown).
    #[serde(deserialize_with = "nullable")]
    pub conditions: Box<[NodeCondition]>,
    /// `status.allocatable.cpu`, the quantity as written (the
    /// EndpointSlice controller's topology cache weighs zones by it).
    #[serde(deserialize_with = "nullable")]
    pub allocatable: Allocatable,
    /// `status.volumesInUse`: the attach/detach controller detaches a
    /// volume only once the kubelet no longer lists it here.
    #[serde(deserialize_with = "nullable")]
    pub volumes_in_use: Box<[Box<str>]>,
    /// `status.volumesAttached`, which the attach/detach controller
    /// writes.
    #[serde(deserialize_with = "nullable")]
    pub volumes_attached: Box<[AttachedVolume]>,
}

/// What is kept of `status.allocatable`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Allocatable {
    /// `cpu`, e.g. `4` or `3500m`.
    pub cpu: Option<Box<str>>,
}

impl Node {
    /// The condition of type `type_`, if the node reports it.
    pub fn condition(&self, type_: &str) -> Option<&NodeCondition> {
        self.status.conditions.iter().find(|c| c.type_ == type_)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keeps_taints_conditions_and_labels_and_skips_the_rest() {
        let node: Node = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "node-1", "labels": {"topology.kubernetes.io/zone": "a"}},
            "spec": {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24", "fd00::/64"], "unschedulable": true,
                "taints": [{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": "2026-12-01T10:00:00Z"}]},
            "status": {
                "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status",
                    "lastHeartbeatTime": "2026-12-01T10:00:00Z", "lastTransitionTime": "2026-12-01T09:00:00Z"}],
                "images": [{"names": ["registry.example.com/app:1"], "sizeBytes": 1000}],
                "capacity": {"cpu": "4"}, "allocatable": {"cpu": "3500m", "memory": "8Gi"},
            },
        }))
        .unwrap();
        assert_eq!(node.metadata.key(), "node-1");
        assert_eq!(node.metadata.labels.get("topology.kubernetes.io/zone"), Some("a"));
        assert!(node.spec.unschedulable);
        assert_eq!(node.spec.pod_cidrs, ["10.244.1.0/24".into(), "fd00::/64".into()].into());
        assert_eq!(
            node.spec.taints[0].time_added.as_ref().map(|t| t.0.to_string()).as_deref(),
            Some("2026-12-01T10:00:00Z")
        );
        assert_eq!(node.condition("Ready").and_then(|c| c.reason.as_deref()), Some("KubeletReady"));
        assert_eq!(node.status.allocatable.cpu.as_deref(), Some("3500m"));
    }
}
