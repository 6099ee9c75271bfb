//! Service cluster IP allocation, as the API server's service REST does it
//! (upstream `pkg/registry/core/service/storage/alloc.go` over
//! `ipallocator`): ClusterIP, NodePort and LoadBalancer services get an IP
//! from the service range on create (or the one they ask for, refused
//! when taken or outside the range), headless ones (`None`) and
//! ExternalName ones none, and a service changed from ExternalName to
//! another type gets one on that update.
//!
//! kube-sim keeps no allocation table: an IP is allocated while a stored
//! Service holds it in `spec.clusterIPs`, so deleting a service, or
//! changing it to ExternalName (whose strategy clears the IPs), releases
//! its IPs with the write that stores the change, and a dry run reserves
//! nothing. Writes of services take a [`Lease`], which serialises them and
//! reads the stored services' IPs, so two creates never pick one IP.
//!
//! `range.rs` is the range and the allocator's arithmetic, `families.rs`
//! the IP-family and field normalisation run before allocating. The
//! immutability of cluster IPs on update is validation's
//! (`crate::validation`), the clearing of them on a change to
//! ExternalName the service strategy's (`crate::strategy`).

use std::collections::BTreeSet;
use std::net::IpAddr;
use std::sync::{Mutex, MutexGuard};

use serde_json::{Map, Value, json};

use crate::error::ApiError;
use crate::resources::ResourceType;
use crate::validation::{Cause, go_string_slice};

mod families;
mod range;

use families::{
    NONE, init_ip_family_fields, invalid, needs_cluster_ip, normalize_cluster_ips, patch_allocated_values, strings,
};

pub use range::{AllocError, InvalidCidr, ServiceCidr};

/// The service range and the lock service writes take.
#[derive(Debug)]
pub struct ClusterIps {
    /// `--service-cluster-ip-range`.
    range: ServiceCidr,
    /// Held from reading the stored services' IPs until the write that
    /// may take one is stored: what makes "free" stay free meanwhile.
    writes: Mutex<()>,
}

/// What a service write may allocate from: the IPs held when it started,
/// valid while it is held.
pub struct Lease<'a> {
    _writes: MutexGuard<'a, ()>,
    range: ServiceCidr,
    used: BTreeSet<IpAddr>,
}

/// Why a service's cluster IPs cannot be set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// 422 Invalid with these causes.
    Invalid(Vec<Cause>),
    /// 500 InternalError (the range is full).
    Internal(String),
}

impl Refusal {
    /// The API error, for the service `name`.
    pub fn into_api_error(self, rt: &ResourceType, name: &str) -> ApiError {
        match self {
            Refusal::Invalid(causes) => {
                let causes: Vec<(String, String, String)> =
                    causes.into_iter().map(|c| (c.reason.to_owned(), c.message, c.field)).collect();
                ApiError::invalid(rt, name, &causes)
            }
            Refusal::Internal(message) => ApiError::internal(message),
        }
    }
}

impl ClusterIps {
    /// Allocates from `range`.
    pub fn new(range: ServiceCidr) -> Self {
        ClusterIps { range, writes: Mutex::new(()) }
    }

    /// The service range.
    pub fn range(&self) -> ServiceCidr {
        self.range
    }

    /// Starts a service write: waits for any other, then reads the IPs of
    /// the services `stored` lists (called once the lock is held).
    pub fn lease(&self, stored: impl FnOnce() -> Vec<Value>) -> Lease<'_> {
        let writes = self.writes.lock().unwrap_or_else(|p| p.into_inner());
        let used = stored()
            .iter()
            .filter_map(|svc| svc.pointer("/spec/clusterIPs").and_then(Value::as_array))
            .flatten()
            .filter_map(|ip| ip.as_str().and_then(|ip| ip.parse().ok()))
            .collect();
        Lease { _writes: writes, range: self.range, used }
    }
}

