//! Validation of built-in objects, with the real API server's messages.
//!
//! Field validation ([`validate_create`], [`validate_update`]), which the
//! caller turns into a 422 Invalid status whose causes are [`Cause`]s.
//! Decoding and unknown fields come first, in `typed.rs`.
//!
//! Field validation expects the *defaulted* object (see `defaults.rs`), as
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

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::resources::Builtin;

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
        Builtin::Pod
        | Builtin::Node
        | Builtin::Endpoints
        | Builtin::ServiceAccount
        | Builtin::CoreEvent
        | Builtin::EventsEvent => {}
    }
}

/// `ValidateDeploymentSpec`.
fn deployment_spec(errs: &mut Errors, spec: &Value) {
    nonnegative(errs, int(spec, "replicas"), "spec.replicas");
    let selector = selector_field(errs, spec);
    if let Some(selector) = selector {
        template_for_replica_set(errs, at(spec, "template"), &selector);
    }
    strategy(errs, at(spec, "strategy"));
    let min_ready = int(spec, "minReadySeconds").unwrap_or(0);
    nonnegative(errs, Some(min_ready), "spec.minReadySeconds");
    nonnegative(errs, int(spec, "revisionHistoryLimit"), "spec.revisionHistoryLimit");
    if let Some(deadline) = int(spec, "progressDeadlineSeconds") {
        nonnegative(errs, Some(deadline), "spec.progressDeadlineSeconds");
        if deadline <= min_ready {
            errs.invalid("spec.progressDeadlineSeconds", deadline.to_string(), "must be greater than minReadySeconds");
        }
    }
}

/// `ValidateReplicaSetSpec`.
fn replica_set_spec(errs: &mut Errors, spec: &Value) {
    nonnegative(errs, int(spec, "replicas"), "spec.replicas");
    nonnegative(errs, Some(int(spec, "minReadySeconds").unwrap_or(0)), "spec.minReadySeconds");
    if let Some(selector) = selector_field(errs, spec) {
        template_for_replica_set(errs, at(spec, "template"), &selector);
    }
}

/// The `spec.selector` rules shared by Deployment and ReplicaSet; the
/// parsed selector when it converts (upstream `LabelSelectorAsSelector`).
fn selector_field(errs: &mut Errors, spec: &Value) -> Option<Selector> {
    let raw = at(spec, "selector");
    if raw.is_null() {
        errs.required("spec.selector", "");
    } else {
        label_selector(errs, raw, "spec.selector");
        if map(raw, "matchLabels").is_empty() && list(raw, "matchExpressions").is_empty() {
            // Upstream says "deployment" for ReplicaSets too.
            errs.invalid("spec.selector", go_label_selector(raw), "empty selector is invalid for deployment");
        }
    }
    match Selector::parse(raw) {
        Some(selector) => Some(selector),
        None => {
            errs.invalid("spec.selector", go_label_selector(raw), "invalid label selector");
            None
        }
    }
}

/// `ValidatePodTemplateSpecForReplicaSet`.
fn template_for_replica_set(errs: &mut Errors, template: &Value, selector: &Selector) {
    let labels = at(at(template, "metadata"), "labels");
    if !selector.is_everything() && !selector.matches(labels) {
        errs.invalid(
            "spec.template.metadata.labels",
            go_string_map(labels),
            "`selector` does not match template `labels`",
        );
    }
    pod_template_spec(errs, template, "spec.template");
    let restart_policy = text(at(template, "spec"), "restartPolicy");
    if restart_policy != "Always" {
        errs.not_supported("spec.template.spec.restartPolicy", go_quote(restart_policy), &["Always"]);
    }
    if !at(at(template, "spec"), "activeDeadlineSeconds").is_null() {
        errs.forbidden(
            "spec.template.spec.activeDeadlineSeconds",
            "activeDeadlineSeconds in ReplicaSet is not Supported",
        );
    }
}

/// apps/v1 forbids changing `spec.selector` (upstream compares with
/// semantic equality: absent, null and empty are alike).
fn selector_immutable(errs: &mut Errors, old: &Value, new: &Value) {
    let old_selector = at(at(old, "spec"), "selector");
    let new_selector = at(at(new, "spec"), "selector");
    if !semantic_eq(old_selector, new_selector) {
        errs.invalid("spec.selector", go_label_selector(new_selector), IMMUTABLE);
    }
}

