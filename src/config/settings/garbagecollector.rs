//! The garbage collector's settings (upstream's
//! `options/garbagecollectorcontroller.go`): `--concurrent-gc-syncs` and
//! `--enable-garbage-collector`, which keeps the collector from running at
//! all (upstream's start-up returns "not started").

use super::{ControllerFlags, workers};
use crate::config::{Result, parse_go_bool};

/// The garbage collector's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct GarbageCollectorFlags {
    /// The number of garbage collector workers that are allowed to sync concurrently.
    #[arg(long, value_name = "int32", default_value = "20", help_heading = "Garbagecollector controller flags")]
    pub concurrent_gc_syncs: i32,

    /// Enables the generic garbage collector. MUST be synced with the corresponding flag of the kube-apiserver.
    #[arg(
        long,
        value_name = "true|false",
        default_value = "true",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        action = clap::ArgAction::Set,
        value_parser = parse_go_bool,
        help_heading = "Garbagecollector controller flags"
    )]
    pub enable_garbage_collector: bool,
}

/// The garbage collector's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GarbageCollectorSettings {
    /// `--concurrent-gc-syncs`.
    pub workers: usize,
    /// `--enable-garbage-collector`.
    pub enabled: bool,
}

impl ControllerFlags for GarbageCollectorFlags {
    type Settings = GarbageCollectorSettings;

    fn settings(self) -> Result<GarbageCollectorSettings> {
        Ok(GarbageCollectorSettings {
            workers: workers("concurrent-gc-syncs", self.concurrent_gc_syncs)?,
            enabled: self.enable_garbage_collector,
        })
    }

    fn enabled(settings: &GarbageCollectorSettings) -> bool {
        settings.enabled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::testing::{assert_defaults, flags};

    #[test]
    fn defaults_are_upstreams() {
        assert_defaults::<GarbageCollectorFlags>(&[
            ("concurrent-gc-syncs", "20"),
            ("enable-garbage-collector", "true"),
        ]);
        let f = flags::<GarbageCollectorFlags>(&[]).unwrap();
        assert_eq!(f.concurrent_gc_syncs.to_string(), "20");
        assert_eq!(f.enable_garbage_collector.to_string(), "true");
    }
}
