//! The Namespace controller's decisions (upstream
//! `pkg/controller/namespace/deletion/namespaced_resources_deleter.go` and
//! `status_condition_utils.go`), without I/O.
//!
//! The driver (`kcm-rs` `drivers::namespace`) discovers the namespaced
//! resource types, deletes their content and lists what is left; this
//! module decides from those observations:
//! - which discovered types can be deleted ([`deletable`]) and how
//!   ([`supports_delete_collection`]), parsing group versions
//!   ([`parse_group_version`]);
//! - how long pods still need to terminate ([`estimate_graceful_termination`]);
//! - what one type's leftovers mean ([`remaining_outcome`]);
//! - the five deletion conditions, written only when they change
//!   ([`conditions`], [`merge_conditions`]);
//! - what to do next: fail, requeue after half the estimate, or finalize
//!   ([`next_step`], [`finalized`]).

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::NamespaceCondition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

/// The finalizer token this controller owns (`v1.FinalizerKubernetes`).
pub const FINALIZER_KUBERNETES: &str = "kubernetes";

/// How long after a namespace is seen being deleted it is first synced
/// (upstream `namespaceDeletionGracePeriod`: lets HA API servers catch up).
pub const DELETION_GRACE_PERIOD: Duration = Duration::from_secs(5);

/// The estimate, in seconds, for content held only by finalizers
/// (upstream `finalizerEstimateSeconds`).
pub const FINALIZER_ESTIMATE_SECONDS: u64 = 15;

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

/// A namespaced resource type to empty: group, version and plural.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[doc(alias = "GroupVersionResource")]
pub struct Gvr {
    /// API group; empty for the core group.
    pub group: String,
    /// Version.
    pub version: String,
    /// Plural resource name.
    pub resource: String,
}

impl Gvr {
    /// `resource.group` as upstream's remaining-content messages spell it
    /// (`pods.` for the core group).
    pub fn group_resource(&self) -> String {
        format!("{}.{}", self.resource, self.group)
    }

    /// Whether this is core `pods`, the only type with a graceful
    /// termination estimate.
    pub fn is_pods(&self) -> bool {
        self.group.is_empty() && self.resource == "pods"
    }
}

impl fmt::Display for Gvr {
    /// Go's `GroupVersionResource.String()`: `apps/v1, Resource=deployments`,
    /// `/v1, Resource=pods` for the core group.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}, Resource={}", self.group, self.version, self.resource)
    }
}

/// Splits a discovery `groupVersion` (`v1`, `apps/v1`) into group and
/// version, as Go's `schema.ParseGroupVersion`.
///
/// # Errors
/// `unexpected GroupVersion string: <s>` for more than one `/`.
pub fn parse_group_version(gv: &str) -> Result<(String, String), String> {
    if gv.is_empty() || gv == "/" {
        return Ok((String::new(), String::new()));
    }
    match gv.split('/').collect::<Vec<_>>().as_slice() {
        [version] => Ok((String::new(), (*version).to_owned())),
        [group, version] => Ok(((*group).to_owned(), (*version).to_owned())),
        _ => Err(format!("unexpected GroupVersion string: {gv}")),
    }
}

/// Whether a discovered resource is content this controller deletes: a
/// namespaced top-level resource (not a subresource) with the `delete` verb.
pub fn deletable(name: &str, namespaced: bool, verbs: &[String]) -> bool {
    namespaced && !name.contains('/') && verbs.iter().any(|v| v == "delete")
}

/// Whether the type can be emptied with one `deletecollection` (upstream
/// marks types lacking `list` or `deletecollection` unsupported).
pub fn supports_delete_collection(verbs: &[String]) -> bool {
    ["list", "deletecollection"].iter().all(|needed| verbs.iter().any(|v| v == needed))
}

/// What the estimate needs of one pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodGrace {
    /// `status.phase`.
    pub phase: Option<String>,
    /// `spec.terminationGracePeriodSeconds`.
    pub grace_seconds: Option<i64>,
}

/// How many seconds the namespace's pods may still need to terminate
/// (upstream `estimateGracefulTerminationForPods`): the longest grace
/// period of pods not yet Succeeded or Failed, or zero once that long has
/// passed since the namespace's `deletionTimestamp`.
///
/// Example: pods with 30 s and 10 s grace, the namespace deleted 12 s
/// ago: 30. Deleted 31 s ago: 0 (whatever is left then is unexpected).
pub fn estimate_graceful_termination(pods: &[PodGrace], deleted_at: Option<Timestamp>, now: Timestamp) -> u64 {
    let estimate = pods
        .iter()
        .filter(|p| !matches!(p.phase.as_deref(), Some("Succeeded" | "Failed")))
        .filter_map(|p| p.grace_seconds)
        .map(|g| u64::try_from(g).unwrap_or(0))
        .max()
        .unwrap_or(0);
    let Some(deleted_at) = deleted_at else { return estimate };
    let elapsed = now.duration_since(deleted_at).as_secs().max(0).unsigned_abs();
    if elapsed >= estimate { 0 } else { estimate }
}

