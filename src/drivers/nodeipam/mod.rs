//! The node IPAM controller's driver (upstream
//! `pkg/controller/nodeipam/node_ipam_controller.go` and
//! `ipam/range_allocator.go`; the decisions are
//! `kcm_controllers::nodeipam`).
//!
//! It owns:
//! - [`params`]: `--allocate-node-cidrs` and the CIDR flags turned into the
//!   allocator's parameters, with upstream's errors and warnings, when the
//!   controller is built (upstream's `newNodeIpamController`);
//! - this module: the allocator behind one lock, the handlers on the
//!   shared Node informer (an add or update queues the node, a delete
//!   releases its CIDRs at once, as upstream's delete handler does), the
//!   start (once the node cache syncs, every node's `podCIDRs` occupied
//!   before a worker runs), and the `cidrallocator_node` workqueue with
//!   upstream's 30 workers (`cidrUpdateWorkers`, no flag), retried
//!   forever with the default controller backoff;
//! - `sync`: one node's sync (occupy, or allocate and patch), its events
//!   (`CIDRNotAvailable`, `CIDRAssignmentFailed`, component
//!   `cidrAllocator`) and logs;
//! - `metrics`: upstream's `node_ipam_controller_cidrset_*` metrics.

pub mod metrics;
pub mod params;
mod sync;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use futures::future::BoxFuture;
use kcm_controllers::nodeipam::allocator::RangeAllocator;
use kcm_controllers::nodeipam::cidr::Cidr;
use kcm_objects::Node;
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::events::EventRecorder;
use kcm_runtime::informer::{EventHandler, HandlerRegistration, HasSynced, SharedInformer, SharedInformerFactory};
use kcm_runtime::workqueue::{QueueMetrics, WorkQueue, default_controller_rate_limiter};
use kube::Client;

pub use metrics::CidrSetMetrics;
pub use params::Params;
use sync::Syncer;

/// Upstream's canonical name: log field, metric label.
pub const CONTROLLER_NAME: &str = "node-ipam-controller";

/// The user-agent suffix of its client: upstream builds it with
/// `NewClient("node-controller")`, so the `system:controller:node-controller`
/// role applies.
pub const CLIENT_NAME: &str = "node-controller";

/// The `source.component` of its events (upstream's range allocator
/// recorder).
pub const EVENT_COMPONENT: &str = "cidrAllocator";

/// The workqueue's name (the `name` label of the `workqueue_*` metrics).
pub const QUEUE_NAME: &str = "cidrallocator_node";

/// Upstream's `cidrUpdateWorkers`.
pub const WORKERS: usize = 30;

/// The allocator and whether it has taken in the nodes' CIDRs yet.
struct State {
    allocator: RangeAllocator,
    /// False until every cached node's CIDRs are occupied: a delete seen
    /// before then releases nothing (the node is gone from the cache the
    /// start reads too).
    recovered: bool,
    /// CIDRs this process wrote to a node whose cached copy does not show
    /// them yet, by node name: until it does, the node is given no others
    /// (a sync on a stale copy would allocate again and write a second
    /// CIDR the API server refuses, as upstream's can).
    written: HashMap<String, Vec<Cidr>>,
}

/// What the handlers and workers share.
struct Shared {
    /// One lock over the sets, as upstream's `CidrSet` mutex.
    state: Mutex<State>,
    /// Reported after every change; `None` in tests that read none.
    metrics: Option<CidrSetMetrics>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The metrics brought up to the sets (and `tries` observed for each).
    fn report(&self, allocator: &RangeAllocator, tries: &[usize]) {
        if let Some(metrics) = &self.metrics {
            metrics.report(allocator, tries);
        }
    }
}

/// The controller, ready to run once the node cache syncs.
pub struct NodeIpamController {
    /// Names of nodes to sync.
    queue: WorkQueue<String>,
    /// The shared Node informer.
    nodes: SharedInformer<Node>,
    /// The handler's registration: workers start once it saw the list.
    registration: HandlerRegistration,
    /// The allocator, shared with the handler.
    shared: Arc<Shared>,
    /// What the workers run.
    syncer: Arc<Syncer>,
}

// === impl NodeIpamController ===

