//! Pod state as controllers judge it: active, ready, available after
//! `minReadySeconds` (upstream `pkg/api/v1/pod/util.go` and
//! `controller_utils.go` `IsPodActive`).

use std::time::Duration;

use jiff::Timestamp;
use kcm_objects::{ContainerStatus, Pod, PodCondition};

/// The `Ready` condition of a pod, if it reports one.
pub fn ready_condition(pod: &Pod) -> Option<&PodCondition> {
    pod.condition("Ready")
}

/// Whether the pod's `Ready` condition is `True` (upstream `IsPodReady`).
pub fn is_pod_ready(pod: &Pod) -> bool {
    ready_condition(pod).is_some_and(|c| c.status() == "True")
}

/// When the pod last became Ready, if it is Ready and the time is known.
pub fn ready_since(pod: &Pod) -> Option<Timestamp> {
    ready_condition(pod).filter(|c| c.status() == "True")?.last_transition_time()
}

/// The pod's phase, `""` when unset.
pub fn phase(pod: &Pod) -> &str {
    pod.phase()
}

/// Whether the pod reached `Succeeded` or `Failed`.
pub fn is_pod_terminal(pod: &Pod) -> bool {
    matches!(phase(pod), "Succeeded" | "Failed")
}

/// Not terminal and not being deleted: the pods a ReplicaSet counts
/// (upstream `IsPodActive`).
pub fn is_pod_active(pod: &Pod) -> bool {
    !is_pod_terminal(pod) && pod.metadata.deletion_timestamp().is_none()
}

/// Being deleted but not yet terminal (upstream `IsPodTerminating`).
pub fn is_pod_terminating(pod: &Pod) -> bool {
    !is_pod_terminal(pod) && pod.metadata.deletion_timestamp().is_some()
}

/// Ready, and Ready for strictly more than `min_ready_seconds` at `now`
/// (upstream `IsPodAvailable`). With `min_ready_seconds > 0` a Ready pod
/// with no transition time is not available.
///
/// Example: Ready at 12:00:00 with `minReadySeconds = 10` is not available
/// at 12:00:10 and is at 12:00:10.000000001.
pub fn is_pod_available(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> bool {
    if !is_pod_ready(pod) {
        return false;
    }
    if min_ready_seconds <= 0 {
        return true;
    }
    available_at(pod, min_ready_seconds).is_some_and(|at| at < now)
}

/// When a Ready pod stops being "Ready for less than `min_ready_seconds`".
fn available_at(pod: &Pod, min_ready_seconds: i32) -> Option<Timestamp> {
    let since = ready_since(pod)?;
    since.checked_add(Duration::from_secs(u64::try_from(min_ready_seconds).ok()?)).ok()
}

/// How long until a Ready pod becomes available, if it will and has not yet
/// (upstream `nextPodAvailabilityCheck`).
pub fn next_availability_check(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> Option<Duration> {
    if min_ready_seconds <= 0 || !is_pod_ready(pod) {
        return None;
    }
    let at = available_at(pod, min_ready_seconds)?;
    let wait = now.duration_until(at);
    (wait.is_positive()).then(|| Duration::try_from(wait).ok()).flatten()
}

/// The names of the pod's sidecars: its init containers with
/// `restartPolicy: Always`.
pub fn sidecar_names(pod: &Pod) -> Vec<&str> {
    let init = pod.spec.rare().init_containers.iter();
    init.filter(|c| c.restart_policy.as_deref() == Some("Always")).map(|c| c.name.as_str()).collect()
}

/// The highest restart count of the regular containers, then of the sidecars
/// (init containers with `restartPolicy: Always`), as upstream compares them.
pub fn max_container_restarts(pod: &Pod) -> (i32, i32) {
    let status = &pod.status;
    let regular = status.container_statuses.iter().map(|c| c.restart_count).max().unwrap_or(0).max(0);
    let sidecars = sidecar_names(pod);
    let sidecar = status
        .rare()
        .init_container_statuses
        .iter()
        .filter(|c| sidecars.contains(&c.name.as_str()))
        .map(|c| c.restart_count)
        .max()
        .unwrap_or(0)
        .max(0);
    (regular, sidecar)
}

/// Terminal, or deleted with no container running (upstream
/// `volumeutil.IsPodTerminated`).
pub fn is_pod_terminated(pod: &Pod) -> bool {
    let status = &pod.status;
    let not_running = |statuses: &[ContainerStatus]| statuses.iter().all(|s| s.terminated.is_some() || s.waiting);
    is_pod_terminal(pod)
        || pod.metadata.deletion_timestamp().is_some()
            && not_running(&status.rare().init_container_statuses)
            && not_running(&status.container_statuses)
            && not_running(&status.rare().ephemeral_container_statuses)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{PodBuilder, ts};

    #[test]
    fn active_excludes_terminal_and_terminating() {
        let cases = [
            ("running", PodBuilder::new("p").phase("Running").build(), true),
            ("pending", PodBuilder::new("p").phase("Pending").build(), true),
            ("no phase", PodBuilder::new("p").build(), true),
            ("succeeded", PodBuilder::new("p").phase("Succeeded").build(), false),
            ("failed", PodBuilder::new("p").phase("Failed").build(), false),
            ("terminating", PodBuilder::new("p").phase("Running").deleting(ts(0)).build(), false),
        ];
        for (name, pod, want) in cases {
            assert_eq!(is_pod_active(&pod), want, "{name}");
        }
    }

    #[test]
    fn availability_is_strictly_after_min_ready_seconds() {
        let pod = PodBuilder::new("p").ready_since(ts(100)).build();
        let cases = [(0, ts(100), true), (10, ts(110), false), (10, ts(111), true), (10, ts(105), false)];
        for (mrs, now, want) in cases {
            assert_eq!(is_pod_available(&pod, mrs, now), want, "mrs={mrs} now={now}");
        }
        let not_ready = PodBuilder::new("p").not_ready().build();
        assert!(!is_pod_available(&not_ready, 0, ts(0)));
    }

    #[test]
    fn next_availability_check_counts_down() {
        let pod = PodBuilder::new("p").ready_since(ts(100)).build();
        assert_eq!(next_availability_check(&pod, 10, ts(104)), Some(Duration::from_secs(6)));
        assert_eq!(next_availability_check(&pod, 10, ts(110)), None);
        assert_eq!(next_availability_check(&pod, 0, ts(104)), None);
    }
}
