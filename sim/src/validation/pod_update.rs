//! What an update of a pod through the main resource may change
//! (upstream `ValidatePodUpdate`): container and init container images,
//! `activeDeadlineSeconds` (set, or lowered), tolerations (added, or an
//! existing one's `tolerationSeconds`), scheduling gates (removed), and a
//! negative `terminationGracePeriodSeconds` set to 1. Anything else in the
//! spec (a bound pod's `nodeName`, resources, which upstream changes through
//! `/resize`, ephemeral containers, through `/ephemeralcontainers`) is
//! refused with one `spec: Forbidden` naming what may change.
//!
//! Upstream follows that message with a `cmp.Diff` of the two specs, whose
//! layout go-cmp deliberately varies; kube-sim follows it with the paths
//! that differ instead. Not done: the node selector and node affinity
//! additions upstream allows on pods that still have scheduling gates.

use serde_json::Value;

use super::access::{at, int, list, semantic_eq, text};
use super::errors::Errors;
use super::render::go_quote;

/// Upstream `updatablePodSpecFields`, in its order.
const UPDATABLE: &[&str] = &[
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
];

/// The pod spec rules of an update of `old` to `new` (whole pods).
pub(super) fn pod_update(errs: &mut Errors, old: &Value, new: &Value) {
    let (old_spec, new_spec) = (at(old, "spec"), at(new, "spec"));
    for field in ["containers", "initContainers"] {
        if !container_updates(errs, list(old_spec, field), list(new_spec, field), &format!("spec.{field}")) {
            return;
        }
    }
    if !active_deadline(errs, int(old_spec, "activeDeadlineSeconds"), int(new_spec, "activeDeadlineSeconds")) {
        return;
    }
    only_added_tolerations(errs, list(old_spec, "tolerations"), list(new_spec, "tolerations"));
    only_deleted_scheduling_gates(errs, list(old_spec, "schedulingGates"), list(new_spec, "schedulingGates"));
    let munged = munged(old_spec, new_spec);
    if !semantic_eq(old_spec, &munged) {
        let mut paths = Vec::new();
        differences(old_spec, &munged, "spec", &mut paths);
        errs.forbidden(
            "spec",
            &format!("pod updates may not change fields other than {}\n{}", UPDATABLE.join(","), paths.join("\n")),
        );
    }
}

/// `ValidateContainerUpdates`: the same number of containers, each with an
/// image. `false` when the count differs (nothing more is checked).
fn container_updates(errs: &mut Errors, old: &[Value], new: &[Value], path: &str) -> bool {
    if old.len() != new.len() {
        errs.forbidden(path, "pod updates may not add or remove containers");
        return false;
    }
    for (i, container) in new.iter().enumerate() {
        let image = text(container, "image");
        if image.is_empty() {
            errs.required(&format!("{path}[{i}].image"), "");
        }
        if image.trim() != image {
            errs.invalid(
                &format!("{path}[{i}].image"),
                go_quote(image),
                "must not have leading or trailing whitespace",
            );
        }
    }
    true
}

/// `activeDeadlineSeconds` may be set, or lowered, never raised or
/// removed. `false` when an out-of-range or raised value stops the checks.
fn active_deadline(errs: &mut Errors, old: Option<i64>, new: Option<i64>) -> bool {
    const PATH: &str = "spec.activeDeadlineSeconds";
    match (old, new) {
        (_, Some(n)) if !(0..=i64::from(i32::MAX)).contains(&n) => {
            errs.invalid(PATH, n.to_string(), &format!("must be between 0 and {}, inclusive", i32::MAX));
            false
        }
        (Some(o), Some(n)) if o < n => {
            errs.invalid(PATH, n.to_string(), "must be less than or equal to previous value");
            false
        }
        (Some(_), None) => {
            errs.invalid(PATH, go_quote("null"), "must not update from a positive integer to nil value");
            true
        }
        _ => true,
    }
}

/// Every old toleration must still be there, but for its
/// `tolerationSeconds`.
fn only_added_tolerations(errs: &mut Errors, old: &[Value], new: &[Value]) {
    let without_seconds = |t: &Value| {
        let mut t = t.clone();
        if let Some(fields) = t.as_object_mut() {
            fields.remove("tolerationSeconds");
        }
        t
    };
    let kept = old.iter().all(|o| new.iter().any(|n| semantic_eq(&without_seconds(o), &without_seconds(n))));
    if !kept {
        errs.forbidden("spec.tolerations", "existing toleration can not be modified except its tolerationSeconds");
    }
}

/// Scheduling gates may only be removed.
fn only_deleted_scheduling_gates(errs: &mut Errors, old: &[Value], new: &[Value]) {
    for (i, gate) in new.iter().enumerate() {
        let name = text(gate, "name");
        if !old.iter().any(|o| text(o, "name") == name) {
            errs.forbidden(
                &format!("spec.schedulingGates[{i}].name"),
                &format!("only deletion is allowed, but found new scheduling gate '{name}'"),
            );
        }
    }
}

