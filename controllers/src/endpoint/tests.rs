//! Upstream's `endpoints_controller_test.go` sync cases, named after the
//! upstream tests: the cached Service, pods and Endpoints in, the one
//! write out (upstream counts the requests its fake server got and checks
//! the body of the last). The batching and stale-cache tests
//! (`TestPod*Batching`, `TestMultiple*Changes`) are the driver's and its
//! end-to-end test's; the sync decides nothing there.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{EndpointSubset, Endpoints, Service};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kcm_objects::Pod;
use serde_json::json;

use super::testing::*;
use super::trackers::TriggerTimeTracker;
use super::*;

// === utils ===

const FOO_BAR: &[(&str, &str)] = &[("foo", "bar")];
const EVERYTHING: &[(&str, &str)] = &[];

fn run(service: &Service, pods: &[Pod], current: Option<&Endpoints>) -> Write {
    let refs: Vec<&Pod> = pods.iter().collect();
    sync(Some(service), &refs, current, None)
}

/// The Endpoints a write sends; panics on `None` or `Delete`.
fn written(write: Write) -> (bool, Endpoints) {
    match write {
        Write::Create(ep) => (true, ep),
        Write::Update(ep) => (false, ep),
        other => panic!("expected a write, got {other:?}"),
    }
}

/// Asserts an update (or create) with these subsets and labels.
fn assert_writes(write: Write, create: bool, subsets: &[EndpointSubset], want_labels: &[(&str, &str)]) {
    let (created, ep) = written(write);
    assert_eq!(created, create, "create rather than update");
    let got = ep.subsets.clone().unwrap_or_default();
    assert!(subsets::equal_ignoring_resource_version(&got, subsets), "subsets: {got:#?}\nwant {subsets:#?}");
    let mut want = labels(want_labels);
    want.insert(MANAGED_BY_LABEL.into(), CONTROLLER_NAME.into());
    assert_eq!(ep.metadata.labels.unwrap_or_default(), want);
}

fn one(
    ready: &[k8s_openapi::api::core::v1::EndpointAddress],
    not_ready: &[k8s_openapi::api::core::v1::EndpointAddress],
    ports: Vec<k8s_openapi::api::core::v1::EndpointPort>,
) -> EndpointSubset {
    let some = |v: &[_]| (!v.is_empty()).then(|| v.to_vec());
    EndpointSubset {
        addresses: some(ready),
        not_ready_addresses: some(not_ready),
        ports: (!ports.is_empty()).then_some(ports),
    }
}

const HEADLESS: (&str, &str) = (HEADLESS_LABEL, "");

// === tests ===

#[test]
fn sync_endpoints_items_preserve_no_selector() {
    let current = endpoints("default", Some(vec![one(&[bare("6.7.8.9")], &[], vec![ep_port(None, 1000, None)])]));
    let svc = service("default", None, vec![port(80, None, None)]);
    assert_eq!(run(&svc, &[], Some(&current)), Write::None);
}

#[test]
fn sync_endpoints_existing_nil_subsets() {
    let svc = service("default", Some(FOO_BAR), vec![port(80, None, None)]);
    assert_eq!(run(&svc, &[], Some(&endpoints("default", None))), Write::None);
}

#[test]
fn sync_endpoints_existing_empty_subsets() {
    let svc = service("default", Some(FOO_BAR), vec![port(80, None, None)]);
    assert_eq!(run(&svc, &[], Some(&endpoints("default", Some(vec![])))), Write::None);
}

#[test]
fn sync_endpoints_with_pod_resource_version_update_only() {
    let (mut pod0, mut pod1) = (pod("default", 0, 1, true, IPV4), pod("default", 1, 1, false, IPV4));
    let with_rv = |mut a: k8s_openapi::api::core::v1::EndpointAddress, rv: &str| {
        a.target_ref.as_mut().unwrap().resource_version = Some(rv.into());
        a
    };
    let current = endpoints(
        "default",
        Some(vec![one(
            &[with_rv(address("default", "1.2.3.4", "pod0"), "1")],
            &[with_rv(address("default", "1.2.3.5", "pod1"), "2")],
            vec![ep_port(None, 8080, Some("TCP"))],
        )]),
    );
    pod0.metadata.resource_version = "3".into();
    pod1.metadata.resource_version = "4".into();
    let svc = service("default", Some(FOO_BAR), vec![port(80, Some(8080), Some("TCP"))]);
    assert_eq!(run(&svc, &[pod0, pod1], Some(&current)), Write::None);
}

