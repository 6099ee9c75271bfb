//! The Job controller's own writes and bookkeeping ([`Write`], carried by
//! [`Action::Own`](crate::plan::Action::Own)), the counts its metrics take
//! once a write succeeded ([`Count`]), and its events in upstream's words.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use super::backoff::BackoffRecord;
use crate::plan::{Event, EventType, ObjectRef};

/// One write or piece of bookkeeping of a Job sync.
#[derive(Clone, Debug, PartialEq)]
pub enum Write {
    /// Write the Job's status subresource: the whole object is sent, at the
    /// cached resourceVersion, or at the one an earlier status write of the
    /// same plan returned (upstream `UpdateStatus`, no retry: a conflict
    /// fails the step and the key is retried).
    UpdateStatus {
        /// The Job with its new status.
        job: Box<Job>,
    },
    /// Adopt an orphan pod: patch in the Job's controller reference and the
    /// tracking finalizer, with the pod's uid as precondition (upstream
    /// `ClaimPods` with `batch.JobTrackingFinalizer`). Errors are those of
    /// [`OwnerRefPatch::Adopt`](crate::plan::OwnerRefPatch::Adopt): a pod
    /// gone makes the snapshot stale.
    AdoptPod {
        /// Namespace of the pod.
        namespace: String,
        /// Name of the pod.
        name: String,
        /// Uid of the pod.
        uid: String,
        /// The Job's controller reference.
        controller_ref: OwnerReference,
    },
    /// Release a pod that no longer matches: remove the Job's owner
    /// reference and the tracking finalizer in one patch, with the pod's
    /// uid as precondition (upstream `ReleasePod` of a ref manager holding
    /// `batch.JobTrackingFinalizer`). Errors are those of
    /// [`OwnerRefPatch::Release`](crate::plan::OwnerRefPatch::Release): a
    /// pod gone, or no longer referencing the Job, needs nothing more.
    ReleasePod {
        /// Namespace of the pod.
        namespace: String,
        /// Name of the pod.
        name: String,
        /// Uid of the pod.
        uid: String,
        /// Uid of the Job whose reference is removed.
        owner_uid: String,
    },
    /// Bookkeeping, no API call: the controller expects to see the tracking
    /// finalizer removed from these pods (upstream `expectFinalizersRemoved`).
    ExpectFinalizerRemovals {
        /// The Job's queue key.
        key: String,
        /// Uids of the pods.
        uids: Vec<String>,
    },
    /// Remove the tracking finalizer from a pod (a strategic merge patch
    /// that keeps its other finalizers). NotFound counts as done; any other
    /// refusal fails the step, and the sync then forgets the pod's
    /// finalizer expectation ([`Write::ForgetFinalizerRemovals`]).
    RemoveFinalizer {
        /// The Job's queue key.
        key: String,
        /// Namespace of the pod.
        namespace: String,
        /// Name of the pod.
        name: String,
        /// Uid of the pod.
        uid: String,
    },
    /// Remove the tracking finalizer (when the pod has it), then delete the
    /// pod (upstream `deleteJobPods`). Records `SuccessfulDelete` /
    /// `FailedDelete` as a pod delete does; NotFound counts as done; any
    /// failure lowers the deletion expectations for the pod. Its answer
    /// names the part that was refused (`removing completion finalizer:`
    /// for the patch).
    RemoveFinalizerAndDelete {
        /// Namespace of the pod.
        namespace: String,
        /// Name of the pod.
        name: String,
        /// Uid it had in the cache (the delete's precondition).
        uid: String,
        /// Whether the pod carries the tracking finalizer.
        has_finalizer: bool,
        /// The Job (events are recorded on it).
        job: ObjectRef,
    },
    /// Bookkeeping, no API call: the finalizer removals of these pods
    /// failed, so the controller no longer expects to see them (upstream
    /// `finalizerRemovalObserved` after a failed patch).
    ForgetFinalizerRemovals {
        /// The Job's queue key.
        key: String,
        /// Uids of the pods.
        uids: Vec<String>,
    },
    /// Bookkeeping, no API call: the pod-recreation backoff of the Job after
    /// the pods this sync counted (upstream `updateBackoffRecord`, done once
    /// the status holding them is written).
    RecordBackoff {
        /// The Job's queue key.
        key: String,
        /// The record.
        record: BackoffRecord,
    },
    /// Bookkeeping, no API call: the status write before it finished the
    /// Job, so its syncs wait until the cache shows it finished (upstream
    /// `finishedJobExpectations.Store`; see
    /// [`finished`](super::finished)).
    ExpectFinished {
        /// The Job's uid.
        uid: String,
    },
    /// A metric to count, the write before it having succeeded.
    Count(Count),
}

