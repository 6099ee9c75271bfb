//! The handlers on the shared informers: every node change queues the node
//! on the node queue; a pod newly bound to a node, or moved to another,
//! queues the pod on the pod queue.

use std::sync::Arc;

use kcm_objects::Node;
use kcm_objects::Pod;

use crate::drivers::nodes::node_of;
use kcm_runtime::informer::{self, EventHandler};
use kcm_runtime::workqueue::WorkQueue;

/// Every node add and update queues the node (condition taints, labels).
pub(super) struct NodeHandler {
    /// The node queue.
    pub(super) queue: WorkQueue<String>,
}

impl EventHandler<Node> for NodeHandler {
    fn on_add(&self, node: &Arc<Node>) {
        self.queue.add(node.metadata.name.to_string());
    }

    fn on_update(&self, _old: &Arc<Node>, new: &Arc<Node>) {
        self.queue.add(new.metadata.name.to_string());
    }
}

/// A pod bound to a node, or moved to another, is queued (upstream
/// `podUpdated`).
pub(super) struct PodHandler {
    /// The pod queue.
    pub(super) queue: WorkQueue<String>,
}

impl EventHandler<Pod> for PodHandler {
    fn on_add(&self, pod: &Arc<Pod>) {
        if node_of(pod).is_some() {
            self.queue.add(informer::key_of(pod.as_ref()));
        }
    }

    fn on_update(&self, old: &Arc<Pod>, new: &Arc<Pod>) {
        if node_of(new).is_some() && node_of(new) != node_of(old) {
            self.queue.add(informer::key_of(new.as_ref()));
        }
    }
}
