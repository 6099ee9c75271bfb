//! The binder's syncs: the core's [`sync_claim`] and [`sync_volume`] run
//! against a [`Snapshot`] of the caches, their requests performed one at a
//! time, each answer appended and the sync replayed (the protocol of
//! `kcm_controllers::pvbinder::cx`).
//!
//! Upstream keeps caches of its own, updated with every object it writes,
//! so that a sync right after a write does not act on the informer's older
//! copy. Here the objects written last are kept beside the informers' and
//! a read takes whichever has the newer resourceVersion; a written copy is
//! dropped once the informer has caught up.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use k8s_openapi::Metadata;
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::storage::v1::StorageClass;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcm_controllers::common::ephemeral::POD_PVC_INDEX;
use kcm_controllers::pvbinder::{Cx, Flow, Reply, Request, Settings, Step, View, claim_key, sync_claim, sync_volume};
use kcm_objects::Pod;
use kcm_runtime::events::EventRecorder;
use kcm_runtime::informer::{SharedInformer, Store};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kcm_runtime::workqueue::WorkQueue;
use kube::api::{Api, PostParams};
use kube::{Client, Resource};

use crate::drivers::execute::object_reference;

/// Requests one sync may make before it is taken for a loop.
const MAX_REQUESTS: usize = 64;

/// What both queues' syncs share.
pub(super) struct Shared {
    volumes: Store<PersistentVolume>,
    claims: Store<PersistentVolumeClaim>,
    classes: Store<StorageClass>,
    pods: Store<Pod>,
    /// The volumes and claims the controller wrote last, by key.
    written_volumes: Written<PersistentVolume>,
    written_claims: Written<PersistentVolumeClaim>,
    settings: Settings,
    outlets: Outlets,
}

/// Where the syncs' requests go.
pub(super) struct Outlets {
    /// The controller's own client, for its reads and writes.
    pub(super) client: Client,
    /// Its events.
    pub(super) recorder: EventRecorder,
    /// The claims' queue, for a claim a volume's sync hands on.
    pub(super) claim_queue: WorkQueue<String>,
    /// Its metrics, when registered.
    pub(super) metrics: Option<super::PvBinderMetrics>,
}

/// Objects the controller wrote, by key.
type Written<K> = Mutex<HashMap<String, Arc<K>>>;

/// The claims' sync.
pub(super) struct ClaimSyncer(pub(super) Arc<Shared>);

/// The volumes' sync.
pub(super) struct VolumeSyncer(pub(super) Arc<Shared>);

// === impl Shared ===

impl Shared {
    pub(super) fn new(
        volumes: &SharedInformer<PersistentVolume>,
        claims: &SharedInformer<PersistentVolumeClaim>,
        classes: &SharedInformer<StorageClass>,
        pods: &SharedInformer<Pod>,
        settings: Settings,
        outlets: Outlets,
    ) -> Self {
        Self {
            volumes: volumes.store(),
            claims: claims.store(),
            classes: classes.store(),
            pods: pods.store(),
            written_volumes: Mutex::default(),
            written_claims: Mutex::default(),
            settings,
            outlets,
        }
    }

    fn volume(&self, name: &str) -> Option<Arc<PersistentVolume>> {
        freshest(self.volumes.get(name), &self.written_volumes, name)
    }

    fn claim(&self, key: &str) -> Option<Arc<PersistentVolumeClaim>> {
        freshest(self.claims.get(key), &self.written_claims, key)
    }

    /// Runs one sync to its end, performing its requests.
    async fn run(
        &self,
        what: &str,
        key: &str,
        sync: impl Fn(&Snapshot<'_>, &mut Cx<'_>) -> Step<()>,
    ) -> Result<Next, SyncError> {
        let snapshot = Snapshot::new(self);
        let mut replies = Vec::new();
        loop {
            match sync(&snapshot, &mut Cx::new(&replies)) {
                Ok(()) => return Ok(Next::Done),
                Err(Flow::Fail(message)) => {
                    tracing::debug!(what, key, error = %message, "Could not sync");
                    return Err(message.into());
                }
                Err(Flow::Need(_)) if replies.len() >= MAX_REQUESTS => {
                    return Err(format!("the sync of {what} {key} made more than {MAX_REQUESTS} requests").into());
                }
                Err(Flow::Need(request)) => replies.push(self.perform(*request).await),
            }
        }
    }

