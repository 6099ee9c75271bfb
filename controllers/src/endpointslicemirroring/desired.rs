//! The EndpointSlice endpoints an Endpoints asks for (upstream
//! `reconciler.go` `reconcile`'s first half, `reconciler_helpers.go`
//! `desiredCalc` and `utils.go` `addressToEndpoint`): after repacking its
//! subsets, each subset's addresses, up to `--mirroring-max-endpoints-per-subset`
//! of them (ready ones first), become endpoints grouped by
//! [`SliceKey`], the address family and the subset's ports; an address
//! that is not an IP is skipped.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};

use k8s_openapi::api::core::v1::{EndpointAddress, EndpointPort as SubsetPort, EndpointSubset, ObjectReference};
use k8s_openapi::api::discovery::v1::{Endpoint, EndpointConditions, EndpointPort};

use crate::common::endpoint_subsets::repack;

/// `IPv4` or `IPv6`, the `addressType` of a slice.
pub type AddressType = &'static str;

/// A port's identity: name, port, protocol, appProtocol.
type PortKey = (Option<String>, Option<i32>, Option<String>, Option<String>);

/// Which slices hold which endpoints (upstream `addrTypePortMapKey`): the
/// address type and the ports, in any order.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SliceKey {
    /// `IPv4` or `IPv6`.
    pub address_type: String,
    ports: Vec<PortKey>,
}

impl SliceKey {
    /// The key of a slice of `address_type` with `ports`.
    pub fn new(address_type: &str, ports: &[EndpointPort]) -> Self {
        let mut keys: Vec<PortKey> =
            ports.iter().map(|p| (p.name.clone(), p.port, p.protocol.clone(), p.app_protocol.clone())).collect();
        keys.sort();
        Self { address_type: address_type.to_owned(), ports: keys }
    }
}

/// An endpoint's identity in a set (upstream `hashEndpoint`): its
/// addresses, sorted, its hostname, and its target's namespace and name.
pub type EndpointKey = (Vec<String>, Option<String>, Option<String>, Option<String>);

/// The identity of `endpoint`.
pub fn endpoint_key(endpoint: &Endpoint) -> EndpointKey {
    let mut addresses = endpoint.addresses.clone();
    addresses.sort();
    let target = endpoint.target_ref.as_ref();
    (
        addresses,
        endpoint.hostname.clone(),
        target.and_then(|t| t.namespace.clone()),
        target.and_then(|t| t.name.clone()),
    )
}

/// The endpoints wanted for one [`SliceKey`], and its ports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Group {
    /// The slice ports.
    pub ports: Vec<EndpointPort>,
    /// The endpoints, by identity (a repeated one keeps its last version).
    pub endpoints: BTreeMap<EndpointKey, Endpoint>,
}

/// What an Endpoints asks for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Desired {
    /// Endpoints by slice key; every subset's ports have a group for both
    /// address types, empty when it has no address of that type (so that
    /// slices left over for it are deleted).
    pub groups: BTreeMap<SliceKey, Group>,
    /// Addresses that are not IPs.
    pub invalid: usize,
    /// Addresses left out: not IPs, or past the per-subset maximum.
    pub skipped: usize,
}

/// The endpoints `subsets` ask for, at most `max_per_subset` addresses of
/// each (repacked) subset.
pub fn desired(subsets: &[EndpointSubset], max_per_subset: usize) -> Desired {
    let mut out = Desired::default();
    for subset in repack(subsets) {
        let ports = slice_ports(subset.ports.as_deref().unwrap_or_default());
        for address_type in ["IPv4", "IPv6"] {
            let group = out.groups.entry(SliceKey::new(address_type, &ports)).or_default();
            group.ports = ports.clone();
        }
        let ready = subset.addresses.iter().flatten().map(|a| (a, true));
        let not_ready = subset.not_ready_addresses.iter().flatten().map(|a| (a, false));
        let mut added = 0;
        let mut total = 0;
        for (address, is_ready) in ready.chain(not_ready) {
            total += 1;
            if added >= max_per_subset {
                continue;
            }
            match address_to_endpoint(address, is_ready) {
                Some((endpoint, address_type)) => {
                    let group = out.groups.entry(SliceKey::new(address_type, &ports)).or_default();
                    group.endpoints.insert(endpoint_key(&endpoint), endpoint);
                    added += 1;
                }
                None => out.invalid += 1,
            }
        }
        out.skipped += total - added;
    }
    out
}

/// An Endpoints address as a slice endpoint (upstream `addressToEndpoint`):
/// its IP in canonical form (IPv4 octets with leading zeros accepted, as
/// Go's `ParseIPSloppy`; an IPv4-mapped IPv6 address is IPv4), ready as
/// given, with its hostname, node name and target. `None` when the IP
/// does not parse.
pub fn address_to_endpoint(address: &EndpointAddress, ready: bool) -> Option<(Endpoint, AddressType)> {
    let ip = parse_ip_sloppy(&address.ip)?;
    let (ip, address_type) = match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => (IpAddr::V4(v4), "IPv4"),
            None => (ip, "IPv6"),
        },
        IpAddr::V4(_) => (ip, "IPv4"),
    };
    let endpoint = Endpoint {
        addresses: vec![ip.to_string()],
        conditions: Some(EndpointConditions { ready: Some(ready), ..EndpointConditions::default() }),
        target_ref: address.target_ref.clone(),
        node_name: address.node_name.clone(),
        hostname: address.hostname.clone().filter(|h| !h.is_empty()),
        ..Endpoint::default()
    };
    Some((endpoint, address_type))
}

