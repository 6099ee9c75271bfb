//! The pod expectations of the controllers that create and delete pods
//! (the ReplicaSet and DaemonSet drivers): one [`Expectations`] behind a
//! mutex, fed by the pod handler, read by the syncs and reported to by the
//! executor ([`Bookkeeping`]), with the objects a sync created that the
//! cache has not shown yet ([`Unseen`]: a DaemonSet's or StatefulSet's
//! ControllerRevisions, a Deployment's ReplicaSets; the StatefulSet and
//! Deployment drivers keep only those); and the handler of those
//! controllers' own kind, which forgets a deleted object's expectations
//! ([`OwnKindHandler`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use jiff::Timestamp;
use kcm_controllers::common::expectations::{EXPECTATIONS_TIMEOUT, Expectations};
use kcm_runtime::informer::{Cached, EventHandler, Store, key_of};
use kcm_runtime::workqueue::WorkQueue;

use super::execute::Bookkeeping;

/// The expectations behind a mutex: the handlers, the executor and the
/// syncs all update them; nobody holds the lock across an await.
#[derive(Clone, Default)]
pub struct SharedExpectations {
    pods: Arc<Mutex<Expectations>>,
    created: Arc<Mutex<Unseen>>,
}

/// The objects a controller created, by its queue key, that its cache may
/// not show yet: `(object key, when created)`.
///
/// A sync planned while the cache lacks what the last sync created plans
/// as if it had never been made:
/// - a DaemonSet's or StatefulSet's next ControllerRevision is numbered one
///   above the highest cached, so it would get the number of the one just
///   made, and `kubectl rollout undo` and `rollout history` would go by a
///   tie;
/// - a Deployment's new ReplicaSet is sized from the replicas of those
///   cached, so a template changed right after the Deployment was created
///   would get a second ReplicaSet of the full size: twice the pods
///   `maxSurge` allows.
///
/// So the object is not synced while something it made is unseen; the
/// add event queues it again. Upstream has no such wait (its watches are
/// rarely that far behind); after [`EXPECTATIONS_TIMEOUT`] an unseen
/// object (deleted meanwhile) is given up, as expectations are.
#[derive(Default)]
struct Unseen(HashMap<String, Vec<(String, Timestamp)>>);

impl SharedExpectations {
    /// The expectations, locked.
    pub fn lock(&self) -> MutexGuard<'_, Expectations> {
        // Every critical section leaves the expectations whole.
        self.pods.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn created(&self) -> MutexGuard<'_, Unseen> {
        // Every critical section leaves the map whole.
        self.created.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether an object `key`'s syncs created is still not in the cache
    /// (`seen` says whether the cache holds an object key); forgets those
    /// seen or given up.
    pub fn created_unseen(&self, key: &str, seen: impl Fn(&str) -> bool, now: Timestamp) -> bool {
        let mut created = self.created();
        let Some(unseen) = created.0.get_mut(key) else { return false };
        unseen.retain(|(object, at)| {
            let age = std::time::Duration::try_from(at.duration_until(now));
            let given_up = age.is_ok_and(|age| age > EXPECTATIONS_TIMEOUT);
            !seen(object) && !given_up
        });
        if unseen.is_empty() {
            created.0.remove(key);
            return false;
        }
        true
    }

    /// [`Self::created_unseen`], now, against the cache of the created kind.
    pub fn created_unseen_in<K: Cached>(&self, key: &str, cache: &Store<K>) -> bool {
        self.created_unseen(key, |object| cache.get(object).is_some(), Timestamp::now())
    }

    /// Forgets everything about `key` (its object was deleted).
    pub fn delete(&self, key: &str) {
        self.lock().delete(key);
        self.created().0.remove(key);
    }
}

impl Bookkeeping for SharedExpectations {
    fn expect_creations(&self, key: &str, count: usize) {
        self.lock().expect_creations(key, count, Timestamp::now());
    }

    fn expect_deletions(&self, key: &str, pod_keys: &[String]) {
        self.lock().expect_deletions(key, pod_keys.iter().cloned(), Timestamp::now());
    }

    fn creation_succeeded(&self, key: &str, pod_key: &str, resource_version: Option<u64>) {
        self.lock().creation_succeeded(key, pod_key, resource_version);
    }

    fn creations_skipped(&self, key: &str, count: usize) {
        self.lock().creations_skipped(key, count);
    }

    fn deletion_failed(&self, key: &str, pod_key: &str) {
        self.lock().deletion_observed(key, pod_key);
    }

    fn owned_created(&self, key: &str, object_key: &str) {
        self.created().0.entry(key.to_owned()).or_default().push((object_key.to_owned(), Timestamp::now()));
    }
}

/// Adds, updates (resyncs included, as upstream) and deletes of the
/// controller's own objects: queue the object's key. A delete, or a
/// recreate under the same name seen as an update, first forgets the
/// object's expectations, so that a new object under that name starts
/// clean.
pub struct OwnKindHandler {
    /// The controller's queue.
    pub queue: WorkQueue<String>,
    /// The controller's expectations.
    pub expectations: SharedExpectations,
}

impl<K: Cached> EventHandler<K> for OwnKindHandler {
    fn on_add(&self, obj: &Arc<K>) {
        self.queue.add(key_of(&**obj));
    }

    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        if old.uid() != new.uid() {
            // Deleted and recreated under the same name while unseen.
            self.on_delete(old);
        }
        self.queue.add(key_of(&**new));
    }

    fn on_delete(&self, obj: &Arc<K>) {
        let key = key_of(&**obj);
        self.expectations.delete(&key);
        self.queue.add(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + seconds).expect("a time")
    }

    #[test]
    fn a_created_object_is_unseen_until_the_cache_holds_it_or_it_is_given_up() {
        let shared = SharedExpectations::default();
        assert!(!shared.created_unseen("ns/ds", |_| false, at(0)), "nothing created");
        shared.created().0.insert("ns/ds".into(), vec![("ns/ds-b".into(), at(0))]);
        shared.created().0.insert("ns/other".into(), vec![("ns/other-a".into(), at(0))]);
        assert!(shared.created_unseen("ns/ds", |r| r == "ns/ds-a", at(1)), "another object seen");
        assert!(!shared.created_unseen("ns/ds", |r| r == "ns/ds-b", at(2)), "seen");
        assert!(!shared.created_unseen("ns/ds", |_| false, at(3)), "forgotten once seen");
        assert!(shared.created_unseen("ns/other", |_| false, at(300)), "within the timeout");
        assert!(!shared.created_unseen("ns/other", |_| false, at(301)), "given up after it");
    }

    #[test]
    fn a_created_object_is_kept_under_its_controller_and_forgotten_with_it() {
        let shared = SharedExpectations::default();
        shared.owned_created("ns/ds", "ns/ds-b");
        assert!(shared.created_unseen("ns/ds", |_| false, Timestamp::now()));
        shared.delete("ns/ds");
        assert!(!shared.created_unseen("ns/ds", |_| false, Timestamp::now()));
    }
}
