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

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use jiff::{SignedDuration, Timestamp};
use serde_json::{Map, Value, json};

use crate::resources::Builtin;

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

// === columns ===

/// One `TableColumnDefinition`.
struct Column {
    /// Header text; kubectl upper-cases it.
    name: &'static str,
    /// OpenAPI type: string, integer, date...
    ty: &'static str,
    /// OpenAPI format; "name" marks the column holding the object's name.
    format: &'static str,
    /// What the column shows.
    description: &'static str,
    /// 0 for default output, 1 for columns only `-o wide` shows.
    priority: u8,
}

impl Column {
    /// A default-output string column.
    const fn text(name: &'static str, description: &'static str) -> Self {
        Self { name, ty: "string", format: "", description, priority: 0 }
    }

    /// A default-output integer column.
    const fn int(name: &'static str, description: &'static str) -> Self {
        Self { ty: "integer", ..Self::text(name, description) }
    }

    /// A string column only `-o wide` shows.
    const fn wide(name: &'static str, description: &'static str) -> Self {
        Self { priority: 1, ..Self::text(name, description) }
    }

    /// The definition as the API sends it (every field always present).
    fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "type": self.ty,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        })
    }
}

/// ObjectMeta's documentation of `name`.
const NAME_DOC: &str = "Name must be unique within a namespace. Is required when creating resources, \
     although some resources may allow a client to request the generation of an appropriate name \
     automatically. Name is primarily intended for creation idempotence and configuration \
     definition. Cannot be updated. More info: \
     https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

/// ObjectMeta's documentation of `creationTimestamp`.
const CREATED_DOC: &str = "CreationTimestamp is a timestamp representing the server time when this object was \
     created. It is not guaranteed to be set in happens-before order across separate operations. \
     Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\n\
     Populated by the system. Read-only. Null for lists. More info: \
     https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// Description shared by every CONTAINERS column.
const CONTAINERS_DOC: &str = "Names of each container in the template.";
/// Description shared by every IMAGES column.
const IMAGES_DOC: &str = "Images referenced by each container in the template.";

/// The NAME column every table starts with (events put it last).
const NAME: Column = Column { format: "name", ..Column::text("Name", NAME_DOC) };
/// The AGE column of built-in types.
const AGE: Column = Column::text("Age", CREATED_DOC);

const POD_COLUMNS: &[Column] = &[
    NAME,
    Column::text("Ready", "The aggregate readiness state of this pod for accepting traffic."),
    Column::text("Status", "The aggregate status of the containers in this pod."),
    Column::text(
        "Restarts",
        "The number of times the containers in this pod have been restarted and when the last \
         container in this pod has restarted.",
    ),
    AGE,
    Column::wide("IP", "podIP address allocated to the pod."),
    Column::wide("Node", "NodeName indicates in which node this pod is scheduled."),
    Column::wide("Nominated Node", "nominatedNodeName is set only when this pod preempts other pods on the node."),
    Column::wide("Readiness Gates", "If specified, all readiness gates will be evaluated for pod readiness."),
];

const POD_TEMPLATE_COLUMNS: &[Column] = &[
    NAME,
    Column::text("Containers", CONTAINERS_DOC),
    Column::text("Images", IMAGES_DOC),
    Column::text("Pod Labels", "The labels for the pod template."),
];

const REPLICA_SET_COLUMNS: &[Column] = &[
    NAME,
    Column::int("Desired", "Replicas is the number of desired replicas."),
    Column::int("Current", "Replicas is the most recently observed number of replicas."),
    Column::int("Ready", "The number of ready replicas for this replica set."),
    AGE,
    Column::wide("Containers", CONTAINERS_DOC),
    Column::wide("Images", IMAGES_DOC),
    Column::wide("Selector", "Selector is a label query over pods that should match the replica count."),
];

const DEPLOYMENT_COLUMNS: &[Column] = &[
    NAME,
    Column::text("Ready", "Number of the pod with ready state"),
    Column::text(
        "Up-to-date",
        "Total number of non-terminated pods targeted by this deployment that have the desired \
         template spec.",
    ),
    Column::text(
        "Available",
        "Total number of available pods (ready for at least minReadySeconds) targeted by this \
         deployment.",
    ),
    AGE,
    Column::wide("Containers", CONTAINERS_DOC),
    Column::wide("Images", IMAGES_DOC),
    Column::wide(
        "Selector",
        "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be \
         the ones affected by this deployment.",
    ),
];

const SERVICE_COLUMNS: &[Column] = &[
    NAME,
    Column::text("Type", "type determines how the Service is exposed."),
    Column::text("Cluster-IP", "clusterIP is the IP address of the service and is usually assigned randomly."),
    Column::text(
        "External-IP",
        "externalIPs is a list of IP addresses for which nodes in the cluster will also accept \
         traffic for this service.",
    ),
    Column::text("Port(s)", "The list of ports that are exposed by this service."),
    AGE,
    Column::wide("Selector", "Route service traffic to pods with label keys and values matching this selector."),
];

const ENDPOINTS_COLUMNS: &[Column] =
    &[NAME, Column::text("Endpoints", "The set of all endpoints is the union of all subsets."), AGE];

const NODE_COLUMNS: &[Column] = &[
    NAME,
    Column::text("Status", "The status of the node"),
    Column::text("Roles", "The roles of the node"),
    AGE,
    Column::text("Version", "Kubelet Version reported by the node."),
    Column::wide("Internal-IP", "List of addresses reachable to the node."),
    Column::wide("External-IP", "List of addresses reachable to the node."),
    Column::wide("OS-Image", "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy))."),
    Column::wide("Kernel-Version", "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)."),
    Column::wide(
        "Container-Runtime",
        "ContainerRuntime Version reported by the node through runtime remote API (e.g. \
         containerd://1.4.2).",
    ),
];

