//! The reconciler (upstream `reconciler.go`): from the pods a Service
//! selects and the slices it has, the slices to create, update and
//! delete, per address type.
//!
//! Packing keeps churn low, in upstream's three steps per set of ports:
//! 1. every existing slice keeps the desired endpoints it already holds
//!    (updated in place when they changed) and drops the others; a slice
//!    left empty is deleted;
//! 2. the slices already being updated are filled up, fullest first;
//! 3. what is left goes, when fewer than a slice holds, into the unchanged
//!    slice it fills closest to full, else into new slices.
//!
//! Example, 100 per slice: slices of 100 and 60 endpoints, 5 pods of the
//! first gone and 10 new: the first is updated to 95 and filled back to
//! 100; the 5 left fit the 60, which becomes 65. Two updates, no create.
//!
//! Hints follow (per address type): the topology cache's for a Service
//! annotated `service.kubernetes.io/topology-mode: Auto`, else those of
//! its `trafficDistribution`, else none.
//!
//! A Service with no endpoints of a type keeps one placeholder slice of
//! it (no ports, no endpoints), so consumers can tell "no endpoints" from
//! "not yet synced". Finally ([`finalize`]), creates are turned into
//! updates of slices that would have been deleted, and every write gets
//! the last-change-trigger-time.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::{Endpoint, EndpointPort, EndpointSlice};
use kcm_objects::{Node, Pod};

use crate::common::endpoint_pods::{service_key, should_pod_be_in_endpoints};

use super::endpoints::{AddressType, EndpointKey, address_types_for_service, endpoint_ports, pod_to_endpoint};
use super::packing::pack;
use super::slices::{hints_enabled, is_same_placeholder, new_endpoint_slice, owned_by, set_trigger_time};
use super::topologycache::{HintEvent, TopologyCache, messages as hint_messages};
use super::trafficdist::{Heuristic, PREFER_CLOSE, PREFER_SAME_NODE, PREFER_SAME_ZONE, reconcile_hints};

/// What one Service's reconcile is given: the cached Service, the pods
/// its selector matches, its slices managed by this controller (those
/// being deleted left out), and a way to find a pod's node.
pub struct Input<'a> {
    /// The Service.
    pub service: &'a Service,
    /// The pods its selector matches.
    pub pods: &'a [&'a Pod],
    /// Its slices, managed by this controller and not being deleted.
    pub slices: &'a [&'a EndpointSlice],
    /// The cached node of that name.
    pub node: &'a dyn Fn(&str) -> Option<&'a Node>,
    /// The change the writes reflect ([`TriggerTimeTracker`](super::TriggerTimeTracker)).
    pub trigger_time: Option<Timestamp>,
    /// `--max-endpoints-per-slice`.
    pub max_endpoints_per_slice: usize,
}

/// The writes of one address type, in the order they are made: creates,
/// then updates, then deletes (upstream `finalize`). The executor stops
/// at the first failure.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes {
    /// The address type.
    pub address_type: Option<AddressType>,
    /// Slices to create (named by `generateName`). Left out when the
    /// Service is being deleted, so as not to race its garbage collection.
    pub create: Vec<EndpointSlice>,
    /// Whole slices to send as updates.
    pub update: Vec<EndpointSlice>,
    /// Slices to delete (NotFound is success).
    pub delete: Vec<EndpointSlice>,
    /// Endpoints added (upstream `endpoints_added_per_sync`).
    pub added: usize,
    /// Endpoints removed (upstream `endpoints_removed_per_sync`).
    pub removed: usize,
    /// Per set of ports: endpoints desired and slices holding them once
    /// written (upstream's `EfficiencyInfo`, for the metrics cache).
    pub efficiency: Vec<Efficiency>,
}

/// Endpoints and slices of one set of ports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Efficiency {
    /// Endpoints desired.
    pub endpoints: usize,
    /// Slices holding them.
    pub slices: usize,
}

/// Everything one Service's reconcile decided.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reconciled {
    /// One entry per address type the Service has.
    pub changes: Vec<Changes>,
    /// Slices of an address type the Service no longer has, deleted after
    /// the rest.
    pub stale_address_types: Vec<EndpointSlice>,
    /// Pods left out because their node is not in the cache: the sync
    /// fails after its writes, to be retried (upstream's error text).
    pub skipped: Vec<String>,
    /// Events about the Service's topology aware hints, in order.
    pub events: Vec<HintEvent>,
    /// The `topology` label of `endpointslices_changed_per_sync`: `Auto`
    /// or `Disabled`.
    pub topology: &'static str,
    /// Its `traffic_distribution` label: the value in force, or empty.
    pub traffic_distribution: String,
}

