//! The pod expectations of the controllers that create and delete pods
//! (the ReplicaSet and DaemonSet drivers): one [`Expectations`] behind a
//! mutex, fed by the pod handler, read by the syncs and reported to by the
//! executor ([`Bookkeeping`]); and the handler of those controllers' own
//! kind, which forgets a deleted object's expectations ([`OwnKindHandler`]).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use jiff::Timestamp;
use kcm_controllers::common::expectations::Expectations;
use kcm_runtime::informer::{Cached, EventHandler, key_of};
use kcm_runtime::workqueue::WorkQueue;

use super::execute::Bookkeeping;

/// The expectations behind a mutex: the handlers, the executor and the
/// syncs all update them; nobody holds the lock across an await.
#[derive(Clone, Default)]
pub struct SharedExpectations(Arc<Mutex<Expectations>>);

impl SharedExpectations {
    /// The expectations, locked.
    pub fn lock(&self) -> MutexGuard<'_, Expectations> {
        // Every critical section leaves the expectations whole.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
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
        if old.object_meta().uid != new.object_meta().uid {
            // Deleted and recreated under the same name while unseen.
            self.on_delete(old);
        }
        self.queue.add(key_of(&**new));
    }

    fn on_delete(&self, obj: &Arc<K>) {
        let key = key_of(&**obj);
        self.expectations.lock().delete(&key);
        self.queue.add(key);
    }
}
