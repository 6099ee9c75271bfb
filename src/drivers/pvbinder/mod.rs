//! The persistent volume binder's driver (upstream
//! `pkg/controller/volume/persistentvolume/pv_controller_base.go`; the
//! decisions are `kcm_controllers::pvbinder`).
//!
//! It owns:
//! - the handlers on the shared PersistentVolume and PersistentVolumeClaim
//!   informers: every add and update queues the object, each resynced every
//!   `--pvclaimbinder-sync-period` (upstream's `resync`); a deleted volume
//!   queues the claim it was bound to, a deleted claim the volume it was
//!   bound to (upstream `deleteVolume`, `deleteClaim`);
//! - the shared StorageClass informer, and the shared Pod informer's index
//!   by claim (upstream `common.PodPVCIndex`);
//! - the `volumes` and `claims` workqueues (upstream's names, its default
//!   controller rate limiter, retried for as long as they fail), one worker
//!   each, as upstream runs them;
//! - the syncs ([`sync`]): the core's claim and volume syncs run against the
//!   caches and the objects the controller itself wrote last (upstream's
//!   own caches), their requests performed through the controller's client
//!   (`persistent-volume-binder`) and its event recorder
//!   (`persistentvolume-controller`);
//! - its metrics ([`metrics`]): the syncs record what the core asks, the
//!   deletion handlers end or forget a timed operation.

mod metrics;
mod sync;

use std::sync::Arc;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::storage::v1::StorageClass;
use kcm_controllers::common::ephemeral::{POD_PVC_INDEX, pod_pvc_keys};
use kcm_controllers::pvbinder::{Settings, claim_key, claim_ref_key};
use kcm_objects::Pod;
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::events::EventRecorder;
use kcm_runtime::informer::{
    self, EventHandler, HandlerRegistration, HasSynced, SharedInformer, SharedInformerFactory,
};
use kcm_runtime::workqueue::{QueueMetrics, WorkQueue, default_controller_rate_limiter};
use kube::Client;

pub use metrics::PvBinderMetrics;
use sync::{ClaimSyncer, Shared, VolumeSyncer};

/// Upstream's controller name: metric label, log field.
pub const CONTROLLER_NAME: &str = "persistentvolume-binder-controller";

/// The user-agent suffix of its client (upstream's `NewClient` name).
pub const CLIENT_NAME: &str = "persistent-volume-binder";

/// The component its events name (upstream's event source).
pub const EVENT_SOURCE: &str = "persistentvolume-controller";

/// The claims' workqueue (the `name` label of the `workqueue_*` metrics).
pub const CLAIM_QUEUE: &str = "claims";

/// The volumes' workqueue.
pub const VOLUME_QUEUE: &str = "volumes";

/// Workers per queue: upstream runs one each, with no flag.
pub const WORKERS: usize = 1;

/// The persistent volume binder, ready to run once its caches sync.
pub struct PvBinderController {
    claim_queue: WorkQueue<String>,
    volume_queue: WorkQueue<String>,
    volumes: SharedInformer<PersistentVolume>,
    claims: SharedInformer<PersistentVolumeClaim>,
    classes: SharedInformer<StorageClass>,
    pods: SharedInformer<Pod>,
    registrations: [HandlerRegistration; 2],
    shared: Arc<Shared>,
}

// === impl PvBinderController ===

