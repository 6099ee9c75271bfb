//! Which Services a pod event queues (upstream `util/controller_utils.go`
//! `GetPodServiceMemberships`, `GetServicesToUpdateOnPodChange`,
//! `podEndpointsChanged`): a pod's add or delete queues the Services
//! selecting it; an update only when something an endpoint is built from
//! changed, and then, when its labels changed too, the Services of its
//! old labels as well.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Service;
use kcm_objects::Pod;

use crate::common::pod::is_pod_ready;
use crate::common::selector::{LabelSet, contains_all};

/// What changed of a pod, for its endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PodChange {
    /// Its endpoints may differ: deletion, readiness or IPs changed.
    pub endpoints: bool,
    /// Which Services select it may differ: labels, hostname or subdomain
    /// changed.
    pub labels: bool,
}

/// Upstream `podEndpointsChanged`. Name, namespace and uid never change,
/// and the node is set before the pod has an IP.
pub fn pod_endpoints_changed(old: &Pod, new: &Pod) -> PodChange {
    let labels = old.metadata.labels != new.metadata.labels
        || old.spec.hostname != new.spec.hostname
        || old.spec.subdomain != new.spec.subdomain;
    let endpoints = old.metadata.deletion_timestamp != new.metadata.deletion_timestamp
        || is_pod_ready(old) != is_pod_ready(new)
        || old.status.pod_ips != new.status.pod_ips;
    PodChange { endpoints, labels }
}

/// Whether `service` selects pods with `labels`: it has a selector (an
/// absent one selects nothing) and every pair of it matches.
pub fn selects(service: &Service, labels: &(impl LabelSet + ?Sized)) -> bool {
    let selector = service.spec.as_ref().and_then(|s| s.selector.as_ref());
    selector.is_some() && contains_all(labels, selector)
}

/// The keys of the Services of `services` (one namespace's) selecting
/// `pod`.
pub fn services_for_pod<'a>(services: impl IntoIterator<Item = &'a Service>, pod: &Pod) -> BTreeSet<String> {
    services.into_iter().filter(|s| selects(s, &pod.metadata.labels)).map(service_key).collect()
}

/// The Services an update from `old` to `new` queues (upstream
/// `GetServicesToUpdateOnPodChange`): none for a resync or a change no
/// endpoint shows; with new labels, those whose selection changed, or
/// all of both when the endpoints changed too.
pub fn services_to_update<'a>(
    services: impl IntoIterator<Item = &'a Service> + Clone,
    old: &Pod,
    new: &Pod,
) -> BTreeSet<String> {
    if old.metadata.resource_version == new.metadata.resource_version {
        return BTreeSet::new();
    }
    let change = pod_endpoints_changed(old, new);
    if !change.endpoints && !change.labels {
        return BTreeSet::new();
    }
    let current = services_for_pod(services.clone(), new);
    if !change.labels {
        return current;
    }
    let previous = services_for_pod(services, old);
    if change.endpoints {
        current.union(&previous).cloned().collect()
    } else {
        current.symmetric_difference(&previous).cloned().collect()
    }
}

/// `namespace/name`.
pub fn service_key(service: &Service) -> String {
    format!(
        "{}/{}",
        service.metadata.namespace.as_deref().unwrap_or(""),
        service.metadata.name.as_deref().unwrap_or("")
    )
}
