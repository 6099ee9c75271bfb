//! The topology cache (upstream `topologycache/topologycache.go`): hints
//! for Services annotated `service.kubernetes.io/topology-mode: Auto`,
//! each ready endpoint hinted for a zone so that every zone gets endpoints
//! in proportion to its ready nodes' allocatable CPU, none overloaded by
//! more than 20% (`allocation`).
//!
//! State: the zones' CPU shares ([`TopologyCache::set_nodes`], recomputed
//! on node changes) and, per Service and address type, the hints last
//! allocated, which tell whether a node change overloads it
//! ([`TopologyCache::overloaded_services`]) and whether hints were on
//! (events `TopologyAwareHintsEnabled`/`TopologyAwareHintsDisabled`).
//! Nodes labelled `node-role.kubernetes.io/control-plane` or `.../master`
//! and nodes not Ready are left out; one node without a zone or CPU
//! leaves the cache without shares, and hints off everywhere.

mod allocation;

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::discovery::v1::{EndpointHints, EndpointSlice, ForZone};
use kcm_objects::Node;

use super::endpoints::{AddressType, LABEL_TOPOLOGY_ZONE};
use super::slices::endpoints_mut;
use super::trafficdist::{Heuristic, reconcile_hints};
use allocation::{
    Allocation, OVERLOAD_THRESHOLD, ZoneCounts, cpu_millis, endpoint_ready, giving_and_receiving, hints_by_zone,
    ready_endpoints, redistribute, service_overloaded,
};

/// Upstream's event messages (`topologycache/event.go`).
pub mod messages {
    /// An endpoint has no zone.
    pub const NO_ZONE_SPECIFIED: &str = "One or more endpoints do not have a zone specified";
    /// Redistribution left no zone any hint.
    pub const NO_ALLOCATED_HINTS_FOR_ZONES: &str = "No hints allocated for zones";
    /// Hints turned on.
    pub const TOPOLOGY_AWARE_HINTS_ENABLED: &str = "Topology Aware Hints has been enabled";
    /// Hints turned off (the annotation removed).
    pub const TOPOLOGY_AWARE_HINTS_DISABLED: &str = "Topology Aware Hints has been disabled";
    /// A node lacks a zone or allocatable CPU.
    pub const INSUFFICIENT_NODE_INFO: &str =
        "Insufficient Node information: allocatable CPU or zone not specified on one or more nodes";
    /// One zone only.
    pub const NODES_READY_IN_ONE_ZONE_ONLY: &str = "Nodes only ready in one zone";
    /// Fewer endpoints than zones.
    pub const INSUFFICIENT_NUMBER_OF_ENDPOINTS: &str = "Insufficient number of endpoints";
    /// The minimums do not fit.
    pub const MIN_ALLOCATION_EXCEEDS_OVERLOAD_THRESHOLD: &str =
        "Unable to allocate minimum required endpoints to each zone without exceeding overload threshold";
}

/// An event about a Service's hints (upstream `EventBuilder`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HintEvent {
    /// `Normal` (enabled) or `Warning` (disabled).
    pub warning: bool,
    /// `TopologyAwareHintsEnabled` or `TopologyAwareHintsDisabled`.
    pub reason: &'static str,
    /// Upstream's message, with `, addressType: <type>`.
    pub message: String,
}

impl HintEvent {
    /// `TopologyAwareHintsDisabled` with `message` for `address_type`.
    pub fn disabled(message: &str, address_type: AddressType) -> Self {
        Self { warning: true, reason: "TopologyAwareHintsDisabled", message: with_address_type(message, address_type) }
    }
}

/// Upstream `FormatWithAddressType`.
fn with_address_type(message: &str, address_type: AddressType) -> String {
    format!("{message}, addressType: {}", address_type.as_str())
}

/// Labels that keep a node out of the CPU shares.
const EXCLUDED_LABELS: [&str; 2] = ["node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master"];

