//! What the service REST does to a Service's IP fields before it
//! allocates (upstream `pkg/registry/core/service/storage`): on update,
//! `patchAllocatedValues` (a write that leaves the cluster IPs out keeps
//! them) and, on both, `normalizeClusterIPs` (`clusterIP` and
//! `clusterIPs` brought in step) and `initIPFamilyFields` (the family
//! policy and the families, checked against the one family kube-sim's
//! single-stack range serves).

use serde_json::{Map, Value, json};

use crate::validation::{Cause, FIELD_VALUE_INVALID, go_quote, go_string_slice, validate_cluster_ips_related_fields};

/// The `clusterIP` of a headless service.
pub(super) const NONE: &str = "None";

/// A string field of the spec, "" when unset.
pub(super) fn text<'a>(spec: &'a Map<String, Value>, key: &str) -> &'a str {
    spec.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A string list of the spec, empty when unset.
pub(super) fn strings(spec: &Map<String, Value>, key: &str) -> Vec<String> {
    let items = spec.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    items.iter().map(|v| v.as_str().unwrap_or("").to_owned()).collect()
}

/// Upstream `needsClusterIP`: every type but ExternalName.
pub(super) fn needs_cluster_ip(spec: &Map<String, Value>) -> bool {
    text(spec, "type") != "ExternalName"
}

/// `patchAllocatedValues` for the cluster IPs.
pub(super) fn patch_allocated_values(spec: &mut Map<String, Value>, old: &Map<String, Value>) {
    if !(needs_cluster_ip(old) && needs_cluster_ip(spec)) {
        return;
    }
    if text(spec, "clusterIP").is_empty()
        && let Some(ip) = old.get("clusterIP")
    {
        spec.insert("clusterIP".to_owned(), ip.clone());
    }
    if strings(spec, "clusterIPs").is_empty()
        && let Some(ips) = old.get("clusterIPs").filter(|ips| ips.as_array().is_some_and(|a| !a.is_empty()))
    {
        spec.insert("clusterIPs".to_owned(), ips.clone());
    }
}

/// `normalizeClusterIPs`: on create, a lone `clusterIP` (an old client)
/// fills `clusterIPs`; on update, a changed or cleared `clusterIP` with
/// `clusterIPs` left as they were carries `clusterIPs` along.
pub(super) fn normalize_cluster_ips(spec: &mut Map<String, Value>, old: Option<&Map<String, Value>>) {
    let cluster_ip = text(spec, "clusterIP").to_owned();
    let Some(old) = old else {
        if !cluster_ip.is_empty() && strings(spec, "clusterIPs").is_empty() {
            spec.insert("clusterIPs".to_owned(), json!([cluster_ip]));
        }
        return;
    };
    if !strings(old, "clusterIPs").is_empty()
        && strings(spec, "clusterIPs").is_empty()
        && text(old, "clusterIP") == cluster_ip
    {
        spec.insert("clusterIPs".to_owned(), old["clusterIPs"].clone());
    }
    if text(old, "clusterIP") != cluster_ip {
        let same = strings(old, "clusterIPs") == strings(spec, "clusterIPs");
        if !text(old, "clusterIP").is_empty() && cluster_ip.is_empty() && same {
            spec.remove("clusterIPs");
        }
        if !cluster_ip.is_empty() && same {
            spec.insert("clusterIPs".to_owned(), json!([cluster_ip]));
        }
    }
}

