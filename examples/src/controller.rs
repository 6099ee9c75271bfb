//! The driver: the I/O around the core. It owns the event handler that
//! turns Widget changes into queue keys, the workqueue, and the per-key
//! sync (read the cache, ask the core, write what it planned).

use std::sync::Arc;

use futures::future::BoxFuture;
use k8s_openapi::jiff::Timestamp;
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::informer::{Enqueue, HandlerRegistration, HasSynced, SharedInformer, SharedInformerFactory, Store};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kcm_runtime::workqueue::{QueueMetrics, WorkQueue, default_controller_rate_limiter};
use kube::api::{Patch, PatchParams};
use kube::{Api, Client, ResourceExt};
use serde_json::json;

use crate::core::{self, Plan, Snapshot};
use crate::widget::Widget;

/// The controller's name: metric label, log field, cache-sync waiter.
pub const CONTROLLER_NAME: &str = "widget-controller";

/// The workqueue's name (the `name` label of the `workqueue_*` metrics).
pub const QUEUE_NAME: &str = "widget";

/// Failed syncs of one key before it is dropped until its next change.
pub const MAX_RETRIES: u32 = 15;

/// How the workers retry and drain.
const RETRIES: Retries = Retries::at_most(MAX_RETRIES);

/// The Widget controller, built before `factory.start()`, run after.
pub struct WidgetController {
    /// Keys (`namespace/name`) of Widgets to sync.
    queue: WorkQueue<String>,
    /// The shared Widget informer: its cache must sync before workers run.
    widgets: SharedInformer<Widget>,
    /// The handler's registration: synced once the initial list's adds
    /// have reached the handler (so the queue holds every Widget).
    registration: HandlerRegistration,
    /// The per-key sync the workers share.
    syncer: Arc<Syncer>,
}

impl WidgetController {
    /// Asks `factory` for the Widget informer and registers the handler
    /// on it. Call before `factory.start()`.
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(factory: &SharedInformerFactory, client: Client, queue_metrics: Option<&QueueMetrics>) -> Self {
        let queue = WorkQueue::new(QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let widgets = factory.informer::<Widget>();
        let registration = widgets.add_handler(Enqueue { queue: queue.clone() }, Some(factory.default_resync()));
        let syncer = Arc::new(Syncer { widgets: widgets.store(), client });
        WidgetController { queue, widgets, registration, syncer }
    }
}

impl Controller for WidgetController {
    /// Waits for the cache and the handler's initial adds (so no worker
    /// reads a half-filled cache), then runs `cx.workers` workers until
    /// `cx.stop`, and drains them. Returns without syncing if the stop
    /// signal or the factory's shutdown comes first.
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let caches: [&(dyn HasSynced + Sync); 2] = [&self.widgets, &self.registration];
            cx.run_when_synced(&caches, self.queue.clone(), self.syncer.clone(), RETRIES).await;
        })
    }
}

/// What a worker needs to sync one key.
struct Syncer {
    /// The Widget cache: reads never go to the API server.
    widgets: Store<Widget>,
    /// For the status writes.
    client: Client,
}

impl Reconcile for Syncer {
    /// One sync: snapshot, plan, execute. An error requeues the key with
    /// backoff (the runner does that).
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let Some(widget) = self.widgets.get(key) else {
            // Deleted: nothing of ours to clean up (no finalizer).
            tracing::debug!(%key, "Widget has been deleted");
            return Ok(Next::Done);
        };
        match core::plan(&Snapshot { widget: &widget, now: Timestamp::now() }) {
            Plan::UpToDate => Ok(Next::Done),
            Plan::WriteStatus(status) => {
                let api: Api<Widget> = Api::namespaced(self.client.clone(), &widget.namespace().unwrap_or_default());
                // The resourceVersion makes the write conditional on the
                // state the plan was made from: if the cache was behind,
                // the write fails with a conflict, the key is retried, and
                // by then the newer version is cached.
                let patch = json!({
                    "metadata": {"resourceVersion": widget.resource_version()},
                    "status": status,
                });
                api.patch_status(&widget.name_any(), &PatchParams::default(), &Patch::Merge(&patch)).await?;
                tracing::info!(%key, generation = ?status.observed_generation, replicas = status.replicas, "status written");
                Ok(Next::Done)
            }
        }
    }
}
