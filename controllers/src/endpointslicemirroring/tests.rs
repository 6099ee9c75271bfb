//! Upstream's `TestReconcile` cases (`reconciler_test.go`, with their
//! names): the Endpoints `test/test-ep` and its existing slices in, the
//! writes and the metrics they make out; then `TestShouldMirror`, the
//! handler filters of `endpointslicemirroring_controller_test.go`, and what
//! a written slice carries (`TestNewEndpointSlice`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    EndpointAddress, EndpointPort as SubsetPort, EndpointSubset, Endpoints, Service, ServiceSpec,
};
use k8s_openapi::api::discovery::v1::{Endpoint, EndpointConditions, EndpointPort, EndpointSlice};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

use super::metrics_cache::{Gauges, MetricsCache};
use super::reconciler::{Totals, new_endpoint_slice};
use super::tracker::EndpointSliceTracker;
use super::*;

// === utils ===

const DEFAULT_MAX: usize = 1000;

fn port(name: &str, number: i32, protocol: &str) -> SubsetPort {
    SubsetPort { name: Some(name.into()), port: number, protocol: Some(protocol.into()), app_protocol: None }
}

fn address(ip: &str, hostname: &str, node: &str) -> EndpointAddress {
    EndpointAddress { ip: ip.into(), hostname: Some(hostname.into()), node_name: Some(node.into()), target_ref: None }
}

fn subset(ports: &[(&str, i32, &str)], addresses: &[(&str, &str, &str)]) -> EndpointSubset {
    EndpointSubset {
        addresses: Some(addresses.iter().map(|(ip, h, n)| address(ip, h, n)).collect()),
        not_ready_addresses: None,
        ports: Some(ports.iter().map(|(name, n, p)| port(name, *n, p)).collect()),
    }
}

/// The two port sets of upstream's cases.
const WEB: &[(&str, i32, &str)] = &[("http", 80, "TCP"), ("https", 443, "UDP")];
const APP: &[(&str, i32, &str)] = &[("http", 3000, "TCP"), ("https", 3001, "UDP")];

/// Upstream's usual two subsets (2 and 3 IPv4 addresses).
fn two_subsets() -> Vec<EndpointSubset> {
    vec![
        subset(WEB, &[("10.0.0.1", "pod-1", "node-1"), ("10.0.0.2", "pod-2", "node-2")]),
        subset(
            APP,
            &[("10.0.1.1", "pod-11", "node-1"), ("10.0.1.2", "pod-12", "node-2"), ("10.0.1.3", "pod-13", "node-3")],
        ),
    ]
}

fn endpoints(subsets: Vec<EndpointSubset>) -> Endpoints {
    Endpoints {
        metadata: ObjectMeta {
            name: Some("test-ep".into()),
            namespace: Some("test".into()),
            uid: Some("ep-uid".into()),
            ..ObjectMeta::default()
        },
        subsets: Some(subsets),
    }
}

/// An existing slice `test-ep-1` of the web ports with these endpoints,
/// labelled as this controller labels its slices.
fn existing_web_slice(endpoints: Vec<Endpoint>) -> EndpointSlice {
    let ports: Vec<EndpointPort> =
        desired::slice_ports(&WEB.iter().map(|(n, p, pr)| port(n, *p, pr)).collect::<Vec<_>>());
    EndpointSlice {
        metadata: ObjectMeta {
            name: Some("test-ep-1".into()),
            namespace: Some("test".into()),
            labels: Some(BTreeMap::from([
                (SERVICE_NAME_LABEL.to_owned(), "test-ep".to_owned()),
                (MANAGED_BY_LABEL.to_owned(), CONTROLLER_NAME.to_owned()),
            ])),
            ..ObjectMeta::default()
        },
        address_type: "IPv4".into(),
        endpoints: Some(endpoints),
        ports: Some(ports),
    }
}

