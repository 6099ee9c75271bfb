//! The ClusterRole aggregation controller's driver (upstream
//! `pkg/controller/clusterroleaggregation/`; the merge is
//! `kcm_controllers::clusterroleaggregation`).
//!
//! It owns:
//! - the handler: any ClusterRole add, update or delete queues every
//!   ClusterRole with an `aggregationRule` (upstream keeps no dependency
//!   graph: the roles are few);
//! - the `ClusterRoleAggregator` workqueue (upstream's default controller
//!   rate limiter, retried forever) and its five workers (upstream's fixed
//!   number; it has no flag);
//! - the write, as upstream's: a server-side apply of the rules alone,
//!   forced, as field manager `clusterrole-aggregation-controller`; where
//!   the API server answers 415 (no server-side apply, as kube-sim),
//!   upstream falls back to an update of its cached role, and kcm-rs to a
//!   JSON merge patch of `rules` guarded by the cached resourceVersion: the
//!   same optimistic write, which cannot drop a field kcm-rs's types do not
//!   know.

use std::sync::Arc;

use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule};
use kcm_controllers::clusterroleaggregation::{self as core, FIELD_MANAGER};
use kube::api::{Api, Patch, PatchParams};
use kube::{Client, ResourceExt};
use serde_json::json;

use super::api_errors::code;
use futures::future::BoxFuture;
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::informer::{
    EventHandler, HandlerRegistration, HasSynced, SharedInformer, SharedInformerFactory, Store,
};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kcm_runtime::workqueue::{QueueMetrics, WorkQueue, default_controller_rate_limiter};

/// Upstream's controller name: metric label, log field, and the
/// user-agent suffix of its client.
pub const CONTROLLER_NAME: &str = "clusterrole-aggregation-controller";

/// The workqueue's name (the `name` label of the `workqueue_*` metrics).
pub const QUEUE_NAME: &str = "ClusterRoleAggregator";

/// Workers: upstream starts five, with no flag.
pub const WORKERS: usize = 5;

/// The HTTP code of an API server that does not serve server-side apply.
const UNSUPPORTED_MEDIA_TYPE: u16 = 415;

/// The aggregation controller, ready to run once its cache syncs.
pub struct ClusterRoleAggregationController {
    /// Names of aggregating ClusterRoles to sync.
    queue: WorkQueue<String>,
    /// Read for its sync state.
    cluster_roles: SharedInformer<ClusterRole>,
    /// The handler's registration: workers start once it saw the list.
    registration: HandlerRegistration,
    /// What the workers run.
    syncer: Arc<Syncer>,
}

/// The per-role sync.
struct Syncer {
    /// Cached ClusterRoles.
    cluster_roles: Store<ClusterRole>,
    /// The controller's own client.
    client: Client,
}

// === impl ClusterRoleAggregationController ===

impl ClusterRoleAggregationController {
    /// Builds the controller on `factory`'s ClusterRole informer, writing
    /// through `client`.
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(factory: &SharedInformerFactory, client: Client, queue_metrics: Option<&QueueMetrics>) -> Self {
        let queue = WorkQueue::new(QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let cluster_roles = factory.informer::<ClusterRole>();
        let handler = RoleHandler { queue: queue.clone(), cluster_roles: cluster_roles.store() };
        let registration = cluster_roles.add_handler(handler, Some(factory.default_resync()));
        let syncer = Arc::new(Syncer { cluster_roles: cluster_roles.store(), client });
        Self { queue, cluster_roles, registration, syncer }
    }
}

impl Controller for ClusterRoleAggregationController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let synced: Vec<&(dyn HasSynced + Sync)> = vec![&self.cluster_roles, &self.registration];
            cx.run_when_synced(&synced, self.queue.clone(), self.syncer.clone(), Retries::FOREVER).await;
        })
    }
}

// === handlers ===

/// Any ClusterRole event queues every aggregating ClusterRole.
struct RoleHandler {
    queue: WorkQueue<String>,
    cluster_roles: Store<ClusterRole>,
}

impl RoleHandler {
    fn enqueue_aggregating(&self) {
        for role in self.cluster_roles.list().iter().filter(|r| core::aggregating(r)) {
            self.queue.add(role.name_any());
        }
    }
}

impl EventHandler<ClusterRole> for RoleHandler {
    fn on_add(&self, _role: &Arc<ClusterRole>) {
        self.enqueue_aggregating();
    }

    fn on_update(&self, _old: &Arc<ClusterRole>, _new: &Arc<ClusterRole>) {
        self.enqueue_aggregating();
    }

    fn on_delete(&self, _role: &Arc<ClusterRole>) {
        self.enqueue_aggregating();
    }
}

// === impl Syncer ===

impl Reconcile for Syncer {
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let Some(role) = self.cluster_roles.get(key) else { return Ok(Next::Done) };
        let Some(rules) = core::aggregate(&role, &self.cluster_roles.list())? else { return Ok(Next::Done) };
        self.write(&role, &rules).await?;
        tracing::debug!(cluster_role = key, rules = rules.len(), "aggregated rules written");
        Ok(Next::Done)
    }
}

impl Syncer {
    /// Upstream's `applyClusterRoles`, and on 415 the fallback.
    async fn write(&self, role: &ClusterRole, rules: &[PolicyRule]) -> Result<(), kube::Error> {
        let api: Api<ClusterRole> = Api::all(self.client.clone());
        let name = role.name_any();
        let apply = json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": name},
            "rules": rules,
        });
        match api.patch(&name, &PatchParams::apply(FIELD_MANAGER).force(), &Patch::Apply(&apply)).await {
            Err(e) if code(&e) == Some(UNSUPPORTED_MEDIA_TYPE) => {
                let merge = json!({
                    "metadata": {"resourceVersion": role.resource_version()},
                    "rules": rules,
                });
                api.patch(&name, &PatchParams::default(), &Patch::Merge(&merge)).await.map(drop)
            }
            result => result.map(drop),
        }
    }
}
