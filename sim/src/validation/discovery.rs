//! Validation of `discovery.k8s.io/v1` EndpointSlices, as upstream
//! `pkg/apis/discovery/validation` (`ValidateEndpointSliceCreate` and
//! `ValidateEndpointSliceUpdate`): the address type, the endpoints (their
//! addresses read as that type, hostname, nodeName, topology, hints) and
//! the ports. Metadata is the caller's, as for every kind.

use std::collections::BTreeSet;

use serde_json::Value;

use super::access::{at, list, map, str_of, text};
use super::errors::{Errors, IMMUTABLE};
use super::ip::{Family, endpoint_ip, ip_address};
use super::meta::labels;
use super::render::go_quote;
use super::syntax::{dns1123_label, dns1123_subdomain, label_value, qualified_name};

/// Upstream `supportedAddressTypes`, sorted as `sets.List` prints them.
const ADDRESS_TYPES: [&str; 3] = ["FQDN", "IPv4", "IPv6"];
/// Upstream `supportedPortProtocols`, sorted.
const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];
/// Upstream `maxEndpoints`.
const MAX_ENDPOINTS: usize = 1000;
/// Upstream `maxAddresses`, per endpoint.
const MAX_ADDRESSES: usize = 100;
/// Upstream `maxPorts`.
const MAX_PORTS: usize = 20000;
/// Upstream `maxTopologyLabels`.
const MAX_TOPOLOGY_LABELS: usize = 16;
/// Upstream `maxZoneHints`.
const MAX_ZONE_HINTS: usize = 8;
/// Upstream `maxNodeHints`.
const MAX_NODE_HINTS: usize = 8;

/// `ValidateEndpointSlice` without the metadata; on update (`old` set), the
/// address type is immutable too.
#[doc(alias = "ValidateEndpointSliceCreate")]
#[doc(alias = "ValidateEndpointSliceUpdate")]
pub(super) fn endpoint_slice(errs: &mut Errors, slice: &Value, old: Option<&Value>) {
    let address_type = text(slice, "addressType");
    if address_type.is_empty() {
        errs.required("addressType", "");
    } else if !ADDRESS_TYPES.contains(&address_type) {
        errs.not_supported("addressType", go_quote(address_type), &ADDRESS_TYPES);
    }
    endpoints(errs, list(slice, "endpoints"), address_type);
    ports(errs, list(slice, "ports"));
    if let Some(old) = old
        && text(old, "addressType") != address_type
    {
        errs.invalid("addressType", go_quote(address_type), IMMUTABLE);
    }
}

/// `validateEndpoints`.
fn endpoints(errs: &mut Errors, endpoints: &[Value], address_type: &str) {
    if endpoints.len() > MAX_ENDPOINTS {
        errs.too_many("endpoints", endpoints.len(), MAX_ENDPOINTS);
        return;
    }
    for (i, endpoint) in endpoints.iter().enumerate() {
        let path = format!("endpoints[{i}]");
        let addresses_path = format!("{path}.addresses");
        let addresses = list(endpoint, "addresses");
        if addresses.is_empty() {
            errs.required(&addresses_path, "must contain at least 1 address");
        } else if addresses.len() > MAX_ADDRESSES {
            errs.too_many(&addresses_path, addresses.len(), MAX_ADDRESSES);
        }
        for (j, address) in addresses.iter().enumerate() {
            address_of_type(errs, &format!("{addresses_path}[{j}]"), str_of(address), address_type);
        }
        if let Some(node_name) = at(endpoint, "nodeName").as_str() {
            for msg in dns1123_subdomain(node_name) {
                errs.invalid(&format!("{path}.nodeName"), go_quote(node_name), &msg);
            }
        }
        let topology_path = format!("{path}.deprecatedTopology");
        let topology = map(endpoint, "deprecatedTopology");
        if topology.len() > MAX_TOPOLOGY_LABELS {
            errs.too_many(&topology_path, topology.len(), MAX_TOPOLOGY_LABELS);
        }
        labels(errs, at(endpoint, "deprecatedTopology"), &topology_path);
        if let Some(hostname) = at(endpoint, "hostname").as_str() {
            for msg in dns1123_label(hostname) {
                errs.invalid(&format!("{path}.hostname"), go_quote(hostname), &msg);
            }
        }
        let hints = at(endpoint, "hints");
        if hints.is_object() {
            self::hints(errs, hints, &format!("{path}.hints"));
        }
    }
}