#[test]
fn sync_endpoints_new_no_subsets() {
    let svc = service("default", Some(FOO_BAR), vec![port(80, None, None)]);
    assert_eq!(written(run(&svc, &[], None)).1.metadata.annotations, None, "no empty annotations written");
    assert_writes(run(&svc, &[], None), true, &[], &[HEADLESS]);
}

#[test]
fn sync_endpoints_protocol_tcp_udp_sctp() {
    for protocol in ["TCP", "UDP", "SCTP"] {
        let current =
            endpoints("other", Some(vec![one(&[bare("6.7.8.9")], &[], vec![ep_port(None, 1000, Some(protocol))])]));
        let svc = service("other", Some(EVERYTHING), vec![port(80, Some(8080), Some(protocol))]);
        let want = one(&[address("other", "1.2.3.4", "pod0")], &[], vec![ep_port(None, 8080, Some(protocol))]);
        assert_writes(run(&svc, &pods("other", 1, 1, 0), Some(&current)), false, &[want], &[HEADLESS]);
    }
}

#[test]
fn sync_endpoints_headless_service_label() {
    let mut current = endpoints("default", Some(vec![]));
    current.metadata.labels = Some(labels(&[HEADLESS]));
    let svc = service("default", Some(FOO_BAR), vec![port(80, None, None)]);
    assert_eq!(run(&svc, &[], Some(&current)), Write::None);
}

#[test]
fn sync_service_external_name_type() {
    let cases = [
        ("External name with selector and ports should not receive endpoints", Some(FOO_BAR), true),
        ("External name with ports should not receive endpoints", None, true),
        ("External name with selector should not receive endpoints", Some(FOO_BAR), false),
        ("External name without selector and ports should not receive endpoints", None, false),
    ];
    for (name, selector, ports) in cases {
        let mut svc = service("default", selector, if ports { vec![port(80, None, None)] } else { vec![] });
        svc.spec.as_mut().unwrap().type_ = Some("ExternalName".into());
        assert_eq!(run(&svc, &pods("default", 1, 1, 0), None), Write::None, "{name}");
    }
}

#[test]
fn sync_endpoints_items_empty_selector_selects_all_ready_not_ready_and_mixed() {
    let (a0, a1) = (address("other", "1.2.3.4", "pod0"), address("other", "1.2.3.5", "pod1"));
    let tcp = || vec![ep_port(None, 8080, Some("TCP"))];
    let cases = [
        ("SelectsAll", pods("other", 1, 1, 0), one(std::slice::from_ref(&a0), &[], tcp())),
        ("SelectsAllNotReady", pods("other", 0, 1, 1), one(&[], std::slice::from_ref(&a0), tcp())),
        ("SelectsAllMixed", pods("other", 1, 1, 1), one(std::slice::from_ref(&a0), std::slice::from_ref(&a1), tcp())),
    ];
    for (name, pods, want) in cases {
        let svc = service("other", Some(EVERYTHING), vec![port(80, Some(8080), Some("TCP"))]);
        let write = run(&svc, &pods, Some(&endpoints("other", Some(vec![]))));
        assert!(matches!(write, Write::Update(_)), "{name}");
        assert_writes(write, false, &[want], &[HEADLESS]);
    }
}

#[test]
fn sync_endpoints_items_preexisting() {
    let current = endpoints("bar", Some(vec![one(&[bare("6.7.8.9")], &[], vec![ep_port(None, 1000, None)])]));
    let svc = service("bar", Some(FOO_BAR), vec![port(80, Some(8080), Some("TCP"))]);
    let want = one(&[address("bar", "1.2.3.4", "pod0")], &[], vec![ep_port(None, 8080, Some("TCP"))]);
    assert_writes(run(&svc, &pods("bar", 1, 1, 0), Some(&current)), false, &[want], &[HEADLESS]);
}