fn endpoint(addresses: &[&str], hostname: &str, node: Option<&str>, ready: Option<bool>) -> Endpoint {
    Endpoint {
        addresses: addresses.iter().map(|a| (*a).to_owned()).collect(),
        hostname: Some(hostname.into()),
        node_name: node.map(str::to_owned),
        conditions: ready.map(|r| EndpointConditions { ready: Some(r), ..EndpointConditions::default() }),
        ..Endpoint::default()
    }
}

/// One `TestReconcile` case's expectations.
struct Want {
    slices: usize,
    actions: usize,
    totals: Totals,
    skipped: usize,
    changes: (usize, usize, usize),
    gauges: Gauges,
}

fn gauges(desired_slices: usize, actual_slices: usize, desired_endpoints: usize) -> Gauges {
    Gauges {
        endpoints_desired: desired_endpoints,
        num_endpoint_slices: actual_slices,
        desired_endpoint_slices: desired_slices,
    }
}

fn totals(added: usize, updated: usize, removed: usize) -> Totals {
    Totals { added, updated, removed }
}

fn check(name: &str, ep: &Endpoints, existing: &[EndpointSlice], max: usize, want: Want) {
    let refs: Vec<&EndpointSlice> = existing.iter().collect();
    let service = Service { spec: Some(ServiceSpec::default()), ..Service::default() };
    let got = sync("test/test-ep", Some(ep), Some(&service), &refs, &EndpointSliceTracker::default(), max);
    let Sync::Mirror { writes, skipped, .. } = got else { panic!("{name}: {got:?}") };
    let changes = (writes.create.len(), writes.update.len(), writes.delete.len());
    assert_eq!(changes, want.changes, "{name}: creates, updates, deletes");
    assert_eq!(changes.0 + changes.1 + changes.2, want.actions, "{name}: client actions");
    assert_eq!(existing.len() + changes.0 - changes.2, want.slices, "{name}: slices after");
    assert_eq!(writes.totals, want.totals, "{name}: totals");
    assert_eq!(skipped, want.skipped, "{name}: skipped");
    let gauges = MetricsCache::new(max).update("test/test-ep", writes.efficiency.clone());
    assert_eq!(gauges, want.gauges, "{name}: gauges");
    for slice in writes.create.iter().chain(&writes.update) {
        let labels = slice.metadata.labels.clone().unwrap_or_default();
        assert_eq!(labels.get(SERVICE_NAME_LABEL).map(String::as_str), Some("test-ep"), "{name}");
        assert_eq!(labels.get(MANAGED_BY_LABEL).map(String::as_str), Some(CONTROLLER_NAME), "{name}");
        assert!(slice.endpoints.as_ref().map_or(0, Vec::len) <= max, "{name}");
    }
}

// === tests ===

#[test]
fn reconcile_without_existing_slices() {
    let none = Want {
        slices: 0,
        actions: 0,
        totals: Totals::default(),
        skipped: 0,
        changes: (0, 0, 0),
        gauges: Gauges::default(),
    };
    check("Endpoints with no subsets", &endpoints(vec![]), &[], DEFAULT_MAX, none);
    let no_addresses = EndpointSubset { ports: Some(vec![port("http", 80, "TCP")]), ..EndpointSubset::default() };
    let none = Want {
        slices: 0,
        actions: 0,
        totals: Totals::default(),
        skipped: 0,
        changes: (0, 0, 0),
        gauges: Gauges::default(),
    };
    check("Endpoints with no addresses", &endpoints(vec![no_addresses]), &[], DEFAULT_MAX, none);
    let one = endpoints(vec![subset(&[("http", 80, "TCP")], &[("10.0.0.1", "pod-1", "node-1")])]);
    let want = Want {
        slices: 1,
        actions: 1,
        totals: totals(1, 0, 0),
        skipped: 0,
        changes: (1, 0, 0),
        gauges: gauges(1, 1, 1),
    };
    check("Endpoints with 1 subset, port, and address", &one, &[], DEFAULT_MAX, want);
    let two = endpoints(vec![subset(WEB, &[("10.0.0.1", "pod-1", "node-1"), ("10.0.0.2", "pod-2", "node-2")])]);
    let want = Want {
        slices: 1,
        actions: 1,
        totals: totals(2, 0, 0),
        skipped: 0,
        changes: (1, 0, 0),
        gauges: gauges(1, 1, 2),
    };
    check("Endpoints with 1 subset, 2 ports, and 2 addresses", &two, &[], DEFAULT_MAX, want);
    let want = Want {
        slices: 2,
        actions: 2,
        totals: totals(5, 0, 0),
        skipped: 0,
        changes: (2, 0, 0),
        gauges: gauges(2, 2, 5),
    };
    check("Endpoints with 2 subsets, multiple ports and addresses", &endpoints(two_subsets()), &[], DEFAULT_MAX, want);
}

