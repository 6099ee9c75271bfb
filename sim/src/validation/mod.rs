//! Validation of built-in objects, with the real API server's messages.
//!
//! Field validation ([`validate_create`], [`validate_update`]), which the
//! caller turns into a 422 Invalid status whose causes are [`Cause`]s.
//! Decoding and unknown fields come first, in `typed.rs`.
//!
//! Field validation expects the *defaulted* object (see the `defaults` module), as
//! upstream does. Rules, messages and field paths follow
//! `k8s.io/apimachinery/pkg/util/validation` (names, labels, `field.Error`
//! rendering) and `k8s.io/kubernetes/pkg/apis/{core,apps}/validation`.
//! Where upstream prints a Go value with `%#v` (label selectors,
//! int-or-string, maps) the message spells it the same way. Map keys are
//! visited in sorted order, where Go's order is random.
//!
//! Validated (nothing else):
//! - every kind: `metadata.name` / `generateName` (DNS-1123 label for
//!   Namespace, DNS-1035 label for Service, DNS-1123 subdomain otherwise),
//!   `metadata.namespace` when set, `generation`, label and annotation keys
//!   and values, annotation total size, owner reference essentials; on
//!   update, immutable `name`, `namespace`, `uid` and non-decreasing
//!   `generation`;
//! - Deployment and ReplicaSet: the spec rules of `ValidateDeploymentSpec` /
//!   `ValidateReplicaSetSpec` (replicas, minReadySeconds,
//!   revisionHistoryLimit, progressDeadlineSeconds, selector, selector vs
//!   template labels, strategy and rolling update int-or-percent rules,
//!   template restartPolicy and activeDeadlineSeconds) and, on update, the
//!   apps/v1 selector immutability;
//! - pod specs (Pod, PodTemplate, templates): volume names, containers
//!   required, container and init container names (DNS label, unique),
//!   image required, terminationMessagePolicy, ports (name, number,
//!   hostPort, protocol), imagePullPolicy, restartPolicy, dnsPolicy,
//!   nodeSelector, serviceAccountName, nodeName, activeDeadlineSeconds,
//!   hostname; ephemeral containers forbidden on create;
//! - Service: type, sessionAffinity, ports (required, names, numbers,
//!   protocol, targetPort), externalName required, selector labels;
//! - Namespace finalizer names; ConfigMap and Secret keys, `immutable`
//!   ConfigMaps and Secrets, Secret `type` immutability; Lease durations.
//!
//! Not validated: pod update restrictions (the "pod updates may not change
//! fields" rule), Service cluster IP and node port rules, resource
//! quantities, env, volume mounts and sources, probes, security contexts,
//! affinity, tolerations, topology spread, pod-specific annotations,
//! finalizers in metadata, managedFields, Node, Endpoints, Event and
//! ServiceAccount specifics, and status.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::resources::Builtin;

mod apps;
mod core_v1;
mod meta;
mod pod;
mod policy;
mod render;
mod syntax;
#[cfg(test)]
mod tests;
mod values;

use apps::{deployment_spec, replica_set_spec, selector_immutable};
use core_v1::{data_keys, finalizer_name, immutable_data, service_spec};
use meta::{object_meta, object_meta_update};
use pod::{nonnegative, pod_spec, pod_template_spec};
use policy::pod_disruption_budget_spec;
use render::go_quote;

/// Reason of a value that does not pass a rule.
pub const FIELD_VALUE_INVALID: &str = "FieldValueInvalid";
/// Reason of a missing value.
pub const FIELD_VALUE_REQUIRED: &str = "FieldValueRequired";
/// Reason of a value outside an enumeration.
pub const FIELD_VALUE_NOT_SUPPORTED: &str = "FieldValueNotSupported";
/// Reason of a value not allowed in the circumstances.
pub const FIELD_VALUE_FORBIDDEN: &str = "FieldValueForbidden";
/// Reason of a value that must be unique and is not.
pub const FIELD_VALUE_DUPLICATE: &str = "FieldValueDuplicate";
/// Reason of a value that is too long.
pub const FIELD_VALUE_TOO_LONG: &str = "FieldValueTooLong";

