//! The ReplicaSet tests' world: a ReplicaSet `ns/web`, its pods and the
//! controller's expectations, made into a [`Snapshot`].

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::ReplicaSetStatus;
use kcm_objects::Pod;
use kcm_objects::ReplicaSet;

use super::{NamespacePods, Options, Snapshot, sync};
use crate::common::expectations::Expectations;
use crate::plan::Plan;
use crate::testing::{PodBuilder, RsBuilder, describe_step, ts};

/// The time of every sync.
pub const NOW: i64 = 1_000_000;
/// The uid of the ReplicaSet under test.
pub const RS_UID: &str = "rs-uid";

/// A snapshot under construction: the ReplicaSet `ns/web`, pods, and the
/// controller's expectations.
pub struct World {
    pub rs: ReplicaSet,
    pub pods: Vec<Arc<Pod>>,
    pub replica_sets: Vec<Arc<ReplicaSet>>,
    pub expectations: Expectations,
    pub pods_rv: Option<u64>,
    pub now: Timestamp,
    pub options: Options,
}

impl World {
    pub fn new(rs: RsBuilder) -> Self {
        Self {
            rs: rs.build(),
            pods: Vec::new(),
            replica_sets: Vec::new(),
            expectations: Expectations::new(),
            pods_rv: None,
            now: ts(NOW),
            options: Options::default(),
        }
    }

    pub fn pods(mut self, pods: impl IntoIterator<Item = PodBuilder>) -> Self {
        self.pods.extend(pods.into_iter().map(PodBuilder::arc));
        self
    }

    /// The snapshot; every pod given is in the namespace.
    pub fn snapshot<'s>(&'s self, namespace_pods: &'s (dyn Fn() -> Vec<Arc<Pod>> + Sync)) -> Snapshot<'s> {
        Snapshot {
            replica_set: &self.rs,
            pods: &self.pods,
            namespace_pods: NamespacePods(namespace_pods),
            replica_sets: &self.replica_sets,
            expectations: &self.expectations,
            pods_resource_version: self.pods_rv,
            now: self.now,
        }
    }

    pub fn plan(&self) -> Plan {
        sync(&self.snapshot(&|| self.pods.clone()), &self.options)
    }

    /// The plan, one line per step (see [`describe_step`]).
    pub fn steps(&self) -> Vec<String> {
        self.plan().steps.iter().map(describe_step).collect()
    }
}

/// A pod owned by the ReplicaSet under test, Running and Ready for an hour.
pub fn owned(name: &str) -> PodBuilder {
    PodBuilder::new(name).owned_by(RS_UID).node("n1").ready_since(ts(NOW - 3600))
}

/// A status of `replicas` pods, all labelled, `ready` of them Ready and
/// `available` available, at generation 1.
pub fn rs_status(replicas: i32, ready: i32, available: i32) -> ReplicaSetStatus {
    ReplicaSetStatus {
        replicas,
        fully_labeled_replicas: Some(replicas),
        ready_replicas: Some(ready),
        available_replicas: Some(available),
        observed_generation: Some(1),
        ..Default::default()
    }
}
