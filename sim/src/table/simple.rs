//! Rows of the kinds printed from metadata and a count: custom resources,
//! Namespace, ConfigMap, Secret, ServiceAccount and Lease.

use jiff::Timestamp;
use serde_json::Value;

use super::{age, get, human_duration, list, map_len, name, str_at, text};

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
