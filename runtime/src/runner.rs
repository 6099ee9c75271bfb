//! Worker pools: the loop that takes keys off a controller's workqueue and
//! syncs them, as upstream's `processNextWorkItem` does.
//!
//! Each controller gets `workers` tasks over its own [`WorkQueue`]. A worker
//! takes a key, runs the controller's [`Reconcile::sync`] on it, then:
//! - success: `forget` the key (its backoff resets), and `add_after` it when
//!   the sync asked to be run again later;
//! - error: requeue it rate-limited, until the controller's `max_retries`
//!   (upstream's per-controller limit), after which the key is dropped and
//!   forgotten, as upstream does;
//! - panic: caught, logged with the key, counted, and the key requeued
//!   rate-limited: one bad object never takes the process down;
//! - in every case `done`, so a key re-added meanwhile is synced again.
//!
//! Workers start only once the controller's caches have synced (the caller
//! awaits that before [`run`]), and stop on shutdown after the syncs in
//! flight finish, bounded by a grace period.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry};
use tokio::time::Instant;

use crate::workqueue::WorkQueue;

/// What a successful sync asks of its worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Nothing more until something changes.
    Done,
    /// Sync the key again after this long (e.g. `minReadySeconds`, a
    /// progress deadline).
    After(Duration),
}

/// A sync that failed: the key is retried with backoff.
pub type SyncError = Box<dyn std::error::Error + Send + Sync>;

/// A controller's per-key sync, as its driver implements it (read the
/// caches, ask the core, perform its answer), written as an `async fn`.
pub trait Reconcile: Send + Sync + 'static {
    /// Brings the object named by `key` to its desired state.
    fn sync(&self, key: &str) -> impl Future<Output = Result<Next, SyncError>> + Send;
}

/// How a controller's worker pool runs.
#[derive(Debug, Clone)]
pub struct PoolConfig {
    /// Upstream's controller name (metric label, logs).
    pub controller: &'static str,
    /// Number of workers (`--concurrent-*-syncs`).
    pub workers: usize,
    /// Failed syncs of one key retried before the key is dropped; `None`
    /// retries forever.
    pub max_retries: Option<u32>,
    /// How long shutdown waits for syncs in flight.
    pub drain_timeout: Duration,
}

/// Per-controller sync metrics.
#[derive(Debug, Clone)]
pub struct SyncMetrics {
    syncs: IntCounterVec,
    duration: HistogramVec,
}

impl SyncMetrics {
    /// Registers `kcm_controller_syncs_total{controller,result}` (result:
    /// `success`, `error`, `panic`, `dropped`) and
    /// `kcm_controller_sync_duration_seconds{controller}`.
    pub fn register(registry: &Registry) -> prometheus::Result<Self> {
        let syncs = IntCounterVec::new(
            Opts::new("kcm_controller_syncs_total", "Syncs run by each controller, by result."),
            &["controller", "result"],
        )?;
        let duration = HistogramVec::new(
            HistogramOpts::new("kcm_controller_sync_duration_seconds", "How long each controller's syncs take.")
                .buckets(prometheus::exponential_buckets(0.001, 2.0, 16)?),
            &["controller"],
        )?;
        registry.register(Box::new(syncs.clone()))?;
        registry.register(Box::new(duration.clone()))?;
        Ok(SyncMetrics { syncs, duration })
    }
}

/// Runs `config.workers` workers over `queue` until `stop` completes, then
/// shuts the queue down, waits (up to `drain_timeout`) for the syncs in
/// flight, and returns.
pub async fn run<S: Reconcile>(
    queue: WorkQueue<String>,
    sync: Arc<S>,
    config: PoolConfig,
    metrics: SyncMetrics,
    stop: impl Future<Output = ()>,
) {
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..config.workers.max(1) {
        workers.spawn(worker(queue.clone(), sync.clone(), config.clone(), metrics.clone()));
    }
    stop.await;
    tracing::info!(controller = config.controller, "stopping workers");
    if tokio::time::timeout(config.drain_timeout, queue.shut_down_with_drain()).await.is_err() {
        tracing::warn!(controller = config.controller, "syncs still running after the drain timeout");
        queue.shut_down();
    }
    workers.abort_all();
    while workers.join_next().await.is_some() {}
}