#[test]
fn sync_endpoints_items_preexisting_identical() {
    let subset = one(&[address("default", "1.2.3.4", "pod0")], &[], vec![ep_port(None, 8080, Some("TCP"))]);
    let mut current = endpoints("default", Some(vec![subset]));
    current.metadata.labels = Some(labels(&[HEADLESS, (MANAGED_BY_LABEL, CONTROLLER_NAME)]));
    let svc = service("default", Some(FOO_BAR), vec![port(80, Some(8080), Some("TCP"))]);
    assert_eq!(run(&svc, &pods("default", 1, 1, 0), Some(&current)), Write::None);
    current.metadata.labels = None;
    assert_eq!(
        run(&svc, &pods("default", 1, 1, 0), Some(&current)),
        Write::None,
        "the labels it adds are not compared"
    );
}

#[test]
fn sync_endpoints_items_and_with_labels() {
    let mut all = pods("other", 3, 2, 0);
    all.extend(pods("blah", 5, 2, 0));
    let mut svc = service("other", Some(FOO_BAR), vec![named_port("port0", 80, 8080), named_port("port1", 88, 8088)]);
    let want = one(
        &[
            address("other", "1.2.3.4", "pod0"),
            address("other", "1.2.3.5", "pod1"),
            address("other", "1.2.3.6", "pod2"),
        ],
        &[],
        vec![ep_port(Some("port0"), 8080, Some("TCP")), ep_port(Some("port1"), 8088, Some("TCP"))],
    );
    let (created, ep) = written(run(&svc, &all, None));
    assert!(created);
    assert_eq!((ep.metadata.name.as_deref(), ep.metadata.namespace.as_deref()), (Some("foo"), Some("other")));
    assert_writes(run(&svc, &all, None), true, std::slice::from_ref(&want), &[HEADLESS]);
    svc.metadata.labels = Some(labels(FOO_BAR));
    assert_writes(run(&svc, &all, None), true, &[want], &[HEADLESS, ("foo", "bar")]);
}

/// A named Service port targeting a number over TCP.
fn named_port(name: &str, number: i32, target: i32) -> k8s_openapi::api::core::v1::ServicePort {
    let mut p = port(number, Some(target), Some("TCP"));
    p.name = Some(name.into());
    p
}

#[test]
fn sync_endpoints_items_preexisting_labels_change() {
    let mut current = endpoints("bar", Some(vec![one(&[bare("6.7.8.9")], &[], vec![ep_port(None, 1000, None)])]));
    current.metadata.labels = Some(labels(FOO_BAR));
    let mut svc = service("bar", Some(FOO_BAR), vec![port(80, Some(8080), Some("TCP"))]);
    svc.metadata.labels = Some(labels(&[("baz", "blah")]));
    let want = one(&[address("bar", "1.2.3.4", "pod0")], &[], vec![ep_port(None, 8080, Some("TCP"))]);
    assert_writes(run(&svc, &pods("bar", 1, 1, 0), Some(&current)), false, &[want], &[HEADLESS, ("baz", "blah")]);
}

#[test]
fn sync_endpoints_headless_service() {
    let current =
        endpoints("headless", Some(vec![one(&[bare("6.7.8.9")], &[], vec![ep_port(None, 1000, Some("TCP"))])]));
    let mut svc = service("headless", Some(EVERYTHING), vec![]);
    svc.metadata.labels = Some(labels(&[("a", "b")]));
    svc.spec.as_mut().unwrap().cluster_ip = Some("None".into());
    let original = svc.clone();
    let want = one(&[address("headless", "1.2.3.4", "pod0")], &[], vec![]);
    assert_writes(run(&svc, &pods("headless", 1, 1, 0), Some(&current)), false, &[want], &[HEADLESS, ("a", "b")]);
    assert_eq!(svc, original, "syncing endpoints changed service");
}

