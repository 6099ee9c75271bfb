//! The [`Plan`]: what a controller core decided to do in one sync, as data.
//!
//! A plan is an ordered list of [`Step`]s. Each step holds one or more
//! [`Action`]s that the executor (in the `kcm-rs` runtime) may run
//! concurrently; it waits for every action of a step to finish and, if one of
//! them failed in a way the action's documentation does not tolerate, stops
//! there: later steps are not run and the key is requeued with rate limiting.
//! This is how upstream's slow start (`slowStartBatch`) and "stop at the first
//! error" are expressed without the core doing any I/O.
//!
//! The plan's shared [`Action`]s are the writes more than one controller
//! makes, or that upstream keeps in shared code (`PodControl`, the
//! ControllerRefManager, ControllerRevision history): the ReplicaSet
//! controller creates, deletes and patches pods and writes ReplicaSet
//! status; the Deployment controller creates, updates, deletes and patches
//! ReplicaSets and writes its Deployment (status, and the spec on a
//! rollback). A controller's own writes are its type `W`, carried as
//! [`Action::Own`] and performed by its driver: a plan names no
//! controller.
//!
//! What a plan deliberately leaves to the executor:
//! - pod names chosen by the API server (`generateName`), and so the events
//!   that name them ([`crate::common::pod_control`] builds them);
//! - error classification (NotFound, Invalid, NamespaceTerminating);
//! - the live re-read behind [`Action::RecheckOwner`].

use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, ReplicaSetStatus};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
pub use kcm_objects::EventType;
use serde_json::json;

use crate::common::history;

/// The writes of a controller that has none of its own (a plan of shared
/// [`Action`]s only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoOwnWrites {}

/// The outcome of one sync: intended writes in order, and when to look
/// again. `W` is the controller's own write type ([`Action::Own`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Plan<W = NoOwnWrites> {
    /// Steps, run one after another; the executor stops after the first step
    /// that failed.
    pub steps: Vec<Step<W>>,
    /// Sync this key again after this long even if nothing changes
    /// (upstream `queue.AddAfter`). The executor honours it only when every
    /// step succeeded; a failure requeues with rate limiting instead.
    pub requeue_after: Option<Duration>,
}

/// Actions that may run concurrently; the plan continues only if all of them
/// succeeded (or failed in a way their documentation tolerates).
#[derive(Clone, Debug, PartialEq)]
pub struct Step<W = NoOwnWrites> {
    /// The actions of this step, in the order they were decided.
    pub actions: Vec<Action<W>>,
}

