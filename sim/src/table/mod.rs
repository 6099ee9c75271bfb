//! Server-side printing: the `meta.k8s.io/v1` `Table` answer.
//!
//! When kubectl lists or gets objects it asks for
//! `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`, and the API
//! server answers with column definitions plus one row of cells per object.
//! What `kubectl get pods` shows (READY, STATUS, RESTARTS, AGE...) is computed
//! here, on the server, so these rules follow upstream's printers
//! (`pkg/printers/internalversion/printers.go`) cell by cell.
//!
//! Like the real server, every table is built "wide": priority-1 columns
//! (the ones `-o wide` adds) always carry cells, and kubectl hides them
//! unless asked. Custom resources get the table apiextensions serves for a
//! CRD without `additionalPrinterColumns`: NAME plus an `Age` date column.
//!
//! Objects are the stored JSON. A missing field never fails a row: it prints
//! the same `<none>`, `<unknown>` or zero upstream prints for a zero value.

use std::fmt;

use jiff::{SignedDuration, Timestamp};
use serde_json::{Map, Value, json};

use crate::resources::Builtin;

mod columns;
mod events;
mod format;
mod nodes;
mod pod;
mod services;
mod simple;
#[cfg(test)]
mod tests;
mod workloads;

use columns::{Column, columns};
use events::{EventFields, print_event};
use format::since;
use nodes::print_node;
use pod::print_pod;
use services::{print_endpoints, print_service};
use simple::{
    print_config_map, print_custom, print_lease, print_namespace, print_pod_disruption_budget, print_role,
    print_role_binding, print_secret, print_service_account,
};
use workloads::{print_deployment, print_pod_template, print_replica_set};

/// What each table row carries besides its cells (`?includeObject=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IncludeObject {
    /// No object at all.
    None,
    /// The object's metadata as a `PartialObjectMetadata` (the default).
    #[default]
    Metadata,
    /// The whole object.
    Object,
}

/// An `includeObject` query value the API server rejects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidIncludeObject(pub String);

impl fmt::Display for InvalidIncludeObject {
    /// Upstream's 400 message for this value, word for word.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Unable to convert to Table as requested: includeObject: Invalid value: {:?}: \
             must be 'Metadata', 'Object', 'None', or empty",
            self.0
        )
    }
}

impl std::error::Error for InvalidIncludeObject {}

impl IncludeObject {
    /// Parses the `includeObject` query value; empty means the default,
    /// `Metadata`. Values are case-sensitive, as upstream.
    pub fn parse(value: &str) -> Result<Self, InvalidIncludeObject> {
        match value {
            "" | "Metadata" => Ok(Self::Metadata),
            "None" => Ok(Self::None),
            "Object" => Ok(Self::Object),
            other => Err(InvalidIncludeObject(other.to_owned())),
        }
    }
}

/// Builds the `Table` for `objects` of one type.
///
/// `kind` is `None` for custom resources. `list_metadata` becomes the table's
/// `metadata` (the list's `resourceVersion`, `continue`...); `now` is the
/// clock AGE and other durations are measured against.
pub fn table(
    kind: Option<Builtin>,
    objects: &[Value],
    include: IncludeObject,
    now: Timestamp,
    list_metadata: Value,
) -> Value {
    let columns: Vec<Value> = columns(kind).iter().map(Column::to_json).collect();
    let rows: Vec<Value> = objects.iter().map(|obj| row_json(print(kind, obj, now), obj, include)).collect();
    let metadata = if list_metadata.is_null() { json!({}) } else { list_metadata };
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "columnDefinitions": columns,
        "rows": rows,
    })
}

