//! The volume expander's driver (upstream
//! `pkg/controller/volume/expand/`; the decisions are
//! `kcm_controllers::expand`).
//!
//! It owns:
//! - the handler on the shared PersistentVolumeClaim informer: an added or
//!   deleted claim is queued when `Bound`, an updated one when it is bound
//!   and its storage request or status capacity grew (upstream
//!   `enqueuePVC` and its `UpdateFunc`);
//! - the `volume_expand` workqueue (upstream's default controller rate
//!   limiter, retried for as long as it fails) and its ten workers
//!   (upstream's `defaultWorkerCount`, with no flag);
//! - the sync (upstream `syncHandler`): the cached claim's volume read
//!   live, [`decide`](core::decide) asked, its event recorded (source
//!   `volume_expand`) and, for a migrated in-tree volume, the claim's
//!   `status` patched with the resizer annotation and the claim's
//!   resourceVersion, through the controller's own client
//!   (`expand-controller`).

use std::sync::Arc;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use kcm_controllers::expand::{self as core, Decision};
use kcm_controllers::plan::Event;
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::events::EventRecorder;
use kcm_runtime::informer::{EventHandler, HandlerRegistration, HasSynced, SharedInformer, Store, key_of};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kcm_runtime::workqueue::{WorkQueue, default_controller_rate_limiter};
use kube::Client;
use kube::api::{Api, Patch, PatchParams};

use super::api_errors::error_message;
use super::execute::object_reference;
use super::parts::{Identity, Parts};

/// Upstream's names: the controller, its client's user agent, its events'
/// source.
pub const IDENTITY: Identity =
    Identity { name: "persistentvolume-expander-controller", client: "expand-controller", events: "volume_expand" };

/// The workqueue's name (the `name` label of the `workqueue_*` metrics).
pub const QUEUE_NAME: &str = "volume_expand";

/// Workers: upstream's `defaultWorkerCount`, with no flag.
pub const WORKERS: usize = 10;

/// The volume expander, ready to run once its cache syncs.
pub struct ExpandController {
    /// Keys (`namespace/name`) of claims to sync.
    queue: WorkQueue<String>,
    /// The informer it reads, for its sync state.
    claims: SharedInformer<PersistentVolumeClaim>,
    /// The handler's registration.
    registration: HandlerRegistration,
    /// What the workers run.
    syncer: Arc<Syncer>,
}

/// The per-claim sync, shared by the workers.
struct Syncer {
    claims: Store<PersistentVolumeClaim>,
    /// The controller's own client: the volume read, the status patch.
    client: Client,
    /// Records the `ExternalExpanding` events.
    recorder: EventRecorder,
}

// === impl ExpandController ===

impl ExpandController {
    /// Builds the controller on the shared claim informer and registers
    /// its handler (before the factory starts).
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(parts: Parts<'_>) -> Self {
        let Parts { factory, client, recorder, queue_metrics } = parts;
        let queue = WorkQueue::new(QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let claims = factory.informer::<PersistentVolumeClaim>();
        let registration = claims.add_handler(ClaimHandler { queue: queue.clone() }, Some(factory.default_resync()));
        let syncer = Arc::new(Syncer { claims: claims.store(), client, recorder });
        Self { queue, claims, registration, syncer }
    }
}

impl Controller for ExpandController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            tracing::info!("Starting expand controller");
            let synced: [&(dyn HasSynced + Sync); 2] = [&self.claims, &self.registration];
            cx.run_when_synced(&synced, self.queue.clone(), self.syncer.clone(), Retries::FOREVER).await;
            tracing::info!("Shutting down expand controller");
        })
    }
}

// === handlers ===

/// Queues bound claims that may need expanding (upstream `enqueuePVC`).
struct ClaimHandler {
    queue: WorkQueue<String>,
}

impl ClaimHandler {
    fn enqueue(&self, claim: &PersistentVolumeClaim) {
        if core::should_queue(claim) {
            self.queue.add(key_of(claim));
        }
    }
}

impl EventHandler<PersistentVolumeClaim> for ClaimHandler {
    fn on_add(&self, claim: &Arc<PersistentVolumeClaim>) {
        self.enqueue(claim);
    }

    fn on_update(&self, old: &Arc<PersistentVolumeClaim>, new: &Arc<PersistentVolumeClaim>) {
        if core::update_queues(old, new) {
            self.queue.add(key_of(&**new));
        }
    }

    fn on_delete(&self, claim: &Arc<PersistentVolumeClaim>) {
        self.enqueue(claim);
    }
}

// === impl Syncer ===

impl Syncer {
    fn record(&self, event: Event) {
        self.recorder.event(&object_reference(&event.regarding), event.type_, &event.reason, event.message);
    }

    /// The claim's volume, read live (upstream `getPersistentVolume`).
    async fn volume(&self, claim: &PersistentVolumeClaim) -> Result<PersistentVolume, SyncError> {
        let name = core::volume_name(claim)?;
        let api: Api<PersistentVolume> = Api::all(self.client.clone());
        api.get(name).await.map_err(|err| format!("failed to get PV {name:?}: {}", error_message(&err)).into())
    }

    /// The claim's `status` patched (upstream `PatchPVCStatus`), the
    /// resourceVersion in the patch refusing a stale claim.
    async fn patch_status(&self, claim: &PersistentVolumeClaim, patch: &serde_json::Value) -> Result<(), String> {
        let namespace = claim.metadata.namespace.as_deref().unwrap_or_default();
        let name = claim.metadata.name.as_deref().unwrap_or_default();
        let api: Api<PersistentVolumeClaim> = Api::namespaced(self.client.clone(), namespace);
        match api.patch_status(name, &PatchParams::default(), &Patch::Strategic(patch)).await {
            Ok(_) => Ok(()),
            Err(err) => Err(format!("patchPVCStatus failed to patch PVC {name:?}: {}", error_message(&err))),
        }
    }
}

impl Reconcile for Syncer {
    /// Upstream `syncHandler`.
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let Some(claim) = self.claims.get(key) else { return Ok(Next::Done) };
        let volume = self.volume(&claim).await.inspect_err(|err| {
            tracing::debug!(pvcKey = key, %err, "Error getting Persistent Volume for PVC from informer");
        })?;
        match core::decide(&claim, &volume) {
            Decision::Nothing => {}
            Decision::NotBound(err) => {
                tracing::debug!(pvcKey = key, %err, "Persistent Volume not bound to the PVC");
                return Err(err.into());
            }
            Decision::External(event) => {
                self.record(event);
                tracing::info!(pvcKey = key, "Waiting for an external controller to expand the PVC");
            }
            Decision::Migrated { event, resizer, patch } => {
                self.record(event);
                if let Some(patch) = patch
                    && let Err(err) = self.patch_status(&claim, &patch).await
                {
                    let failed = core::resizer_failed(&claim, &err);
                    let message = failed.message.clone();
                    self.record(failed);
                    return Err(message.into());
                }
                tracing::debug!(pvcKey = key, resizer, "PVC handed to its CSI driver's external resizer");
            }
            Decision::Flex(event) => {
                tracing::error!(pvcKey = key, "{}", event.message);
                self.record(event);
            }
        }
        Ok(Next::Done)
    }
}
