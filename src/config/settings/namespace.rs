//! The namespace controller's settings (upstream's
//! `options/namespacecontroller.go`): `--concurrent-namespace-syncs` and
//! `--namespace-sync-period`.

use std::time::Duration;

use super::{ControllerFlags, workers};
use crate::config::{GoDuration, Result};

/// The namespace controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct NamespaceFlags {
    /// The number of namespace objects that are allowed to sync concurrently. Larger number = more responsive
    /// namespace termination, but more CPU (and network) load
    #[arg(long, value_name = "int32", default_value = "10", help_heading = "Namespace controller flags")]
    pub concurrent_namespace_syncs: i32,

    /// The period for syncing namespace life-cycle updates
    #[arg(long, value_name = "duration", default_value = "5m0s", help_heading = "Namespace controller flags")]
    pub namespace_sync_period: GoDuration,
}

/// The namespace controller's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamespaceSettings {
    /// `--concurrent-namespace-syncs`.
    pub workers: usize,
    /// `--namespace-sync-period`: resync of the namespace handler.
    pub sync_period: Duration,
}

impl ControllerFlags for NamespaceFlags {
    type Settings = NamespaceSettings;

    const HELP_WITHOUT_PERIOD: &'static [&'static str] = &["concurrent_namespace_syncs", "namespace_sync_period"];

    fn settings(self) -> Result<NamespaceSettings> {
        Ok(NamespaceSettings {
            workers: workers("concurrent-namespace-syncs", self.concurrent_namespace_syncs)?,
            sync_period: self.namespace_sync_period.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::testing::{assert_defaults, flags};

    #[test]
    fn defaults_are_upstreams() {
        assert_defaults::<NamespaceFlags>(&[("concurrent-namespace-syncs", "10"), ("namespace-sync-period", "5m0s")]);
        let f = flags::<NamespaceFlags>(&[]).unwrap();
        assert_eq!(f.concurrent_namespace_syncs.to_string(), "10");
        assert_eq!(f.namespace_sync_period.to_string(), "5m0s");
    }

    #[test]
    fn a_duration_needs_its_unit() {
        let err = flags::<NamespaceFlags>(&["--namespace-sync-period=5"]).unwrap_err();
        assert!(err.to_string().contains("missing unit"), "{err}");
    }
}
