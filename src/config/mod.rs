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
//!    their final shape, and every controller's settings are checked. Its
//!    errors are [`Error`].
//!
//! Each controller's flags, their check and their conversion are its own
//! module under `settings/` (upstream's `options/<x>controller.go`); the
//! controller table names them ([`Implemented`]), so configuration knows no
//! controller. The rest is process-wide: the flags in `flags.rs` (the full
//! command, with every controller's flags, built and parsed by
//! `command.rs`), the upstream flags kcm-rs refuses in `refused.rs`,
//! the secure port's serving, authentication and authorization flags in
//! `serving.rs`, `--feature-gates` in `feature_gates.rs` (its table of gates in
//! `gate_table.rs`), upstream's controller names and `--controllers`
//! resolution in `controllers.rs`, Go's boolean syntax in `go_values.rs`
//! (Go's durations are `kcm_gotime`'s), stage two in `derive.rs` and its
//! [`Error`] in `error.rs`. This module owns the derived [`Config`] and its
//! settings.
//!
//! Building the API client from these settings is the `client` module's
//! job; running controllers is the daemon's.

use std::net::SocketAddr;
use std::time::Duration;

use clap::ArgMatches;

pub use kcm_runtime::client::ClientSettings;
pub use kcm_runtime::server::{DelegationSettings, TlsSettings};

mod command;
mod controllers;
mod derive;
mod error;
mod feature_gates;
mod flags;
mod gate_table;
mod go_values;
mod refused;
mod serving;
pub mod settings;

pub use controllers::{CONTROLLERS, ControllerDescriptor, ControllerSet, UpstreamDefault, canonical_controller_name};
pub use error::{Error, Result};
pub use feature_gates::{FeatureGates, MAX_UNAVAILABLE_STATEFUL_SET, PVC_UNUSED_SINCE_TIME, TERMINATING_REPLICAS};
pub use flags::{Flags, TailFlags};
pub use go_values::parse_go_bool;
pub use kcm_gotime::{GoDuration, format_go_duration, parse_go_duration};
pub use refused::{FlagKind, UNIMPLEMENTED_UPSTREAM_FLAGS, UpstreamFlag};
pub use serving::ServingFlags;
pub use settings::{ControllerFlags, Implemented};

// === config ===

/// Everything kcm-rs needs to run, derived once from [`Flags`].
#[derive(Debug, Clone)]
pub struct Config {
    /// How to reach the API server.
    pub client: ClientSettings,
    /// Controllers to run.
    pub controllers: ControllerSet,
    /// `--feature-gates`, resolved at 1.37 (what kcm-rs's controllers read
    /// of it: [`TERMINATING_REPLICAS`], [`MAX_UNAVAILABLE_STATEFUL_SET`],
    /// [`PVC_UNUSED_SINCE_TIME`]).
    pub feature_gates: FeatureGates,
    /// `--use-service-account-credentials`: each controller's client acts
    /// as its own ServiceAccount in kube-system.
    pub use_service_account_credentials: bool,
    /// `--min-resync-period`: informer resync is random in [this, 2 × this).
    pub min_resync_period: Duration,
    /// Lease leader election; `None` with `--leader-elect=false`.
    pub leader_election: Option<LeaderElectionSettings>,
    /// Health and metrics endpoint; `None` with `--secure-port=0`.
    pub serving: Option<ServingSettings>,
    /// Log level and format.
    pub logging: LoggingSettings,
    /// `--sim`: run against an embedded kube-sim with this many nodes.
    pub sim: Option<SimSettings>,
    /// The parsed command line, checked: each controller reads its own
    /// settings from it when it starts
    /// ([`ControllerFlags::read`]).
    pub controller_flags: ArgMatches,
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
    /// The certificate (`--tls-cert-file` and `--tls-private-key-file`, or
    /// self-signed, kept in `--cert-dir`) and `--tls-*`.
    pub tls: TlsSettings,
    /// The authentication and authorization flags.
    pub delegation: DelegationSettings,
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

// === logging ===

/// `--logging-format`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines (upstream's default).
    #[default]
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

#[cfg(test)]
mod tests {
    //! Tests of the command line and the derived configuration: upstream's
    //! defaults, `--controllers` resolution, Go values, refused flags,
    //! validation and help text.

    use std::path::PathBuf;

    use kcm_runtime::server::TlsSource;

    use super::*;

    // === utils ===

