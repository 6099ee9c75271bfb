//! Validation of DaemonSet specs: `ValidateDaemonSetSpec` with its update
//! strategy (`ValidateDaemonSetUpdateStrategy`,
//! `ValidateRollingUpdateDaemonSet`).
//!
//! Unlike the other workloads, a DaemonSet without a selector is not told
//! `Required value`: upstream validates the selector only when present,
//! so the missing one shows as a selector matching nothing, `` `selector`
//! does not match template `labels` ``. The `templateGeneration` rules
//! of `ValidateDaemonSetSpecUpdate` always hold here: apps/v1 keeps the
//! template generation in the `deprecated.daemonset.template.generation`
//! annotation, which the strategy (`crate::strategy`) owns.

use serde_json::Value;

use super::access::{at, int, text};
use super::apps::{empty_selector, positive_int_or_percent, restarts_forever, selector_matches_template};
use super::errors::{Errors, nonnegative};
use super::meta::label_selector;
use super::pod::pod_template_spec;
use super::render::{go_pointer, go_quote};
use super::values::{IntOrString, Selector};

/// `ValidateDaemonSetSpec`.
pub(super) fn daemon_set_spec(errs: &mut Errors, spec: &Value) {
    let selector = at(spec, "selector");
    let template = at(spec, "template");
    label_selector(errs, selector, "spec.selector");
    if let Some(parsed) = Selector::parse(selector) {
        selector_matches_template(errs, template, &parsed);
    }
    if !selector.is_null() {
        empty_selector(errs, selector, "daemonset");
    }
    pod_template_spec(errs, template, "spec.template");
    restarts_forever(errs, template, "DaemonSet");
    nonnegative(errs, Some(int(spec, "minReadySeconds").unwrap_or(0)), "spec.minReadySeconds");
    update_strategy(errs, at(spec, "updateStrategy"));
    nonnegative(errs, int(spec, "revisionHistoryLimit"), "spec.revisionHistoryLimit");
}

/// `ValidateDaemonSetUpdateStrategy`.
fn update_strategy(errs: &mut Errors, strategy: &Value) {
    let rolling = at(strategy, "rollingUpdate");
    match text(strategy, "type") {
        "OnDelete" => {}
        "RollingUpdate" if rolling.is_null() => errs.required("spec.updateStrategy.rollingUpdate", ""),
        "RollingUpdate" => rolling_update(errs, rolling),
        other => {
            let shown = format!(
                "apps.DaemonSetUpdateStrategy{{Type:{}, RollingUpdate:{}}}",
                go_quote(other),
                go_pointer(rolling, "apps.RollingUpdateDaemonSet")
            );
            errs.not_supported("spec.updateStrategy", shown, &["RollingUpdate", "OnDelete"]);
        }
    }
}

