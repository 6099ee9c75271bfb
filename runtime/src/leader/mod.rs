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
//! # use kcm_runtime::leader::*;
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
//!
//! The parts: [`LeaderElectionConfig`] (`config.rs`), [`LeaderMetrics`]
//! (`metrics.rs`), the Lease record the algorithm reads and writes
//! (`record.rs`), the state the elector shares with its handles and the
//! [`Status`] / [`StopSignal`] it publishes (`state.rs`), [`LeaderHealth`]
//! (`health.rs`), the election loop itself (`elector.rs`) and the run's
//! waits on shutdown and the `leading` task (`term.rs`).

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
mod tests {
    //! Tests of leader election: config validation, the record, jitter, health,
    //! metrics, and contenders racing for one Lease on kube-sim.

    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use jiff::Timestamp;
    use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
    use kube::api::{Api, PostParams};
    use kube_sim::faults::{FaultRule, FaultSpec};
    use kube_sim::{Sim, SimConfig};
    use prometheus::Registry;
    use tokio::sync::{oneshot, watch};
    use tokio::task::JoinHandle;
    use tokio::time::Instant;

    use super::record::Record;
    use super::state::{Observed, Shared};
    use super::*;
    use kcm_gotime::Jitter;
    use kcm_gotime::jitter::jittered;

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
        let mut source = Jitter::from_entropy();
        for _ in 0..1000 {
            let sample = source.unit();
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
