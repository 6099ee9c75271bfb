//! One node's health, judged on the controller's clock (upstream
//! `tryUpdateNodeHealth` and its `nodeHealthMap`).
//!
//! The kubelet proves it is alive two ways: it posts NodeStatus (the Ready
//! condition's `lastHeartbeatTime` changes) and it renews the node's Lease
//! in `kube-node-lease` (its `spec.renewTime` moves forward). Neither
//! timestamp is compared with our clock: each is only a change detector.
//! When the controller *sees* a change it sets the node's probe time to its
//! own `now`; a node is unhealthy once `now > probe + grace`. This makes the
//! decision immune to clock skew between kubelets and the controller, and
//! means a restarted controller gives every node a fresh grace period
//! (nothing is remembered, so the first look counts as a change).
//!
//! Grace is `--node-monitor-grace-period` (50 s) for a node that has posted
//! a Ready condition, `--node-startup-grace-period` (1 m) for one that never
//! has (counted from its creation).
//!
//! An unhealthy node gets Ready, MemoryPressure, DiskPressure and
//! PIDPressure set to `Unknown` (NetworkUnavailable is the network
//! plugin's, never touched); if that changed the Ready condition, the
//! whole status is written back ([`Assessment::status_update`]).
//!
//! Worked example (grace 50 s): heartbeats at 0 s, 10 s, 20 s, then the
//! kubelet dies. The controller saw the 20 s heartbeat at 21 s (probe =
//! 21 s). At 71 s, `71 > 21 + 50` is false; at the pass at 76 s it is true:
//! the conditions go Unknown. If the Lease kept being renewed (the kubelet
//! is alive but status updates are rare), each renewal moves the probe and
//! the node stays healthy.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::NodeCondition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kcm_objects::Node;

/// Condition type `Ready`.
pub const READY: &str = "Ready";
/// Condition type `MemoryPressure`.
pub const MEMORY_PRESSURE: &str = "MemoryPressure";
/// Condition type `DiskPressure`.
pub const DISK_PRESSURE: &str = "DiskPressure";
/// Condition type `PIDPressure`.
pub const PID_PRESSURE: &str = "PIDPressure";
/// Condition type `NetworkUnavailable`.
pub const NETWORK_UNAVAILABLE: &str = "NetworkUnavailable";

/// Condition status `True`.
pub const TRUE: &str = "True";
/// Condition status `False`.
pub const FALSE: &str = "False";
/// Condition status `Unknown`.
pub const UNKNOWN: &str = "Unknown";

/// Reason of a condition the kubelet never posted.
pub const REASON_NEVER_UPDATED: &str = "NodeStatusNeverUpdated";
/// Message of a condition the kubelet never posted.
pub const MESSAGE_NEVER_UPDATED: &str = "Kubelet never posted node status.";
/// Reason of a condition the kubelet stopped posting.
pub const REASON_UNKNOWN: &str = "NodeStatusUnknown";
/// Message of a condition the kubelet stopped posting.
pub const MESSAGE_UNKNOWN: &str = "Kubelet stopped posting node status.";

/// The conditions set to Unknown on an unhealthy node, in upstream's order.
const MONITORED_CONDITIONS: [&str; 4] = [READY, MEMORY_PRESSURE, DISK_PRESSURE, PID_PRESSURE];

/// The grace periods (upstream `nodeMonitorGracePeriod`,
/// `nodeStartupGracePeriod`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grace {
    /// `--node-monitor-grace-period` (50 s).
    pub monitor: Duration,
    /// `--node-startup-grace-period` (1 m).
    pub startup: Duration,
}

impl Default for Grace {
    fn default() -> Self {
        Grace { monitor: Duration::from_secs(50), startup: Duration::from_secs(60) }
    }
}

/// What the controller remembers about one node between passes (upstream
/// `nodeHealthData`). All times are the controller's own clock.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeHealth {
    /// When the controller last saw the node prove it is alive.
    pub probe: Timestamp,
    /// When the controller last saw the Ready condition change.
    pub ready_transition: Timestamp,
    /// The Ready condition of the status last taken in (`None`: it had
    /// none).
    pub ready: Option<NodeCondition>,
    /// The Lease last taken in (`None`: none seen yet).
    pub lease: Option<SeenLease>,
}

/// What is remembered of a node's Lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenLease {
    /// Its `spec.renewTime` (`None` when unset).
    pub renew_time: Option<Timestamp>,
}

impl SeenLease {
    /// The parts of `lease` the controller compares.
    pub fn of(lease: &Lease) -> Self {
        SeenLease { renew_time: lease.spec.as_ref().and_then(|s| s.renew_time.as_ref()).map(|t| t.0) }
    }

    /// Whether `other` was renewed after this one (upstream
    /// `MicroTime.Before`: false when either time is unset).
    fn renewed_before(&self, other: &SeenLease) -> bool {
        matches!((self.renew_time, other.renew_time), (Some(a), Some(b)) if a < b)
    }
}

