//! What the two controllers building endpoints from pods share (the
//! endpoints and EndpointSlice controllers): the handler on the shared Pod
//! informer that queues the Services a pod event concerns, after the
//! controller's batch period (upstream's `addPod`, `updatePod` and
//! `deletePod`, the same in both).

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Service;
use kcm_controllers::common::endpoint_pods::{pod_service_memberships, services_to_update_on_pod_change};
use kcm_objects::Pod;
use kcm_runtime::informer::{EventHandler, Store};
use kcm_runtime::workqueue::WorkQueue;

/// Queues the Services (`namespace/name`) a pod is, or was, a member of.
pub(super) struct ServicePodHandler {
    /// The controller's queue of Services.
    pub(super) queue: WorkQueue<String>,
    /// Cached Services, to find the pod's.
    pub(super) services: Store<Service>,
    /// The controller's `--*-updates-batch-period`: a burst of pod
    /// changes is one sync.
    pub(super) batch_period: Duration,
}

impl ServicePodHandler {
    fn enqueue(&self, keys: impl IntoIterator<Item = String>) {
        for key in keys {
            self.queue.add_after(key, self.batch_period);
        }
    }

    fn memberships(&self, pod: &Pod) {
        let services = self.services.list_namespace(&pod.metadata.namespace);
        self.enqueue(pod_service_memberships(pod, services.iter().map(Arc::as_ref)));
    }
}

impl EventHandler<Pod> for ServicePodHandler {
    fn on_add(&self, pod: &Arc<Pod>) {
        self.memberships(pod);
    }

    fn on_update(&self, old: &Arc<Pod>, new: &Arc<Pod>) {
        let services = self.services.list_namespace(&new.metadata.namespace);
        let services: Vec<&Service> = services.iter().map(Arc::as_ref).collect();
        self.enqueue(services_to_update_on_pod_change(old, new, &services));
    }

    fn on_delete(&self, pod: &Arc<Pod>) {
        self.memberships(pod);
    }
}
