//! The node lifecycle controller's settings (upstream's
//! `options/nodelifecyclecontroller.go`, plus `--node-monitor-period`,
//! which upstream lists among the generic flags and only this controller
//! reads): grace periods and eviction rates, none negative.

use kcm_controllers::node::health::Grace;
use kcm_controllers::node::monitor;
use kcm_controllers::node::zone::Rates;

use super::ControllerFlags;
use crate::config::{Error, GoDuration, Result};
use crate::drivers::nodelifecycle::Settings;

/// The node lifecycle controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct NodeLifecycleFlags {
    /// The period for syncing NodeStatus in NodeController.
    #[arg(long, value_name = "duration", default_value = "5s", help_heading = "Generic flags")]
    pub node_monitor_period: GoDuration,

    /// Amount of time which we allow running Node to be unresponsive before marking it unhealthy. Must be N
    /// times more than kubelet's nodeStatusUpdateFrequency, where N means number of retries allowed for kubelet
    /// to post node status. This value should also be greater than the sum of HTTP2_PING_TIMEOUT_SECONDS and
    /// HTTP2_READ_IDLE_TIMEOUT_SECONDS
    #[arg(long, value_name = "duration", default_value = "50s", help_heading = "Nodelifecycle controller flags")]
    pub node_monitor_grace_period: GoDuration,

    /// Amount of time which we allow starting Node to be unresponsive before marking it unhealthy.
    #[arg(long, value_name = "duration", default_value = "1m0s", help_heading = "Nodelifecycle controller flags")]
    pub node_startup_grace_period: GoDuration,

    /// Number of nodes per second on which pods are deleted in case of node failure when a zone is healthy (see
    /// --unhealthy-zone-threshold for definition of healthy/unhealthy). Zone refers to entire cluster in
    /// non-multizone clusters.
    #[arg(long, value_name = "float32", default_value = "0.1", help_heading = "Nodelifecycle controller flags")]
    pub node_eviction_rate: f32,

    /// Number of nodes per second on which pods are deleted in case of node failure when a zone is unhealthy
    /// (see --unhealthy-zone-threshold for definition of healthy/unhealthy). Zone refers to entire cluster in
    /// non-multizone clusters. This value is implicitly overridden to 0 if the cluster size is smaller than
    /// --large-cluster-size-threshold.
    #[arg(long, value_name = "float32", default_value = "0.01", help_heading = "Nodelifecycle controller flags")]
    pub secondary_node_eviction_rate: f32,

    /// Number of nodes from which node-lifecycle-controller treats the cluster as large for the eviction logic
    /// purposes. --secondary-node-eviction-rate is implicitly overridden to 0 for clusters this size or smaller.
    /// Notice: If nodes reside in multiple zones, this threshold will be considered as zone node size threshold
    /// for each zone to determine node eviction rate independently.
    #[arg(long, value_name = "int32", default_value = "50", help_heading = "Nodelifecycle controller flags")]
    pub large_cluster_size_threshold: i32,

    /// Fraction of Nodes in a zone which needs to be not Ready (minimum 3) for zone to be treated as unhealthy.
    #[arg(long, value_name = "float32", default_value = "0.55", help_heading = "Nodelifecycle controller flags")]
    pub unhealthy_zone_threshold: f32,
}

impl ControllerFlags for NodeLifecycleFlags {
    type Settings = Settings;

    const HELP_WITHOUT_PERIOD: &'static [&'static str] = &["node_monitor_grace_period"];

    fn settings(self) -> Result<Settings> {
        for (flag, value) in [
            ("node-eviction-rate", self.node_eviction_rate),
            ("secondary-node-eviction-rate", self.secondary_node_eviction_rate),
            ("unhealthy-zone-threshold", self.unhealthy_zone_threshold),
        ] {
            if value < 0.0 || value.is_nan() {
                return Err(Error::Negative { flag, value: value.to_string() });
            }
        }
        let large_cluster_size_threshold =
            u32::try_from(self.large_cluster_size_threshold).map_err(|_| Error::Negative {
                flag: "large-cluster-size-threshold",
                value: self.large_cluster_size_threshold.to_string(),
            })?;
        Ok(Settings {
            monitor_period: self.node_monitor_period.0,
            core: monitor::Config {
                grace: Grace { monitor: self.node_monitor_grace_period.0, startup: self.node_startup_grace_period.0 },
                rates: Rates {
                    eviction_rate: self.node_eviction_rate,
                    secondary_eviction_rate: self.secondary_node_eviction_rate,
                    large_cluster_size_threshold,
                    unhealthy_zone_threshold: self.unhealthy_zone_threshold,
                },
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::config::settings::testing::{assert_defaults, flags, settings};

    #[test]
    fn defaults_are_upstreams() {
        assert_defaults::<NodeLifecycleFlags>(&[
            ("node-monitor-period", "5s"),
            ("node-monitor-grace-period", "50s"),
            ("node-startup-grace-period", "1m0s"),
            ("node-eviction-rate", "0.1"),
            ("secondary-node-eviction-rate", "0.01"),
            ("large-cluster-size-threshold", "50"),
            ("unhealthy-zone-threshold", "0.55"),
        ]);
        let f = flags::<NodeLifecycleFlags>(&[]).unwrap();
        assert_eq!(f.node_monitor_period.to_string(), "5s");
        assert_eq!(f.node_monitor_grace_period.to_string(), "50s");
        assert_eq!(f.node_startup_grace_period.to_string(), "1m0s");
        assert_eq!(f.node_eviction_rate.to_string(), "0.1");
        assert_eq!(f.secondary_node_eviction_rate.to_string(), "0.01");
        assert_eq!(f.large_cluster_size_threshold.to_string(), "50");
        assert_eq!(f.unhealthy_zone_threshold.to_string(), "0.55");
        let s = settings::<NodeLifecycleFlags>(&[]).unwrap();
        assert_eq!(s.core.grace.monitor, Duration::from_secs(50));
    }
}
