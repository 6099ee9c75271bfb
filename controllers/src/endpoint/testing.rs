//! Upstream's fixtures of `endpoints_controller_test.go`: `testPod` (pod
//! `pod<id>` labelled `foo: bar`, IPs `1.2.3.<4+id>` / `2000::<4+id>`,
//! named ports `port<j>` on `8080 + j`), `addPods`, and the Service and
//! Endpoints the tests start from.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    EndpointAddress, EndpointPort, EndpointSubset, Endpoints, ObjectReference, Service, ServicePort, ServiceSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kcm_objects::Pod;
use serde_json::json;

pub const IPV4: &[&str] = &["IPv4"];
pub const IPV6: &[&str] = &["IPv6"];
pub const IPV4_IPV6: &[&str] = &["IPv4", "IPv6"];
pub const IPV6_IPV4: &[&str] = &["IPv6", "IPv4"];

/// Upstream `testPod`.
pub fn pod(namespace: &str, id: usize, ports: usize, ready: bool, families: &[&str]) -> Pod {
    let ips: Vec<_> = families
        .iter()
        .map(|f| if *f == "IPv4" { format!("1.2.3.{}", 4 + id) } else { format!("2000::{}", 4 + id) })
        .map(|ip| json!({"ip": ip}))
        .collect();
    let ports: Vec<_> = (0..ports).map(|j| json!({"name": format!("port{j}"), "containerPort": 8080 + j})).collect();
    serde_json::from_value(json!({
        "metadata": {"namespace": namespace, "name": format!("pod{id}"), "labels": {"foo": "bar"},
                     "resourceVersion": id.to_string()},
        "spec": {"containers": [{"name": "c", "ports": ports}]},
        "status": {"podIPs": ips, "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]},
    }))
    .expect("test pod")
}

/// Upstream `addPods`: `ready` ready pods then `not_ready` others.
pub fn pods(namespace: &str, ready: usize, ports: usize, not_ready: usize) -> Vec<Pod> {
    (0..ready + not_ready).map(|i| pod(namespace, i, ports, i < ready, IPV4)).collect()
}

/// Service `foo` of `namespace` selecting `foo: bar` (or `selector`).
pub fn service(namespace: &str, selector: Option<&[(&str, &str)]>, ports: Vec<ServicePort>) -> Service {
    Service {
        metadata: ObjectMeta { name: Some("foo".into()), namespace: Some(namespace.into()), ..ObjectMeta::default() },
        spec: Some(ServiceSpec {
            selector: selector.map(|s| s.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()),
            ports: Some(ports),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }
}

/// A Service port `port` targeting `target` over `protocol`.
pub fn port(port: i32, target: Option<i32>, protocol: Option<&str>) -> ServicePort {
    ServicePort {
        port,
        target_port: target.map(IntOrString::Int),
        protocol: protocol.map(str::to_owned),
        ..ServicePort::default()
    }
}

/// Endpoints `foo` of `namespace` at resourceVersion 1.
pub fn endpoints(namespace: &str, subsets: Option<Vec<EndpointSubset>>) -> Endpoints {
    Endpoints {
        metadata: ObjectMeta {
            name: Some("foo".into()),
            namespace: Some(namespace.into()),
            resource_version: Some("1".into()),
            ..ObjectMeta::default()
        },
        subsets,
    }
}

/// An address of pod `pod<id>` (no node, as the fixtures are unbound).
pub fn address(namespace: &str, ip: &str, pod: &str) -> EndpointAddress {
    EndpointAddress {
        ip: ip.into(),
        node_name: Some(String::new()),
        target_ref: Some(ObjectReference {
            kind: Some("Pod".into()),
            name: Some(pod.into()),
            namespace: Some(namespace.into()),
            ..ObjectReference::default()
        }),
        ..EndpointAddress::default()
    }
}

/// A bare address without a pod (upstream's `6.7.8.9`).
pub fn bare(ip: &str) -> EndpointAddress {
    EndpointAddress { ip: ip.into(), node_name: Some(String::new()), ..EndpointAddress::default() }
}

/// An Endpoints port.
pub fn ep_port(name: Option<&str>, port: i32, protocol: Option<&str>) -> EndpointPort {
    EndpointPort {
        name: name.map(str::to_owned),
        port,
        protocol: protocol.map(str::to_owned),
        ..EndpointPort::default()
    }
}

/// Labels from pairs.
pub fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}
