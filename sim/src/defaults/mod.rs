//! Server-side defaulting: the fields the real API server fills in before it
//! validates and stores an object.
//!
//! This module owns the defaults of `k8s.io/kubernetes` `pkg/apis/core/v1`
//! and `pkg/apis/apps/v1` (hand-written `SetDefaults_*` functions and the
//! generated `zz_generated.defaults.go` that walks every pod spec), plus the
//! few create-time mutations a plain `kubectl run` pod visibly gets from the
//! default admission chain (Priority, ServiceAccount,
//! DefaultTolerationSeconds). Everything works on schemaless JSON, as the
//! store keeps it, and every step is idempotent: applying twice is the same
//! as applying once.
//!
//! Fidelity matters because controllers hash what the server stores: the
//! Deployment controller's `pod-template-hash` is computed over the
//! *defaulted* pod template, so a missing default here yields a different
//! ReplicaSet name than a real cluster would produce.
//!
//! Left to other modules: validation (the `validation` module), what the
//! registry strategies write on create (the `strategy` module: Pod `phase:
//! Pending` and `qosClass`, a namespace's `kubernetes` finalizer, name
//! generation), cluster IP allocation and quantity canonicalisation.

use serde_json::{Map, Value, json};

use crate::resources::Builtin;

mod kinds;
mod pod;
#[cfg(test)]
mod tests;

use kinds::{deployment_spec, endpoints, namespace, node, service_spec};
use pod::{pod, pod_template};

/// Termination message path every container gets.
pub const TERMINATION_MESSAGE_PATH: &str = "/dev/termination-log";

/// The scheduler a pod is assigned to when it names none.
pub const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";

/// The label the API server sets on every namespace to its name.
pub const LABEL_METADATA_NAME: &str = "kubernetes.io/metadata.name";

/// Seconds the DefaultTolerationSeconds admission plugin lets a pod stay on a
/// not-ready or unreachable node.
pub const DEFAULT_TOLERATION_SECONDS: i64 = 300;

/// Applies the API server's defaults for `kind` to `object`, in place.
///
/// Called on create and on update, before validation. Objects of the wrong
/// shape (say `spec` is a string) are left as they are: decoding and
/// validation report them.
///
/// Defaulted (exactly; nothing else is touched):
/// - Deployment: `spec.replicas` 1, `spec.strategy.type` RollingUpdate with
///   `rollingUpdate.maxUnavailable`/`maxSurge` "25%", `revisionHistoryLimit`
///   10, `progressDeadlineSeconds` 600; pod template below.
/// - ReplicaSet: `spec.replicas` 1; pod template below.
/// - PodTemplate: `template.spec` as below.
/// - Every pod spec: `restartPolicy` Always, `dnsPolicy` ClusterFirst,
///   `terminationGracePeriodSeconds` 30, `schedulerName` default-scheduler,
///   `securityContext` {}, `serviceAccount` mirroring `serviceAccountName`;
///   per container (init, regular, ephemeral): `imagePullPolicy`,
///   `terminationMessagePath`, `terminationMessagePolicy` File,
///   `resources` {}, ports' `protocol` TCP, env `fieldRef.apiVersion` v1,
///   probes (`timeoutSeconds` 1, `periodSeconds` 10, `successThreshold` 1,
///   `failureThreshold` 3, `httpGet.path` "/", `httpGet.scheme` HTTP,
///   `grpc.service` ""), lifecycle hooks' `httpGet`; volumes: `emptyDir` {}
///   when no source is given, `defaultMode` 420 on secret, configMap,
///   downwardAPI and projected sources, `hostPath.type` "", projected
///   `serviceAccountToken.expirationSeconds` 3600, downward API `fieldRef`
///   `apiVersion` v1, ephemeral claim templates' `volumeMode` Filesystem.
/// - Pod only: requests copied from limits, `enableServiceLinks` true,
///   host ports from container ports under `hostNetwork`, and the admission
///   results a real cluster shows: `priority` (0, or the value of the two
///   built-in system classes), `preemptionPolicy` PreemptLowerPriority,
///   `serviceAccountName`/`serviceAccount` "default", the not-ready and
///   unreachable NoExecute tolerations for 300 s.
/// - Service: `sessionAffinity` None (clearing `sessionAffinityConfig`) or
///   the ClientIP timeout 10800, `type` ClusterIP, ports' `protocol` TCP and
///   `targetPort` = `port`, `externalTrafficPolicy` Cluster when externally
///   reachable, `internalTrafficPolicy` Cluster, `allocateLoadBalancerNodePorts`
///   true for LoadBalancer, and (registry behaviour of a single-stack IPv4
///   cluster) `ipFamilyPolicy` SingleStack, or RequireDualStack for a
///   headless service without selector, and `ipFamilies` `[IPv4]`.
/// - Endpoints: ports' `protocol` TCP.
/// - Namespace: label `kubernetes.io/metadata.name` = name, `status.phase`
///   Active (the `kubernetes` finalizer is the namespace strategy's, in
///   `crate::strategy`).
/// - Node: `status.allocatable` = `status.capacity` when absent.
/// - Secret: `type` Opaque.
/// - RoleBinding, ClusterRoleBinding: the `apiGroup` of User and Group
///   subjects (`rbac.authorization.k8s.io`).
#[doc(alias = "SetObjectDefaults")]
pub fn apply(kind: Builtin, object: &mut Value) {
    match kind {
        Builtin::Deployment => {
            if let Some(spec) = child(object, "spec") {
                deployment_spec(spec);
                if let Some(template) = spec.get_mut("template").and_then(Value::as_object_mut) {
                    pod_template(template);
                }
            }
        }
        Builtin::ReplicaSet => {
            if let Some(spec) = child(object, "spec") {
                default_value(spec, "replicas", json!(1));
                if let Some(template) = spec.get_mut("template").and_then(Value::as_object_mut) {
                    pod_template(template);
                }
            }
        }
        Builtin::PodTemplate => {
            if let Some(template) = child(object, "template") {
                pod_template(template);
            }
        }
        Builtin::Pod => pod(object),
        Builtin::Service => {
            if let Some(spec) = child(object, "spec") {
                service_spec(spec);
            }
        }
        Builtin::Endpoints => endpoints(object),
        Builtin::Namespace => namespace(object),
        Builtin::Node => node(object),
        Builtin::Secret => {
            if let Some(secret) = object.as_object_mut() {
                default_str(secret, "type", "Opaque");
            }
        }
        Builtin::ClusterRoleBinding | Builtin::RoleBinding => {
            if let Some(binding) = object.as_object_mut() {
                for subject in children(binding, "subjects") {
                    rbac_subject(subject);
                }
            }
        }
        Builtin::ConfigMap
        | Builtin::ServiceAccount
        | Builtin::CoreEvent
        | Builtin::Lease
        | Builtin::EventsEvent
        | Builtin::PodDisruptionBudget
        | Builtin::ClusterRole
        | Builtin::Role => {}
    }
}

