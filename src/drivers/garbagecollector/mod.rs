//! The garbage collector's driver (upstream
//! `pkg/controller/garbagecollector`: `garbagecollector.go`,
//! `graph_builder.go`, `operations.go`, `patch.go`; the decisions live in
//! `kcm_controllers::garbagecollector`).
//!
//! # Layout
//! - this module: [`GarbageCollector`] (start-up, the two worker pools),
//!   the shared state (`Shared`: the graph, the queues, the event
//!   recorder) and [`GcMetrics`];
//! - `monitors`: discovery of every deletable resource type (again every
//!   [`RESOURCE_SYNC_PERIOD`], and at once when an ownerReference names a
//!   kind discovery does not know) and one metadata feed per type into the
//!   graph;
//! - `workers`: the `garbage_collector_attempt_to_delete` and
//!   `garbage_collector_attempt_to_orphan` workers and their API calls.
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

mod monitors;
mod workers;

use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use k8s_openapi::api::core::v1::ObjectReference;
use kcm_controllers::garbagecollector::Identity;
use kcm_controllers::garbagecollector::graph::{Effect, Graph};
use kube::Client;
use prometheus::{IntCounter, IntGauge, Registry};
use tokio::sync::{Notify, watch};

use futures::future::BoxFuture;
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::events::{EventRecorder, EventType};
use kcm_runtime::informer::SyncSignal;
use kcm_runtime::workqueue::{QueueMetrics, WorkQueue, default_controller_rate_limiter};

pub use monitors::{RESOURCE_SYNC_PERIOD, ignored};

/// Upstream's controller name: log field, sync metric label.
pub const CONTROLLER_NAME: &str = "garbage-collector-controller";

/// The `source.component` of the collector's Events (upstream
/// `garbage-collector-controller`).
pub const EVENT_COMPONENT: &str = "garbage-collector-controller";

/// The user agent suffix of the collector's client (upstream's
/// `generic-garbage-collector` client).
pub const CLIENT_NAME: &str = "generic-garbage-collector";

/// The `attemptToDelete` queue's name (upstream's).
pub const ATTEMPT_TO_DELETE_QUEUE: &str = "garbage_collector_attempt_to_delete";

/// The `attemptToOrphan` queue's name (upstream's).
pub const ATTEMPT_TO_ORPHAN_QUEUE: &str = "garbage_collector_attempt_to_orphan";

/// How long stopping waits for syncs in flight.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// How the workers retry (forever, as upstream's) and drain.
const RETRIES: Retries = Retries { max_retries: None, drain_timeout: DRAIN_TIMEOUT };

/// How long the workers wait for the first feeds to list everything before
/// starting anyway (a type that cannot be listed must not stop the
/// collector; the owners are verified live in any case).
pub const INITIAL_SYNC_TIMEOUT: Duration = RESOURCE_SYNC_PERIOD;

/// The collector's metrics.
#[derive(Debug, Clone)]
pub struct GcMetrics {
    /// Upstream `garbagecollector_controller_resources_sync_error_total`.
    resources_sync_errors: IntCounter,
    /// `kcm_garbagecollector_graph_nodes`: nodes of the dependency graph
    /// (no upstream equivalent).
    graph_nodes: IntGauge,
    /// `kcm_garbagecollector_monitored_resources`: resource types feeding
    /// the graph (no upstream equivalent).
    monitored_resources: IntGauge,
}

impl GcMetrics {
    /// Creates and registers the metrics on `registry`.
    ///
    /// # Errors
    /// A metric of the same name is already registered.
    pub fn register(registry: &Registry) -> prometheus::Result<Self> {
        let metrics = GcMetrics {
            resources_sync_errors: IntCounter::new(
                "garbagecollector_controller_resources_sync_error_total",
                "Number of garbage collector resources sync errors",
            )?,
            graph_nodes: IntGauge::new(
                "kcm_garbagecollector_graph_nodes",
                "Nodes (observed objects and virtual owners) in the garbage collector's dependency graph.",
            )?,
            monitored_resources: IntGauge::new(
                "kcm_garbagecollector_monitored_resources",
                "Resource types whose objects feed the garbage collector's dependency graph.",
            )?,
        };
        registry.register(Box::new(metrics.resources_sync_errors.clone()))?;
        registry.register(Box::new(metrics.graph_nodes.clone()))?;
        registry.register(Box::new(metrics.monitored_resources.clone()))?;
        Ok(metrics)
    }
}

/// What the feeds, the monitors and the workers share.
struct Shared {
    /// The dependency graph; every feed writes it under this lock, so
    /// changes are applied one at a time, as upstream's single
    /// `processGraphChanges` loop does.
    graph: Mutex<Graph>,
    /// Uids to check (upstream `attemptToDelete`).
    attempt_to_delete: WorkQueue<String>,
    /// Uids of owners whose dependents to orphan (upstream
    /// `attemptToOrphan`).
    attempt_to_orphan: WorkQueue<String>,
    /// `OwnerRefInvalidNamespace` events.
    recorder: EventRecorder,
    /// See [`GcMetrics`].
    metrics: GcMetrics,
    /// apiVersion + kind -> resource, from the last discovery.
    mapper: RwLock<monitors::Mapper>,
    /// Asks the monitors to rediscover now (an unknown kind was met).
    rediscover: Notify,
}

impl Shared {
    fn graph(&self) -> std::sync::MutexGuard<'_, Graph> {
        self.graph.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs one graph change and applies what it asks.
    fn change(&self, f: impl FnOnce(&mut Graph) -> Vec<Effect>) {
        let effects = {
            let mut graph = self.graph();
            let effects = f(&mut graph);
            self.metrics.graph_nodes.set(i64::try_from(graph.len()).unwrap_or(i64::MAX));
            effects
        };
        self.apply(effects);
    }

    fn apply(&self, effects: Vec<Effect>) {
        for effect in effects {
            match effect {
                Effect::AttemptToDelete(uid) => self.attempt_to_delete.add(uid),
                Effect::AttemptToDeleteRateLimited(uid) => self.attempt_to_delete.add_rate_limited(uid),
                Effect::AttemptToOrphan(uid) => self.attempt_to_orphan.add(uid),
                Effect::Warning { regarding, reason, message } => {
                    tracing::info!(item = %regarding, reason, %message, "invalid ownerReference");
                    self.recorder.event(&object_reference(&regarding), EventType::Warning, reason, message);
                }
            }
        }
    }
}

/// The `core/v1` reference an event is recorded on.
fn object_reference(identity: &Identity) -> ObjectReference {
    ObjectReference {
        api_version: Some(identity.api_version.clone()),
        kind: Some(identity.kind.clone()),
        namespace: (!identity.namespace.is_empty()).then(|| identity.namespace.clone()),
        name: Some(identity.name.clone()),
        uid: Some(identity.uid.clone()),
        ..ObjectReference::default()
    }
}

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
    /// named [`CLIENT_NAME`]).
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
            mapper: RwLock::new(monitors::Mapper::default()),
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
                        tracing::warn!(controller = CONTROLLER_NAME, "starting before every resource type has listed");
                    }
                }
                () = stop.clone() => {
                    self.shut_down();
                    return;
                }
            }
            self.started.send_replace(true);
            tracing::info!(controller = CONTROLLER_NAME, workers = cx.workers, "starting workers");
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
