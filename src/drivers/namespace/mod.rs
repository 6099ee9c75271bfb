//! The Namespace controller's driver (upstream
//! `pkg/controller/namespace/namespace_controller.go` and the I/O half of
//! `deletion/namespaced_resources_deleter.go`; the decisions live in
//! `kcm_controllers::namespace`).
//!
//! It owns:
//! - the add/update handler on the shared Namespace informer (resync
//!   `--namespace-sync-period`), which enqueues only namespaces being
//!   deleted, after upstream's 5 s grace;
//! - the `namespace` workqueue (5 ms .. 60 s per item, max-of the 10 qps /
//!   100 bucket) and `--concurrent-namespace-syncs` workers;
//! - the per-namespace deletion: live read, phase `Terminating`, discovery
//!   of every namespaced deletable type (one failing group does not stop
//!   the others), `deletecollection` per non-empty type falling back to
//!   list + delete,
//!   the re-list the core judges, the five conditions, and `PUT
//!   .../finalize`. It talks through its own client (upstream: QPS ×20,
//!   burst ×100 of the flags), built by the daemon.
//!
//! The content deletion (discovery, then each type) is `content`.

mod content;

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Namespace, NamespaceStatus};
use kcm_controllers::namespace::{self as core, DeletionReport, NextStep};
use kube::api::{Api, PostParams};
use kube::{Client, ResourceExt};

use super::api_errors::code;
use futures::future::BoxFuture;
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::informer::{EventHandler, HandlerRegistration, HasSynced, SharedInformer, SharedInformerFactory};
use kcm_runtime::runner::{self, Next, Reconcile, SyncError};
use kcm_runtime::workqueue::{QueueMetrics, WorkQueue, namespace_controller_rate_limiter};

/// Upstream's controller name: metric label, log field, user-agent suffix.
pub const CONTROLLER_NAME: &str = "namespace-controller";

/// The workqueue's name (the `name` label of the `workqueue_*` metrics).
pub const QUEUE_NAME: &str = "namespace";

/// Upstream's multipliers of `--kube-api-qps` / `--kube-api-burst` for the
/// controller's own client.
pub const QPS_FACTOR: f32 = 20.0;
/// See [`QPS_FACTOR`].
pub const BURST_FACTOR: u32 = 100;

/// Why one namespace's sync failed; the key is retried with backoff.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An API call on the namespace itself failed.
    #[error("namespace {name}: {action}")]
    Namespace {
        /// The namespace.
        name: String,
        /// What was being done.
        action: &'static str,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// The namespace was deleted and recreated while being synced.
    #[error("namespace {0} was recreated (uid changed)")]
    Recreated(String),
    /// Content deletion failed (upstream's aggregated errors).
    #[error("deletion of namespace {name} failed: {message}")]
    Content {
        /// The namespace.
        name: String,
        /// The aggregated errors.
        message: String,
    },
}

type Result<T, E = Error> = std::result::Result<T, E>;

/// The Namespace controller, ready to run once its cache syncs.
pub struct NamespaceController {
    /// Names of namespaces being deleted.
    queue: WorkQueue<String>,
    /// Read for its sync state.
    namespaces: SharedInformer<Namespace>,
    /// The handler's registration: workers start once it has seen the list.
    registration: HandlerRegistration,
    /// What the workers run.
    syncer: Arc<Syncer>,
}

/// The per-namespace deletion, shared by the workers.
struct Syncer {
    /// The controller's own client (QPS ×20, burst ×100).
    client: Client,
}

// === impl NamespaceController ===

impl NamespaceController {
    /// Builds the controller on `factory`'s Namespace informer, with its
    /// handler resynced every `resync` (`--namespace-sync-period`).
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(
        factory: &SharedInformerFactory,
        client: Client,
        resync: Duration,
        queue_metrics: Option<&QueueMetrics>,
    ) -> Self {
        let queue = WorkQueue::new(QUEUE_NAME, namespace_controller_rate_limiter(), queue_metrics);
        let namespaces = factory.informer::<Namespace>();
        let resync = (!resync.is_zero()).then_some(resync);
        let registration = namespaces.add_handler(NamespaceHandler { queue: queue.clone() }, resync);
        Self { queue, namespaces, registration, syncer: Arc::new(Syncer { client }) }
    }
}

impl Controller for NamespaceController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let synced: Vec<&(dyn HasSynced + Sync)> = vec![&self.namespaces, &self.registration];
            cx.run_when_synced(&synced, self.queue.clone(), self.syncer.clone(), Retries::FOREVER).await;
        })
    }
}

// === handlers ===

/// Namespace adds and updates (and resyncs): a namespace being deleted is
/// synced after the grace period. Deletes need nothing.
struct NamespaceHandler {
    queue: WorkQueue<String>,
}

impl NamespaceHandler {
    fn enqueue(&self, ns: &Namespace) {
        if ns.metadata.deletion_timestamp.is_some() {
            self.queue.add_after(ns.name_any(), core::DELETION_GRACE_PERIOD);
        }
    }
}

