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
//! What this module owns: the election loop ([`LeaderElector::run`]), the
//! `leader_election_master_status` / `leader_election_slowpath_total`
//! metrics ([`LeaderMetrics`]) and the `leaderElection` health check
//! ([`LeaderHealth`]). What it leaves to the daemon: starting and draining
//! the controllers (inside the `leading` future given to `run`), the
//! `LeaderElection` Events ("`<id> became leader`", "`<id> stopped
//! leading`"; [`LeaderElector::subscribe`] publishes the transitions), and
//! the exit code ([`Outcome::Lost`] must end the process non-zero).
//!
//! # The daemon's side of the contract
//!
//! ```no_run
//! # use kcm_rs::leader::*;
//! # async fn demo(client: kube::Client, registry: prometheus::Registry) -> Result<(), Error> {
//! let config = LeaderElectionConfig::new(default_identity());
//! let metrics = LeaderMetrics::register(&registry)?;
//! let elector = LeaderElector::new(client, config, &metrics)?;
//! let health = elector.health(); // served on /healthz as "leaderElection"
//! # let _ = health;
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

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, PostParams};
use prometheus::{IntCounterVec, IntGaugeVec, Opts, Registry};
use tokio::sync::watch;
use tokio::task::{JoinError, JoinHandle};
use tokio::time::Instant;

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

// === impl LeaderElectionConfig ===

/// What to contend for, as whom, and how fast.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderElectionConfig {
    /// Name of the Lease (`--leader-elect-resource-name`); also the `name`
    /// label of the metrics.
    pub lease_name: String,
    /// Namespace of the Lease (`--leader-elect-resource-namespace`).
    pub lease_namespace: String,
    /// This contender's identity, written as `holderIdentity`; must be
    /// unique per process (see [`default_identity`]).
    pub identity: String,
    /// How long standbys wait, from the last change they observed, before
    /// taking the lease over (`--leader-elect-lease-duration`). Written to the
    /// Lease in whole seconds.
    pub lease_duration: Duration,
    /// How long the leader keeps retrying a renewal before giving up
    /// leadership (`--leader-elect-renew-deadline`).
    pub renew_deadline: Duration,
    /// The wait between attempts (`--leader-elect-retry-period`).
    pub retry_period: Duration,
}

impl LeaderElectionConfig {
    /// Default Lease name.
    pub const DEFAULT_LEASE_NAME: &'static str = "kube-controller-manager";
    /// Default Lease namespace.
    pub const DEFAULT_LEASE_NAMESPACE: &'static str = "kube-system";
    /// Default lease duration (component-base's recommended 15 s).
    pub const DEFAULT_LEASE_DURATION: Duration = Duration::from_secs(15);
    /// Default renew deadline (10 s).
    pub const DEFAULT_RENEW_DEADLINE: Duration = Duration::from_secs(10);
    /// Default retry period (2 s).
    pub const DEFAULT_RETRY_PERIOD: Duration = Duration::from_secs(2);

    /// The upstream defaults for `identity`.
    pub fn new(identity: impl Into<String>) -> Self {
        LeaderElectionConfig {
            lease_name: Self::DEFAULT_LEASE_NAME.to_owned(),
            lease_namespace: Self::DEFAULT_LEASE_NAMESPACE.to_owned(),
            identity: identity.into(),
            lease_duration: Self::DEFAULT_LEASE_DURATION,
            renew_deadline: Self::DEFAULT_RENEW_DEADLINE,
            retry_period: Self::DEFAULT_RETRY_PERIOD,
        }
    }

    /// client-go's `NewLeaderElector` checks, in its order: lease duration >
    /// renew deadline > retry period × 1.2, every duration > 0, identity not
    /// empty; and (ours) a Lease name and namespace.
    ///
    /// # Errors
    /// The first rule broken.
    pub fn validate(&self) -> Result<()> {
        if self.lease_duration <= self.renew_deadline {
            return Err(Error::LeaseDurationTooShort);
        }
        if self.renew_deadline <= self.retry_period.mul_f64(JITTER_FACTOR) {
            return Err(Error::RenewDeadlineTooShort);
        }
        for (name, d) in [
            ("leaseDuration", self.lease_duration),
            ("renewDeadline", self.renew_deadline),
            ("retryPeriod", self.retry_period),
        ] {
            if d.is_zero() {
                return Err(Error::NotPositive(name));
            }
        }
        if self.identity.is_empty() {
            return Err(Error::EmptyIdentity);
        }
        if self.lease_name.is_empty() || self.lease_namespace.is_empty() {
            return Err(Error::EmptyLease);
        }
        Ok(())
    }

    /// `<namespace>/<name>`, for logs (client-go's `Describe`).
    fn describe(&self) -> String {
        format!("{}/{}", self.lease_namespace, self.lease_name)
    }

    /// The lease duration as written to the Lease: whole seconds.
    fn lease_duration_seconds(&self) -> i32 {
        i32::try_from(self.lease_duration.as_secs()).unwrap_or(i32::MAX)
    }

    /// Upper bound of one API request: the lock client's HTTP timeout in
    /// kube-controller-manager, max(1 s, renew deadline / 2).
    fn request_timeout(&self) -> Duration {
        (self.renew_deadline / 2).max(Duration::from_secs(1))
    }
}

// === impl LeaderMetrics ===

/// The leader election metrics, with upstream names. Register once per
/// registry and share the value between electors (each one labels its
/// series with its Lease name).
#[derive(Debug, Clone)]
pub struct LeaderMetrics {
    /// `leader_election_master_status{name}`: 1 while leading, 0 otherwise.
    master_status: IntGaugeVec,
    /// `leader_election_slowpath_total{name}`: renewals by the leader that
    /// needed a fresh read of the Lease.
    slowpath: IntCounterVec,
}

impl LeaderMetrics {
    /// Creates the metrics and registers them on `registry`.
    ///
    /// # Errors
    /// [`Error::Metrics`] if they are already registered there.
    pub fn register(registry: &Registry) -> Result<Self> {
        let master_status = IntGaugeVec::new(
            Opts::new(
                "leader_election_master_status",
                "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, \
                 1 indicates master. 'name' is the string used to identify the lease.",
            ),
            &["name"],
        )
        .map_err(Error::Metrics)?;
        let slowpath = IntCounterVec::new(
            Opts::new(
                "leader_election_slowpath_total",
                "Total number of slow path exercised in renewing leader leases. 'name' is the string used \
                 to identify the lease.",
            ),
            &["name"],
        )
        .map_err(Error::Metrics)?;
        registry.register(Box::new(master_status.clone())).map_err(Error::Metrics)?;
        registry.register(Box::new(slowpath.clone())).map_err(Error::Metrics)?;
        Ok(LeaderMetrics { master_status, slowpath })
    }