#[test]
fn reconcile_endpoints_pending_deletion_creates_nothing() {
    let mut ep = endpoints(vec![subset(&[("http", 80, "TCP")], &[("10.0.0.1", "pod-1", "node-1")])]);
    ep.metadata.deletion_timestamp = Some(Time("2026-01-01T00:00:00Z".parse().unwrap()));
    let refs: Vec<&EndpointSlice> = Vec::new();
    let service = Service { spec: Some(ServiceSpec::default()), ..Service::default() };
    let got = sync("test/test-ep", Some(&ep), Some(&service), &refs, &EndpointSliceTracker::default(), DEFAULT_MAX);
    let Sync::Mirror { writes, .. } = got else { panic!("{got:?}") };
    assert!(writes.create.is_empty() && writes.update.is_empty() && writes.delete.is_empty(), "{writes:?}");
}

#[test]
fn reconcile_with_an_existing_slice() {
    let empty = [existing_web_slice(vec![])];
    let want = Want {
        slices: 2,
        actions: 2,
        totals: totals(5, 0, 0),
        skipped: 0,
        changes: (1, 1, 0),
        gauges: gauges(2, 2, 5),
    };
    check("existing empty EndpointSlice", &endpoints(two_subsets()), &empty, DEFAULT_MAX, want);

    let some = [existing_web_slice(vec![
        endpoint(&["10.0.0.2"], "pod-2", None, None),
        endpoint(&["10.0.0.1", "10.0.0.3"], "pod-1", None, None),
    ])];
    let want = Want {
        slices: 2,
        actions: 2,
        totals: totals(4, 1, 1),
        skipped: 0,
        changes: (1, 1, 0),
        gauges: gauges(2, 2, 5),
    };
    check("existing EndpointSlice with some addresses", &endpoints(two_subsets()), &some, DEFAULT_MAX, want);

    let identical = [existing_web_slice(vec![
        endpoint(&["10.0.0.1"], "pod-1", Some("node-1"), Some(true)),
        endpoint(&["10.0.0.2"], "pod-2", Some("node-2"), Some(true)),
    ])];
    let want = Want {
        slices: 2,
        actions: 1,
        totals: totals(3, 0, 0),
        skipped: 0,
        changes: (1, 0, 0),
        gauges: gauges(2, 2, 5),
    };
    check("existing EndpointSlice identical to subset", &endpoints(two_subsets()), &identical, DEFAULT_MAX, want);
}

