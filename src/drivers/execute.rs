//! The plan executor: performs a [`Plan`]'s writes against the API server,
//! in order, following the contract written in `kcm_controllers::plan` and
//! in each controller core's module doc.
//!
//! It owns the I/O of every [`Action`] (pod and ReplicaSet creates, deletes
//! with a uid precondition, ownerReference patches, object and status
//! updates, the live re-check before adoption, events) and error
//! classification (NotFound, Invalid, AlreadyExists, terminating namespace).
//! Within one plan, an object written twice is sent the second time with the
//! resourceVersion the first write returned. What a controller remembers between syncs (the
//! ReplicaSet controller's expectations) stays with the controller: the
//! executor reports through [`Bookkeeping`].

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use futures::future::join_all;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{ObjectReference, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcm_controllers::common::pod_control;
use kcm_controllers::deployment::{CreateFailure, is_same_replica_set};
use kcm_controllers::plan::{Action, Event, ObjectRef, OwnerRefPatch, Plan};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use kube::{Api, Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;

use kcm_runtime::events::{EventRecorder, EventType};
use kcm_runtime::informer::Store;
use kcm_runtime::runner::{Next, SyncError};

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

/// [`Bookkeeping`] for a controller that remembers nothing about its
/// writes (its plans hold no pod creates or deletes).
pub struct NoBookkeeping;

impl Bookkeeping for NoBookkeeping {
    fn expect_creations(&self, _key: &str, _count: usize) {}
    fn expect_deletions(&self, _key: &str, _pod_keys: &[String]) {}
    fn creation_succeeded(&self, _key: &str, _pod_key: &str, _resource_version: Option<u64>) {}
    fn creations_skipped(&self, _key: &str, _count: usize) {}
    fn deletion_failed(&self, _key: &str, _pod_key: &str) {}
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
    /// Creating a ReplicaSet failed: the caller plans the Deployment's
    /// `after_create_failure` and requeues with rate limiting.
    CreateReplicaSetFailed(CreateFailure),
    /// A create was refused because the namespace is terminating: the plan
    /// stopped there, and there is nothing to retry (upstream forgets the
    /// key on a `NamespaceTerminating` cause).
    Halted,
}

impl Executed {
    /// The worker's next step for a plan that ran so, when the controller
    /// has nothing of its own to do about it: success honours the plan's
    /// requeue, a stale snapshot syncs again at once, a halted plan waits
    /// for a change, and a failure is retried with backoff.
    ///
    /// # Errors
    /// The first failed step's error, for the worker's backoff.
    pub fn into_next(self) -> Result<Next, SyncError> {
        match self {
            Executed::Done(after) => Ok(after.map_or(Next::Done, Next::After)),
            Executed::Stale => Ok(Next::After(Duration::ZERO)),
            Executed::Halted => Ok(Next::Done),
            Executed::ClaimFailed(error) | Executed::ManageFailed(error) | Executed::Failed(error) => Err(error.into()),
            Executed::CreateReplicaSetFailed(failure) => Err(failure.to_string().into()),
        }
    }
}

/// The outcome of one action.
enum Outcome {
    /// Done, or failed in a way the action tolerates.
    Ok,
    /// The pod to adopt is gone.
    Stale,
    /// Failed.
    Failed(String),
    /// A ReplicaSet create failed this way.
    CreateFailed(CreateFailure),
    /// Stop here without an error.
    Halt,
}

/// resourceVersions returned by the writes of one plan run, by object
/// (`kind/namespace/name`).
#[derive(Default)]
struct Versions(Mutex<HashMap<String, String>>);

impl Versions {
    fn key(kind: &str, meta: &ObjectMeta) -> String {
        format!("{kind}/{}/{}", meta.namespace.as_deref().unwrap_or(""), meta.name.as_deref().unwrap_or(""))
    }

    /// The version a write of `meta` in this run returned, else its own.
    fn current(&self, kind: &str, meta: &ObjectMeta) -> Option<String> {
        let written = self.0.lock().unwrap_or_else(PoisonError::into_inner).get(&Self::key(kind, meta)).cloned();
        written.or_else(|| meta.resource_version.clone())
    }

    fn record(&self, kind: &str, meta: &ObjectMeta) {
        if let Some(rv) = &meta.resource_version {
            self.0.lock().unwrap_or_else(PoisonError::into_inner).insert(Self::key(kind, meta), rv.clone());
        }
    }
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
        let versions = Versions::default();
        for (index, step) in plan.steps.iter().enumerate() {
            let outcomes = join_all(step.actions.iter().map(|a| self.perform(a, book, &versions))).await;
            let mut first_error = None;
            let mut failed_creates = 0;
            let mut stale = false;
            for (action, outcome) in step.actions.iter().zip(outcomes) {
                match outcome {
                    Outcome::Ok => {}
                    Outcome::Stale => stale = true,
                    Outcome::Halt => return Executed::Halted,
                    Outcome::CreateFailed(failure) => return Executed::CreateReplicaSetFailed(failure),
                    Outcome::Failed(error) => {
                        if matches!(action, Action::CreatePod { .. }) {
                            failed_creates += 1;
                        }
                        first_error.get_or_insert(error);
                    }
                }
            }
            if let Some(error) = first_error {
                let claim = step.actions.iter().any(|a| {
                    matches!(
                        a,
                        Action::RecheckOwner { .. }
                            | Action::PatchPodOwnerRefs { .. }
                            | Action::PatchReplicaSetOwnerRefs { .. }
                    )
                });
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
    async fn perform(&self, action: &Action, book: &dyn Bookkeeping, versions: &Versions) -> Outcome {
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
                self.patch_owner_refs::<Pod>(namespace, name, uid, patch, versions).await
            }
            Action::PatchReplicaSetOwnerRefs { namespace, name, uid, patch } => {
                self.patch_owner_refs::<ReplicaSet>(namespace, name, uid, patch, versions).await
            }
            Action::CreateReplicaSet { namespace, replica_set } => {
                self.create_replica_set(namespace, replica_set, versions).await
            }
            Action::UpdateReplicaSet { replica_set } => self.replace(&**replica_set, false, versions).await,
            Action::DeleteReplicaSet { namespace, name, uid } => self.delete_replica_set(namespace, name, uid).await,
            Action::UpdateDeploymentStatus { deployment } => self.replace(&**deployment, true, versions).await,
            Action::UpdateDeployment { deployment } => self.replace(&**deployment, false, versions).await,
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
        let namespace = owner.namespace.as_deref().unwrap_or("");
        let fresh = match owner.kind.as_str() {
            "Deployment" => {
                Api::<Deployment>::namespaced(self.client.clone(), namespace).get(&owner.name).await.map(|o| o.metadata)
            }
            _ => {
                Api::<ReplicaSet>::namespaced(self.client.clone(), namespace).get(&owner.name).await.map(|o| o.metadata)
            }
        };
        match fresh {
            Ok(fresh) if fresh.uid.as_deref() != Some(owner.uid.as_str()) => Outcome::Failed(format!(
                "original {} {} is gone: got uid {:?}, wanted {}",
                owner.kind, owner.name, fresh.uid, owner.uid
            )),
            Ok(fresh) if fresh.deletion_timestamp.is_some() => {
                Outcome::Failed(format!("{} {} has just been deleted", owner.kind, owner.name))
            }
            Ok(_) => Outcome::Ok,
            Err(error) => Outcome::Failed(format!("can't recheck DeletionTimestamp: {error}")),
        }
    }

    /// Creates a Deployment's new ReplicaSet; see
    /// [`Action::CreateReplicaSet`] for AlreadyExists.
    async fn create_replica_set(&self, namespace: &str, rs: &ReplicaSet, versions: &Versions) -> Outcome {
        let api: Api<ReplicaSet> = Api::namespaced(self.client.clone(), namespace);
        let name = rs.metadata.name.clone().unwrap_or_default();
        match api.create(&PostParams::default(), rs).await {
            Ok(created) => {
                versions.record("ReplicaSet", &created.metadata);
                Outcome::Ok
            }
            Err(error) if namespace_terminating(&error) => Outcome::Halt,
            Err(error) if reason(&error) == Some("AlreadyExists") => match api.get(&name).await {
                Ok(existing) if is_same_replica_set(&existing, rs) => Outcome::Failed(format!(
                    "replica set {name} already exists and is this deployment's; waiting for the cache"
                )),
                Ok(_) => Outcome::CreateFailed(CreateFailure::Collision),
                Err(error) => Outcome::Failed(error_message(&error)),
            },
            Err(error) => {
                Outcome::CreateFailed(CreateFailure::Error { replica_set: name, message: error_message(&error) })
            }
        }
    }

    /// Replaces `object` (or, with `status`, its status subresource), at the
    /// latest version this run knows of.
    async fn replace<K>(&self, object: &K, status: bool, versions: &Versions) -> Outcome
    where
        K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
            + Clone
            + Debug
            + Serialize
            + DeserializeOwned,
    {
        let kind = K::kind(&());
        let meta = object.meta();
        let mut body = object.clone();
        body.meta_mut().resource_version = versions.current(&kind, meta);
        let api: Api<K> = Api::namespaced(self.client.clone(), meta.namespace.as_deref().unwrap_or(""));
        let name = meta.name.clone().unwrap_or_default();
        let result = if status {
            api.replace_status(&name, &PostParams::default(), &body).await
        } else {
            api.replace(&name, &PostParams::default(), &body).await
        };
        match result {
            Ok(written) => {
                versions.record(&kind, written.meta());
                Outcome::Ok
            }
            Err(error) => Outcome::Failed(error_message(&error)),
        }
    }

    async fn delete_replica_set(&self, namespace: &str, name: &str, uid: &str) -> Outcome {
        let api: Api<ReplicaSet> = Api::namespaced(self.client.clone(), namespace);
        let params = DeleteParams {
            preconditions: Some(Preconditions { uid: Some(uid.to_owned()), resource_version: None }),
            ..DeleteParams::default()
        };
        match api.delete(name, &params).await {
            Ok(_) => Outcome::Ok,
            Err(error) if code(&error) == Some(404) => Outcome::Ok,
            Err(error) => Outcome::Failed(error_message(&error)),
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

    async fn patch_owner_refs<K>(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
        patch: &OwnerRefPatch,
        versions: &Versions,
    ) -> Outcome
    where
        K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope> + Clone + Debug + DeserializeOwned,
    {
        let api: Api<K> = Api::namespaced(self.client.clone(), namespace);
        let result = api.patch(name, &PatchParams::default(), &Patch::Strategic(patch.body(uid))).await;
        match (result, patch) {
            (Ok(patched), _) => {
                versions.record(&K::kind(&()), patched.meta());
                Outcome::Ok
            }
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
                // The API server takes metadata from a status write too: send
                // the fresh object, so that nothing another writer changed
                // meanwhile (annotations, ownerReferences) is undone.
                match api.get(name).await {
                    Ok(fresh) => body = ReplicaSet { status: Some(status.clone()), ..fresh },
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
        self.recorder.event(
            &object_reference(&event.regarding),
            event_type(event.type_),
            &event.reason,
            event.message.clone(),
        );
    }
}

/// The recorder's spelling of a plan's event type.
pub fn event_type(type_: kcm_controllers::plan::EventType) -> EventType {
    match type_ {
        kcm_controllers::plan::EventType::Normal => EventType::Normal,
        kcm_controllers::plan::EventType::Warning => EventType::Warning,
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

/// The `reason` of an API error answer (`AlreadyExists`, `Conflict`, ...).
fn reason(error: &kube::Error) -> Option<&str> {
    match error {
        kube::Error::Api(status) => Some(status.reason.as_str()),
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

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::{ReplicaSetSpec, ReplicaSetStatus};
    use k8s_openapi::api::core::v1::{Container, Namespace, PodSpec, PodTemplateSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, OwnerReference};
    use kube_sim::{Sim, SimConfig};

    use super::*;

    // === utils ===

    async fn start() -> (Sim, Executor, Client) {
        let sim = Sim::start(SimConfig::default()).await.expect("sim starts");
        let client = sim.client().expect("client");
        let executor = Executor::new(client.clone(), EventRecorder::new(client.clone(), "test"));
        (sim, executor, client)
    }

    /// ReplicaSet `ns/name` with image `image`, controlled by `owner_uid`
    /// if given.
    fn replica_set(ns: &str, name: &str, image: &str, owner_uid: Option<&str>) -> ReplicaSet {
        let labels = std::collections::BTreeMap::from([("app".to_string(), "web".to_string())]);
        ReplicaSet {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(ns.into()),
                labels: Some(labels.clone()),
                owner_references: owner_uid.map(|uid| {
                    vec![OwnerReference {
                        api_version: "apps/v1".into(),
                        kind: "Deployment".into(),
                        name: "d".into(),
                        uid: uid.into(),
                        controller: Some(true),
                        block_owner_deletion: Some(true),
                    }]
                }),
                ..Default::default()
            },
            spec: Some(ReplicaSetSpec {
                replicas: Some(0),
                selector: LabelSelector { match_labels: Some(labels.clone()), ..Default::default() },
                template: Some(PodTemplateSpec {
                    metadata: Some(ObjectMeta { labels: Some(labels), ..Default::default() }),
                    spec: Some(PodSpec {
                        containers: vec![Container {
                            name: "c".into(),
                            image: Some(image.into()),
                            ..Default::default()
                        }],
                        ..Default::default()
                    }),
                }),
                ..Default::default()
            }),
            status: None,
        }
    }

    fn create(rs: &ReplicaSet) -> Plan {
        let mut plan = Plan::new();
        plan.push(Action::CreateReplicaSet {
            namespace: rs.metadata.namespace.clone().unwrap_or_default(),
            replica_set: Box::new(rs.clone()),
        });
        plan
    }

    // === tests ===

    /// AlreadyExists for a ReplicaSet that is the planned one (stale
    /// cache): the plan stops with an error to retry, no collision.
    #[tokio::test]
    async fn already_existing_own_replica_set_is_not_a_collision() {
        let (_sim, executor, client) = start().await;
        let mut rs = replica_set("default", "d-abc", "v1", Some("d-uid"));
        let api: Api<ReplicaSet> = Api::namespaced(client, "default");
        let created = api.create(&PostParams::default(), &rs).await.expect("create");
        // A planned template comes from a Deployment the API server
        // defaulted the same way.
        rs.spec.as_mut().unwrap().template = created.spec.unwrap().template;
        match executor.run(&create(&rs), &NoBookkeeping).await {
            Executed::Failed(message) => assert!(message.contains("waiting for the cache"), "{message}"),
            other => panic!("{other:?}"),
        }
    }

    /// AlreadyExists for someone else's ReplicaSet, or another template: a
    /// hash collision.
    #[tokio::test]
    async fn name_taken_by_another_replica_set_is_a_collision() {
        let (_sim, executor, client) = start().await;
        let api: Api<ReplicaSet> = Api::namespaced(client, "default");
        api.create(&PostParams::default(), &replica_set("default", "orphan", "v1", None)).await.expect("create");
        api.create(&PostParams::default(), &replica_set("default", "other", "v9", Some("d-uid")))
            .await
            .expect("create");
        for name in ["orphan", "other"] {
            let planned = replica_set("default", name, "v1", Some("d-uid"));
            assert_eq!(
                executor.run(&create(&planned), &NoBookkeeping).await,
                Executed::CreateReplicaSetFailed(CreateFailure::Collision),
                "{name}"
            );
        }
    }

    /// A create refused because the namespace is terminating halts the plan
    /// without an error.
    #[tokio::test]
    async fn terminating_namespace_halts() {
        let (_sim, executor, client) = start().await;
        let namespaces: Api<Namespace> = Api::all(client);
        let ns = Namespace {
            metadata: ObjectMeta { name: Some("going".into()), ..Default::default() },
            ..Default::default()
        };
        namespaces.create(&PostParams::default(), &ns).await.expect("create namespace");
        namespaces.delete("going", &DeleteParams::default()).await.expect("delete namespace");
        let plan = create(&replica_set("going", "d-abc", "v1", Some("d-uid")));
        assert_eq!(executor.run(&plan, &NoBookkeeping).await, Executed::Halted);
    }

    /// The live re-check before adopting reads the owner's own kind and
    /// fails for a Deployment being deleted.
    #[tokio::test]
    async fn recheck_of_a_deleting_deployment_fails() {
        let (_sim, executor, client) = start().await;
        let api: Api<Deployment> = Api::namespaced(client, "default");
        let rs = replica_set("default", "d", "v1", None);
        let spec = rs.spec.unwrap();
        let d = Deployment {
            metadata: ObjectMeta {
                name: Some("d".into()),
                finalizers: Some(vec!["example.com/hold".into()]),
                ..Default::default()
            },
            spec: Some(k8s_openapi::api::apps::v1::DeploymentSpec {
                selector: spec.selector,
                template: spec.template.unwrap(),
                ..Default::default()
            }),
            status: None,
        };
        let created = api.create(&PostParams::default(), &d).await.expect("create");
        let owner = ObjectRef {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            namespace: Some("default".into()),
            name: "d".into(),
            uid: created.metadata.uid.clone().unwrap(),
        };
        let mut plan = Plan::new();
        plan.push(Action::RecheckOwner { owner: owner.clone() });
        assert_eq!(executor.run(&plan, &NoBookkeeping).await, Executed::Done(None));
        api.delete("d", &DeleteParams::default()).await.expect("delete");
        match executor.run(&plan, &NoBookkeeping).await {
            Executed::ClaimFailed(message) => assert!(message.contains("has just been deleted"), "{message}"),
            other => panic!("{other:?}"),
        }
    }

    /// A status write that conflicts is retried on the fresh object: what
    /// another writer changed meanwhile (here an annotation) is kept.
    #[tokio::test]
    async fn a_conflicting_status_write_is_retried_without_undoing_other_writes() {
        let (_sim, executor, client) = start().await;
        let api: Api<ReplicaSet> = Api::namespaced(client, "default");
        let cached =
            api.create(&PostParams::default(), &replica_set("default", "rs", "v1", None)).await.expect("create");
        let patch = serde_json::json!({"metadata": {"annotations": {"deployment.kubernetes.io/revision": "2"}}});
        api.patch("rs", &kube::api::PatchParams::default(), &kube::api::Patch::Merge(patch)).await.expect("annotated");
        let status = ReplicaSetStatus { replicas: 0, observed_generation: Some(1), ..Default::default() };
        let mut plan = Plan::new();
        plan.push(Action::UpdateReplicaSetStatus {
            namespace: "default".into(),
            name: "rs".into(),
            resource_version: cached.metadata.resource_version.clone(),
            status: Box::new(status),
        });
        assert_eq!(executor.run(&plan, &NoBookkeeping).await, Executed::Done(None));
        let now = api.get("rs").await.expect("get");
        assert_eq!(now.status.and_then(|s| s.observed_generation), Some(1));
        assert_eq!(now.metadata.annotations.unwrap_or_default()["deployment.kubernetes.io/revision"], "2");
    }

    /// Two updates of one object in a plan: the second is sent at the
    /// version the first returned (no conflict).
    #[tokio::test]
    async fn second_update_of_an_object_uses_the_fresh_version() {
        let (_sim, executor, client) = start().await;
        let api: Api<ReplicaSet> = Api::namespaced(client, "default");
        let cached =
            api.create(&PostParams::default(), &replica_set("default", "rs", "v1", None)).await.expect("create");
        let mut first = cached.clone();
        first.metadata.annotations = Some([("a".to_string(), "1".to_string())].into());
        let mut second = first.clone();
        second.spec.as_mut().unwrap().replicas = Some(3);
        let mut plan = Plan::new();
        plan.push(Action::UpdateReplicaSet { replica_set: Box::new(first) });
        plan.push(Action::UpdateReplicaSet { replica_set: Box::new(second) });
        assert_eq!(executor.run(&plan, &NoBookkeeping).await, Executed::Done(None));
        let now = api.get("rs").await.expect("get");
        assert_eq!(now.spec.unwrap().replicas, Some(3));
        assert_eq!(now.metadata.annotations.unwrap()["a"], "1");
        // An adoption patch counts as a write too (the planner's copy
        // carries the new reference).
        let owner = OwnerReference {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            name: "d".into(),
            uid: "d-uid".into(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        };
        let mut adopted = api.get("rs").await.expect("get");
        adopted.spec.as_mut().unwrap().replicas = Some(4);
        adopted.metadata.owner_references = Some(vec![owner.clone()]);
        let mut plan = Plan::new();
        plan.push(Action::PatchReplicaSetOwnerRefs {
            namespace: "default".into(),
            name: "rs".into(),
            uid: adopted.metadata.uid.clone().unwrap(),
            patch: OwnerRefPatch::Adopt(owner),
        });
        plan.push(Action::UpdateReplicaSet { replica_set: Box::new(adopted) });
        assert_eq!(executor.run(&plan, &NoBookkeeping).await, Executed::Done(None));
        let now = api.get("rs").await.expect("get");
        assert_eq!(now.spec.unwrap().replicas, Some(4));
        assert_eq!(now.metadata.owner_references.unwrap()[0].uid, "d-uid");
        // A stale version from outside the plan still conflicts.
        let mut plan = Plan::new();
        plan.push(Action::UpdateReplicaSet { replica_set: Box::new(cached) });
        assert!(matches!(executor.run(&plan, &NoBookkeeping).await, Executed::Failed(_)));
    }
}
