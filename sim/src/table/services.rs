//! Rows of Services, Endpoints and EndpointSlices: type, cluster and
//! external IPs, ports, and the endpoint lists.

use std::collections::BTreeSet;

use jiff::Timestamp;
use serde_json::Value;

use super::access::{get, int, list, str_at, strings, text};
use super::cells::{age, name};
use super::format::{format_labels, or_none};

pub(super) fn print_service(obj: &Value, now: Timestamp) -> Vec<Value> {
    // The real server always defaults spec.type.
    let svc_type = match text(obj, &["spec", "type"]) {
        "" => "ClusterIP",
        t => t,
    };
    let cluster_ip = match text(obj, &["spec", "clusterIP"]) {
        "" => list(obj, &["spec", "clusterIPs"]).first().and_then(Value::as_str).unwrap_or(""),
        ip => ip,
    };
    let ports: Vec<String> = list(obj, &["spec", "ports"])
        .iter()
        .map(|p| {
            let port = int(p, &["port"]).unwrap_or(0);
            let protocol = match text(p, &["protocol"]) {
                "" => "TCP",
                proto => proto,
            };
            match int(p, &["nodePort"]).unwrap_or(0) {
                n if n > 0 => format!("{port}:{n}/{protocol}"),
                _ => format!("{port}/{protocol}"),
            }
        })
        .collect();
    vec![
        name(obj),
        Value::from(svc_type),
        Value::from(or_none(cluster_ip)),
        Value::from(service_external_ip(obj, svc_type)),
        Value::from(or_none(&ports.join(","))),
        age(obj, now),
        Value::from(format_labels(get(obj, &["spec", "selector"]))),
    ]
}

/// EXTERNAL-IP: external IPs, load balancer ingress points or the external
/// name, depending on the service type.
fn service_external_ip(obj: &Value, svc_type: &str) -> String {
    let external: Vec<&str> = strings(list(obj, &["spec", "externalIPs"]));
    match svc_type {
        "ClusterIP" | "NodePort" if external.is_empty() => "<none>".to_owned(),
        "ClusterIP" | "NodePort" => external.join(","),
        "LoadBalancer" => {
            let ingress: BTreeSet<&str> = list(obj, &["status", "loadBalancer", "ingress"])
                .iter()
                .filter_map(|i| match (text(i, &["ip"]), text(i, &["hostname"])) {
                    ("", "") => None,
                    ("", host) => Some(host),
                    (ip, _) => Some(ip),
                })
                .collect();
            let mut all: Vec<&str> = ingress.into_iter().collect();
            all.extend(external);
            if all.is_empty() { "<pending>".to_owned() } else { all.join(",") }
        }
        "ExternalName" => text(obj, &["spec", "externalName"]).to_owned(),
        _ => "<unknown>".to_owned(),
    }
}

pub(super) fn print_endpoints(obj: &Value, now: Timestamp) -> Vec<Value> {
    vec![name(obj), Value::from(format_endpoints(obj)), age(obj, now)]
}

/// ENDPOINTS: up to three `ip:port` pairs, then "+ N more...".
fn format_endpoints(obj: &Value) -> String {
    const MAX: usize = 3;
    let subsets = list(obj, &["subsets"]);
    if subsets.is_empty() {
        return "<none>".to_owned();
    }
    let mut shown = Vec::new();
    let mut count = 0;
    for subset in subsets {
        let addresses = list(subset, &["addresses"]);
        let ports = list(subset, &["ports"]);
        // A headless service may have no ports: list bare IPs.
        let port_numbers: Vec<Option<i64>> = if ports.is_empty() {
            vec![None]
        } else {
            ports.iter().map(|p| Some(int(p, &["port"]).unwrap_or(0))).collect()
        };
        for port in port_numbers {
            count += addresses.len();
            for address in addresses {
                if shown.len() == MAX {
                    break;
                }
                let ip = text(address, &["ip"]);
                shown.push(match port {
                    None => ip.to_owned(),
                    Some(p) if ip.contains(':') => format!("[{ip}]:{p}"),
                    Some(p) => format!("{ip}:{p}"),
                });
            }
        }
    }
    let joined = shown.join(",");
    if count > MAX { format!("{joined} + {} more...", count - MAX) } else { joined }
}

pub(super) fn print_endpoint_slice(obj: &Value, now: Timestamp) -> Vec<Value> {
    let ports = list(obj, &["ports"]).iter().map(|p| match (int(p, &["port"]), str_at(p, &["name"])) {
        (Some(port), _) => port.to_string(),
        (None, Some(name)) => name.to_owned(),
        (None, None) => "*".to_owned(),
    });
    let addresses = list(obj, &["endpoints"]).iter().flat_map(|e| strings(list(e, &["addresses"]))).map(str::to_owned);
    vec![
        name(obj),
        Value::from(text(obj, &["addressType"])),
        Value::from(list_with_more(ports.collect())),
        Value::from(list_with_more(addresses.collect())),
        age(obj, now),
    ]
}

/// Upstream `listWithMoreString` for the EndpointSlice columns: up to three
/// items, then "+ N more...", and `<unset>` for none.
fn list_with_more(items: Vec<String>) -> String {
    const MAX: usize = 3;
    let joined = items[..items.len().min(MAX)].join(",");
    match items.len() {
        0 => "<unset>".to_owned(),
        n if n > MAX => format!("{joined} + {} more...", n - MAX),
        _ => joined,
    }
}
