//! The ClusterRole aggregation controller's decisions (upstream
//! `pkg/controller/clusterroleaggregation/clusterroleaggregation_controller.go`):
//! a ClusterRole with an `aggregationRule` holds exactly the rules of the
//! ClusterRoles its selectors pick.
//!
//! A plan-returning core of the smallest kind: [`aggregate`] takes the
//! aggregating role and every cached ClusterRole and answers the rules to
//! write, or nothing when the role already holds them. The merge is
//! upstream's, in its order: selector by selector, the roles it selects by
//! name (the aggregating role itself skipped), each role's rules in their
//! order, a rule appended only when no rule already gathered equals it. So
//! a rule two roles share appears once, where the first of them puts it.
//!
//! Rules are compared as upstream's `equality.Semantic` compares them: a
//! missing list equals an empty one. Which roles to sync on a change (every
//! aggregating role, on any ClusterRole event: the dependency graph is not
//! kept) is [`aggregating`].

use std::sync::Arc;

use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule};

use crate::common::selector::{self, Selector};

/// The field manager of the controller's apply (upstream's).
pub const FIELD_MANAGER: &str = "clusterrole-aggregation-controller";

/// The rules `role` must hold, when they differ from its current ones;
/// `None` when it has no `aggregationRule` or already holds them.
///
/// # Errors
/// A selector cannot be evaluated (the key is retried, as upstream's).
pub fn aggregate(role: &ClusterRole, roles: &[Arc<ClusterRole>]) -> Result<Option<Vec<PolicyRule>>, selector::Error> {
    let Some(rule) = role.aggregation_rule.as_ref() else { return Ok(None) };
    let mut sorted: Vec<&ClusterRole> = roles.iter().map(AsRef::as_ref).collect();
    sorted.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let mut gathered: Vec<PolicyRule> = Vec::new();
    for selector in rule.cluster_role_selectors.iter().flatten() {
        let selector = Selector::new(Some(selector))?;
        let selected = sorted
            .iter()
            .filter(|other| other.metadata.name != role.metadata.name)
            .filter(|other| selector.matches(&other.metadata.labels));
        for other in selected {
            for candidate in other.rules.iter().flatten() {
                if !gathered.iter().any(|r| same_rule(r, candidate)) {
                    gathered.push(candidate.clone());
                }
            }
        }
    }
    let current = role.rules.as_deref().unwrap_or_default();
    let unchanged = current.len() == gathered.len() && current.iter().zip(&gathered).all(|(a, b)| same_rule(a, b));
    Ok((!unchanged).then_some(gathered))
}

/// Whether `role` is one the controller syncs (it has an `aggregationRule`).
pub fn aggregating(role: &ClusterRole) -> bool {
    role.aggregation_rule.is_some()
}

/// Upstream's semantic equality of two rules: field by field, a missing
/// list equal to an empty one.
fn same_rule(a: &PolicyRule, b: &PolicyRule) -> bool {
    fn list(l: &Option<Vec<String>>) -> &[String] {
        l.as_deref().unwrap_or_default()
    }
    a.verbs == b.verbs
        && list(&a.api_groups) == list(&b.api_groups)
        && list(&a.resources) == list(&b.resources)
        && list(&a.resource_names) == list(&b.resource_names)
        && list(&a.non_resource_urls) == list(&b.non_resource_urls)
}

#[cfg(test)]
mod tests {
    //! Upstream's `TestSyncClusterRole`, with its case names and its roles
    //! (hammer, chisel and saw rules; the aggregating role `combined`).

    use std::collections::BTreeMap;

    use k8s_openapi::api::rbac::v1::AggregationRule;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

    use super::*;

    // === utils ===

    fn rule(verb: &str, resource: &str) -> PolicyRule {
        PolicyRule { verbs: vec![verb.into()], resources: Some(vec![resource.into()]), ..PolicyRule::default() }
    }

    fn hammer() -> Vec<PolicyRule> {
        vec![rule("hammer", "nails"), rule("hammer", "wedges")]
    }

    fn chisel() -> Vec<PolicyRule> {
        vec![rule("chisel", "mortises")]
    }

    fn saw() -> Vec<PolicyRule> {
        vec![rule("saw", "boards")]
    }

