//! The endpoints controller's decisions (upstream
//! `pkg/controller/endpoint/endpoints_controller.go`): every Service with a
//! selector has an Endpoints of the same name listing the pods it selects,
//! ready ones under `addresses` and the others under `notReadyAddresses`,
//! with the pod port each Service port targets.
//!
//! A plan-returning core: [`sync`] takes the cached Service (absent: it was
//! deleted), its pods and its cached Endpoints and answers the one write
//! to make ([`Write`]). The driver keeps the two trackers of
//! [`trackers`] and asks them first; what it writes is built here:
//!
//! - pods as upstream filters them
//!   ([`should_pod_be_in_endpoints`]: with an IP, not terminal, not being
//!   deleted unless the Service publishes not-ready addresses, which also
//!   makes every pod a ready address);
//! - one address per pod ([`address`]), one subset per (pod, Service port
//!   found on the pod), then [`subsets::repack`]ed; a headless Service
//!   without ports gets its addresses without ports, another Service
//!   without ports none;
//! - labels: the Service's, plus [`MANAGED_BY_LABEL`] and, for a Service
//!   without a cluster IP, [`HEADLESS_LABEL`];
//! - annotations: the existing ones, with [`LAST_CHANGE_TRIGGER_TIME`] set
//!   to the tracker's time (removed when it has none) and
//!   [`OVER_CAPACITY`]`: truncated` while more than
//!   [`MAX_CAPACITY`](subsets::MAX_CAPACITY) addresses had to be cut
//!   (removed once they fit);
//! - nothing when the subsets (ignoring pod resourceVersions), the labels
//!   (ignoring the two this controller adds) and the capacity annotation
//!   already say so.
//!
//! Services of type `ExternalName` and Services without a selector are
//! left alone: their Endpoints are someone else's.

pub mod address;
pub mod trackers;

#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{EndpointSubset, Endpoints, Service};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcm_objects::Pod;

use crate::common::endpoint_pods::{find_port, should_pod_be_in_endpoints};
use crate::common::endpoint_subsets as subsets;
use crate::common::endpoints_annotations::{LAST_CHANGE_TRIGGER_TIME, LEADER_ANNOTATION};
use crate::common::pod::is_pod_ready;
use crate::common::selector::contains_all;

/// Set on the Endpoints of a Service without a cluster IP (upstream
/// `v1.IsHeadlessService`).
pub const HEADLESS_LABEL: &str = "service.kubernetes.io/headless";

/// Set on every Endpoints this controller writes (upstream
/// `LabelManagedBy`, since 1.33), with value [`CONTROLLER_NAME`].
pub const MANAGED_BY_LABEL: &str = "endpoints.kubernetes.io/managed-by";

/// The value of [`MANAGED_BY_LABEL`] (upstream `ControllerName`).
pub const CONTROLLER_NAME: &str = "endpoint-controller";

/// Set to [`TRUNCATED`] on an Endpoints cut to capacity (upstream
/// `v1.EndpointsOverCapacity`).
pub const OVER_CAPACITY: &str = "endpoints.kubernetes.io/over-capacity";

/// The value of [`OVER_CAPACITY`].
pub const TRUNCATED: &str = "truncated";

/// Failed syncs of one Service before it is dropped (upstream
/// `maxRetries`).
pub const MAX_RETRIES: u32 = 15;

/// What one Service's sync writes.
#[derive(Debug, Clone, PartialEq)]
pub enum Write {
    /// Nothing.
    None,
    /// The Service is gone: delete its Endpoints (NotFound is success).
    Delete,
    /// No Endpoints yet: create this one. Forbidden because the namespace
    /// is terminating is not retried.
    Create(Endpoints),
    /// Replace the Endpoints with this (the cached one, its subsets, labels
    /// and annotations rewritten, everything else kept).
    Update(Endpoints),
}

/// The write for a Service (`service`, absent once deleted) selecting among
/// `pods` (cached pods; its namespace and selector are applied here), given
/// its cached Endpoints and this sync's trigger time.
pub fn sync(
    service: Option<&Service>,
    pods: &[&Pod],
    current: Option<&Endpoints>,
    trigger: Option<Timestamp>,
) -> Write {
    let Some(service) = service else { return Write::Delete };
    let Some(selected) = selected(service, pods) else { return Write::None };
    let subsets = desired_subsets(service, &selected);

    let service_labels = service.metadata.labels.clone().unwrap_or_default();
    if let Some(current) = current
        && subsets::equal_ignoring_resource_version(current.subsets.as_deref().unwrap_or_default(), &subsets)
        && own_labels_removed(current.metadata.labels.as_ref()) == service_labels
        && capacity_annotation_set_correctly(current)
    {
        return Write::None;
    }

    let mut endpoints = current.cloned().unwrap_or_else(|| Endpoints {
        metadata: ObjectMeta {
            name: service.metadata.name.clone(),
            namespace: service.metadata.namespace.clone(),
            ..ObjectMeta::default()
        },
        ..Endpoints::default()
    });
    let mut subsets = subsets;
    let annotations = endpoints.metadata.annotations.get_or_insert_with(BTreeMap::new);
    match trigger {
        Some(time) => annotations.insert(LAST_CHANGE_TRIGGER_TIME.to_owned(), time.to_string()),
        None => annotations.remove(LAST_CHANGE_TRIGGER_TIME),
    };
    if subsets::truncate(&mut subsets) {
        annotations.insert(OVER_CAPACITY.to_owned(), TRUNCATED.to_owned());
    } else {
        annotations.remove(OVER_CAPACITY);
    }
    if annotations.is_empty() {
        endpoints.metadata.annotations = None;
    }
    endpoints.subsets = Some(subsets);
    let mut labels = service_labels;
    labels.insert(MANAGED_BY_LABEL.to_owned(), CONTROLLER_NAME.to_owned());
    if !has_cluster_ip(service) {
        labels.insert(HEADLESS_LABEL.to_owned(), String::new());
    }
    endpoints.metadata.labels = Some(labels);
    match current {
        Some(_) => Write::Update(endpoints),
        None => Write::Create(endpoints),
    }
}

