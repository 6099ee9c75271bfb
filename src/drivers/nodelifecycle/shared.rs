//! What the passes and the workers share ([`Inner`]): the client, the
//! recorder, the caches, the core's remembered state and the metrics.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Node;
use kcm_controllers::node::monitor::Monitor;
use kcm_objects::Pod;
use kcm_objects::Wire;
use kube::Client;
use kube::api::Api;

use super::metrics::NodeLifecycleMetrics;
use kcm_runtime::events::EventRecorder;
use kcm_runtime::informer::Store;

/// What the passes and workers share.
pub(super) struct Inner {
    /// Every write.
    pub(super) client: Client,
    /// `node-controller` events.
    pub(super) recorder: EventRecorder,
    /// Cached nodes.
    pub(super) nodes: Store<kcm_objects::Node>,
    /// Cached pods, with the `spec.nodeName` index.
    pub(super) pods: Store<Pod>,
    /// Cached Leases (only `kube-node-lease` is read).
    pub(super) leases: Store<Lease>,
    /// The remembered state; never held across an await.
    pub(super) monitor: Mutex<Monitor>,
    /// `node_collector_*`.
    pub(super) metrics: Option<NodeLifecycleMetrics>,
    /// `--node-monitor-period`.
    pub(super) monitor_period: Duration,
    /// Nodes the monitor pass handles at once (upstream: as many as the
    /// node workers).
    pub(super) monitor_parallelism: usize,
}

impl Inner {
    /// The remembered state.
    pub(super) fn lock(&self) -> MutexGuard<'_, Monitor> {
        self.monitor.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The Node API, through the controller's client: whole nodes, for
    /// the status write.
    pub(super) fn nodes_api(&self) -> Api<Node> {
        Api::all(self.client.clone())
    }

    /// The Node API decoding nodes as the cache holds them, for the taint
    /// and label patches' re-reads.
    pub(super) fn slim_nodes_api(&self) -> Api<Wire<kcm_objects::Node>> {
        Api::all(self.client.clone())
    }
}
