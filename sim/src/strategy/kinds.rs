//! Per-kind rules of the strategies: which kinds have `metadata.generation`
//! maintained, what a `/status` write may change besides the status, which
//! metadata counts as spec, and the create-time resets (`PrepareForCreate`):
//! a new pod is Pending with its QoS class (and not scheduled while it has
//! scheduling gates), new Deployments, ReplicaSets, DaemonSets (with their
//! template generation, `daemon_set.rs`), StatefulSets, Services and
//! CronJobs have an empty status, a new Job gets its generated selector
//! (`job.rs`) and an empty status, a new PersistentVolumeClaim is Pending, a new namespace is Active with the
//! `kubernetes` finalizer, and a new EndpointSlice has no deprecated topology.

use serde_json::{Value, json};

use super::daemon_set::template_generation_on_create;
use super::endpoint_slice::drop_topology;
use super::job::generate_selector_if_needed;
use crate::resources::{Builtin, ResourceType};

/// The finalizer the namespace strategy puts on every new namespace.
const NAMESPACE_FINALIZER: &str = "kubernetes";

/// Types whose `metadata.generation` the API server maintains.
pub(super) fn tracks_generation(rt: &ResourceType) -> bool {
    matches!(
        rt.builtin,
        None | Some(
            Builtin::Deployment
                | Builtin::ReplicaSet
                | Builtin::DaemonSet
                | Builtin::StatefulSet
                | Builtin::EndpointSlice
                | Builtin::Job
                | Builtin::CronJob
        )
    )
}

/// Types whose `/status` writes also take the request's metadata (what
/// upstream's status strategies for these kinds do not reset: they copy
/// the spec back and nothing else; newer types and custom resources reset
/// all of it, `ResetObjectMetaForStatus`).
pub(super) fn status_writes_metadata(rt: &ResourceType) -> bool {
    matches!(
        rt.builtin,
        Some(
            Builtin::Deployment
                | Builtin::ReplicaSet
                | Builtin::DaemonSet
                | Builtin::StatefulSet
                | Builtin::PersistentVolumeClaim
                | Builtin::Job
                | Builtin::CronJob
        )
    )
}

/// The metadata field whose changes bump `generation` as a spec change
/// does: a Deployment's annotations, copied to its ReplicaSets (upstream
/// `deploymentStrategy`), and an EndpointSlice's labels (upstream
/// `endpointSliceStrategy.PrepareForUpdate`).
pub(super) fn metadata_as_spec(rt: &ResourceType) -> Option<&'static str> {
    match rt.builtin {
        Some(Builtin::Deployment) => Some("annotations"),
        Some(Builtin::EndpointSlice) => Some("labels"),
        _ => None,
    }
}

/// Create-time resets of a new object of a built-in kind.
pub(super) fn reset_on_create(kind: Builtin, object: &mut Value) {
    match kind {
        Builtin::Pod => {
            let qos = qos_class(object);
            object["status"] = json!({"phase": "Pending", "qosClass": qos});
            scheduling_gated_condition(object);
        }
        Builtin::Deployment | Builtin::ReplicaSet | Builtin::StatefulSet | Builtin::Service | Builtin::CronJob => {
            object["status"] = json!({});
        }
        Builtin::Job => {
            generate_selector_if_needed(object);
            object["status"] = json!({});
        }
        Builtin::DaemonSet => {
            object["status"] = json!({});
            template_generation_on_create(object);
        }
        Builtin::Namespace => namespace_on_create(object),
        // Cleared, and read back with the phase its defaulting gives.
        Builtin::PersistentVolumeClaim => object["status"] = json!({"phase": "Pending"}),
        Builtin::EndpointSlice => drop_topology(object, None),
        _ => {}
    }
}

/// A new pod with scheduling gates is marked not scheduled for them
/// (upstream `applySchedulingGatedCondition`).
fn scheduling_gated_condition(pod: &mut Value) {
    let gated = pod.pointer("/spec/schedulingGates").and_then(Value::as_array).is_some_and(|g| !g.is_empty());
    if gated {
        pod["status"]["conditions"] = json!([{"type": "PodScheduled", "status": "False",
            "lastProbeTime": null, "lastTransitionTime": null, "reason": "SchedulingGated",
            "message": "Scheduling is blocked due to non-empty scheduling gates"}]);
    }
}

/// The pod's QoS class from its containers' requests and limits.
fn qos_class(pod: &Value) -> &'static str {
    let containers: Vec<&Value> = ["containers", "initContainers"]
        .iter()
        .filter_map(|f| pod.pointer(&format!("/spec/{f}")).and_then(Value::as_array))
        .flatten()
        .collect();
    let (mut any, mut guaranteed) = (false, true);
    for c in &containers {
        let requests = c.pointer("/resources/requests").and_then(Value::as_object);
        let limits = c.pointer("/resources/limits").and_then(Value::as_object);
        if requests.is_some_and(|r| !r.is_empty()) || limits.is_some_and(|l| !l.is_empty()) {
            any = true;
        }
        for resource in ["cpu", "memory"] {
            let limit = limits.and_then(|l| l.get(resource));
            let request = requests.and_then(|r| r.get(resource)).or(limit);
            if limit.is_none() || request != limit {
                guaranteed = false;
            }
        }
    }
    match (any, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}

