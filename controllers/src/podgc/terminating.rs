//! Terminating pods no kubelet will finish deleting: on an out-of-service
//! node (upstream `gcTerminating`), or bound to no node at all (upstream
//! `gcUnscheduledTerminating`).
//!
//! A node is out of service when it is not Ready (its `Ready` condition is
//! absent or not `True`) and carries the `node.kubernetes.io/out-of-service`
//! taint, with any value and effect: an administrator's statement that the
//! node is shut down and its pods may go. A terminating pod whose node is
//! not in the cache is left to [`gc_orphaned`](super::gc_orphaned).

use jiff::Timestamp;
use kcm_objects::{Node, Pod};

use super::{ForceDelete, Reason, Snapshot, TAINT_OUT_OF_SERVICE, force_delete};

/// The terminating pods on out-of-service nodes, oldest first (upstream
/// sorts them as the terminated ones; they are deleted together).
pub fn gc_terminating(snapshot: &Snapshot<'_>, now: Timestamp) -> Vec<ForceDelete> {
    let mut pods: Vec<&Pod> = snapshot
        .pods
        .iter()
        .copied()
        .filter(|pod| pod.metadata.deletion_timestamp().is_some())
        .filter(|pod| {
            let node = pod.node_name().and_then(|n| snapshot.nodes.get(n));
            node.is_some_and(|node| out_of_service(node))
        })
        .collect();
    pods.sort_by(|a, b| super::deletion_order(a, b));
    pods.into_iter().map(|pod| force_delete(pod, Reason::OutOfService, None, now)).collect()
}

/// The terminating pods bound to no node, in the snapshot's order.
pub fn gc_unscheduled_terminating(snapshot: &Snapshot<'_>, now: Timestamp) -> Vec<ForceDelete> {
    snapshot
        .pods
        .iter()
        .copied()
        .filter(|pod| pod.metadata.deletion_timestamp().is_some() && pod.node_name().is_none())
        .map(|pod| force_delete(pod, Reason::Unscheduled, None, now))
        .collect()
}

/// Not Ready (upstream `nodeutil.IsNodeReady` false) and tainted
/// out-of-service (upstream `taints.TaintKeyExists`).
fn out_of_service(node: &Node) -> bool {
    let ready = node.condition("Ready").is_some_and(|c| c.status == "True");
    !ready && node.spec.taints.iter().any(|t| t.key == TAINT_OUT_OF_SERVICE)
}
