//! The VolumeAttributesClass protection controller's driver (upstream
//! `pkg/controller/volume/vacprotection/`; the decisions are
//! `kcm_controllers::vacprotection`).
//!
//! It owns:
//! - the handler on the shared VolumeAttributesClass informer: an add or
//!   update queues a class that lacks the finalizer or is being deleted
//!   with it (upstream `vacAddedUpdated`);
//! - the handlers on the shared PersistentVolumeClaim and PersistentVolume
//!   informers: an update queues the classes the old object referred to
//!   and the new one does not, a delete every class the object referred to
//!   (upstream `pvcUpdated`, `pvcDeleted`, `pvUpdated`, `pvDeleted`);
//! - the indexes [`VAC_NAME_INDEX`] on both (upstream's
//!   `volumeAttributesClassName`): the cached claims and volumes that
//!   refer to a class, which are all the sync asks (no live list, as
//!   upstream);
//! - the `vacprotection` workqueue (upstream's default controller rate
//!   limiter, retried for as long as it fails) and its one worker
//!   (upstream's `Run(ctx, 1)`, with no flag);
//! - the sync (upstream `processVAC`): the cached class judged, and its
//!   update with the finalizer removed or added, through the controller's
//!   own client (`volumeattributesclass-protection-controller`).

use std::sync::Arc;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::storage::v1::VolumeAttributesClass;
use kcm_controllers::vacprotection::{self as core, Decision};
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::informer::{
    self, EventHandler, HandlerRegistration, HasSynced, SharedInformer, SharedInformerFactory, Store,
};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kcm_runtime::workqueue::{QueueMetrics, WorkQueue, default_controller_rate_limiter};
use kube::Client;
use kube::api::{Api, PostParams};

/// Upstream's controller name: metric label, log field.
pub const CONTROLLER_NAME: &str = "volumeattributesclass-protection-controller";

/// The user-agent suffix of its client (upstream's `NewClient` name).
pub const CLIENT_NAME: &str = "volumeattributesclass-protection-controller";

/// The workqueue's name (the `name` label of the `workqueue_*` metrics).
pub const QUEUE_NAME: &str = "vacprotection";

/// Workers: upstream runs one, with no flag.
pub const WORKERS: usize = 1;

/// The index of claims and volumes by the classes they refer to (upstream
/// `vacNameKeyIndex`).
pub const VAC_NAME_INDEX: &str = "volumeAttributesClassName";

/// The VolumeAttributesClass protection controller, ready to run once its
/// caches sync.
pub struct VacProtectionController {
    /// Names of classes to sync.
    queue: WorkQueue<String>,
    /// The informers it reads, for their sync state.
    classes: SharedInformer<VolumeAttributesClass>,
    claims: SharedInformer<PersistentVolumeClaim>,
    volumes: SharedInformer<PersistentVolume>,
    /// The handlers' registrations.
    registrations: [HandlerRegistration; 3],
    /// What the worker runs.
    syncer: Arc<Syncer>,
}

/// The per-class sync.
struct Syncer {
    classes: Store<VolumeAttributesClass>,
    claims: Store<PersistentVolumeClaim>,
    volumes: Store<PersistentVolume>,
    client: Client,
}

// === impl VacProtectionController ===

impl VacProtectionController {
    /// Builds the controller on `factory`'s class, claim and volume
    /// informers and registers its handlers and indexes (before
    /// `factory.start()`), writing through `client`.
    ///
    /// # Errors
    /// An index cannot be added (the informer has started).
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(
        factory: &SharedInformerFactory,
        client: Client,
        queue_metrics: Option<&QueueMetrics>,
    ) -> Result<Self, informer::Error> {
        let queue = WorkQueue::new(QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let classes = factory.informer::<VolumeAttributesClass>();
        let claims = factory.informer::<PersistentVolumeClaim>();
        let volumes = factory.informer::<PersistentVolume>();
        claims.add_index(VAC_NAME_INDEX, core::pvc_class_names)?;
        volumes.add_index(VAC_NAME_INDEX, core::pv_class_names)?;
        let resync = Some(factory.default_resync());
        let registrations = [
            classes.add_handler(ClassHandler { queue: queue.clone() }, resync),
            claims.add_handler(ReferrerHandler { queue: queue.clone(), names: core::pvc_class_names }, resync),
            volumes.add_handler(ReferrerHandler { queue: queue.clone(), names: core::pv_class_names }, resync),
        ];
        let syncer =
            Arc::new(Syncer { classes: classes.store(), claims: claims.store(), volumes: volumes.store(), client });
        Ok(Self { queue, classes, claims, volumes, registrations, syncer })
    }
}

impl Controller for VacProtectionController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            tracing::info!("Starting VAC protection controller");
            let [classes_handler, claims_handler, volumes_handler] = &self.registrations;
            let synced: [&(dyn HasSynced + Sync); 6] =
                [&self.volumes, &self.claims, &self.classes, classes_handler, claims_handler, volumes_handler];
            cx.run_when_synced(&synced, self.queue.clone(), self.syncer.clone(), Retries::FOREVER).await;
            tracing::info!("Shutting down VAC protection controller");
        })
    }
}

