//! The work queue itself: a FIFO of keys with a dirty set and a processing set (client-go's
//! `Typed[T]`), plus the rate-limited entry points (`rateLimitingType`).
//!
//! The guarantees are client-go's:
//! - **Stingy**: a key added several times before a worker takes it is processed once, and a
//!   key is never handed to two workers at once. A key added while it is being processed is
//!   marked dirty and queued again when its worker calls [`WorkQueue::done`].
//! - **Fair**: keys are handed out in the order they were (first) added.
//! - **Shutdown**: after [`WorkQueue::shut_down`] adds are ignored, but keys already queued are
//!   still handed out; [`WorkQueue::get`] returns `None` only once the FIFO is empty.
//!
//! Delayed adds live in [`delaying`](super::delaying), limiters in
//! [`rate_limiter`](super::rate_limiter) and metric bookkeeping in [`metrics`](super::metrics).
//! This module owns the lock they all share.

use std::collections::{HashSet, VecDeque};
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use prometheus::Counter;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::metrics::{QueueMetrics, QueueMetricsState, unfinished_work_loop};
use super::rate_limiter::RateLimiter;
use super::waiting::{Next, Waiting, waiting_loop};

/// A rate-limited, delaying, deduplicating work queue of keys (usually `"namespace/name"`).
///
/// Cheap to clone: clones share one queue. Workers loop on [`get`](Self::get), process the key,
/// then call [`done`](Self::done) (always) and [`forget`](Self::forget) (on success) or
/// [`add_rate_limited`](Self::add_rate_limited) (on a retryable failure):
///
/// ```
/// # use kcm_runtime::workqueue::{WorkQueue, default_controller_rate_limiter};
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let queue = WorkQueue::new("deployment", default_controller_rate_limiter(), None);
/// queue.add("default/web".to_owned());
/// queue.shut_down();
/// while let Some(key) = queue.get().await {
///     let ok = !key.is_empty(); // sync the object here
///     if ok { queue.forget(&key) } else { queue.add_rate_limited(key.clone()) }
///     queue.done(&key);
/// }
/// # }
/// ```
#[doc(alias = "RateLimitingInterface")]
#[doc(alias = "TypedRateLimitingInterface")]
pub struct WorkQueue<K> {
    pub(super) shared: Arc<Shared<K>>,
}

impl<K> Clone for WorkQueue<K> {
    fn clone(&self) -> Self {
        Self { shared: Arc::clone(&self.shared) }
    }
}

impl<K> std::fmt::Debug for WorkQueue<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkQueue").field("name", &self.shared.name).finish_non_exhaustive()
    }
}

/// Everything the handles and the background tasks share.
pub(super) struct Shared<K> {
    /// The metrics label; empty for an unnamed queue (no metrics, as upstream).
    name: String,
    /// All queue state behind one lock, never held across an `.await`.
    state: Mutex<State<K>>,
    /// Wakes workers parked in `get`: one `notify_one` per key pushed to the FIFO, every waiter
    /// on shutdown.
    item_ready: Notify,
    /// Wakes `shut_down_with_drain` when the processing set empties or `shut_down` forces it.
    drained: Notify,
    /// Wakes the delaying loop: a new earliest key, shutdown, or the last handle dropped.
    pub(super) waiting_changed: Arc<Notify>,
    /// Consulted by `add_rate_limited`, `forget` and `num_requeues`; locks on its own.
    limiter: Box<dyn RateLimiter<K>>,
    /// `workqueue_retries_total{name}`, counted outside the state lock.
    pub(super) retries: Option<Counter>,
}

/// The state guarded by [`Shared::state`].
pub(super) struct State<K> {
    /// Keys in the order they will be handed out. Every key here is dirty and not processing.
    queue: VecDeque<K>,
    /// Keys that need processing: queued, or added again while being processed.
    dirty: HashSet<K>,
    /// Keys handed out and not yet `done`. May also be dirty.
    processing: HashSet<K>,
    /// Set by either shutdown; adds are ignored from then on.
    pub(super) shutting_down: bool,
    /// `shut_down_with_drain` is waiting for the processing set to empty; `shut_down` clears it.
    drain: bool,
    /// Keys waiting for an `add_after` instant.
    pub(super) waiting: Waiting<K>,
    /// Metric bookkeeping; `None` for unnamed queues or without a registry.
    pub(super) metrics: Option<QueueMetricsState<K>>,
}

// === impl WorkQueue ===

