//! The pod garbage collector (upstream `pkg/controller/podgc`, the
//! `pod-garbage-collector-controller`): every 20 s ([`GC_CHECK_PERIOD`]) a
//! pass over every cached pod force-deletes (grace period 0) the pods no
//! one else will delete:
//! - [`gc_terminated`]: terminated pods (`Succeeded`, `Failed`, or any
//!   phase but `Pending`, `Running` and `Unknown`) beyond
//!   `--terminated-pod-gc-threshold`, evicted ones first, then the oldest
//!   (a threshold of 0 or less turns this part off);
//! - [`gc_terminating`]: terminating pods on a node that is not Ready and
//!   carries the `node.kubernetes.io/out-of-service` taint;
//! - [`gc_orphaned`]: pods bound to a node that no longer exists, once the
//!   node has stayed out of the cache for the [`QUARANTINE_TIME`] and a
//!   live read confirms it is gone ([`Quarantine`]);
//! - [`gc_unscheduled_terminating`]: terminating pods bound to no node.
//!
//! Each part works on the pass's one [`Snapshot`] of the caches, as
//! upstream's parts share one listing. A pod that is not terminal is first
//! marked `Failed` (a strategic merge patch of `pods/status`, with the pod's
//! uid as precondition), with the `DisruptionTarget` condition
//! ([`DISRUPTION_REASON`], [`ORPHANED_MESSAGE`]) when its node is gone:
//! without a kubelet, nothing else would ever end its phase.
//!
//! This core is of the *observe/decide* shape (see docs/design.md): the
//! driver (`kcm_rs::drivers::podgc`) takes the snapshot and `now`, asks each
//! part for its [`ForceDelete`]s, and between the two halves of the orphan
//! part performs the live node reads the [`Quarantine`] asks for. Time is
//! an input: nothing here reads a clock.
//!
//! # Layout
//! - this module: the pass's [`Snapshot`], the decision [`ForceDelete`]
//!   and its [`Reason`] (the metrics' `reason` label), the status patch;
//! - `terminated`: [`gc_terminated`] and its deletion order;
//! - `terminating`: [`gc_terminating`] and [`gc_unscheduled_terminating`];
//! - `orphaned`: the [`Quarantine`] and [`gc_orphaned`].

mod orphaned;
mod terminated;
mod terminating;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::PodCondition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kcm_objects::{Node, Pod};
use serde_json::{Value, json};

pub use orphaned::{Quarantine, gc_orphaned};
pub use terminated::{deletion_order, gc_terminated};
pub use terminating::{gc_terminating, gc_unscheduled_terminating};

/// How often a pass runs (upstream `gcCheckPeriod`).
pub const GC_CHECK_PERIOD: Duration = Duration::from_secs(20);

/// How long a node must stay out of the cache before a live read decides
/// whether it is gone (upstream `quarantineTime`).
pub const QUARANTINE_TIME: Duration = Duration::from_secs(40);

/// The taint that lets terminating pods of a node that is not Ready be
/// force-deleted (`v1.TaintNodeOutOfService`).
pub const TAINT_OUT_OF_SERVICE: &str = "node.kubernetes.io/out-of-service";

/// Type of the condition written on an orphaned pod before its deletion.
pub const DISRUPTION_TARGET: &str = "DisruptionTarget";

/// Reason of the [`DISRUPTION_TARGET`] condition.
pub const DISRUPTION_REASON: &str = "DeletionByPodGC";

/// Message of the [`DISRUPTION_TARGET`] condition on an orphaned pod.
pub const ORPHANED_MESSAGE: &str = "PodGC: node no longer exists";

/// The `status.reason` of a pod the kubelet evicted (`eviction.Reason`).
pub const EVICTED_REASON: &str = "Evicted";