#[test]
fn sync_endpoints_items_exclude_not_ready_pods_with_restart_policy_and_terminal_phase() {
    for (name, phase) in [
        ("RestartPolicyNeverAndPhaseFailed", "Failed"),
        ("RestartPolicyNeverAndPhaseSucceeded", "Succeeded"),
        ("RestartPolicyOnFailureAndPhaseSucceeded", "Succeeded"),
    ] {
        let mut current = endpoints("other", Some(vec![]));
        current.metadata.labels = Some(labels(FOO_BAR));
        let mut p = pod("other", 0, 1, false, IPV4);
        p.status.phase = Some(phase.into());
        let svc = service("other", Some(FOO_BAR), vec![port(80, Some(8080), Some("TCP"))]);
        let write = run(&svc, &[p], Some(&current));
        assert!(matches!(write, Write::Update(_)), "{name}: the labels change");
        assert_writes(write, false, &[], &[HEADLESS]);
    }
}

#[test]
fn sync_endpoints_headless_without_port() {
    let mut svc = service("default", Some(FOO_BAR), vec![]);
    svc.spec.as_mut().unwrap().ports = None;
    svc.spec.as_mut().unwrap().cluster_ip = Some("None".into());
    let want = one(&[address("default", "1.2.3.4", "pod0")], &[], vec![]);
    assert_writes(run(&svc, &pods("default", 1, 1, 0), None), true, &[want], &[HEADLESS]);
}

#[test]
fn a_service_with_a_cluster_ip_gets_no_headless_label_and_loses_it() {
    let mut current = endpoints("default", Some(vec![]));
    current.metadata.labels = Some(labels(&[HEADLESS]));
    let mut svc = service("default", Some(FOO_BAR), vec![port(80, Some(8080), Some("TCP"))]);
    svc.spec.as_mut().unwrap().cluster_ip = Some("10.0.0.1".into());
    let want = one(&[address("default", "1.2.3.4", "pod0")], &[], vec![ep_port(None, 8080, Some("TCP"))]);
    assert_writes(run(&svc, &pods("default", 1, 1, 0), Some(&current)), false, &[want], &[]);
}

#[test]
fn named_target_ports_are_resolved_per_pod() {
    let mut svc = service("default", Some(FOO_BAR), vec![port(80, None, Some("TCP"))]);
    svc.spec.as_mut().unwrap().ports.as_mut().unwrap()[0].target_port =
        Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String("port1".into()));
    // pod0 has port0 and port1 (8081); pod1 only port0: it is left out.
    let pods = [pod("default", 0, 2, true, IPV4), pod("default", 1, 1, true, IPV4)];
    let want = one(&[address("default", "1.2.3.4", "pod0")], &[], vec![ep_port(None, 8081, Some("TCP"))]);
    assert_writes(run(&svc, &pods, None), true, &[want], &[HEADLESS]);
}

#[test]
fn last_trigger_change_time_annotation() {
    let trigger: Timestamp = "2018-01-01T00:00:00Z".parse().unwrap();
    let old = "2017-12-31T23:00:00Z";
    // (case, the Endpoints' annotation before, the Service's creation time, the annotation after)
    let cases = [
        ("TestLastTriggerChangeTimeAnnotation", None, Some(trigger), Some("2018-01-01T00:00:00Z")),
        ("AnnotationOverridden", Some(old), Some(trigger), Some("2018-01-01T00:00:00Z")),
        ("AnnotationCleared", Some("2018-01-01T00:00:00Z"), None, None),
    ];
    for (name, before, created, after) in cases {
        let mut current =
            endpoints("other", Some(vec![one(&[bare("6.7.8.9")], &[], vec![ep_port(None, 1000, Some("TCP"))])]));
        current.metadata.annotations = before.map(|b| labels(&[(LAST_CHANGE_TRIGGER_TIME, b)]));
        let mut svc = service("other", Some(EVERYTHING), vec![port(80, Some(8080), Some("TCP"))]);
        svc.metadata.creation_timestamp = created.map(Time);
        let pods = pods("other", 1, 1, 0);
        let refs: Vec<&Pod> = pods.iter().collect();
        let time = TriggerTimeTracker::default().compute("other/foo", &svc, &refs);
        let (_, ep) = written(sync(Some(&svc), &refs, Some(&current), time));
        let annotations = ep.metadata.annotations.unwrap_or_default();
        assert_eq!(annotations.get(LAST_CHANGE_TRIGGER_TIME).map(String::as_str), after, "{name}");
    }
}

