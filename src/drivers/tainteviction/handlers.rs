//! The handlers on the shared informers: a node is looked at when it
//! appears, goes, or its `NoExecute` taints change; a pod when it appears,
//! goes, or its tolerations or node change (as upstream).

use std::sync::Arc;

use kcm_objects::Node;
use kcm_objects::Pod;

use super::evictor::no_execute_taints;
use crate::drivers::nodes::node_of;
use kcm_runtime::informer::{self, EventHandler};
use kcm_runtime::workqueue::WorkQueue;

/// Node adds and deletes, and updates that change the `NoExecute` taints
/// (upstream `NodeUpdated`).
pub(super) struct NodeHandler {
    /// `noexec_taint_node`.
    pub(super) queue: WorkQueue<String>,
}

impl EventHandler<Node> for NodeHandler {
    fn on_add(&self, node: &Arc<Node>) {
        self.queue.add(informer::key_of(&**node));
    }

    fn on_update(&self, old: &Arc<Node>, new: &Arc<Node>) {
        if no_execute_taints(old) != no_execute_taints(new) {
            self.queue.add(informer::key_of(&**new));
        }
    }

    fn on_delete(&self, node: &Arc<Node>) {
        self.queue.add(informer::key_of(&**node));
    }
}

/// Pod adds and deletes, and updates that change the tolerations or the
/// node (upstream `PodUpdated`), or replace the pod by another of the same
/// name.
pub(super) struct PodHandler {
    /// `noexec_taint_pod`.
    pub(super) queue: WorkQueue<String>,
}

impl EventHandler<Pod> for PodHandler {
    fn on_add(&self, pod: &Arc<Pod>) {
        self.queue.add(informer::key_of(&**pod));
    }

    fn on_update(&self, old: &Arc<Pod>, new: &Arc<Pod>) {
        if old.metadata.uid != new.metadata.uid
            || old.spec.tolerations != new.spec.tolerations
            || node_of(old) != node_of(new)
        {
            self.queue.add(informer::key_of(&**new));
        }
    }

    fn on_delete(&self, pod: &Arc<Pod>) {
        self.queue.add(informer::key_of(&**pod));
    }
}
