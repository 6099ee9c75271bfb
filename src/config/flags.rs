//! Stage one: [`Flags`], the process-wide kube-controller-manager flags
//! kcm-rs implements (clap derive, upstream's names, defaults and help
//! text) plus `--sim`; each controller's own flags are its settings'
//! (`settings/`), and the full clap command that parses them all is
//! `command.rs`. Each value is parsed and checked on its own here; checking
//! them together is [`Config`](super::Config)'s job (`derive.rs`).

use std::path::PathBuf;

use clap::{ArgAction, ArgMatches, Args, Parser};

use super::feature_gates::{GateSettings, parse_feature_gates};
use super::serving::ServingFlags;
use super::{GoDuration, LogFormat, parse_go_bool};

/// kcm-rs command line: the process-wide kube-controller-manager flags
/// kcm-rs implements, plus `--sim`, and the parsed controllers' flags.
///
/// Parse with [`Flags::from_env_args`] / [`Flags::try_from_args`] (not clap's
/// `Parser::parse`): they also refuse the upstream flags kcm-rs does not
/// implement and fill in the `--controllers` help.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "kcm-rs",
    version,
    args_override_self = true,
    about = "A standalone replacement for kube-controller-manager",
    long_about = "The Kubernetes controller manager is a daemon that embeds the core control loops shipped with \
                  Kubernetes. kcm-rs is a replacement for kube-controller-manager, with its flag names and \
                  defaults, running the deployment, replicaset, statefulset, endpointslice, namespace, node-lifecycle, taint-eviction, pod-garbage-collector, serviceaccount, \
                  root-ca-certificate-publisher, clusterrole-aggregation and garbage-collector controllers, with leader election and the health and metrics endpoints."
)]
pub struct Flags {
    // --- misc ---
    /// Path to kubeconfig file with authorization and master location information.
    /// (kcm-rs: when neither this nor --master is set, the in-cluster configuration is used, then KUBECONFIG,
    /// then ~/.kube/config.)
    #[arg(long, value_name = "string", help_heading = "Misc flags")]
    pub kubeconfig: Option<PathBuf>,

    /// The address of the Kubernetes API server (overrides any value in kubeconfig).
    #[arg(long, value_name = "string", help_heading = "Misc flags")]
    pub master: Option<String>,

