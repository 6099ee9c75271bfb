//! The per-zone rate-limited timed queue (upstream
//! `scheduler.RateLimitedTimedQueue`), as a pure structure: time is an
//! argument of every call.
//!
//! Nodes waiting for a `NoExecute` taint are queued by name, at most once
//! (a name stays "seen" after it was processed, so a node is tainted once
//! per outage, until [`ZoneQueue::remove`] forgets it when the node is
//! healthy again). Items come out in order of their due time, each
//! costing a token from a bucket of `rate` tokens per second and burst 1,
//! so a zone's nodes are tainted at most `rate` per second (upstream
//! `EvictionRateLimiterBurst` = 1). A rate of 0
//! means never (full disruption, or a small zone in partial disruption).
//!
//! The driver processes a zone every 100 ms
//! ([`NODE_EVICTION_PERIOD`]):
//! ```text
//! while let Some(item) = queue.next_due(now) {
//!     let outcome = taint(item);        // I/O
//!     queue.complete(&item.value, outcome, now);
//! }
//! ```
//! As upstream, a token is taken for the head item before its due time is
//! checked, so a head that is not due yet (retried after an error) costs a
//! token.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use kcm_gotime::TokenBucket;

/// How often the driver processes the queues (upstream
/// `NodeEvictionPeriod`).
pub const NODE_EVICTION_PERIOD: Duration = Duration::from_millis(100);

/// A queued node (upstream `TimedValue`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimedValue {
    /// Node name.
    pub value: String,
    /// Node uid when queued.
    pub uid: String,
    /// When it was queued.
    pub added_at: Timestamp,
    /// When it is due.
    pub process_at: Timestamp,
}

/// How processing an item went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Done (tainted, or nothing to do): leave the queue, stay seen.
    Done,
    /// Try again this long after now (plus a nanosecond, as upstream).
    Retry(Duration),
}

/// One zone's queue of nodes waiting for a `NoExecute` taint.
#[derive(Debug, Clone)]
pub struct ZoneQueue {
    /// Items by (due time, insertion order).
    heap: BTreeSet<(Timestamp, u64)>,
    /// The items, by insertion order.
    items: HashMap<u64, TimedValue>,
    /// Insertion order of the item of each queued name.
    index: HashMap<String, u64>,
    /// Names queued or already processed (upstream's `set`).
    seen: HashSet<String>,
    /// Next insertion number.
    next: u64,
    /// The zone's rate, in nodes per second (≤ 0: none).
    qps: f32,
    /// Its token bucket: burst 1, as upstream's
    /// `flowcontrol.NewTokenBucketRateLimiter(qps, 1)`.
    limiter: TokenBucket<Timestamp>,
}

impl ZoneQueue {
    /// An empty queue tainting at `qps` nodes per second.
    pub fn new(qps: f32) -> Self {
        ZoneQueue {
            heap: BTreeSet::new(),
            items: HashMap::new(),
            index: HashMap::new(),
            seen: HashSet::new(),
            next: 0,
            qps: qps.max(0.0),
            limiter: TokenBucket::new(f64::from(qps), 1),
        }
    }

    /// Queues `name`, due now, unless it is queued or was processed and
    /// not removed since. Returns whether it was added.
    pub fn add(&mut self, name: &str, uid: &str, now: Timestamp) -> bool {
        if !self.seen.insert(name.to_owned()) {
            return false;
        }
        let id = self.next;
        self.next += 1;
        self.heap.insert((now, id));
        self.index.insert(name.to_owned(), id);
        self.items
            .insert(id, TimedValue { value: name.to_owned(), uid: uid.to_owned(), added_at: now, process_at: now });
        true
    }

    /// Forgets `name` entirely, so it can be added again. Returns whether
    /// it was known.
    pub fn remove(&mut self, name: &str) -> bool {
        self.unqueue(name);
        self.seen.remove(name)
    }

    /// Whether `name` is waiting.
    pub fn is_queued(&self, name: &str) -> bool {
        self.index.contains_key(name)
    }

    /// Number of names waiting.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The head item, if a token is available at `now` and the head is
    /// due. The item stays queued until [`complete`](Self::complete).
    pub fn next_due(&mut self, now: Timestamp) -> Option<TimedValue> {
        let (_, id) = *self.heap.first()?;
        if !self.limiter.try_take(now) {
            return None;
        }
        let item = &self.items[&id];
        (item.process_at <= now).then(|| item.clone())
    }

    /// Records how processing `name` went at `now`. Ignored when `name` was
    /// removed meanwhile.
    pub fn complete(&mut self, name: &str, outcome: Outcome, now: Timestamp) {
        match outcome {
            Outcome::Done => self.unqueue(name),
            Outcome::Retry(wait) => {
                let Some(&id) = self.index.get(name) else { return };
                let Some(item) = self.items.get_mut(&id) else { return };
                self.heap.remove(&(item.process_at, id));
                let wait =
                    SignedDuration::try_from(wait).unwrap_or(SignedDuration::MAX) + SignedDuration::from_nanos(1);
                item.process_at = now.saturating_add(wait).unwrap_or(now);
                self.heap.insert((item.process_at, id));
            }
        }
    }

