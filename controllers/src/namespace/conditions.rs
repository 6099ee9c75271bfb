//! The five deletion conditions (upstream `status_condition_utils.go`):
//! their types and reasons, what a pass's report makes of them, and the
//! merge that writes them only when they change.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::NamespaceCondition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::remaining::DeletionReport;

/// Condition types, in upstream's order.
pub mod condition_type {
    /// Some API groups could not be discovered.
    pub const DISCOVERY_FAILURE: &str = "NamespaceDeletionDiscoveryFailure";
    /// Some discovered group versions could not be parsed.
    pub const GROUP_VERSION_PARSING_FAILURE: &str = "NamespaceDeletionGroupVersionParsingFailure";
    /// Deleting some resource types failed.
    pub const CONTENT_FAILURE: &str = "NamespaceDeletionContentFailure";
    /// Objects remain in the namespace.
    pub const CONTENT_REMAINING: &str = "NamespaceContentRemaining";
    /// Objects in the namespace still carry finalizers.
    pub const FINALIZERS_REMAINING: &str = "NamespaceFinalizersRemaining";
}

/// Condition reasons, as upstream spells them.
pub mod reason {
    /// Discovery failed for some groups.
    pub const DISCOVERY_FAILED: &str = "DiscoveryFailed";
    /// Every group was discovered.
    pub const RESOURCES_DISCOVERED: &str = "ResourcesDiscovered";
    /// Some group versions did not parse.
    pub const GROUP_VERSION_PARSING_FAILED: &str = "GroupVersionParsingFailed";
    /// Every group version parsed.
    pub const PARSED_GROUP_VERSIONS: &str = "ParsedGroupVersions";
    /// Some types could not be deleted.
    pub const CONTENT_DELETION_FAILED: &str = "ContentDeletionFailed";
    /// Every type's delete succeeded.
    pub const CONTENT_DELETED: &str = "ContentDeleted";
    /// Objects remain.
    pub const SOME_RESOURCES_REMAIN: &str = "SomeResourcesRemain";
    /// Nothing remains.
    pub const CONTENT_REMOVED: &str = "ContentRemoved";
    /// Remaining objects have finalizers.
    pub const SOME_FINALIZERS_REMAIN: &str = "SomeFinalizersRemain";
    /// No remaining object has finalizers.
    pub const CONTENT_HAS_NO_FINALIZERS: &str = "ContentHasNoFinalizers";
}

/// A condition before timestamps: type, whether it is failing, reason and
/// message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    /// Condition type.
    pub type_: &'static str,
    /// `True` when failing.
    pub failing: bool,
    /// Reason.
    pub reason: &'static str,
    /// Message.
    pub message: String,
}

fn condition(type_: &'static str, failure: Option<(&'static str, String)>, healthy: (&'static str, &str)) -> Condition {
    match failure {
        Some((reason, message)) => Condition { type_, failing: true, reason, message },
        None => Condition { type_, failing: false, reason: healthy.0, message: healthy.1.to_owned() },
    }
}

/// The five deletion conditions for `report`, in upstream's order.
pub fn conditions(report: &DeletionReport) -> Vec<Condition> {
    use condition_type as t;
    let discovery = (!report.discovery_failures.is_empty()).then(|| {
        (
            reason::DISCOVERY_FAILED,
            format!(
                "Discovery failed for some groups, {} failing: {}",
                report.discovery_failures.len(),
                report.discovery_error()
            ),
        )
    });
    let parsing = (!report.parse_failures.is_empty())
        .then(|| (reason::GROUP_VERSION_PARSING_FAILED, report.parse_failures.join(", ")));
    let content = (!report.content_failures.is_empty()).then(|| {
        let mut errs = report.content_failures.clone();
        errs.sort();
        (
            reason::CONTENT_DELETION_FAILED,
            format!("Failed to delete all resource types, {} remaining: {}", errs.len(), errs.join(", ")),
        )
    });
    let remaining = (!report.remaining.is_empty()).then(|| {
        let parts: Vec<String> =
            report.remaining.iter().map(|(gr, n)| format!("{gr} has {n} resource instances")).collect();
        (reason::SOME_RESOURCES_REMAIN, format!("Some resources are remaining: {}", parts.join(", ")))
    });
    let finalizers = (!report.finalizers.is_empty()).then(|| {
        let parts: Vec<String> =
            report.finalizers.iter().map(|(f, n)| format!("{f} in {n} resource instances")).collect();
        (
            reason::SOME_FINALIZERS_REMAIN,
            format!("Some content in the namespace has finalizers remaining: {}", parts.join(", ")),
        )
    });
    vec![
        condition(
            t::DISCOVERY_FAILURE,
            discovery,
            (reason::RESOURCES_DISCOVERED, "All resources successfully discovered"),
        ),
        condition(
            t::GROUP_VERSION_PARSING_FAILURE,
            parsing,
            (reason::PARSED_GROUP_VERSIONS, "All legacy kube types successfully parsed"),
        ),
        condition(
            t::CONTENT_FAILURE,
            content,
            (reason::CONTENT_DELETED, "All content successfully deleted, may be waiting on finalization"),
        ),
        condition(t::CONTENT_REMAINING, remaining, (reason::CONTENT_REMOVED, "All content successfully removed")),
        condition(
            t::FINALIZERS_REMAINING,
            finalizers,
            (reason::CONTENT_HAS_NO_FINALIZERS, "All content-preserving finalizers finished"),
        ),
    ]
}

