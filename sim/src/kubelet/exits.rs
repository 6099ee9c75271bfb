//! Containers that run to completion (`kube-sim.io/exit-after`, with
//! `kube-sim.io/exit-code`): what the kubelet reports when they exit, as
//! upstream's `convertToAPIContainerStatuses` and `getPhase`
//! (pkg/kubelet/kubelet_pods.go) and the status manager's conditions
//! (pkg/kubelet/status/generate.go) do.
//!
//! Every running container of the pod exits at once with the pod's exit
//! code. The restart policy decides what follows:
//! - a container the policy restarts (`Always`, or `OnFailure` after a
//!   non-zero code) runs again at once: `restartCount` + 1, `lastState`
//!   the termination, a new container ID and start time; the pod stays
//!   Running. The kubelet's crash-loop back-off (10 s doubling to 5 min,
//!   shown as `CrashLoopBackOff`) is not simulated.
//! - otherwise the container stays `terminated` (reason `Completed` for
//!   code 0, `Error` else, with its start and finish times) and, all
//!   containers terminated, the pod is `Succeeded` when every code was 0
//!   and `Failed` otherwise: `Ready` and `ContainersReady` False with
//!   reason `PodCompleted` or `PodFailed`, `Initialized` True with reason
//!   `PodCompleted` for a Succeeded pod, `PodReadyToStartContainers` False
//!   (the sandbox is gone).
//!
//! A pod the kubelet stops for its deletion ends terminal the same way
//! before its final delete ([`containers_killed`]): its running containers
//! killed (exit code 137) and the pod `Failed`, whatever its restart policy.

use serde_json::{Value, json};

use crate::object::now_rfc3339;

/// The container termination reason for an exit code.
fn reason(code: i64) -> &'static str {
    if code == 0 { "Completed" } else { "Error" }
}

/// Whether a container that exited with `code` is started again under the
/// pod's restart policy (`Always` when unset, as defaulting sets it).
fn restarts(restart_policy: &str, code: i64) -> bool {
    match restart_policy {
        "Never" => false,
        "OnFailure" => code != 0,
        _ => true,
    }
}

/// Every running container of the pod exits with `code` now; restarted or
/// terminated as the pod's restart policy says, and the pod's phase and
/// conditions follow.
pub(super) fn containers_exit(status: &mut Value, spec: &Value, code: i64) {
    let at = now_rfc3339();
    let restart_policy = spec.get("restartPolicy").and_then(Value::as_str).unwrap_or("Always");
    let Some(containers) = status.get_mut("containerStatuses").and_then(Value::as_array_mut) else { return };
    for container in containers.iter_mut().filter(|c| c.pointer("/state/running").is_some()) {
        if restarts(restart_policy, code) {
            restart(container, code, &at);
        } else {
            terminate(container, code, &at);
        }
    }
    if containers.iter().all(|c| c.pointer("/state/terminated").is_some()) {
        let succeeded = containers.iter().all(|c| c.pointer("/state/terminated/exitCode") == Some(&json!(0)));
        conclude(status, succeeded, &at);
    }
}

/// What the kubelet reports of a pod it stops for its deletion, before the
/// final delete (the pod is terminal whatever its restart policy): every
/// running container killed at the end of the grace period (exit code
/// 137), the pod `Failed` (`Succeeded` only when every container had
/// already exited 0). A pod already finished is left as it is.
pub(super) fn containers_killed(status: &mut Value) {
    if matches!(status.get("phase").and_then(Value::as_str), Some("Succeeded" | "Failed")) {
        return;
    }
    let at = now_rfc3339();
    let Some(containers) = status.get_mut("containerStatuses").and_then(Value::as_array_mut) else { return };
    for container in containers.iter_mut().filter(|c| c.pointer("/state/running").is_some()) {
        terminate(container, KILLED, &at);
    }
    let succeeded = containers.iter().all(|c| c.pointer("/state/terminated/exitCode") == Some(&json!(0)));
    conclude(status, succeeded, &at);
}

/// The exit code of a container killed with SIGKILL (128 + 9).
const KILLED: i64 = 137;

