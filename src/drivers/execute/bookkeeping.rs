//! What a controller remembers between syncs about its writes in flight
//! (the ReplicaSet controller's expectations), as the executor reports it:
//! [`Bookkeeping`], and [`NoBookkeeping`] for controllers that remember
//! nothing.

/// What a controller remembers about its writes in flight (the ReplicaSet
/// controller's expectations; the Job controller's finalizer removals,
/// backoff records, Jobs written finished and metrics, which default to
/// nothing). Keys are controller queue keys (`namespace/name`), pod keys
/// `namespace/name`.
pub trait Bookkeeping: Send + Sync {
    /// [`Action::ExpectCreations`](kcm_controllers::plan::Action::ExpectCreations).
    fn expect_creations(&self, key: &str, count: usize);
    /// [`Action::ExpectDeletions`](kcm_controllers::plan::Action::ExpectDeletions).
    fn expect_deletions(&self, key: &str, pod_keys: &[String]);
    /// A pod create was accepted: `pod_key` at `resource_version`.
    fn creation_succeeded(&self, key: &str, pod_key: &str, resource_version: Option<u64>);
    /// `count` planned creations failed or were never issued.
    fn creations_skipped(&self, key: &str, count: usize);
    /// The delete of `pod_key` failed (other than NotFound).
    fn deletion_failed(&self, key: &str, pod_key: &str);
    /// A pod create failed (other than in a terminating namespace).
    fn creation_failed(&self, _key: &str) {}
    /// The Job controller is about to remove the tracking finalizer from
    /// the pods with these uids
    /// ([`Write::ExpectFinalizerRemovals`](kcm_controllers::job::Write::ExpectFinalizerRemovals)).
    fn expect_finalizer_removals(&self, _key: &str, _uids: &[String]) {}
    /// Removing the tracking finalizer from the pod `uid` failed.
    fn finalizer_removal_failed(&self, _key: &str, _uid: &str) {}
    /// A Job's recreation backoff once the pods it counts are written
    /// ([`Write::RecordBackoff`](kcm_controllers::job::Write::RecordBackoff)).
    fn record_backoff(&self, _key: &str, _record: &kcm_controllers::job::backoff::BackoffRecord) {}
    /// The status write before it finished the Job `uid`
    /// ([`Write::ExpectFinished`](kcm_controllers::job::Write::ExpectFinished)).
    fn expect_job_finished(&self, _uid: &str) {}
    /// A Job metric, the write before it having succeeded.
    fn count(&self, _count: &kcm_controllers::job::Count) {}
}

/// [`Bookkeeping`] for a controller that remembers nothing about its
/// writes (its plans hold no pod creates or deletes).
pub struct NoBookkeeping;

impl Bookkeeping for NoBookkeeping {
    fn expect_creations(&self, _key: &str, _count: usize) {}
    fn expect_deletions(&self, _key: &str, _pod_keys: &[String]) {}
    fn creation_succeeded(&self, _key: &str, _pod_key: &str, _resource_version: Option<u64>) {}
    fn creations_skipped(&self, _key: &str, _count: usize) {}
    fn deletion_failed(&self, _key: &str, _pod_key: &str) {}
}
