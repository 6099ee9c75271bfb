//! The root CA certificate publisher's driver (upstream
//! `pkg/controller/certificates/rootcacertpublisher/`; the decision is
//! `kcm_controllers::rootcacertpublisher`).
//!
//! It owns:
//! - the handlers: a Namespace add queues it, an update only while it is
//!   `Active`; an update or delete of a `kube-root-ca.crt` ConfigMap queues
//!   its namespace;
//! - the `root_ca_cert_publisher` workqueue (upstream's default controller
//!   rate limiter, retried forever) and its one worker (upstream runs one;
//!   it has no flag);
//! - the sync: the core's create or update through the controller's own
//!   client (`root-ca-cert-publisher`), and upstream's
//!   `root_ca_cert_publisher_sync_total` and
//!   `root_ca_cert_publisher_sync_duration_seconds`, labelled by the sync's
//!   HTTP code;
//! - where the bundle comes from ([`root_ca`]): `--root-ca-file`, else
//!   the CA the daemon's own client trusts, as upstream's
//!   `startRootCACertificatePublisherController`.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kcm_controllers::rootcacertpublisher::{self as core, ROOT_CA_CONFIG_MAP, Write};
use kube::api::{Api, PostParams};
use kube::{Client, ResourceExt};
use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use super::api_errors::{code, namespace_terminating};
use super::namespace_keys::NamespaceHandler;
use futures::future::BoxFuture;
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::informer::{
    EventHandler, HandlerRegistration, HasSynced, SharedInformer, SharedInformerFactory, Store,
};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kcm_runtime::workqueue::{QueueMetrics, WorkQueue, default_controller_rate_limiter};

/// Upstream's controller name: metric label, log field.
pub const CONTROLLER_NAME: &str = "root-ca-certificate-publisher-controller";

/// The user-agent suffix of its client (upstream's `ClientOrDie` name).
pub const CLIENT_NAME: &str = "root-ca-cert-publisher";

/// The workqueue's name (the `name` label of the `workqueue_*` metrics).
pub const QUEUE_NAME: &str = "root_ca_cert_publisher";

/// Workers: upstream starts one, with no flag.
pub const WORKERS: usize = 1;

/// Why the bundle cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `--root-ca-file` cannot be read or holds no PEM certificate
    /// (upstream's message).
    #[error("error parsing root-ca-file at {path}: {message}")]
    RootCaFile {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
}

/// The bundle to publish: the PEM certificates of `root_ca_file` (checked
/// to hold at least one, as upstream's `readCA`), else `trusted` (the DER
/// certificates the daemon's client trusts, as PEM; empty when it trusts
/// none of its own, e.g. over plain HTTP).
///
/// # Errors
/// The file cannot be read or holds no certificate.
pub fn root_ca(root_ca_file: Option<&Path>, trusted: &[Vec<u8>]) -> Result<String, Error> {
    let Some(path) = root_ca_file else {
        let pems: Vec<pem::Pem> = trusted.iter().map(|der| pem::Pem::new("CERTIFICATE", der.as_slice())).collect();
        return Ok(pem::encode_many_config(&pems, pem::EncodeConfig::new().set_line_ending(pem::LineEnding::LF)));
    };
    let err = |message: String| Error::RootCaFile { path: path.display().to_string(), message };
    let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
    let certs: Vec<CertificateDer<'_>> =
        CertificateDer::pem_slice_iter(text.as_bytes()).collect::<Result<_, _>>().map_err(|e| err(e.to_string()))?;
    if certs.is_empty() {
        return Err(err("data does not contain any valid RSA or ECDSA certificates".to_owned()));
    }
    Ok(text)
}

/// Upstream's `root_ca_cert_publisher_*` metrics.
#[derive(Clone, Debug)]
pub struct PublisherMetrics {
    /// Syncs by code.
    syncs: IntCounterVec,
    /// Sync durations by code.
    latency: HistogramVec,
}

impl PublisherMetrics {
    /// Registers `root_ca_cert_publisher_sync_total` and
    /// `root_ca_cert_publisher_sync_duration_seconds` (upstream's help
    /// texts and buckets: 1 ms doubling 15 times).
    pub fn register(registry: &Registry) -> prometheus::Result<Self> {
        let help = "Number of namespace syncs happened in root ca cert publisher.";
        let syncs = IntCounterVec::new(Opts::new("root_ca_cert_publisher_sync_total", help), &["code"])?;
        let buckets = prometheus::exponential_buckets(0.001, 2.0, 15)?;
        let latency = HistogramVec::new(
            HistogramOpts::new("root_ca_cert_publisher_sync_duration_seconds", help).buckets(buckets),
            &["code"],
        )?;
        registry.register(Box::new(syncs.clone()))?;
        registry.register(Box::new(latency.clone()))?;
        Ok(Self { syncs, latency })
    }

    /// Counts one sync that started at `start`: code 200 when it succeeded,
    /// else the API error's code, else 500 (upstream `recordMetrics`).
    fn record(&self, start: Instant, result: &Result<(), kube::Error>) {
        let label = match result {
            Ok(()) => "200".to_owned(),
            Err(e) => code(e).filter(|c| *c != 0).unwrap_or(500).to_string(),
        };
        self.latency.with_label_values(&[&label]).observe(start.elapsed().as_secs_f64());
        self.syncs.with_label_values(&[&label]).inc();
    }
}

/// The publisher, ready to run once its caches sync.
pub struct RootCaCertPublisher {
    /// Names of namespaces to sync.
    queue: WorkQueue<String>,
    /// Read for their sync state.
    namespaces: SharedInformer<Namespace>,
    /// See `namespaces`.
    config_maps: SharedInformer<kcm_objects::ConfigMap>,
    /// The handlers' registrations: workers start once both saw the lists.
    registrations: [HandlerRegistration; 2],
    /// What the worker runs.
    syncer: Arc<Syncer>,
}