async fn worker<S: Reconcile>(queue: WorkQueue<String>, sync: Arc<S>, config: PoolConfig, metrics: SyncMetrics) {
    let controller = config.controller;
    while let Some(key) = queue.get().await {
        let started = Instant::now();
        // Boxed: a worker lives as long as its controller, and its task would
        // otherwise keep room for the largest sync future all that time.
        let outcome = AssertUnwindSafe(Box::pin(sync.sync(&key))).catch_unwind().await;
        metrics.duration.with_label_values(&[controller]).observe(started.elapsed().as_secs_f64());
        let result = match outcome {
            Ok(Ok(next)) => {
                queue.forget(&key);
                if let Next::After(delay) = next {
                    queue.add_after(key.clone(), delay);
                }
                "success"
            }
            Ok(Err(error)) => {
                let retries = queue.num_requeues(&key);
                if config.max_retries.is_some_and(|max| retries >= max) {
                    tracing::warn!(controller, %key, %error, retries, "dropping key out of the queue");
                    queue.forget(&key);
                    "dropped"
                } else {
                    tracing::info!(controller, %key, %error, "sync failed; retrying with backoff");
                    queue.add_rate_limited(key.clone());
                    "error"
                }
            }
            Err(panic) => {
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "non-string panic payload".to_owned());
                tracing::error!(controller, %key, panic = %message, "sync panicked; retrying with backoff");
                queue.add_rate_limited(key.clone());
                "panic"
            }
        };
        metrics.syncs.with_label_values(&[controller, result]).inc();
        // Upstream's controllers log this at -v=4.
        tracing::debug!(controller, %key, result, elapsed = ?started.elapsed(), "Finished syncing");
        queue.done(&key);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Mutex;

    use super::*;
    use crate::workqueue::default_controller_rate_limiter;

    /// Fails or panics on demand and records every sync.
    #[derive(Default)]
    struct Scripted {
        /// Per key: remaining failures (negative: panics) before success.
        script: Mutex<HashMap<String, i32>>,
        /// Keys synced, in order.
        seen: Mutex<Vec<String>>,
        /// Ask for a later sync once.
        later: Mutex<Option<(String, Duration)>>,
    }

    impl Reconcile for Scripted {
        async fn sync(&self, key: &str) -> Result<Next, SyncError> {
            self.seen.lock().unwrap().push(key.to_owned());
            let left = self.script.lock().unwrap().get(key).copied().unwrap_or(0);
            if left < 0 {
                self.script.lock().unwrap().insert(key.to_owned(), left + 1);
                panic!("boom on {key}");
            }
            if left > 0 {
                self.script.lock().unwrap().insert(key.to_owned(), left - 1);
                return Err("transient".into());
            }
            if let Some((k, d)) = self.later.lock().unwrap().take_if(|(k, _)| k == key) {
                return Ok(Next::After(d)).inspect(|_| drop(k));
            }
            Ok(Next::Done)
        }
    }

    fn metric(registry: &Registry, result: &str) -> u64 {
        registry
            .gather()
            .iter()
            .filter(|f| f.name() == "kcm_controller_syncs_total")
            .flat_map(|f| f.get_metric().iter())
            .filter(|m| m.get_label().iter().any(|l| l.value() == result))
            .map(|m| m.get_counter().get_value() as u64)
            .sum()
    }

    fn config(max_retries: Option<u32>) -> PoolConfig {
        PoolConfig { controller: "test-controller", workers: 2, max_retries, drain_timeout: Duration::from_secs(5) }
    }

    async fn settle(sync: &Scripted, expected: usize) {
        for _ in 0..10_000 {
            if sync.seen.lock().unwrap().len() >= expected {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("only {:?} synced", sync.seen.lock().unwrap());
    }

    #[tokio::test(start_paused = true)]
    async fn a_panicking_sync_is_caught_counted_and_retried() {
        let registry = Registry::new();
        let metrics = SyncMetrics::register(&registry).unwrap();
        let queue = WorkQueue::new("test", default_controller_rate_limiter(), None);
        let sync = Arc::new(Scripted::default());
        sync.script.lock().unwrap().insert("ns/bad".into(), -2);
        queue.add("ns/bad".to_owned());
        queue.add("ns/good".to_owned());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let pool = tokio::spawn(run(queue.clone(), sync.clone(), config(None), metrics, async {
            let _ = rx.await;
        }));
        settle(&sync, 4).await;
        let seen = sync.seen.lock().unwrap().clone();
        assert_eq!(seen.iter().filter(|k| *k == "ns/bad").count(), 3, "two panics then a success: {seen:?}");
        assert_eq!(metric(&registry, "panic"), 2);
        assert_eq!(metric(&registry, "success"), 2);
        assert_eq!(queue.num_requeues(&"ns/bad".to_owned()), 0, "success forgets the backoff");
        tx.send(()).unwrap();
        pool.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn errors_are_retried_until_max_retries_then_dropped() {
        let registry = Registry::new();
        let metrics = SyncMetrics::register(&registry).unwrap();
        let queue = WorkQueue::new("test", default_controller_rate_limiter(), None);
        let sync = Arc::new(Scripted::default());
        sync.script.lock().unwrap().insert("ns/flaky".into(), 100);
        queue.add("ns/flaky".to_owned());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let pool = tokio::spawn(run(queue.clone(), sync.clone(), config(Some(3)), metrics, async {
            let _ = rx.await;
        }));
        settle(&sync, 4).await;
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert_eq!(sync.seen.lock().unwrap().len(), 4, "the first sync and three retries, then dropped");
        assert_eq!(metric(&registry, "error"), 3);
        assert_eq!(metric(&registry, "dropped"), 1);
        tx.send(()).unwrap();
        pool.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_sync_asking_for_later_runs_again_after_that_delay() {
        let registry = Registry::new();
        let metrics = SyncMetrics::register(&registry).unwrap();
        let queue = WorkQueue::new("test", default_controller_rate_limiter(), None);
        let sync = Arc::new(Scripted::default());
        *sync.later.lock().unwrap() = Some(("ns/slow".into(), Duration::from_secs(30)));
        queue.add("ns/slow".to_owned());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let pool = tokio::spawn(run(queue.clone(), sync.clone(), config(None), metrics, async {
            let _ = rx.await;
        }));
        settle(&sync, 1).await;
        tokio::time::sleep(Duration::from_secs(29)).await;
        assert_eq!(sync.seen.lock().unwrap().len(), 1, "not before the delay");
        settle(&sync, 2).await;
        tx.send(()).unwrap();
        pool.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn shutdown_waits_for_the_sync_in_flight() {
        struct Slow(Arc<Mutex<bool>>);
        impl Reconcile for Slow {
            async fn sync(&self, _key: &str) -> Result<Next, SyncError> {
                tokio::time::sleep(Duration::from_secs(2)).await;
                *self.0.lock().unwrap() = true;
                Ok(Next::Done)
            }
        }
        let registry = Registry::new();
        let metrics = SyncMetrics::register(&registry).unwrap();
        let queue = WorkQueue::new("test", default_controller_rate_limiter(), None);
        let finished = Arc::new(Mutex::new(false));
        queue.add("ns/x".to_owned());
        let stop = tokio::time::sleep(Duration::from_millis(100));
        run(queue, Arc::new(Slow(finished.clone())), config(None), metrics, stop).await;
        assert!(*finished.lock().unwrap(), "the sync in flight completed before run returned");
    }
}