    /// Changes the rate (upstream `SwapLimiter`): a new full bucket, but
    /// drained if the old one had no token left, so a swap does not let an
    /// extra node through.
    pub fn swap_limiter(&mut self, qps: f32, now: Timestamp) {
        if self.qps == qps.max(0.0) {
            return;
        }
        let mut limiter = TokenBucket::new(f64::from(qps), 1);
        if qps > 0.0 && !self.limiter.try_take(now) {
            limiter.try_take(now);
        }
        self.qps = qps.max(0.0);
        self.limiter = limiter;
    }

    /// The current rate.
    pub fn qps(&self) -> f32 {
        self.qps
    }

    /// Takes `name` out of the heap, leaving it seen.
    fn unqueue(&mut self, name: &str) {
        if let Some(id) = self.index.remove(name)
            && let Some(item) = self.items.remove(&id)
        {
            self.heap.remove(&(item.process_at, id));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::testing::ts;

    fn ms(t: i64) -> Timestamp {
        Timestamp::from_millisecond(t).unwrap()
    }

    /// Runs the queue every 100 ms from `from` to `to` (seconds), every
    /// item succeeding; returns (name, second) per processed item.
    fn drive(q: &mut ZoneQueue, from: i64, to: i64) -> Vec<(String, i64)> {
        let mut done = Vec::new();
        for tick in (from * 10)..=(to * 10) {
            let now = ms(tick * 100);
            while let Some(item) = q.next_due(now) {
                done.push((item.value.clone(), tick / 10));
                q.complete(&item.value, Outcome::Done, now);
            }
        }
        done
    }

    #[test]
    fn nodes_are_tainted_at_the_zone_rate() {
        let mut q = ZoneQueue::new(0.1);
        for n in ["a", "b", "c"] {
            assert!(q.add(n, "uid", ts(0)));
        }
        // Burst 1 then one every 10 s.
        assert_eq!(drive(&mut q, 0, 25), [("a".into(), 0), ("b".into(), 10), ("c".into(), 20)]);
        assert!(q.is_empty());
    }

    #[test]
    fn a_processed_node_is_not_queued_again_until_removed() {
        let mut q = ZoneQueue::new(1.0);
        q.add("a", "uid", ts(0));
        assert_eq!(drive(&mut q, 0, 1).len(), 1);
        assert!(!q.add("a", "uid", ts(2)), "seen: one taint per outage");
        assert!(q.remove("a"), "healthy again");
        assert!(q.add("a", "uid", ts(3)));
        assert!(!q.add("a", "uid", ts(3)), "already queued");
        assert_eq!(drive(&mut q, 3, 4), [("a".into(), 3)]);
    }

    #[test]
    fn a_zero_rate_never_taints() {
        let mut q = ZoneQueue::new(0.1);
        q.swap_limiter(0.0, ts(0));
        q.add("a", "uid", ts(0));
        assert!(drive(&mut q, 0, 600).is_empty());
        assert!(q.is_queued("a"));
        // The zone recovers: the never-limiter had no token, so the new
        // bucket starts drained and the first taint waits 1 / rate.
        q.swap_limiter(0.1, ts(601));
        assert_eq!(drive(&mut q, 601, 620), [("a".into(), 611)]);
    }

    #[test]
    fn the_secondary_rate_spaces_nodes_by_a_hundred_seconds() {
        let mut q = ZoneQueue::new(0.1);
        q.swap_limiter(0.01, ts(0));
        for n in ["a", "b"] {
            q.add(n, "uid", ts(0));
        }
        assert_eq!(drive(&mut q, 0, 150), [("a".into(), 0), ("b".into(), 100)]);
    }

    #[test]
    fn swapping_an_empty_bucket_gives_an_empty_bucket() {
        let mut q = ZoneQueue::new(0.1);
        q.add("a", "uid", ts(0));
        q.add("b", "uid", ts(0));
        assert_eq!(drive(&mut q, 0, 0).len(), 1);
        q.swap_limiter(0.2, ts(1));
        // Without the drain, b would go at 1 s; it goes 5 s later.
        assert_eq!(drive(&mut q, 1, 7), [("b".into(), 6)]);
        q.swap_limiter(0.2, ts(8));
        assert_eq!(q.qps(), 0.2);
    }

    #[test]
    fn a_failed_item_is_retried_after_its_wait_and_costs_tokens_meanwhile() {
        let mut q = ZoneQueue::new(10.0);
        q.add("a", "uid", ms(0));
        let item = q.next_due(ms(0)).unwrap();
        q.complete(&item.value, Outcome::Retry(Duration::from_millis(50)), ms(0));
        assert_eq!(q.next_due(ms(40)), None, "not due yet");
        assert_eq!(q.next_due(ms(60)), None, "due, but the check at 40 ms took the token");
        assert_eq!(q.next_due(ms(200)).map(|i| i.value), Some("a".into()));
    }

    #[test]
    fn removal_while_processing_is_harmless() {
        let mut q = ZoneQueue::new(1.0);
        q.add("a", "uid", ts(0));
        let item = q.next_due(ts(0)).unwrap();
        q.remove("a");
        q.complete(&item.value, Outcome::Retry(Duration::ZERO), ts(0));
        assert!(q.is_empty());
        assert!(q.add("a", "uid", ts(1)));
    }
}
