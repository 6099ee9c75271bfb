//! Taints and tolerations: `validateNodeTaints` (a node's `spec.taints`)
//! and `ValidateTolerations` (a pod spec's `tolerations`), with the taint
//! effect rule they share.

use std::collections::BTreeSet;

use serde_json::Value;

use super::access::{at, text};
use super::errors::Errors;
use super::render::{go_quote, go_taint};
use super::syntax::{label_value, qualified_name};

/// The taint effects, in upstream's order.
const EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

/// `validateTaintEffect`: one of [`EFFECTS`]; empty is Required unless
/// `allow_empty` (a toleration's empty effect matches every effect).
fn taint_effect(errs: &mut Errors, effect: &str, allow_empty: bool, path: &str) {
    if effect.is_empty() && !allow_empty {
        errs.required(path, "");
    } else if !EFFECTS.contains(&effect) {
        errs.not_supported(path, go_quote(effect), &EFFECTS);
    }
}

/// `ValidateLabelName`: a qualified name, one cause per message.
fn label_name(errs: &mut Errors, key: &str, path: &str) {
    for msg in qualified_name(key) {
        errs.invalid(path, go_quote(key), &msg);
    }
}

/// `validateNodeTaints`: each key a qualified name, each value a label
/// value (its messages joined with `;`), each effect required and known, and
/// no two taints with the same key and effect. Upstream reports these under
/// `metadata.taints`, not `spec.taints`; `path` is what the caller passes.
pub(super) fn node_taints(errs: &mut Errors, taints: &[Value], path: &str) {
    let mut seen = BTreeSet::new();
    for (i, taint) in taints.iter().enumerate() {
        let item = format!("{path}[{i}]");
        let (key, value, effect) = (text(taint, "key"), text(taint, "value"), text(taint, "effect"));
        label_name(errs, key, &format!("{item}.key"));
        let msgs = label_value(value);
        if !msgs.is_empty() {
            errs.invalid(&format!("{item}.value"), go_quote(value), &msgs.join(";"));
        }
        taint_effect(errs, effect, false, &format!("{item}.effect"));
        if !seen.insert((effect, key)) {
            errs.duplicate_because(&item, go_taint(taint), "taints must be unique by key and effect pair");
        }
    }
}

/// `ValidateTolerations`.
pub(super) fn tolerations(errs: &mut Errors, tolerations: &[Value], path: &str) {
    for (i, toleration) in tolerations.iter().enumerate() {
        let item = format!("{path}[{i}]");
        let operator_path = format!("{item}.operator");
        let (key, operator) = (text(toleration, "key"), text(toleration, "operator"));
        let (value, effect) = (text(toleration, "value"), text(toleration, "effect"));
        if !key.is_empty() {
            label_name(errs, key, &format!("{item}.key"));
        }
        if key.is_empty() && operator != "Exists" {
            errs.invalid(
                &operator_path,
                go_quote(operator),
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            );
        }
        if !at(toleration, "tolerationSeconds").is_null() && effect != "NoExecute" {
            errs.invalid(
                &format!("{item}.effect"),
                go_quote(effect),
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            );
        }
        match operator {
            "Equal" | "" => {
                let msgs = label_value(value);
                if !msgs.is_empty() {
                    errs.invalid(&operator_path, go_quote(value), &msgs.join(";"));
                }
            }
            "Exists" if !value.is_empty() => {
                errs.invalid(&operator_path, go_quote(value), "value must be empty when `operator` is 'Exists'")
            }
            "Exists" => {}
            other => errs.not_supported(&operator_path, go_quote(other), &["Equal", "Exists"]),
        }
        if !effect.is_empty() {
            taint_effect(errs, effect, true, &format!("{item}.effect"));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn taint_causes(taints: Value) -> Vec<String> {
        let mut errs = Errors::default();
        node_taints(&mut errs, taints.as_array().map(Vec::as_slice).unwrap_or(&[]), "metadata.taints");
        errs.finish().iter().map(ToString::to_string).collect()
    }

    fn toleration_causes(tolerations: Value) -> Vec<String> {
        let mut errs = Errors::default();
        super::tolerations(&mut errs, tolerations.as_array().map(Vec::as_slice).unwrap_or(&[]), "spec.tolerations");
        errs.finish().iter().map(ToString::to_string).collect()
    }

    #[test]
    fn valid_taints_and_tolerations_pass() {
        assert!(
            taint_causes(json!([{"key": "a", "effect": "NoSchedule"}, {"key": "a", "effect": "NoExecute"}])).is_empty()
        );
        assert!(
            toleration_causes(json!([
                {"operator": "Exists"},
                {"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute", "tolerationSeconds": 30},
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
            ]))
            .is_empty()
        );
    }

    #[test]
    fn taint_rules() {
        assert_eq!(
            taint_causes(json!([{"key": "a", "value": "-x", "effect": "Sometimes"}, {"key": "b"}])),
            vec![
                "metadata.taints[0].value: Invalid value: \"-x\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
                "metadata.taints[0].effect: Unsupported value: \"Sometimes\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"",
                "metadata.taints[1].effect: Required value",
            ]
        );
        assert_eq!(
            taint_causes(
                json!([{"key": "a", "effect": "NoSchedule"}, {"key": "a", "value": "x", "effect": "NoSchedule"}])
            ),
            vec![
                "metadata.taints[1]: Duplicate value: core.Taint{Key:\"a\", Value:\"x\", Effect:\"NoSchedule\", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair"
            ]
        );
    }

    #[test]
    fn toleration_rules() {
        assert_eq!(
            toleration_causes(json!([
                {"key": "k", "operator": "Exists", "value": "v"},
                {"key": "k", "operator": "Equal", "effect": "NoSchedule", "tolerationSeconds": 5},
                {"value": "v"},
                {"key": "k", "operator": "Lt", "effect": "Never"},
            ])),
            vec![
                "spec.tolerations[0].operator: Invalid value: \"v\": value must be empty when `operator` is 'Exists'",
                "spec.tolerations[1].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set",
                "spec.tolerations[2].operator: Invalid value: \"\": operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
                "spec.tolerations[3].operator: Unsupported value: \"Lt\": supported values: \"Equal\", \"Exists\"",
                "spec.tolerations[3].effect: Unsupported value: \"Never\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"",
            ]
        );
    }
}
