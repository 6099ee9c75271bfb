//! [`LeaderMetrics`]: `leader_election_master_status` and
//! `leader_election_slowpath_total`, with upstream's names and help.
//!
//! `master_status` is read off each elector's [`WriteFence`] when it is
//! scraped: 1 exactly while the controllers may write. Upstream sets it when
//! leading starts and ends; kcm-rs's fence closes before a lost or released
//! term ends and as soon as the last renewal is too old, so the gauge can
//! never say 1 in a process that is not allowed to act as leader (after a
//! pause, say, before the elector has run again). When the slow path is
//! taken is the elector's business.

use std::sync::{Arc, Mutex, PoisonError};

use prometheus::core::{Collector, Desc};
use prometheus::proto::MetricFamily;
use prometheus::{IntCounterVec, IntGaugeVec, Opts, Registry};

use super::{Error, Result};
use crate::client::WriteFence;

/// The leader election metrics, with upstream names. Register once per
/// registry and share the value between electors (each one labels its
/// series with its Lease name).
#[derive(Debug, Clone)]
pub struct LeaderMetrics {
    /// `leader_election_master_status{name}`.
    master_status: MasterStatus,
    /// `leader_election_slowpath_total{name}`: renewals by the leader that
    /// needed a fresh read of the Lease.
    slowpath: IntCounterVec,
}

/// `leader_election_master_status{name}`: 1 while the fence of the elector
/// for Lease `name` is open, 0 otherwise, computed at each scrape.
#[derive(Debug, Clone)]
struct MasterStatus {
    gauge: IntGaugeVec,
    /// Each elector's Lease name and fence; a newer elector for the same
    /// name replaces the older one.
    fences: Arc<Mutex<Vec<(String, WriteFence)>>>,
}

impl LeaderMetrics {
    /// Creates the metrics and registers them on `registry`.
    ///
    /// # Errors
    /// [`Error::Metrics`] if they are already registered there.
    pub fn register(registry: &Registry) -> Result<Self> {
        let gauge = IntGaugeVec::new(
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
        let master_status = MasterStatus { gauge, fences: Arc::default() };
        registry.register(Box::new(master_status.clone())).map_err(Error::Metrics)?;
        registry.register(Box::new(slowpath.clone())).map_err(Error::Metrics)?;
        Ok(LeaderMetrics { master_status, slowpath })
    }

    /// Reports `master_status{name}` from `fence` from now on.
    pub(super) fn track(&self, name: &str, fence: WriteFence) {
        let mut fences = self.master_status.fences.lock().unwrap_or_else(PoisonError::into_inner);
        fences.retain(|(tracked, _)| tracked != name);
        fences.push((name.to_owned(), fence));
        self.master_status.gauge.with_label_values(&[name]).set(0);
    }

    pub(super) fn slowpath_exercised(&self, name: &str) {
        self.slowpath.with_label_values(&[name]).inc();
    }
}

impl Collector for MasterStatus {
    fn desc(&self) -> Vec<&Desc> {
        self.gauge.desc()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        for (name, fence) in self.fences.lock().unwrap_or_else(PoisonError::into_inner).iter() {
            self.gauge.with_label_values(&[name.as_str()]).set(i64::from(fence.is_open()));
        }
        self.gauge.collect()
    }
}
