//! The pod statuses the kubelet stand-in writes: bound (`ContainerCreating`),
//! running (Ready or not) and failed, with the conditions and container
//! statuses a real kubelet reports, and the final step of a deletion. When
//! each is written is the loop's business (`mod.rs`).

use serde_json::{Value, json};

use crate::object::now_rfc3339;
use crate::store::{Store, TypeKey};

/// A pod's identity.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct PodRef {
    pub(super) namespace: String,
    pub(super) name: String,
    pub(super) uid: String,
}

impl PodRef {
    /// The identity of `pod`, if its metadata has one.
    pub(super) fn of(pod: &Value) -> Option<PodRef> {
        Some(PodRef {
            namespace: pod.pointer("/metadata/namespace")?.as_str()?.to_owned(),
            name: pod.pointer("/metadata/name")?.as_str()?.to_owned(),
            uid: pod.pointer("/metadata/uid")?.as_str()?.to_owned(),
        })
    }
}

/// The kubelet's final delete (grace period 0) of a pod whose grace
/// period ended: gone unless finalizers hold it; a held pod is written
/// terminal first (`exits::containers_killed`), as the kubelet reports a
/// pod it stopped, and goes when its last finalizer is removed.
pub(super) fn finish_deletion(store: &Store, pod_key: &TypeKey, pod: &PodRef, current: &Value) {
    let held = current.pointer("/metadata/finalizers").and_then(Value::as_array).is_some_and(|f| !f.is_empty());
    if !held {
        let _ = store.delete(pod_key, &pod.namespace, &pod.name, None);
        return;
    }
    let _ = store.update::<()>(pod_key, &pod.namespace, &pod.name, |s| {
        let mut v = s.value();
        if v.pointer("/metadata/uid").and_then(Value::as_str) != Some(pod.uid.as_str())
            || v.pointer("/metadata/deletionGracePeriodSeconds").and_then(Value::as_i64) == Some(0)
        {
            return Ok(None);
        }
        v["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        if let Some(status) = v.get_mut("status") {
            super::exits::containers_killed(status);
        }
        Ok(Some(v))
    });
}

/// Writes `f`'s change to the status of `pod` (stored under `pod_key`), if
/// it is still the same pod and the status changes.
pub(super) fn write_status(store: &Store, pod_key: &TypeKey, pod: &PodRef, f: impl FnOnce(&mut Value, &Value)) {
    // A pod deleted meanwhile has no status left to write.
    let _ = store.update::<()>(pod_key, &pod.namespace, &pod.name, |s| {
        let mut v = s.value();
        if v.pointer("/metadata/uid").and_then(Value::as_str) != Some(pod.uid.as_str()) {
            return Ok(None);
        }
        let spec = v.get("spec").cloned().unwrap_or(Value::Null);
        let mut status = v.get("status").cloned().unwrap_or_else(|| json!({}));
        f(&mut status, &spec);
        if v.get("status") == Some(&status) {
            return Ok(None);
        }
        v["status"] = status;
        Ok(Some(v))
    });
}

fn condition(kind: &str, status: bool, reason: Option<&str>, at: &str) -> Value {
    let mut c = json!({"type": kind, "status": if status { "True" } else { "False" },
        "lastProbeTime": null, "lastTransitionTime": at});
    if let Some(reason) = reason {
        c["reason"] = json!(reason);
    }
    c
}

fn containers(spec: &Value) -> Vec<(String, String)> {
    spec.get("containers")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .map(|c| (c["name"].as_str().unwrap_or("").to_owned(), c["image"].as_str().unwrap_or("").to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// What a pod bound to a node shows before it starts: `ContainerCreating`,
/// at the node's `host_ip`, with the `pod_ip` of the node's range.
pub(super) fn bound_status(status: &mut Value, spec: &Value, host_ip: &str, pod_ip: &str) {
    let at = now_rfc3339();
    status["phase"] = json!("Pending");
    status["hostIP"] = json!(host_ip);
    status["hostIPs"] = json!([{"ip": host_ip}]);
    status["podIP"] = json!(pod_ip);
    status["podIPs"] = json!([{"ip": pod_ip}]);
    status["startTime"] = json!(at);
    status["conditions"] = json!([
        condition("PodReadyToStartContainers", false, None, &at),
        condition("Initialized", true, None, &at),
        condition("Ready", false, Some("ContainersNotReady"), &at),
        condition("ContainersReady", false, Some("ContainersNotReady"), &at),
        condition("PodScheduled", true, None, &at),
    ]);
    status["containerStatuses"] = containers(spec)
        .into_iter()
        .map(|(name, image)| {
            json!({"name": name, "image": image, "imageID": "", "ready": false, "started": false,
                "restartCount": 0, "state": {"waiting": {"reason": "ContainerCreating"}}})
        })
        .collect();
}

pub(super) fn running_status(status: &mut Value, spec: &Value, ready: bool) {
    let at = now_rfc3339();
    status["phase"] = json!("Running");
    let reason = (!ready).then_some("ContainersNotReady");
    status["conditions"] = json!([
        condition("PodReadyToStartContainers", true, None, &at),
        condition("Initialized", true, None, &at),
        condition("Ready", ready, reason, &at),
        condition("ContainersReady", ready, reason, &at),
        condition("PodScheduled", true, None, &at),
    ]);
    status["containerStatuses"] = containers(spec)
        .into_iter()
        .map(|(name, image)| {
            json!({"name": name, "image": image, "imageID": format!("sim://{image}"),
                "containerID": format!("sim://{}", uuid::Uuid::new_v4().simple()),
                "ready": ready, "started": true, "restartCount": 0,
                "state": {"running": {"startedAt": at}}})
        })
        .collect();
}

pub(super) fn failed_status(status: &mut Value, spec: &Value) {
    let at = now_rfc3339();
    status["phase"] = json!("Failed");
    if let Some(conditions) = status.get_mut("conditions").and_then(Value::as_array_mut) {
        for c in conditions.iter_mut().filter(|c| c["type"] == "Ready" || c["type"] == "ContainersReady") {
            c["status"] = json!("False");
            c["reason"] = json!("PodFailed");
            c["lastTransitionTime"] = json!(at);
        }
    }
    status["containerStatuses"] = containers(spec)
        .into_iter()
        .map(|(name, image)| {
            json!({"name": name, "image": image, "imageID": format!("sim://{image}"), "ready": false,
                "started": false, "restartCount": 0,
                "state": {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": at, "finishedAt": at}}})
        })
        .collect();
}

/// Whether a running pod's containers are all ready while its Ready
/// condition says otherwise (written by someone other than the kubelet).
pub(super) fn ready_overwritten(pod: &Value) -> bool {
    let Some(statuses) = pod.pointer("/status/containerStatuses").and_then(Value::as_array) else { return false };
    let all_ready = !statuses.is_empty() && statuses.iter().all(|c| c["ready"] == json!(true));
    let ready_condition = pod
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"))
        .map(|c| c["status"] == "True");
    all_ready && ready_condition == Some(false)
}

/// Sets the Ready and ContainersReady conditions back to True, as the
/// kubelet's status manager does from its containers' readiness.
pub(super) fn restore_ready(status: &mut Value) {
    let at = now_rfc3339();
    if let Some(conditions) = status.get_mut("conditions").and_then(Value::as_array_mut) {
        for c in conditions.iter_mut().filter(|c| c["type"] == "Ready" || c["type"] == "ContainersReady") {
            if c["status"] != "True" {
                *c = condition(c["type"].as_str().unwrap_or_default(), true, None, &at);
            }
        }
    }
}