/// The per-namespace sync.
struct Syncer {
    /// Cached ConfigMaps (all namespaces).
    config_maps: Store<kcm_objects::ConfigMap>,
    /// The controller's own client.
    client: Client,
    /// The bundle published as `ca.crt`.
    root_ca: String,
    /// `None` in tests that register none.
    metrics: Option<PublisherMetrics>,
}

// === impl RootCaCertPublisher ===

impl RootCaCertPublisher {
    /// Builds the publisher of `root_ca` on `factory`'s Namespace and
    /// ConfigMap informers, writing through `client`.
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(
        factory: &SharedInformerFactory,
        client: Client,
        root_ca: String,
        metrics: Option<PublisherMetrics>,
        queue_metrics: Option<&QueueMetrics>,
    ) -> Self {
        let queue = WorkQueue::new(QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let namespaces = factory.informer::<Namespace>();
        let config_maps = factory.informer::<kcm_objects::ConfigMap>();
        let resync = Some(factory.default_resync());
        let registrations = [
            namespaces.add_handler(
                NamespaceHandler { queue: queue.clone(), on_update: core::queues_on_namespace_update },
                resync,
            ),
            config_maps.add_handler(ConfigMapHandler { queue: queue.clone() }, resync),
        ];
        let syncer = Arc::new(Syncer { config_maps: config_maps.store(), client, root_ca, metrics });
        Self { queue, namespaces, config_maps, registrations, syncer }
    }
}

impl Controller for RootCaCertPublisher {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let [ns, cm] = &self.registrations;
            let synced: Vec<&(dyn HasSynced + Sync)> = vec![&self.namespaces, &self.config_maps, ns, cm];
            cx.run_when_synced(&synced, self.queue.clone(), self.syncer.clone(), Retries::FOREVER).await;
        })
    }
}

// === handlers ===

/// `kube-root-ca.crt` updated or deleted: its namespace is queued.
struct ConfigMapHandler {
    queue: WorkQueue<String>,
}

impl ConfigMapHandler {
    fn enqueue(&self, cm: &ConfigMap) {
        if let Some(ns) = cm.namespace().filter(|_| core::queues_on_config_map_change(cm)) {
            self.queue.add(ns);
        }
    }
}

impl EventHandler<kcm_objects::ConfigMap> for ConfigMapHandler {
    fn on_add(&self, _cm: &Arc<kcm_objects::ConfigMap>) {}

    fn on_update(&self, _old: &Arc<kcm_objects::ConfigMap>, new: &Arc<kcm_objects::ConfigMap>) {
        self.enqueue(new);
    }

    fn on_delete(&self, cm: &Arc<kcm_objects::ConfigMap>) {
        self.enqueue(cm);
    }
}

// === impl Syncer ===

impl Reconcile for Syncer {
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let start = Instant::now();
        let result = self.publish(key).await;
        if let Some(metrics) = &self.metrics {
            metrics.record(start, &result);
        }
        result?;
        Ok(Next::Done)
    }
}

impl Syncer {
    /// Upstream `syncNamespace`.
    async fn publish(&self, namespace: &str) -> Result<(), kube::Error> {
        let cached = self.config_maps.get_namespaced(Some(namespace), ROOT_CA_CONFIG_MAP);
        let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), namespace);
        match core::sync(namespace, cached.as_deref().map(|c| -> &ConfigMap { c }), &self.root_ca) {
            Write::None => Ok(()),
            Write::Create(cm) => match api.create(&PostParams::default(), &cm).await {
                // The namespace is gone or going: nothing to retry.
                Err(e) if code(&e) == Some(404) || namespace_terminating(&e) => Ok(()),
                result => result.map(drop),
            },
            Write::Update(cm) => api.replace(ROOT_CA_CONFIG_MAP, &PostParams::default(), &cm).await.map(drop),
        }
    }
}

#[cfg(test)]
mod tests {
    //! Where the bundle comes from: the file, else the client's CAs.

    use super::*;

    // === utils ===

    fn certificate() -> rcgen::CertifiedKey<rcgen::KeyPair> {
        rcgen::generate_simple_self_signed(vec!["kube-ca".to_owned()]).expect("certificate")
    }

    // === tests ===

    #[test]
    fn the_file_is_published_as_it_is_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("ca.crt");
        let pem = certificate().cert.pem();
        std::fs::write(&path, &pem).expect("written");
        assert_eq!(root_ca(Some(&path), &[]).expect("read"), pem);
    }

    #[test]
    fn a_file_without_a_certificate_is_refused_with_upstreams_message() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("ca.crt");
        std::fs::write(&path, "not a certificate\n").expect("written");
        let error = root_ca(Some(&path), &[]).expect_err("refused").to_string();
        assert!(error.starts_with(&format!("error parsing root-ca-file at {}: ", path.display())), "{error}");
        let missing = dir.path().join("missing.crt");
        assert!(root_ca(Some(&missing), &[]).is_err());
    }

    #[test]
    fn without_a_file_the_clients_cas_are_published_as_pem() {
        let (first, second) = (certificate().cert, certificate().cert);
        let trusted = [first.der().to_vec(), second.der().to_vec()];
        let bundle = root_ca(None, &trusted).expect("encoded");
        let certs: Vec<CertificateDer<'_>> =
            CertificateDer::pem_slice_iter(bundle.as_bytes()).collect::<Result<_, _>>().expect("PEM");
        assert_eq!(certs.iter().map(|c| c.to_vec()).collect::<Vec<_>>(), trusted);
        assert_eq!(root_ca(None, &[]).expect("empty"), "", "no CA of its own: an empty bundle, as upstream");
    }
}
