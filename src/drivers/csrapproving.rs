//! The CSR approving controller's driver (upstream
//! `pkg/controller/certificates/approver/sarapprove.go` on the loop of
//! `certificate_controller.go`; the decisions are
//! `kcm_controllers::csrapproving`).
//!
//! It owns:
//! - the handler: every CertificateSigningRequest add, update and delete
//!   queues its name (upstream's `enqueueCertificateRequest`);
//! - the `certificate` workqueue with upstream's limiter (the larger of a
//!   per-key backoff from 200 ms doubling to 1000 s and a 10 qps, burst
//!   100 bucket), retried forever, and its five workers (upstream's fixed
//!   number; it has no flag);
//! - the sync (upstream `syncFunc` then `handle`): the cached request, if
//!   still there and not issued, through the core's steps: each
//!   SubjectAccessReview created through the controller's own client
//!   (`certificate-controller`), then the approved request written
//!   through the `/approval` subresource. A request recognised but not
//!   allowed is retried with backoff, as upstream's ignorable error.
//!
//! Upstream records no Events and no metrics of its own here beyond the
//! workqueue's.

use std::sync::Arc;
use std::time::Instant;

use futures::future::BoxFuture;
use k8s_openapi::api::authorization::v1::SubjectAccessReview;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use kcm_controllers::csrapproving::{Approval, RECOGNIZERS, Step};
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::informer::{
    EventHandler, HandlerRegistration, HasSynced, SharedInformer, SharedInformerFactory, Store,
};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kcm_runtime::workqueue::{QueueMetrics, WorkQueue};
use kube::api::{Api, PostParams};
use kube::{Client, ResourceExt};

use super::certificates;

/// Upstream's controller name: metric label, log field.
pub const CONTROLLER_NAME: &str = "certificatesigningrequest-approving-controller";

/// The user-agent suffix of its client (upstream's `NewClient` name).
pub const CLIENT_NAME: &str = "certificate-controller";

/// Workers: upstream starts five, with no flag.
pub const WORKERS: usize = 5;

/// Why one sync failed: the key is retried with backoff.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A review could not be created.
    #[error("creating a SubjectAccessReview: {0}")]
    Review(#[source] kube::Error),
    /// The approval could not be written (upstream's message).
    #[error("error updating approval for csr: {0}")]
    Approval(#[source] kube::Error),
}

/// The approving controller, ready to run once its cache syncs.
pub struct CsrApprovingController {
    /// Names of requests to sync.
    queue: WorkQueue<String>,
    /// Read for its sync state.
    csrs: SharedInformer<CertificateSigningRequest>,
    /// The handler's registration: workers start once it saw the list.
    registration: HandlerRegistration,
    /// What the workers run.
    syncer: Arc<Syncer>,
}

/// The per-request sync.
struct Syncer {
    /// Cached requests.
    csrs: Store<CertificateSigningRequest>,
    /// The controller's own client.
    client: Client,
}

// === impl CsrApprovingController ===

impl CsrApprovingController {
    /// Builds the controller on `factory`'s CertificateSigningRequest
    /// informer, reviewing and approving through `client`.
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(factory: &SharedInformerFactory, client: Client, queue_metrics: Option<&QueueMetrics>) -> Self {
        let queue = WorkQueue::new(certificates::QUEUE_NAME, certificates::rate_limiter(), queue_metrics);
        let csrs = factory.informer::<CertificateSigningRequest>();
        let registration = csrs.add_handler(CsrHandler { queue: queue.clone() }, Some(factory.default_resync()));
        let syncer = Arc::new(Syncer { csrs: csrs.store(), client });
        Self { queue, csrs, registration, syncer }
    }
}

impl Controller for CsrApprovingController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            tracing::info!(name = "csrapproving", "Starting certificate controller");
            let synced: Vec<&(dyn HasSynced + Sync)> = vec![&self.csrs, &self.registration];
            cx.run_when_synced(&synced, self.queue.clone(), self.syncer.clone(), Retries::FOREVER).await;
            tracing::info!(name = "csrapproving", "Shutting down certificate controller");
        })
    }
}

// === handlers ===

/// Every request event queues its name, logged as upstream's at debug
/// level.
struct CsrHandler {
    queue: WorkQueue<String>,
}

impl EventHandler<CertificateSigningRequest> for CsrHandler {
    fn on_add(&self, csr: &Arc<CertificateSigningRequest>) {
        tracing::debug!(csr = csr.name_any(), "Adding certificate request");
        self.queue.add(csr.name_any());
    }

    fn on_update(&self, old: &Arc<CertificateSigningRequest>, new: &Arc<CertificateSigningRequest>) {
        tracing::debug!(old = old.name_any(), "Updating certificate request");
        self.queue.add(new.name_any());
    }

    fn on_delete(&self, csr: &Arc<CertificateSigningRequest>) {
        tracing::debug!(csr = csr.name_any(), "Deleting certificate request");
        self.queue.add(csr.name_any());
    }
}

// === impl Syncer ===

impl Reconcile for Syncer {
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let start = Instant::now();
        let result = self.approve(key).await;
        tracing::debug!(csr = key, elapsed_time = ?start.elapsed(), "Finished syncing certificate request");
        result.map(|()| Next::Done)
    }
}

impl Syncer {
    /// Upstream `syncFunc` and `sarApprover.handle`.
    async fn approve(&self, key: &str) -> Result<(), SyncError> {
        let Some(csr) = self.csrs.get(key) else {
            tracing::debug!(csr = key, "csr has been deleted");
            return Ok(());
        };
        let mut approval = Approval::start(&csr, &RECOGNIZERS)?;
        loop {
            match approval.next() {
                Step::Review(review) => {
                    let reviews: Api<SubjectAccessReview> = Api::all(self.client.clone());
                    let answer = reviews.create(&PostParams::default(), &review).await.map_err(Error::Review)?;
                    approval.reviewed(answer.status.is_some_and(|s| s.allowed));
                }
                Step::Approve(approved) => {
                    let csrs: Api<CertificateSigningRequest> = Api::all(self.client.clone());
                    let pp = PostParams::default();
                    csrs.replace_subresource("approval", key, &pp, &approved).await.map_err(Error::Approval)?;
                    tracing::debug!(csr = key, "Approved certificate request");
                    return Ok(());
                }
                Step::LeaveAlone => return Ok(()),
                Step::NotApproved(error) => {
                    tracing::debug!(csr = key, err = %error, "Sync certificate request failed");
                    return Err(error.into());
                }
            }
        }
    }
}
