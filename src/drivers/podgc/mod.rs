//! The pod-garbage-collector-controller's driver (upstream
//! `pkg/controller/podgc/gc_controller.go`; the decisions live in
//! `kcm_controllers::podgc`).
//!
//! It owns:
//! - the periodic pass: once the Pod and Node caches sync, then 20 s after
//!   each pass ends (upstream's `wait.UntilWithContext` with
//!   `gcCheckPeriod`); no handlers, no workqueue;
//! - the orphan [`Quarantine`](kcm_controllers::podgc::Quarantine), kept
//!   across passes, and the live node reads it asks for;
//! - the force deletions, through the controller's own client
//!   (`pod-garbage-collector`): a `pods/status` patch marking a pod that is
//!   not terminal `Failed` (with `DisruptionTarget` when its node is gone),
//!   then a delete with grace period 0; a failure is logged and counted,
//!   and the next pass finds what is left;
//! - upstream's metrics [`PodGcMetrics`].
//!
//! Differences from upstream:
//! - the delete carries the pod's uid as precondition (as the status patch
//!   does upstream too), so a pod deleted and recreated under the same
//!   name since the pass read the cache is never force-deleted in its
//!   place;
//! - the quarantine is the core's state, not a delaying workqueue, so
//!   there are no `workqueue_*` series for upstream's
//!   `orphaned_pods_nodes` queue.
//!
//! # Layout
//! - this module: [`PodGcController`] (start-up, the loop of passes) and
//!   its names;
//! - `pass`: one pass (the four parts, the live reads, the writes);
//! - `metrics`: [`PodGcMetrics`].

mod metrics;
mod pass;

use futures::future::BoxFuture;
use kcm_controllers::podgc::{GC_CHECK_PERIOD, Quarantine};
use kcm_objects::{Node, Pod};
use kcm_runtime::controller::{Controller, RunContext};
use kcm_runtime::informer::{HasSynced, SharedInformer, SharedInformerFactory};
use kube::Client;

pub use metrics::PodGcMetrics;

/// Upstream's controller name: log field.
pub const CONTROLLER_NAME: &str = "pod-garbage-collector-controller";

/// The user-agent suffix of the controller's own client (upstream's
/// `ClientOrDie` name).
pub const CLIENT_NAME: &str = "pod-garbage-collector";

/// The pod garbage collector, ready to run once its caches sync.
pub struct PodGcController {
    /// Every pod, read whole by each pass.
    pods: SharedInformer<Pod>,
    /// Every node, read whole by each pass.
    nodes: SharedInformer<Node>,
    /// The controller's own client.
    client: Client,
    /// `--terminated-pod-gc-threshold` (0 or less: terminated pods are
    /// left alone).
    threshold: i32,
    /// Upstream's counters (absent in tests that do not scrape).
    metrics: Option<PodGcMetrics>,
}

// === impl PodGcController ===

impl PodGcController {
    /// Builds the controller on `factory`'s Pod and Node informers,
    /// writing through `client`.
    pub fn new(factory: &SharedInformerFactory, client: Client, threshold: i32, metrics: Option<PodGcMetrics>) -> Self {
        Self { pods: factory.informer::<Pod>(), nodes: factory.informer::<Node>(), client, threshold, metrics }
    }
}

impl Controller for PodGcController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let synced: [&(dyn HasSynced + Sync); 2] = [&self.pods, &self.nodes];
            if !cx.wait_for_caches(&synced, &[]).await {
                return;
            }
            let mut quarantine = Quarantine::default();
            loop {
                tokio::select! {
                    () = self.gc(&mut quarantine) => {}
                    () = cx.stop.clone() => return,
                }
                tokio::select! {
                    () = tokio::time::sleep(GC_CHECK_PERIOD) => {}
                    () = cx.stop.clone() => return,
                }
            }
        })
    }
}
