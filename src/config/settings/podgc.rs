//! The pod garbage collector's settings (upstream's
//! `options/podgccontroller.go`): `--terminated-pod-gc-threshold`.

use super::ControllerFlags;
use crate::config::Result;

/// The pod garbage collector's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct PodGcFlags {
    /// Number of terminated pods that can exist before the terminated pod garbage collector starts deleting
    /// terminated pods. If <= 0, the terminated pod garbage collector is disabled.
    #[arg(
        long,
        value_name = "int32",
        default_value = "12500",
        allow_negative_numbers = true,
        help_heading = "Podgc controller flags"
    )]
    pub terminated_pod_gc_threshold: i32,
}

/// The pod garbage collector's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PodGcSettings {
    /// `--terminated-pod-gc-threshold`: how many terminated pods may exist
    /// before the pod garbage collector deletes the oldest (0 or less:
    /// never).
    pub terminated_pod_gc_threshold: i32,
}

impl ControllerFlags for PodGcFlags {
    type Settings = PodGcSettings;

    /// Upstream validates nothing: 0 and below turn the terminated-pod part
    /// off.
    fn settings(self) -> Result<PodGcSettings> {
        Ok(PodGcSettings { terminated_pod_gc_threshold: self.terminated_pod_gc_threshold })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::testing::{assert_defaults, flags, settings};

    #[test]
    fn defaults_are_upstreams() {
        assert_defaults::<PodGcFlags>(&[("terminated-pod-gc-threshold", "12500")]);
        assert_eq!(flags::<PodGcFlags>(&[]).unwrap().terminated_pod_gc_threshold.to_string(), "12500");
    }

    #[test]
    fn terminated_pod_gc_threshold_is_honoured_and_zero_or_less_disables() {
        let threshold = |args: &[&str]| settings::<PodGcFlags>(args).unwrap().terminated_pod_gc_threshold;
        assert_eq!(threshold(&[]), 12500);
        assert_eq!(threshold(&["--terminated-pod-gc-threshold=3"]), 3);
        // Upstream validates nothing: 0 and below turn the terminated-pod part off.
        assert_eq!(threshold(&["--terminated-pod-gc-threshold=0"]), 0);
        assert_eq!(threshold(&["--terminated-pod-gc-threshold=-1"]), -1);
        assert_eq!(threshold(&["--terminated-pod-gc-threshold", "-5"]), -5);
        assert!(flags::<PodGcFlags>(&["--terminated-pod-gc-threshold=many"]).is_err());
    }
}
