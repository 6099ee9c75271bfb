//! Validation of Services, as upstream `ValidateService` and
//! `ValidateServiceUpdate`: the type, ports, selector and session
//! affinity, what an ExternalName service may not have, and the cluster IP
//! fields (`ValidateServiceClusterIPsRelatedFields`, which the cluster IP
//! allocator also runs before it allocates); on update, cluster IPs and IP
//! families that may not change once set.

use std::collections::BTreeSet;
use std::net::IpAddr;

use serde_json::Value;

use super::access::{at, int, list, str_of, text};
use super::errors::Errors;
use super::ip::ip_address;
use super::meta::labels;
use super::pod::{port_number, protocol};
use super::render::{go_quote, go_string_slice};
use super::syntax::{dns1123_label, dns1123_subdomain, port_name_messages};

/// Upstream `supportedServiceIPFamily`, sorted.
const IP_FAMILIES: [&str; 2] = ["IPv4", "IPv6"];
/// Upstream `supportedServiceIPFamilyPolicy`, sorted.
const IP_FAMILY_POLICIES: [&str; 3] = ["PreferDualStack", "RequireDualStack", "SingleStack"];
/// The `clusterIP` of a headless service.
const NONE: &str = "None";

/// `ValidateService` without the metadata.
pub(super) fn service_spec(errs: &mut Errors, spec: &Value) {
    let service_type = text(spec, "type");
    let headless = text(spec, "clusterIP") == NONE;
    let ports = list(spec, "ports");
    if ports.is_empty() && !headless && service_type != "ExternalName" {
        errs.required("spec.ports", "");
    }
    if service_type == "ExternalName" {
        external_name(errs, spec);
    }
    let mut names = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let path = format!("spec.ports[{i}]");
        let name = text(port, "name");
        if ports.len() > 1 && name.is_empty() {
            errs.required(&format!("{path}.name"), "");
        } else if !name.is_empty() {
            for msg in dns1123_label(name) {
                errs.invalid(&format!("{path}.name"), go_quote(name), &msg);
            }
            if !names.insert(name) {
                errs.duplicate(&format!("{path}.name"), go_quote(name));
            }
        }
        port_number(errs, int(port, "port").unwrap_or(0), &format!("{path}.port"));
        protocol(errs, port, &path);
        match at(port, "targetPort") {
            Value::String(target) => {
                for msg in port_name_messages(target) {
                    errs.invalid(&format!("{path}.targetPort"), go_quote(target), &msg);
                }
            }
            target => port_number(errs, target.as_i64().unwrap_or(0), &format!("{path}.targetPort")),
        }
    }
    labels(errs, at(spec, "selector"), "spec.selector");
    let types = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
    if !types.contains(&service_type) {
        errs.not_supported("spec.type", go_quote(service_type), &types);
    }
    let affinity = text(spec, "sessionAffinity");
    if !["ClientIP", "None"].contains(&affinity) {
        errs.not_supported("spec.sessionAffinity", go_quote(affinity), &["ClientIP", "None"]);
    }
    let cluster_ips = list(spec, "clusterIPs");
    if is_headless(cluster_ips) && matches!(service_type, "NodePort" | "LoadBalancer") {
        errs.invalid(
            "spec.clusterIPs[0]",
            go_quote(NONE),
            &format!("may not be set to 'None' for {service_type} services"),
        );
    }
    cluster_ips_related_fields(errs, spec);
}

/// What an ExternalName service must and must not have: no cluster IPs,
/// IP families or family policy, and a DNS subdomain (a trailing dot
/// allowed) as `externalName`.
fn external_name(errs: &mut Errors, spec: &Value) {
    const DETAIL: &str = "may not be set for ExternalName services";
    if !list(spec, "clusterIPs").is_empty() {
        errs.forbidden("spec.clusterIPs", DETAIL);
    }
    if !list(spec, "ipFamilies").is_empty() {
        errs.forbidden("spec.ipFamilies", DETAIL);
    }
    if !at(spec, "ipFamilyPolicy").is_null() {
        errs.forbidden("spec.ipFamilyPolicy", DETAIL);
    }
    let cname = text(spec, "externalName");
    let cname = cname.strip_suffix('.').unwrap_or(cname);
    if cname.is_empty() {
        errs.required("spec.externalName", "");
    }
    for msg in if cname.is_empty() { Vec::new() } else { dns1123_subdomain(cname) } {
        errs.invalid("spec.externalName", go_quote(cname), &msg);
    }
}