/// One intended write (or local bookkeeping, or precondition) of a plan.
#[derive(Clone, Debug, PartialEq)]
pub enum Action<W = NoOwnWrites> {
    /// Precondition before adopting: read `owner` (a ReplicaSet, a
    /// Deployment, a DaemonSet or a StatefulSet, by `owner.kind`) live from the API server (not the cache)
    /// and fail the step if it is gone, has another uid, or has a
    /// `deletionTimestamp` (upstream `RecheckDeletionTimestamp`, #42639).
    RecheckOwner {
        /// The controller that is about to adopt.
        owner: ObjectRef,
    },
    /// Local bookkeeping, no API call: record in the controller's
    /// expectations, under `key`, that `count` pod creations are about to be
    /// issued (upstream `ExpectCreations`).
    ExpectCreations {
        /// The controller's queue key (`namespace/name`).
        key: String,
        /// How many creations are about to be issued.
        count: usize,
    },
    /// Local bookkeeping, no API call: record under `key` the pods
    /// (`namespace/name`) about to be deleted (upstream UID-tracking
    /// `ExpectDeletions`).
    ExpectDeletions {
        /// The controller's queue key (`namespace/name`).
        key: String,
        /// Keys (`namespace/name`) of the pods about to be deleted.
        pod_keys: Vec<String>,
    },
    /// Local bookkeeping, no API call: `count` of the creations expected
    /// under `key` will not be seen, because they failed or were never
    /// issued (upstream's `CreationObserved` for each skipped pod).
    ForgetCreations {
        /// The controller's queue key (`namespace/name`).
        key: String,
        /// How many expected creations to forget.
        count: usize,
    },
    /// Create a pod (its name comes from `generateName`). On success emit
    /// [`pod_control::successful_create`](crate::common::pod_control::successful_create)
    /// and report the created name and resourceVersion to the expectations.
    /// A failure caused by a terminating namespace counts as success and
    /// emits no event; any other failure emits `FailedCreate`.
    CreatePod {
        /// Namespace to create in.
        namespace: String,
        /// The pod to send.
        pod: Box<Pod>,
        /// The object events are recorded on.
        owner: ObjectRef,
    },
    /// Delete a pod by name, with a uid precondition. NotFound counts as
    /// success (no event); other failures emit `FailedDelete` and lower the
    /// expectations for this pod (upstream `DeletionObserved` on error).
    DeletePod {
        /// Namespace of the pod.
        namespace: String,
        /// Name of the pod.
        name: String,
        /// Uid the pod had in the cache (sent as a precondition).
        uid: String,
        /// The object events are recorded on.
        owner: ObjectRef,
    },
    /// Strategic merge patch of a pod's ownerReferences (adopt or release),
    /// with the pod's uid as precondition inside the patch. See
    /// [`OwnerRefPatch`] for which errors are tolerated.
    PatchPodOwnerRefs {
        /// Namespace of the pod.
        namespace: String,
        /// Name of the pod.
        name: String,
        /// Uid of the pod (precondition).
        uid: String,
        /// Adopt or release.
        patch: OwnerRefPatch,
    },
    /// Write a ReplicaSet's status subresource. The executor sends the
    /// cached object with this status at `resource_version`; on a failure it
    /// re-reads the object once and retries with the fresh resourceVersion
    /// (upstream `statusUpdateRetries = 1`).
    UpdateReplicaSetStatus {
        /// Namespace of the ReplicaSet.
        namespace: String,
        /// Name of the ReplicaSet.
        name: String,
        /// resourceVersion of the cached object the status was computed from.
        resource_version: Option<String>,
        /// The whole new status, observedGeneration included.
        status: Box<ReplicaSetStatus>,
    },
    /// Strategic merge patch of a ReplicaSet's ownerReferences (a
    /// Deployment adopting or releasing it), with the ReplicaSet's uid as
    /// precondition inside the patch. Errors are tolerated as for
    /// [`Action::PatchPodOwnerRefs`].
    PatchReplicaSetOwnerRefs {
        /// Namespace of the ReplicaSet.
        namespace: String,
        /// Name of the ReplicaSet.
        name: String,
        /// Uid of the ReplicaSet (precondition).
        uid: String,
        /// Adopt or release.
        patch: OwnerRefPatch,
    },
    /// Create a ReplicaSet (a Deployment's new one, named in full). What
    /// an AlreadyExists, a terminating namespace or another refusal means
    /// is decided by the core that planned it.
    CreateReplicaSet {
        /// Namespace to create in.
        namespace: String,
        /// The object to send.
        replica_set: Box<ReplicaSet>,
    },
    /// Read a ReplicaSet live from the API server (not the cache); it
    /// answers with the object ([`Answer::ReplicaSet`]).
    ///
    /// [`Answer::ReplicaSet`]: crate::protocol::Answer::ReplicaSet
    ReadReplicaSet {
        /// Namespace of the ReplicaSet.
        namespace: String,
        /// Name of the ReplicaSet.
        name: String,
    },
    /// Replace a ReplicaSet (its spec and metadata; the API server keeps
    /// the status). The object carries the resourceVersion it was planned
    /// from; when an earlier action of the same plan wrote the same object,
    /// the executor sends the version that write returned instead, so a plan
    /// may update one object twice. A conflict fails the step.
    UpdateReplicaSet {
        /// The whole object to send.
        replica_set: Box<ReplicaSet>,
    },
    /// Delete a ReplicaSet with a uid precondition. NotFound counts as
    /// success.
    DeleteReplicaSet {
        /// Namespace of the ReplicaSet.
        namespace: String,
        /// Name of the ReplicaSet.
        name: String,
        /// Uid it had in the cache (precondition).
        uid: String,
    },
    /// Write a Deployment through its status subresource: the status, and
    /// the annotations (the API server's status strategy for Deployments
    /// keeps metadata but spec and labels, which is how upstream writes the
    /// revision annotation). resourceVersion handling as for
    /// [`Action::UpdateReplicaSet`].
    UpdateDeploymentStatus {
        /// The whole object to send.
        deployment: Box<Deployment>,
    },
    /// Replace a Deployment (spec and metadata): a rollback.
    /// resourceVersion handling as for [`Action::UpdateReplicaSet`].
    UpdateDeployment {
        /// The whole object to send.
        deployment: Box<Deployment>,
    },
    /// A write to a ControllerRevision (DaemonSet and StatefulSet
    /// history), as [`history::Write`] documents it.
    ControllerRevision(history::Write),
    /// A write (or bookkeeping) of the controller's own, as its type `W`
    /// documents it, performed by its driver.
    Own(W),
    /// Record an event whose text is known when planning.
    Event(Event),
}

