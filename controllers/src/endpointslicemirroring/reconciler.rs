//! From what an Endpoints asks for to the slice writes (upstream
//! `reconciler.go` `reconcileByPortMapping`, `finalize` and
//! `reconciler_helpers.go` `recycleSlices`).
//!
//! Per [`SliceKey`] one slice holds the Endpoints' endpoints of that key
//! (at most `--mirroring-max-endpoints-per-subset`): the first existing
//! slice of the key is rewritten when its endpoints, labels or annotations
//! differ, the others are deleted; without one a slice is created; a key
//! nothing asks for any more has its slices deleted. A create and a delete
//! of the same address type become one update of the slice to delete.
//! Example: an Endpoints whose only subset moved from port 80 to 8080 has
//! its `IPv4`/80 slice rewritten for 8080 instead of a create and a
//! delete.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Endpoints;
use k8s_openapi::api::discovery::v1::{EndpointPort, EndpointSlice};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use super::desired::{Desired, Group, SliceKey, endpoint_key, equal_beyond_key};
use super::{CONTROLLER_NAME, MANAGED_BY_LABEL, SERVICE_NAME_LABEL};
use crate::common::endpoints_annotations::LAST_CHANGE_TRIGGER_TIME;

/// kubectl's annotation of the last applied configuration, not mirrored.
pub const LAST_APPLIED_CONFIG: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Endpoints added, updated and removed by a sync (upstream
/// `totalsByAction`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Endpoints new to the slices.
    pub added: usize,
    /// Endpoints whose slice entry changes.
    pub updated: usize,
    /// Endpoints leaving the slices.
    pub removed: usize,
}

impl Totals {
    fn add(&mut self, other: Totals) {
        self.added += other.added;
        self.updated += other.updated;
        self.removed += other.removed;
    }
}

/// For the metrics: per slice key, the endpoints wanted and the slices
/// there will be (upstream `EfficiencyInfo`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Efficiency {
    /// Endpoints wanted.
    pub endpoints: usize,
    /// Slices after this sync.
    pub slices: usize,
}

/// The writes of one sync, run creates, then updates, then deletes
/// (stopping at the first failure).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Writes {
    /// Slices to create (`generateName` set, no name).
    pub create: Vec<EndpointSlice>,
    /// Slices to replace, by name.
    pub update: Vec<EndpointSlice>,
    /// Slices to delete.
    pub delete: Vec<EndpointSlice>,
    /// Endpoints added, updated, removed.
    pub totals: Totals,
    /// Per slice key, for the metrics cache.
    pub efficiency: Vec<Efficiency>,
}

/// The writes that mirror `endpoints` (asking for `desired`) given its
/// existing mirrored slices.
pub fn reconcile(endpoints: &Endpoints, desired: Desired, existing: &[&EndpointSlice], max: usize) -> Writes {
    let mut by_key: BTreeMap<SliceKey, Vec<&EndpointSlice>> = BTreeMap::new();
    for slice in existing {
        by_key
            .entry(SliceKey::new(&slice.address_type, slice.ports.as_deref().unwrap_or_default()))
            .or_default()
            .push(slice);
    }
    let mut writes = Writes::default();
    for (key, group) in desired.groups.iter() {
        let slices = by_key.get(key).map(Vec::as_slice).unwrap_or_default();
        let (created, deleted) = (writes.create.len(), writes.delete.len());
        by_port_mapping(endpoints, slices, group, &key.address_type, max, &mut writes);
        let slices_after = slices.len() + writes.create.len() - created - (writes.delete.len() - deleted);
        writes.efficiency.push(Efficiency { endpoints: group.endpoints.len(), slices: slices_after });
    }
    for (key, slices) in &by_key {
        if !desired.groups.contains_key(key) {
            writes.delete.extend(slices.iter().map(|s| (*s).clone()));
        }
    }
    recycle(&mut writes);
    if endpoints.metadata.deletion_timestamp.is_some() {
        // No new slices for an Endpoints being deleted.
        writes.create.clear();
    }
    writes
}