/// The pods among `pods` that `service` selects (those of its namespace
/// matching its selector), or `None` for a Service this controller leaves
/// alone (of type `ExternalName`, or without a selector). The trigger
/// time is computed over these.
pub fn selected<'p>(service: &Service, pods: &[&'p Pod]) -> Option<Vec<&'p Pod>> {
    let spec = service.spec.as_ref()?;
    if spec.type_.as_deref() == Some("ExternalName") {
        return None;
    }
    let selector = spec.selector.as_ref()?;
    let namespace = service.metadata.namespace.as_deref().unwrap_or("");
    let matches = |p: &&Pod| p.metadata.namespace == namespace && contains_all(&p.metadata.labels, Some(selector));
    Some(pods.iter().copied().filter(matches).collect())
}

/// The subsets the selected pods make, repacked.
fn desired_subsets(service: &Service, pods: &[&Pod]) -> Vec<EndpointSubset> {
    let spec = service.spec.as_ref();
    let publish_not_ready = spec.and_then(|s| s.publish_not_ready_addresses).unwrap_or(false);
    let ports = spec.and_then(|s| s.ports.as_deref()).unwrap_or_default();
    let headless = spec.and_then(|s| s.cluster_ip.as_deref()) == Some("None");
    let mut all = Vec::new();
    for pod in pods.iter().filter(|p| should_pod_be_in_endpoints(p, publish_not_ready)) {
        let Some(address) = address::pod_to_endpoint_address(service, pod) else { continue };
        let ready = publish_not_ready || is_pod_ready(pod);
        let subset = |ports: Option<Vec<_>>| EndpointSubset {
            addresses: ready.then(|| vec![address.clone()]),
            not_ready_addresses: (!ready).then(|| vec![address.clone()]),
            ports,
        };
        if ports.is_empty() {
            if headless {
                all.push(subset(None));
            }
            continue;
        }
        for port in ports {
            if let Some(number) = find_port(pod, port) {
                all.push(subset(Some(vec![address::endpoint_port(port, number)])));
            }
        }
    }
    subsets::repack(&all)
}

/// Upstream `IsServiceIPSet`: a cluster IP other than `None`.
fn has_cluster_ip(service: &Service) -> bool {
    let ip = service.spec.as_ref().and_then(|s| s.cluster_ip.as_deref()).unwrap_or("");
    !ip.is_empty() && ip != "None"
}

/// The Endpoints' labels without the two this controller adds, to compare
/// with the Service's.
fn own_labels_removed(labels: Option<&BTreeMap<String, String>>) -> BTreeMap<String, String> {
    let mut labels = labels.cloned().unwrap_or_default();
    labels.remove(HEADLESS_LABEL);
    labels.remove(MANAGED_BY_LABEL);
    labels
}

/// Upstream `capacityAnnotationSetCorrectly`: never while the stored
/// subsets hold more than the capacity, else only without the annotation.
fn capacity_annotation_set_correctly(current: &Endpoints) -> bool {
    let stored = current.subsets.as_deref().unwrap_or_default();
    if subsets::count(stored) > subsets::MAX_CAPACITY {
        return false;
    }
    current.metadata.annotations.as_ref().is_none_or(|a| !a.contains_key(OVER_CAPACITY))
}

/// The Warning event of a failed write (upstream's reasons and messages):
/// `(reason, message)` for the create or update of Service
/// `namespace/name`'s Endpoints that failed with `error`.
pub fn failed_write_event(create: bool, namespace: &str, name: &str, error: &str) -> (&'static str, String) {
    if create {
        ("FailedToCreateEndpoint", format!("Failed to create endpoint for service {namespace}/{name}: {error}"))
    } else {
        ("FailedToUpdateEndpoint", format!("Failed to update endpoint {namespace}/{name}: {error}"))
    }
}

/// Whether the Endpoints listed at start-up is queued to check for a
/// Service (upstream `checkLeftoverEndpoints`): all but leader-election
/// records.
pub fn is_leftover_candidate(endpoints: &Endpoints) -> bool {
    endpoints.metadata.annotations.as_ref().is_none_or(|a| !a.contains_key(LEADER_ANNOTATION))
}
