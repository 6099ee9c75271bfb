//! The TTL controller's driver (upstream `pkg/controller/ttl/`; the
//! decisions are `kcm_controllers::ttl`).
//!
//! It owns:
//! - the handler on the shared Node informer: an add counts the node and
//!   queues it, an update (the informer's periodic resyncs included)
//!   queues it, a delete uncounts it, as upstream's `addNode`,
//!   `updateNode` and `deleteNode`; the count and the TTL it reached
//!   ([`Boundaries`]) sit behind one lock the handler writes and the
//!   workers read;
//! - the `ttlcontroller` workqueue (upstream's default controller rate
//!   limiter, retried for as long as it fails) and its five workers
//!   (upstream's `startTTLController` runs five, with no flag);
//! - the sync (upstream `updateNodeIfNeeded`): the cached node's
//!   annotation compared with the desired TTL, and when they differ a
//!   strategic merge patch of that annotation alone, through the
//!   controller's own client (`ttl-controller`).
//!
//! A TTL change reaches each node at its next update or resync, as
//! upstream's does: nothing requeues every node when the count crosses a
//! step.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::Node as NodeObject;
use kcm_controllers::ttl::{self as core, Boundaries, TTL_ANNOTATION};
use kcm_gotime::format_go_duration;
use kcm_objects::Node;
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::informer::{
    EventHandler, HandlerRegistration, HasSynced, SharedInformer, SharedInformerFactory, Store,
};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kcm_runtime::workqueue::{QueueMetrics, WorkQueue, default_controller_rate_limiter};
use kube::Client;
use kube::api::{Api, Patch, PatchParams};

/// Upstream's controller name: metric label, log field.
pub const CONTROLLER_NAME: &str = "ttl-controller";

/// The user-agent suffix of its client (upstream's `ClientOrDie` name).
pub const CLIENT_NAME: &str = "ttl-controller";

/// The workqueue's name (the `name` label of the `workqueue_*` metrics).
pub const QUEUE_NAME: &str = "ttlcontroller";

/// Workers: upstream starts five, with no flag.
pub const WORKERS: usize = 5;

/// The TTL controller, ready to run once its cache syncs.
pub struct TtlController {
    /// Names of nodes to sync.
    queue: WorkQueue<String>,
    /// The shared Node informer, for its sync state.
    nodes: SharedInformer<Node>,
    /// The handler's registration: workers start once it counted the list.
    registration: HandlerRegistration,
    /// What the workers run.
    syncer: Arc<Syncer>,
}

/// The per-node sync, shared by the workers.
struct Syncer {
    /// Cached nodes.
    nodes: Store<Node>,
    /// The count and desired TTL, written by the handler.
    boundaries: Arc<Mutex<Boundaries>>,
    /// The controller's own client.
    client: Client,
}

// === impl TtlController ===

impl TtlController {
    /// Builds the controller on `factory`'s Node informer and registers its
    /// handler (before `factory.start()`), patching through `client`.
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(factory: &SharedInformerFactory, client: Client, queue_metrics: Option<&QueueMetrics>) -> Self {
        let queue = WorkQueue::new(QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let nodes = factory.informer::<Node>();
        let boundaries = Arc::new(Mutex::new(Boundaries::default()));
        let handler = NodeHandler { queue: queue.clone(), boundaries: boundaries.clone() };
        let registration = nodes.add_handler(handler, Some(factory.default_resync()));
        let syncer = Arc::new(Syncer { nodes: nodes.store(), boundaries, client });
        Self { queue, nodes, registration, syncer }
    }
}

impl Controller for TtlController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let synced: [&(dyn HasSynced + Sync); 2] = [&self.nodes, &self.registration];
            cx.run_when_synced(&synced, self.queue.clone(), self.syncer.clone(), Retries::FOREVER).await;
        })
    }
}

// === handlers ===

/// Counts the nodes and queues them.
struct NodeHandler {
    queue: WorkQueue<String>,
    boundaries: Arc<Mutex<Boundaries>>,
}

impl NodeHandler {
    fn boundaries(&self) -> std::sync::MutexGuard<'_, Boundaries> {
        self.boundaries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl EventHandler<Node> for NodeHandler {
    fn on_add(&self, node: &Arc<Node>) {
        self.boundaries().node_added();
        self.queue.add(node.metadata.name.to_string());
    }

    fn on_update(&self, _old: &Arc<Node>, new: &Arc<Node>) {
        self.queue.add(new.metadata.name.to_string());
    }

    fn on_delete(&self, _node: &Arc<Node>) {
        self.boundaries().node_deleted();
    }
}

// === impl Syncer ===

impl Reconcile for Syncer {
    /// Upstream `updateNodeIfNeeded`.
    async fn sync(&self, name: &str) -> Result<Next, SyncError> {
        let Some(node) = self.nodes.get(name) else { return Ok(Next::Done) };
        let desired = self.boundaries.lock().unwrap_or_else(PoisonError::into_inner).desired_ttl_seconds();
        if let Some(Err(value)) = core::current_ttl(&node) {
            tracing::info!(
                annotation_value = value,
                annotation_key = TTL_ANNOTATION,
                node = name,
                "Could not convert the value with annotation key for the node"
            );
        }
        let Some(patch) = core::sync(&node, desired) else { return Ok(Next::Done) };
        let api: Api<NodeObject> = Api::all(self.client.clone());
        if let Err(err) = api.patch(name, &PatchParams::default(), &Patch::Strategic(patch)).await {
            tracing::debug!(node = name, %err, "Failed to change ttl annotation for node");
            return Err(err.into());
        }
        let ttl = format_go_duration(Duration::from_secs(desired.into()));
        tracing::debug!(node = name, TTL = %ttl, "Changed ttl annotation");
        Ok(Next::Done)
    }
}
