//! Delayed adds: [`WorkQueue::add_after`] and the task that moves keys into the queue when their
//! time comes (client-go's `delayingType` and its `waitingLoop`).
//!
//! Keys waiting for their time sit in the queue's `Waiting` heap (`waiting.rs`); its single
//! background task sleeps until the earliest instant, then adds every ready key through the
//! ordinary `add` path, so dedup, the processing set and metrics apply unchanged. Shutting down drops whatever is still waiting.
//! Unlike client-go there is no 1000-entry hand-off channel (the heap is updated under the
//! queue's lock, so `add_after` never blocks) and no 10 s heartbeat (tokio timers are exact).

use std::hash::Hash;
use std::time::Duration;

use tokio::time::Instant;

use super::queue::WorkQueue;

/// How far in the future a delay that overflows `Instant` is parked (about 30 years).
const FAR_FUTURE: Duration = Duration::from_secs(30 * 365 * 24 * 3600);

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
