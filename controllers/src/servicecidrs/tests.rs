//! Upstream's `servicecidrs_controller_test.go` tables, with their case
//! names: `TestControllerSync` (the writes one sync makes, as upstream
//! counts the fake client's actions), `TestController_canDeleteCIDR`,
//! `TestController_ipToCidrs` and `TestController_cidrToCidrs`.

use std::collections::BTreeMap;

use k8s_openapi::api::networking::v1::{IPAddressSpec, ServiceCIDRSpec, ServiceCIDRStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::*;

// === utils ===

/// A case's cached ServiceCIDRs.
type Cidrs = Vec<Arc<ServiceCIDR>>;

/// A `TestControllerSync` case: name, ServiceCIDRs, IPAddresses, the one
/// synced, the writes.
type SyncCase = (&'static str, Cidrs, Vec<Arc<IPAddress>>, &'static str, Vec<&'static str>);

/// Upstream `defaultservicecidr.DefaultServiceCIDRName`.
const DEFAULT: &str = "kubernetes";

fn now() -> Timestamp {
    "2026-01-01T00:00:00Z".parse().expect("timestamp")
}

fn make_service_cidr(name: &str, primary: &str, secondary: &str) -> Arc<ServiceCIDR> {
    let cidrs = std::iter::once(primary).chain((!secondary.is_empty()).then_some(secondary)).map(str::to_owned);
    Arc::new(ServiceCIDR {
        metadata: ObjectMeta { name: Some(name.to_owned()), ..ObjectMeta::default() },
        spec: Some(ServiceCIDRSpec { cidrs: Some(cidrs.collect()) }),
        status: None,
    })
}

fn make_ip_address(name: &str) -> Arc<IPAddress> {
    let family = if name.contains(':') { "IPv6" } else { "IPv4" };
    let labels = BTreeMap::from([
        (LABEL_IP_FAMILY.to_owned(), family.to_owned()),
        (LABEL_MANAGED_BY.to_owned(), IP_ALLOCATOR.to_owned()),
    ]);
    Arc::new(IPAddress {
        metadata: ObjectMeta { name: Some(name.to_owned()), labels: Some(labels), ..ObjectMeta::default() },
        spec: IPAddressSpec::default(),
    })
}

/// A `deleting-cidr`/`deleted-cidr` with the finalizer, deleted `ago`
/// before [`now`].
fn deleted(name: &str, ago: Duration) -> Arc<ServiceCIDR> {
    let mut cidr = (*make_service_cidr(name, "192.168.0.0/24", "2001:db2::/64")).clone();
    cidr.metadata.finalizers = Some(vec![FINALIZER.to_owned()]);
    let at = now() - SignedDuration::try_from(ago).expect("duration");
    cidr.metadata.deletion_timestamp = Some(Time(at));
    Arc::new(cidr)
}

/// The API writes of `plan`, as upstream's test names the fake client's
/// actions: `patch` (the finalizer) and `patch status` (the condition).
fn actions(plan: &Plan) -> Vec<&'static str> {
    let (finalizer, condition) = match plan {
        Plan::Serve { add_finalizer, ready } => (*add_finalizer, ready.is_some()),
        Plan::Hold { terminating, .. } => (false, terminating.is_some()),
        Plan::Wait { .. } => (false, false),
        Plan::Release { remove_finalizer, .. } => (*remove_finalizer, false),
    };
    [(finalizer, "patch"), (condition, "patch status")].into_iter().filter(|(on, _)| *on).map(|(_, a)| a).collect()
}

fn names(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

// === tests ===

#[test]
fn controller_sync() {
    let deleting = || deleted("deleting-cidr", Duration::ZERO);
    let deleted = || deleted("deleted-cidr", DELETION_GRACE_PERIOD + Duration::from_secs(1));
    let cases: Vec<SyncCase> = vec![
        (
            "default service CIDR must have finalizer",
            vec![make_service_cidr(DEFAULT, "192.168.0.0/24", "2001:db2::/64")],
            vec![],
            DEFAULT,
            vec!["patch", "patch status"],
        ),
        (
            "service CIDR must have finalizer",
            vec![make_service_cidr("no-finalizer", "192.168.0.0/24", "2001:db2::/64")],
            vec![],
            "no-finalizer",
            vec!["patch", "patch status"],
        ),
        (
            "service CIDR being deleted must remove the finalizer",
            vec![deleted()],
            vec![],
            "deleted-cidr",
            vec!["patch"],
        ),
        (
            "service CIDR being deleted but within the grace period must be requeued not remove the finalizer",
            vec![deleting()],
            vec![],
            "deleting-cidr",
            vec![],
        ),
        (
            "service CIDR being deleted with IPv4 addresses should update the status",
            vec![deleted()],
            vec![make_ip_address("192.168.0.1")],
            "deleted-cidr",
            vec!["patch status"],
        ),
        (
            "service CIDR being deleted and overlapping same range and IPv4 addresses should remove the finalizer",
            vec![deleted(), make_service_cidr("overlapping", "192.168.0.0/24", "2001:db2::/64")],
            vec![make_ip_address("192.168.0.1")],
            "deleted-cidr",
            vec!["patch"],
        ),
        (
            "service CIDR being deleted and overlapping and IPv4 addresses should remove the finalizer",
            vec![deleted(), make_service_cidr("overlapping", "192.168.0.0/16", "2001:db2::/64")],
            vec![make_ip_address("192.168.0.1")],
            "deleted-cidr",
            vec!["patch"],
        ),
        (
            "service CIDR being deleted and not overlapping and IPv4 addresses should update the status",
            vec![deleted(), make_service_cidr("overlapping", "192.168.255.0/26", "2001:db2::/64")],
            vec![make_ip_address("192.168.0.1")],
            "deleted-cidr",
            vec!["patch status"],
        ),
        (
            "service CIDR being deleted with IPv6 addresses should update the status",
            vec![deleted()],
            vec![make_ip_address("2001:db2::1")],
            "deleted-cidr",
            vec!["patch status"],
        ),
        (
            "service CIDR being deleted and overlapping same range and IPv6 addresses should remove the finalizer",
            vec![deleted(), make_service_cidr("overlapping", "192.168.0.0/24", "2001:db2::/64")],
            vec![make_ip_address("2001:db2::1")],
            "deleted-cidr",
            vec!["patch"],
        ),
        (
            "service CIDR being deleted and overlapping and IPv6 addresses should remove the finalizer",
            vec![deleted(), make_service_cidr("overlapping", "192.168.0.0/16", "2001:db2::/48")],
            vec![make_ip_address("2001:db2::1")],
            "deleted-cidr",
            vec!["patch"],
        ),
        (
            "service CIDR being deleted and not overlapping and IPv6 addresses should update the status",
            vec![deleted(), make_service_cidr("overlapping", "192.168.255.0/26", "2001:db2:a:b::/64")],
            vec![make_ip_address("2001:db2::1")],
            "deleted-cidr",
            vec!["patch status"],
        ),
    ];
    for (name, cidrs, ips, synced, want) in cases {
        let cidr = cidrs.iter().find(|c| c.metadata.name.as_deref() == Some(synced)).expect(name);
        let plan = sync(cidr, &cidrs, &ips, now());
        assert_eq!(actions(&plan), want, "{name}: {plan:?}");
    }
}

#[test]
fn within_the_grace_period_the_sync_is_requeued_for_what_is_left() {
    let cidr = deleted("deleting-cidr", Duration::from_secs(4));
    let plan = sync(&cidr, std::slice::from_ref(&cidr), &[], now());
    assert_eq!(plan, Plan::Wait { verdict: Safe::NoOrphans, after: Duration::from_secs(6) });
}

#[test]
fn conditions_are_upstreams_and_written_only_when_they_change() {
    let cidr = make_service_cidr("live", "10.0.0.0/24", "");
    let Plan::Serve { ready: Some(ready), .. } = sync(&cidr, std::slice::from_ref(&cidr), &[], now()) else {
        panic!("Ready is written");
    };
    assert_eq!((ready.type_.as_str(), ready.status.as_str(), ready.reason.as_str()), ("Ready", "True", ""));
    assert_eq!(ready.message, READY_MESSAGE);
    let mut written = (*cidr).clone();
    written.metadata.finalizers = Some(vec![FINALIZER.to_owned()]);
    let mut older = ready.clone();
    older.last_transition_time = Time(now() - SignedDuration::from_hours(1));
    written.status = Some(ServiceCIDRStatus { conditions: Some(vec![older]) });
    let written = Arc::new(written);
    let plan = sync(&written, std::slice::from_ref(&written), &[], now());
    assert_eq!(plan, Plan::Serve { add_finalizer: false, ready: None }, "the time alone is no change");

    let cidr = deleted("deleted-cidr", DELETION_GRACE_PERIOD * 2);
    let ip = make_ip_address("192.168.0.1");
    let Plan::Hold { blocked_by, terminating: Some(terminating) } =
        sync(&cidr, std::slice::from_ref(&cidr), std::slice::from_ref(&ip), now())
    else {
        panic!("Terminating is written");
    };
    assert_eq!(blocked_by.to_string(), "192.168.0.1");
    assert_eq!((terminating.status.as_str(), terminating.reason.as_str()), ("False", REASON_TERMINATING));
    assert_eq!(terminating.message, TERMINATING_MESSAGE);
}

#[test]
fn can_delete_cidr() {
    let default = || make_service_cidr(DEFAULT, "192.168.0.0/24", "2001:db2::/64");
    let cases: Vec<(&str, Cidrs, Vec<&str>, bool)> = vec![
        ("empty", vec![], vec![], true),
        ("CIDR and no IPs", vec![default()], vec![], true),
        ("CIDR with IPs", vec![default()], vec!["192.168.0.24"], false),
        ("CIDR without IPs", vec![default()], vec!["192.168.1.24"], true),
        ("CIDR with IPv4 address referencing the subnet address", vec![default()], vec!["192.168.0.0"], true),
        ("CIDR with IPv4 address referencing the broadcast address", vec![default()], vec!["192.168.0.255"], true),
        (
            "CIDR with IPv6 address referencing the broadcast address",
            vec![default()],
            vec!["2001:0db2::ffff:ffff:ffff:ffff"],
            false,
        ),
        (
            "CIDR with same range overlapping and IPs",
            vec![default(), make_service_cidr("overlapping", "192.168.0.0/24", "2001:db2::/64")],
            vec!["192.168.0.23"],
            true,
        ),
        (
            "CIDR with smaller range overlapping and IPs",
            vec![default(), make_service_cidr("overlapping", "192.168.0.0/26", "2001:db2::/64")],
            vec!["192.168.0.23"],
            true,
        ),
        (
            "CIDR with smaller range overlapping but IPs orphan",
            vec![default(), make_service_cidr("overlapping", "192.168.0.0/28", "2001:db2::/64")],
            vec!["192.168.0.23"],
            false,
        ),
        (
            "CIDR with larger range overlapping and IPs",
            vec![default(), make_service_cidr("overlapping", "192.168.0.0/16", "2001:db2::/64")],
            vec!["192.168.0.23"],
            true,
        ),
    ];
    for (name, cidrs, ips, want) in cases {
        let ips: Vec<Arc<IPAddress>> = ips.into_iter().map(make_ip_address).collect();
        let verdict = can_delete(&default(), &cidrs, &ips);
        assert_eq!(verdict.is_ok(), want, "{name}: {verdict:?}");
    }
}

/// The ServiceCIDRs of upstream's `ipToCidrs` and `cidrToCidrs` cases,
/// by how many they list.
fn listed(n: usize) -> Vec<Arc<ServiceCIDR>> {
    let all = [
        make_service_cidr(DEFAULT, "192.168.0.0/24", "2001:db2::/64"),
        make_service_cidr("overlapping", "192.168.0.0/24", if n == 4 { "2001:db2::/96" } else { "2001:db2::/64" }),
        make_service_cidr("overlapping2", "192.168.0.0/26", "2001:db2::/96"),
        make_service_cidr("unrelated", "10.0.0.0/24", ""),
        make_service_cidr("unrelated2", "10.0.0.0/16", ""),
    ];
    match n {
        0 => vec![],
        3 => vec![all[0].clone(), all[3].clone(), all[4].clone()],
        4 => vec![all[0].clone(), all[1].clone(), all[3].clone(), all[4].clone()],
        _ => all.to_vec(),
    }
}

#[test]
fn ip_to_cidrs() {
    let cases = [
        ("empty", 0, "192.168.0.23", vec![]),
        ("one CIDR", 3, "192.168.0.23", vec![DEFAULT]),
        ("two equal CIDR", 4, "192.168.0.23", vec![DEFAULT, "overlapping"]),
        ("three CIDR - two same and one larger", 5, "192.168.0.23", vec![DEFAULT, "overlapping", "overlapping2"]),
        ("three CIDR - two same and one larger - IPv4 subnet address", 5, "192.168.0.0", vec![]),
        (
            "three CIDR - two same and one larger - IPv4 broadcast address",
            5,
            "192.168.0.63",
            vec![DEFAULT, "overlapping"],
        ),
        ("three CIDR - two same and one larger - IPv6 subnet address", 5, "2001:db2::", vec![]),
        (
            "three CIDR - two same and one larger - IPv6 broadcast address",
            5,
            "2001:0db2::ffff:ffff:ffff:ffff",
            vec![DEFAULT, "overlapping"],
        ),
    ];
    for (name, n, ip, want) in cases {
        assert_eq!(containing(&make_ip_address(ip), &listed(n)), names(&want), "{name}");
    }
}

#[test]
fn only_the_allocators_ip_addresses_queue_service_cidrs() {
    let mut ip = (*make_ip_address("192.168.0.23")).clone();
    ip.metadata.labels.as_mut().expect("labels").insert(LABEL_MANAGED_BY.to_owned(), "someone-else".to_owned());
    assert_eq!(containing(&ip, &listed(5)), BTreeSet::new());
}

#[test]
fn cidr_to_cidrs() {
    let cases = [
        ("empty", 0, vec![]),
        ("one CIDR", 3, vec![DEFAULT]),
        ("two equal CIDR", 4, vec![DEFAULT, "overlapping"]),
        ("three CIDR - two same and one larger", 5, vec![DEFAULT, "overlapping", "overlapping2"]),
    ];
    let cidr = make_service_cidr(DEFAULT, "192.168.0.0/24", "2001:db2::/64");
    for (name, n, want) in cases {
        assert_eq!(overlapping(&cidr, &listed(n)), names(&want), "{name}");
    }
}
