//! Validation of StatefulSet specs: `ValidateStatefulSetSpec` and the
//! spec rule of `ValidateStatefulSetUpdate`, which lets an update change
//! only `replicas`, `ordinals`, `template`, `updateStrategy`,
//! `revisionHistoryLimit`, `persistentVolumeClaimRetentionPolicy` and
//! `minReadySeconds`: the selector, service name, pod management policy
//! and claim templates are fixed at creation.
//!
//! Upstream checks a StatefulSet's pod template less than the other
//! workloads': its labels and annotations, its restart policy and
//! deadline, not the pod spec itself (a TODO in upstream's code). The
//! claim templates are not validated either.

use serde_json::{Map, Value};

use super::access::{at, int, semantic_eq, text};
use super::apps::{positive_int_or_percent, restarts_forever, selector_field, selector_matches_template};
use super::errors::{Errors, nonnegative};
use super::meta::meta_maps;
use super::render::{go_pointer, go_quote};
use super::values::IntOrString;

/// The spec fields an update may change.
const MUTABLE: [&str; 7] = [
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
];

/// Upstream's refusal of an update changing any other spec field.
const FORBIDDEN_UPDATE: &str = "updates to statefulset spec for fields other than 'replicas', \
     'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' \
     and 'minReadySeconds' are forbidden";

/// `ValidateStatefulSetSpec`.
pub(super) fn stateful_set_spec(errs: &mut Errors, spec: &Value) {
    match text(spec, "podManagementPolicy") {
        "" => errs.required("spec.podManagementPolicy", ""),
        "OrderedReady" | "Parallel" => {}
        other => errs.invalid("spec.podManagementPolicy", go_quote(other), "must be 'OrderedReady' or 'Parallel'"),
    }
    update_strategy(errs, at(spec, "updateStrategy"));
    let policy = at(spec, "persistentVolumeClaimRetentionPolicy");
    if !policy.is_null() {
        for when in ["whenDeleted", "whenScaled"] {
            let value = text(policy, when);
            if !matches!(value, "Retain" | "Delete") {
                let path = format!("spec.persistentVolumeClaimRetentionPolicy.{when}");
                errs.not_supported(&path, go_quote(value), &["Retain", "Delete"]);
            }
        }
    }
    nonnegative(errs, Some(int(spec, "replicas").unwrap_or(0)), "spec.replicas");
    nonnegative(errs, Some(int(spec, "minReadySeconds").unwrap_or(0)), "spec.minReadySeconds");
    nonnegative(errs, int(spec, "revisionHistoryLimit"), "spec.revisionHistoryLimit");
    let ordinals = at(spec, "ordinals");
    if !ordinals.is_null() {
        nonnegative(errs, Some(int(ordinals, "start").unwrap_or(0)), "spec.ordinals.start");
    }
    let template = at(spec, "template");
    if let Some(selector) = selector_field(errs, spec, "statefulset", "") {
        selector_matches_template(errs, template, &selector);
        meta_maps(errs, at(template, "metadata"), "spec.template.metadata");
    }
    restarts_forever(errs, template, "StatefulSet");
}

/// The `updateStrategy` rules of `ValidateStatefulSetSpec`.
fn update_strategy(errs: &mut Errors, strategy: &Value) {
    let rolling = at(strategy, "rollingUpdate");
    match text(strategy, "type") {
        "" => errs.required("spec.updateStrategy", ""),
        "OnDelete" if !rolling.is_null() => errs.invalid(
            "spec.updateStrategy.rollingUpdate",
            go_rolling_update(rolling),
            "only allowed for updateStrategy 'RollingUpdate'",
        ),
        "OnDelete" => {}
        "RollingUpdate" if !rolling.is_null() => rolling_update(errs, rolling),
        "RollingUpdate" => {}
        other => {
            let shown = format!(
                "apps.StatefulSetUpdateStrategy{{Type:{}, RollingUpdate:{}}}",
                go_quote(other),
                go_pointer(rolling, "apps.RollingUpdateStatefulSetStrategy")
            );
            errs.invalid("spec.updateStrategy", shown, "must be 'RollingUpdate' or 'OnDelete'");
        }
    }
}

