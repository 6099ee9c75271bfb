//! client-go's workqueue, rewritten for async Rust.
//!
//! Controllers turn watch events into keys (`"namespace/name"`), [`add`](WorkQueue::add) them,
//! and run workers that loop on [`get`](WorkQueue::get) / [`done`](WorkQueue::done). The queue
//! keeps client-go's contract exactly: duplicates collapse, a key is never held by two workers,
//! a key added while being processed is processed again afterwards, failed keys come back after
//! a per-key exponential backoff bounded by an overall token bucket, and shutdown can drain.
//!
//! # Layout
//!
//! - [`queue`]: [`WorkQueue`], the FIFO + dirty set + processing set, shutdown and drain, and
//!   the rate-limited entry points.
//! - [`delaying`]: the delayed adds, [`WorkQueue::add_after`].
//! - `waiting`: the heap of keys waiting for their instant, and the background task that adds
//!   them when it comes.
//! - [`rate_limiter`]: the [`RateLimiter`] trait, per-key exponential backoff, the token bucket,
//!   max-of, and the controllers' default combinations.
//! - [`metrics`]: the `workqueue_*` Prometheus metrics, labelled by queue `name`.
//!
//! Time is `tokio::time`, so tests run on a paused clock.

pub mod delaying;
pub mod metrics;
pub mod queue;
pub mod rate_limiter;
mod waiting;

pub use metrics::{Error, QueueMetrics, Result};
pub use queue::WorkQueue;
pub use rate_limiter::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter, RateLimiter,
    default_controller_rate_limiter, namespace_controller_rate_limiter,
};

#[cfg(test)]
mod proptests {
    //! Property tests: random schedules of a producer and several workers, checked against
    //! client-go's contract.
    //!
    //! Every case runs on a fresh current-thread runtime with a paused clock, so a schedule is
    //! replayed exactly. A model records every add request and every hand-out and checks:
    //! - **exclusive**: a key is never held by two workers at once;
    //! - **no spurious hand-out**: each hand-out of a key is justified by an add of that key after
    //!   its previous hand-out (an add while it is processed counts: client-go processes it again);
    //! - **nothing lost**: once the queue is idle, every add was followed by a hand-out, except a
    //!   delayed add superseded by an earlier-ready delayed add of the same key (client-go keeps
    //!   the earlier instant).
    //!
    //! Immediate adds are ordered exactly by a sequence number. A delayed add takes effect inside
    //! the queue's loop at `issued + delay`, which the model only knows to the instant, so its
    //! window check is inclusive of both ends.

    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use proptest::prelude::*;
    use tokio::time::Instant;

    use super::rate_limiter::{MaxOfRateLimiter, RateLimiter, default_controller_rate_limiter};
    use super::{QueueMetrics, WorkQueue};

    // === utils ===

    type Key = u8;

    /// One producer step.
    #[derive(Clone, Debug)]
    enum Op {
        Add(Key),
        AddAfter(Key, u64),
        AddRateLimited(Key),
        Forget(Key),
        Sleep(u64),
        Yield,
    }

    /// What a worker does with its n-th key after "processing" it.
    #[derive(Clone, Copy, Debug)]
    enum Outcome {
        /// `forget` then `done`.
        Success,
        /// `add_rate_limited` then `done`.
        Retry,
        /// Only `done`.
        Plain,
    }

    #[derive(Clone, Debug)]
    struct Worker {
        /// Processing time of the n-th key (cycled).
        work_ms: Vec<u64>,
        /// Outcome of the n-th key; every key after these succeeds, so the run settles.
        outcomes: Vec<Outcome>,
    }

    #[derive(Debug)]
    struct Request {
        seq: u64,
        issued: Instant,
        effective: Instant,
        delayed: bool,
        claimed: bool,
    }

    #[derive(Clone, Copy, Debug)]
    struct HandOut {
        seq: u64,
        at: Instant,
    }

