//! The DaemonSet controller's settings (upstream's
//! `options/daemonsetcontroller.go`): `--concurrent-daemonset-syncs`.

use super::{ControllerFlags, Workers};
use crate::config::Result;

/// The DaemonSet controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct DaemonSetFlags {
    /// The number of daemonset objects that are allowed to sync concurrently. Larger number = more responsive
    /// daemonsets, but more CPU (and network) load
    #[arg(long, value_name = "int32", default_value = "2", help_heading = "Daemonset controller flags")]
    pub concurrent_daemonset_syncs: i32,
}

impl ControllerFlags for DaemonSetFlags {
    type Settings = Workers;

    const HELP_WITHOUT_PERIOD: &'static [&'static str] = &["concurrent_daemonset_syncs"];

    fn settings(self) -> Result<Workers> {
        Workers::from_flag("concurrent-daemonset-syncs", self.concurrent_daemonset_syncs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::testing::assert_workers_flag;

    #[test]
    fn defaults_are_upstreams_and_workers_must_be_positive() {
        assert_workers_flag::<DaemonSetFlags>("concurrent-daemonset-syncs", 2, 0, 7);
    }
}
