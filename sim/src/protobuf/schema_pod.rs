//! Tables for `core/v1` Pod and PodTemplate: the pod spec (its containers
//! are `schema_container.rs`'s) and status, with their parts.
//!
//! One static per message, from upstream's generated.proto (numbers, JSON
//! names) and types.go (pointers and omitempty). `omit` scalars drop their
//! zero value; `keep` scalars print it.

use super::message::Ty::{Bool, Int, Msg, Quantity, Str, Time, Unsupported};
use super::message::{Message, keep, list, map, omit, one};
use super::schema_container::{CONTAINER, RESOURCE_REQUIREMENTS};
use super::schema_core::LOCAL_OBJECT_REFERENCE;
use super::schema_meta::OBJECT_META;

/// `Pod`.
pub(super) static POD: Message = Message {
    name: "Pod",
    fields: &[
        one(1, "metadata", Msg(&OBJECT_META)),
        one(2, "spec", Msg(&POD_SPEC)),
        one(3, "status", Msg(&POD_STATUS)),
    ],
};

/// `PodTemplate`.
pub(super) static POD_TEMPLATE: Message = Message {
    name: "PodTemplate",
    fields: &[one(1, "metadata", Msg(&OBJECT_META)), one(2, "template", Msg(&POD_TEMPLATE_SPEC))],
};

/// `PodSpec`.
static POD_SPEC: Message = Message {
    name: "PodSpec",
    fields: &[
        list(1, "volumes", Unsupported),
        list(2, "containers", Msg(&CONTAINER)),
        omit(3, "restartPolicy", Str),
        keep(4, "terminationGracePeriodSeconds", Int),
        keep(5, "activeDeadlineSeconds", Int),
        omit(6, "dnsPolicy", Str),
        map(7, "nodeSelector", Str),
        omit(8, "serviceAccountName", Str),
        omit(9, "serviceAccount", Str),
        omit(10, "nodeName", Str),
        omit(11, "hostNetwork", Bool),
        omit(12, "hostPID", Bool),
        omit(13, "hostIPC", Bool),
        one(14, "securityContext", Unsupported),
        list(15, "imagePullSecrets", Msg(&LOCAL_OBJECT_REFERENCE)),
        omit(16, "hostname", Str),
        omit(17, "subdomain", Str),
        one(18, "affinity", Unsupported),
        omit(19, "schedulerName", Str),
        list(20, "initContainers", Msg(&CONTAINER)),
        keep(21, "automountServiceAccountToken", Bool),
        list(22, "tolerations", Msg(&TOLERATION)),
        list(23, "hostAliases", Msg(&HOST_ALIAS)),
        omit(24, "priorityClassName", Str),
        keep(25, "priority", Int),
        one(26, "dnsConfig", Msg(&POD_DNS_CONFIG)),
        keep(27, "shareProcessNamespace", Bool),
        list(28, "readinessGates", Msg(&POD_READINESS_GATE)),
        keep(29, "runtimeClassName", Str),
        keep(30, "enableServiceLinks", Bool),
        keep(31, "preemptionPolicy", Str),
        map(32, "overhead", Quantity),
        list(33, "topologySpreadConstraints", Unsupported),
        list(34, "ephemeralContainers", Unsupported),
        keep(35, "setHostnameAsFQDN", Bool),
        one(36, "os", Msg(&POD_OS)),
        keep(37, "hostUsers", Bool),
        list(38, "schedulingGates", Msg(&POD_SCHEDULING_GATE)),
        list(39, "resourceClaims", Unsupported),
        one(40, "resources", Msg(&RESOURCE_REQUIREMENTS)),
        keep(41, "hostnameOverride", Str),
        one(42, "workloadRef", Unsupported),
    ],
};

/// `PodStatus`.
static POD_STATUS: Message = Message {
    name: "PodStatus",
    fields: &[
        omit(1, "phase", Str),
        list(2, "conditions", Msg(&POD_CONDITION)),
        omit(3, "message", Str),
        omit(4, "reason", Str),
        omit(5, "hostIP", Str),
        omit(6, "podIP", Str),
        one(7, "startTime", Time),
        list(8, "containerStatuses", Msg(&CONTAINER_STATUS)),
        omit(9, "qosClass", Str),
        list(10, "initContainerStatuses", Msg(&CONTAINER_STATUS)),
        omit(11, "nominatedNodeName", Str),
        list(12, "podIPs", Msg(&POD_IP)),
        list(13, "ephemeralContainerStatuses", Msg(&CONTAINER_STATUS)),
        omit(14, "resize", Str),
        list(15, "resourceClaimStatuses", Unsupported),
        list(16, "hostIPs", Msg(&HOST_IP)),
        omit(17, "observedGeneration", Int),
        one(18, "extendedResourceClaimStatus", Unsupported),
        map(19, "allocatedResources", Quantity),
        one(20, "resources", Msg(&RESOURCE_REQUIREMENTS)),
    ],
};

