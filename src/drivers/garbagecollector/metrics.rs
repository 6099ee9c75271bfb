//! The collector's metrics ([`GcMetrics`]): upstream's sync error counter,
//! and the graph's size and the number of types feeding it.

use prometheus::{IntCounter, IntGauge, Registry};

/// The collector's metrics.
#[derive(Debug, Clone)]
pub struct GcMetrics {
    /// Upstream `garbagecollector_controller_resources_sync_error_total`.
    pub(super) resources_sync_errors: IntCounter,
    /// `kcm_garbagecollector_graph_nodes`: nodes of the dependency graph
    /// (no upstream equivalent).
    pub(super) graph_nodes: IntGauge,
    /// `kcm_garbagecollector_monitored_resources`: resource types feeding
    /// the graph (no upstream equivalent).
    pub(super) monitored_resources: IntGauge,
}

impl GcMetrics {
    /// Creates and registers the metrics on `registry`.
    ///
    /// # Errors
    /// A metric of the same name is already registered.
    pub fn register(registry: &Registry) -> prometheus::Result<Self> {
        let metrics = GcMetrics {
            resources_sync_errors: IntCounter::new(
                "garbagecollector_controller_resources_sync_error_total",
                "Number of garbage collector resources sync errors",
            )?,
            graph_nodes: IntGauge::new(
                "kcm_garbagecollector_graph_nodes",
                "Nodes (observed objects and virtual owners) in the garbage collector's dependency graph.",
            )?,
            monitored_resources: IntGauge::new(
                "kcm_garbagecollector_monitored_resources",
                "Resource types whose objects feed the garbage collector's dependency graph.",
            )?,
        };
        registry.register(Box::new(metrics.resources_sync_errors.clone()))?;
        registry.register(Box::new(metrics.graph_nodes.clone()))?;
        registry.register(Box::new(metrics.monitored_resources.clone()))?;
        Ok(metrics)
    }
}
