//! Keys waiting for their instant (client-go's `delayingType` heap and its `waitingLoop`):
//! `Waiting`, a min-heap on the ready instant with one live entry per key (adding a key that is
//! already waiting keeps the earlier instant), and the one background task that sleeps until the
//! earliest instant (or until an earlier entry arrives) and then has the queue add every ready
//! key. The queue owns both; [`WorkQueue::add_after`](super::WorkQueue::add_after) is
//! `delaying.rs`'s.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};
use std::hash::Hash;
use std::sync::Arc;

use tokio::sync::Notify;
use tokio::time::Instant;

/// Keys waiting for their ready instant.
pub(super) struct Waiting<K> {
    /// Min-heap on `(ready_at, seq)`. May hold stale entries for keys whose instant was later
    /// moved earlier; they are skipped when they reach the top.
    heap: BinaryHeap<Reverse<Entry<K>>>,
    /// The live `(ready_at, seq)` of each waiting key.
    live: HashMap<K, (Instant, u64)>,
    /// Tie-breaker so keys ready at the same instant are added in `add_after` order.
    next_seq: u64,
}

struct Entry<K> {
    ready_at: Instant,
    seq: u64,
    key: K,
}

impl<K> Entry<K> {
    fn order(&self) -> (Instant, u64) {
        (self.ready_at, self.seq)
    }
}

impl<K> PartialEq for Entry<K> {
    fn eq(&self, other: &Self) -> bool {
        self.order() == other.order()
    }
}

impl<K> Eq for Entry<K> {}

impl<K> PartialOrd for Entry<K> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<K> Ord for Entry<K> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.order().cmp(&other.order())
    }
}

// === impl Waiting ===

impl<K> Waiting<K> {
    pub(super) fn new() -> Self {
        Self { heap: BinaryHeap::new(), live: HashMap::new(), next_seq: 0 }
    }

    /// Number of keys waiting.
    pub(super) fn len(&self) -> usize {
        self.live.len()
    }

    /// Drops every waiting key (shutdown).
    pub(super) fn clear(&mut self) {
        self.heap.clear();
        self.live.clear();
    }
}

impl<K: Clone + Eq + Hash> Waiting<K> {
    /// Schedules `key` at `ready_at`, or moves it earlier if it already waits for a later
    /// instant. Returns whether the earliest deadline may have changed (the loop must re-arm).
    pub(super) fn insert(&mut self, key: K, ready_at: Instant) -> bool {
        if let Some(&(existing, _)) = self.live.get(&key)
            && existing <= ready_at
        {
            return false;
        }
        let earliest = self.heap.peek().is_none_or(|Reverse(head)| ready_at < head.ready_at);
        let seq = self.next_seq;
        self.next_seq += 1;
        self.live.insert(key.clone(), (ready_at, seq));
        self.heap.push(Reverse(Entry { ready_at, seq, key }));
        earliest
    }

    /// Removes and returns a key whose instant is at or before `now`, if any.
    pub(super) fn pop_ready(&mut self, now: Instant) -> Option<K> {
        loop {
            let Reverse(head) = self.heap.peek()?;
            if head.ready_at > now {
                return None;
            }
            let Reverse(entry) = self.heap.pop()?;
            if self.live.get(&entry.key) == Some(&entry.order()) {
                self.live.remove(&entry.key);
                return Some(entry.key);
            }
            // Stale: the key was moved earlier (and may already have been added).
        }
    }

    /// The earliest live ready instant, dropping stale heads on the way.
    pub(super) fn next_ready_at(&mut self) -> Option<Instant> {
        while let Some(Reverse(head)) = self.heap.peek() {
            if self.live.get(&head.key) == Some(&head.order()) {
                return Some(head.ready_at);
            }
            self.heap.pop();
        }
        None
    }
}

/// What the waiting loop does after a pass over the ready keys.
pub(super) enum Next {
    /// Nothing waits: sleep until an `add_after` wakes the loop.
    Idle,
    /// Sleep until this instant, or until an earlier key arrives.
    At(Instant),
    /// The queue is shutting down: the loop ends.
    ShutDown,
}

/// Moves ready keys into the queue (through `promote_ready`, which answers what to wait for
/// next) until it answers [`Next::ShutDown`]: at shutdown, or once the last handle is dropped
/// (the queue hands it a weak reference, so the loop never keeps the queue alive). `wake` is
/// signalled by `add_after` (new earliest key), by shutdown, and by the queue's `Drop`.
pub(super) async fn waiting_loop(promote_ready: impl Fn(Instant) -> Next, wake: Arc<Notify>) {
    loop {
        // Registered before looking at the heap so that no wake-up between the two is lost.
        let notified = wake.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let next = promote_ready(Instant::now());
        match next {
            Next::ShutDown => return,
            Next::Idle => notified.await,
            Next::At(deadline) => {
                tokio::select! {
                    () = tokio::time::sleep_until(deadline) => {}
                    () = &mut notified => {}
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn waiting_keeps_earliest_instant_per_key() {
        let t0 = Instant::now();
        let mut waiting = Waiting::new();
        assert!(waiting.insert("a", t0 + 50 * MS));
        assert!(waiting.insert("b", t0 + 20 * MS));
        assert!(!waiting.insert("a", t0 + 80 * MS), "later instant ignored");
        assert!(waiting.insert("a", t0 + 10 * MS), "earlier instant wins");
        assert_eq!(waiting.len(), 2);
        assert_eq!(waiting.next_ready_at(), Some(t0 + 10 * MS));
        assert_eq!(waiting.pop_ready(t0 + 5 * MS), None);
        assert_eq!(waiting.pop_ready(t0 + 60 * MS), Some("a"));
        assert_eq!(waiting.pop_ready(t0 + 60 * MS), Some("b"));
        assert_eq!(waiting.pop_ready(t0 + 60 * MS), None, "stale entry for a skipped");
        assert_eq!(waiting.next_ready_at(), None);
    }
}
