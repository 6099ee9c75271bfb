//! Fixtures for the node controllers' table tests.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1::{Node, NodeCondition, NodeSpec, NodeStatus, Taint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};

pub use crate::testing::ts;

/// The Lease of node `name`, renewed at `renew`.
pub fn lease(name: &str, renew: Timestamp) -> Lease {
    Lease {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(super::NODE_LEASE_NAMESPACE.into()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec { renew_time: Some(MicroTime(renew)), ..LeaseSpec::default() }),
    }
}

/// A taint with no value and no time.
pub fn taint(key: &str, effect: &str) -> Taint {
    Taint { key: key.into(), effect: effect.into(), ..Taint::default() }
}

/// Builds nodes created at 0 s, with no conditions unless told.
#[derive(Clone)]
pub struct NodeBuilder(Node);

impl NodeBuilder {
    pub fn new(name: &str) -> Self {
        Self(Node {
            metadata: ObjectMeta {
                name: Some(name.into()),
                uid: Some(format!("uid-{name}")),
                resource_version: Some("1".into()),
                creation_timestamp: Some(Time(ts(0))),
                ..ObjectMeta::default()
            },
            spec: Some(NodeSpec::default()),
            status: Some(NodeStatus::default()),
        })
    }
    pub fn created(mut self, at: Timestamp) -> Self {
        self.0.metadata.creation_timestamp = Some(Time(at));
        self
    }
    /// Ready with this status, heartbeat `heartbeat`, transition at 0 s.
    pub fn ready(self, status: &str, heartbeat: Timestamp) -> Self {
        self.ready_at(status, heartbeat, ts(0))
    }
    pub fn ready_at(mut self, status: &str, heartbeat: Timestamp, transition: Timestamp) -> Self {
        let conditions = self.conditions();
        conditions.retain(|c| c.type_ != "Ready");
        conditions.push(NodeCondition {
            type_: "Ready".into(),
            status: status.into(),
            last_heartbeat_time: Some(Time(heartbeat)),
            last_transition_time: Some(Time(transition)),
            ..NodeCondition::default()
        });
        self
    }
    pub fn condition(mut self, kind: &str, status: &str) -> Self {
        self.conditions().push(NodeCondition { type_: kind.into(), status: status.into(), ..NodeCondition::default() });
        self
    }
    pub fn label(mut self, k: &str, v: &str) -> Self {
        self.0.metadata.labels.get_or_insert_with(BTreeMap::new).insert(k.into(), v.into());
        self
    }
    pub fn zone(self, zone: &str) -> Self {
        self.label("topology.kubernetes.io/zone", zone)
    }
    pub fn taint(mut self, key: &str, effect: &str) -> Self {
        self.0.spec.get_or_insert_default().taints.get_or_insert_with(Vec::new).push(taint(key, effect));
        self
    }
    pub fn unschedulable(mut self) -> Self {
        self.0.spec.get_or_insert_default().unschedulable = Some(true);
        self
    }
    /// The node as the caches hold it: the API's form, decoded by the
    /// slim projection's own decoder.
    pub fn build(self) -> kcm_objects::Node {
        serde_json::from_value(serde_json::to_value(&self.0).unwrap()).unwrap()
    }
    fn conditions(&mut self) -> &mut Vec<NodeCondition> {
        self.0.status.get_or_insert_default().conditions.get_or_insert_with(Vec::new)
    }
}
