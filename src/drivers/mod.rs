//! Controller drivers: the I/O half of each controller, around its
//! sans-IO core in `kcm-controllers`.
//!
//! A driver registers event handlers on the shared informers (changes to
//! queue keys), owns its workqueue and worker pool, and per key builds the
//! core's snapshot from the caches, asks the core for a plan and executes
//! it.
//!
//! # Layout
//! - `execute`: [`Executor`](execute::Executor), the plan executor every
//!   controller shares (API writes, error classification, events);
//! - `deployment`: the Deployment controller
//!   ([`DeploymentController`](deployment::DeploymentController));
//! - `garbagecollector`: the garbage collector
//!   ([`GarbageCollector`](garbagecollector::GarbageCollector));
//! - `namespace`: the Namespace controller
//!   ([`NamespaceController`](namespace::NamespaceController));
//! - `nodelifecycle`: the node-lifecycle-controller
//!   ([`NodeLifecycleController`](nodelifecycle::NodeLifecycleController));
//! - `replicaset`: the ReplicaSet controller
//!   ([`ReplicaSetController`](replicaset::ReplicaSetController));
//! - `tainteviction`: the taint-eviction-controller
//!   ([`TaintEvictionController`](tainteviction::TaintEvictionController)).

pub mod deployment;
pub mod execute;
pub mod garbagecollector;
pub mod namespace;
pub mod nodelifecycle;
pub mod replicaset;
pub mod tainteviction;

use std::sync::Arc;

use futures::FutureExt;

use kcm_runtime::informer::{HasSynced, SharedInformerFactory};
use kcm_runtime::runner::{self, PoolConfig, Reconcile, SyncMetrics};
use kcm_runtime::workqueue::WorkQueue;

/// Waits until every cache in `synced` has synced, then runs the worker
/// pool `config` over `queue` until `stop` completes, and drains it. If
/// `stop` completes or the factory shuts down first, shuts the queue down
/// and returns without syncing anything.
pub(crate) async fn run_when_synced<S: Reconcile>(
    factory: &SharedInformerFactory,
    synced: &[&(dyn HasSynced + Sync)],
    queue: WorkQueue<String>,
    syncer: Arc<S>,
    config: PoolConfig,
    metrics: SyncMetrics,
    stop: impl Future<Output = ()> + Send,
) {
    let stop = stop.shared();
    let ready = tokio::select! {
        ready = factory.wait_for_cache_sync(config.controller, synced) => ready,
        () = stop.clone() => false,
    };
    if !ready {
        queue.shut_down();
        return;
    }
    tracing::info!(controller = config.controller, workers = config.workers, "starting workers");
    runner::run(queue, syncer, config, metrics, stop).await;
}
