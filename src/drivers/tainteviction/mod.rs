//! The taint-eviction-controller's driver (upstream
//! `pkg/controller/tainteviction/taint_eviction.go` and `timed_workers.go`;
//! the decisions live in `kcm_controllers::node::eviction`).
//!
//! It owns:
//! - the handlers on the shared Node and Pod informers: a node is looked at
//!   when it appears, goes, or its `NoExecute` taints change; a pod when it
//!   appears, goes, or its tolerations or node change (as upstream);
//! - the plain queues `noexec_taint_node` (node names) and
//!   `noexec_taint_pod` (pod keys), with upstream's queue names and
//!   [`WORKERS`] workers each;
//! - the scheduled deletions: one per pod, remembered here and fired through
//!   a third, unnamed queue (`add_after` to the fire time; a fired key whose
//!   deletion was cancelled or moved later finds that out and stops);
//! - the deletion itself: the `TaintManagerEviction` Event, a live read of
//!   the pod, the `DisruptionTarget` condition patched onto its status, then
//!   the delete (the pod's own grace period) with the pod's uid as
//!   precondition; a pod already gone counts as done;
//! - upstream's metrics `taint_eviction_controller_pod_deletions_total` and
//!   `taint_eviction_controller_pod_deletion_duration_seconds`.
//!
//! Differences from upstream:
//! - upstream shards node and pod updates by node name over 8 goroutines so
//!   that a pod update never races its node's; here both read the caches
//!   under one lock, which gives the same guarantee;
//! - a failed deletion is retried with the queue's backoff until it
//!   succeeds, the pod goes or the deletion is cancelled (upstream tries 5
//!   times, 10 ms apart, then gives up until the next update);
//! - deletions carry the pod's uid (see the core's module doc);
//! - the deletion latency is observed in seconds since the fire time
//!   (upstream multiplies a Duration by `time.Second`, which mis-scales it).
//!
//! # Layout
//! - this module: [`TaintEvictionController`] (start-up, the three worker
//!   pools) and its names;
//! - `handlers`: the informer handlers (changes to queue keys);
//! - `workers`: what the three queues' workers run;
//! - `evictor`: the scheduled deletions and the decisions about them,
//!   under one lock;
//! - `deletion`: the deletion of a pod whose time has come;
//! - `metrics`: [`EvictionMetrics`].

mod deletion;
mod evictor;
mod handlers;
mod metrics;
mod workers;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use kcm_objects::Node;
use kcm_objects::Pod;

use crate::drivers::nodes::{NODE_CONTROLLER, register_pod_node_name_index};
use crate::drivers::parts::{Identity, Parts};
use evictor::Evictor;
use handlers::{NodeHandler, PodHandler};
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::informer::{self, HandlerRegistration, HasSynced, SharedInformer};
use kcm_runtime::workqueue::{WorkQueue, default_controller_rate_limiter};
use workers::{DeletionSync, Judge};

pub use metrics::EvictionMetrics;

/// How upstream names the controller (its client is upstream's `node-controller`, whose cluster role it uses).
pub const IDENTITY: Identity =
    Identity { name: "taint-eviction-controller", client: NODE_CONTROLLER, events: "taint-eviction-controller" };

/// The node queue's name (the `name` label of the `workqueue_*` metrics).
pub const NODE_QUEUE_NAME: &str = "noexec_taint_node";

/// The pod queue's name.
pub const POD_QUEUE_NAME: &str = "noexec_taint_pod";

/// Workers per queue (upstream `UpdateWorkerSize`).
pub const WORKERS: usize = 8;

/// How the workers retry (forever, as upstream's) and drain.
const RETRIES: Retries = Retries::FOREVER;

/// The taint-eviction-controller, ready to run once its caches sync.
pub struct TaintEvictionController {
    /// Names of nodes whose `NoExecute` taints changed.
    node_queue: WorkQueue<String>,
    /// Keys of pods whose tolerations or node changed.
    pod_queue: WorkQueue<String>,
    /// Keys of pods whose scheduled deletion may be due.
    deletion_queue: WorkQueue<String>,
    /// Read for the cache's sync state.
    pods: SharedInformer<Pod>,
    /// Read for the cache's sync state.
    nodes: SharedInformer<Node>,
    /// Handler registrations: workers start once both delivered the
    /// initial lists.
    registrations: Vec<HandlerRegistration>,
    /// The state and the I/O, shared by the three worker pools.
    evictor: Arc<Evictor>,
}

// === impl TaintEvictionController ===

impl TaintEvictionController {
    /// Builds the controller on `parts`: its pod and node handlers and the
    /// pod index.
    ///
    /// # Errors
    /// The pod index cannot be added (the pod informer already started).
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueues spawn their timer tasks).
    pub fn new(parts: Parts<'_>, metrics: Option<EvictionMetrics>) -> Result<Self, informer::Error> {
        let Parts { factory, client, recorder, queue_metrics } = parts;
        let node_queue = WorkQueue::new(NODE_QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let pod_queue = WorkQueue::new(POD_QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        // Not an upstream queue (upstream runs one timer per pod): no metrics.
        let deletion_queue = WorkQueue::new("", default_controller_rate_limiter(), None);
        let pods = factory.informer::<Pod>();
        let nodes = factory.informer::<Node>();
        register_pod_node_name_index(&pods)?;
        let resync = Some(factory.default_resync());
        let registrations = vec![
            nodes.add_handler(NodeHandler { queue: node_queue.clone() }, resync),
            pods.add_handler(PodHandler { queue: pod_queue.clone() }, resync),
        ];
        let evictor = Arc::new(Evictor {
            pods: pods.store(),
            nodes: nodes.store(),
            scheduled: Mutex::new(HashMap::new()),
            deletions: deletion_queue.clone(),
            client,
            recorder,
            metrics,
        });
        Ok(Self { node_queue, pod_queue, deletion_queue, pods, nodes, registrations, evictor })
    }
}

impl Controller for TaintEvictionController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let synced: Vec<&(dyn HasSynced + Sync)> =
                vec![&self.pods, &self.nodes, &self.registrations[0], &self.registrations[1]];
            let queues = [&self.node_queue, &self.pod_queue, &self.deletion_queue];
            if !cx.wait_for_caches(&synced, &queues).await {
                return;
            }
            let evictor = &self.evictor;
            let judge = |on| Arc::new(Judge { evictor: evictor.clone(), on });
            tokio::join!(
                cx.pool(self.node_queue.clone(), judge(Evictor::node_changed), cx.workers, RETRIES),
                cx.pool(self.pod_queue.clone(), judge(Evictor::pod_changed), cx.workers, RETRIES),
                cx.pool(self.deletion_queue.clone(), Arc::new(DeletionSync(evictor.clone())), cx.workers, RETRIES),
            );
        })
    }
}