/// `ValidateServiceClusterIPsRelatedFields`: `clusterIP` and `clusterIPs`
/// in step, families and policy known, each cluster IP an IP (or a lone
/// `None` first), at most a dual-stack pair, each of its family.
fn cluster_ips_related_fields(errs: &mut Errors, spec: &Value) {
    if text(spec, "type") == "ExternalName" {
        return;
    }
    let cluster_ip = text(spec, "clusterIP");
    let cluster_ips = list(spec, "clusterIPs");
    let shown = || go_string_slice(at(spec, "clusterIPs"));
    if !cluster_ip.is_empty() {
        match cluster_ips.first() {
            None => errs.required("spec.clusterIPs", ""),
            Some(first) if str_of(first) != cluster_ip => {
                errs.invalid("spec.clusterIPs", shown(), "first value must match `clusterIP`");
            }
            Some(_) => {}
        }
    } else if !cluster_ips.is_empty() {
        errs.invalid("spec.clusterIPs", shown(), "must be empty when `clusterIP` is not specified");
    }
    let families = list(spec, "ipFamilies");
    let mut seen = BTreeSet::new();
    for (i, family) in families.iter().map(str_of).enumerate() {
        let path = format!("spec.ipFamilies[{i}]");
        if !IP_FAMILIES.contains(&family) {
            errs.not_supported(&path, go_quote(family), &IP_FAMILIES);
        }
        if !seen.insert(family) {
            errs.duplicate(&path, go_quote(family));
        }
    }
    if let Some(policy) = at(spec, "ipFamilyPolicy").as_str()
        && !IP_FAMILY_POLICIES.contains(&policy)
    {
        errs.not_supported("spec.ipFamilyPolicy", go_quote(policy), &IP_FAMILY_POLICIES);
    }
    let mut invalid = false;
    let mut ips = Vec::new();
    for (i, ip) in cluster_ips.iter().map(str_of).enumerate() {
        if i == 0 && ip == NONE {
            if cluster_ips.len() > 1 {
                invalid = true;
                errs.invalid("spec.clusterIPs", shown(), "'None' must be the first and only value");
            }
            continue;
        }
        match ip_address(errs, &format!("spec.clusterIPs[{i}]"), ip, None) {
            Some(parsed) => ips.push(parsed),
            None => invalid = true,
        }
    }
    if cluster_ips.len() > 2 {
        errs.invalid("spec.clusterIPs", shown(), "may only hold up to 2 values");
    }
    if invalid {
        return;
    }
    if ips.len() > 1 && ips.iter().filter(|ip| ip.is_ipv6()).count() != 1 {
        errs.invalid("spec.clusterIPs", shown(), "may specify no more than one IP for each IP family");
    }
    if is_headless(cluster_ips) {
        return;
    }
    for (i, (ip, family)) in ips.iter().zip(families.iter().map(str_of)).enumerate() {
        let wrong = match family {
            "IPv4" => ip.is_ipv6(),
            "IPv6" => !ip.is_ipv6(),
            _ => false,
        };
        if wrong {
            errs.invalid(
                &format!("spec.clusterIPs[{i}]"),
                go_quote(&IpAddr::to_string(ip)),
                &format!("expected an {family} value as indicated by `ipFamilies[{i}]`"),
            );
        }
    }
}

/// The exported form of [`cluster_ips_related_fields`], for the cluster IP
/// allocator (upstream runs it from `initIPFamilyFields`).
#[doc(alias = "ValidateServiceClusterIPsRelatedFields")]
pub fn validate_cluster_ips_related_fields(service: &Value) -> Vec<super::Cause> {
    let mut errs = Errors::default();
    cluster_ips_related_fields(&mut errs, at(service, "spec"));
    errs.finish()
}

/// `validateUpgradeDowngradeClusterIPs` and
/// `validateUpgradeDowngradeIPFamilies`: unless the service is or was
/// ExternalName, the primary cluster IP and IP family may not change, nor
/// any cluster IP or family when there are as many as before.
pub(super) fn service_update(errs: &mut Errors, old: &Value, new: &Value) {
    if text(old, "type") == "ExternalName" || text(new, "type") == "ExternalName" {
        return;
    }
    let (old_ips, new_ips) = (list(old, "clusterIPs"), list(new, "clusterIPs"));
    let (old_headless, new_headless) = (is_headless(old_ips), is_headless(new_ips));
    let shown_ips = go_string_slice(at(new, "clusterIPs"));
    const CHANGED: &str = "may not change once set";
    if !(old_headless && new_headless) {
        if old_ips.len() == new_ips.len() {
            for (i, (a, b)) in old_ips.iter().zip(new_ips).enumerate() {
                if a != b {
                    errs.invalid(&format!("spec.clusterIPs[{i}]"), shown_ips.clone(), CHANGED);
                }
            }
        } else if old_ips.len() > new_ips.len() {
            if new_ips.is_empty() {
                errs.invalid("spec.clusterIPs[0]", shown_ips.clone(), "primary clusterIP can not be unset");
            }
            if new_ips.first().is_some_and(|first| Some(first) != old_ips.first()) {
                errs.invalid("spec.clusterIPs[0]", shown_ips.clone(), CHANGED);
            }
            if new_ips.len() == 1 && text(new, "ipFamilyPolicy") != "SingleStack" {
                errs.invalid(
                    "spec.ipFamilyPolicy",
                    go_quote(text(new, "ipFamilyPolicy")),
                    "must be set to 'SingleStack' when releasing the secondary clusterIP",
                );
            }
        } else if old_ips.first().is_some_and(|first| Some(first) != new_ips.first()) {
            errs.invalid("spec.clusterIPs[0]", shown_ips.clone(), CHANGED);
        }
    }
    if old_headless || new_headless {
        return;
    }
    let (old_families, new_families) = (list(old, "ipFamilies"), list(new, "ipFamilies"));
    if old_families.len() == new_families.len() {
        for (a, b) in old_families.iter().zip(new_families) {
            if a != b {
                errs.invalid("spec.ipFamilies[0]", go_string_slice(at(new, "ipFamilies")), CHANGED);
            }
        }
    } else if new_families.first().is_some_and(|first| Some(first) != old_families.first()) {
        errs.invalid("spec.ipFamilies[0]", shown_ips, CHANGED);
    }
}