#[test]
fn sync_endpoints_service_not_found() {
    assert_eq!(sync(None, &[], Some(&endpoints("default", None)), None), Write::Delete);
}

#[test]
fn sync_service_over_capacity() {
    // (name, annotation before, existing addresses, ready pods, not-ready pods, ready after, not ready after, annotated)
    let max = subsets::MAX_CAPACITY;
    let cases = [
        ("empty", None, 0, 0, 0, 0, 0, false),
        (
            "annotation added past capacity, < than maxCapacity of Ready Addresses",
            None,
            max - 1,
            max - 3,
            4,
            max - 3,
            3,
            true,
        ),
        ("annotation added past capacity, maxCapacity of Ready Addresses ", None, max - 1, max, 10, max, 0, true),
        ("annotation removed below capacity", Some("truncated"), max - 1, max - 1, 0, max - 1, 0, false),
        (
            "annotation was set to warning previously, annotation removed at capacity",
            Some("warning"),
            max,
            max,
            0,
            max,
            0,
            false,
        ),
        (
            "annotation was set to warning previously but still over capacity",
            Some("warning"),
            max + 1,
            max + 1,
            0,
            max,
            0,
            true,
        ),
        ("annotation removed at capacity", Some("truncated"), max, max, 0, max, 0, false),
        ("no endpoints change, annotation value corrected", Some("invalid"), max + 1, max + 1, 0, max, 0, true),
    ];
    for (name, before, existing, ready, not_ready, want_ready, want_not_ready, annotated) in cases {
        let pods: Vec<Pod> = (0..ready + not_ready).map(|i| pod("test", i, 1, i < ready, IPV4)).collect();
        let svc = service("test", Some(FOO_BAR), vec![port(80, None, None)]);
        let addresses = pods[..existing].iter().map(|p| address::pod_to_endpoint_address(&svc, p).unwrap()).collect();
        let mut current =
            endpoints("test", Some(vec![EndpointSubset { addresses: Some(addresses), ..EndpointSubset::default() }]));
        current.metadata.annotations = Some(before.map(|b| labels(&[(OVER_CAPACITY, b)])).unwrap_or_default());
        let refs: Vec<&Pod> = pods.iter().collect();
        let result = match sync(Some(&svc), &refs, Some(&current), None) {
            Write::None => current,
            other => written(other).1,
        };
        let stored = result.subsets.clone().unwrap_or_default();
        let len = |l: &Option<Vec<_>>| l.as_ref().map_or(0, Vec::len);
        assert_eq!(stored.iter().map(|s| len(&s.addresses)).sum::<usize>(), want_ready, "{name}");
        assert_eq!(stored.iter().map(|s| len(&s.not_ready_addresses)).sum::<usize>(), want_not_ready, "{name}");
        let annotation = result.metadata.annotations.unwrap_or_default().get(OVER_CAPACITY).cloned();
        assert_eq!(annotation.as_deref(), annotated.then_some(TRUNCATED), "{name}");
    }
}

