//! Validation of a Job's pod failure policy (`validatePodFailurePolicy`
//! and its rules on exit codes and pod conditions) and success policy
//! (`validateSuccessPolicy`), as part of `validateJobSpec` (`job.rs`).

use std::collections::BTreeSet;

use serde_json::Value;

use super::access::{at, int, list, text};
use super::errors::{Errors, invalid_omitted, nonnegative};
use super::job_status::{index_list, indexes_format};
use super::render::{go_pointer, go_quote};
use super::syntax::qualified_name;

/// `maxPodFailurePolicyRules`, `maxPodFailurePolicyOnPodConditionsPatterns`
/// and `maxSuccessPolicyRule`.
const MAX_RULES: usize = 20;
/// `maxPodFailurePolicyOnExitCodesValues`.
const MAX_EXIT_CODES: usize = 255;
/// `maxJobSuccessPolicySucceededIndexesLimit`.
const MAX_SUCCEEDED_INDEXES: usize = 64 * 1024;

/// `validatePodFailurePolicy` and its rules.
pub(super) fn pod_failure_policy(errs: &mut Errors, spec: &Value, policy: &Value, path: &str) {
    let rules = list(policy, "rules");
    let rules_path = format!("{path}.rules");
    if rules.len() > MAX_RULES {
        errs.too_many(&rules_path, rules.len(), MAX_RULES);
    }
    let pod_spec = at(at(spec, "template"), "spec");
    let containers: BTreeSet<&str> = ["containers", "initContainers"]
        .iter()
        .flat_map(|field| list(pod_spec, field))
        .map(|c| text(c, "name"))
        .collect();
    for (i, rule) in rules.iter().enumerate() {
        let rule_path = format!("{rules_path}[{i}]");
        let action_path = format!("{rule_path}.action");
        const ACTIONS: [&str; 4] = ["Count", "FailIndex", "FailJob", "Ignore"];
        match text(rule, "action") {
            "" => errs.required(&action_path, r#"valid values: ["Count" "FailIndex" "FailJob" "Ignore"]"#),
            "FailIndex" if at(spec, "backoffLimitPerIndex").is_null() => {
                errs.invalid(&action_path, go_quote("FailIndex"), "requires the backoffLimitPerIndex to be set")
            }
            action if !ACTIONS.contains(&action) => errs.not_supported(&action_path, go_quote(action), &ACTIONS),
            _ => {}
        }
        let on_exit_codes = at(rule, "onExitCodes");
        let on_conditions = list(rule, "onPodConditions");
        if !on_exit_codes.is_null() {
            exit_codes(errs, on_exit_codes, &format!("{rule_path}.onExitCodes"), &containers);
        }
        if !on_conditions.is_empty() {
            pod_conditions(errs, on_conditions, &format!("{rule_path}.onPodConditions"));
        }
        match (on_exit_codes.is_null(), on_conditions.is_empty()) {
            (false, false) => {
                invalid_omitted(errs, &rule_path, "specifying both OnExitCodes and OnPodConditions is not supported")
            }
            (true, true) => {
                invalid_omitted(errs, &rule_path, "specifying one of OnExitCodes and OnPodConditions is required")
            }
            _ => {}
        }
    }
}

/// `validatePodFailurePolicyRuleOnExitCodes`.
fn exit_codes(errs: &mut Errors, requirement: &Value, path: &str, containers: &BTreeSet<&str>) {
    let operator = text(requirement, "operator");
    match operator {
        "" => errs.required(&format!("{path}.operator"), r#"valid values: ["In" "NotIn"]"#),
        "In" | "NotIn" => {}
        other => errs.not_supported(&format!("{path}.operator"), go_quote(other), &["In", "NotIn"]),
    }
    if let Some(name) = at(requirement, "containerName").as_str()
        && !containers.contains(name)
    {
        let detail = "must be one of the container or initContainer names in the pod template";
        errs.invalid(&format!("{path}.containerName"), go_quote(name), detail);
    }
    let values_path = format!("{path}.values");
    let raw = at(requirement, "values");
    let values: Vec<i64> = list(requirement, "values").iter().filter_map(Value::as_i64).collect();
    if values.is_empty() {
        let shown = if raw.is_null() { "[]int32(nil)".to_owned() } else { "[]int32{}".to_owned() };
        errs.invalid(&values_path, shown, "at least one value is required");
    } else if values.len() > MAX_EXIT_CODES {
        errs.too_many(&values_path, values.len(), MAX_EXIT_CODES);
    }
    let mut seen = BTreeSet::new();
    for (j, value) in values.iter().enumerate() {
        let value_path = format!("{values_path}[{j}]");
        if operator == "In" && *value == 0 {
            errs.invalid(&value_path, "0".to_owned(), "must not be 0 for the In operator");
        }
        if !seen.insert(*value) {
            errs.duplicate(&value_path, value.to_string());
        }
    }
    if values.windows(2).any(|pair| pair[0] > pair[1]) {
        errs.invalid(&values_path, index_list(&values), "must be ordered");
    }
}

/// `validatePodFailurePolicyRuleOnPodConditions`.
fn pod_conditions(errs: &mut Errors, patterns: &[Value], path: &str) {
    if patterns.len() > MAX_RULES {
        errs.too_many(path, patterns.len(), MAX_RULES);
    }
    for (j, pattern) in patterns.iter().enumerate() {
        let kind = text(pattern, "type");
        for msg in qualified_name(kind) {
            errs.invalid(&format!("{path}[{j}].type"), go_quote(kind), &msg);
        }
        let status_path = format!("{path}[{j}].status");
        match text(pattern, "status") {
            "" => errs.required(&status_path, r#"valid values: ["False" "True" "Unknown"]"#),
            "False" | "True" | "Unknown" => {}
            other => errs.not_supported(&status_path, go_quote(other), &["False", "True", "Unknown"]),
        }
    }
}

/// `validateSuccessPolicy` and its rules.
pub(super) fn success_policy(errs: &mut Errors, spec: &Value, policy: &Value, path: &str) {
    let rules = list(policy, "rules");
    let rules_path = format!("{path}.rules");
    if rules.is_empty() {
        errs.required(&rules_path, "at least one rules must be specified when the successPolicy is specified");
    }
    if rules.len() > MAX_RULES {
        errs.too_many(&rules_path, rules.len(), MAX_RULES);
    }
    let completions = int(spec, "completions").unwrap_or(0);
    for (i, rule) in rules.iter().enumerate() {
        let rule_path = format!("{rules_path}[{i}]");
        let (indexes, count) = (at(rule, "succeededIndexes").as_str(), int(rule, "succeededCount"));
        if indexes.is_none() && count.is_none() {
            errs.required(&rule_path, "at least one of succeededCount or succeededIndexes must be specified");
        }
        let mut total = 0;
        if let Some(indexes) = indexes {
            let indexes_path = format!("{rule_path}.succeededIndexes");
            if indexes.len() > MAX_SUCCEEDED_INDEXES {
                errs.too_long(&indexes_path, MAX_SUCCEEDED_INDEXES);
            }
            match indexes_format(indexes, completions) {
                Ok(n) => total = n,
                Err(e) => {
                    errs.invalid(&indexes_path, go_quote(indexes), &format!("error parsing succeededIndexes: {e}"))
                }
            }
        }
        if let Some(count) = count {
            let count_path = format!("{rule_path}.succeededCount");
            nonnegative(errs, Some(count), &count_path);
            if count > completions {
                let detail =
                    format!("must be less than or equal to {completions} (the number of specified completions)");
                errs.invalid(&count_path, count.to_string(), &detail);
            }
            if indexes.is_some() && count > total {
                let detail = format!(
                    "must be less than or equal to {total} (the number of indexes in the specified succeededIndexes field)"
                );
                errs.invalid(&count_path, count.to_string(), &detail);
            }
        }
    }
}

/// Go's `%#v` of a `batch.SuccessPolicy`.
pub(super) fn go_success_policy(policy: &Value) -> String {
    let rules: Vec<String> = list(policy, "rules")
        .iter()
        .map(|r| {
            format!(
                "batch.SuccessPolicyRule{{SucceededIndexes:{}, SucceededCount:{}}}",
                go_pointer(at(r, "succeededIndexes"), "string"),
                go_pointer(at(r, "succeededCount"), "int32")
            )
        })
        .collect();
    let rules = if at(policy, "rules").is_null() {
        "[]batch.SuccessPolicyRule(nil)".to_owned()
    } else {
        format!("[]batch.SuccessPolicyRule{{{}}}", rules.join(", "))
    };
    format!("batch.SuccessPolicy{{Rules:{rules}}}")
}
