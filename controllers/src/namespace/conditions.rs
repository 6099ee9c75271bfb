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
