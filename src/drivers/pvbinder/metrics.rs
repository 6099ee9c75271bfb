//! The binder's metrics, with upstream's names, help texts and labels
//! (`pkg/controller/volume/persistentvolume/metrics/metrics.go`, and
//! `volume_operation_total_seconds` from `pkg/volume/util/metrics.go`);
//! what they count is `kcm_controllers::pvbinder::metrics`.
//!
//! - `pv_collector_{total_pv,bound_pv,unbound_pv,bound_pvc,unbound_pvc}_count`:
//!   counted from the volume and claim caches at each scrape.
//! - `retroactive_storageclass_total`, `retroactive_storageclass_errors_total`:
//!   default classes written to claims that had none, and the failed writes
//!   (counted in both, as upstream).
//! - `volume_operation_errors_total{plugin_name, operation_name}` and
//!   `volume_operation_total_seconds{plugin_name, operation_name}`: the
//!   provisionings and deletions timed end to end, their start times kept
//!   here. Upstream's `volume_operation_total_errors`, deprecated in 1.36
//!   and so hidden in 1.37, is not exported (kcm-rs refuses
//!   `--show-hidden-metrics-for-version`).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use kcm_controllers::pvbinder::metrics::{Metric, OperationStartTimes, Outcome, count};
use kcm_runtime::informer::{SharedInformerFactory, Store};
use prometheus::core::{Collector, Desc};
use prometheus::proto::MetricFamily;
use prometheus::{HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGaugeVec, Opts, Registry};

/// Upstream's buckets for `volume_operation_total_seconds`.
const OPERATION_BUCKETS: [f64; 13] = [0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 15.0, 25.0, 50.0, 120.0, 300.0, 600.0];

/// The binder's metrics, registered once, shared by its handlers and syncs.
#[derive(Clone)]
pub struct PvBinderMetrics {
    retroactive_total: IntCounter,
    retroactive_errors_total: IntCounter,
    operation_errors_total: IntCounterVec,
    operation_total_seconds: HistogramVec,
    /// The start of each provisioning and deletion being timed: written by
    /// the syncs (a start, an error, a binding) and by the handlers (a
    /// deleted volume ends its deletion, a deleted claim is forgotten).
    started: Arc<Mutex<OperationStartTimes>>,
}

impl PvBinderMetrics {
    /// Registers the metrics on `registry`, the gauges counting from
    /// `factory`'s volume and claim informers.
    ///
    /// # Errors
    /// A metric of the same name is registered there already.
    pub fn register(registry: &Registry, factory: &SharedInformerFactory) -> prometheus::Result<Self> {
        let counts = PvAndPvcCounts::new(
            factory.informer::<PersistentVolume>().store(),
            factory.informer::<PersistentVolumeClaim>().store(),
        )?;
        let retroactive_total = IntCounter::new(
            "retroactive_storageclass_total",
            "Total number of retroactive StorageClass assignments to persistent volume claim",
        )?;
        let retroactive_errors_total = IntCounter::new(
            "retroactive_storageclass_errors_total",
            "Total number of failed retroactive StorageClass assignments to persistent volume claim",
        )?;
        let labels = ["plugin_name", "operation_name"];
        let operation_errors_total =
            IntCounterVec::new(Opts::new("volume_operation_errors_total", "Total volume operation errors"), &labels)?;
        let seconds =
            HistogramOpts::new("volume_operation_total_seconds", "Storage operation end to end duration in seconds")
                .buckets(OPERATION_BUCKETS.to_vec());
        let operation_total_seconds = HistogramVec::new(seconds, &labels)?;
        registry.register(Box::new(counts))?;
        registry.register(Box::new(retroactive_total.clone()))?;
        registry.register(Box::new(retroactive_errors_total.clone()))?;
        registry.register(Box::new(operation_errors_total.clone()))?;
        registry.register(Box::new(operation_total_seconds.clone()))?;
        Ok(Self {
            retroactive_total,
            retroactive_errors_total,
            operation_errors_total,
            operation_total_seconds,
            started: Arc::default(),
        })
    }

    /// Records what a sync asked for.
    pub(super) fn record(&self, metric: Metric) {
        match metric {
            Metric::RetroactiveClass { ok } => {
                self.retroactive_total.inc();
                if !ok {
                    self.retroactive_errors_total.inc();
                }
            }
            Metric::OperationStarted { key, plugin, operation } => {
                self.started().add_if_not_exist(&key, &plugin, operation, Instant::now());
            }
            Metric::OperationEnded { key, failed } => self.ended(&key, failed),
        }
    }

