//! [`LeaderElector`]: the election loop, as an explicit state machine over
//! client-go's `tryAcquireOrRenew`. The Lease requests it makes are
//! `lock.rs`'s, the waits between steps `term.rs`'s.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::Timestamp;
use tokio::sync::watch;
use tokio::time::Instant;

use kcm_gotime::Jitter;

use super::lock::{LeaseLock, Read};
use super::record::Record;
use super::state::{Observed, Shared};
use super::term::{Term, Wake};
use super::{
    Error, JITTER_FACTOR, LeaderElectionConfig, LeaderHealth, LeaderMetrics, Result, Status, StopReason, StopSignal,
};

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
    config: LeaderElectionConfig,
    metrics: LeaderMetrics,
    shared: Arc<Shared>,
    /// The Lease and the requests on it.
    lock: LeaseLock,
    /// The record as last *read* (client-go `observedRawRecord`): a read
    /// that differs restarts the local expiry timer.
    observed_raw: Option<Record>,
    /// Spreads the standby's retries.
    jitter: Jitter,
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
        let lock = LeaseLock::new(client, &config.lease_namespace, &config.lease_name, config.request_timeout());
        let (status, _) = watch::channel(Status::default());
        let shared = Arc::new(Shared {
            identity: config.identity.clone(),
            lease_name: config.lease_name.clone(),
            observed: Mutex::new(Observed { record: Record::default(), time: Instant::now() }),
            status,
        });
        metrics.leader_off(&config.lease_name);
        Ok(LeaderElector {
            config,
            metrics: metrics.clone(),
            shared,
            lock,
            observed_raw: None,
            jitter: Jitter::from_entropy(),
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
                    let wait = self.jitter.jitter(retry, JITTER_FACTOR);
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
        if self.shared.is_holder() && self.is_lease_valid(now) && self.lock.has_cached() {
            let observed = self.shared.observed().record;
            desired.acquire_time = observed.acquire_time;
            desired.transitions = observed.transitions;
            match self.lock.update(&desired, deadline).await {
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
        let old = match self.lock.get(deadline).await {
            Read::Found(record) => record,
            Read::Missing => {
                return match self.lock.create(&desired, deadline).await {
                    Ok(()) => {
                        self.shared.set_observed(desired);
                        true
                    }
                    Err(err) => {
                        tracing::error!(lease = %self.config.describe(), error = %err, "error initially creating leader election record");
                        false
                    }
                };
            }
            Read::Failed(err) => {
                tracing::error!(lease = %self.config.describe(), error = %err, "error retrieving resource lock");
                return false;
            }
        };

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
        match self.lock.update(&desired, deadline).await {
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
        if !self.lock.has_cached() {
            return false;
        }
        let now = Timestamp::now();
        let record = Record {
            holder: String::new(),
            lease_duration_seconds: 1,
            acquire_time: Some(now),
            renew_time: Some(now),
            transitions: self.shared.observed().record.transitions,
        };
        match self.lock.update(&record, None).await {
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
}
