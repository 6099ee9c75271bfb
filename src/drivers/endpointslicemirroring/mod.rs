//! The EndpointSlice mirroring controller's driver (upstream
//! `pkg/controller/endpointslicemirroring/`; the decisions are
//! `kcm_controllers::endpointslicemirroring`).
//!
//! It owns:
//! - the handlers: an Endpoints added or deleted is queued when it is to be
//!   mirrored, an updated one when either version is; a Service added or
//!   deleted queues its Endpoints when it has no selector, an updated one
//!   when it gained or lost its selector; a slice of this controller's
//!   (added, updated, or relabelled to or from it) queues its Endpoints
//!   after `--mirroring-endpointslice-updates-batch-period`, unless it is
//!   at a generation this controller wrote itself, and a deleted one unless
//!   this controller deleted it;
//! - the `endpoint_slice_mirroring` workqueue (upstream's limiter for it:
//!   per key 1 s doubling to 100 s, with the overall 10 qps bucket; 15
//!   retries) and `--mirroring-concurrent-service-endpoint-syncs` workers;
//! - the sync: the core's deletes, creates and updates through the
//!   controller's own client (`endpointslicemirroring-controller`), the
//!   slice tracker kept in step with them, Warning events on the Endpoints
//!   for skipped addresses (component `endpoint-slice-mirroring-controller`),
//!   and the [`metrics`].
//!
//! The handlers are `handlers.rs`.

mod handlers;
pub mod metrics;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::{Endpoints, ObjectReference, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kcm_controllers::endpointslicemirroring::metrics_cache::MetricsCache;
use kcm_controllers::endpointslicemirroring::reconciler::Writes;
use kcm_controllers::endpointslicemirroring::tracker::EndpointSliceTracker;
use kcm_controllers::endpointslicemirroring::{self as core, MAX_RETRIES, Sync as Decision};
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::events::{EventRecorder, EventType};
use kcm_runtime::informer::{HandlerRegistration, HasSynced, SharedInformer, Store, key_of};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kcm_runtime::workqueue::{BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter, WorkQueue};
use kube::api::{Api, DeleteParams, PostParams};
use kube::{Client, ResourceExt};
pub use metrics::MirroringMetrics;

use self::handlers::{EndpointsHandler, ServiceHandler, SliceHandler};
use super::api_errors::{error_message, namespace_terminating};
use crate::drivers::parts::{Identity, Parts};

/// How upstream names the controller.
pub const IDENTITY: Identity = Identity {
    name: "endpointslice-mirroring-controller",
    client: "endpointslicemirroring-controller",
    events: "endpoint-slice-mirroring-controller",
};

/// The workqueue's name (the `name` label of the `workqueue_*` metrics).
pub const QUEUE_NAME: &str = "endpoint_slice_mirroring";

/// What the flags set.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// `--mirroring-max-endpoints-per-subset`.
    pub max_endpoints_per_subset: usize,
    /// `--mirroring-endpointslice-updates-batch-period`.
    pub batch_period: Duration,
}

/// The mirroring controller, ready to run once its caches sync.
pub struct EndpointSliceMirroringController {
    /// Keys (`namespace/name`) of Endpoints to sync.
    queue: WorkQueue<String>,
    /// Read for their sync state.
    endpoints: SharedInformer<Endpoints>,
    /// See `endpoints`.
    slices: SharedInformer<EndpointSlice>,
    /// See `endpoints`.
    services: SharedInformer<Service>,
    /// The handlers' registrations: workers start once all saw the lists.
    registrations: [HandlerRegistration; 3],
    /// What the workers run.
    syncer: Arc<Syncer>,
}

/// The tracker, shared by the slice handler and the workers; held only
/// to read or record, never across a write.
pub(super) type SharedTracker = Arc<Mutex<EndpointSliceTracker>>;

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The per-Endpoints sync.
struct Syncer {
    endpoints: Store<Endpoints>,
    slices: Store<EndpointSlice>,
    services: Store<Service>,
    client: Client,
    recorder: EventRecorder,
    tracker: SharedTracker,
    /// The numbers behind the gauges.
    cache: Mutex<MetricsCache>,
    /// `None` in tests that register none.
    metrics: Option<MirroringMetrics>,
    max_per_subset: usize,
}

// === impl EndpointSliceMirroringController ===

impl EndpointSliceMirroringController {
    /// Builds the controller on `parts`, reading the Endpoints,
    /// EndpointSlice and Service informers.
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(parts: Parts<'_>, settings: Settings, metrics: Option<MirroringMetrics>) -> Self {
        let Parts { factory, client, recorder, queue_metrics } = parts;
        let limiter = MaxOfRateLimiter::new(vec![
            Box::new(ItemExponentialFailureRateLimiter::new(Duration::from_secs(1), Duration::from_secs(100))),
            Box::new(BucketRateLimiter::new(10.0, 100)),
        ]);
        let queue = WorkQueue::new(QUEUE_NAME, limiter, queue_metrics);
        let endpoints = factory.informer::<Endpoints>();
        let slices = factory.informer::<EndpointSlice>();
        let services = factory.informer::<Service>();
        let tracker = SharedTracker::default();
        let slice_handler =
            SliceHandler { queue: queue.clone(), tracker: tracker.clone(), batch_period: settings.batch_period };
        // Upstream's handlers have no resync.
        let registrations = [
            endpoints.add_handler(EndpointsHandler { queue: queue.clone() }, None),
            slices.add_handler(slice_handler, None),
            services.add_handler(ServiceHandler { queue: queue.clone() }, None),
        ];
        let max_per_subset = settings.max_endpoints_per_subset;
        let syncer = Arc::new(Syncer {
            endpoints: endpoints.store(),
            slices: slices.store(),
            services: services.store(),
            client,
            recorder,
            tracker,
            cache: Mutex::new(MetricsCache::new(max_per_subset)),
            metrics,
            max_per_subset,
        });
        Self { queue, endpoints, slices, services, registrations, syncer }
    }
}

