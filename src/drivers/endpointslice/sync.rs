//! One Service's sync (upstream `syncService`, and the API calls of the
//! reconciler's `finalize`): read the caches, refuse a stale slice cache,
//! ask the core, write, count, and report a failure as upstream's
//! `FailedToUpdateEndpointSlices` warning.

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{ObjectReference, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kcm_controllers::endpointslice::{
    self as core, CONTROLLER_QUALIFIED_NAME, Changes, Input, LABEL_MANAGED_BY, LABEL_SERVICE_NAME,
};
use kcm_objects::{Node, Pod};
use kcm_runtime::events::{EventRecorder, EventType};
use kcm_runtime::informer::Store;
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kube::Client;
use kube::api::{Api, DeleteParams, PostParams};

use super::Shared;
use super::metrics::EndpointSliceMetrics;
use crate::drivers::api_errors::{code, error_message, namespace_terminating};
use crate::drivers::service_pods::selected_pods;

/// Why a sync failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The slice cache lags this controller's own writes (upstream
    /// `StaleInformerCache`): retried with backoff.
    #[error("EndpointSlice informer cache is out of date")]
    Stale,
    /// Writes failed or pods were skipped (upstream's aggregated errors).
    #[error("{0}")]
    Failed(String),
}

/// The per-Service sync, shared by the workers.
pub(super) struct Syncer {
    pub(super) services: Store<Service>,
    pub(super) pods: Store<Pod>,
    pub(super) nodes: Store<Node>,
    pub(super) slices: Store<EndpointSlice>,
    /// The trackers and the metrics cache, shared with the handlers.
    pub(super) shared: Shared,
    /// The controller's own client.
    pub(super) client: Client,
    /// Records the warnings.
    pub(super) recorder: EventRecorder,
    /// `None` in tests that register none.
    pub(super) metrics: Option<EndpointSliceMetrics>,
    /// `--max-endpoints-per-slice`.
    pub(super) max_endpoints_per_slice: usize,
}

impl Reconcile for Syncer {
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let result = self.sync_service(key).await;
        if let Some(metrics) = &self.metrics {
            metrics.synced(match &result {
                Ok(()) => "success",
                Err(Error::Stale) => "stale",
                Err(Error::Failed(_)) => "error",
            });
        }
        result.map(|()| Next::Done).map_err(|e| Box::new(e) as SyncError)
    }
}

/// The object reference events about `service` carry.
fn reference(service: &Service) -> ObjectReference {
    ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Service".into()),
        namespace: service.metadata.namespace.clone(),
        name: service.metadata.name.clone(),
        uid: service.metadata.uid.clone(),
        resource_version: service.metadata.resource_version.clone(),
        ..ObjectReference::default()
    }
}

