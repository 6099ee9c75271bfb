//! The service account token controller's driver (upstream
//! `pkg/controller/serviceaccount/tokens_controller.go`; the decisions are
//! `kcm_controllers::serviceaccounttoken`).
//!
//! It owns:
//! - the handlers: every ServiceAccount add, update and delete queues its
//!   `<namespace>/<name>/<uid>` on `serviceaccount_tokens_service`; every
//!   add, update and delete of a Secret of type
//!   `kubernetes.io/service-account-token` queues the Secret and the
//!   ServiceAccount it names on `serviceaccount_tokens_secret` (upstream's
//!   queue names; no periodic resync, upstream's are zero);
//! - both queues' workers (`--concurrent-serviceaccount-token-syncs` each,
//!   upstream's default controller rate limiter, a key dropped after
//!   upstream's 10 retries; a failure upstream does not retry is logged and
//!   the key done);
//! - the syncs, through the controller's own client (`tokens-controller`):
//!   a deleted ServiceAccount's token Secrets deleted; a token Secret
//!   whose ServiceAccount is gone (or is another of that name) deleted, a
//!   present one filled from its live copy; a deleted Secret dropped from
//!   its ServiceAccount's `secrets`;
//! - the key ([`signer`]).

pub mod signer;

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use kcm_controllers::common::token_secret::SECRET_TYPE;
use kcm_controllers::serviceaccounttoken::{self as core, MAX_RETRIES, SecretKey, SecretSync, ServiceAccountKey};
use kcm_gotime::jitter::Jitter;
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::informer::{
    EventHandler, HandlerRegistration, HasSynced, SharedInformer, SharedInformerFactory, Store,
};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kcm_runtime::workqueue::{QueueMetrics, WorkQueue, default_controller_rate_limiter};
use kube::api::{Api, DeleteParams, PostParams, Preconditions};
use kube::{Client, ResourceExt};

use self::signer::Signer;
use super::api_errors::code;

/// Upstream's controller name: metric label, log field.
pub const CONTROLLER_NAME: &str = "serviceaccount-token-controller";

/// The user-agent suffix of its client (upstream's `ClientOrDie` name).
pub const CLIENT_NAME: &str = "tokens-controller";

/// The ServiceAccount queue's name.
pub const SERVICE_QUEUE_NAME: &str = "serviceaccount_tokens_service";

/// The Secret queue's name.
pub const SECRET_QUEUE_NAME: &str = "serviceaccount_tokens_secret";

/// Upstream's `RemoveTokenBackoff`: 10 tries, 100 ms apart, jitter 1.0.
const REMOVE_TOKEN_TRIES: usize = 10;
const REMOVE_TOKEN_BACKOFF: Duration = Duration::from_millis(100);

/// The token controller, ready to run once its caches sync.
pub struct TokensController {
    /// ServiceAccount keys.
    service_queue: WorkQueue<String>,
    /// Token Secret keys.
    secret_queue: WorkQueue<String>,
    /// Read for their sync state.
    service_accounts: SharedInformer<ServiceAccount>,
    /// See `service_accounts`.
    secrets: SharedInformer<kcm_objects::Secret>,
    /// The handlers' registrations: workers start once both saw the lists.
    registrations: [HandlerRegistration; 2],
    /// What both queues' workers run.
    inner: Arc<Inner>,
}

/// What the syncs share.
struct Inner {
    /// Cached ServiceAccounts (all namespaces).
    service_accounts: Store<ServiceAccount>,
    /// Cached Secrets (all namespaces, all types).
    secrets: Store<kcm_objects::Secret>,
    /// The controller's own client.
    client: Client,
    /// Signs the tokens.
    signer: Signer,
    /// Published as `ca.crt` (empty: none).
    root_ca: Vec<u8>,
}

// === impl TokensController ===

