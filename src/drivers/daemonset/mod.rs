//! The DaemonSet controller's driver (upstream
//! `pkg/controller/daemon/daemon_controller.go` minus `syncDaemonSet`'s
//! decisions, which live in `kcm_controllers::daemonset`).
//!
//! It owns:
//! - the event handlers (`handlers`) on the shared DaemonSet, Pod, Node and
//!   ControllerRevision informers, which map changes to DaemonSet keys as
//!   upstream does and feed the expectations with the pod adds and deletes
//!   they observe;
//! - the `daemonset` workqueue (upstream's default controller rate limiter)
//!   and the worker pool (`--concurrent-daemonset-syncs`; upstream retries
//!   a failing key for as long as it fails);
//! - the failed-pod backoff, shared by the syncs and collected every minute
//!   (upstream `BackoffGCInterval`);
//! - the per-key sync: a [`Snapshot`] of the caches, the backoff steps the
//!   core asks for, and the core's [`SyncMachine`] driven to its end by the
//!   executor, which reports pod creates and deletes to the expectations.

mod handlers;
mod writes;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures::future::BoxFuture;
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet};
use kcm_controllers::daemonset::{self as core, FailedPodsBackoff, Options, Snapshot, SyncMachine};
use kcm_objects::{Node, Pod};

use super::execute::{Executor, next_after};
use super::expectations::{OwnKindHandler, SharedExpectations};
use crate::drivers::parts::{Identity, Parts};
use handlers::{HistoryHandler, Lookup, NodeHandler, PodHandler};
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::informer::{HandlerRegistration, HasSynced, SharedInformer, Store};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kcm_runtime::workqueue::{WorkQueue, default_controller_rate_limiter};

/// How upstream names the controller (upstream's service account `daemon-set-controller` is its client).
pub const IDENTITY: Identity =
    Identity { name: "daemonset-controller", client: "daemon-set-controller", events: "daemonset-controller" };

/// The workqueue's name (the `name` label of the `workqueue_*` metrics).
pub const QUEUE_NAME: &str = "daemonset";

/// How often the failed-pod backoff forgets idle keys (upstream
/// `BackoffGCInterval`).
pub const BACKOFF_GC_INTERVAL: Duration = Duration::from_secs(60);

/// The DaemonSet controller, ready to run once its caches sync.
pub struct DaemonSetController {
    /// Keys (`namespace/name`) of DaemonSets to sync.
    queue: WorkQueue<String>,
    /// The informers it reads, for their sync state.
    daemon_sets: SharedInformer<DaemonSet>,
    pods: SharedInformer<Pod>,
    nodes: SharedInformer<Node>,
    revisions: SharedInformer<ControllerRevision>,
    /// Handler registrations: workers start once all have delivered the
    /// initial lists.
    registrations: Vec<HandlerRegistration>,
    /// What [`Reconcile::sync`] reads and writes.
    syncer: Arc<Syncer>,
}

/// The per-key sync, shared by the workers.
struct Syncer {
    /// Cached DaemonSets.
    daemon_sets: Store<DaemonSet>,
    /// Cached pods (all namespaces).
    pods: Store<Pod>,
    /// Cached nodes.
    nodes: Store<Node>,
    /// Cached ControllerRevisions (all namespaces).
    revisions: Store<ControllerRevision>,
    /// In-flight creates and deletes, shared with the pod handler.
    expectations: SharedExpectations,
    /// Failed-pod delays, stepped by the syncs, collected by the run loop.
    backoff: Mutex<FailedPodsBackoff>,
    /// Performs the plans.
    executor: Executor,
    /// Core settings.
    options: Options,
}

// === impl DaemonSetController ===

