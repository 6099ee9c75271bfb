//! The writes a StatefulSet sync plans ([`Write`], carried by
//! [`Action::Own`](crate::plan::Action::Own)) and the events recorded as
//! their calls are answered (see `call`), in upstream's words
//! (`stateful_pod_control.go` `recordPodEvent`, `recordClaimEvent`):
//! `SuccessfulCreate` "create Pod web-0 in StatefulSet web successful",
//! `FailedCreate` "create Pod web-0 in StatefulSet web failed error: ...",
//! and likewise for `update` and `delete`; claims: "create Claim
//! data-web-0 Pod web-0 in StatefulSet web success".

use k8s_openapi::api::apps::v1::StatefulSetStatus;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};

use super::identity::Repair;
use crate::plan::{Event, EventType, ObjectRef};

/// One intended write of a StatefulSet sync.
#[derive(Clone, Debug, PartialEq)]
pub enum Write {
    /// Create a pod's missing claims, then the pod (upstream
    /// `CreateStatefulPod`). Each claim create that fails records the claim
    /// event [`claim_event`] `create` with the error (AlreadyExists records
    /// nothing) and fails the write before the pod is sent, with the pod
    /// event `create` and the error. The pod create records [`pod_event`]
    /// `create`; AlreadyExists fails the write without an event.
    CreatePod {
        /// The set (events are recorded on it).
        set: ObjectRef,
        /// Claims the cache does not hold, created first.
        claims: Vec<PersistentVolumeClaim>,
        /// The pod, named in full.
        pod: Box<Pod>,
    },
    /// Create claims the cache does not hold for an existing pod (upstream
    /// `createMissingPersistentVolumeClaims` for a Pending pod); events and
    /// failures as for the claims of [`Write::CreatePod`].
    CreateClaims {
        /// The set.
        set: ObjectRef,
        /// The pod the claims are for (named in the events).
        pod_name: String,
        /// The claims to create.
        claims: Vec<PersistentVolumeClaim>,
    },
    /// Give an existing pod its identity and storage (upstream
    /// `UpdateStatefulPod`): read the pod live, [`Repair::apply`] it, and
    /// update it if that changed anything, re-reading and re-applying on a
    /// conflict, at most [`REPAIR_ATTEMPTS`](super::REPAIR_ATTEMPTS) sends.
    /// Records [`pod_event`] `update` when an update was sent.
    RepairPod {
        /// The set.
        set: ObjectRef,
        /// What the pod must carry.
        repair: Repair,
        /// Claims its storage needs that the cache does not hold, created
        /// first as for [`Write::CreatePod`].
        claims: Vec<PersistentVolumeClaim>,
    },
    /// Replace a claim (its owner references changed for the retention
    /// policy; upstream `UpdatePodClaimForRetentionPolicy`). The object
    /// carries the cached resourceVersion; a conflict fails the write. A
    /// failure records [`pod_event`] `update` for `pod_name` with the error.
    UpdateClaim {
        /// The set.
        set: ObjectRef,
        /// The pod the claim belongs to.
        pod_name: String,
        /// The claim to send.
        claim: Box<PersistentVolumeClaim>,
    },
    /// Delete a pod, with its cached uid as precondition (upstream
    /// `DeleteStatefulPod`). Records [`pod_event`] `delete`; NotFound counts
    /// as done, with no event.
    DeletePod {
        /// The set.
        set: ObjectRef,
        /// Namespace of the pod.
        namespace: String,
        /// Name of the pod.
        name: String,
        /// Uid it had in the cache.
        uid: String,
    },
    /// Write the set's status (upstream `UpdateStatefulSetStatus`), as
    /// [`StatusUpdate`] says.
    UpdateStatus(StatusUpdate),
    /// An error upstream returns at this point without a write (a claim the
    /// pod needs is being deleted): the executor fails the step with it.
    Fail {
        /// The set.
        set: ObjectRef,
        /// The error.
        error: String,
    },
}

