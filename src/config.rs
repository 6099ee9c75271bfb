//! Command-line flags, spelled and defaulted as kube-controller-manager's,
//! and the [`Config`] derived from them once at start-up.
//!
//! Configuration happens in two stages, as in ripgrep's `lowargs`/`hiargs`:
//!
//! 1. [`Flags`] (clap derive) only parses and validates each value on its own:
//!    Go durations (`15s`, `1m0s`, `12h0m0s`), Go booleans (`--leader-elect=false`),
//!    numbers, IP addresses. Help text is upstream's, so `kcm-rs --help` reads
//!    like `kube-controller-manager --help` for the flags kcm-rs has.
//!    kube-controller-manager flags that kcm-rs does not implement (see
//!    [`UNIMPLEMENTED_UPSTREAM_FLAGS`]) are parsed too, but only to be refused
//!    with a message naming them: an operator's manifest must never be
//!    half-honoured in silence. A flag nobody knows gets clap's usual error.
//! 2. [`Config`] ([`Flags::into_config`]) is derived once: the `--controllers`
//!    list is resolved to the set of controllers to run, leader-election timing
//!    is checked as client-go checks it, serving and logging settings are put in
//!    their final shape. Its errors are [`Error`].
//!
//! Building the API client from these settings is `client.rs`'s job; running
//! controllers is the manager's.

use std::collections::BTreeSet;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use clap::{Arg, ArgAction, CommandFactory, FromArgMatches, Parser};

/// Result of deriving a [`Config`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

// === flags ===

/// kcm-rs command line: the kube-controller-manager flags kcm-rs implements,
/// plus `--sim`.
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
                  defaults, being built to run the deployment, replicaset, namespace, node-lifecycle, \
                  taint-eviction and garbage-collector controllers. This build runs none of them yet: it \
                  provides leader election and the health and metrics endpoints."
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

    /// The period for syncing NodeStatus in NodeController.
    #[arg(long, value_name = "duration", default_value = "5s", help_heading = "Generic flags")]
    pub node_monitor_period: GoDuration,

    // --- secure serving ---
    /// The port on which to serve HTTPS with authentication and authorization. If 0, don't serve HTTPS at all.
    /// (kcm-rs serves /healthz, /livez, /readyz and /metrics here, without authentication or authorization;
    /// without --tls-cert-file it generates a self-signed certificate at start.)
    #[arg(
        long,
        value_name = "int",
        default_value = "10257",
        value_parser = parse_secure_port,
        help_heading = "Secure serving flags"
    )]
    pub secure_port: u16,

    /// The IP address on which to listen for the --secure-port port. The associated interface(s) must be
    /// reachable by the rest of the cluster, and by CLI/web clients. If blank or an unspecified address (0.0.0.0
    /// or ::), all interfaces and IP address families will be used.
    #[arg(
        long,
        value_name = "ip",
        default_value = "0.0.0.0",
        value_parser = parse_bind_address,
        help_heading = "Secure serving flags"
    )]
    pub bind_address: IpAddr,

    /// File containing the default x509 Certificate for HTTPS. (CA cert, if any, concatenated after server
    /// cert).
    #[arg(long, value_name = "string", help_heading = "Secure serving flags")]
    pub tls_cert_file: Option<PathBuf>,

    /// File containing the default x509 private key matching --tls-cert-file.
    #[arg(long, value_name = "string", help_heading = "Secure serving flags")]
    pub tls_private_key_file: Option<PathBuf>,

    // --- per controller ---
    /// The number of deployment objects that are allowed to sync concurrently. Larger number = more responsive
    /// deployments, but more CPU (and network) load
    #[arg(long, value_name = "int32", default_value = "5", help_heading = "Deployment controller flags")]
    pub concurrent_deployment_syncs: i32,

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
        action = ArgAction::Set,
        value_parser = parse_go_bool,
        help_heading = "Garbagecollector controller flags"
    )]
    pub enable_garbage_collector: bool,

    /// The number of namespace objects that are allowed to sync concurrently. Larger number = more responsive
    /// namespace termination, but more CPU (and network) load
    #[arg(long, value_name = "int32", default_value = "10", help_heading = "Namespace controller flags")]
    pub concurrent_namespace_syncs: i32,

    /// The period for syncing namespace life-cycle updates
    #[arg(long, value_name = "duration", default_value = "5m0s", help_heading = "Namespace controller flags")]
    pub namespace_sync_period: GoDuration,

    /// Amount of time which we allow running Node to be unresponsive before marking it unhealthy. Must be N
    /// times more than kubelet's nodeStatusUpdateFrequency, where N means number of retries allowed for kubelet
    /// to post node status. This value should also be greater than the sum of HTTP2_PING_TIMEOUT_SECONDS and
    /// HTTP2_READ_IDLE_TIMEOUT_SECONDS
    #[arg(long, value_name = "duration", default_value = "50s", help_heading = "Nodelifecycle controller flags")]
    pub node_monitor_grace_period: GoDuration,

    /// Amount of time which we allow starting Node to be unresponsive before marking it unhealthy.
    #[arg(long, value_name = "duration", default_value = "1m0s", help_heading = "Nodelifecycle controller flags")]
    pub node_startup_grace_period: GoDuration,

    /// Number of nodes per second on which pods are deleted in case of node failure when a zone is healthy (see
    /// --unhealthy-zone-threshold for definition of healthy/unhealthy). Zone refers to entire cluster in
    /// non-multizone clusters.
    #[arg(long, value_name = "float32", default_value = "0.1", help_heading = "Nodelifecycle controller flags")]
    pub node_eviction_rate: f32,

    /// Number of nodes per second on which pods are deleted in case of node failure when a zone is unhealthy
    /// (see --unhealthy-zone-threshold for definition of healthy/unhealthy). Zone refers to entire cluster in
    /// non-multizone clusters. This value is implicitly overridden to 0 if the cluster size is smaller than
    /// --large-cluster-size-threshold.
    #[arg(long, value_name = "float32", default_value = "0.01", help_heading = "Nodelifecycle controller flags")]
    pub secondary_node_eviction_rate: f32,

    /// Number of nodes from which node-lifecycle-controller treats the cluster as large for the eviction logic
    /// purposes. --secondary-node-eviction-rate is implicitly overridden to 0 for clusters this size or smaller.
    /// Notice: If nodes reside in multiple zones, this threshold will be considered as zone node size threshold
    /// for each zone to determine node eviction rate independently.
    #[arg(long, value_name = "int32", default_value = "50", help_heading = "Nodelifecycle controller flags")]
    pub large_cluster_size_threshold: i32,

    /// Fraction of Nodes in a zone which needs to be not Ready (minimum 3) for zone to be treated as unhealthy.
    #[arg(long, value_name = "float32", default_value = "0.55", help_heading = "Nodelifecycle controller flags")]
    pub unhealthy_zone_threshold: f32,

    /// The number of replica sets that are allowed to sync concurrently. Larger number = more responsive replica
    /// management, but more CPU (and network) load
    #[arg(long, value_name = "int32", default_value = "5", help_heading = "Replicaset controller flags")]
    pub concurrent_replicaset_syncs: i32,

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

impl Flags {
    /// The full command: the derived flags, the `--controllers` help listing
    /// every upstream controller, and a hidden argument for each upstream flag
    /// kcm-rs refuses (so that its value, if any, is consumed and the refusal
    /// names the flag rather than a stray value).
    pub fn command() -> clap::Command {
        let mut cmd = <Flags as CommandFactory>::command()
            .mut_args(restore_final_period)
            .mut_arg("controllers", |arg| arg.help(controllers_help()).long_help(controllers_help()));
        for flag in UNIMPLEMENTED_UPSTREAM_FLAGS {
            let arg = Arg::new(flag.name).long(flag.name).hide(true).action(ArgAction::Append);
            let arg = match flag.kind {
                FlagKind::Bool => arg.num_args(0..=1).require_equals(true).default_missing_value("true"),
                FlagKind::Value => arg.num_args(1).allow_hyphen_values(true),
            };
            cmd = cmd.arg(arg);
        }
        cmd.after_long_help(
            "kube-controller-manager flags that kcm-rs does not implement (for example --cloud-provider, \
             --cluster-signing-cert-file, --use-service-account-credentials, --profiling) are refused with an \
             error naming them, never silently ignored.",
        )
    }

