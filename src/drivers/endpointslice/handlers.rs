//! The handlers (upstream `endpointslice_controller.go` `onServiceUpdate`,
//! `addPod`/`updatePod`/`deletePod`, `onEndpointSlice*`): informer events
//! to Service keys.
//!
//! - a Service added, updated or deleted is queued at once (the runtime's
//!   `Enqueue`, registered in the driver);
//! - a pod queues the Services selecting it, after
//!   `--endpointslice-updates-batch-period` (the handler it shares with the
//!   endpoints controller, `drivers::service_pods`);
//! - a slice this controller manages queues its Service, after the batch
//!   period but at least 1 s, only when the tracker says it is not this
//!   controller's own write (or its deletion was not expected); a slice
//!   whose service-name or managed-by label changed queues both Services;
//!   any event for a slice of a Service whose sync was refused for a stale
//!   cache queues it at once (not upstream's: see the tracker);
//! - a node added or deleted, or whose readiness or zone changed, queues
//!   a look at the zones' CPU (the topology queue's one key), which queues
//!   the Services its hints now overload.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::discovery::v1::EndpointSlice;
use kcm_controllers::endpointslice::{
    LABEL_SERVICE_NAME, LABEL_TOPOLOGY_ZONE, managed_by_controller, slice_service_key,
};
use kcm_objects::Node;
use kcm_runtime::informer::EventHandler;
use kcm_runtime::workqueue::WorkQueue;

use super::Shared;

/// Upstream `endpointSliceChangeMinSyncDelay`.
pub const ENDPOINT_SLICE_CHANGE_MIN_SYNC_DELAY: Duration = Duration::from_secs(1);

/// A slice changed: its Service is synced when the change was not this
/// controller's own.
pub(super) struct SliceHandler {
    pub(super) queue: WorkQueue<String>,
    /// The tracker of this controller's writes.
    pub(super) shared: Shared,
    /// The batch period, at least [`ENDPOINT_SLICE_CHANGE_MIN_SYNC_DELAY`].
    pub(super) delay: Duration,
}

impl SliceHandler {
    /// Upstream `queueServiceForEndpointSlice`.
    fn enqueue(&self, slice: &EndpointSlice) {
        match slice_service_key(slice) {
            Some(key) => self.queue.add_after(key, self.delay),
            None => tracing::info!(
                slice = slice.metadata.name.as_deref().unwrap_or(""),
                "Couldn't get key for EndpointSlice: EndpointSlice missing {LABEL_SERVICE_NAME} label"
            ),
        }
    }
}

impl SliceHandler {
    /// Queues the slice's Service at once when its sync waits for the
    /// cache to move (the tracker's `cache_moved`).
    fn queue_if_waiting(&self, slice: &EndpointSlice) {
        if self.shared.lock().tracker.cache_moved(slice)
            && let Some(key) = slice_service_key(slice)
        {
            self.queue.add(key);
        }
    }
}

impl EventHandler<EndpointSlice> for SliceHandler {
    fn on_add(&self, slice: &Arc<EndpointSlice>) {
        if managed_by_controller(slice) && self.shared.lock().tracker.should_sync(slice) {
            self.enqueue(slice);
        }
        self.queue_if_waiting(slice);
    }

    fn on_update(&self, old: &Arc<EndpointSlice>, new: &Arc<EndpointSlice>) {
        let service_name =
            |s: &EndpointSlice| s.metadata.labels.as_ref().and_then(|l| l.get(LABEL_SERVICE_NAME)).cloned();
        if service_name(old) != service_name(new) {
            self.enqueue(new);
            self.enqueue(old);
        } else {
            let managed = managed_by_controller(new);
            if managed != managed_by_controller(old) || (managed && self.shared.lock().tracker.should_sync(new)) {
                self.enqueue(new);
            }
        }
        self.queue_if_waiting(new);
    }

    fn on_delete(&self, slice: &Arc<EndpointSlice>) {
        if !managed_by_controller(slice) {
            return;
        }
        let unexpected = {
            let mut state = self.shared.lock();
            state.tracker.has(slice) && !state.tracker.handle_deletion(slice)
        };
        if unexpected {
            self.enqueue(slice);
        }
        self.queue_if_waiting(slice);
    }
}

/// The topology queue's only key (upstream `topologyQueueItemKey`).
pub const TOPOLOGY_QUEUE_ITEM_KEY: &str = "topologyQueueItemKey";

/// A node changed in a way the zones' CPU shares show.
pub(super) struct NodeHandler {
    pub(super) topology_queue: WorkQueue<String>,
}

/// Whether a node is Ready.
fn node_ready(node: &Node) -> bool {
    node.condition("Ready").is_some_and(|c| c.status == "True")
}

impl EventHandler<Node> for NodeHandler {
    fn on_add(&self, _node: &Arc<Node>) {
        self.topology_queue.add(TOPOLOGY_QUEUE_ITEM_KEY.to_owned());
    }

    fn on_update(&self, old: &Arc<Node>, new: &Arc<Node>) {
        // The zone label may come after the node (a cloud provider's).
        let zone = |n: &Node| n.metadata.labels.get(LABEL_TOPOLOGY_ZONE).map(str::to_owned);
        if node_ready(old) != node_ready(new) || zone(old) != zone(new) {
            self.topology_queue.add(TOPOLOGY_QUEUE_ITEM_KEY.to_owned());
        }
    }

    fn on_delete(&self, _node: &Arc<Node>) {
        self.topology_queue.add(TOPOLOGY_QUEUE_ITEM_KEY.to_owned());
    }
}
