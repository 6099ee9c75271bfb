//! The ReplicaSet controller's decisions (upstream
//! `pkg/controller/replicaset/replica_set.go` `syncReplicaSet`).
//!
//! [`sync`] turns a [`Snapshot`] (the ReplicaSet, the cached pods of its
//! namespace, its siblings, the expectations, `now`) into a [`Plan`], in
//! upstream's order:
//! 1. keep the active pods (not terminal, not being deleted);
//! 2. claim them: adopt matching orphans (after a live re-check that the
//!    ReplicaSet is not being deleted), release owned pods that no longer
//!    match, ignore pods controlled by others;
//! 3. if the expectations are satisfied and the ReplicaSet is not being
//!    deleted, create or delete pods (`manage`);
//! 4. compute the status and write it if it changed (`status`);
//! 5. requeue after `minReadySeconds` if a Ready pod is not yet available.
//!
//! # How the plan is run
//! [`SyncMachine`] hands the plan out step by step and decides what each
//! refusal means (its module doc). The driver's executor performs the
//! bookkeeping actions on the controller's [`Expectations`]
//! ([`Action::ExpectCreations`], [`Action::ExpectDeletions`],
//! [`Action::ForgetCreations`]), reports each accepted create with
//! [`Expectations::creation_succeeded`] and each failed delete (other than
//! NotFound) with [`Expectations::deletion_observed`].
//!
//! [`CreatePod`] steps are slow-start batches: when a batch fails, the
//! whole batch finishes, then the machine forgets the failures in that
//! batch plus the creations of the steps never run, writes the status
//! with `ReplicaFailure` ([`after_manage_error`]) and ends the sync with
//! the first error.
//!
//! # Design note: no extra pods when expectations expire
//! Upstream forgets in-flight creations when their record expires (5
//! minutes): if the informer is that late (a stalled watch, a relist after
//! compaction, an overloaded API server), the next sync sees too few pods
//! and creates them again, and the ReplicaSet overshoots once the late pods
//! show up. Likewise it forgets in-flight deletions, deletes more pods than
//! needed and undershoots.
//!
//! kcm-rs keeps upstream's counters and timeout (an expired record still
//! lets the sync run, so a lost event cannot wedge a ReplicaSet), but each
//! record also remembers *which* pods are in flight:
//! - every pod whose create the API server accepted, with the
//!   resourceVersion it was created at, until the informer shows it (or its
//!   deletion);
//! - every pod whose delete was accepted, until the informer shows the
//!   deletion.
//!
//! [`manage`](self) counts the first as existing pods and the second as gone,
//! whatever the age of the record. A created pod stops counting when the pod
//! cache has reached its resourceVersion ([`Snapshot::pods_resource_version`]):
//! by then the cache would hold the pod if it still existed, so a pod created
//! and deleted while the watch was down is not counted forever. The
//! ReplicaSet therefore never plans a pod for a slot an in-flight creation
//! fills, which is what keeps the count at or below `spec.replicas` through
//! cache lag. What it costs: if the runtime cannot tell the cache's
//! resourceVersion, an in-flight create whose pod vanished unseen holds its
//! slot until the controller restarts; we prefer a missing pod to an extra
//! one.
//!
//! [`Plan`]: crate::plan::Plan
//! [`Action::ExpectCreations`]: crate::plan::Action::ExpectCreations
//! [`Action::ExpectDeletions`]: crate::plan::Action::ExpectDeletions
//! [`Action::ForgetCreations`]: crate::plan::Action::ForgetCreations
//! [`CreatePod`]: crate::plan::Action::CreatePod

mod machine;
mod manage;
mod status;
mod sync;
#[cfg(test)]
mod testing;

use std::sync::Arc;

use jiff::Timestamp;
use kcm_objects::Pod;
use kcm_objects::ReplicaSet;

pub use self::machine::SyncMachine;
pub use self::status::{FAILED_CREATE, FAILED_DELETE, REPLICA_FAILURE, calculate_status, needs_update, requeue_after};
pub use self::sync::{after_manage_error, sync};
use crate::common::expectations::Expectations;
use crate::common::object;
use crate::plan::ObjectRef;

/// Most pods one sync creates or deletes (upstream `BurstReplicas`).
pub const BURST_REPLICAS: usize = 500;

/// Settings of the ReplicaSet controller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Most pods created or deleted per sync.
    pub burst_replicas: usize,
    /// Fill `status.terminatingReplicas` (upstream feature gate
    /// `DeploymentReplicaSetTerminatingReplicas`: alpha in 1.33, beta and on
    /// since 1.35; kcm-rs sets it from `--feature-gates`).
    pub terminating_replicas: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self { burst_replicas: BURST_REPLICAS, terminating_replicas: false }
    }
}

/// What one sync of a ReplicaSet reads.
#[derive(Clone, Copy, Debug)]
pub struct Snapshot<'a> {
    /// The ReplicaSet, from the cache.
    pub replica_set: &'a ReplicaSet,
    /// The cached pods it may claim: at least those it controls and the
    /// orphans of its namespace (every other pod is ignored by the claim,
    /// the counts and the status; pods of other namespaces are ignored).
    pub pods: &'a [Arc<Pod>],
    /// Every cached pod of its namespace, read only to rank pods for a
    /// scale-down (the pods of the ReplicaSets under the same controller).
    pub namespace_pods: NamespacePods<'a>,
    /// The cached ReplicaSets under the same controller (at least those of
    /// its namespace; every other one is ignored): they rank which pods to
    /// delete first.
    pub replica_sets: &'a [Arc<ReplicaSet>],
    /// The controller's expectations.
    pub expectations: &'a Expectations,
    /// The resourceVersion the pod cache has reached (the last list or watch
    /// event or bookmark), when the runtime knows it.
    pub pods_resource_version: Option<u64>,
    /// The time of the sync.
    pub now: Timestamp,
}

/// Reads every cached pod of the ReplicaSet's namespace, when asked.
#[derive(Clone, Copy)]
pub struct NamespacePods<'a>(pub &'a (dyn Fn() -> Vec<Arc<Pod>> + Sync));

impl std::fmt::Debug for NamespacePods<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NamespacePods(..)")
    }
}

/// The queue key of a ReplicaSet, `namespace/name`.
pub fn key(rs: &ReplicaSet) -> String {
    object::key(&rs.metadata)
}

/// The ReplicaSet as events and preconditions name it.
pub fn object_ref(rs: &ReplicaSet) -> ObjectRef {
    object::object_ref("apps/v1", "ReplicaSet", &rs.metadata)
}