impl TokensController {
    /// Builds the controller on `factory`'s ServiceAccount and Secret
    /// informers, signing with `signer`, publishing `root_ca`, writing
    /// through `client`.
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueues spawn their timer tasks).
    pub fn new(
        factory: &SharedInformerFactory,
        client: Client,
        signer: Signer,
        root_ca: String,
        queue_metrics: Option<&QueueMetrics>,
    ) -> Self {
        let service_queue = WorkQueue::new(SERVICE_QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let secret_queue = WorkQueue::new(SECRET_QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let service_accounts = factory.informer::<ServiceAccount>();
        let secrets = factory.informer::<kcm_objects::Secret>();
        let registrations = [
            service_accounts.add_handler(ServiceAccountHandler { queue: service_queue.clone() }, None),
            secrets.add_handler(SecretHandler { queue: secret_queue.clone() }, None),
        ];
        let inner = Arc::new(Inner {
            service_accounts: service_accounts.store(),
            secrets: secrets.store(),
            client,
            signer,
            root_ca: root_ca.into_bytes(),
        });
        Self { service_queue, secret_queue, service_accounts, secrets, registrations, inner }
    }
}

impl Controller for TokensController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let [sa, secret] = &self.registrations;
            let synced: Vec<&(dyn HasSynced + Sync)> = vec![&self.service_accounts, &self.secrets, sa, secret];
            if !cx.wait_for_caches(&synced, &[&self.service_queue, &self.secret_queue]).await {
                return;
            }
            let retries = Retries::at_most(MAX_RETRIES);
            let services = ServiceAccountSyncer(self.inner.clone());
            let secrets = SecretSyncer(self.inner.clone());
            futures::join!(
                cx.pool(self.service_queue.clone(), Arc::new(services), cx.workers, retries),
                cx.pool(self.secret_queue.clone(), Arc::new(secrets), cx.workers, retries),
            );
        })
    }
}

// === handlers ===

/// Every ServiceAccount event queues its key.
struct ServiceAccountHandler {
    queue: WorkQueue<String>,
}

impl EventHandler<ServiceAccount> for ServiceAccountHandler {
    fn on_add(&self, sa: &Arc<ServiceAccount>) {
        self.queue.add(ServiceAccountKey::of(sa).encode());
    }

    fn on_update(&self, _old: &Arc<ServiceAccount>, new: &Arc<ServiceAccount>) {
        self.on_add(new);
    }

    fn on_delete(&self, sa: &Arc<ServiceAccount>) {
        self.on_add(sa);
    }
}

/// Every event of a token Secret queues its key (upstream's
/// `FilteringResourceEventHandler` on the type).
struct SecretHandler {
    queue: WorkQueue<String>,
}

impl EventHandler<kcm_objects::Secret> for SecretHandler {
    fn on_add(&self, secret: &Arc<kcm_objects::Secret>) {
        if secret.type_.as_deref() == Some(SECRET_TYPE) {
            self.queue.add(SecretKey::of(secret).encode());
        }
    }

    fn on_update(&self, _old: &Arc<kcm_objects::Secret>, new: &Arc<kcm_objects::Secret>) {
        self.on_add(new);
    }

    fn on_delete(&self, secret: &Arc<kcm_objects::Secret>) {
        self.on_add(secret);
    }
}

// === syncs ===

/// Upstream `syncServiceAccount`.
struct ServiceAccountSyncer(Arc<Inner>);

impl Reconcile for ServiceAccountSyncer {
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let Some(key) = ServiceAccountKey::parse(key) else { return Ok(Next::Done) };
        let inner = &self.0;
        if inner.cached_account(&key.namespace, &key.name, &key.uid).is_some() {
            return Ok(Next::Done);
        }
        let secrets = inner.secrets.list_namespace(&key.namespace);
        let tokens = core::tokens_of(secrets.iter().map(|s| -> &Secret { s }), &key);
        let mut failed = None;
        for (name, uid) in tokens {
            if let Err(e) = inner.delete_token(&key.namespace, &name, &uid).await {
                tracing::error!(namespace = key.namespace, serviceaccount = key.name, error = %e, "Error deleting serviceaccount tokens");
                failed = Some(e);
            }
        }
        failed.map_or(Ok(Next::Done), |e| Err(e.into()))
    }
}

/// Upstream `syncSecret`.
struct SecretSyncer(Arc<Inner>);

impl Reconcile for SecretSyncer {
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let Some(key) = SecretKey::parse(key) else { return Ok(Next::Done) };
        let inner = &self.0;
        let cached = inner
            .secrets
            .get_namespaced(Some(&key.namespace), &key.name)
            .filter(|s| key.uid.is_empty() || s.metadata.uid.as_deref() == Some(key.uid.as_str()));
        let account = match (&cached, inner.cached_account(&key.namespace, &key.sa_name, &key.sa_uid)) {
            (_, Some(account)) => Some(account),
            (None, None) => None,
            // The Secret exists: look the ServiceAccount up live on a cache miss.
            (Some(_), None) => inner.live_account(&key.namespace, &key.sa_name, &key.sa_uid).await?,
        };
        match core::sync_secret(cached.as_deref().map(|s| -> &Secret { s }), account.as_ref()) {
            SecretSync::None => {}
            SecretSync::RemoveReference => {
                if let Err(e) = inner.remove_secret_reference(&key).await {
                    tracing::error!(namespace = key.namespace, secret = key.name, error = %e, "removing the secret reference");
                }
            }
            SecretSync::DeleteToken => inner.delete_token(&key.namespace, &key.name, &key.uid).await?,
            SecretSync::Populate => {
                let (Some(secret), Some(account)) = (cached, account) else { return Ok(Next::Done) };
                inner.generate_token_if_needed(&account, &secret).await?;
            }
        }
        Ok(Next::Done)
    }
}