    fn leader_on(&self, name: &str) {
        self.master_status.with_label_values(&[name]).set(1);
    }

    fn leader_off(&self, name: &str) {
        self.master_status.with_label_values(&[name]).set(0);
    }

    fn slowpath_exercised(&self, name: &str) {
        self.slowpath.with_label_values(&[name]).inc();
    }
}

// === Record ===

/// The leader election record: the Lease spec fields the algorithm uses
/// (client-go's `LeaderElectionRecord`). Missing fields read as empty/zero.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Record {
    holder: String,
    lease_duration_seconds: i32,
    acquire_time: Option<Timestamp>,
    renew_time: Option<Timestamp>,
    transitions: i32,
}

impl Record {
    fn from_spec(spec: Option<&LeaseSpec>) -> Record {
        let Some(spec) = spec else { return Record::default() };
        Record {
            holder: spec.holder_identity.clone().unwrap_or_default(),
            lease_duration_seconds: spec.lease_duration_seconds.unwrap_or(0),
            acquire_time: spec.acquire_time.as_ref().map(|t| t.0),
            renew_time: spec.renew_time.as_ref().map(|t| t.0),
            transitions: spec.lease_transitions.unwrap_or(0),
        }
    }

    /// The whole spec written: other fields (`strategy`, `preferredHolder`)
    /// are dropped, as client-go does.
    fn to_spec(&self) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.holder.clone()),
            lease_duration_seconds: Some(self.lease_duration_seconds),
            acquire_time: self.acquire_time.map(MicroTime),
            renew_time: self.renew_time.map(MicroTime),
            lease_transitions: Some(self.transitions),
            ..LeaseSpec::default()
        }
    }
}

// === Shared state, Status, StopSignal, LeaderHealth ===

/// What this process last observed, and when (local monotonic clock). The
/// elector writes it; the health check reads it.
#[derive(Debug, Clone)]
struct Observed {
    record: Record,
    time: Instant,
}

/// State shared between the elector and its handles.
#[derive(Debug)]
struct Shared {
    identity: String,
    lease_name: String,
    /// client-go's `observedRecord` + `observedTime`, behind a lock because
    /// the health check reads them from other tasks.
    observed: Mutex<Observed>,
    /// Published leadership, for [`LeaderElector::subscribe`].
    status: watch::Sender<Status>,
}

impl Shared {
    fn observed(&self) -> Observed {
        self.observed.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// client-go's `setObservedRecord`: the record, and now as its time.
    fn set_observed(&self, record: Record) {
        *self.observed.lock().unwrap_or_else(PoisonError::into_inner) = Observed { record, time: Instant::now() };
    }

    /// client-go's `IsLeader`: the last observed record names us.
    fn is_holder(&self) -> bool {
        self.observed.lock().unwrap_or_else(PoisonError::into_inner).record.holder == self.identity
    }
}

/// Leadership as published by [`LeaderElector::subscribe`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Status {
    /// This process holds the lease and its `leading` future runs. Turns
    /// true once per run (the daemon's "`<id> became leader`" Event) and
    /// false when the term ends, lost or released ("`<id> stopped
    /// leading`").
    pub leading: bool,
    /// The holder in the last record observed (`None` while unknown or
    /// released), client-go's `GetLeader`/`OnNewLeader`.
    pub leader: Option<String>,
}

/// Why the `leading` future is asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The shutdown future completed: stop taking work, finish in-flight
    /// syncs, then return; the lease is renewed meanwhile and released after.
    Shutdown,
    /// Leadership was lost (or the elector dropped). The `leading` task is
    /// aborted at the same moment; tasks it spawned must stop at once, since
    /// another replica may already lead.
    Lost,
}

/// Handed to the `leading` future: resolves when it must stop. Cheap to
/// clone, so every controller can hold one.
#[derive(Debug, Clone)]
pub struct StopSignal {
    rx: watch::Receiver<Option<StopReason>>,
}

impl StopSignal {
    /// Waits until leadership ends or shutdown is requested. A dropped
    /// elector counts as [`StopReason::Lost`].
    pub async fn stopped(&mut self) -> StopReason {
        match self.rx.wait_for(Option::is_some).await {
            Ok(reason) => reason.unwrap_or(StopReason::Lost),
            Err(_) => StopReason::Lost,
        }
    }

    /// The reason, if stopping has been asked for already (a dropped
    /// elector counts as [`StopReason::Lost`]).
    pub fn reason(&self) -> Option<StopReason> {
        let reason = *self.rx.borrow();
        match self.rx.has_changed() {
            Err(_) => reason.or(Some(StopReason::Lost)),
            Ok(_) => reason,
        }
    }
}

/// The `leaderElection` health check, client-go's `HealthzAdaptor`: while
/// this process holds the lease (per the last record it observed), it is
/// unhealthy once no renewal succeeded for `lease_duration` + the timeout
/// (20 s by default: 35 s with the default lease) — a leader that should
/// have exited but is stuck. Always healthy while not the holder. Cheap to
/// clone.
#[derive(Debug, Clone)]
pub struct LeaderHealth {
    shared: Arc<Shared>,
    lease_duration: Duration,
    timeout: Duration,
}

impl LeaderHealth {
    /// The check's name on `/healthz`.
    pub const NAME: &'static str = "leaderElection";
    /// kube-controller-manager's tolerance past the lease duration.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);

    /// The same check with another tolerance past the lease duration.
    pub fn with_timeout(self, timeout: Duration) -> Self {
        LeaderHealth { timeout, ..self }
    }

    /// Ok unless the holder has gone too long without a renewal.
    ///
    /// # Errors
    /// [`Error::RenewOverdue`].
    pub fn check(&self) -> Result<()> {
        self.check_at(Instant::now())
    }

    /// Whether [`check`](Self::check) passes.
    pub fn healthy(&self) -> bool {
        self.check().is_ok()
    }

    fn check_at(&self, now: Instant) -> Result<()> {
        let observed = self.shared.observed();
        if observed.record.holder != self.shared.identity {
            return Ok(());
        }
        if now.saturating_duration_since(observed.time) > self.lease_duration + self.timeout {
            return Err(Error::RenewOverdue(self.shared.lease_name.clone()));
        }
        Ok(())
    }
}