/// `ValidateRollingUpdateDaemonSet`: each bound a non-negative count or a
/// percent of at most 100%, and exactly one of them non-zero (a rolling
/// update either takes a node's pod down first or surges one, not both).
fn rolling_update(errs: &mut Errors, rolling: &Value) {
    const UNAVAILABLE: &str = "spec.updateStrategy.rollingUpdate.maxUnavailable";
    const SURGE: &str = "spec.updateStrategy.rollingUpdate.maxSurge";
    let max_unavailable = IntOrString::of(at(rolling, "maxUnavailable"));
    let max_surge = IntOrString::of(at(rolling, "maxSurge"));
    positive_int_or_percent(errs, &max_unavailable, UNAVAILABLE);
    positive_int_or_percent(errs, &max_surge, SURGE);
    for (value, path) in [(&max_unavailable, UNAVAILABLE), (&max_surge, SURGE)] {
        if value.percent().is_some_and(|p| p > 100) {
            errs.invalid(path, value.go(), "must not be greater than 100%");
        }
    }
    match (max_unavailable.value() != 0, max_surge.value() != 0) {
        (true, true) => errs.invalid(SURGE, max_surge.go(), "may not be set when maxUnavailable is non-zero"),
        (false, false) => errs.required(UNAVAILABLE, "cannot be 0 when maxSurge is 0"),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    //! Cases of upstream's `TestValidateDaemonSet`,
    //! `TestValidateDaemonSetUpdate` and `TestValidateRollingUpdateDaemonSet`,
    //! with the messages the API server answers.

    use serde_json::json;

    use super::super::fixtures::{lines, with, without};
    use crate::resources::Builtin;
    use crate::validation::{validate_create, validate_update};

    // === utils ===

    /// A DaemonSet selecting `a: b`, defaulted as the API server stores it.
    fn daemon_set() -> serde_json::Value {
        let mut object = json!({
            "apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "abc", "namespace": "default"},
            "spec": {
                "selector": {"matchLabels": {"a": "b"}},
                "template": {
                    "metadata": {"labels": {"a": "b"}},
                    "spec": {"containers": [{"name": "abc", "image": "image"}]}
                }
            }
        });
        crate::defaults::apply(Builtin::DaemonSet, &mut object);
        object
    }

    const MISMATCH: &str = "spec.template.metadata.labels: Invalid value: map[string]string{\"a\":\"b\"}: \
        `selector` does not match template `labels`";
    const ROLLING: &str = "/spec/updateStrategy/rollingUpdate";

    // === tests ===

    #[test]
    fn success_cases() {
        let cases = [
            ("defaulted", daemon_set()),
            ("on delete", with(daemon_set(), "/spec/updateStrategy", json!({"type": "OnDelete"}))),
            ("surge instead", with(daemon_set(), ROLLING, json!({"maxUnavailable": 0, "maxSurge": "10%"}))),
            ("percent unavailable", with(daemon_set(), ROLLING, json!({"maxUnavailable": "100%", "maxSurge": 0}))),
        ];
        for (name, object) in cases {
            assert_eq!(lines(&validate_create(Builtin::DaemonSet, &object)), Vec::<String>::new(), "{name}");
        }
    }

    #[test]
    fn error_cases() {
        let cases: Vec<(&str, serde_json::Value, Vec<&str>)> = vec![
            ("nil selector", without(daemon_set(), "/spec/selector"), vec![MISMATCH]),
            (
                "empty selector",
                with(daemon_set(), "/spec/selector", json!({})),
                vec![
                    "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for daemonset",
                ],
            ),
            ("selector_doesnt_match", with(daemon_set(), "/spec/selector/matchLabels/a", json!("c")), vec![MISMATCH]),
            (
                "invalid template",
                with(daemon_set(), "/spec/template/spec/containers", json!([])),
                vec!["spec.template.spec.containers: Required value"],
            ),
            (
                "invalid restart policy",
                with(daemon_set(), "/spec/template/spec/restartPolicy", json!("Never")),
                vec!["spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\""],
            ),
            (
                "set active deadline seconds",
                with(daemon_set(), "/spec/template/spec/activeDeadlineSeconds", json!(5)),
                vec![
                    "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in DaemonSet is not Supported",
                ],
            ),
            (
                "negative minReadySeconds",
                with(daemon_set(), "/spec/minReadySeconds", json!(-1)),
                vec!["spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0"],
            ),
            (
                "negative revisionHistoryLimit",
                with(daemon_set(), "/spec/revisionHistoryLimit", json!(-1)),
                vec!["spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0"],
            ),
            (
                "invalid update strategy",
                with(daemon_set(), "/spec/updateStrategy", json!({"type": "Bogus"})),
                vec![
                    "spec.updateStrategy: Unsupported value: apps.DaemonSetUpdateStrategy{Type:\"Bogus\", RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}: supported values: \"RollingUpdate\", \"OnDelete\"",
                ],
            ),
            (
                "nil rolling update",
                with(daemon_set(), "/spec/updateStrategy", json!({"type": "RollingUpdate", "rollingUpdate": null})),
                vec!["spec.updateStrategy.rollingUpdate: Required value"],
            ),
            (
                "both zero",
                with(daemon_set(), ROLLING, json!({"maxUnavailable": 0, "maxSurge": 0})),
                vec![
                    "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0",
                ],
            ),
            (
                "both non-zero",
                with(daemon_set(), ROLLING, json!({"maxUnavailable": 1, "maxSurge": "1%"})),
                vec![
                    "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"1%\"}: may not be set when maxUnavailable is non-zero",
                ],
            ),
            (
                "more than 100%",
                with(daemon_set(), ROLLING, json!({"maxUnavailable": 0, "maxSurge": "101%"})),
                vec![
                    "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"101%\"}: must not be greater than 100%",
                ],
            ),
            (
                "negative maxUnavailable",
                with(daemon_set(), ROLLING, json!({"maxUnavailable": -1, "maxSurge": 0})),
                vec![
                    "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: -1: must be greater than or equal to 0",
                ],
            ),
        ];
        for (name, object, want) in cases {
            assert_eq!(lines(&validate_create(Builtin::DaemonSet, &object)), want, "{name}");
        }
    }

    #[test]
    fn the_selector_is_immutable() {
        let old = daemon_set();
        let template_changed = with(old.clone(), "/spec/template/spec/containers/0/image", json!("image:2"));
        assert!(validate_update(Builtin::DaemonSet, &old, &template_changed).is_empty());
        let moved = with(
            with(old.clone(), "/spec/selector/matchLabels/a", json!("c")),
            "/spec/template/metadata/labels/a",
            json!("c"),
        );
        assert_eq!(
            lines(&validate_update(Builtin::DaemonSet, &old, &moved)),
            vec![
                "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"a\":\"c\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
            ]
        );
    }
}
