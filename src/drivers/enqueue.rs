//! The handler of a controller's own kind: every add, update (resyncs
//! included, as upstream) and delete queues the object's key, for the
//! controllers with no bookkeeping to do on those events (Deployment,
//! StatefulSet).

use std::sync::Arc;

use kcm_runtime::informer::{Cached, EventHandler, key_of};
use kcm_runtime::workqueue::WorkQueue;

/// Queues `namespace/name` of every object it hears of.
pub struct Enqueue {
    /// The controller's queue.
    pub queue: WorkQueue<String>,
}

impl<K: Cached> EventHandler<K> for Enqueue {
    fn on_add(&self, obj: &Arc<K>) {
        self.queue.add(key_of(&**obj));
    }

    fn on_update(&self, _old: &Arc<K>, new: &Arc<K>) {
        self.queue.add(key_of(&**new));
    }

    fn on_delete(&self, obj: &Arc<K>) {
        self.queue.add(key_of(&**obj));
    }
}
