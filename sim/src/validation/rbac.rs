//! rbac.authorization.k8s.io/v1 rules of the roles: `ValidateRole` and
//! `ValidateClusterRole` (each rule's verbs, API groups, resources and
//! non-resource URLs; a ClusterRole's `aggregationRule` with at least one
//! valid selector). Bindings are not validated yet.

use serde_json::Value;

use super::access::{at, list};
use super::errors::Errors;
use super::meta::label_selector;
use super::render::{go_quote, go_string_slice};

/// `ValidateRole` (namespaced rules) or `ValidateClusterRole` (cluster
/// rules and the aggregation rule), past the metadata.
pub(super) fn role(errs: &mut Errors, object: &Value, namespaced: bool) {
    for (i, rule) in list(object, "rules").iter().enumerate() {
        policy_rule(errs, rule, namespaced, &format!("rules[{i}]"));
    }
    let aggregation = at(object, "aggregationRule");
    if namespaced || aggregation.is_null() {
        return;
    }
    let selectors = list(aggregation, "clusterRoleSelectors");
    if selectors.is_empty() {
        errs.required(
            "aggregationRule.clusterRoleSelectors",
            "at least one clusterRoleSelector required if aggregationRule is non-nil",
        );
    }
    for (i, selector) in selectors.iter().enumerate() {
        let path = format!("aggregationRule.clusterRoleSelectors[{i}]");
        let mut found = Errors::default();
        label_selector(&mut found, selector, &path);
        let invalid = !found.is_empty();
        errs.extend(found);
        // Upstream also converts the selector, which fails on the same
        // mistakes and is reported once more, with the nil it returned.
        if invalid {
            errs.invalid(&path, go_quote("null"), "invalid label selector.");
        }
    }
}

/// `ValidatePolicyRule`.
fn policy_rule(errs: &mut Errors, rule: &Value, namespaced: bool, path: &str) {
    let filled = |key| !list(rule, key).is_empty();
    if !filled("verbs") {
        errs.required(&format!("{path}.verbs"), "verbs must contain at least one value");
    }
    if filled("nonResourceURLs") {
        let shown = || go_string_slice(at(rule, "nonResourceURLs"));
        let field = format!("{path}.nonResourceURLs");
        if namespaced {
            errs.invalid(&field, shown(), "namespaced rules cannot apply to non-resource URLs");
        }
        if filled("apiGroups") || filled("resources") || filled("resourceNames") {
            errs.invalid(&field, shown(), "rules cannot apply to both regular resources and non-resource URLs");
        }
        return;
    }
    if !filled("apiGroups") {
        errs.required(&format!("{path}.apiGroups"), "resource rules must supply at least one api group");
    }
    if !filled("resources") {
        errs.required(&format!("{path}.resources"), "resource rules must supply at least one resource");
    }
}

#[cfg(test)]
mod tests {
    //! Each rule of `ValidateRole` / `ValidateClusterRole` with upstream's
    //! field path and message.

    use serde_json::json;

    use super::super::{Cause, validate_create};
    use crate::resources::Builtin;

    // === utils ===

    fn cluster_role(body: serde_json::Value) -> Vec<String> {
        let mut object = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "r"}});
        object.as_object_mut().expect("object").extend(body.as_object().expect("body").clone());
        validate_create(Builtin::ClusterRole, &object).iter().map(Cause::to_string).collect()
    }

    fn role(rules: serde_json::Value) -> Vec<String> {
        let object = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "r", "namespace": "default"}, "rules": rules});
        validate_create(Builtin::Role, &object).iter().map(Cause::to_string).collect()
    }

    // === tests ===

    #[test]
    fn valid_roles_pass() {
        let rules = json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]);
        assert!(role(rules.clone()).is_empty());
        assert!(cluster_role(json!({"rules": rules})).is_empty());
        assert!(cluster_role(json!({"rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]})).is_empty());
        let aggregating = json!({"aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]}});
        assert!(cluster_role(aggregating).is_empty(), "an aggregating role's rules may be empty");
    }

    #[test]
    fn a_resource_rule_needs_verbs_groups_and_resources() {
        assert_eq!(
            cluster_role(json!({"rules": [{}]})),
            [
                "rules[0].verbs: Required value: verbs must contain at least one value",
                "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
                "rules[0].resources: Required value: resource rules must supply at least one resource",
            ]
        );
    }

    #[test]
    fn non_resource_urls_are_for_cluster_roles_alone() {
        let rules = json!([{"nonResourceURLs": ["/metrics"], "resources": ["pods"], "verbs": ["get"]}]);
        assert_eq!(
            role(rules),
            [
                "rules[0].nonResourceURLs: Invalid value: []string{\"/metrics\"}: namespaced rules cannot apply to \
                 non-resource URLs",
                "rules[0].nonResourceURLs: Invalid value: []string{\"/metrics\"}: rules cannot apply to both regular \
                 resources and non-resource URLs",
            ]
        );
    }

    #[test]
    fn an_aggregation_rule_needs_a_valid_selector() {
        assert_eq!(
            cluster_role(json!({"aggregationRule": {}})),
            ["aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if \
                 aggregationRule is non-nil"]
        );
        let bad = json!({"aggregationRule": {"clusterRoleSelectors": [
            {"matchExpressions": [{"key": "a", "operator": "Within", "values": ["b"]}]}]}});
        assert_eq!(
            cluster_role(bad),
            [
                "aggregationRule.clusterRoleSelectors[0].matchExpressions[0].operator: Invalid value: \"Within\": not \
                 a valid selector operator",
                "aggregationRule.clusterRoleSelectors[0]: Invalid value: \"null\": invalid label selector.",
            ]
        );
    }
}