/// One type's leftovers after its delete, from the re-list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Remaining {
    /// Seconds to wait before looking again; 0 when nothing remains.
    pub estimate: u64,
    /// Objects still listed.
    pub count: usize,
    /// Finalizer -> objects carrying it.
    pub finalizers: BTreeMap<String, usize>,
}

/// Judges what is left of `gvr` in `namespace` after its delete
/// (upstream `deleteAllContentForGroupVersionResource`, after the
/// re-list): each item is given by its finalizers; `estimate` is the pod
/// estimate (0 for other types).
///
/// # Errors
/// Objects remain with no estimate and no finalizers:
/// `unexpected items still remain in namespace: <ns> for gvr: <gvr>`.
pub fn remaining_outcome(
    namespace: &str,
    gvr: &Gvr,
    items: &[Vec<String>],
    estimate: u64,
) -> Result<Remaining, String> {
    if items.is_empty() {
        return Ok(Remaining::default());
    }
    let mut finalizers = BTreeMap::new();
    for item in items {
        for f in item {
            *finalizers.entry(f.clone()).or_insert(0) += 1;
        }
    }
    let remaining = Remaining { estimate, count: items.len(), finalizers };
    if estimate > 0 {
        return Ok(remaining);
    }
    if !remaining.finalizers.is_empty() {
        return Ok(Remaining { estimate: FINALIZER_ESTIMATE_SECONDS, ..remaining });
    }
    Err(format!("unexpected items still remain in namespace: {namespace} for gvr: {gvr}"))
}

/// Everything one pass over the namespace's content observed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeletionReport {
    /// Groups whose discovery failed: `group/version` -> error.
    pub discovery_failures: BTreeMap<String, String>,
    /// Group versions that did not parse.
    pub parse_failures: Vec<String>,
    /// Per-type deletion errors.
    pub content_failures: Vec<String>,
    /// `resource.group` -> objects remaining.
    pub remaining: BTreeMap<String, usize>,
    /// Finalizer -> remaining objects carrying it.
    pub finalizers: BTreeMap<String, usize>,
    /// Seconds until content may be gone (the max over types).
    pub estimate: u64,
}

impl DeletionReport {
    /// Folds one type's outcome in.
    pub fn record(&mut self, gvr: &Gvr, outcome: Result<Remaining, String>) {
        match outcome {
            Ok(r) => {
                self.estimate = self.estimate.max(r.estimate);
                if r.count > 0 {
                    *self.remaining.entry(gvr.group_resource()).or_insert(0) += r.count;
                }
                for (f, n) in r.finalizers {
                    *self.finalizers.entry(f).or_insert(0) += n;
                }
            }
            Err(e) => self.content_failures.push(e),
        }
    }

    /// The discovery error as upstream's `ErrGroupDiscoveryFailed` prints it.
    fn discovery_error(&self) -> String {
        let groups: Vec<String> = self.discovery_failures.iter().map(|(gv, e)| format!("{gv}: {e}")).collect();
        format!("unable to retrieve the complete list of server APIs: {}", groups.join(", "))
    }

    /// Every error of the pass, for the sync's result.
    pub fn errors(&self) -> Vec<String> {
        let mut errors = Vec::new();
        if !self.discovery_failures.is_empty() {
            errors.push(self.discovery_error());
        }
        errors.extend(self.parse_failures.iter().cloned());
        errors.extend(self.content_failures.iter().cloned());
        errors
    }
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

/// What a sync does after deleting content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NextStep {
    /// Some step failed: retry with backoff (the message is the sync's
    /// error, upstream's aggregate).
    Fail(String),
    /// Content is still terminating: look again after this long
    /// (upstream `ResourcesRemainingError`: estimate / 2 + 1 seconds).
    Requeue(Duration),
    /// Nothing remains: remove the `kubernetes` finalizer.
    Finalize,
}

/// Decides the step after a pass (upstream `Delete` after
/// `deleteAllContent`): errors first, then a remaining estimate, else
/// finalize. Content is never finalized away while anything is left.
///
/// Example: a 30 s pod estimate requeues after 16 s.
pub fn next_step(report: &DeletionReport) -> NextStep {
    let errors = report.errors();
    if !errors.is_empty() {
        return NextStep::Fail(errors.join(", "));
    }
    if report.estimate > 0 {
        return NextStep::Requeue(Duration::from_secs(report.estimate / 2 + 1));
    }
    if !report.remaining.is_empty() {
        // Unreachable through remaining_outcome (remaining content has an
        // estimate or is an error), kept as the invariant's guard.
        return NextStep::Fail("content remains in the namespace".into());
    }
    NextStep::Finalize
}

/// `spec.finalizers` after finalizing: the old set minus `kubernetes`,
/// sorted and deduplicated.
pub fn finalized(finalizers: &[String]) -> Vec<String> {
    let mut out: Vec<String> = finalizers.iter().filter(|f| *f != FINALIZER_KUBERNETES).cloned().collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests;