    /// Performs one request and answers it.
    async fn perform(&self, request: Request) -> Reply {
        let volumes: Api<PersistentVolume> = Api::all(self.outlets.client.clone());
        let params = PostParams::default();
        match request {
            Request::UpdateVolume(volume) => {
                let name = volume.metadata.name.clone().unwrap_or_default();
                self.wrote_volume(volumes.replace(&name, &params, &volume).await, "Updating PersistentVolume")
            }
            Request::UpdateVolumeStatus(volume) => {
                let name = volume.metadata.name.clone().unwrap_or_default();
                let phase = volume.status.as_ref().and_then(|s| s.phase.clone()).unwrap_or_default();
                let reply = self.wrote_volume(
                    volumes.replace_status(&name, &params, &*volume).await,
                    "Updating PersistentVolume status",
                );
                if matches!(reply, Reply::Volume(_)) {
                    tracing::debug!(volumeName = name, phase, "Volume entered phase");
                }
                reply
            }
            Request::UpdateClaim(claim) => {
                let (api, name) = self.claim_api(&claim);
                self.wrote_claim(api.replace(&name, &params, &claim).await, "Updating PersistentVolumeClaim")
            }
            Request::UpdateClaimStatus(claim) => {
                let (api, name) = self.claim_api(&claim);
                let phase = claim.status.as_ref().and_then(|s| s.phase.clone()).unwrap_or_default();
                let reply = self.wrote_claim(
                    api.replace_status(&name, &params, &*claim).await,
                    "Updating PersistentVolumeClaim status",
                );
                if matches!(reply, Reply::Claim(_)) {
                    tracing::debug!(PVC = claim_key(&claim), phase, "Claim entered phase");
                }
                reply
            }
            Request::GetClaim { namespace, name } => {
                let api: Api<PersistentVolumeClaim> = Api::namespaced(self.outlets.client.clone(), &namespace);
                read(api.get_opt(&name).await, |c| Reply::Claim(Box::new(c)))
            }
            Request::GetVolume(name) => read(volumes.get_opt(&name).await, |v| Reply::Volume(Box::new(v))),
            Request::Event(event) => {
                self.outlets.recorder.event(
                    &object_reference(&event.regarding),
                    event.type_,
                    &event.reason,
                    event.message,
                );
                Reply::Done
            }
            Request::QueueClaim(key) => {
                self.outlets.claim_queue.add(key);
                Reply::Done
            }
            Request::Metric(metric) => {
                if let Some(metrics) = &self.outlets.metrics {
                    metrics.record(metric);
                }
                Reply::Done
            }
        }
    }

    fn claim_api(&self, claim: &PersistentVolumeClaim) -> (Api<PersistentVolumeClaim>, String) {
        let namespace = claim.metadata.namespace.as_deref().unwrap_or_default();
        (Api::namespaced(self.outlets.client.clone(), namespace), claim.metadata.name.clone().unwrap_or_default())
    }

    fn wrote_volume(&self, result: kube::Result<PersistentVolume>, action: &str) -> Reply {
        match result {
            Ok(volume) => {
                let volume = Arc::new(volume);
                remember(&self.written_volumes, &volume);
                Reply::Volume(Box::new((*volume).clone()))
            }
            Err(e) => failed(action, e),
        }
    }

    fn wrote_claim(&self, result: kube::Result<PersistentVolumeClaim>, action: &str) -> Reply {
        match result {
            Ok(claim) => {
                let claim = Arc::new(claim);
                remember(&self.written_claims, &claim);
                Reply::Claim(Box::new((*claim).clone()))
            }
            Err(e) => failed(action, e),
        }
    }
}

/// A failed write's answer, logged as upstream logs it (a conflict only
/// at debug level: the next sync starts from the newer object).
fn failed(action: &str, error: kube::Error) -> Reply {
    match &error {
        kube::Error::Api(e) if e.code == 409 => tracing::debug!(%error, "{action} failed"),
        _ => tracing::info!(%error, "{action} failed"),
    }
    Reply::Failed(error.to_string())
}

/// A read's answer.
fn read<K>(result: kube::Result<Option<K>>, found: impl FnOnce(K) -> Reply) -> Reply {
    match result {
        Ok(Some(object)) => found(object),
        Ok(None) => Reply::NotFound,
        Err(e) => Reply::Failed(e.to_string()),
    }
}

/// The resourceVersion as a number (0 when absent or not a number).
fn version<K: Metadata<Ty = ObjectMeta>>(object: &K) -> u64 {
    object.metadata().resource_version.as_deref().and_then(|v| v.parse().ok()).unwrap_or(0)
}

