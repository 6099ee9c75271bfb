//! [`Enqueue`], the handler of a controller's own kind when it has nothing
//! else to do on an event: every add, update (resyncs included, as
//! upstream) and delete queues the object's key. The sync then reads the
//! latest state from the cache (level-based), never the event's.

use std::sync::Arc;

use super::{Cached, EventHandler, key_of};
use crate::workqueue::WorkQueue;

/// Queues the key ([`key_of`]) of every object it hears of.
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