    fn flags(args: &[&str]) -> Result<Flags, clap::Error> {
        Flags::try_from_args(std::iter::once("kcm-rs").chain(args.iter().copied()), &implemented())
    }

    fn config(args: &[&str]) -> Result<Config> {
        flags(args).expect("flags parse").into_config(&implemented())
    }

    fn controllers(list: &str) -> Result<Vec<&'static str>> {
        ControllerSet::resolve(&list.split(',').collect::<Vec<_>>(), &names()).map(|s| s.iter().collect())
    }

    /// Controllers kcm-rs implements, with no flags: resolution is tested
    /// against these (configuration knows no controller table of its own;
    /// each controller's flags are tested in its settings module).
    fn implemented() -> Vec<&'static dyn Implemented> {
        NAMED.iter().map(|named| named as &dyn Implemented).collect()
    }

    fn names() -> Vec<&'static str> {
        OURS.to_vec()
    }

    /// A controller of this name, with no flags.
    struct Named(&'static str);

    impl Implemented for Named {
        fn name(&self) -> &'static str {
            self.0
        }

        fn flags_type(&self) -> std::any::TypeId {
            std::any::TypeId::of::<settings::NoFlags>()
        }

        fn augment(&self, cmd: clap::Command) -> clap::Command {
            settings::augment::<settings::NoFlags>(cmd)
        }

        fn help_without_period(&self) -> &'static [&'static str] {
            &[]
        }

        fn check(&self, _: &ArgMatches) -> Result<bool> {
            Ok(true)
        }
    }

    static NAMED: [Named; 9] = [
        Named(OURS[0]),
        Named(OURS[1]),
        Named(OURS[2]),
        Named(OURS[3]),
        Named(OURS[4]),
        Named(OURS[5]),
        Named(OURS[6]),
        Named(OURS[7]),
        Named(OURS[8]),
    ];

    const OURS: [&str; 9] = [
        "deployment-controller",
        "replicaset-controller",
        "namespace-controller",
        "node-lifecycle-controller",
        "taint-eviction-controller",
        "serviceaccount-controller",
        "root-ca-certificate-publisher-controller",
        "clusterrole-aggregation-controller",
        "garbage-collector-controller",
    ];

    // === tests ===

    /// kube-controller-manager's defaults (1.33's `--help`; none of these
    /// changed by 1.37 in the staging repositories read, the controller
    /// flags not re-checked).
    const UPSTREAM_DEFAULTS: &[(&str, &str)] = &[
        ("controllers", "*"),
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
        ("secure-port", "10257"),
        ("bind-address", "0.0.0.0"),
        ("v", "0"),
        ("logging-format", "text"),
    ];

    #[test]
    fn defaults_are_upstreams() {
        let cmd = Flags::command(&implemented());
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
            ("secure-port", f.serving.secure_port.to_string()),
            ("bind-address", f.serving.bind_address.to_string()),
            ("v", f.tail.verbosity.to_string()),
            ("logging-format", format!("{:?}", f.tail.logging_format).to_lowercase()),
        ];
        for ((name, want), (rname, got)) in UPSTREAM_DEFAULTS.iter().zip(rendered.iter()) {
            assert_eq!(name, rname);
            assert_eq!(got, want, "--{name}");
        }

        let c = config(&[]).unwrap();
        assert_eq!(c.controllers.iter().collect::<Vec<_>>().len(), 9);
        let le = c.leader_election.expect("leader election on by default");
        assert_eq!(
            (le.lease_duration, le.renew_deadline, le.retry_period),
            (Duration::from_secs(15), Duration::from_secs(10), Duration::from_secs(2))
        );
        assert_eq!(c.serving.map(|s| s.addr), Some("0.0.0.0:10257".parse().unwrap()));
        assert_eq!(c.client.burst, 30);
        assert_eq!(c.logging.level, tracing::Level::INFO);
        assert!(c.sim.is_none());
    }

    #[test]
    fn controllers_resolve_as_upstream() {
        let mut ours_sorted = OURS.to_vec();
        ours_sorted.sort_unstable();
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
            ["garbage-collector-controller", "taint-eviction-controller"]
        );
        // Disabling an unimplemented controller is fine; `*` lists those it would start upstream as not running.
        assert_eq!(controllers("*,-job,-csrsigning").unwrap(), ours_sorted);
        let set = ControllerSet::resolve(&["*"], &names()).unwrap();
        assert!(set.not_running().contains(&"job-controller"));
        assert!(!set.not_running().contains(&"bootstrap-signer-controller"), "off by default upstream");
        assert!(!set.not_running().contains(&"podgroup-protection-controller"), "its gate is off at 1.37");
        assert!(!set.not_running().contains(&"resourcepoolstatusrequest-controller"), "its gate is off at 1.37");
        // Gated controllers whose gates are all on at 1.37 are started by `*` upstream.
        for on in [
            "resourceclaim-controller",
            "device-taint-eviction-controller",
            "volumeattributesclass-protection-controller",
            "podcertificaterequest-cleaner-controller",
            "kube-apiserver-serving-clustertrustbundle-publisher-controller",
            "storage-version-migrator-controller",
        ] {
            assert!(set.not_running().contains(&on), "{on}");
        }
        for d in CONTROLLERS {
            if let UpstreamDefault::Gated(names) = d.upstream_default {
                for name in names {
                    assert!(gate_table::gate(name).is_some(), "{name} is a 1.37 gate");
                }
            }
        }
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
    fn unimplemented_controllers_enabled_by_name_are_accepted_and_listed_as_not_running() {
        // kubeadm's list: `*` plus two controllers that are off by default upstream.
        let set = ControllerSet::resolve(&["*", "bootstrapsigner", "tokencleaner", "deployment"], &names()).unwrap();
        assert!(set.contains("deployment-controller"));
        assert!(!set.contains("bootstrap-signer-controller"));
        for name in ["bootstrap-signer-controller", "token-cleaner-controller", "job-controller"] {
            assert!(set.not_running().contains(&name), "{name}: {:?}", set.not_running());
        }
        assert!(!set.not_running().contains(&"deployment-controller"));
        // By name alone, off by default and gated controllers too.
        let set = ControllerSet::resolve(&["csrsigning", "storage-version-migrator-controller"], &names()).unwrap();
        assert_eq!(set.iter().count(), 0);
        assert_eq!(
            set.not_running(),
            ["certificatesigningrequest-signing-controller", "storage-version-migrator-controller"]
        );
        // A disable earlier in the list wins over the later enable.
        let set = ControllerSet::resolve(&["-csrsigning", "csrsigning", "*"], &names()).unwrap();
        assert!(!set.not_running().contains(&"certificatesigningrequest-signing-controller"));
    }

    #[test]
    fn every_implemented_controller_is_in_the_upstream_table() {
        for c in names() {
            assert!(CONTROLLERS.iter().any(|d| d.name == c), "{c}");
        }
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
    fn feature_gates_resolve_into_the_config() {
        assert!(config(&[]).unwrap().feature_gates.enabled(TERMINATING_REPLICAS), "on at 1.37");
        let c = config(&[
            "--feature-gates=DeploymentReplicaSetTerminatingReplicas=false",
            "--feature-gates",
            "NodeSwap=true",
        ]);
        assert!(!c.unwrap().feature_gates.enabled(TERMINATING_REPLICAS));
        let err = flags(&["--feature-gates=Frobnicate=true"]).unwrap_err().to_string();
        assert!(err.contains("unrecognized feature gate: Frobnicate"), "{err}");
        let err = flags(&["--feature-gates=PodDeletionCost"]).unwrap_err().to_string();
        assert!(err.contains("missing bool value for PodDeletionCost"), "{err}");
        let err = config(&["--feature-gates=AllAlpha=true"]).unwrap_err();
        assert!(matches!(err, Error::UnimplementedFeatureGates { .. }), "{err}");
        assert!(err.to_string().contains("TaintTolerationComparisonOperators=true (set by AllAlpha=true)"), "{err}");
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
    }

    #[test]
    fn service_account_credentials_are_off_by_default_and_need_a_real_api_server() {
        assert!(!config(&[]).unwrap().use_service_account_credentials);
        assert!(config(&["--use-service-account-credentials"]).unwrap().use_service_account_credentials);
        assert!(!config(&["--use-service-account-credentials=false"]).unwrap().use_service_account_credentials);
        assert_eq!(config(&["--sim", "--use-service-account-credentials"]).unwrap_err(), Error::SimServiceAccounts);
        assert!(config(&["--sim", "--use-service-account-credentials=false"]).is_ok());
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
        let msg = flags(&["--pv-recycler-minimum-timeout-nfs=300"]).unwrap_err().to_string();
        assert!(msg.contains("--pv-recycler-minimum-timeout-nfs"), "{msg}");

        // A flag nobody knows gets clap's own error.
        let err = flags(&["--frobnicate"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::UnknownArgument);
        // Removed from kube-controller-manager in 1.37: unknown there, and here.
        let err = flags(&["--concurrent-service-syncs=5"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::UnknownArgument);
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
        assert_eq!(config(&["--kube-api-burst=0"]).unwrap_err(), Error::Burst);
        assert_eq!(config(&["--kube-api-qps=0", "--kube-api-burst=0"]).unwrap().client.qps, 0.0);
        assert_eq!(config(&["--tls-cert-file=/c"]).unwrap_err(), Error::TlsPair);
        let c = config(&["--tls-cert-file=/c", "--tls-private-key-file=/k", "--bind-address=::1"]).unwrap();
        let serving = c.serving.unwrap();
        assert_eq!(serving.addr, "[::1]:10257".parse().unwrap());
        assert_eq!(serving.tls.source, TlsSource::Files { cert: "/c".into(), key: PathBuf::from("/k") });
        assert!(config(&["--secure-port=0"]).unwrap().serving.is_none());
        let err = flags(&["--secure-port=70000"]).unwrap_err().to_string();
        assert!(err.contains("must be between 0 and 65535"), "{err}");
        assert!(flags(&["--bind-address="]).is_ok());
    }

    #[test]
    fn secure_port_flags_as_upstream() {
        let serving = config(&[]).unwrap().serving.unwrap();
        assert_eq!(serving.tls.source, TlsSource::SelfSigned { cert_dir: None });
        let d = serving.delegation;
        assert_eq!(d.always_allow_paths, ["/healthz", "/readyz", "/livez"]);
        assert_eq!(d.always_allow_groups, ["system:masters"]);
        assert_eq!(
            (d.token_cache_ttl, d.authorized_ttl, d.unauthorized_ttl),
            (Duration::from_secs(10), Duration::from_secs(10), Duration::from_secs(10))
        );
        assert_eq!(d.request_header.username_headers, ["x-remote-user"]);
        assert_eq!(d.request_header.group_headers, ["x-remote-group"]);
        assert_eq!(d.request_header.extra_headers_prefixes, ["x-remote-extra-"]);
        assert!(d.request_header.uid_headers.is_empty() && d.request_header.allowed_names.is_empty());
        assert!(!d.skip_lookup && !d.tolerate_lookup_failure && d.authentication_kubeconfig.is_none());

        let c = config(&[
            "--cert-dir=/certs",
            "--authorization-always-allow-paths=/healthz,/metrics",
            "--requestheader-allowed-names=",
            "--authentication-skip-lookup",
            "--tls-min-version=VersionTLS13",
        ])
        .unwrap();
        let serving = c.serving.unwrap();
        assert_eq!(serving.tls.source, TlsSource::SelfSigned { cert_dir: Some("/certs".into()) });
        assert_eq!(serving.tls.min_version.as_deref(), Some("VersionTLS13"));
        assert_eq!(serving.delegation.always_allow_paths, ["/healthz", "/metrics"]);
        assert!(serving.delegation.skip_lookup);
        assert_eq!(
            config(&["--requestheader-username-headers=X-Remote-User,"]).unwrap_err(),
            Error::EmptyValue("requestheader-username-headers")
        );
        assert!(matches!(config(&["--requestheader-uid-headers=X-Uid"]).unwrap_err(), Error::UidHeaders(_)));
        assert!(config(&["--requestheader-uid-headers=X-Remote-Uid"]).is_ok());
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
        let help = Flags::command(&implemented()).render_long_help().to_string();
        for needle in [
            "--leader-elect-lease-duration <duration>",
            "The duration that non-leader candidates will wait after observing a leadership renewal",
            "All controllers: bootstrap-signer-controller, certificatesigningrequest-approving-controller",
            "Disabled-by-default controllers: bootstrap-signer-controller, selinux-warning-controller, \
             token-cleaner-controller",
            "kcm-rs's controllers: clusterrole-aggregation-controller, deployment-controller",
            "always sends and requests application/json",
            "[default: 12h0m0s]",
            "Burst to use while talking with kubernetes apiserver.",
        ] {
            assert!(help.contains(needle), "help lacks {needle:?}:\n{help}");
        }
        assert!(!help.contains("--cloud-provider <"), "refused flags stay hidden");
    }
}
