//! The legacy service account token cleaner's driver (upstream
//! `pkg/controller/serviceaccount/legacy_serviceaccount_token_cleaner.go`;
//! the decisions are `kcm_controllers::legacytokencleaner`).
//!
//! It owns:
//! - the periodic evaluation: once the ServiceAccount, Secret and Pod
//!   caches sync, and then every 24 hours after the last one ended
//!   (upstream's `DefaultCleanerSyncInterval` through `wait.Until`, no
//!   jitter); no handlers, no queue;
//! - the reads and writes, through the controller's own client
//!   (`legacy-service-account-token-cleaner`): the API server's tracking
//!   ConfigMap read live each time; a Secret labelled
//!   `kubernetes.io/legacy-token-invalid-since` with a JSON merge patch
//!   carrying its uid, or deleted on the condition of its cached
//!   resourceVersion. A failure is logged and left to the next
//!   evaluation, as upstream.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{ConfigMap, Secret, ServiceAccount};
use kcm_controllers::legacytokencleaner::{
    self as core, Action, INVALID_SINCE_LABEL_KEY, TRACKING_CONFIG_MAP_DATA_KEY, TRACKING_CONFIG_MAP_NAME,
    TrackedSinceError, View,
};
use kcm_gotime::format_go_duration;
use kcm_objects::Pod;
use kcm_runtime::controller::{Controller, RunContext};
use kcm_runtime::informer::{HasSynced, SharedInformer, SharedInformerFactory, Store};
use kube::Client;
use kube::api::{Api, DeleteParams, Patch, PatchParams, Preconditions};
use serde_json::json;

use super::api_errors::code;

/// Upstream's controller name: log field.
pub const CONTROLLER_NAME: &str = "legacy-serviceaccount-token-cleaner-controller";

/// The user-agent suffix of its client (upstream's `ClientOrDie` name).
pub const CLIENT_NAME: &str = "legacy-service-account-token-cleaner";

/// Upstream's `DefaultCleanerSyncInterval`.
pub const SYNC_INTERVAL: Duration = Duration::from_secs(24 * 60 * 60);

