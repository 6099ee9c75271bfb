//! The endpoints controller's driver (upstream
//! `pkg/controller/endpoint/`; the decisions are
//! `kcm_controllers::endpoint`).
//!
//! It owns:
//! - the handlers: a Service added, updated or deleted queues its key; a
//!   pod added or deleted queues the Services selecting it, and a pod
//!   updated the Services its change concerns
//!   ([`services_to_update_on_pod_change`]), after
//!   `--endpoint-updates-batch-period` so that a burst of pod changes is one
//!   write; an Endpoints deleted queues its Service (to recreate it), and
//!   an Endpoints added or updated while its Service's sync waits for the
//!   cache to catch up (the stale tracker's `cache_moved`, not upstream's)
//!   queues it at once;
//! - at start, once the caches synced, every cached Endpoints but
//!   leader-election records is queued, so that the Endpoints of a Service
//!   deleted while no controller ran are deleted (upstream
//!   `checkLeftoverEndpoints`);
//! - the `endpoint` workqueue (upstream's default controller rate limiter,
//!   15 retries) and `--concurrent-endpoint-syncs` workers;
//! - the sync: the two trackers, the core's write through the
//!   controller's own client (`endpoint-controller`), and the
//!   `FailedToCreateEndpoint` / `FailedToUpdateEndpoint` Warning events of
//!   a failed write (component `endpoint-controller`).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::{Endpoints, ObjectReference, Service};
use kcm_controllers::endpoint::trackers::{StaleEndpointsTracker, TriggerTimeTracker};
use kcm_controllers::endpoint::{self as core, MAX_RETRIES, Write};
use kcm_objects::Pod;
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::events::{EventRecorder, EventType};
use kcm_runtime::informer::{Enqueue, EventHandler, HandlerRegistration, HasSynced, SharedInformer, Store, key_of};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kcm_runtime::workqueue::{WorkQueue, default_controller_rate_limiter};
use kube::Client;
use kube::api::{Api, DeleteParams, PostParams};

use super::api_errors::{code, error_message, namespace_terminating};
use super::service_pods::{ServicePodHandler, register_pod_label_index, selected_pods};
use crate::drivers::parts::{Identity, Parts};

/// How upstream names the controller.
pub const IDENTITY: Identity =
    Identity { name: "endpoints-controller", client: "endpoint-controller", events: "endpoint-controller" };

/// The workqueue's name (the `name` label of the `workqueue_*` metrics).
pub const QUEUE_NAME: &str = "endpoint";

/// The endpoints controller, ready to run once its caches sync.
pub struct EndpointController {
    /// Keys (`namespace/name`) of Services to sync.
    queue: WorkQueue<String>,
    /// Read for their sync state.
    services: SharedInformer<Service>,
    /// See `services`.
    pods: SharedInformer<Pod>,
    /// See `services`; also listed once at start for leftovers.
    endpoints: SharedInformer<Endpoints>,
    /// The handlers' registrations: workers start once all saw the lists.
    registrations: [HandlerRegistration; 3],
    /// What the workers run.
    syncer: Arc<Syncer>,
}

/// The per-Service sync.
struct Syncer {
    /// Cached Services.
    services: Store<Service>,
    /// Cached pods.
    pods: Store<Pod>,
    /// Cached Endpoints.
    endpoints: Store<Endpoints>,
    /// The controller's own client.
    client: Client,
    /// Failed writes' events.
    recorder: EventRecorder,
    /// What the controller remembers between syncs; held only while
    /// planning, never across a write.
    trackers: Arc<Mutex<Trackers>>,
}

/// The core's two trackers.
#[derive(Default)]
struct Trackers {
    /// Trigger times per Service.
    trigger: TriggerTimeTracker,
    /// Endpoints resourceVersions already replaced.
    stale: StaleEndpointsTracker,
}

// === impl EndpointController ===

impl EndpointController {
    /// Builds the controller on `parts`, reading the Service, Pod and
    /// Endpoints informers; pod changes are batched over `batch_period`.
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(parts: Parts<'_>, batch_period: Duration) -> Self {
        let Parts { factory, client, recorder, queue_metrics } = parts;
        let queue = WorkQueue::new(QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let services = factory.informer::<Service>();
        let pods = factory.informer::<Pod>();
        register_pod_label_index(&pods);
        let endpoints = factory.informer::<Endpoints>();
        let trackers = Arc::new(Mutex::default());
        // Upstream's handlers have no resync.
        let registrations = [
            services.add_handler(Enqueue { queue: queue.clone() }, None),
            pods.add_handler(
                ServicePodHandler { queue: queue.clone(), services: services.store(), batch_period },
                None,
            ),
            endpoints.add_handler(EndpointsHandler { queue: queue.clone(), trackers: trackers.clone() }, None),
        ];
        let syncer = Arc::new(Syncer {
            services: services.store(),
            pods: pods.store(),
            endpoints: endpoints.store(),
            client,
            recorder,
            trackers,
        });
        Self { queue, services, pods, endpoints, registrations, syncer }
    }
}

impl Controller for EndpointController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let [s, p, e] = &self.registrations;
            let synced: Vec<&(dyn HasSynced + Sync)> = vec![&self.services, &self.pods, &self.endpoints, s, p, e];
            if !cx.wait_for_caches(&synced, &[&self.queue]).await {
                return;
            }
            for endpoints in self.endpoints.store().list().iter().filter(|ep| core::is_leftover_candidate(ep)) {
                self.queue.add(key_of(endpoints.as_ref()));
            }
            cx.pool(self.queue.clone(), self.syncer.clone(), cx.workers, Retries::at_most(MAX_RETRIES)).await;
        })
    }
}