/// Upstream `IsNegativeErrorMsg`.
const NEGATIVE: &str = "must be greater than or equal to 0";
/// Upstream `FieldImmutableErrorMsg`.
const IMMUTABLE: &str = "field is immutable";
/// Upstream `TotalAnnotationSizeLimitB`.
const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// One validation failure: a `StatusCause` of the 422 Invalid status.
///
/// The status message upstream is `<Kind> "<name>" is invalid: ` followed by
/// `<field>: <message>` for each cause, joined with `, ` (in brackets when
/// there are several).
#[derive(Debug, Clone, PartialEq, Eq)]
#[doc(alias = "StatusCause")]
#[doc(alias = "field.Error")]
pub struct Cause {
    /// The cause type, one of the `FIELD_VALUE_*` constants.
    pub reason: &'static str,
    /// The message without the field (upstream `ErrorBody`), e.g.
    /// `Invalid value: -1: must be greater than or equal to 0`.
    pub message: String,
    /// The field path, e.g. `spec.template.spec.containers[0].name`.
    pub field: String,
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// Validates an object about to be created.
#[doc(alias = "ValidateDeployment")]
#[doc(alias = "ValidateReplicaSet")]
#[doc(alias = "ValidatePodCreate")]
pub fn validate_create(kind: Builtin, object: &Value) -> Vec<Cause> {
    let mut errs = Errors::default();
    object_meta(&mut errs, kind, at(object, "metadata"));
    spec(&mut errs, kind, object, None);
    if kind == Builtin::Pod && !list(at(object, "spec"), "ephemeralContainers").is_empty() {
        errs.forbidden("spec.ephemeralContainers", "cannot be set on create");
    }
    errs.finish()
}

/// Validates an update of `old` to `new`, immutable fields included.
#[doc(alias = "ValidateDeploymentUpdate")]
#[doc(alias = "ValidateReplicaSetUpdate")]
pub fn validate_update(kind: Builtin, old: &Value, new: &Value) -> Vec<Cause> {
    let mut errs = Errors::default();
    object_meta_update(&mut errs, at(old, "metadata"), at(new, "metadata"));
    spec(&mut errs, kind, new, Some(old));
    errs.finish()
}

// === per kind ===

/// The kind-specific rules; `old` is set on update.
fn spec(errs: &mut Errors, kind: Builtin, object: &Value, old: Option<&Value>) {
    match kind {
        Builtin::Deployment => {
            deployment_spec(errs, at(object, "spec"));
            if let Some(old) = old {
                selector_immutable(errs, old, object);
            }
        }
        Builtin::ReplicaSet => {
            replica_set_spec(errs, at(object, "spec"));
            if let Some(old) = old {
                selector_immutable(errs, old, object);
            }
        }
        Builtin::Pod if old.is_none() => pod_spec(errs, at(object, "spec"), "spec"),
        Builtin::PodTemplate => pod_template_spec(errs, at(object, "template"), "template"),
        Builtin::Service => service_spec(errs, at(object, "spec")),
        Builtin::Namespace => {
            for finalizer in list(at(object, "spec"), "finalizers") {
                finalizer_name(errs, str_of(finalizer), "spec.finalizers");
            }
        }
        Builtin::ConfigMap => {
            if let Some(old) = old {
                immutable_data(errs, old, object, &["data", "binaryData"]);
            }
            data_keys(errs, object, "data");
            data_keys(errs, object, "binaryData");
            let binary = map(object, "binaryData");
            for key in map(object, "data").keys().filter(|k| binary.contains_key(*k)) {
                errs.invalid(&format!("data[{key}]"), go_quote(key), "duplicate of key present in binaryData");
            }
        }
        Builtin::Secret => {
            if let Some(old) = old {
                let (old_type, new_type) = (text(old, "type"), text(object, "type"));
                if old_type != new_type {
                    errs.invalid("type", go_quote(new_type), IMMUTABLE);
                }
                immutable_data(errs, old, object, &["data"]);
            }
            data_keys(errs, object, "data");
        }
        Builtin::Lease => {
            let spec = at(object, "spec");
            if let Some(duration) = int(spec, "leaseDurationSeconds").filter(|d| *d <= 0) {
                errs.invalid("spec.leaseDurationSeconds", duration.to_string(), "must be greater than 0");
            }
            nonnegative(errs, int(spec, "leaseTransitions"), "spec.leaseTransitions");
        }
        Builtin::PodDisruptionBudget => pod_disruption_budget_spec(errs, at(object, "spec")),
        Builtin::Pod
        | Builtin::Node
        | Builtin::ClusterRole
        | Builtin::ClusterRoleBinding
        | Builtin::Role
        | Builtin::RoleBinding
        | Builtin::Endpoints
        | Builtin::ServiceAccount
        | Builtin::CoreEvent
        | Builtin::EventsEvent => {}
    }
}

// === utils ===

/// The causes found so far, built like upstream's `field.Error`s.
#[derive(Default)]
struct Errors(Vec<Cause>);

impl Errors {
    /// Appends a cause.
    fn push(&mut self, reason: &'static str, field: &str, message: String) {
        self.0.push(Cause { reason, message, field: field.to_owned() });
    }