impl DaemonSetController {
    /// Builds the controller on `parts`: its DaemonSet, revision, pod and
    /// node handlers.
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(parts: Parts<'_>, options: Options) -> Self {
        let Parts { factory, client, recorder, queue_metrics } = parts;
        let queue = WorkQueue::new(QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let daemon_sets = factory.informer::<DaemonSet>();
        let pods = factory.informer::<Pod>();
        let nodes = factory.informer::<Node>();
        let revisions = factory.informer::<ControllerRevision>();
        let expectations = SharedExpectations::default();
        let resync = Some(factory.default_resync());
        let lookup = Lookup { queue: queue.clone(), daemon_sets: daemon_sets.store() };
        let registrations = vec![
            daemon_sets
                .add_handler(OwnKindHandler { queue: queue.clone(), expectations: expectations.clone() }, resync),
            revisions.add_handler(HistoryHandler(lookup.clone()), resync),
            pods.add_handler(PodHandler { lookup: lookup.clone(), expectations: expectations.clone() }, resync),
            nodes.add_handler(NodeHandler(lookup), resync),
        ];
        let syncer = Arc::new(Syncer {
            daemon_sets: daemon_sets.store(),
            pods: pods.store(),
            nodes: nodes.store(),
            revisions: revisions.store(),
            expectations,
            backoff: Mutex::new(FailedPodsBackoff::default()),
            executor: Executor::new(client, recorder),
            options,
        });
        Self { queue, daemon_sets, pods, nodes, revisions, registrations, syncer }
    }
}

impl Controller for DaemonSetController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let mut synced: Vec<&(dyn HasSynced + Sync)> =
                vec![&self.pods, &self.nodes, &self.revisions, &self.daemon_sets];
            synced.extend(self.registrations.iter().map(|r| r as &(dyn HasSynced + Sync)));
            if !cx.wait_for_caches(&synced, &[&self.queue]).await {
                return;
            }
            let syncer = self.syncer.clone();
            let gc = async move {
                let mut tick = tokio::time::interval(BACKOFF_GC_INTERVAL);
                loop {
                    tick.tick().await;
                    syncer.backoff().gc(Timestamp::now());
                }
            };
            tokio::select! {
                () = cx.pool(self.queue.clone(), self.syncer.clone(), cx.workers, Retries::FOREVER) => {}
                () = gc => {}
            }
        })
    }
}

// === impl Syncer ===

impl Reconcile for Syncer {
    /// One sync of the DaemonSet `key`, per the executor contract of
    /// `kcm_controllers::daemonset`.
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let Some(ds) = self.daemon_sets.get(key) else {
            tracing::debug!(%key, "DaemonSet has been deleted");
            self.expectations.delete(key);
            return Ok(Next::Done);
        };
        let namespace = ds.metadata.namespace.as_deref().unwrap_or("");
        if self.expectations.created_unseen_in(key, &self.revisions) {
            // Its add event queues the DaemonSet again.
            tracing::debug!(%key, "waiting for the cache to show the ControllerRevision this DaemonSet made");
            return Ok(Next::Done);
        }
        let pods = self.pods.list_namespace(namespace);
        let nodes = self.nodes.list();
        let revisions = self.revisions.list_namespace(namespace);
        // Copies: the other workers and the handlers go on while this one
        // syncs.
        let expectations = self.expectations.lock().of(&core::key(&ds));
        let backoff = self.backoff().clone();
        let snapshot = Snapshot {
            daemon_set: &ds,
            pods: &pods,
            nodes: &nodes,
            revisions: &revisions,
            expectations: &expectations,
            backoff: &backoff,
            now: Timestamp::now(),
        };
        let machine = SyncMachine::new(&snapshot, &self.options);
        {
            let mut backoff = self.backoff();
            for backoff_key in machine.backoff_next() {
                backoff.next(backoff_key, snapshot.now);
            }
        }
        let own = writes::Writes { executor: &self.executor, daemon_sets: &self.daemon_sets };
        next_after(self.executor.drive(machine, &self.expectations, &own).await)
    }
}

impl Syncer {
    fn backoff(&self) -> MutexGuard<'_, FailedPodsBackoff> {
        // Every critical section leaves the backoff whole.
        self.backoff.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
