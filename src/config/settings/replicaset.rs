//! The ReplicaSet controller's settings (upstream's
//! `options/replicasetcontroller.go`): `--concurrent-replicaset-syncs`,
//! and the core's options from the feature gates.

use super::{ControllerFlags, Workers};
use crate::config::{FeatureGates, Result, TERMINATING_REPLICAS};

/// The ReplicaSet controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct ReplicaSetFlags {
    /// The number of replica sets that are allowed to sync concurrently. Larger number = more responsive replica
    /// management, but more CPU (and network) load
    #[arg(long, value_name = "int32", default_value = "5", help_heading = "Replicaset controller flags")]
    pub concurrent_replicaset_syncs: i32,
}

impl ReplicaSetFlags {
    /// The core's options under `gates`.
    pub fn options(gates: &FeatureGates) -> kcm_controllers::replicaset::Options {
        let terminating_replicas = gates.enabled(TERMINATING_REPLICAS);
        kcm_controllers::replicaset::Options { terminating_replicas, ..Default::default() }
    }
}

impl ControllerFlags for ReplicaSetFlags {
    type Settings = Workers;

    const HELP_WITHOUT_PERIOD: &'static [&'static str] = &["concurrent_replicaset_syncs"];

    fn settings(self) -> Result<Workers> {
        Workers::from_flag("concurrent-replicaset-syncs", self.concurrent_replicaset_syncs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::testing::assert_workers_flag;

    #[test]
    fn defaults_are_upstreams_and_workers_must_be_positive() {
        assert_workers_flag::<ReplicaSetFlags>("concurrent-replicaset-syncs", 5, 0, 3);
    }
}