impl Syncer {
    /// Upstream `syncService`.
    async fn sync_service(&self, key: &str) -> Result<(), Error> {
        let Some(service) = self.services.get(key) else {
            let mut state = self.shared.lock();
            state.trigger_times.delete_service(key);
            state.metrics_cache.delete_service(key);
            state.tracker.delete_service(key);
            state.topology.delete_service(key);
            if let Some(metrics) = &self.metrics {
                metrics.show(&state.metrics_cache);
            }
            return Ok(());
        };
        let spec = service.spec.as_ref();
        // ExternalName Services get no endpoints (issue 105986); Services
        // without a selector get theirs from elsewhere.
        if spec.and_then(|s| s.type_.as_deref()) == Some("ExternalName")
            || spec.and_then(|s| s.selector.as_ref()).is_none()
        {
            return Ok(());
        }
        let namespace = service.metadata.namespace.as_deref().unwrap_or("");
        let name = service.metadata.name.as_deref().unwrap_or("");
        let pods: Vec<Arc<Pod>> = selected_pods(&self.pods, &service);
        let pod_refs: Vec<&Pod> = pods.iter().map(Arc::as_ref).collect();
        // The slices are read under the lock the slice handler takes after
        // the cache moves, so a refusal is never missed by the event that
        // would queue it again.
        let (slices, trigger_time) = {
            let mut state = self.shared.lock();
            let slices = self.service_slices(namespace, name);
            let slice_refs: Vec<&EndpointSlice> = slices.iter().map(Arc::as_ref).collect();
            if state.tracker.stale_slices(key, &slice_refs) {
                state.tracker.wait_for_cache(key);
                return Err(Error::Stale);
            }
            let trigger_time = state.trigger_times.compute(key, &service, &pod_refs);
            (slices, trigger_time)
        };
        let slice_refs: Vec<&EndpointSlice> = slices.iter().map(Arc::as_ref).collect();
        // The node lookup is not Send: the reconcile is done before any await.
        let reconciled = {
            let nodes: HashMap<&str, Arc<Node>> = pod_refs
                .iter()
                .filter_map(|p| {
                    let node = p.spec.node_name.as_deref()?;
                    Some((node, self.nodes.get(node)?))
                })
                .collect();
            let node = |name: &str| nodes.get(name).map(Arc::as_ref);
            let input = Input {
                service: &service,
                pods: &pod_refs,
                slices: &slice_refs,
                node: &node,
                trigger_time,
                max_endpoints_per_slice: self.max_endpoints_per_slice,
            };
            core::reconcile(&input, &mut self.shared.lock().topology)
        };
        self.shared.lock().metrics_cache.update_traffic_distribution(key, &reconciled.traffic_distribution);
        let mut errors = reconciled.skipped.clone();
        let api: Api<EndpointSlice> = Api::namespaced(self.client.clone(), namespace);
        for changes in &reconciled.changes {
            self.record_plan(key, changes);
            match self.write(&api, &service, changes).await {
                // Counted as upstream's finalize counts: when it got through.
                Ok(()) => {
                    if let Some(metrics) = &self.metrics {
                        let changed = changes.create.len() + changes.update.len() + changes.delete.len();
                        metrics
                            .changed_per_sync
                            .with_label_values(&[reconciled.topology, reconciled.traffic_distribution.as_str()])
                            .observe(changed as f64);
                    }
                }
                Err(error) => errors.push(error),
            }
        }
        for slice in &reconciled.stale_address_types {
            if let Err(error) = self.delete(&api, slice).await {
                let slice_name = slice.metadata.name.as_deref().unwrap_or("");
                errors
                    .push(format!("error deleting {slice_name} EndpointSlice for Service {namespace}/{name}: {error}"));
            }
        }
        for event in &reconciled.events {
            let kind = if event.warning { EventType::Warning } else { EventType::Normal };
            self.recorder.event(&reference(&service), kind, event.reason, event.message.clone());
        }
        if errors.is_empty() {
            return Ok(());
        }
        // Upstream's aggregated error: one alone, several in brackets.
        let message = if errors.len() == 1 { errors.remove(0) } else { format!("[{}]", errors.join(", ")) };
        self.recorder.event(
            &reference(&service),
            EventType::Warning,
            "FailedToUpdateEndpointSlices",
            format!("Error updating Endpoint Slices for Service {namespace}/{name}: {message}"),
        );
        Err(Error::Failed(message))
    }

    /// The cached slices this controller manages for Service
    /// `namespace/name`, but those being deleted.
    fn service_slices(&self, namespace: &str, name: &str) -> Vec<Arc<EndpointSlice>> {
        let mut slices = self.slices.list_namespace(namespace);
        slices.retain(|s| {
            let labels = s.metadata.labels.as_ref();
            let label = |k: &str| labels.and_then(|l| l.get(k)).map(String::as_str);
            label(LABEL_SERVICE_NAME) == Some(name)
                && label(LABEL_MANAGED_BY) == Some(CONTROLLER_QUALIFIED_NAME)
                && s.metadata.deletion_timestamp.is_none()
        });
        slices
    }