// === impl LeaderElector ===

/// How [`LeaderElector::run`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Shutdown came before this process ever led; nothing was written.
    NeverLed,
    /// The term ended because the `leading` future returned (normally after
    /// [`StopReason::Shutdown`]) and the lease was then released, so that a
    /// standby takes over at once. `released` is false if that write failed
    /// (logged): standbys then wait for the lease to expire.
    SteppedDown {
        /// Whether the release write succeeded.
        released: bool,
    },
    /// No renewal succeeded within `renew_deadline`: the `leading` task was
    /// aborted and [`StopReason::Lost`] signalled. The daemon must exit
    /// non-zero at once (kube-controller-manager: "leaderelection lost",
    /// exit 1); a restart is the safe way back.
    Lost,
}

/// One contender for a Lease. Build it with [`new`](Self::new), take the
/// handles you need ([`health`](Self::health), [`subscribe`](Self::subscribe)),
/// then [`run`](Self::run) it.
#[doc(alias = "leaderelection")]
pub struct LeaderElector {
    api: Api<Lease>,
    config: LeaderElectionConfig,
    metrics: LeaderMetrics,
    shared: Arc<Shared>,
    /// The Lease as last read or written: its `resourceVersion` is the
    /// optimistic lock of the next replace (client-go `LeaseLock.lease`).
    lease: Option<Lease>,
    /// The record as last *read* (client-go `observedRawRecord`): a read
    /// that differs restarts the local expiry timer.
    observed_raw: Option<Record>,
    /// Jitter source, a sample in [0, 1).
    jitter: fn() -> f64,
}

/// What the election loop does next. Each `step` takes a state by value and
/// returns the next one (STYLE rule 3); waits react to shutdown and to the
/// `leading` task ending.
#[derive(Debug)]
enum State {
    /// Standby, about to attempt `tryAcquireOrRenew`. Success → `Leading`
    /// (and the `leading` task starts); failure → `Standby`.
    Acquire,
    /// Standby, waiting for a jittered retry period (client-go's sliding
    /// `JitterUntil`). Elapsed → `Acquire`; shutdown → `Done(NeverLed)`.
    Standby { retry_at: Instant },
    /// Leading with a fresh renewal, waiting `retry_period` before the next
    /// renew round (`wait.Until`). Elapsed → `Renew` with a deadline of
    /// `renew_deadline`; shutdown → signal the task, keep waiting; task ended
    /// → `Release`.
    Leading { round_at: Instant },
    /// In a renew round, about to attempt a renewal (bounded by the
    /// round's deadline). Success → `Leading`; failure → `RenewBackoff`.
    Renew { deadline: Instant },
    /// In a renew round after a failed attempt, waiting `retry_period`
    /// (`PollImmediateUntil`). Reaching the deadline first → `Lost`;
    /// elapsed → `Renew`; shutdown → signal the task, keep waiting; task
    /// ended → `Release`.
    RenewBackoff { retry_at: Instant, deadline: Instant },
    /// The round's deadline passed: leadership is over. Next: metric off,
    /// signal and abort the task → `Done(Lost)`.
    Lost,
    /// The `leading` task returned. Next: metric off, write the released
    /// record → `Done(SteppedDown)`.
    Release,
    /// Finished.
    Done(Outcome),
}

/// What a step tells the driver to do besides moving on.
#[derive(Debug, PartialEq, Eq)]
enum Output {
    /// The lease was acquired: start the `leading` task.
    StartLeading,
}

impl LeaderElector {
    /// A contender for `config`'s Lease. Sets `master_status` to 0.
    ///
    /// # Errors
    /// The config's [`validate`](LeaderElectionConfig::validate) error.
    pub fn new(client: kube::Client, config: LeaderElectionConfig, metrics: &LeaderMetrics) -> Result<Self> {
        config.validate()?;
        let api = Api::namespaced(client, &config.lease_namespace);
        let (status, _) = watch::channel(Status::default());
        let shared = Arc::new(Shared {
            identity: config.identity.clone(),
            lease_name: config.lease_name.clone(),
            observed: Mutex::new(Observed { record: Record::default(), time: Instant::now() }),
            status,
        });
        metrics.leader_off(&config.lease_name);
        Ok(LeaderElector {
            api,
            config,
            metrics: metrics.clone(),
            shared,
            lease: None,
            observed_raw: None,
            jitter: random_unit,
        })
    }

    /// The `leaderElection` health check for this contender, with the
    /// default 20 s tolerance.
    pub fn health(&self) -> LeaderHealth {
        LeaderHealth {
            shared: self.shared.clone(),
            lease_duration: self.config.lease_duration,
            timeout: LeaderHealth::DEFAULT_TIMEOUT,
        }
    }

    /// Leadership changes: [`Status::leading`] for the "became leader" /
    /// "stopped leading" Events, [`Status::leader`] for the observed holder.
    pub fn subscribe(&self) -> watch::Receiver<Status> {
        self.shared.status.subscribe()
    }

    /// Contends for the lease until the term ends.
    ///
    /// - Standing by, retries every `retry_period` (jittered ×1.2); if
    ///   `shutdown` completes first, returns [`Outcome::NeverLed`].
    /// - On acquiring, sets `master_status` to 1 and spawns
    ///   `leading(stop)` as a task. The controllers run inside it.
    /// - While leading, renews. When `shutdown` completes, `stop` resolves
    ///   to [`StopReason::Shutdown`] and renewals go on until `leading`
    ///   returns (draining is the daemon's job; bound it there); then the
    ///   lease is released (`holderIdentity` "", `leaseDurationSeconds` 1,
    ///   times now, transitions kept) and [`Outcome::SteppedDown`] returned.
    ///   `leading` returning on its own ends the term the same way.
    /// - If a renew round fails for `renew_deadline`, `stop` resolves to
    ///   [`StopReason::Lost`], the `leading` task is aborted, and
    ///   [`Outcome::Lost`] is returned: exit non-zero.
    ///
    /// Dropping the returned future aborts the `leading` task and signals
    /// [`StopReason::Lost`], without releasing.
    ///
    /// # Errors
    /// [`Error::LeadingTask`] if the `leading` task panicked (after the
    /// release).
    pub async fn run<L, F, S>(mut self, leading: L, shutdown: S) -> Result<Outcome>
    where
        L: FnOnce(StopSignal) -> F,
        F: Future<Output = ()> + Send + 'static,
        S: Future<Output = ()>,
    {
        let (stop, _) = watch::channel(None);
        let mut term = Term { shutdown: Some(Box::pin(shutdown)), stop, task: None, task_failure: None };
        let mut leading = Some(leading);
        let mut state = State::Acquire;
        tracing::info!(lease = %self.config.describe(), identity = %self.config.identity, "attempting to acquire leader lease");
        loop {
            let (output, next) = self.step(state, &mut term).await;
            if output == Some(Output::StartLeading)
                && let Some(leading) = leading.take()
            {
                let signal = StopSignal { rx: term.stop.subscribe() };
                term.task = Some(tokio::spawn(leading(signal)));
            }
            state = match next {
                State::Done(outcome) => {
                    return match term.task_failure.take() {
                        Some(err) => Err(Error::LeadingTask(err)),
                        None => Ok(outcome),
                    };
                }
                next => next,
            };
        }
    }