/// `ValidateDeploymentStrategy`.
fn strategy(errs: &mut Errors, strategy: &Value) {
    let rolling = at(strategy, "rollingUpdate");
    match text(strategy, "type") {
        "Recreate" => {
            if !rolling.is_null() {
                errs.forbidden(
                    "spec.strategy.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                );
            }
        }
        "RollingUpdate" => {
            if rolling.is_null() {
                errs.required("spec.strategy.rollingUpdate", "this should be defaulted and never be nil");
            } else {
                rolling_update(errs, rolling);
            }
        }
        other => {
            let pointer = if rolling.is_null() { "nil" } else { "0xc000000000" };
            let shown = format!(
                "apps.DeploymentStrategy{{Type:{}, RollingUpdate:(*apps.RollingUpdateDeployment)({pointer})}}",
                go_quote(other)
            );
            errs.not_supported("spec.strategy", shown, &["Recreate", "RollingUpdate"]);
        }
    }
}

/// `ValidateRollingUpdateDeployment`.
fn rolling_update(errs: &mut Errors, rolling: &Value) {
    let max_unavailable = IntOrString::of(at(rolling, "maxUnavailable"));
    let max_surge = IntOrString::of(at(rolling, "maxSurge"));
    const UNAVAILABLE: &str = "spec.strategy.rollingUpdate.maxUnavailable";
    const SURGE: &str = "spec.strategy.rollingUpdate.maxSurge";
    positive_int_or_percent(errs, &max_unavailable, UNAVAILABLE);
    positive_int_or_percent(errs, &max_surge, SURGE);
    if max_unavailable.value() == 0 && max_surge.value() == 0 {
        errs.invalid(UNAVAILABLE, max_unavailable.go(), "may not be 0 when `maxSurge` is 0");
    }
    if max_unavailable.percent().is_some_and(|p| p > 100) {
        errs.invalid(UNAVAILABLE, max_unavailable.go(), "must not be greater than 100%");
    }
}

/// `ValidatePositiveIntOrPercent`.
fn positive_int_or_percent(errs: &mut Errors, value: &IntOrString, path: &str) {
    match value {
        IntOrString::Str(s) => {
            for msg in percent_messages(s) {
                errs.invalid(path, value.go(), &msg);
            }
        }
        IntOrString::Int(n) => nonnegative(errs, Some(*n), path),
    }
}

/// Part of `ValidateService`.
fn service_spec(errs: &mut Errors, spec: &Value) {
    let service_type = text(spec, "type");
    let headless = text(spec, "clusterIP") == "None";
    let ports = list(spec, "ports");
    if ports.is_empty() && !headless && service_type != "ExternalName" {
        errs.required("spec.ports", "");
    }
    if service_type == "ExternalName" && text(spec, "externalName").is_empty() {
        errs.required("spec.externalName", "");
    }
    let mut names = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let path = format!("spec.ports[{i}]");
        let name = text(port, "name");
        if ports.len() > 1 && name.is_empty() {
            errs.required(&format!("{path}.name"), "");
        } else if !name.is_empty() {
            for msg in dns1123_label(name) {
                errs.invalid(&format!("{path}.name"), go_quote(name), &msg);
            }
            if !names.insert(name) {
                errs.duplicate(&format!("{path}.name"), go_quote(name));
            }
        }
        port_number(errs, int(port, "port").unwrap_or(0), &format!("{path}.port"));
        protocol(errs, port, &path);
        match at(port, "targetPort") {
            Value::String(target) => {
                for msg in port_name_messages(target) {
                    errs.invalid(&format!("{path}.targetPort"), go_quote(target), &msg);
                }
            }
            target => port_number(errs, target.as_i64().unwrap_or(0), &format!("{path}.targetPort")),
        }
    }
    labels(errs, at(spec, "selector"), "spec.selector");
    let types = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
    if !types.contains(&service_type) {
        errs.not_supported("spec.type", go_quote(service_type), &types);
    }
    let affinity = text(spec, "sessionAffinity");
    if !["ClientIP", "None"].contains(&affinity) {
        errs.not_supported("spec.sessionAffinity", go_quote(affinity), &["ClientIP", "None"]);
    }
}

/// Keys of the ConfigMap or Secret map `field` (`IsConfigMapKey`).
fn data_keys(errs: &mut Errors, object: &Value, field: &str) {
    for key in map(object, field).keys() {
        for msg in config_map_key(key) {
            errs.invalid(&format!("{field}[{key}]"), go_quote(key), &msg);
        }
    }
}

/// The `immutable: true` rules of ConfigMap and Secret updates.
fn immutable_data(errs: &mut Errors, old: &Value, new: &Value, fields: &[&str]) {
    if at(old, "immutable") != &Value::Bool(true) {
        return;
    }
    const DETAIL: &str = "field is immutable when `immutable` is set";
    if at(new, "immutable") != &Value::Bool(true) {
        errs.forbidden("immutable", DETAIL);
    }
    for field in fields {
        if !semantic_eq(at(old, field), at(new, field)) {
            errs.forbidden(field, DETAIL);
        }
    }
}

/// Namespace `validateFinalizerName`.
fn finalizer_name(errs: &mut Errors, name: &str, path: &str) {
    for msg in qualified_name(name) {
        errs.invalid(path, go_quote(name), &msg);
    }
    if !name.contains('/') && name != "kubernetes" {
        errs.invalid(path, go_quote(name), "name is neither a standard finalizer name nor is it fully qualified");
    }
}

// === metadata ===

/// `ValidateObjectMeta` with the name rule of `kind`.
fn object_meta(errs: &mut Errors, kind: Builtin, meta: &Value) {
    let name_rule = match kind {
        Builtin::Namespace => dns1123_label,
        Builtin::Service => dns1035_label,
        _ => dns1123_subdomain,
    };
    let generate_name = text(meta, "generateName");
    if !generate_name.is_empty() {
        for msg in name_rule(&mask_trailing_dash(generate_name)) {
            errs.invalid("metadata.generateName", go_quote(generate_name), &msg);
        }
    }
    let name = text(meta, "name");
    // Upstream generates the name before validating; accept an object whose
    // name is still to be generated.
    if name.is_empty() && generate_name.is_empty() {
        errs.required("metadata.name", "name or generateName is required");
    } else if !name.is_empty() {
        for msg in name_rule(name) {
            errs.invalid("metadata.name", go_quote(name), &msg);
        }
    }
    let namespace = text(meta, "namespace");
    let cluster_scoped = matches!(kind, Builtin::Namespace | Builtin::Node);
    if !namespace.is_empty() && !cluster_scoped {
        for msg in dns1123_label(namespace) {
            errs.invalid("metadata.namespace", go_quote(namespace), &msg);
        }
    }
    nonnegative(errs, int(meta, "generation"), "metadata.generation");
    meta_maps(errs, meta, "metadata");
}

/// `ValidateObjectMetaUpdate`.
fn object_meta_update(errs: &mut Errors, old: &Value, new: &Value) {
    if let (Some(new_generation), Some(old_generation)) = (int(new, "generation"), int(old, "generation"))
        && new_generation < old_generation
    {
        errs.invalid("metadata.generation", new_generation.to_string(), "must not be decremented");
    }
    for field in ["name", "namespace", "uid"] {
        let new_value = text(new, field);
        if !new_value.is_empty() && new_value != text(old, field) {
            errs.invalid(&format!("metadata.{field}"), go_quote(new_value), IMMUTABLE);
        }
    }
    meta_maps(errs, new, "metadata");
}

/// Labels, annotations and owner references of an object or template
/// metadata at `path`.
fn meta_maps(errs: &mut Errors, meta: &Value, path: &str) {
    labels(errs, at(meta, "labels"), &format!("{path}.labels"));
    annotations(errs, at(meta, "annotations"), &format!("{path}.annotations"));
    for reference in list(meta, "ownerReferences") {
        owner_reference(errs, reference, &format!("{path}.ownerReferences"));
    }
}

/// `ValidateLabels`: every key a qualified name, every value a label value.
fn labels(errs: &mut Errors, labels: &Value, path: &str) {
    for (key, value) in labels.as_object().into_iter().flatten() {
        for msg in qualified_name(key) {
            errs.invalid(path, go_quote(key), &msg);
        }
        let value = str_of(value);
        for msg in label_value(value) {
            errs.invalid(path, go_quote(value), &msg);
        }
    }
}

