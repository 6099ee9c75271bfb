//! Replica counts summed over ReplicaSets (upstream `deployment_util.go`
//! `Get*ReplicaCountForReplicaSets`), saturating so that absurd but valid
//! counts never panic a sync. A leaf: the fenceposts, the status and every
//! rollout path count with it.

use kcm_objects::ReplicaSet;

use crate::common::replica_set::replicas as rs_replicas;

/// `status.replicas`, `status.readyReplicas` and `status.availableReplicas`
/// (unset: 0).
fn status_of(rs: &ReplicaSet) -> (i32, i32, i32) {
    let s = rs.status.as_ref();
    (
        s.map_or(0, |s| s.replicas),
        s.and_then(|s| s.ready_replicas).unwrap_or(0),
        s.and_then(|s| s.available_replicas).unwrap_or(0),
    )
}

/// A sum of replica counts that saturates instead of overflowing (absurd
/// but valid counts near `i32::MAX` must not panic the sync).
pub(super) fn total(counts: impl IntoIterator<Item = i32>) -> i32 {
    counts.into_iter().fold(0, i32::saturating_add)
}

/// Σ `status.availableReplicas` (upstream
/// `GetAvailableReplicaCountForReplicaSets`).
pub(super) fn available_count(rss: &[&ReplicaSet]) -> i32 {
    total(rss.iter().map(|rs| status_of(rs).2))
}

/// Σ `status.readyReplicas` (upstream `GetReadyReplicaCountForReplicaSets`).
pub(super) fn ready_count(rss: &[&ReplicaSet]) -> i32 {
    total(rss.iter().map(|rs| status_of(rs).1))
}

/// Σ `status.replicas` (upstream `GetActualReplicaCountForReplicaSets`).
pub(super) fn actual_count(rss: &[&ReplicaSet]) -> i32 {
    total(rss.iter().map(|rs| status_of(rs).0))
}

/// Σ `spec.replicas` (upstream `GetReplicaCountForReplicaSets`).
pub(super) fn spec_count(rss: &[&ReplicaSet]) -> i32 {
    total(rss.iter().map(|rs| rs_replicas(rs)))
}

/// Σ `status.terminatingReplicas`, or `None` when an observed ReplicaSet
/// does not report it (upstream `GetTerminatingReplicaCountForReplicaSets`).
pub(super) fn terminating_count(rss: &[&ReplicaSet]) -> Option<i32> {
    let mut total = 0;
    for rs in rss {
        let status = rs.status.as_ref();
        match status.and_then(|s| s.terminating_replicas) {
            Some(n) => total += n,
            None if status.and_then(|s| s.observed_generation).unwrap_or(0) == 0 => {}
            None => return None,
        }
    }
    Some(total)
}
