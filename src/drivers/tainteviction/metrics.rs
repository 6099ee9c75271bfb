//! Upstream's metrics `taint_eviction_controller_pod_deletions_total` and
//! `taint_eviction_controller_pod_deletion_duration_seconds`.

use prometheus::{Histogram, HistogramOpts, IntCounter, Opts, Registry};

/// Upstream's buckets of the deletion latency histogram (5 ms to 4 min).
const DELETION_BUCKETS: [f64; 12] = [0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10.0, 30.0, 60.0, 120.0, 180.0, 240.0];

/// Upstream's `taint_eviction_controller_*` metrics.
#[derive(Clone, Debug)]
pub struct EvictionMetrics {
    /// Pods deleted since the start.
    pub(super) deletions: IntCounter,
    /// Seconds from a deletion's fire time to the pod's deletion.
    pub(super) latency: Histogram,
}

impl EvictionMetrics {
    /// Registers `taint_eviction_controller_pod_deletions_total` and
    /// `taint_eviction_controller_pod_deletion_duration_seconds`.
    pub fn register(registry: &Registry) -> prometheus::Result<Self> {
        let deletions = IntCounter::with_opts(Opts::new(
            "taint_eviction_controller_pod_deletions_total",
            "Total number of Pods deleted by TaintEvictionController since its start.",
        ))?;
        let latency = Histogram::with_opts(
            HistogramOpts::new(
                "taint_eviction_controller_pod_deletion_duration_seconds",
                "Latency, in seconds, between the time when a taint effect has been activated for the Pod and its \
                 deletion via TaintEvictionController.",
            )
            .buckets(DELETION_BUCKETS.to_vec()),
        )?;
        registry.register(Box::new(deletions.clone()))?;
        registry.register(Box::new(latency.clone()))?;
        Ok(EvictionMetrics { deletions, latency })
    }
}
