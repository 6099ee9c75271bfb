//! Rows of PodTemplate, the apps/v1 workloads and ControllerRevision.

use jiff::Timestamp;
use serde_json::Value;

use super::access::{get, int, list, text};
use super::cells::{age, name};
use super::format::{container_cells, format_label_selector, format_labels, selector_string};

pub(super) fn print_pod_template(obj: &Value) -> Vec<Value> {
    let (names, images) = container_cells(list(obj, &["template", "spec", "containers"]));
    vec![
        name(obj),
        Value::from(names),
        Value::from(images),
        Value::from(format_labels(get(obj, &["template", "metadata", "labels"]))),
    ]
}

pub(super) fn print_deployment(obj: &Value, now: Timestamp) -> Vec<Value> {
    // apps/v1 defaults spec.replicas to 1.
    let desired = int(obj, &["spec", "replicas"]).unwrap_or(1);
    let ready = int(obj, &["status", "readyReplicas"]).unwrap_or(0);
    let (names, images) = container_cells(list(obj, &["spec", "template", "spec", "containers"]));
    let selector = selector_string(get(obj, &["spec", "selector"])).unwrap_or_else(|_| "<invalid>".to_owned());
    vec![
        name(obj),
        Value::from(format!("{ready}/{desired}")),
        Value::from(int(obj, &["status", "updatedReplicas"]).unwrap_or(0)),
        Value::from(int(obj, &["status", "availableReplicas"]).unwrap_or(0)),
        age(obj, now),
        Value::from(names),
        Value::from(images),
        Value::from(selector),
    ]
}

pub(super) fn print_replica_set(obj: &Value, now: Timestamp) -> Vec<Value> {
    let (names, images) = container_cells(list(obj, &["spec", "template", "spec", "containers"]));
    vec![
        name(obj),
        Value::from(int(obj, &["spec", "replicas"]).unwrap_or(1)),
        Value::from(int(obj, &["status", "replicas"]).unwrap_or(0)),
        Value::from(int(obj, &["status", "readyReplicas"]).unwrap_or(0)),
        age(obj, now),
        Value::from(names),
        Value::from(images),
        Value::from(format_label_selector(get(obj, &["spec", "selector"]))),
    ]
}

pub(super) fn print_daemon_set(obj: &Value, now: Timestamp) -> Vec<Value> {
    let count = |field: &str| Value::from(int(obj, &["status", field]).unwrap_or(0));
    let (names, images) = container_cells(list(obj, &["spec", "template", "spec", "containers"]));
    vec![
        name(obj),
        count("desiredNumberScheduled"),
        count("currentNumberScheduled"),
        count("numberReady"),
        count("updatedNumberScheduled"),
        count("numberAvailable"),
        Value::from(format_labels(get(obj, &["spec", "template", "spec", "nodeSelector"]))),
        age(obj, now),
        Value::from(names),
        Value::from(images),
        Value::from(format_label_selector(get(obj, &["spec", "selector"]))),
    ]
}

pub(super) fn print_stateful_set(obj: &Value, now: Timestamp) -> Vec<Value> {
    // apps/v1 defaults spec.replicas to 1.
    let desired = int(obj, &["spec", "replicas"]).unwrap_or(1);
    let ready = int(obj, &["status", "readyReplicas"]).unwrap_or(0);
    let (names, images) = container_cells(list(obj, &["spec", "template", "spec", "containers"]));
    vec![name(obj), Value::from(format!("{ready}/{desired}")), age(obj, now), Value::from(names), Value::from(images)]
}

/// The CONTROLLER cell is the controlling owner as `kind.group/name`, lower
/// case (`daemonset.apps/web`), or `<none>`.
pub(super) fn print_controller_revision(obj: &Value, now: Timestamp) -> Vec<Value> {
    let controller = list(obj, &["metadata", "ownerReferences"])
        .iter()
        .find(|r| get(r, &["controller"]).and_then(Value::as_bool) == Some(true))
        .map_or_else(|| "<none>".to_owned(), controller_name);
    vec![name(obj), Value::from(controller), Value::from(int(obj, &["revision"]).unwrap_or(0)), age(obj, now)]
}

/// Upstream `formatResourceName` with the owner's group and kind.
fn controller_name(reference: &Value) -> String {
    let api_version = text(reference, &["apiVersion"]);
    let (kind, owner) = (text(reference, &["kind"]), text(reference, &["name"]));
    let group = match api_version.split('/').collect::<Vec<_>>()[..] {
        [_version] => "",
        [group, _version] => group,
        _ => return owner.to_owned(),
    };
    if kind.is_empty() && group.is_empty() {
        return owner.to_owned();
    }
    let group_kind = if group.is_empty() { kind.to_owned() } else { format!("{kind}.{group}") };
    format!("{}/{owner}", group_kind.to_lowercase())
}