/// `validateRollingUpdateStatefulSet`: a non-negative `partition`, and a
/// `maxUnavailable`, when set, above 0 and at most 100%.
fn rolling_update(errs: &mut Errors, rolling: &Value) {
    const MAX_UNAVAILABLE: &str = "spec.updateStrategy.rollingUpdate.maxUnavailable";
    nonnegative(errs, Some(int(rolling, "partition").unwrap_or(0)), "spec.updateStrategy.rollingUpdate.partition");
    let raw = at(rolling, "maxUnavailable");
    if raw.is_null() {
        return;
    }
    let max_unavailable = IntOrString::of(raw);
    positive_int_or_percent(errs, &max_unavailable, MAX_UNAVAILABLE);
    if max_unavailable.value() == 0 {
        errs.invalid(MAX_UNAVAILABLE, max_unavailable.go(), "cannot be 0");
    }
    if max_unavailable.percent().is_some_and(|p| p > 100) {
        errs.invalid(MAX_UNAVAILABLE, max_unavailable.go(), "must not be greater than 100%");
    }
}

/// Go's `%#v` of an `apps.RollingUpdateStatefulSetStrategy`.
fn go_rolling_update(rolling: &Value) -> String {
    format!(
        "apps.RollingUpdateStatefulSetStrategy{{Partition:{}, MaxUnavailable:{}}}",
        int(rolling, "partition").unwrap_or(0),
        go_pointer(at(rolling, "maxUnavailable"), "intstr.IntOrString")
    )
}

/// The spec rule of `ValidateStatefulSetUpdate`: nothing but [`MUTABLE`]
/// fields differ (semantically: absent, null and empty are alike).
pub(super) fn stateful_set_update(errs: &mut Errors, old: &Value, new: &Value) {
    let fixed = |object: &Value| -> Value {
        let mut spec: Map<String, Value> = at(object, "spec").as_object().cloned().unwrap_or_default();
        spec.retain(|field, _| !MUTABLE.contains(&field.as_str()));
        Value::Object(spec)
    };
    if !semantic_eq(&fixed(old), &fixed(new)) {
        errs.forbidden("spec", FORBIDDEN_UPDATE);
    }
}

#[cfg(test)]
mod tests {
    //! Upstream's `TestValidateStatefulSet` and
    //! `TestValidateStatefulSetUpdate` cases, by their names, with the
    //! messages the API server answers.

    use serde_json::json;

    use super::super::fixtures::{lines, with, without};
    use super::*;
    use crate::resources::Builtin;
    use crate::validation::{validate_create, validate_update};

    // === utils ===

    /// Upstream's `mkStatefulSet` (name `abc`, selector and template labels
    /// `a: b`), defaulted as the API server stores it.
    fn stateful_set() -> Value {
        let mut object = json!({
            "apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "abc", "namespace": "default"},
            "spec": {
                "selector": {"matchLabels": {"a": "b"}},
                "serviceName": "abc",
                "template": {
                    "metadata": {"labels": {"a": "b"}},
                    "spec": {"containers": [{"name": "abc", "image": "image", "imagePullPolicy": "IfNotPresent"}]}
                }
            }
        });
        crate::defaults::apply(Builtin::StatefulSet, &mut object);
        object
    }

    fn create(object: &Value) -> Vec<String> {
        lines(&validate_create(Builtin::StatefulSet, object))
    }

    const NAME_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', \
        and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for \
        validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

    // === tests ===