/// `ValidateAnnotations`: keys are qualified names (checked lower-cased),
/// and all of them together stay under 256 KiB.
fn annotations(errs: &mut Errors, annotations: &Value, path: &str) {
    let mut total = 0;
    for (key, value) in annotations.as_object().into_iter().flatten() {
        for msg in qualified_name(&key.to_lowercase()) {
            errs.invalid(path, go_quote(key), &msg);
        }
        total += key.len() + str_of(value).len();
    }
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        errs.too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT);
    }
}

/// `validateOwnerReference` (version, kind, name and uid present).
fn owner_reference(errs: &mut Errors, reference: &Value, path: &str) {
    let api_version = text(reference, "apiVersion");
    let version = match api_version.split('/').collect::<Vec<_>>().as_slice() {
        [version] | [_, version] => *version,
        _ => "",
    };
    if version.is_empty() {
        errs.invalid(&format!("{path}.apiVersion"), go_quote(api_version), "version must not be empty");
    }
    for (field, what) in [("kind", "kind"), ("name", "name"), ("uid", "uid")] {
        let value = text(reference, field);
        if value.is_empty() {
            errs.invalid(&format!("{path}.{field}"), go_quote(value), &format!("{what} must not be empty"));
        }
    }
}

/// `ValidateLabelSelector`.
fn label_selector(errs: &mut Errors, selector: &Value, path: &str) {
    labels(errs, at(selector, "matchLabels"), &format!("{path}.matchLabels"));
    for (i, requirement) in list(selector, "matchExpressions").iter().enumerate() {
        let req_path = format!("{path}.matchExpressions[{i}]");
        let values = list(requirement, "values");
        let operator = text(requirement, "operator");
        match operator {
            "In" | "NotIn" if values.is_empty() => {
                errs.required(&format!("{req_path}.values"), "must be specified when `operator` is 'In' or 'NotIn'")
            }
            "Exists" | "DoesNotExist" if !values.is_empty() => errs.forbidden(
                &format!("{req_path}.values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            ),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            _ => errs.invalid(&format!("{req_path}.operator"), go_quote(operator), "not a valid selector operator"),
        }
        let key = text(requirement, "key");
        for msg in qualified_name(key) {
            errs.invalid(&format!("{req_path}.key"), go_quote(key), &msg);
        }
        for (j, value) in values.iter().enumerate() {
            for msg in label_value(str_of(value)) {
                errs.invalid(&format!("{req_path}.values[{j}]"), go_quote(str_of(value)), &msg);
            }
        }
    }
}

// === pod specs ===

/// `ValidatePodTemplateSpec`: template labels and annotations, then the spec.
fn pod_template_spec(errs: &mut Errors, template: &Value, path: &str) {
    meta_maps(errs, at(template, "metadata"), &format!("{path}.metadata"));
    pod_spec(errs, at(template, "spec"), &format!("{path}.spec"));
}

/// Part of `ValidatePodSpec`, in upstream order.
fn pod_spec(errs: &mut Errors, spec: &Value, path: &str) {
    let mut volume_names = BTreeSet::new();
    for (i, volume) in list(spec, "volumes").iter().enumerate() {
        let name_path = format!("{path}.volumes[{i}].name");
        let name = text(volume, "name");
        if name.is_empty() {
            errs.required(&name_path, "");
        } else {
            for msg in dns1123_label(name) {
                errs.invalid(&name_path, go_quote(name), &msg);
            }
        }
        if !volume_names.insert(name) && !name.is_empty() {
            errs.duplicate(&name_path, go_quote(name));
        }
    }

    let containers = list(spec, "containers");
    let mut names = BTreeSet::new();
    if containers.is_empty() {
        errs.required(&format!("{path}.containers"), "");
    }
    for (i, container) in containers.iter().enumerate() {
        let container_path = format!("{path}.containers[{i}]");
        container_common(errs, container, &container_path);
        let name = text(container, "name");
        if !names.insert(name) {
            errs.duplicate(&format!("{container_path}.name"), go_quote(name));
        }
    }
    for (i, container) in list(spec, "initContainers").iter().enumerate() {
        let container_path = format!("{path}.initContainers[{i}]");
        let name = text(container, "name");
        if !names.insert(name) {
            errs.duplicate(&format!("{container_path}.name"), go_quote(name));
        }
        container_common(errs, container, &container_path);
    }

    enumerated(errs, spec, "restartPolicy", path, &["Always", "OnFailure", "Never"]);
    let dns_policies = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];
    enumerated(errs, spec, "dnsPolicy", path, &dns_policies);
    labels(errs, at(spec, "nodeSelector"), &format!("{path}.nodeSelector"));
    for field in ["serviceAccountName", "nodeName"] {
        let value = text(spec, field);
        if !value.is_empty() {
            for msg in dns1123_subdomain(value) {
                errs.invalid(&format!("{path}.{field}"), go_quote(value), &msg);
            }
        }
    }
    if let Some(deadline) = int(spec, "activeDeadlineSeconds")
        && !(1..=i64::from(i32::MAX)).contains(&deadline)
    {
        errs.invalid(
            &format!("{path}.activeDeadlineSeconds"),
            deadline.to_string(),
            "must be between 1 and 2147483647, inclusive",
        );
    }
    let hostname = text(spec, "hostname");
    if !hostname.is_empty() {
        for msg in dns1123_label(hostname) {
            errs.invalid(&format!("{path}.hostname"), go_quote(hostname), &msg);
        }
    }
}

/// `validateContainerCommon`: name, image, termination message policy,
/// ports and pull policy.
fn container_common(errs: &mut Errors, container: &Value, path: &str) {
    let name = text(container, "name");
    if name.is_empty() {
        errs.required(&format!("{path}.name"), "");
    } else {
        for msg in dns1123_label(name) {
            errs.invalid(&format!("{path}.name"), go_quote(name), &msg);
        }
    }
    if text(container, "image").is_empty() {
        errs.required(&format!("{path}.image"), "");
    }
    enumerated(errs, container, "terminationMessagePolicy", path, &["File", "FallbackToLogsOnError"]);
    let mut port_names = BTreeSet::new();
    for (i, port) in list(container, "ports").iter().enumerate() {
        let port_path = format!("{path}.ports[{i}]");
        let port_name = text(port, "name");
        if !port_name.is_empty() {
            let msgs = port_name_messages(port_name);
            for msg in &msgs {
                errs.invalid(&format!("{port_path}.name"), go_quote(port_name), msg);
            }
            if msgs.is_empty() && !port_names.insert(port_name) {
                errs.duplicate(&format!("{port_path}.name"), go_quote(port_name));
            }
        }
        match int(port, "containerPort").unwrap_or(0) {
            0 => errs.required(&format!("{port_path}.containerPort"), ""),
            number => port_number(errs, number, &format!("{port_path}.containerPort")),
        }
        if let Some(host_port) = int(port, "hostPort").filter(|p| *p != 0) {
            port_number(errs, host_port, &format!("{port_path}.hostPort"));
        }
        protocol(errs, port, &port_path);
    }
    enumerated(errs, container, "imagePullPolicy", path, &["Always", "IfNotPresent", "Never"]);
}

/// An enumerated string field: Required when empty, NotSupported when
/// outside `allowed`.
fn enumerated(errs: &mut Errors, object: &Value, field: &str, path: &str, allowed: &[&str]) {
    let value = text(object, field);
    if value.is_empty() {
        errs.required(&format!("{path}.{field}"), "");
    } else if !allowed.contains(&value) {
        errs.not_supported(&format!("{path}.{field}"), go_quote(value), allowed);
    }
}

/// A port's `protocol`.
fn protocol(errs: &mut Errors, port: &Value, path: &str) {
    enumerated(errs, port, "protocol", path, &["SCTP", "TCP", "UDP"]);
}

/// `IsValidPortNum`.
fn port_number(errs: &mut Errors, number: i64, path: &str) {
    if !(1..=65535).contains(&number) {
        errs.invalid(path, number.to_string(), "must be between 1 and 65535, inclusive");
    }
}

/// `ValidateNonnegativeField`.
fn nonnegative(errs: &mut Errors, value: Option<i64>, path: &str) {
    if let Some(value) = value.filter(|v| *v < 0) {
        errs.invalid(path, value.to_string(), NEGATIVE);
    }
}

// === label selectors ===

/// A parsed label selector (upstream `labels.Selector`).
enum Selector {
    /// A nil selector: matches nothing, and is not "empty".
    Nothing,
    /// All requirements must hold; none means everything.
    Requirements(Vec<Requirement>),
}

/// One `key op values` requirement.
struct Requirement {
    /// Label key.
    key: String,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist` (`matchLabels` are `In`).
    operator: String,
    /// Values for `In` / `NotIn`.
    values: Vec<String>,
}

impl Selector {
    /// `LabelSelectorAsSelector`; `None` when it fails to convert.
    fn parse(raw: &Value) -> Option<Selector> {
        if raw.is_null() {
            return Some(Selector::Nothing);
        }
        let mut requirements = Vec::new();
        for (key, value) in map(raw, "matchLabels") {
            let value = value.as_str()?;
            if !qualified_name(key).is_empty() || !label_value(value).is_empty() {
                return None;
            }
            requirements.push(Requirement {
                key: key.clone(),
                operator: "In".to_owned(),
                values: vec![value.to_owned()],
            });
        }
        for expression in list(raw, "matchExpressions") {
            let key = text(expression, "key");
            let operator = text(expression, "operator");
            let values: Vec<String> = list(expression, "values").iter().map(|v| str_of(v).to_owned()).collect();
            let arity_ok = match operator {
                "In" | "NotIn" => !values.is_empty(),
                "Exists" | "DoesNotExist" => values.is_empty(),
                _ => false,
            };
            if !arity_ok || !qualified_name(key).is_empty() || values.iter().any(|v| !label_value(v).is_empty()) {
                return None;
            }
            requirements.push(Requirement { key: key.to_owned(), operator: operator.to_owned(), values });
        }
        Some(Selector::Requirements(requirements))
    }

    /// Whether this selects everything (upstream `Empty()`).
    fn is_everything(&self) -> bool {
        matches!(self, Selector::Requirements(r) if r.is_empty())
    }

    /// Whether the label set (a JSON object, or null) is selected.
    fn matches(&self, labels: &Value) -> bool {
        let Selector::Requirements(requirements) = self else {
            return false;
        };
        requirements.iter().all(|r| {
            let value = labels.get(&r.key).and_then(Value::as_str);
            let listed = value.is_some_and(|v| r.values.iter().any(|x| x == v));
            match r.operator.as_str() {
                "In" => listed,
                "NotIn" => !listed,
                "Exists" => value.is_some(),
                _ => value.is_none(),
            }
        })
    }
}

// === int or string ===

/// An `intstr.IntOrString` as the internal Go type holds it (absent is 0).
enum IntOrString {
    /// `Type: 0`.
    Int(i64),
    /// `Type: 1`.
    Str(String),
}

impl IntOrString {
    /// Reads a JSON value; anything else than a string is an integer.
    fn of(value: &Value) -> IntOrString {
        match value {
            Value::String(s) => IntOrString::Str(s.clone()),
            other => IntOrString::Int(other.as_i64().unwrap_or(0)),
        }
    }

    /// The percentage, when this is a valid percent string.
    fn percent(&self) -> Option<i64> {
        match self {
            IntOrString::Str(s) if percent_messages(s).is_empty() => Some(s[..s.len() - 1].parse().unwrap_or(0)),
            _ => None,
        }
    }

    /// Upstream `getIntOrPercentValue`: the percentage, else the integer
    /// (a non-numeric string counts as 0).
    fn value(&self) -> i64 {
        match (self.percent(), self) {
            (Some(p), _) => p,
            (None, IntOrString::Int(n)) => *n,
            (None, IntOrString::Str(s)) => s.parse().unwrap_or(0),
        }
    }

    /// The Go `%#v` rendering.
    fn go(&self) -> String {
        match self {
            IntOrString::Int(n) => format!("intstr.IntOrString{{Type:0, IntVal:{n}, StrVal:\"\"}}"),
            IntOrString::Str(s) => format!("intstr.IntOrString{{Type:1, IntVal:0, StrVal:{}}}", go_quote(s)),
        }
    }
}

// === name and value syntax (k8s.io/apimachinery/pkg/util/validation) ===

/// Upstream `RegexError`: the message, examples and regular expression.
fn regex_error(message: &str, regex: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{message} (regex used for validation is '{regex}')");
    }
    let examples: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!("{message} (e.g. {}regex used for validation is '{regex}')", examples.join(" or "))
}