    /// Parses the process's arguments, printing help, version or an error
    /// and exiting as clap does.
    pub fn from_env_args() -> Flags {
        Flags::try_from_args(std::env::args_os()).unwrap_or_else(|e| e.exit())
    }

    /// Parses `args` (the first item is the program name).
    ///
    /// # Errors
    ///
    /// clap's error for malformed or unknown flags, and for any
    /// [`UNIMPLEMENTED_UPSTREAM_FLAGS`] present.
    pub fn try_from_args<I, T>(args: I) -> Result<Flags, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let mut cmd = Flags::command();
        let matches = cmd.try_get_matches_from_mut(args)?;
        let refused: Vec<&str> =
            UNIMPLEMENTED_UPSTREAM_FLAGS.iter().filter(|f| matches.contains_id(f.name)).map(|f| f.name).collect();
        if !refused.is_empty() {
            let listed = refused.iter().map(|n| format!("--{n}")).collect::<Vec<_>>().join(", ");
            let (noun, verb) = if refused.len() == 1 { ("flag", "is") } else { ("flags", "are") };
            let msg = format!(
                "kube-controller-manager {noun} {listed} {verb} not implemented by kcm-rs; remove {} to run \
                 kcm-rs\n",
                if refused.len() == 1 { "it" } else { "them" }
            );
            return Err(clap::Error::raw(clap::error::ErrorKind::ArgumentConflict, msg).with_cmd(&cmd));
        }
        Flags::from_arg_matches(&matches).map_err(|e| e.with_cmd(&cmd))
    }

    /// Derives the [`Config`] (stage two).
    ///
    /// # Errors
    ///
    /// [`Error`] when the flags are individually well-formed but do not make a
    /// runnable configuration together.
    pub fn into_config(self) -> Result<Config> {
        Config::from_flags(self)
    }
}

/// Upstream help texts whose last sentence has no final period.
const HELP_WITHOUT_PERIOD: &[&str] = &[
    "concurrent_deployment_syncs",
    "concurrent_namespace_syncs",
    "concurrent_replicaset_syncs",
    "namespace_sync_period",
    "node_monitor_grace_period",
    "verbosity",
];

/// clap's derive drops the final period of a one-paragraph doc comment;
/// upstream's help keeps it, and so do we.
fn restore_final_period(arg: Arg) -> Arg {
    let id = arg.get_id().as_str().to_owned();
    match arg.get_help().map(ToString::to_string) {
        Some(help) if !help.ends_with(['.', ')']) && !HELP_WITHOUT_PERIOD.contains(&id.as_str()) => {
            arg.help(format!("{help}."))
        }
        _ => arg,
    }
}

/// Help text of `--controllers`: upstream's sentence plus its two lists, then
/// which of them kcm-rs runs.
fn controllers_help() -> String {
    let all: Vec<&str> = CONTROLLERS.iter().map(|c| c.name).collect();
    let off: Vec<&str> =
        CONTROLLERS.iter().filter(|c| c.upstream_default == UpstreamDefault::Off).map(|c| c.name).collect();
    let ours: Vec<&str> = CONTROLLERS.iter().filter(|c| c.implemented).map(|c| c.name).collect();
    format!(
        "A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' enables the controller \
         named 'foo', '-foo' disables the controller named 'foo'.\nAll controllers: {}\nDisabled-by-default \
         controllers: {}\nkcm-rs's controllers: {} ('*' selects those of them that are on by default; explicitly \
         enabling any other controller is an error). This build runs none of them yet.",
        all.join(", "),
        off.join(", "),
        ours.join(", ")
    )
}

// === upstream flags kcm-rs refuses ===

/// How an upstream flag takes its value, so the refusal consumes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagKind {
    /// A boolean: `--flag` or `--flag=false`.
    Bool,
    /// Takes a value: `--flag value` or `--flag=value`.
    Value,
}

/// One kube-controller-manager flag kcm-rs does not implement.
#[derive(Debug, Clone, Copy)]
pub struct UpstreamFlag {
    /// Flag name without the leading `--`.
    pub name: &'static str,
    /// Whether it takes a value.
    pub kind: FlagKind,
}

const fn b(name: &'static str) -> UpstreamFlag {
    UpstreamFlag { name, kind: FlagKind::Bool }
}

const fn v(name: &'static str) -> UpstreamFlag {
    UpstreamFlag { name, kind: FlagKind::Value }
}

/// kube-controller-manager's flags (v1.33) that kcm-rs does not implement.
/// Each is refused at start-up with an error naming it.
pub const UNIMPLEMENTED_UPSTREAM_FLAGS: &[UpstreamFlag] = &[
    b("allocate-node-cidrs"),
    v("allow-metric-labels"),
    v("allow-metric-labels-manifest"),
    b("allow-untagged-cloud"),
    v("attach-detach-reconcile-max-wait-unmount-duration"),
    v("attach-detach-reconcile-sync-period"),
    v("authentication-kubeconfig"),
    b("authentication-skip-lookup"),
    v("authentication-token-webhook-cache-ttl"),
    b("authentication-tolerate-lookup-failure"),
    v("authorization-always-allow-paths"),
    v("authorization-kubeconfig"),
    v("authorization-webhook-cache-authorized-ttl"),
    v("authorization-webhook-cache-unauthorized-ttl"),
    v("cert-dir"),
    v("cidr-allocator-type"),
    v("client-ca-file"),
    v("cloud-config"),
    v("cloud-provider"),
    v("cluster-cidr"),
    v("cluster-name"),
    v("cluster-signing-cert-file"),
    v("cluster-signing-duration"),
    v("cluster-signing-key-file"),
    v("cluster-signing-kube-apiserver-client-cert-file"),
    v("cluster-signing-kube-apiserver-client-key-file"),
    v("cluster-signing-kubelet-client-cert-file"),
    v("cluster-signing-kubelet-client-key-file"),
    v("cluster-signing-kubelet-serving-cert-file"),
    v("cluster-signing-kubelet-serving-key-file"),
    v("cluster-signing-legacy-unknown-cert-file"),
    v("cluster-signing-legacy-unknown-key-file"),
    v("concurrent-cron-job-syncs"),
    v("concurrent-daemonset-syncs"),
    v("concurrent-endpoint-syncs"),
    v("concurrent-ephemeralvolume-syncs"),
    v("concurrent-horizontal-pod-autoscaler-syncs"),
    v("concurrent-job-syncs"),
    v("concurrent-rc-syncs"),
    v("concurrent-resource-quota-syncs"),
    v("concurrent-service-endpoint-syncs"),
    v("concurrent-service-syncs"),
    v("concurrent-serviceaccount-token-syncs"),
    v("concurrent-statefulset-syncs"),
    v("concurrent-ttl-after-finished-syncs"),
    v("concurrent-validating-admission-policy-status-syncs"),
    b("configure-cloud-routes"),
    b("contention-profiling"),
    v("controller-start-interval"),
    b("disable-attach-detach-reconcile-sync"),
    b("disable-force-detach-on-timeout"),
    b("disable-http2-serving"),
    v("disabled-metrics"),
    v("emulated-version"),
    b("enable-dynamic-provisioning"),
    b("enable-hostpath-provisioner"),
    b("enable-leader-migration"),
    v("endpoint-updates-batch-period"),
    v("endpointslice-updates-batch-period"),
    v("external-cloud-volume-plugin"),
    v("feature-gates"),
    v("flex-volume-plugin-dir"),
    v("horizontal-pod-autoscaler-cpu-initialization-period"),
    v("horizontal-pod-autoscaler-downscale-stabilization"),
    v("horizontal-pod-autoscaler-initial-readiness-delay"),
    v("horizontal-pod-autoscaler-sync-period"),
    v("horizontal-pod-autoscaler-tolerance"),
    v("http2-max-streams-per-connection"),
    v("leader-migration-config"),
    v("legacy-service-account-token-clean-up-period"),
    v("log-flush-frequency"),
    v("log-json-info-buffer-size"),
    b("log-json-split-stream"),
    v("log-text-info-buffer-size"),
    b("log-text-split-stream"),
    v("max-endpoints-per-slice"),
    v("mirroring-concurrent-service-endpoint-syncs"),
    v("mirroring-endpointslice-updates-batch-period"),
    v("mirroring-max-endpoints-per-subset"),
    v("node-cidr-mask-size"),
    v("node-cidr-mask-size-ipv4"),
    v("node-cidr-mask-size-ipv6"),
    b("permit-address-sharing"),
    b("permit-port-sharing"),
    b("profiling"),
    v("pv-recycler-increment-timeout-nfs"),
    v("pv-recycler-minimum-timeout-hostpath"),
    v("pv-recycler-minimum-timeout-nfs"),
    v("pv-recycler-pod-template-filepath-hostpath"),
    v("pv-recycler-pod-template-filepath-nfs"),
    v("pv-recycler-timeout-increment-hostpath"),
    v("pvclaimbinder-sync-period"),
    v("requestheader-allowed-names"),
    v("requestheader-client-ca-file"),
    v("requestheader-extra-headers-prefix"),
    v("requestheader-group-headers"),
    v("requestheader-uid-headers"),
    v("requestheader-username-headers"),
    v("resource-quota-sync-period"),
    v("root-ca-file"),
    v("route-reconciliation-period"),
    v("service-account-private-key-file"),
    v("service-cluster-ip-range"),
    v("show-hidden-metrics-for-version"),
    v("terminated-pod-gc-threshold"),
    v("tls-cipher-suites"),
    v("tls-min-version"),
    v("tls-sni-cert-key"),
    b("use-service-account-credentials"),
    v("vmodule"),
    b("volume-host-allow-local-loopback"),
    v("volume-host-cidr-denylist"),
];