/// An ownerReferences change to a dependent, as upstream's
/// `controller_ref_manager.go` sends it.
#[derive(Clone, Debug, PartialEq)]
pub enum OwnerRefPatch {
    /// Make `0` the dependent's controller. A NotFound answer means the pod
    /// is gone: the executor stops the plan without reporting an error and
    /// requeues the key at once (the snapshot was stale; nothing was
    /// decided on a pod that exists). Other errors fail the step.
    Adopt(OwnerReference),
    /// Remove the reference with this owner uid. NotFound and Invalid (422)
    /// answers are tolerated (the pod is gone or the reference already was).
    Release {
        /// Uid of the owner whose reference is removed.
        owner_uid: String,
    },
}

impl OwnerRefPatch {
    /// The strategic merge patch body for a dependent with uid `dependent_uid`:
    /// the uid in `metadata` makes the API server refuse the patch if the
    /// object was deleted and recreated under the same name.
    pub fn body(&self, dependent_uid: &str) -> serde_json::Value {
        match self {
            OwnerRefPatch::Adopt(r) => json!({
                "metadata": {
                    "ownerReferences": [{
                        "apiVersion": r.api_version,
                        "kind": r.kind,
                        "name": r.name,
                        "uid": r.uid,
                        "controller": true,
                        "blockOwnerDeletion": true,
                    }],
                    "uid": dependent_uid,
                }
            }),
            OwnerRefPatch::Release { owner_uid } => json!({
                "metadata": {
                    "ownerReferences": [{ "$patch": "delete", "uid": owner_uid }],
                    "uid": dependent_uid,
                }
            }),
        }
    }
}

/// Enough of an object to name it in events and preconditions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectRef {
    /// `apps/v1`, `v1`, ...
    pub api_version: String,
    /// `ReplicaSet`, `Pod`, ...
    pub kind: String,
    /// Namespace, if namespaced.
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
    /// Uid.
    pub uid: String,
}

/// An event to record, with upstream's reason and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The object the event is about.
    pub regarding: ObjectRef,
    /// Normal or Warning.
    pub type_: EventType,
    /// Upstream reason, e.g. `SuccessfulCreate`.
    pub reason: String,
    /// Human-readable message, upstream's wording.
    pub message: String,
}

// === impl Action ===

