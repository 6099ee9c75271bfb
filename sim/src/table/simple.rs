//! Rows of the kinds printed from metadata and a few fields: custom
//! resources, Namespace, ConfigMap, Secret, ServiceAccount, Lease, the RBAC
//! kinds and PodDisruptionBudget.

use jiff::Timestamp;
use serde_json::Value;

use super::access::{get, list, map_len, str_at, text};
use super::cells::{age, name};
use super::format::human_duration;

pub(super) fn print_custom(obj: &Value, now: Timestamp) -> Vec<Value> {
    // The Age column is a JSONPath column: a missing value is a null cell.
    let age = match get(obj, &["metadata", "creationTimestamp"]) {
        None => Value::Null,
        Some(Value::String(s)) => match s.parse::<Timestamp>() {
            Ok(t) => Value::from(human_duration(now.duration_since(t))),
            Err(_) => Value::from("<invalid>"),
        },
        Some(_) => Value::Null,
    };
    vec![name(obj), age]
}

pub(super) fn print_namespace(obj: &Value, now: Timestamp) -> Vec<Value> {
    // The real server always sets status.phase; default it the same way.
    let phase = match str_at(obj, &["status", "phase"]) {
        Some(p) if !p.is_empty() => p,
        _ if get(obj, &["metadata", "deletionTimestamp"]).is_some() => "Terminating",
        _ => "Active",
    };
    vec![name(obj), Value::from(phase), age(obj, now)]
}

pub(super) fn print_config_map(obj: &Value, now: Timestamp) -> Vec<Value> {
    let count = map_len(obj, &["data"]) + map_len(obj, &["binaryData"]);
    vec![name(obj), Value::from(count), age(obj, now)]
}

pub(super) fn print_secret(obj: &Value, now: Timestamp) -> Vec<Value> {
    vec![name(obj), Value::from(text(obj, &["type"])), Value::from(map_len(obj, &["data"])), age(obj, now)]
}

pub(super) fn print_service_account(obj: &Value, now: Timestamp) -> Vec<Value> {
    let secrets = list(obj, &["secrets"]).len();
    vec![name(obj), Value::from(secrets), age(obj, now)]
}

pub(super) fn print_lease(obj: &Value, now: Timestamp) -> Vec<Value> {
    vec![name(obj), Value::from(text(obj, &["spec", "holderIdentity"])), age(obj, now)]
}

/// Role and ClusterRole: the name and the creation time as RFC 3339.
pub(super) fn print_role(obj: &Value) -> Vec<Value> {
    vec![name(obj), Value::from(text(obj, &["metadata", "creationTimestamp"]))]
}

/// RoleBinding and ClusterRoleBinding: `Kind/name` of the role, then (wide)
/// the subjects by kind, service accounts as `namespace/name`.
pub(super) fn print_role_binding(obj: &Value, now: Timestamp) -> Vec<Value> {
    let role = format!("{}/{}", text(obj, &["roleRef", "kind"]), text(obj, &["roleRef", "name"]));
    let subjects = |kind: &str| {
        list(obj, &["subjects"])
            .iter()
            .filter(|s| text(s, &["kind"]) == kind)
            .map(|s| match text(s, &["namespace"]) {
                ns if kind == "ServiceAccount" => format!("{ns}/{}", text(s, &["name"])),
                _ => text(s, &["name"]).to_owned(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    vec![
        name(obj),
        Value::from(role),
        age(obj, now),
        Value::from(subjects("User")),
        Value::from(subjects("Group")),
        Value::from(subjects("ServiceAccount")),
    ]
}

/// PodDisruptionBudget: minAvailable and maxUnavailable (`N/A` when unset)
/// and the disruptions its status allows.
pub(super) fn print_pod_disruption_budget(obj: &Value, now: Timestamp) -> Vec<Value> {
    let int_or_string = |field: &str| match get(obj, &["spec", field]) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "N/A".to_owned(),
    };
    let allowed = get(obj, &["status", "disruptionsAllowed"]).and_then(Value::as_i64).unwrap_or(0);
    vec![
        name(obj),
        Value::from(int_or_string("minAvailable")),
        Value::from(int_or_string("maxUnavailable")),
        Value::from(allowed),
        age(obj, now),
    ]
}
