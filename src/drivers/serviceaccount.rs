//! The ServiceAccounts controller's driver (upstream
//! `pkg/controller/serviceaccount/serviceaccounts_controller.go`; the
//! decision is `kcm_controllers::serviceaccount`).
//!
//! It owns:
//! - the handlers: every Namespace add and update queues the namespace,
//!   every ServiceAccount delete queues its namespace, as upstream's
//!   (whose handlers have no periodic resync: `ServiceAccountResync` and
//!   `NamespaceResync` are zero by default);
//! - the `serviceaccount` workqueue (upstream's default controller rate
//!   limiter, retried forever) and its one worker (upstream runs one; it
//!   has no flag);
//! - the sync: the core's ServiceAccounts created through the controller's
//!   own client (`service-account-controller`), AlreadyExists counted as
//!   done and a namespace that is terminating ignored.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use kcm_controllers::serviceaccount::{self as core, DEFAULT_SERVICE_ACCOUNT};
use kube::api::{Api, PostParams};
use kube::{Client, ResourceExt};

use super::api_errors::{namespace_terminating, reason};
use super::namespace_keys::NamespaceHandler;
use futures::future::BoxFuture;
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::informer::{
    EventHandler, HandlerRegistration, HasSynced, SharedInformer, SharedInformerFactory, Store,
};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kcm_runtime::workqueue::{QueueMetrics, WorkQueue, default_controller_rate_limiter};

/// Upstream's controller name: metric label, log field.
pub const CONTROLLER_NAME: &str = "serviceaccount-controller";

/// The user-agent suffix of its client (upstream's `ClientOrDie` name).
pub const CLIENT_NAME: &str = "service-account-controller";

/// The workqueue's name (the `name` label of the `workqueue_*` metrics).
pub const QUEUE_NAME: &str = "serviceaccount";

/// Workers: upstream starts one, with no flag.
pub const WORKERS: usize = 1;

/// The ServiceAccounts every namespace gets.
const ENSURED: [&str; 1] = [DEFAULT_SERVICE_ACCOUNT];

/// The ServiceAccounts controller, ready to run once its caches sync.
pub struct ServiceAccountsController {
    /// Names of namespaces to sync.
    queue: WorkQueue<String>,
    /// Read for their sync state.
    namespaces: SharedInformer<Namespace>,
    /// See `namespaces`.
    service_accounts: SharedInformer<ServiceAccount>,
    /// The handlers' registrations: workers start once both saw the lists.
    registrations: [HandlerRegistration; 2],
    /// What the worker runs.
    syncer: Arc<Syncer>,
}

/// The per-namespace sync.
struct Syncer {
    /// Cached namespaces.
    namespaces: Store<Namespace>,
    /// Cached ServiceAccounts (all namespaces).
    service_accounts: Store<ServiceAccount>,
    /// The controller's own client.
    client: Client,
}

// === impl ServiceAccountsController ===

impl ServiceAccountsController {
    /// Builds the controller on `factory`'s Namespace and ServiceAccount
    /// informers, writing through `client`.
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(factory: &SharedInformerFactory, client: Client, queue_metrics: Option<&QueueMetrics>) -> Self {
        let queue = WorkQueue::new(QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let namespaces = factory.informer::<Namespace>();
        let service_accounts = factory.informer::<ServiceAccount>();
        let registrations = [
            namespaces.add_handler(NamespaceHandler { queue: queue.clone(), on_update: |_| true }, None),
            service_accounts.add_handler(ServiceAccountHandler { queue: queue.clone() }, None),
        ];
        let syncer =
            Arc::new(Syncer { namespaces: namespaces.store(), service_accounts: service_accounts.store(), client });
        Self { queue, namespaces, service_accounts, registrations, syncer }
    }
}

impl Controller for ServiceAccountsController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let [ns, sa] = &self.registrations;
            let synced: Vec<&(dyn HasSynced + Sync)> = vec![&self.namespaces, &self.service_accounts, ns, sa];
            cx.run_when_synced(&synced, self.queue.clone(), self.syncer.clone(), Retries::FOREVER).await;
        })
    }
}

// === handlers ===

/// ServiceAccount deletes queue their namespace.
struct ServiceAccountHandler {
    queue: WorkQueue<String>,
}

impl EventHandler<ServiceAccount> for ServiceAccountHandler {
    fn on_add(&self, _sa: &Arc<ServiceAccount>) {}

    fn on_update(&self, _old: &Arc<ServiceAccount>, _new: &Arc<ServiceAccount>) {}

    fn on_delete(&self, sa: &Arc<ServiceAccount>) {
        if let Some(ns) = sa.namespace() {
            self.queue.add(ns);
        }
    }
}

// === impl Syncer ===

impl Reconcile for Syncer {
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let namespace = self.namespaces.get(key);
        let exists = |name: &str| self.service_accounts.get_namespaced(Some(key), name).is_some();
        for account in core::sync(namespace.as_deref(), &ENSURED, exists) {
            let api: Api<ServiceAccount> = Api::namespaced(self.client.clone(), key);
            match api.create(&PostParams::default(), &account).await {
                Ok(_) => tracing::debug!(namespace = key, name = account.name_any(), "created ServiceAccount"),
                Err(e) if reason(&e) == Some("AlreadyExists") || namespace_terminating(&e) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(Next::Done)
    }
}