/// Whether a `trafficDistribution` value is one this cluster honours
/// (upstream `validTrafficDistribution`; `PreferSameTrafficDistribution`
/// is GA in 1.37).
pub fn valid_traffic_distribution(value: Option<&str>) -> bool {
    matches!(value, Some(PREFER_CLOSE | PREFER_SAME_ZONE | PREFER_SAME_NODE))
}

/// The slices to write for `input.service` (upstream `Reconcile`), with
/// the topology cache's hints when the Service asks for them.
pub fn reconcile(input: &Input<'_>, topology: &mut TopologyCache) -> Reconciled {
    let service = input.service;
    let key = service_key(service);
    let types = address_types_for_service(service);
    let mut by_type: BTreeMap<AddressType, Vec<&EndpointSlice>> = BTreeMap::new();
    let mut stale_address_types = Vec::new();
    for slice in input.slices {
        match AddressType::parse(&slice.address_type).filter(|t| types.contains(t)) {
            Some(t) => by_type.entry(t).or_default().push(slice),
            None => {
                if let Some(t) = AddressType::parse(&slice.address_type) {
                    topology.remove_hints(&key, t);
                }
                stale_address_types.push((*slice).clone());
            }
        }
    }
    let traffic_distribution = service.spec.as_ref().and_then(|s| s.traffic_distribution.as_deref());
    let hints = hints_enabled(service);
    let use_traffic_distribution = valid_traffic_distribution(traffic_distribution) && !hints;
    let mut skipped = Vec::new();
    let mut events = Vec::new();
    let changes = types
        .iter()
        .map(|t| {
            let existing = by_type.remove(t).unwrap_or_default();
            let mut changes = reconcile_address_type(input, &existing, *t, &mut skipped);
            let unchanged = unchanged_slices(&existing, &changes);
            if hints {
                events.extend(topology.add_hints(&key, *t, &mut changes.create, &mut changes.update, &unchanged));
            } else {
                // Hints the annotation put there go, unless trafficDistribution
                // sets its own.
                if topology.has_populated_hints(&key) {
                    events.push(HintEvent::disabled(hint_messages::TOPOLOGY_AWARE_HINTS_DISABLED, *t));
                }
                topology.remove_hints(&key, *t);
                let heuristic = if use_traffic_distribution {
                    Heuristic::for_distribution(traffic_distribution)
                } else {
                    Heuristic::Remove
                };
                reconcile_hints(heuristic, &mut changes.create, &mut changes.update, &unchanged);
            }
            finalize(service, &mut changes, input.trigger_time);
            changes
        })
        .collect();
    Reconciled {
        changes,
        stale_address_types,
        skipped,
        events,
        topology: if hints { "Auto" } else { "Disabled" },
        traffic_distribution: if use_traffic_distribution {
            traffic_distribution.unwrap_or_default().to_owned()
        } else {
            String::new()
        },
    }
}

/// A set of ports, as upstream's `PortMapKey` tells sets apart: order
/// does not matter.
type PortKey = Vec<(Option<String>, Option<i32>, Option<String>, Option<String>)>;

fn port_key(ports: &[EndpointPort]) -> PortKey {
    let mut key: PortKey =
        ports.iter().map(|p| (p.name.clone(), p.port, p.protocol.clone(), p.app_protocol.clone())).collect();
    key.sort();
    key
}

/// The desired endpoints of one set of ports, by key, and the ports.
struct Desired {
    ports: Vec<EndpointPort>,
    endpoints: BTreeMap<EndpointKey, Endpoint>,
}

