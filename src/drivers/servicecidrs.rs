//! The ServiceCIDR controller's driver (upstream
//! `pkg/controller/servicecidrs/servicecidrs_controller.go`, started by
//! `cmd/kube-controller-manager/app/networking.go`; the decisions are
//! `kcm_controllers::servicecidrs`).
//!
//! It owns:
//! - the handlers on the shared networking.k8s.io/v1 ServiceCIDR and
//!   IPAddress informers: a ServiceCIDR added queues itself and every
//!   ServiceCIDR it overlaps, one updated or deleted queues itself; an
//!   IPAddress of the API server's allocator added or deleted queues the
//!   ServiceCIDRs holding it (upstream has no IPAddress update handler);
//! - the `ipaddresses` workqueue (upstream's name; its default controller
//!   rate limiter, a key dropped after 15 failed syncs) and its 5 workers
//!   (upstream's fixed count; it has no flag);
//! - the sync: the core's plan written through the controller's own
//!   client (`service-cidrs-controller`): the finalizer added or removed
//!   by strategic merge patch (a ServiceCIDR gone meanwhile is no error),
//!   the `Ready` condition by server-side apply of the status with field
//!   manager `service-cidr-controller`, forced, as upstream's
//!   `ApplyStatus`; a `Ready` `True` that cannot be written is a Warning
//!   event `KubernetesServiceCIDRError` (component
//!   `service-cidr-controller`) and a retry;
//! - upstream's log lines, with its messages.
//!
//! Upstream registers no metrics of its own: the `workqueue_*` series of
//! `ipaddresses` are its metrics.

use std::sync::Arc;
use std::time::Instant;

use futures::future::BoxFuture;
use jiff::Timestamp;
use k8s_openapi::api::networking::v1::{IPAddress, ServiceCIDR};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kcm_controllers::servicecidrs::{self as core, Plan, Safe};
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::events::{EventRecorder, EventType};
use kcm_runtime::informer::{EventHandler, HandlerRegistration, HasSynced, SharedInformer, Store};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kcm_runtime::workqueue::{WorkQueue, default_controller_rate_limiter};
use kube::api::{Api, Patch, PatchParams};
use kube::{Client, Resource};
use serde_json::json;

use super::api_errors::code;
use super::parts::{Identity, Parts};

/// Upstream's names: `service-cidr-controller` (`--controllers`, logs,
/// the field manager and the events' component), its client
/// `service-cidrs-controller` (whose `system:controller:` role the API
/// server bootstraps).
pub const IDENTITY: Identity =
    Identity { name: "service-cidr-controller", client: "service-cidrs-controller", events: "service-cidr-controller" };

/// The workqueue's name, upstream's (the `name` label of the
/// `workqueue_*` metrics).
pub const QUEUE_NAME: &str = "ipaddresses";

/// Workers: upstream runs 5, with no flag.
pub const WORKERS: usize = 5;

/// Failed syncs of one ServiceCIDR before it is dropped (upstream
/// `maxRetries`).
pub const MAX_RETRIES: u32 = 15;

/// The ServiceCIDR controller, ready to run once its caches sync.
pub struct ServiceCidrController {
    /// Names of ServiceCIDRs to sync.
    queue: WorkQueue<String>,
    /// The shared ServiceCIDR informer, for its sync state.
    cidrs: SharedInformer<ServiceCIDR>,
    /// See `cidrs`.
    ips: SharedInformer<IPAddress>,
    /// The handlers' registrations: workers start once both saw the lists.
    registrations: [HandlerRegistration; 2],
    /// What the workers run.
    syncer: Arc<Syncer>,
}

/// The per-ServiceCIDR sync, shared by the workers.
struct Syncer {
    /// Cached ServiceCIDRs.
    cidrs: Store<ServiceCIDR>,
    /// Cached IPAddresses.
    ips: Store<IPAddress>,
    /// The controller's own client.
    client: Client,
    /// Records the status write's Warning.
    recorder: EventRecorder,
}

// === impl ServiceCidrController ===

impl ServiceCidrController {
    /// Builds the controller on the shared ServiceCIDR and IPAddress
    /// informers of `parts` and registers its handlers (before the
    /// factory starts).
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(parts: Parts<'_>) -> Self {
        let Parts { factory, client, recorder, queue_metrics } = parts;
        let queue = WorkQueue::new(QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let cidrs = factory.informer::<ServiceCIDR>();
        let ips = factory.informer::<IPAddress>();
        let resync = Some(factory.default_resync());
        let registrations = [
            cidrs.add_handler(CidrHandler { queue: queue.clone(), cidrs: cidrs.store() }, resync),
            ips.add_handler(IpHandler { queue: queue.clone(), cidrs: cidrs.store() }, resync),
        ];
        let syncer = Arc::new(Syncer { cidrs: cidrs.store(), ips: ips.store(), client, recorder });
        Self { queue, cidrs, ips, registrations, syncer }
    }
}

impl Controller for ServiceCidrController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let [on_cidrs, on_ips] = &self.registrations;
            let synced: [&(dyn HasSynced + Sync); 4] = [&self.cidrs, &self.ips, on_cidrs, on_ips];
            let retries = Retries::at_most(MAX_RETRIES);
            cx.run_when_synced(&synced, self.queue.clone(), self.syncer.clone(), retries).await;
        })
    }
}

// === handlers ===

/// Upstream `addServiceCIDR`, `updateServiceCIDR`, `deleteServiceCIDR`.
struct CidrHandler {
    queue: WorkQueue<String>,
    cidrs: Store<ServiceCIDR>,
}

impl CidrHandler {
    fn enqueue(&self, cidr: &ServiceCIDR) {
        if let Some(name) = &cidr.metadata.name {
            self.queue.add(name.clone());
        }
    }
}

