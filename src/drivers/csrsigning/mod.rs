//! The CSR signing controller's driver (upstream
//! `pkg/controller/certificates/signer/`, each signer a
//! `certificates.CertificateController`; the decisions are
//! `kcm_controllers::csrsigning`).
//!
//! It owns, for each built-in signer whose CA is configured:
//! - its CA ([`ca::CaProvider`], read again when its files change);
//! - the shared certificate controller loop of upstream's
//!   `certificate_controller.go`: every add, update and delete of a
//!   CertificateSigningRequest (and every resync) queues its name on the
//!   signer's `certificate` workqueue (upstream's limiter: per-key backoff from
//!   200 ms to 1000 s, and 10 qps with a burst of 100), retried forever by
//!   [`WORKERS`] workers;
//! - the sync: the cached CSR's [`decide`](core::decide), then the status
//!   update through the controller's own client (`certificate-controller`):
//!   a `Failed` condition, or the PEM certificate.

use std::sync::Arc;
use std::time::Duration;

use futures::future::{BoxFuture, join_all};
use jiff::Timestamp;
use k8s_openapi::ByteString;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kcm_controllers::csrsigning::{self as core, Decision, Signer};
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::informer::{Enqueue, HandlerRegistration, HasSynced, SharedInformer, SharedInformerFactory, Store};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kcm_runtime::workqueue::{QueueMetrics, WorkQueue};
use kube::Client;
use kube::api::{Api, PostParams};

pub mod ca;

use ca::CaProvider;

use super::certificates;

/// Upstream's controller name.
pub const CONTROLLER_NAME: &str = "certificatesigningrequest-signing-controller";

/// The user-agent suffix of its client (upstream's `ClientOrDie` name).
pub const CLIENT_NAME: &str = "certificate-controller";

/// Workers per signer: upstream runs five, with no flag.
pub const WORKERS: usize = 5;

/// The CSR signing controller: one loop per configured signer.
pub struct CsrSigningController {
    /// The CSR informer every loop reads.
    csrs: SharedInformer<CertificateSigningRequest>,
    /// The loops.
    loops: Vec<SignerLoop>,
}

/// One signer's certificate controller.
struct SignerLoop {
    queue: WorkQueue<String>,
    registration: HandlerRegistration,
    syncer: Arc<Syncer>,
}

/// One signer's sync.
struct Syncer {
    signer: Signer,
    csrs: Store<CertificateSigningRequest>,
    client: Client,
    ca: CaProvider,
    /// `--cluster-signing-duration`.
    max_duration: Duration,
}

// === impl CsrSigningController ===

impl CsrSigningController {
    /// Builds a loop for each of `signers` (with its CA) on `factory`'s
    /// CSR informer, writing through `client`.
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueues spawn their timer tasks).
    pub fn new(
        factory: &SharedInformerFactory,
        client: Client,
        signers: Vec<(Signer, CaProvider)>,
        max_duration: Duration,
        queue_metrics: Option<&QueueMetrics>,
    ) -> Self {
        let csrs = factory.informer::<CertificateSigningRequest>();
        // Upstream's AddEventHandler: the factory's resync period.
        let resync = Some(factory.default_resync());
        let loops = signers
            .into_iter()
            .map(|(signer, ca)| {
                let queue = WorkQueue::new(certificates::QUEUE_NAME, certificates::rate_limiter(), queue_metrics);
                let registration = csrs.add_handler(Enqueue { queue: queue.clone() }, resync);
                let syncer = Arc::new(Syncer { signer, csrs: csrs.store(), client: client.clone(), ca, max_duration });
                SignerLoop { queue, registration, syncer }
            })
            .collect();
        Self { csrs, loops }
    }
}

impl Controller for CsrSigningController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let runs = self.loops.iter().map(|l| {
                let (signer, ca) = (l.syncer.signer.controller_name(), l.syncer.ca.name());
                tracing::info!(name = ca, "Starting controller");
                tracing::info!(name = signer, "Starting certificate controller");
                let synced: Vec<&(dyn HasSynced + Sync)> = vec![&self.csrs, &l.registration];
                let cx = &cx;
                async move {
                    cx.run_when_synced(&synced, l.queue.clone(), l.syncer.clone(), Retries::FOREVER).await;
                    tracing::info!(name = signer, "Shutting down certificate controller");
                }
            });
            join_all(runs).await;
        })
    }
}

// === impl Syncer ===

impl Reconcile for Syncer {
    /// Upstream's `syncFunc` and the signer's `handle`.
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let Some(cached) = self.csrs.get(key) else {
            tracing::debug!(csr = key, "csr has been deleted");
            return Ok(Next::Done);
        };
        let decision = core::decide(&cached, self.signer, self.max_duration, Time(Timestamp::now()))?;
        let mut csr = (*cached).clone();
        let status = csr.status.get_or_insert_with(Default::default);
        let api: Api<CertificateSigningRequest> = Api::all(self.client.clone());
        match decision {
            Decision::Skip => return Ok(Next::Done),
            Decision::Fail(condition) => {
                status.conditions.get_or_insert_with(Vec::new).push(condition);
                api.replace_status(key, &PostParams::default(), &csr)
                    .await
                    .map_err(|e| format!("error adding failure condition for csr: {e}"))?;
            }
            Decision::Sign { request, policy } => {
                let serial: [u8; 16] = rand_serial()?;
                let der = self
                    .ca
                    .current()
                    .sign(&request, &policy, Timestamp::now(), serial)
                    .map_err(|e| format!("error auto signing csr: {e}"))?;
                let pem = pem::encode_config(
                    &pem::Pem::new("CERTIFICATE", der),
                    pem::EncodeConfig::new().set_line_ending(pem::LineEnding::LF),
                );
                status.certificate = Some(ByteString(pem.into_bytes()));
                api.replace_status(key, &PostParams::default(), &csr)
                    .await
                    .map_err(|e| format!("error updating signature for csr: {e}"))?;
            }
        }
        Ok(Next::Done)
    }
}

/// 16 random bytes: a serial below 2^128, as upstream's `rand.Int`.
fn rand_serial() -> Result<[u8; 16], String> {
    let mut serial = [0; 16];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut serial)
        .map_err(|_| "error auto signing csr: unable to generate a serial number".to_owned())?;
    Ok(serial)
}
