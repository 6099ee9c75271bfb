//! The desired endpoints, from pods (upstream `utils.go` `podToEndpoint`,
//! `getEndpointPorts`, `getEndpointAddresses`, `FindPort`, and
//! `util/controller_utils.go` `ShouldPodBeInEndpoints`,
//! `ShouldSetHostname`, `EndpointsEqualBeyondHash`).
//!
//! An endpoint is keyed as upstream hashes it ([`EndpointKey`]: its sorted
//! addresses, hostname, and the pod's namespace and name); two endpoints
//! with one key are the same endpoint, and what else differs
//! ([`equal_beyond_key`]) is an update of it.

use std::net::IpAddr;

use k8s_openapi::api::core::v1::{ObjectReference, Service};
use k8s_openapi::api::discovery::v1::{Endpoint, EndpointConditions, EndpointPort};
use kcm_objects::{Node, Pod};

use crate::common::endpoint_pods::{find_port, should_set_hostname};
use crate::common::pod::is_pod_ready;

/// The node label naming a node's zone (upstream `LabelTopologyZone`).
pub const LABEL_TOPOLOGY_ZONE: &str = "topology.kubernetes.io/zone";

/// An EndpointSlice's address family (`addressType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AddressType {
    /// `IPv4`.
    IPv4,
    /// `IPv6`.
    IPv6,
}

impl AddressType {
    /// The spelling of `addressType`.
    pub fn as_str(self) -> &'static str {
        match self {
            AddressType::IPv4 => "IPv4",
            AddressType::IPv6 => "IPv6",
        }
    }

    /// The address type `addressType` names; `None` for `FQDN` and
    /// anything else this controller never manages.
    pub fn parse(address_type: &str) -> Option<Self> {
        match address_type {
            "IPv4" => Some(AddressType::IPv4),
            "IPv6" => Some(AddressType::IPv6),
            _ => None,
        }
    }
}

/// The endpoint of `pod` (on `node`, when the cache has it) for `service`
/// in `address_type` (upstream `podToEndpoint`). Serving is readiness;
/// ready is serving and not terminating, or always with
/// `publishNotReadyAddresses`.
pub fn pod_to_endpoint(pod: &Pod, node: Option<&Node>, service: &Service, address_type: AddressType) -> Endpoint {
    let serving = is_pod_ready(pod);
    let terminating = pod.metadata.deletion_timestamp().is_some();
    let publish_not_ready = service.spec.as_ref().and_then(|s| s.publish_not_ready_addresses).unwrap_or(false);
    let ready = publish_not_ready || (serving && !terminating);
    let zone = node.and_then(|n| n.metadata.labels.get(LABEL_TOPOLOGY_ZONE)).filter(|z| !z.is_empty());
    Endpoint {
        addresses: endpoint_addresses(pod, address_type),
        conditions: Some(EndpointConditions {
            ready: Some(ready),
            serving: Some(serving),
            terminating: Some(terminating),
        }),
        target_ref: Some(ObjectReference {
            kind: Some("Pod".into()),
            namespace: Some(pod.metadata.namespace.to_string()),
            name: Some(pod.metadata.name.to_string()),
            uid: Some(pod.metadata.uid.to_string()),
            ..ObjectReference::default()
        }),
        node_name: pod.node_name().map(str::to_owned),
        zone: zone.map(str::to_owned),
        hostname: should_set_hostname(pod, service)
            .then(|| pod.spec.rare().hostname.as_deref().unwrap_or("").to_owned()),
        ..Endpoint::default()
    }
}

/// The pod's IPs of `address_type`, each re-spelt in its canonical form
/// (upstream parses and prints them again). An IP that does not parse
/// is left out.
pub fn endpoint_addresses(pod: &Pod, address_type: AddressType) -> Vec<String> {
    pod.status
        .pod_ips
        .iter()
        .filter_map(|ip| ip.parse::<IpAddr>().ok())
        .filter(|ip| match address_type {
            AddressType::IPv4 => ip.is_ipv4(),
            AddressType::IPv6 => ip.is_ipv6(),
        })
        .map(|ip| ip.to_string())
        .collect()
}

