//! The EndpointSlice controller's driver (upstream
//! `pkg/controller/endpointslice/endpointslice_controller.go` and the API
//! calls of `staging/src/k8s.io/endpointslice/reconciler.go`; the
//! decisions are `kcm_controllers::endpointslice`).
//!
//! It owns:
//! - the handlers on the shared Service, Pod, EndpointSlice and Node
//!   informers (`handlers`);
//! - the `endpoint_slice` workqueue, with upstream's slower backoff (1 s
//!   doubling to 1000 s, with the overall 10 qps bucket) and at most
//!   [`RETRIES`] failed syncs per Service, and its
//!   `--concurrent-service-endpoint-syncs` workers, and the topology queue
//!   of node changes with its one worker;
//! - what the controller remembers between syncs ([`Shared`]: the
//!   EndpointSlice tracker, the trigger times, the metrics cache), shared
//!   by the handlers and the workers;
//! - the sync (`sync`) and the `endpoint_slice_controller_*` metrics
//!   (`metrics`).

mod handlers;
mod metrics;
mod sync;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kcm_controllers::endpointslice::{EndpointSliceTracker, MetricsCache, TopologyCache, TriggerTimeTracker};
use kcm_objects::{Node, Pod};
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::informer::{Enqueue, HandlerRegistration, HasSynced, SharedInformer};
use kcm_runtime::workqueue::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter, WorkQueue, default_controller_rate_limiter,
};

pub use handlers::ENDPOINT_SLICE_CHANGE_MIN_SYNC_DELAY;
pub use metrics::EndpointSliceMetrics;
pub use sync::Error;

use handlers::{NodeHandler, SliceHandler};

use super::service_pods::{ServicePodHandler, register_pod_label_index};
use crate::drivers::parts::{Identity, Parts};
use sync::{Syncer, TopologySyncer};

/// How upstream names the controller.
pub const IDENTITY: Identity = Identity {
    name: "endpointslice-controller",
    client: "endpointslice-controller",
    events: "endpoint-slice-controller",
};

/// The workqueue's name (the `name` label of the `workqueue_*` metrics).
pub const QUEUE_NAME: &str = "endpoint_slice";

/// The topology queue's name (internal: upstream's has none, so it has
/// no metrics).
pub const TOPOLOGY_QUEUE_NAME: &str = "endpoint_slice_topology";

/// Failed syncs of one Service before it is dropped (upstream
/// `maxRetries`: 1 s, 2 s, ... 1000 s between them).
pub const RETRIES: Retries = Retries::at_most(15);

/// Upstream `defaultSyncBackOff`.
pub const DEFAULT_SYNC_BACKOFF: Duration = Duration::from_secs(1);

/// Upstream `maxSyncBackOff`.
pub const MAX_SYNC_BACKOFF: Duration = Duration::from_secs(1000);

/// What the controller is configured with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// `--max-endpoints-per-slice`.
    pub max_endpoints_per_slice: usize,
    /// `--endpointslice-updates-batch-period`.
    pub updates_batch_period: Duration,
}

/// What the handlers and the workers share, behind one lock that nobody
/// holds across an await.
#[derive(Default)]
pub(super) struct State {
    /// Generations this controller wrote, deletions it expects.
    pub(super) tracker: EndpointSliceTracker,
    /// The last trigger times reported, per Service.
    pub(super) trigger_times: TriggerTimeTracker,
    /// The gauges' per-Service figures.
    pub(super) metrics_cache: MetricsCache,
    /// The zones' CPU shares and the hints allocated per Service.
    pub(super) topology: TopologyCache,
}

/// [`State`], shared.
#[derive(Clone)]
pub(super) struct Shared(Arc<Mutex<State>>);

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The EndpointSlice controller, ready to run once its caches sync.
pub struct EndpointSliceController {
    /// Keys (`namespace/name`) of Services to sync.
    queue: WorkQueue<String>,
    /// Read for their sync state.
    services: SharedInformer<Service>,
    /// See `services`.
    pods: SharedInformer<Pod>,
    /// See `services`.
    nodes: SharedInformer<Node>,
    /// See `services`.
    slices: SharedInformer<EndpointSlice>,
    /// The node changes that can move the zones' CPU shares (its one key).
    topology_queue: WorkQueue<String>,
    /// The handlers' registrations: workers start once all saw the lists.
    registrations: [HandlerRegistration; 4],
    /// What the workers run.
    syncer: Arc<Syncer>,
    /// What the topology queue's worker runs.
    topology_syncer: Arc<TopologySyncer>,
}

impl EndpointSliceController {
    /// Builds the controller on `parts`.
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(parts: Parts<'_>, settings: Settings, metrics: Option<EndpointSliceMetrics>) -> Self {
        let Parts { factory, client, recorder, queue_metrics } = parts;
        let limiter = MaxOfRateLimiter::new(vec![
            Box::new(ItemExponentialFailureRateLimiter::new(DEFAULT_SYNC_BACKOFF, MAX_SYNC_BACKOFF)),
            Box::new(BucketRateLimiter::new(10.0, 100)),
        ]);
        let queue = WorkQueue::new(QUEUE_NAME, limiter, queue_metrics);
        // Upstream's topology queue has no name, so no metrics.
        let topology_queue = WorkQueue::new(TOPOLOGY_QUEUE_NAME, default_controller_rate_limiter(), None);
        let services = factory.informer::<Service>();
        let pods = factory.informer::<Pod>();
        register_pod_label_index(&pods);
        let nodes = factory.informer::<Node>();
        let slices = factory.informer::<EndpointSlice>();
        let shared = Shared(Arc::new(Mutex::new(State {
            metrics_cache: MetricsCache::new(settings.max_endpoints_per_slice),
            ..State::default()
        })));
        let resync = Some(factory.default_resync());
        let registrations = [
            services.add_handler(Enqueue { queue: queue.clone() }, resync),
            pods.add_handler(
                ServicePodHandler {
                    queue: queue.clone(),
                    services: services.store(),
                    batch_period: settings.updates_batch_period,
                },
                resync,
            ),
            slices.add_handler(
                SliceHandler {
                    queue: queue.clone(),
                    shared: shared.clone(),
                    delay: settings.updates_batch_period.max(ENDPOINT_SLICE_CHANGE_MIN_SYNC_DELAY),
                },
                resync,
            ),
            nodes.add_handler(NodeHandler { topology_queue: topology_queue.clone() }, resync),
        ];
        let topology_syncer =
            Arc::new(TopologySyncer { nodes: nodes.store(), shared: shared.clone(), queue: queue.clone() });
        let syncer = Arc::new(Syncer {
            services: services.store(),
            pods: pods.store(),
            nodes: nodes.store(),
            slices: slices.store(),
            shared,
            client,
            recorder,
            metrics,
            max_endpoints_per_slice: settings.max_endpoints_per_slice,
        });
        Self { queue, services, pods, nodes, slices, topology_queue, registrations, syncer, topology_syncer }
    }
}

impl Controller for EndpointSliceController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let [services, pods, slices, nodes] = &self.registrations;
            let synced: Vec<&(dyn HasSynced + Sync)> =
                vec![&self.pods, &self.services, &self.slices, &self.nodes, services, pods, slices, nodes];
            if !cx.wait_for_caches(&synced, &[&self.queue, &self.topology_queue]).await {
                return;
            }
            let services = cx.pool(self.queue.clone(), self.syncer.clone(), cx.workers, RETRIES);
            let topology = cx.pool(self.topology_queue.clone(), self.topology_syncer.clone(), 1, Retries::FOREVER);
            futures::join!(services, topology);
        })
    }
}