/// `PodTemplateSpec`.
pub(super) static POD_TEMPLATE_SPEC: Message = Message {
    name: "PodTemplateSpec",
    fields: &[one(1, "metadata", Msg(&OBJECT_META)), one(2, "spec", Msg(&POD_SPEC))],
};

/// `Toleration`.
static TOLERATION: Message = Message {
    name: "Toleration",
    fields: &[
        omit(1, "key", Str),
        omit(2, "operator", Str),
        omit(3, "value", Str),
        omit(4, "effect", Str),
        keep(5, "tolerationSeconds", Int),
    ],
};

/// `HostAlias`.
static HOST_ALIAS: Message = Message { name: "HostAlias", fields: &[keep(1, "ip", Str), list(2, "hostnames", Str)] };

/// `PodDNSConfig`.
static POD_DNS_CONFIG: Message = Message {
    name: "PodDNSConfig",
    fields: &[list(1, "nameservers", Str), list(2, "searches", Str), list(3, "options", Msg(&POD_DNS_CONFIG_OPTION))],
};

/// `PodReadinessGate`.
static POD_READINESS_GATE: Message = Message { name: "PodReadinessGate", fields: &[keep(1, "conditionType", Str)] };

/// `PodOS`.
static POD_OS: Message = Message { name: "PodOS", fields: &[omit(1, "name", Str)] };

/// `PodSchedulingGate`.
static POD_SCHEDULING_GATE: Message = Message { name: "PodSchedulingGate", fields: &[keep(1, "name", Str)] };

/// `PodCondition`.
static POD_CONDITION: Message = Message {
    name: "PodCondition",
    fields: &[
        keep(1, "type", Str),
        keep(2, "status", Str),
        one(3, "lastProbeTime", Time),
        one(4, "lastTransitionTime", Time),
        omit(5, "reason", Str),
        omit(6, "message", Str),
        omit(7, "observedGeneration", Int),
    ],
};

/// `HostIP`.
static HOST_IP: Message = Message { name: "HostIP", fields: &[keep(1, "ip", Str)] };

/// `PodIP`.
static POD_IP: Message = Message { name: "PodIP", fields: &[keep(1, "ip", Str)] };

/// `ContainerStatus`.
static CONTAINER_STATUS: Message = Message {
    name: "ContainerStatus",
    fields: &[
        keep(1, "name", Str),
        one(2, "state", Msg(&CONTAINER_STATE)),
        one(3, "lastState", Msg(&CONTAINER_STATE)),
        keep(4, "ready", Bool),
        keep(5, "restartCount", Int),
        keep(6, "image", Str),
        keep(7, "imageID", Str),
        omit(8, "containerID", Str),
        keep(9, "started", Bool),
        map(10, "allocatedResources", Quantity),
        one(11, "resources", Msg(&RESOURCE_REQUIREMENTS)),
        list(12, "volumeMounts", Unsupported),
        one(13, "user", Unsupported),
        list(14, "allocatedResourcesStatus", Unsupported),
        keep(15, "stopSignal", Str),
    ],
};

/// `PodDNSConfigOption`.
static POD_DNS_CONFIG_OPTION: Message =
    Message { name: "PodDNSConfigOption", fields: &[omit(1, "name", Str), keep(2, "value", Str)] };

/// `ContainerState`.
static CONTAINER_STATE: Message = Message {
    name: "ContainerState",
    fields: &[
        one(1, "waiting", Msg(&CONTAINER_STATE_WAITING)),
        one(2, "running", Msg(&CONTAINER_STATE_RUNNING)),
        one(3, "terminated", Msg(&CONTAINER_STATE_TERMINATED)),
    ],
};

/// `ContainerStateWaiting`.
static CONTAINER_STATE_WAITING: Message =
    Message { name: "ContainerStateWaiting", fields: &[omit(1, "reason", Str), omit(2, "message", Str)] };

/// `ContainerStateRunning`.
static CONTAINER_STATE_RUNNING: Message =
    Message { name: "ContainerStateRunning", fields: &[one(1, "startedAt", Time)] };

/// `ContainerStateTerminated`.
static CONTAINER_STATE_TERMINATED: Message = Message {
    name: "ContainerStateTerminated",
    fields: &[
        keep(1, "exitCode", Int),
        omit(2, "signal", Int),
        omit(3, "reason", Str),
        omit(4, "message", Str),
        one(5, "startedAt", Time),
        one(6, "finishedAt", Time),
        omit(7, "containerID", Str),
    ],
};
