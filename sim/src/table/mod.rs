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
//!
//! This file builds the Table and picks a printer; the printers are
//! `pod.rs`, `workloads.rs`, `batch.rs` (Jobs and CronJobs, with their columns), `services.rs` (with Endpoints and EndpointSlices), `nodes.rs`, `events.rs`,
//! `storage.rs` and `simple.rs`, their columns `columns.rs` (a column `column.rs`), and what they share is
//! `cells.rs` (rows, NAME, AGE), `format.rs` (cell text) and `access.rs`
//! (reading the JSON). None of them imports this file.

use std::fmt;

use jiff::Timestamp;
use serde_json::{Map, Value, json};

use crate::resources::Builtin;

mod access;
mod batch;
mod cells;
mod column;
mod columns;
mod events;
mod format;
mod nodes;
mod pod;
mod services;
mod simple;
mod storage;
mod workloads;

use batch::{print_cron_job, print_job};
use cells::Row;
use column::Column;
use columns::columns;
use events::{EventFields, print_event};
use nodes::print_node;
use pod::print_pod;
use services::{print_endpoint_slice, print_endpoints, print_service};
use simple::{
    print_config_map, print_custom, print_lease, print_namespace, print_pod_disruption_budget, print_role,
    print_role_binding, print_secret, print_service_account,
};
use storage::print_persistent_volume_claim;
use workloads::{
    print_controller_revision, print_daemon_set, print_deployment, print_pod_template, print_replica_set,
    print_stateful_set,
};

pub use format::human_duration;

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
        Builtin::EndpointSlice => print_endpoint_slice(obj, now).into(),
        Builtin::ConfigMap => print_config_map(obj, now).into(),
        Builtin::Secret => print_secret(obj, now).into(),
        Builtin::ServiceAccount => print_service_account(obj, now).into(),
        Builtin::CoreEvent => print_event(&EventFields::core(obj), now).into(),
        Builtin::EventsEvent => print_event(&EventFields::events_v1(obj), now).into(),
        Builtin::PodTemplate => print_pod_template(obj).into(),
        Builtin::PersistentVolumeClaim => print_persistent_volume_claim(obj, now).into(),
        Builtin::Deployment => print_deployment(obj, now).into(),
        Builtin::ReplicaSet => print_replica_set(obj, now).into(),
        Builtin::DaemonSet => print_daemon_set(obj, now).into(),
        Builtin::StatefulSet => print_stateful_set(obj, now).into(),
        Builtin::ControllerRevision => print_controller_revision(obj, now).into(),
        Builtin::Job => print_job(obj, now).into(),
        Builtin::CronJob => print_cron_job(obj, now).into(),
        Builtin::Lease => print_lease(obj, now).into(),
        Builtin::ClusterRole | Builtin::Role => print_role(obj).into(),
        Builtin::ClusterRoleBinding | Builtin::RoleBinding => print_role_binding(obj, now).into(),
        Builtin::PodDisruptionBudget => print_pod_disruption_budget(obj, now).into(),
    }
}

#[cfg(test)]
mod tests {
    //! Tests of server-side printing: columns and cells per kind, checked
    //! against what upstream prints, and the `includeObject` handling.

    use jiff::SignedDuration;

    use super::columns::columns;
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
    fn daemon_set_stateful_set_and_controller_revision_cells() {
        let ds = json!({"metadata": {"name": "agent", "creationTimestamp": ago(60)},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                "template": {"spec": {"nodeSelector": {"role": "edge", "disk": "ssd"},
                    "containers": [{"name": "agent", "image": "agent:1"}]}}},
            "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 2,
                "updatedNumberScheduled": 1, "numberAvailable": 2}});
        assert_eq!(
            one(Builtin::DaemonSet, ds),
            [
                json!("agent"),
                json!(3),
                json!(3),
                json!(2),
                json!(1),
                json!(2),
                json!("disk=ssd,role=edge"),
                json!("60s"),
                json!("agent"),
                json!("agent:1"),
                json!("app=agent"),
            ]
        );
        assert_eq!(one(Builtin::DaemonSet, json!({"metadata": {"name": "x"}}))[6], "<none>");

        let sts = json!({"metadata": {"name": "db"}, "spec": {"replicas": 3}, "status": {"readyReplicas": 2}});
        assert_eq!(one(Builtin::StatefulSet, sts)[1], "2/3");
        assert_eq!(one(Builtin::StatefulSet, json!({"metadata": {"name": "x"}}))[1], "0/1");

        let revision =
            |owners: Value| json!({"metadata": {"name": "agent-6d4b", "ownerReferences": owners}, "revision": 2});
        let owned = revision(json!([{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent",
            "uid": "u", "controller": true}]));
        assert_eq!(&one(Builtin::ControllerRevision, owned)[1..3], [json!("daemonset.apps/agent"), json!(2)]);
        let core = revision(json!([{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u", "controller": true}]));
        assert_eq!(one(Builtin::ControllerRevision, core)[1], "pod/p");
        let not_controlled = revision(json!([{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "a", "uid": "u"}]));
        assert_eq!(one(Builtin::ControllerRevision, not_controlled)[1], "<none>");
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
    fn endpoint_slices_print_address_type_ports_and_addresses() {
        let slice = json!({"metadata": {"name": "web-abcde", "creationTimestamp": ago(90)}, "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.1", "10.0.0.2"]}, {"addresses": ["10.0.0.3"]},
                {"addresses": ["10.0.0.4"]}],
            "ports": [{"name": "http", "port": 80, "protocol": "TCP"}, {"name": "named", "protocol": "TCP"}]});
        assert_eq!(
            one(Builtin::EndpointSlice, slice),
            [
                json!("web-abcde"),
                json!("IPv4"),
                json!("80,named"),
                json!("10.0.0.1,10.0.0.2,10.0.0.3 + 1 more..."),
                json!("90s")
            ]
        );
        let empty = json!({"metadata": {"name": "headless"}, "addressType": "IPv6", "endpoints": null, "ports": null});
        assert_eq!(cell(Builtin::EndpointSlice, empty.clone(), "Ports"), "<unset>");
        assert_eq!(cell(Builtin::EndpointSlice, empty, "Endpoints"), "<unset>");
        let names: Vec<&str> = columns(Some(Builtin::EndpointSlice)).iter().map(|c| c.name).collect();
        assert_eq!(names, ["Name", "AddressType", "Ports", "Endpoints", "Age"]);
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