    fn role(name: &str, foo: &str, rules: Vec<PolicyRule>) -> Arc<ClusterRole> {
        Arc::new(ClusterRole {
            metadata: ObjectMeta {
                name: Some(name.into()),
                labels: Some(BTreeMap::from([("foo".to_owned(), foo.to_owned())])),
                ..ObjectMeta::default()
            },
            rules: Some(rules),
            aggregation_rule: None,
        })
    }

    /// `combined`, selecting `foo=<each of foos>`, holding `rules`.
    fn combined(foos: &[&str], rules: Vec<PolicyRule>) -> Arc<ClusterRole> {
        let selectors = foos
            .iter()
            .map(|foo| LabelSelector {
                match_labels: Some(BTreeMap::from([("foo".to_owned(), (*foo).to_owned())])),
                ..LabelSelector::default()
            })
            .collect();
        Arc::new(ClusterRole {
            metadata: ObjectMeta { name: Some("combined".into()), ..ObjectMeta::default() },
            rules: Some(rules),
            aggregation_rule: Some(AggregationRule { cluster_role_selectors: Some(selectors) }),
        })
    }

    /// What a sync of `combined` (the last of `roles`) writes.
    fn synced(roles: &[Arc<ClusterRole>]) -> Option<Vec<PolicyRule>> {
        let target = roles.last().expect("combined");
        aggregate(target, roles).expect("valid selectors")
    }

    // === tests ===

    #[test]
    fn remove_dead_rules() {
        let roles = [role("hammer", "bar", hammer()), combined(&["bar"], saw())];
        assert_eq!(synced(&roles), Some(hammer()));
    }

    #[test]
    fn strip_rules() {
        let roles = [role("hammer", "not-bar", hammer()), combined(&["bar"], hammer())];
        assert_eq!(synced(&roles), Some(vec![]));
    }

    #[test]
    fn select_properly_and_put_in_order() {
        let roles = [
            role("hammer", "bar", hammer()),
            role("chisel", "bar", chisel()),
            role("saw", "not-bar", saw()),
            combined(&["bar"], vec![]),
        ];
        assert_eq!(synced(&roles), Some([chisel(), hammer()].concat()));
    }

    #[test]
    fn select_properly_with_multiple_selectors() {
        let roles = [
            role("hammer", "bar", hammer()),
            role("chisel", "bar", chisel()),
            role("saw", "not-bar", saw()),
            combined(&["bar", "not-bar"], vec![]),
        ];
        assert_eq!(synced(&roles), Some([chisel(), hammer(), saw()].concat()));
    }

    #[test]
    fn select_properly_remove_duplicates() {
        let roles = [
            role("hammer", "bar", hammer()),
            role("chisel", "bar", chisel()),
            role("saw", "bar", saw()),
            role("other-saw", "not-bar", saw()),
            combined(&["bar", "not-bar"], vec![]),
        ];
        assert_eq!(synced(&roles), Some([chisel(), hammer(), saw()].concat()));
    }

    #[test]
    fn no_diff_skip() {
        let roles = [role("hammer", "bar", hammer()), combined(&["bar"], hammer())];
        assert_eq!(synced(&roles), None);
    }

    #[test]
    fn a_role_without_an_aggregation_rule_is_left_alone() {
        let roles = [role("hammer", "bar", hammer()), role("plain", "bar", vec![])];
        assert_eq!(synced(&roles), None);
        assert!(!aggregating(&roles[1]) && aggregating(&combined(&["bar"], vec![])));
    }

    #[test]
    fn a_missing_list_equals_an_empty_one() {
        let mut with_empty = rule("get", "pods");
        with_empty.api_groups = Some(vec![]);
        let roles = [role("pods", "bar", vec![rule("get", "pods")]), combined(&["bar"], vec![with_empty])];
        assert_eq!(synced(&roles), None);
    }

    #[test]
    fn a_role_selecting_itself_skips_its_own_rules() {
        let mut own = (*combined(&["bar"], saw())).clone();
        own.metadata.labels = Some(BTreeMap::from([("foo".to_owned(), "bar".to_owned())]));
        let roles = [role("hammer", "bar", hammer()), Arc::new(own)];
        assert_eq!(synced(&roles), Some(hammer()));
    }
}
