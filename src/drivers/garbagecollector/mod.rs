//! The garbage collector's driver (upstream
//! `pkg/controller/garbagecollector`: `garbagecollector.go`,
//! `graph_builder.go`, `operations.go`, `patch.go`; the decisions live in
//! `kcm_controllers::garbagecollector`).
//!
//! # Layout
//! - this module: [`GarbageCollector`] (start-up, the two worker pools);
//! - `shared`: the shared state (`Shared`: the graph, the queues, the
//!   event recorder, the REST mapping);
//! - `metrics`: [`GcMetrics`];
//! - `monitors`: discovery of every deletable resource type (again every
//!   [`RESOURCE_SYNC_PERIOD`], and at once when an ownerReference names a
//!   kind discovery does not know) and one metadata feed per type into the
//!   graph;
//! - `workers`: the `garbage_collector_attempt_to_delete` and
//!   `garbage_collector_attempt_to_orphan` workers;
//! - `operations`: their API calls.
//!
//! # One watch per type, metadata only
//! For a type some controller of this process already watches through the
//! shared informer factory (pods, ReplicaSets, namespaces, ...), the
//! collector registers a metadata handler on that informer: the API server
//! sees one watch, and the collector keeps nothing of the objects but what
//! its graph needs. Every other deletable type is watched by the collector
//! itself, metadata only (`PartialObjectMetadata`), with no cache besides
//! the graph. Upstream instead asks its typed informer factory for every
//! built-in type (creating full-object informers nobody else reads) and a
//! metadata informer for the rest; both keep a full cache of their own.

mod metrics;
mod monitors;
mod operations;
mod shared;
mod workers;

use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use kcm_controllers::garbagecollector::graph::Graph;
use kube::Client;
use tokio::sync::{Notify, watch};

use crate::drivers::parts::Identity;
use futures::future::BoxFuture;
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::events::EventRecorder;
use kcm_runtime::informer::SyncSignal;
use kcm_runtime::workqueue::{QueueMetrics, WorkQueue, default_controller_rate_limiter};
use shared::{Mapper, Shared};

pub use metrics::GcMetrics;
pub use monitors::{RESOURCE_SYNC_PERIOD, ignored};

/// How upstream names the controller (upstream's `generic-garbage-collector` client).
pub const IDENTITY: Identity = Identity {
    name: "garbage-collector-controller",
    client: "generic-garbage-collector",
    events: "garbage-collector-controller",
};

/// The `attemptToDelete` queue's name (upstream's).
pub const ATTEMPT_TO_DELETE_QUEUE: &str = "garbage_collector_attempt_to_delete";

/// The `attemptToOrphan` queue's name (upstream's).
pub const ATTEMPT_TO_ORPHAN_QUEUE: &str = "garbage_collector_attempt_to_orphan";

/// How the workers retry (forever, as upstream's) and drain.
const RETRIES: Retries = Retries::FOREVER;

/// How long the workers wait for the first feeds to list everything before
/// starting anyway (a type that cannot be listed must not stop the
/// collector; the owners are verified live in any case).
pub const INITIAL_SYNC_TIMEOUT: Duration = RESOURCE_SYNC_PERIOD;

/// The garbage collector, ready to run.
pub struct GarbageCollector {
    /// Graph, queues, recorder.
    shared: Arc<Shared>,
    /// Reads and writes of any type (metadata only).
    client: Client,
    /// Set once the workers start (after the first feeds listed, or
    /// [`INITIAL_SYNC_TIMEOUT`]): the daemon's readiness waits on it.
    started: watch::Sender<bool>,
}

// === impl GarbageCollector ===

impl GarbageCollector {
    /// A collector talking through `client` (upstream builds it a client
    /// named [`IDENTITY.client`]).
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueues spawn their timer tasks).
    pub fn new(
        client: Client,
        recorder: EventRecorder,
        queue_metrics: Option<&QueueMetrics>,
        metrics: GcMetrics,
    ) -> Self {
        let shared = Arc::new(Shared {
            graph: Mutex::new(Graph::new()),
            attempt_to_delete: WorkQueue::new(
                ATTEMPT_TO_DELETE_QUEUE,
                default_controller_rate_limiter(),
                queue_metrics,
            ),
            attempt_to_orphan: WorkQueue::new(
                ATTEMPT_TO_ORPHAN_QUEUE,
                default_controller_rate_limiter(),
                queue_metrics,
            ),
            recorder,
            metrics,
            mapper: RwLock::new(Mapper::default()),
            rediscover: Notify::new(),
        });
        Self { shared, client, started: watch::channel(false).0 }
    }

    fn shut_down(&self) {
        self.shared.attempt_to_delete.shut_down();
        self.shared.attempt_to_orphan.shut_down();
    }
}

impl Controller for GarbageCollector {
    /// Synced once the workers start: every resource type's graph feed
    /// has listed (or the initial sync timed out).
    fn started(&self) -> Option<SyncSignal> {
        Some(SyncSignal::new(self.started.subscribe()))
    }

    /// Discovers the resource types, feeds the graph (sharing the factory's
    /// informers where they exist), and runs `cx.workers` workers on each
    /// queue (upstream `--concurrent-gc-syncs`).
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let stop = cx.stop.clone();
            let mut monitors = monitors::Monitors::new(self.shared.clone(), self.client.clone(), cx.factory.clone());
            let first = tokio::select! {
                synced = monitors.start() => synced,
                () = stop.clone() => None,
            };
            let Some(synced) = first else {
                self.shut_down();
                return;
            };
            tokio::select! {
                all = wait_all(synced) => {
                    if !all {
                        tracing::warn!(controller = IDENTITY.name, "starting before every resource type has listed");
                    }
                }
                () = stop.clone() => {
                    self.shut_down();
                    return;
                }
            }
            self.started.send_replace(true);
            tracing::info!(controller = IDENTITY.name, workers = cx.workers, "starting workers");
            let deleter = Arc::new(workers::AttemptToDelete::new(self.shared.clone(), self.client.clone()));
            let orphaner = Arc::new(workers::AttemptToOrphan::new(self.shared.clone(), self.client.clone()));
            futures::join!(
                monitors.run(stop.clone()),
                cx.pool(self.shared.attempt_to_delete.clone(), deleter, cx.workers, RETRIES),
                cx.pool(self.shared.attempt_to_orphan.clone(), orphaner, cx.workers, RETRIES),
            );
        })
    }
}

/// Waits for every signal, up to [`INITIAL_SYNC_TIMEOUT`]; whether all
/// synced.
async fn wait_all(signals: Vec<SyncSignal>) -> bool {
    let all = futures::future::join_all(signals.into_iter().map(SyncSignal::synced));
    tokio::time::timeout(INITIAL_SYNC_TIMEOUT, all).await.is_ok_and(|r| r.into_iter().all(|ok| ok))
}
