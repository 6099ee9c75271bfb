//! [`LeaderElectionConfig`]: which Lease to contend for, as whom, and with
//! which timing, checked as client-go's `NewLeaderElector` checks it.

use std::time::Duration;

use super::{Error, JITTER_FACTOR, Result};

/// What to contend for, as whom, and how fast.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderElectionConfig {
    /// Name of the Lease (`--leader-elect-resource-name`); also the `name`
    /// label of the metrics.
    pub lease_name: String,
    /// Namespace of the Lease (`--leader-elect-resource-namespace`).
    pub lease_namespace: String,
    /// This contender's identity, written as `holderIdentity`; must be
    /// unique per process (see [`default_identity`](super::default_identity)).
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
    pub(super) fn describe(&self) -> String {
        format!("{}/{}", self.lease_namespace, self.lease_name)
    }

    /// The lease duration as written to the Lease: whole seconds.
    pub(super) fn lease_duration_seconds(&self) -> i32 {
        i32::try_from(self.lease_duration.as_secs()).unwrap_or(i32::MAX)
    }

    /// How long after a successful Lease write was *sent* this process may
    /// go on writing (its [`WriteFence`](crate::client::WriteFence) stays
    /// open): the lease duration as written to the Lease (whole seconds)
    /// scaled by `renew_deadline / lease_duration`. With upstream's
    /// defaults (15 s, 10 s) that is 10 s.
    ///
    /// Why not the whole lease: a standby takes over once the record has
    /// stayed the same for `leaseDurationSeconds` on *its* clock, counted
    /// from when it read the record, so never before our send plus a lease
    /// duration on its clock. The margin covers two things. Clock *rate*:
    /// client-go states its tolerance as the ratio lease duration : renew
    /// deadline (a standby's clock may run up to 1.5 times as fast as the
    /// leader's with the defaults); the fence assumes no more than that.
    /// And a write that passed the fence but is still on its way to the
    /// API server. A 0 s lease (less than a second configured) gives a
    /// window of zero: standbys may take such a lease at any time, so the
    /// fence never opens.
    pub(super) fn write_window(&self) -> Duration {
        let written = Duration::from_secs(u64::try_from(self.lease_duration_seconds()).unwrap_or(0)).as_nanos();
        let nanos = self.renew_deadline.as_nanos().saturating_mul(written) / self.lease_duration.as_nanos().max(1);
        Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }

    /// Upper bound of one API request: the lock client's HTTP timeout in
    /// kube-controller-manager, max(1 s, renew deadline / 2).
    pub(super) fn request_timeout(&self) -> Duration {
        (self.renew_deadline / 2).max(Duration::from_secs(1))
    }
}
