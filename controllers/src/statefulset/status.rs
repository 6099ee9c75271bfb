//! The status a sync reports (upstream `computeReplicaStatus`,
//! `updateStatus`, `completeRollingUpdate`, `inconsistentStatus`):
//!
//! - `replicas`: created pods (a pod the sync is about to create is not);
//! - `readyReplicas`: Running and Ready; `availableReplicas`: of those,
//!   Ready for more than `minReadySeconds`;
//! - `currentReplicas`/`updatedReplicas`: created, not terminating pods
//!   labelled with the current/update revision;
//! - `currentRevision`, `updateRevision`, `collisionCount`,
//!   `observedGeneration` (the set's generation).
//!
//! When a RollingUpdate set has every pod updated and ready, the update
//! revision becomes the current one (the rollover). The status is written
//! only when it differs from the stored one in a field upstream compares.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetStatus};
use kcm_objects::Pod;

use super::pod_state::{is_created, is_running_and_available, is_running_and_ready, is_terminating, pod_revision};
use super::{min_ready_seconds, replicas, strategy_type};

/// The pod counts of `pods` (upstream `computeReplicaStatus` summed by
/// `updateStatus`), written into `status`.
pub fn count_pods<'a>(
    status: &mut StatefulSetStatus,
    pods: impl IntoIterator<Item = &'a Pod>,
    min_ready_seconds: i32,
    now: Timestamp,
) {
    let (mut replicas, mut ready, mut available, mut current, mut updated) = (0, 0, 0, 0, 0);
    let current_revision = status.current_revision.clone().unwrap_or_default();
    let update_revision = status.update_revision.clone().unwrap_or_default();
    for pod in pods {
        if is_created(pod) {
            replicas += 1;
        }
        if is_running_and_ready(pod) {
            ready += 1;
            if is_running_and_available(pod, min_ready_seconds, now) {
                available += 1;
            }
        }
        if is_created(pod) && !is_terminating(pod) {
            let revision = pod_revision(pod);
            current += i32::from(revision == current_revision);
            updated += i32::from(revision == update_revision);
        }
    }
    status.replicas = replicas;
    status.ready_replicas = Some(ready);
    status.available_replicas = Some(available);
    status.current_replicas = Some(current);
    status.updated_replicas = Some(updated);
}

/// Completes a rolling update (upstream `completeRollingUpdate`): a
/// RollingUpdate set with `spec.replicas` pods, all updated and ready, now
/// runs its update revision.
pub fn complete_rolling_update(set: &StatefulSet, status: &mut StatefulSetStatus) {
    let n = |v: Option<i32>| v.unwrap_or(0);
    let wanted = replicas(set);
    if strategy_type(set) == "RollingUpdate"
        && n(status.updated_replicas) == wanted
        && n(status.ready_replicas) == wanted
        && status.replicas == wanted
    {
        status.current_replicas = status.updated_replicas;
        status.current_revision = status.update_revision.clone();
    }
}

/// Whether `status` differs from the stored one where upstream looks
/// (upstream `inconsistentStatus`: not `collisionCount`, and
/// `observedGeneration` only when it grew).
pub fn inconsistent_status(set: &StatefulSet, status: &StatefulSetStatus) -> bool {
    let stored = set.status.clone().unwrap_or_default();
    status.observed_generation.unwrap_or(0) > stored.observed_generation.unwrap_or(0)
        || status.replicas != stored.replicas
        || status.current_replicas.unwrap_or(0) != stored.current_replicas.unwrap_or(0)
        || status.ready_replicas.unwrap_or(0) != stored.ready_replicas.unwrap_or(0)
        || status.updated_replicas.unwrap_or(0) != stored.updated_replicas.unwrap_or(0)
        || status.current_revision.as_deref().unwrap_or("") != stored.current_revision.as_deref().unwrap_or("")
        || status.available_replicas.unwrap_or(0) != stored.available_replicas.unwrap_or(0)
        || status.update_revision.as_deref().unwrap_or("") != stored.update_revision.as_deref().unwrap_or("")
}

