//! The Job controller (upstream `pkg/controller/job`): runs a Job's pods
//! to completion, counting successes and failures through the
//! `batch.kubernetes.io/job-tracking` finalizer, for NonIndexed and Indexed
//! Jobs, with `backoffLimit`, `backoffLimitPerIndex`, the pod failure and
//! success policies, `activeDeadlineSeconds`, suspension and
//! `podReplacementPolicy`.
//!
//! A core of the sync protocol (`crate::protocol`): [`sync`] turns a
//! [`Snapshot`] (the Job, the cached pods of its namespace, the
//! expectations, the backoff records, whether the Job was written
//! finished, `now`) into a [`Synced`]: a [`Plan`](crate::plan::Plan) and
//! what the metrics label it with; [`SyncMachine`] runs that plan step by
//! step and decides what each answer calls for.
//!
//! # Layout
//! - `sync`: the dispatcher (`syncJob`) and the failure decisions;
//! - `machine`: the sync as a state machine told each write's answer;
//! - `ctx`: what the phases of one sync share (`syncJobCtx`);
//! - `claim`: adoption (with the tracking finalizer) and release;
//! - `manage`: creating and deleting pods (`manageJob`), `templates` the
//!   pods created;
//! - `track`: counting finished pods once, the status writes, the
//!   terminal conditions (`trackJobStatusAndRemoveFinalizers`);
//! - `indexed_sync`: what an Indexed Job adds to each phase;
//! - [`conditions`], [`pods`]: conditions, reasons, and how pods are read;
//! - [`finalizers`]: the finalizer removals in flight;
//! - [`finished`]: the Jobs written finished that the cache still shows
//!   unfinished (their syncs wait);
//! - [`orphan`]: an orphan pod's finalizer (`syncOrphanPod`);
//! - [`write`]: the [`Write`]s, metric counts and events;
//! - [`pod_failure_policy`]: a failed pod against `spec.podFailurePolicy`
//!   (FailJob, FailIndex, Ignore, Count);
//! - [`intervals`]: sets of indexes as ordered intervals, and their
//!   `"1,3-5"` form in `status.completedIndexes` and `failedIndexes`;
//! - [`indexed`]: an Indexed Job's pods by index (succeeded and failed
//!   indexes, the next to start, duplicates, per-index failure counts and
//!   backoff);
//! - [`index_template`]: the pod template of one index (its variable,
//!   annotation, label, hostname and name);
//! - [`success_policy`]: an Indexed Job's succeeded indexes against
//!   `spec.successPolicy`;
//! - [`backoff`]: the delay before failed pods are replaced, and when a
//!   pod finished.
//!
//! # What follows a refused write
//! - [`SyncMachine`] hands out the steps in order and stops at the first
//!   refused one; the key is then retried with rate limiting. Upstream
//!   writes the status after a failed pod create or delete, and writes
//!   partial progress after a failed finalizer removal; kcm-rs retries the
//!   sync instead, which writes the same status from the cache (the
//!   uncounted lists and the finalizers are in the API, so nothing is
//!   counted twice or lost).
//! - [`Write`]s are documented on each variant, and performed by the Job
//!   controller's driver; the pod creates and deletes and their
//!   expectations are the ReplicaSet's.
//!
//! # Where kcm-rs differs
//! - The feature gates GA in 1.37 are on (`JobManagedBy`,
//!   `JobPodReplacementPolicy`, `JobBackoffLimitPerIndex`,
//!   `JobSuccessPolicy`, `PodIndexLabel`): terminal conditions wait for
//!   the interim ones and for terminating pods; `status.terminating` is
//!   always written.

pub mod backoff;
mod claim;
pub mod conditions;
mod ctx;
pub mod finalizers;
pub mod finished;
pub mod index_template;
pub mod indexed;
mod indexed_sync;
pub mod intervals;
mod machine;
mod manage;
pub mod orphan;
pub mod pod_failure_policy;
pub mod pods;
pub mod success_policy;
mod sync;
mod templates;
#[cfg(test)]
mod tests;
mod track;
pub mod write;

use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;

pub use self::machine::SyncMachine;
pub use self::manage::MAX_POD_CREATE_DELETE_PER_SYNC;
pub use self::sync::{Snapshot, Synced, sync};
pub use self::track::MAX_UNCOUNTED_PODS;
pub use self::write::{Count, Write};
use crate::common::object;
use crate::plan::ObjectRef;

/// A plan of the Job controller: shared actions and its own [`Write`]s.
pub type Plan = crate::plan::Plan<Write>;

/// One action of a [`Plan`].
pub type Action = crate::plan::Action<Write>;

/// The delay upstream gives pod events before a sync (`syncJobBatchPeriod`):
/// the least a delayed sync waits.
pub const SYNC_JOB_BATCH_PERIOD: Duration = Duration::from_secs(1);

/// A Job's completion mode, the metrics' `completion_mode` label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionMode {
    /// Completions are interchangeable.
    NonIndexed,
    /// Each index in `0..completions` completes once.
    Indexed,
}

impl CompletionMode {
    /// The Job's mode; `None` for a value this controller does not know.
    pub fn of(job: &Job) -> Option<Self> {
        match job.spec.as_ref().and_then(|s| s.completion_mode.as_deref()) {
            None | Some("NonIndexed") => Some(CompletionMode::NonIndexed),
            Some("Indexed") => Some(CompletionMode::Indexed),
            Some(_) => None,
        }
    }

    /// `NonIndexed` or `Indexed`.
    pub fn as_str(self) -> &'static str {
        match self {
            CompletionMode::NonIndexed => "NonIndexed",
            CompletionMode::Indexed => "Indexed",
        }
    }
}

/// What a sync did, the metrics' `action` label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncAction {
    /// Creations or deletions in flight: the sync waited for them.
    Reconciling,
    /// Nothing to create or delete.
    Tracking,
    /// Pods created (or held back by the backoff).
    PodsCreated,
    /// Pods deleted.
    PodsDeleted,
}

impl SyncAction {
    /// Upstream's label value.
    pub fn as_str(self) -> &'static str {
        match self {
            SyncAction::Reconciling => "reconciling",
            SyncAction::Tracking => "tracking",
            SyncAction::PodsCreated => "pods_created",
            SyncAction::PodsDeleted => "pods_deleted",
        }
    }
}

/// The queue key of a Job, `namespace/name`.
pub fn key(job: &Job) -> String {
    object::key(&job.metadata)
}

/// The Job as events and preconditions name it.
pub fn object_ref(job: &Job) -> ObjectRef {
    object::object_ref("batch/v1", "Job", &job.metadata)
}

/// `spec.suspend` is true.
pub fn is_suspended(job: &Job) -> bool {
    job.spec.as_ref().and_then(|s| s.suspend) == Some(true)
}