impl EventHandler<ServiceCIDR> for CidrHandler {
    fn on_add(&self, cidr: &Arc<ServiceCIDR>) {
        self.enqueue(cidr);
        core::overlapping(cidr, &self.cidrs.list()).into_iter().for_each(|name| self.queue.add(name));
    }

    fn on_update(&self, _old: &Arc<ServiceCIDR>, new: &Arc<ServiceCIDR>) {
        self.enqueue(new);
    }

    fn on_delete(&self, cidr: &Arc<ServiceCIDR>) {
        self.enqueue(cidr);
    }
}

/// Upstream `addIPAddress` and `deleteIPAddress`: the ServiceCIDRs it may
/// block, or release.
struct IpHandler {
    queue: WorkQueue<String>,
    cidrs: Store<ServiceCIDR>,
}

impl IpHandler {
    fn enqueue(&self, ip: &IPAddress) {
        core::containing(ip, &self.cidrs.list()).into_iter().for_each(|name| self.queue.add(name));
    }
}

impl EventHandler<IPAddress> for IpHandler {
    fn on_add(&self, ip: &Arc<IPAddress>) {
        self.enqueue(ip);
    }

    fn on_update(&self, _old: &Arc<IPAddress>, _new: &Arc<IPAddress>) {}

    fn on_delete(&self, ip: &Arc<IPAddress>) {
        self.enqueue(ip);
    }
}

// === impl Syncer ===

impl Reconcile for Syncer {
    /// Upstream `sync`.
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let start = Instant::now();
        tracing::debug!(service_cidr = key, "syncing ServiceCIDR");
        let result = self.sync_cidr(key).await;
        tracing::debug!(service_cidr = key, elapsed = ?start.elapsed(), "Finished syncing ServiceCIDR");
        result
    }
}

impl Syncer {
    async fn sync_cidr(&self, key: &str) -> Result<Next, SyncError> {
        let Some(cidr) = self.cidrs.get(key) else {
            tracing::debug!(service_cidr = key, "ServiceCIDR no longer exist");
            return Ok(Next::Done);
        };
        match core::sync(&cidr, &self.cidrs.list(), &self.ips.list(), Timestamp::now()) {
            Plan::Serve { add_finalizer, ready } => {
                if add_finalizer {
                    self.patch_finalizers(key, json!({"metadata": {"finalizers": [core::FINALIZER]}})).await?;
                    tracing::debug!(service_cidr = key, "Added protection finalizer to ServiceCIDR");
                }
                if let Err(error) = self.update_condition(key, ready).await {
                    tracing::info!(%error, "error updating default ServiceCIDR status");
                    let regarding = cidr.object_ref(&());
                    let (reason, message) = (core::STATUS_ERROR_REASON, core::STATUS_ERROR_MESSAGE);
                    self.recorder.event(&regarding, EventType::Warning, reason, message);
                    return Err(error.into());
                }
                Ok(Next::Done)
            }
            Plan::Hold { blocked_by, terminating } => {
                tracing::info!(ip_address = %blocked_by, "Deleting ServiceCIDR blocked by IP address");
                self.update_condition(key, terminating).await?;
                Ok(Next::Done)
            }
            Plan::Wait { verdict, after } => {
                log_verdict(key, verdict);
                Ok(Next::After(after))
            }
            Plan::Release { verdict, remove_finalizer } => {
                log_verdict(key, verdict);
                if remove_finalizer {
                    let patch = json!({"metadata": {"$deleteFromPrimitiveList/finalizers": [core::FINALIZER]}});
                    self.patch_finalizers(key, patch).await?;
                    tracing::debug!(service_cidr = key, "Removed protection finalizer from ServiceCIDRs");
                }
                Ok(Next::Done)
            }
        }
    }

    /// Upstream's finalizer patches: a ServiceCIDR gone meanwhile is done.
    async fn patch_finalizers(&self, name: &str, patch: serde_json::Value) -> Result<(), kube::Error> {
        let api: Api<ServiceCIDR> = Api::all(self.client.clone());
        match api.patch(name, &PatchParams::default(), &Patch::Strategic(patch)).await {
            Err(e) if code(&e) == Some(404) => Ok(()),
            result => result.map(drop),
        }
    }

    /// Upstream `updateConditionIfNeeded`: `None` is already up to date;
    /// otherwise the condition applied to the status, forced.
    async fn update_condition(&self, name: &str, condition: Option<Condition>) -> Result<(), kube::Error> {
        let Some(condition) = condition else {
            tracing::debug!(
                service_cidr = name,
                condition_type = core::CONDITION_READY,
                "ServiceCIDR condition already up to date"
            );
            return Ok(());
        };
        tracing::debug!(
            service_cidr = name,
            condition_type = %condition.type_,
            new_status = %condition.status,
            new_reason = %condition.reason,
            "Updating ServiceCIDR condition"
        );
        let apply = json!({
            "apiVersion": "networking.k8s.io/v1",
            "kind": "ServiceCIDR",
            "metadata": {"name": name},
            "status": {"conditions": [condition]},
        });
        let api: Api<ServiceCIDR> = Api::all(self.client.clone());
        let params = PatchParams::apply(IDENTITY.name).force();
        api.patch_status(name, &params, &Patch::Apply(&apply)).await.map(drop)
    }
}

/// Upstream's log line of a deleted ServiceCIDR found safe to go.
fn log_verdict(name: &str, verdict: Safe) {
    match verdict {
        Safe::Contained => tracing::info!(service_cidr = name, "Deleting ServiceCIDR contained in other ServiceCIDR"),
        Safe::NoOrphans => tracing::info!(service_cidr = name, "Deleting ServiceCIDR no longer have orphan IPs"),
    }
}
