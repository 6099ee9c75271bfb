//! What the two node controllers share, the node lifecycle controller
//! (`nodelifecycle`) and the taint-eviction-controller (`tainteviction`):
//! upstream's `node-controller` name, the pod's node, and the pod index by
//! node name both read.

use kcm_controllers::node::POD_NODE_NAME_INDEX;
use kcm_objects::Pod;
use kcm_runtime::informer::{self, SharedInformer};

/// Upstream's `node-controller`: the name of both controllers' client (the
/// taint-eviction-controller uses its cluster role) and the node lifecycle
/// controller's event component.
pub const NODE_CONTROLLER: &str = "node-controller";

/// The node `pod` is bound to (`spec.nodeName`; empty is none).
pub fn node_of(pod: &Pod) -> Option<&str> {
    pod.node_name()
}

/// Registers the pod index by `spec.nodeName` (upstream
/// `PodNodeNameKeyIndex`) on the shared pod informer, unless another
/// controller already did: both node controllers read it, and it is kept
/// once.
///
/// # Errors
/// The index cannot be added (the informer has started).
pub fn register_pod_node_name_index(pods: &SharedInformer<Pod>) -> Result<(), informer::Error> {
    match pods.add_index(POD_NODE_NAME_INDEX, |pod| node_of(pod).map(str::to_owned).into_iter().collect()) {
        Ok(()) | Err(informer::Error::IndexConflict(_)) => Ok(()),
        Err(e) => Err(e),
    }
}