/// One key's writes (upstream `reconcileByPortMapping`).
fn by_port_mapping(
    endpoints: &Endpoints,
    existing: &[&EndpointSlice],
    group: &Group,
    address_type: &str,
    max: usize,
    writes: &mut Writes,
) {
    if group.endpoints.is_empty() {
        writes.delete.extend(existing.iter().map(|s| (*s).clone()));
        let removed = existing.iter().map(|s| s.endpoints.as_ref().map_or(0, Vec::len)).sum::<usize>();
        writes.totals.add(Totals { removed, ..Totals::default() });
        return;
    }
    let name = match existing.split_first() {
        None => {
            writes.totals.add(Totals { added: group.endpoints.len(), ..Totals::default() });
            None
        }
        Some((first, rest)) => {
            writes.delete.extend(rest.iter().map(|s| (*s).clone()));
            let totals = total_changes(first, group);
            writes.totals.add(totals);
            let unchanged = totals == Totals::default()
                && endpoints.metadata.labels.clone().unwrap_or_default() == own_labels_removed(first)
                && mirrored_annotations(endpoints) == first.metadata.annotations.clone().unwrap_or_default();
            if unchanged {
                return;
            }
            first.metadata.name.clone()
        }
    };
    let mut slice = new_endpoint_slice(endpoints, &group.ports, address_type, name);
    slice.endpoints = Some(group.endpoints.values().take(max).cloned().collect());
    if slice.metadata.name.is_some() { writes.update.push(slice) } else { writes.create.push(slice) }
}

/// Endpoints a slice's content differs from `group` by (upstream
/// `totalChanges`).
fn total_changes(slice: &EndpointSlice, group: &Group) -> Totals {
    let mut totals = Totals::default();
    let mut matched = 0;
    for endpoint in slice.endpoints.iter().flatten() {
        match group.endpoints.get(&endpoint_key(endpoint)) {
            None => totals.removed += 1,
            Some(wanted) => {
                matched += 1;
                if !equal_beyond_key(wanted, endpoint) {
                    totals.updated += 1;
                }
            }
        }
    }
    totals.added = group.endpoints.len().saturating_sub(matched);
    totals
}

/// The slice's labels without the two this controller sets.
fn own_labels_removed(slice: &EndpointSlice) -> BTreeMap<String, String> {
    let mut labels = slice.metadata.labels.clone().unwrap_or_default();
    labels.remove(MANAGED_BY_LABEL);
    labels.remove(SERVICE_NAME_LABEL);
    labels
}

/// The Endpoints' annotations a slice carries: all but the trigger time
/// and kubectl's last applied configuration.
fn mirrored_annotations(endpoints: &Endpoints) -> BTreeMap<String, String> {
    let mut annotations = endpoints.metadata.annotations.clone().unwrap_or_default();
    annotations.remove(LAST_CHANGE_TRIGGER_TIME);
    annotations.remove(LAST_APPLIED_CONFIG);
    annotations
}

/// A slice mirroring `endpoints` (upstream `newEndpointSlice`): its labels
/// plus [`SERVICE_NAME_LABEL`] and [`MANAGED_BY_LABEL`], its
/// [`mirrored_annotations`], owned by it; named `name`, or generated from
/// `<endpoints>-`.
pub fn new_endpoint_slice(
    endpoints: &Endpoints,
    ports: &[EndpointPort],
    address_type: &str,
    name: Option<String>,
) -> EndpointSlice {
    let endpoints_name = endpoints.metadata.name.clone().unwrap_or_default();
    let mut labels = endpoints.metadata.labels.clone().unwrap_or_default();
    labels.insert(SERVICE_NAME_LABEL.to_owned(), endpoints_name.clone());
    labels.insert(MANAGED_BY_LABEL.to_owned(), CONTROLLER_NAME.to_owned());
    let owner = OwnerReference {
        api_version: "v1".to_owned(),
        kind: "Endpoints".to_owned(),
        name: endpoints_name.clone(),
        uid: endpoints.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    };
    let generate_name = name.is_none().then(|| slice_prefix(&endpoints_name));
    EndpointSlice {
        metadata: ObjectMeta {
            name,
            generate_name,
            namespace: endpoints.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: Some(mirrored_annotations(endpoints)),
            owner_references: Some(vec![owner]),
            ..ObjectMeta::default()
        },
        address_type: address_type.to_owned(),
        endpoints: Some(Vec::new()),
        ports: Some(ports.to_vec()),
    }
}

/// `<name>-`, or `name` where the dash would make too long a name
/// (upstream `getEndpointSlicePrefix`).
fn slice_prefix(name: &str) -> String {
    // A generated name prefix is checked as a DNS subdomain (253 characters).
    if name.len() < 253 { format!("{name}-") } else { name.to_owned() }
}

/// Turns creates into updates of slices marked for deletion, type by type
/// (upstream `recycleSlices`).
fn recycle(writes: &mut Writes) {
    let mut creates = std::mem::take(&mut writes.create);
    let mut index = 0;
    while index < creates.len() {
        let address_type = creates[index].address_type.clone();
        match writes.delete.iter().position(|d| d.address_type == address_type) {
            Some(position) => {
                let reused = writes.delete.remove(position);
                let mut slice = creates.remove(index);
                slice.metadata.name = reused.metadata.name;
                writes.update.push(slice);
            }
            None => index += 1,
        }
    }
    writes.create = creates;
}
