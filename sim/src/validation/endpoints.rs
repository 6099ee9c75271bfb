//! Validation of core/v1 Endpoints, as upstream `ValidateEndpoints` (the
//! same on create and update: a node name may change): every subset has
//! addresses, each address an IP an endpoint may have, with an optional
//! DNS-label hostname and node name; ports named when there are several,
//! numbered, with a protocol and a qualified-name `appProtocol`.

use serde_json::Value;

use super::access::{at, int, list, text};
use super::errors::Errors;
use super::ip::{endpoint_ip, ip_address};
use super::pod::{port_number, protocol};
use super::render::go_quote;
use super::syntax::{dns1123_label, dns1123_subdomain, qualified_name};

/// `validateEndpointSubsets`.
#[doc(alias = "ValidateEndpoints")]
pub(super) fn endpoints(errs: &mut Errors, endpoints: &Value) {
    for (i, subset) in list(endpoints, "subsets").iter().enumerate() {
        let path = format!("subsets[{i}]");
        let (ready, not_ready) = (list(subset, "addresses"), list(subset, "notReadyAddresses"));
        if ready.is_empty() && not_ready.is_empty() {
            errs.required(&path, "must specify `addresses` or `notReadyAddresses`");
        }
        for (field, addresses) in [("addresses", ready), ("notReadyAddresses", not_ready)] {
            for (j, address) in addresses.iter().enumerate() {
                endpoint_address(errs, address, &format!("{path}.{field}[{j}]"));
            }
        }
        let ports = list(subset, "ports");
        for (j, port) in ports.iter().enumerate() {
            endpoint_port(errs, port, ports.len() > 1, &format!("{path}.ports[{j}]"));
        }
    }
}

/// `validateEndpointAddress`.
fn endpoint_address(errs: &mut Errors, address: &Value, path: &str) {
    let ip_path = format!("{path}.ip");
    let ip = text(address, "ip");
    ip_address(errs, &ip_path, ip, None);
    let hostname = text(address, "hostname");
    if !hostname.is_empty() {
        for msg in dns1123_label(hostname) {
            errs.invalid(&format!("{path}.hostname"), go_quote(hostname), &msg);
        }
    }
    if let Some(node_name) = at(address, "nodeName").as_str() {
        for msg in dns1123_subdomain(node_name) {
            errs.invalid(&format!("{path}.nodeName"), go_quote(node_name), &msg);
        }
    }
    endpoint_ip(errs, &ip_path, ip);
}

/// `validateEndpointPort`.
fn endpoint_port(errs: &mut Errors, port: &Value, require_name: bool, path: &str) {
    let name = text(port, "name");
    if require_name && name.is_empty() {
        errs.required(&format!("{path}.name"), "");
    } else if !name.is_empty() {
        for msg in dns1123_label(name) {
            errs.invalid(&format!("{path}.name"), go_quote(name), &msg);
        }
    }
    port_number(errs, int(port, "port").unwrap_or(0), &format!("{path}.port"));
    protocol(errs, port, path);
    if let Some(app_protocol) = at(port, "appProtocol").as_str() {
        for msg in qualified_name(app_protocol) {
            errs.invalid(&format!("{path}.appProtocol"), go_quote(app_protocol), &msg);
        }
    }
}

#[cfg(test)]
mod tests {
    //! Upstream's `TestValidateEndpointsCreate` cases that matter, with the
    //! causes the API server gives.

    use serde_json::json;

    use crate::resources::Builtin;
    use crate::validation::validate_create;

    use super::*;

