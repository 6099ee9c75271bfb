//! The ephemeral volume controller's settings (upstream's
//! `options/ephemeralcontroller.go`): `--concurrent-ephemeralvolume-syncs`.

use super::{ControllerFlags, Workers};
use crate::config::Result;

/// The ephemeral volume controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct EphemeralVolumeFlags {
    /// The number of ephemeral volume syncing operations that will be done concurrently. Larger number = faster
    /// ephemeral volume updating, but more CPU (and network) load
    #[arg(long, value_name = "int32", default_value = "5", help_heading = "Ephemeral-volume controller flags")]
    pub concurrent_ephemeralvolume_syncs: i32,
}

impl ControllerFlags for EphemeralVolumeFlags {
    type Settings = Workers;

    const HELP_WITHOUT_PERIOD: &'static [&'static str] = &["concurrent_ephemeralvolume_syncs"];

    fn settings(self) -> Result<Workers> {
        Workers::from_flag("concurrent-ephemeralvolume-syncs", self.concurrent_ephemeralvolume_syncs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::testing::assert_workers_flag;

    #[test]
    fn defaults_are_upstreams_and_workers_must_be_positive() {
        assert_workers_flag::<EphemeralVolumeFlags>("concurrent-ephemeralvolume-syncs", 5, 0, 2);
    }
}