const EVENT_COLUMNS: &[Column] = &[
    Column::text("Last Seen", "The time at which the most recent occurrence of this event was recorded."),
    Column::text("Type", "Type of this event (Normal, Warning), new types could be added in the future"),
    Column::text(
        "Reason",
        "This should be a short, machine understandable string that gives the reason for the \
         transition into the object's current status.",
    ),
    Column::text("Object", "The object that this event is about."),
    Column::wide(
        "Subobject",
        "If referring to a piece of an object instead of an entire object, this string should \
         contain a valid JSON/Go field access statement.",
    ),
    Column::wide("Source", "The component reporting this event. Should be a short machine understandable string."),
    Column::text("Message", "A human-readable description of the status of this operation."),
    Column::wide(
        "First Seen",
        "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
    ),
    Column::wide("Count", "The number of times this event has occurred."),
    Column { format: "name", priority: 1, ..Column::text("Name", NAME_DOC) },
];

const NAMESPACE_COLUMNS: &[Column] = &[NAME, Column::text("Status", "The status of the namespace"), AGE];

const SECRET_COLUMNS: &[Column] = &[
    NAME,
    Column::text("Type", "Used to facilitate programmatic handling of secret data."),
    Column::text(
        "Data",
        "Data contains the secret data. Each key must consist of alphanumeric characters, '-', \
         '_' or '.'.",
    ),
    AGE,
];

const SERVICE_ACCOUNT_COLUMNS: &[Column] = &[
    NAME,
    Column::text(
        "Secrets",
        "Secrets is a list of the secrets in the same namespace that pods running using this \
         ServiceAccount are allowed to use.",
    ),
    AGE,
];

const CONFIG_MAP_COLUMNS: &[Column] = &[
    NAME,
    Column::text(
        "Data",
        "Data contains the configuration data. Each key must consist of alphanumeric characters, \
         '-', '_' or '.'.",
    ),
    AGE,
];

const LEASE_COLUMNS: &[Column] =
    &[NAME, Column::text("Holder", "holderIdentity contains the identity of the holder of a current lease."), AGE];

/// What apiextensions serves for a CRD version without
/// `additionalPrinterColumns`: NAME plus a date-typed Age column.
const CUSTOM_COLUMNS: &[Column] = &[NAME, Column { ty: "date", ..Column::text("Age", CREATED_DOC) }];

/// The column definitions of one type's table.
fn columns(kind: Option<Builtin>) -> &'static [Column] {
    let Some(kind) = kind else {
        return CUSTOM_COLUMNS;
    };
    match kind {
        Builtin::Namespace => NAMESPACE_COLUMNS,
        Builtin::Node => NODE_COLUMNS,
        Builtin::Pod => POD_COLUMNS,
        Builtin::Service => SERVICE_COLUMNS,
        Builtin::Endpoints => ENDPOINTS_COLUMNS,
        Builtin::ConfigMap => CONFIG_MAP_COLUMNS,
        Builtin::Secret => SECRET_COLUMNS,
        Builtin::ServiceAccount => SERVICE_ACCOUNT_COLUMNS,
        Builtin::CoreEvent | Builtin::EventsEvent => EVENT_COLUMNS,
        Builtin::PodTemplate => POD_TEMPLATE_COLUMNS,
        Builtin::Deployment => DEPLOYMENT_COLUMNS,
        Builtin::ReplicaSet => REPLICA_SET_COLUMNS,
        Builtin::Lease => LEASE_COLUMNS,
    }
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

