//! The token cleaner's driver (upstream
//! `pkg/controller/bootstrap/tokencleaner.go`; the decision is
//! `kcm_controllers::bootstrap::tokencleaner`).
//!
//! It owns:
//! - the handler on the shared Secret informer: a bootstrap token Secret
//!   of `kube-system` added or updated is queued (upstream's filter and
//!   handlers; no resync of its own, no delete handler);
//! - the `token_cleaner` workqueue (upstream's default controller rate
//!   limiter) and its one worker (upstream runs one, with no flag);
//! - the sync (upstream `syncFunc` and `evalSecret`): the cached Secret
//!   judged at the current time; expired, it is deleted on the condition
//!   of its uid through the controller's own client (`token-cleaner`), a
//!   failure other than a conflict or NotFound logged and not retried, as
//!   upstream; not yet expired, the key comes back when it expires.

use std::sync::Arc;

use futures::future::BoxFuture;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Secret;
use kcm_controllers::bootstrap::{
    is_token_secret,
    tokencleaner::{self as core, Action},
};
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::informer::{
    EventHandler, HandlerRegistration, HasSynced, SharedInformer, SharedInformerFactory, Store, key_of,
};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kcm_runtime::workqueue::{QueueMetrics, WorkQueue, default_controller_rate_limiter};
use kube::Client;
use kube::api::{Api, DeleteParams, Preconditions};

use super::api_errors::code;

/// Upstream's controller name: metric label, log field.
pub const CONTROLLER_NAME: &str = "token-cleaner-controller";

/// The user-agent suffix of its client (upstream's `ClientOrDie` name).
pub const CLIENT_NAME: &str = "token-cleaner";

/// The workqueue's name (the `name` label of the `workqueue_*` metrics).
pub const QUEUE_NAME: &str = "token_cleaner";

/// Workers: upstream starts one, with no flag.
pub const WORKERS: usize = 1;

/// The token cleaner, ready to run once its cache syncs.
pub struct TokenCleaner {
    /// Keys (`kube-system/<name>`) of token Secrets.
    queue: WorkQueue<String>,
    /// The shared Secret informer, for its sync state.
    secrets: SharedInformer<kcm_objects::Secret>,
    /// The handler's registration: the worker starts once it saw the list.
    registration: HandlerRegistration,
    /// What the worker runs.
    syncer: Arc<Syncer>,
}

/// The per-Secret sync.
struct Syncer {
    /// Cached Secrets (all namespaces).
    secrets: Store<kcm_objects::Secret>,
    /// The controller's own client.
    client: Client,
}

// === impl TokenCleaner ===

impl TokenCleaner {
    /// Builds the cleaner on `factory`'s Secret informer and registers its
    /// handler (before `factory.start()`), deleting through `client`.
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(factory: &SharedInformerFactory, client: Client, queue_metrics: Option<&QueueMetrics>) -> Self {
        let queue = WorkQueue::new(QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let secrets = factory.informer::<kcm_objects::Secret>();
        let registration = secrets.add_handler(SecretHandler { queue: queue.clone() }, None);
        let syncer = Arc::new(Syncer { secrets: secrets.store(), client });
        Self { queue, secrets, registration, syncer }
    }
}

impl Controller for TokenCleaner {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let synced: [&(dyn HasSynced + Sync); 2] = [&self.secrets, &self.registration];
            cx.run_when_synced(&synced, self.queue.clone(), self.syncer.clone(), Retries::FOREVER).await;
        })
    }
}

// === handlers ===

/// Queues the token Secrets of `kube-system` added or updated.
struct SecretHandler {
    queue: WorkQueue<String>,
}

impl SecretHandler {
    fn enqueue(&self, secret: &Secret) {
        if is_token_secret(secret) {
            self.queue.add(key_of(secret));
        }
    }
}

impl EventHandler<kcm_objects::Secret> for SecretHandler {
    fn on_add(&self, secret: &Arc<kcm_objects::Secret>) {
        self.enqueue(secret);
    }

    fn on_update(&self, _old: &Arc<kcm_objects::Secret>, new: &Arc<kcm_objects::Secret>) {
        self.enqueue(new);
    }
}

// === impl Syncer ===

impl Reconcile for Syncer {
    /// Upstream `syncFunc`.
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let Some(secret) = self.secrets.get(key) else {
            tracing::debug!(secret = key, "Secret has been deleted");
            return Ok(Next::Done);
        };
        match core::evaluate(&secret, Timestamp::now()) {
            Action::None => Ok(Next::Done),
            Action::RequeueAfter(left) => Ok(Next::After(left)),
            Action::Delete { namespace, name, uid } => {
                tracing::debug!(secret = key, "Deleting expired secret");
                let params = DeleteParams {
                    preconditions: uid.map(|uid| Preconditions { uid: Some(uid), resource_version: None }),
                    ..DeleteParams::default()
                };
                let api: Api<Secret> = Api::namespaced(self.client.clone(), &namespace);
                match api.delete(&name, &params).await {
                    Err(err) if !matches!(code(&err), Some(404 | 409)) => {
                        tracing::debug!(secret = key, %err, "Error deleting secret");
                    }
                    _ => {}
                }
                Ok(Next::Done)
            }
        }
    }
}
