//! The StatefulSet controller's settings (upstream's
//! `options/statefulsetcontroller.go`): `--concurrent-statefulset-syncs`,
//! and the core's options from the feature gates.

use super::{ControllerFlags, workers};
use crate::config::{FeatureGates, MAX_UNAVAILABLE_STATEFUL_SET, Result};

/// The StatefulSet controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct StatefulSetFlags {
    /// The number of statefulset objects that are allowed to sync concurrently. Larger number = more responsive
    /// statefulsets, but more CPU (and network) load
    #[arg(long, value_name = "int32", default_value = "5", help_heading = "Statefulset controller flags")]
    pub concurrent_statefulset_syncs: i32,
}

/// The StatefulSet controller's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatefulSetSettings {
    /// `--concurrent-statefulset-syncs`.
    pub workers: usize,
}

impl StatefulSetSettings {
    /// The core's options under these feature gates.
    pub fn options(&self, gates: &FeatureGates) -> kcm_controllers::statefulset::Options {
        kcm_controllers::statefulset::Options { max_unavailable: gates.enabled(MAX_UNAVAILABLE_STATEFUL_SET) }
    }
}

impl ControllerFlags for StatefulSetFlags {
    type Settings = StatefulSetSettings;

    const HELP_WITHOUT_PERIOD: &'static [&'static str] = &["concurrent_statefulset_syncs"];

    fn settings(self) -> Result<StatefulSetSettings> {
        let workers = workers("concurrent-statefulset-syncs", self.concurrent_statefulset_syncs)?;
        Ok(StatefulSetSettings { workers })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Error;
    use crate::config::settings::testing::{assert_defaults, flags, settings};

    #[test]
    fn defaults_are_upstreams() {
        assert_defaults::<StatefulSetFlags>(&[("concurrent-statefulset-syncs", "5")]);
        assert_eq!(flags::<StatefulSetFlags>(&[]).unwrap().concurrent_statefulset_syncs.to_string(), "5");
    }

    #[test]
    fn workers_must_be_positive() {
        assert_eq!(
            settings::<StatefulSetFlags>(&["--concurrent-statefulset-syncs=-1"]).unwrap_err(),
            Error::NonPositiveWorkers { flag: "concurrent-statefulset-syncs", value: -1 }
        );
        assert_eq!(settings::<StatefulSetFlags>(&["--concurrent-statefulset-syncs=3"]).unwrap().workers, 3);
    }
}