#[test]
fn reconcile_dual_stack_ipv6_and_invalid_addresses() {
    let dual = endpoints(vec![
        subset(WEB, &[("2001:db8:2222:3333:4444:5555:6666:7777", "pod-1", "node-1"), ("10.0.0.2", "pod-2", "node-2")]),
        subset(
            APP,
            &[
                ("10.0.1.1", "pod-11", "node-1"),
                ("10.0.1.2", "pod-12", "node-2"),
                ("2001:db8:3333:4444:5555:6666:7777:8888", "pod-13", "node-3"),
            ],
        ),
    ]);
    let want = Want {
        slices: 4,
        actions: 4,
        totals: totals(5, 0, 0),
        skipped: 0,
        changes: (4, 0, 0),
        gauges: gauges(4, 4, 5),
    };
    check("Endpoints with 2 subsets, multiple ports, and dual stack addresses", &dual, &[], DEFAULT_MAX, want);

    let v6 = endpoints(vec![
        subset(
            WEB,
            &[
                ("2001:db8:1111:3333:4444:5555:6666:7777", "pod-1", "node-1"),
                ("2001:db8:2222:3333:4444:5555:6666:7777", "pod-2", "node-2"),
            ],
        ),
        subset(
            APP,
            &[
                ("2001:db8:3333:3333:4444:5555:6666:7777", "pod-11", "node-1"),
                ("2001:db8:4444:3333:4444:5555:6666:7777", "pod-12", "node-2"),
                ("2001:db8:5555:3333:4444:5555:6666:7777", "pod-13", "node-3"),
            ],
        ),
    ]);
    let want = Want {
        slices: 2,
        actions: 2,
        totals: totals(5, 0, 0),
        skipped: 0,
        changes: (2, 0, 0),
        gauges: gauges(2, 2, 5),
    };
    check("Endpoints with 2 subsets, multiple ports, ipv6 only addresses", &v6, &[], DEFAULT_MAX, want);

    let some_invalid = endpoints(vec![
        subset(
            WEB,
            &[("2001:db8:1111:3333:4444:5555:6666:7777", "pod-1", "node-1"), ("this-is-not-an-ip", "pod-2", "node-2")],
        ),
        subset(
            APP,
            &[
                ("this-is-also-not-an-ip", "pod-11", "node-1"),
                ("2001:db8:4444:3333:4444:5555:6666:7777", "pod-12", "node-2"),
                ("2001:db8:5555:3333:4444:5555:6666:7777", "pod-13", "node-3"),
            ],
        ),
    ]);
    let want = Want {
        slices: 2,
        actions: 2,
        totals: totals(3, 0, 0),
        skipped: 2,
        changes: (2, 0, 0),
        gauges: gauges(2, 2, 3),
    };
    check("Endpoints with 2 subsets, multiple ports, some invalid addresses", &some_invalid, &[], DEFAULT_MAX, want);

    let all_invalid = endpoints(vec![
        subset(WEB, &[("this-is-not-an-ip1", "pod-1", "node-1"), ("this-is-not-an-ip12", "pod-2", "node-2")]),
        subset(
            APP,
            &[
                ("this-is-not-an-ip11", "pod-11", "node-1"),
                ("this-is-not-an-ip12", "pod-12", "node-2"),
                ("this-is-not-an-ip3", "pod-13", "node-3"),
            ],
        ),
    ]);
    let want = Want {
        slices: 0,
        actions: 0,
        totals: totals(0, 0, 0),
        skipped: 5,
        changes: (0, 0, 0),
        gauges: gauges(0, 0, 0),
    };
    check("Endpoints with 2 subsets, multiple ports, all invalid addresses", &all_invalid, &[], DEFAULT_MAX, want);
}

#[test]
fn reconcile_one_subset_exceeding_max_endpoints_per_subset() {
    let want = Want {
        slices: 2,
        actions: 2,
        totals: totals(4, 0, 0),
        skipped: 1,
        changes: (2, 0, 0),
        gauges: gauges(2, 2, 4),
    };
    check("Endpoints with 2 subsets, 1 exceeding maxEndpointsPerSubset", &endpoints(two_subsets()), &[], 2, want);
}

#[test]
fn skipped_addresses_are_warning_events_as_upstreams() {
    let mut subsets = two_subsets();
    subsets[0].addresses.as_mut().unwrap().push(address("0bad", "pod-x", "node-1"));
    let service = Service { spec: Some(ServiceSpec::default()), ..Service::default() };
    let ep = endpoints(subsets);
    let got = sync("test/test-ep", Some(&ep), Some(&service), &[], &EndpointSliceTracker::default(), 2);
    let Sync::Mirror { events, .. } = got else { panic!("{got:?}") };
    assert_eq!(
        events,
        [
            (INVALID_IP_ADDRESS, "Skipped 1 invalid IP addresses when mirroring to EndpointSlices".to_owned()),
            (
                TOO_MANY_ADDRESSES_TO_MIRROR,
                "A max of 2 addresses can be mirrored to EndpointSlices per Endpoints subset. 2 addresses were skipped"
                    .to_owned()
            ),
        ]
    );
}

