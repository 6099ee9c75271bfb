//! The attach/detach controller's settings (upstream's
//! `options/attachdetachcontroller.go`):
//! `--attach-detach-reconcile-sync-period`,
//! `--disable-attach-detach-reconcile-sync` and
//! `--disable-force-detach-on-timeout`.

use std::time::Duration;

use super::ControllerFlags;
use crate::config::{Error, GoDuration, Result, parse_go_bool};

/// The attach/detach controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct AttachDetachFlags {
    /// The reconciler sync wait time between volume attach detach. This duration must be larger than one second,
    /// and increasing this value from the default may allow for volumes to be mismatched with pods.
    #[arg(
        long,
        value_name = "duration",
        default_value = "1m0s",
        help_heading = "Persistentvolume-attach-detach-controller flags"
    )]
    pub attach_detach_reconcile_sync_period: GoDuration,

    /// Disable volume attach detach reconciler sync. Disabling this may cause volumes to be mismatched with pods.
    /// Use wisely.
    #[arg(
        long,
        value_name = "true|false",
        default_value = "false",
        hide_default_value = true,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        action = clap::ArgAction::Set,
        value_parser = parse_go_bool,
        help_heading = "Persistentvolume-attach-detach-controller flags"
    )]
    pub disable_attach_detach_reconcile_sync: bool,

    /// Prevent force detaching volumes based on maximum unmount time and node status. If this flag is set to true,
    /// the non-graceful node shutdown feature must be used to recover from node failure. See
    /// https://k8s.io/docs/storage-disable-force-detach-on-timeout/.
    #[arg(
        long,
        value_name = "true|false",
        default_value = "false",
        hide_default_value = true,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        action = clap::ArgAction::Set,
        value_parser = parse_go_bool,
        help_heading = "Persistentvolume-attach-detach-controller flags"
    )]
    pub disable_force_detach_on_timeout: bool,
}

/// The attach/detach controller's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttachDetachSettings {
    /// Every node is reconciled again this often; `None` with
    /// `--disable-attach-detach-reconcile-sync`.
    pub resync: Option<Duration>,
    /// Whether a volume still mounted on an unhealthy node is detached once
    /// the longest unmount wait has passed (not
    /// `--disable-force-detach-on-timeout`).
    pub force_detach_on_timeout: bool,
}

impl ControllerFlags for AttachDetachFlags {
    type Settings = AttachDetachSettings;

    const HELP_WITHOUT_PERIOD: &'static [&'static str] =
        &["disable_attach_detach_reconcile_sync", "disable_force_detach_on_timeout"];

    /// Upstream's validation: the period is at least one second, even
    /// when the sync is disabled.
    fn settings(self) -> Result<AttachDetachSettings> {
        let period = self.attach_detach_reconcile_sync_period.0;
        if period < Duration::from_secs(1) {
            return Err(Error::Invalid(
                "duration time must be greater than one second as set via command line option \
                 reconcile-sync-loop-period"
                    .into(),
            ));
        }
        Ok(AttachDetachSettings {
            resync: (!self.disable_attach_detach_reconcile_sync).then_some(period),
            force_detach_on_timeout: !self.disable_force_detach_on_timeout,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::testing::{assert_defaults, flags};

    #[test]
    fn defaults_are_upstreams() {
        assert_defaults::<AttachDetachFlags>(&[
            ("attach-detach-reconcile-sync-period", "1m0s"),
            ("disable-attach-detach-reconcile-sync", "false"),
            ("disable-force-detach-on-timeout", "false"),
        ]);
        let settings = flags::<AttachDetachFlags>(&[]).unwrap().settings().unwrap();
        let expected = AttachDetachSettings { resync: Some(Duration::from_secs(60)), force_detach_on_timeout: true };
        assert_eq!(settings, expected);
    }

    #[test]
    fn the_period_is_at_least_a_second_and_the_switches_turn_things_off() {
        let short = flags::<AttachDetachFlags>(&["--attach-detach-reconcile-sync-period=500ms"]).unwrap();
        assert!(short.settings().unwrap_err().to_string().contains("greater than one second"));
        let off = ["--disable-attach-detach-reconcile-sync", "--disable-force-detach-on-timeout"];
        let settings = flags::<AttachDetachFlags>(&off).unwrap().settings().unwrap();
        assert_eq!(settings, AttachDetachSettings { resync: None, force_detach_on_timeout: false });
    }
}
