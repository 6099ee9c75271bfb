//! Upstream's `node_collector_*` metrics: the zones' health, size and
//! not-ready nodes, the evictions (`NoExecute` taints) per zone, and how
//! long the monitor pass takes for one node and for all.

use prometheus::{GaugeVec, Histogram, HistogramOpts, IntCounterVec, Opts, Registry};

/// Upstream's `node_collector_*` metrics.
#[derive(Clone, Debug)]
pub struct NodeLifecycleMetrics {
    /// `node_collector_zone_health{zone}`.
    pub(super) zone_health: GaugeVec,
    /// `node_collector_zone_size{zone}`.
    pub(super) zone_size: GaugeVec,
    /// `node_collector_unhealthy_nodes_in_zone{zone}`.
    pub(super) unhealthy_nodes: GaugeVec,
    /// `node_collector_evictions_total{zone}`.
    pub(super) evictions: IntCounterVec,
    /// `node_collector_update_node_health_duration_seconds`.
    pub(super) update_node_health: Histogram,
    /// `node_collector_update_all_nodes_health_duration_seconds`.
    pub(super) update_all_nodes_health: Histogram,
}

impl NodeLifecycleMetrics {
    /// Registers the metrics with upstream's names, help and buckets.
    pub fn register(registry: &Registry) -> prometheus::Result<Self> {
        let gauge = |name: &str, help: &str| GaugeVec::new(Opts::new(name, help), &["zone"]);
        let zone_health = gauge("node_collector_zone_health", "Gauge measuring percentage of healthy nodes per zone.")?;
        let zone_size = gauge("node_collector_zone_size", "Gauge measuring number of registered Nodes per zones.")?;
        let unhealthy_nodes =
            gauge("node_collector_unhealthy_nodes_in_zone", "Gauge measuring number of not Ready Nodes per zones.")?;
        let evictions = IntCounterVec::new(
            Opts::new(
                "node_collector_evictions_total",
                "Number of Node evictions that happened since current instance of NodeController started.",
            ),
            &["zone"],
        )?;
        let update_node_health = Histogram::with_opts(
            HistogramOpts::new(
                "node_collector_update_node_health_duration_seconds",
                "Duration in seconds for NodeController to update the health of a single node.",
            )
            .buckets(prometheus::exponential_buckets(0.001, 4.0, 8)?),
        )?;
        let update_all_nodes_health = Histogram::with_opts(
            HistogramOpts::new(
                "node_collector_update_all_nodes_health_duration_seconds",
                "Duration in seconds for NodeController to update the health of all nodes.",
            )
            .buckets(prometheus::exponential_buckets(0.01, 4.0, 8)?),
        )?;
        for c in [&zone_health, &zone_size, &unhealthy_nodes] {
            registry.register(Box::new(c.clone()))?;
        }
        registry.register(Box::new(evictions.clone()))?;
        registry.register(Box::new(update_node_health.clone()))?;
        registry.register(Box::new(update_all_nodes_health.clone()))?;
        Ok(NodeLifecycleMetrics {
            zone_health,
            zone_size,
            unhealthy_nodes,
            evictions,
            update_node_health,
            update_all_nodes_health,
        })
    }
}
