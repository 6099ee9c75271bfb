//! Upstream's `endpoint_slice_mirroring_controller_*` metrics
//! (`pkg/controller/endpointslicemirroring/metrics/metrics.go`): names,
//! help texts and buckets as upstream's, none labelled but `changes`
//! (`operation`: `create`, `update`, `delete`).

use kcm_controllers::endpointslicemirroring::metrics_cache::Gauges;
use kcm_controllers::endpointslicemirroring::reconciler::Totals;
use prometheus::{Histogram, HistogramOpts, IntCounterVec, IntGauge, Opts, Registry};

/// The metrics' common prefix (upstream's subsystem).
const SUBSYSTEM: &str = "endpoint_slice_mirroring_controller";

/// The mirroring controller's metrics.
#[derive(Clone, Debug)]
pub struct MirroringMetrics {
    /// `endpoints_added_per_sync`.
    added: Histogram,
    /// `endpoints_updated_per_sync`.
    updated: Histogram,
    /// `endpoints_removed_per_sync`.
    removed: Histogram,
    /// `addresses_skipped_per_sync`.
    skipped: Histogram,
    /// `endpoints_sync_duration`.
    duration: Histogram,
    /// `endpoints_desired`.
    endpoints_desired: IntGauge,
    /// `num_endpoint_slices`.
    num_slices: IntGauge,
    /// `desired_endpoint_slices`.
    desired_slices: IntGauge,
    /// `changes{operation}`.
    changes: IntCounterVec,
}

impl MirroringMetrics {
    /// Registers the nine metrics on `registry`.
    pub fn register(registry: &Registry) -> prometheus::Result<Self> {
        let counts = prometheus::exponential_buckets(2.0, 2.0, 15)?;
        let histogram = |name: &str, help: &str, buckets: Vec<f64>| -> prometheus::Result<Histogram> {
            let h = Histogram::with_opts(HistogramOpts::new(name, help).subsystem(SUBSYSTEM).buckets(buckets))?;
            registry.register(Box::new(h.clone()))?;
            Ok(h)
        };
        let gauge = |name: &str, help: &str| -> prometheus::Result<IntGauge> {
            let g = IntGauge::with_opts(Opts::new(name, help).subsystem(SUBSYSTEM))?;
            registry.register(Box::new(g.clone()))?;
            Ok(g)
        };
        let changes = IntCounterVec::new(
            Opts::new("changes", "Number of EndpointSlice changes").subsystem(SUBSYSTEM),
            &["operation"],
        )?;
        registry.register(Box::new(changes.clone()))?;
        Ok(Self {
            added: histogram(
                "endpoints_added_per_sync",
                "Number of endpoints added on each Endpoints sync",
                counts.clone(),
            )?,
            updated: histogram(
                "endpoints_updated_per_sync",
                "Number of endpoints updated on each Endpoints sync",
                counts.clone(),
            )?,
            removed: histogram(
                "endpoints_removed_per_sync",
                "Number of endpoints removed on each Endpoints sync",
                counts.clone(),
            )?,
            skipped: histogram(
                "addresses_skipped_per_sync",
                "Number of addresses skipped on each Endpoints sync due to being invalid or exceeding MaxEndpointsPerSubset",
                counts,
            )?,
            duration: histogram(
                "endpoints_sync_duration",
                "Duration of syncEndpoints() in seconds",
                prometheus::exponential_buckets(0.001, 2.0, 15)?,
            )?,
            endpoints_desired: gauge("endpoints_desired", "Number of endpoints desired")?,
            num_slices: gauge("num_endpoint_slices", "Number of EndpointSlices")?,
            desired_slices: gauge(
                "desired_endpoint_slices",
                "Number of EndpointSlices that would exist with perfect endpoint allocation",
            )?,
            changes,
        })
    }

    /// One sync's totals and skipped addresses.
    pub fn record_sync(&self, totals: Totals, skipped: usize) {
        self.skipped.observe(skipped as f64);
        self.added.observe(totals.added as f64);
        self.updated.observe(totals.updated as f64);
        self.removed.observe(totals.removed as f64);
    }

    /// A sync that took `seconds` (upstream counts whole milliseconds).
    pub fn record_duration(&self, elapsed: std::time::Duration) {
        self.duration.observe(elapsed.as_millis() as f64 / 1000.0);
    }

    /// The gauges' new values.
    pub fn set_gauges(&self, gauges: Gauges) {
        let int = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        self.endpoints_desired.set(int(gauges.endpoints_desired));
        self.num_slices.set(int(gauges.num_endpoint_slices));
        self.desired_slices.set(int(gauges.desired_endpoint_slices));
    }

    /// One slice written (`create`, `update` or `delete`).
    pub fn change(&self, operation: &str) {
        self.changes.with_label_values(&[operation]).inc();
    }
}