fn remember<K: Metadata<Ty = ObjectMeta> + Resource>(written: &Written<K>, object: &Arc<K>) {
    let meta = object.metadata();
    let key = match meta.namespace.as_deref() {
        Some(namespace) if !namespace.is_empty() => format!("{namespace}/{}", meta.name.as_deref().unwrap_or_default()),
        _ => meta.name.clone().unwrap_or_default(),
    };
    written.lock().unwrap_or_else(PoisonError::into_inner).insert(key, object.clone());
}

/// The newer of the cached object and the one last written; the written
/// one is forgotten once the cache holds it or a newer one, or the object
/// is gone from the cache.
fn freshest<K: Metadata<Ty = ObjectMeta>>(cached: Option<Arc<K>>, written: &Written<K>, key: &str) -> Option<Arc<K>> {
    let mut written = written.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(cached) = cached else {
        written.remove(key);
        return None;
    };
    match written.get(key) {
        Some(ours) if version(&**ours) > version(&*cached) => Some(ours.clone()),
        Some(_) => {
            written.remove(key);
            Some(cached)
        }
        None => Some(cached),
    }
}

// === impl Snapshot ===

/// The caches as one sync reads them: each read made once and kept, so
/// that the sync's replays read the same.
pub(super) struct Snapshot<'a> {
    shared: &'a Shared,
    volumes: OnceLock<Vec<Arc<PersistentVolume>>>,
    classes: OnceLock<Vec<Arc<StorageClass>>>,
    volume: Memo<PersistentVolume>,
    claim: Memo<PersistentVolumeClaim>,
    pods: Mutex<HashMap<String, Vec<Arc<Pod>>>>,
}

type Memo<K> = Mutex<HashMap<String, Option<Arc<K>>>>;

impl<'a> Snapshot<'a> {
    fn new(shared: &'a Shared) -> Self {
        Self {
            shared,
            volumes: OnceLock::new(),
            classes: OnceLock::new(),
            volume: Mutex::default(),
            claim: Mutex::default(),
            pods: Mutex::default(),
        }
    }
}

fn memo<K>(memo: &Memo<K>, key: &str, read: impl FnOnce() -> Option<Arc<K>>) -> Option<Arc<K>> {
    memo.lock().unwrap_or_else(PoisonError::into_inner).entry(key.to_owned()).or_insert_with(read).clone()
}

impl View for Snapshot<'_> {
    fn volumes(&self) -> Vec<Arc<PersistentVolume>> {
        let shared = self.shared;
        let all = || {
            shared
                .volumes
                .list()
                .iter()
                .filter_map(|v| shared.volume(v.metadata.name.as_deref().unwrap_or_default()))
                .collect()
        };
        self.volumes.get_or_init(all).clone()
    }

    fn volume(&self, name: &str) -> Option<Arc<PersistentVolume>> {
        memo(&self.volume, name, || self.shared.volume(name))
    }

    fn claim(&self, key: &str) -> Option<Arc<PersistentVolumeClaim>> {
        memo(&self.claim, key, || self.shared.claim(key))
    }

    fn class(&self, name: &str) -> Option<Arc<StorageClass>> {
        self.classes().into_iter().find(|c| c.metadata.name.as_deref() == Some(name))
    }

    fn classes(&self) -> Vec<Arc<StorageClass>> {
        self.classes.get_or_init(|| self.shared.classes.list()).clone()
    }

    fn pods_of_claim(&self, key: &str) -> Vec<Arc<Pod>> {
        let mut pods = self.pods.lock().unwrap_or_else(PoisonError::into_inner);
        let read = || self.shared.pods.by_index(POD_PVC_INDEX, key).unwrap_or_default();
        pods.entry(key.to_owned()).or_insert_with(read).clone()
    }
}

// === impl Reconcile ===

impl Reconcile for ClaimSyncer {
    /// Upstream `syncClaimByKey` and `updateClaim`.
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let shared = &*self.0;
        let Some(claim) = shared.claim(key) else {
            tracing::trace!(claimKey = key, "Deletion of claim was already processed");
            return Ok(Next::Done);
        };
        let settings = shared.settings;
        shared.run("claim", key, |view, cx| sync_claim(view, &claim, settings, cx)).await
    }
}

impl Reconcile for VolumeSyncer {
    /// Upstream `syncVolumeByKey` and `updateVolume`.
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let shared = &*self.0;
        let Some(volume) = shared.volume(key) else {
            tracing::trace!(volumeKey = key, "Deletion of volume was already processed");
            return Ok(Next::Done);
        };
        let settings = shared.settings;
        shared.run("volume", key, |view, cx| sync_volume(view, &volume, settings, cx)).await
    }
}
