//! policy/v1 rules: `ValidatePodDisruptionBudgetSpec`.

use serde_json::Value;

use super::access::at;
use super::apps::positive_int_or_percent;
use super::errors::Errors;
use super::meta::label_selector;
use super::values::IntOrString;

/// `ValidatePodDisruptionBudgetSpec`: at most one of minAvailable and
/// maxUnavailable, each a non-negative number or a percentage of at most
/// 100%, and a well-formed selector.
pub(super) fn pod_disruption_budget_spec(errs: &mut Errors, spec: &Value) {
    let min_available = at(spec, "minAvailable");
    let max_unavailable = at(spec, "maxUnavailable");
    if !min_available.is_null() && !max_unavailable.is_null() {
        errs.invalid(
            "spec.minAvailable",
            IntOrString::of(min_available).go(),
            "minAvailable and maxUnavailable cannot be both set",
        );
    }
    for (field, value) in [("spec.minAvailable", min_available), ("spec.maxUnavailable", max_unavailable)] {
        if value.is_null() {
            continue;
        }
        let value = IntOrString::of(value);
        positive_int_or_percent(errs, &value, field);
        if value.percent().is_some_and(|p| p > 100) {
            errs.invalid(field, value.go(), "must not be greater than 100%");
        }
    }
    let selector = at(spec, "selector");
    if !selector.is_null() {
        label_selector(errs, selector, "spec.selector");
    }
}
