//! The ReplicaSet controller's settings (upstream's
//! `options/replicasetcontroller.go`): `--concurrent-replicaset-syncs`,
//! and the core's options from the feature gates.

use super::{ControllerFlags, workers};
use crate::config::{FeatureGates, Result, TERMINATING_REPLICAS};

/// The ReplicaSet controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct ReplicaSetFlags {
    /// The number of replica sets that are allowed to sync concurrently. Larger number = more responsive replica
    /// management, but more CPU (and network) load
    #[arg(long, value_name = "int32", default_value = "5", help_heading = "Replicaset controller flags")]
    pub concurrent_replicaset_syncs: i32,
}

/// The ReplicaSet controller's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicaSetSettings {
    /// `--concurrent-replicaset-syncs`.
    pub workers: usize,
}

impl ReplicaSetSettings {
    /// The core's options under these feature gates.
    pub fn options(&self, gates: &FeatureGates) -> kcm_controllers::replicaset::Options {
        let terminating_replicas = gates.enabled(TERMINATING_REPLICAS);
        kcm_controllers::replicaset::Options { terminating_replicas, ..Default::default() }
    }
}

impl ControllerFlags for ReplicaSetFlags {
    type Settings = ReplicaSetSettings;

    const HELP_WITHOUT_PERIOD: &'static [&'static str] = &["concurrent_replicaset_syncs"];

    fn settings(self) -> Result<ReplicaSetSettings> {
        Ok(ReplicaSetSettings { workers: workers("concurrent-replicaset-syncs", self.concurrent_replicaset_syncs)? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::testing::{assert_defaults, flags};

    #[test]
    fn defaults_are_upstreams() {
        assert_defaults::<ReplicaSetFlags>(&[("concurrent-replicaset-syncs", "5")]);
        assert_eq!(flags::<ReplicaSetFlags>(&[]).unwrap().concurrent_replicaset_syncs.to_string(), "5");
    }
}