/// What the Job controller's metrics count (`job_controller_*`), as the
/// plan reaches it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Count {
    /// `job_pods_finished_total{completion_mode, result}` += `n`.
    PodsFinished {
        /// `NonIndexed` or `Indexed`.
        completion_mode: &'static str,
        /// `succeeded` or `failed`.
        result: &'static str,
        /// How many.
        n: u64,
    },
    /// `job_finished_indexes_total{status, backoffLimit}` += `n`.
    FinishedIndexes {
        /// `succeeded` or `failed`.
        status: &'static str,
        /// `perIndex` or `global`.
        backoff_limit: &'static str,
        /// How many.
        n: u64,
    },
    /// `pod_failures_handled_by_failure_policy_total{action}` += `n`.
    FailurePolicyAction {
        /// `FailJob`, `FailIndex`, `Ignore` or `Count`.
        action: String,
        /// How many.
        n: u64,
    },
    /// `job_pods_creation_total{reason, status}` += `n`: the pod creates
    /// answered so, counted once the sync's plan is over
    /// ([`SyncMachine`](super::SyncMachine)).
    PodsCreated {
        /// `new`, `recreate_terminating_or_failed` or `recreate_failed`.
        reason: &'static str,
        /// `succeeded` or `failed`.
        status: &'static str,
        /// How many.
        n: u64,
    },
    /// `jobs_finished_total{completion_mode, result, reason}` += 1.
    JobFinished {
        /// `NonIndexed` or `Indexed`.
        completion_mode: &'static str,
        /// `succeeded` or `failed`.
        result: &'static str,
        /// The failure reason, empty for a success.
        reason: String,
    },
}

/// The body of [`Write::AdoptPod`]: the adoption patch, with the tracking
/// finalizer merged into the pod's finalizers.
pub fn adopt_patch(controller_ref: &OwnerReference, pod_uid: &str) -> serde_json::Value {
    let mut body = crate::plan::OwnerRefPatch::Adopt(controller_ref.clone()).body(pod_uid);
    body["metadata"]["finalizers"] = serde_json::json!([super::pods::TRACKING_FINALIZER]);
    body
}

/// The body of [`Write::ReleasePod`]: the release patch, with the tracking
/// finalizer removed from the pod's finalizers (its others stay).
pub fn release_patch(owner_uid: &str, pod_uid: &str) -> serde_json::Value {
    let release = crate::plan::OwnerRefPatch::Release { owner_uid: owner_uid.to_owned() };
    let mut body = release.body(pod_uid);
    body["metadata"]["$deleteFromPrimitiveList/finalizers"] = serde_json::json!([super::pods::TRACKING_FINALIZER]);
    body
}

/// Event reason: a Job completed.
pub const COMPLETED: &str = "Completed";
/// Event reason: a Job was suspended.
pub const SUSPENDED: &str = "Suspended";
/// Event reason: a Job was resumed.
pub const RESUMED: &str = "Resumed";
/// Event reason: more pods succeeded than `spec.completions`.
pub const TOO_MANY_SUCCEEDED_PODS: &str = "TooManySucceededPods";
/// Event reason: `spec.completionMode` is neither `NonIndexed` nor `Indexed`.
pub const UNKNOWN_COMPLETION_MODE: &str = "UnknownCompletionMode";

/// An event on the Job.
pub fn event(job: &ObjectRef, type_: EventType, reason: &str, message: &str) -> Event {
    Event { regarding: job.clone(), type_, reason: reason.to_owned(), message: message.to_owned() }
}
