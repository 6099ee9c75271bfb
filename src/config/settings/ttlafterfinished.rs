//! The TTL-after-finished controller's settings (upstream's
//! `options/ttlafterfinishedcontroller.go`):
//! `--concurrent-ttl-after-finished-syncs`.

use super::{ControllerFlags, workers};
use crate::config::Result;

/// The TTL-after-finished controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct TtlAfterFinishedFlags {
    /// The number of ttl-after-finished-controller workers that are allowed to sync concurrently.
    #[arg(long, value_name = "int32", default_value = "5", help_heading = "Ttl-after-finished controller flags")]
    pub concurrent_ttl_after_finished_syncs: i32,
}

/// The TTL-after-finished controller's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TtlAfterFinishedSettings {
    /// `--concurrent-ttl-after-finished-syncs`.
    pub workers: usize,
}

impl ControllerFlags for TtlAfterFinishedFlags {
    type Settings = TtlAfterFinishedSettings;

    fn settings(self) -> Result<TtlAfterFinishedSettings> {
        let workers = workers("concurrent-ttl-after-finished-syncs", self.concurrent_ttl_after_finished_syncs)?;
        Ok(TtlAfterFinishedSettings { workers })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Error;
    use crate::config::settings::testing::{assert_defaults, flags, settings};

    #[test]
    fn defaults_are_upstreams() {
        assert_defaults::<TtlAfterFinishedFlags>(&[("concurrent-ttl-after-finished-syncs", "5")]);
        let f = flags::<TtlAfterFinishedFlags>(&[]).unwrap();
        assert_eq!(f.concurrent_ttl_after_finished_syncs.to_string(), "5");
    }

    #[test]
    fn workers_must_be_positive() {
        assert_eq!(
            settings::<TtlAfterFinishedFlags>(&["--concurrent-ttl-after-finished-syncs=0"]).unwrap_err(),
            Error::NonPositiveWorkers { flag: "concurrent-ttl-after-finished-syncs", value: 0 }
        );
        assert_eq!(settings::<TtlAfterFinishedFlags>(&["--concurrent-ttl-after-finished-syncs=2"]).unwrap().workers, 2);
    }
}