/// Upstream `TopologyCache`, keyed by Service (`namespace/name`).
#[derive(Debug, Default)]
pub struct TopologyCache {
    /// Each zone's share of the CPU; `None` without sufficient node
    /// information (or fewer than two zones).
    cpu_ratios_by_zone: Option<BTreeMap<String, f64>>,
    /// Hints allocated per Service and address type.
    endpoints_by_service: BTreeMap<String, BTreeMap<AddressType, ZoneCounts>>,
    /// Services whose hints are on.
    hints_populated: BTreeSet<String>,
}

impl TopologyCache {
    /// An empty cache (no node information yet).
    pub fn new() -> Self {
        Self::default()
    }

    /// Recomputes the zones' CPU shares from `nodes` (upstream `SetNodes`).
    pub fn set_nodes<'a>(&mut self, nodes: impl IntoIterator<Item = &'a Node>) {
        let mut by_zone: BTreeMap<String, i64> = BTreeMap::new();
        for node in nodes {
            let labels = &node.metadata.labels;
            if EXCLUDED_LABELS.iter().any(|l| labels.get(l).is_some()) {
                continue;
            }
            if node.condition("Ready").is_none_or(|c| c.status != "True") {
                continue;
            }
            let cpu = node.status.allocatable.cpu.as_deref().and_then(cpu_millis).unwrap_or(0);
            let zone = labels.get(LABEL_TOPOLOGY_ZONE).unwrap_or("");
            if zone.is_empty() || cpu == 0 {
                self.cpu_ratios_by_zone = None;
                return;
            }
            *by_zone.entry(zone.to_owned()).or_default() += cpu;
        }
        let total: i64 = by_zone.values().sum();
        self.cpu_ratios_by_zone = (total > 0 && by_zone.len() >= 2)
            .then(|| by_zone.into_iter().map(|(zone, cpu)| (zone, cpu as f64 / total as f64)).collect());
    }

    /// Services whose hints leave a zone short after a node change
    /// (upstream `GetOverloadedServices`).
    pub fn overloaded_services(&self) -> Vec<String> {
        let empty = BTreeMap::new();
        let ratios = self.cpu_ratios_by_zone.as_ref().unwrap_or(&empty);
        self.endpoints_by_service
            .iter()
            .filter(|(_, by_type)| by_type.values().any(|hinted| service_overloaded(hinted, ratios)))
            .map(|(key, _)| key.clone())
            .collect()
    }

    /// Whether Service `key` has hints on.
    pub fn has_populated_hints(&self, key: &str) -> bool {
        self.hints_populated.contains(key)
    }

    /// Forgets Service `key`'s hints of `address_type`, and that its hints
    /// are on.
    pub fn remove_hints(&mut self, key: &str, address_type: AddressType) {
        if let Some(by_type) = self.endpoints_by_service.get_mut(key) {
            by_type.remove(&address_type);
            if by_type.is_empty() {
                self.endpoints_by_service.remove(key);
            }
        }
        self.hints_populated.remove(key);
    }

    /// Forgets a deleted Service.
    pub fn delete_service(&mut self, key: &str) {
        self.endpoints_by_service.remove(key);
        self.hints_populated.remove(key);
    }

    /// The allocation of `total` ready endpoints to the zones, or why
    /// there is none (upstream `getAllocations`).
    fn allocations(&self, total: usize) -> Result<BTreeMap<String, Allocation>, String> {
        let Some(ratios) = &self.cpu_ratios_by_zone else {
            return Err(messages::INSUFFICIENT_NODE_INFO.to_owned());
        };
        if ratios.len() < 2 {
            return Err(messages::NODES_READY_IN_ONE_ZONE_ONLY.to_owned());
        }
        let counted = |message: &str| format!("{message} ({total} endpoints, {} zones)", ratios.len());
        if ratios.len() > total {
            return Err(counted(messages::INSUFFICIENT_NUMBER_OF_ENDPOINTS));
        }
        let mut allocations = BTreeMap::new();
        let mut min_total = 0;
        for (zone, ratio) in ratios {
            let desired = ratio * total as f64;
            let minimum = (desired * (1.0 / (1.0 + OVERLOAD_THRESHOLD))).ceil() as usize;
            min_total += minimum;
            if min_total > total {
                return Err(counted(messages::MIN_ALLOCATION_EXCEEDS_OVERLOAD_THRESHOLD));
            }
            allocations.insert(zone.clone(), Allocation { minimum, maximum: 0, desired: desired.max(minimum as f64) });
        }
        for allocation in allocations.values_mut() {
            allocation.maximum = allocation.minimum + total - min_total;
        }
        Ok(allocations)
    }

    /// Hints the slices about to be written and those unchanged whose
    /// hints no longer fit (moved into `to_update`), for Service `key`
    /// (upstream `AddHints`); on any reason not to, removes every hint
    /// instead. Answers the events to record.
    pub fn add_hints(
        &mut self,
        key: &str,
        address_type: AddressType,
        to_create: &mut [EndpointSlice],
        to_update: &mut Vec<EndpointSlice>,
        unchanged: &[&EndpointSlice],
    ) -> Vec<HintEvent> {
        let total: usize =
            to_create.iter().chain(to_update.iter()).chain(unchanged.iter().copied()).map(ready_endpoints).sum();
        let disable = |cache: &mut Self,
                       message: &str,
                       create: &mut [EndpointSlice],
                       update: &mut Vec<EndpointSlice>,
                       still: &[&EndpointSlice]| {
            cache.remove_hints(key, address_type);
            reconcile_hints(Heuristic::Remove, create, update, still);
            vec![HintEvent::disabled(message, address_type)]
        };
        let allocations = match self.allocations(total) {
            Ok(allocations) => allocations,
            Err(message) => return disable(self, &message, to_create, to_update, unchanged),
        };
        // Unchanged slices whose hints still fit are counted; the others
        // are re-hinted with the slices being written.
        let mut allocated = ZoneCounts::new();
        let mut still_unchanged = Vec::new();
        for slice in unchanged {
            match hints_by_zone(slice, &allocated, &allocations) {
                Some(counts) => {
                    counts.into_iter().for_each(|(zone, n)| *allocated.entry(zone).or_default() += n);
                    still_unchanged.push(*slice);
                }
                None => to_update.push((*slice).clone()),
            }
        }
        // 1. each ready endpoint hinted for its own zone.
        let zoneless = to_create
            .iter()
            .chain(to_update.iter())
            .flat_map(super::slices::endpoints)
            .any(|e| endpoint_ready(e) && e.zone.as_deref().is_none_or(str::is_empty));
        if zoneless {
            return disable(self, messages::NO_ZONE_SPECIFIED, to_create, to_update, &still_unchanged);
        }
        for slice in to_create.iter_mut().chain(to_update.iter_mut()) {
            for endpoint in endpoints_mut(slice).iter_mut().filter(|e| endpoint_ready(e)) {
                let zone = endpoint.zone.clone().unwrap_or_default();
                *allocated.entry(zone.clone()).or_default() += 1;
                endpoint.hints = Some(EndpointHints { for_zones: Some(vec![ForZone { name: zone }]), for_nodes: None });
            }
        }
        // 2. and 3. the surplus of some zones hinted for the others.
        let (giving, receiving) = giving_and_receiving(&allocations, &allocated);
        let mut writable: Vec<&mut EndpointSlice> = to_create.iter_mut().chain(to_update.iter_mut()).collect();
        for (zone, change) in redistribute(&mut writable, giving, receiving) {
            let count = allocated.entry(zone).or_default();
            *count = usize::try_from(*count as i64 + change).unwrap_or(0);
        }
        if allocated.is_empty() {
            return disable(self, messages::NO_ALLOCATED_HINTS_FOR_ZONES, to_create, to_update, &still_unchanged);
        }
        let was_on = self.has_populated_hints(key);
        self.endpoints_by_service.entry(key.to_owned()).or_default().insert(address_type, allocated);
        self.hints_populated.insert(key.to_owned());
        if was_on {
            return Vec::new();
        }
        vec![HintEvent {
            warning: false,
            reason: "TopologyAwareHintsEnabled",
            message: with_address_type(messages::TOPOLOGY_AWARE_HINTS_ENABLED, address_type),
        }]
    }
}

#[cfg(test)]
mod tests;
