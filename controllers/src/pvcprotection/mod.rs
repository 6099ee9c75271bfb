//! The PVC protection controller's decisions (upstream
//! `pkg/controller/volume/pvcprotection/pvc_protection_controller.go`),
//! in the observe/decide shape: upstream's sync reads the pod cache, then,
//! when no cached pod uses the claim, lists the namespace's pods live
//! before it decides, so [`process`] answers with the cached pods either
//! [`Answer::ListPods`] or the writes, and with the live list the writes.
//!
//! - A claim being deleted keeps [`PVC_PROTECTION_FINALIZER`] while a
//!   scheduled pod mounts it (upstream `podUsesPVCForDeletion`): a `persistentVolumeClaim`
//!   volume naming it, or a generic ephemeral volume whose claim it is
//!   (named `<pod>-<volume>` and controlled by the pod) unless the pod is
//!   shut down (deleted with a zero grace period).
//! - A live claim without the finalizer gets it.
//! - With the `PersistentVolumeClaimUnusedSinceTime` gate (beta, on in
//!   1.37), a live `Bound` claim carries the `Unused` condition: `True`
//!   when no pod that has not terminated refers to it
//!   (upstream `podUsesPVCForUnusedSince`: scheduled or not), `False` otherwise.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, PersistentVolumeClaimCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kcm_objects::Pod;

use crate::common::ephemeral::{pod_pvc_keys, volume_claim_name, volume_is_for_pod};
use crate::common::pod::is_pod_terminated;
use crate::common::protection::{is_deletion_candidate, need_to_add_finalizer, with_finalizer, without_finalizer};

#[cfg(test)]
mod tests;

/// The finalizer (upstream `volumeutil.PVCProtectionFinalizer`).
pub const PVC_PROTECTION_FINALIZER: &str = "kubernetes.io/pvc-protection";

/// The condition type the controller keeps on bound claims (upstream
/// `v1.PersistentVolumeClaimUnused`).
pub const UNUSED_CONDITION: &str = "Unused";

/// Which pods count as using a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Usage {
    /// For the finalizer's removal (upstream `podUsesPVCForDeletion`).
    Deletion,
    /// For the `Unused` condition (upstream `podUsesPVCForUnusedSince`).
    UnusedSince,
}

/// The `Unused` condition to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct UnusedCondition {
    /// `True` or `False`.
    status: &'static str,
    /// `NoPodsUsingPVC` or `PodUsingPVC`.
    reason: &'static str,
    /// The condition's message.
    message: &'static str,
}

/// Whether a claim's add or update event queues it (upstream
/// `pvcAddedUpdated`).
pub fn should_queue(pvc: &PersistentVolumeClaim, unused_since: bool) -> bool {
    (unused_since && find_condition(pvc, UNUSED_CONDITION).is_none())
        || need_to_add_finalizer(&pvc.metadata, PVC_PROTECTION_FINALIZER)
        || is_deletion_candidate(&pvc.metadata, PVC_PROTECTION_FINALIZER)
}

/// The claims a pod event queues (upstream `podAddedDeletedUpdated` and
/// `enqueuePVCs`): the new pod's, unless (without the gate) it is a
/// scheduled pod still running; and the old pod's, as deleted, when an
/// update replaced it by another pod of the same name.
pub fn claims_to_queue(old: Option<&Pod>, new: &Pod, deleted: bool, unused_since: bool) -> Vec<String> {
    let mut keys = queued_by(new, deleted, unused_since);
    if let Some(old) = old.filter(|old| old.metadata.uid != new.metadata.uid) {
        keys.extend(queued_by(old, true, unused_since));
    }
    keys
}

fn queued_by(pod: &Pod, deleted: bool, unused_since: bool) -> Vec<String> {
    if !unused_since && !deleted && !is_pod_terminated(pod) && pod.node_name().is_some() {
        return Vec::new();
    }
    pod_pvc_keys(pod)
}

/// What to do next for a claim (upstream `processPVC`).
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// No cached pod uses the claim: list the namespace's pods live and
    /// ask again with them (upstream's lazy live list, read once per
    /// sync).
    ListPods,
    /// The writes to make, in order, each only if the one before it
    /// succeeded.
    Writes(Outcome),
}

/// The writes for a claim, and whether a pod keeps it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outcome {
    /// The writes, in order.
    pub writes: Vec<Write>,
    /// The claim is being deleted and a pod uses it: the finalizer stays.
    pub kept_in_use: bool,
}