/// Look again after `minReadySeconds` while fewer pods are available than
/// wanted (upstream `syncStatefulSet`'s `enqueueSSAfter`).
pub fn requeue_after(set: &StatefulSet, status: &StatefulSetStatus) -> Option<Duration> {
    let mrs = min_ready_seconds(set);
    (mrs > 0 && status.available_replicas.unwrap_or(0) != replicas(set))
        .then(|| Duration::from_secs(u64::try_from(mrs).unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::statefulset::testing::{SetBuilder, member};
    use crate::testing::ts;

    fn status(current: &str, update: &str) -> StatefulSetStatus {
        StatefulSetStatus {
            current_revision: Some(current.into()),
            update_revision: Some(update.into()),
            ..Default::default()
        }
    }

    #[test]
    fn counts_follow_upstreams_definitions() {
        let set = SetBuilder::new(4).build();
        let pods = [
            member(&set, 0).ready_since(ts(0)).revision("r1").build(),
            member(&set, 1).ready_since(ts(95)).revision("r2").build(),
            member(&set, 2).phase("Pending").revision("r2").build(),
            member(&set, 3).ready_since(ts(0)).revision("r1").deleting(ts(99)).build(),
            member(&set, 4).phase("").revision("r2").build(),
        ];
        let mut s = status("r1", "r2");
        count_pods(&mut s, &pods, 10, ts(100));
        assert_eq!(s.replicas, 4, "the pod with no phase is not created");
        assert_eq!(s.ready_replicas, Some(3));
        assert_eq!(s.available_replicas, Some(2), "ready 5s < minReadySeconds 10");
        assert_eq!(s.current_replicas, Some(1), "a terminating pod is neither current nor updated");
        assert_eq!(s.updated_replicas, Some(2));
    }

    /// Upstream `TestStatefulSetControlRollingUpdate`'s rollover: all
    /// updated and ready makes the update revision current.
    #[test]
    fn test_complete_rolling_update() {
        let set = SetBuilder::new(3).build();
        let mut s = status("r1", "r2");
        (s.replicas, s.updated_replicas, s.ready_replicas, s.current_replicas) = (3, Some(3), Some(3), Some(0));
        complete_rolling_update(&set, &mut s);
        assert_eq!((s.current_revision.as_deref(), s.current_replicas), (Some("r2"), Some(3)));

        let mut s = status("r1", "r2");
        (s.replicas, s.updated_replicas, s.ready_replicas) = (3, Some(3), Some(2));
        complete_rolling_update(&set, &mut s);
        assert_eq!(s.current_revision.as_deref(), Some("r1"), "one not ready");

        let mut s = status("r1", "r2");
        (s.replicas, s.updated_replicas, s.ready_replicas) = (2, Some(2), Some(2));
        complete_rolling_update(&set, &mut s);
        assert_eq!(s.current_revision.as_deref(), Some("r1"), "two of three replicas");

        let on_delete = SetBuilder::new(3).on_delete().build();
        let mut s = status("r1", "r2");
        (s.replicas, s.updated_replicas, s.ready_replicas) = (3, Some(3), Some(3));
        complete_rolling_update(&on_delete, &mut s);
        assert_eq!(s.current_revision.as_deref(), Some("r1"), "OnDelete never rolls over");
    }

    #[test]
    fn test_inconsistent_status() {
        let mut set = SetBuilder::new(3).build();
        let stored = StatefulSetStatus { observed_generation: Some(2), replicas: 3, ..status("r1", "r1") };
        set.status = Some(stored.clone());
        assert!(!inconsistent_status(&set, &stored));
        assert!(!inconsistent_status(&set, &StatefulSetStatus { observed_generation: Some(1), ..stored.clone() }));
        assert!(inconsistent_status(&set, &StatefulSetStatus { observed_generation: Some(3), ..stored.clone() }));
        assert!(inconsistent_status(&set, &StatefulSetStatus { available_replicas: Some(1), ..stored.clone() }));
        assert!(!inconsistent_status(&set, &StatefulSetStatus { collision_count: Some(4), ..stored }));
    }

    #[test]
    fn requeue_while_waiting_for_availability() {
        let set = SetBuilder::new(3).min_ready_seconds(30).build();
        let s = StatefulSetStatus { available_replicas: Some(2), ..Default::default() };
        assert_eq!(requeue_after(&set, &s), Some(Duration::from_secs(30)));
        let s = StatefulSetStatus { available_replicas: Some(3), ..Default::default() };
        assert_eq!(requeue_after(&set, &s), None);
        assert_eq!(requeue_after(&SetBuilder::new(3).build(), &StatefulSetStatus::default()), None);
    }
}
