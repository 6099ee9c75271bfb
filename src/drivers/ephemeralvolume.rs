//! The ephemeral volume controller's driver (upstream
//! `pkg/controller/volume/ephemeral/`; the decisions are
//! `kcm_controllers::ephemeralvolume`).
//!
//! It owns:
//! - the handlers on the shared Pod informer (an added pod that is not
//!   being deleted and has a generic ephemeral volume is queued: upstream
//!   `enqueuePod`, on adds only) and on the shared PersistentVolumeClaim
//!   informer (a deleted claim queues, as added, the cached pods the pod
//!   index gives for it: upstream `onPVCDelete`, so a pod's claim deleted
//!   behind its back is made again);
//! - the pod index `POD_PVC_INDEX` (upstream `common.PodPVCIndex`), shared
//!   with the PVC protection controller;
//! - the `ephemeral_volume` workqueue (upstream's default controller rate
//!   limiter, retried for as long as it fails, so a pod whose claim name is
//!   taken by a claim not its own is retried with growing delays) and its
//!   worker pool (`--concurrent-ephemeralvolume-syncs`);
//! - the sync (upstream `syncHandler`): the cached pod's steps, each claim
//!   created through the controller's own client
//!   (`ephemeral-volume-controller`), the first failure recorded on the pod
//!   as a `FailedBinding` warning (source `ephemeral_volume`) and retried;
//! - `ephemeral_volume_controller_create_total` and
//!   `ephemeral_volume_controller_create_failures_total`.

use std::sync::Arc;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::{ObjectReference, PersistentVolumeClaim};
use kcm_controllers::common::ephemeral::{POD_PVC_INDEX, pod_pvc_keys};
use kcm_controllers::ephemeralvolume::{self as core, FAILED_BINDING, Step};
use kcm_objects::Pod;
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::events::{EventRecorder, EventType};
use kcm_runtime::informer::{self, EventHandler, HandlerRegistration, HasSynced, SharedInformer, Store, key_of};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kcm_runtime::workqueue::{WorkQueue, default_controller_rate_limiter};
use kube::Client;
use kube::api::{Api, PostParams};
use prometheus::{IntCounter, Registry};

use super::api_errors::error_message;
use super::parts::{Identity, Parts};

/// Upstream's names: the controller, its client's user agent, its events'
/// source.
pub const IDENTITY: Identity =
    Identity { name: "ephemeral-volume-controller", client: "ephemeral-volume-controller", events: "ephemeral_volume" };

/// The workqueue's name (the `name` label of the `workqueue_*` metrics).
pub const QUEUE_NAME: &str = "ephemeral_volume";

/// Upstream's `ephemeral_volume_controller_*` counters.
#[derive(Clone, Debug)]
pub struct EphemeralVolumeMetrics {
    /// Claims the controller tried to create.
    create_total: IntCounter,
    /// Creates that failed.
    create_failures_total: IntCounter,
}

impl EphemeralVolumeMetrics {
    /// Registers `ephemeral_volume_controller_create_total` and
    /// `ephemeral_volume_controller_create_failures_total` (upstream's help
    /// text, the same for both).
    pub fn register(registry: &Registry) -> prometheus::Result<Self> {
        let help = "Number of PersistentVolumeClaim creation requests";
        let create_total = IntCounter::new("ephemeral_volume_controller_create_total", help)?;
        let create_failures_total = IntCounter::new("ephemeral_volume_controller_create_failures_total", help)?;
        registry.register(Box::new(create_total.clone()))?;
        registry.register(Box::new(create_failures_total.clone()))?;
        Ok(Self { create_total, create_failures_total })
    }
}

/// The ephemeral volume controller, ready to run once its caches sync.
pub struct EphemeralVolumeController {
    /// Keys (`namespace/name`) of pods to sync.
    queue: WorkQueue<String>,
    /// The informers it reads, for their sync state.
    pods: SharedInformer<Pod>,
    claims: SharedInformer<PersistentVolumeClaim>,
    /// The handlers' registrations.
    registrations: [HandlerRegistration; 2],
    /// What the workers run.
    syncer: Arc<Syncer>,
}

/// The per-pod sync, shared by the workers.
struct Syncer {
    pods: Store<Pod>,
    claims: Store<PersistentVolumeClaim>,
    /// The controller's own client: the creates.
    client: Client,
    /// Records the `FailedBinding` warnings.
    recorder: EventRecorder,
    /// `None` when built without a registry.
    metrics: Option<EphemeralVolumeMetrics>,
}

// === impl EphemeralVolumeController ===

