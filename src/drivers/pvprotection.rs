//! The PV protection controller's driver (upstream
//! `pkg/controller/volume/pvprotection/`; the decisions are
//! `kcm_controllers::pvprotection`).
//!
//! It owns:
//! - the handler on the shared PersistentVolume informer: an add or update
//!   queues a volume that lacks the finalizer or is being deleted with it
//!   (upstream `pvAddedUpdated`);
//! - the `pvprotection` workqueue (upstream's default controller rate
//!   limiter, retried for as long as it fails) and its one worker
//!   (upstream's `Run(ctx, 1)`, with no flag);
//! - the sync (upstream `processPV`): the cached volume judged, and its
//!   update with the finalizer removed or added, through the controller's
//!   own client (`pv-protection-controller`).

use std::sync::Arc;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::PersistentVolume;
use kcm_controllers::pvprotection::{self as core, Decision};
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::informer::{
    EventHandler, HandlerRegistration, HasSynced, SharedInformer, SharedInformerFactory, Store,
};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kcm_runtime::workqueue::{QueueMetrics, WorkQueue, default_controller_rate_limiter};
use kube::Client;
use kube::api::{Api, PostParams};

/// Upstream's controller name: metric label, log field.
pub const CONTROLLER_NAME: &str = "persistentvolume-protection-controller";

/// The user-agent suffix of its client (upstream's `NewClient` name).
pub const CLIENT_NAME: &str = "pv-protection-controller";

/// The workqueue's name (the `name` label of the `workqueue_*` metrics).
pub const QUEUE_NAME: &str = "pvprotection";

/// Workers: upstream runs one, with no flag.
pub const WORKERS: usize = 1;

/// The PV protection controller, ready to run once its cache syncs.
pub struct PvProtectionController {
    /// Names of volumes to sync.
    queue: WorkQueue<String>,
    /// The shared PersistentVolume informer, for its sync state.
    volumes: SharedInformer<PersistentVolume>,
    /// The handler's registration.
    registration: HandlerRegistration,
    /// What the worker runs.
    syncer: Arc<Syncer>,
}

/// The per-volume sync.
struct Syncer {
    volumes: Store<PersistentVolume>,
    client: Client,
}

// === impl PvProtectionController ===

impl PvProtectionController {
    /// Builds the controller on `factory`'s PersistentVolume informer and
    /// registers its handler (before `factory.start()`), writing through
    /// `client`.
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(factory: &SharedInformerFactory, client: Client, queue_metrics: Option<&QueueMetrics>) -> Self {
        let queue = WorkQueue::new(QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let volumes = factory.informer::<PersistentVolume>();
        let registration = volumes.add_handler(VolumeHandler { queue: queue.clone() }, Some(factory.default_resync()));
        let syncer = Arc::new(Syncer { volumes: volumes.store(), client });
        Self { queue, volumes, registration, syncer }
    }
}

impl Controller for PvProtectionController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            tracing::info!("Starting PV protection controller");
            let synced: [&(dyn HasSynced + Sync); 2] = [&self.volumes, &self.registration];
            cx.run_when_synced(&synced, self.queue.clone(), self.syncer.clone(), Retries::FOREVER).await;
            tracing::info!("Shutting down PV protection controller");
        })
    }
}

// === handler ===

/// Queues the volumes that need the controller (upstream `pvAddedUpdated`).
struct VolumeHandler {
    queue: WorkQueue<String>,
}

impl VolumeHandler {
    fn volume_changed(&self, pv: &PersistentVolume) {
        let name = pv.metadata.name.as_deref().unwrap_or_default();
        tracing::trace!(PV = name, "Got event on PV");
        if core::should_queue(pv) {
            self.queue.add(name.to_owned());
        }
    }
}

impl EventHandler<PersistentVolume> for VolumeHandler {
    fn on_add(&self, pv: &Arc<PersistentVolume>) {
        self.volume_changed(pv);
    }

    fn on_update(&self, _old: &Arc<PersistentVolume>, new: &Arc<PersistentVolume>) {
        self.volume_changed(new);
    }

    fn on_delete(&self, _pv: &Arc<PersistentVolume>) {}
}

// === impl Syncer ===

impl Reconcile for Syncer {
    /// Upstream `processPV`.
    async fn sync(&self, name: &str) -> Result<Next, SyncError> {
        tracing::trace!(PV = name, "Processing PV");
        let Some(pv) = self.volumes.get(name) else {
            tracing::trace!(PV = name, "PV not found, ignoring");
            return Ok(Next::Done);
        };
        let (updated, done, failed) = match core::decide(&pv) {
            Decision::Nothing => return Ok(Next::Done),
            Decision::KeepBound => {
                tracing::trace!(PV = name, "Keeping PV because it is being used");
                return Ok(Next::Done);
            }
            Decision::RemoveFinalizer(pv) => {
                (pv, "Removed protection finalizer from PV", "Error removing protection finalizer from PV")
            }
            Decision::AddFinalizer(pv) => {
                (pv, "Added protection finalizer to PV", "Error adding protection finalizer to PV")
            }
        };
        let api: Api<PersistentVolume> = Api::all(self.client.clone());
        if let Err(err) = api.replace(name, &PostParams::default(), &updated).await {
            tracing::debug!(PV = name, %err, "{failed}");
            return Err(err.into());
        }
        tracing::debug!(PV = name, "{done}");
        Ok(Next::Done)
    }
}