    /// One transition of the election loop.
    async fn step<S: Future<Output = ()>>(&mut self, state: State, term: &mut Term<S>) -> (Option<Output>, State) {
        let retry = self.config.retry_period;
        match state {
            State::Acquire => {
                let acquired = self.try_acquire_or_renew(None).await;
                self.report_leader();
                if !acquired {
                    tracing::debug!(lease = %self.config.describe(), "failed to acquire lease");
                    let wait = jittered(retry, JITTER_FACTOR, (self.jitter)());
                    return (None, State::Standby { retry_at: Instant::now() + wait });
                }
                tracing::info!(lease = %self.config.describe(), "successfully acquired lease");
                self.metrics.leader_on(&self.config.lease_name);
                self.shared.status.send_if_modified(|s| !std::mem::replace(&mut s.leading, true));
                (Some(Output::StartLeading), State::Leading { round_at: Instant::now() + retry })
            }
            State::Standby { retry_at } => match term.wait(retry_at).await {
                Wake::Elapsed | Wake::TaskEnded => (None, State::Acquire),
                Wake::Shutdown => (None, State::Done(Outcome::NeverLed)),
            },
            State::Leading { round_at } => match term.wait(round_at).await {
                Wake::Elapsed => (None, State::Renew { deadline: Instant::now() + self.config.renew_deadline }),
                Wake::Shutdown => (None, State::Leading { round_at }),
                Wake::TaskEnded => (None, State::Release),
            },
            State::Renew { deadline } => {
                let renewed = self.try_acquire_or_renew(Some(deadline)).await;
                self.report_leader();
                if renewed {
                    tracing::trace!(lease = %self.config.describe(), "successfully renewed lease");
                    (None, State::Leading { round_at: Instant::now() + retry })
                } else {
                    (None, State::RenewBackoff { retry_at: Instant::now() + retry, deadline })
                }
            }
            State::RenewBackoff { retry_at, deadline } => match term.wait(retry_at.min(deadline)).await {
                Wake::Elapsed if retry_at < deadline => (None, State::Renew { deadline }),
                Wake::Elapsed => (None, State::Lost),
                Wake::Shutdown => (None, State::RenewBackoff { retry_at, deadline }),
                Wake::TaskEnded => (None, State::Release),
            },
            State::Lost => {
                tracing::error!(lease = %self.config.describe(), "failed to renew lease: leader election lost");
                self.stopped_leading();
                term.request_stop(StopReason::Lost);
                if let Some(task) = term.task.take() {
                    task.abort();
                }
                (None, State::Done(Outcome::Lost))
            }
            State::Release => {
                self.stopped_leading();
                term.request_stop(StopReason::Shutdown);
                let released = self.release().await;
                (None, State::Done(Outcome::SteppedDown { released }))
            }
            State::Done(outcome) => (None, State::Done(outcome)),
        }
    }

    fn stopped_leading(&self) {
        self.metrics.leader_off(&self.config.lease_name);
        self.shared.status.send_if_modified(|s| std::mem::replace(&mut s.leading, false));
    }

    /// client-go's `maybeReportTransition`: publish a new observed holder.
    fn report_leader(&self) {
        let holder = Some(self.shared.observed().record.holder).filter(|h| !h.is_empty());
        self.shared.status.send_if_modified(|s| {
            if s.leader == holder {
                return false;
            }
            if let Some(holder) = &holder {
                tracing::info!(lease = %self.config.describe(), leader = %holder, "new leader elected");
            }
            s.leader = holder;
            true
        });
    }

    /// client-go's `isLeaseValid`: the observed record has not stayed the
    /// same for its own `leaseDurationSeconds` yet.
    fn is_lease_valid(&self, now: Instant) -> bool {
        let observed = self.shared.observed();
        let duration = Duration::from_secs(u64::try_from(observed.record.lease_duration_seconds).unwrap_or(0));
        observed.time + duration > now
    }

