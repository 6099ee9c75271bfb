//! The StatefulSet controller's settings (upstream's
//! `options/statefulsetcontroller.go`): `--concurrent-statefulset-syncs`,
//! and the core's options from the feature gates.

use super::{ControllerFlags, Workers};
use crate::config::{FeatureGates, MAX_UNAVAILABLE_STATEFUL_SET, Result};

/// The StatefulSet controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct StatefulSetFlags {
    /// The number of statefulset objects that are allowed to sync concurrently. Larger number = more responsive
    /// statefulsets, but more CPU (and network) load
    #[arg(long, value_name = "int32", default_value = "5", help_heading = "Statefulset controller flags")]
    pub concurrent_statefulset_syncs: i32,
}

impl StatefulSetFlags {
    /// The core's options under `gates`.
    pub fn options(gates: &FeatureGates) -> kcm_controllers::statefulset::Options {
        kcm_controllers::statefulset::Options { max_unavailable: gates.enabled(MAX_UNAVAILABLE_STATEFUL_SET) }
    }
}

impl ControllerFlags for StatefulSetFlags {
    type Settings = Workers;

    const HELP_WITHOUT_PERIOD: &'static [&'static str] = &["concurrent_statefulset_syncs"];

    fn settings(self) -> Result<Workers> {
        Workers::from_flag("concurrent-statefulset-syncs", self.concurrent_statefulset_syncs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::testing::assert_workers_flag;

    #[test]
    fn defaults_are_upstreams_and_workers_must_be_positive() {
        assert_workers_flag::<StatefulSetFlags>("concurrent-statefulset-syncs", 5, -1, 3);
    }
}