/// What the namespace registry strategy does on create only (never on
/// update, where the finalizers may have been removed by `/finalize`):
/// ensures `spec.finalizers` holds `kubernetes` and resets `status` to
/// `{phase: Active}`.
#[doc(alias = "PrepareForCreate")]
fn namespace_on_create(object: &mut Value) {
    let Some(ns) = object.as_object_mut() else {
        return;
    };
    let spec = ns.entry("spec").or_insert_with(|| json!({}));
    if spec.is_null() {
        *spec = json!({});
    }
    if let Some(spec) = spec.as_object_mut() {
        let finalizers = spec.entry("finalizers").or_insert_with(|| json!([]));
        if finalizers.is_null() {
            *finalizers = json!([]);
        }
        if let Some(list) = finalizers.as_array_mut()
            && !list.iter().any(|f| f == NAMESPACE_FINALIZER)
        {
            list.push(json!(NAMESPACE_FINALIZER));
        }
    }
    ns.insert("status".to_owned(), json!({ "phase": "Active" }));
}

/// What an update of a namespace through the main resource does to its
/// finalizers: keeps the stored ones, as only `/finalize` changes them
/// (upstream `namespaceStrategy.PrepareForUpdate`).
pub(super) fn keep_namespace_finalizers(next: &mut Value, current: &Value) {
    let finalizers = current.pointer("/spec/finalizers").cloned();
    if finalizers.is_some() && !next.get("spec").is_some_and(Value::is_object) {
        next["spec"] = json!({});
    }
    if let Some(spec) = next.get_mut("spec") {
        set_or_remove(spec, "finalizers", finalizers);
    }
}

/// Sets `field` of an object to `value`, or removes it for `None`.
pub(super) fn set_or_remove(object: &mut Value, field: &str, value: Option<Value>) {
    if let Some(map) = object.as_object_mut() {
        match value {
            Some(v) => {
                map.insert(field.to_owned(), v);
            }
            None => {
                map.remove(field);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_pods_are_pending_with_their_qos_class() {
        let mut pod = json!({"spec": {"containers": [{"name": "c", "image": "i"}]}, "status": {"phase": "Running"}});
        reset_on_create(Builtin::Pod, &mut pod);
        assert_eq!(pod["status"], json!({"phase": "Pending", "qosClass": "BestEffort"}));
    }

    #[test]
    fn new_gated_pods_are_not_scheduled_for_their_gates() {
        let mut pod = json!({"spec": {"schedulingGates": [{"name": "example.com/wait"}], "containers": []}});
        reset_on_create(Builtin::Pod, &mut pod);
        assert_eq!(pod["status"]["conditions"][0]["reason"], "SchedulingGated");
        assert_eq!(pod["status"]["conditions"][0]["status"], "False");
    }

    #[test]
    fn qos_classes_follow_requests_and_limits() {
        let pod = |resources: Value| json!({"spec": {"containers": [{"name": "c", "resources": resources}]}});
        assert_eq!(qos_class(&pod(json!({}))), "BestEffort");
        assert_eq!(qos_class(&pod(json!({"limits": {"cpu": "1", "memory": "1Gi"}}))), "Guaranteed");
        assert_eq!(qos_class(&pod(json!({"requests": {"cpu": "1"}}))), "Burstable");
    }

    #[test]
    fn new_namespaces_are_active_with_the_kubernetes_finalizer() {
        let mut ns = json!({"metadata": {"name": "x"}});
        reset_on_create(Builtin::Namespace, &mut ns);
        assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
        assert_eq!(ns["status"]["phase"], "Active");
    }

    #[test]
    fn the_namespace_finalizer_is_added_once_beside_others() {
        let mut ns = json!({"metadata": {"name": "team-a"}});
        crate::defaults::apply(Builtin::Namespace, &mut ns);
        namespace_on_create(&mut ns);
        namespace_on_create(&mut ns);
        assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
        let mut custom = json!({"spec": {"finalizers": ["example.com/x"]}});
        namespace_on_create(&mut custom);
        assert_eq!(custom["spec"]["finalizers"], json!(["example.com/x", "kubernetes"]));
    }

    #[test]
    fn a_new_namespace_as_prepared_for_create_is_valid() {
        let mut ns = json!({"metadata": {"name": "team-a"}});
        crate::defaults::apply(Builtin::Namespace, &mut ns);
        reset_on_create(Builtin::Namespace, &mut ns);
        assert!(crate::validation::validate_create(Builtin::Namespace, &ns).is_empty());
    }
}