// === controllers ===

/// Whether upstream's `*` starts a controller (v1.33, default feature gates).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpstreamDefault {
    /// Started by `*`.
    On,
    /// Disabled by default: listed in upstream's "Disabled-by-default controllers".
    Off,
    /// Behind a feature gate that is off by default; skipped by `*`.
    Gated(&'static str),
}

/// One of kube-controller-manager's controllers, as its `names` package and
/// controller descriptors define it.
#[derive(Debug, Clone, Copy)]
pub struct ControllerDescriptor {
    /// Canonical name (cmd/kube-controller-manager/names).
    pub name: &'static str,
    /// Legacy names `--controllers` still accepts.
    pub aliases: &'static [&'static str],
    /// Whether upstream's `*` enables it.
    pub upstream_default: UpstreamDefault,
    /// Whether kcm-rs implements it.
    pub implemented: bool,
}

const fn c(
    name: &'static str,
    aliases: &'static [&'static str],
    d: UpstreamDefault,
    ours: bool,
) -> ControllerDescriptor {
    ControllerDescriptor { name, aliases, upstream_default: d, implemented: ours }
}

use UpstreamDefault::{Gated, Off, On};

/// Every kube-controller-manager controller (v1.33), in upstream's help order
/// (sorted by canonical name).
pub const CONTROLLERS: &[ControllerDescriptor] = &[
    c("bootstrap-signer-controller", &["bootstrapsigner"], Off, false),
    c("certificatesigningrequest-approving-controller", &["csrapproving"], On, false),
    c("certificatesigningrequest-cleaner-controller", &["csrcleaner"], On, false),
    c("certificatesigningrequest-signing-controller", &["csrsigning"], On, false),
    c("cloud-node-lifecycle-controller", &["cloud-node-lifecycle"], On, false),
    c("clusterrole-aggregation-controller", &["clusterrole-aggregation"], On, false),
    c("cronjob-controller", &["cronjob"], On, false),
    c("daemonset-controller", &["daemonset"], On, false),
    c("deployment-controller", &["deployment"], On, true),
    c("device-taint-eviction-controller", &[], Gated("DRADeviceTaints"), false),
    c("disruption-controller", &["disruption"], On, false),
    c("endpoints-controller", &["endpoint"], On, false),
    c("endpointslice-controller", &["endpointslice"], On, false),
    c("endpointslice-mirroring-controller", &["endpointslicemirroring"], On, false),
    c("ephemeral-volume-controller", &["ephemeral-volume"], On, false),
    c("garbage-collector-controller", &["garbagecollector"], On, true),
    c("horizontal-pod-autoscaler-controller", &["horizontalpodautoscaling"], On, false),
    c("job-controller", &["job"], On, false),
    c("kube-apiserver-serving-clustertrustbundle-publisher-controller", &[], Gated("ClusterTrustBundle"), false),
    c("legacy-serviceaccount-token-cleaner-controller", &["legacy-service-account-token-cleaner"], On, false),
    c("namespace-controller", &["namespace"], On, true),
    c("node-ipam-controller", &["nodeipam"], On, false),
    c("node-lifecycle-controller", &["nodelifecycle"], On, true),
    c("node-route-controller", &["route"], On, false),
    c("persistentvolume-attach-detach-controller", &["attachdetach"], On, false),
    c("persistentvolume-binder-controller", &["persistentvolume-binder"], On, false),
    c("persistentvolume-expander-controller", &["persistentvolume-expander"], On, false),
    c("persistentvolume-protection-controller", &["pv-protection"], On, false),
    c("persistentvolumeclaim-protection-controller", &["pvc-protection"], On, false),
    c("pod-garbage-collector-controller", &["podgc"], On, false),
    c("replicaset-controller", &["replicaset"], On, true),
    c("replicationcontroller-controller", &["replicationcontroller"], On, false),
    c("resourceclaim-controller", &["resource-claim-controller"], Gated("DynamicResourceAllocation"), false),
    c("resourcequota-controller", &["resourcequota"], On, false),
    c("root-ca-certificate-publisher-controller", &["root-ca-cert-publisher"], On, false),
    c("selinux-warning-controller", &[], Off, false),
    c("service-cidr-controller", &[], On, false),
    c("service-lb-controller", &["service"], On, false),
    c("serviceaccount-controller", &["serviceaccount"], On, false),
    c("serviceaccount-token-controller", &["serviceaccount-token"], On, false),
    c("statefulset-controller", &["statefulset"], On, false),
    c("storage-version-migrator-controller", &[], Gated("StorageVersionMigrator"), false),
    c("storageversion-garbage-collector-controller", &["storage-version-gc"], Gated("StorageVersionAPI"), false),
    c("taint-eviction-controller", &[], On, true),
    c("token-cleaner-controller", &["tokencleaner"], Off, false),
    c("ttl-after-finished-controller", &["ttl-after-finished"], On, false),
    c("ttl-controller", &["ttl"], On, false),
    c("validatingadmissionpolicy-status-controller", &["validatingadmissionpolicy-status"], On, false),
    c("volumeattributesclass-protection-controller", &[], Gated("VolumeAttributesClass"), false),
];

/// Canonical name for `name` (itself, or the controller an alias stands for);
/// `None` when no upstream controller has that name.
pub fn canonical_controller_name(name: &str) -> Option<&'static str> {
    CONTROLLERS.iter().find(|c| c.name == name || c.aliases.contains(&name)).map(|c| c.name)
}

/// A controller kcm-rs runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Controller {
    /// `deployment-controller`.
    Deployment,
    /// `replicaset-controller`.
    ReplicaSet,
    /// `namespace-controller`.
    Namespace,
    /// `node-lifecycle-controller`.
    NodeLifecycle,
    /// `taint-eviction-controller`.
    TaintEviction,
    /// `garbage-collector-controller`.
    GarbageCollector,
}

impl Controller {
    /// Every controller kcm-rs implements.
    pub const ALL: [Controller; 6] = [
        Controller::Deployment,
        Controller::ReplicaSet,
        Controller::Namespace,
        Controller::NodeLifecycle,
        Controller::TaintEviction,
        Controller::GarbageCollector,
    ];

    /// Upstream's canonical name.
    pub fn name(self) -> &'static str {
        match self {
            Controller::Deployment => "deployment-controller",
            Controller::ReplicaSet => "replicaset-controller",
            Controller::Namespace => "namespace-controller",
            Controller::NodeLifecycle => "node-lifecycle-controller",
            Controller::TaintEviction => "taint-eviction-controller",
            Controller::GarbageCollector => "garbage-collector-controller",
        }
    }

    /// The controller with this canonical name.
    pub fn from_name(name: &str) -> Option<Controller> {
        Controller::ALL.into_iter().find(|c| c.name() == name)
    }
}

impl fmt::Display for Controller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The controllers to run, resolved from `--controllers` (and
/// `--enable-garbage-collector`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerSet {
    enabled: BTreeSet<Controller>,
    skipped: Vec<&'static str>,
}

