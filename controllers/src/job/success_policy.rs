//! An Indexed Job's succeeded indexes against its `spec.successPolicy`
//! (upstream `success_policy.go`, `matchSuccessPolicy`).
//!
//! The rules are tried in order; the first met declares the Job
//! successful (condition `SuccessCriteriaMet`, then `Complete`, reason
//! `SuccessPolicy`, message `Matched rules at index <i>`):
//! - `succeededIndexes` alone: every index it lists succeeded;
//! - `succeededIndexes` with `succeededCount`: at least that many of the
//!   listed indexes succeeded;
//! - `succeededCount` alone: at least that many indexes succeeded.
//!
//! Example: succeeded `0-2,4-7`; the rule `{succeededIndexes: "3-6",
//! succeededCount: 2}` is met (4, 5 and 6 succeeded), `{succeededIndexes:
//! "3-6"}` is not (3 did not). A rule whose `succeededIndexes` lists no
//! index below `completions` (or does not parse) is skipped.

use k8s_openapi::api::batch::v1::SuccessPolicy;

use super::intervals::OrderedIntervals;

/// The message of the conditions a met rule at `index` gives the Job,
/// `None` when no rule is met (upstream `matchSuccessPolicy`).
pub fn match_success_policy(
    policy: Option<&SuccessPolicy>,
    completions: i32,
    succeeded: &OrderedIntervals,
) -> Option<String> {
    let policy = policy?;
    if succeeded.is_empty() {
        return None;
    }
    policy.rules.iter().enumerate().find_map(|(index, rule)| {
        let met = match (&rule.succeeded_indexes, rule.succeeded_count) {
            (Some(listed), count) => {
                let required = OrderedIntervals::parse(listed, completions);
                !required.is_empty() && succeeded_indexes_rule_met(&required, succeeded, count)
            }
            (None, Some(count)) => succeeded.total() >= count,
            (None, None) => false,
        };
        met.then(|| format!("Matched rules at index {index}"))
    })
}

