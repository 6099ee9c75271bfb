//! The PVC protection controller's driver (upstream
//! `pkg/controller/volume/pvcprotection/`; the decisions are
//! `kcm_controllers::pvcprotection`).
//!
//! It owns:
//! - the handlers on the shared PersistentVolumeClaim informer (an add or
//!   update queues a claim that lacks the finalizer, is being deleted with
//!   it, or, under `PersistentVolumeClaimUnusedSinceTime`, has no `Unused`
//!   condition) and on the shared Pod informer (an add, update or delete
//!   queues the claims the pod refers to; without the gate only when the
//!   pod is deleted, terminated or unscheduled), as upstream's
//!   `pvcAddedUpdated` and `podAddedDeletedUpdated`;
//! - the pod index [`POD_PVC_INDEX`] (upstream `common.PodPVCIndex`): the
//!   cached pods that refer to a claim;
//! - the `pvcprotection` workqueue (upstream's default controller rate
//!   limiter, retried for as long as it fails) and its one worker
//!   (upstream's `Run(ctx, 1)`, with no flag);
//! - the sync (upstream `processPVC`): the cached claim judged with the
//!   cached pods, the namespace's pods listed live when none of them uses
//!   it, then the status update and the updates the core answers, through
//!   the controller's own client (`pvc-protection-controller`).

use std::sync::Arc;

use futures::future::BoxFuture;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kcm_controllers::common::claims::{POD_PVC_INDEX, claim_keys};
use kcm_controllers::pvcprotection::{self as core, Answer, Write};
use kcm_objects::{Pod, Wire};
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::informer::{
    self, EventHandler, HandlerRegistration, HasSynced, SharedInformer, SharedInformerFactory, Store, key_of,
};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kcm_runtime::workqueue::{QueueMetrics, WorkQueue, default_controller_rate_limiter};
use kube::Client;
use kube::api::{Api, ListParams, PostParams};

/// Upstream's controller name: metric label, log field.
pub const CONTROLLER_NAME: &str = "persistentvolumeclaim-protection-controller";

/// The user-agent suffix of its client (upstream's `NewClient` name).
pub const CLIENT_NAME: &str = "pvc-protection-controller";

/// The workqueue's name (the `name` label of the `workqueue_*` metrics).
pub const QUEUE_NAME: &str = "pvcprotection";

/// Workers: upstream runs one, with no flag.
pub const WORKERS: usize = 1;

/// The PVC protection controller, ready to run once its caches sync.
pub struct PvcProtectionController {
    /// Keys (`namespace/name`) of claims to sync.
    queue: WorkQueue<String>,
    /// The informers it reads, for their sync state.
    claims: SharedInformer<PersistentVolumeClaim>,
    pods: SharedInformer<Pod>,
    /// The handlers' registrations.
    registrations: [HandlerRegistration; 2],
    /// What the worker runs.
    syncer: Arc<Syncer>,
}

/// The per-claim sync.
struct Syncer {
    claims: Store<PersistentVolumeClaim>,
    pods: Store<Pod>,
    client: Client,
    /// Whether `PersistentVolumeClaimUnusedSinceTime` is on.
    unused_since: bool,
}

// === impl PvcProtectionController ===

impl PvcProtectionController {
    /// Builds the controller on `factory`'s claim and pod informers and
    /// registers its handlers and index (before `factory.start()`),
    /// writing through `client`.
    ///
    /// # Errors
    /// The pod index cannot be added (the informer has started).
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(
        factory: &SharedInformerFactory,
        client: Client,
        unused_since: bool,
        queue_metrics: Option<&QueueMetrics>,
    ) -> Result<Self, informer::Error> {
        let queue = WorkQueue::new(QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let claims = factory.informer::<PersistentVolumeClaim>();
        let pods = factory.informer::<Pod>();
        match pods.add_index(POD_PVC_INDEX, claim_keys) {
            Ok(()) | Err(informer::Error::IndexConflict(_)) => {}
            Err(e) => return Err(e),
        }
        let resync = Some(factory.default_resync());
        let registrations = [
            claims.add_handler(ClaimHandler { queue: queue.clone(), unused_since }, resync),
            pods.add_handler(PodHandler { queue: queue.clone(), unused_since }, resync),
        ];
        let syncer = Arc::new(Syncer { claims: claims.store(), pods: pods.store(), client, unused_since });
        Ok(Self { queue, claims, pods, registrations, syncer })
    }
}

impl Controller for PvcProtectionController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            tracing::info!("Starting PVC protection controller");
            let [claims_handler, pods_handler] = &self.registrations;
            let synced: [&(dyn HasSynced + Sync); 4] = [&self.claims, &self.pods, claims_handler, pods_handler];
            cx.run_when_synced(&synced, self.queue.clone(), self.syncer.clone(), Retries::FOREVER).await;
            tracing::info!("Shutting down PVC protection controller");
        })
    }
}

// === handlers ===

/// Queues the claims that need the controller (upstream `pvcAddedUpdated`).
struct ClaimHandler {
    queue: WorkQueue<String>,
    unused_since: bool,
}