/// `initIPFamilyFields` on a cluster serving only `family`: the policy
/// (the old one, RequireDualStack for a headless service without
/// selector, else SingleStack), the families (from the cluster IPs, else
/// the cluster's; a headless service without selector gets both unless
/// single-stack), and the refusals of families the cluster does not serve.
pub(super) fn init_ip_family_fields(
    service: &mut Value,
    old: Option<&Map<String, Value>>,
    family: &'static str,
) -> Result<(), Vec<Cause>> {
    let Some(spec) = service.get_mut("spec").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    if !needs_cluster_ip(spec) {
        return Ok(());
    }
    let headless_selectorless =
        text(spec, "clusterIP") == NONE && spec.get("selector").and_then(Value::as_object).is_none_or(Map::is_empty);
    if let Some(old) = old
        && text(old, "ipFamilyPolicy") == "PreferDualStack"
        && is_unset_or(spec, "ipFamilyPolicy", "PreferDualStack")
        && strings(old, "clusterIPs") == strings(spec, "clusterIPs")
        && strings(old, "ipFamilies") == strings(spec, "ipFamilies")
    {
        // `isMatchingPreferDualStackClusterIPFields`: nothing to redo.
        return Ok(());
    }
    if spec.get("ipFamilyPolicy").is_none_or(Value::is_null) {
        let policy = match old.and_then(|o| o.get("ipFamilyPolicy")).filter(|p| !p.is_null()) {
            Some(policy) => policy.clone(),
            None if headless_selectorless => json!("RequireDualStack"),
            None => json!("SingleStack"),
        };
        spec.insert("ipFamilyPolicy".to_owned(), policy);
    }
    let causes = validate_cluster_ips_related_fields(service);
    if !causes.is_empty() {
        return Err(causes);
    }
    let Some(spec) = service.get_mut("spec").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    let mut causes = Vec::new();
    let policy = text(spec, "ipFamilyPolicy").to_owned();
    if let Some(old) = old {
        update_prep(spec, old, &policy, &mut causes);
    }
    if policy == "SingleStack" {
        let shown = go_quote(&policy);
        if strings(spec, "clusterIPs").len() == 2 {
            causes.push(invalid(
                "spec.ipFamilyPolicy",
                &shown,
                "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified",
            ));
        }
        if strings(spec, "ipFamilies").len() == 2 {
            causes.push(invalid(
                "spec.ipFamilyPolicy",
                &shown,
                "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified",
            ));
        }
    }
    let cluster_ips = strings(spec, "clusterIPs");
    let mut families = strings(spec, "ipFamilies");
    for (i, ip) in cluster_ips.iter().enumerate().take_while(|(_, ip)| *ip != NONE) {
        let of_ip = if ip.contains(':') { "IPv6" } else { "IPv4" };
        if i >= families.len() {
            if of_ip == family {
                families.push(of_ip.to_owned());
            } else {
                let shown = go_string_slice(&json!(cluster_ips));
                causes.push(invalid(
                    &format!("spec.clusterIPs[{i}]"),
                    &shown,
                    &format!("{of_ip} is not configured on this cluster"),
                ));
            }
        }
    }
    if !causes.is_empty() {
        return Err(causes);
    }
    if headless_selectorless {
        if families.is_empty() {
            families.push(family.to_owned());
        }
        if families.len() < 2 && policy != "SingleStack" {
            families.push(if families[0] == "IPv4" { "IPv6" } else { "IPv4" }.to_owned());
        }
        spec.insert("ipFamilies".to_owned(), json!(families));
        return Ok(());
    }
    if policy == "RequireDualStack" {
        causes.push(invalid(
            "spec.ipFamilyPolicy",
            &go_quote(&policy),
            "this cluster is not configured for dual-stack services",
        ));
    }
    for (i, requested) in families.iter().enumerate().filter(|(_, f)| *f != family) {
        causes.push(invalid(&format!("spec.ipFamilies[{i}]"), &go_quote(requested), "not configured on this cluster"));
    }
    if !causes.is_empty() {
        return Err(causes);
    }
    if families.is_empty() {
        families.push(family.to_owned());
    }
    spec.insert("ipFamilies".to_owned(), json!(families));
    Ok(())
}

/// The update-only part of `initIPFamilyFields`: a single-stack policy
/// with unchanged lists drops their secondary entries; any other policy may
/// not lose them.
fn update_prep(spec: &mut Map<String, Value>, old: &Map<String, Value>, policy: &str, causes: &mut Vec<Cause>) {
    for (field, what) in [("clusterIPs", "cluster IP"), ("ipFamilies", "IP family")] {
        let (before, after) = (strings(old, field), strings(spec, field));
        if policy == "SingleStack" {
            if before == after && after.len() > 1 {
                spec.insert(field.to_owned(), json!([after[0]]));
            }
        } else if !after.is_empty() && after.len() < before.len() {
            causes.push(invalid(
                "spec.ipFamilyPolicy",
                &go_quote(policy),
                &format!("must be 'SingleStack' to release the secondary {what}"),
            ));
        }
    }
}

/// Whether the string field `key` is unset or `value`.
fn is_unset_or(spec: &Map<String, Value>, key: &str, value: &str) -> bool {
    spec.get(key).is_none_or(|v| v.is_null() || v == value)
}

/// A `field.Invalid` cause; `shown` is the Go rendering of the value.
pub(super) fn invalid(field: &str, shown: &str, detail: &str) -> Cause {
    Cause { reason: FIELD_VALUE_INVALID, message: format!("Invalid value: {shown}: {detail}"), field: field.to_owned() }
}