/// Upstream `MaxLenError`.
fn max_len_error(length: usize) -> String {
    format!("must be no more than {length} characters")
}

/// Whether `s` matches `[a-z0-9]([-a-z0-9]*[a-z0-9])?` (with `first` as the
/// class of the first character).
fn is_label_like(s: &str, first: fn(char) -> bool) -> bool {
    let bytes: Vec<char> = s.chars().collect();
    let (Some(&head), Some(&tail)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    let lower_alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    first(head) && lower_alnum(tail) && bytes.iter().all(|c| lower_alnum(*c) || *c == '-')
}

/// `IsDNS1123Label`.
fn dns1123_label(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 63 {
        out.push(max_len_error(63));
    }
    if !is_label_like(s, |c| c.is_ascii_lowercase() || c.is_ascii_digit()) {
        out.push(regex_error(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
            "[a-z0-9]([-a-z0-9]*[a-z0-9])?",
            &["my-name", "123-abc"],
        ));
    }
    out
}

/// `IsDNS1123Subdomain`.
fn dns1123_subdomain(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 253 {
        out.push(max_len_error(253));
    }
    if !s.split('.').all(|part| is_label_like(part, |c| c.is_ascii_lowercase() || c.is_ascii_digit())) {
        out.push(regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
            r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
            &["example.com"],
        ));
    }
    out
}