impl ClaimHandler {
    fn claim_changed(&self, pvc: &PersistentVolumeClaim) {
        tracing::trace!(pvc = %key_of(pvc), "Got event on PVC");
        if core::should_queue(pvc, self.unused_since) {
            self.queue.add(key_of(pvc));
        }
    }
}

impl EventHandler<PersistentVolumeClaim> for ClaimHandler {
    fn on_add(&self, pvc: &Arc<PersistentVolumeClaim>) {
        self.claim_changed(pvc);
    }

    fn on_update(&self, _old: &Arc<PersistentVolumeClaim>, new: &Arc<PersistentVolumeClaim>) {
        self.claim_changed(new);
    }

    fn on_delete(&self, _pvc: &Arc<PersistentVolumeClaim>) {}
}

/// Queues the claims a pod event may free or use (upstream
/// `podAddedDeletedUpdated`).
struct PodHandler {
    queue: WorkQueue<String>,
    unused_since: bool,
}

impl PodHandler {
    fn pod_changed(&self, old: Option<&Pod>, new: &Pod, deleted: bool) {
        let keys = core::claims_to_queue(old, new, deleted, self.unused_since);
        if !keys.is_empty() {
            tracing::trace!(pod = %new.metadata.key(), pod_uid = %new.metadata.uid, "Enqueuing PVCs for Pod");
        }
        keys.into_iter().for_each(|key| self.queue.add(key));
    }
}

impl EventHandler<Pod> for PodHandler {
    fn on_add(&self, pod: &Arc<Pod>) {
        self.pod_changed(None, pod, false);
    }

    fn on_update(&self, old: &Arc<Pod>, new: &Arc<Pod>) {
        self.pod_changed(Some(old), new, false);
    }

    fn on_delete(&self, pod: &Arc<Pod>) {
        self.pod_changed(None, pod, true);
    }
}

// === impl Syncer ===

impl Syncer {
    /// The namespace's pods, listed live (upstream `askAPIServer`).
    async fn list_pods(&self, namespace: &str) -> Result<Vec<Pod>, SyncError> {
        tracing::trace!(namespace, "Live listing Pods in namespace");
        let api: Api<Wire<Pod>> = Api::namespaced(self.client.clone(), namespace);
        let list = api.list(&ListParams::default()).await.map_err(|e| format!("live list of pods failed: {e}"))?;
        Ok(list.items.into_iter().map(Wire::into_inner).collect())
    }

    /// Makes one write; an error ends the sync, to be retried.
    async fn write(&self, write: Write) -> Result<(), SyncError> {
        let (pvc, action) = match &write {
            Write::UnusedCondition(pvc, _) => (pvc, "Updated Unused condition in PVC status"),
            Write::RemoveFinalizer(pvc) => (pvc, "Removed protection finalizer from PVC"),
            Write::AddFinalizer(pvc) => (pvc, "Added protection finalizer to PVC"),
        };
        let key = key_of(&**pvc);
        let name = pvc.metadata.name.as_deref().unwrap_or_default();
        let api: Api<PersistentVolumeClaim> =
            Api::namespaced(self.client.clone(), pvc.metadata.namespace.as_deref().unwrap_or_default());
        let params = PostParams::default();
        let written = match &write {
            Write::UnusedCondition(..) => api.replace_status(name, &params, &**pvc).await,
            Write::RemoveFinalizer(_) | Write::AddFinalizer(_) => api.replace(name, &params, pvc).await,
        };
        if let Err(err) = written {
            let failure = match write {
                Write::UnusedCondition(..) => "Error updating Unused condition in PVC status",
                Write::RemoveFinalizer(_) => "Error removing protection finalizer from PVC",
                Write::AddFinalizer(_) => "Error adding protection finalizer to PVC",
            };
            tracing::error!(PVC = %key, %err, "{failure}");
            return Err(err.into());
        }
        match write {
            Write::UnusedCondition(_, status) => tracing::debug!(PVC = %key, status, "{action}"),
            Write::RemoveFinalizer(_) | Write::AddFinalizer(_) => tracing::debug!(PVC = %key, "{action}"),
        }
        Ok(())
    }
}

impl Reconcile for Syncer {
    /// Upstream `processPVC`.
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        tracing::trace!(PVC = key, "Processing PVC");
        let Some(pvc) = self.claims.get(key) else {
            tracing::trace!(PVC = key, "PVC not found, ignoring");
            return Ok(Next::Done);
        };
        let cached = self.pods.by_index(POD_PVC_INDEX, key)?;
        let now = Time(Timestamp::now());
        let mut answer = core::process(&pvc, &cached, None, self.unused_since, now.clone());
        if answer == Answer::ListPods {
            tracing::trace!(PVC = key, "No Pod using PVC was found in the Informer's cache");
            let live = self.list_pods(pvc.metadata.namespace.as_deref().unwrap_or_default()).await?;
            answer = core::process(&pvc, &cached, Some(&live), self.unused_since, now);
        }
        let Answer::Writes(outcome) = answer else { return Err("the live pod list did not settle the PVC".into()) };
        if outcome.kept_in_use {
            tracing::debug!(PVC = key, "Keeping PVC because it is being used");
        }
        for write in outcome.writes {
            self.write(write).await?;
        }
        tracing::trace!(PVC = key, "Finished processing PVC");
        Ok(Next::Done)
    }
}