impl PvBinderController {
    /// Builds the controller on `factory`'s informers and registers its
    /// handlers and the pod index (before `factory.start()`), writing
    /// through `client`, resyncing every `sync_period`, recording into
    /// `metrics`.
    ///
    /// # Errors
    /// The pod index cannot be added (the informer has started).
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueues spawn their timer tasks).
    pub fn new(
        factory: &SharedInformerFactory,
        client: Client,
        recorder: EventRecorder,
        settings: Settings,
        sync_period: std::time::Duration,
        queue_metrics: Option<&QueueMetrics>,
        metrics: Option<PvBinderMetrics>,
    ) -> Result<Self, informer::Error> {
        let claim_queue = WorkQueue::new(CLAIM_QUEUE, default_controller_rate_limiter(), queue_metrics);
        let volume_queue = WorkQueue::new(VOLUME_QUEUE, default_controller_rate_limiter(), queue_metrics);
        let volumes = factory.informer::<PersistentVolume>();
        let claims = factory.informer::<PersistentVolumeClaim>();
        let classes = factory.informer::<StorageClass>();
        let pods = factory.informer::<Pod>();
        match pods.add_index(POD_PVC_INDEX, pod_pvc_keys) {
            Ok(()) | Err(informer::Error::IndexConflict(_)) => {}
            Err(e) => return Err(e),
        }
        let queues = Queues { claims: claim_queue.clone(), volumes: volume_queue.clone(), metrics: metrics.clone() };
        let registrations = [
            volumes.add_handler(VolumeHandler(queues.clone()), Some(sync_period)),
            claims.add_handler(ClaimHandler(queues), Some(sync_period)),
        ];
        let outlets = sync::Outlets { client, recorder, claim_queue: claim_queue.clone(), metrics };
        let shared = Arc::new(Shared::new(&volumes, &claims, &classes, &pods, settings, outlets));
        Ok(Self { claim_queue, volume_queue, volumes, claims, classes, pods, registrations, shared })
    }
}

impl Controller for PvBinderController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            tracing::info!("Starting persistent volume controller");
            let [volume_handler, claim_handler] = &self.registrations;
            let synced: [&(dyn HasSynced + Sync); 6] =
                [&self.volumes, &self.claims, &self.classes, &self.pods, volume_handler, claim_handler];
            if cx.wait_for_caches(&synced, &[&self.claim_queue, &self.volume_queue]).await {
                let volumes = Arc::new(VolumeSyncer(self.shared.clone()));
                let claims = Arc::new(ClaimSyncer(self.shared.clone()));
                futures::join!(
                    cx.pool(self.volume_queue.clone(), volumes, WORKERS, Retries::FOREVER),
                    cx.pool(self.claim_queue.clone(), claims, WORKERS, Retries::FOREVER),
                );
            }
            tracing::info!("Shutting down persistent volume controller");
        })
    }
}

// === handlers ===

/// Both queues: a deletion of one kind queues the other; and the metrics,
/// whose timed operations a deletion ends or forgets.
#[derive(Clone)]
struct Queues {
    claims: WorkQueue<String>,
    volumes: WorkQueue<String>,
    metrics: Option<PvBinderMetrics>,
}

/// Queues volumes (upstream's volume informer handlers).
struct VolumeHandler(Queues);

impl EventHandler<PersistentVolume> for VolumeHandler {
    fn on_add(&self, volume: &Arc<PersistentVolume>) {
        self.0.volumes.add(informer::key_of(&**volume));
    }

    fn on_update(&self, _old: &Arc<PersistentVolume>, new: &Arc<PersistentVolume>) {
        self.0.volumes.add(informer::key_of(&**new));
    }

    /// Upstream `deleteVolume`: the claim it was bound to is synced again.
    fn on_delete(&self, volume: &Arc<PersistentVolume>) {
        let name = informer::key_of(&**volume);
        tracing::trace!(volume = name, "volume deleted");
        if let Some(metrics) = &self.0.metrics {
            metrics.volume_deleted(&name);
        }
        if let Some(key) = claim_ref_key(volume) {
            self.0.claims.add(key);
        }
    }
}

/// Queues claims (upstream's claim informer handlers).
struct ClaimHandler(Queues);

impl EventHandler<PersistentVolumeClaim> for ClaimHandler {
    fn on_add(&self, claim: &Arc<PersistentVolumeClaim>) {
        self.0.claims.add(claim_key(claim));
    }

    fn on_update(&self, _old: &Arc<PersistentVolumeClaim>, new: &Arc<PersistentVolumeClaim>) {
        self.0.claims.add(claim_key(new));
    }

    /// Upstream `deleteClaim`: the volume it was bound to is synced again.
    fn on_delete(&self, claim: &Arc<PersistentVolumeClaim>) {
        let key = claim_key(claim);
        tracing::trace!(PVC = key, "Claim deleted");
        if let Some(metrics) = &self.0.metrics {
            metrics.claim_deleted(&key);
        }
        let volume = claim.spec.as_ref().and_then(|s| s.volume_name.as_deref()).unwrap_or_default();
        if !volume.is_empty() {
            self.0.volumes.add(volume.to_owned());
        }
    }
}