/// Why the tracking start is unknown.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The ConfigMap could not be read.
    #[error("reading kube-system/{TRACKING_CONFIG_MAP_NAME}")]
    Read(#[source] kube::Error),
    /// Its `since` is missing or no date.
    #[error(transparent)]
    Since(#[from] TrackedSinceError),
}

/// Why the cleaner cannot be built (upstream `NewLegacySATokenCleaner`).
#[derive(Debug, thiserror::Error)]
#[error("invalid CleanUpPeriod: {}", format_go_duration(*.0))]
pub struct InvalidCleanUpPeriod(Duration);

/// The cleaner, ready to run once its caches sync.
pub struct LegacyTokenCleaner {
    /// Cached ServiceAccounts (all namespaces).
    service_accounts: SharedInformer<ServiceAccount>,
    /// Cached Secrets (all namespaces, all types).
    secrets: SharedInformer<kcm_objects::Secret>,
    /// Cached pods, for the Secrets they reference.
    pods: SharedInformer<Pod>,
    /// The controller's own client.
    client: Client,
    /// `--legacy-service-account-token-clean-up-period`.
    clean_up_period: SignedDuration,
}

// === impl LegacyTokenCleaner ===

impl LegacyTokenCleaner {
    /// Builds the cleaner on `factory`'s informers, writing through
    /// `client`.
    ///
    /// # Errors
    /// A clean-up period of zero (or too long for a timestamp), as
    /// upstream refuses one not above zero.
    pub fn new(
        factory: &SharedInformerFactory,
        client: Client,
        clean_up_period: Duration,
    ) -> Result<Self, InvalidCleanUpPeriod> {
        let period = SignedDuration::try_from(clean_up_period)
            .ok()
            .filter(|p| p.is_positive())
            .ok_or(InvalidCleanUpPeriod(clean_up_period))?;
        Ok(Self {
            service_accounts: factory.informer::<ServiceAccount>(),
            secrets: factory.informer::<kcm_objects::Secret>(),
            pods: factory.informer::<Pod>(),
            client,
            clean_up_period: period,
        })
    }

    /// Upstream `evaluateSATokens`.
    async fn evaluate_sa_tokens(&self) {
        let now = Timestamp::now();
        let tracked_since = match self.latest_possible_tracked_since().await {
            Ok(t) => t,
            Err(error) => {
                tracing::error!(controller = CONTROLLER_NAME, error = %error, "Getting lastest possible tracked_since time");
                return;
            }
        };
        let view = Caches::new(&self.service_accounts.store(), &self.secrets.store(), self.pods.store());
        for action in core::evaluate(&view, now, tracked_since, self.clean_up_period) {
            self.perform(action).await;
        }
    }

    async fn latest_possible_tracked_since(&self) -> Result<Timestamp, Error> {
        let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), "kube-system");
        let config_map = api.get(TRACKING_CONFIG_MAP_NAME).await.map_err(Error::Read)?;
        let data = config_map.data.unwrap_or_default();
        Ok(core::latest_possible_tracked_since(data.get(TRACKING_CONFIG_MAP_DATA_KEY).map(String::as_str))?)
    }

    async fn perform(&self, action: Action) {
        match action {
            Action::UnparsableLastUsed { namespace, name, value } => {
                tracing::error!(secret = %format!("{namespace}/{name}"), value, "Parsing lastUsed time");
            }
            Action::MarkInvalid { namespace, name, uid, invalid_since } => {
                let secret = format!("{namespace}/{name}");
                tracing::info!(invalid_since, secret, "Mark the auto-generated service account token as invalid");
                let patch = json!({
                    "kind": "Secret", "apiVersion": "v1",
                    "metadata": {"name": name, "namespace": namespace, "uid": uid,
                        "labels": {INVALID_SINCE_LABEL_KEY: invalid_since}},
                });
                let api: Api<Secret> = Api::namespaced(self.client.clone(), &namespace);
                if let Err(error) = api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch)).await {
                    tracing::error!(%error, secret, "Failed to label legacy service account token secret with invalid since date");
                }
            }
            Action::Delete { namespace, name, resource_version, service_account, last_used, invalid_since } => {
                let secret = format!("{namespace}/{name}");
                tracing::info!(secret, last_used, invalid_since, "Delete auto-generated service account token");
                let preconditions = Preconditions { resource_version: Some(resource_version), uid: None };
                let params = DeleteParams { preconditions: Some(preconditions), ..DeleteParams::default() };
                let api: Api<Secret> = Api::namespaced(self.client.clone(), &namespace);
                match api.delete(&name, &params).await {
                    Err(error) if !matches!(code(&error), Some(404 | 409)) => {
                        tracing::error!(%error, secret, serviceaccount = service_account, "Deleting legacy service account token");
                    }
                    _ => {}
                }
            }
        }
    }
}

impl Controller for LegacyTokenCleaner {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let synced: [&(dyn HasSynced + Sync); 3] = [&self.service_accounts, &self.secrets, &self.pods];
            if !cx.wait_for_caches(&synced, &[]).await {
                return;
            }
            loop {
                self.evaluate_sa_tokens().await;
                tokio::select! {
                    () = tokio::time::sleep(SYNC_INTERVAL) => {}
                    () = cx.stop.clone() => return,
                }
            }
        })
    }
}

// === the view ===

/// One evaluation's reading of the caches.
struct Caches {
    /// Every cached Secret, held for the evaluation.
    secrets: Vec<Arc<kcm_objects::Secret>>,
    /// Read by name.
    service_accounts: Store<ServiceAccount>,
    /// Read by namespace.
    pods: Store<Pod>,
}

impl Caches {
    fn new(service_accounts: &Store<ServiceAccount>, secrets: &Store<kcm_objects::Secret>, pods: Store<Pod>) -> Self {
        Self { secrets: secrets.list(), service_accounts: service_accounts.clone(), pods }
    }
}

impl View for Caches {
    fn secrets(&self) -> Vec<&Secret> {
        self.secrets.iter().map(|s| -> &Secret { s }).collect()
    }

    fn service_account(&self, namespace: &str, name: &str) -> Option<Arc<ServiceAccount>> {
        self.service_accounts.get_namespaced(Some(namespace), name)
    }

    fn pod_secret_names(&self, namespace: &str) -> BTreeSet<String> {
        let pods = self.pods.list_namespace(namespace);
        pods.iter().flat_map(|p| p.spec.rare().secret_names.iter().map(|n| n.as_str().to_owned())).collect()
    }
}
