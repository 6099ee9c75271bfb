//! Pods bound to a node that no longer exists (upstream `gcOrphaned`).
//!
//! A node missing from the cache may only be late to arrive there, so it
//! is first quarantined: upstream puts its name on a delaying queue for
//! [`QUARANTINE_TIME`], and a pass that finds it come out of the queue
//! still missing from the cache reads it live; only a NotFound makes its
//! pods orphans. The [`Quarantine`] is that queue as state:
//! - a node name waits until its time (a name already waiting keeps its
//!   earlier time, as the delaying queue does);
//! - at each pass, the names whose time has come are ready; every name
//!   still bound by some pod to an uncached node is (re)quarantined, even
//!   one just ready, so a node whose live read fails or finds it is looked
//!   at again a quarantine later;
//! - the ready names are all taken by the pass: those back in the cache
//!   are dropped, the others are read live by the driver.
//!
//! With passes every 20 s, a node deleted just before a pass has its pods
//! deleted 40 s later; one deleted just after, 60 s later.

use std::collections::{BTreeSet, HashMap};

use jiff::Timestamp;
use k8s_openapi::api::core::v1::PodCondition;

use super::{
    DISRUPTION_REASON, DISRUPTION_TARGET, ForceDelete, ORPHANED_MESSAGE, QUARANTINE_TIME, Reason, Snapshot,
    force_delete,
};

/// The quarantined node names (upstream's `orphaned_pods_nodes` delaying
/// queue).
#[derive(Clone, Debug, Default)]
pub struct Quarantine {
    /// Names still waiting, with the time their quarantine ends.
    waiting: HashMap<String, Timestamp>,
    /// Names whose quarantine has ended, for the next pass to take.
    ready: BTreeSet<String>,
}

impl Quarantine {
    /// The first half of upstream's `gcOrphaned` at `now`: quarantines the
    /// node of every pod bound to a node missing from the cache, then takes
    /// every name whose quarantine has ended. Answers the names still
    /// missing from the cache: the driver reads each live, and passes those
    /// found gone (NotFound) to [`gc_orphaned`]. A failed read decides
    /// nothing; the node is looked at again a quarantine later.
    pub fn observe(&mut self, snapshot: &Snapshot<'_>, now: Timestamp) -> Vec<String> {
        let due: Vec<String> = self.waiting.iter().filter(|(_, at)| **at <= now).map(|(n, _)| n.clone()).collect();
        for name in due {
            self.waiting.remove(&name);
            self.ready.insert(name);
        }
        let until = now.checked_add(QUARANTINE_TIME).unwrap_or(Timestamp::MAX);
        for node in snapshot.pods.iter().filter_map(|p| p.node_name()) {
            if !snapshot.nodes.contains_key(node) && !self.waiting.contains_key(node) {
                self.waiting.insert(node.to_owned(), until);
            }
        }
        std::mem::take(&mut self.ready).into_iter().filter(|n| !snapshot.nodes.contains_key(n.as_str())).collect()
    }
}

/// The second half of upstream's `gcOrphaned`: every pod bound to one of
/// the `deleted` nodes, in the snapshot's order, marked `Failed` with the
/// `DisruptionTarget` condition unless terminal.
pub fn gc_orphaned(snapshot: &Snapshot<'_>, deleted: &BTreeSet<String>, now: Timestamp) -> Vec<ForceDelete> {
    snapshot
        .pods
        .iter()
        .copied()
        .filter(|pod| pod.node_name().is_some_and(|n| deleted.contains(n)))
        .map(|pod| force_delete(pod, Reason::Orphaned, Some(orphaned_condition()), now))
        .collect()
}

/// The `DisruptionTarget` condition of an orphaned pod.
fn orphaned_condition() -> PodCondition {
    PodCondition {
        type_: DISRUPTION_TARGET.into(),
        status: "True".into(),
        reason: Some(DISRUPTION_REASON.into()),
        message: Some(ORPHANED_MESSAGE.into()),
        ..PodCondition::default()
    }
}
