//! Upstream's `endpoint_slice_controller_*` metrics (`endpointslice/metrics`),
//! with their names, labels, help texts and buckets.

use kcm_controllers::endpointslice::MetricsCache;
use prometheus::{Histogram, HistogramOpts, HistogramVec, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry};

/// Every `endpoint_slice_controller_*` metric.
#[derive(Clone, Debug)]
pub struct EndpointSliceMetrics {
    /// `endpoints_added_per_sync`.
    pub(super) endpoints_added: Histogram,
    /// `endpoints_removed_per_sync`.
    pub(super) endpoints_removed: Histogram,
    /// `endpoints_desired`.
    endpoints_desired: IntGauge,
    /// `num_endpoint_slices`.
    num_endpoint_slices: IntGauge,
    /// `desired_endpoint_slices`.
    desired_endpoint_slices: IntGauge,
    /// `changes` (to be deprecated in 1.38 for `changes_total`; 1.37 has both).
    changes: IntCounterVec,
    /// `changes_total`.
    changes_total: IntCounterVec,
    /// `endpointslices_changed_per_sync`, by `topology` and `traffic_distribution`.
    pub(super) changed_per_sync: HistogramVec,
    /// `syncs`, by `result`.
    syncs: IntCounterVec,
    /// `services_count_by_traffic_distribution`.
    services_by_traffic_distribution: IntGaugeVec,
}

/// The name of each metric: the subsystem and its own.
fn name(own: &str) -> String {
    format!("endpoint_slice_controller_{own}")
}

impl EndpointSliceMetrics {
    /// Registers the metrics in `registry`.
    ///
    /// # Errors
    /// One is registered already.
    pub fn register(registry: &Registry) -> prometheus::Result<Self> {
        let per_sync = prometheus::exponential_buckets(2.0, 2.0, 15)?;
        let metrics = Self {
            endpoints_added: Histogram::with_opts(
                HistogramOpts::new(name("endpoints_added_per_sync"), "Number of endpoints added on each Service sync")
                    .buckets(per_sync.clone()),
            )?,
            endpoints_removed: Histogram::with_opts(
                HistogramOpts::new(
                    name("endpoints_removed_per_sync"),
                    "Number of endpoints removed on each Service sync",
                )
                .buckets(per_sync),
            )?,
            endpoints_desired: IntGauge::new(name("endpoints_desired"), "Number of endpoints desired")?,
            num_endpoint_slices: IntGauge::new(name("num_endpoint_slices"), "Number of EndpointSlices")?,
            desired_endpoint_slices: IntGauge::new(
                name("desired_endpoint_slices"),
                "Number of EndpointSlices that would exist with perfect endpoint allocation",
            )?,
            changes: IntCounterVec::new(Opts::new(name("changes"), "Number of EndpointSlice changes"), &["operation"])?,
            changes_total: IntCounterVec::new(
                Opts::new(name("changes_total"), "Number of EndpointSlice changes"),
                &["operation"],
            )?,
            changed_per_sync: HistogramVec::new(
                HistogramOpts::new(
                    name("endpointslices_changed_per_sync"),
                    "Number of EndpointSlices changed on each Service sync",
                ),
                &["topology", "traffic_distribution"],
            )?,
            syncs: IntCounterVec::new(Opts::new(name("syncs"), "Number of EndpointSlice syncs"), &["result"])?,
            services_by_traffic_distribution: IntGaugeVec::new(
                Opts::new(
                    name("services_count_by_traffic_distribution"),
                    "Number of Services using some specific trafficDistribution",
                ),
                &["traffic_distribution"],
            )?,
        };
        registry.register(Box::new(metrics.endpoints_added.clone()))?;
        registry.register(Box::new(metrics.endpoints_removed.clone()))?;
        registry.register(Box::new(metrics.endpoints_desired.clone()))?;
        registry.register(Box::new(metrics.num_endpoint_slices.clone()))?;
        registry.register(Box::new(metrics.desired_endpoint_slices.clone()))?;
        registry.register(Box::new(metrics.changes.clone()))?;
        registry.register(Box::new(metrics.changes_total.clone()))?;
        registry.register(Box::new(metrics.changed_per_sync.clone()))?;
        registry.register(Box::new(metrics.syncs.clone()))?;
        registry.register(Box::new(metrics.services_by_traffic_distribution.clone()))?;
        Ok(metrics)
    }

    /// One slice written: `create`, `update` or `delete`.
    pub(super) fn changed(&self, operation: &str) {
        self.changes.with_label_values(&[operation]).inc();
        self.changes_total.with_label_values(&[operation]).inc();
    }

    /// One sync ended: `success`, `stale` or `error`.
    pub(super) fn synced(&self, result: &str) {
        self.syncs.with_label_values(&[result]).inc();
    }

    /// The gauges from the cache's totals (upstream `updateMetrics`).
    pub(super) fn show(&self, cache: &MetricsCache) {
        let totals = cache.totals();
        let gauge = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        self.endpoints_desired.set(gauge(totals.endpoints));
        self.num_endpoint_slices.set(gauge(totals.actual_slices));
        self.desired_endpoint_slices.set(gauge(totals.desired_slices));
        self.services_by_traffic_distribution.reset();
        for (value, count) in cache.services_by_traffic_distribution() {
            self.services_by_traffic_distribution.with_label_values(&[value]).set(gauge(count));
        }
    }
}
