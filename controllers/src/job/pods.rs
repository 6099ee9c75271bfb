//! What the Job controller reads of its pods: the tracking finalizer,
//! failed and finished pods as it counts them, the pods it deletes first
//! (upstream `job_controller.go` `isPodFailed`, `onlyReplaceFailedPods`,
//! `pastBackoffLimitOnFailure`, `activePodsForRemoval`, and
//! `controller_utils.go` `ActivePods`).

use std::cmp::Ordering;

use k8s_openapi::api::batch::v1::Job;
use kcm_objects::Pod;

use crate::common::pod::{is_pod_ready, max_container_restarts, phase, ready_since};

/// The finalizer the Job controller puts on every pod it creates or adopts
/// and removes once it counted the pod (`batch.JobTrackingFinalizer`).
pub const TRACKING_FINALIZER: &str = "batch.kubernetes.io/job-tracking";

/// `spec.podReplacementPolicy` value: replace a pod only once it failed.
pub const REPLACE_FAILED: &str = "Failed";

/// Whether the pod carries [`TRACKING_FINALIZER`].
pub fn has_tracking_finalizer(pod: &Pod) -> bool {
    pod.metadata.finalizers().iter().any(|f| &**f == TRACKING_FINALIZER)
}

/// The strategic merge patch that removes [`TRACKING_FINALIZER`] from a pod
/// and leaves its other finalizers (upstream `removeTrackingFinalizerPatch`).
pub fn remove_tracking_finalizer_patch() -> serde_json::Value {
    serde_json::json!({"metadata": {"$deleteFromPrimitiveList/finalizers": [TRACKING_FINALIZER]}})
}

/// Whether the Job recreates a pod only once it has failed, not while it
/// terminates: `podReplacementPolicy: Failed`, or any pod failure policy
/// (upstream `onlyReplaceFailedPods`).
pub fn only_replace_failed_pods(job: &Job) -> bool {
    let spec = job.spec.as_ref();
    spec.and_then(|s| s.pod_replacement_policy.as_deref()) == Some(REPLACE_FAILED)
        || spec.is_some_and(|s| s.pod_failure_policy.is_some())
}

/// Whether the Job counts the pod as failed (upstream `isPodFailed`): phase
/// `Failed`; or, unless only failed pods are replaced, being deleted before
/// it succeeded (an orphan may never reach `Failed`).
pub fn is_pod_failed(pod: &Pod, job: &Job) -> bool {
    if phase(pod) == "Failed" {
        return true;
    }
    if only_replace_failed_pods(job) {
        return false;
    }
    pod.metadata.deletion_timestamp().is_some() && phase(pod) != "Succeeded"
}

/// `restartPolicy: OnFailure` and the restarts of the containers of the
/// Pending and Running pods reached `spec.backoffLimit` (more than 0 when
/// the limit is 0), upstream `pastBackoffLimitOnFailure`.
///
/// Example: backoffLimit 2, two running pods with 1 restart each: past.
pub fn past_backoff_limit_on_failure(job: &kcm_objects::Job, pods: &[&Pod]) -> bool {
    let Some(spec) = job.spec.as_ref() else { return false };
    if job.restart_policy().as_deref() != Some("OnFailure") {
        return false;
    }
    let restarts: i64 = pods
        .iter()
        .filter(|p| matches!(phase(p), "Running" | "Pending"))
        .flat_map(|p| p.status.rare().init_container_statuses.iter().chain(p.status.container_statuses.iter()))
        .map(|c| i64::from(c.restart_count))
        .sum();
    let limit = i64::from(spec.backoff_limit.unwrap_or(6));
    if limit == 0 { restarts > 0 } else { restarts >= limit }
}

/// Upstream `ActivePods.Less`, the order in which a Job deletes its extra
/// pods (first = deleted first):
/// 1. unscheduled before scheduled;
/// 2. `Pending` before `Unknown` before `Running`;
/// 3. not Ready before Ready;
/// 4. both Ready: Ready for less time first (an unknown time first);
/// 5. more container restarts first (regular containers, then sidecars);
/// 6. created more recently first (an unknown time first).
pub fn active_pods_order(a: &Pod, b: &Pod) -> Ordering {
    let (na, nb) = (a.node_name().unwrap_or(""), b.node_name().unwrap_or(""));
    if na != nb && (na.is_empty() || nb.is_empty()) {
        return if na.is_empty() { Ordering::Less } else { Ordering::Greater };
    }
    let ordinal = |p: &Pod| match phase(p) {
        "Pending" => 0,
        "Unknown" => 1,
        "Running" => 2,
        _ => 3,
    };
    let by_phase = ordinal(a).cmp(&ordinal(b));
    if by_phase != Ordering::Equal {
        return by_phase;
    }
    let (ra, rb) = (is_pod_ready(a), is_pod_ready(b));
    if ra != rb {
        return if ra { Ordering::Greater } else { Ordering::Less };
    }
    if ra {
        let by_ready = later_or_unknown_first(ready_since(a), ready_since(b));
        if by_ready != Ordering::Equal {
            return by_ready;
        }
    }
    let (xa, xb) = (max_container_restarts(a), max_container_restarts(b));
    if xa != xb {
        return xb.cmp(&xa);
    }
    later_or_unknown_first(a.metadata.creation_timestamp(), b.metadata.creation_timestamp())
}

fn later_or_unknown_first(a: Option<jiff::Timestamp>, b: Option<jiff::Timestamp>) -> Ordering {
    match (a, b) {
        (a, b) if a == b => Ordering::Equal,
        (None, _) => Ordering::Less,
        (_, None) => Ordering::Greater,
        (Some(a), Some(b)) => b.cmp(&a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{PodBuilder, ts};

    /// Upstream `TestSortingActivePods`, pairwise: the first pod of each
    /// pair is deleted first.
    #[test]
    fn sorting_active_pods() {
        let base = || PodBuilder::new("x").node("n").phase("Running").ready_since(ts(100)).created(ts(10));
        let cases = [
            ("unscheduled first", base().node(""), base()),
            ("pending before unknown", base().phase("Pending"), base().phase("Unknown")),
            ("unknown before running", base().phase("Unknown"), base()),
            ("not ready first", base().not_ready(), base()),
            ("ready for less time first", base().ready_since(ts(200)), base()),
            ("more restarts first", base().restarts(2), base().restarts(1)),
            ("newer first", base().created(ts(20)), base()),
        ];
        for (name, first, second) in cases {
            let (first, second) = (first.build(), second.build());
            assert_eq!(active_pods_order(&first, &second), Ordering::Less, "{name}");
            assert_eq!(active_pods_order(&second, &first), Ordering::Greater, "{name}");
        }
    }
}
