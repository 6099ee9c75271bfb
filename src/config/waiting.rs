//! Flags of upstream controllers kcm-rs does not run yet, which kubeadm and
//! kind pass to kube-controller-manager: [`WaitingFlags`]. They are
//! accepted with upstream's names, defaults and help, and checked as
//! upstream's option validation checks them, so that kubeadm's command line
//! starts kcm-rs; [`WaitingFlags::given`] names those set on the command
//! line, with the controller each waits for, for the daemon to say at start
//! that they change nothing yet. Each moves into its controller's settings
//! module (`settings/`) when that controller lands.

use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, Args};

use super::{Error, Result, parse_go_bool};

/// The flags, by upstream's option groups: the cloud-shared ones
/// (upstream's "Generic flags"), the node IPAM controller's and the persistent volume binder's that kubeadm
/// passes.
#[derive(Debug, Clone, Args)]
pub struct WaitingFlags {
    // --- kube cloud shared (upstream lists them with the generic flags) ---
    /// The instance prefix for the cluster.
    #[arg(long, value_name = "string", default_value = "kubernetes", help_heading = "Generic flags")]
    pub cluster_name: String,

    /// Should CIDRs for Pods be allocated and set on the cloud provider. Requires --cluster-cidr.
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
        help_heading = "Generic flags"
    )]
    pub allocate_node_cidrs: bool,

    /// CIDR Range for Pods in cluster. Only used when --allocate-node-cidrs=true; if false, this option will be
    /// ignored.
    #[arg(long, value_name = "string", help_heading = "Generic flags")]
    pub cluster_cidr: Option<String>,

    // --- nodeipam controller ---
    /// CIDR Range for Services in cluster. Only used when --allocate-node-cidrs=true; if false, this option will
    /// be ignored.
    #[arg(long, value_name = "string", help_heading = "Nodeipam controller flags")]
    pub service_cluster_ip_range: Option<String>,

    /// Mask size for node cidr in cluster. Default is 24 for IPv4 and 64 for IPv6.
    #[arg(
        long,
        value_name = "int32",
        default_value = "0",
        hide_default_value = true,
        allow_negative_numbers = true,
        help_heading = "Nodeipam controller flags"
    )]
    pub node_cidr_mask_size: i32,

    /// Mask size for IPv4 node cidr in dual-stack cluster. Default is 24.
    #[arg(
        long,
        value_name = "int32",
        default_value = "0",
        hide_default_value = true,
        allow_negative_numbers = true,
        help_heading = "Nodeipam controller flags"
    )]
    pub node_cidr_mask_size_ipv4: i32,

    /// Mask size for IPv6 node cidr in dual-stack cluster. Default is 64.
    #[arg(
        long,
        value_name = "int32",
        default_value = "0",
        hide_default_value = true,
        allow_negative_numbers = true,
        help_heading = "Nodeipam controller flags"
    )]
    pub node_cidr_mask_size_ipv6: i32,

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
const WAITING_FOR: &[(&str, &str)] = &[
    ("cluster_name", "service-lb-controller"),
    ("allocate_node_cidrs", "node-ipam-controller"),
    ("cluster_cidr", "node-ipam-controller"),
    ("service_cluster_ip_range", "node-ipam-controller"),
    ("node_cidr_mask_size", "node-ipam-controller"),
    ("node_cidr_mask_size_ipv4", "node-ipam-controller"),
    ("node_cidr_mask_size_ipv6", "node-ipam-controller"),
    ("enable_hostpath_provisioner", "persistentvolume-binder-controller"),
];

/// A flag given on the command line whose controller kcm-rs does not run yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waiting {
    /// The flag, as written (`--cluster-signing-cert-file`'s name without dashes).
    pub flag: &'static str,
    /// The upstream controller that reads it.
    pub controller: &'static str,
}

impl WaitingFlags {
    /// Checks the values as upstream's option validation does (its
    /// `Validate` of the node IPAM options).
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] with upstream's message.
    pub fn check(&self) -> Result<()> {
        if self.service_cluster_ip_range.as_deref().is_some_and(|r| r.split(',').count() > 2) {
            return Err(Error::Invalid("--service-cluster-ip-range can not contain more than two entries".to_owned()));
        }
        Ok(())
    }

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
    /// The flag as written on the command line (`--cluster-cidr`).
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

    fn check(args: &[&str]) -> Result<()> {
        parse(args).0.check()
    }

    #[test]
    fn kinds_arguments_are_accepted_and_named_with_their_controllers() {
        let (flags, matches) = parse(&[
            "--allocate-node-cidrs=true",
            "--cluster-cidr=10.244.0.0/16",
            "--cluster-name=kind",
            "--enable-hostpath-provisioner=true",
            "--service-cluster-ip-range=10.96.0.0/16",
        ]);
        assert_eq!(flags.check(), Ok(()));
        assert_eq!(flags.cluster_name, "kind");
        assert!(flags.allocate_node_cidrs && flags.enable_hostpath_provisioner);
        let given: Vec<(String, &str)> =
            WaitingFlags::given(&matches).iter().map(|w| (w.spelled(), w.controller)).collect();
        assert_eq!(
            given,
            [
                ("--cluster-name".to_owned(), "service-lb-controller"),
                ("--allocate-node-cidrs".to_owned(), "node-ipam-controller"),
                ("--cluster-cidr".to_owned(), "node-ipam-controller"),
                ("--service-cluster-ip-range".to_owned(), "node-ipam-controller"),
                ("--enable-hostpath-provisioner".to_owned(), "persistentvolume-binder-controller"),
            ]
        );
    }

    #[test]
    fn defaults_are_upstreams_and_none_counts_as_given() {
        let (flags, matches) = parse(&[]);
        assert_eq!(flags.cluster_name, "kubernetes");
        assert_eq!(
            (flags.node_cidr_mask_size, flags.node_cidr_mask_size_ipv4, flags.node_cidr_mask_size_ipv6),
            (0, 0, 0)
        );
        assert!(!flags.allocate_node_cidrs && !flags.enable_hostpath_provisioner);
        assert!(WaitingFlags::given(&matches).is_empty());
        assert_eq!(WAITING_FOR.len(), Cli::command().get_arguments().count(), "one row per flag");
    }

    #[test]
    fn service_ranges_are_checked_as_upstream_checks_them() {
        let err = |args: &[&str]| check(args).unwrap_err().to_string();
        assert_eq!(
            err(&["--service-cluster-ip-range=10.96.0.0/16,fd00::/108,10.97.0.0/16"]),
            "--service-cluster-ip-range can not contain more than two entries"
        );
        assert_eq!(check(&["--service-cluster-ip-range=10.96.0.0/16,fd00::/108"]), Ok(()));
    }

    #[test]
    fn go_values_are_parsed_as_upstream_parses_them() {
        assert!(parse(&["--allocate-node-cidrs"]).0.allocate_node_cidrs);
        assert!(!parse(&["--enable-hostpath-provisioner=F"]).0.enable_hostpath_provisioner);
        let bad = Cli::command().try_get_matches_from(["kcm-rs", "--node-cidr-mask-size=a"]);
        assert!(bad.is_err());
    }
}