impl ControllerSet {
    /// Resolves a `--controllers` list as upstream does.
    ///
    /// Each entry is `name`, `-name` or `*`; aliases are rewritten to
    /// canonical names keeping the `-`. For each controller the first entry
    /// naming it wins; otherwise it runs if `*` is present and upstream enables
    /// it by default. Controllers kcm-rs does not implement are skipped under
    /// `*` (see [`ControllerSet::skipped`]) and are an error when enabled by
    /// name.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownController`] for a name no upstream controller has (the
    /// first such entry), [`Error::UnimplementedControllers`] naming every
    /// explicitly enabled controller kcm-rs lacks.
    pub fn resolve<S: AsRef<str>>(entries: &[S]) -> Result<ControllerSet> {
        let mut canonical: Vec<(bool, &'static str)> = Vec::new();
        let mut star = false;
        for entry in entries.iter().map(AsRef::as_ref).filter(|e| !e.is_empty()) {
            if entry == "*" {
                star = true;
                continue;
            }
            let (disable, bare) = match entry.strip_prefix('-') {
                Some(bare) => (true, bare),
                None => (false, entry),
            };
            let name = canonical_controller_name(bare).ok_or_else(|| Error::UnknownController(bare.to_owned()))?;
            canonical.push((disable, name));
        }
        let mut enabled = BTreeSet::new();
        let mut skipped = Vec::new();
        let mut unimplemented = Vec::new();
        for desc in CONTROLLERS {
            let explicit = canonical.iter().find(|(_, n)| *n == desc.name).map(|(disable, _)| !disable);
            let on = match explicit {
                Some(on) => on,
                None => star && desc.upstream_default == On,
            };
            if !on {
                continue;
            }
            match (desc.implemented, explicit) {
                (true, _) => {
                    if let Some(c) = Controller::from_name(desc.name) {
                        enabled.insert(c);
                    }
                }
                (false, Some(true)) => unimplemented.push(desc.name),
                (false, _) => skipped.push(desc.name),
            }
        }
        if !unimplemented.is_empty() {
            return Err(Error::UnimplementedControllers(unimplemented));
        }
        Ok(ControllerSet { enabled, skipped })
    }

    /// Whether `controller` runs.
    pub fn contains(&self, controller: Controller) -> bool {
        self.enabled.contains(&controller)
    }

    /// The controllers that run, in a stable order.
    pub fn iter(&self) -> impl Iterator<Item = Controller> + '_ {
        self.enabled.iter().copied()
    }

    /// Controllers upstream would start for this list that kcm-rs does not
    /// implement (selected by `*`, not by name): worth one log line at start-up.
    pub fn skipped(&self) -> &[&'static str] {
        &self.skipped
    }

    fn remove(&mut self, controller: Controller) {
        self.enabled.remove(&controller);
    }
}

// === config ===

/// Everything kcm-rs needs to run, derived once from [`Flags`].
#[derive(Debug, Clone)]
pub struct Config {
    /// How to reach the API server.
    pub client: ClientSettings,
    /// Controllers to run.
    pub controllers: ControllerSet,
    /// `--concurrent-deployment-syncs`.
    pub concurrent_deployment_syncs: usize,
    /// `--concurrent-replicaset-syncs`.
    pub concurrent_replicaset_syncs: usize,
    /// `--concurrent-namespace-syncs`.
    pub concurrent_namespace_syncs: usize,
    /// `--namespace-sync-period`: resync of the namespace handler.
    pub namespace_sync_period: Duration,
    /// `--concurrent-gc-syncs`.
    pub concurrent_gc_syncs: usize,
    /// `--min-resync-period`: informer resync is random in [this, 2 × this).
    pub min_resync_period: Duration,
    /// Node lifecycle timing and eviction rates.
    pub node_lifecycle: NodeLifecycleSettings,
    /// Lease leader election; `None` with `--leader-elect=false`.
    pub leader_election: Option<LeaderElectionSettings>,
    /// Health and metrics endpoint; `None` with `--secure-port=0`.
    pub serving: Option<ServingSettings>,
    /// Log level and format.
    pub logging: LoggingSettings,
    /// `--sim`: run against an embedded kube-sim with this many nodes.
    pub sim: Option<SimSettings>,
}

/// Where the API server is and how hard to talk to it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientSettings {
    /// `--kubeconfig`.
    pub kubeconfig: Option<PathBuf>,
    /// `--master`: overrides the kubeconfig's server.
    pub master: Option<String>,
    /// `--kube-api-qps`; `<= 0` disables the client-side limiter.
    pub qps: f32,
    /// `--kube-api-burst`.
    pub burst: u32,
    /// `--kube-api-content-type`, recorded only: kcm-rs always uses JSON.
    pub content_type: String,
}

/// Node lifecycle controller settings (upstream's NodeLifecycleControllerConfiguration
/// plus `--node-monitor-period`).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeLifecycleSettings {
    /// `--node-monitor-period`.
    pub monitor_period: Duration,
    /// `--node-monitor-grace-period`.
    pub monitor_grace_period: Duration,
    /// `--node-startup-grace-period`.
    pub startup_grace_period: Duration,
    /// `--node-eviction-rate` (nodes per second per healthy zone).
    pub eviction_rate: f32,
    /// `--secondary-node-eviction-rate`.
    pub secondary_eviction_rate: f32,
    /// `--large-cluster-size-threshold`.
    pub large_cluster_size_threshold: u32,
    /// `--unhealthy-zone-threshold`.
    pub unhealthy_zone_threshold: f32,
}

/// Lease leader election, validated as client-go's `NewLeaderElector` does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderElectionSettings {
    /// `--leader-elect-lease-duration`.
    pub lease_duration: Duration,
    /// `--leader-elect-renew-deadline`.
    pub renew_deadline: Duration,
    /// `--leader-elect-retry-period`.
    pub retry_period: Duration,
    /// `--leader-elect-resource-name`.
    pub resource_name: String,
    /// `--leader-elect-resource-namespace`.
    pub resource_namespace: String,
}

/// The health/metrics endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServingSettings {
    /// `--bind-address`:`--secure-port`.
    pub addr: SocketAddr,
    /// `--tls-cert-file` and `--tls-private-key-file`; `None` serves with a
    /// self-signed certificate generated at start.
    pub tls: Option<TlsFiles>,
}

/// A certificate and its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// PEM certificate chain.
    pub cert: PathBuf,
    /// PEM private key.
    pub key: PathBuf,
}

/// Logging.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoggingSettings {
    /// `-v`, as given.
    pub verbosity: u32,
    /// The tracing level `-v` maps to (see [`level_for_verbosity`]).
    pub level: tracing::Level,
    /// `--logging-format`.
    pub format: LogFormat,
}

/// `--sim` settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimSettings {
    /// `--sim-nodes`.
    pub nodes: usize,
}

/// Why the flags do not make a runnable configuration.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// A `--controllers` entry names no upstream controller (upstream's message).
    #[error("{0:?} is not in the list of known controllers")]
    UnknownController(String),
    /// `--controllers` enables by name controllers that upstream has and kcm-rs lacks.
    #[error(
        "--controllers enables {}, which kcm-rs does not implement (kcm-rs implements {}); remove {} from \
         --controllers or run kube-controller-manager for {}",
        .0.join(", "),
        Controller::ALL.map(Controller::name).join(", "),
        if .0.len() == 1 { "it" } else { "them" },
        if .0.len() == 1 { "it" } else { "them" }
    )]
    UnimplementedControllers(Vec<&'static str>),
    /// `--leader-elect-resource-lock` is not `leases` (upstream's message).
    #[error("resourceLock value must be \"leases\"")]
    ResourceLock(String),
    /// A leader-election duration is zero.
    #[error("--{0} must be greater than zero")]
    NonPositiveDuration(&'static str),
    /// Lease duration not above renew deadline (client-go's rule).
    #[error(
        "--leader-elect-lease-duration ({lease}) must be greater than --leader-elect-renew-deadline ({renew}): \
         LeaseDuration must be greater than RenewDeadline"
    )]
    LeaseNotAboveRenew {
        /// The lease duration, Go-formatted.
        lease: String,
        /// The renew deadline, Go-formatted.
        renew: String,
    },
    /// Renew deadline not above 1.2 × retry period (client-go's rule).
    #[error(
        "--leader-elect-renew-deadline ({renew}) must be greater than 1.2 x --leader-elect-retry-period \
         ({retry}): renewDeadline must be greater than retryPeriod*JitterFactor"
    )]
    RenewNotAboveRetry {
        /// The renew deadline, Go-formatted.
        renew: String,
        /// The retry period, Go-formatted.
        retry: String,
    },
    /// A leader-election resource name or namespace is empty.
    #[error("--{0} is required when leader election is enabled")]
    Required(&'static str),
    /// A worker-count flag is not positive.
    #[error("--{flag} must be greater than 0, got {value}")]
    NonPositiveWorkers {
        /// The flag.
        flag: &'static str,
        /// Its value.
        value: i32,
    },
    /// A count or rate flag is negative.
    #[error("--{flag} must not be negative, got {value}")]
    Negative {
        /// The flag.
        flag: &'static str,
        /// Its value.
        value: String,
    },
    /// QPS is set but burst is not positive (client-go's message).
    #[error("burst is required to be greater than 0 when RateLimiter is not set and QPS is set to greater than 0")]
    Burst,
    /// Only one of the TLS files was given.
    #[error("--tls-cert-file and --tls-private-key-file must be given together")]
    TlsPair,
}