impl<K: Clone + Eq + Hash + Send + Sync + 'static> WorkQueue<K> {
    /// A queue named `name` whose [`add_rate_limited`](Self::add_rate_limited) asks `limiter`.
    ///
    /// With `metrics` and a non-empty `name`, the queue reports the `workqueue_*` metrics with
    /// label `name` and refreshes the unfinished-work gauges every 500 ms until it shuts down.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime: the delaying loop (and the metrics refresher) are spawned here.
    pub fn new(name: &str, limiter: impl RateLimiter<K> + 'static, metrics: Option<&QueueMetrics>) -> Self {
        let named = metrics.filter(|_| !name.is_empty()).map(|metrics| metrics.for_queue(name));
        let shared = Arc::new(Shared {
            name: name.to_owned(),
            state: Mutex::new(State {
                queue: VecDeque::new(),
                dirty: HashSet::new(),
                processing: HashSet::new(),
                shutting_down: false,
                drain: false,
                waiting: Waiting::new(),
                metrics: named.as_ref().map(QueueMetricsState::new),
            }),
            item_ready: Notify::new(),
            drained: Notify::new(),
            waiting_changed: Arc::new(Notify::new()),
            limiter: Box::new(limiter),
            retries: named.map(|named| named.retries),
        });
        let weak = Arc::downgrade(&shared);
        let promote_ready = move |now| weak.upgrade().map_or(Next::ShutDown, |shared| shared.promote_ready(now));
        tokio::spawn(waiting_loop(promote_ready, Arc::clone(&shared.waiting_changed)));
        if shared.retries.is_some() {
            let weak = Arc::downgrade(&shared);
            tokio::spawn(unfinished_work_loop(move |now| {
                let Some(shared) = weak.upgrade() else { return false };
                let state = shared.lock();
                if let Some(metrics) = state.metrics.as_ref().filter(|_| !state.shutting_down) {
                    metrics.update_unfinished_work(now);
                }
                !state.shutting_down
            }));
        }
        Self { shared }
    }

    /// The queue's name (the metrics label).
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// Marks `key` as needing processing.
    ///
    /// Ignored while shutting down, and a no-op if `key` is already dirty. If `key` is being
    /// processed it is queued only when its worker calls [`done`](Self::done).
    #[doc(alias = "Add")]
    pub fn add(&self, key: K) {
        let pushed = self.shared.lock().add(key, Instant::now());
        if pushed {
            self.shared.item_ready.notify_one();
        }
    }

    /// Waits for a key to process and moves it to the processing set.
    ///
    /// Returns `None` only when the queue is shutting down and no key is queued, so keys queued
    /// before shutdown are still handed out. Every key returned must be given back to
    /// [`done`](Self::done). Cancel-safe: dropping the future takes nothing from the queue.
    #[doc(alias = "Get")]
    pub async fn get(&self) -> Option<K> {
        loop {
            // Registered before looking at the FIFO so that no `add` in between is missed.
            let notified = self.shared.item_ready.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut state = self.shared.lock();
                if let Some(key) = state.queue.pop_front() {
                    state.dirty.remove(&key);
                    state.processing.insert(key.clone());
                    if let Some(metrics) = &mut state.metrics {
                        metrics.get(&key, Instant::now());
                    }
                    return Some(key);
                }
                if state.shutting_down {
                    return None;
                }
            }
            notified.await;
        }
    }

    /// Marks `key` as processed. If it was added again meanwhile, it is queued again.
    ///
    /// A key that is not being processed is ignored (client-go would queue it a second time
    /// if it was dirty).
    #[doc(alias = "Done")]
    pub fn done(&self, key: &K) {
        let mut state = self.shared.lock();
        if !state.processing.remove(key) {
            return;
        }
        if let Some(metrics) = &mut state.metrics {
            metrics.done(key, Instant::now());
        }
        let requeued = state.dirty.contains(key);
        if requeued {
            state.queue.push_back(key.clone());
        }
        let drained = state.processing.is_empty();
        if drained && state.dirty.is_empty() {
            state.release_idle_capacity();
        }
        drop(state);
        if requeued {
            self.shared.item_ready.notify_one();
        }
        if drained {
            self.shared.drained.notify_waiters();
        }
    }

    /// Number of keys queued and not yet handed out (keys dirty while processing are not
    /// counted; neither are keys waiting for an `add_after` instant). Informational only.
    #[doc(alias = "Len")]
    pub fn len(&self) -> usize {
        self.shared.lock().queue.len()
    }

    /// Whether [`len`](Self::len) is zero.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds `key` after the delay its rate limiter decides (see
    /// [`add_after`](Self::add_after)). The limiter is asked, and counts a failure, even while
    /// shutting down, as upstream.
    #[doc(alias = "AddRateLimited")]
    pub fn add_rate_limited(&self, key: K) {
        let delay = self.shared.limiter.when(&key);
        self.add_after(key, delay);
    }

    /// Tells the rate limiter that `key` is no longer retried (it succeeded, or the caller gave
    /// up). This only resets the backoff: [`done`](Self::done) must still be called.
    #[doc(alias = "Forget")]
    pub fn forget(&self, key: &K) {
        self.shared.limiter.forget(key);
    }

    /// How many times `key` was rate-limited since it was last forgotten.
    #[doc(alias = "NumRequeues")]
    pub fn num_requeues(&self, key: &K) -> u32 {
        self.shared.limiter.num_requeues(key)
    }

    /// Stops accepting keys and wakes every worker: they get the keys still queued, then
    /// `None`. Keys waiting for an `add_after` instant are dropped. Also ends a pending
    /// [`shut_down_with_drain`](Self::shut_down_with_drain) at once.
    #[doc(alias = "ShutDown")]
    pub fn shut_down(&self) {
        {
            let mut state = self.shared.lock();
            state.drain = false;
            state.begin_shutdown();
        }
        self.shared.wake_all();
    }

    /// Like [`shut_down`](Self::shut_down), then waits until every key handed out has been
    /// given back to [`done`](Self::done). Workers must keep calling `done` for this to return;
    /// a later `shut_down` makes it return at once.
    #[doc(alias = "ShutDownWithDrain")]
    pub async fn shut_down_with_drain(&self) {
        {
            let mut state = self.shared.lock();
            state.drain = true;
            state.begin_shutdown();
        }
        self.shared.wake_all();
        loop {
            let drained = self.shared.drained.notified();
            tokio::pin!(drained);
            drained.as_mut().enable();
            {
                let state = self.shared.lock();
                if state.processing.is_empty() || !state.drain {
                    return;
                }
            }
            drained.await;
        }
    }

    /// Whether either shutdown has been called.
    #[doc(alias = "ShuttingDown")]
    pub fn is_shutting_down(&self) -> bool {
        self.shared.lock().shutting_down
    }
}

