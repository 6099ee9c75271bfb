//! The TTL-after-finished controller's settings (upstream's
//! `options/ttlafterfinishedcontroller.go`):
//! `--concurrent-ttl-after-finished-syncs`.

use super::{ControllerFlags, Workers};
use crate::config::Result;

/// The TTL-after-finished controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct TtlAfterFinishedFlags {
    /// The number of ttl-after-finished-controller workers that are allowed to sync concurrently.
    #[arg(long, value_name = "int32", default_value = "5", help_heading = "Ttl-after-finished controller flags")]
    pub concurrent_ttl_after_finished_syncs: i32,
}

impl ControllerFlags for TtlAfterFinishedFlags {
    type Settings = Workers;

    fn settings(self) -> Result<Workers> {
        Workers::from_flag("concurrent-ttl-after-finished-syncs", self.concurrent_ttl_after_finished_syncs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::testing::assert_workers_flag;

    #[test]
    fn defaults_are_upstreams_and_workers_must_be_positive() {
        assert_workers_flag::<TtlAfterFinishedFlags>("concurrent-ttl-after-finished-syncs", 5, 0, 2);
    }
}