impl Config {
    /// Stage two: see the module documentation.
    ///
    /// # Errors
    ///
    /// See [`Error`].
    pub fn from_flags(flags: Flags) -> Result<Config> {
        let mut controllers = ControllerSet::resolve(&flags.controllers)?;
        if !flags.enable_garbage_collector {
            // Upstream's garbage collector start-up returns "not started" when the flag is off.
            controllers.remove(Controller::GarbageCollector);
        }

        let workers = |flag: &'static str, value: i32| -> Result<usize> {
            usize::try_from(value).ok().filter(|n| *n > 0).ok_or(Error::NonPositiveWorkers { flag, value })
        };

        let burst = u32::try_from(flags.kube_api_burst)
            .map_err(|_| Error::Negative { flag: "kube-api-burst", value: flags.kube_api_burst.to_string() })?;
        if flags.kube_api_qps > 0.0 && burst == 0 {
            return Err(Error::Burst);
        }

        let leader_election = if flags.leader_elect { Some(leader_election(&flags)?) } else { None };

        let tls = match (&flags.tls_cert_file, &flags.tls_private_key_file) {
            (Some(cert), Some(key)) => Some(TlsFiles { cert: cert.clone(), key: key.clone() }),
            (None, None) => None,
            _ => return Err(Error::TlsPair),
        };
        let serving = (flags.secure_port != 0)
            .then(|| ServingSettings { addr: SocketAddr::new(flags.bind_address, flags.secure_port), tls });

        for (flag, value) in [
            ("node-eviction-rate", flags.node_eviction_rate),
            ("secondary-node-eviction-rate", flags.secondary_node_eviction_rate),
            ("unhealthy-zone-threshold", flags.unhealthy_zone_threshold),
        ] {
            if value < 0.0 || value.is_nan() {
                return Err(Error::Negative { flag, value: value.to_string() });
            }
        }
        let large_cluster_size_threshold =
            u32::try_from(flags.large_cluster_size_threshold).map_err(|_| Error::Negative {
                flag: "large-cluster-size-threshold",
                value: flags.large_cluster_size_threshold.to_string(),
            })?;

        Ok(Config {
            client: ClientSettings {
                kubeconfig: flags.kubeconfig.clone(),
                master: flags.master.clone().filter(|m| !m.is_empty()),
                qps: flags.kube_api_qps,
                burst,
                content_type: flags.kube_api_content_type.clone(),
            },
            controllers,
            concurrent_deployment_syncs: workers("concurrent-deployment-syncs", flags.concurrent_deployment_syncs)?,
            concurrent_replicaset_syncs: workers("concurrent-replicaset-syncs", flags.concurrent_replicaset_syncs)?,
            concurrent_namespace_syncs: workers("concurrent-namespace-syncs", flags.concurrent_namespace_syncs)?,
            namespace_sync_period: flags.namespace_sync_period.0,
            concurrent_gc_syncs: workers("concurrent-gc-syncs", flags.concurrent_gc_syncs)?,
            min_resync_period: flags.min_resync_period.0,
            node_lifecycle: NodeLifecycleSettings {
                monitor_period: flags.node_monitor_period.0,
                monitor_grace_period: flags.node_monitor_grace_period.0,
                startup_grace_period: flags.node_startup_grace_period.0,
                eviction_rate: flags.node_eviction_rate,
                secondary_eviction_rate: flags.secondary_node_eviction_rate,
                large_cluster_size_threshold,
                unhealthy_zone_threshold: flags.unhealthy_zone_threshold,
            },
            leader_election,
            serving,
            logging: LoggingSettings {
                verbosity: flags.verbosity,
                level: level_for_verbosity(flags.verbosity),
                format: flags.logging_format,
            },
            sim: flags.sim.then_some(SimSettings { nodes: flags.sim_nodes }),
        })
    }
}

/// Checks leader-election settings as upstream's option validation and
/// client-go's `NewLeaderElector` do.
fn leader_election(flags: &Flags) -> Result<LeaderElectionSettings> {
    if flags.leader_elect_resource_lock != "leases" {
        return Err(Error::ResourceLock(flags.leader_elect_resource_lock.clone()));
    }
    let lease = flags.leader_elect_lease_duration.0;
    let renew = flags.leader_elect_renew_deadline.0;
    let retry = flags.leader_elect_retry_period.0;
    for (flag, d) in [
        ("leader-elect-lease-duration", lease),
        ("leader-elect-renew-deadline", renew),
        ("leader-elect-retry-period", retry),
    ] {
        if d.is_zero() {
            return Err(Error::NonPositiveDuration(flag));
        }
    }
    if lease <= renew {
        return Err(Error::LeaseNotAboveRenew { lease: format_go_duration(lease), renew: format_go_duration(renew) });
    }
    // client-go's JitterFactor is 1.2; compare in nanoseconds to stay exact.
    if renew.as_nanos() * 5 <= retry.as_nanos() * 6 {
        return Err(Error::RenewNotAboveRetry { renew: format_go_duration(renew), retry: format_go_duration(retry) });
    }
    if flags.leader_elect_resource_name.is_empty() {
        return Err(Error::Required("leader-elect-resource-name"));
    }
    if flags.leader_elect_resource_namespace.is_empty() {
        return Err(Error::Required("leader-elect-resource-namespace"));
    }
    Ok(LeaderElectionSettings {
        lease_duration: lease,
        renew_deadline: renew,
        retry_period: retry,
        resource_name: flags.leader_elect_resource_name.clone(),
        resource_namespace: flags.leader_elect_resource_namespace.clone(),
    })
}

// === logging ===

/// `--logging-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines (upstream's default).
    Text,
    /// One JSON object per line.
    Json,
}

/// Maps a klog `-v` level onto a tracing level.
///
/// klog's conventions: V(0)–V(1) operator-relevant information, V(2) the
/// recommended steady-state level (most clusters run `--v=2`), V(3)–V(4)
/// debugging detail, V(5)+ tracing. So 0–2 → `INFO`, 3–4 → `DEBUG`,
/// 5 and above → `TRACE`. Warnings and errors show at every level.
pub fn level_for_verbosity(v: u32) -> tracing::Level {
    match v {
        0..=2 => tracing::Level::INFO,
        3..=4 => tracing::Level::DEBUG,
        _ => tracing::Level::TRACE,
    }
}

// === value parsers ===

/// A duration written in Go's syntax (`300ms`, `15s`, `1m0s`, `1h30m`,
/// `12h0m0s`); displays as Go's `time.Duration.String()` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct GoDuration(pub Duration);

impl FromStr for GoDuration {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_go_duration(s).map(GoDuration)
    }
}

impl fmt::Display for GoDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_go_duration(self.0))
    }
}

