//! Upstream's metrics `pod_gc_collector_force_delete_pods_total` and
//! `pod_gc_collector_force_delete_pod_errors_total`, by `namespace` and
//! `reason` (`terminated`, `out-of-service`, `orphaned`, `unscheduled`).

use kcm_controllers::podgc::Reason;
use prometheus::{IntCounterVec, Opts, Registry};

/// Upstream's `pod_gc_collector_*` counters.
#[derive(Clone, Debug)]
pub struct PodGcMetrics {
    /// Force deletions attempted.
    deletions: IntCounterVec,
    /// Force deletions that failed (the status patch or the delete).
    errors: IntCounterVec,
}

impl PodGcMetrics {
    /// Registers both counters in `registry`.
    ///
    /// # Errors
    /// One is registered already.
    pub fn register(registry: &Registry) -> prometheus::Result<Self> {
        let labels = ["namespace", "reason"];
        let deletions = IntCounterVec::new(
            Opts::new(
                "pod_gc_collector_force_delete_pods_total",
                "Number of pods that are being forcefully deleted since the Pod GC Controller started.",
            ),
            &labels,
        )?;
        let errors = IntCounterVec::new(
            Opts::new(
                "pod_gc_collector_force_delete_pod_errors_total",
                "Number of errors encountered when forcefully deleting the pods since the Pod GC Controller started.",
            ),
            &labels,
        )?;
        registry.register(Box::new(deletions.clone()))?;
        registry.register(Box::new(errors.clone()))?;
        Ok(PodGcMetrics { deletions, errors })
    }

    /// Counts one force deletion of a pod in `namespace`, and its failure.
    pub(super) fn observe(&self, namespace: &str, reason: Reason, failed: bool) {
        let labels = [namespace, reason.label()];
        self.deletions.with_label_values(&labels).inc();
        if failed {
            self.errors.with_label_values(&labels).inc();
        }
    }
}