/// One address read as `address_type`; unknown types are not checked (the
/// type itself is refused).
fn address_of_type(errs: &mut Errors, path: &str, address: &str, address_type: &str) {
    let family = match address_type {
        "IPv4" => Family::V4,
        "IPv6" => Family::V6,
        "FQDN" => return fully_qualified_domain_name(errs, path, address),
        _ => return,
    };
    ip_address(errs, path, address, Some(family));
    endpoint_ip(errs, path, address);
}

/// `IsFullyQualifiedDomainName`: a DNS subdomain of at least two labels,
/// a trailing dot allowed.
fn fully_qualified_domain_name(errs: &mut Errors, path: &str, name: &str) {
    if name.is_empty() {
        errs.required(path, "");
        return;
    }
    let name = name.strip_suffix('.').unwrap_or(name);
    let messages = dns1123_subdomain(name);
    if !messages.is_empty() {
        errs.invalid(path, go_quote(name), &messages.join(","));
        return;
    }
    let labels: Vec<&str> = name.split('.').collect();
    if labels.len() < 2 {
        errs.invalid(path, go_quote(name), "should be a domain with at least two segments separated by dots");
        return;
    }
    if let Some((label, messages)) =
        labels.iter().map(|label| (label, dns1123_label(label))).find(|(_, messages)| !messages.is_empty())
    {
        errs.invalid(path, go_quote(label), &messages.join(","));
    }
}

/// `validateHints`: at most 8 distinct zones (label values) and, unless the
/// zones were too many, at most 8 distinct nodes (node names).
fn hints(errs: &mut Errors, hints: &Value, path: &str) {
    for (field, max, rule) in [
        ("forZones", MAX_ZONE_HINTS, label_value as fn(&str) -> Vec<String>),
        ("forNodes", MAX_NODE_HINTS, dns1123_subdomain),
    ] {
        let entries = list(hints, field);
        let list_path = format!("{path}.{field}");
        if entries.len() > max {
            errs.too_many(&list_path, entries.len(), max);
            return;
        }
        let mut seen = BTreeSet::new();
        for (i, entry) in entries.iter().enumerate() {
            let name = text(entry, "name");
            let name_path = format!("{list_path}[{i}].name");
            if !seen.insert(name) {
                errs.duplicate(&name_path, go_quote(name));
            }
            for msg in rule(name) {
                errs.invalid(&name_path, go_quote(name), &msg);
            }
        }
    }
}