impl<W> Action<W> {
    /// This action typed for any own write type if it is a shared one;
    /// its own write otherwise. How a core that sends an own write as
    /// several calls hands out the shared actions beside them.
    ///
    /// # Errors
    /// The own write, when the action is [`Action::Own`].
    pub fn into_shared<V>(self) -> Result<Action<V>, W> {
        Ok(match self {
            Action::RecheckOwner { owner } => Action::RecheckOwner { owner },
            Action::ExpectCreations { key, count } => Action::ExpectCreations { key, count },
            Action::ExpectDeletions { key, pod_keys } => Action::ExpectDeletions { key, pod_keys },
            Action::ForgetCreations { key, count } => Action::ForgetCreations { key, count },
            Action::CreatePod { namespace, pod, owner } => Action::CreatePod { namespace, pod, owner },
            Action::DeletePod { namespace, name, uid, owner } => Action::DeletePod { namespace, name, uid, owner },
            Action::PatchPodOwnerRefs { namespace, name, uid, patch } => {
                Action::PatchPodOwnerRefs { namespace, name, uid, patch }
            }
            Action::UpdateReplicaSetStatus { namespace, name, resource_version, status } => {
                Action::UpdateReplicaSetStatus { namespace, name, resource_version, status }
            }
            Action::PatchReplicaSetOwnerRefs { namespace, name, uid, patch } => {
                Action::PatchReplicaSetOwnerRefs { namespace, name, uid, patch }
            }
            Action::CreateReplicaSet { namespace, replica_set } => Action::CreateReplicaSet { namespace, replica_set },
            Action::ReadReplicaSet { namespace, name } => Action::ReadReplicaSet { namespace, name },
            Action::UpdateReplicaSet { replica_set } => Action::UpdateReplicaSet { replica_set },
            Action::DeleteReplicaSet { namespace, name, uid } => Action::DeleteReplicaSet { namespace, name, uid },
            Action::UpdateDeploymentStatus { deployment } => Action::UpdateDeploymentStatus { deployment },
            Action::UpdateDeployment { deployment } => Action::UpdateDeployment { deployment },
            Action::ControllerRevision(write) => Action::ControllerRevision(write),
            Action::Event(event) => Action::Event(event),
            Action::Own(write) => return Err(write),
        })
    }
}

// === impl Plan ===

impl<W> Default for Plan<W> {
    fn default() -> Self {
        Self { steps: Vec::new(), requeue_after: None }
    }
}

impl<W> Plan<W> {
    /// An empty plan: nothing to write, no requeue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a step holding a single action.
    pub fn push(&mut self, action: Action<W>) {
        self.steps.push(Step { actions: vec![action] });
    }

    /// Appends a step whose actions may run concurrently. Empty steps are
    /// not added.
    pub fn push_concurrent(&mut self, actions: Vec<Action<W>>) {
        if !actions.is_empty() {
            self.steps.push(Step { actions });
        }
    }

    /// True when the plan writes nothing and asks for no requeue.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty() && self.requeue_after.is_none()
    }

    /// Every action, in order, ignoring the step structure.
    pub fn actions(&self) -> impl Iterator<Item = &Action<W>> {
        self.steps.iter().flat_map(|s| s.actions.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adopt_patch_is_upstreams_strategic_merge_patch() {
        let patch = OwnerRefPatch::Adopt(OwnerReference {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            name: "rs".into(),
            uid: "rs-uid".into(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        });
        assert_eq!(
            patch.body("pod-uid"),
            json!({"metadata": {"ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                "uid": "rs-uid", "controller": true, "blockOwnerDeletion": true}], "uid": "pod-uid"}})
        );
    }

    #[test]
    fn release_patch_deletes_by_owner_uid() {
        let patch = OwnerRefPatch::Release { owner_uid: "rs-uid".into() };
        assert_eq!(
            patch.body("pod-uid"),
            json!({"metadata": {"ownerReferences": [{"$patch": "delete", "uid": "rs-uid"}], "uid": "pod-uid"}})
        );
    }
}