/// Upstream `reconcileByAddressType`, up to the hints.
fn reconcile_address_type(
    input: &Input<'_>,
    existing: &[&EndpointSlice],
    address_type: AddressType,
    skipped: &mut Vec<String>,
) -> Changes {
    let service = input.service;
    let mut changes = Changes { address_type: Some(address_type), ..Changes::default() };
    let mut existing_by_ports: BTreeMap<PortKey, Vec<&EndpointSlice>> = BTreeMap::new();
    for slice in existing {
        if owned_by(slice, service) {
            existing_by_ports.entry(port_key(slice.ports.as_deref().unwrap_or_default())).or_default().push(slice);
        } else {
            changes.delete.push((*slice).clone());
        }
    }
    let publish_not_ready = service.spec.as_ref().and_then(|s| s.publish_not_ready_addresses).unwrap_or(false);
    let (namespace, name) =
        (service.metadata.namespace.as_deref().unwrap_or(""), service.metadata.name.as_deref().unwrap_or(""));
    let mut desired: BTreeMap<PortKey, Desired> = BTreeMap::new();
    for pod in input.pods.iter().filter(|p| should_pod_be_in_endpoints(p, true)) {
        let ports = endpoint_ports(service, pod);
        let entry = desired.entry(port_key(&ports)).or_insert_with(|| Desired { ports, endpoints: BTreeMap::new() });
        let node_name = pod.spec.node_name.as_deref().unwrap_or("");
        let node = (input.node)(node_name);
        if node.is_none() && !publish_not_ready {
            skipped.push(format!(
                "skipping Pod {} for Service {namespace}/{name}: Node {node_name} Not Found",
                pod.metadata.name
            ));
            continue;
        }
        let endpoint = pod_to_endpoint(pod, node, service, address_type);
        if !endpoint.addresses.is_empty() {
            entry.endpoints.insert(EndpointKey::of(&endpoint), endpoint);
        }
    }
    for (key, wanted) in desired.iter_mut() {
        let slices = existing_by_ports.get(key).map(Vec::as_slice).unwrap_or_default();
        let endpoints = wanted.endpoints.len();
        let packed = pack(
            input.service,
            input.max_endpoints_per_slice,
            slices,
            std::mem::take(&mut wanted.endpoints),
            &wanted.ports,
            address_type,
        );
        changes.added += packed.added;
        changes.removed += packed.removed;
        changes
            .efficiency
            .push(Efficiency { endpoints, slices: slices.len() + packed.create.len() - packed.delete.len() });
        changes.create.extend(packed.create);
        changes.update.extend(packed.update);
        changes.delete.extend(packed.delete);
    }
    for (key, slices) in &existing_by_ports {
        if !desired.contains_key(key) {
            changes.delete.extend(slices.iter().map(|s| (*s).clone()));
        }
    }
    if existing.len() == changes.delete.len() && changes.create.is_empty() {
        let placeholder = new_endpoint_slice(service, Vec::new(), address_type);
        if changes.delete.len() == 1 && is_same_placeholder(&changes.delete[0], &placeholder) {
            changes.delete.clear();
        } else {
            changes.create.push(placeholder);
        }
        changes.efficiency.push(Efficiency { endpoints: 0, slices: 1 });
    }
    changes
}

/// The existing slices neither updated nor deleted (upstream `unchangedSlices`).
fn unchanged_slices<'a>(existing: &[&'a EndpointSlice], changes: &Changes) -> Vec<&'a EndpointSlice> {
    let changed = |name: &Option<String>| {
        changes.update.iter().chain(&changes.delete).any(|s| s.metadata.name.is_some() && &s.metadata.name == name)
    };
    existing.iter().copied().filter(|s| !changed(&s.metadata.name)).collect()
}

/// Upstream `finalize`, but the API calls: a create and a delete of one
/// address type become an update of the slice to delete (when the
/// Service owns it), creates are dropped for a Service being deleted, and
/// every write is stamped with the trigger time.
pub fn finalize(service: &Service, changes: &mut Changes, trigger_time: Option<Timestamp>) {
    let mut i = 0;
    while i < changes.delete.len() && !changes.create.is_empty() {
        let reusable = changes.create.last().is_some_and(|c| c.address_type == changes.delete[i].address_type)
            && owned_by(&changes.delete[i], service);
        if reusable {
            let old = changes.delete.remove(i);
            if let Some(mut slice) = changes.create.pop() {
                slice.metadata.name = old.metadata.name;
                changes.update.push(slice);
            }
        } else {
            i += 1;
        }
    }
    if service.metadata.deletion_timestamp.is_some() {
        changes.create.clear();
    }
    for slice in changes.create.iter_mut().chain(changes.update.iter_mut()) {
        set_trigger_time(slice, trigger_time);
    }
}