    /// The metrics and the cache entry of one address type's plan, as
    /// upstream records them before writing.
    fn record_plan(&self, key: &str, changes: &Changes) {
        let mut state = self.shared.lock();
        state.metrics_cache.update_service(key, changes.efficiency.clone());
        if let Some(metrics) = &self.metrics {
            metrics.endpoints_added.observe(changes.added as f64);
            metrics.endpoints_removed.observe(changes.removed as f64);
            metrics.show(&state.metrics_cache);
        }
    }

    /// Upstream `finalize`'s writes: creates, updates, deletes, stopping at
    /// the first failure; a namespace being terminated ends it quietly.
    async fn write(&self, api: &Api<EndpointSlice>, service: &Service, changes: &Changes) -> Result<(), String> {
        let svc = format!(
            "{}/{}",
            service.metadata.namespace.as_deref().unwrap_or(""),
            service.metadata.name.as_deref().unwrap_or("")
        );
        for slice in &changes.create {
            match api.create(&PostParams::default(), slice).await {
                Ok(created) => self.written(&created, "create"),
                Err(error) if namespace_terminating(&error) => return Ok(()),
                Err(error) => {
                    return Err(format!("failed to create EndpointSlice for Service {svc}: {}", error_message(&error)));
                }
            }
        }
        for slice in &changes.update {
            let slice_name = slice.metadata.name.as_deref().unwrap_or("");
            match api.replace(slice_name, &PostParams::default(), slice).await {
                Ok(updated) => self.written(&updated, "update"),
                Err(error) => {
                    return Err(format!(
                        "failed to update {slice_name} EndpointSlice for Service {svc}: {}",
                        error_message(&error)
                    ));
                }
            }
        }
        for slice in &changes.delete {
            if let Err(error) = self.delete(api, slice).await {
                let slice_name = slice.metadata.name.as_deref().unwrap_or("");
                return Err(format!("failed to delete {slice_name} EndpointSlice for Service {svc}: {error}"));
            }
        }
        Ok(())
    }

    /// A write the API server accepted: tracked and counted.
    fn written(&self, slice: &EndpointSlice, operation: &str) {
        self.shared.lock().tracker.update(slice);
        if let Some(metrics) = &self.metrics {
            metrics.changed(operation);
        }
    }

    /// Deletes a slice (one already gone is deleted) and expects its
    /// deletion event.
    async fn delete(&self, api: &Api<EndpointSlice>, slice: &EndpointSlice) -> Result<(), String> {
        let slice_name = slice.metadata.name.as_deref().unwrap_or("");
        match api.delete(slice_name, &DeleteParams::default()).await {
            Ok(_) => {
                self.shared.lock().tracker.expect_deletion(slice);
                if let Some(metrics) = &self.metrics {
                    metrics.changed("delete");
                }
                Ok(())
            }
            Err(error) if code(&error) == Some(404) => Ok(()),
            Err(error) => Err(error_message(&error)),
        }
    }
}

/// The topology queue's sync (upstream `checkNodeTopologyDistribution`):
/// the zones' CPU shares recomputed from every cached node, and the
/// Services whose hints that overloads queued.
pub(super) struct TopologySyncer {
    pub(super) nodes: Store<Node>,
    pub(super) shared: Shared,
    /// The Service queue.
    pub(super) queue: kcm_runtime::workqueue::WorkQueue<String>,
}

impl Reconcile for TopologySyncer {
    async fn sync(&self, _key: &str) -> Result<Next, SyncError> {
        let nodes = self.nodes.list();
        let overloaded = {
            let mut state = self.shared.lock();
            state.topology.set_nodes(nodes.iter().map(Arc::as_ref));
            state.topology.overloaded_services()
        };
        for key in overloaded {
            tracing::debug!(%key, "Queuing Service after Node change due to overloading");
            self.queue.add(key);
        }
        Ok(Next::Done)
    }
}
