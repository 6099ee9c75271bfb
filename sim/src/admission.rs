//! What the API server's admission plugins and registry strategies do on
//! create, for the kinds kube-sim serves (the visible results of the
//! Priority, ServiceAccount and DefaultTolerationSeconds plugins are applied
//! with the pod defaults, in the `defaults` module):
//! - NamespaceLifecycle: no creates in a namespace that does not exist or
//!   is terminating (403 with the `NamespaceTerminating` cause);
//! - and the registry strategies' create-time resets: a new pod is Pending
//!   with its QoS class, new Deployments, ReplicaSets and Services have an
//!   empty status, a new namespace is Active with the `kubernetes`
//!   finalizer.

use serde_json::{Value, json};

use crate::api::Api;
use crate::error::{ApiError, ApiResult};
use crate::resources::{Builtin, ResourceType};

/// Refuses a create in `namespace` unless it exists and is not terminating.
pub fn check_namespace_open(api: &Api, rt: &ResourceType, namespace: &str, name: &str) -> ApiResult<()> {
    let ns_type = api.registry.builtin(Builtin::Namespace);
    let Some(ns) = api.store.get(&Api::type_key(&ns_type), "", namespace) else {
        return Err(ApiError::not_found(&ns_type, namespace));
    };
    let ns = ns.value();
    let terminating =
        crate::api::is_terminating(&ns) || ns.pointer("/status/phase").and_then(Value::as_str) == Some("Terminating");
    if terminating {
        let message = format!("unable to create new content in namespace {namespace} because it is being terminated");
        let mut err = ApiError::forbidden(format!("{} \"{name}\" is forbidden: {message}", rt.qualified_name()));
        err.details = Some(json!({
            "name": name,
            "kind": rt.plural,
            "causes": [{"reason": "NamespaceTerminating", "message": message, "field": "metadata.namespace"}],
        }));
        return Err(err);
    }
    Ok(())
}

/// Create-time mutations of a new object of a built-in kind.
pub fn on_create(kind: Builtin, object: &mut Value) {
    match kind {
        Builtin::Pod => {
            let qos = qos_class(object);
            object["status"] = json!({"phase": "Pending", "qosClass": qos});
        }
        Builtin::Deployment | Builtin::ReplicaSet | Builtin::Service => {
            object["status"] = json!({});
        }
        Builtin::Namespace => crate::defaults::namespace_on_create(object),
        _ => {}
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_pods_are_pending_with_their_qos_class() {
        let mut pod = json!({"spec": {"containers": [{"name": "c", "image": "i"}]}, "status": {"phase": "Running"}});
        on_create(Builtin::Pod, &mut pod);
        assert_eq!(pod["status"], json!({"phase": "Pending", "qosClass": "BestEffort"}));
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
        on_create(Builtin::Namespace, &mut ns);
        assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
        assert_eq!(ns["status"]["phase"], "Active");
    }
}
