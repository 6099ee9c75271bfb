//! What the two controllers building endpoints from pods share (the
//! endpoints and EndpointSlice controllers): the handler on the shared Pod
//! informer that queues the Services a pod event concerns, after the
//! controller's batch period (upstream's `addPod`, `updatePod` and
//! `deletePod`, the same in both), and the pod index by label through
//! which a sync finds its Service's pods.
//!
//! Upstream lists the Service's namespace and filters it by the selector
//! on every sync; with many pods in one namespace that scan is nearly all
//! the work (by `perf`, nine tenths of kcm-rs's CPU with 1,000 Services of
//! 100 pods each in one namespace). The index answers with the pods
//! carrying one pair of the selector, then filtered by the whole of it:
//! the same pods, without the scan.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Service;
use kcm_controllers::common::endpoint_pods::{pod_service_memberships, selects, services_to_update_on_pod_change};
use kcm_objects::Pod;
use kcm_runtime::informer::{self, EventHandler, SharedInformer, Store};
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

/// The pod index by label: `namespace/key=value` for each label of a pod.
pub(super) const POD_LABEL_INDEX: &str = "kcm-rs/pod-labels";

fn label_value(namespace: &str, key: &str, value: &str) -> String {
    format!("{namespace}/{key}={value}")
}

/// Registers [`POD_LABEL_INDEX`] on the shared pod informer, unless the
/// other endpoint controller already did (it is kept once).
pub(super) fn register_pod_label_index(pods: &SharedInformer<Pod>) {
    let values = |pod: &Pod| {
        let namespace = &pod.metadata.namespace;
        pod.metadata.labels.iter().map(|(key, value)| label_value(namespace, key, value)).collect()
    };
    match pods.add_index(POD_LABEL_INDEX, values) {
        Ok(()) | Err(informer::Error::IndexConflict(_)) => {}
        Err(e) => tracing::error!(error = %e, "pod label index not added: Services' pods are found by scanning"),
    }
}

/// The cached pods `service` selects (upstream's
/// `podLister.Pods(namespace).List(selector)`): none without a selector,
/// every pod of the namespace with an empty one.
pub(super) fn selected_pods(pods: &Store<Pod>, service: &Service) -> Vec<Arc<Pod>> {
    let namespace = service.metadata.namespace.as_deref().unwrap_or("");
    let Some(selector) = service.spec.as_ref().and_then(|s| s.selector.as_ref()) else {
        return Vec::new();
    };
    let candidates = match selector.iter().next() {
        Some((key, value)) => pods
            .by_index(POD_LABEL_INDEX, &label_value(namespace, key, value))
            .unwrap_or_else(|_| pods.list_namespace(namespace)),
        None => pods.list_namespace(namespace),
    };
    candidates.into_iter().filter(|pod| selects(service, &pod.metadata.labels)).collect()
}