/// Formats a duration the way `kubectl get` shows ages: about two or three
/// significant figures ("45s", "3m4s", "5h", "2d3h", "400d", "3y20d").
///
/// A port of apimachinery's `duration.HumanDuration`: up to one second in
/// the future counts as "0s" (clock skew), anything further is `<invalid>`.
pub fn human_duration(d: SignedDuration) -> String {
    let seconds = d.as_secs();
    if seconds < -1 {
        return "<invalid>".to_owned();
    }
    if seconds < 0 {
        return "0s".to_owned();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        return with_remainder(minutes, "m", seconds % 60, "s");
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        return with_remainder(hours, "h", minutes % 60, "m");
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    let days = hours / 24;
    if hours < 24 * 8 {
        return with_remainder(days, "d", hours % 24, "h");
    }
    if hours < 24 * 365 * 2 {
        return format!("{days}d");
    }
    if hours < 24 * 365 * 8 {
        return with_remainder(days / 365, "y", days % 365, "d");
    }
    format!("{}y", days / 365)
}

/// "3m" or "3m4s": the second unit only when it is not zero.
fn with_remainder(big: i64, big_unit: &str, small: i64, small_unit: &str) -> String {
    if small == 0 { format!("{big}{big_unit}") } else { format!("{big}{big_unit}{small}{small_unit}") }
}

// === rows ===

/// One row before the object is attached.
struct Row {
    /// One cell per column, in column order.
    cells: Vec<Value>,
    /// `TableRowCondition`s; only finished pods have any.
    conditions: Vec<Value>,
}

impl From<Vec<Value>> for Row {
    fn from(cells: Vec<Value>) -> Self {
        Self { cells, conditions: Vec::new() }
    }
}

/// Attaches the object `include` asks for and renders the row.
fn row_json(row: Row, obj: &Value, include: IncludeObject) -> Value {
    let mut out = Map::new();
    out.insert("cells".into(), Value::Array(row.cells));
    if !row.conditions.is_empty() {
        out.insert("conditions".into(), Value::Array(row.conditions));
    }
    match include {
        IncludeObject::None => {}
        IncludeObject::Object => {
            out.insert("object".into(), obj.clone());
        }
        IncludeObject::Metadata => {
            let metadata = obj.get("metadata").filter(|m| m.is_object()).cloned().unwrap_or_else(|| json!({}));
            out.insert(
                "object".into(),
                json!({
                    "kind": "PartialObjectMetadata",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": metadata,
                }),
            );
        }
    }
    Value::Object(out)
}

/// Computes one object's cells.
fn print(kind: Option<Builtin>, obj: &Value, now: Timestamp) -> Row {
    let Some(kind) = kind else {
        return print_custom(obj, now).into();
    };
    match kind {
        Builtin::Pod => print_pod(obj, now),
        Builtin::Namespace => print_namespace(obj, now).into(),
        Builtin::Node => print_node(obj, now).into(),
        Builtin::Service => print_service(obj, now).into(),
        Builtin::Endpoints => print_endpoints(obj, now).into(),
        Builtin::ConfigMap => print_config_map(obj, now).into(),
        Builtin::Secret => print_secret(obj, now).into(),
        Builtin::ServiceAccount => print_service_account(obj, now).into(),
        Builtin::CoreEvent => print_event(&EventFields::core(obj), now).into(),
        Builtin::EventsEvent => print_event(&EventFields::events_v1(obj), now).into(),
        Builtin::PodTemplate => print_pod_template(obj).into(),
        Builtin::Deployment => print_deployment(obj, now).into(),
        Builtin::ReplicaSet => print_replica_set(obj, now).into(),
        Builtin::Lease => print_lease(obj, now).into(),
        Builtin::ClusterRole | Builtin::Role => print_role(obj).into(),
        Builtin::ClusterRoleBinding | Builtin::RoleBinding => print_role_binding(obj, now).into(),
        Builtin::PodDisruptionBudget => print_pod_disruption_budget(obj, now).into(),
    }
}

/// The object's name cell.
fn name(obj: &Value) -> Value {
    Value::from(text(obj, &["metadata", "name"]))
}

/// The object's AGE cell: time since creation, `<unknown>` without one.
fn age(obj: &Value, now: Timestamp) -> Value {
    Value::from(since(now, time(obj, &["metadata", "creationTimestamp"])))
}

// === JSON access ===

/// The value at `path`, treating `null` as absent.
fn get<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |cur, key| cur.get(key)).filter(|v| !v.is_null())
}

/// The string at `path`, if it is one.
fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    get(v, path).and_then(Value::as_str)
}

/// The string at `path`, or "" (Go's zero value).
fn text<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    str_at(v, path).unwrap_or("")
}

/// The integer at `path`.
fn int(v: &Value, path: &[&str]) -> Option<i64> {
    get(v, path).and_then(Value::as_i64)
}

/// The boolean at `path`, false when absent.
fn flag(v: &Value, path: &[&str]) -> bool {
    get(v, path).and_then(Value::as_bool).unwrap_or(false)
}

/// The array at `path`, empty when absent.
fn list<'a>(v: &'a Value, path: &[&str]) -> &'a [Value] {
    get(v, path).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// The strings of an array, skipping anything else.
fn strings(values: &[Value]) -> Vec<&str> {
    values.iter().filter_map(Value::as_str).collect()
}

/// How many keys the object at `path` has.
fn map_len(v: &Value, path: &[&str]) -> usize {
    get(v, path).and_then(Value::as_object).map_or(0, Map::len)
}

/// The RFC 3339 timestamp at `path`; absent or unparsable is no time.
fn time(v: &Value, path: &[&str]) -> Option<Timestamp> {
    str_at(v, path).and_then(|s| s.parse().ok())
}
