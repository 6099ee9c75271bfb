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
    for container in containers.iter_mut() {
        let Some(running) = container.pointer("/state/running").cloned() else { continue };
        let mut terminated = json!({"exitCode": code, "reason": reason(code),
            "startedAt": running.get("startedAt").cloned().unwrap_or(Value::Null), "finishedAt": at});
        if let Some(id) = container.get("containerID") {
            terminated["containerID"] = id.clone();
        }
        if restarts(restart_policy, code) {
            let count = container.get("restartCount").and_then(Value::as_i64).unwrap_or(0);
            container["restartCount"] = json!(count + 1);
            container["lastState"] = json!({"terminated": terminated});
            container["state"] = json!({"running": {"startedAt": at}});
            container["containerID"] = json!(format!("sim://{}", uuid::Uuid::new_v4().simple()));
        } else {
            container["state"] = json!({"terminated": terminated});
            container["ready"] = json!(false);
            container["started"] = json!(false);
        }
    }
    let all_terminated = containers.iter().all(|c| c.pointer("/state/terminated").is_some());
    if !all_terminated {
        return;
    }
    let succeeded = containers.iter().all(|c| c.pointer("/state/terminated/exitCode") == Some(&json!(0)));
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
        match reason {
            Some(reason) => condition["reason"] = json!(reason),
            None => {
                if let Some(fields) = condition.as_object_mut() {
                    fields.remove("reason");
                }
            }
        }
        if let Some(fields) = condition.as_object_mut() {
            fields.remove("message");
        }
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
    fn containers_already_terminated_are_left_alone() {
        let mut status = exited("Never", 0);
        let before = status.clone();
        containers_exit(&mut status, &json!({"restartPolicy": "Never"}), 1);
        assert_eq!(status, before);
    }
}
