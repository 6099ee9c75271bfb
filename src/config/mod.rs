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
//! `controllers.rs`, Go's boolean syntax in `go_values.rs` (Go's durations
//! are `kcm_gotime`'s), stage two in `derive.rs` and its [`Error`] in
//! `error.rs`. This module owns the derived [`Config`] and its settings.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

pub use kcm_runtime::client::ClientSettings;

mod controllers;
mod derive;
mod error;
mod flags;
mod go_values;
mod refused;
#[cfg(test)]
mod tests;

pub use controllers::{CONTROLLERS, ControllerDescriptor, ControllerSet, UpstreamDefault, canonical_controller_name};
pub use error::{Error, Result};
pub use flags::Flags;
pub use go_values::parse_go_bool;
pub use kcm_gotime::{GoDuration, format_go_duration, parse_go_duration};
pub use refused::{FlagKind, UNIMPLEMENTED_UPSTREAM_FLAGS, UpstreamFlag};

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