/// `IsDNS1035Label`.
fn dns1035_label(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 63 {
        out.push(max_len_error(63));
    }
    if !is_label_like(s, |c| c.is_ascii_lowercase()) {
        out.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            "[a-z]([-a-z0-9]*[a-z0-9])?",
            &["my-name", "abc-123"],
        ));
    }
    out
}

/// Upstream `maskTrailingDash`: a generateName prefix may end in '-'.
fn mask_trailing_dash(name: &str) -> String {
    match name.strip_suffix('-') {
        Some(rest) if !rest.is_empty() => format!("{rest}a"),
        _ => name.to_owned(),
    }
}

/// Whether `s` matches `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
fn is_qualified_name_part(s: &str) -> bool {
    let chars: Vec<char> = s.chars().collect();
    let (Some(&head), Some(&tail)) = (chars.first(), chars.last()) else {
        return false;
    };
    head.is_ascii_alphanumeric()
        && tail.is_ascii_alphanumeric()
        && chars.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The regex message of a qualified name part.
fn qualified_name_regex_error() -> String {
    regex_error(
        "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]",
        &["MyName", "my.name", "123-abc"],
    )
}

/// `IsQualifiedName`: an optional DNS subdomain prefix and '/', then a name.
fn qualified_name(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                out.push("prefix part must be non-empty".to_owned());
            } else {
                out.extend(dns1123_subdomain(prefix).into_iter().map(|m| format!("prefix part {m}")));
            }
            *name
        }
        _ => {
            out.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                qualified_name_regex_error()
            ));
            return out;
        }
    };
    if name.is_empty() {
        out.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        out.push(format!("name part {}", max_len_error(63)));
    }
    if !is_qualified_name_part(name) {
        out.push(format!("name part {}", qualified_name_regex_error()));
    }
    out
}

/// `IsValidLabelValue`.
fn label_value(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 63 {
        out.push(max_len_error(63));
    }
    if !s.is_empty() && !is_qualified_name_part(s) {
        out.push(regex_error(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?",
            &["MyValue", "my_value", "12345"],
        ));
    }
    out
}

/// `IsValidPercent`.
fn percent_messages(s: &str) -> Vec<String> {
    let valid =
        s.strip_suffix('%').is_some_and(|digits| !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()));
    if valid {
        return Vec::new();
    }
    vec![regex_error(
        "a valid percent string must be a numeric string followed by an ending '%'",
        "[0-9]+%",
        &["1%", "93%"],
    )]
}

/// `IsValidPortName`.
fn port_name_messages(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 15 {
        out.push(max_len_error(15));
    }
    if s.is_empty() || !s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
        out.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_owned());
    }
    if !s.chars().any(|c| c.is_ascii_lowercase()) {
        out.push("must contain at least one letter (a-z)".to_owned());
    }
    if s.contains("--") {
        out.push("must not contain consecutive hyphens".to_owned());
    }
    if s.starts_with('-') || s.ends_with('-') {
        out.push("must not begin or end with a hyphen".to_owned());
    }
    out
}

/// `IsConfigMapKey`.
fn config_map_key(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 253 {
        out.push(max_len_error(253));
    }
    if s.is_empty() || !s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_')) {
        out.push(regex_error(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
            "[-._a-zA-Z0-9]+",
            &["key.name", "KEY_NAME", "key-name"],
        ));
    }
    if s == "." {
        out.push("must not be '.'".to_owned());
    } else if s == ".." {
        out.push("must not be '..'".to_owned());
    } else if s.starts_with("..") {
        out.push("must not start with '..'".to_owned());
    }
    out
}

// === Go value rendering (field.Error's %q, %v and %#v) ===

/// Go's `%q` / `%#v` of a string.
fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `%#v` of a `map[string]string` (keys sorted; absent is nil).
fn go_string_map(value: &Value) -> String {
    match value.as_object() {
        None => "map[string]string(nil)".to_owned(),
        Some(entries) => {
            let sorted: BTreeMap<&String, &Value> = entries.iter().collect();
            let body: Vec<String> =
                sorted.into_iter().map(|(k, v)| format!("{}:{}", go_quote(k), go_quote(str_of(v)))).collect();
            format!("map[string]string{{{}}}", body.join(", "))
        }
    }
}

/// Go's `%#v` of a `[]string` (absent is nil).
fn go_string_slice(value: &Value) -> String {
    match value.as_array() {
        None => "[]string(nil)".to_owned(),
        Some(items) => {
            let body: Vec<String> = items.iter().map(|v| go_quote(str_of(v))).collect();
            format!("[]string{{{}}}", body.join(", "))
        }
    }
}