/// Go's `ParseIPSloppy`: an IP, where IPv4 octets may carry leading zeros
/// (read as decimal).
fn parse_ip_sloppy(text: &str) -> Option<IpAddr> {
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Some(ip);
    }
    let octets: Vec<&str> = text.split('.').collect();
    if octets.len() != 4 {
        return None;
    }
    let mut bytes = [0u8; 4];
    for (byte, octet) in bytes.iter_mut().zip(&octets) {
        if octet.is_empty() || octet.len() > 3 || !octet.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *byte = octet.parse().ok()?;
    }
    Some(IpAddr::V4(Ipv4Addr::from(bytes)))
}

/// An Endpoints subset's ports as slice ports (upstream
/// `epPortsToEpsPorts`): name, port and protocol always set.
pub fn slice_ports(ports: &[SubsetPort]) -> Vec<EndpointPort> {
    ports
        .iter()
        .map(|p| EndpointPort {
            name: Some(p.name.clone().unwrap_or_default()),
            port: Some(p.port),
            protocol: Some(p.protocol.clone().unwrap_or_default()),
            app_protocol: p.app_protocol.clone(),
        })
        .collect()
}

/// Whether two endpoints of the same identity say the same beyond it
/// (upstream `EndpointsEqualBeyondHash`): node, zone, conditions, hints and
/// target (its resourceVersion ignored).
pub fn equal_beyond_key(a: &Endpoint, b: &Endpoint) -> bool {
    let target = |e: &Endpoint| -> Option<ObjectReference> {
        e.target_ref.clone().map(|t| ObjectReference { resource_version: None, ..t })
    };
    let conditions = |e: &Endpoint| e.conditions.clone().unwrap_or_default();
    a.node_name == b.node_name
        && a.zone == b.zone
        && conditions(a) == conditions(b)
        && a.hints == b.hints
        && target(a) == target(b)
}

#[cfg(test)]
mod tests {
    //! Upstream's `TestAddressToEndpoint` and `TestEpPortsToEpsPorts`
    //! (`utils_test.go`), and the per-subset maximum.

    use super::*;

    fn address(ip: &str) -> EndpointAddress {
        EndpointAddress {
            ip: ip.into(),
            hostname: Some("foo".into()),
            node_name: Some("node-abc".into()),
            target_ref: Some(ObjectReference {
                api_version: Some("v1".into()),
                kind: Some("Pod".into()),
                namespace: Some("default".into()),
                name: Some("foo".into()),
                ..ObjectReference::default()
            }),
        }
    }

    #[test]
    fn address_to_endpoint_cases() {
        let (endpoint, family) = address_to_endpoint(&address("10.1.2.3"), true).expect("an IP");
        assert_eq!(family, "IPv4");
        assert_eq!(endpoint.addresses, ["10.1.2.3"]);
        assert_eq!(endpoint.hostname.as_deref(), Some("foo"));
        assert_eq!(endpoint.node_name.as_deref(), Some("node-abc"));
        assert_eq!(endpoint.conditions.and_then(|c| c.ready), Some(true));
        assert_eq!(endpoint.target_ref.and_then(|t| t.name).as_deref(), Some("foo"));
        let (v6, family) = address_to_endpoint(&address("2001:DB8::0:1"), false).expect("an IP");
        assert_eq!((v6.addresses[0].as_str(), family), ("2001:db8::1", "IPv6"), "restringified");
        assert_eq!(v6.conditions.and_then(|c| c.ready), Some(false));
        let (sloppy, _) = address_to_endpoint(&address("010.001.002.003"), true).expect("sloppy IPv4");
        assert_eq!(sloppy.addresses, ["10.1.2.3"]);
        let (mapped, family) = address_to_endpoint(&address("::ffff:10.1.2.3"), true).expect("mapped");
        assert_eq!((mapped.addresses[0].as_str(), family), ("10.1.2.3", "IPv4"));
        assert!(address_to_endpoint(&address("this-is-not-an-ip"), true).is_none());
    }

    #[test]
    fn ep_ports_to_eps_ports() {
        let ports = [
            SubsetPort { name: Some("foo".into()), port: 80, protocol: Some("TCP".into()), app_protocol: None },
            SubsetPort { name: None, port: 443, protocol: Some("UDP".into()), app_protocol: Some("https".into()) },
        ];
        let converted = slice_ports(&ports);
        assert_eq!(converted[0].name.as_deref(), Some("foo"));
        assert_eq!((converted[1].name.as_deref(), converted[1].port), (Some(""), Some(443)));
        assert_eq!(converted[1].app_protocol.as_deref(), Some("https"));
    }

    #[test]
    fn at_most_max_addresses_of_each_subset_ready_first() {
        let subset = EndpointSubset {
            addresses: Some(vec![address("10.0.0.1"), address("10.0.0.2")]),
            not_ready_addresses: Some(vec![address("10.0.0.3")]),
            ports: Some(vec![SubsetPort { port: 80, ..SubsetPort::default() }]),
        };
        let mut distinct = subset.clone();
        for (i, a) in
            distinct.addresses.iter_mut().flatten().chain(distinct.not_ready_addresses.iter_mut().flatten()).enumerate()
        {
            a.target_ref.as_mut().unwrap().name = Some(format!("pod-{i}"));
            a.hostname = Some(format!("pod-{i}"));
        }
        let got = desired(&[distinct], 2);
        assert_eq!((got.skipped, got.invalid), (1, 0));
        let endpoints: Vec<&Endpoint> = got.groups.values().flat_map(|g| g.endpoints.values()).collect();
        assert_eq!(endpoints.len(), 2);
        assert!(endpoints.iter().all(|e| e.conditions.as_ref().and_then(|c| c.ready) == Some(true)));
        assert_eq!(got.groups.len(), 2, "both address types keyed: {:?}", got.groups.keys());
    }
}
