//! What the phases of one sync share (upstream `syncJobCtx`): the Job as
//! the sync writes it, its pods and their counts, and the indexes of an
//! Indexed Job. `sync` builds it; `manage`, `track`, `templates` and
//! `indexed_sync` read and update it.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::batch::v1::{JobCondition, JobStatus};
use kcm_objects::{Job, Pod};

use super::backoff::BackoffRecord;
use super::intervals::OrderedIntervals;
use super::is_suspended;
use super::pods::has_tracking_finalizer;
use crate::plan::ObjectRef;

/// What the phases of one sync share (upstream `syncJobCtx`).
pub(super) struct Ctx<'a> {
    pub key: String,
    pub owner: ObjectRef,
    /// The Job as this sync writes it (its status changes as it goes).
    pub job: Job,
    pub now: Timestamp,
    /// Pods the Job controls after the claim.
    pub pods: Vec<&'a Pod>,
    /// Uids of the pods adopted in this sync: they get the tracking
    /// finalizer with the adoption.
    pub adopted: HashSet<String>,
    pub active: Vec<&'a Pod>,
    pub finished_condition: Option<JobCondition>,
    pub succeeded: i32,
    pub failed: i32,
    pub uncounted_succeeded: HashSet<String>,
    pub uncounted_failed: HashSet<String>,
    pub expected_rm_finalizers: HashSet<String>,
    pub new_backoff: BackoffRecord,
    pub terminating: i32,
    pub ready: i32,
    pub indexed: Option<IndexedState<'a>>,
    pub requeue_after: Option<Duration>,
}

impl Ctx<'_> {
    /// Whether the pod carries the tracking finalizer (or gets it with its
    /// adoption in this sync).
    pub fn tracked(&self, pod: &Pod) -> bool {
        has_tracking_finalizer(pod) || self.adopted.contains(&pod.metadata.uid.to_string())
    }

    /// Whether a removal of this pod's finalizer is in flight.
    pub fn removing(&self, pod: &Pod) -> bool {
        self.expected_rm_finalizers.contains(&pod.metadata.uid.to_string())
    }

    /// Asks for another sync after `after`, keeping the earliest request.
    pub fn requeue(&mut self, after: Duration) {
        self.requeue_after = Some(self.requeue_after.map_or(after, |d| d.min(after)));
    }

    pub fn spec_completions(&self) -> Option<i32> {
        self.job.spec.as_ref().and_then(|s| s.completions)
    }

    pub fn suspended(&self) -> bool {
        is_suspended(&self.job)
    }

    pub fn status(&mut self) -> &mut JobStatus {
        self.job.status.get_or_insert_default()
    }
}

/// The indexes of an Indexed Job, as this sync sees them.
pub(super) struct IndexedState<'a> {
    /// `spec.completions`.
    pub completions: i32,
    /// `status.completedIndexes` as read.
    pub prev_succeeded: OrderedIntervals,
    /// With the indexes of the succeeded pods not yet counted.
    pub succeeded: OrderedIntervals,
    /// With `backoffLimitPerIndex`: the failed indexes.
    pub failed: Option<OrderedIntervals>,
    /// With `backoffLimitPerIndex`: per index, the failed pod kept until
    /// its replacement exists.
    pub delayed_deletion: HashMap<i32, &'a Pod>,
}
