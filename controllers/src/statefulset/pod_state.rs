//! How the StatefulSet controller judges one of its pods (upstream
//! `stateful_set_utils.go`): created, running and ready, available after
//! `minReadySeconds`, healthy, terminating, failed or succeeded, and the
//! revision it was made from (its `controller-revision-hash` label).

use jiff::Timestamp;
use kcm_objects::Pod;

use super::REVISION_LABEL;
use crate::common::pod::{is_pod_available, is_pod_ready};

/// The API server holds it: its phase is set (upstream `isCreated`). A pod
/// the sync plans to create has no phase.
pub fn is_created(pod: &Pod) -> bool {
    !pod.phase().is_empty()
}

/// Phase `Running` and condition Ready (upstream `isRunningAndReady`).
pub fn is_running_and_ready(pod: &Pod) -> bool {
    pod.phase() == "Running" && is_pod_ready(pod)
}

/// Ready for more than `min_ready_seconds` (upstream
/// `isRunningAndAvailable`, which despite its name reads only the Ready
/// condition, as `IsPodAvailable` does).
pub fn is_running_and_available(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> bool {
    is_pod_available(pod, min_ready_seconds, now)
}

/// Being deleted (upstream `isTerminating`).
pub fn is_terminating(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp().is_some()
}

/// Running, Ready and not being deleted (upstream `isHealthy`).
pub fn is_healthy(pod: &Pod) -> bool {
    is_running_and_ready(pod) && !is_terminating(pod)
}

/// Not available, or being deleted: what the maxUnavailable budget counts
/// (upstream `isUnavailable`).
pub fn is_unavailable(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> bool {
    !is_running_and_available(pod, min_ready_seconds, now) || is_terminating(pod)
}

/// Phase `Failed` (upstream `isFailed`).
pub fn is_failed(pod: &Pod) -> bool {
    pod.phase() == "Failed"
}

/// Phase `Succeeded` (upstream `isSucceeded`).
pub fn is_succeeded(pod: &Pod) -> bool {
    pod.phase() == "Succeeded"
}

/// Phase `Pending` (upstream `isPending`).
pub fn is_pending(pod: &Pod) -> bool {
    pod.phase() == "Pending"
}

/// The revision the pod was made from, `""` when unlabelled (upstream
/// `getPodRevision`).
pub fn pod_revision(pod: &Pod) -> &str {
    pod.metadata.labels.get(REVISION_LABEL).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::statefulset::testing::{SetBuilder, member};
    use crate::testing::ts;

    #[test]
    fn test_is_running_and_ready() {
        let set = SetBuilder::new(1).build();
        let pending = member(&set, 0).phase("Pending").build();
        assert!(!is_running_and_ready(&pending));
        let running = member(&set, 0).phase("Running").build();
        assert!(!is_running_and_ready(&running), "running but not ready");
        let ready = member(&set, 0).ready_since(ts(100)).build();
        assert!(is_running_and_ready(&ready));
        assert!(is_healthy(&ready));
        let deleting = member(&set, 0).ready_since(ts(100)).deleting(ts(200)).build();
        assert!(!is_healthy(&deleting) && is_running_and_ready(&deleting));
    }

    #[test]
    fn test_is_running_and_available() {
        let set = SetBuilder::new(1).build();
        let pod = member(&set, 0).ready_since(ts(100)).build();
        assert!(is_running_and_available(&pod, 0, ts(100)));
        assert!(!is_running_and_available(&pod, 10, ts(110)));
        assert!(is_running_and_available(&pod, 10, ts(111)));
        assert!(is_unavailable(&pod, 10, ts(105)));
        assert!(!is_unavailable(&pod, 10, ts(111)));
    }

    #[test]
    fn test_is_created_and_phases() {
        let set = SetBuilder::new(1).build();
        assert!(!is_created(&member(&set, 0).phase("").build()));
        assert!(is_created(&member(&set, 0).phase("Pending").build()));
        assert!(is_failed(&member(&set, 0).phase("Failed").build()));
        assert!(is_succeeded(&member(&set, 0).phase("Succeeded").build()));
        assert!(is_pending(&member(&set, 0).phase("Pending").build()));
        assert_eq!(pod_revision(&member(&set, 0).revision("foo-1").build()), "foo-1");
    }
}
