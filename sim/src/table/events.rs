//! Rows of Events, from either `core/v1` or `events.k8s.io/v1` objects.

use jiff::Timestamp;
use serde_json::Value;

use super::access::{get, int, text, time};
use super::format::since;

/// The fields the event printer reads, wherever the API version keeps them.
pub(super) struct EventFields<'a> {
    first: Option<Timestamp>,
    last: Option<Timestamp>,
    event_time: Option<Timestamp>,
    count: i64,
    series: Option<&'a Value>,
    regarding: Option<&'a Value>,
    kind_type: &'a str,
    reason: &'a str,
    message: &'a str,
    source_component: &'a str,
    source_host: &'a str,
    reporting_controller: &'a str,
    reporting_instance: &'a str,
    name: &'a str,
}

impl<'a> EventFields<'a> {
    /// A core/v1 Event.
    pub(super) fn core(obj: &'a Value) -> Self {
        Self {
            first: time(obj, &["firstTimestamp"]),
            last: time(obj, &["lastTimestamp"]),
            event_time: time(obj, &["eventTime"]),
            count: int(obj, &["count"]).unwrap_or(0),
            series: get(obj, &["series"]),
            regarding: get(obj, &["involvedObject"]),
            kind_type: text(obj, &["type"]),
            reason: text(obj, &["reason"]),
            message: text(obj, &["message"]),
            source_component: text(obj, &["source", "component"]),
            source_host: text(obj, &["source", "host"]),
            reporting_controller: text(obj, &["reportingComponent"]),
            reporting_instance: text(obj, &["reportingInstance"]),
            name: text(obj, &["metadata", "name"]),
        }
    }

    /// An events.k8s.io/v1 Event, whose fields have different names.
    pub(super) fn events_v1(obj: &'a Value) -> Self {
        Self {
            first: time(obj, &["deprecatedFirstTimestamp"]),
            last: time(obj, &["deprecatedLastTimestamp"]),
            count: int(obj, &["deprecatedCount"]).unwrap_or(0),
            regarding: get(obj, &["regarding"]),
            message: text(obj, &["note"]),
            source_component: text(obj, &["deprecatedSource", "component"]),
            source_host: text(obj, &["deprecatedSource", "host"]),
            reporting_controller: text(obj, &["reportingController"]),
            ..Self::core(obj)
        }
    }
}

pub(super) fn print_event(e: &EventFields<'_>, now: Timestamp) -> Vec<Value> {
    let first_seen = match e.first {
        Some(t) => since(now, Some(t)),
        None => since(now, e.event_time),
    };
    let mut last_seen = match e.last {
        Some(t) => since(now, Some(t)),
        None => first_seen.clone(),
    };
    let mut count = e.count;
    if let Some(series) = e.series {
        last_seen = since(now, time(series, &["lastObservedTime"]));
        count = int(series, &["count"]).unwrap_or(0);
    } else if count == 0 {
        // Singleton events of the new API carry no count.
        count = 1;
    }
    let (kind, target_name, field_path) = match e.regarding {
        Some(r) => (text(r, &["kind"]).to_lowercase(), text(r, &["name"]), text(r, &["fieldPath"])),
        None => (String::new(), "", ""),
    };
    let target = if target_name.is_empty() { kind } else { format!("{kind}/{target_name}") };
    let component = first_non_empty(e.source_component, e.reporting_controller);
    let instance = first_non_empty(e.source_host, e.reporting_instance);
    let source = if instance.is_empty() { component.to_owned() } else { format!("{component}, {instance}") };
    vec![
        Value::from(last_seen),
        Value::from(e.kind_type),
        Value::from(e.reason),
        Value::from(target),
        Value::from(field_path),
        Value::from(source),
        Value::from(e.message.trim()),
        Value::from(first_seen),
        Value::from(count),
        Value::from(e.name),
    ]
}

fn first_non_empty<'a>(a: &'a str, b: &'a str) -> &'a str {
    if a.is_empty() { b } else { a }
}
