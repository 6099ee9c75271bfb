//! Leader election over a `coordination.k8s.io/v1` Lease, as client-go's
//! `tools/leaderelection` does it.
//!
//! Several kcm-rs replicas contend for one Lease (by default
//! `kube-system/kube-controller-manager`); the one holding it runs the
//! controllers, the others stand by and retry. The algorithm is client-go's
//! `tryAcquireOrRenew`:
//!
//! - A replica never compares the holder's `renewTime` with its own clock.
//!   It remembers when it last *saw the record change* (`observedTime`, on
//!   the local monotonic clock) and considers the lease expired once the
//!   record has stayed the same for `leaseDurationSeconds`. Any change, from
//!   any writer, restarts that local timer. Clock skew between machines thus
//!   does not matter, only clock *rate*.
//! - A record with an empty `holderIdentity` (a released lease) is free at
//!   once.
//! - Every write is a get-then-replace guarded by `resourceVersion`: two
//!   contenders writing the same version get one success and one
//!   `409 Conflict`, and the loser simply retries later.
//! - The leader renews about every `retry_period`. A renew *round* keeps
//!   retrying every `retry_period` for up to `renew_deadline`; a round that
//!   fails means leadership is lost.
//!
//! Where kcm-rs is stricter than client-go (which states plainly that it
//! does not fence):
//!
//! - **The write fence.** The elector keeps a
//!   [`WriteFence`](crate::client::WriteFence) open only while the lease is
//!   provably its own: until the last successful Lease write's *send* time
//!   plus a window shorter than the lease (`LeaderElectionConfig`'s
//!   `write_window`: the renew deadline with upstream's defaults), on the
//!   local monotonic clock. The controllers' clients refuse every write once
//!   it has closed, so a leader that was frozen past its lease (SIGSTOP, a
//!   starved CPU) sends nothing when it resumes, whatever order its tasks
//!   wake in. `master_status` is read off the same fence.
//! - **Another holder ends the term at once.** A renewal that reads
//!   another holder's valid lease loses leadership on the spot; client-go
//!   retries until the renew deadline, leading meanwhile.
//!
//! What this module owns: the election loop ([`LeaderElector::run`]), when
//! its [fence](LeaderElector::fence) is open, the
//! `leader_election_master_status` / `leader_election_slowpath_total`
//! metrics ([`LeaderMetrics`]) and the `leaderElection` health check
//! ([`LeaderHealth`]). What it leaves to the daemon: building the
//! controllers' clients on the fence (`ClientConfig::fenced`; the fence
//! itself is checked in `crate::client`), starting and draining
//! the controllers (inside the `leading` future given to `run`), the
//! `LeaderElection` Events ("`<id> became leader`", "`<id> stopped
//! leading`"; [`LeaderElector::subscribe`] publishes the transitions), and
//! the exit code ([`Outcome::Lost`] must end the process non-zero).
//!
//! # The daemon's side of the contract
//!
//! ```no_run
//! # use kcm_runtime::leader::*;
//! # async fn demo(client: kube::Client, registry: prometheus::Registry) -> Result<(), Error> {
//! let config = LeaderElectionConfig::new(default_identity());
//! let metrics = LeaderMetrics::register(&registry)?;
//! let elector = LeaderElector::new(client, config, &metrics)?;
//! let health = elector.health(); // served on /healthz as "leaderElection"
//! let fence = elector.fence(); // ClientConfig::fenced(fence): the controllers' clients
//! # let _ = (health, fence);
//! let outcome = elector
//!     .run(
//!         |mut stop: StopSignal| async move {
//!             // start the controllers; on `stop`, stop taking work and
//!             // wait for in-flight syncs, then return.
//!             let _reason = stop.stopped().await;
//!         },
//!         async { let _ = tokio::signal::ctrl_c().await; }, // SIGTERM in the daemon
//!     )
//!     .await?;
//! if outcome == Outcome::Lost {
//!     std::process::exit(1); // "leaderelection lost"
//! }
//! # Ok(()) }
//! ```
//!
//! The parts: [`LeaderElectionConfig`] (`config.rs`), [`LeaderMetrics`]
//! (`metrics.rs`), the Lease record the algorithm reads and writes
//! (`record.rs`), the state the elector shares with its handles and the
//! [`Status`] / [`StopSignal`] it publishes (`state.rs`), [`LeaderHealth`]
//! (`health.rs`), the election loop itself (`elector/`: the state machine,
//! and one attempt at the Lease) and the run's waits on shutdown and the
//! `leading` task (`term.rs`).

use tokio::task::JoinError;

mod config;
mod elector;
mod health;
mod lock;
mod metrics;
mod record;
mod state;
mod term;

pub use config::LeaderElectionConfig;
pub use elector::{LeaderElector, Outcome};
pub use health::LeaderHealth;
pub use metrics::LeaderMetrics;
pub use state::{Status, StopReason, StopSignal};

/// The module's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why leader election could not be set up, or what went wrong while it ran.
///
/// API errors are not here: client-go retries every failed read or write of
/// the Lease (logging it), and so does [`LeaderElector::run`]; a failure to
/// renew in time is the normal [`Outcome::Lost`], not an error.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `lease_duration` is not greater than `renew_deadline`.
    #[error("leaseDuration must be greater than renewDeadline")]
    LeaseDurationTooShort,
    /// `renew_deadline` is not greater than `retry_period` × [`JITTER_FACTOR`].
    #[error("renewDeadline must be greater than retryPeriod*JitterFactor")]
    RenewDeadlineTooShort,
    /// A duration is zero (the field is named).
    #[error("{0} must be greater than zero")]
    NotPositive(&'static str),
    /// The identity is empty.
    #[error("leader election identity is empty")]
    EmptyIdentity,
    /// The Lease name or namespace is empty.
    #[error("leader election lease name and namespace must not be empty")]
    EmptyLease,
    /// The metrics could not be registered (most often: registered twice on
    /// one registry; register once and share [`LeaderMetrics`]).
    #[error("cannot register the leader election metrics")]
    Metrics(#[source] prometheus::Error),
    /// Health check failure: this process holds the lease but has not seen
    /// a successful renewal for `lease_duration` + the health timeout.
    #[error("failed election to renew leadership on lease {0}")]
    RenewOverdue(String),
    /// The `leading` future panicked (or its task was cancelled). The lease
    /// was released before this was returned.
    #[error("the leading task failed")]
    LeadingTask(#[source] JoinError),
}

/// client-go's `JitterFactor`: a standby waits between `retry_period` and
/// `retry_period × (1 + JITTER_FACTOR)` between acquisition attempts.
pub const JITTER_FACTOR: f64 = 1.2;

/// An identity for this process as kube-controller-manager builds it:
/// `<hostname>_<random UUID>`, unique per process start.
pub fn default_identity() -> String {
    format!("{}_{}", hostname(), uuid::Uuid::new_v4())
}

/// The host's name, as `os.Hostname()` gives it on Linux.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "localhost".to_owned())
}

#[cfg(test)]
mod tests;