/// Merges `wanted` into the namespace's `existing` conditions (upstream
/// `updateConditions`): a new type is added; a status flip replaces the
/// condition and moves `lastTransitionTime` to `now`; a new reason or
/// message keeps the transition time. Returns `None` when nothing changed,
/// so the status is written only on a change.
pub fn merge_conditions(
    existing: &[NamespaceCondition],
    wanted: &[Condition],
    now: Timestamp,
) -> Option<Vec<NamespaceCondition>> {
    let mut merged = existing.to_vec();
    let mut changed = false;
    for w in wanted {
        let status = if w.failing { "True" } else { "False" };
        let fresh = NamespaceCondition {
            type_: w.type_.to_owned(),
            status: status.to_owned(),
            reason: Some(w.reason.to_owned()),
            message: Some(w.message.clone()),
            last_transition_time: Some(Time(now)),
        };
        match merged.iter_mut().find(|c| c.type_ == w.type_) {
            None => {
                merged.push(fresh);
                changed = true;
            }
            Some(old) if old.status != status => {
                *old = fresh;
                changed = true;
            }
            Some(old) => {
                if old.reason.as_deref() != Some(w.reason) || old.message.as_deref() != Some(w.message.as_str()) {
                    old.reason = fresh.reason;
                    old.message = fresh.message;
                    changed = true;
                }
            }
        }
    }
    changed.then_some(merged)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::namespace::testing::{gvr, ts};
    use crate::namespace::{NextStep, Remaining, next_step, remaining_outcome};

    // === utils ===

    fn find<'a>(cs: &'a [Condition], t: &str) -> &'a Condition {
        cs.iter().find(|c| c.type_ == t).expect("condition present")
    }

    // === tests ===

    #[test]
    fn a_clean_pass_has_five_healthy_conditions_and_finalizes() {
        let report = DeletionReport::default();
        let cs = conditions(&report);
        let want = [
            (condition_type::DISCOVERY_FAILURE, "ResourcesDiscovered", "All resources successfully discovered"),
            (
                condition_type::GROUP_VERSION_PARSING_FAILURE,
                "ParsedGroupVersions",
                "All legacy kube types successfully parsed",
            ),
            (
                condition_type::CONTENT_FAILURE,
                "ContentDeleted",
                "All content successfully deleted, may be waiting on finalization",
            ),
            (condition_type::CONTENT_REMAINING, "ContentRemoved", "All content successfully removed"),
            (
                condition_type::FINALIZERS_REMAINING,
                "ContentHasNoFinalizers",
                "All content-preserving finalizers finished",
            ),
        ];
        assert_eq!(cs.len(), 5);
        for (c, (t, reason, message)) in cs.iter().zip(want) {
            assert_eq!((c.type_, c.failing, c.reason, c.message.as_str()), (t, false, reason, message));
        }
        assert_eq!(next_step(&report), NextStep::Finalize);
    }

    #[test]
    fn remaining_pods_name_their_count_and_requeue_after_half_the_estimate() {
        let mut report = DeletionReport::default();
        report.record(&gvr("", "pods"), Ok(Remaining { estimate: 30, count: 2, ..Default::default() }));
        let cs = conditions(&report);
        let c = find(&cs, condition_type::CONTENT_REMAINING);
        assert!(c.failing);
        assert_eq!(c.reason, "SomeResourcesRemain");
        assert_eq!(c.message, "Some resources are remaining: pods. has 2 resource instances");
        assert_eq!(next_step(&report), NextStep::Requeue(Duration::from_secs(16)));
    }

    #[test]
    fn finalizers_are_tallied_and_named() {
        let mut report = DeletionReport::default();
        let held = remaining_outcome("ns", &gvr("example.com", "widgets"), &[vec!["example.com/x".to_owned()]], 0);
        report.record(&gvr("example.com", "widgets"), held);
        let cs = conditions(&report);
        let c = find(&cs, condition_type::FINALIZERS_REMAINING);
        assert_eq!((c.failing, c.reason), (true, "SomeFinalizersRemain"));
        assert_eq!(
            c.message,
            "Some content in the namespace has finalizers remaining: example.com/x in 1 resource instances"
        );
        assert_eq!(
            find(&cs, condition_type::CONTENT_REMAINING).message,
            "Some resources are remaining: widgets.example.com has 1 resource instances"
        );
        assert_eq!(next_step(&report), NextStep::Requeue(Duration::from_secs(8)));
    }

    #[test]
    fn failures_show_in_their_conditions_and_fail_the_sync() {
        let mut report = DeletionReport::default();
        report.discovery_failures.insert("broken.example.com/v1".into(), "503 Service Unavailable".into());
        report.parse_failures.push("unexpected GroupVersion string: a/b/c".into());
        report.record(&gvr("", "secrets"), Err("b failed".into()));
        report.record(&gvr("", "configmaps"), Err("a failed".into()));
        let cs = conditions(&report);
        let d = find(&cs, condition_type::DISCOVERY_FAILURE);
        assert_eq!((d.failing, d.reason), (true, "DiscoveryFailed"));
        assert_eq!(
            d.message,
            "Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: \
         broken.example.com/v1: 503 Service Unavailable"
        );
        let p = find(&cs, condition_type::GROUP_VERSION_PARSING_FAILURE);
        assert_eq!(
            (p.failing, p.reason, p.message.as_str()),
            (true, "GroupVersionParsingFailed", "unexpected GroupVersion string: a/b/c")
        );
        let c = find(&cs, condition_type::CONTENT_FAILURE);
        assert_eq!((c.failing, c.reason), (true, "ContentDeletionFailed"));
        assert_eq!(c.message, "Failed to delete all resource types, 2 remaining: a failed, b failed");
        assert!(matches!(next_step(&report), NextStep::Fail(_)));
    }

    #[test]
    fn conditions_are_written_only_when_they_change() {
        let t0 = ts("2026-01-01T00:00:00Z");
        let t1 = ts("2026-01-01T00:01:00Z");
        let healthy = conditions(&DeletionReport::default());
        let first = merge_conditions(&[], &healthy, t0).expect("added");
        assert_eq!(first.len(), 5);
        assert_eq!(merge_conditions(&first, &healthy, t1), None, "unchanged: no write");

        let mut report = DeletionReport::default();
        report.remaining.insert("pods.".into(), 2);
        let flipped = merge_conditions(&first, &conditions(&report), t1).expect("flipped");
        let c = flipped.iter().find(|c| c.type_ == condition_type::CONTENT_REMAINING).expect("present");
        assert_eq!((c.status.as_str(), c.last_transition_time.as_ref().map(|t| t.0)), ("True", Some(t1)));

        report.remaining.insert("pods.".into(), 1);
        let reworded = merge_conditions(&flipped, &conditions(&report), ts("2026-01-01T00:02:00Z")).expect("reworded");
        let c = reworded.iter().find(|c| c.type_ == condition_type::CONTENT_REMAINING).expect("present");
        assert_eq!(c.message.as_deref(), Some("Some resources are remaining: pods. has 1 resource instances"));
        assert_eq!(c.last_transition_time.as_ref().map(|t| t.0), Some(t1), "same status: transition time kept");
    }
}