impl EventHandler<Namespace> for NamespaceHandler {
    fn on_add(&self, ns: &Arc<Namespace>) {
        self.enqueue(ns);
    }

    fn on_update(&self, _old: &Arc<Namespace>, new: &Arc<Namespace>) {
        self.enqueue(new);
    }

    fn on_delete(&self, _ns: &Arc<Namespace>) {}
}

// === impl Syncer ===

impl Reconcile for Syncer {
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        match self.delete(key).await {
            Ok(next) => Ok(next),
            Err(e) => Err(Box::new(e) as runner::SyncError),
        }
    }
}

impl Syncer {
    fn namespaces(&self) -> Api<Namespace> {
        Api::all(self.client.clone())
    }

    /// Upstream `NamespacedResourcesDeleter.Delete`.
    async fn delete(&self, name: &str) -> Result<Next> {
        let err = |action| move |source| Error::Namespace { name: name.to_owned(), action, source };
        let Some(mut ns) = self.namespaces().get_opt(name).await.map_err(err("get"))? else {
            tracing::debug!(namespace = name, "Namespace has been deleted");
            return Ok(Next::Done);
        };
        if ns.metadata.deletion_timestamp.is_none() {
            return Ok(Next::Done);
        }
        ns = self.ensure_terminating(ns).await?;
        let finalizers = ns.spec.as_ref().and_then(|s| s.finalizers.clone()).unwrap_or_default();
        if finalizers.is_empty() {
            return Ok(Next::Done);
        }
        let report = content::delete_all_content(&self.client, &ns).await;
        self.write_conditions(name, &report).await?;
        match core::next_step(&report) {
            NextStep::Fail(message) => Err(Error::Content { name: name.to_owned(), message }),
            NextStep::Requeue(after) => {
                tracing::debug!(namespace = name, ?after, "content remaining; checking again later");
                Ok(Next::After(after))
            }
            NextStep::Finalize => {
                self.finalize(name).await?;
                Ok(Next::Done)
            }
        }
    }

    /// Sets phase `Terminating` if the API server has not (retrying on
    /// conflict with a fresh read of the same namespace).
    async fn ensure_terminating(&self, mut ns: Namespace) -> Result<Namespace> {
        let name = ns.name_any();
        let uid = ns.metadata.uid.clone();
        loop {
            if ns.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Terminating") {
                return Ok(ns);
            }
            let mut updated = ns.clone();
            updated.status.get_or_insert_with(NamespaceStatus::default).phase = Some("Terminating".into());
            match self.namespaces().replace_status(&name, &PostParams::default(), &updated).await {
                Ok(ns) => return Ok(ns),
                Err(e) if code(&e) == Some(409) => {
                    ns = self.namespaces().get(&name).await.map_err(|source| Error::Namespace {
                        name: name.clone(),
                        action: "get",
                        source,
                    })?;
                    if ns.metadata.uid != uid {
                        return Err(Error::Recreated(name));
                    }
                }
                Err(source) => return Err(Error::Namespace { name, action: "set phase Terminating", source }),
            }
        }
    }

    /// Writes the five conditions if any changed (on a fresh read).
    async fn write_conditions(&self, name: &str, report: &DeletionReport) -> Result<()> {
        let err = |action| move |source| Error::Namespace { name: name.to_owned(), action, source };
        let Some(mut ns) = self.namespaces().get_opt(name).await.map_err(err("get"))? else { return Ok(()) };
        let existing = ns.status.as_ref().and_then(|s| s.conditions.clone()).unwrap_or_default();
        let Some(merged) = core::merge_conditions(&existing, &core::conditions(report), Timestamp::now()) else {
            return Ok(());
        };
        ns.status.get_or_insert_with(NamespaceStatus::default).conditions = Some(merged);
        match self.namespaces().replace_status(name, &PostParams::default(), &ns).await {
            Ok(_) => Ok(()),
            Err(e) if code(&e) == Some(404) => Ok(()),
            Err(source) => Err(Error::Namespace { name: name.to_owned(), action: "update conditions", source }),
        }
    }

    /// Removes the `kubernetes` finalizer (`PUT .../finalize`); the API
    /// server then removes the namespace. NotFound counts as done.
    async fn finalize(&self, name: &str) -> Result<()> {
        let err = |action| move |source| Error::Namespace { name: name.to_owned(), action, source };
        let Some(mut ns) = self.namespaces().get_opt(name).await.map_err(err("get"))? else { return Ok(()) };
        let spec = ns.spec.get_or_insert_with(Default::default);
        spec.finalizers = Some(core::finalized(spec.finalizers.as_deref().unwrap_or_default()));
        match self.namespaces().replace_subresource("finalize", name, &PostParams::default(), &ns).await {
            Ok(_) => {
                tracing::info!(namespace = name, "namespace finalized");
                Ok(())
            }
            Err(e) if code(&e) == Some(404) => Ok(()),
            Err(source) => Err(Error::Namespace { name: name.to_owned(), action: "finalize", source }),
        }
    }
}
