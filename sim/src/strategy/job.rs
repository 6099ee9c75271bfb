//! The Job strategy's create-time step (`generateSelectorIfNeeded`): unless
//! `spec.manualSelector` is true, the pod template is labelled with the
//! Job's name and uid, under the `batch.kubernetes.io/` keys and the legacy
//! unprefixed ones, and the selector gets
//! `batch.kubernetes.io/controller-uid`. Labels and selector entries the
//! user set are left alone (validation refuses a mismatch).

use serde_json::{Map, Value, json};

use crate::object;

/// `batch.kubernetes.io/job-name`.
pub const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";
/// `batch.kubernetes.io/controller-uid`.
pub const CONTROLLER_UID_LABEL: &str = "batch.kubernetes.io/controller-uid";
/// The legacy `job-name` label.
pub const LEGACY_JOB_NAME_LABEL: &str = "job-name";
/// The legacy `controller-uid` label.
pub const LEGACY_CONTROLLER_UID_LABEL: &str = "controller-uid";

/// Generates the selector and template labels of a new Job whose
/// `manualSelector` is not true (upstream `generateSelectorIfNeeded`).
pub(super) fn generate_selector_if_needed(job: &mut Value) {
    if job.pointer("/spec/manualSelector").and_then(Value::as_bool) == Some(true) {
        return;
    }
    let name = object::name(job).to_owned();
    let uid = job.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or_default().to_owned();
    let Some(spec) = job.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(labels) = map_at(spec, &["template", "metadata", "labels"]) {
        for (key, value) in [
            (LEGACY_JOB_NAME_LABEL, &name),
            (JOB_NAME_LABEL, &name),
            (LEGACY_CONTROLLER_UID_LABEL, &uid),
            (CONTROLLER_UID_LABEL, &uid),
        ] {
            labels.entry(key).or_insert_with(|| json!(value));
        }
    }
    if let Some(match_labels) = map_at(spec, &["selector", "matchLabels"]) {
        match_labels.entry(CONTROLLER_UID_LABEL).or_insert_with(|| json!(uid));
    }
}

/// The object at `path` under `map`, each step created when absent or
/// null; `None` when a step holds something else.
fn map_at<'a>(map: &'a mut Map<String, Value>, path: &[&str]) -> Option<&'a mut Map<String, Value>> {
    let mut here = map;
    for key in path {
        let entry = here.entry(*key).or_insert_with(|| json!({}));
        if entry.is_null() {
            *entry = json!({});
        }
        here = entry.as_object_mut()?;
    }
    Some(here)
}

#[cfg(test)]
mod tests {
    //! Upstream's `TestJobStrategy_PrepareForCreate` selector cases
    //! (pkg/registry/batch/job/strategy_test.go).

    use super::*;

    fn job(spec: Value) -> Value {
        json!({"metadata": {"name": "pi", "uid": "u-1"}, "spec": spec})
    }

    #[test]
    fn a_generated_selector_selects_the_uid_and_labels_the_template_four_ways() {
        let mut j = job(json!({"manualSelector": false, "template": {"metadata": {"labels": {"a": "b"}}}}));
        generate_selector_if_needed(&mut j);
        assert_eq!(j["spec"]["selector"], json!({"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}}));
        assert_eq!(
            j["spec"]["template"]["metadata"]["labels"],
            json!({"a": "b", "job-name": "pi", "batch.kubernetes.io/job-name": "pi",
                "controller-uid": "u-1", "batch.kubernetes.io/controller-uid": "u-1"})
        );
    }

    #[test]
    fn labels_and_selector_entries_the_user_set_are_kept() {
        let mut j = job(json!({"selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "other"}},
            "template": {"metadata": {"labels": {"job-name": "mine"}}}}));
        generate_selector_if_needed(&mut j);
        assert_eq!(j["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"], "other");
        assert_eq!(j["spec"]["template"]["metadata"]["labels"]["job-name"], "mine");
        assert_eq!(j["spec"]["template"]["metadata"]["labels"]["batch.kubernetes.io/job-name"], "pi");
    }

    #[test]
    fn a_manual_selector_is_left_alone() {
        let spec = json!({"manualSelector": true, "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}}});
        let mut j = job(spec.clone());
        generate_selector_if_needed(&mut j);
        assert_eq!(j["spec"], spec);
    }
}
