//! Flags of upstream controllers kcm-rs does not run yet, which kubeadm and
//! kind pass to kube-controller-manager: [`WaitingFlags`]. They are
//! accepted with upstream's names, defaults and help, so that kubeadm's
//! command line starts kcm-rs; [`WaitingFlags::given`] names those set on
//! the command line, with the controller each waits for, for the daemon to
//! say at start that they change nothing yet. Each moves into its
//! controller's settings module (`settings/`) when that controller lands.

use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, Args};

use super::parse_go_bool;

/// The flags, by upstream's option groups: the persistent volume binder's
/// that kind passes.
#[derive(Debug, Clone, Args)]
pub struct WaitingFlags {
    // --- persistentvolume-binder controller ---
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
        action = ArgAction::Set,
        value_parser = parse_go_bool,
        help_heading = "Persistentvolume-binder controller flags"
    )]
    pub enable_hostpath_provisioner: bool,
}

/// Each flag's id (clap's, from the field name) and the controller that
/// reads it upstream.
const WAITING_FOR: &[(&str, &str)] = &[("enable_hostpath_provisioner", "persistentvolume-binder-controller")];

/// A flag given on the command line whose controller kcm-rs does not run yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waiting {
    /// The flag, as written (`--enable-hostpath-provisioner`'s name without dashes).
    pub flag: &'static str,
    /// The upstream controller that reads it.
    pub controller: &'static str,
}

impl WaitingFlags {
    /// The flags set on the command line `matches` was parsed from, in
    /// upstream's help order.
    pub fn given(matches: &ArgMatches) -> Vec<Waiting> {
        WAITING_FOR
            .iter()
            .filter(|(id, _)| matches.value_source(id) == Some(ValueSource::CommandLine))
            .map(|&(flag, controller)| Waiting { flag, controller })
            .collect()
    }
}

impl Waiting {
    /// The flag as written on the command line (`--enable-hostpath-provisioner`).
    pub fn spelled(&self) -> String {
        format!("--{}", self.flag.replace('_', "-"))
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, FromArgMatches, Parser};

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        waiting: WaitingFlags,
    }

    fn parse(args: &[&str]) -> (WaitingFlags, ArgMatches) {
        let matches =
            Cli::command().try_get_matches_from(std::iter::once("kcm-rs").chain(args.iter().copied())).expect("parses");
        (WaitingFlags::from_arg_matches(&matches).expect("reads"), matches)
    }

    #[test]
    fn kinds_arguments_are_accepted_and_named_with_their_controllers() {
        let (flags, matches) = parse(&["--enable-hostpath-provisioner=true"]);
        assert!(flags.enable_hostpath_provisioner);
        let given: Vec<(String, &str)> =
            WaitingFlags::given(&matches).iter().map(|w| (w.spelled(), w.controller)).collect();
        assert_eq!(given, [("--enable-hostpath-provisioner".to_owned(), "persistentvolume-binder-controller")]);
    }

    #[test]
    fn defaults_are_upstreams_and_none_counts_as_given() {
        let (flags, matches) = parse(&[]);
        assert!(!flags.enable_hostpath_provisioner);
        assert!(WaitingFlags::given(&matches).is_empty());
        assert_eq!(WAITING_FOR.len(), Cli::command().get_arguments().count(), "one row per flag");
    }

    #[test]
    fn go_values_are_parsed_as_upstream_parses_them() {
        assert!(parse(&["--enable-hostpath-provisioner"]).0.enable_hostpath_provisioner);
        assert!(!parse(&["--enable-hostpath-provisioner=F"]).0.enable_hostpath_provisioner);
        let bad = Cli::command().try_get_matches_from(["kcm-rs", "--enable-hostpath-provisioner=maybe"]);
        assert!(bad.is_err());
    }
}
