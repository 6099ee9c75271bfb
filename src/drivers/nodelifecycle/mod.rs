//! The node lifecycle controller's driver (upstream
//! `pkg/controller/nodelifecycle/node_lifecycle_controller.go` and the
//! taint, label and pod writes of `pkg/controller/util/node`; the
//! decisions live in `kcm_controllers::node`).
//!
//! It owns:
//! - the handlers on the shared Node and Pod informers (and the Lease
//!   informer it reads): every node change queues the node on
//!   `node_lifecycle_controller` (8 workers: `NoSchedule` condition taints,
//!   beta os/arch labels; failures are logged, not retried, as upstream);
//!   a pod newly bound to a node queues it on
//!   `node_lifecycle_controller_pods` (4 workers, rate-limited retries: a
//!   pod bound to a node that is not ready is marked not ready);
//! - the monitor pass every `--node-monitor-period`: each node's health
//!   (status write with retries on a fresh read), `RegisteredNode`,
//!   `RemovingNode` and `NodeNotReady` events, `MarkPodsNotReady`, the
//!   `NoExecute` steps, the zone states and the `node_collector_*` gauges;
//! - the tainting pass every 100 ms, which drains each zone's
//!   rate-limited queue;
//! - every taint and label write, each on the resourceVersion it was
//!   computed from and recomputed after a conflict.
//!
//! # Layout
//! - this module: [`NodeLifecycleController`] (start-up, the two worker
//!   pools and the two passes), its names and [`Settings`];
//! - `shared`: what the passes and workers share (client, recorder,
//!   caches, the core's state, metrics);
//! - `handlers`: the informer handlers (changes to queue keys);
//! - `workers`: the node and pod workers;
//! - `passes`: the monitor and tainting passes;
//! - `health`: one node's health assessment and status write;
//! - `pods`: marking a pod not ready;
//! - `patches`: the taint and label patches;
//! - `metrics`: [`NodeLifecycleMetrics`].

mod handlers;
mod health;
mod metrics;
mod passes;
mod patches;
mod pods;
mod shared;
mod workers;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use k8s_openapi::api::coordination::v1::Lease;
use kcm_controllers::node::monitor::{self, Monitor};
use kcm_objects::Node;
use kcm_objects::Pod;

use crate::drivers::nodes::{NODE_CONTROLLER, register_pod_node_name_index};
use crate::drivers::parts::{Identity, Parts};
use handlers::{NodeHandler, PodHandler};
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::informer::{self, HandlerRegistration, HasSynced, SharedInformer};
use kcm_runtime::workqueue::{WorkQueue, default_controller_rate_limiter};
use shared::Inner;
use workers::{NodeSyncer, PodSyncer};

pub use metrics::NodeLifecycleMetrics;

/// How upstream names the controller.
pub const IDENTITY: Identity =
    Identity { name: "node-lifecycle-controller", client: NODE_CONTROLLER, events: NODE_CONTROLLER };

/// The node queue's name (the `name` label of the `workqueue_*` metrics).
pub const NODE_QUEUE_NAME: &str = "node_lifecycle_controller";

/// The pod queue's name.
pub const POD_QUEUE_NAME: &str = "node_lifecycle_controller_pods";

/// Node workers (upstream `nodeUpdateWorkerSize`); also the monitor
/// pass's parallelism.
pub const NODE_WORKERS: usize = 8;

/// Pod workers (upstream `podUpdateWorkerSize`).
pub const POD_WORKERS: usize = 4;

/// How the workers retry (forever, as upstream's) and drain.
const RETRIES: Retries = Retries::FOREVER;

/// The controller's settings, from its flags (`config::settings::nodelifecycle`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// `--node-monitor-period`.
    pub monitor_period: Duration,
    /// Grace periods and zone rates.
    pub core: monitor::Config,
}

/// The node lifecycle controller, ready to run once its caches sync.
pub struct NodeLifecycleController {
    /// Names of changed nodes (condition taints, labels).
    node_queue: WorkQueue<String>,
    /// Keys of pods newly bound to a node.
    pod_queue: WorkQueue<String>,
    /// Read for the caches' sync state.
    nodes: SharedInformer<Node>,
    /// See `nodes`.
    pods: SharedInformer<Pod>,
    /// See `nodes`.
    leases: SharedInformer<Lease>,
    /// Handler registrations: workers start once both delivered the
    /// initial lists.
    registrations: Vec<HandlerRegistration>,
    /// The state and the I/O, shared by the passes and the workers.
    inner: Arc<Inner>,
}

// === impl NodeLifecycleController ===

impl NodeLifecycleController {
    /// Builds the controller on `parts`, reading the Node, Pod and Lease
    /// informers.
    ///
    /// # Errors
    /// The pod index cannot be added (the informers have started).
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueues spawn their timer tasks).
    pub fn new(
        parts: Parts<'_>,
        settings: Settings,
        metrics: Option<NodeLifecycleMetrics>,
    ) -> Result<Self, informer::Error> {
        let Parts { factory, client, recorder, queue_metrics } = parts;
        let node_queue = WorkQueue::new(NODE_QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let pod_queue = WorkQueue::new(POD_QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let nodes = factory.informer::<Node>();
        let pods = factory.informer::<Pod>();
        let leases = factory.informer::<Lease>();
        register_pod_node_name_index(&pods)?;
        let registrations = vec![
            nodes.add_handler(NodeHandler { queue: node_queue.clone() }, None),
            pods.add_handler(PodHandler { queue: pod_queue.clone() }, None),
        ];
        let inner = Arc::new(Inner {
            client,
            recorder,
            nodes: nodes.store(),
            pods: pods.store(),
            leases: leases.store(),
            monitor: Mutex::new(Monitor::new(settings.core)),
            metrics,
            monitor_period: settings.monitor_period,
            monitor_parallelism: NODE_WORKERS,
        });
        Ok(Self { node_queue, pod_queue, nodes, pods, leases, registrations, inner })
    }
}

impl Controller for NodeLifecycleController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let mut synced: Vec<&(dyn HasSynced + Sync)> = vec![&self.nodes, &self.pods, &self.leases];
            synced.extend(self.registrations.iter().map(|r| r as &(dyn HasSynced + Sync)));
            if !cx.wait_for_caches(&synced, &[&self.node_queue, &self.pod_queue]).await {
                return;
            }
            let nodes =
                cx.pool(self.node_queue.clone(), Arc::new(NodeSyncer(self.inner.clone())), NODE_WORKERS, RETRIES);
            let pods = cx.pool(self.pod_queue.clone(), Arc::new(PodSyncer(self.inner.clone())), POD_WORKERS, RETRIES);
            let passes = async {
                tokio::select! {
                    () = self.inner.monitor_loop() => {}
                    () = self.inner.tainting_loop() => {}
                    () = cx.stop.clone() => {}
                }
            };
            futures::join!(nodes, pods, passes);
        })
    }
}