/// Why a pod is force-deleted: the `reason` label of upstream's
/// `pod_gc_collector_force_delete_pods_total` and
/// `pod_gc_collector_force_delete_pod_errors_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reason {
    /// Terminated, beyond the threshold (upstream `PodGCReasonTerminated`).
    Terminated,
    /// Terminating on an out-of-service node
    /// (`PodGCReasonTerminatingOutOfService`).
    OutOfService,
    /// Bound to a node that is gone (`PodGCReasonOrphaned`).
    Orphaned,
    /// Terminating and bound to no node
    /// (`PodGCReasonTerminatingUnscheduled`).
    Unscheduled,
}

impl Reason {
    /// The metrics' `reason` label value.
    pub fn label(self) -> &'static str {
        match self {
            Reason::Terminated => "terminated",
            Reason::OutOfService => "out-of-service",
            Reason::Orphaned => "orphaned",
            Reason::Unscheduled => "unscheduled",
        }
    }
}

/// One pod to force-delete (upstream `markFailedAndDeletePod`): first the
/// status patch, if any, then a delete with grace period 0.
#[derive(Clone, Debug, PartialEq)]
pub struct ForceDelete {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid`, the precondition of both writes.
    pub uid: String,
    /// The node the pod is bound to (`""`: none), for the logs.
    pub node: String,
    /// Which part of the pass decided it.
    pub reason: Reason,
    /// The strategic merge patch of `pods/status` to send before the
    /// delete; `None` when the pod is terminal already.
    pub status_patch: Option<Value>,
}

/// The caches as one pass reads them: every pod, and the nodes by name.
#[derive(Clone, Debug, Default)]
pub struct Snapshot<'a> {
    /// Every cached pod, in the cache's order.
    pub pods: Vec<&'a Pod>,
    /// Every cached node, by name.
    pub nodes: HashMap<&'a str, &'a Node>,
}

impl<'a> Snapshot<'a> {
    /// A snapshot of these pods and nodes.
    pub fn new(pods: impl IntoIterator<Item = &'a Pod>, nodes: impl IntoIterator<Item = &'a Node>) -> Self {
        Snapshot {
            pods: pods.into_iter().collect(),
            nodes: nodes.into_iter().map(|n| (&*n.metadata.name, n)).collect(),
        }
    }
}

/// Whether the pass counts the pod as terminated (upstream
/// `isPodTerminated`): any phase but `Pending`, `Running` and `Unknown`,
/// so a pod with no phase at all counts too.
pub fn is_terminated(pod: &Pod) -> bool {
    !matches!(pod.phase(), "Pending" | "Running" | "Unknown")
}

/// The force deletion of `pod` for `reason`: a pod that is neither
/// `Succeeded` nor `Failed` is first patched to `Failed`, with `condition`
/// (if any) set as upstream's `UpdatePodCondition` sets it.
pub(crate) fn force_delete(pod: &Pod, reason: Reason, condition: Option<PodCondition>, now: Timestamp) -> ForceDelete {
    let terminal = matches!(pod.phase(), "Succeeded" | "Failed");
    ForceDelete {
        namespace: pod.metadata.namespace.to_string(),
        name: pod.metadata.name.to_string(),
        uid: pod.metadata.uid.to_string(),
        node: pod.node_name().unwrap_or_default().to_owned(),
        reason,
        status_patch: (!terminal).then(|| mark_failed(pod, condition, now)),
    }
}

/// The `pods/status` patch marking `pod` `Failed` (upstream
/// `PatchPodStatus` of the status with the phase and the condition
/// changed): the uid as precondition, the phase, and the condition merged
/// by type. The condition's transition time is `now`, unless the pod
/// already has it with the same status (then its time is kept).
fn mark_failed(pod: &Pod, condition: Option<PodCondition>, now: Timestamp) -> Value {
    let mut status = json!({"phase": "Failed"});
    if let Some(mut condition) = condition {
        let old = pod.condition(&condition.type_);
        condition.last_transition_time = match old {
            Some(old) if old.status().as_str() == condition.status => old.last_transition_time().map(Time),
            _ => Some(Time(now)),
        };
        status["conditions"] = json!([condition]);
    }
    json!({"metadata": {"uid": pod.metadata.uid.to_string()}, "status": status})
}