// === handlers ===

/// Queues the classes that need the controller (upstream
/// `vacAddedUpdated`).
struct ClassHandler {
    queue: WorkQueue<String>,
}

impl ClassHandler {
    fn class_changed(&self, vac: &VolumeAttributesClass) {
        let name = vac.metadata.name.as_deref().unwrap_or_default();
        tracing::trace!(VAC = name, "Got event on VAC");
        if core::should_queue(vac) {
            self.queue.add(name.to_owned());
        }
    }
}

impl EventHandler<VolumeAttributesClass> for ClassHandler {
    fn on_add(&self, vac: &Arc<VolumeAttributesClass>) {
        self.class_changed(vac);
    }

    fn on_update(&self, _old: &Arc<VolumeAttributesClass>, new: &Arc<VolumeAttributesClass>) {
        self.class_changed(new);
    }

    fn on_delete(&self, _vac: &Arc<VolumeAttributesClass>) {}
}

/// Queues the classes a claim or volume stopped referring to (upstream's
/// PVC and PV update and delete handlers; adds queue nothing).
struct ReferrerHandler<K> {
    queue: WorkQueue<String>,
    /// The classes an object refers to.
    names: fn(&K) -> Vec<String>,
}

impl<K: Send + Sync + 'static> EventHandler<K> for ReferrerHandler<K> {
    fn on_add(&self, _object: &Arc<K>) {}

    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        core::released(&(self.names)(old), &(self.names)(new)).into_iter().for_each(|name| self.queue.add(name));
    }

    fn on_delete(&self, object: &Arc<K>) {
        (self.names)(object).into_iter().for_each(|name| self.queue.add(name));
    }
}

// === impl Syncer ===

impl Syncer {
    /// Whether a cached volume or claim refers to the class (upstream
    /// `isBeingUsed`: an index that cannot be read counts as in use).
    fn is_being_used(&self, name: &str) -> bool {
        let volumes = self.volumes.by_index(VAC_NAME_INDEX, name);
        let claims = self.claims.by_index(VAC_NAME_INDEX, name);
        match (volumes, claims) {
            (Ok(volumes), Ok(claims)) => !volumes.is_empty() || !claims.is_empty(),
            (Err(err), _) | (_, Err(err)) => {
                tracing::error!(VAC = name, %err, "Error getting PVs or PVCs assigned to VAC");
                true
            }
        }
    }
}

impl Reconcile for Syncer {
    /// Upstream `processVAC`.
    async fn sync(&self, name: &str) -> Result<Next, SyncError> {
        tracing::trace!(VAC = name, "Processing VAC");
        let Some(vac) = self.classes.get(name) else {
            tracing::trace!(VAC = name, "VAC not found, ignoring");
            return Ok(Next::Done);
        };
        let (updated, done, failed) = match core::decide(&vac, self.is_being_used(name)) {
            Decision::Nothing => return Ok(Next::Done),
            Decision::KeepInUse => {
                tracing::trace!(VAC = name, "Keeping VAC because it is being used");
                return Ok(Next::Done);
            }
            Decision::RemoveFinalizer(vac) => {
                (vac, "Removed protection finalizer from VAC", "Error removing protection finalizer from VAC")
            }
            Decision::AddFinalizer(vac) => {
                (vac, "Added protection finalizer to VAC", "Error adding protection finalizer to VAC")
            }
        };
        let api: Api<VolumeAttributesClass> = Api::all(self.client.clone());
        if let Err(err) = api.replace(name, &PostParams::default(), &updated).await {
            tracing::debug!(VAC = name, %err, "{failed}");
            return Err(err.into());
        }
        tracing::debug!(VAC = name, "{done}");
        Ok(Next::Done)
    }
}