impl Lease<'_> {
    /// `beginCreate`: normalises the IP fields, sets the families and
    /// allocates the cluster IPs of a new service.
    #[doc(alias = "allocateCreate")]
    pub fn allocate_create(&self, service: &mut Value) -> Result<(), Refusal> {
        if let Some(spec) = service.get_mut("spec").and_then(Value::as_object_mut) {
            normalize_cluster_ips(spec, None);
        }
        init_ip_family_fields(service, None, self.range.family()).map_err(Refusal::Invalid)?;
        self.alloc_cluster_ips(service)
    }

    /// `beginUpdate`: keeps the IPs a write leaves out, normalises, sets
    /// the families and, for a service leaving ExternalName, allocates.
    #[doc(alias = "allocateUpdate")]
    pub fn allocate_update(&self, old: &Value, service: &mut Value) -> Result<(), Refusal> {
        let empty = Map::new();
        let old_spec = old.get("spec").and_then(Value::as_object).unwrap_or(&empty);
        if let Some(spec) = service.get_mut("spec").and_then(Value::as_object_mut) {
            patch_allocated_values(spec, old_spec);
            normalize_cluster_ips(spec, Some(old_spec));
        }
        init_ip_family_fields(service, Some(old_spec), self.range.family()).map_err(Refusal::Invalid)?;
        let leaves_external_name =
            !needs_cluster_ip(old_spec) && service.get("spec").and_then(Value::as_object).is_some_and(needs_cluster_ip);
        if leaves_external_name { self.alloc_cluster_ips(service) } else { Ok(()) }
    }

    /// `allocClusterIPs`: one IP for the service's family, the requested
    /// one or the next free one, into `clusterIPs` and `clusterIP`.
    fn alloc_cluster_ips(&self, service: &mut Value) -> Result<(), Refusal> {
        let Some(spec) = service.get_mut("spec").and_then(Value::as_object_mut) else {
            return Ok(());
        };
        let cluster_ips = strings(spec, "clusterIPs");
        if !needs_cluster_ip(spec) || cluster_ips.first().is_some_and(|ip| ip == NONE) {
            return Ok(());
        }
        let mut allocated = cluster_ips.clone();
        for (i, family) in strings(spec, "ipFamilies").iter().enumerate() {
            if family != self.range.family() {
                // initIPFamilyFields refused those already.
                continue;
            }
            let requested = cluster_ips.get(i).map(String::as_str).unwrap_or("");
            let ip = if requested.is_empty() {
                let next = self.range.next_free(&self.used, &mut rand::rng());
                next.map_err(|e| Refusal::Internal(format!("failed to allocate a serviceIP: {e}")))?.to_string()
            } else {
                let parsed = requested.parse::<IpAddr>();
                let parsed =
                    parsed.map_err(|_| Refusal::Internal(format!("failed to parse service IP {requested:?}")))?;
                self.range.check_requested(parsed, &self.used).map_err(|e| {
                    let shown = go_string_slice(&json!(cluster_ips));
                    Refusal::Invalid(vec![invalid(
                        "spec.clusterIPs",
                        &shown,
                        &format!("failed to allocate IP {requested}: {e}"),
                    )])
                })?;
                requested.to_owned()
            };
            match allocated.get_mut(i) {
                Some(slot) => *slot = ip,
                None => allocated.push(ip),
            }
        }
        if let Some(primary) = allocated.first() {
            spec.insert("clusterIP".to_owned(), json!(primary));
            spec.insert("clusterIPs".to_owned(), json!(allocated));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! The service REST's allocation rules: what a create or update makes
    //! of the IP fields, and the refusals' causes as the API server words
    //! them.

    use super::*;

    // === utils ===

    fn ips() -> ClusterIps {
        ClusterIps::new(ServiceCidr::DEFAULT)
    }

    /// A lease with `held` IPs taken by other services.
    fn lease<'a>(ips: &'a ClusterIps, held: &[&str]) -> Lease<'a> {
        ips.lease(|| held.iter().map(|ip| json!({"spec": {"clusterIPs": [ip]}})).collect())
    }

    fn created(held: &[&str], spec: Value) -> Result<Value, Refusal> {
        let ips = ips();
        let mut service = json!({"metadata": {"name": "web"}, "spec": spec});
        lease(&ips, held).allocate_create(&mut service)?;
        Ok(service["spec"].take())
    }

    fn lines(refusal: Refusal) -> Vec<String> {
        match refusal {
            Refusal::Invalid(causes) => causes.iter().map(ToString::to_string).collect(),
            Refusal::Internal(message) => vec![message],
        }
    }

    // === tests ===

    #[test]
    fn cluster_ip_services_get_an_ip_from_the_range() {
        for service_type in ["ClusterIP", "NodePort", "LoadBalancer"] {
            let spec = created(&[], json!({"type": service_type, "selector": {"app": "web"}})).expect("allocated");
            let ip: IpAddr = spec["clusterIP"].as_str().expect("clusterIP").parse().expect("an IP");
            assert!(ServiceCidr::DEFAULT.contains(ip), "{ip}");
            assert_eq!(spec["clusterIPs"], json!([ip.to_string()]));
            assert_eq!((&spec["ipFamilies"], &spec["ipFamilyPolicy"]), (&json!(["IPv4"]), &json!("SingleStack")));
        }
    }

    #[test]
    fn requested_ips_are_honoured_or_refused() {
        let spec = created(&[], json!({"clusterIP": "10.96.0.10"})).expect("free");
        assert_eq!((&spec["clusterIP"], &spec["clusterIPs"]), (&json!("10.96.0.10"), &json!(["10.96.0.10"])));
        let taken = created(&["10.96.0.10"], json!({"clusterIP": "10.96.0.10"})).expect_err("taken");
        assert_eq!(
            lines(taken),
            [
                "spec.clusterIPs: Invalid value: []string{\"10.96.0.10\"}: failed to allocate IP 10.96.0.10: provided IP is already allocated"
            ]
        );
        let outside = created(&[], json!({"clusterIP": "10.0.0.5", "clusterIPs": ["10.0.0.5"]})).expect_err("outside");
        assert_eq!(
            lines(outside),
            [
                "spec.clusterIPs: Invalid value: []string{\"10.0.0.5\"}: failed to allocate IP 10.0.0.5: the provided network does not match the current range"
            ]
        );
        let network = created(&[], json!({"clusterIP": "10.96.0.0"})).expect_err("the network address");
        assert_eq!(
            lines(network),
            [
                "spec.clusterIPs: Invalid value: []string{\"10.96.0.0\"}: failed to allocate IP 10.96.0.0: the provided IP (10.96.0.0) is not in the valid range. The range of valid IPs is 10.96.0.0/12"
            ]
        );
    }

    #[test]
    fn headless_and_external_name_services_get_none() {
        let headless = created(&[], json!({"clusterIP": "None", "selector": {"app": "web"}})).expect("headless");
        assert_eq!((&headless["clusterIP"], &headless["clusterIPs"]), (&json!("None"), &json!(["None"])));
        assert_eq!((&headless["ipFamilies"], &headless["ipFamilyPolicy"]), (&json!(["IPv4"]), &json!("SingleStack")));
        // Headless without a selector: dual-stack families even here.
        let selectorless = created(&[], json!({"clusterIP": "None"})).expect("headless");
        assert_eq!(selectorless["ipFamilyPolicy"], "RequireDualStack");
        assert_eq!(selectorless["ipFamilies"], json!(["IPv4", "IPv6"]));
        let external = created(&[], json!({"type": "ExternalName", "externalName": "db.example.com"})).expect("ok");
        assert_eq!(external, json!({"type": "ExternalName", "externalName": "db.example.com"}));
    }

    #[test]
    fn families_the_cluster_does_not_serve_are_refused() {
        let v6 = created(&[], json!({"ipFamilies": ["IPv6"]})).expect_err("IPv6");
        assert_eq!(lines(v6), ["spec.ipFamilies[0]: Invalid value: \"IPv6\": not configured on this cluster"]);
        let dual = created(&[], json!({"ipFamilyPolicy": "RequireDualStack"})).expect_err("dual-stack");
        assert_eq!(
            lines(dual),
            [
                "spec.ipFamilyPolicy: Invalid value: \"RequireDualStack\": this cluster is not configured for dual-stack services"
            ]
        );
        let v6_ip = created(&[], json!({"clusterIP": "fd00::10", "clusterIPs": ["fd00::10"]})).expect_err("IPv6 IP");
        assert_eq!(
            lines(v6_ip),
            ["spec.clusterIPs[0]: Invalid value: []string{\"fd00::10\"}: IPv6 is not configured on this cluster"]
        );
        let prefer = created(&[], json!({"ipFamilyPolicy": "PreferDualStack"})).expect("single-stack is fine");
        assert_eq!(prefer["ipFamilies"], json!(["IPv4"]));
        let bad =
            created(&[], json!({"clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.2"]})).expect_err("out of step");
        assert_eq!(
            lines(bad),
            ["spec.clusterIPs: Invalid value: []string{\"10.96.0.2\"}: first value must match `clusterIP`"]
        );
    }

    #[test]
    fn a_full_range_is_an_internal_error() {
        let ips = ClusterIps::new("10.0.0.0/30".parse().expect("range"));
        let mut service = json!({"spec": {}});
        let refusal = lease(&ips, &["10.0.0.1", "10.0.0.2"]).allocate_create(&mut service).expect_err("full");
        assert_eq!(refusal, Refusal::Internal("failed to allocate a serviceIP: range is full".to_owned()));
    }

    #[test]
    fn updates_keep_left_out_ips_and_allocate_when_leaving_external_name() {
        let ips = ips();
        let old = json!({"spec": {"type": "ClusterIP", "clusterIP": "10.96.0.20", "clusterIPs": ["10.96.0.20"],
            "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack"}});
        let mut put = json!({"spec": {"type": "ClusterIP", "ports": [{"port": 80}]}});
        lease(&ips, &["10.96.0.20"]).allocate_update(&old, &mut put).expect("kept");
        assert_eq!(
            (&put["spec"]["clusterIP"], &put["spec"]["clusterIPs"]),
            (&old["spec"]["clusterIP"], &old["spec"]["clusterIPs"])
        );
        assert_eq!(put["spec"]["ipFamilyPolicy"], "SingleStack");

        // An old client changing `clusterIP` alone: `clusterIPs` follows, for
        // validation to refuse the change.
        let mut moved = old.clone();
        moved["spec"]["clusterIP"] = json!("10.96.0.21");
        lease(&ips, &["10.96.0.20"]).allocate_update(&old, &mut moved).expect("normalised");
        assert_eq!(moved["spec"]["clusterIPs"], json!(["10.96.0.21"]));

        let external = json!({"spec": {"type": "ExternalName", "externalName": "db.example.com"}});
        let mut back = json!({"spec": {"type": "ClusterIP", "ports": [{"port": 80}]}});
        lease(&ips, &[]).allocate_update(&external, &mut back).expect("allocated");
        assert!(back["spec"]["clusterIP"].as_str().is_some_and(|ip| ip.starts_with("10.")), "{back}");
        assert_eq!(back["spec"]["ipFamilies"], json!(["IPv4"]));
    }
}