/// `validatePorts`: names DNS labels (or empty) and unique, a protocol
/// required and supported, `appProtocol` a qualified name. Port numbers
/// are not checked (upstream checks none).
fn ports(errs: &mut Errors, ports: &[Value]) {
    if ports.len() > MAX_PORTS {
        errs.too_many("ports", ports.len(), MAX_PORTS);
        return;
    }
    let mut names = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let path = format!("ports[{i}]");
        let name = text(port, "name");
        if !name.is_empty() {
            for msg in dns1123_label(name) {
                errs.invalid(&format!("{path}.name"), go_quote(name), &msg);
            }
        }
        if !names.insert(name) {
            errs.duplicate(&format!("{path}.name"), go_quote(name));
        }
        match at(port, "protocol").as_str() {
            None => errs.required(&format!("{path}.protocol"), ""),
            Some(protocol) if !PROTOCOLS.contains(&protocol) => {
                errs.not_supported(&format!("{path}.protocol"), go_quote(protocol), &PROTOCOLS);
            }
            Some(_) => {}
        }
        if let Some(app_protocol) = at(port, "appProtocol").as_str() {
            for msg in qualified_name(app_protocol) {
                errs.invalid(&format!("{path}.appProtocol"), go_quote(app_protocol), &msg);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! Upstream's `TestValidateEndpointSlice`, `TestValidateEndpointSliceCreate`
    //! and `TestValidateEndpointSliceUpdate` cases (by their names), each with
    //! the causes the API server gives, not only their count.

    use serde_json::json;

    use crate::resources::Builtin;
    use crate::validation::{FIELD_VALUE_TOO_MANY, validate_create, validate_update};

    use super::*;

    // === utils ===

    /// A defaulted slice in namespace `world` named `hello`.
    fn slice(address_type: &str, endpoints: Value, ports: Value) -> Value {
        let mut object = json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "hello", "namespace": "world"},
            "addressType": address_type, "endpoints": endpoints, "ports": ports});
        crate::defaults::apply(Builtin::EndpointSlice, &mut object);
        object
    }

    /// One `http`/TCP port.
    fn http() -> Value {
        json!([{"name": "http", "protocol": "TCP"}])
    }

    /// One endpoint with `addresses` and a valid hostname.
    fn endpoint(addresses: Value) -> Value {
        json!([{"addresses": addresses, "hostname": "valid-123"}])
    }

    /// Upstream `generateIPAddresses`: `n` distinct IPv4 addresses.
    fn addresses(n: usize) -> Value {
        (0..n).map(|i| json!(format!("10.0.{}.{}", i / 250, i % 250 + 1))).collect()
    }

    fn lines(object: &Value) -> Vec<String> {
        validate_create(Builtin::EndpointSlice, object).iter().map(ToString::to_string).collect()
    }

    const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

    // === tests ===

    #[test]
    fn valid_slices_pass() {
        let good: Vec<(&str, Value)> = vec![
            ("good-slice", slice("IPv4", endpoint(addresses(1)), http())),
            ("good-ipv6", slice("IPv6", endpoint(json!(["a00:100::4"])), http())),
            (
                "good-fqdns",
                slice(
                    "FQDN",
                    endpoint(json!(["foo.example.com", "example.com", "example.com.", "hyphens-are-good.example.com"])),
                    http(),
                ),
            ),
            (
                "all-protocols",
                slice(
                    "IPv4",
                    endpoint(addresses(1)),
                    json!([{"name": "tcp", "protocol": "TCP"}, {"name": "udp", "protocol": "UDP"},
                        {"name": "sctp", "protocol": "SCTP"}]),
                ),
            ),
            (
                "app-protocols",
                slice(
                    "IPv4",
                    endpoint(addresses(1)),
                    json!([{"name": "one", "appProtocol": "HTTP"}, {"name": "two", "appProtocol": "https"},
                        {"name": "three", "appProtocol": "my-protocol"},
                        {"name": "four", "appProtocol": "example.com/custom-protocol"}]),
                ),
            ),
            (
                "empty-port-name",
                slice("IPv4", json!([{"addresses": addresses(1)}]), json!([{"name": ""}, {"name": "http"}])),
            ),
            ("long-port-name", slice("IPv4", json!([{"addresses": addresses(1)}]), json!([{"name": "a".repeat(63)}]))),
            ("empty-ports-and-endpoints", slice("IPv4", json!([]), json!([]))),
            ("no-ports-or-endpoints", slice("IPv4", Value::Null, Value::Null)),
            (
                "max-endpoints",
                slice("IPv4", (0..MAX_ENDPOINTS).map(|_| json!({"addresses": addresses(1)})).collect(), http()),
            ),
            ("max-addresses", slice("IPv4", json!([{"addresses": addresses(MAX_ADDRESSES)}]), http())),
            (
                "valid-hints",
                slice(
                    "IPv4",
                    json!([{"addresses": addresses(1), "hints": {"forZones": [{"name": "zone-a"}],
                        "forNodes": [{"name": "node-1"}]}}]),
                    http(),
                ),
            ),
            (
                "valid-node-name",
                slice("IPv4", json!([{"addresses": addresses(1), "nodeName": "node.example"}]), http()),
            ),
        ];
        for (name, object) in good {
            assert_eq!(lines(&object), Vec::<String>::new(), "{name}");
        }
    }

    #[test]
    fn port_rules() {
        let cases: Vec<(&str, Value, Vec<String>)> = vec![
            (
                "duplicate-port-name",
                json!([{"name": ""}, {"name": ""}]),
                vec!["ports[1].name: Duplicate value: \"\"".to_owned()],
            ),
            (
                "bad-port-name-caps",
                json!([{"name": "aCapital"}]),
                vec![format!("ports[0].name: Invalid value: \"aCapital\": {LABEL_MSG}")],
            ),
            (
                "bad-port-name-chars",
                json!([{"name": "almost_valid"}]),
                vec![format!("ports[0].name: Invalid value: \"almost_valid\": {LABEL_MSG}")],
            ),
            (
                "bad-port-name-length",
                json!([{"name": "a".repeat(64)}]),
                vec![format!("ports[0].name: Invalid value: \"{}\": must be no more than 63 characters", "a".repeat(64))],
            ),
            (
                "invalid-port-protocol",
                json!([{"name": "http", "protocol": "foo"}]),
                vec![
                    "ports[0].protocol: Unsupported value: \"foo\": supported values: \"SCTP\", \"TCP\", \"UDP\""
                        .to_owned(),
                ],
            ),
            (
                "bad-app-protocol",
                json!([{"name": "http", "appProtocol": "--"}]),
                vec![
                    "ports[0].appProtocol: Invalid value: \"--\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')".to_owned(),
                ],
            ),
        ];
        for (name, ports, want) in cases {
            assert_eq!(lines(&slice("IPv4", json!([]), ports)), want, "{name}");
        }
        let max: Value = (0..MAX_PORTS).map(|i| json!({"name": format!("port-{i}")})).collect();
        assert_eq!(lines(&slice("IPv4", Value::Null, max.clone())), Vec::<String>::new(), "max-ports");
        let mut too_many = max;
        too_many.as_array_mut().expect("array").push(json!({"name": "one-more"}));
        let causes = validate_create(Builtin::EndpointSlice, &slice("IPv4", Value::Null, too_many));
        assert_eq!(causes.len(), 1, "too-many-ports");
        assert_eq!(causes[0].reason, FIELD_VALUE_TOO_MANY);
        assert_eq!(causes[0].to_string(), "ports: Too many: 20001: must have at most 20000 items");
    }

    #[test]
    fn endpoint_rules() {
        let cases: Vec<(&str, Value, Vec<String>)> = vec![
            (
                "too-many-endpoints",
                (0..=MAX_ENDPOINTS).map(|_| json!({"addresses": addresses(1)})).collect(),
                vec!["endpoints: Too many: 1001: must have at most 1000 items".to_owned()],
            ),
            (
                "no-endpoint-addresses",
                json!([{"addresses": []}]),
                vec!["endpoints[0].addresses: Required value: must contain at least 1 address".to_owned()],
            ),
            (
                "too-many-addresses",
                json!([{"addresses": addresses(MAX_ADDRESSES + 1)}]),
                vec!["endpoints[0].addresses: Too many: 101: must have at most 100 items".to_owned()],
            ),
            (
                "bad-hostname",
                json!([{"addresses": addresses(1), "hostname": "--INVALID"}]),
                vec![format!("endpoints[0].hostname: Invalid value: \"--INVALID\": {LABEL_MSG}")],
            ),
            (
                "bad-node-name",
                json!([{"addresses": addresses(1), "nodeName": "Node_1"}]),
                vec![format!("endpoints[0].nodeName: Invalid value: \"Node_1\": {SUBDOMAIN_MSG}")],
            ),
            (
                "bad-ipv4",
                endpoint(json!(["123.456.789.012", "2001:4860:4860::8888"])),
                vec![
                    "endpoints[0].addresses[0]: Invalid value: \"123.456.789.012\": must be a valid IP address (e.g. 10.9.8.7 or 2001:db8::ffff)".to_owned(),
                    "endpoints[0].addresses[0]: Invalid value: \"123.456.789.012\": must be a valid IP address".to_owned(),
                    "endpoints[0].addresses[1]: Invalid value: \"2001:4860:4860::8888\": must be an IPv4 address".to_owned(),
                ],
            ),
            (
                "special-ipv4",
                endpoint(json!(["127.0.0.1"])),
                vec![
                    "endpoints[0].addresses[0]: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)".to_owned(),
                ],
            ),
            (
                "leading-zeros-ipv4",
                endpoint(json!(["010.0.0.1"])),
                vec!["endpoints[0].addresses[0]: Invalid value: \"010.0.0.1\": IP address cannot have leading 0s".to_owned()],
            ),
        ];
        for (name, endpoints, want) in cases {
            assert_eq!(lines(&slice("IPv4", endpoints, http())), want, "{name}");
        }
        assert_eq!(
            lines(&slice("IPv6", endpoint(json!(["123.456.789.012", "2001:4860:4860:defg"])), http())),
            [
                "endpoints[0].addresses[0]: Invalid value: \"123.456.789.012\": must be a valid IP address (e.g. 10.9.8.7 or 2001:db8::ffff)",
                "endpoints[0].addresses[0]: Invalid value: \"123.456.789.012\": must be a valid IP address",
                "endpoints[0].addresses[1]: Invalid value: \"2001:4860:4860:defg\": must be a valid IP address (e.g. 10.9.8.7 or 2001:db8::ffff)",
                "endpoints[0].addresses[1]: Invalid value: \"2001:4860:4860:defg\": must be a valid IP address",
            ],
            "bad-ipv6"
        );
        assert_eq!(
            lines(&slice("IPv6", endpoint(json!(["fe80::9656:d028:8652:66b6"])), http())),
            [
                "endpoints[0].addresses[0]: Invalid value: \"fe80::9656:d028:8652:66b6\": may not be in the link-local range (169.254.0.0/16, fe80::/10)"
            ],
            "special-ipv6"
        );
        assert_eq!(
            lines(&slice(
                "FQDN",
                endpoint(json!(["foo.*", "FOO.example.com", "underscores_are_bad.example.com", "*.example.com", "local"])),
                http()
            )),
            [
                format!("endpoints[0].addresses[0]: Invalid value: \"foo.*\": {SUBDOMAIN_MSG}"),
                format!("endpoints[0].addresses[1]: Invalid value: \"FOO.example.com\": {SUBDOMAIN_MSG}"),
                format!("endpoints[0].addresses[2]: Invalid value: \"underscores_are_bad.example.com\": {SUBDOMAIN_MSG}"),
                format!("endpoints[0].addresses[3]: Invalid value: \"*.example.com\": {SUBDOMAIN_MSG}"),
                "endpoints[0].addresses[4]: Invalid value: \"local\": should be a domain with at least two segments separated by dots".to_owned(),
            ],
            "bad-fqdns"
        );
    }

    #[test]
    fn hint_rules() {
        let hinted = |hints: Value| slice("IPv4", json!([{"addresses": addresses(1), "hints": hints}]), http());
        let zones = |n: usize| (0..n).map(|i| json!({"name": format!("zone-{i}")})).collect::<Value>();
        assert!(lines(&hinted(json!({"forZones": zones(MAX_ZONE_HINTS)}))).is_empty(), "max-zone-hints");
        assert_eq!(
            lines(&hinted(json!({"forZones": zones(MAX_ZONE_HINTS + 1), "forNodes": [{"name": "Bad_Node"}]}))),
            ["endpoints[0].hints.forZones: Too many: 9: must have at most 8 items"],
            "too-many-zone-hints"
        );
        assert_eq!(
            lines(&hinted(json!({"forZones": [{"name": "zone-a"}, {"name": "zone-a"}, {"name": "-zone"}]}))),
            [
                "endpoints[0].hints.forZones[1].name: Duplicate value: \"zone-a\"".to_owned(),
                "endpoints[0].hints.forZones[2].name: Invalid value: \"-zone\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')".to_owned(),
            ],
            "invalid-zone-hints"
        );
        let nodes = (0..=MAX_NODE_HINTS).map(|i| json!({"name": format!("node-{i}")})).collect::<Value>();
        assert_eq!(
            lines(&hinted(json!({"forNodes": nodes}))),
            ["endpoints[0].hints.forNodes: Too many: 9: must have at most 8 items"],
            "too-many-node-hints"
        );
        assert_eq!(
            lines(&hinted(json!({"forNodes": [{"name": "node-1"}, {"name": "node-1"}, {"name": "Node_2"}]}))),
            [
                "endpoints[0].hints.forNodes[1].name: Duplicate value: \"node-1\"".to_owned(),
                format!("endpoints[0].hints.forNodes[2].name: Invalid value: \"Node_2\": {SUBDOMAIN_MSG}"),
            ],
            "invalid-node-hints"
        );
    }

    #[test]
    fn address_type_and_metadata() {
        let mut empty = json!({"metadata": {}});
        crate::defaults::apply(Builtin::EndpointSlice, &mut empty);
        assert_eq!(
            lines(&empty),
            ["metadata.name: Required value: name or generateName is required", "addressType: Required value"],
            "empty-everything"
        );
        assert_eq!(
            lines(&slice("IP", json!([]), http())),
            ["addressType: Unsupported value: \"IP\": supported values: \"FQDN\", \"IPv4\", \"IPv6\""],
            "deprecated-address-type"
        );
        let mut bad_meta = slice("IPv4", endpoint(addresses(1)), http());
        bad_meta["metadata"]["name"] = json!("*&^");
        assert_eq!(lines(&bad_meta), [format!("metadata.name: Invalid value: \"*&^\": {SUBDOMAIN_MSG}")], "bad-meta");
        let mut topology = slice("IPv4", json!([{"addresses": addresses(1)}]), http());
        topology["endpoints"][0]["deprecatedTopology"] =
            (0..=MAX_TOPOLOGY_LABELS).map(|i| (format!("key-{i}"), json!("v"))).collect();
        assert_eq!(
            validate_update(Builtin::EndpointSlice, &topology, &topology)
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            ["endpoints[0].deprecatedTopology: Too many: 17: must have at most 16 items"],
            "too-many-topology-keys"
        );
    }

    #[test]
    fn address_type_is_immutable() {
        let old = slice("IPv4", endpoint(addresses(1)), http());
        let mut new = slice("FQDN", endpoint(json!(["example.com"])), http());
        assert!(validate_update(Builtin::EndpointSlice, &old, &old).is_empty(), "unchanged");
        let lines: Vec<String> =
            validate_update(Builtin::EndpointSlice, &old, &new).iter().map(ToString::to_string).collect();
        assert_eq!(lines, ["addressType: Invalid value: \"FQDN\": field is immutable"], "changing-address-type");
        new["addressType"] = json!("IP");
        let lines: Vec<String> =
            validate_update(Builtin::EndpointSlice, &old, &new).iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            [
                "addressType: Unsupported value: \"IP\": supported values: \"FQDN\", \"IPv4\", \"IPv6\"",
                "addressType: Invalid value: \"IP\": field is immutable",
            ],
            "invalid-address-type"
        );
    }
}
