//! The attach/detach controller's metrics, with upstream's names and help:
//! - `attach_detach_controller_attachdetach_controller_forced_detaches{reason}`
//!   (upstream's counter, whose subsystem `attach_detach_controller` comes
//!   before its name);
//! - `storage_count_attachable_volumes_in_use{node, volume_plugin}` and
//!   `attachdetach_controller_total_volumes{plugin_name, state}`, gauges
//!   computed at each scrape from the caches and from what each node's
//!   last sync saw.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use prometheus::core::{Collector, Desc};
use prometheus::proto::MetricFamily;
use prometheus::{IntCounterVec, IntGaugeVec, Opts, Registry};

/// What the gauges read at each scrape (the syncer, once the controller
/// is built).
pub(super) trait VolumeCounts: Send + Sync {
    /// `storage_count_attachable_volumes_in_use`, by (node, plugin).
    fn volumes_in_use(&self) -> BTreeMap<(String, String), i64>;
    /// `attachdetach_controller_total_volumes`, by (plugin, state).
    fn totals(&self) -> BTreeMap<(String, &'static str), i64>;
}

/// The controller's metrics, registered before it is built.
#[derive(Clone)]
pub struct AttachDetachMetrics {
    forced_detaches: IntCounterVec,
    state: StateGauges,
}

/// The two gauges, read off their source once the controller is built.
#[derive(Clone)]
struct StateGauges {
    in_use: IntGaugeVec,
    total: IntGaugeVec,
    source: Arc<OnceLock<Arc<dyn VolumeCounts>>>,
}

impl AttachDetachMetrics {
    /// Registers the counter and the gauges on `registry`.
    pub fn register(registry: &Registry) -> prometheus::Result<Self> {
        let opts = Opts::new(
            "attachdetach_controller_forced_detaches",
            "Number of times the A/D Controller performed a forced detach",
        )
        .subsystem("attach_detach_controller");
        let forced_detaches = IntCounterVec::new(opts, &["reason"])?;
        let in_use = IntGaugeVec::new(
            Opts::new("storage_count_attachable_volumes_in_use", "Measure number of volumes in use"),
            &["node", "volume_plugin"],
        )?;
        let total = IntGaugeVec::new(
            Opts::new("attachdetach_controller_total_volumes", "Number of volumes in A/D Controller"),
            &["plugin_name", "state"],
        )?;
        let state = StateGauges { in_use, total, source: Arc::default() };
        registry.register(Box::new(forced_detaches.clone()))?;
        registry.register(Box::new(state.clone()))?;
        Ok(Self { forced_detaches, state })
    }

    /// Counts a forced detach.
    pub(super) fn forced(&self, reason: &str) {
        self.forced_detaches.with_label_values(&[reason]).inc();
    }

    /// Reads the gauges off `source` from now on.
    pub(super) fn observe(&self, source: Arc<dyn VolumeCounts>) {
        let _ = self.state.source.set(source);
    }
}

impl Collector for StateGauges {
    fn desc(&self) -> Vec<&Desc> {
        self.in_use.desc().into_iter().chain(self.total.desc()).collect()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        self.in_use.reset();
        self.total.reset();
        if let Some(source) = self.source.get() {
            for ((node, plugin), count) in source.volumes_in_use() {
                self.in_use.with_label_values(&[node.as_str(), plugin.as_str()]).set(count);
            }
            for ((plugin, state), count) in source.totals() {
                self.total.with_label_values(&[plugin.as_str(), state]).set(count);
            }
        }
        self.in_use.collect().into_iter().chain(self.total.collect()).collect()
    }
}
