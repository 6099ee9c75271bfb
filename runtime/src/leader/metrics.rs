//! [`LeaderMetrics`]: `leader_election_master_status` and
//! `leader_election_slowpath_total`, with upstream's names and help. When
//! they change is the elector's business.

use prometheus::{IntCounterVec, IntGaugeVec, Opts, Registry};

use super::{Error, Result};

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

    pub(super) fn leader_on(&self, name: &str) {
        self.master_status.with_label_values(&[name]).set(1);
    }

    pub(super) fn leader_off(&self, name: &str) {
        self.master_status.with_label_values(&[name]).set(0);
    }

    pub(super) fn slowpath_exercised(&self, name: &str) {
        self.slowpath.with_label_values(&[name]).inc();
    }
}
