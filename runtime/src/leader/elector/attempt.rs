//! One attempt at the Lease, client-go's `tryAcquireOrRenew` (and its
//! `release`): read it or create it, decide whether it may be taken, write
//! it. A successful write of our record opens the elector's fence from the
//! write's send time; when to attempt is the state machine's (`mod.rs`).

use std::time::Duration;

use jiff::Timestamp;
use tokio::time::Instant;

use super::LeaderElector;
use crate::leader::lock::Read;
use crate::leader::record::Record;

/// How one `tryAcquireOrRenew` ended.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Attempt {
    /// The lease is ours: created, taken over or renewed.
    Held,
    /// The Lease names another holder whose lease has not expired (in our
    /// view): client-go's "lock is held by ... and has not yet expired".
    HeldBy(String),
    /// A request failed, or our write lost a race: try again later.
    Failed,
}

impl LeaderElector {
    /// A write of our record sent at `sent` succeeded: the lease is ours
    /// for the write window from then.
    fn held_since(&self, sent: Instant, record: Record) -> Attempt {
        self.fence.open_until(sent + self.config.write_window());
        self.shared.set_observed(record);
        Attempt::Held
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
    pub(super) async fn try_acquire_or_renew(&mut self, deadline: Option<Instant>) -> Attempt {
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
                Ok(sent) => return self.held_since(sent, desired),
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
                    Ok(sent) => self.held_since(sent, desired),
                    Err(err) => {
                        tracing::error!(lease = %self.config.describe(), error = %err, "error initially creating leader election record");
                        Attempt::Failed
                    }
                };
            }
            Read::Failed(err) => {
                tracing::error!(lease = %self.config.describe(), error = %err, "error retrieving resource lock");
                return Attempt::Failed;
            }
        };

        // 3. A changed record restarts the local expiry timer.
        if self.observed_raw.as_ref() != Some(&old) {
            self.shared.set_observed(old.clone());
            self.observed_raw = Some(old.clone());
        }
        if !old.holder.is_empty() && self.is_lease_valid(now) && !self.shared.is_holder() {
            tracing::debug!(lease = %self.config.describe(), holder = %old.holder, "lock is held and has not yet expired");
            return Attempt::HeldBy(old.holder);
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
            Ok(sent) => self.held_since(sent, desired),
            Err(err) => {
                tracing::error!(lease = %self.config.describe(), error = %err, "failed to update lock");
                Attempt::Failed
            }
        }
    }

    /// client-go's `release`: if we hold the lease, write an empty holder
    /// with a 1 s duration so standbys take over at once.
    pub(super) async fn release(&mut self) -> bool {
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
            Ok(_) => {
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
