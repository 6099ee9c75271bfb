//! EndpointSlices as this controller writes them (upstream `utils.go`
//! `newEndpointSlice`, `setEndpointSliceLabels`, `ownedBy`,
//! `getSliceToFill`, `addTriggerTimeAnnotation`, `ServiceControllerKey`,
//! `hintsEnabled`, and the placeholder comparison of `reconciler.go`).
//!
//! A slice's labels are its Service's, but for the three reserved ones
//! this controller sets itself: `kubernetes.io/service-name`,
//! `endpointslice.kubernetes.io/managed-by` and, for a Service without a
//! ClusterIP, `service.kubernetes.io/headless`.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::{Endpoint, EndpointPort, EndpointSlice};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::endpoints::{AddressType, is_service_ip_set};
use crate::common::controller_ref::new_controller_ref;
use crate::common::endpoints_annotations::LAST_CHANGE_TRIGGER_TIME;

/// The label naming a slice's Service (upstream `discovery.LabelServiceName`).
pub const LABEL_SERVICE_NAME: &str = "kubernetes.io/service-name";

/// The label naming a slice's manager (upstream `discovery.LabelManagedBy`).
pub const LABEL_MANAGED_BY: &str = "endpointslice.kubernetes.io/managed-by";

/// This controller's value of [`LABEL_MANAGED_BY`] (upstream
/// `controllerQualifiedName`).
pub const CONTROLLER_QUALIFIED_NAME: &str = "endpointslice-controller.k8s.io";

/// The label marking a headless Service's slices (upstream `IsHeadlessService`).
pub const LABEL_HEADLESS: &str = "service.kubernetes.io/headless";

/// The annotation turning on topology aware routing (upstream `AnnotationTopologyMode`).
pub const ANNOTATION_TOPOLOGY_MODE: &str = "service.kubernetes.io/topology-mode";

/// Its deprecated predecessor, which wins when both are set (upstream
/// `DeprecatedAnnotationTopologyAwareHints`).
pub const DEPRECATED_ANNOTATION_TOPOLOGY_AWARE_HINTS: &str = "service.kubernetes.io/topology-aware-hints";

/// Whether a label key is one of the three this controller owns.
fn is_reserved_label(key: &str) -> bool {
    matches!(key, LABEL_SERVICE_NAME | LABEL_MANAGED_BY | LABEL_HEADLESS)
}