/// The running container's termination: its start, the end `at`, the code.
fn termination(container: &Value, code: i64, at: &str) -> Value {
    let started = container.pointer("/state/running/startedAt").cloned().unwrap_or(Value::Null);
    let mut terminated = json!({"exitCode": code, "reason": reason(code), "startedAt": started, "finishedAt": at});
    if let Some(id) = container.get("containerID") {
        terminated["containerID"] = id.clone();
    }
    terminated
}

/// The container runs again at once: one more restart, the termination
/// kept as its last state, a new ID and start time.
fn restart(container: &mut Value, code: i64, at: &str) {
    let terminated = termination(container, code, at);
    let count = container.get("restartCount").and_then(Value::as_i64).unwrap_or(0);
    container["restartCount"] = json!(count + 1);
    container["lastState"] = json!({"terminated": terminated});
    container["state"] = json!({"running": {"startedAt": at}});
    container["containerID"] = json!(format!("sim://{}", uuid::Uuid::new_v4().simple()));
}

/// The container stays terminated.
fn terminate(container: &mut Value, code: i64, at: &str) {
    container["state"] = json!({"terminated": termination(container, code, at)});
    container["ready"] = json!(false);
    container["started"] = json!(false);
}

/// The pod is finished: its phase, and the conditions the status manager
/// generates for a terminal pod.
fn conclude(status: &mut Value, succeeded: bool, at: &str) {
    let (phase, condition_reason) = if succeeded { ("Succeeded", "PodCompleted") } else { ("Failed", "PodFailed") };
    status["phase"] = json!(phase);
    let Some(conditions) = status.get_mut("conditions").and_then(Value::as_array_mut) else { return };
    for condition in conditions.iter_mut() {
        let (wanted, reason) = match condition["type"].as_str() {
            Some("Ready" | "ContainersReady") => ("False", Some(condition_reason)),
            Some("Initialized") if succeeded => ("True", Some("PodCompleted")),
            Some("PodReadyToStartContainers") => ("False", None),
            _ => continue,
        };
        if condition["status"] != wanted {
            condition["lastTransitionTime"] = json!(at);
        }
        condition["status"] = json!(wanted);
        let Some(fields) = condition.as_object_mut() else { continue };
        fields.remove("message");
        match reason {
            Some(reason) => fields.insert("reason".to_owned(), json!(reason)),
            None => fields.remove("reason"),
        };
    }
}

#[cfg(test)]
mod tests {
    //! The statuses a real kubelet reports for containers that exit, per
    //! restart policy (upstream `TestConvertToAPIContainerStatuses` and
    //! `TestPodPhaseWithRestart*` in pkg/kubelet/kubelet_pods_test.go, for
    //! the cases kube-sim simulates).

    use super::*;

    /// A running pod of two containers, as `running_status` writes it.
    fn running() -> Value {
        let container = |name: &str| {
            json!({"name": name, "image": "busybox", "imageID": "sim://busybox", "containerID": format!("sim://{name}"),
                "ready": true, "started": true, "restartCount": 0,
                "state": {"running": {"startedAt": "2024-01-01T00:00:00Z"}}})
        };
        let condition = |kind: &str| {
            json!({"type": kind, "status": "True", "lastProbeTime": null,
            "lastTransitionTime": "2024-01-01T00:00:00Z"})
        };
        json!({"phase": "Running",
            "conditions": [condition("PodReadyToStartContainers"), condition("Initialized"), condition("Ready"),
                condition("ContainersReady"), condition("PodScheduled")],
            "containerStatuses": [container("a"), container("b")]})
    }

    fn exited(policy: &str, code: i64) -> Value {
        let mut status = running();
        containers_exit(&mut status, &json!({"restartPolicy": policy}), code);
        status
    }