#[test]
fn sync_service_addresses() {
    // (name, phase, ready, terminating, publishNotReadyAddresses, ready addresses, not-ready addresses)
    let cases = [
        ("pod running phase", "Running", true, false, false, 1, 0),
        ("pod running phase being deleted", "Running", true, true, false, 0, 0),
        ("pod unknown phase container ready", "Unknown", true, false, false, 1, 0),
        ("pod unknown phase container ready being deleted", "Unknown", true, true, false, 0, 0),
        ("pod pending phase container ready", "Pending", true, false, false, 1, 0),
        ("pod pending phase container ready being deleted", "Pending", true, true, false, 0, 0),
        ("pod unknown phase container not ready", "Unknown", false, false, false, 0, 1),
        ("pod pending phase container not ready", "Pending", false, false, false, 0, 1),
        ("pod failed phase", "Failed", false, false, false, 0, 0),
        ("pod succeeded phase", "Succeeded", false, false, false, 0, 0),
        ("pod running phase and tolerate unready", "Running", false, false, true, 1, 0),
        ("pod running phase and tolerate unready being deleted", "Running", false, true, true, 1, 0),
        ("pod unknown phase and tolerate unready", "Unknown", false, false, true, 1, 0),
        ("pod unknown phase and tolerate unready being deleted", "Unknown", false, true, true, 1, 0),
        ("pod pending phase and tolerate unready", "Pending", false, false, true, 1, 0),
        ("pod pending phase and tolerate unready being deleted", "Pending", false, true, true, 1, 0),
        ("pod failed phase and tolerate unready", "Failed", false, false, true, 0, 0),
        ("pod succeeded phase and tolerate unready endpoints", "Succeeded", false, false, true, 0, 0),
    ];
    for (name, phase, ready, terminating, tolerate, want_ready, want_not_ready) in cases {
        let deletion = if terminating { json!("2026-01-01T00:00:00Z") } else { json!(null) };
        let p: Pod = serde_json::from_value(json!({
            "metadata": {"namespace": "ns", "name": "fakepod", "labels": {"foo": "bar"}, "deletionTimestamp": deletion},
            "spec": {"containers": [{"name": "c", "ports": [{"name": "port1", "containerPort": 8080}]}]},
            "status": {"phase": phase, "podIPs": [{"ip": "10.1.1.1"}],
                       "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]},
        }))
        .unwrap();
        let mut svc = service("ns", Some(FOO_BAR), vec![port(80, None, None)]);
        let spec = svc.spec.as_mut().unwrap();
        (spec.publish_not_ready_addresses, spec.type_, spec.cluster_ip) =
            (Some(tolerate), Some("ClusterIP".into()), Some("1.1.1.1".into()));
        let (_, ep) = written(run(&svc, &[p], None));
        let stored = ep.subsets.unwrap_or_default();
        let len = |l: &Option<Vec<_>>| l.as_ref().map_or(0, Vec::len);
        assert_eq!(stored.iter().map(|s| len(&s.addresses)).sum::<usize>(), want_ready, "{name}");
        assert_eq!(stored.iter().map(|s| len(&s.not_ready_addresses)).sum::<usize>(), want_not_ready, "{name}");
    }
}

#[test]
fn check_leftover_endpoints() {
    let plain = endpoints("default", None);
    assert!(is_leftover_candidate(&plain));
    let mut leader = plain.clone();
    leader.metadata.annotations = Some(labels(&[(LEADER_ANNOTATION, "{}")]));
    assert!(!is_leftover_candidate(&leader), "a leader-election record has no Service");
}

#[test]
fn an_update_keeps_what_the_controller_does_not_own() {
    let mut current = endpoints("other", Some(vec![]));
    current.metadata.annotations = Some(labels(&[("team", "a")]));
    current.metadata.uid = Some("uid-1".into());
    let svc = service("other", Some(EVERYTHING), vec![port(80, Some(8080), Some("TCP"))]);
    let (_, ep) = written(run(&svc, &pods("other", 1, 1, 0), Some(&current)));
    assert_eq!(ep.metadata.uid.as_deref(), Some("uid-1"));
    assert_eq!(ep.metadata.resource_version.as_deref(), Some("1"));
    assert_eq!(ep.metadata.annotations.unwrap_or_default().get("team").map(String::as_str), Some("a"));
}

#[test]
fn failed_write_events_read_as_upstreams() {
    let (reason, message) = failed_write_event(true, "ns", "svc", "boom");
    assert_eq!(
        (reason, message.as_str()),
        ("FailedToCreateEndpoint", "Failed to create endpoint for service ns/svc: boom")
    );
    let (reason, message) = failed_write_event(false, "ns", "svc", "boom");
    assert_eq!((reason, message.as_str()), ("FailedToUpdateEndpoint", "Failed to update endpoint ns/svc: boom"));
}
