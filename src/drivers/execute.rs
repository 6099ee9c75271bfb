//! The plan executor: performs a [`Plan`]'s writes against the API server,
//! in order, following the contract written in `kcm_controllers::plan` and
//! in each controller core's module doc.
//!
//! It owns the I/O of every [`Action`] (pod creates, deletes with a uid
//! precondition, ownerReference patches, status updates, the live re-check
//! before adoption, events) and error classification (NotFound, Invalid,
//! terminating namespace). What a controller remembers between syncs (the
//! ReplicaSet controller's expectations) stays with the controller: the
//! executor reports through [`Bookkeeping`].

use std::time::Duration;

use futures::future::join_all;
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{ObjectReference, Pod};
use kcm_controllers::common::pod_control;
use kcm_controllers::plan::{Action, Event, ObjectRef, OwnerRefPatch, Plan};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use kube::{Api, Client};

use crate::events::EventRecorder;
use crate::informer::Store;

/// What a controller remembers about its writes in flight (the ReplicaSet
/// controller's expectations). Keys are controller queue keys
/// (`namespace/name`), pod keys `namespace/name`.
pub trait Bookkeeping: Send + Sync {
    /// [`Action::ExpectCreations`].
    fn expect_creations(&self, key: &str, count: usize);
    /// [`Action::ExpectDeletions`].
    fn expect_deletions(&self, key: &str, pod_keys: &[String]);
    /// A pod create was accepted: `pod_key` at `resource_version`.
    fn creation_succeeded(&self, key: &str, pod_key: &str, resource_version: Option<u64>);
    /// `count` planned creations failed or were never issued.
    fn creations_skipped(&self, key: &str, count: usize);
    /// The delete of `pod_key` failed (other than NotFound).
    fn deletion_failed(&self, key: &str, pod_key: &str);
}

/// How running a plan ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Executed {
    /// Every step succeeded: honour [`Plan::requeue_after`].
    Done(Option<Duration>),
    /// An adoption found its pod gone: the snapshot was stale, sync again
    /// at once (no error).
    Stale,
    /// A claim step (re-check, adopt, release) failed: requeue with rate
    /// limiting, nothing else.
    ClaimFailed(String),
    /// A create or delete step failed with this first error: the caller
    /// writes the status with `ReplicaFailure` and requeues with rate
    /// limiting.
    ManageFailed(String),
    /// Another step (status update) failed.
    Failed(String),
}

/// The outcome of one action.
enum Outcome {
    /// Done, or failed in a way the action tolerates.
    Ok,
    /// The pod to adopt is gone.
    Stale,
    /// Failed.
    Failed(String),
}

/// Performs plans for one controller.
#[derive(Clone)]
pub struct Executor {
    /// Every write goes through it.
    client: Client,
    /// Events are recorded as the controller's component.
    recorder: EventRecorder,
    /// The cached ReplicaSets a status update is written on (the API
    /// server keeps the spec; the whole object is sent as upstream does).
    replica_sets: Option<Store<ReplicaSet>>,
}

// === impl Executor ===

impl Executor {
    /// An executor writing with `client` and recording through `recorder`.
    pub fn new(client: Client, recorder: EventRecorder) -> Self {
        Self { client, recorder, replica_sets: None }
    }

    /// Writes ReplicaSet status on the objects of `store`.
    pub fn with_replica_sets(mut self, store: Store<ReplicaSet>) -> Self {
        self.replica_sets = Some(store);
        self
    }

    /// Runs `plan`'s steps in order (the actions of one step concurrently)
    /// and stops after the first failed step.
    pub async fn run(&self, plan: &Plan, book: &dyn Bookkeeping) -> Executed {
        for (index, step) in plan.steps.iter().enumerate() {
            let outcomes = join_all(step.actions.iter().map(|a| self.perform(a, book))).await;
            let mut first_error = None;
            let mut failed_creates = 0;
            let mut stale = false;
            for (action, outcome) in step.actions.iter().zip(outcomes) {
                match outcome {
                    Outcome::Ok => {}
                    Outcome::Stale => stale = true,
                    Outcome::Failed(error) => {
                        if matches!(action, Action::CreatePod { .. }) {
                            failed_creates += 1;
                        }
                        first_error.get_or_insert(error);
                    }
                }
            }
            if let Some(error) = first_error {
                let claim = step
                    .actions
                    .iter()
                    .any(|a| matches!(a, Action::RecheckOwner { .. } | Action::PatchPodOwnerRefs { .. }));
                let manage =
                    step.actions.iter().any(|a| matches!(a, Action::CreatePod { .. } | Action::DeletePod { .. }));
                if manage {
                    if let Some(owner) = step.actions.iter().find_map(created_by) {
                        book.creations_skipped(&owner, failed_creates + plan.creations_after(index));
                    }
                    return Executed::ManageFailed(error);
                }
                return if claim { Executed::ClaimFailed(error) } else { Executed::Failed(error) };
            }
            if stale {
                return Executed::Stale;
            }
        }
        Executed::Done(plan.requeue_after)
    }