    #[test]
    fn success_cases() {
        let cases = [
            ("alpha name", stateful_set()),
            ("alphanumeric name", with(stateful_set(), "/metadata/name", json!("abc-123"))),
            ("parallel pod management", with(stateful_set(), "/spec/podManagementPolicy", json!("Parallel"))),
            (
                "update strategy",
                with(
                    with(stateful_set(), "/spec/replicas", json!(3)),
                    "/spec/updateStrategy/rollingUpdate/partition",
                    json!(2),
                ),
            ),
            (
                "PVC policy",
                with(
                    stateful_set(),
                    "/spec/persistentVolumeClaimRetentionPolicy",
                    json!({"whenDeleted": "Delete", "whenScaled": "Retain"}),
                ),
            ),
            (
                "maxUnavailable with parallel pod management",
                with(stateful_set(), "/spec/updateStrategy/rollingUpdate/maxUnavailable", json!(2)),
            ),
            ("ordinals.start positive value", with(stateful_set(), "/spec/ordinals", json!({"start": 2}))),
            ("on delete", with(stateful_set(), "/spec/updateStrategy", json!({"type": "OnDelete"}))),
        ];
        for (name, object) in cases {
            assert_eq!(create(&object), Vec::<String>::new(), "{name}");
        }
    }

    #[test]
    fn error_cases() {
        let cases: Vec<(&str, Value, Vec<String>)> = vec![
            (
                "name-with-dots",
                with(stateful_set(), "/metadata/name", json!("abc.123")),
                vec![format!("metadata.name: Invalid value: \"abc.123\": {NAME_MSG}")],
            ),
            (
                "empty selector",
                without(stateful_set(), "/spec/selector"),
                vec![
                    "spec.selector: Required value".to_owned(),
                    "spec.template.metadata.labels: Invalid value: map[string]string{\"a\":\"b\"}: `selector` does not match template `labels`".to_owned(),
                ],
            ),
            (
                "selector_doesnt_match",
                with(stateful_set(), "/spec/selector/matchLabels", json!({"foo": "bar"})),
                vec!["spec.template.metadata.labels: Invalid value: map[string]string{\"a\":\"b\"}: `selector` does not match template `labels`".to_owned()],
            ),
            (
                "negative_replicas",
                with(stateful_set(), "/spec/replicas", json!(-1)),
                vec!["spec.replicas: Invalid value: -1: must be greater than or equal to 0".to_owned()],
            ),
            (
                "invalid restart policy 1",
                with(stateful_set(), "/spec/template/spec/restartPolicy", json!("OnFailure")),
                vec!["spec.template.spec.restartPolicy: Unsupported value: \"OnFailure\": supported values: \"Always\"".to_owned()],
            ),
            (
                "invalid update strategy",
                with(stateful_set(), "/spec/updateStrategy", json!({"type": "foo"})),
                vec!["spec.updateStrategy: Invalid value: apps.StatefulSetUpdateStrategy{Type:\"foo\", RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}: must be 'RollingUpdate' or 'OnDelete'".to_owned()],
            ),
            (
                "invalid rolling update",
                with(stateful_set(), "/spec/updateStrategy", json!({"type": "OnDelete", "rollingUpdate": {"partition": 1}})),
                vec!["spec.updateStrategy.rollingUpdate: Invalid value: apps.RollingUpdateStatefulSetStrategy{Partition:1, MaxUnavailable:(*intstr.IntOrString)(nil)}: only allowed for updateStrategy 'RollingUpdate'".to_owned()],
            ),
            (
                "negative partition",
                with(stateful_set(), "/spec/updateStrategy/rollingUpdate/partition", json!(-1)),
                vec!["spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0".to_owned()],
            ),
            (
                "invalid pod management policy",
                with(stateful_set(), "/spec/podManagementPolicy", json!("foo")),
                vec!["spec.podManagementPolicy: Invalid value: \"foo\": must be 'OrderedReady' or 'Parallel'".to_owned()],
            ),
            (
                "set active deadline seconds",
                with(stateful_set(), "/spec/template/spec/activeDeadlineSeconds", json!(60)),
                vec!["spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported".to_owned()],
            ),
            (
                "invalid PersistentVolumeClaimRetentionPolicy",
                with(
                    stateful_set(),
                    "/spec/persistentVolumeClaimRetentionPolicy",
                    json!({"whenDeleted": "invalid-retention-policy", "whenScaled": "invalid-retention-policy"}),
                ),
                vec![
                    "spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: \"invalid-retention-policy\": supported values: \"Retain\", \"Delete\"".to_owned(),
                    "spec.persistentVolumeClaimRetentionPolicy.whenScaled: Unsupported value: \"invalid-retention-policy\": supported values: \"Retain\", \"Delete\"".to_owned(),
                ],
            ),
            (
                "zero maxUnavailable",
                with(stateful_set(), "/spec/updateStrategy/rollingUpdate/maxUnavailable", json!(0)),
                vec!["spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}: cannot be 0".to_owned()],
            ),
            (
                "greater than 100 percent maxUnavailable",
                with(stateful_set(), "/spec/updateStrategy/rollingUpdate/maxUnavailable", json!("101%")),
                vec!["spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"101%\"}: must not be greater than 100%".to_owned()],
            ),
            (
                "negative revisionHistoryLimit",
                with(stateful_set(), "/spec/revisionHistoryLimit", json!(-1)),
                vec!["spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0".to_owned()],
            ),
            (
                "invalid ordinals.start",
                with(stateful_set(), "/spec/ordinals", json!({"start": -2})),
                vec!["spec.ordinals.start: Invalid value: -2: must be greater than or equal to 0".to_owned()],
            ),
        ];
        for (name, object, want) in cases {
            assert_eq!(create(&object), want, "{name}");
        }
    }

