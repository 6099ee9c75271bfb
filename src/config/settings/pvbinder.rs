//! The persistent volume binder's settings (upstream's
//! `options/persistentvolumebindercontroller.go`):
//! `--pvclaimbinder-sync-period`, `--enable-dynamic-provisioning` and
//! `--enable-hostpath-provisioner`. The recycler's flags
//! (`--pv-recycler-*`) and `--flex-volume-plugin-dir` configure in-tree
//! plugins kcm-rs does not run, and are refused.

use std::time::Duration;

use super::ControllerFlags;
use crate::config::{GoDuration, Result, parse_go_bool};

/// The persistent volume binder's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct PvBinderFlags {
    /// Enable dynamic provisioning for environments that support it.
    #[arg(
        long,
        value_name = "true|false",
        default_value = "true",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        action = clap::ArgAction::Set,
        value_parser = parse_go_bool,
        help_heading = "Persistentvolume-binder controller flags"
    )]
    pub enable_dynamic_provisioning: bool,

    /// Enable HostPath PV provisioning when running without a cloud provider. This allows testing and
    /// development of provisioning features.  HostPath provisioning is not supported in any way, won't work in a
    /// multi-node cluster, and should not be used for anything other than testing or development.
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
        help_heading = "Persistentvolume-binder controller flags"
    )]
    pub enable_hostpath_provisioner: bool,

    /// The period for syncing persistent volumes and persistent volume claims
    #[arg(
        long,
        value_name = "duration",
        default_value = "15s",
        help_heading = "Persistentvolume-binder controller flags"
    )]
    pub pvclaimbinder_sync_period: GoDuration,
}

/// The persistent volume binder's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PvBinderSettings {
    /// `--enable-dynamic-provisioning`.
    pub dynamic_provisioning: bool,
    /// `--enable-hostpath-provisioner`: kcm-rs runs no host-path
    /// provisioner, and says so at start when this is set.
    pub hostpath_provisioner: bool,
    /// `--pvclaimbinder-sync-period`: every claim and volume is synced
    /// again this often.
    pub sync_period: Duration,
}

impl ControllerFlags for PvBinderFlags {
    type Settings = PvBinderSettings;

    const HELP_WITHOUT_PERIOD: &'static [&'static str] = &["pvclaimbinder_sync_period"];

    fn settings(self) -> Result<PvBinderSettings> {
        Ok(PvBinderSettings {
            dynamic_provisioning: self.enable_dynamic_provisioning,
            hostpath_provisioner: self.enable_hostpath_provisioner,
            sync_period: self.pvclaimbinder_sync_period.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::testing::{assert_defaults, flags};

    #[test]
    fn defaults_are_upstreams() {
        assert_defaults::<PvBinderFlags>(&[
            ("enable-dynamic-provisioning", "true"),
            ("enable-hostpath-provisioner", "false"),
            ("pvclaimbinder-sync-period", "15s"),
        ]);
        let settings = flags::<PvBinderFlags>(&[]).unwrap().settings().unwrap();
        assert_eq!(
            settings,
            PvBinderSettings {
                dynamic_provisioning: true,
                hostpath_provisioner: false,
                sync_period: Duration::from_secs(15)
            }
        );
    }

    #[test]
    fn kinds_command_line_is_read() {
        let f = flags::<PvBinderFlags>(&["--enable-hostpath-provisioner=true", "--enable-dynamic-provisioning=false"]);
        let settings = f.unwrap().settings().unwrap();
        assert!(settings.hostpath_provisioner);
        assert!(!settings.dynamic_provisioning);
        assert!(flags::<PvBinderFlags>(&["--enable-hostpath-provisioner=maybe"]).is_err());
    }
}