    fn condition<'a>(status: &'a Value, kind: &str) -> &'a Value {
        status["conditions"].as_array().unwrap().iter().find(|c| c["type"] == kind).unwrap()
    }

    #[test]
    fn never_and_exit_zero_completes_the_pod() {
        let status = exited("Never", 0);
        assert_eq!(status["phase"], "Succeeded");
        let a = &status["containerStatuses"][0];
        assert_eq!(a["state"]["terminated"]["reason"], "Completed");
        assert_eq!(a["state"]["terminated"]["exitCode"], 0);
        assert_eq!(a["state"]["terminated"]["startedAt"], "2024-01-01T00:00:00Z");
        assert_eq!(a["state"]["terminated"]["containerID"], "sim://a");
        assert!(a["state"]["terminated"]["finishedAt"].is_string());
        assert_eq!([&a["ready"], &a["started"], &a["restartCount"]], [&json!(false), &json!(false), &json!(0)]);
        assert_eq!(condition(&status, "Ready")["status"], "False");
        assert_eq!(condition(&status, "Ready")["reason"], "PodCompleted");
        assert_eq!(condition(&status, "ContainersReady")["reason"], "PodCompleted");
        assert_eq!(condition(&status, "Initialized")["reason"], "PodCompleted");
        assert_eq!(condition(&status, "PodReadyToStartContainers")["status"], "False");
        assert_eq!(condition(&status, "PodScheduled")["status"], "True");
        assert_ne!(condition(&status, "Ready")["lastTransitionTime"], "2024-01-01T00:00:00Z");
    }

    #[test]
    fn never_and_a_failure_fails_the_pod() {
        let status = exited("Never", 3);
        assert_eq!(status["phase"], "Failed");
        let a = &status["containerStatuses"][1];
        assert_eq!(
            [&a["state"]["terminated"]["reason"], &a["state"]["terminated"]["exitCode"]],
            [&json!("Error"), &json!(3)]
        );
        assert_eq!(condition(&status, "Ready")["reason"], "PodFailed");
        assert_eq!(condition(&status, "Initialized").get("reason"), None);
    }

    #[test]
    fn on_failure_restarts_a_failed_container_in_place() {
        let status = exited("OnFailure", 2);
        assert_eq!(status["phase"], "Running");
        let a = &status["containerStatuses"][0];
        assert_eq!(a["restartCount"], 1);
        assert_eq!(a["lastState"]["terminated"]["exitCode"], 2);
        assert_eq!(a["lastState"]["terminated"]["reason"], "Error");
        assert_eq!(a["lastState"]["terminated"]["containerID"], "sim://a");
        assert!(a["state"]["running"]["startedAt"].is_string());
        assert_ne!(a["containerID"], "sim://a");
        assert_eq!(condition(&status, "Ready")["status"], "True");
    }

    #[test]
    fn on_failure_and_exit_zero_completes_the_pod() {
        let status = exited("OnFailure", 0);
        assert_eq!(status["phase"], "Succeeded");
        assert_eq!(status["containerStatuses"][0]["restartCount"], 0);
    }

    #[test]
    fn always_restarts_whatever_the_code() {
        for code in [0, 1] {
            let status = exited("Always", code);
            assert_eq!(status["phase"], "Running");
            let a = &status["containerStatuses"][0];
            assert_eq!(a["lastState"]["terminated"]["reason"], reason(code));
            assert_eq!(a["restartCount"], 1);
        }
        let mut twice = exited("Always", 1);
        containers_exit(&mut twice, &json!({}), 1);
        assert_eq!(twice["containerStatuses"][1]["restartCount"], 2);
    }

    #[test]
    fn a_deleted_pod_ends_failed_with_its_containers_killed() {
        let mut status = running();
        containers_killed(&mut status);
        assert_eq!(status["phase"], "Failed");
        let a = &status["containerStatuses"][0]["state"]["terminated"];
        assert_eq!([&a["exitCode"], &a["reason"]], [&json!(137), &json!("Error")]);
        assert_eq!(condition(&status, "Ready")["reason"], "PodFailed");
        let mut done = exited("Never", 0);
        let before = done.clone();
        containers_killed(&mut done);
        assert_eq!(done, before, "a finished pod stays as it finished");
    }

    #[test]
    fn containers_already_terminated_are_left_alone() {
        let mut status = exited("Never", 0);
        let before = status.clone();
        containers_exit(&mut status, &json!({"restartPolicy": "Never"}), 1);
        assert_eq!(status, before);
    }
}
