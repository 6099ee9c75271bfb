//! [`LeaderElector`]: the election loop, as an explicit state machine over
//! client-go's `tryAcquireOrRenew` (`attempt.rs`), and the [`WriteFence`]
//! it keeps open while the lease is provably held. The Lease requests it
//! makes are `lock.rs`'s, the waits between steps `term.rs`'s.

use std::future::Future;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;
use tokio::time::Instant;

use kcm_gotime::Jitter;

use super::lock::LeaseLock;
use super::record::Record;
use super::state::{Observed, Shared};
use super::term::{Term, Wake};
use super::{
    Error, JITTER_FACTOR, LeaderElectionConfig, LeaderHealth, LeaderMetrics, Result, Status, StopReason, StopSignal,
};
use crate::client::WriteFence;
use attempt::Attempt;

mod attempt;

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
    /// No renewal succeeded within `renew_deadline`, or a renewal read
    /// another holder's valid lease: the `leading` task was aborted and
    /// [`StopReason::Lost`] signalled. The daemon must exit non-zero at once
    /// (kube-controller-manager: "leaderelection lost", exit 1); a restart
    /// is the safe way back.
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
    /// Open while the lease is provably ours: until the last successful
    /// Lease write's send time plus the config's `write_window`. Closed the
    /// moment leading ends. The controllers' clients check it.
    fence: WriteFence,
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
    /// round's deadline). Success → `Leading`; another holder's valid lease
    /// read → `Lost` at once (client-go would retry until the deadline);
    /// failure → `RenewBackoff`.
    Renew { deadline: Instant },
    /// In a renew round after a failed attempt, waiting `retry_period`
    /// (`PollImmediateUntil`). Reaching the deadline first → `Lost`;
    /// elapsed → `Renew`; shutdown → signal the task, keep waiting; task
    /// ended → `Release`.
    RenewBackoff { retry_at: Instant, deadline: Instant },
    /// The round's deadline passed, or the Lease names another holder
    /// (`taken_by`): leadership is over. Next: fence closed, signal and
    /// abort the task → `Done(Lost)`.
    Lost { taken_by: Option<String> },
    /// The `leading` task returned. Next: fence closed, then the released
    /// record written → `Done(SteppedDown)`.
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
    /// A contender for `config`'s Lease, its fence closed. Reports
    /// `master_status` from that fence from now on.
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
        let fence = WriteFence::new(config.describe());
        metrics.track(&config.lease_name, fence.clone());
        Ok(LeaderElector {
            config,
            metrics: metrics.clone(),
            shared,
            lock,
            observed_raw: None,
            jitter: Jitter::from_entropy(),
            fence,
        })
    }

    /// The fence the controllers' clients must check
    /// ([`ClientConfig::fenced`](crate::client::ClientConfig::fenced)):
    /// open only while this process provably holds the lease.
    pub fn fence(&self) -> WriteFence {
        self.fence.clone()
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
    /// - On acquiring, opens the [fence](Self::fence) (`master_status` 1)
    ///   and spawns `leading(stop)` as a task. The controllers run inside it.
    /// - While leading, renews; each renewal keeps the fence open until its
    ///   send time plus the write window, so the fence closes by itself if
    ///   renewals stop succeeding, or the process stops running. When `shutdown` completes, `stop` resolves
    ///   to [`StopReason::Shutdown`] and renewals go on until `leading`
    ///   returns (draining is the daemon's job; bound it there); then the
    ///   fence is closed, the lease released (`holderIdentity` "",
    ///   `leaseDurationSeconds` 1, times now, transitions kept) and
    ///   [`Outcome::SteppedDown`] returned. `leading` returning on its own
    ///   ends the term the same way.
    /// - If a renew round fails for `renew_deadline`, or a renewal reads
    ///   another holder's valid lease, the fence is closed, `stop` resolves
    ///   to [`StopReason::Lost`], the `leading` task is aborted, and
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
                let acquired = self.try_acquire_or_renew(None).await == Attempt::Held;
                self.report_leader();
                if !acquired {
                    tracing::debug!(lease = %self.config.describe(), "failed to acquire lease");
                    let wait = self.jitter.jitter(retry, JITTER_FACTOR);
                    return (None, State::Standby { retry_at: Instant::now() + wait });
                }
                tracing::info!(lease = %self.config.describe(), "successfully acquired lease");
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
                let attempt = self.try_acquire_or_renew(Some(deadline)).await;
                self.report_leader();
                match attempt {
                    Attempt::Held => {
                        tracing::trace!(lease = %self.config.describe(), "successfully renewed lease");
                        (None, State::Leading { round_at: Instant::now() + retry })
                    }
                    Attempt::HeldBy(holder) => (None, State::Lost { taken_by: Some(holder) }),
                    Attempt::Failed => (None, State::RenewBackoff { retry_at: Instant::now() + retry, deadline }),
                }
            }
            State::RenewBackoff { retry_at, deadline } => match term.wait(retry_at.min(deadline)).await {
                Wake::Elapsed if retry_at < deadline => (None, State::Renew { deadline }),
                Wake::Elapsed => (None, State::Lost { taken_by: None }),
                Wake::Shutdown => (None, State::RenewBackoff { retry_at, deadline }),
                Wake::TaskEnded => (None, State::Release),
            },
            State::Lost { taken_by } => {
                self.stopped_leading();
                let cause =
                    taken_by.map_or_else(|| "failed to renew lease".to_owned(), |h| format!("lease held by {h}"));
                tracing::error!(lease = %self.config.describe(), "{cause}: leader election lost");
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

    /// Closes the fence first: from here on no controller write goes out.
    fn stopped_leading(&self) {
        self.fence.close();
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
}