    #[derive(Default)]
    struct Model {
        seq: u64,
        holders: HashMap<Key, usize>,
        requests: HashMap<Key, Vec<Request>>,
        hand_outs: HashMap<Key, Vec<HandOut>>,
        latest_effective: Option<Instant>,
        violations: Vec<String>,
    }

    impl Model {
        fn next_seq(&mut self) -> u64 {
            self.seq += 1;
            self.seq
        }

        fn request(&mut self, key: Key, delay: Duration) {
            let seq = self.next_seq();
            let issued = Instant::now();
            let effective = issued + delay;
            self.latest_effective = self.latest_effective.max(Some(effective));
            let delayed = !delay.is_zero();
            self.requests.entry(key).or_default().push(Request { seq, issued, effective, delayed, claimed: false });
        }

        fn hand_out(&mut self, worker: usize, key: Key) {
            let seq = self.next_seq();
            let at = Instant::now();
            if let Some(other) = self.holders.insert(key, worker) {
                self.violations.push(format!("key {key} handed to worker {worker} while worker {other} holds it"));
            }
            let previous = self.hand_outs.get(&key).and_then(|h| h.last().copied());
            let requests = self.requests.entry(key).or_default();
            // An immediate add in the window can justify only this hand-out: take it first.
            // Otherwise take the earliest delayed one, which later windows are least likely to need.
            let immediate = requests
                .iter()
                .position(|r| !r.claimed && !r.delayed && previous.is_none_or(|p| r.seq > p.seq) && r.seq < seq);
            let delayed = || {
                requests
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| {
                        !r.claimed && r.delayed && previous.is_none_or(|p| r.effective >= p.at) && r.effective <= at
                    })
                    .min_by_key(|(_, r)| (r.effective, r.seq))
                    .map(|(i, _)| i)
            };
            match immediate.or_else(delayed) {
                Some(i) => requests[i].claimed = true,
                None => {
                    self.violations.push(format!("key {key} handed out at seq {seq} without an add since the last"))
                }
            }
            self.hand_outs.entry(key).or_default().push(HandOut { seq, at });
        }

        fn release(&mut self, key: Key) {
            self.holders.remove(&key);
        }

