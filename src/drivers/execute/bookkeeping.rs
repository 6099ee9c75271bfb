//! What a controller remembers between syncs about its writes in flight
//! (the ReplicaSet controller's expectations), as the executor reports it:
//! [`Bookkeeping`], and [`NoBookkeeping`] for controllers that remember
//! nothing.

/// What a controller remembers about its pod writes in flight (the pod
/// expectations of the controllers that create and delete pods). Keys are
/// controller queue keys (`namespace/name`), pod keys `namespace/name`.
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
    /// The create of an object `key` controls (a ControllerRevision, a
    /// ReplicaSet) was accepted: `object_key` (`namespace/name`). Only a
    /// controller that waits for its cache to show what it made keeps it.
    fn owned_created(&self, _key: &str, _object_key: &str) {}
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