/// Go's `%#v` of a `metav1.LabelSelector` (a nil pointer prints `null`).
fn go_label_selector(selector: &Value) -> String {
    if selector.is_null() {
        return "null".to_owned();
    }
    let expressions = match at(selector, "matchExpressions").as_array() {
        None => "[]v1.LabelSelectorRequirement(nil)".to_owned(),
        Some(items) => {
            let body: Vec<String> = items
                .iter()
                .map(|r| {
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{}}}",
                        go_quote(text(r, "key")),
                        go_quote(text(r, "operator")),
                        go_string_slice(at(r, "values"))
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", body.join(", "))
        }
    };
    format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{expressions}}}",
        go_string_map(at(selector, "matchLabels"))
    )
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // === utils ===

    /// What `kubectl create deployment web --image=nginx` sends, defaulted.
    fn deployment() -> Value {
        let mut object = json!({
            "kind": "Deployment",
            "apiVersion": "apps/v1",
            "metadata": {"name": "web", "namespace": "default", "creationTimestamp": null,
                "labels": {"app": "web"}},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"creationTimestamp": null, "labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx", "resources": {}}]}
                },
                "strategy": {}
            },
            "status": {}
        });
        crate::defaults::apply(Builtin::Deployment, &mut object);
        object
    }

    /// A defaulted ReplicaSet.
    fn replica_set() -> Value {
        let mut object = deployment();
        object["kind"] = json!("ReplicaSet");
        if let Some(spec) = object["spec"].as_object_mut() {
            for field in ["strategy", "revisionHistoryLimit", "progressDeadlineSeconds"] {
                spec.remove(field);
            }
        }
        object
    }

    /// What `kubectl run web --image=nginx` sends, defaulted.
    fn pod() -> Value {
        let mut object = json!({
            "kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": "web", "labels": {"run": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx", "resources": {}}]}
        });
        crate::defaults::apply(Builtin::Pod, &mut object);
        object
    }

    /// `object` with the JSON pointer `path` set to `value` (objects on the
    /// way are created).
    fn with(mut object: Value, path: &str, value: Value) -> Value {
        let mut target = &mut object;
        for part in path.split('/').filter(|p| !p.is_empty()) {
            target = match part.parse::<usize>() {
                Ok(i) => &mut target[i],
                Err(_) => &mut target[part],
            };
        }
        *target = value;
        object
    }

    /// `object` without the field at the JSON pointer `path`.
    fn without(mut object: Value, path: &str) -> Value {
        let (parent, last) = path.rsplit_once('/').unwrap_or(("", path));
        if let Some(parent) = object.pointer_mut(parent).and_then(Value::as_object_mut) {
            parent.remove(last);
        }
        object
    }

    /// The causes as `field: message` lines, as kubectl prints them.
    fn lines(causes: &[Cause]) -> Vec<String> {
        causes.iter().map(ToString::to_string).collect()
    }

    const LABEL_REGEX_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    const SUBDOMAIN_REGEX_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

    // === tests ===

    #[test]
    fn valid_objects_pass() {
        assert_eq!(lines(&validate_create(Builtin::Deployment, &deployment())), Vec::<String>::new());
        assert_eq!(lines(&validate_create(Builtin::ReplicaSet, &replica_set())), Vec::<String>::new());
        assert_eq!(lines(&validate_create(Builtin::Pod, &pod())), Vec::<String>::new());
        let recreate = with(deployment(), "/spec/strategy", json!({"type": "Recreate"}));
        assert!(validate_create(Builtin::Deployment, &recreate).is_empty());
        let mut ns = json!({"metadata": {"name": "team-a"}});
        crate::defaults::apply(Builtin::Namespace, &mut ns);
        crate::admission::on_create(Builtin::Namespace, &mut ns);
        assert!(validate_create(Builtin::Namespace, &ns).is_empty());
        let mut svc = json!({"metadata": {"name": "web"}, "spec": {"selector": {"app": "web"},
            "ports": [{"name": "http", "port": 80, "targetPort": "http"}, {"name": "metrics", "port": 9090}]}});
        crate::defaults::apply(Builtin::Service, &mut svc);
        assert!(validate_create(Builtin::Service, &svc).is_empty());
        let cm = json!({"metadata": {"name": "c"}, "data": {"app.properties": "x", "KEY_1": "y"}});
        assert!(validate_create(Builtin::ConfigMap, &cm).is_empty());
        let generated = json!({"metadata": {"generateName": "web-"}, "spec": pod()["spec"].clone()});
        assert!(validate_create(Builtin::Pod, &generated).is_empty());
    }

    #[test]
    fn deployment_rules() {
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (
                with(deployment(), "/spec/replicas", json!(-1)),
                vec!["spec.replicas: Invalid value: -1: must be greater than or equal to 0"],
            ),
            (
                with(deployment(), "/spec/minReadySeconds", json!(-5)),
                vec!["spec.minReadySeconds: Invalid value: -5: must be greater than or equal to 0"],
            ),
            (
                with(deployment(), "/spec/revisionHistoryLimit", json!(-1)),
                vec!["spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0"],
            ),
            (
                with(
                    with(deployment(), "/spec/minReadySeconds", json!(700)),
                    "/spec/progressDeadlineSeconds",
                    json!(600),
                ),
                vec!["spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds"],
            ),
            (
                without(deployment(), "/spec/selector"),
                vec![
                    "spec.selector: Required value",
                    "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`",
                ],
            ),
            (
                with(deployment(), "/spec/selector", json!({"matchLabels": {}})),
                vec![
                    "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment",
                ],
            ),
            (
                with(deployment(), "/spec/selector/matchLabels/app", json!("api")),
                vec![
                    "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`",
                ],
            ),
            (
                with(deployment(), "/spec/selector", json!({"matchExpressions": [{"key": "app", "operator": "In"}]})),
                vec![
                    "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
                    "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:\"app\", Operator:\"In\", Values:[]string(nil)}}}: invalid label selector",
                ],
            ),
            (
                with(deployment(), "/spec/strategy", json!({"type": "Recreate", "rollingUpdate": {}})),
                vec!["spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"],
            ),
            (
                with(deployment(), "/spec/strategy", json!({"type": "BlueGreen"})),
                vec![
                    "spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:\"BlueGreen\", RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: \"Recreate\", \"RollingUpdate\"",
                ],
            ),
            (
                with(deployment(), "/spec/strategy/rollingUpdate", json!({"maxSurge": 0, "maxUnavailable": 0})),
                vec![
                    "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}: may not be 0 when `maxSurge` is 0",
                ],
            ),
            (
                with(deployment(), "/spec/strategy/rollingUpdate", json!({"maxSurge": "0%", "maxUnavailable": "0%"})),
                vec![
                    "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"0%\"}: may not be 0 when `maxSurge` is 0",
                ],
            ),
            (
                with(deployment(), "/spec/strategy/rollingUpdate/maxUnavailable", json!("150%")),
                vec![
                    "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"150%\"}: must not be greater than 100%",
                ],
            ),
            (
                with(deployment(), "/spec/strategy/rollingUpdate/maxSurge", json!("abc")),
                vec![
                    "spec.strategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"abc\"}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
                ],
            ),
            (
                with(deployment(), "/spec/strategy/rollingUpdate/maxSurge", json!(-1)),
                vec!["spec.strategy.rollingUpdate.maxSurge: Invalid value: -1: must be greater than or equal to 0"],
            ),
            (
                with(deployment(), "/spec/template/spec/restartPolicy", json!("Never")),
                vec!["spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\""],
            ),
            (
                with(deployment(), "/spec/template/spec/activeDeadlineSeconds", json!(30)),
                vec![
                    "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported",
                ],
            ),
            (
                with(deployment(), "/spec/template/spec/containers", json!([])),
                vec!["spec.template.spec.containers: Required value"],
            ),
        ];
        for (object, want) in cases {
            assert_eq!(lines(&validate_create(Builtin::Deployment, &object)), want);
        }
    }

    #[test]
    fn container_rules() {
        let containers = |list: Value| {
            let mut object = with(deployment(), "/spec/template/spec/containers", list);
            crate::defaults::apply(Builtin::Deployment, &mut object);
            lines(&validate_create(Builtin::Deployment, &object))
        };
        const C: &str = "spec.template.spec.containers";
        assert_eq!(containers(json!([{"name": "", "image": "nginx"}])), vec![format!("{C}[0].name: Required value")]);
        assert_eq!(
            containers(json!([{"name": "Web_1", "image": "nginx"}])),
            vec![format!("{C}[0].name: Invalid value: \"Web_1\": {LABEL_REGEX_MSG}")]
        );
        assert_eq!(
            containers(json!([{"name": "a", "image": "nginx"}, {"name": "a", "image": "redis"}])),
            vec![format!("{C}[1].name: Duplicate value: \"a\"")]
        );
        assert_eq!(containers(json!([{"name": "a"}])), vec![format!("{C}[0].image: Required value")]);
        assert_eq!(
            containers(json!([{"name": "a", "image": "a", "imagePullPolicy": "Sometimes",
                "ports": [{"containerPort": 70000, "protocol": "HTTP"}]}])),
            vec![
                format!("{C}[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"),
                format!(
                    "{C}[0].ports[0].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\""
                ),
                format!(
                    "{C}[0].imagePullPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"IfNotPresent\", \"Never\""
                ),
            ]
        );
    }

    #[test]
    fn replica_set_rules() {
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (
                with(replica_set(), "/spec/replicas", json!(-2)),
                vec!["spec.replicas: Invalid value: -2: must be greater than or equal to 0"],
            ),
            (
                with(replica_set(), "/spec/minReadySeconds", json!(-1)),
                vec!["spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0"],
            ),
            (
                without(replica_set(), "/spec/selector"),
                vec![
                    "spec.selector: Required value",
                    "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`",
                ],
            ),
            (
                with(replica_set(), "/spec/template/metadata/labels", json!({"app": "other", "tier": "x"})),
                vec![
                    "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"other\", \"tier\":\"x\"}: `selector` does not match template `labels`",
                ],
            ),
        ];
        for (object, want) in cases {
            assert_eq!(lines(&validate_create(Builtin::ReplicaSet, &object)), want);
        }
    }

    #[test]
    fn names_labels_and_annotations() {
        let named = |name: &str| with(deployment(), "/metadata/name", json!(name));
        assert_eq!(
            lines(&validate_create(Builtin::Deployment, &named("Web"))),
            vec![format!("metadata.name: Invalid value: \"Web\": {SUBDOMAIN_REGEX_MSG}")]
        );
        assert!(validate_create(Builtin::Deployment, &named("web.v2")).is_empty());
        assert_eq!(
            lines(&validate_create(Builtin::Deployment, &named(&"a".repeat(254)))),
            vec![format!("metadata.name: Invalid value: \"{}\": must be no more than 253 characters", "a".repeat(254))]
        );
        assert_eq!(
            lines(&validate_create(Builtin::Deployment, &without(deployment(), "/metadata/name"))),
            vec!["metadata.name: Required value: name or generateName is required"]
        );
        assert_eq!(
            lines(&validate_create(Builtin::Namespace, &json!({"metadata": {"name": "team.a"}}))),
            vec![format!("metadata.name: Invalid value: \"team.a\": {LABEL_REGEX_MSG}")]
        );
        let svc = json!({"metadata": {"name": "1web"}, "spec": {"type": "ClusterIP", "sessionAffinity": "None",
            "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}]}});
        assert_eq!(
            lines(&validate_create(Builtin::Service, &svc)),
            vec![
                "metadata.name: Invalid value: \"1web\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
        assert_eq!(
            lines(&validate_create(
                Builtin::Deployment,
                &with(deployment(), "/metadata/labels", json!({"app/x/y": "web"}))
            )),
            vec![
                "metadata.labels: Invalid value: \"app/x/y\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            ]
        );
        assert_eq!(
            lines(&validate_create(
                Builtin::Deployment,
                &with(deployment(), "/metadata/labels", json!({"app": "-web"}))
            )),
            vec![
                "metadata.labels: Invalid value: \"-web\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
            ]
        );
        assert_eq!(
            lines(&validate_create(
                Builtin::Deployment,
                &with(deployment(), "/metadata/annotations", json!({"Example.com/": "x"}))
            )),
            vec![
                "metadata.annotations: Invalid value: \"Example.com/\": name part must be non-empty",
                "metadata.annotations: Invalid value: \"Example.com/\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ]
        );
        let big = with(deployment(), "/metadata/annotations", json!({"a": "x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT)}));
        assert_eq!(
            lines(&validate_create(Builtin::Deployment, &big)),
            vec!["metadata.annotations: Too long: may not be more than 262144 bytes"]
        );
        let template_label = with(deployment(), "/spec/template/metadata/labels/bad key", json!("x"));
        assert_eq!(
            lines(&validate_create(Builtin::Deployment, &template_label))[0],
            "spec.template.metadata.labels: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        );
    }

    #[test]
    fn pod_rules() {
        let mut bare = json!({"metadata": {"name": "p"}, "spec": {}});
        crate::defaults::apply(Builtin::Pod, &mut bare);
        assert_eq!(lines(&validate_create(Builtin::Pod, &bare)), vec!["spec.containers: Required value"]);
        let ephemeral = with(pod(), "/spec/ephemeralContainers", json!([{"name": "debug", "image": "busybox"}]));
        assert_eq!(
            lines(&validate_create(Builtin::Pod, &ephemeral)),
            vec!["spec.ephemeralContainers: Forbidden: cannot be set on create"]
        );
        let bad = with(with(pod(), "/spec/restartPolicy", json!("Sometimes")), "/spec/dnsPolicy", json!("Cloud"));
        assert_eq!(
            lines(&validate_create(Builtin::Pod, &bad)),
            vec![
                "spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"",
                "spec.dnsPolicy: Unsupported value: \"Cloud\": supported values: \"ClusterFirstWithHostNet\", \"ClusterFirst\", \"Default\", \"None\"",
            ]
        );
        // A pod may use OnFailure; a template may not.
        let on_failure = with(pod(), "/spec/restartPolicy", json!("OnFailure"));
        assert!(validate_create(Builtin::Pod, &on_failure).is_empty());
    }

    #[test]
    fn other_kinds() {
        let cm = json!({"metadata": {"name": "c"}, "data": {"a b": "x"}, "binaryData": {"k": ""}});
        let cm = with(cm, "/data/k", json!("y"));
        assert_eq!(
            lines(&validate_create(Builtin::ConfigMap, &cm)),
            vec![
                "data[a b]: Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
                "data[k]: Invalid value: \"k\": duplicate of key present in binaryData",
            ]
        );
        let ns = json!({"metadata": {"name": "a"}, "spec": {"finalizers": ["custom"]}});
        assert_eq!(
            lines(&validate_create(Builtin::Namespace, &ns)),
            vec![
                "spec.finalizers: Invalid value: \"custom\": name is neither a standard finalizer name nor is it fully qualified"
            ]
        );
        let svc = json!({"metadata": {"name": "s"}, "spec": {"type": "Magic", "sessionAffinity": "None",
            "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}, {"port": 0, "protocol": "TCP", "targetPort": 80}]}});
        assert_eq!(
            lines(&validate_create(Builtin::Service, &svc)),
            vec![
                "spec.ports[0].name: Required value",
                "spec.ports[1].name: Required value",
                "spec.ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive",
                "spec.type: Unsupported value: \"Magic\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\"",
            ]
        );
        let no_ports = json!({"metadata": {"name": "s"}, "spec": {"type": "ClusterIP", "sessionAffinity": "None"}});
        assert_eq!(lines(&validate_create(Builtin::Service, &no_ports)), vec!["spec.ports: Required value"]);
        let lease = json!({"metadata": {"name": "l"}, "spec": {"leaseDurationSeconds": 0}});
        assert_eq!(
            lines(&validate_create(Builtin::Lease, &lease)),
            vec!["spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"]
        );
    }

    #[test]
    fn updates() {
        let old = deployment();
        assert!(validate_update(Builtin::Deployment, &old, &with(old.clone(), "/spec/replicas", json!(5))).is_empty());
        let moved = with(
            with(old.clone(), "/spec/selector/matchLabels/app", json!("web2")),
            "/spec/template/metadata/labels/app",
            json!("web2"),
        );
        assert_eq!(
            lines(&validate_update(Builtin::Deployment, &old, &moved)),
            vec![
                "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web2\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
            ]
        );
        let renamed = with(old.clone(), "/metadata/name", json!("web2"));
        assert_eq!(
            lines(&validate_update(Builtin::Deployment, &old, &renamed)),
            vec!["metadata.name: Invalid value: \"web2\": field is immutable"]
        );
        // An empty matchExpressions list is the same selector.
        let same = with(old.clone(), "/spec/selector/matchExpressions", json!([]));
        assert!(validate_update(Builtin::Deployment, &old, &same).is_empty());
        let rs = replica_set();
        let rs_moved = with(rs.clone(), "/spec/selector/matchLabels/tier", json!("x"));
        let rs_moved = with(rs_moved, "/spec/template/metadata/labels/tier", json!("x"));
        assert_eq!(
            lines(&validate_update(Builtin::ReplicaSet, &rs, &rs_moved)),
            vec![
                "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web\", \"tier\":\"x\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
            ]
        );
        let rs_negative = with(rs.clone(), "/spec/replicas", json!(-1));
        assert_eq!(
            lines(&validate_update(Builtin::ReplicaSet, &rs, &rs_negative)),
            vec!["spec.replicas: Invalid value: -1: must be greater than or equal to 0"]
        );

        let secret = json!({"metadata": {"name": "s"}, "type": "Opaque", "immutable": true, "data": {"a": "eA=="}});
        let changed = with(with(secret.clone(), "/data/a", json!("eQ==")), "/type", json!("kubernetes.io/tls"));
        assert_eq!(
            lines(&validate_update(Builtin::Secret, &secret, &changed)),
            vec![
                "type: Invalid value: \"kubernetes.io/tls\": field is immutable",
                "data: Forbidden: field is immutable when `immutable` is set",
            ]
        );
        let generation = with(with(old.clone(), "/metadata/generation", json!(3)), "/metadata/uid", json!("u1"));
        let decremented =
            with(with(generation.clone(), "/metadata/generation", json!(2)), "/metadata/uid", json!("u2"));
        assert_eq!(
            lines(&validate_update(Builtin::Deployment, &generation, &decremented)),
            vec![
                "metadata.generation: Invalid value: 2: must not be decremented",
                "metadata.uid: Invalid value: \"u2\": field is immutable",
            ]
        );
    }

    #[test]
    fn causes_carry_reason_field_and_message() {
        let causes = validate_create(Builtin::Deployment, &with(deployment(), "/spec/replicas", json!(-1)));
        assert_eq!(
            causes,
            vec![Cause {
                reason: FIELD_VALUE_INVALID,
                message: "Invalid value: -1: must be greater than or equal to 0".to_owned(),
                field: "spec.replicas".to_owned(),
            }]
        );
        let causes = validate_create(Builtin::Deployment, &without(deployment(), "/spec/selector"));
        assert_eq!(causes[0].reason, FIELD_VALUE_REQUIRED);
    }
}
