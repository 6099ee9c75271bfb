//! Delayed adds: [`WorkQueue::add_after`] and the task that moves keys into the queue when their
//! time comes (client-go's `delayingType` and its `waitingLoop`).
//!
//! Keys waiting for their time sit in `Waiting`, a min-heap on the ready instant with one live
//! entry per key: adding a key that is already waiting keeps the earlier instant. A single
//! background task (`waiting_loop`) sleeps until the earliest instant (or until an earlier
//! entry arrives), then adds every ready key through the ordinary `add` path, so dedup, the
//! processing set and metrics apply unchanged. Shutting down drops whatever is still waiting.
//! Unlike client-go there is no 1000-entry hand-off channel (the heap is updated under the
//! queue's lock, so `add_after` never blocks) and no 10 s heartbeat (tokio timers are exact).

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};
use std::hash::Hash;
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use super::queue::{Shared, WorkQueue};

/// How far in the future a delay that overflows `Instant` is parked (about 30 years).
const FAR_FUTURE: Duration = Duration::from_secs(30 * 365 * 24 * 3600);

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

/// Moves ready keys into the queue until shutdown or until the last handle is dropped.
///
/// Holds only a weak reference so it never keeps the queue alive; `wake` is signalled by
/// `add_after` (new earliest key), by shutdown, and by the queue's `Drop`.
pub(super) async fn waiting_loop<K: Clone + Eq + Hash + Send + Sync + 'static>(
    shared: Weak<Shared<K>>,
    wake: Arc<Notify>,
) {
    loop {
        // Registered before looking at the heap so that no wake-up between the two is lost.
        let notified = wake.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let next = match shared.upgrade() {
            Some(shared) => shared.promote_ready(Instant::now()),
            None => Next::ShutDown,
        };
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

// === impl WorkQueue ===

impl<K: Clone + Eq + Hash + Send + Sync + 'static> WorkQueue<K> {
    /// Adds `key` once `delay` has passed (at once when `delay` is zero).
    ///
    /// Ignored while shutting down. If `key` is already waiting, the earlier of the two instants
    /// is kept. Every call (except during shutdown) counts in `workqueue_retries_total`, as
    /// upstream. Keys still waiting when the queue shuts down are dropped.
    #[doc(alias = "AddAfter")]
    pub fn add_after(&self, key: K, delay: Duration) {
        if self.is_shutting_down() {
            return;
        }
        if let Some(retries) = &self.shared.retries {
            retries.inc();
        }
        if delay.is_zero() {
            self.add(key);
            return;
        }
        let now = Instant::now();
        let ready_at = now.checked_add(delay).unwrap_or(now + FAR_FUTURE);
        let rearm = {
            let mut state = self.shared.lock();
            !state.shutting_down && state.waiting.insert(key, ready_at)
        };
        if rearm {
            self.shared.waiting_changed.notify_one();
        }
    }

    /// How many keys wait for an `add_after` instant (not yet in [`len`](Self::len)).
    pub fn num_waiting(&self) -> usize {
        self.shared.lock().waiting.len()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::workqueue::rate_limiter::MaxOfRateLimiter;

    const MS: Duration = Duration::from_millis(1);

    fn queue() -> WorkQueue<&'static str> {
        WorkQueue::new("", MaxOfRateLimiter::new(Vec::new()), None)
    }

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

    #[tokio::test(start_paused = true)]
    async fn add_after_fires_in_instant_order() {
        let q = queue();
        q.add_after("c", 30 * MS);
        q.add_after("a", 10 * MS);
        q.add_after("b", 20 * MS);
        assert_eq!((q.len(), q.num_waiting()), (0, 3));
        let start = Instant::now();
        for expected in ["a", "b", "c"] {
            assert_eq!(q.get().await, Some(expected));
            q.done(&expected);
        }
        assert_eq!(start.elapsed(), 30 * MS);
    }

    #[tokio::test(start_paused = true)]
    async fn add_after_fires_at_the_exact_instant() {
        let q = queue();
        q.add_after("a", 100 * MS);
        tokio::time::sleep(99 * MS).await;
        assert_eq!(q.len(), 0);
        tokio::time::sleep(MS).await;
        tokio::task::yield_now().await;
        assert_eq!(q.len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn duplicate_add_after_keeps_earlier_time() {
        let q = queue();
        let start = Instant::now();
        q.add_after("a", 100 * MS);
        q.add_after("a", 10 * MS);
        q.add_after("a", 500 * MS);
        assert_eq!(q.get().await, Some("a"));
        assert_eq!(start.elapsed(), 10 * MS);
        q.done(&"a");
        // Fired once: nothing left behind for 100 ms or 500 ms.
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!((q.len(), q.num_waiting()), (0, 0));
    }

    #[tokio::test(start_paused = true)]
    async fn zero_delay_adds_now() {
        let q = queue();
        q.add_after("a", Duration::ZERO);
        assert_eq!((q.len(), q.num_waiting()), (1, 0));
    }

    #[tokio::test(start_paused = true)]
    async fn delayed_key_collapses_with_queued_one() {
        let q = queue();
        q.add("a");
        q.add_after("a", 10 * MS);
        tokio::time::sleep(20 * MS).await;
        assert_eq!(q.len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn shutdown_drops_waiting_keys() {
        let q = queue();
        q.add("now");
        q.add_after("later", 10 * MS);
        q.shut_down();
        assert_eq!(q.num_waiting(), 0);
        q.add_after("ignored", 10 * MS);
        tokio::time::sleep(50 * MS).await;
        assert_eq!(q.get().await, Some("now"));
        assert_eq!(q.get().await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn huge_delay_does_not_panic() {
        let q = queue();
        q.add_after("a", Duration::MAX);
        assert_eq!(q.num_waiting(), 1);
    }
}
