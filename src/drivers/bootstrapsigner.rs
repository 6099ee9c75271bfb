//! The bootstrap signer's driver (upstream
//! `pkg/controller/bootstrap/bootstrapsigner.go`; the decisions are
//! `kcm_controllers::bootstrap::signer`).
//!
//! It owns:
//! - the handlers: `kube-public/cluster-info` added or updated, or a
//!   bootstrap token Secret of `kube-system` added, updated or deleted,
//!   queues the one key `kube-public/cluster-info` (upstream's
//!   `pokeConfigMapSync`; no resync of their own);
//! - the `bootstrap_signer_queue` workqueue (upstream's default controller
//!   rate limiter) and its one worker;
//! - the sync (upstream `signConfigMap`): the cached ConfigMap signed by
//!   the cached signing tokens, and when a signature changed an update of
//!   the cached ConfigMap through the controller's own client
//!   (`bootstrap-signer`). A failed update is logged and not retried, as
//!   upstream: a conflict means a newer ConfigMap, whose event queues the
//!   key again.

use std::sync::Arc;

use futures::future::BoxFuture;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kcm_controllers::bootstrap::signer::{self as core, CONFIG_MAP_NAME, CONFIG_MAP_NAMESPACE, Signed};
use kcm_controllers::bootstrap::{TOKEN_SECRET_NAMESPACE, is_token_secret};
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::informer::{
    EventHandler, HandlerRegistration, HasSynced, SharedInformer, SharedInformerFactory, Store,
};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kcm_runtime::workqueue::{QueueMetrics, WorkQueue, default_controller_rate_limiter};
use kube::Client;
use kube::api::{Api, PostParams};

use super::api_errors::code;

/// Upstream's controller name: metric label, log field.
pub const CONTROLLER_NAME: &str = "bootstrap-signer-controller";

/// The user-agent suffix of its client (upstream's `ClientOrDie` name).
pub const CLIENT_NAME: &str = "bootstrap-signer";

/// The workqueue's name (the `name` label of the `workqueue_*` metrics).
pub const QUEUE_NAME: &str = "bootstrap_signer_queue";

/// Workers: upstream starts one, with no flag.
pub const WORKERS: usize = 1;

/// The one key the queue holds.
const KEY: &str = "kube-public/cluster-info";

/// The bootstrap signer, ready to run once its caches sync.
pub struct BootstrapSigner {
    /// Holds [`KEY`] when `cluster-info` is to be signed again.
    queue: WorkQueue<String>,
    /// The shared Secret informer, for its sync state.
    secrets: SharedInformer<kcm_objects::Secret>,
    /// The shared ConfigMap informer, for its sync state.
    config_maps: SharedInformer<kcm_objects::ConfigMap>,
    /// The handlers' registrations: the worker starts once both saw the lists.
    registrations: [HandlerRegistration; 2],
    /// What the worker runs.
    syncer: Arc<Syncer>,
}

/// The sync of `cluster-info`.
struct Syncer {
    /// Cached Secrets (all namespaces).
    secrets: Store<kcm_objects::Secret>,
    /// Cached ConfigMaps (all namespaces).
    config_maps: Store<kcm_objects::ConfigMap>,
    /// The controller's own client.
    client: Client,
}

// === impl BootstrapSigner ===

