//! The mirroring controller's handlers: which Endpoints, Service and
//! EndpointSlice events queue an Endpoints (the filters are the core's).

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Endpoints, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kcm_controllers::endpointslicemirroring::tracker::endpoints_key;
use kcm_controllers::endpointslicemirroring::{self as core, SERVICE_NAME_LABEL};
use kcm_runtime::informer::{EventHandler, key_of};
use kcm_runtime::workqueue::WorkQueue;
use kube::ResourceExt;

use super::{SharedTracker, lock};

/// Endpoints to be mirrored are queued.
pub(super) struct EndpointsHandler {
    pub(super) queue: WorkQueue<String>,
}

impl EventHandler<Endpoints> for EndpointsHandler {
    fn on_add(&self, endpoints: &Arc<Endpoints>) {
        if core::should_mirror(endpoints) {
            self.queue.add(key_of(endpoints.as_ref()));
        }
    }

    fn on_update(&self, old: &Arc<Endpoints>, new: &Arc<Endpoints>) {
        if core::queues_on_endpoints_update(old, new) {
            self.queue.add(key_of(new.as_ref()));
        }
    }

    fn on_delete(&self, endpoints: &Arc<Endpoints>) {
        self.on_add(endpoints);
    }
}

/// Selector-less Services queue their Endpoints.
pub(super) struct ServiceHandler {
    pub(super) queue: WorkQueue<String>,
}

impl EventHandler<Service> for ServiceHandler {
    fn on_add(&self, service: &Arc<Service>) {
        if core::queues_on_service_add_or_delete(service) {
            self.queue.add(key_of(service.as_ref()));
        }
    }

    fn on_update(&self, old: &Arc<Service>, new: &Arc<Service>) {
        if core::queues_on_service_update(old, new) {
            self.queue.add(key_of(new.as_ref()));
        }
    }

    fn on_delete(&self, service: &Arc<Service>) {
        self.on_add(service);
    }
}

/// Changes to this controller's slices that it did not make queue their
/// Endpoints.
pub(super) struct SliceHandler {
    pub(super) queue: WorkQueue<String>,
    pub(super) tracker: SharedTracker,
    pub(super) batch_period: Duration,
}

impl SliceHandler {
    fn enqueue(&self, slice: &EndpointSlice) {
        match endpoints_key(slice) {
            Some(key) => self.queue.add_after(key, self.batch_period),
            None => tracing::info!(slice = %key_of(slice), "EndpointSlice missing {SERVICE_NAME_LABEL} label"),
        }
    }
}

impl EventHandler<EndpointSlice> for SliceHandler {
    fn on_add(&self, slice: &Arc<EndpointSlice>) {
        if core::managed_by_controller(slice) && lock(&self.tracker).should_sync(slice) {
            self.enqueue(slice);
        }
    }

    fn on_update(&self, old: &Arc<EndpointSlice>, new: &Arc<EndpointSlice>) {
        let service_name = |s: &EndpointSlice| s.labels().get(SERVICE_NAME_LABEL).cloned();
        if service_name(old) != service_name(new) {
            self.enqueue(new);
            self.enqueue(old);
            return;
        }
        let managed = core::managed_by_controller(new);
        if managed != core::managed_by_controller(old) || (managed && lock(&self.tracker).should_sync(new)) {
            self.enqueue(new);
        }
    }

    fn on_delete(&self, slice: &Arc<EndpointSlice>) {
        if !core::managed_by_controller(slice) {
            return;
        }
        let unexpected = {
            let mut tracker = lock(&self.tracker);
            tracker.has(slice) && !tracker.handle_deletion(slice)
        };
        if unexpected {
            self.enqueue(slice);
        }
    }
}
