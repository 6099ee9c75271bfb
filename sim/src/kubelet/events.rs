//! The Warning events the stand-in's components record about a pod, as
//! their event recorders write them: a core/v1 Event named
//! `<pod>.<hex nanoseconds>` about the pod, from the kubelet on a node
//! (`FailedMount`) or from the scheduler (`FailedScheduling`). The real
//! scheduler writes events.k8s.io/v1 Events, which a real API server also
//! serves as core/v1 ones; kube-sim keeps the two apart, so it writes the
//! core/v1 Event `kubectl describe` and `kubectl get events` read.

use serde_json::{Value, json};

use super::status::PodRef;
use crate::object::now_rfc3339;
use crate::store::{Store, TypeKey};

/// Who records an event.
pub(super) enum Reporter<'a> {
    /// The kubelet of that node.
    Kubelet(&'a str),
    /// The scheduler.
    Scheduler,
}

/// Records a Warning `reason` about `pod` (stored under `event_key`).
pub(super) fn warn(
    store: &Store,
    event_key: &TypeKey,
    pod: &Value,
    pod_ref: &PodRef,
    reporter: &Reporter<'_>,
    reason: &str,
    message: &str,
) {
    let now = now_rfc3339();
    let nanos = jiff::Timestamp::now().as_nanosecond();
    let name = format!("{}.{nanos:x}", pod_ref.name);
    let (source, component, instance) = match reporter {
        Reporter::Kubelet(node) => (json!({"component": "kubelet", "host": node}), "kubelet", *node),
        Reporter::Scheduler => (json!({"component": "default-scheduler"}), "default-scheduler", "default-scheduler"),
    };
    let mut event = json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": name, "namespace": pod_ref.namespace,
            "uid": uuid::Uuid::new_v4().to_string(), "creationTimestamp": now},
        "involvedObject": {"kind": "Pod", "namespace": pod_ref.namespace, "name": pod_ref.name,
            "uid": pod_ref.uid, "apiVersion": "v1",
            "resourceVersion": pod.pointer("/metadata/resourceVersion").cloned().unwrap_or(json!(""))},
        "reason": reason,
        "message": message,
        "source": source,
        "firstTimestamp": now, "lastTimestamp": now, "count": 1, "type": "Warning",
        "eventTime": null, "reportingComponent": component, "reportingInstance": instance,
    });
    if let Reporter::Scheduler = reporter {
        event["action"] = json!("Scheduling");
    }
    // A name taken in the same nanosecond is one event less, not an error.
    let _ = store.create(event_key, &pod_ref.namespace, &name, event);
}