// === handlers ===

/// An Endpoints deleted queues its Service; one added or updated queues it
/// when its sync waits for the cache.
struct EndpointsHandler {
    queue: WorkQueue<String>,
    trackers: Arc<Mutex<Trackers>>,
}

impl EndpointsHandler {
    fn queue_if_waiting(&self, endpoints: &Endpoints) {
        let key = key_of(endpoints);
        if lock(&self.trackers).stale.cache_moved(&key) {
            self.queue.add(key);
        }
    }
}

impl EventHandler<Endpoints> for EndpointsHandler {
    fn on_add(&self, endpoints: &Arc<Endpoints>) {
        self.queue_if_waiting(endpoints);
    }

    fn on_update(&self, _old: &Arc<Endpoints>, new: &Arc<Endpoints>) {
        self.queue_if_waiting(new);
    }

    fn on_delete(&self, endpoints: &Arc<Endpoints>) {
        self.queue.add(key_of(endpoints.as_ref()));
    }
}

/// The trackers, through a poisoned lock too.
fn lock(trackers: &Mutex<Trackers>) -> MutexGuard<'_, Trackers> {
    trackers.lock().unwrap_or_else(PoisonError::into_inner)
}

// === impl Syncer ===

impl Reconcile for Syncer {
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        self.sync_service(key).await?;
        Ok(Next::Done)
    }
}

/// Why a sync failed.
#[derive(Debug, thiserror::Error)]
enum Error {
    /// The cached Endpoints is one this controller already replaced.
    #[error(
        "endpoints informer cache is out of date, resource version {version} already processed for endpoints {key}"
    )]
    Stale {
        /// Its resourceVersion.
        version: String,
        /// The Service's key.
        key: String,
    },
    /// A write failed.
    #[error(transparent)]
    Api(#[from] kube::Error),
}

impl Syncer {
    fn trackers(&self) -> MutexGuard<'_, Trackers> {
        lock(&self.trackers)
    }

    /// Upstream `syncService`.
    async fn sync_service(&self, key: &str) -> Result<(), SyncError> {
        let Some((namespace, name)) = key.split_once('/') else {
            tracing::error!(%key, "not a namespace/name key, dropped");
            return Ok(());
        };
        let api: Api<Endpoints> = Api::namespaced(self.client.clone(), namespace);
        let service = self.services.get(key);
        let pods = service.as_deref().map(|s| selected_pods(&self.pods, s)).unwrap_or_default();
        let refs: Vec<&Pod> = pods.iter().map(Arc::as_ref).collect();
        let (write, current) = {
            let mut trackers = self.trackers();
            // Read under the lock the Endpoints handler takes after the
            // cache moves, so a refusal is never missed by the event that
            // would queue it again.
            let current = self.endpoints.get(key);
            match service.as_deref() {
                None => {
                    trackers.trigger.delete_service(key);
                    trackers.stale.delete(key);
                    (Write::Delete, current)
                }
                Some(svc) => {
                    let Some(selected) = core::selected(svc, &refs) else { return Ok(()) };
                    let trigger = trackers.trigger.compute(key, svc, &selected);
                    if let Some(cached) = current.as_deref().filter(|ep| trackers.stale.is_stale(key, ep)) {
                        trackers.stale.wait_for_cache(key);
                        let version = cached.metadata.resource_version.clone().unwrap_or_default();
                        return Err(Error::Stale { version, key: key.to_owned() }.into());
                    }
                    (core::sync(Some(svc), &selected, current.as_deref(), trigger), current)
                }
            }
        };
        match write {
            Write::None => Ok(()),
            Write::Delete => match api.delete(name, &DeleteParams::default()).await {
                Err(e) if code(&e) != Some(404) => Err(Error::Api(e).into()),
                _ => Ok(()),
            },
            Write::Create(endpoints) => match api.create(&PostParams::default(), &endpoints).await {
                Ok(_) => Ok(()),
                // The namespace is going: creates go on failing; drop the key.
                Err(e) if code(&e) == Some(403) && namespace_terminating(&e) => Ok(()),
                Err(e) => Err(self.failed(true, namespace, name, &endpoints, e)),
            },
            Write::Update(endpoints) => match api.replace(name, &PostParams::default(), &endpoints).await {
                Ok(updated) => {
                    if let Some(cached) = current.as_deref()
                        && updated.metadata.resource_version != cached.metadata.resource_version
                    {
                        self.trackers().stale.stale(key, cached);
                    }
                    Ok(())
                }
                Err(e) => Err(self.failed(false, namespace, name, &endpoints, e)),
            },
        }
    }

    /// Records the Warning event of a failed write and answers its error.
    fn failed(&self, create: bool, namespace: &str, name: &str, endpoints: &Endpoints, e: kube::Error) -> SyncError {
        let (reason, message) = core::failed_write_event(create, namespace, name, &error_message(&e));
        let regarding = ObjectReference {
            api_version: Some("v1".to_owned()),
            kind: Some("Endpoints".to_owned()),
            namespace: Some(namespace.to_owned()),
            name: Some(name.to_owned()),
            uid: endpoints.metadata.uid.clone(),
            resource_version: endpoints.metadata.resource_version.clone(),
            ..ObjectReference::default()
        };
        self.recorder.event(&regarding, EventType::Warning, reason, message);
        Error::Api(e).into()
    }
}
