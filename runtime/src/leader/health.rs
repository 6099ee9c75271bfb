//! [`LeaderHealth`]: the `leaderElection` check on `/healthz`, which fails
//! only for a holder overdue on renewal. It reads the state the elector
//! shares (`state.rs`).

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::state::Shared;
use super::{Error, Result};

/// The `leaderElection` health check, client-go's `HealthzAdaptor`: while
/// this process holds the lease (per the last record it observed), it is
/// unhealthy once no renewal succeeded for `lease_duration` + the timeout
/// (20 s by default: 35 s with the default lease) — a leader that should
/// have exited but is stuck. Always healthy while not the holder. Cheap to
/// clone.
#[derive(Debug, Clone)]
pub struct LeaderHealth {
    pub(super) shared: Arc<Shared>,
    pub(super) lease_duration: Duration,
    pub(super) timeout: Duration,
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

    pub(super) fn check_at(&self, now: Instant) -> Result<()> {
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
