//! The Deployment controller's settings (upstream's
//! `options/deploymentcontroller.go`): `--concurrent-deployment-syncs`,
//! and the core's options from the feature gates.

use super::{ControllerFlags, Workers};
use crate::config::{FeatureGates, Result, TERMINATING_REPLICAS};

/// The Deployment controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct DeploymentFlags {
    /// The number of deployment objects that are allowed to sync concurrently. Larger number = more responsive
    /// deployments, but more CPU (and network) load
    #[arg(long, value_name = "int32", default_value = "5", help_heading = "Deployment controller flags")]
    pub concurrent_deployment_syncs: i32,
}

impl DeploymentFlags {
    /// The core's options under `gates`.
    pub fn options(gates: &FeatureGates) -> kcm_controllers::deployment::Options {
        kcm_controllers::deployment::Options { terminating_replicas: gates.enabled(TERMINATING_REPLICAS) }
    }
}

impl ControllerFlags for DeploymentFlags {
    type Settings = Workers;

    const HELP_WITHOUT_PERIOD: &'static [&'static str] = &["concurrent_deployment_syncs"];

    fn settings(self) -> Result<Workers> {
        Workers::from_flag("concurrent-deployment-syncs", self.concurrent_deployment_syncs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::testing::assert_workers_flag;

    #[test]
    fn defaults_are_upstreams_and_workers_must_be_positive() {
        assert_workers_flag::<DeploymentFlags>("concurrent-deployment-syncs", 5, 0, 3);
    }
}