/// Parses a duration as Go's `time.ParseDuration` does: a sequence of
/// decimal numbers, each with an optional fraction and a unit suffix (`ns`,
/// `us`/`µs`, `ms`, `s`, `m`, `h`); `0` alone needs no unit. Negative
/// durations are refused (no kcm flag means anything by them).
///
/// # Errors
///
/// A message naming the input, in Go's words where Go has some.
pub fn parse_go_duration(input: &str) -> Result<Duration, String> {
    let invalid = || format!("time: invalid duration {input:?}");
    let mut s = input;
    if let Some(rest) = s.strip_prefix('+') {
        s = rest;
    } else if let Some(rest) = s.strip_prefix('-') {
        if rest == "0" {
            return Ok(Duration::ZERO);
        }
        return Err(format!("invalid duration {input:?}: must not be negative"));
    }
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut total: u128 = 0;
    while !s.is_empty() {
        let int_len = s.bytes().take_while(u8::is_ascii_digit).count();
        let (int_part, rest) = s.split_at(int_len);
        let (frac_part, rest) = match rest.strip_prefix('.') {
            Some(after) => {
                let n = after.bytes().take_while(u8::is_ascii_digit).count();
                after.split_at(n)
            }
            None => ("", rest),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(invalid());
        }
        let unit_len = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let (unit, rest) = rest.split_at(unit_len);
        let nanos_per_unit: u128 = match unit {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "" => return Err(format!("time: missing unit in duration {input:?}")),
            _ => return Err(format!("time: unknown unit {unit:?} in duration {input:?}")),
        };
        let whole: u128 = if int_part.is_empty() { 0 } else { int_part.parse().map_err(|_| invalid())? };
        let mut value = whole.checked_mul(nanos_per_unit).ok_or_else(invalid)?;
        // Fraction: digits beyond nanosecond precision are dropped, as Go does.
        let mut scale = nanos_per_unit;
        for digit in frac_part.bytes() {
            scale /= 10;
            if scale == 0 {
                break;
            }
            value += u128::from(digit - b'0') * scale;
        }
        total = total.checked_add(value).ok_or_else(invalid)?;
        s = rest;
    }
    // Go's Duration is an int64 of nanoseconds.
    if total > i64::MAX as u128 {
        return Err(invalid());
    }
    let secs = u64::try_from(total / 1_000_000_000).map_err(|_| invalid())?;
    let nanos = u32::try_from(total % 1_000_000_000).map_err(|_| invalid())?;
    Ok(Duration::new(secs, nanos))
}

/// Formats a duration as Go's `time.Duration.String()`: `0s`, `1.5µs`,
/// `300ms`, `15s`, `1m0s`, `12h0m0s`.
pub fn format_go_duration(d: Duration) -> String {
    fn trim(frac: u128, width: usize) -> String {
        let s = format!("{frac:0width$}");
        let s = s.trim_end_matches('0');
        if s.is_empty() { String::new() } else { format!(".{s}") }
    }
    let nanos = d.as_nanos();
    if nanos == 0 {
        return "0s".to_owned();
    }
    if nanos < 1_000 {
        return format!("{nanos}ns");
    }
    if nanos < 1_000_000 {
        return format!("{}{}\u{b5}s", nanos / 1_000, trim(nanos % 1_000, 3));
    }
    if nanos < 1_000_000_000 {
        return format!("{}{}ms", nanos / 1_000_000, trim(nanos % 1_000_000, 6));
    }
    let secs = nanos / 1_000_000_000;
    let frac = trim(nanos % 1_000_000_000, 9);
    let (h, m, s) = (secs / 3600, (secs % 3600) / 60, secs % 60);
    match (h, m) {
        (0, 0) => format!("{s}{frac}s"),
        (0, _) => format!("{m}m{s}{frac}s"),
        _ => format!("{h}h{m}m{s}{frac}s"),
    }
}

/// Parses a boolean as Go's `strconv.ParseBool` (and so pflag) does.
///
/// # Errors
///
/// A message naming the input.
pub fn parse_go_bool(s: &str) -> Result<bool, String> {
    match s {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(false),
        _ => Err(format!("strconv.ParseBool: parsing {s:?}: invalid syntax")),
    }
}

/// `--secure-port`: 0 (off) to 65535, with upstream's message.
fn parse_secure_port(s: &str) -> Result<u16, String> {
    s.parse::<i64>().ok().and_then(|n| u16::try_from(n).ok()).ok_or_else(|| {
        format!("--secure-port {s} must be between 0 and 65535, inclusive. 0 for turning off secure port")
    })
}

