//! The DaemonSet strategy's template generation: a count of the pod
//! template's changes, kept by the server. apps/v1 has no field for it, so
//! the API server stores it in the `deprecated.daemonset.template.generation`
//! annotation (its v1 conversion), and every write sees it replaced by the
//! server's value: at least 1 on create, the stored one on update, plus 1
//! when the update changes `spec.template` (upstream
//! `daemonSetStrategy.PrepareForCreate` and `PrepareForUpdate`). The
//! DaemonSet controller labels its pods with it.

use serde_json::{Value, json};

use crate::object;

/// The annotation holding the template generation.
pub const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

/// The template generation an object carries (0 without a numeric one).
fn template_generation(daemon_set: &Value) -> i64 {
    daemon_set
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(TEMPLATE_GENERATION))
        .and_then(Value::as_str)
        .and_then(|g| g.parse().ok())
        .unwrap_or(0)
}

/// Writes `generation` into the annotation.
fn set_template_generation(daemon_set: &mut Value, generation: i64) {
    let metadata = object::metadata_mut(daemon_set);
    let annotations = metadata.entry("annotations").or_insert_with(|| json!({}));
    if !annotations.is_object() {
        *annotations = json!({});
    }
    annotations[TEMPLATE_GENERATION] = json!(generation.to_string());
}

/// A new DaemonSet's template generation: the one it asks for, at least 1.
pub(super) fn template_generation_on_create(daemon_set: &mut Value) {
    let generation = template_generation(daemon_set).max(1);
    set_template_generation(daemon_set, generation);
}

/// An updated DaemonSet's template generation: the stored one, bumped when
/// a write to the main resource (`main`) changes the pod template.
pub(super) fn template_generation_on_update(next: &mut Value, current: &Value, main: bool) {
    let changed = main && next.pointer("/spec/template") != current.pointer("/spec/template");
    set_template_generation(next, template_generation(current) + i64::from(changed));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::{Builtin, Registry, Subresource};
    use crate::strategy::{next_state, prepare_for_create};

    /// A DaemonSet as `before_create` leaves it, prepared for create.
    fn created() -> Value {
        let rt = Registry::default().builtin(Builtin::DaemonSet);
        let mut ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "agent", "namespace": "default", "uid": "u1", "generation": 1,
                "resourceVersion": "7", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                "template": {"metadata": {"labels": {"app": "agent"}},
                    "spec": {"containers": [{"name": "agent", "image": "agent:1"}]}}},
            "status": {"numberReady": 4}});
        prepare_for_create(&rt, "agent", &mut ds).expect("valid");
        ds
    }

    fn update(current: &Value, sub: Option<Subresource>, edit: impl FnOnce(&mut Value)) -> Value {
        let rt = Registry::default().builtin(Builtin::DaemonSet);
        let mut incoming = current.clone();
        edit(&mut incoming);
        next_state(&rt, sub, current, incoming).expect("valid").expect("changed")
    }

    #[test]
    fn a_new_daemon_set_has_template_generation_1_and_no_status() {
        let ds = created();
        assert_eq!(ds["metadata"]["annotations"][TEMPLATE_GENERATION], "1");
        assert_eq!(ds["status"], json!({}));
    }

    #[test]
    fn template_changes_bump_the_template_generation_and_other_writes_keep_it() {
        let ds = created();
        let new_image =
            update(&ds, None, |d| d["spec"]["template"]["spec"]["containers"][0]["image"] = json!("agent:2"));
        assert_eq!(new_image["metadata"]["annotations"][TEMPLATE_GENERATION], "2");
        assert_eq!(new_image["metadata"]["generation"], 2);

        let forged = update(&new_image, None, |d| {
            d["metadata"]["annotations"][TEMPLATE_GENERATION] = json!("9");
            d["spec"]["minReadySeconds"] = json!(5);
        });
        assert_eq!(forged["metadata"]["annotations"][TEMPLATE_GENERATION], "2");
        assert_eq!(forged["metadata"]["generation"], 3, "a spec change beside the template");

        let status = update(&forged, Some(Subresource::Status), |d| {
            d["status"] = json!({"numberReady": 1});
            d["spec"]["template"]["spec"]["containers"][0]["image"] = json!("agent:3");
        });
        assert_eq!(status["metadata"]["annotations"][TEMPLATE_GENERATION], "2");
        assert_eq!(status["spec"]["template"]["spec"]["containers"][0]["image"], "agent:2");
        assert_eq!((&status["metadata"]["generation"], &status["status"]["numberReady"]), (&json!(3), &json!(1)));
    }
}