    /// A volume is gone: its deletion, if timed, has ended (upstream
    /// `deleteVolume`).
    pub(super) fn volume_deleted(&self, name: &str) {
        self.ended(name, false);
    }

    /// A claim is gone before it was bound: its provisioning is no longer
    /// timed (upstream `deleteClaim`).
    pub(super) fn claim_deleted(&self, key: &str) {
        self.started().delete(key);
    }

    fn ended(&self, key: &str, failed: bool) {
        let outcome = self.started().record(key, failed, Instant::now());
        match outcome {
            Some(Outcome::Error { plugin, operation }) => {
                self.operation_errors_total.with_label_values(&[plugin.as_str(), operation.as_str()]).inc();
            }
            Some(Outcome::Latency { plugin, operation, seconds }) => {
                self.operation_total_seconds.with_label_values(&[plugin.as_str(), operation.as_str()]).observe(seconds);
            }
            None => {}
        }
    }

    fn started(&self) -> std::sync::MutexGuard<'_, OperationStartTimes> {
        self.started.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

// === impl PvAndPvcCounts ===

/// The `pv_collector_*` gauges, set from the caches at each scrape
/// (upstream's `pvAndPVCCountCollector`).
struct PvAndPvcCounts {
    volumes: Store<PersistentVolume>,
    claims: Store<PersistentVolumeClaim>,
    total_pv: IntGaugeVec,
    bound_pv: IntGaugeVec,
    unbound_pv: IntGaugeVec,
    bound_pvc: IntGaugeVec,
    unbound_pvc: IntGaugeVec,
    /// One scrape at a time: each resets the gauges and sets them anew.
    scrape: Mutex<()>,
}

impl PvAndPvcCounts {
    fn new(volumes: Store<PersistentVolume>, claims: Store<PersistentVolumeClaim>) -> prometheus::Result<Self> {
        let gauge = |name: &str, help: &str, labels: &[&str]| {
            IntGaugeVec::new(Opts::new(name, help).subsystem("pv_collector"), labels)
        };
        let claim_labels = ["namespace", "storage_class", "volume_attributes_class"];
        Ok(Self {
            volumes,
            claims,
            total_pv: gauge(
                "total_pv_count",
                "Gauge measuring total number of persistent volumes",
                &["plugin_name", "volume_mode"],
            )?,
            bound_pv: gauge(
                "bound_pv_count",
                "Gauge measuring number of persistent volume currently bound",
                &["storage_class"],
            )?,
            unbound_pv: gauge(
                "unbound_pv_count",
                "Gauge measuring number of persistent volume currently unbound",
                &["storage_class"],
            )?,
            bound_pvc: gauge(
                "bound_pvc_count",
                "Gauge measuring number of persistent volume claim currently bound",
                &claim_labels,
            )?,
            unbound_pvc: gauge(
                "unbound_pvc_count",
                "Gauge measuring number of persistent volume claim currently unbound",
                &claim_labels,
            )?,
            scrape: Mutex::default(),
        })
    }

    fn gauges(&self) -> [&IntGaugeVec; 5] {
        [&self.total_pv, &self.bound_pv, &self.unbound_pv, &self.bound_pvc, &self.unbound_pvc]
    }
}

impl Collector for PvAndPvcCounts {
    fn desc(&self) -> Vec<&Desc> {
        self.gauges().into_iter().flat_map(Collector::desc).collect()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let _scrape = self.scrape.lock().unwrap_or_else(PoisonError::into_inner);
        let (volumes, claims) = (self.volumes.list(), self.claims.list());
        let counts = count(volumes.iter().map(|v| &**v), claims.iter().map(|c| &**c));
        self.gauges().into_iter().for_each(|g| g.reset());
        let set = |gauge: &IntGaugeVec, labels: &[&str], n: u64| {
            gauge.with_label_values(labels).set(i64::try_from(n).unwrap_or(i64::MAX));
        };
        for ((plugin, mode), n) in &counts.total_pv {
            set(&self.total_pv, &[plugin, mode], *n);
        }
        for (class, n) in &counts.bound_pv {
            set(&self.bound_pv, &[class], *n);
        }
        for (class, n) in &counts.unbound_pv {
            set(&self.unbound_pv, &[class], *n);
        }
        for (gauge, by_labels) in [(&self.bound_pvc, &counts.bound_pvc), (&self.unbound_pvc, &counts.unbound_pvc)] {
            for (l, n) in by_labels {
                set(gauge, &[&l.namespace, &l.storage_class, &l.volume_attributes_class], *n);
            }
        }
        self.gauges().into_iter().flat_map(Collector::collect).collect()
    }
}