    /// Performs one action.
    async fn perform(&self, action: &Action, book: &dyn Bookkeeping) -> Outcome {
        match action {
            Action::RecheckOwner { owner } => self.recheck_owner(owner).await,
            Action::ExpectCreations { key, count } => {
                book.expect_creations(key, *count);
                Outcome::Ok
            }
            Action::ExpectDeletions { key, pod_keys } => {
                book.expect_deletions(key, pod_keys);
                Outcome::Ok
            }
            Action::CreatePod { namespace, pod, owner } => self.create_pod(namespace, pod, owner, book).await,
            Action::DeletePod { namespace, name, uid, owner } => {
                self.delete_pod(namespace, name, uid, owner, book).await
            }
            Action::PatchPodOwnerRefs { namespace, name, uid, patch } => {
                self.patch_owner_refs(namespace, name, uid, patch).await
            }
            Action::UpdateReplicaSetStatus { namespace, name, resource_version, status } => {
                self.update_replica_set_status(namespace, name, resource_version.as_deref(), status).await
            }
            Action::Event(event) => {
                self.record(event);
                Outcome::Ok
            }
        }
    }

    /// Upstream `RecheckDeletionTimestamp`: the owner read live must still
    /// be the same object, not being deleted.
    async fn recheck_owner(&self, owner: &ObjectRef) -> Outcome {
        let api: Api<ReplicaSet> = Api::namespaced(self.client.clone(), owner.namespace.as_deref().unwrap_or(""));
        match api.get(&owner.name).await {
            Ok(fresh) if fresh.metadata.uid.as_deref() != Some(owner.uid.as_str()) => Outcome::Failed(format!(
                "original {} {} is gone: got uid {:?}, wanted {}",
                owner.kind, owner.name, fresh.metadata.uid, owner.uid
            )),
            Ok(fresh) if fresh.metadata.deletion_timestamp.is_some() => {
                Outcome::Failed(format!("{} {} has just been deleted", owner.kind, owner.name))
            }
            Ok(_) => Outcome::Ok,
            Err(error) => Outcome::Failed(format!("can't recheck DeletionTimestamp: {error}")),
        }
    }

    async fn create_pod(&self, namespace: &str, pod: &Pod, owner: &ObjectRef, book: &dyn Bookkeeping) -> Outcome {
        let api: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        match api.create(&PostParams::default(), pod).await {
            Ok(created) => {
                let name = created.metadata.name.clone().unwrap_or_default();
                let rv = created.metadata.resource_version.as_deref().and_then(|rv| rv.parse().ok());
                book.creation_succeeded(&owner_key(owner), &format!("{namespace}/{name}"), rv);
                self.record(&pod_control::successful_create(owner, &name));
                Outcome::Ok
            }
            // Upstream: any creation fails in a terminating namespace;
            // nothing to do and nothing to report.
            Err(error) if namespace_terminating(&error) => Outcome::Ok,
            Err(error) => {
                let message = error_message(&error);
                self.record(&pod_control::failed_create(owner, &message));
                Outcome::Failed(message)
            }
        }
    }

    async fn delete_pod(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
        owner: &ObjectRef,
        book: &dyn Bookkeeping,
    ) -> Outcome {
        let api: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        let params = DeleteParams {
            preconditions: Some(Preconditions { uid: Some(uid.to_owned()), resource_version: None }),
            ..DeleteParams::default()
        };
        match api.delete(name, &params).await {
            Ok(_) => {
                self.record(&pod_control::successful_delete(owner, name));
                Outcome::Ok
            }
            Err(error) if code(&error) == Some(404) => Outcome::Ok,
            Err(error) => {
                let message = error_message(&error);
                book.deletion_failed(&owner_key(owner), &format!("{namespace}/{name}"));
                self.record(&pod_control::failed_delete(owner, &message));
                Outcome::Failed(message)
            }
        }
    }