/// `SetDefaults_Subject`: users and groups are in the RBAC API group. (A
/// service account's group is the core group, "", which the API server
/// leaves out when it writes the object: `apiGroup` is `omitempty`.)
fn rbac_subject(subject: &mut Map<String, Value>) {
    if matches!(subject.get("kind").and_then(Value::as_str), Some("User" | "Group")) {
        default_str(subject, "apiGroup", "rbac.authorization.k8s.io");
    }
}

/// The pull policy the server picks for `image`: Always when the tag is
/// `latest` or no tag and no digest is given, IfNotPresent otherwise
/// (including references the server cannot parse).
pub fn image_pull_policy(image: &str) -> &'static str {
    match image_tag(image) {
        Some(tag) if tag == "latest" => "Always",
        _ => "IfNotPresent",
    }
}

// === image references ===

/// The tag the image reference resolves to, `latest` when it names neither a
/// tag nor a digest, `None` when it has a digest and no tag or cannot be
/// parsed (upstream `parsers.ParseImageName`).
fn image_tag(image: &str) -> Option<String> {
    if image.is_empty() || image.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return None;
    }
    let (name, digest) = match image.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (image, None),
    };
    let last_slash = name.rfind('/');
    let (repository, tag) = match name.rfind(':') {
        Some(colon) if last_slash.is_none_or(|slash| colon > slash) => (&name[..colon], Some(&name[colon + 1..])),
        _ => (name, None),
    };
    // Docker reference grammar: the path (after an optional domain) is
    // lower case; tags are word characters, '.' and '-', at most 128.
    let path = match repository.split_once('/') {
        Some((first, rest)) if first.contains(['.', ':']) || first == "localhost" => rest,
        _ => repository,
    };
    if repository.is_empty() || path.chars().any(|c| c.is_ascii_uppercase()) {
        return None;
    }
    if let Some(tag) = tag {
        let valid = !tag.is_empty()
            && tag.len() <= 128
            && tag.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
            && !tag.starts_with(['.', '-']);
        if !valid {
            return None;
        }
        return Some(tag.to_owned());
    }
    match digest {
        Some(_) => None,
        None => Some("latest".to_owned()),
    }
}

// === utils ===

/// The object under `key`, when `value` is an object and it is one too.
fn child<'a>(value: &'a mut Value, key: &str) -> Option<&'a mut Map<String, Value>> {
    value.get_mut(key).and_then(Value::as_object_mut)
}

/// The objects in the array under `key` (non-objects are skipped).
fn children<'a>(map: &'a mut Map<String, Value>, key: &str) -> impl Iterator<Item = &'a mut Map<String, Value>> {
    map.get_mut(key).and_then(Value::as_array_mut).into_iter().flatten().filter_map(Value::as_object_mut)
}

/// Whether a string field is unset in Go terms: absent, null or "".
fn is_unset_str(value: Option<&Value>) -> bool {
    value.is_none_or(|v| v.is_null() || v == "")
}

/// Sets a string field that is absent, null or empty (a Go string field).
fn default_str(map: &mut Map<String, Value>, key: &str, default: &str) {
    if is_unset_str(map.get(key)) {
        map.insert(key.to_owned(), json!(default));
    }
}

/// Sets a field that is absent or null (a Go pointer field).
fn default_value(map: &mut Map<String, Value>, key: &str, default: Value) {
    if map.get(key).is_none_or(Value::is_null) {
        map.insert(key.to_owned(), default);
    }
}

/// Sets an integer field that is absent, null or 0 (a Go int field).
fn default_nonzero(map: &mut Map<String, Value>, key: &str, default: i64) {
    if map.get(key).is_none_or(|v| v.is_null() || v == 0) {
        map.insert(key.to_owned(), json!(default));
    }
}