impl NodeHealth {
    /// A fresh entry: probe and transition `at`.
    fn fresh(at: Timestamp, ready: Option<NodeCondition>) -> Self {
        NodeHealth { probe: at, ready_transition: at, ready, lease: None }
    }

    /// The status of the remembered Ready condition (`None` when there is
    /// none).
    pub fn ready_status(&self) -> Option<&str> {
        self.ready.as_ref().map(|c| c.status.as_str())
    }

    /// Leaving the full-disruption mode: every node gets a fresh grace
    /// period from `now` (upstream resets probe and transition times).
    pub fn restart_grace(&mut self, now: Timestamp) {
        self.probe = now;
        self.ready_transition = now;
    }
}

/// The outcome of looking at one node (upstream `tryUpdateNodeHealth`'s
/// return values and its side effect on `nodeHealthMap`).
#[derive(Debug, Clone, PartialEq)]
pub struct Assessment {
    /// The grace period the node was judged with.
    pub grace: Duration,
    /// The Ready condition as observed, before any change (a fake Unknown
    /// one, dated at creation, when the node has none).
    pub observed_ready: NodeCondition,
    /// The Ready condition after this assessment (`None` when the node
    /// has none and is still within its startup grace).
    pub current_ready: Option<NodeCondition>,
    /// What to remember about the node: store it whether or not the
    /// status write below succeeds.
    pub health: NodeHealth,
    /// The node's conditions with the stale ones set to Unknown, to be
    /// written as its `status.conditions` (`PUT nodes/<name>/status` of the
    /// whole node, read live) when this changed the Ready condition. After
    /// a successful write, call [`Assessment::written`].
    pub status_update: Option<Vec<NodeCondition>>,
}

impl Assessment {
    /// The status write succeeded at `now`: remember the written Ready
    /// condition, keep the probe time, and count `now` as a transition.
    pub fn written(&mut self, now: Timestamp, lease: Option<&Lease>) {
        self.health = NodeHealth {
            probe: self.health.probe,
            ready_transition: now,
            ready: self.current_ready.clone(),
            lease: lease.map(SeenLease::of),
        };
        self.status_update = None;
    }

    /// Whether the node counts as ready after this assessment.
    pub fn is_ready(&self) -> bool {
        self.current_ready.as_ref().is_some_and(|c| c.status == TRUE)
    }
}

/// The node's condition of type `kind`.
pub fn condition<'a>(conditions: &'a [NodeCondition], kind: &str) -> Option<&'a NodeCondition> {
    conditions.iter().find(|c| c.type_ == kind)
}