impl Controller for EndpointSliceMirroringController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let [e, s, v] = &self.registrations;
            let synced: Vec<&(dyn HasSynced + Sync)> = vec![&self.endpoints, &self.slices, &self.services, e, s, v];
            cx.run_when_synced(&synced, self.queue.clone(), self.syncer.clone(), Retries::at_most(MAX_RETRIES)).await;
        })
    }
}

// === impl Syncer ===

impl Reconcile for Syncer {
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let start = Instant::now();
        let result = self.sync_endpoints(key).await;
        if let Some(metrics) = &self.metrics {
            metrics.record_duration(start.elapsed());
        }
        result?;
        Ok(Next::Done)
    }
}

impl Syncer {
    /// Upstream `syncEndpoints`.
    async fn sync_endpoints(&self, key: &str) -> Result<(), SyncError> {
        let Some((namespace, name)) = key.split_once('/') else {
            tracing::error!(%key, "not a namespace/name key, dropped");
            return Ok(());
        };
        let endpoints = self.endpoints.get(key);
        let service = self.services.get(key);
        let cached = self.slices.list_namespace(namespace);
        let refs: Vec<&EndpointSlice> = cached.iter().map(Arc::as_ref).collect();
        let mirrored = core::mirrored_for(&refs, namespace, name);
        let decision = {
            let tracker = lock(&self.tracker);
            core::sync(key, endpoints.as_deref(), service.as_deref(), &mirrored, &tracker, self.max_per_subset)
        };
        let api: Api<EndpointSlice> = Api::namespaced(self.client.clone(), namespace);
        match decision {
            Decision::Stale => Err("EndpointSlice informer cache is out of date".into()),
            Decision::DeleteAll(slices) => self.delete_all(&api, key, &slices).await,
            Decision::Mirror { events, writes, skipped } => {
                let Some(endpoints) = endpoints else { return Ok(()) };
                self.record(&endpoints, events);
                if let Some(metrics) = &self.metrics {
                    metrics.record_sync(writes.totals, skipped);
                    metrics.set_gauges(lock(&self.cache).update(key, writes.efficiency.clone()));
                }
                self.finalize(&api, &endpoints, writes).await
            }
        }
    }

    /// Upstream `deleteMirroredSlices`: every slice, then the first error.
    async fn delete_all(&self, api: &Api<EndpointSlice>, key: &str, slices: &[EndpointSlice]) -> Result<(), SyncError> {
        lock(&self.tracker).delete_service(key);
        let gauges = lock(&self.cache).delete(key);
        if let Some(metrics) = &self.metrics {
            metrics.set_gauges(gauges);
        }
        let mut errors = Vec::new();
        for slice in slices {
            if let Err(e) = api.delete(&slice.name_any(), &DeleteParams::default()).await {
                errors.push(e);
            }
        }
        match errors.first() {
            None => Ok(()),
            Some(first) => Err(format!(
                "error(s) deleting {}/{} EndpointSlices for {key} Endpoints, including: {}",
                errors.len(),
                slices.len(),
                error_message(first)
            )
            .into()),
        }
    }

    /// Upstream `finalize`: creates, updates, deletes, stopping at the first
    /// failure; the tracker records each.
    async fn finalize(&self, api: &Api<EndpointSlice>, endpoints: &Endpoints, writes: Writes) -> Result<(), SyncError> {
        let key = key_of(endpoints);
        for slice in &writes.create {
            match api.create(&PostParams::default(), slice).await {
                Ok(created) => self.written(&created, "create"),
                // The namespace is going: creates go on failing; drop the key.
                Err(e) if namespace_terminating(&e) => return Ok(()),
                Err(e) => {
                    return Err(
                        format!("failed to create EndpointSlice for Endpoints {key}: {}", error_message(&e)).into()
                    );
                }
            }
        }
        for slice in &writes.update {
            let name = slice.name_any();
            match api.replace(&name, &PostParams::default(), slice).await {
                Ok(updated) => self.written(&updated, "update"),
                Err(e) => {
                    let message = error_message(&e);
                    return Err(format!("failed to update {name} EndpointSlice for Endpoints {key}: {message}").into());
                }
            }
        }
        for slice in &writes.delete {
            let name = slice.name_any();
            match api.delete(&name, &DeleteParams::default()).await {
                Ok(_) => {
                    lock(&self.tracker).expect_deletion(slice);
                    self.change("delete");
                }
                Err(e) => {
                    let message = error_message(&e);
                    return Err(format!("failed to delete {name} EndpointSlice for Endpoints {key}: {message}").into());
                }
            }
        }
        Ok(())
    }

    fn written(&self, slice: &EndpointSlice, operation: &str) {
        lock(&self.tracker).update(slice);
        self.change(operation);
    }

    fn change(&self, operation: &str) {
        if let Some(metrics) = &self.metrics {
            metrics.change(operation);
        }
    }

    /// The core's Warning events, on the Endpoints.
    fn record(&self, endpoints: &Endpoints, events: Vec<(&'static str, String)>) {
        let regarding = ObjectReference {
            api_version: Some("v1".to_owned()),
            kind: Some("Endpoints".to_owned()),
            namespace: endpoints.metadata.namespace.clone(),
            name: endpoints.metadata.name.clone(),
            uid: endpoints.metadata.uid.clone(),
            resource_version: endpoints.metadata.resource_version.clone(),
            ..ObjectReference::default()
        };
        for (reason, message) in events {
            self.recorder.event(&regarding, EventType::Warning, reason, message);
        }
    }
}
