//! The one shape every controller has to the daemon: a [`Controller`] is
//! built on the shared informers (its handlers registered, its queues made)
//! and then run with a [`RunContext`] until the context's stop signal.
//!
//! The context folds in what every driver used to write for itself: wait
//! until the caches it reads have synced (or give up when stopping first,
//! shutting its queues down), then run a worker pool per queue with the
//! controller's name, worker count and sync metrics, and drain on stop.
//! What a driver still decides is its own: which caches, which queues,
//! their retry limits.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};

use crate::informer::{HasSynced, SharedInformerFactory, SyncSignal};
use crate::runner::{self, PoolConfig, Reconcile, SyncMetrics};
use crate::workqueue::WorkQueue;

/// Completes when the controllers are to stop (leading ended, or the
/// process is shutting down). Cheap to clone.
pub type Stop = Shared<BoxFuture<'static, ()>>;

/// A controller, ready to run once its caches sync.
pub trait Controller: Send + 'static {
    /// What beyond the shared informers this controller must sync before
    /// the process counts as ready: the garbage collector's own watches of
    /// types no other controller informs on. `None` for most.
    fn started(&self) -> Option<SyncSignal> {
        None
    }

    /// Runs until `cx.stop` completes, then drains its workers.
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()>;
}

/// What a running controller is handed by the daemon.
#[derive(Clone)]
pub struct RunContext {
    /// Upstream's controller name (metric label, logs).
    pub name: &'static str,
    /// The process's shared informers.
    pub factory: SharedInformerFactory,
    /// Workers per pool (`--concurrent-*-syncs`, or upstream's fixed count).
    pub workers: usize,
    /// `kcm_controller_sync*` metrics.
    pub metrics: SyncMetrics,
    /// Completes when the controller is to stop.
    pub stop: Stop,
}

/// How one of a controller's worker pools retries and drains.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retries {
    /// Failed syncs of one key before the key is dropped; `None` retries
    /// forever.
    pub max_retries: Option<u32>,
    /// How long stopping waits for syncs in flight.
    pub drain_timeout: Duration,
}

// === impl Retries ===

impl Retries {
    /// How long stopping waits for the syncs in flight.
    pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

    /// Failed syncs retried with backoff for as long as they fail (the
    /// controllers upstream gives no `maxRetries`).
    pub const FOREVER: Retries = Retries { max_retries: None, drain_timeout: Self::DRAIN_TIMEOUT };

    /// A key dropped after `max_retries` failed syncs in a row, until it
    /// changes again (upstream's `maxRetries`).
    pub const fn at_most(max_retries: u32) -> Retries {
        Retries { max_retries: Some(max_retries), drain_timeout: Self::DRAIN_TIMEOUT }
    }
}

// === impl RunContext ===

impl RunContext {
    /// Waits until every cache in `synced` has synced. Returns `false`,
    /// having shut `queues` down (their handlers' adds then go nowhere), when
    /// the stop signal completes or the factory shuts down first.
    pub async fn wait_for_caches(&self, synced: &[&(dyn HasSynced + Sync)], queues: &[&WorkQueue<String>]) -> bool {
        let ready = tokio::select! {
            ready = self.factory.wait_for_cache_sync(self.name, synced) => ready,
            () = self.stop.clone() => false,
        };
        if !ready {
            queues.iter().for_each(|queue| queue.shut_down());
        } else {
            tracing::info!(controller = self.name, workers = self.workers, "starting workers");
        }
        ready
    }

    /// A pool of `workers` workers over `queue` until the stop signal, then
    /// drained.
    pub fn pool<S: Reconcile>(
        &self,
        queue: WorkQueue<String>,
        syncer: Arc<S>,
        workers: usize,
        retries: Retries,
    ) -> impl Future<Output = ()> + Send + use<S> {
        let config = PoolConfig {
            controller: self.name,
            workers,
            max_retries: retries.max_retries,
            drain_timeout: retries.drain_timeout,
        };
        runner::run(queue, syncer, config, self.metrics.clone(), self.stop.clone())
    }

    /// The common case: one queue, synced by [`RunContext::workers`]
    /// workers once every cache in `synced` has synced.
    pub async fn run_when_synced<S: Reconcile>(
        &self,
        synced: &[&(dyn HasSynced + Sync)],
        queue: WorkQueue<String>,
        syncer: Arc<S>,
        retries: Retries,
    ) {
        if self.wait_for_caches(synced, &[&queue]).await {
            self.pool(queue, syncer, self.workers, retries).await;
        }
    }
}

/// A [`Stop`] from any future that completes once.
pub fn stop_on(signal: impl Future<Output = ()> + Send + 'static) -> Stop {
    signal.boxed().shared()
}