    async fn patch_owner_refs(&self, namespace: &str, name: &str, uid: &str, patch: &OwnerRefPatch) -> Outcome {
        let api: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        let result = api.patch(name, &PatchParams::default(), &Patch::Strategic(patch.body(uid))).await;
        match (result, patch) {
            (Ok(_), _) => Outcome::Ok,
            (Err(error), OwnerRefPatch::Adopt(_)) if code(&error) == Some(404) => Outcome::Stale,
            (Err(error), OwnerRefPatch::Release { .. }) if matches!(code(&error), Some(404 | 422)) => Outcome::Ok,
            (Err(error), _) => Outcome::Failed(error_message(&error)),
        }
    }

    /// Writes the status on the object as cached (at `resource_version`);
    /// on a failure re-reads it once and retries (upstream
    /// `statusUpdateRetries = 1`).
    async fn update_replica_set_status(
        &self,
        namespace: &str,
        name: &str,
        resource_version: Option<&str>,
        status: &k8s_openapi::api::apps::v1::ReplicaSetStatus,
    ) -> Outcome {
        let api: Api<ReplicaSet> = Api::namespaced(self.client.clone(), namespace);
        let cached = self.replica_sets.as_ref().and_then(|s| s.get_namespaced(Some(namespace), name));
        let mut body = match cached {
            Some(rs) => (*rs).clone(),
            None => ReplicaSet {
                metadata: kube::api::ObjectMeta {
                    name: Some(name.to_owned()),
                    namespace: Some(namespace.to_owned()),
                    ..Default::default()
                },
                ..Default::default()
            },
        };
        body.metadata.resource_version = resource_version.map(str::to_owned);
        body.status = Some(status.clone());
        let mut last = String::new();
        for attempt in 0..2 {
            if attempt > 0 {
                match api.get(name).await {
                    Ok(fresh) => body.metadata.resource_version = fresh.metadata.resource_version,
                    Err(error) => return Outcome::Failed(error_message(&error)),
                }
            }
            match api.replace_status(name, &PostParams::default(), &body).await {
                Ok(_) => return Outcome::Ok,
                Err(error) => last = error_message(&error),
            }
        }
        Outcome::Failed(last)
    }

    /// Records `event` through the recorder.
    pub fn record(&self, event: &Event) {
        self.recorder.event(&object_reference(&event.regarding), event.type_, &event.reason, event.message.clone());
    }
}

/// The queue key of the owner a create or delete is for.
fn created_by(action: &Action) -> Option<String> {
    match action {
        Action::CreatePod { owner, .. } => Some(owner_key(owner)),
        _ => None,
    }
}

/// `namespace/name` of an owner.
fn owner_key(owner: &ObjectRef) -> String {
    format!("{}/{}", owner.namespace.as_deref().unwrap_or(""), owner.name)
}

/// The `core/v1` reference events are recorded on.
fn object_reference(r: &ObjectRef) -> ObjectReference {
    ObjectReference {
        api_version: Some(r.api_version.clone()),
        kind: Some(r.kind.clone()),
        namespace: r.namespace.clone(),
        name: Some(r.name.clone()),
        uid: Some(r.uid.clone()),
        ..ObjectReference::default()
    }
}

/// The HTTP code of an API error answer.
fn code(error: &kube::Error) -> Option<u16> {
    match error {
        kube::Error::Api(status) => Some(status.code),
        _ => None,
    }
}

/// Upstream `HasStatusCause(err, NamespaceTerminatingCause)`.
fn namespace_terminating(error: &kube::Error) -> bool {
    match error {
        kube::Error::Api(status) => {
            status.details.as_ref().is_some_and(|d| d.causes.iter().any(|c| c.reason == "NamespaceTerminating"))
        }
        _ => false,
    }
}

/// The message an event or status condition shows for `error`.
fn error_message(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) if !status.message.is_empty() => status.message.clone(),
        other => other.to_string(),
    }
}
