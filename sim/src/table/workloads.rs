//! Rows of PodTemplate, Deployment and ReplicaSet.

use jiff::Timestamp;
use serde_json::Value;

use super::access::{get, int, list};
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