/// One write to a claim, each from the cached claim as upstream makes
/// them (a finalizer added after a status update carries the cached
/// resourceVersion, and conflicts until the next sync).
#[derive(Debug, Clone, PartialEq)]
pub enum Write {
    /// A status update setting the `Unused` condition to this status.
    UnusedCondition(Box<PersistentVolumeClaim>, &'static str),
    /// An update removing the finalizer.
    RemoveFinalizer(Box<PersistentVolumeClaim>),
    /// An update adding the finalizer.
    AddFinalizer(Box<PersistentVolumeClaim>),
}

/// Upstream `processPVC` for the cached claim: the `Unused` condition of a
/// live `Bound` claim (with the gate `unused_since`), the finalizer's
/// removal from a claim being deleted that no pod uses, the finalizer
/// added to a live claim lacking it. `cached` are the cached pods the pod
/// index gives for the claim; `live` the namespace's pods listed live,
/// once [`Answer::ListPods`] asked for them.
pub fn process(
    pvc: &PersistentVolumeClaim,
    cached: &[Arc<Pod>],
    live: Option<&[Pod]>,
    unused_since: bool,
    now: Time,
) -> Answer {
    let in_use = |usage| {
        if cached.iter().any(|pod| uses(pod, pvc, usage)) {
            return Some(true);
        }
        live.map(|pods| pods.iter().any(|pod| uses(pod, pvc, usage)))
    };
    let mut outcome = Outcome::default();
    let bound = pvc.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Bound");
    if unused_since && pvc.metadata.deletion_timestamp.is_none() && bound {
        let Some(used) = in_use(Usage::UnusedSince) else { return Answer::ListPods };
        if let Some(condition) = unused_condition(pvc, used) {
            let updated = with_unused_condition(pvc, condition, now.clone());
            outcome.writes.push(Write::UnusedCondition(Box::new(updated), condition.status));
        }
    }
    if is_deletion_candidate(&pvc.metadata, PVC_PROTECTION_FINALIZER) {
        let Some(used) = in_use(Usage::Deletion) else { return Answer::ListPods };
        if !used {
            let metadata = without_finalizer(&pvc.metadata, PVC_PROTECTION_FINALIZER);
            outcome.writes.push(Write::RemoveFinalizer(Box::new(PersistentVolumeClaim { metadata, ..pvc.clone() })));
            return Answer::Writes(outcome);
        }
        outcome.kept_in_use = true;
    }
    if need_to_add_finalizer(&pvc.metadata, PVC_PROTECTION_FINALIZER) {
        let metadata = with_finalizer(&pvc.metadata, PVC_PROTECTION_FINALIZER);
        outcome.writes.push(Write::AddFinalizer(Box::new(PersistentVolumeClaim { metadata, ..pvc.clone() })));
    }
    Answer::Writes(outcome)
}

/// Whether `pod` uses the claim in the sense of `usage`.
fn uses(pod: &Pod, pvc: &PersistentVolumeClaim, usage: Usage) -> bool {
    let name = pvc.metadata.name.as_deref().unwrap_or_default();
    let claim = pod.spec.rare().claim_volumes.iter().any(|v| *v.claim_name == *name);
    let ephemeral = || {
        pod.spec.rare().ephemeral_volumes.iter().any(|v| volume_claim_name(pod, &v.name) == name)
            && volume_is_for_pod(pod, pvc).is_ok()
    };
    match usage {
        // Only scheduled pods: the kubelet sees a pod once it is
        // scheduled, and does not start one with a claim being deleted.
        Usage::Deletion => pod.node_name().is_some() && (claim || !pod_is_shut_down(pod) && ephemeral()),
        Usage::UnusedSince => !is_pod_terminated(pod) && (claim || ephemeral()),
    }
}

/// The `Unused` condition to write, if the claim's differs (upstream
/// `updateUnusedCondition`).
fn unused_condition(pvc: &PersistentVolumeClaim, is_used: bool) -> Option<UnusedCondition> {
    let existing = find_condition(pvc, UNUSED_CONDITION).map(|c| c.status.as_str());
    match (is_used, existing) {
        (true, None | Some("True")) => Some(UnusedCondition {
            status: "False",
            reason: "PodUsingPVC",
            message: "A pod is currently referencing this PVC",
        }),
        (false, existing) if existing != Some("True") => Some(UnusedCondition {
            status: "True",
            reason: "NoPodsUsingPVC",
            message: "No pods are currently referencing this PVC",
        }),
        _ => None,
    }
}

/// The claim with `condition` set at `now`, replacing an `Unused`
/// condition in place or appended (upstream `setUnusedCondition`), for a
/// status update.
fn with_unused_condition(pvc: &PersistentVolumeClaim, condition: UnusedCondition, now: Time) -> PersistentVolumeClaim {
    let mut pvc = pvc.clone();
    let new = PersistentVolumeClaimCondition {
        type_: UNUSED_CONDITION.to_owned(),
        status: condition.status.to_owned(),
        last_transition_time: Some(now),
        reason: Some(condition.reason.to_owned()),
        message: Some(condition.message.to_owned()),
        last_probe_time: None,
    };
    let conditions = pvc.status.get_or_insert_with(Default::default).conditions.get_or_insert_with(Vec::new);
    match conditions.iter_mut().find(|c| c.type_ == UNUSED_CONDITION) {
        Some(existing) => *existing = new,
        None => conditions.push(new),
    }
    pvc
}

fn find_condition<'a>(pvc: &'a PersistentVolumeClaim, type_: &str) -> Option<&'a PersistentVolumeClaimCondition> {
    pvc.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == type_)
}

/// The kubelet is done with the pod, or it was force-deleted: deleted with
/// a zero grace period (upstream `podIsShutDown`).
fn pod_is_shut_down(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp().is_some() && pod.metadata.deletion_grace_period_seconds() == Some(0)
}