    /// client-go's `tryAcquireOrRenew`: one attempt to take or keep the
    /// lease. Each request is bounded by the request timeout and, within a
    /// renew round, by the round's deadline.
    async fn try_acquire_or_renew(&mut self, deadline: Option<Instant>) -> bool {
        let now = Instant::now();
        let wall = Timestamp::now();
        let mut desired = Record {
            holder: self.config.identity.clone(),
            lease_duration_seconds: self.config.lease_duration_seconds(),
            acquire_time: Some(wall),
            renew_time: Some(wall),
            transitions: 0,
        };

        // 1. Fast path: the holder renews from its cached Lease, whose
        // resourceVersion proves nobody wrote in between.
        if self.shared.is_holder()
            && self.is_lease_valid(now)
            && let Some(lease) = self.lease.clone()
        {
            let observed = self.shared.observed().record;
            desired.acquire_time = observed.acquire_time;
            desired.transitions = observed.transitions;
            match self.update(lease, &desired, deadline).await {
                Ok(()) => {
                    self.shared.set_observed(desired);
                    return true;
                }
                Err(err) => tracing::warn!(
                    lease = %self.config.describe(), error = %err,
                    "failed to update lock optimistically, falling back to slow path"
                ),
            }
        }

        // 2. Read the Lease, or create it.
        let name = self.config.lease_name.clone();
        let current = match self.bounded(deadline, self.api.get(&name)).await {
            Ok(lease) => lease,
            Err(err) if err.is_not_found() => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(name),
                        namespace: Some(self.config.lease_namespace.clone()),
                        ..ObjectMeta::default()
                    },
                    spec: Some(desired.to_spec()),
                };
                return match self.bounded(deadline, self.api.create(&PostParams::default(), &lease)).await {
                    Ok(created) => {
                        self.lease = Some(created);
                        self.shared.set_observed(desired);
                        true
                    }
                    Err(err) => {
                        tracing::error!(lease = %self.config.describe(), error = %err, "error initially creating leader election record");
                        false
                    }
                };
            }
            Err(err) => {
                tracing::error!(lease = %self.config.describe(), error = %err, "error retrieving resource lock");
                return false;
            }
        };
        let old = Record::from_spec(current.spec.as_ref());
        self.lease = Some(current);

        // 3. A changed record restarts the local expiry timer.
        if self.observed_raw.as_ref() != Some(&old) {
            self.shared.set_observed(old.clone());
            self.observed_raw = Some(old.clone());
        }
        if !old.holder.is_empty() && self.is_lease_valid(now) && !self.shared.is_holder() {
            tracing::debug!(lease = %self.config.describe(), holder = %old.holder, "lock is held and has not yet expired");
            return false;
        }

        // 4. Renewing keeps acquireTime and transitions; taking over counts one.
        if self.shared.is_holder() {
            desired.acquire_time = old.acquire_time;
            desired.transitions = old.transitions;
            self.metrics.slowpath_exercised(&self.config.lease_name);
        } else {
            desired.transitions = old.transitions.saturating_add(1);
        }

        // 5. Replace, guarded by the resourceVersion just read.
        let Some(lease) = self.lease.clone() else { return false };
        match self.update(lease, &desired, deadline).await {
            Ok(()) => {
                self.shared.set_observed(desired);
                true
            }
            Err(err) => {
                tracing::error!(lease = %self.config.describe(), error = %err, "failed to update lock");
                false
            }
        }
    }

    /// client-go's `release`: if we hold the lease, write an empty holder
    /// with a 1 s duration so standbys take over at once.
    async fn release(&mut self) -> bool {
        if !self.shared.is_holder() {
            return true;
        }
        let Some(lease) = self.lease.clone() else { return false };
        let now = Timestamp::now();
        let record = Record {
            holder: String::new(),
            lease_duration_seconds: 1,
            acquire_time: Some(now),
            renew_time: Some(now),
            transitions: self.shared.observed().record.transitions,
        };
        match self.update(lease, &record, None).await {
            Ok(()) => {
                tracing::info!(lease = %self.config.describe(), "released leader lease");
                self.shared.set_observed(record);
                true
            }
            Err(err) => {
                tracing::error!(lease = %self.config.describe(), error = %err, "failed to release lock");
                false
            }
        }
    }

    /// Replaces `lease`'s spec with `record`; on success the answer becomes
    /// the cached Lease.
    async fn update(&mut self, mut lease: Lease, record: &Record, deadline: Option<Instant>) -> Result<(), CallError> {
        lease.spec = Some(record.to_spec());
        let name = self.config.lease_name.clone();
        let updated = self.bounded(deadline, self.api.replace(&name, &PostParams::default(), &lease)).await?;
        self.lease = Some(updated);
        Ok(())
    }

    /// Runs one request within the request timeout and `deadline`.
    async fn bounded<T>(
        &self,
        deadline: Option<Instant>,
        call: impl Future<Output = kube::Result<T>>,
    ) -> Result<T, CallError> {
        let mut until = Instant::now() + self.config.request_timeout();
        if let Some(deadline) = deadline {
            until = until.min(deadline);
        }
        match tokio::time::timeout_at(until, call).await {
            Ok(result) => result.map_err(CallError::Kube),
            Err(_) => Err(CallError::TimedOut),
        }
    }
}

/// A failed Lease request (logged, then retried: never surfaced).
#[derive(Debug, thiserror::Error)]
enum CallError {
    #[error(transparent)]
    Kube(kube::Error),
    #[error("request timed out")]
    TimedOut,
}

impl CallError {
    fn is_not_found(&self) -> bool {
        matches!(self, CallError::Kube(kube::Error::Api(status)) if status.is_not_found())
    }
}

// === Term: the run's triggers and the leading task ===

/// The run's moving parts that the waits watch.
struct Term<S> {
    /// The shutdown trigger; `None` once it has fired.
    shutdown: Option<Pin<Box<S>>>,
    /// Feeds every [`StopSignal`]; dropping it (with the run) means Lost.
    stop: watch::Sender<Option<StopReason>>,
    /// The `leading` task while it runs; aborted if the run is dropped.
    task: Option<JoinHandle<()>>,
    /// How the `leading` task failed, reported once the run is done.
    task_failure: Option<JoinError>,
}

/// Why a wait ended.
#[derive(Debug)]
enum Wake {
    /// The time came.
    Elapsed,
    /// Shutdown was requested (the stop signal has been sent).
    Shutdown,
    /// The `leading` task ended.
    TaskEnded,
}

