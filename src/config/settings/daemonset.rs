//! The DaemonSet controller's settings (upstream's
//! `options/daemonsetcontroller.go`): `--concurrent-daemonset-syncs`.

use super::{ControllerFlags, workers};
use crate::config::Result;

/// The DaemonSet controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct DaemonSetFlags {
    /// The number of daemonset objects that are allowed to sync concurrently. Larger number = more responsive
    /// daemonsets, but more CPU (and network) load
    #[arg(long, value_name = "int32", default_value = "2", help_heading = "Daemonset controller flags")]
    pub concurrent_daemonset_syncs: i32,
}

/// The DaemonSet controller's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DaemonSetSettings {
    /// `--concurrent-daemonset-syncs`.
    pub workers: usize,
}

impl ControllerFlags for DaemonSetFlags {
    type Settings = DaemonSetSettings;

    const HELP_WITHOUT_PERIOD: &'static [&'static str] = &["concurrent_daemonset_syncs"];

    fn settings(self) -> Result<DaemonSetSettings> {
        Ok(DaemonSetSettings { workers: workers("concurrent-daemonset-syncs", self.concurrent_daemonset_syncs)? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Error;
    use crate::config::settings::testing::{assert_defaults, flags, settings};

    #[test]
    fn defaults_are_upstreams() {
        assert_defaults::<DaemonSetFlags>(&[("concurrent-daemonset-syncs", "2")]);
        assert_eq!(flags::<DaemonSetFlags>(&[]).unwrap().concurrent_daemonset_syncs.to_string(), "2");
    }

    #[test]
    fn workers_must_be_positive() {
        assert_eq!(
            settings::<DaemonSetFlags>(&["--concurrent-daemonset-syncs=0"]).unwrap_err(),
            Error::NonPositiveWorkers { flag: "concurrent-daemonset-syncs", value: 0 }
        );
        assert_eq!(settings::<DaemonSetFlags>(&["--concurrent-daemonset-syncs=7"]).unwrap().workers, 7);
    }
}
