//! Defaults of the object kinds other than pods and workloads: Service,
//! Endpoints, EndpointSlice ports, Namespace, Node, PersistentVolumeClaim
//! and RBAC binding subjects.

use serde_json::{Map, Value, json};

use super::fields::{child, children, default_str, default_value};

/// The label the API server sets on every namespace to its name.
pub const LABEL_METADATA_NAME: &str = "kubernetes.io/metadata.name";

/// `SetDefaults_Service` (the IP families are the registry's, in
/// `crate::clusterip`).
pub(super) fn service_spec(spec: &mut Map<String, Value>) {
    default_str(spec, "sessionAffinity", "None");
    match spec.get("sessionAffinity").and_then(Value::as_str) {
        Some("None") => {
            spec.remove("sessionAffinityConfig");
        }
        Some("ClientIP") => {
            let has_timeout = spec
                .get("sessionAffinityConfig")
                .and_then(|c| c.get("clientIP"))
                .and_then(|c| c.get("timeoutSeconds"))
                .is_some_and(|t| !t.is_null());
            if !has_timeout {
                spec.insert("sessionAffinityConfig".to_owned(), json!({ "clientIP": { "timeoutSeconds": 10800 } }));
            }
        }
        _ => {}
    }
    default_str(spec, "type", "ClusterIP");
    for port in children(spec, "ports") {
        default_str(port, "protocol", "TCP");
        let target_unset = port.get("targetPort").is_none_or(|t| t.is_null() || t == 0 || t == "");
        if target_unset && let Some(number) = port.get("port").filter(|p| p.is_number()).cloned() {
            port.insert("targetPort".to_owned(), number);
        }
    }
    let service_type = spec.get("type").and_then(Value::as_str).unwrap_or("").to_owned();
    let has_external_ips = spec.get("externalIPs").and_then(Value::as_array).is_some_and(|ips| !ips.is_empty());
    let externally_accessible = service_type == "LoadBalancer"
        || service_type == "NodePort"
        || (service_type == "ClusterIP" && has_external_ips);
    if externally_accessible {
        default_str(spec, "externalTrafficPolicy", "Cluster");
    }
    if matches!(service_type.as_str(), "ClusterIP" | "NodePort" | "LoadBalancer") {
        default_value(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    if service_type == "LoadBalancer" {
        default_value(spec, "allocateLoadBalancerNodePorts", json!(true));
    }
}

/// `SetDefaults_Endpoints`.
pub(super) fn endpoints(object: &mut Value) {
    let Some(endpoints) = object.as_object_mut() else {
        return;
    };
    for subset in children(endpoints, "subsets") {
        for port in children(subset, "ports") {
            default_str(port, "protocol", "TCP");
        }
    }
}

/// `SetDefaults_EndpointPort` (discovery/v1): both pointers, so only an
/// absent `name` becomes "" and an absent `protocol` TCP.
pub(super) fn endpoint_slice(object: &mut Value) {
    let Some(slice) = object.as_object_mut() else {
        return;
    };
    for port in children(slice, "ports") {
        default_value(port, "name", json!(""));
        default_value(port, "protocol", json!("TCP"));
    }
}

/// `SetDefaults_Namespace` and `SetDefaults_NamespaceStatus`.
pub(super) fn namespace(object: &mut Value) {
    let Some(ns) = object.as_object_mut() else {
        return;
    };
    let name = ns.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or("").to_owned();
    if !name.is_empty()
        && let Some(metadata) = ns.get_mut("metadata").and_then(Value::as_object_mut)
    {
        let labels = metadata.entry("labels").or_insert_with(|| json!({}));
        if labels.is_null() {
            *labels = json!({});
        }
        if let Some(labels) = labels.as_object_mut() {
            labels.insert(LABEL_METADATA_NAME.to_owned(), json!(name));
        }
    }
    let status = ns.entry("status").or_insert_with(|| json!({}));
    if status.is_null() {
        *status = json!({});
    }
    if let Some(status) = status.as_object_mut() {
        default_str(status, "phase", "Active");
    }
}

/// `SetDefaults_PersistentVolumeClaimSpec`: `volumeMode` Filesystem (for
/// claims and the claim templates of ephemeral volumes alike).
pub(super) fn persistent_volume_claim_spec(spec: &mut Map<String, Value>) {
    default_value(spec, "volumeMode", json!("Filesystem"));
}

/// `SetDefaults_PersistentVolumeClaim`: the spec's defaults, and a claim
/// with no phase is Pending.
pub(super) fn persistent_volume_claim(object: &mut Value) {
    if let Some(spec) = child(object, "spec") {
        persistent_volume_claim_spec(spec);
    }
    let Some(claim) = object.as_object_mut() else {
        return;
    };
    let status = claim.entry("status").or_insert_with(|| json!({}));
    if status.is_null() {
        *status = json!({});
    }
    if let Some(status) = status.as_object_mut() {
        default_str(status, "phase", "Pending");
    }
}

/// `SetDefaults_NodeStatus`.
pub(super) fn node(object: &mut Value) {
    let Some(status) = child(object, "status") else {
        return;
    };
    let allocatable_unset = status.get("allocatable").is_none_or(Value::is_null);
    if allocatable_unset && let Some(capacity) = status.get("capacity").filter(|c| c.is_object()).cloned() {
        status.insert("allocatable".to_owned(), capacity);
    }
}

/// `SetDefaults_Subject`: users and groups are in the RBAC API group. (A
/// service account's group is the core group, "", which the API server
/// leaves out when it writes the object: `apiGroup` is `omitempty`.)
pub(super) fn rbac_subject(subject: &mut Map<String, Value>) {
    if matches!(subject.get("kind").and_then(Value::as_str), Some("User" | "Group")) {
        default_str(subject, "apiGroup", "rbac.authorization.k8s.io");
    }
}