impl<S: Future<Output = ()>> Term<S> {
    /// Waits until `at`, shutdown or the end of the `leading` task,
    /// whichever comes first, and records the latter two.
    async fn wait(&mut self, at: Instant) -> Wake {
        enum Woken {
            Elapsed,
            Shutdown,
            Task(Result<(), JoinError>),
        }
        let woken = {
            let Term { shutdown, task, .. } = self;
            let shutdown = async {
                match shutdown.as_mut() {
                    Some(shutdown) => shutdown.await,
                    None => std::future::pending().await,
                }
            };
            let task = async {
                match task.as_mut() {
                    Some(task) => task.await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = tokio::time::sleep_until(at) => Woken::Elapsed,
                () = shutdown => Woken::Shutdown,
                result = task => Woken::Task(result),
            }
        };
        match woken {
            Woken::Elapsed => Wake::Elapsed,
            Woken::Shutdown => {
                self.shutdown = None;
                self.request_stop(StopReason::Shutdown);
                Wake::Shutdown
            }
            Woken::Task(result) => {
                self.task = None;
                if let Err(err) = result {
                    tracing::error!(error = %err, "the leading task failed");
                    self.task_failure = Some(err);
                }
                Wake::TaskEnded
            }
        }
    }
}

impl<S> Term<S> {
    /// Sends a stop reason: the first one, or Lost over Shutdown (the
    /// draining controllers must then stop at once).
    fn request_stop(&self, reason: StopReason) {
        self.stop.send_if_modified(|current| {
            let replace = match *current {
                None => true,
                Some(StopReason::Shutdown) => reason == StopReason::Lost,
                Some(StopReason::Lost) => false,
            };
            if replace {
                *current = Some(reason);
            }
            replace
        });
    }
}

impl<S> Drop for Term<S> {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

// === jitter ===

/// client-go's `wait.Jitter`: `period + U[0,1) × factor × period`.
fn jittered(period: Duration, factor: f64, sample: f64) -> Duration {
    period + period.mul_f64(factor * sample.clamp(0.0, 1.0))
}

/// A sample in [0, 1) from the UUID v4 generator (the OS's randomness).
fn random_unit() -> f64 {
    let (bits, _) = uuid::Uuid::new_v4().as_u64_pair();
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use kube_sim::faults::{FaultRule, FaultSpec};
    use kube_sim::{Sim, SimConfig};
    use tokio::sync::oneshot;

    use super::*;

    // === utils ===

    const NS: &str = "kube-system";
    /// Upper bound on any wait for a condition: a hang guard, not a timing
    /// assertion.
    const PATIENCE: Duration = Duration::from_secs(30);

    /// Short timings: lease 2 s, renew 1.5 s, retry 0.5 s.
    fn config(identity: &str, lease: &str) -> LeaderElectionConfig {
        LeaderElectionConfig {
            lease_name: lease.to_owned(),
            lease_namespace: NS.to_owned(),
            identity: identity.to_owned(),
            lease_duration: Duration::from_secs(2),
            renew_deadline: Duration::from_millis(1500),
            retry_period: Duration::from_millis(500),
        }
    }

    /// Counts contenders running their `leading` future at once, and the
    /// most ever seen together.
    #[derive(Default)]
    struct Leaders {
        now: AtomicUsize,
        max: AtomicUsize,
    }

    impl Leaders {
        fn enter(&self) {
            let n = self.now.fetch_add(1, Ordering::SeqCst) + 1;
            self.max.fetch_max(n, Ordering::SeqCst);
        }
        fn leave(&self) {
            self.now.fetch_sub(1, Ordering::SeqCst);
        }
        fn max(&self) -> usize {
            self.max.load(Ordering::SeqCst)
        }
    }

    /// Decrements the counter however the leading future ends (aborted
    /// included).
    struct LeaveGuard(Arc<Leaders>);

    impl Drop for LeaveGuard {
        fn drop(&mut self) {
            self.0.leave();
        }
    }

    /// A running contender.
    struct Contender {
        identity: String,
        status: watch::Receiver<Status>,
        health: LeaderHealth,
        registry: Registry,
        /// The reason the leading future was told to stop, seen by a task it
        /// spawned (so it survives the abort on Lost).
        stop_reason: Arc<Mutex<Option<StopReason>>>,
        shutdown: Option<oneshot::Sender<()>>,
        run: JoinHandle<Result<Outcome>>,
    }

    impl Contender {
        fn start(client: &kube::Client, config: LeaderElectionConfig, leaders: &Arc<Leaders>) -> Contender {
            let registry = Registry::new();
            let metrics = LeaderMetrics::register(&registry).unwrap();
            let identity = config.identity.clone();
            let elector = LeaderElector::new(client.clone(), config, &metrics).unwrap();
            let (status, health) = (elector.subscribe(), elector.health());
            let (shutdown, shutdown_rx) = oneshot::channel::<()>();
            let stop_reason = Arc::new(Mutex::new(None));
            let (leaders, seen) = (leaders.clone(), stop_reason.clone());
            let leading = move |mut stop: StopSignal| async move {
                leaders.enter();
                let _guard = LeaveGuard(leaders);
                let mut watcher = stop.clone();
                tokio::spawn(async move {
                    let reason = watcher.stopped().await;
                    *seen.lock().unwrap() = Some(reason);
                });
                // "Draining": stop taking work, finish in-flight syncs.
                stop.stopped().await;
                tokio::time::sleep(Duration::from_millis(100)).await;
            };
            let run = tokio::spawn(elector.run(leading, async move {
                let _ = shutdown_rx.await;
            }));
            Contender { identity, status, health, registry, stop_reason, shutdown: Some(shutdown), run }
        }

        fn leading(&self) -> bool {
            self.status.borrow().leading
        }

        async fn wait_leading(&mut self) {
            wait_status(&mut self.status, |s| s.leading).await;
        }

        fn shutdown(&mut self) {
            if let Some(tx) = self.shutdown.take() {
                let _ = tx.send(());
            }
        }

        async fn outcome(self) -> Outcome {
            tokio::time::timeout(PATIENCE, self.run).await.expect("run ends").unwrap().unwrap()
        }

        fn master_status(&self) -> i64 {
            self.registry
                .gather()
                .iter()
                .filter(|f| f.name() == "leader_election_master_status")
                .flat_map(|f| f.get_metric())
                .map(|m| m.get_gauge().get_value() as i64)
                .next()
                .unwrap_or(-1)
        }
    }

    async fn wait_status(status: &mut watch::Receiver<Status>, pred: impl FnMut(&Status) -> bool) {
        tokio::time::timeout(PATIENCE, status.wait_for(pred)).await.expect("status condition").unwrap();
    }

    /// Polls until `pred` holds (hang guard: PATIENCE).
    async fn wait_until(mut pred: impl FnMut() -> bool) {
        tokio::time::timeout(PATIENCE, async {
            while !pred() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .expect("condition");
    }

    async fn lease(client: &kube::Client, name: &str) -> Record {
        let lease = Api::<Lease>::namespaced(client.clone(), NS).get(name).await.unwrap();
        Record::from_spec(lease.spec.as_ref())
    }

    /// Waits until the Lease has been written `n` more times than now (the
    /// holder keeps renewing).
    async fn wait_renewals(client: &kube::Client, name: &str, n: usize) {
        let mut last = lease(client, name).await;
        let mut seen = 0;
        tokio::time::timeout(PATIENCE, async {
            while seen < n {
                tokio::time::sleep(Duration::from_millis(50)).await;
                let current = lease(client, name).await;
                if current != last {
                    seen += 1;
                    last = current;
                }
            }
        })
        .await
        .expect("renewals");
    }

    async fn sim() -> (Sim, kube::Client) {
        let sim = Sim::start(SimConfig { nodes: 0, ..SimConfig::default() }).await.unwrap();
        let client = sim.client().unwrap();
        (sim, client)
    }

    /// Starts `a`, waits until it leads, then starts `b`.
    async fn leader_and_standby(
        client: &kube::Client,
        a: LeaderElectionConfig,
        b: LeaderElectionConfig,
        leaders: &Arc<Leaders>,
    ) -> (Contender, Contender) {
        let mut a = Contender::start(client, a, leaders);
        a.wait_leading().await;
        let mut b = Contender::start(client, b, leaders);
        let leader = a.identity.clone();
        wait_status(&mut b.status, |s| s.leader.as_deref() == Some(leader.as_str())).await;
        (a, b)
    }

    // === tests: pure ===

    #[test]
    fn config_validation_follows_client_go() {
        let ok = config("a", "l");
        assert!(ok.validate().is_ok());
        assert!(LeaderElectionConfig::new("a").validate().is_ok());
        let cases = [
            (
                LeaderElectionConfig { lease_duration: ok.renew_deadline, ..ok.clone() },
                "leaseDuration must be greater than renewDeadline",
            ),
            // 1.2 × 500 ms = 600 ms: not strictly greater.
            (
                LeaderElectionConfig { renew_deadline: Duration::from_millis(600), ..ok.clone() },
                "renewDeadline must be greater than retryPeriod*JitterFactor",
            ),
            (
                LeaderElectionConfig { retry_period: Duration::ZERO, ..ok.clone() },
                "retryPeriod must be greater than zero",
            ),
            (LeaderElectionConfig { identity: String::new(), ..ok.clone() }, "leader election identity is empty"),
            (
                LeaderElectionConfig { lease_name: String::new(), ..ok.clone() },
                "leader election lease name and namespace must not be empty",
            ),
        ];
        for (config, expected) in cases {
            assert_eq!(config.validate().unwrap_err().to_string(), expected, "{config:?}");
        }
    }

    #[test]
    fn default_identity_is_hostname_and_uuid() {
        let id = default_identity();
        let (host, uuid) = id.rsplit_once('_').unwrap();
        assert!(!host.is_empty());
        assert!(uuid::Uuid::parse_str(uuid).is_ok(), "{id}");
        assert_ne!(default_identity(), id);
    }

    #[test]
    fn jitter_stays_within_client_go_bounds() {
        let period = Duration::from_secs(2);
        assert_eq!(jittered(period, JITTER_FACTOR, 0.0), period);
        assert_eq!(jittered(period, JITTER_FACTOR, 0.5), Duration::from_millis(3200));
        for _ in 0..1000 {
            let sample = random_unit();
            assert!((0.0..1.0).contains(&sample));
            let d = jittered(period, JITTER_FACTOR, sample);
            assert!(d >= period && d < period.mul_f64(2.2));
        }
    }

    #[test]
    fn record_round_trips_through_the_spec() {
        let now = Timestamp::now();
        let record = Record {
            holder: "a".into(),
            lease_duration_seconds: 15,
            acquire_time: Some(now),
            renew_time: Some(now),
            transitions: 3,
        };
        assert_eq!(Record::from_spec(Some(&record.to_spec())), record);
        assert_eq!(Record::from_spec(None), Record::default());
    }

    #[tokio::test]
    async fn health_fails_only_for_a_holder_overdue_on_renewal() {
        let (status, _) = watch::channel(Status::default());
        let observed_at = Instant::now();
        let shared = Arc::new(Shared {
            identity: "me".into(),
            lease_name: "l".into(),
            observed: Mutex::new(Observed {
                record: Record { holder: "other".into(), ..Record::default() },
                time: observed_at,
            }),
            status,
        });
        let health =
            LeaderHealth { shared: shared.clone(), lease_duration: Duration::from_secs(15), timeout: Duration::ZERO }
                .with_timeout(LeaderHealth::DEFAULT_TIMEOUT);
        let late = observed_at + Duration::from_secs(36);
        // Not the holder: always healthy.
        assert!(health.check_at(late).is_ok());
        shared.observed.lock().unwrap().record.holder = "me".into();
        assert!(health.check_at(observed_at + Duration::from_secs(35)).is_ok());
        assert!(matches!(health.check_at(late), Err(Error::RenewOverdue(name)) if name == "l"));
    }

    #[test]
    fn metrics_register_once_per_registry() {
        let registry = Registry::new();
        assert!(LeaderMetrics::register(&registry).is_ok());
        assert!(matches!(LeaderMetrics::register(&registry), Err(Error::Metrics(_))));
    }

    // === tests: against kube-sim ===

    #[tokio::test]
    async fn two_contenders_exactly_one_leads() {
        let (_sim, client) = sim().await;
        let leaders = Arc::new(Leaders::default());
        // Both start together: they race to create the Lease.
        let mut a = Contender::start(&client, config("a", "one"), &leaders);
        let mut b = Contender::start(&client, config("b", "one"), &leaders);
        tokio::select! {
            () = a.wait_leading() => {}
            () = b.wait_leading() => {}
        }
        let (leader, standby) = if a.leading() { (&a, &mut b) } else { (&b, &mut a) };
        let holder = leader.identity.clone();
        let record = lease(&client, "one").await;
        assert_eq!(record.holder, holder);
        assert_eq!(record.transitions, 0);
        wait_status(&mut standby.status, |s| s.leader.as_deref() == Some(holder.as_str())).await;
        // The leader renews for several lease durations; the standby keeps
        // retrying and never leads.
        wait_renewals(&client, "one", 10).await;
        assert!(!standby.leading());
        assert_eq!(leaders.max(), 1);
        assert_eq!(lease(&client, "one").await.holder, holder);
        assert!(leader.health.healthy() && standby.health.healthy());
    }

    #[tokio::test]
    async fn standby_takes_over_after_expiry_when_the_leader_dies() {
        let (_sim, client) = sim().await;
        let leaders = Arc::new(Leaders::default());
        let (a, mut b) = leader_and_standby(&client, config("a", "kill"), config("b", "kill"), &leaders).await;
        let before = lease(&client, "kill").await;
        // SIGKILL: no release, the Lease just stops changing.
        a.run.abort();
        // Dropping the run aborted the leading task and told its helpers.
        wait_until(|| a.stop_reason.lock().unwrap().is_some()).await;
        assert_eq!(*a.stop_reason.lock().unwrap(), Some(StopReason::Lost));
        b.wait_leading().await;
        let after = lease(&client, "kill").await;
        assert_eq!(after.holder, "b");
        assert_eq!(after.transitions, before.transitions + 1);
        assert_ne!(after.acquire_time, before.acquire_time);
        assert_eq!(after.lease_duration_seconds, 2);
        assert_eq!(leaders.max(), 1);
        // Renewals keep acquireTime and transitions.
        wait_renewals(&client, "kill", 2).await;
        let renewed = lease(&client, "kill").await;
        assert_eq!((renewed.acquire_time, renewed.transitions), (after.acquire_time, after.transitions));
        assert_ne!(renewed.renew_time, after.renew_time);
    }

    #[tokio::test]
    async fn release_hands_over_at_once() {
        let (_sim, client) = sim().await;
        let leaders = Arc::new(Leaders::default());
        // A 60 s lease: only the release can explain a takeover within
        // PATIENCE (30 s).
        let long = |id| LeaderElectionConfig { lease_duration: Duration::from_secs(60), ..config(id, "term") };
        let (mut a, mut b) = leader_and_standby(&client, long("a"), long("b"), &leaders).await;
        a.shutdown();
        b.wait_leading().await;
        assert_eq!(*a.stop_reason.lock().unwrap(), Some(StopReason::Shutdown));
        assert!(!a.leading());
        assert_eq!(a.outcome().await, Outcome::SteppedDown { released: true });
        let record = lease(&client, "term").await;
        assert_eq!(record.holder, "b");
        assert_eq!(record.transitions, 1);
        assert_eq!(leaders.max(), 1);
    }

    #[tokio::test]
    async fn release_writes_an_empty_holder_that_is_free_at_once() {
        let (_sim, client) = sim().await;
        let leaders = Arc::new(Leaders::default());
        let long = |id| LeaderElectionConfig { lease_duration: Duration::from_secs(60), ..config(id, "free") };
        let mut a = Contender::start(&client, long("a"), &leaders);
        a.wait_leading().await;
        let held = lease(&client, "free").await;
        a.shutdown();
        assert_eq!(a.outcome().await, Outcome::SteppedDown { released: true });
        let released = lease(&client, "free").await;
        assert_eq!(released.holder, "");
        assert_eq!(released.lease_duration_seconds, 1);
        assert_eq!(released.transitions, held.transitions);
        assert_eq!(released.acquire_time, released.renew_time);
        // A newcomer (who never saw the record before) takes it at once.
        let mut b = Contender::start(&client, long("b"), &leaders);
        b.wait_leading().await;
        assert_eq!(lease(&client, "free").await.transitions, held.transitions + 1);
    }

    #[tokio::test]
    async fn shutdown_while_standing_by_writes_nothing() {
        let (_sim, client) = sim().await;
        let leaders = Arc::new(Leaders::default());
        let (_a, mut b) = leader_and_standby(&client, config("a", "idle"), config("b", "idle"), &leaders).await;
        b.shutdown();
        assert_eq!(b.outcome().await, Outcome::NeverLed);
        assert_eq!(lease(&client, "idle").await.holder, "a");
    }

    #[tokio::test]
    async fn renew_failures_past_the_deadline_lose_leadership() {
        let (sim, client) = sim().await;
        let leaders = Arc::new(Leaders::default());
        let mut a = Contender::start(&client, config("a", "faulty"), &leaders);
        a.wait_leading().await;
        assert!(a.health.healthy());
        sim.controls()
            .set_faults(FaultSpec {
                rules: vec![FaultRule {
                    verb: Some("update".into()),
                    resource: Some("leases".into()),
                    error_rate: 1.0,
                    ..FaultRule::default()
                }],
            })
            .unwrap();
        wait_status(&mut a.status, |s| !s.leading).await;
        assert_eq!(a.master_status(), 0);
        let health = a.health.clone();
        let reason = a.stop_reason.clone();
        assert_eq!(a.outcome().await, Outcome::Lost);
        wait_until(|| reason.lock().unwrap().is_some()).await;
        assert_eq!(*reason.lock().unwrap(), Some(StopReason::Lost));
        assert_eq!(leaders.now.load(Ordering::SeqCst), 0, "the leading task was aborted");
        // A holder that lost but did not exit turns unhealthy after
        // lease duration + timeout.
        assert!(health.check_at(Instant::now() + Duration::from_secs(23)).is_err());
    }

    #[tokio::test]
    async fn a_foreign_write_means_no_double_leadership() {
        let (_sim, client) = sim().await;
        let leaders = Arc::new(Leaders::default());
        // A 3 s lease leaves a clear margin between the leader giving up
        // (within retry + renew deadline = 2 s) and a standby taking over.
        let cfg = |id| LeaderElectionConfig { lease_duration: Duration::from_secs(3), ..config(id, "race") };
        let (mut a, mut b) = leader_and_standby(&client, cfg("a"), cfg("b"), &leaders).await;
        // An intruder takes the Lease between two renewals and keeps it
        // for a while: a's cached resourceVersion is now stale (409).
        let api = Api::<Lease>::namespaced(client.clone(), NS);
        let intruder = tokio::spawn(async move {
            for _ in 0..16 {
                let mut lease = api.get("race").await.unwrap();
                let now = Timestamp::now();
                let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
                spec.holder_identity = Some("intruder".into());
                spec.renew_time = Some(MicroTime(now));
                let _ = api.replace("race", &PostParams::default(), &lease).await;
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        });
        wait_status(&mut a.status, |s| !s.leading).await;
        assert!(!b.leading());
        intruder.await.unwrap();
        // Once the intruder stops, the standby takes over after expiry.
        b.wait_leading().await;
        assert_eq!(lease(&client, "race").await.holder, "b");
        assert_eq!(a.outcome().await, Outcome::Lost);
        assert_eq!(leaders.max(), 1);
    }

    #[tokio::test]
    async fn master_status_follows_leadership() {
        let (_sim, client) = sim().await;
        let leaders = Arc::new(Leaders::default());
        let long = |id| LeaderElectionConfig { lease_duration: Duration::from_secs(60), ..config(id, "metric") };
        let (mut a, mut b) = leader_and_standby(&client, long("a"), long("b"), &leaders).await;
        assert_eq!((a.master_status(), b.master_status()), (1, 0));
        a.shutdown();
        b.wait_leading().await;
        assert_eq!((a.master_status(), b.master_status()), (0, 1));
        assert_eq!(a.outcome().await, Outcome::SteppedDown { released: true });
        let b_registry = b.registry.clone();
        b.shutdown();
        assert_eq!(b.outcome().await, Outcome::SteppedDown { released: true });
        let b_status = b_registry
            .gather()
            .iter()
            .filter(|f| f.name() == "leader_election_master_status")
            .flat_map(|f| f.get_metric())
            .map(|m| m.get_gauge().get_value())
            .collect::<Vec<_>>();
        assert_eq!(b_status, vec![0.0]);
    }
}