    // --- generic ---
    /// A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' enables the controller
    /// named 'foo', '-foo' disables the controller named 'foo'.
    #[arg(
        long,
        value_name = "strings",
        value_delimiter = ',',
        default_value = "*",
        hide_default_value = true,
        help_heading = "Generic flags"
    )]
    pub controllers: Vec<String>,

    /// A set of key=value pairs that describe feature gates for alpha/experimental features. (kcm-rs: the gates
    /// kube-controller-manager 1.37 registers, with their 1.37 defaults; a gate that changes a kcm-rs controller in a
    /// way kcm-rs does not implement is refused, the others are accepted and change nothing.)
    #[arg(
        long,
        value_name = "mapStringBool",
        action = ArgAction::Append,
        value_parser = parse_feature_gates,
        help_heading = "Generic flags"
    )]
    pub feature_gates: Vec<GateSettings>,

    /// The resync period in reflectors will be random between MinResyncPeriod and 2*MinResyncPeriod.
    #[arg(long, value_name = "duration", default_value = "12h0m0s", help_heading = "Generic flags")]
    pub min_resync_period: GoDuration,

    /// Content type of requests sent to apiserver. (kcm-rs accepts this flag for compatibility and always
    /// sends and requests application/json.)
    #[arg(
        long,
        value_name = "string",
        default_value = "application/vnd.kubernetes.protobuf",
        help_heading = "Generic flags"
    )]
    pub kube_api_content_type: String,

    /// QPS to use while talking with kubernetes apiserver.
    #[arg(long, value_name = "float32", default_value = "20", help_heading = "Generic flags")]
    pub kube_api_qps: f32,

    /// Burst to use while talking with kubernetes apiserver.
    #[arg(long, value_name = "int32", default_value = "30", help_heading = "Generic flags")]
    pub kube_api_burst: i32,

    /// If true, use individual service account credentials for each controller. (kcm-rs: each controller's
    /// client then acts as the ServiceAccount kube-system/<its name>, with tokens from the TokenRequest API
    /// requested with --kubeconfig's identity; the shared informers, leader election and the tokens controller
    /// keep --kubeconfig's identity.)
    #[arg(
        long,
        value_name = "true|false",
        default_value = "false",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        action = ArgAction::Set,
        value_parser = parse_go_bool,
        help_heading = "Generic flags"
    )]
    pub use_service_account_credentials: bool,

    /// The instance prefix for the cluster. (kcm-rs: accepted and unused, as in kube-controller-manager 1.37,
    /// whose controllers no longer read it.)
    #[arg(long, value_name = "string", default_value = "kubernetes", help_heading = "Generic flags")]
    pub cluster_name: String,

    /// Start a leader election client and gain leadership before executing the main loop. Enable this when
    /// running replicated components for high availability.
    #[arg(
        long,
        value_name = "true|false",
        default_value = "true",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        action = ArgAction::Set,
        value_parser = parse_go_bool,
        help_heading = "Generic flags"
    )]
    pub leader_elect: bool,

    /// The duration that non-leader candidates will wait after observing a leadership renewal until attempting
    /// to acquire leadership of a led but unrenewed leader slot. This is effectively the maximum duration that a
    /// leader can be stopped before it is replaced by another candidate. This is only applicable if leader
    /// election is enabled.
    #[arg(long, value_name = "duration", default_value = "15s", help_heading = "Generic flags")]
    pub leader_elect_lease_duration: GoDuration,

    /// The interval between attempts by the acting master to renew a leadership slot before it stops leading.
    /// This must be less than the lease duration. This is only applicable if leader election is enabled.
    #[arg(long, value_name = "duration", default_value = "10s", help_heading = "Generic flags")]
    pub leader_elect_renew_deadline: GoDuration,

    /// The duration the clients should wait between attempting acquisition and renewal of a leadership. This
    /// is only applicable if leader election is enabled.
    #[arg(long, value_name = "duration", default_value = "2s", help_heading = "Generic flags")]
    pub leader_elect_retry_period: GoDuration,

    /// The type of resource object that is used for locking during leader election. Supported options are
    /// 'leases'.
    #[arg(long, value_name = "string", default_value = "leases", help_heading = "Generic flags")]
    pub leader_elect_resource_lock: String,

    /// The name of resource object that is used for locking during leader election.
    #[arg(long, value_name = "string", default_value = "kube-controller-manager", help_heading = "Generic flags")]
    pub leader_elect_resource_name: String,

    /// The namespace of resource object that is used for locking during leader election.
    #[arg(long, value_name = "string", default_value = "kube-system", help_heading = "Generic flags")]
    pub leader_elect_resource_namespace: String,

    /// `--secure-port` and what it serves: serving, authentication and
    /// authorization flags (`serving.rs`).
    #[command(flatten)]
    pub serving: ServingFlags,

    /// What follows the controllers' flags on the command line, parsed
    /// apart from this derive (see [`TailFlags`]).
    #[arg(skip)]
    pub tail: TailFlags,

    /// The whole parsed command line, which each controller's settings are
    /// read from ([`ControllerFlags::read`](super::settings::ControllerFlags::read)).
    #[arg(skip)]
    pub matches: ArgMatches,
}

/// The process-wide flags `--help` lists after the controllers' flags:
/// logging, then kcm-rs's own.
#[derive(Debug, Clone, Default, Args)]
pub struct TailFlags {
    // --- logs ---
    /// number for the log level verbosity (kcm-rs maps klog levels onto tracing: 0-2 info, 3-4 debug, 5 and
    /// above trace; warnings and errors are always logged)
    #[arg(short = 'v', long = "v", value_name = "Level", default_value = "0", help_heading = "Logs flags")]
    pub verbosity: u32,

    /// Sets the log format. Permitted formats: "json", "text".
    #[arg(
        long,
        value_name = "string",
        default_value = "text",
        hide_possible_values = true,
        help_heading = "Logs flags"
    )]
    pub logging_format: LogFormat,

    // --- kcm-rs ---
    /// kcm-rs only: start an embedded kube-sim API server (with a kubelet and scheduler stand-in) and run
    /// against it instead of a real cluster.
    #[arg(long, conflicts_with_all = ["kubeconfig", "master"], help_heading = "kcm-rs flags")]
    pub sim: bool,

    /// kcm-rs only: number of nodes the embedded kube-sim starts with (with --sim).
    #[arg(long, value_name = "int", default_value = "3", requires = "sim", help_heading = "kcm-rs flags")]
    pub sim_nodes: usize,
}