// === impl Inner ===

impl Inner {
    /// The cached ServiceAccount of that name and (when set) uid.
    fn cached_account(&self, namespace: &str, name: &str, uid: &str) -> Option<ServiceAccount> {
        let cached = self.service_accounts.get_namespaced(Some(namespace), name)?;
        core::same_uid(&cached, uid).then(|| (*cached).clone())
    }

    /// The live ServiceAccount of that name and (when set) uid.
    async fn live_account(&self, namespace: &str, name: &str, uid: &str) -> Result<Option<ServiceAccount>, SyncError> {
        let api: Api<ServiceAccount> = Api::namespaced(self.client.clone(), namespace);
        Ok(api.get_opt(name).await?.filter(|a| core::same_uid(a, uid)))
    }

    /// Upstream `deleteToken`: with a uid precondition; NotFound (gone)
    /// and Conflict (another Secret of that name) are done.
    async fn delete_token(&self, namespace: &str, name: &str, uid: &str) -> Result<(), kube::Error> {
        let api: Api<Secret> = Api::namespaced(self.client.clone(), namespace);
        let preconditions =
            (!uid.is_empty()).then(|| Preconditions { uid: Some(uid.to_owned()), resource_version: None });
        match api.delete(name, &DeleteParams { preconditions, ..DeleteParams::default() }).await {
            Err(e) if !matches!(code(&e), Some(404 | 409)) => Err(e),
            _ => {
                tracing::debug!(namespace, name, "deleted service account token");
                Ok(())
            }
        }
    }

    /// Upstream `generateTokenIfNeeded`: on the live copy, when the cached
    /// one lacks anything and the live one is as cached; a write that
    /// meets Conflict or NotFound waits for the next event. A signing
    /// failure is logged, not retried, as upstream.
    async fn generate_token_if_needed(&self, account: &ServiceAccount, cached: &Secret) -> Result<(), kube::Error> {
        if !core::secret_update_needed(cached, &self.root_ca).any() {
            return Ok(());
        }
        let api: Api<Secret> = Api::namespaced(self.client.clone(), &cached.namespace().unwrap_or_default());
        let Some(live) = api.get_opt(&cached.name_any()).await? else { return Ok(()) };
        if live.resource_version() != cached.resource_version() {
            tracing::debug!(secret = cached.name_any(), "Secret is not up to date, skipping token population");
            return Ok(());
        }
        let filled = match core::populate(&live, account, &self.root_ca, |claims| self.signer.sign(claims)) {
            Ok(Some(filled)) => filled,
            Ok(None) => return Ok(()),
            Err(error) => {
                tracing::error!(secret = cached.name_any(), %error, "error populating serviceaccount token");
                return Ok(());
            }
        };
        match api.replace(&live.name_any(), &PostParams::default(), &filled).await {
            Err(e) if !matches!(code(&e), Some(404 | 409)) => Err(e),
            _ => Ok(()),
        }
    }

    /// Upstream `removeSecretReference`, retried on Conflict with
    /// `RemoveTokenBackoff`.
    async fn remove_secret_reference(&self, key: &SecretKey) -> Result<(), kube::Error> {
        let api: Api<ServiceAccount> = Api::namespaced(self.client.clone(), &key.namespace);
        let mut jitter = Jitter::from_entropy();
        for _ in 1..REMOVE_TOKEN_TRIES {
            match self.try_remove_secret_reference(&api, key).await {
                Err(e) if code(&e) == Some(409) => tokio::time::sleep(jitter.jitter(REMOVE_TOKEN_BACKOFF, 1.0)).await,
                result => return result,
            }
        }
        self.try_remove_secret_reference(&api, key).await
    }

    async fn try_remove_secret_reference(&self, api: &Api<ServiceAccount>, key: &SecretKey) -> Result<(), kube::Error> {
        let Some(live) = api.get_opt(&key.sa_name).await?.filter(|a| core::same_uid(a, &key.sa_uid)) else {
            return Ok(());
        };
        match core::remove_secret_reference(&live, &key.name) {
            Some(updated) => api.replace(&key.sa_name, &PostParams::default(), &updated).await.map(drop),
            None => Ok(()),
        }
    }
}
