//! The terminated pods beyond the threshold (upstream `gcTerminated`).
//!
//! With `--terminated-pod-gc-threshold` N > 0 and T terminated pods in the
//! cluster, the T − N first in [`deletion_order`] go: evicted pods first
//! (so the terminated pods of controllers are kept longest), then the
//! oldest by creation time, then by name. For example, threshold 1 and
//! pods a (Failed, 1:00), b (Succeeded, 2:00), c (Failed, 3:00, evicted):
//! c and a are deleted, b is kept.

use std::cmp::Ordering;

use jiff::Timestamp;
use kcm_objects::Pod;

use super::{EVICTED_REASON, ForceDelete, Reason, Snapshot, force_delete, is_terminated};

/// The terminated pods to delete so that `threshold` are left; none when
/// `threshold` is 0 or less (the part is off, as upstream's `gc` skips it).
pub fn gc_terminated(snapshot: &Snapshot<'_>, threshold: i32, now: Timestamp) -> Vec<ForceDelete> {
    let Ok(keep) = usize::try_from(threshold) else { return Vec::new() };
    if keep == 0 {
        return Vec::new();
    }
    let mut terminated: Vec<&Pod> = snapshot.pods.iter().copied().filter(|p| is_terminated(p)).collect();
    let Some(excess) = terminated.len().checked_sub(keep).filter(|n| *n > 0) else { return Vec::new() };
    terminated.sort_by(|a, b| deletion_order(a, b));
    terminated.into_iter().take(excess).map(|pod| force_delete(pod, Reason::Terminated, None, now)).collect()
}

/// Which of two terminated pods goes first (upstream
/// `byEvictionAndCreationTimestamp`): an evicted pod (`Failed` with reason
/// `Evicted`) before one that is not, then the older, then the name.
pub fn deletion_order(a: &Pod, b: &Pod) -> Ordering {
    evicted(b)
        .cmp(&evicted(a))
        .then_with(|| created(a).cmp(&created(b)))
        .then_with(|| a.metadata.name.cmp(&b.metadata.name))
}

/// Upstream `eviction.PodIsEvicted`.
fn evicted(pod: &Pod) -> bool {
    pod.phase() == "Failed" && pod.status.rare().reason.as_deref() == Some(EVICTED_REASON)
}

/// The creation time; a pod without one sorts as the oldest, as Go's zero
/// time does.
fn created(pod: &Pod) -> Timestamp {
    pod.metadata.creation_timestamp().unwrap_or(Timestamp::MIN)
}
