//! Tables for the `core/v1` kinds other than pods: Service, ConfigMap,
//! Secret, Namespace, ServiceAccount and Endpoints, and their parts.
//!
//! One static per message, from upstream's generated.proto (numbers, JSON
//! names) and types.go (pointers and omitempty). `omit` scalars drop their
//! zero value; `keep` scalars print it.

use super::message::Ty::{Bool, Bytes, Int, IntOrString, Msg, Str, Time};
use super::message::{Message, keep, list, map, omit, one};
use super::schema_meta::{CONDITION, OBJECT_META};

/// `Service`.
pub(super) static SERVICE: Message = Message {
    name: "Service",
    fields: &[
        one(1, "metadata", Msg(&OBJECT_META)),
        one(2, "spec", Msg(&SERVICE_SPEC)),
        one(3, "status", Msg(&SERVICE_STATUS)),
    ],
};

/// `ConfigMap`.
pub(super) static CONFIG_MAP: Message = Message {
    name: "ConfigMap",
    fields: &[
        one(1, "metadata", Msg(&OBJECT_META)),
        map(2, "data", Str),
        map(3, "binaryData", Bytes),
        keep(4, "immutable", Bool),
    ],
};

/// `Secret`.
pub(super) static SECRET: Message = Message {
    name: "Secret",
    fields: &[
        one(1, "metadata", Msg(&OBJECT_META)),
        map(2, "data", Bytes),
        omit(3, "type", Str),
        map(4, "stringData", Str),
        keep(5, "immutable", Bool),
    ],
};

/// `Namespace`.
pub(super) static NAMESPACE: Message = Message {
    name: "Namespace",
    fields: &[
        one(1, "metadata", Msg(&OBJECT_META)),
        one(2, "spec", Msg(&NAMESPACE_SPEC)),
        one(3, "status", Msg(&NAMESPACE_STATUS)),
    ],
};

/// `ServiceAccount`.
pub(super) static SERVICE_ACCOUNT: Message = Message {
    name: "ServiceAccount",
    fields: &[
        one(1, "metadata", Msg(&OBJECT_META)),
        list(2, "secrets", Msg(&OBJECT_REFERENCE)),
        list(3, "imagePullSecrets", Msg(&LOCAL_OBJECT_REFERENCE)),
        keep(4, "automountServiceAccountToken", Bool),
    ],
};

/// `Endpoints`.
pub(super) static ENDPOINTS: Message = Message {
    name: "Endpoints",
    fields: &[one(1, "metadata", Msg(&OBJECT_META)), list(2, "subsets", Msg(&ENDPOINT_SUBSET))],
};

/// `ServiceSpec`.
static SERVICE_SPEC: Message = Message {
    name: "ServiceSpec",
    fields: &[
        list(1, "ports", Msg(&SERVICE_PORT)),
        map(2, "selector", Str),
        omit(3, "clusterIP", Str),
        omit(4, "type", Str),
        list(5, "externalIPs", Str),
        omit(7, "sessionAffinity", Str),
        omit(8, "loadBalancerIP", Str),
        list(9, "loadBalancerSourceRanges", Str),
        omit(10, "externalName", Str),
        omit(11, "externalTrafficPolicy", Str),
        omit(12, "healthCheckNodePort", Int),
        omit(13, "publishNotReadyAddresses", Bool),
        one(14, "sessionAffinityConfig", Msg(&SESSION_AFFINITY_CONFIG)),
        keep(17, "ipFamilyPolicy", Str),
        list(18, "clusterIPs", Str),
        list(19, "ipFamilies", Str),
        keep(20, "allocateLoadBalancerNodePorts", Bool),
        keep(21, "loadBalancerClass", Str),
        keep(22, "internalTrafficPolicy", Str),
        keep(23, "trafficDistribution", Str),
    ],
};

/// `ServiceStatus`.
static SERVICE_STATUS: Message = Message {
    name: "ServiceStatus",
    fields: &[one(1, "loadBalancer", Msg(&LOAD_BALANCER_STATUS)), list(2, "conditions", Msg(&CONDITION))],
};