// === impl Shared ===

impl<K> Shared<K> {
    /// Locks the state, carrying on if a previous holder panicked: every critical section
    /// leaves the sets consistent before it can call anything that might panic (user `Hash`).
    pub(super) fn lock(&self) -> MutexGuard<'_, State<K>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wakes every task that waits on a shutdown: workers, drainers and the delaying loop.
    fn wake_all(&self) {
        self.item_ready.notify_waiters();
        self.drained.notify_waiters();
        self.waiting_changed.notify_one();
    }
}

impl<K: Clone + Eq + Hash> Shared<K> {
    /// Adds every key whose `add_after` instant has come, and says what the delaying loop does
    /// next.
    pub(super) fn promote_ready(&self, now: Instant) -> Next {
        let mut pushed = 0;
        let next = {
            let mut state = self.lock();
            if state.shutting_down {
                return Next::ShutDown;
            }
            while let Some(key) = state.waiting.pop_ready(now) {
                if state.add(key, now) {
                    pushed += 1;
                }
            }
            state.waiting.next_ready_at().map_or(Next::Idle, Next::At)
        };
        for _ in 0..pushed {
            self.item_ready.notify_one();
        }
        next
    }
}

impl<K> Drop for Shared<K> {
    fn drop(&mut self) {
        // Lets the delaying loop notice that the queue is gone.
        self.waiting_changed.notify_one();
    }
}

// === impl State ===

impl<K: Clone + Eq + Hash> State<K> {
    /// client-go's `Add` under the lock. Returns whether `key` was pushed to the FIFO (the
    /// caller then wakes one worker).
    pub(super) fn add(&mut self, key: K, now: Instant) -> bool {
        if self.shutting_down || self.dirty.contains(&key) {
            return false;
        }
        if let Some(metrics) = &mut self.metrics {
            metrics.add(&key, now);
        }
        self.dirty.insert(key.clone());
        if self.processing.contains(&key) {
            return false;
        }
        self.queue.push_back(key);
        true
    }

    /// Capacity a drained queue keeps; beyond it, a burst's tables are
    /// given back (a start-up burst of one key per cached pod would
    /// otherwise stay allocated for the life of the process).
    const IDLE_CAPACITY: usize = 1024;

