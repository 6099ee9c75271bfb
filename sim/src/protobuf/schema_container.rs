//! Tables for `core/v1` containers (regular, init and ephemeral): their
//! ports, environment, resources, volume mounts, probes and lifecycle
//! hooks, and their parts.
//!
//! One static per message, from upstream's generated.proto (numbers, JSON
//! names) and types.go (pointers and omitempty). `omit` scalars drop their
//! zero value; `keep` scalars print it.

use super::message::Ty::{Bool, Inline, Int, IntOrString, Msg, Quantity, Str, Unsupported};
use super::message::{Message, keep, list, map, omit, one};
use super::schema_core::LOCAL_OBJECT_REFERENCE;

/// `Container`.
pub(super) static CONTAINER: Message = Message {
    name: "Container",
    fields: &[
        keep(1, "name", Str),
        omit(2, "image", Str),
        list(3, "command", Str),
        list(4, "args", Str),
        omit(5, "workingDir", Str),
        list(6, "ports", Msg(&CONTAINER_PORT)),
        list(7, "env", Msg(&ENV_VAR)),
        one(8, "resources", Msg(&RESOURCE_REQUIREMENTS)),
        list(9, "volumeMounts", Msg(&VOLUME_MOUNT)),
        one(10, "livenessProbe", Msg(&PROBE)),
        one(11, "readinessProbe", Msg(&PROBE)),
        one(12, "lifecycle", Msg(&LIFECYCLE)),
        omit(13, "terminationMessagePath", Str),
        omit(14, "imagePullPolicy", Str),
        one(15, "securityContext", Unsupported),
        omit(16, "stdin", Bool),
        omit(17, "stdinOnce", Bool),
        omit(18, "tty", Bool),
        list(19, "envFrom", Msg(&ENV_FROM_SOURCE)),
        omit(20, "terminationMessagePolicy", Str),
        list(21, "volumeDevices", Msg(&VOLUME_DEVICE)),
        one(22, "startupProbe", Msg(&PROBE)),
        list(23, "resizePolicy", Msg(&CONTAINER_RESIZE_POLICY)),
        keep(24, "restartPolicy", Str),
        list(25, "restartPolicyRules", Unsupported),
    ],
};

/// `ResourceRequirements`.
pub(super) static RESOURCE_REQUIREMENTS: Message = Message {
    name: "ResourceRequirements",
    fields: &[map(1, "limits", Quantity), map(2, "requests", Quantity), list(3, "claims", Msg(&RESOURCE_CLAIM))],
};

/// `ContainerPort`.
static CONTAINER_PORT: Message = Message {
    name: "ContainerPort",
    fields: &[
        omit(1, "name", Str),
        omit(2, "hostPort", Int),
        keep(3, "containerPort", Int),
        omit(4, "protocol", Str),
        omit(5, "hostIP", Str),
    ],
};

/// `EnvFromSource`.
static ENV_FROM_SOURCE: Message = Message {
    name: "EnvFromSource",
    fields: &[
        omit(1, "prefix", Str),
        one(2, "configMapRef", Msg(&CONFIG_MAP_ENV_SOURCE)),
        one(3, "secretRef", Msg(&SECRET_ENV_SOURCE)),
    ],
};

/// `EnvVar`.
static ENV_VAR: Message = Message {
    name: "EnvVar",
    fields: &[keep(1, "name", Str), omit(2, "value", Str), one(3, "valueFrom", Msg(&ENV_VAR_SOURCE))],
};

/// `ContainerResizePolicy`.
static CONTAINER_RESIZE_POLICY: Message =
    Message { name: "ContainerResizePolicy", fields: &[keep(1, "resourceName", Str), keep(2, "restartPolicy", Str)] };

/// `VolumeMount`.
static VOLUME_MOUNT: Message = Message {
    name: "VolumeMount",
    fields: &[
        keep(1, "name", Str),
        omit(2, "readOnly", Bool),
        keep(3, "mountPath", Str),
        omit(4, "subPath", Str),
        keep(5, "mountPropagation", Str),
        omit(6, "subPathExpr", Str),
        keep(7, "recursiveReadOnly", Str),
    ],
};

/// `VolumeDevice`.
static VOLUME_DEVICE: Message =
    Message { name: "VolumeDevice", fields: &[keep(1, "name", Str), keep(2, "devicePath", Str)] };

/// `Probe`.
static PROBE: Message = Message {
    name: "Probe",
    fields: &[
        one(1, "", Inline(&PROBE_HANDLER)),
        omit(2, "initialDelaySeconds", Int),
        omit(3, "timeoutSeconds", Int),
        omit(4, "periodSeconds", Int),
        omit(5, "successThreshold", Int),
        omit(6, "failureThreshold", Int),
        keep(7, "terminationGracePeriodSeconds", Int),
    ],
};

/// `Lifecycle`.
static LIFECYCLE: Message = Message {
    name: "Lifecycle",
    fields: &[
        one(1, "postStart", Msg(&LIFECYCLE_HANDLER)),
        one(2, "preStop", Msg(&LIFECYCLE_HANDLER)),
        keep(3, "stopSignal", Str),
    ],
};

