//! What an update of a Job may change (`ValidateJobSpecUpdate` with the
//! options the Job strategy computes, `validationOptionsForJob`): the
//! selector, completion mode, pod failure policy, backoff limit per index,
//! managedBy and success policy never; completions only for an Indexed Job
//! scaled with its parallelism (`ElasticIndexedJob`, GA); the pod template
//! never, except the scheduling directives (node affinity, node selector,
//! tolerations, scheduling gates, and the template's labels and
//! annotations) of a Job that is suspended and never started.

use serde_json::{Map, Value};

use super::access::{at, int, semantic_eq, text};
use super::errors::{Errors, IMMUTABLE};
use super::render::{go_label_selector, go_quote};

/// The job-name and controller-uid labels under `batch.kubernetes.io/`.
const PREFIXED: [&str; 2] = ["batch.kubernetes.io/job-name", "batch.kubernetes.io/controller-uid"];

/// Whether the stored Job's template carries both `batch.kubernetes.io/`
/// labels, so an update must keep them (`RequirePrefixedLabels`).
pub(super) fn requires_prefixed_labels(old: &Value) -> bool {
    let labels = at(at(at(at(old, "spec"), "template"), "metadata"), "labels");
    PREFIXED.iter().all(|key| labels.get(*key).is_some())
}

/// Go's `%#v` of a pointer field holding an integer or a string, as a
/// `field.Invalid` prints it: the value, or `null`.
fn shown(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::String(s) => go_quote(s),
        other => other.to_string(),
    }
}

/// The `ValidateJobSpecUpdate` rules beyond `ValidateJobSpec`.
pub(super) fn job_spec_update(errs: &mut Errors, old: &Value, new: &Value) {
    let (old_spec, spec) = (at(old, "spec"), at(new, "spec"));
    completions(errs, old_spec, spec);
    if !semantic_eq(at(old_spec, "selector"), at(spec, "selector")) {
        errs.invalid("spec.selector", go_label_selector(at(spec, "selector")), IMMUTABLE);
    }
    let old_status = at(old, "status");
    let suspended_never_started =
        at(old_spec, "suspend").as_bool() == Some(true) && at(old_status, "startTime").is_null();
    template(errs, at(old_spec, "template"), at(spec, "template"), suspended_never_started);
    for field in ["completionMode", "backoffLimitPerIndex", "managedBy"] {
        if !semantic_eq(at(old_spec, field), at(spec, field)) {
            errs.invalid(&format!("spec.{field}"), shown(at(spec, field)), IMMUTABLE);
        }
    }
    for (field, go_type) in [("podFailurePolicy", "batch.PodFailurePolicy"), ("successPolicy", "batch.SuccessPolicy")] {
        if !semantic_eq(at(old_spec, field), at(spec, field)) {
            let value = if at(spec, field).is_null() { "null".to_owned() } else { format!("{go_type}{{...}}") };
            errs.invalid(&format!("spec.{field}"), value, IMMUTABLE);
        }
    }
}

/// `validateCompletions`: immutable, but for an Indexed Job that changes
/// it to its (new) parallelism.
fn completions(errs: &mut Errors, old_spec: &Value, spec: &Value) {
    let (old, new) = (at(old_spec, "completions"), at(spec, "completions"));
    if semantic_eq(old, new) {
        return;
    }
    if text(spec, "completionMode") != "Indexed" {
        errs.invalid("spec.completions", shown(new), IMMUTABLE);
        return;
    }
    // An Indexed Job without completions is refused by the spec rules.
    if let Some(completions) = int(spec, "completions")
        && Some(completions) != int(spec, "parallelism")
    {
        let detail = "can only be modified in tandem with spec.parallelism";
        errs.invalid("spec.completions", completions.to_string(), detail);
    }
}

/// `validatePodTemplateUpdate`.
fn template(errs: &mut Errors, old: &Value, new: &Value, scheduling_mutable: bool) {
    let mut old = old.clone();
    if scheduling_mutable {
        take_scheduling_directives(&mut old, new);
    }
    if !semantic_eq(&old, new) {
        errs.invalid("spec.template", "core.PodTemplateSpec{...}".to_owned(), IMMUTABLE);
    }
}

/// Copies into `old` the parts of `new` a suspended Job that never started
/// may change, so that only the others are compared.
fn take_scheduling_directives(old: &mut Value, new: &Value) {
    let new_spec = at(new, "spec");
    let new_affinity = at(new_spec, "affinity");
    let Some(old_template) = old.as_object_mut() else { return };
    let old_spec = object(old_template, "spec");
    match (new_affinity.is_null(), old_spec.get("affinity").is_none_or(Value::is_null)) {
        (true, false) => {
            if let Some(affinity) = old_spec.get_mut("affinity").and_then(Value::as_object_mut) {
                affinity.remove("nodeAffinity");
                if affinity.values().all(Value::is_null) {
                    old_spec.remove("affinity");
                }
            }
        }
        (false, true) => {
            let mut affinity = Map::new();
            put(&mut affinity, "nodeAffinity", at(new_affinity, "nodeAffinity"));
            old_spec.insert("affinity".to_owned(), Value::Object(affinity));
        }
        (false, false) => {
            if let Some(affinity) = old_spec.get_mut("affinity").and_then(Value::as_object_mut) {
                put(affinity, "nodeAffinity", at(new_affinity, "nodeAffinity"));
            }
        }
        (true, true) => {}
    }
    for field in ["nodeSelector", "tolerations", "schedulingGates"] {
        put(old_spec, field, at(new_spec, field));
    }
    let old_meta = object(old_template, "metadata");
    for field in ["annotations", "labels"] {
        put(old_meta, field, at(at(new, "metadata"), field));
    }
}

/// The object under `key`, created when absent.
fn object<'a>(map: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let entry = map.entry(key).or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    entry.as_object_mut().unwrap_or_else(|| unreachable!("just made an object"))
}

/// Sets `key` to `value`, or removes it for null.
fn put(map: &mut Map<String, Value>, key: &str, value: &Value) {
    if value.is_null() {
        map.remove(key);
    } else {
        map.insert(key.to_owned(), value.clone());
    }
}