    /// `field.Invalid`; `shown` is the Go rendering of the bad value.
    fn invalid(&mut self, field: &str, shown: String, detail: &str) {
        self.push(FIELD_VALUE_INVALID, field, with_detail(format!("Invalid value: {shown}"), detail));
    }

    /// `field.Required`.
    fn required(&mut self, field: &str, detail: &str) {
        self.push(FIELD_VALUE_REQUIRED, field, with_detail("Required value".to_owned(), detail));
    }

    /// `field.Duplicate`.
    fn duplicate(&mut self, field: &str, shown: String) {
        self.push(FIELD_VALUE_DUPLICATE, field, format!("Duplicate value: {shown}"));
    }

    /// `field.NotSupported`.
    fn not_supported(&mut self, field: &str, shown: String, allowed: &[&str]) {
        let quoted: Vec<String> = allowed.iter().map(|a| go_quote(a)).collect();
        let detail = format!("supported values: {}", quoted.join(", "));
        self.push(FIELD_VALUE_NOT_SUPPORTED, field, format!("Unsupported value: {shown}: {detail}"));
    }

    /// `field.Forbidden`.
    fn forbidden(&mut self, field: &str, detail: &str) {
        self.push(FIELD_VALUE_FORBIDDEN, field, with_detail("Forbidden".to_owned(), detail));
    }

    /// `field.TooLong`.
    fn too_long(&mut self, field: &str, max: usize) {
        self.push(FIELD_VALUE_TOO_LONG, field, format!("Too long: may not be more than {max} bytes"));
    }

    /// The causes without repeats (upstream `ToAggregate` drops duplicates).
    fn finish(self) -> Vec<Cause> {
        let mut seen = BTreeSet::new();
        self.0.into_iter().filter(|c| seen.insert((c.field.clone(), c.message.clone()))).collect()
    }
}

/// `body: detail`, or `body` when there is no detail.
fn with_detail(body: String, detail: &str) -> String {
    if detail.is_empty() { body } else { format!("{body}: {detail}") }
}

/// The JSON null every missing field reads as.
static NULL: Value = Value::Null;

/// `value[key]`, null when absent or when `value` is not an object.
fn at<'a>(value: &'a Value, key: &str) -> &'a Value {
    value.get(key).unwrap_or(&NULL)
}

/// A string field, "" when absent or not a string.
fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    str_of(at(value, key))
}

/// A string value, "" when not a string.
fn str_of(value: &Value) -> &str {
    value.as_str().unwrap_or("")
}

/// An integer field.
fn int(value: &Value, key: &str) -> Option<i64> {
    at(value, key).as_i64()
}

/// An array field, empty when absent.
fn list<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    at(value, key).as_array().map(Vec::as_slice).unwrap_or(&[])
}

/// An object field, empty when absent.
fn map<'a>(value: &'a Value, key: &str) -> &'a Map<String, Value> {
    static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
    at(value, key).as_object().unwrap_or(&EMPTY)
}

/// Upstream semantic equality: null, absent, `{}` and `[]` are alike.
fn semantic_eq(a: &Value, b: &Value) -> bool {
    fn is_empty(v: &Value) -> bool {
        v.is_null() || v.as_object().is_some_and(Map::is_empty) || v.as_array().is_some_and(Vec::is_empty)
    }
    match (a, b) {
        _ if is_empty(a) && is_empty(b) => true,
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().all(|k| semantic_eq(at(a, k), at(b, k)))
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| semantic_eq(p, q)),
        _ => a == b,
    }
}