impl EphemeralVolumeController {
    /// Builds the controller on the shared pod and claim informers and
    /// registers its handlers and the pod index (before the factory
    /// starts).
    ///
    /// # Errors
    /// The pod index cannot be added (the informer has started).
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(parts: Parts<'_>, metrics: Option<EphemeralVolumeMetrics>) -> Result<Self, informer::Error> {
        let Parts { factory, client, recorder, queue_metrics } = parts;
        let queue = WorkQueue::new(QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let pods = factory.informer::<Pod>();
        let claims = factory.informer::<PersistentVolumeClaim>();
        match pods.add_index(POD_PVC_INDEX, pod_pvc_keys) {
            Ok(()) | Err(informer::Error::IndexConflict(_)) => {}
            Err(e) => return Err(e),
        }
        let resync = Some(factory.default_resync());
        let registrations = [
            pods.add_handler(PodHandler { queue: queue.clone() }, resync),
            claims.add_handler(ClaimHandler { queue: queue.clone(), pods: pods.store() }, resync),
        ];
        let syncer = Arc::new(Syncer { pods: pods.store(), claims: claims.store(), client, recorder, metrics });
        Ok(Self { queue, pods, claims, registrations, syncer })
    }
}

impl Controller for EphemeralVolumeController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            tracing::info!("Starting ephemeral volume controller");
            let [pods_handler, claims_handler] = &self.registrations;
            let synced: [&(dyn HasSynced + Sync); 4] = [&self.pods, &self.claims, pods_handler, claims_handler];
            cx.run_when_synced(&synced, self.queue.clone(), self.syncer.clone(), Retries::FOREVER).await;
            tracing::info!("Shutting down ephemeral volume controller");
        })
    }
}

// === handlers ===

/// Queues a pod that may need claims (upstream `enqueuePod`).
fn enqueue_pod(queue: &WorkQueue<String>, pod: &Pod) {
    if core::should_queue(pod) {
        queue.add(pod.metadata.key());
    }
}

/// Queues added pods; updates and deletes are not handled, as upstream
/// (a resync is an update, so it queues nothing either).
struct PodHandler {
    queue: WorkQueue<String>,
}

impl EventHandler<Pod> for PodHandler {
    fn on_add(&self, pod: &Arc<Pod>) {
        enqueue_pod(&self.queue, pod);
    }

    fn on_update(&self, _old: &Arc<Pod>, _new: &Arc<Pod>) {}

    fn on_delete(&self, _pod: &Arc<Pod>) {}
}

/// Queues the pods of a deleted claim (upstream `onPVCDelete`).
struct ClaimHandler {
    queue: WorkQueue<String>,
    pods: Store<Pod>,
}

impl EventHandler<PersistentVolumeClaim> for ClaimHandler {
    fn on_add(&self, _pvc: &Arc<PersistentVolumeClaim>) {}

    fn on_update(&self, _old: &Arc<PersistentVolumeClaim>, _new: &Arc<PersistentVolumeClaim>) {}

    fn on_delete(&self, pvc: &Arc<PersistentVolumeClaim>) {
        match self.pods.by_index(POD_PVC_INDEX, &key_of(&**pvc)) {
            Ok(pods) => pods.iter().for_each(|pod| enqueue_pod(&self.queue, pod)),
            Err(err) => tracing::error!(%err, "listing pods from cache"),
        }
    }
}

// === impl Syncer ===

impl Syncer {
    /// Records the sync's failure on the pod and returns it (upstream's
    /// `FailedBinding` warning, then the error that requeues the pod).
    fn fail(&self, pod: &Pod, key: &str, volume: &str, error: &str) -> SyncError {
        self.recorder.event(
            &pod_reference(pod),
            EventType::Warning,
            FAILED_BINDING,
            core::failed_binding_message(volume, error),
        );
        format!("pod {key}, ephemeral volume {volume}: {error}").into()
    }

    /// Creates one claim; the error message upstream's event shows.
    async fn create(&self, pod: &Pod, claim: &PersistentVolumeClaim) -> Result<(), String> {
        let name = claim.metadata.name.as_deref().unwrap_or_default();
        if let Some(metrics) = &self.metrics {
            metrics.create_total.inc();
        }
        let api: Api<PersistentVolumeClaim> = Api::namespaced(self.client.clone(), &pod.metadata.namespace);
        if let Err(err) = api.create(&PostParams::default(), claim).await {
            if let Some(metrics) = &self.metrics {
                metrics.create_failures_total.inc();
            }
            return Err(core::create_error(name, &error_message(&err)));
        }
        Ok(())
    }
}

impl Reconcile for Syncer {
    /// Upstream `syncHandler`.
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let Some(pod) = self.pods.get(key) else {
            tracing::trace!(pod_key = key, "Ephemeral: nothing to do for pod, it is gone");
            return Ok(Next::Done);
        };
        if pod.metadata.deletion_timestamp().is_some() {
            tracing::trace!(pod_key = key, "Ephemeral: nothing to do for pod, it is marked for deletion");
            return Ok(Next::Done);
        }
        let namespace = &pod.metadata.namespace;
        for step in core::plan(&pod, |name| self.claims.get(&format!("{namespace}/{name}"))) {
            match step {
                Step::Create { volume, claim } => {
                    if let Err(error) = self.create(&pod, &claim).await {
                        return Err(self.fail(&pod, key, &volume, &error));
                    }
                }
                Step::NotOwner { volume, message } => return Err(self.fail(&pod, key, &volume, &message)),
            }
        }
        Ok(Next::Done)
    }
}

/// The Event's `involvedObject`: the pod as upstream's `GetReference`
/// names it.
fn pod_reference(pod: &Pod) -> ObjectReference {
    let some = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Pod".into()),
        namespace: some(&pod.metadata.namespace),
        name: some(&pod.metadata.name),
        uid: some(&pod.metadata.uid.to_string()),
        resource_version: some(&pod.metadata.resource_version),
        ..ObjectReference::default()
    }
}