/// A status write: the set's status subresource at the cached
/// resourceVersion; on a conflict the set is read again and the same status
/// written on it (upstream `UpdateStatefulSetStatus`, `RetryOnConflict`).
#[derive(Clone, Debug, PartialEq)]
pub struct StatusUpdate {
    /// The set.
    pub set: ObjectRef,
    /// resourceVersion of the cached set.
    pub resource_version: Option<String>,
    /// The whole new status.
    pub status: Box<StatefulSetStatus>,
}

/// `Successful<Verb>` `"<verb> Pod <pod> in StatefulSet <set> successful"`,
/// or `Failed<Verb>` `"<verb> Pod <pod> in StatefulSet <set> failed error:
/// <error>"` (upstream `recordPodEvent`); `verb` is `create`, `update` or
/// `delete`.
pub fn pod_event(set: &ObjectRef, verb: &str, pod: &str, error: Option<&str>) -> Event {
    match error {
        None => event(set, EventType::Normal, verb, format!("{verb} Pod {pod} in StatefulSet {} successful", set.name)),
        Some(e) => event(
            set,
            EventType::Warning,
            verb,
            format!("{verb} Pod {pod} in StatefulSet {} failed error: {e}", set.name),
        ),
    }
}

/// `Successful<Verb>` `"<verb> Claim <claim> Pod <pod> in StatefulSet <set>
/// success"`, or `Failed<Verb>` `"<verb> Claim <claim> for Pod <pod> in
/// StatefulSet <set> failed error: <error>"` (upstream `recordClaimEvent`).
pub fn claim_event(set: &ObjectRef, verb: &str, claim: &str, pod: &str, error: Option<&str>) -> Event {
    let s = &set.name;
    match error {
        None => {
            event(set, EventType::Normal, verb, format!("{verb} Claim {claim} Pod {pod} in StatefulSet {s} success"))
        }
        Some(e) => event(
            set,
            EventType::Warning,
            verb,
            format!("{verb} Claim {claim} for Pod {pod} in StatefulSet {s} failed error: {e}"),
        ),
    }
}

fn event(set: &ObjectRef, type_: EventType, verb: &str, message: String) -> Event {
    let outcome = if type_ == EventType::Normal { "Successful" } else { "Failed" };
    let mut title = verb.to_owned();
    if let Some(first) = title.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    Event { regarding: set.clone(), type_, reason: format!("{outcome}{title}"), message }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set() -> ObjectRef {
        ObjectRef {
            api_version: "apps/v1".into(),
            kind: "StatefulSet".into(),
            namespace: Some("ns".into()),
            name: "web".into(),
            uid: "u".into(),
        }
    }

    /// Upstream `TestStatefulPodControlCreatesPods` and friends check these
    /// events after each pod and claim write.
    #[test]
    fn event_texts_are_upstreams() {
        let cases = [
            (
                pod_event(&set(), "create", "web-0", None),
                "SuccessfulCreate",
                "create Pod web-0 in StatefulSet web successful",
            ),
            (
                pod_event(&set(), "create", "web-0", Some("boom")),
                "FailedCreate",
                "create Pod web-0 in StatefulSet web failed error: boom",
            ),
            (
                pod_event(&set(), "delete", "web-2", None),
                "SuccessfulDelete",
                "delete Pod web-2 in StatefulSet web successful",
            ),
            (
                pod_event(&set(), "update", "web-1", None),
                "SuccessfulUpdate",
                "update Pod web-1 in StatefulSet web successful",
            ),
            (
                claim_event(&set(), "create", "data-web-0", "web-0", None),
                "SuccessfulCreate",
                "create Claim data-web-0 Pod web-0 in StatefulSet web success",
            ),
            (
                claim_event(&set(), "create", "data-web-0", "web-0", Some("quota")),
                "FailedCreate",
                "create Claim data-web-0 for Pod web-0 in StatefulSet web failed error: quota",
            ),
        ];
        for (e, reason, message) in cases {
            assert_eq!((e.reason.as_str(), e.message.as_str()), (reason, message));
        }
    }
}
