//! The Deployment controller's settings (upstream's
//! `options/deploymentcontroller.go`): `--concurrent-deployment-syncs`,
//! and the core's options from the feature gates.

use super::{ControllerFlags, workers};
use crate::config::{FeatureGates, Result, TERMINATING_REPLICAS};

/// The Deployment controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct DeploymentFlags {
    /// The number of deployment objects that are allowed to sync concurrently. Larger number = more responsive
    /// deployments, but more CPU (and network) load
    #[arg(long, value_name = "int32", default_value = "5", help_heading = "Deployment controller flags")]
    pub concurrent_deployment_syncs: i32,
}

/// The Deployment controller's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeploymentSettings {
    /// `--concurrent-deployment-syncs`.
    pub workers: usize,
}

impl DeploymentSettings {
    /// The core's options under these feature gates.
    pub fn options(&self, gates: &FeatureGates) -> kcm_controllers::deployment::Options {
        kcm_controllers::deployment::Options { terminating_replicas: gates.enabled(TERMINATING_REPLICAS) }
    }
}

impl ControllerFlags for DeploymentFlags {
    type Settings = DeploymentSettings;

    const HELP_WITHOUT_PERIOD: &'static [&'static str] = &["concurrent_deployment_syncs"];

    fn settings(self) -> Result<DeploymentSettings> {
        Ok(DeploymentSettings { workers: workers("concurrent-deployment-syncs", self.concurrent_deployment_syncs)? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Error;
    use crate::config::settings::testing::{assert_defaults, flags, settings};

    #[test]
    fn defaults_are_upstreams() {
        assert_defaults::<DeploymentFlags>(&[("concurrent-deployment-syncs", "5")]);
        assert_eq!(flags::<DeploymentFlags>(&[]).unwrap().concurrent_deployment_syncs.to_string(), "5");
    }

    #[test]
    fn workers_must_be_positive() {
        assert_eq!(
            settings::<DeploymentFlags>(&["--concurrent-deployment-syncs=0"]).unwrap_err(),
            Error::NonPositiveWorkers { flag: "concurrent-deployment-syncs", value: 0 }
        );
    }
}