/// The labels `slice` should carry for `service`, and whether its
/// non-reserved labels differ from the Service's (upstream
/// `setEndpointSliceLabels`: a change of a reserved label on the Service
/// alone does not count).
pub fn slice_labels(slice: &EndpointSlice, service: &Service) -> (BTreeMap<String, String>, bool) {
    let unreserved = |labels: Option<&BTreeMap<String, String>>| -> BTreeMap<String, String> {
        labels
            .into_iter()
            .flatten()
            .filter(|(k, _)| !is_reserved_label(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    let current = unreserved(slice.metadata.labels.as_ref());
    let mut wanted = unreserved(service.metadata.labels.as_ref());
    let changed = current != wanted;
    if !is_service_ip_set(service) {
        wanted.insert(LABEL_HEADLESS.to_owned(), String::new());
    }
    wanted.insert(LABEL_SERVICE_NAME.to_owned(), service.metadata.name.clone().unwrap_or_default());
    wanted.insert(LABEL_MANAGED_BY.to_owned(), CONTROLLER_QUALIFIED_NAME.to_owned());
    (wanted, changed)
}

/// A new, empty slice of `service` for these ports and address type
/// (upstream `newEndpointSlice`): named by `generateName`, controlled by
/// the Service.
pub fn new_endpoint_slice(service: &Service, ports: Vec<EndpointPort>, address_type: AddressType) -> EndpointSlice {
    let mut slice = EndpointSlice {
        metadata: ObjectMeta {
            generate_name: Some(slice_name_prefix(service.metadata.name.as_deref().unwrap_or(""))),
            namespace: service.metadata.namespace.clone(),
            owner_references: Some(vec![new_controller_ref(&service.metadata, "v1", "Service")]),
            ..ObjectMeta::default()
        },
        address_type: address_type.as_str().to_owned(),
        endpoints: Some(Vec::new()),
        ports: Some(ports),
    };
    slice.metadata.labels = Some(slice_labels(&slice, service).0);
    slice
}

/// `name-`, or `name` alone when the dash would make it too long a name
/// (upstream `getEndpointSlicePrefix`).
pub fn slice_name_prefix(service_name: &str) -> String {
    let prefix = format!("{service_name}-");
    if prefix.len() > 253 { service_name.to_owned() } else { prefix }
}

/// Whether `slice` is controlled by `service`: an ownerReference to a
/// `v1` `Service` with its uid (upstream `ownedBy`).
pub fn owned_by(slice: &EndpointSlice, service: &Service) -> bool {
    let uid = service.metadata.uid.as_deref().unwrap_or("");
    slice
        .metadata
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.uid == uid && o.kind == "Service" && o.api_version == "v1")
}

/// Whether `existing` is the placeholder `placeholder` already: same
/// namespace, labels and address type, and like it no ports and no
/// endpoints (upstream `placeholderSliceCompare`, whose metadata
/// comparison looks at the namespace and labels only).
pub fn is_same_placeholder(existing: &EndpointSlice, placeholder: &EndpointSlice) -> bool {
    let labels = |s: &EndpointSlice| s.metadata.labels.clone().unwrap_or_default();
    let ports = |s: &EndpointSlice| s.ports.clone().unwrap_or_default();
    existing.metadata.namespace == placeholder.metadata.namespace
        && labels(existing) == labels(placeholder)
        && existing.address_type == placeholder.address_type
        && endpoints(existing).is_empty()
        && ports(existing) == ports(placeholder)
}

/// Of `slices`, the one closest to full once `count` endpoints are added,
/// if any has room (upstream `getSliceToFill`; the first of equals wins).
///
/// Example: with room for 100, slices of 90, 50 and 30 endpoints and 45
/// to place, the 50 is chosen (95, 5 short); the 90 has no room.
pub fn slice_to_fill(slices: &[&EndpointSlice], count: usize, max: usize) -> Option<usize> {
    let mut closest = (None, max);
    for (i, slice) in slices.iter().enumerate() {
        match max.checked_sub(count + endpoints(slice).len()) {
            Some(0) => return Some(i),
            Some(diff) if diff < closest.1 => closest = (Some(i), diff),
            _ => {}
        }
    }
    closest.0
}

/// Sets (or, with no trigger time, removes) the last-change-trigger-time
/// annotation, in RFC 3339 with as many fractional digits as needed, as Go's
/// `RFC3339Nano` prints it (upstream
/// `addTriggerTimeAnnotation`).
pub fn set_trigger_time(slice: &mut EndpointSlice, trigger_time: Option<Timestamp>) {
    let annotations = slice.metadata.annotations.get_or_insert_with(BTreeMap::new);
    match trigger_time {
        Some(at) => {
            annotations.insert(LAST_CHANGE_TRIGGER_TIME.to_owned(), at.to_string());
        }
        None => {
            annotations.remove(LAST_CHANGE_TRIGGER_TIME);
        }
    }
}

/// The queue key (`namespace/name`) of the Service a slice belongs to, by
/// its service-name label (upstream `ServiceControllerKey`); `None`
/// without the label.
pub fn service_key(slice: &EndpointSlice) -> Option<String> {
    let name = slice.metadata.labels.as_ref()?.get(LABEL_SERVICE_NAME).filter(|n| !n.is_empty())?;
    Some(kcm_objects::object_key(slice.metadata.namespace.as_deref(), name))
}

/// Whether `slice` is managed by this controller.
pub fn managed_by_controller(slice: &EndpointSlice) -> bool {
    slice.metadata.labels.as_ref().and_then(|l| l.get(LABEL_MANAGED_BY)).map(String::as_str)
        == Some(CONTROLLER_QUALIFIED_NAME)
}

/// Whether the Service asks for topology aware hints (upstream
/// `hintsEnabled`): the deprecated annotation if set, else the
/// topology-mode one, is `Auto` or `auto`.
pub fn hints_enabled(service: &Service) -> bool {
    let annotations = service.metadata.annotations.as_ref();
    let value = annotations
        .and_then(|a| a.get(DEPRECATED_ANNOTATION_TOPOLOGY_AWARE_HINTS).or_else(|| a.get(ANNOTATION_TOPOLOGY_MODE)));
    matches!(value.map(String::as_str), Some("Auto" | "auto"))
}

/// A slice's endpoints (absent is none).
pub fn endpoints(slice: &EndpointSlice) -> &[Endpoint] {
    slice.endpoints.as_deref().unwrap_or_default()
}

/// A slice's endpoints, to change.
pub fn endpoints_mut(slice: &mut EndpointSlice) -> &mut Vec<Endpoint> {
    slice.endpoints.get_or_insert_with(Vec::new)
}
