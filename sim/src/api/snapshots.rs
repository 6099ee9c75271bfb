//! Consistent paginated lists: the API server answers every page of a
//! `limit`/`continue` list from the state at the first page's
//! resourceVersion (etcd's MVCC read). kube-sim keeps that state as a
//! snapshot (the selected objects, shared with the store, so it costs a
//! pointer per object) until the list is read to its end, for at most
//! [`TTL`], and for at most [`CAPACITY`] lists at once; a `continue` token
//! whose snapshot is gone gets `410 Expired`, as a compacted one does on a
//! real cluster, and the client starts a new list.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::store::{ObjectKey, Stored};

/// How long an unfinished list's snapshot is kept.
pub const TTL: Duration = Duration::from_secs(300);

/// How many unfinished lists are kept; the oldest goes first.
pub const CAPACITY: usize = 64;

/// The selected objects of one list, in order.
pub type Items = Arc<Vec<(ObjectKey, Stored)>>;

struct Entry {
    id: u64,
    rv: u64,
    taken: Instant,
    items: Items,
}

/// The snapshots of unfinished lists.
#[derive(Default)]
pub struct Snapshots {
    entries: Mutex<(u64, VecDeque<Entry>)>,
}

impl Snapshots {
    /// Keeps `items` (read at `rv`) for later pages; returns its id.
    pub fn keep(&self, rv: u64, items: Items) -> u64 {
        let mut guard = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let (next_id, entries) = &mut *guard;
        *next_id += 1;
        let now = Instant::now();
        entries.retain(|e| now.duration_since(e.taken) < TTL);
        while entries.len() >= CAPACITY {
            entries.pop_front();
        }
        entries.push_back(Entry { id: *next_id, rv, taken: now, items });
        *next_id
    }

    /// The snapshot `id` taken at `rv`, if still kept.
    pub fn get(&self, id: u64, rv: u64) -> Option<Items> {
        let guard = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        guard.1.iter().find(|e| e.id == id && e.rv == rv && now.duration_since(e.taken) < TTL).map(|e| e.items.clone())
    }

    /// Forgets a snapshot once its last page is served.
    pub fn finish(&self, id: u64) {
        let mut guard = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        guard.1.retain(|e| e.id != id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn snapshots_are_kept_until_finished_expired_or_evicted() {
        let snapshots = Snapshots::default();
        let a = snapshots.keep(7, Arc::new(Vec::new()));
        assert!(snapshots.get(a, 7).is_some());
        assert!(snapshots.get(a, 8).is_none(), "the version is part of the identity");
        snapshots.finish(a);
        assert!(snapshots.get(a, 7).is_none());
        let b = snapshots.keep(9, Arc::new(Vec::new()));
        tokio::time::advance(TTL).await;
        assert!(snapshots.get(b, 9).is_none(), "expired");
        let first = snapshots.keep(1, Arc::new(Vec::new()));
        for _ in 0..CAPACITY {
            snapshots.keep(1, Arc::new(Vec::new()));
        }
        assert!(snapshots.get(first, 1).is_none(), "evicted by newer lists");
    }
}