/// The ports of the Service `pod` serves, each resolved on the pod
/// (upstream `getEndpointPorts`): a port the pod cannot resolve is left
/// out, and a headless Service may have none.
pub fn endpoint_ports(service: &Service, pod: &Pod) -> Vec<EndpointPort> {
    let ports = service.spec.as_ref().and_then(|s| s.ports.as_deref()).unwrap_or_default();
    ports
        .iter()
        .filter_map(|port| {
            let number = find_port(pod, port)?;
            Some(EndpointPort {
                name: Some(port.name.clone().unwrap_or_default()),
                port: Some(number),
                protocol: Some(port.protocol.clone().unwrap_or_else(|| "TCP".to_owned())),
                app_protocol: port.app_protocol.clone(),
            })
        })
        .collect()
}

/// What identifies an endpoint across syncs (upstream `hashEndpoint`):
/// its addresses (sorted), its hostname, and its target's namespace and
/// name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EndpointKey {
    addresses: Vec<String>,
    hostname: String,
    namespace: String,
    name: String,
}

impl EndpointKey {
    /// The key of `endpoint`.
    pub fn of(endpoint: &Endpoint) -> Self {
        let mut addresses = endpoint.addresses.clone();
        addresses.sort();
        let target = endpoint.target_ref.as_ref();
        Self {
            addresses,
            hostname: endpoint.hostname.clone().unwrap_or_default(),
            namespace: target.and_then(|t| t.namespace.clone()).unwrap_or_default(),
            name: target.and_then(|t| t.name.clone()).unwrap_or_default(),
        }
    }
}

/// Whether two endpoints of one key are alike in everything else this
/// controller sets: node, zone, conditions, and target (its
/// resourceVersion aside). Hints are the hint phase's (upstream
/// `EndpointsEqualBeyondHash`).
pub fn equal_beyond_key(a: &Endpoint, b: &Endpoint) -> bool {
    let conditions = |e: &Endpoint| {
        let c = e.conditions.clone().unwrap_or_default();
        (c.ready, c.serving, c.terminating)
    };
    let target = |e: &Endpoint| {
        e.target_ref.clone().map(|mut t| {
            t.resource_version = None;
            t
        })
    };
    a.node_name == b.node_name && a.zone == b.zone && conditions(a) == conditions(b) && target(a) == target(b)
}

/// The address types a Service's slices are kept in (upstream
/// `getAddressTypesForService`): its `ipFamilies`; without them (an old
/// API server), the family of its ClusterIP, or both for a headless one.
pub fn address_types_for_service(service: &Service) -> Vec<AddressType> {
    let spec = service.spec.as_ref();
    let mut types: Vec<AddressType> = spec
        .and_then(|s| s.ip_families.as_deref())
        .unwrap_or_default()
        .iter()
        .filter_map(|family| AddressType::parse(family))
        .collect();
    types.sort();
    types.dedup();
    if !types.is_empty() {
        return types;
    }
    match spec.and_then(|s| s.cluster_ip.as_deref()).filter(|ip| !ip.is_empty() && *ip != "None") {
        Some(ip) if ip.parse::<IpAddr>().is_ok_and(|ip| ip.is_ipv6()) => vec![AddressType::IPv6],
        Some(_) => vec![AddressType::IPv4],
        None => vec![AddressType::IPv4, AddressType::IPv6],
    }
}

/// Whether the Service has a ClusterIP (not headless; upstream
/// `isServiceIPSet`).
pub fn is_service_ip_set(service: &Service) -> bool {
    service.spec.as_ref().and_then(|s| s.cluster_ip.as_deref()).is_some_and(|ip| !ip.is_empty() && ip != "None")
}