    #[test]
    fn the_template_spec_is_not_validated_but_its_labels_are() {
        let no_containers = with(stateful_set(), "/spec/template/spec/containers", json!([]));
        assert_eq!(create(&no_containers), Vec::<String>::new());
        let bad_label = with(stateful_set(), "/spec/template/metadata/labels/bad key", json!("x"));
        assert_eq!(
            create(&bad_label)[0].split(": Invalid value: ").next(),
            Some("spec.template.metadata.labels"),
            "{:?}",
            create(&bad_label)
        );
    }

    #[test]
    fn update_cases() {
        let old = stateful_set();
        let allowed = [
            ("update replicas", "/spec/replicas", json!(5)),
            ("update template", "/spec/template/spec/containers/0/image", json!("image:2")),
            ("update strategy", "/spec/updateStrategy", json!({"type": "OnDelete"})),
            ("update min ready seconds", "/spec/minReadySeconds", json!(10)),
            ("update revision history limit", "/spec/revisionHistoryLimit", json!(3)),
            ("update ordinals", "/spec/ordinals", json!({"start": 3})),
            (
                "update PVC retention policy",
                "/spec/persistentVolumeClaimRetentionPolicy",
                json!({"whenDeleted": "Delete", "whenScaled": "Delete"}),
            ),
        ];
        for (name, path, value) in allowed {
            let new = with(old.clone(), path, value);
            assert_eq!(lines(&validate_update(Builtin::StatefulSet, &old, &new)), Vec::<String>::new(), "{name}");
        }
        let forbidden = [
            ("updates to service name", "/spec/serviceName", json!("other")),
            ("updates to pod management policy", "/spec/podManagementPolicy", json!("Parallel")),
            (
                "updates to volume claim templates",
                "/spec/volumeClaimTemplates",
                json!([{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}]),
            ),
        ];
        for (name, path, value) in forbidden {
            let new = with(old.clone(), path, value);
            assert_eq!(
                lines(&validate_update(Builtin::StatefulSet, &old, &new)),
                vec![format!("spec: Forbidden: {FORBIDDEN_UPDATE}")],
                "{name}"
            );
        }
        let moved = with(
            with(old.clone(), "/spec/selector/matchLabels/a", json!("c")),
            "/spec/template/metadata/labels/a",
            json!("c"),
        );
        assert_eq!(
            lines(&validate_update(Builtin::StatefulSet, &old, &moved)),
            vec![format!("spec: Forbidden: {FORBIDDEN_UPDATE}")]
        );
    }
}
