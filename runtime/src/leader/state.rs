//! What the elector shares with its handles: the last record it observed
//! and when (read by the health check), the leadership [`Status`] it
//! publishes, and the [`StopSignal`] handed to the `leading` future.

use std::sync::{Mutex, PoisonError};

use tokio::sync::watch;
use tokio::time::Instant;

use super::record::Record;

/// What this process last observed, and when (local monotonic clock). The
/// elector writes it; the health check reads it.
#[derive(Debug, Clone)]
pub(super) struct Observed {
    pub(super) record: Record,
    pub(super) time: Instant,
}

/// State shared between the elector and its handles.
#[derive(Debug)]
pub(super) struct Shared {
    pub(super) identity: String,
    pub(super) lease_name: String,
    /// client-go's `observedRecord` + `observedTime`, behind a lock because
    /// the health check reads them from other tasks.
    pub(super) observed: Mutex<Observed>,
    /// Published leadership, for [`LeaderElector::subscribe`].
    pub(super) status: watch::Sender<Status>,
}

impl Shared {
    pub(super) fn observed(&self) -> Observed {
        self.observed.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// client-go's `setObservedRecord`: the record, and now as its time.
    pub(super) fn set_observed(&self, record: Record) {
        *self.observed.lock().unwrap_or_else(PoisonError::into_inner) = Observed { record, time: Instant::now() };
    }

    /// client-go's `IsLeader`: the last observed record names us.
    pub(super) fn is_holder(&self) -> bool {
        self.observed.lock().unwrap_or_else(PoisonError::into_inner).record.holder == self.identity
    }
}

/// Leadership as published by [`LeaderElector::subscribe`](super::LeaderElector::subscribe).
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
    pub(super) rx: watch::Receiver<Option<StopReason>>,
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