#[test]
fn a_stale_or_unmirrored_endpoints_deletes_its_slices() {
    let slice = existing_web_slice(vec![]);
    let refs = [&slice];
    let tracker = EndpointSliceTracker::default();
    let selectorless = Service { spec: Some(ServiceSpec::default()), ..Service::default() };
    let mut with_selector = selectorless.clone();
    with_selector.spec.as_mut().unwrap().selector = Some(BTreeMap::new());
    let ep = endpoints(two_subsets());
    let mut skipped = ep.clone();
    skipped.metadata.labels = Some(BTreeMap::from([(SKIP_MIRROR_LABEL.to_owned(), "true".to_owned())]));
    let all = Sync::DeleteAll(vec![slice.clone()]);
    assert_eq!(sync("test/test-ep", None, Some(&selectorless), &refs, &tracker, DEFAULT_MAX), all, "no Endpoints");
    assert_eq!(sync("test/test-ep", Some(&ep), None, &refs, &tracker, DEFAULT_MAX), all, "no Service");
    assert_eq!(sync("test/test-ep", Some(&ep), Some(&with_selector), &refs, &tracker, DEFAULT_MAX), all, "a selector");
    assert_eq!(
        sync("test/test-ep", Some(&skipped), Some(&selectorless), &refs, &tracker, DEFAULT_MAX),
        all,
        "skip-mirror"
    );
    let mut written = slice.clone();
    written.metadata.uid = Some("s1".into());
    written.metadata.generation = Some(2);
    let mut tracker = EndpointSliceTracker::default();
    tracker.update(&written);
    let mut cached = written.clone();
    cached.metadata.generation = Some(1);
    assert_eq!(sync("test/test-ep", Some(&ep), Some(&selectorless), &[&cached], &tracker, DEFAULT_MAX), Sync::Stale);
}

#[test]
fn should_mirror() {
    let mut ep = endpoints(vec![]);
    assert!(super::should_mirror(&ep), "an Endpoints");
    ep.metadata.labels = Some(BTreeMap::from([(SKIP_MIRROR_LABEL.to_owned(), "false".to_owned())]));
    assert!(super::should_mirror(&ep), "skip-mirror=false");
    ep.metadata.labels = Some(BTreeMap::from([(SKIP_MIRROR_LABEL.to_owned(), "true".to_owned())]));
    assert!(!super::should_mirror(&ep), "skip-mirror=true");
    let mut leader = endpoints(vec![]);
    leader.metadata.annotations =
        Some(BTreeMap::from([(crate::common::endpoints_annotations::LEADER_ANNOTATION.to_owned(), "{}".to_owned())]));
    assert!(!super::should_mirror(&leader), "a leader-election record");
}

#[test]
fn service_and_endpoints_events_queue_as_upstreams() {
    let selectorless = Service { spec: Some(ServiceSpec::default()), ..Service::default() };
    let mut with_selector = selectorless.clone();
    with_selector.spec.as_mut().unwrap().selector = Some(BTreeMap::from([("app".to_owned(), "a".to_owned())]));
    assert!(queues_on_service_add_or_delete(&selectorless));
    assert!(!queues_on_service_add_or_delete(&with_selector));
    assert!(queues_on_service_update(&selectorless, &with_selector), "selector added");
    assert!(!queues_on_service_update(&selectorless, &selectorless));
    let mut skipped = endpoints(vec![]);
    skipped.metadata.labels = Some(BTreeMap::from([(SKIP_MIRROR_LABEL.to_owned(), "true".to_owned())]));
    assert!(queues_on_endpoints_update(&skipped, &endpoints(vec![])), "skip-mirror removed");
    assert!(!queues_on_endpoints_update(&skipped, &skipped));
}