    /// Gives back the capacity of a drained queue's sets beyond
    /// [`Self::IDLE_CAPACITY`]. Called with nothing queued, dirty or
    /// processing.
    fn release_idle_capacity(&mut self) {
        if self.dirty.capacity() > Self::IDLE_CAPACITY {
            self.queue.shrink_to(Self::IDLE_CAPACITY);
            self.dirty.shrink_to(Self::IDLE_CAPACITY);
            self.processing.shrink_to(Self::IDLE_CAPACITY);
            if let Some(metrics) = &mut self.metrics {
                metrics.shrink_to(Self::IDLE_CAPACITY);
            }
        }
    }
}

impl<K> State<K> {
    fn begin_shutdown(&mut self) {
        self.shutting_down = true;
        self.waiting.clear();
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::workqueue::rate_limiter::{ItemExponentialFailureRateLimiter, MaxOfRateLimiter};

    const MS: Duration = Duration::from_millis(1);

    fn queue() -> WorkQueue<&'static str> {
        WorkQueue::new("", MaxOfRateLimiter::new(Vec::new()), None)
    }

    /// Polls `fut` once: `Some` if it completed.
    fn now_or_never<F: std::future::Future>(fut: F) -> Option<F::Output> {
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        let mut fut = std::pin::pin!(fut);
        match fut.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(out) => Some(out),
            std::task::Poll::Pending => None,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn duplicates_collapse_and_order_is_fifo() {
        let q = queue();
        for key in ["a", "b", "a", "c", "b"] {
            q.add(key);
        }
        assert_eq!(q.len(), 3);
        for expected in ["a", "b", "c"] {
            assert_eq!(q.get().await, Some(expected));
        }
        assert!(q.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn key_added_while_processing_waits_for_done() {
        let q = queue();
        q.add("a");
        assert_eq!(q.get().await, Some("a"));
        q.add("a");
        q.add("a");
        assert_eq!(q.len(), 0, "not queued while processing");
        assert_eq!(now_or_never(q.get()), None, "a second worker does not get it");
        q.done(&"a");
        assert_eq!(q.len(), 1, "queued once on done");
        assert_eq!(q.get().await, Some("a"));
        q.done(&"a");
        assert_eq!(q.len(), 0, "processed again exactly once");
    }

    #[tokio::test(start_paused = true)]
    async fn a_drained_queue_gives_back_what_a_burst_of_keys_took() {
        let q = WorkQueue::new("", MaxOfRateLimiter::new(Vec::new()), None);
        for key in 0..10_000u32 {
            q.add(key);
        }
        while let Some(key) = now_or_never(q.get()).flatten() {
            q.done(&key);
        }
        let state = q.shared.lock();
        assert!(state.queue.is_empty() && state.dirty.is_empty() && state.processing.is_empty());
        assert!(state.dirty.capacity() < 10_000, "dirty keeps room for {} keys", state.dirty.capacity());
        assert!(state.queue.capacity() < 10_000, "the FIFO keeps room for {} keys", state.queue.capacity());
    }

    #[tokio::test(start_paused = true)]
    async fn done_without_re_add_does_not_requeue() {
        let q = queue();
        q.add("a");
        assert_eq!(q.get().await, Some("a"));
        q.done(&"a");
        assert!(q.is_empty());
        q.done(&"a");
        q.done(&"never-added");
        assert!(q.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn waiting_worker_is_woken_by_add() {
        let q = queue();
        let worker = tokio::spawn({
            let q = q.clone();
            async move { q.get().await }
        });
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert!(!worker.is_finished());
        q.add("a");
        assert_eq!(worker.await.unwrap(), Some("a"));
    }

    #[tokio::test(start_paused = true)]
    async fn shutdown_hands_out_remaining_keys_then_none() {
        let q = queue();
        q.add("a");
        q.add("b");
        q.shut_down();
        assert!(q.is_shutting_down());
        q.add("c");
        assert_eq!(q.get().await, Some("a"));
        assert_eq!(q.get().await, Some("b"));
        assert_eq!(q.get().await, None);
        assert_eq!(q.get().await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn shutdown_wakes_every_waiting_worker() {
        let q = queue();
        let workers: Vec<_> = (0..4)
            .map(|_| {
                let q = q.clone();
                tokio::spawn(async move { q.get().await })
            })
            .collect();
        tokio::task::yield_now().await;
        q.shut_down();
        for worker in workers {
            assert_eq!(worker.await.unwrap(), None);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn dirty_key_is_requeued_on_done_after_shutdown() {
        let q = queue();
        q.add("a");
        assert_eq!(q.get().await, Some("a"));
        q.add("a");
        q.shut_down();
        q.done(&"a");
        assert_eq!(q.get().await, Some("a"), "the re-add before shutdown is honoured");
        q.done(&"a");
        assert_eq!(q.get().await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn drain_waits_for_processing_to_empty() {
        let q = queue();
        q.add("a");
        q.add("b");
        assert_eq!(q.get().await, Some("a"));
        let drain = tokio::spawn({
            let q = q.clone();
            async move { q.shut_down_with_drain().await }
        });
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(!drain.is_finished());
        assert_eq!(q.get().await, Some("b"));
        q.done(&"a");
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(!drain.is_finished(), "b still processing");
        q.done(&"b");
        drain.await.unwrap();
        assert_eq!(q.get().await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn drain_returns_when_processing_empties_even_if_a_key_is_requeued() {
        let q = queue();
        q.add("a");
        assert_eq!(q.get().await, Some("a"));
        q.add("a");
        let drain = tokio::spawn({
            let q = q.clone();
            async move { q.shut_down_with_drain().await }
        });
        tokio::task::yield_now().await;
        q.done(&"a");
        drain.await.unwrap();
        assert_eq!(q.get().await, Some("a"), "the requeued key is still handed out");
    }

    #[tokio::test(start_paused = true)]
    async fn background_tasks_end_with_the_queue() {
        let alive = || tokio::runtime::Handle::current().metrics().num_alive_tasks();
        let registry = prometheus::Registry::new();
        let metrics = crate::workqueue::QueueMetrics::register(&registry).unwrap();
        let named = WorkQueue::new("named", MaxOfRateLimiter::<&str>::new(Vec::new()), Some(&metrics));
        assert_eq!(alive(), 2, "delaying loop and unfinished-work refresher");
        named.shut_down();
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(alive(), 0, "both end on shutdown");

        let dropped = queue();
        dropped.add_after("a", Duration::from_secs(10));
        assert_eq!(alive(), 1);
        drop(dropped);
        tokio::task::yield_now().await;
        assert_eq!(alive(), 0, "the delaying loop ends when the last handle is dropped");
    }

    #[tokio::test(start_paused = true)]
    async fn drain_returns_at_once_when_idle() {
        let q = queue();
        q.shut_down_with_drain().await;
        assert!(q.is_shutting_down());
    }

    #[tokio::test(start_paused = true)]
    async fn shut_down_forces_a_pending_drain() {
        let q = queue();
        q.add("a");
        assert_eq!(q.get().await, Some("a"));
        let drain = tokio::spawn({
            let q = q.clone();
            async move { q.shut_down_with_drain().await }
        });
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(!drain.is_finished());
        q.shut_down();
        drain.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn cancelled_get_loses_nothing() {
        let q = queue();
        let first = tokio::spawn({
            let q = q.clone();
            async move { q.get().await }
        });
        let second = tokio::spawn({
            let q = q.clone();
            async move { q.get().await }
        });
        tokio::task::yield_now().await;
        first.abort();
        q.add("a");
        assert_eq!(second.await.unwrap(), Some("a"));
    }

    #[tokio::test(start_paused = true)]
    async fn rate_limited_adds_back_off_and_forget_resets() {
        let q = WorkQueue::new("", ItemExponentialFailureRateLimiter::new(5 * MS, Duration::from_secs(1000)), None);
        let start = Instant::now();
        q.add_rate_limited("a");
        q.add_rate_limited("a");
        assert_eq!(q.num_requeues(&"a"), 2);
        assert_eq!(q.get().await, Some("a"));
        assert_eq!(start.elapsed(), 5 * MS, "earlier of 5 ms and 10 ms wins");
        q.done(&"a");
        q.add_rate_limited("a");
        assert_eq!(q.get().await, Some("a"));
        assert_eq!(start.elapsed(), 25 * MS, "third failure waits 20 ms");
        q.forget(&"a");
        q.done(&"a");
        assert_eq!(q.num_requeues(&"a"), 0);
        q.add_rate_limited("a");
        assert_eq!(q.get().await, Some("a"));
        assert_eq!(start.elapsed(), 30 * MS, "back to 5 ms after forget");
    }

    #[tokio::test(start_paused = true)]
    async fn rate_limiter_is_asked_even_when_shutting_down() {
        let q = WorkQueue::new("", ItemExponentialFailureRateLimiter::new(5 * MS, Duration::from_secs(1)), None);
        q.shut_down();
        q.add_rate_limited("a");
        assert_eq!(q.num_requeues(&"a"), 1);
        assert_eq!(q.num_waiting(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn clones_share_the_queue() {
        let q = queue();
        let other = q.clone();
        other.add("a");
        assert_eq!(q.len(), 1);
        assert_eq!(format!("{q:?}"), "WorkQueue { name: \"\", .. }");
    }
}