fn print_custom(obj: &Value, now: Timestamp) -> Vec<Value> {
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

fn print_namespace(obj: &Value, now: Timestamp) -> Vec<Value> {
    // The real server always sets status.phase; default it the same way.
    let phase = match str_at(obj, &["status", "phase"]) {
        Some(p) if !p.is_empty() => p,
        _ if get(obj, &["metadata", "deletionTimestamp"]).is_some() => "Terminating",
        _ => "Active",
    };
    vec![name(obj), Value::from(phase), age(obj, now)]
}

fn print_config_map(obj: &Value, now: Timestamp) -> Vec<Value> {
    let count = map_len(obj, &["data"]) + map_len(obj, &["binaryData"]);
    vec![name(obj), Value::from(count), age(obj, now)]
}

fn print_secret(obj: &Value, now: Timestamp) -> Vec<Value> {
    vec![name(obj), Value::from(text(obj, &["type"])), Value::from(map_len(obj, &["data"])), age(obj, now)]
}

fn print_service_account(obj: &Value, now: Timestamp) -> Vec<Value> {
    let secrets = list(obj, &["secrets"]).len();
    vec![name(obj), Value::from(secrets), age(obj, now)]
}

fn print_lease(obj: &Value, now: Timestamp) -> Vec<Value> {
    vec![name(obj), Value::from(text(obj, &["spec", "holderIdentity"])), age(obj, now)]
}

fn print_pod_template(obj: &Value) -> Vec<Value> {
    let (names, images) = container_cells(list(obj, &["template", "spec", "containers"]));
    vec![
        name(obj),
        Value::from(names),
        Value::from(images),
        Value::from(format_labels(get(obj, &["template", "metadata", "labels"]))),
    ]
}

fn print_deployment(obj: &Value, now: Timestamp) -> Vec<Value> {
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

fn print_replica_set(obj: &Value, now: Timestamp) -> Vec<Value> {
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

// === pods ===

/// Why a pod is where it is: the STATUS column, plus READY and RESTARTS.
fn print_pod(obj: &Value, now: Timestamp) -> Row {
    let phase = text(obj, &["status", "phase"]);
    let conditions = list(obj, &["status", "conditions"]);
    let mut reason = match text(obj, &["status", "reason"]) {
        "" => phase.to_owned(),
        r => r.to_owned(),
    };
    let gated =
        conditions.iter().any(|c| text(c, &["type"]) == "PodScheduled" && text(c, &["reason"]) == "SchedulingGated");
    if gated {
        reason = "SchedulingGated".to_owned();
    }

    let init_specs = list(obj, &["spec", "initContainers"]);
    let sidecars: BTreeSet<&str> =
        init_specs.iter().filter(|c| text(c, &["restartPolicy"]) == "Always").map(|c| text(c, &["name"])).collect();
    let total = list(obj, &["spec", "containers"]).len() + sidecars.len();
    let mut ready = 0usize;
    let mut restarts = Restarts::default();
    let mut sidecar_restarts = Restarts::default();

    let mut initializing = false;
    for (i, status) in list(obj, &["status", "initContainerStatuses"]).iter().enumerate() {
        let is_sidecar = sidecars.contains(text(status, &["name"]));
        restarts.add(status);
        if is_sidecar {
            sidecar_restarts.add(status);
        }
        let terminated = get(status, &["state", "terminated"]);
        let waiting_reason = str_at(status, &["state", "waiting", "reason"]).unwrap_or("");
        if terminated.is_some_and(|t| int(t, &["exitCode"]).unwrap_or(0) == 0) {
            continue;
        }
        if is_sidecar && get(status, &["started"]).and_then(Value::as_bool) == Some(true) {
            if flag(status, &["ready"]) {
                ready += 1;
            }
            continue;
        }
        reason = if let Some(t) = terminated {
            format!("Init:{}", terminated_reason(t))
        } else if !waiting_reason.is_empty() && waiting_reason != "PodInitializing" {
            format!("Init:{waiting_reason}")
        } else {
            format!("Init:{i}/{}", init_specs.len())
        };
        initializing = true;
        break;
    }

    let initialized = conditions.iter().any(|c| text(c, &["type"]) == "Initialized" && text(c, &["status"]) == "True");
    if !initializing || initialized {
        restarts = sidecar_restarts;
        let mut has_running = false;
        for status in list(obj, &["status", "containerStatuses"]).iter().rev() {
            restarts.add(status);
            let waiting_reason = str_at(status, &["state", "waiting", "reason"]).unwrap_or("");
            if !waiting_reason.is_empty() {
                reason = waiting_reason.to_owned();
            } else if let Some(t) = get(status, &["state", "terminated"]) {
                reason = terminated_reason(t);
            } else if flag(status, &["ready"]) && get(status, &["state", "running"]).is_some() {
                has_running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && has_running {
            let pod_ready = conditions.iter().any(|c| text(c, &["type"]) == "Ready" && text(c, &["status"]) == "True");
            reason = if pod_ready { "Running" } else { "NotReady" }.to_owned();
        }
    }

    if get(obj, &["metadata", "deletionTimestamp"]).is_some() {
        if text(obj, &["status", "reason"]) == "NodeLost" {
            reason = "Unknown".to_owned();
        } else if phase != "Succeeded" && phase != "Failed" {
            reason = "Terminating".to_owned();
        }
    }
    let cells = vec![
        name(obj),
        Value::from(format!("{ready}/{total}")),
        Value::from(reason),
        Value::from(restarts.cell(now)),
        age(obj, now),
        Value::from(or_none(&pod_ip(obj))),
        Value::from(or_none(text(obj, &["spec", "nodeName"]))),
        Value::from(or_none(text(obj, &["status", "nominatedNodeName"]))),
        Value::from(readiness_gates(obj, conditions)),
    ];
    let conditions = match phase {
        "Succeeded" => vec![row_completed("Succeeded", "The pod has completed successfully.")],
        "Failed" => vec![row_completed("Failed", "The pod failed.")],
        _ => Vec::new(),
    };
    Row { cells, conditions }
}

/// The `Completed` row condition finished pods carry.
fn row_completed(reason: &str, message: &str) -> Value {
    json!({"type": "Completed", "status": "True", "reason": reason, "message": message})
}

/// A terminated container's reason, or its signal or exit code without one.
fn terminated_reason(terminated: &Value) -> String {
    match text(terminated, &["reason"]) {
        "" => match int(terminated, &["signal"]).unwrap_or(0) {
            0 => format!("ExitCode:{}", int(terminated, &["exitCode"]).unwrap_or(0)),
            signal => format!("Signal:{signal}"),
        },
        r => r.to_owned(),
    }
}

/// Restart count and the latest restart, summed over container statuses.
#[derive(Default, Clone, Copy)]
struct Restarts {
    /// Sum of `restartCount`.
    count: i64,
    /// The latest `lastState.terminated.finishedAt` seen.
    last: Option<Timestamp>,
}

impl Restarts {
    /// Adds one container status.
    fn add(&mut self, status: &Value) {
        self.count += int(status, &["restartCount"]).unwrap_or(0);
        if let Some(finished) = time(status, &["lastState", "terminated", "finishedAt"])
            && self.last.is_none_or(|last| last < finished)
        {
            self.last = Some(finished);
        }
    }

    /// "2" or "2 (5m ago)".
    fn cell(&self, now: Timestamp) -> String {
        match self.last {
            Some(last) if self.count != 0 => {
                format!("{} ({} ago)", self.count, since(now, Some(last)))
            }
            _ => self.count.to_string(),
        }
    }
}

/// The pod's primary IP, as the internal type sees it (podIP wins).
fn pod_ip(obj: &Value) -> String {
    match text(obj, &["status", "podIP"]) {
        "" => list(obj, &["status", "podIPs"]).first().map(|ip| text(ip, &["ip"])).unwrap_or("").to_owned(),
        ip => ip.to_owned(),
    }
}

/// READINESS GATES: "true gates/all gates", or `<none>`.
fn readiness_gates(obj: &Value, conditions: &[Value]) -> String {
    let gates = list(obj, &["spec", "readinessGates"]);
    if gates.is_empty() {
        return "<none>".to_owned();
    }
    let passing = gates
        .iter()
        .filter(|gate| {
            let wanted = text(gate, &["conditionType"]);
            conditions.iter().find(|c| text(c, &["type"]) == wanted).is_some_and(|c| text(c, &["status"]) == "True")
        })
        .count();
    format!("{passing}/{}", gates.len())
}

// === nodes ===

fn print_node(obj: &Value, now: Timestamp) -> Vec<Value> {
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

// === services and endpoints ===

fn print_service(obj: &Value, now: Timestamp) -> Vec<Value> {
    // The real server always defaults spec.type.
    let svc_type = match text(obj, &["spec", "type"]) {
        "" => "ClusterIP",
        t => t,
    };
    let cluster_ip = match text(obj, &["spec", "clusterIP"]) {
        "" => list(obj, &["spec", "clusterIPs"]).first().and_then(Value::as_str).unwrap_or(""),
        ip => ip,
    };
    let ports: Vec<String> = list(obj, &["spec", "ports"])
        .iter()
        .map(|p| {
            let port = int(p, &["port"]).unwrap_or(0);
            let protocol = match text(p, &["protocol"]) {
                "" => "TCP",
                proto => proto,
            };
            match int(p, &["nodePort"]).unwrap_or(0) {
                n if n > 0 => format!("{port}:{n}/{protocol}"),
                _ => format!("{port}/{protocol}"),
            }
        })
        .collect();
    vec![
        name(obj),
        Value::from(svc_type),
        Value::from(or_none(cluster_ip)),
        Value::from(service_external_ip(obj, svc_type)),
        Value::from(or_none(&ports.join(","))),
        age(obj, now),
        Value::from(format_labels(get(obj, &["spec", "selector"]))),
    ]
}

/// EXTERNAL-IP: external IPs, load balancer ingress points or the external
/// name, depending on the service type.
fn service_external_ip(obj: &Value, svc_type: &str) -> String {
    let external: Vec<&str> = strings(list(obj, &["spec", "externalIPs"]));
    match svc_type {
        "ClusterIP" | "NodePort" if external.is_empty() => "<none>".to_owned(),
        "ClusterIP" | "NodePort" => external.join(","),
        "LoadBalancer" => {
            let ingress: BTreeSet<&str> = list(obj, &["status", "loadBalancer", "ingress"])
                .iter()
                .filter_map(|i| match (text(i, &["ip"]), text(i, &["hostname"])) {
                    ("", "") => None,
                    ("", host) => Some(host),
                    (ip, _) => Some(ip),
                })
                .collect();
            let mut all: Vec<&str> = ingress.into_iter().collect();
            all.extend(external);
            if all.is_empty() { "<pending>".to_owned() } else { all.join(",") }
        }
        "ExternalName" => text(obj, &["spec", "externalName"]).to_owned(),
        _ => "<unknown>".to_owned(),
    }
}

fn print_endpoints(obj: &Value, now: Timestamp) -> Vec<Value> {
    vec![name(obj), Value::from(format_endpoints(obj)), age(obj, now)]
}

/// ENDPOINTS: up to three `ip:port` pairs, then "+ N more...".
fn format_endpoints(obj: &Value) -> String {
    const MAX: usize = 3;
    let subsets = list(obj, &["subsets"]);
    if subsets.is_empty() {
        return "<none>".to_owned();
    }
    let mut shown = Vec::new();
    let mut count = 0;
    for subset in subsets {
        let addresses = list(subset, &["addresses"]);
        let ports = list(subset, &["ports"]);
        // A headless service may have no ports: list bare IPs.
        let port_numbers: Vec<Option<i64>> = if ports.is_empty() {
            vec![None]
        } else {
            ports.iter().map(|p| Some(int(p, &["port"]).unwrap_or(0))).collect()
        };
        for port in port_numbers {
            count += addresses.len();
            for address in addresses {
                if shown.len() == MAX {
                    break;
                }
                let ip = text(address, &["ip"]);
                shown.push(match port {
                    None => ip.to_owned(),
                    Some(p) if ip.contains(':') => format!("[{ip}]:{p}"),
                    Some(p) => format!("{ip}:{p}"),
                });
            }
        }
    }
    let joined = shown.join(",");
    if count > MAX { format!("{joined} + {} more...", count - MAX) } else { joined }
}

// === events ===

/// The fields the event printer reads, wherever the API version keeps them.
struct EventFields<'a> {
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
    fn core(obj: &'a Value) -> Self {
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
    fn events_v1(obj: &'a Value) -> Self {
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

fn print_event(e: &EventFields<'_>, now: Timestamp) -> Vec<Value> {
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

// === formatting helpers ===

/// CONTAINERS and IMAGES cells: names and images, comma-separated.
fn container_cells(containers: &[Value]) -> (String, String) {
    let names: Vec<&str> = containers.iter().map(|c| text(c, &["name"])).collect();
    let images: Vec<&str> = containers.iter().map(|c| text(c, &["image"])).collect();
    (names.join(","), images.join(","))
}

/// `labels.FormatLabels`: "k=v,k2=v2" sorted by key, or `<none>`.
fn format_labels(labels: Option<&Value>) -> String {
    let pairs: BTreeMap<&str, &str> = labels
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.as_str(), v.as_str().unwrap_or(""))).collect())
        .unwrap_or_default();
    if pairs.is_empty() {
        return "<none>".to_owned();
    }
    pairs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")
}

/// `metav1.FormatLabelSelector`: the selector string, `<none>` when it
/// selects everything or nothing, `<error>` when it is malformed.
fn format_label_selector(selector: Option<&Value>) -> String {
    match selector_string(selector) {
        Ok(s) if s.is_empty() => "<none>".to_owned(),
        Ok(s) => s,
        Err(()) => "<error>".to_owned(),
    }
}

/// A `LabelSelector` rendered as a label query ("app=web,tier in (a,b)"),
/// requirements sorted by key. Err when an expression is malformed.
fn selector_string(selector: Option<&Value>) -> Result<String, ()> {
    let Some(selector) = selector.filter(|s| s.is_object()) else {
        return Ok(String::new());
    };
    let mut requirements: Vec<(&str, String)> = Vec::new();
    if let Some(labels) = get(selector, &["matchLabels"]).and_then(Value::as_object) {
        for (key, value) in labels {
            requirements.push((key, format!("{key}={}", value.as_str().unwrap_or(""))));
        }
    }
    for expr in list(selector, &["matchExpressions"]) {
        let key = text(expr, &["key"]);
        let mut values = strings(list(expr, &["values"]));
        values.sort_unstable();
        let rendered = match (text(expr, &["operator"]), values.is_empty()) {
            ("In", false) => format!("{key} in ({})", values.join(",")),
            ("NotIn", false) => format!("{key} notin ({})", values.join(",")),
            ("Exists", true) => key.to_owned(),
            ("DoesNotExist", true) => format!("!{key}"),
            _ => return Err(()),
        };
        requirements.push((key, rendered));
    }
    requirements.sort_by(|a, b| a.0.cmp(b.0));
    Ok(requirements.into_iter().map(|(_, r)| r).collect::<Vec<_>>().join(","))
}

/// Elapsed time since `t`, or `<unknown>` when there is no time.
fn since(now: Timestamp, t: Option<Timestamp>) -> String {
    match t {
        Some(t) => human_duration(now.duration_since(t)),
        None => "<unknown>".to_owned(),
    }
}

/// `<none>` for an empty string.
fn or_none(s: &str) -> String {
    if s.is_empty() { "<none>".to_owned() } else { s.to_owned() }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2024-06-01T12:00:00Z".parse().expect("valid time")
    }

    /// An RFC 3339 time `secs` seconds before `now()`.
    fn ago(secs: i64) -> String {
        (now() - SignedDuration::from_secs(secs)).to_string()
    }

    fn one(kind: Builtin, obj: Value) -> Vec<Value> {
        let t = table(Some(kind), &[obj], IncludeObject::None, now(), json!({}));
        t["rows"][0]["cells"].as_array().expect("array").clone()
    }

    /// Cells by column name, for readable asserts.
    fn cell(kind: Builtin, obj: Value, column: &str) -> Value {
        let i = columns(Some(kind)).iter().position(|c| c.name == column).expect("known column");
        one(kind, obj)[i].clone()
    }

    fn pod(spec: Value, status: Value) -> Value {
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-0", "namespace": "default", "creationTimestamp": ago(300)},
            "spec": spec, "status": status,
        })
    }

    fn one_container() -> Value {
        json!({"containers": [{"name": "app", "image": "nginx"}]})
    }

    #[test]
    fn human_duration_matches_upstream_boundaries() {
        let cases = [
            (-3, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (59, "59s"),
            (119, "119s"),
            (120, "2m"),
            (184, "3m4s"),
            (599, "9m59s"),
            (600, "10m"),
            (179 * 60, "179m"),
            (3 * 3600, "3h"),
            (3 * 3600 + 5 * 60, "3h5m"),
            (8 * 3600, "8h"),
            (47 * 3600, "47h"),
            (48 * 3600, "2d"),
            (5 * 86400, "5d"),
            (5 * 86400 + 3 * 3600, "5d3h"),
            (8 * 86400, "8d"),
            (729 * 86400, "729d"),
            (730 * 86400, "2y"),
            (745 * 86400, "2y15d"),
            (8 * 365 * 86400, "8y"),
            (9 * 365 * 86400 + 40 * 86400, "9y"),
        ];
        for (secs, want) in cases {
            assert_eq!(human_duration(SignedDuration::from_secs(secs)), want, "{secs}s");
        }
        assert_eq!(human_duration(SignedDuration::from_millis(-1500)), "0s");
    }

    #[test]
    fn pod_columns_are_upstreams() {
        let names: Vec<(&str, u8)> = POD_COLUMNS.iter().map(|c| (c.name, c.priority)).collect();
        assert_eq!(
            names,
            [
                ("Name", 0),
                ("Ready", 0),
                ("Status", 0),
                ("Restarts", 0),
                ("Age", 0),
                ("IP", 1),
                ("Node", 1),
                ("Nominated Node", 1),
                ("Readiness Gates", 1),
            ]
        );
        assert_eq!(POD_COLUMNS[0].format, "name");
    }

    #[test]
    fn fresh_pod_is_pending() {
        let cells = one(Builtin::Pod, pod(one_container(), json!({"phase": "Pending"})));
        assert_eq!(
            cells,
            [
                json!("web-0"),
                json!("0/1"),
                json!("Pending"),
                json!("0"),
                json!("5m"),
                json!("<none>"),
                json!("<none>"),
                json!("<none>"),
                json!("<none>"),
            ]
        );
    }

    #[test]
    fn pod_without_status_does_not_panic() {
        let cells = one(Builtin::Pod, json!({"metadata": {"name": "x"}}));
        assert_eq!(cells[1], "0/0");
        assert_eq!(cells[2], "");
        assert_eq!(cells[4], "<unknown>");
    }

    #[test]
    fn running_ready_pod() {
        let status = json!({
            "phase": "Running", "podIP": "10.0.0.5",
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0,
                "state": {"running": {"startedAt": ago(200)}}}],
        });
        let mut spec = one_container();
        spec["nodeName"] = json!("node-1");
        let cells = one(Builtin::Pod, pod(spec, status));
        assert_eq!(cells[1], "1/1");
        assert_eq!(cells[2], "Running");
        assert_eq!(cells[5], "10.0.0.5");
        assert_eq!(cells[6], "node-1");
    }

    #[test]
    fn deleting_pod_is_terminating() {
        let mut p = pod(one_container(), json!({"phase": "Running"}));
        p["metadata"]["deletionTimestamp"] = json!(ago(1));
        assert_eq!(cell(Builtin::Pod, p.clone(), "Status"), "Terminating");
        p["status"]["reason"] = json!("NodeLost");
        assert_eq!(cell(Builtin::Pod, p, "Status"), "Unknown");
    }

    #[test]
    fn finished_pod_is_not_terminating_and_carries_row_condition() {
        let mut p = pod(
            one_container(),
            json!({"phase": "Succeeded",
            "containerStatuses": [{"name": "app", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}),
        );
        p["metadata"]["deletionTimestamp"] = json!(ago(1));
        let t = table(Some(Builtin::Pod), &[p], IncludeObject::None, now(), json!({}));
        assert_eq!(t["rows"][0]["cells"][2], "Completed");
        assert_eq!(t["rows"][0]["conditions"][0]["reason"], "Succeeded");
    }

    #[test]
    fn waiting_container_shows_its_reason() {
        let status = json!({"phase": "Pending", "containerStatuses": [
            {"name": "app", "ready": false, "state": {"waiting": {"reason": "ContainerCreating"}}}]});
        assert_eq!(cell(Builtin::Pod, pod(one_container(), status), "Status"), "ContainerCreating");
        let status = json!({"phase": "Running", "containerStatuses": [
            {"name": "app", "restartCount": 4, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]});
        assert_eq!(cell(Builtin::Pod, pod(one_container(), status), "Status"), "CrashLoopBackOff");
    }

    #[test]
    fn terminated_without_reason_shows_exit_code_or_signal() {
        let status = json!({"phase": "Running", "containerStatuses": [
            {"name": "app", "state": {"terminated": {"exitCode": 137}}}]});
        assert_eq!(cell(Builtin::Pod, pod(one_container(), status), "Status"), "ExitCode:137");
        let status = json!({"phase": "Failed", "containerStatuses": [
            {"name": "app", "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}]});
        assert_eq!(cell(Builtin::Pod, pod(one_container(), status), "Status"), "Error");
    }

    #[test]
    fn restarts_show_time_since_last() {
        let status = json!({"phase": "Running", "containerStatuses": [{
            "name": "app", "ready": true, "restartCount": 2,
            "state": {"running": {}},
            "lastState": {"terminated": {"exitCode": 1, "finishedAt": ago(300)}}}]});
        assert_eq!(cell(Builtin::Pod, pod(one_container(), status), "Restarts"), "2 (5m ago)");
        let status = json!({"phase": "Running", "containerStatuses": [{
            "name": "app", "restartCount": 3, "state": {"running": {}}}]});
        assert_eq!(cell(Builtin::Pod, pod(one_container(), status), "Restarts"), "3");
    }

    #[test]
    fn init_containers_show_progress() {
        let spec = json!({
            "initContainers": [{"name": "a"}, {"name": "b"}],
            "containers": [{"name": "app"}],
        });
        let status = json!({"phase": "Pending", "initContainerStatuses": [
            {"name": "a", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
            {"name": "b", "state": {"running": {}}},
        ], "containerStatuses": [{"name": "app", "state": {"waiting": {"reason": "PodInitializing"}}}]});
        assert_eq!(cell(Builtin::Pod, pod(spec.clone(), status), "Status"), "Init:1/2");
        let status = json!({"phase": "Pending", "initContainerStatuses": [
            {"name": "a", "restartCount": 3, "state": {"waiting": {"reason": "CrashLoopBackOff"}}},
        ]});
        let cells = one(Builtin::Pod, pod(spec.clone(), status));
        assert_eq!(cells[2], "Init:CrashLoopBackOff");
        assert_eq!(cells[3], "3");
        let status = json!({"phase": "Pending", "initContainerStatuses": [
            {"name": "a", "state": {"terminated": {"exitCode": 2}}},
        ]});
        assert_eq!(cell(Builtin::Pod, pod(spec, status), "Status"), "Init:ExitCode:2");
    }

    #[test]
    fn sidecar_counts_towards_ready() {
        let spec = json!({
            "initContainers": [{"name": "proxy", "restartPolicy": "Always"}],
            "containers": [{"name": "app"}],
        });
        let status = json!({"phase": "Running",
            "conditions": [{"type": "Initialized", "status": "True"}],
            "initContainerStatuses": [{"name": "proxy", "started": true, "ready": true, "state": {"running": {}}}],
            "containerStatuses": [{"name": "app", "ready": true, "state": {"running": {}}}]});
        let cells = one(Builtin::Pod, pod(spec, status));
        assert_eq!(cells[1], "2/2");
        assert_eq!(cells[2], "Running");
    }

    #[test]
    fn readiness_gates_count_true_conditions() {
        let mut spec = one_container();
        spec["readinessGates"] = json!([{"conditionType": "a"}, {"conditionType": "b"}]);
        let status = json!({"conditions": [{"type": "a", "status": "True"}, {"type": "b", "status": "False"}]});
        assert_eq!(cell(Builtin::Pod, pod(spec, status), "Readiness Gates"), "1/2");
    }

    #[test]
    fn deployment_ready_and_selector() {
        let d = json!({
            "metadata": {"name": "web", "creationTimestamp": ago(7200)},
            "spec": {"replicas": 3,
                "selector": {"matchLabels": {"app": "web"},
                    "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}]},
                "template": {"spec": {"containers": [
                    {"name": "app", "image": "nginx:1"}, {"name": "log", "image": "busybox"}]}}},
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
        });
        assert_eq!(
            one(Builtin::Deployment, d),
            [
                json!("web"),
                json!("2/3"),
                json!(3),
                json!(2),
                json!("120m"),
                json!("app,log"),
                json!("nginx:1,busybox"),
                json!("app=web,tier in (a,b)"),
            ]
        );
        let bare = one(Builtin::Deployment, json!({"metadata": {"name": "x"}}));
        assert_eq!(bare[1], "0/1");
        assert_eq!(bare[7], "");
    }

    #[test]
    fn replica_set_counts() {
        let rs = json!({"metadata": {"name": "web-abc"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}},
            "status": {"replicas": 2, "readyReplicas": 1}});
        let cells = one(Builtin::ReplicaSet, rs);
        assert_eq!(&cells[1..4], [json!(2), json!(2), json!(1)]);
        assert_eq!(cells[7], "app=web");
        let bare = one(Builtin::ReplicaSet, json!({"metadata": {"name": "x"}}));
        assert_eq!(bare[7], "<none>");
    }

    #[test]
    fn node_status_and_roles() {
        let node = json!({
            "metadata": {"name": "n1", "creationTimestamp": ago(86400 * 3),
                "labels": {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "master"}},
            "spec": {"unschedulable": true},
            "status": {"conditions": [{"type": "Ready", "status": "True"}],
                "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
                "nodeInfo": {"kubeletVersion": "v1.31.0", "osImage": "Ubuntu"}},
        });
        assert_eq!(
            one(Builtin::Node, node),
            [
                json!("n1"),
                json!("Ready,SchedulingDisabled"),
                json!("control-plane,master"),
                json!("3d"),
                json!("v1.31.0"),
                json!("10.0.0.1"),
                json!("<none>"),
                json!("Ubuntu"),
                json!("<unknown>"),
                json!("<unknown>"),
            ]
        );
        let not_ready = json!({"metadata": {"name": "n2"},
            "status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}});
        assert_eq!(cell(Builtin::Node, not_ready, "Status"), "NotReady");
        let bare = one(Builtin::Node, json!({"metadata": {"name": "n3"}}));
        assert_eq!(bare[1], "Unknown");
        assert_eq!(bare[2], "<none>");
    }

    #[test]
    fn namespace_phase() {
        let ns = json!({"metadata": {"name": "dev", "deletionTimestamp": ago(1)},
            "status": {"phase": "Terminating"}});
        assert_eq!(cell(Builtin::Namespace, ns, "Status"), "Terminating");
        let ns = json!({"metadata": {"name": "dev"}, "status": {"phase": "Active"}});
        assert_eq!(cell(Builtin::Namespace, ns, "Status"), "Active");
    }

    #[test]
    fn service_cells() {
        let svc = json!({"metadata": {"name": "web"},
            "spec": {"type": "NodePort", "clusterIP": "10.96.0.10",
                "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}],
                "selector": {"app": "web"}}});
        let cells = one(Builtin::Service, svc);
        assert_eq!(
            &cells[1..5],
            [json!("NodePort"), json!("10.96.0.10"), json!("<none>"), json!("80:30080/TCP,53/UDP")]
        );
        assert_eq!(cells[6], "app=web");
        let lb = json!({"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer", "clusterIP": "None"}});
        let cells = one(Builtin::Service, lb);
        assert_eq!(cells[2], "None");
        assert_eq!(cells[3], "<pending>");
        assert_eq!(cells[4], "<none>");
        assert_eq!(cells[6], "<none>");
    }

    #[test]
    fn endpoints_list_three_then_more() {
        let ep = json!({"metadata": {"name": "web"}, "subsets": [{
            "addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}, {"ip": "fd00::3"}, {"ip": "10.0.0.4"}],
            "ports": [{"port": 8080}]}]});
        assert_eq!(cell(Builtin::Endpoints, ep, "Endpoints"), "10.0.0.1:8080,10.0.0.2:8080,[fd00::3]:8080 + 1 more...");
        let empty = json!({"metadata": {"name": "web"}});
        assert_eq!(cell(Builtin::Endpoints, empty, "Endpoints"), "<none>");
    }

    #[test]
    fn data_and_secret_counts() {
        let cm = json!({"metadata": {"name": "c"}, "data": {"a": "1"}, "binaryData": {"b": ""}});
        assert_eq!(cell(Builtin::ConfigMap, cm, "Data"), 2);
        let s = json!({"metadata": {"name": "s"}, "type": "Opaque", "data": {"a": "MQ=="}});
        assert_eq!(one(Builtin::Secret, s)[1..3], [json!("Opaque"), json!(1)]);
        let sa = json!({"metadata": {"name": "default"}});
        assert_eq!(cell(Builtin::ServiceAccount, sa, "Secrets"), 0);
        let lease = json!({"metadata": {"name": "kcm"}, "spec": {"holderIdentity": "host_1"}});
        assert_eq!(cell(Builtin::Lease, lease, "Holder"), "host_1");
    }

    #[test]
    fn pod_template_cells() {
        let pt = json!({"metadata": {"name": "t"}, "template": {
            "metadata": {"labels": {"b": "2", "a": "1"}},
            "spec": {"containers": [{"name": "app", "image": "nginx"}]}}});
        assert_eq!(one(Builtin::PodTemplate, pt), [json!("t"), json!("app"), json!("nginx"), json!("a=1,b=2")]);
    }

    #[test]
    fn core_and_events_v1_events_print_alike() {
        let core = json!({"metadata": {"name": "web-0.17"},
            "involvedObject": {"kind": "Pod", "name": "web-0", "fieldPath": "spec.containers{app}"},
            "reason": "Pulled", "message": "Pulled image \n", "type": "Normal",
            "source": {"component": "kubelet", "host": "node-1"},
            "firstTimestamp": ago(600), "lastTimestamp": ago(60), "count": 3});
        let v1 = json!({"metadata": {"name": "web-0.17"},
            "regarding": {"kind": "Pod", "name": "web-0", "fieldPath": "spec.containers{app}"},
            "reason": "Pulled", "note": "Pulled image \n", "type": "Normal",
            "deprecatedSource": {"component": "kubelet", "host": "node-1"},
            "deprecatedFirstTimestamp": ago(600), "deprecatedLastTimestamp": ago(60),
            "deprecatedCount": 3});
        let want = [
            json!("60s"),
            json!("Normal"),
            json!("Pulled"),
            json!("pod/web-0"),
            json!("spec.containers{app}"),
            json!("kubelet, node-1"),
            json!("Pulled image"),
            json!("10m"),
            json!(3),
            json!("web-0.17"),
        ];
        assert_eq!(one(Builtin::CoreEvent, core), want);
        assert_eq!(one(Builtin::EventsEvent, v1), want);
    }

    #[test]
    fn new_style_event_uses_event_time_series_and_reporter() {
        let ev = json!({"metadata": {"name": "e"},
            "regarding": {"kind": "Node"}, "reason": "R", "type": "Warning",
            "eventTime": "2024-06-01T11:59:00.000000Z",
            "reportingController": "kcm", "reportingInstance": "kcm-1"});
        let cells = one(Builtin::EventsEvent, ev.clone());
        assert_eq!(cells[0], "60s");
        assert_eq!(cells[3], "node");
        assert_eq!(cells[5], "kcm, kcm-1");
        assert_eq!(cells[8], 1);
        let mut series = ev;
        series["series"] = json!({"count": 7, "lastObservedTime": ago(5)});
        let cells = one(Builtin::EventsEvent, series);
        assert_eq!(cells[0], "5s");
        assert_eq!(cells[8], 7);
        assert_eq!(cells[7], "60s");
    }

    #[test]
    fn custom_resources_get_name_and_age() {
        let cr = json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w", "creationTimestamp": ago(45)}});
        let t = table(None, &[cr], IncludeObject::None, now(), json!({}));
        assert_eq!(t["columnDefinitions"][0]["name"], "Name");
        assert_eq!(t["columnDefinitions"][1]["name"], "Age");
        assert_eq!(t["columnDefinitions"][1]["type"], "date");
        assert_eq!(t["rows"][0]["cells"], json!(["w", "45s"]));
        let no_time = table(None, &[json!({"metadata": {"name": "w"}})], IncludeObject::None, now(), json!({}));
        assert_eq!(no_time["rows"][0]["cells"], json!(["w", null]));
    }

    #[test]
    fn include_object_variants() {
        let obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "default", "resourceVersion": "7"}, "data": {}});
        let meta = json!({"resourceVersion": "9"});
        let none =
            table(Some(Builtin::ConfigMap), std::slice::from_ref(&obj), IncludeObject::None, now(), meta.clone());
        assert_eq!(none["kind"], "Table");
        assert_eq!(none["apiVersion"], "meta.k8s.io/v1");
        assert_eq!(none["metadata"], meta);
        assert!(none["rows"][0].get("object").is_none());
        let partial =
            table(Some(Builtin::ConfigMap), std::slice::from_ref(&obj), IncludeObject::Metadata, now(), meta.clone());
        assert_eq!(
            partial["rows"][0]["object"],
            json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                "metadata": {"name": "c", "namespace": "default", "resourceVersion": "7"}})
        );
        let full = table(Some(Builtin::ConfigMap), std::slice::from_ref(&obj), IncludeObject::Object, now(), meta);
        assert_eq!(full["rows"][0]["object"], obj);
        let empty = table(Some(Builtin::Pod), &[], IncludeObject::Metadata, now(), Value::Null);
        assert_eq!(empty["rows"], json!([]));
        assert_eq!(empty["metadata"], json!({}));
        assert_eq!(empty["columnDefinitions"][0]["priority"], 0);
        assert_eq!(empty["columnDefinitions"][0]["format"], "name");
    }

    #[test]
    fn include_object_parse() {
        assert_eq!(IncludeObject::parse(""), Ok(IncludeObject::Metadata));
        assert_eq!(IncludeObject::parse("None"), Ok(IncludeObject::None));
        assert_eq!(IncludeObject::parse("Metadata"), Ok(IncludeObject::Metadata));
        assert_eq!(IncludeObject::parse("Object"), Ok(IncludeObject::Object));
        let err = IncludeObject::parse("object").expect_err("lower-case is rejected");
        assert_eq!(
            err.to_string(),
            "Unable to convert to Table as requested: includeObject: Invalid value: \"object\": \
             must be 'Metadata', 'Object', 'None', or empty"
        );
        assert_eq!(IncludeObject::default(), IncludeObject::Metadata);
    }

    #[test]
    fn every_builtin_row_matches_its_columns() {
        let kinds = Builtin::ALL;
        for kind in kinds {
            for obj in [json!({}), json!(null), json!({"metadata": null, "spec": 3})] {
                let t = table(Some(kind), &[obj], IncludeObject::Metadata, now(), json!({}));
                assert_eq!(
                    t["rows"][0]["cells"].as_array().expect("array").len(),
                    t["columnDefinitions"].as_array().expect("array").len(),
                    "{kind:?}"
                );
            }
        }
    }
}