/// The new spec with what may change put back to the old values, for the
/// comparison with the old spec.
fn munged(old: &Value, new: &Value) -> Value {
    let mut munged = new.clone();
    for field in ["containers", "initContainers"] {
        if let Some(containers) = munged.get_mut(field).and_then(Value::as_array_mut) {
            for (container, before) in containers.iter_mut().zip(list(old, field)) {
                container["image"] = at(before, "image").clone();
            }
        }
    }
    let Some(fields) = munged.as_object_mut() else { return munged };
    for field in ["activeDeadlineSeconds", "schedulingGates", "tolerations"] {
        match old.get(field) {
            Some(value) => fields.insert(field.to_owned(), value.clone()),
            None => fields.remove(field),
        };
    }
    let old_grace = int(old, "terminationGracePeriodSeconds");
    if old_grace.is_some_and(|g| g < 0) && int(new, "terminationGracePeriodSeconds") == Some(1) {
        fields.insert("terminationGracePeriodSeconds".to_owned(), at(old, "terminationGracePeriodSeconds").clone());
    }
    munged
}

/// The paths at which `old` and `new` differ, each with both values.
pub(super) fn differences(old: &Value, new: &Value, path: &str, out: &mut Vec<String>) {
    if semantic_eq(old, new) {
        return;
    }
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for key in keys {
                differences(at(old, key), at(new, key), &format!("{path}.{key}"), out);
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                differences(x, y, &format!("{path}[{i}]"), out);
            }
        }
        _ => out.push(format!("  {path}: {} -> {}", shown(old), shown(new))),
    }
}

/// A value in the list of differences.
fn shown(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::String(s) => go_quote(s),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(spec: Value) -> Value {
        json!({ "spec": spec })
    }

    fn base() -> Value {
        json!({"containers": [{"name": "c", "image": "a"}], "nodeName": "n1", "activeDeadlineSeconds": 30,
            "terminationGracePeriodSeconds": -1, "schedulingGates": [{"name": "g"}],
            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}]})
    }

    fn causes(old: Value, new: Value) -> Vec<String> {
        let mut errs = Errors::default();
        pod_update(&mut errs, &pod(old), &pod(new));
        errs.finish().iter().map(ToString::to_string).collect()
    }

    #[test]
    fn the_updatable_fields_may_change() {
        let mut new = base();
        new["containers"][0]["image"] = json!("b");
        new["activeDeadlineSeconds"] = json!(10);
        new["terminationGracePeriodSeconds"] = json!(1);
        new["schedulingGates"] = json!([]);
        new["tolerations"][0]["tolerationSeconds"] = json!(50);
        new["tolerations"].as_array_mut().unwrap().push(json!({"key": "x", "operator": "Exists"}));
        assert_eq!(causes(base(), new), Vec::<String>::new());
    }

    #[test]
    fn other_changes_are_forbidden_with_the_paths_that_differ() {
        let mut new = base();
        new["nodeName"] = json!("n2");
        let causes = causes(base(), new);
        assert_eq!(causes.len(), 1);
        assert!(
            causes[0].starts_with(
                "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,\
                 `spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions \
                 to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was \
                 previously negative)\n"
            ),
            "{causes:?}"
        );
        assert!(causes[0].ends_with("  spec.nodeName: \"n1\" -> \"n2\""), "{causes:?}");
    }

    #[test]
    fn the_restricted_updates_have_upstream_messages() {
        let with = |f: &dyn Fn(&mut Value)| {
            let mut new = base();
            f(&mut new);
            causes(base(), new)
        };
        assert_eq!(
            with(&|n| n["containers"].as_array_mut().unwrap().push(json!({"name": "d", "image": "x"}))),
            ["spec.containers: Forbidden: pod updates may not add or remove containers"]
        );
        assert_eq!(
            with(&|n| n["activeDeadlineSeconds"] = json!(60)),
            ["spec.activeDeadlineSeconds: Invalid value: 60: must be less than or equal to previous value"]
        );
        assert_eq!(
            with(&|n| {
                n.as_object_mut().unwrap().remove("activeDeadlineSeconds");
            }),
            [
                "spec.activeDeadlineSeconds: Invalid value: \"null\": must not update from a positive integer to nil value"
            ]
        );
        assert_eq!(
            with(&|n| n["tolerations"] = json!([])),
            ["spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"]
        );
        assert_eq!(
            with(&|n| n["schedulingGates"] = json!([{"name": "g"}, {"name": "h"}])),
            ["spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate 'h'"]
        );
    }
}