/// Upstream `isHeadlessService`: the only cluster IP is `None`.
fn is_headless(cluster_ips: &[Value]) -> bool {
    matches!(cluster_ips, [only] if only == NONE)
}

#[cfg(test)]
mod tests {
    //! `ValidateService` / `ValidateServiceUpdate` rules on cluster IPs and
    //! ExternalName services, with upstream's messages.

    use serde_json::json;

    use crate::resources::Builtin;
    use crate::validation::{validate_create, validate_update};

    use super::*;

    /// A defaulted service with this spec.
    fn service(spec: Value) -> Value {
        let mut object = json!({"metadata": {"name": "web", "namespace": "default"}, "spec": spec});
        crate::defaults::apply(Builtin::Service, &mut object);
        object
    }

    fn allocated(ip: &str) -> Value {
        service(json!({"ports": [{"port": 80}], "clusterIP": ip, "clusterIPs": [ip],
            "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack"}))
    }

    fn lines(causes: &[super::super::Cause]) -> Vec<String> {
        causes.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn cluster_ips_may_not_change_once_set() {
        let old = allocated("10.96.0.20");
        assert!(validate_update(Builtin::Service, &old, &old).is_empty());
        let moved = allocated("10.96.0.21");
        assert_eq!(
            lines(&validate_update(Builtin::Service, &old, &moved)),
            ["spec.clusterIPs[0]: Invalid value: []string{\"10.96.0.21\"}: may not change once set"]
        );
        let mut unset = old.clone();
        unset["spec"]["clusterIP"] = json!("");
        unset["spec"]["clusterIPs"] = json!([]);
        assert_eq!(
            lines(&validate_update(Builtin::Service, &old, &unset)),
            ["spec.clusterIPs[0]: Invalid value: []string{}: primary clusterIP can not be unset"]
        );
        let mut family = old.clone();
        family["spec"]["ipFamilies"] = json!(["IPv6"]);
        assert_eq!(
            lines(&validate_update(Builtin::Service, &old, &family)),
            [
                "spec.ipFamilies[0]: Invalid value: []string{\"IPv6\"}: may not change once set",
                "spec.clusterIPs[0]: Invalid value: \"10.96.0.20\": expected an IPv6 value as indicated by `ipFamilies[0]`",
            ]
        );
    }

    #[test]
    fn cluster_ip_syntax_and_external_name_services() {
        assert_eq!(
            lines(&validate_create(Builtin::Service, &allocated("10.96.0.300"))),
            [
                "spec.clusterIPs[0]: Invalid value: \"10.96.0.300\": must be a valid IP address (e.g. 10.9.8.7 or 2001:db8::ffff)"
            ]
        );
        let headless_node_port =
            service(json!({"type": "NodePort", "ports": [{"port": 80}], "clusterIP": "None", "clusterIPs": ["None"]}));
        assert_eq!(
            lines(&validate_create(Builtin::Service, &headless_node_port)),
            ["spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for NodePort services"]
        );
        let external = service(json!({"type": "ExternalName", "externalName": "Db_1", "clusterIPs": ["10.96.0.1"],
            "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack"}));
        assert_eq!(
            lines(&validate_create(Builtin::Service, &external)),
            [
                "spec.clusterIPs: Forbidden: may not be set for ExternalName services",
                "spec.ipFamilies: Forbidden: may not be set for ExternalName services",
                "spec.ipFamilyPolicy: Forbidden: may not be set for ExternalName services",
                "spec.externalName: Invalid value: \"Db_1\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            ]
        );
        let fqdn = service(json!({"type": "ExternalName", "externalName": "db.example.com."}));
        assert!(validate_create(Builtin::Service, &fqdn).is_empty());
        // Changing to ExternalName (its IPs dropped by the strategy) is fine.
        assert!(validate_update(Builtin::Service, &allocated("10.96.0.20"), &fqdn).is_empty());
    }
}