/// Whether the `required` indexes all succeeded or, with `count`, at
/// least `count` of them did (upstream `matchSucceededIndexesRule`).
fn succeeded_indexes_rule_met(required: &OrderedIntervals, succeeded: &OrderedIntervals, count: Option<i32>) -> bool {
    let (mut r, mut s) = (0, 0);
    let mut contained = 0;
    while let (Some(rule), Some(done)) = (required.0.get(r), succeeded.0.get(s)) {
        contained += (rule.last.min(done.last) - rule.first.max(done.first) + 1).max(0);
        if done.last <= rule.last {
            s += 1;
        }
        if rule.last <= done.last {
            r += 1;
        }
    }
    contained == required.total() || count.is_some_and(|count| contained >= count)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::batch::v1::SuccessPolicyRule;

    use super::*;
    use crate::job::intervals::Interval;

    fn ivs(pairs: &[(i32, i32)]) -> OrderedIntervals {
        OrderedIntervals(pairs.iter().map(|&(first, last)| Interval { first, last }).collect())
    }

    fn rule(indexes: Option<&str>, count: Option<i32>) -> SuccessPolicyRule {
        SuccessPolicyRule { succeeded_indexes: indexes.map(str::to_owned), succeeded_count: count }
    }

    fn policy(rules: Vec<SuccessPolicyRule>) -> Option<SuccessPolicy> {
        Some(SuccessPolicy { rules })
    }

    /// Upstream `TestMatchSuccessPolicy` (`JobSuccessPolicy` is GA: its
    /// "disabled" cases hold with the gate on, as they have no policy or
    /// no succeeded index).
    #[test]
    fn match_success_policy_table() {
        let at_0 = Some("Matched rules at index 0");
        let one = |i: &str, c: Option<i32>| policy(vec![rule(Some(i), c)]);
        /// Name, policy, succeeded indexes, wanted message.
        type Case = (&'static str, Option<SuccessPolicy>, Vec<(i32, i32)>, Option<&'static str>);
        let cases: Vec<Case> = vec![
            ("JobSuccessPolicy is disabled", None, vec![(0, 0)], None),
            ("successPolicy is null", None, vec![(0, 0)], None),
            ("any rules are nothing", policy(vec![]), vec![(0, 0)], None),
            ("rules.succeededIndexes is invalid format", one("invalid-form", None), vec![(0, 0)], None),
            (
                "rules.succeededIndexes is specified; succeededIndexes matched rules",
                one("0-2", None),
                vec![(0, 2), (4, 7)],
                at_0,
            ),
            (
                "rules.succeededIndexes is specified; succeededIndexes didn't match rules",
                one("3", None),
                vec![(0, 2)],
                None,
            ),
            (
                "rules.succeededCount is specified; succeededIndexes matched rules",
                policy(vec![rule(None, Some(2))]),
                vec![(0, 2)],
                at_0,
            ),
            (
                "rules.succeededCount is specified; succeededIndexes didn't match rules",
                policy(vec![rule(None, Some(4))]),
                vec![(0, 2)],
                None,
            ),
            (
                "multiple rules; rules.succeededIndexes is specified; succeededIndexes met one of rules",
                policy(vec![rule(Some("9"), None), rule(Some("4,6"), None)]),
                vec![(0, 2), (4, 7)],
                Some("Matched rules at index 1"),
            ),
            (
                "multiple rules; rules.succeededIndexes is specified; succeededIndexes met all rules",
                policy(vec![rule(Some("0,1"), None), rule(Some("5"), None)]),
                vec![(0, 2), (4, 7)],
                at_0,
            ),
            (
                "rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes met all rules",
                one("3-6", Some(2)),
                vec![(0, 2), (4, 7)],
                at_0,
            ),
            (
                "rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes didn't match rules",
                one("3-6", Some(2)),
                vec![(0, 2), (6, 7)],
                None,
            ),
            (
                "rules.succeededIndexes is specified; succeededIndexes are nothing",
                policy(vec![rule(None, Some(4))]),
                vec![],
                None,
            ),
            (
                "rules.succeededIndexes is specified; succeededIndexes matched rules; rules is proper subset of succeededIndexes",
                one("2-4,6-8", None),
                vec![(1, 5), (6, 9)],
                at_0,
            ),
            (
                "rules.succeededIndexes is specified; succeededIndexes matched rules; rules equals succeededIndexes",
                one("2-4,6-9", None),
                vec![(2, 4), (6, 9)],
                at_0,
            ),
            (
                "rules.succeededIndexes is specified; succeededIndexes matched rules; rules is subset of succeededIndexes",
                one("2-4,8-12", None),
                vec![(2, 5), (7, 15)],
                at_0,
            ),
            (
                "rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules is an empty set",
                one("", None),
                vec![(1, 3)],
                None,
            ),
            (
                "rules.succeededIndexes is specified; succeededIndexes didn't match rules; succeededIndexes is an empty set",
                one("", None),
                vec![],
                None,
            ),
            (
                "rules.succeededIndexes is specified; succeededIndexes didn't match rules; all elements of rules.succeededIndexes aren't included in succeededIndexes",
                one("10-12,14-16", None),
                vec![(1, 3), (5, 7)],
                None,
            ),
            (
                "rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules overlaps succeededIndexes at first",
                one("1-3,5-7", None),
                vec![(2, 4), (6, 8)],
                None,
            ),
            (
                "rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; rules overlaps succeededIndexes at first",
                one("1-3,5-7", Some(4)),
                vec![(2, 4), (6, 8)],
                at_0,
            ),
            (
                "rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules overlaps succeededIndexes at last",
                one("2-4,6-9", None),
                vec![(1, 3), (5, 7)],
                None,
            ),
            (
                "rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; rules overlaps succeededIndexes at last",
                one("2-4,6-9", Some(4)),
                vec![(1, 3), (5, 7)],
                at_0,
            ),
            (
                "rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules completely overlaps succeededIndexes",
                one("0-4,6-9", None),
                vec![(1, 3), (7, 8)],
                None,
            ),
            (
                "rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; rules completely overlaps succeededIndexes",
                one("0-4,6-9", Some(5)),
                vec![(1, 3), (7, 8)],
                at_0,
            ),
            (
                "rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules overlaps multiple succeededIndexes at last",
                one("0-6,8-9", None),
                vec![(1, 3), (5, 9)],
                None,
            ),
            (
                "rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; rules overlaps multiple succeededIndexes at last",
                one("0-6,8-9", Some(7)),
                vec![(1, 3), (5, 9)],
                at_0,
            ),
            (
                "rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules overlaps succeededIndexes at first, and rules equals succeededIndexes at last",
                one("0-5,7-9", None),
                vec![(1, 5), (7, 10)],
                None,
            ),
            (
                "rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; rules overlaps succeededIndexes at first, and rules equals succeededIndexes at last",
                one("0-5,7-9", Some(8)),
                vec![(1, 5), (7, 10)],
                at_0,
            ),
            (
                "rules.succeededIndexes is specified; succeededIndexes didn't match rules; the first rules overlaps succeededIndexes at first",
                one("0-3,6-9", None),
                vec![(1, 10)],
                None,
            ),
            (
                "rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; the first rules overlaps succeededIndexes at first",
                one("0-3,6-9", Some(7)),
                vec![(1, 10)],
                at_0,
            ),
        ];
        for (name, policy, succeeded, want) in cases {
            let got = match_success_policy(policy.as_ref(), 10, &ivs(&succeeded));
            assert_eq!(got.as_deref(), want, "{name}");
        }
    }
}
