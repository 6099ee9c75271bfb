//! The CSR cleaner's driver (upstream
//! `pkg/controller/certificates/cleaner/cleaner.go`; the decisions are
//! `kcm_controllers::csrcleaner`).
//!
//! It owns:
//! - the periodic pass: every cached CertificateSigningRequest looked at
//!   once the cache syncs, then an hour after each pass ended (upstream's
//!   `pollingInterval` through `wait.Until`, no jitter); no handlers, no
//!   queue, one worker as upstream's. Upstream starts its first pass
//!   without waiting for the cache, so that pass usually sees nothing;
//!   kcm-rs waits, so requests already due go at start-up;
//! - the deletes, through the controller's own client
//!   (`certificate-controller`), each logged with upstream's reason
//!   first; a failure is logged and left to the next pass, as upstream.

use futures::future::BoxFuture;
use jiff::Timestamp;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use kcm_controllers::csrcleaner::{self as core, POLLING_INTERVAL};
use kcm_gotime::format_go_duration;
use kcm_runtime::controller::{Controller, RunContext};
use kcm_runtime::informer::{HasSynced, SharedInformer, SharedInformerFactory};
use kube::api::{Api, DeleteParams};
use kube::{Client, ResourceExt};

/// Upstream's controller name: log field.
pub const CONTROLLER_NAME: &str = "certificatesigningrequest-cleaner-controller";

/// The user-agent suffix of its client (upstream's `NewClient` name).
pub const CLIENT_NAME: &str = "certificate-controller";

/// Workers: upstream starts one, with no flag.
pub const WORKERS: usize = 1;

/// A request that could not be deleted (upstream's message): logged, left
/// to the next pass.
#[derive(Debug, thiserror::Error)]
#[error("unable to delete CSR {name:?}: {source}")]
pub struct DeleteError {
    /// The request's name.
    name: String,
    /// The API server's answer.
    #[source]
    source: kube::Error,
}

/// The cleaner, ready to run once its cache syncs.
pub struct CsrCleaner {
    /// Cached requests.
    csrs: SharedInformer<CertificateSigningRequest>,
    /// The controller's own client.
    client: Client,
}

// === impl CsrCleaner ===

impl CsrCleaner {
    /// Builds the cleaner on `factory`'s CertificateSigningRequest
    /// informer, deleting through `client`.
    pub fn new(factory: &SharedInformerFactory, client: Client) -> Self {
        Self { csrs: factory.informer::<CertificateSigningRequest>(), client }
    }

    /// Upstream `worker`: one pass over the cached requests.
    async fn clean(&self) {
        let now = Timestamp::now();
        for csr in self.csrs.store().list() {
            if let Err(error) = self.handle(&csr, now).await {
                tracing::error!(%error, csr = csr.name_any(), "Error while attempting to clean CSR");
            }
        }
    }

    /// Upstream `handle`: deletes `csr` when the core finds it due.
    async fn handle(&self, csr: &CertificateSigningRequest, now: Timestamp) -> Result<(), DeleteError> {
        let Some(reason) = core::cleanable(csr, now) else { return Ok(()) };
        let name = csr.name_any();
        match reason.deadline() {
            Some((expiration, limit)) => {
                let duration = format_go_duration(limit.unsigned_abs());
                tracing::info!(csr = name, expiration, duration, "{}", reason.message());
            }
            None => tracing::info!(csr = name, "{}", reason.message()),
        }
        let api: Api<CertificateSigningRequest> = Api::all(self.client.clone());
        match api.delete(&name, &DeleteParams::default()).await {
            Ok(_) => Ok(()),
            Err(source) => Err(DeleteError { name, source }),
        }
    }
}

impl Controller for CsrCleaner {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            tracing::info!("Starting CSR cleaner controller");
            let synced: [&(dyn HasSynced + Sync); 1] = [&self.csrs];
            if cx.wait_for_caches(&synced, &[]).await {
                loop {
                    self.clean().await;
                    tokio::select! {
                        () = tokio::time::sleep(POLLING_INTERVAL) => {}
                        () = cx.stop.clone() => break,
                    }
                }
            }
            tracing::info!("Shutting down CSR cleaner controller");
        })
    }
}
