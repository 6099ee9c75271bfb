//! What runs while this process leads: the selected controllers of the
//! table on one set of shared informers, and what they share
//! ([`Runtime`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use kcm_runtime::client::ClientConfig;
use kcm_runtime::controller::{self, RunContext};
use kcm_runtime::informer::{SharedInformerFactory, SyncSignal};
use kcm_runtime::runner::SyncMetrics;
use kcm_runtime::server::Checks;
use kcm_runtime::workqueue::QueueMetrics;
use prometheus::Registry;

use super::{Shutdown, pageout};
use crate::config::Config;
use crate::controllers::{Context, Launched, table};
use crate::sim;

/// What the controllers share, built once per process.
pub(super) struct Runtime {
    /// The shared informers' client (rate-limited, metered, fenced under
    /// leader election; user agent `shared-informers`, as upstream's).
    pub(super) client: kube::Client,
    /// What each controller builds its own client from (fenced under
    /// leader election; each client its own ServiceAccount with
    /// `--use-service-account-credentials`).
    pub(super) client_config: ClientConfig,
    /// The `--kubeconfig` identity (fenced under leader election): the
    /// tokens controller's client.
    pub(super) root_config: ClientConfig,
    /// Where the controllers register their metrics.
    pub(super) registry: Registry,
    /// `workqueue_*` metrics, labelled by queue name.
    pub(super) queue_metrics: QueueMetrics,
    /// `kcm_controller_sync*` metrics.
    pub(super) sync_metrics: SyncMetrics,
    /// `/healthz`: each running controller adds its check.
    pub(super) healthz: Checks,
    /// `/readyz`'s `informer-sync`: false from the start of leading until
    /// the running controllers' caches have synced.
    pub(super) caches_synced: Arc<AtomicBool>,
}

/// A selected controller could not be built (logged): nothing was started.
pub(super) struct BuildFailed;

/// What runs while this process leads (or without leader election): the
/// selected controllers of the table, all built first, in its order, then
/// run until `stop` (start-up's code pages handed back to the kernel once
/// their caches have synced and their queues emptied); then their workers
/// drain and the informers stop. A controller that cannot be built (an
/// unreadable key or CA file) is logged with upstream's messages and none
/// starts: the process exits 1, as upstream's does, rather than run
/// without it while `/healthz` says ok.
pub(super) async fn lead(config: &Config, runtime: &Runtime, stop: Shutdown) -> Result<(), BuildFailed> {
    let mut rows: Vec<_> = table().filter(|row| config.controllers.contains(row.name())).collect();
    if config.sim.is_some() {
        rows.retain(|row| {
            let served = !sim::UNSERVED_CONTROLLERS.contains(&row.name());
            if !served {
                tracing::info!(controller = row.name(), "kube-sim does not serve its API: not running under --sim");
            }
            served
        });
    }
    tracing::info!(
        controllers = ?rows.iter().map(|row| row.name()).collect::<Vec<_>>(),
        "leading: starting controllers"
    );
    let stop = controller::stop_on(stop);
    let factory = SharedInformerFactory::new(runtime.client.clone());
    let cx = Context {
        config,
        factory: &factory,
        client_config: &runtime.client_config,
        root_config: &runtime.root_config,
        registry: &runtime.registry,
        queue_metrics: &runtime.queue_metrics,
    };
    runtime.caches_synced.store(false, Ordering::Relaxed);
    let mut built = Vec::new();
    for row in rows {
        match row.start(&cx).transpose() {
            // Upstream's message for a controller that chose not to start.
            None => tracing::info!(controller = row.name(), "Warning: skipping controller"),
            Some(Ok(launched)) => built.push((row, launched)),
            Some(Err(error)) => {
                // Upstream's two messages.
                tracing::error!(%error, controller = row.name(), "Error initializing a controller");
                tracing::error!("Error building controllers");
                return Err(BuildFailed);
            }
        }
    }
    let mut controllers = tokio::task::JoinSet::new();
    let mut started = Vec::new();
    for (row, Launched { controller, workers }) in built {
        // A started controller answers: upstream's per-controller ping.
        runtime.healthz.add(row.name(), Arc::new(|| Ok(())));
        started.extend(controller.started());
        let run = RunContext {
            name: row.name(),
            factory: factory.clone(),
            workers,
            metrics: runtime.sync_metrics.clone(),
            stop: stop.clone(),
        };
        controllers.spawn(controller.run(run));
    }
    factory.start();
    let ready = async {
        let caches = factory.wait_for_all_caches_sync("kcm-rs").await;
        // Then what controllers start beyond the shared informers (the
        // garbage collector's own watches).
        caches && futures::future::join_all(started.into_iter().map(SyncSignal::synced)).await.into_iter().all(|ok| ok)
    };
    let synced = tokio::select! {
        synced = ready => {
            runtime.caches_synced.store(synced, Ordering::Relaxed);
            synced
        }
        () = stop.clone() => false,
    };
    if synced {
        pageout::after_start(runtime.queue_metrics.clone(), stop.clone()).await;
    }
    stop.await;
    while controllers.join_next().await.is_some() {}
    factory.shutdown();
    Ok(())
}
