//! The column definitions of every table, with upstream's names, types,
//! formats, priorities and descriptions, and the choice of columns per
//! kind (the batch kinds' are `batch.rs`'s).

use super::batch::{CRON_JOB_COLUMNS, JOB_COLUMNS};
use super::column::{AGE, CONTAINERS_DOC, CREATED_DOC, Column, IMAGES_DOC, NAME, NAME_DOC};
use crate::resources::Builtin;

pub(super) const POD_COLUMNS: &[Column] = &[
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

const DAEMON_SET_COLUMNS: &[Column] = &[
    NAME,
    Column::int(
        "Desired",
        "The total number of nodes that should be running the daemon pod (including nodes correctly \
         running the daemon pod). More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/",
    ),
    Column::int(
        "Current",
        "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod. \
         More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/",
    ),
    Column::int(
        "Ready",
        "numberReady is the number of nodes that should be running the daemon pod and have one or more of \
         the daemon pod running with a Ready Condition.",
    ),
    Column::int("Up-to-date", "The total number of nodes that are running updated daemon pod"),
    Column::int(
        "Available",
        "The number of nodes that should be running the daemon pod and have one or more of the daemon pod \
         running and available (ready for at least spec.minReadySeconds)",
    ),
    Column::text(
        "Node Selector",
        "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must \
         match a node's labels for the pod to be scheduled on that node. More info: \
         https://kubernetes.io/docs/concepts/configuration/assign-pod-node/",
    ),
    AGE,
    Column::wide("Containers", CONTAINERS_DOC),
    Column::wide("Images", IMAGES_DOC),
    Column::wide(
        "Selector",
        "A label query over pods that are managed by the daemon set. Must match in order to be controlled. \
         It must match the pod template's labels. More info: \
         https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
    ),
];

const STATEFUL_SET_COLUMNS: &[Column] = &[
    NAME,
    Column::text("Ready", "Number of the pod with ready state"),
    AGE,
    Column::wide("Containers", CONTAINERS_DOC),
    Column::wide("Images", IMAGES_DOC),
];

const CONTROLLER_REVISION_COLUMNS: &[Column] = &[
    NAME,
    Column::text("Controller", "Controller of the object"),
    Column::text("Revision", "Revision indicates the revision of the state represented by Data."),
    AGE,
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

const ENDPOINT_SLICE_COLUMNS: &[Column] = &[
    NAME,
    Column::text(
        "AddressType",
        "addressType specifies the type of address carried by this EndpointSlice. All addresses in this slice \
         must be the same type. This field is immutable after creation. The following address types are \
         currently supported: * IPv4: Represents an IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: \
         Represents a Fully Qualified Domain Name. (Deprecated) The EndpointSlice controller only generates, \
         and kube-proxy only processes, slices of addressType \"IPv4\" and \"IPv6\". No semantics are defined \
         for the \"FQDN\" type.",
    ),
    Column::text(
        "Ports",
        "ports specifies the list of network ports exposed by each endpoint in this slice. Each port must have \
         a unique name. Each slice may include a maximum of 100 ports. Services always have at least 1 port, \
         so EndpointSlices generated by the EndpointSlice controller will likewise always have at least 1 \
         port. EndpointSlices used for other purposes may have an empty ports list.",
    ),
    Column::text(
        "Endpoints",
        "endpoints is a list of unique endpoints in this slice. Each slice may include a maximum of 1000 \
         endpoints.",
    ),
    AGE,
];

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

const ROLE_COLUMNS: &[Column] = &[NAME, Column::text("Created At", CREATED_DOC)];

const ROLE_BINDING_COLUMNS: &[Column] = &[
    NAME,
    Column::text(
        "Role",
        "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the \
         RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.",
    ),
    AGE,
    Column::wide("Users", "Users in the roleBinding"),
    Column::wide("Groups", "Groups in the roleBinding"),
    Column::wide("ServiceAccounts", "ServiceAccounts in the roleBinding"),
];

const POD_DISRUPTION_BUDGET_COLUMNS: &[Column] = &[
    NAME,
    Column::text("Min Available", "The minimum number of pods that must be available."),
    Column::text("Max Unavailable", "The maximum number of pods that may be unavailable."),
    Column {
        ty: "integer",
        ..Column::text("Allowed Disruptions", "Calculated number of pods that may be disrupted at this time.")
    },
    AGE,
];

const PERSISTENT_VOLUME_CLAIM_COLUMNS: &[Column] = &[
    NAME,
    Column::text("Status", "phase represents the current phase of PersistentVolumeClaim."),
    Column::text("Volume", "volumeName is the binding reference to the PersistentVolume backing this claim."),
    Column::text("Capacity", "capacity represents the actual resources of the underlying volume."),
    Column::text(
        "Access Modes",
        "accessModes contains the actual access modes the volume backing the PVC has. More info: \
         https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1",
    ),
    Column::text("StorageClass", "StorageClass of the pvc"),
    Column::text("VolumeAttributesClass", "VolumeAttributesClass of the pvc"),
    AGE,
    Column::wide(
        "VolumeMode",
        "volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when \
         not included in claim spec.",
    ),
];

/// What apiextensions serves for a CRD version without
/// `additionalPrinterColumns`: NAME plus a date-typed Age column.
const CUSTOM_COLUMNS: &[Column] = &[NAME, Column { ty: "date", ..Column::text("Age", CREATED_DOC) }];

/// The column definitions of one type's table.
pub(super) fn columns(kind: Option<Builtin>) -> &'static [Column] {
    let Some(kind) = kind else {
        return CUSTOM_COLUMNS;
    };
    match kind {
        Builtin::Namespace => NAMESPACE_COLUMNS,
        Builtin::Node => NODE_COLUMNS,
        Builtin::Pod => POD_COLUMNS,
        Builtin::Service => SERVICE_COLUMNS,
        Builtin::Endpoints => ENDPOINTS_COLUMNS,
        Builtin::EndpointSlice => ENDPOINT_SLICE_COLUMNS,
        Builtin::ConfigMap => CONFIG_MAP_COLUMNS,
        Builtin::Secret => SECRET_COLUMNS,
        Builtin::ServiceAccount => SERVICE_ACCOUNT_COLUMNS,
        Builtin::CoreEvent | Builtin::EventsEvent => EVENT_COLUMNS,
        Builtin::PodTemplate => POD_TEMPLATE_COLUMNS,
        Builtin::PersistentVolumeClaim => PERSISTENT_VOLUME_CLAIM_COLUMNS,
        Builtin::Deployment => DEPLOYMENT_COLUMNS,
        Builtin::ReplicaSet => REPLICA_SET_COLUMNS,
        Builtin::DaemonSet => DAEMON_SET_COLUMNS,
        Builtin::StatefulSet => STATEFUL_SET_COLUMNS,
        Builtin::ControllerRevision => CONTROLLER_REVISION_COLUMNS,
        Builtin::Job => JOB_COLUMNS,
        Builtin::CronJob => CRON_JOB_COLUMNS,
        Builtin::Lease => LEASE_COLUMNS,
        Builtin::ClusterRole | Builtin::Role => ROLE_COLUMNS,
        Builtin::ClusterRoleBinding | Builtin::RoleBinding => ROLE_BINDING_COLUMNS,
        Builtin::PodDisruptionBudget => POD_DISRUPTION_BUDGET_COLUMNS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