    fn lines(subsets: Value) -> Vec<String> {
        let mut object = json!({"metadata": {"name": "mysvc", "namespace": "namespace"}, "subsets": subsets});
        crate::defaults::apply(Builtin::Endpoints, &mut object);
        validate_create(Builtin::Endpoints, &object).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn valid_endpoints_pass() {
        let cases = [
            ("no subsets", json!([])),
            (
                "multiple ports",
                json!([{"addresses": [{"ip": "10.10.1.1"}],
                    "ports": [{"name": "a", "port": 8675}, {"name": "b", "port": 309, "protocol": "UDP"},
                        {"name": "c", "port": 9999, "appProtocol": "example.com/custom"}]}]),
            ),
            ("one port, no name", json!([{"addresses": [{"ip": "10.10.1.1"}], "ports": [{"port": 8675}]}])),
            ("empty ports", json!([{"addresses": [{"ip": "10.10.3.3"}], "ports": []}])),
            (
                "not ready, hostname and node",
                json!([{"notReadyAddresses": [{"ip": "fd00::7", "hostname": "web-0", "nodeName": "node-1"}]}]),
            ),
        ];
        for (name, subsets) in cases {
            assert_eq!(lines(subsets), Vec::<String>::new(), "{name}");
        }
    }

    #[test]
    fn invalid_endpoints_are_refused() {
        let label = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
        let cases: Vec<(&str, Value, Vec<String>)> = vec![
            (
                "empty addresses",
                json!([{"ports": [{"name": "a", "port": 93}]}]),
                vec!["subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`".to_owned()],
            ),
            (
                "invalid IP",
                json!([{"addresses": [{"ip": "[2001:0db8:85a3:0042:1000:8a2e:0370:7334]"}],
                    "ports": [{"name": "a", "port": 93}]}]),
                vec![
                    "subsets[0].addresses[0].ip: Invalid value: \"[2001:0db8:85a3:0042:1000:8a2e:0370:7334]\": must be a valid IP address (e.g. 10.9.8.7 or 2001:db8::ffff)".to_owned(),
                    "subsets[0].addresses[0].ip: Invalid value: \"[2001:0db8:85a3:0042:1000:8a2e:0370:7334]\": must be a valid IP address".to_owned(),
                ],
            ),
            (
                "multiple ports, one without name",
                json!([{"addresses": [{"ip": "10.10.1.1"}], "ports": [{"port": 8675}, {"name": "b", "port": 309}]}]),
                vec!["subsets[0].ports[0].name: Required value".to_owned()],
            ),
            (
                "invalid port number and protocol",
                json!([{"addresses": [{"ip": "10.10.1.1"}], "ports": [{"name": "a", "port": 66000, "protocol": "HTTP"}]}]),
                vec![
                    "subsets[0].ports[0].port: Invalid value: 66000: must be between 1 and 65535, inclusive".to_owned(),
                    "subsets[0].ports[0].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"".to_owned(),
                ],
            ),
            (
                "invalid port name and hostname",
                json!([{"addresses": [{"ip": "10.10.1.1", "hostname": "Web_0"}], "ports": [{"name": "Port", "port": 93}]}]),
                vec![
                    format!("subsets[0].addresses[0].hostname: Invalid value: \"Web_0\": {label}"),
                    format!("subsets[0].ports[0].name: Invalid value: \"Port\": {label}"),
                ],
            ),
            (
                "address is loopback",
                json!([{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "p", "port": 93}]}]),
                vec![
                    "subsets[0].addresses[0].ip: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)".to_owned(),
                ],
            ),
            (
                "address is link-local",
                json!([{"notReadyAddresses": [{"ip": "169.254.169.254"}], "ports": [{"name": "p", "port": 93}]}]),
                vec![
                    "subsets[0].notReadyAddresses[0].ip: Invalid value: \"169.254.169.254\": may not be in the link-local range (169.254.0.0/16, fe80::/10)".to_owned(),
                ],
            ),
            (
                "invalid app protocol",
                json!([{"addresses": [{"ip": "10.10.1.1"}], "ports": [{"name": "a", "port": 93, "appProtocol": "lots-of[invalid]-{chars}"}]}]),
                vec![
                    "subsets[0].ports[0].appProtocol: Invalid value: \"lots-of[invalid]-{chars}\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')".to_owned(),
                ],
            ),
        ];
        for (name, subsets, want) in cases {
            assert_eq!(lines(subsets), want, "{name}");
        }
    }
}
