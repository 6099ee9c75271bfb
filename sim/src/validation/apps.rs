//! Validation of the apps/v1 specs: `ValidateDeploymentSpec` and
//! `ValidateReplicaSetSpec`, with their selector, template, strategy and
//! rolling update rules, the apps/v1 selector immutability on update, and
//! the selector and template rules the DaemonSet and StatefulSet specs
//! (`daemon_set.rs`, `stateful_set.rs`) share with them.

use serde_json::Value;

use super::access::{at, int, list, map, semantic_eq, text};
use super::errors::{Errors, IMMUTABLE, nonnegative};
use super::meta::label_selector;
use super::pod::pod_template_spec;
use super::render::{go_label_selector, go_quote, go_string_map};
use super::syntax::percent_messages;
use super::values::{IntOrString, Selector};

/// `ValidateDeploymentSpec`.
pub(super) fn deployment_spec(errs: &mut Errors, spec: &Value) {
    nonnegative(errs, int(spec, "replicas"), "spec.replicas");
    if let Some(selector) = selector_field(errs, spec, "deployment", "invalid label selector") {
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
pub(super) fn replica_set_spec(errs: &mut Errors, spec: &Value) {
    nonnegative(errs, int(spec, "replicas"), "spec.replicas");
    nonnegative(errs, Some(int(spec, "minReadySeconds").unwrap_or(0)), "spec.minReadySeconds");
    if let Some(selector) = selector_field(errs, spec, "deployment", "invalid label selector") {
        template_for_replica_set(errs, at(spec, "template"), &selector);
    }
}

/// The `spec.selector` rules shared by Deployment, ReplicaSet and
/// StatefulSet (`empty selector is invalid for <kind>`, and `unparsable`
/// when it does not convert); the parsed selector when it converts
/// (upstream `LabelSelectorAsSelector`). Upstream says "deployment" for
/// ReplicaSets too.
pub(super) fn selector_field(errs: &mut Errors, spec: &Value, kind: &str, unparsable: &str) -> Option<Selector> {
    let raw = at(spec, "selector");
    if raw.is_null() {
        errs.required("spec.selector", "");
    } else {
        label_selector(errs, raw, "spec.selector");
        empty_selector(errs, raw, kind);
    }
    match Selector::parse(raw) {
        Some(selector) => Some(selector),
        None => {
            errs.invalid("spec.selector", go_label_selector(raw), unparsable);
            None
        }
    }
}

/// A `spec.selector` with neither labels nor expressions selects
/// everything, which no apps/v1 workload may.
pub(super) fn empty_selector(errs: &mut Errors, selector: &Value, kind: &str) {
    if map(selector, "matchLabels").is_empty() && list(selector, "matchExpressions").is_empty() {
        errs.invalid("spec.selector", go_label_selector(selector), &format!("empty selector is invalid for {kind}"));
    }
}

/// `ValidatePodTemplateSpecForReplicaSet`.
fn template_for_replica_set(errs: &mut Errors, template: &Value, selector: &Selector) {
    selector_matches_template(errs, template, selector);
    pod_template_spec(errs, template, "spec.template");
    restarts_forever(errs, template, "ReplicaSet");
}

/// The pod template of a workload `kind` restarts its pods `Always` and
/// sets no `activeDeadlineSeconds`.
pub(super) fn restarts_forever(errs: &mut Errors, template: &Value, kind: &str) {
    let restart_policy = text(at(template, "spec"), "restartPolicy");
    if restart_policy != "Always" {
        errs.not_supported("spec.template.spec.restartPolicy", go_quote(restart_policy), &["Always"]);
    }
    if !at(at(template, "spec"), "activeDeadlineSeconds").is_null() {
        errs.forbidden(
            "spec.template.spec.activeDeadlineSeconds",
            &format!("activeDeadlineSeconds in {kind} is not Supported"),
        );
    }
}

/// The selector does not match the template's labels (a selector that
/// selects everything matches anything).
pub(super) fn selector_matches_template(errs: &mut Errors, template: &Value, selector: &Selector) {
    let labels = at(at(template, "metadata"), "labels");
    if !selector.is_everything() && !selector.matches(labels) {
        errs.invalid(
            "spec.template.metadata.labels",
            go_string_map(labels),
            "`selector` does not match template `labels`",
        );
    }
}

/// apps/v1 forbids changing `spec.selector` (upstream compares with
/// semantic equality: absent, null and empty are alike).
pub(super) fn selector_immutable(errs: &mut Errors, old: &Value, new: &Value) {
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
pub(super) fn positive_int_or_percent(errs: &mut Errors, value: &IntOrString, path: &str) {
    match value {
        IntOrString::Str(s) => {
            for msg in percent_messages(s) {
                errs.invalid(path, value.go(), &msg);
            }
        }
        IntOrString::Int(n) => nonnegative(errs, Some(*n), path),
    }
}
