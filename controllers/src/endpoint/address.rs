//! A pod as one address of a Service's Endpoints (upstream
//! `podToEndpointAddressForService`), and a Service port as an Endpoints
//! port (`endpointPortFromServicePort`).

use std::net::IpAddr;

use k8s_openapi::api::core::v1::{EndpointAddress, EndpointPort, ObjectReference, Service, ServicePort};
use kcm_objects::Pod;

use crate::common::endpoint_pods::should_set_hostname;

/// Whether `ip` is an IPv6 address (upstream `utilnet.IsIPv6String`: an
/// IPv4-mapped address counts as IPv4; what does not parse is neither).
fn is_ipv6(ip: &str) -> bool {
    match ip.parse::<IpAddr>() {
        Ok(IpAddr::V6(v6)) => v6.to_ipv4_mapped().is_none(),
        _ => false,
    }
}

/// Whether the Service's endpoints are IPv6: its first `ipFamilies` entry;
/// without one (an API server that does not set them), its cluster IP's
/// family, or for a headless Service the pod's first IP's.
fn wants_ipv6(service: &Service, pod: &Pod) -> bool {
    let spec = service.spec.as_ref();
    if let Some(first) = spec.and_then(|s| s.ip_families.as_ref()).and_then(|f| f.first()) {
        return first == "IPv6";
    }
    match spec.and_then(|s| s.cluster_ip.as_deref()).filter(|ip| !ip.is_empty() && *ip != "None") {
        Some(cluster_ip) => is_ipv6(cluster_ip),
        None => pod.status.pod_ips.first().is_some_and(|ip| is_ipv6(ip)),
    }
}

/// The pod's address for `service`: its first IP of the Service's family,
/// its node name (empty when unbound, as upstream), a `targetRef` to the
/// pod without a resourceVersion, and its hostname when
/// [`should_set_hostname`]. `None` when the pod has no IP of that family
/// (a dual-stack cluster mid-upgrade).
pub fn pod_to_endpoint_address(service: &Service, pod: &Pod) -> Option<EndpointAddress> {
    let ipv6 = wants_ipv6(service, pod);
    let ip = pod.status.pod_ips.iter().find(|ip| is_ipv6(ip) == ipv6)?;
    let some = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    let hostname = pod.spec.rare().hostname.as_deref().filter(|_| should_set_hostname(pod, service));
    Some(EndpointAddress {
        ip: ip.to_string(),
        hostname: hostname.and_then(some),
        node_name: Some(pod.spec.node_name.as_deref().unwrap_or("").to_owned()),
        target_ref: Some(ObjectReference {
            kind: Some("Pod".to_owned()),
            namespace: some(&pod.metadata.namespace),
            name: some(&pod.metadata.name),
            uid: some(&pod.metadata.uid.to_string()),
            ..ObjectReference::default()
        }),
    })
}

/// The Endpoints port for `port` served on the pod's `number`: the
/// Service port's name, protocol and appProtocol.
pub fn endpoint_port(port: &ServicePort, number: i32) -> EndpointPort {
    EndpointPort {
        name: port.name.clone(),
        port: number,
        protocol: port.protocol.clone(),
        app_protocol: port.app_protocol.clone(),
    }
}

#[cfg(test)]
mod tests {
    //! Upstream's `TestPodToEndpointAddressForService` and
    //! `TestEndpointPortFromServicePort`.

    use k8s_openapi::api::core::v1::ServiceSpec;

    use super::*;
    use crate::endpoint::testing::{IPV4, IPV4_IPV6, IPV6, IPV6_IPV4, pod};

    fn service(cluster_ip: &str, families: &[&str]) -> Service {
        Service {
            spec: Some(ServiceSpec {
                cluster_ip: Some(cluster_ip.into()),
                ip_families: (!families.is_empty()).then(|| families.iter().map(|f| (*f).to_owned()).collect()),
                ..ServiceSpec::default()
            }),
            ..Service::default()
        }
    }

    #[test]
    fn pod_to_endpoint_address_for_service() {
        let cases: &[(&str, &[&str], Service, Option<bool>)] = &[
            ("v4 service, in a single stack cluster", IPV4, service("10.0.0.1", &[]), Some(false)),
            ("v4 service, in a dual stack cluster", IPV4_IPV6, service("10.0.0.1", &[]), Some(false)),
            ("v4 service, in a dual stack ipv6-primary cluster", IPV6_IPV4, service("10.0.0.1", &[]), Some(false)),
            ("v4 headless service, in a single stack cluster", IPV4, service("None", &[]), Some(false)),
            ("v4 headless service, in a dual stack cluster", IPV4_IPV6, service("None", &["IPv4"]), Some(false)),
            ("v4 legacy headless service, in a dual stack cluster", IPV4_IPV6, service("None", &[]), Some(false)),
            (
                "v4 legacy headless service, in a dual stack ipv6-primary cluster",
                IPV6_IPV4,
                service("None", &[]),
                Some(true),
            ),
            ("v6 service, in a dual stack cluster", IPV4_IPV6, service("3000::1", &[]), Some(true)),
            ("v6 headless service, in a single stack cluster", IPV6, service("None", &[]), Some(true)),
            (
                "v6 headless service, in a dual stack cluster (connected to a new api-server)",
                IPV4_IPV6,
                service("None", &["IPv6"]),
                Some(true),
            ),
            (
                "v6 legacy headless service, in a dual stack cluster  (connected to a old api-server)",
                IPV4_IPV6,
                service("None", &[]),
                Some(false),
            ),
            ("v6 service, in a v4 only cluster", IPV4, service("3000::1", &[]), None),
        ];
        for (name, families, svc, want_ipv6) in cases {
            let p = pod("test", 0, 1, true, families);
            let got = pod_to_endpoint_address(svc, &p);
            let Some(want_ipv6) = want_ipv6 else {
                assert!(got.is_none(), "{name}: {got:?}");
                continue;
            };
            let address = got.unwrap_or_else(|| panic!("{name}: no address"));
            assert_eq!(is_ipv6(&address.ip), *want_ipv6, "{name}: {}", address.ip);
            assert_eq!(address.node_name.as_deref(), Some(""), "{name}");
            let target = address.target_ref.expect("targetRef");
            assert_eq!(
                (target.kind.as_deref(), target.namespace.as_deref(), target.name.as_deref()),
                (Some("Pod"), Some("test"), Some("pod0")),
                "{name}"
            );
            assert_eq!(target.resource_version, None, "{name}");
        }
    }

    #[test]
    fn endpoint_port_from_service_port() {
        for (name, app_protocol) in [("empty app protocol", None), ("http app protocol", Some("http".to_owned()))] {
            let port =
                ServicePort { name: Some("test".into()), app_protocol: app_protocol.clone(), ..ServicePort::default() };
            assert_eq!(endpoint_port(&port, 80).app_protocol, app_protocol, "{name}");
        }
    }
}
