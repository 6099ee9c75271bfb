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
//! Building the API client from these settings is the `client` module's
//! job; running controllers is the manager's.
//!
//! The flags themselves are in `flags.rs`, the upstream flags kcm-rs refuses
//! in `refused.rs`, the controller table and `--controllers` resolution in
//! `controllers.rs`, and Go's boolean syntax in `go_values.rs` (Go's durations are
//! `kcm_gotime`'s).
//! This module owns the derived [`Config`], its settings and its [`Error`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

pub use kcm_runtime::client::ClientSettings;

mod controllers;
mod flags;
mod go_values;
mod refused;
#[cfg(test)]
mod tests;

pub use controllers::{CONTROLLERS, ControllerDescriptor, ControllerSet, UpstreamDefault, canonical_controller_name};
pub use flags::Flags;
pub use go_values::parse_go_bool;
pub use kcm_gotime::{GoDuration, format_go_duration, parse_go_duration};
pub use refused::{FlagKind, UNIMPLEMENTED_UPSTREAM_FLAGS, UpstreamFlag};

/// The garbage collector's canonical name, which `--enable-garbage-collector`
/// switches off.
const GARBAGE_COLLECTOR: &str = "garbage-collector-controller";

/// Result of deriving a [`Config`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

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
        enabled.join(", "),
        implemented.join(", "),
        if enabled.len() == 1 { "it" } else { "them" },
        if enabled.len() == 1 { "it" } else { "them" }
    )]
    UnimplementedControllers {
        /// The controllers enabled by name that kcm-rs lacks.
        enabled: Vec<&'static str>,
        /// The controllers kcm-rs implements.
        implemented: Vec<&'static str>,
    },
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
    pub fn from_flags(flags: Flags, implemented: &[&'static str]) -> Result<Config> {
        let mut controllers = ControllerSet::resolve(&flags.controllers, implemented)?;
        if !flags.enable_garbage_collector {
            // Upstream's garbage collector start-up returns "not started" when the flag is off.
            controllers.remove(GARBAGE_COLLECTOR);
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
