//! The packing of one set of ports (upstream `reconcileByPortMapping`):
//! the three steps of the reconciler's module doc, which keep churn low
//! by reusing and filling existing slices before making new ones.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::{Endpoint, EndpointPort, EndpointSlice};

use super::endpoints::{AddressType, EndpointKey, equal_beyond_key};
use super::slices::{endpoints, endpoints_mut, new_endpoint_slice, slice_labels, slice_to_fill};

/// The writes of one set of ports.
#[derive(Default)]
pub(super) struct Packed {
    pub(super) create: Vec<EndpointSlice>,
    pub(super) update: Vec<EndpointSlice>,
    pub(super) delete: Vec<EndpointSlice>,
    pub(super) added: usize,
    pub(super) removed: usize,
}

/// What step 1 decided of an existing slice.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fate {
    Unchanged,
    Update,
    Delete,
}

/// Upstream `reconcileByPortMapping`: the three steps, for `service`'s
/// slices of at most `max` endpoints.
pub(super) fn pack(
    service: &Service,
    max: usize,
    existing: &[&EndpointSlice],
    mut desired: BTreeMap<EndpointKey, Endpoint>,
    ports: &[EndpointPort],
    address_type: AddressType,
) -> Packed {
    let mut slices: Vec<EndpointSlice> = Vec::with_capacity(existing.len());
    let mut fates = Vec::with_capacity(existing.len());
    let mut removed = 0;
    // 1. keep what is still desired, updated; drop the rest.
    for slice in existing {
        let mut kept = Vec::with_capacity(endpoints(slice).len());
        let mut endpoint_updated = false;
        for endpoint in endpoints(slice) {
            if let Some(wanted) = desired.remove(&EndpointKey::of(endpoint)) {
                endpoint_updated |= !equal_beyond_key(&wanted, endpoint);
                kept.push(wanted);
            }
        }
        let (labels, labels_changed) = slice_labels(slice, service);
        let mut copy = (*slice).clone();
        let fate = if endpoint_updated || kept.len() != endpoints(slice).len() {
            removed += endpoints(slice).len().saturating_sub(kept.len());
            copy.endpoints = Some(kept);
            copy.metadata.labels = Some(labels);
            if endpoints(&copy).is_empty() { Fate::Delete } else { Fate::Update }
        } else if labels_changed {
            copy.metadata.labels = Some(labels);
            Fate::Update
        } else {
            Fate::Unchanged
        };
        slices.push(copy);
        fates.push(fate);
    }
    let added = desired.len();
    // 2. fill the slices being updated, fullest first.
    let mut updating: Vec<usize> = (0..slices.len()).filter(|i| fates[*i] == Fate::Update).collect();
    updating.sort_by_key(|i| std::cmp::Reverse(endpoints(&slices[*i]).len()));
    for i in updating {
        fill(&mut slices[i], &mut desired, max);
    }
    // 3. the rest into the unchanged slice it fills best, else new ones.
    let mut create = Vec::new();
    while !desired.is_empty() {
        let target = if desired.len() < max {
            let unchanged: Vec<usize> = (0..slices.len()).filter(|i| fates[*i] == Fate::Unchanged).collect();
            let candidates: Vec<&EndpointSlice> = unchanged.iter().map(|i| &slices[*i]).collect();
            slice_to_fill(&candidates, desired.len(), max).map(|c| unchanged[c])
        } else {
            None
        };
        match target {
            Some(i) => {
                fill(&mut slices[i], &mut desired, max);
                fates[i] = Fate::Update;
            }
            None => {
                let mut slice = new_endpoint_slice(service, ports.to_vec(), address_type);
                fill(&mut slice, &mut desired, max);
                create.push(slice);
            }
        }
    }
    let mut packed = Packed { create, added, removed, ..Packed::default() };
    for (slice, fate) in slices.into_iter().zip(fates) {
        match fate {
            Fate::Update => packed.update.push(slice),
            Fate::Delete => packed.delete.push(slice),
            Fate::Unchanged => {}
        }
    }
    packed
}

/// Moves desired endpoints into `slice` until it is full.
fn fill(slice: &mut EndpointSlice, desired: &mut BTreeMap<EndpointKey, Endpoint>, max: usize) {
    while endpoints(slice).len() < max {
        let Some((_, endpoint)) = desired.pop_first() else { break };
        endpoints_mut(slice).push(endpoint);
    }
}
