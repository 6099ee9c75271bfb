//! Rows of Nodes: status, roles, version and addresses.

use std::collections::BTreeSet;

use jiff::Timestamp;
use serde_json::Value;

use super::access::{flag, get, list, text};
use super::cells::{age, name};

pub(super) fn print_node(obj: &Value, now: Timestamp) -> Vec<Value> {
    let ready = list(obj, &["status", "conditions"]).iter().rev().find(|c| text(c, &["type"]) == "Ready");
    let mut status = vec![match ready {
        Some(c) if text(c, &["status"]) == "True" => "Ready",
        Some(_) => "NotReady",
        None => "Unknown",
    }];
    if flag(obj, &["spec", "unschedulable"]) {
        status.push("SchedulingDisabled");
    }
    let info = |field: &str| match text(obj, &["status", "nodeInfo", field]) {
        "" => "<unknown>".to_owned(),
        v => v.to_owned(),
    };
    vec![
        name(obj),
        Value::from(status.join(",")),
        Value::from(node_roles(obj)),
        age(obj, now),
        Value::from(text(obj, &["status", "nodeInfo", "kubeletVersion"])),
        Value::from(node_address(obj, "InternalIP")),
        Value::from(node_address(obj, "ExternalIP")),
        Value::from(info("osImage")),
        Value::from(info("kernelVersion")),
        Value::from(info("containerRuntimeVersion")),
    ]
}

/// ROLES: `node-role.kubernetes.io/<role>` label keys and the value of
/// `kubernetes.io/role`, sorted, or `<none>`.
fn node_roles(obj: &Value) -> String {
    let mut roles = BTreeSet::new();
    if let Some(labels) = get(obj, &["metadata", "labels"]).and_then(Value::as_object) {
        for (key, value) in labels {
            if let Some(role) = key.strip_prefix("node-role.kubernetes.io/") {
                if !role.is_empty() {
                    roles.insert(role);
                }
            } else if key == "kubernetes.io/role"
                && let Some(role) = value.as_str().filter(|r| !r.is_empty())
            {
                roles.insert(role);
            }
        }
    }
    if roles.is_empty() {
        return "<none>".to_owned();
    }
    roles.into_iter().collect::<Vec<_>>().join(",")
}

/// The node's first address of one type, or `<none>`.
fn node_address(obj: &Value, kind: &str) -> String {
    list(obj, &["status", "addresses"])
        .iter()
        .find(|a| text(a, &["type"]) == kind)
        .map_or_else(|| "<none>".to_owned(), |a| text(a, &["address"]).to_owned())
}