#[test]
fn new_endpoint_slice_mirrors_labels_and_annotations_but_two() {
    let mut ep = endpoints(vec![]);
    ep.metadata.labels = Some(BTreeMap::from([("foo".to_owned(), "bar".to_owned())]));
    ep.metadata.annotations = Some(BTreeMap::from([
        ("foo2".to_owned(), "bar2".to_owned()),
        (crate::common::endpoints_annotations::LAST_CHANGE_TRIGGER_TIME.to_owned(), "sometime".to_owned()),
        (reconciler::LAST_APPLIED_CONFIG.to_owned(), "{}".to_owned()),
    ]));
    let slice = new_endpoint_slice(&ep, &[], "IPv4", None);
    assert_eq!(slice.metadata.generate_name.as_deref(), Some("test-ep-"));
    assert_eq!(slice.metadata.name, None);
    let labels = slice.metadata.labels.unwrap_or_default();
    assert_eq!(labels.len(), 3, "{labels:?}");
    assert_eq!(labels.get("foo").map(String::as_str), Some("bar"));
    let annotations = slice.metadata.annotations.unwrap_or_default();
    assert_eq!(annotations, BTreeMap::from([("foo2".to_owned(), "bar2".to_owned())]));
    let owner = &slice.metadata.owner_references.unwrap_or_default()[0];
    assert_eq!((owner.kind.as_str(), owner.name.as_str(), owner.uid.as_str()), ("Endpoints", "test-ep", "ep-uid"));
    assert_eq!(owner.controller, Some(true));
}

#[test]
fn a_label_or_annotation_change_rewrites_an_otherwise_identical_slice() {
    let identical = existing_web_slice(vec![
        endpoint(&["10.0.0.1"], "pod-1", Some("node-1"), Some(true)),
        endpoint(&["10.0.0.2"], "pod-2", Some("node-2"), Some(true)),
    ]);
    let mut ep = endpoints(vec![subset(WEB, &[("10.0.0.1", "pod-1", "node-1"), ("10.0.0.2", "pod-2", "node-2")])]);
    let service = Service { spec: Some(ServiceSpec::default()), ..Service::default() };
    let tracker = EndpointSliceTracker::default();
    let writes =
        |ep: &Endpoints| match sync("test/test-ep", Some(ep), Some(&service), &[&identical], &tracker, DEFAULT_MAX) {
            Sync::Mirror { writes, .. } => (writes.create.len(), writes.update.len(), writes.delete.len()),
            other => panic!("{other:?}"),
        };
    assert_eq!(writes(&ep), (0, 0, 0), "nothing changed");
    ep.metadata.annotations = Some(BTreeMap::from([(
        crate::common::endpoints_annotations::LAST_CHANGE_TRIGGER_TIME.to_owned(),
        "t".to_owned(),
    )]));
    assert_eq!(writes(&ep), (0, 0, 0), "the trigger time is not mirrored");
    ep.metadata.labels = Some(BTreeMap::from([("team".to_owned(), "a".to_owned())]));
    assert_eq!(writes(&ep), (0, 1, 0), "a new label");
}

#[test]
fn a_subset_moved_to_other_ports_recycles_its_slice() {
    let old = existing_web_slice(vec![endpoint(&["10.0.0.1"], "pod-1", Some("node-1"), Some(true))]);
    let ep = endpoints(vec![subset(APP, &[("10.0.0.1", "pod-1", "node-1")])]);
    let service = Service { spec: Some(ServiceSpec::default()), ..Service::default() };
    let got = sync("test/test-ep", Some(&ep), Some(&service), &[&old], &EndpointSliceTracker::default(), DEFAULT_MAX);
    let Sync::Mirror { writes, .. } = got else { panic!("{got:?}") };
    assert_eq!((writes.create.len(), writes.update.len(), writes.delete.len()), (0, 1, 0));
    assert_eq!(writes.update[0].metadata.name.as_deref(), Some("test-ep-1"));
    let ports: Vec<Option<i32>> = writes.update[0].ports.iter().flatten().map(|p| p.port).collect();
    assert_eq!(ports, [Some(3000), Some(3001)]);
}