/// `ResourceClaim`.
static RESOURCE_CLAIM: Message =
    Message { name: "ResourceClaim", fields: &[keep(1, "name", Str), omit(2, "request", Str)] };

/// `ConfigMapEnvSource`.
static CONFIG_MAP_ENV_SOURCE: Message = Message {
    name: "ConfigMapEnvSource",
    fields: &[one(1, "", Inline(&LOCAL_OBJECT_REFERENCE)), keep(2, "optional", Bool)],
};

/// `SecretEnvSource`.
static SECRET_ENV_SOURCE: Message = Message {
    name: "SecretEnvSource",
    fields: &[one(1, "", Inline(&LOCAL_OBJECT_REFERENCE)), keep(2, "optional", Bool)],
};

/// `EnvVarSource`.
static ENV_VAR_SOURCE: Message = Message {
    name: "EnvVarSource",
    fields: &[
        one(1, "fieldRef", Msg(&OBJECT_FIELD_SELECTOR)),
        one(2, "resourceFieldRef", Msg(&RESOURCE_FIELD_SELECTOR)),
        one(3, "configMapKeyRef", Msg(&CONFIG_MAP_KEY_SELECTOR)),
        one(4, "secretKeyRef", Msg(&SECRET_KEY_SELECTOR)),
        one(5, "fileKeyRef", Msg(&FILE_KEY_SELECTOR)),
    ],
};

/// `ProbeHandler`.
static PROBE_HANDLER: Message = Message {
    name: "ProbeHandler",
    fields: &[
        one(1, "exec", Msg(&EXEC_ACTION)),
        one(2, "httpGet", Msg(&HTTP_GET_ACTION)),
        one(3, "tcpSocket", Msg(&TCP_SOCKET_ACTION)),
        one(4, "grpc", Msg(&GRPC_ACTION)),
    ],
};

/// `LifecycleHandler`.
static LIFECYCLE_HANDLER: Message = Message {
    name: "LifecycleHandler",
    fields: &[
        one(1, "exec", Msg(&EXEC_ACTION)),
        one(2, "httpGet", Msg(&HTTP_GET_ACTION)),
        one(3, "tcpSocket", Msg(&TCP_SOCKET_ACTION)),
        one(4, "sleep", Msg(&SLEEP_ACTION)),
    ],
};

/// `ObjectFieldSelector`.
static OBJECT_FIELD_SELECTOR: Message =
    Message { name: "ObjectFieldSelector", fields: &[omit(1, "apiVersion", Str), keep(2, "fieldPath", Str)] };

/// `ResourceFieldSelector`.
static RESOURCE_FIELD_SELECTOR: Message = Message {
    name: "ResourceFieldSelector",
    fields: &[omit(1, "containerName", Str), keep(2, "resource", Str), one(3, "divisor", Quantity)],
};

/// `ConfigMapKeySelector`.
static CONFIG_MAP_KEY_SELECTOR: Message = Message {
    name: "ConfigMapKeySelector",
    fields: &[one(1, "", Inline(&LOCAL_OBJECT_REFERENCE)), keep(2, "key", Str), keep(3, "optional", Bool)],
};

/// `SecretKeySelector`.
static SECRET_KEY_SELECTOR: Message = Message {
    name: "SecretKeySelector",
    fields: &[one(1, "", Inline(&LOCAL_OBJECT_REFERENCE)), keep(2, "key", Str), keep(3, "optional", Bool)],
};

/// `FileKeySelector`.
static FILE_KEY_SELECTOR: Message = Message {
    name: "FileKeySelector",
    fields: &[keep(1, "volumeName", Str), keep(2, "path", Str), keep(3, "key", Str), keep(4, "optional", Bool)],
};

/// `ExecAction`.
static EXEC_ACTION: Message = Message { name: "ExecAction", fields: &[list(1, "command", Str)] };

/// `HTTPGetAction`.
static HTTP_GET_ACTION: Message = Message {
    name: "HTTPGetAction",
    fields: &[
        omit(1, "path", Str),
        one(2, "port", IntOrString),
        omit(3, "host", Str),
        omit(4, "scheme", Str),
        list(5, "httpHeaders", Msg(&HTTP_HEADER)),
    ],
};

/// `TCPSocketAction`.
static TCP_SOCKET_ACTION: Message =
    Message { name: "TCPSocketAction", fields: &[one(1, "port", IntOrString), omit(2, "host", Str)] };

/// `GRPCAction`.
static GRPC_ACTION: Message = Message { name: "GRPCAction", fields: &[keep(1, "port", Int), keep(2, "service", Str)] };

/// `SleepAction`.
static SLEEP_ACTION: Message = Message { name: "SleepAction", fields: &[keep(1, "seconds", Int)] };

/// `HTTPHeader`.
static HTTP_HEADER: Message = Message { name: "HTTPHeader", fields: &[omit(1, "name", Str), omit(2, "value", Str)] };