impl NodeIpamController {
    /// Builds the controller on `factory`'s Node informer from `params`,
    /// writing through `client`.
    ///
    /// # Errors
    /// A cluster CIDR cut too fine for the cidrset (upstream's
    /// `NewCIDRSet` error).
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(
        factory: &SharedInformerFactory,
        client: Client,
        params: &Params,
        metrics: Option<CidrSetMetrics>,
        queue_metrics: Option<&QueueMetrics>,
    ) -> Result<Self, kcm_controllers::nodeipam::cidrset::Error> {
        let allocator = params.allocator()?;
        if let Some(metrics) = &metrics {
            metrics.report(&allocator, &[]);
        }
        let shared = Arc::new(Shared {
            state: Mutex::new(State { allocator, recovered: false, written: HashMap::new() }),
            metrics,
        });
        let queue = WorkQueue::new(QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let nodes = factory.informer::<Node>();
        let handler = NodeHandler { queue: queue.clone(), shared: shared.clone() };
        let registration = nodes.add_handler(handler, Some(factory.default_resync()));
        let recorder = EventRecorder::new(client.clone(), EVENT_COMPONENT);
        let syncer = Arc::new(Syncer { nodes: nodes.store(), client, recorder, shared: shared.clone() });
        Ok(Self { queue, nodes, registration, shared, syncer })
    }

    /// Every cached node's `podCIDRs` occupied (upstream lists the nodes
    /// for this before its allocator is made).
    ///
    /// # Errors
    /// A node's CIDRs that do not parse or lie outside the cluster CIDRs.
    fn recover(&self) -> Result<(), kcm_controllers::nodeipam::allocator::Error> {
        let mut state = self.shared.lock();
        for node in self.nodes.store().list() {
            if node.spec.pod_cidrs.is_empty() {
                tracing::debug!(node = %node.metadata.name, "Node has no CIDR, ignoring");
                continue;
            }
            tracing::debug!(node = %node.metadata.name, pod_cidrs = ?node.spec.pod_cidrs, "Node has CIDR, occupying it in CIDR map");
            state.allocator.occupy_cidrs(&node.metadata.name, &node.spec.pod_cidrs)?;
        }
        state.recovered = true;
        self.shared.report(&state.allocator, &[]);
        Ok(())
    }
}

impl Controller for NodeIpamController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            tracing::info!(controller = CONTROLLER_NAME, "Starting range CIDR allocator");
            let synced: [&(dyn HasSynced + Sync); 2] = [&self.nodes, &self.registration];
            if !cx.wait_for_caches(&synced, &[&self.queue]).await {
                return;
            }
            if let Err(error) = self.recover() {
                // Upstream's controller manager exits here ("This error will
                // keep crashing controller-manager"); kcm-rs leaves this one
                // controller idle rather than allocate on a wrong map.
                tracing::error!(controller = CONTROLLER_NAME, %error, "Error initializing a controller: not allocating node CIDRs");
                self.queue.shut_down();
                return;
            }
            cx.pool(self.queue.clone(), self.syncer.clone(), cx.workers, Retries::FOREVER).await;
            tracing::info!(controller = CONTROLLER_NAME, "Shutting down range CIDR allocator");
        })
    }
}

// === the handler ===

/// A node added or updated is queued; one deleted has its CIDRs released.
struct NodeHandler {
    queue: WorkQueue<String>,
    shared: Arc<Shared>,
}

impl EventHandler<Node> for NodeHandler {
    fn on_add(&self, node: &Arc<Node>) {
        self.queue.add(node.metadata.key());
    }

    fn on_update(&self, _old: &Arc<Node>, new: &Arc<Node>) {
        self.queue.add(new.metadata.key());
    }

    fn on_delete(&self, node: &Arc<Node>) {
        let mut state = self.shared.lock();
        let written = state.written.remove(&*node.metadata.name);
        if !state.recovered {
            return;
        }
        if node.spec.pod_cidrs.is_empty() {
            // Gone before its cached copy showed the CIDRs written to it.
            if let Some(cidrs) = written {
                for error in state.allocator.release_allocated(&cidrs) {
                    tracing::error!(%error, node = %node.metadata.name, "Error releasing allocated CIDR for node");
                }
                self.shared.report(&state.allocator, &[]);
            }
            return;
        }
        tracing::debug!(node = %node.metadata.name, pod_cidrs = ?node.spec.pod_cidrs, "Release CIDR for node");
        if let Err(error) = state.allocator.release_cidrs(&node.metadata.name, &node.spec.pod_cidrs) {
            tracing::error!(%error, "Error while processing CIDR Release");
        }
        self.shared.report(&state.allocator, &[]);
    }
}