/// `NamespaceSpec`.
static NAMESPACE_SPEC: Message = Message { name: "NamespaceSpec", fields: &[list(1, "finalizers", Str)] };

/// `NamespaceStatus`.
static NAMESPACE_STATUS: Message = Message {
    name: "NamespaceStatus",
    fields: &[omit(1, "phase", Str), list(2, "conditions", Msg(&NAMESPACE_CONDITION))],
};

/// `ObjectReference`.
pub(super) static OBJECT_REFERENCE: Message = Message {
    name: "ObjectReference",
    fields: &[
        omit(1, "kind", Str),
        omit(2, "namespace", Str),
        omit(3, "name", Str),
        omit(4, "uid", Str),
        omit(5, "apiVersion", Str),
        omit(6, "resourceVersion", Str),
        omit(7, "fieldPath", Str),
    ],
};

/// `LocalObjectReference`.
pub(super) static LOCAL_OBJECT_REFERENCE: Message =
    Message { name: "LocalObjectReference", fields: &[omit(1, "name", Str)] };

/// `EndpointSubset`.
static ENDPOINT_SUBSET: Message = Message {
    name: "EndpointSubset",
    fields: &[
        list(1, "addresses", Msg(&ENDPOINT_ADDRESS)),
        list(2, "notReadyAddresses", Msg(&ENDPOINT_ADDRESS)),
        list(3, "ports", Msg(&ENDPOINT_PORT)),
    ],
};

/// `ServicePort`.
static SERVICE_PORT: Message = Message {
    name: "ServicePort",
    fields: &[
        omit(1, "name", Str),
        omit(2, "protocol", Str),
        keep(3, "port", Int),
        one(4, "targetPort", IntOrString),
        omit(5, "nodePort", Int),
        keep(6, "appProtocol", Str),
    ],
};

/// `SessionAffinityConfig`.
static SESSION_AFFINITY_CONFIG: Message =
    Message { name: "SessionAffinityConfig", fields: &[one(1, "clientIP", Msg(&CLIENT_IP_CONFIG))] };

/// `LoadBalancerStatus`.
static LOAD_BALANCER_STATUS: Message =
    Message { name: "LoadBalancerStatus", fields: &[list(1, "ingress", Msg(&LOAD_BALANCER_INGRESS))] };

/// `NamespaceCondition`.
static NAMESPACE_CONDITION: Message = Message {
    name: "NamespaceCondition",
    fields: &[
        keep(1, "type", Str),
        keep(2, "status", Str),
        one(4, "lastTransitionTime", Time),
        omit(5, "reason", Str),
        omit(6, "message", Str),
    ],
};

/// `EndpointAddress`.
static ENDPOINT_ADDRESS: Message = Message {
    name: "EndpointAddress",
    fields: &[
        keep(1, "ip", Str),
        one(2, "targetRef", Msg(&OBJECT_REFERENCE)),
        omit(3, "hostname", Str),
        keep(4, "nodeName", Str),
    ],
};

/// `EndpointPort`.
static ENDPOINT_PORT: Message = Message {
    name: "EndpointPort",
    fields: &[omit(1, "name", Str), keep(2, "port", Int), omit(3, "protocol", Str), keep(4, "appProtocol", Str)],
};

/// `ClientIPConfig`.
static CLIENT_IP_CONFIG: Message = Message { name: "ClientIPConfig", fields: &[keep(1, "timeoutSeconds", Int)] };

/// `LoadBalancerIngress`.
static LOAD_BALANCER_INGRESS: Message = Message {
    name: "LoadBalancerIngress",
    fields: &[
        omit(1, "ip", Str),
        omit(2, "hostname", Str),
        keep(3, "ipMode", Str),
        list(4, "ports", Msg(&PORT_STATUS)),
    ],
};

/// `PortStatus`.
static PORT_STATUS: Message =
    Message { name: "PortStatus", fields: &[keep(1, "port", Int), keep(2, "protocol", Str), keep(3, "error", Str)] };