        /// Once the queue is idle: every add of every key came before its last hand-out, or was a
        /// delayed add absorbed by an earlier-ready delayed add of the same key that was waiting at
        /// the same time (client-go keeps only the earlier instant).
        fn check_nothing_lost(&mut self) {
            for (key, requests) in &self.requests {
                let last_hand_out = self.hand_outs.get(key).and_then(|h| h.last().copied());
                let mut covered: Vec<bool> = requests
                    .iter()
                    .map(|r| last_hand_out.is_some_and(|h| if r.delayed { r.effective <= h.at } else { r.seq < h.seq }))
                    .collect();
                let absorbs = |s: &Request, r: &Request| {
                    s.delayed
                        && r.delayed
                        && s.effective <= r.effective
                        && ((r.issued <= s.issued && s.issued <= r.effective)
                            || (s.issued <= r.issued && r.issued <= s.effective))
                };
                let mut changed = true;
                while changed {
                    changed = false;
                    for (i, r) in requests.iter().enumerate() {
                        if !covered[i]
                            && requests.iter().enumerate().any(|(j, s)| j != i && covered[j] && absorbs(s, r))
                        {
                            covered[i] = true;
                            changed = true;
                        }
                    }
                }
                for (request, covered) in requests.iter().zip(covered) {
                    if !covered {
                        self.violations.push(format!("key {key}: add {request:?} never processed"));
                    }
                }
            }
        }
    }

    /// The default controller limiter, remembering the delay it last returned so the model knows
    /// when a rate-limited add takes effect.
    struct Recording {
        inner: MaxOfRateLimiter<Key>,
        last: Mutex<Duration>,
    }

    impl RateLimiter<Key> for Recording {
        fn when(&self, item: &Key) -> Duration {
            let delay = self.inner.when(item);
            *self.last.lock().unwrap() = delay;
            delay
        }
        fn forget(&self, item: &Key) {
            self.inner.forget(item);
        }
        fn num_requeues(&self, item: &Key) -> u32 {
            self.inner.num_requeues(item)
        }
    }

    fn add_rate_limited(queue: &WorkQueue<Key>, limiter: &Recording, model: &Mutex<Model>, key: Key) {
        queue.add_rate_limited(key);
        let delay = *limiter.last.lock().unwrap();
        model.lock().unwrap().request(key, delay);
    }

    async fn run_worker(
        id: usize,
        plan: Worker,
        queue: WorkQueue<Key>,
        limiter: Arc<Recording>,
        model: Arc<Mutex<Model>>,
    ) -> usize {
        let mut n = 0;
        while let Some(key) = queue.get().await {
            if n == MAX_HAND_OUTS {
                model.lock().unwrap().violations.push(format!("worker {id} was handed {MAX_HAND_OUTS} keys"));
                return n;
            }
            model.lock().unwrap().hand_out(id, key);
            let work = plan.work_ms[n % plan.work_ms.len()];
            tokio::time::sleep(Duration::from_millis(work)).await;
            tokio::task::yield_now().await;
            model.lock().unwrap().release(key);
            match plan.outcomes.get(n).copied().unwrap_or(Outcome::Success) {
                Outcome::Success => queue.forget(&key),
                Outcome::Retry => add_rate_limited(&queue, &limiter, &model, key),
                Outcome::Plain => {}
            }
            queue.done(&key);
            n += 1;
        }
        n
    }

    async fn run_schedule(ops: Vec<Op>, workers: Vec<Worker>) -> Vec<String> {
        let limiter =
            Arc::new(Recording { inner: default_controller_rate_limiter(), last: Mutex::new(Duration::ZERO) });
        let metrics = QueueMetrics::new().unwrap();
        let queue = WorkQueue::new("prop", Arc::clone(&limiter), Some(&metrics));
        let model = Arc::new(Mutex::new(Model::default()));
        let handles: Vec<_> = workers
            .into_iter()
            .enumerate()
            .map(|(id, plan)| {
                tokio::spawn(run_worker(id, plan, queue.clone(), Arc::clone(&limiter), Arc::clone(&model)))
            })
            .collect();

        for op in ops {
            match op {
                Op::Add(key) => {
                    queue.add(key);
                    model.lock().unwrap().request(key, Duration::ZERO);
                }
                Op::AddAfter(key, ms) => {
                    let delay = Duration::from_millis(ms);
                    queue.add_after(key, delay);
                    model.lock().unwrap().request(key, delay);
                }
                Op::AddRateLimited(key) => add_rate_limited(&queue, &limiter, &model, key),
                Op::Forget(key) => queue.forget(&key),
                Op::Sleep(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
                Op::Yield => tokio::task::yield_now().await,
            }
        }

        // Settle: wait past every effective instant (workers may add more) until the queue is idle.
        for round in 0.. {
            if round == SETTLE_ROUNDS {
                for handle in &handles {
                    handle.abort();
                }
                let mut violations = std::mem::take(&mut model.lock().unwrap().violations);
                violations.push(format!("queue still busy after {SETTLE_ROUNDS} settle rounds"));
                return violations;
            }
            let latest = model.lock().unwrap().latest_effective;
            let target = latest.map_or(Instant::now(), |l| l.max(Instant::now())) + Duration::from_millis(1);
            tokio::time::sleep_until(target).await;
            let idle = model.lock().unwrap().holders.is_empty() && queue.is_empty() && queue.num_waiting() == 0;
            let latest_now = model.lock().unwrap().latest_effective;
            if idle && latest_now.is_none_or(|l| l < Instant::now()) {
                break;
            }
        }
        queue.shut_down();
        let mut handed_out = 0;
        for handle in handles {
            handed_out += handle.await.unwrap();
        }

        let mut model = Arc::try_unwrap(model).ok().unwrap().into_inner().unwrap();
        model.check_nothing_lost();
        let total: usize = model.hand_outs.values().map(Vec::len).sum();
        if total != handed_out {
            model.violations.push(format!("model saw {total} hand-outs, workers {handed_out}"));
        }
        model.violations
    }

    /// Bound on one worker's hand-outs: far above what a schedule produces (it adds at most ~100
    /// keys), it stops a queue that requeues forever from spinning without letting time advance.
    const MAX_HAND_OUTS: usize = 2000;

    /// Bound on the settle loop: a queue that keeps handing keys out is a failure, not a hang.
    const SETTLE_ROUNDS: usize = 1000;

    fn op() -> impl Strategy<Value = Op> {
        let key = 0..5u8;
        prop_oneof![
            4 => key.clone().prop_map(Op::Add),
            2 => (key.clone(), 0..60u64).prop_map(|(k, ms)| Op::AddAfter(k, ms)),
            2 => key.clone().prop_map(Op::AddRateLimited),
            1 => key.prop_map(Op::Forget),
            2 => (0..20u64).prop_map(Op::Sleep),
            2 => Just(Op::Yield),
        ]
    }

    fn worker() -> impl Strategy<Value = Worker> {
        let outcome = prop_oneof![Just(Outcome::Success), Just(Outcome::Retry), Just(Outcome::Plain)];
        (prop::collection::vec(0..15u64, 1..5), prop::collection::vec(outcome, 0..8))
            .prop_map(|(work_ms, outcomes)| Worker { work_ms, outcomes })
    }

    fn paused_runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().unwrap()
    }

    // === tests ===

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn schedules_respect_the_contract(
            ops in prop::collection::vec(op(), 0..80),
            workers in prop::collection::vec(worker(), 1..5),
        ) {
            let violations = paused_runtime().block_on(run_schedule(ops, workers));
            prop_assert!(violations.is_empty(), "{violations:#?}");
        }
    }

    /// Real threads, no paused clock: many workers hammering few keys never share one, and every
    /// key's last add is processed.
    #[test]
    fn multi_thread_workers_never_share_a_key() {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap();
        runtime.block_on(async {
            let queue = WorkQueue::new("", MaxOfRateLimiter::new(Vec::new()), None);
            let holders = Arc::new(Mutex::new(HashMap::<u32, usize>::new()));
            let pending = Arc::new(Mutex::new(HashMap::<u32, bool>::new()));
            let workers: Vec<_> = (0..8)
                .map(|id| {
                    let (queue, holders, pending) = (queue.clone(), Arc::clone(&holders), Arc::clone(&pending));
                    tokio::spawn(async move {
                        while let Some(key) = queue.get().await {
                            assert!(holders.lock().unwrap().insert(key, id).is_none(), "key {key} held twice");
                            pending.lock().unwrap().insert(key, false);
                            tokio::task::yield_now().await;
                            holders.lock().unwrap().remove(&key);
                            queue.done(&key);
                        }
                    })
                })
                .collect();
            for i in 0..20_000u32 {
                let key = i % 37;
                // Marked before the add: a worker that takes the key clears the mark afterwards.
                pending.lock().unwrap().insert(key, true);
                queue.add(key);
                if i % 64 == 0 {
                    tokio::task::yield_now().await;
                }
            }
            queue.shut_down_with_drain().await;
            queue.shut_down();
            for worker in workers {
                worker.await.unwrap();
            }
            let lost: Vec<_> = pending.lock().unwrap().iter().filter(|(_, p)| **p).map(|(k, _)| *k).collect();
            assert!(lost.is_empty(), "keys added but never processed afterwards: {lost:?}");
        });
    }
}
