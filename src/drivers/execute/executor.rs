//! [`Executor`], what every action is performed with (the client, the
//! recorder, the cached ReplicaSets) and the events it records; and what the actions of one sync share: the
//! resourceVersions their writes returned ([`Versions`]).

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Mutex, PoisonError};

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcm_controllers::plan::{Event, ObjectRef};
use kcm_objects::ReplicaSet;
use kube::api::{DeleteParams, Preconditions};
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;

use kcm_runtime::events::EventRecorder;
use kcm_runtime::informer::Store;

use crate::drivers::api_errors::code;

/// resourceVersions returned by the writes of one sync, by object
/// (`kind/namespace/name`).
#[derive(Default)]
pub struct Versions(Mutex<HashMap<String, String>>);

impl Versions {
    fn key(kind: &str, meta: &ObjectMeta) -> String {
        format!("{kind}/{}/{}", meta.namespace.as_deref().unwrap_or(""), meta.name.as_deref().unwrap_or(""))
    }

    /// The version a write of `meta` in this run returned, else its own.
    pub(super) fn current(&self, kind: &str, meta: &ObjectMeta) -> Option<String> {
        let written = self.0.lock().unwrap_or_else(PoisonError::into_inner).get(&Self::key(kind, meta)).cloned();
        written.or_else(|| meta.resource_version.clone())
    }

    pub(super) fn record(&self, kind: &str, meta: &ObjectMeta) {
        if let Some(rv) = &meta.resource_version {
            self.0.lock().unwrap_or_else(PoisonError::into_inner).insert(Self::key(kind, meta), rv.clone());
        }
    }
}

/// Performs plans for one controller.
#[derive(Clone)]
pub struct Executor {
    /// Every write goes through it.
    pub(crate) client: Client,
    /// Events are recorded as the controller's component.
    pub(super) recorder: EventRecorder,
    /// The cached ReplicaSets a status update is written on (the API
    /// server keeps the spec; the whole object is sent as upstream does).
    pub(super) replica_sets: Option<Store<ReplicaSet>>,
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

    /// Records `event` through the recorder.
    pub fn record(&self, event: &Event) {
        self.recorder.event(&object_reference(&event.regarding), event.type_, &event.reason, event.message.clone());
    }
}

impl Executor {
    /// Deletes `name` in `namespace` with its `uid` as precondition:
    /// `Ok(true)` once deleted, `Ok(false)` when it was already gone.
    pub(crate) async fn delete_with_uid<K>(&self, namespace: &str, name: &str, uid: &str) -> Result<bool, kube::Error>
    where
        K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope> + Clone + Debug + DeserializeOwned,
    {
        let api: Api<K> = Api::namespaced(self.client.clone(), namespace);
        let params = DeleteParams {
            preconditions: Some(Preconditions { uid: Some(uid.to_owned()), resource_version: None }),
            ..DeleteParams::default()
        };
        match api.delete(name, &params).await {
            Ok(_) => Ok(true),
            Err(error) if code(&error) == Some(404) => Ok(false),
            Err(error) => Err(error),
        }
    }
}

/// The `core/v1` reference events are recorded on.
pub fn object_reference(r: &ObjectRef) -> ObjectReference {
    ObjectReference {
        api_version: Some(r.api_version.clone()),
        kind: Some(r.kind.clone()),
        namespace: r.namespace.clone(),
        name: Some(r.name.clone()),
        uid: Some(r.uid.clone()),
        ..ObjectReference::default()
    }
}