impl BootstrapSigner {
    /// Builds the signer on `factory`'s Secret and ConfigMap informers and
    /// registers its handlers (before `factory.start()`), writing through
    /// `client`.
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(factory: &SharedInformerFactory, client: Client, queue_metrics: Option<&QueueMetrics>) -> Self {
        let queue = WorkQueue::new(QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let secrets = factory.informer::<kcm_objects::Secret>();
        let config_maps = factory.informer::<kcm_objects::ConfigMap>();
        let registrations = [
            secrets.add_handler(
                Poke { queue: queue.clone(), on_delete: true, filter: |s: &kcm_objects::Secret| is_token_secret(s) },
                None,
            ),
            config_maps.add_handler(
                Poke {
                    queue: queue.clone(),
                    on_delete: false,
                    filter: |c: &kcm_objects::ConfigMap| is_cluster_info(c),
                },
                None,
            ),
        ];
        let syncer = Arc::new(Syncer { secrets: secrets.store(), config_maps: config_maps.store(), client });
        Self { queue, secrets, config_maps, registrations, syncer }
    }
}

impl Controller for BootstrapSigner {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let [secrets, config_maps] = &self.registrations;
            let synced: [&(dyn HasSynced + Sync); 4] = [&self.secrets, &self.config_maps, secrets, config_maps];
            cx.run_when_synced(&synced, self.queue.clone(), self.syncer.clone(), Retries::FOREVER).await;
        })
    }
}

/// Whether `config_map` is `kube-public/cluster-info`.
fn is_cluster_info(config_map: &ConfigMap) -> bool {
    config_map.metadata.namespace.as_deref() == Some(CONFIG_MAP_NAMESPACE)
        && config_map.metadata.name.as_deref() == Some(CONFIG_MAP_NAME)
}

// === handlers ===

/// Queues [`KEY`] when an object `filter` lets through is added or
/// updated, and deleted if `on_delete` (upstream's `pokeConfigMapSync`
/// handlers).
struct Poke<K> {
    queue: WorkQueue<String>,
    on_delete: bool,
    filter: fn(&K) -> bool,
}

impl<K> Poke<K> {
    fn poke(&self, obj: &K) {
        if (self.filter)(obj) {
            self.queue.add(KEY.to_owned());
        }
    }
}

impl<K: Send + Sync + 'static> EventHandler<K> for Poke<K> {
    fn on_add(&self, obj: &Arc<K>) {
        self.poke(obj);
    }

    fn on_update(&self, _old: &Arc<K>, new: &Arc<K>) {
        self.poke(new);
    }

    fn on_delete(&self, obj: &Arc<K>) {
        if self.on_delete {
            self.poke(obj);
        }
    }
}

// === impl Syncer ===

impl Reconcile for Syncer {
    /// Upstream `signConfigMap`.
    async fn sync(&self, _key: &str) -> Result<Next, SyncError> {
        let Some(cached) = self.config_maps.get_namespaced(Some(CONFIG_MAP_NAMESPACE), CONFIG_MAP_NAME) else {
            return Ok(Next::Done);
        };
        let secrets = self.secrets.list_namespace(TOKEN_SECRET_NAMESPACE);
        let chosen = core::signing_tokens(secrets.iter().map(|s| -> &Secret { s }), Timestamp::now());
        for (name, why) in &chosen.rejected {
            tracing::debug!(secret = %format!("{TOKEN_SECRET_NAMESPACE}/{name}"), "{why}");
        }
        for (token_id, name) in &chosen.duplicates {
            tracing::info!(
                token_id,
                ignored_secret = %format!("{TOKEN_SECRET_NAMESPACE}/{name}"),
                "Duplicate bootstrap tokens found for id, ignoring on the duplicate secret"
            );
        }
        let updated = match core::sign(&cached, &chosen.tokens) {
            Signed::Unchanged => return Ok(Next::Done),
            Signed::NoKubeconfig => {
                tracing::debug!(key = core::KUBECONFIG_KEY, config_map = KEY, "No key in ConfigMap");
                return Ok(Next::Done);
            }
            Signed::Update(updated) => updated,
        };
        let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), CONFIG_MAP_NAMESPACE);
        match api.replace(CONFIG_MAP_NAME, &PostParams::default(), &updated).await {
            Err(err) if !matches!(code(&err), Some(404 | 409)) => {
                tracing::debug!(%err, "Error updating ConfigMap");
            }
            _ => {}
        }
        Ok(Next::Done)
    }
}