/// Judges `node` at `now`, given its Lease in `kube-node-lease` (if any)
/// and what was remembered (`None` after a restart or for a new node).
pub fn assess(
    node: &Node,
    lease: Option<&Lease>,
    saved: Option<&NodeHealth>,
    now: Timestamp,
    grace: Grace,
) -> Assessment {
    let created = node.metadata.creation_timestamp();
    let current = condition(&node.status.conditions, READY).cloned();

    let (grace, observed_ready, remembered) = match &current {
        // The kubelet never posted a Ready condition: judge it from its
        // creation, with the startup grace.
        None => {
            let fake = NodeCondition {
                type_: READY.into(),
                status: UNKNOWN.into(),
                last_heartbeat_time: created.map(Time),
                last_transition_time: created.map(Time),
                ..NodeCondition::default()
            };
            let remembered = match saved {
                Some(s) => NodeHealth { ready: None, ..s.clone() },
                None => NodeHealth::fresh(created.unwrap_or(Timestamp::UNIX_EPOCH), None),
            };
            (grace.startup, fake, Some(remembered))
        }
        Some(ready) => (grace.monitor, ready.clone(), saved.cloned()),
    };

    let mut health = match (remembered, &current) {
        // First look (a new node, or a restarted controller): a full grace
        // period from now.
        (None, _) => NodeHealth::fresh(now, current.clone()),
        (Some(h), Some(cur)) => match &h.ready {
            // The node posted its first Ready condition.
            None => NodeHealth::fresh(now, current.clone()),
            // A new heartbeat: probe now; a transition if the kubelet
            // reports one.
            Some(seen) if seen.last_heartbeat_time != cur.last_heartbeat_time => NodeHealth {
                probe: now,
                ready_transition: if seen.last_transition_time != cur.last_transition_time {
                    now
                } else {
                    h.ready_transition
                },
                ready: current.clone(),
                lease: h.lease,
            },
            Some(_) => h,
        },
        (Some(h), None) => h,
    };

    // A renewed Lease is as good as a heartbeat.
    if let Some(observed) = lease.map(SeenLease::of)
        && health.lease.as_ref().is_none_or(|seen| seen.renewed_before(&observed))
    {
        health.lease = Some(observed);
        health.probe = now;
    }

    let mut assessment = Assessment { grace, observed_ready, current_ready: current, health, status_update: None };
    let deadline = assessment.health.probe.checked_add(SignedDuration::try_from(grace).unwrap_or(SignedDuration::MAX));
    if deadline.is_ok_and(|d| now <= d) {
        return assessment;
    }

    let mut conditions = node.status.conditions.to_vec();
    for kind in MONITORED_CONDITIONS {
        match conditions.iter_mut().find(|c| c.type_ == kind) {
            None => conditions.push(NodeCondition {
                type_: kind.into(),
                status: UNKNOWN.into(),
                reason: Some(REASON_NEVER_UPDATED.into()),
                message: Some(MESSAGE_NEVER_UPDATED.into()),
                last_heartbeat_time: created.map(Time),
                last_transition_time: Some(Time(now)),
            }),
            Some(c) if c.status != UNKNOWN => {
                c.status = UNKNOWN.into();
                c.reason = Some(REASON_UNKNOWN.into());
                c.message = Some(MESSAGE_UNKNOWN.into());
                c.last_transition_time = Some(Time(now));
            }
            Some(_) => {}
        }
    }
    let current_ready = condition(&conditions, READY).cloned();
    if current_ready.as_ref() != Some(&assessment.observed_ready) {
        assessment.current_ready = current_ready;
        assessment.status_update = Some(conditions);
    }
    assessment
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::testing::{NodeBuilder, lease, ts};

    const GRACE: Grace = Grace { monitor: Duration::from_secs(50), startup: Duration::from_secs(60) };

    fn statuses(a: &Assessment) -> Vec<(String, String, Option<String>)> {
        a.status_update.iter().flatten().map(|c| (c.type_.clone(), c.status.clone(), c.reason.clone())).collect()
    }

    #[test]
    fn a_first_look_gives_a_full_grace_period_from_now() {
        // Controller restart: the node's last heartbeat is an hour old, but
        // nothing is remembered, so the probe is now.
        let node = NodeBuilder::new("n1").ready(TRUE, ts(0)).build();
        let a = assess(&node, None, None, ts(3600), GRACE);
        assert_eq!(a.health.probe, ts(3600));
        assert_eq!(a.health.ready_transition, ts(3600));
        assert!(a.status_update.is_none() && a.is_ready());
        // Still healthy at the end of the grace period, Unknown just after.
        let a = assess(&node, None, Some(&a.health), ts(3650), GRACE);
        assert!(a.status_update.is_none());
        let a = assess(&node, None, Some(&a.health), ts(3651), GRACE);
        assert_eq!(a.current_ready.as_ref().map(|c| c.status.as_str()), Some(UNKNOWN));
        assert_eq!(a.observed_ready.status, TRUE, "observed is the pre-update condition");
    }

    #[test]
    fn heartbeats_move_the_probe_and_transitions_are_dated_locally() {
        let t = |hb, tr, now, saved: Option<&NodeHealth>| {
            let node = NodeBuilder::new("n1").ready_at(TRUE, ts(hb), ts(tr)).build();
            assess(&node, None, saved, ts(now), GRACE).health
        };
        let h0 = t(0, 0, 5, None);
        // Same heartbeat: nothing moves.
        assert_eq!(t(0, 0, 30, Some(&h0)), h0);
        // New heartbeat, same transition: probe only.
        let h1 = t(10, 0, 40, Some(&h0));
        assert_eq!((h1.probe, h1.ready_transition), (ts(40), ts(5)));
        // New heartbeat with a new transition: both.
        let h2 = t(20, 20, 45, Some(&h1));
        assert_eq!((h2.probe, h2.ready_transition), (ts(45), ts(45)));
    }

    #[test]
    fn a_silent_node_goes_unknown_with_upstreams_reasons() {
        let node = NodeBuilder::new("n1")
            .ready(TRUE, ts(0))
            .condition(MEMORY_PRESSURE, FALSE)
            .condition(DISK_PRESSURE, FALSE)
            .condition(NETWORK_UNAVAILABLE, FALSE)
            .build();
        let saved = assess(&node, None, None, ts(10), GRACE).health;
        let a = assess(&node, None, Some(&saved), ts(61), GRACE);
        let unknown = |k: &str| (k.to_owned(), UNKNOWN.to_owned(), Some(REASON_UNKNOWN.to_owned()));
        assert_eq!(
            statuses(&a),
            vec![
                unknown(READY),
                unknown(MEMORY_PRESSURE),
                unknown(DISK_PRESSURE),
                (NETWORK_UNAVAILABLE.into(), FALSE.into(), None),
                (PID_PRESSURE.into(), UNKNOWN.into(), Some(REASON_NEVER_UPDATED.into())),
            ]
        );
        let status = a.status_update.clone().unwrap();
        let ready = condition(&status, READY).unwrap();
        assert_eq!(ready.message.as_deref(), Some(MESSAGE_UNKNOWN));
        assert_eq!(ready.last_transition_time, Some(Time(ts(61))));
        assert_eq!(ready.last_heartbeat_time, Some(Time(ts(0))), "the heartbeat is left alone");
        let pid = condition(&status, PID_PRESSURE).unwrap();
        assert_eq!(pid.message.as_deref(), Some(MESSAGE_NEVER_UPDATED));
        assert_eq!(pid.last_heartbeat_time, Some(Time(ts(0))), "dated at creation");
    }

    #[test]
    fn after_the_write_nothing_more_is_written() {
        let node = NodeBuilder::new("n1").ready(TRUE, ts(0)).build();
        let saved = assess(&node, None, None, ts(0), GRACE).health;
        let mut a = assess(&node, None, Some(&saved), ts(51), GRACE);
        assert!(a.status_update.is_some());
        let mut written = node.clone();
        written.status.conditions = a.status_update.clone().unwrap().into();
        a.written(ts(51), None);
        assert_eq!(a.health.ready_transition, ts(51));
        assert_eq!(a.health.probe, ts(0));
        // The informer now shows the Unknown status: no second write.
        let b = assess(&written, None, Some(&a.health), ts(56), GRACE);
        assert!(b.status_update.is_none());
        assert_eq!(b.observed_ready.status, UNKNOWN);
        // The kubelet comes back: new heartbeat, Ready True again.
        let back = NodeBuilder::new("n1").ready_at(TRUE, ts(70), ts(70)).build();
        let c = assess(&back, None, Some(&b.health), ts(71), GRACE);
        assert!(c.is_ready() && c.status_update.is_none());
        assert_eq!((c.health.probe, c.health.ready_transition), (ts(71), ts(71)));
    }

    #[test]
    fn a_node_that_only_renews_its_lease_stays_healthy() {
        let node = NodeBuilder::new("n1").ready(TRUE, ts(0)).build();
        let mut health = assess(&node, Some(&lease("n1", ts(0))), None, ts(0), GRACE).health;
        // Ten minutes of Lease renewals every 10 s, no NodeStatus at all.
        for t in (10..=600).step_by(10) {
            let a = assess(&node, Some(&lease("n1", ts(t))), Some(&health), ts(t), GRACE);
            assert!(a.status_update.is_none() && a.is_ready(), "healthy at {t}s");
            health = a.health;
        }
        // The same Lease seen again does not count; after the grace it is
        // Unknown.
        let a = assess(&node, Some(&lease("n1", ts(600))), Some(&health), ts(651), GRACE);
        assert_eq!(a.current_ready.map(|c| c.status), Some(UNKNOWN.into()));
    }

    #[test]
    fn a_lease_with_no_renew_time_counts_once() {
        let node = NodeBuilder::new("n1").ready(TRUE, ts(0)).build();
        let mut l = lease("n1", ts(0));
        l.spec.as_mut().unwrap().renew_time = None;
        let h = assess(&node, Some(&l), None, ts(0), GRACE).health;
        let a = assess(&node, Some(&l), Some(&h), ts(51), GRACE);
        assert!(a.status_update.is_some());
    }

    #[test]
    fn a_node_that_never_posted_status_gets_the_startup_grace_from_creation() {
        let node = NodeBuilder::new("n1").created(ts(100)).build();
        let a = assess(&node, None, None, ts(130), GRACE);
        assert_eq!(a.grace, GRACE.startup);
        assert_eq!(a.health.probe, ts(100));
        assert!(a.current_ready.is_none() && a.status_update.is_none());
        let a = assess(&node, None, Some(&a.health), ts(161), GRACE);
        assert_eq!(
            statuses(&a),
            [READY, MEMORY_PRESSURE, DISK_PRESSURE, PID_PRESSURE].map(|k| (
                k.to_owned(),
                UNKNOWN.to_owned(),
                Some(REASON_NEVER_UPDATED.to_owned())
            ))
        );
        // Its first Ready condition gives it a fresh probe.
        let posted = NodeBuilder::new("n1").created(ts(100)).ready(TRUE, ts(170)).build();
        let b = assess(&posted, None, Some(&a.health), ts(171), GRACE);
        assert_eq!(b.health.probe, ts(171));
        assert!(b.is_ready());
    }

    #[test]
    fn leaving_full_disruption_restarts_the_grace() {
        let node = NodeBuilder::new("n1").ready(TRUE, ts(0)).build();
        let mut h = assess(&node, None, None, ts(0), GRACE).health;
        h.restart_grace(ts(500));
        assert!(assess(&node, None, Some(&h), ts(540), GRACE).status_update.is_none());
    }
}