/// `--bind-address`: an IP address; blank means all interfaces.
fn parse_bind_address(s: &str) -> Result<IpAddr, String> {
    if s.is_empty() {
        return Ok(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    }
    s.parse().map_err(|_| format!("invalid IP address {s:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    // === utils ===

    fn flags(args: &[&str]) -> Result<Flags, clap::Error> {
        Flags::try_from_args(std::iter::once("kcm-rs").chain(args.iter().copied()))
    }

    fn config(args: &[&str]) -> Result<Config> {
        flags(args).expect("flags parse").into_config()
    }

    fn controllers(list: &str) -> Result<Vec<&'static str>> {
        ControllerSet::resolve(&list.split(',').collect::<Vec<_>>()).map(|s| s.iter().map(Controller::name).collect())
    }

    const OURS: [&str; 6] = [
        "deployment-controller",
        "replicaset-controller",
        "namespace-controller",
        "node-lifecycle-controller",
        "taint-eviction-controller",
        "garbage-collector-controller",
    ];

    // === tests ===

    /// kube-controller-manager's defaults (v1.33), as `--help` shows them.
    const UPSTREAM_DEFAULTS: &[(&str, &str)] = &[
        ("controllers", "*"),
        ("concurrent-deployment-syncs", "5"),
        ("concurrent-replicaset-syncs", "5"),
        ("concurrent-namespace-syncs", "10"),
        ("concurrent-gc-syncs", "20"),
        ("enable-garbage-collector", "true"),
        ("namespace-sync-period", "5m0s"),
        ("min-resync-period", "12h0m0s"),
        ("kube-api-qps", "20"),
        ("kube-api-burst", "30"),
        ("kube-api-content-type", "application/vnd.kubernetes.protobuf"),
        ("leader-elect", "true"),
        ("leader-elect-lease-duration", "15s"),
        ("leader-elect-renew-deadline", "10s"),
        ("leader-elect-retry-period", "2s"),
        ("leader-elect-resource-lock", "leases"),
        ("leader-elect-resource-name", "kube-controller-manager"),
        ("leader-elect-resource-namespace", "kube-system"),
        ("node-monitor-period", "5s"),
        ("node-monitor-grace-period", "50s"),
        ("node-startup-grace-period", "1m0s"),
        ("node-eviction-rate", "0.1"),
        ("secondary-node-eviction-rate", "0.01"),
        ("large-cluster-size-threshold", "50"),
        ("unhealthy-zone-threshold", "0.55"),
        ("secure-port", "10257"),
        ("bind-address", "0.0.0.0"),
        ("v", "0"),
        ("logging-format", "text"),
    ];

    #[test]
    fn defaults_are_upstreams() {
        let cmd = Flags::command();
        for (name, want) in UPSTREAM_DEFAULTS {
            let arg = cmd.get_arguments().find(|a| a.get_long() == Some(name)).unwrap_or_else(|| panic!("--{name}"));
            let got: Vec<_> = arg.get_default_values().iter().map(|v| v.to_string_lossy().into_owned()).collect();
            assert_eq!(got, [*want], "--{name}");
        }
        for arg in ["kubeconfig", "master", "tls-cert-file", "tls-private-key-file"] {
            let a = cmd.get_arguments().find(|a| a.get_long() == Some(arg)).expect(arg);
            assert!(a.get_default_values().is_empty(), "--{arg} has no default");
        }

        // And the parsed values are what those strings mean.
        let f = flags(&[]).unwrap();
        let rendered = [
            ("controllers", f.controllers.join(",")),
            ("concurrent-deployment-syncs", f.concurrent_deployment_syncs.to_string()),
            ("concurrent-replicaset-syncs", f.concurrent_replicaset_syncs.to_string()),
            ("concurrent-namespace-syncs", f.concurrent_namespace_syncs.to_string()),
            ("concurrent-gc-syncs", f.concurrent_gc_syncs.to_string()),
            ("enable-garbage-collector", f.enable_garbage_collector.to_string()),
            ("namespace-sync-period", f.namespace_sync_period.to_string()),
            ("min-resync-period", f.min_resync_period.to_string()),
            ("kube-api-qps", f.kube_api_qps.to_string()),
            ("kube-api-burst", f.kube_api_burst.to_string()),
            ("kube-api-content-type", f.kube_api_content_type.clone()),
            ("leader-elect", f.leader_elect.to_string()),
            ("leader-elect-lease-duration", f.leader_elect_lease_duration.to_string()),
            ("leader-elect-renew-deadline", f.leader_elect_renew_deadline.to_string()),
            ("leader-elect-retry-period", f.leader_elect_retry_period.to_string()),
            ("leader-elect-resource-lock", f.leader_elect_resource_lock.clone()),
            ("leader-elect-resource-name", f.leader_elect_resource_name.clone()),
            ("leader-elect-resource-namespace", f.leader_elect_resource_namespace.clone()),
            ("node-monitor-period", f.node_monitor_period.to_string()),
            ("node-monitor-grace-period", f.node_monitor_grace_period.to_string()),
            ("node-startup-grace-period", f.node_startup_grace_period.to_string()),
            ("node-eviction-rate", f.node_eviction_rate.to_string()),
            ("secondary-node-eviction-rate", f.secondary_node_eviction_rate.to_string()),
            ("large-cluster-size-threshold", f.large_cluster_size_threshold.to_string()),
            ("unhealthy-zone-threshold", f.unhealthy_zone_threshold.to_string()),
            ("secure-port", f.secure_port.to_string()),
            ("bind-address", f.bind_address.to_string()),
            ("v", f.verbosity.to_string()),
            ("logging-format", format!("{:?}", f.logging_format).to_lowercase()),
        ];
        for ((name, want), (rname, got)) in UPSTREAM_DEFAULTS.iter().zip(rendered.iter()) {
            assert_eq!(name, rname);
            assert_eq!(got, want, "--{name}");
        }

        let c = config(&[]).unwrap();
        assert_eq!(c.controllers.iter().map(Controller::name).collect::<Vec<_>>().len(), 6);
        let le = c.leader_election.expect("leader election on by default");
        assert_eq!(
            (le.lease_duration, le.renew_deadline, le.retry_period),
            (Duration::from_secs(15), Duration::from_secs(10), Duration::from_secs(2))
        );
        assert_eq!(c.serving.map(|s| s.addr), Some("0.0.0.0:10257".parse().unwrap()));
        assert_eq!(c.client.burst, 30);
        assert_eq!(c.node_lifecycle.monitor_grace_period, Duration::from_secs(50));
        assert_eq!(c.logging.level, tracing::Level::INFO);
        assert!(c.sim.is_none());
    }

    #[test]
    fn controllers_resolve_as_upstream() {
        let mut ours_sorted = OURS.to_vec();
        ours_sorted.sort_by_key(|n| Controller::from_name(n));
        let without = |name: &str| ours_sorted.iter().copied().filter(|n| *n != name).collect::<Vec<_>>();

        assert_eq!(controllers("*").unwrap(), ours_sorted);
        assert_eq!(controllers("*,-deployment-controller").unwrap(), without("deployment-controller"));
        // An alias, and a `-` alias before `*`: first match wins, `*` does not override it.
        assert_eq!(controllers("deployment").unwrap(), ["deployment-controller"]);
        assert_eq!(controllers("-nodelifecycle,*").unwrap(), without("node-lifecycle-controller"));
        assert_eq!(controllers("*,-nodelifecycle").unwrap(), without("node-lifecycle-controller"));
        // First match wins between an enable and a disable of the same controller.
        assert_eq!(controllers("replicaset,-replicaset-controller").unwrap(), ["replicaset-controller"]);
        assert_eq!(controllers("-replicaset,replicaset-controller").unwrap(), Vec::<&str>::new());
        // Without `*`, only what is listed.
        assert_eq!(
            controllers("garbagecollector,taint-eviction-controller").unwrap(),
            ["taint-eviction-controller", "garbage-collector-controller"]
        );
        // Disabling an unimplemented controller is fine; `*` skips those it would start upstream.
        assert_eq!(controllers("*,-job,-csrsigning").unwrap(), ours_sorted);
        let set = ControllerSet::resolve(&["*"]).unwrap();
        assert!(set.skipped().contains(&"job-controller"));
        assert!(!set.skipped().contains(&"bootstrap-signer-controller"), "off by default upstream");
        assert!(!set.skipped().contains(&"resourceclaim-controller"), "feature-gated off upstream");
        // No entries, no controllers.
        assert_eq!(controllers("").unwrap(), Vec::<&str>::new());
    }

    #[test]
    fn unknown_controller_gets_upstreams_message() {
        let err = controllers("*,-frobnicator").unwrap_err();
        assert_eq!(err.to_string(), r#""frobnicator" is not in the list of known controllers"#);
        let err = config(&["--controllers=deployment,bogus"]).unwrap_err();
        assert_eq!(err, Error::UnknownController("bogus".into()));
    }

    #[test]
    fn explicitly_enabling_an_unimplemented_controller_is_an_error_naming_it() {
        let err = controllers("*,job,csrsigning,deployment").unwrap_err();
        assert_eq!(
            err,
            Error::UnimplementedControllers(vec!["certificatesigningrequest-signing-controller", "job-controller"])
        );
        let msg = err.to_string();
        assert!(msg.contains("certificatesigningrequest-signing-controller, job-controller"), "{msg}");
        assert!(msg.contains("kcm-rs does not implement"), "{msg}");
        // Off-by-default and gated controllers too.
        assert!(matches!(controllers("bootstrapsigner"), Err(Error::UnimplementedControllers(_))));
        // A disable earlier in the list wins over the later enable.
        assert!(controllers("-job,job,*").is_ok());
    }

    #[test]
    fn every_implemented_controller_is_in_the_upstream_table() {
        for c in Controller::ALL {
            let d = CONTROLLERS.iter().find(|d| d.name == c.name()).unwrap_or_else(|| panic!("{c}"));
            assert!(d.implemented && d.upstream_default == On, "{c}");
        }
        assert_eq!(CONTROLLERS.iter().filter(|d| d.implemented).count(), Controller::ALL.len());
        let mut names: Vec<_> = CONTROLLERS.iter().map(|d| d.name).collect();
        let sorted = {
            let mut s = names.clone();
            s.sort_unstable();
            s
        };
        assert_eq!(names, sorted, "kept in upstream's (sorted) help order");
        names.dedup();
        assert_eq!(names.len(), CONTROLLERS.len());
    }

    #[test]
    fn enable_garbage_collector_false_drops_the_gc() {
        let c = config(&["--enable-garbage-collector=false"]).unwrap();
        assert!(!c.controllers.contains(Controller::GarbageCollector));
        assert!(c.controllers.contains(Controller::Deployment));
    }

    #[test]
    fn go_durations() {
        let ok = [
            ("0", Duration::ZERO),
            ("15s", Duration::from_secs(15)),
            ("1m0s", Duration::from_secs(60)),
            ("5m", Duration::from_secs(300)),
            ("12h0m0s", Duration::from_secs(12 * 3600)),
            ("1h30m", Duration::from_secs(5400)),
            ("1.5s", Duration::from_millis(1500)),
            (".5s", Duration::from_millis(500)),
            ("300ms", Duration::from_millis(300)),
            ("10us", Duration::from_micros(10)),
            ("10\u{b5}s", Duration::from_micros(10)),
            ("7ns", Duration::from_nanos(7)),
            ("+2s", Duration::from_secs(2)),
            ("1h1m1s1ms", Duration::from_millis(3_661_001)),
        ];
        for (s, want) in ok {
            assert_eq!(parse_go_duration(s), Ok(want), "{s}");
        }
        for bad in ["", "15", "s", "1x", "1.s.", "-1s", "ten seconds", "1e3s"] {
            assert!(parse_go_duration(bad).is_err(), "{bad:?} should fail");
        }
        for (d, want) in [
            (Duration::ZERO, "0s"),
            (Duration::from_secs(15), "15s"),
            (Duration::from_secs(60), "1m0s"),
            (Duration::from_secs(300), "5m0s"),
            (Duration::from_secs(12 * 3600), "12h0m0s"),
            (Duration::from_millis(1500), "1.5s"),
            (Duration::from_millis(300), "300ms"),
            (Duration::from_micros(1500), "1.5ms"),
            (Duration::from_nanos(1500), "1.5\u{b5}s"),
            (Duration::from_nanos(7), "7ns"),
        ] {
            assert_eq!(format_go_duration(d), want);
        }
        let c = config(&["--leader-elect-lease-duration", "1m", "--leader-elect-renew-deadline=30s"]).unwrap();
        assert_eq!(c.leader_election.unwrap().lease_duration, Duration::from_secs(60));
        let err = flags(&["--namespace-sync-period=5"]).unwrap_err();
        assert!(err.to_string().contains("missing unit"), "{err}");
    }

    #[test]
    fn booleans_take_go_syntax() {
        assert!(config(&["--leader-elect=false"]).unwrap().leader_election.is_none());
        assert!(config(&["--leader-elect=0"]).unwrap().leader_election.is_none());
        assert!(config(&["--leader-elect=false", "--leader-elect"]).unwrap().leader_election.is_some());
        assert!(config(&["--leader-elect=True"]).unwrap().leader_election.is_some());
        assert!(flags(&["--leader-elect=nope"]).is_err());
        // Like pflag, a bool does not take its value from the next argument.
        assert!(flags(&["--leader-elect", "false"]).is_err());
        // Repeated flags: the last wins, as with pflag; --controllers accumulates, as a pflag string slice does.
        assert_eq!(config(&["-v=1", "-v=5"]).unwrap().logging.verbosity, 5);
        let c = config(&["--controllers=deployment", "--controllers=replicaset"]).unwrap();
        assert_eq!(c.controllers.iter().count(), 2);
    }

    #[test]
    fn unimplemented_upstream_flags_are_refused_by_name() {
        let err = flags(&["--cloud-provider", "aws", "--leader-elect=false", "--profiling"]).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("--cloud-provider, --profiling"), "{msg}");
        assert!(msg.contains("not implemented by kcm-rs"), "{msg}");
        assert!(!msg.contains("aws"), "the value is consumed, not taken for a flag: {msg}");
        assert_eq!(err.kind(), clap::error::ErrorKind::ArgumentConflict);

        for flag in UNIMPLEMENTED_UPSTREAM_FLAGS {
            let arg = match flag.kind {
                FlagKind::Bool => format!("--{}", flag.name),
                FlagKind::Value => format!("--{}=x", flag.name),
            };
            let msg = flags(&[&arg]).unwrap_err().to_string();
            assert!(msg.contains(&format!("kube-controller-manager flag --{} is not", flag.name)), "{msg}");
        }
        // `--flag=value` for value flags, too.
        let msg = flags(&["--service-account-private-key-file=/k"]).unwrap_err().to_string();
        assert!(msg.contains("--service-account-private-key-file"), "{msg}");

        // A flag nobody knows gets clap's own error.
        let err = flags(&["--frobnicate"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::UnknownArgument);
    }

    #[test]
    fn unimplemented_table_does_not_shadow_implemented_flags() {
        let cmd = <Flags as CommandFactory>::command();
        let ours: Vec<&str> = cmd.get_arguments().filter_map(|a| a.get_long()).collect();
        for flag in UNIMPLEMENTED_UPSTREAM_FLAGS {
            assert!(!ours.contains(&flag.name), "--{} is both implemented and refused", flag.name);
        }
        // clap would panic on duplicates; building the full command proves there are none.
        Flags::command().debug_assert();
    }

    #[test]
    fn leader_election_is_validated() {
        let err = config(&["--leader-elect-lease-duration=10s", "--leader-elect-renew-deadline=10s"]).unwrap_err();
        assert!(matches!(err, Error::LeaseNotAboveRenew { .. }), "{err}");
        assert!(err.to_string().contains("LeaseDuration must be greater than RenewDeadline"));
        let err = config(&["--leader-elect-lease-duration=10s", "--leader-elect-renew-deadline=15s"]).unwrap_err();
        assert!(matches!(err, Error::LeaseNotAboveRenew { .. }));
        let err = config(&["--leader-elect-renew-deadline=2400ms", "--leader-elect-retry-period=2s"]).unwrap_err();
        assert!(matches!(err, Error::RenewNotAboveRetry { .. }), "{err}");
        assert!(config(&["--leader-elect-renew-deadline=2401ms"]).is_ok());
        let err = config(&["--leader-elect-retry-period=0s"]).unwrap_err();
        assert_eq!(err, Error::NonPositiveDuration("leader-elect-retry-period"));
        let err = config(&["--leader-elect-resource-lock=endpoints"]).unwrap_err();
        assert_eq!(err.to_string(), r#"resourceLock value must be "leases""#);
        // Not checked when leader election is off, as upstream.
        assert!(config(&["--leader-elect=false", "--leader-elect-resource-lock=endpoints"]).is_ok());
        assert_eq!(
            config(&["--leader-elect-resource-name="]).unwrap_err(),
            Error::Required("leader-elect-resource-name")
        );
    }

    #[test]
    fn other_validation() {
        assert_eq!(
            config(&["--concurrent-deployment-syncs=0"]).unwrap_err(),
            Error::NonPositiveWorkers { flag: "concurrent-deployment-syncs", value: 0 }
        );
        assert_eq!(config(&["--kube-api-burst=0"]).unwrap_err(), Error::Burst);
        assert_eq!(config(&["--kube-api-qps=0", "--kube-api-burst=0"]).unwrap().client.qps, 0.0);
        assert_eq!(config(&["--tls-cert-file=/c"]).unwrap_err(), Error::TlsPair);
        let c = config(&["--tls-cert-file=/c", "--tls-private-key-file=/k", "--bind-address=::1"]).unwrap();
        let serving = c.serving.unwrap();
        assert_eq!(serving.addr, "[::1]:10257".parse().unwrap());
        assert_eq!(serving.tls.unwrap().key, PathBuf::from("/k"));
        assert!(config(&["--secure-port=0"]).unwrap().serving.is_none());
        let err = flags(&["--secure-port=70000"]).unwrap_err().to_string();
        assert!(err.contains("must be between 0 and 65535"), "{err}");
        assert!(flags(&["--bind-address="]).is_ok());
    }

    #[test]
    fn verbosity_and_format() {
        let c = config(&["-v", "2", "--logging-format=json"]).unwrap();
        assert_eq!(
            (c.logging.verbosity, c.logging.level, c.logging.format),
            (2, tracing::Level::INFO, LogFormat::Json)
        );
        assert_eq!(config(&["--v=4"]).unwrap().logging.level, tracing::Level::DEBUG);
        assert_eq!(config(&["-v=6"]).unwrap().logging.level, tracing::Level::TRACE);
        assert!(flags(&["--logging-format=xml"]).is_err());
    }

    #[test]
    fn sim_and_client_settings() {
        let c = config(&["--sim", "--sim-nodes=5"]).unwrap();
        assert_eq!(c.sim, Some(SimSettings { nodes: 5 }));
        assert!(flags(&["--sim", "--kubeconfig=/x"]).is_err());
        assert!(flags(&["--sim-nodes=5"]).is_err(), "--sim-nodes needs --sim");
        let c = config(&["--kubeconfig=/kc", "--master=https://10.0.0.1:6443", "--kube-api-qps=50"]).unwrap();
        assert_eq!(c.client.kubeconfig, Some(PathBuf::from("/kc")));
        assert_eq!(c.client.master.as_deref(), Some("https://10.0.0.1:6443"));
        assert_eq!(c.client.qps, 50.0);
    }

    #[test]
    fn help_reads_like_upstreams() {
        let help = Flags::command().render_long_help().to_string();
        for needle in [
            "--leader-elect-lease-duration <duration>",
            "The duration that non-leader candidates will wait after observing a leadership renewal",
            "All controllers: bootstrap-signer-controller, certificatesigningrequest-approving-controller",
            "Disabled-by-default controllers: bootstrap-signer-controller, selinux-warning-controller, \
             token-cleaner-controller",
            "kcm-rs implements: deployment-controller",
            "always sends and requests application/json",
            "[default: 12h0m0s]",
            "Nodelifecycle controller flags",
            "Burst to use while talking with kubernetes apiserver.",
            "Larger number = more responsive deployments, but more CPU (and network) load\n",
        ] {
            assert!(help.contains(needle), "help lacks {needle:?}:\n{help}");
        }
        assert!(!help.contains("--cloud-provider <"), "refused flags stay hidden");
    }
}
