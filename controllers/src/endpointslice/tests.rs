//! Upstream's `reconciler_test.go` and `utils_test.go`, each test named
//! after the one it ports: the Service `default/foo` (uid `1234`,
//! selector `foo=bar`, ClusterIP, one TCP port 80 targeting `80`), pods
//! `pod0..` on `node-1` in `zone-a`.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::api::discovery::v1::{EndpointPort, EndpointSlice};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kcm_objects::{Node, Pod};
use serde_json::json;

use super::slices::{LABEL_HEADLESS, endpoints, owned_by, slice_name_prefix, slice_to_fill};
use super::*;
use crate::common::endpoint_pods::find_port;
use crate::common::endpoints_annotations::LAST_CHANGE_TRIGGER_TIME;

// === utils ===

fn service(ip_families: &[&str]) -> Service {
    Service {
        metadata: ObjectMeta {
            name: Some("foo".into()),
            namespace: Some("default".into()),
            uid: Some("1234".into()),
            creation_timestamp: Some(Time(Timestamp::from_second(1_700_000_000).unwrap())),
            ..Default::default()
        },
        spec: Some(ServiceSpec {
            selector: Some(BTreeMap::from([("foo".to_owned(), "bar".to_owned())])),
            cluster_ip: Some("10.96.0.10".into()),
            ip_families: Some(ip_families.iter().map(|f| (*f).to_owned()).collect()),
            ports: Some(vec![ServicePort {
                name: Some("".into()),
                port: 80,
                protocol: Some("TCP".into()),
                target_port: Some(IntOrString::Int(80)),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        status: None,
    }
}

fn pod(n: usize, ready: bool) -> Pod {
    pod_with(n, ready, json!({}))
}

/// Pod `podN` with IPs `10.0.N/256.N%256` and `fd00::N`, `extra` merged
/// into its spec.
fn pod_with(n: usize, ready: bool, spec: serde_json::Value) -> Pod {
    let mut spec_value = json!({"nodeName": "node-1", "containers": [{"name": "c"}]});
    if let (Some(base), Some(more)) = (spec_value.as_object_mut(), spec.as_object()) {
        base.extend(more.clone());
    }
    serde_json::from_value(json!({
        "metadata": {"name": format!("pod{n}"), "namespace": "default", "uid": format!("uid-{n}"),
            "resourceVersion": "1", "labels": {"foo": "bar"}},
        "spec": spec_value,
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}],
            "podIPs": [{"ip": format!("10.0.{}.{}", n / 256, n % 256)}, {"ip": format!("fd00::{n:x}")}],
        },
    }))
    .unwrap()
}

fn node(name: &str, zone: &str) -> Node {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": {LABEL_TOPOLOGY_ZONE: zone}}})).unwrap()
}

struct Fixture {
    service: Service,
    pods: Vec<Pod>,
    slices: Vec<EndpointSlice>,
    nodes: Vec<Node>,
    max: usize,
}

impl Fixture {
    fn new(service: Service, pods: Vec<Pod>) -> Self {
        Self { service, pods, slices: vec![], nodes: vec![node("node-1", "zone-a")], max: 100 }
    }

    fn reconcile(&self) -> Reconciled {
        let pods: Vec<&Pod> = self.pods.iter().collect();
        let slices: Vec<&EndpointSlice> = self.slices.iter().collect();
        let lookup = |name: &str| self.nodes.iter().find(|n| &*n.metadata.name == name);
        let mut topology = TopologyCache::new();
        topology.set_nodes(&self.nodes);
        reconcile(
            &Input {
                service: &self.service,
                pods: &pods,
                slices: &slices,
                node: &lookup,
                trigger_time: None,
                max_endpoints_per_slice: self.max,
            },
            &mut topology,
        )
    }

    /// Reconciles, then applies the writes as the API server would
    /// (names for creates, generation bumps), so the next reconcile sees
    /// them.
    fn reconcile_and_apply(&mut self) -> Reconciled {
        let out = self.reconcile();
        let mut next = self.slices.len();
        for changes in &out.changes {
            let gone: Vec<_> = changes.delete.iter().map(|s| s.metadata.name.clone()).collect();
            self.slices.retain(|s| !gone.contains(&s.metadata.name));
            for updated in &changes.update {
                if let Some(s) = self.slices.iter_mut().find(|s| s.metadata.name == updated.metadata.name) {
                    *s = updated.clone();
                }
            }
            for created in &changes.create {
                let mut s = created.clone();
                s.metadata.name = Some(format!("foo-{next}"));
                s.metadata.uid = Some(format!("slice-{next}"));
                next += 1;
                self.slices.push(s);
            }
        }
        out
    }
}

fn pods(count: usize) -> Vec<Pod> {
    (0..count).map(|n| pod(n, true)).collect()
}

fn sizes(slices: &[EndpointSlice]) -> Vec<usize> {
    slices.iter().map(|s| endpoints(s).len()).collect()
}

fn only(out: &Reconciled) -> &Changes {
    assert_eq!(out.changes.len(), 1, "{out:?}");
    &out.changes[0]
}

// === tests ===

#[test]
fn reconcile_empty() {
    let fixture = Fixture::new(service(&["IPv4"]), vec![]);
    let out = fixture.reconcile();
    let changes = only(&out);
    assert_eq!((changes.create.len(), changes.update.len(), changes.delete.len()), (1, 0, 0));
    let placeholder = &changes.create[0];
    assert_eq!(placeholder.metadata.generate_name.as_deref(), Some("foo-"));
    assert_eq!(placeholder.address_type, "IPv4");
    assert!(endpoints(placeholder).is_empty());
    assert_eq!(placeholder.ports.as_deref(), Some(&[][..]));
    let labels = placeholder.metadata.labels.clone().unwrap();
    assert_eq!(labels.get(LABEL_MANAGED_BY).map(String::as_str), Some("endpointslice-controller.k8s.io"));
    assert_eq!(labels.get(LABEL_SERVICE_NAME).map(String::as_str), Some("foo"));
    assert!(!labels.contains_key(LABEL_HEADLESS));
    assert!(owned_by(placeholder, &fixture.service));
}

#[test]
fn reconcile1_pod() {
    // (ipFamilies, the address types of the slices, the first address of each)
    let cases: [(&str, &[&str], &[&str]); 3] = [
        ("ipv4", &["IPv4"], &["10.0.0.1"]),
        ("ipv6", &["IPv6"], &["fd00::1"]),
        ("dual stack", &["IPv4", "IPv6"], &["10.0.0.1", "fd00::1"]),
    ];
    for (name, families, addresses) in cases {
        let fixture = Fixture::new(service(families), vec![pod(1, true)]);
        let out = fixture.reconcile();
        assert_eq!(out.changes.len(), families.len(), "{name}");
        for (changes, address) in out.changes.iter().zip(addresses) {
            assert_eq!(changes.create.len(), 1, "{name}");
            let slice = &changes.create[0];
            let endpoint = &endpoints(slice)[0];
            assert_eq!(endpoint.addresses, [address.to_string()], "{name}");
            let conditions = endpoint.conditions.clone().unwrap();
            assert_eq!(
                (conditions.ready, conditions.serving, conditions.terminating),
                (Some(true), Some(true), Some(false))
            );
            assert_eq!(endpoint.node_name.as_deref(), Some("node-1"));
            assert_eq!(endpoint.zone.as_deref(), Some("zone-a"));
            let target = endpoint.target_ref.clone().unwrap();
            assert_eq!(
                (target.kind.as_deref(), target.name.as_deref(), target.uid.as_deref()),
                (Some("Pod"), Some("pod1"), Some("uid-1"))
            );
            assert_eq!(endpoint.hostname, None);
            assert_eq!(
                slice.ports.as_deref(),
                Some(
                    &[EndpointPort {
                        name: Some("".into()),
                        port: Some(80),
                        protocol: Some("TCP".into()),
                        app_protocol: None
                    }][..]
                )
            );
        }
    }
}

#[test]
fn reconcile1_pod_headless_and_hostname() {
    let mut svc = service(&["IPv4"]);
    svc.spec.as_mut().unwrap().cluster_ip = Some("None".into());
    let hostnamed = pod_with(1, true, json!({"hostname": "web-0", "subdomain": "foo"}));
    let other_domain = pod_with(2, true, json!({"hostname": "web-1", "subdomain": "bar"}));
    let out = Fixture::new(svc, vec![hostnamed, other_domain]).reconcile();
    let slice = &only(&out).create[0];
    assert_eq!(slice.metadata.labels.as_ref().unwrap().get(LABEL_HEADLESS).map(String::as_str), Some(""));
    let hostnames: Vec<_> = endpoints(slice).iter().map(|e| e.hostname.clone()).collect();
    assert_eq!(hostnames, [Some("web-0".to_owned()), None], "only the subdomain of this Service");
}

#[test]
fn reconcile1_endpoint_slice() {
    // An existing placeholder is kept as it is.
    let mut fixture = Fixture::new(service(&["IPv4"]), vec![]);
    fixture.reconcile_and_apply();
    let out = fixture.reconcile();
    let changes = only(&out);
    assert_eq!((changes.create.len(), changes.update.len(), changes.delete.len()), (0, 0, 0));
}

#[test]
fn reconcile1_endpoint_slice_with_labels_missing_is_updated() {
    let mut fixture = Fixture::new(service(&["IPv4"]), vec![pod(1, true)]);
    fixture.reconcile_and_apply();
    fixture.service.metadata.labels = Some(BTreeMap::from([("team".to_owned(), "a".to_owned())]));
    let out = fixture.reconcile();
    let changes = only(&out);
    assert_eq!(changes.update.len(), 1);
    assert_eq!(changes.update[0].metadata.labels.as_ref().unwrap().get("team").map(String::as_str), Some("a"));
}

#[test]
fn reconcile1_endpoint_slice_publish_not_ready_addresses() {
    let mut svc = service(&["IPv4"]);
    svc.spec.as_mut().unwrap().publish_not_ready_addresses = Some(true);
    let out = Fixture::new(svc, vec![pod(1, false)]).reconcile();
    let conditions = endpoints(&only(&out).create[0])[0].conditions.clone().unwrap();
    assert_eq!((conditions.ready, conditions.serving), (Some(true), Some(false)), "published though not serving");
}

#[test]
fn reconcile_terminating_endpoints() {
    let mut terminating = pod(1, true);
    terminating.metadata.set_deletion_timestamp(Some(Timestamp::from_second(1_700_000_100).unwrap()));
    let mut succeeded = pod(2, true);
    succeeded.status.phase = Some("Succeeded".into());
    let mut no_ip = pod(3, true);
    no_ip.status.pod_ips = Box::new([]);
    let out = Fixture::new(service(&["IPv4"]), vec![terminating, succeeded, no_ip]).reconcile();
    let slice = &only(&out).create[0];
    assert_eq!(endpoints(slice).len(), 1, "terminal and IP-less pods left out");
    let conditions = endpoints(slice)[0].conditions.clone().unwrap();
    assert_eq!((conditions.ready, conditions.serving, conditions.terminating), (Some(false), Some(true), Some(true)));
}

#[test]
fn reconcile_many_pods() {
    let out = Fixture::new(service(&["IPv4"]), pods(250)).reconcile();
    let changes = only(&out);
    assert_eq!(sizes(&changes.create), [100, 100, 50]);
    assert_eq!(changes.added, 250);
    assert_eq!(changes.efficiency, [Efficiency { endpoints: 250, slices: 3 }]);
}

#[test]
fn reconcile_endpoint_slices_some_preexisting() {
    // 250 pods, two slices of 62 and 10 of them already, both unchanged:
    // 100 of the 178 new endpoints go into a new slice, and the 78 left
    // into the unchanged slice they fill closest to full (10 + 78 = 88;
    // 62 + 78 would not fit).
    let mut fixture = Fixture::new(service(&["IPv4"]), pods(250));
    fixture.pods.truncate(72);
    fixture.max = 62;
    fixture.reconcile_and_apply();
    assert_eq!(sizes(&fixture.slices), [62, 10]);
    fixture.pods = pods(250);
    fixture.max = 100;
    let out = fixture.reconcile_and_apply();
    let changes = only(&out);
    assert_eq!(sizes(&changes.update), [88]);
    assert_eq!(sizes(&changes.create), [100]);
    let mut all = sizes(&fixture.slices);
    all.sort_unstable();
    assert_eq!(all, [62, 88, 100]);
}

#[test]
fn reconcile_endpoint_slices_updating() {
    let mut fixture = Fixture::new(service(&["IPv4"]), pods(250));
    fixture.reconcile_and_apply();
    // Every pod's readiness flips: the same slices are updated, none created.
    fixture.pods = (0..250).map(|n| pod(n, false)).collect();
    let out = fixture.reconcile_and_apply();
    let changes = only(&out);
    assert_eq!((changes.create.len(), changes.update.len(), changes.delete.len()), (0, 3, 0));
    assert_eq!(sizes(&fixture.slices), [100, 100, 50]);
}

#[test]
fn reconcile_endpoint_slices_update_packing() {
    // Slices of 100 and 60; 5 pods of the first gone and 10 new: the first
    // is filled back to 100, the 5 left go into the 60.
    let mut fixture = Fixture::new(service(&["IPv4"]), pods(160));
    fixture.reconcile_and_apply();
    assert_eq!(sizes(&fixture.slices), [100, 60]);
    let first: Vec<String> =
        endpoints(&fixture.slices[0]).iter().take(5).map(|e| e.target_ref.clone().unwrap().name.unwrap()).collect();
    fixture.pods.retain(|p| !first.contains(&p.metadata.name.to_string()));
    fixture.pods.extend((160..170).map(|n| pod(n, true)));
    let out = fixture.reconcile_and_apply();
    let changes = only(&out);
    assert_eq!(changes.create.len(), 0);
    assert_eq!(sizes(&fixture.slices), [100, 65]);
    assert_eq!((changes.added, changes.removed), (10, 5));
}

#[test]
fn reconcile_endpoint_slices_recycling() {
    // Ten slices of 25 whose ports changed (port 80 -> 8080): the new
    // slices reuse the names of old ones instead of create + delete.
    let mut fixture = Fixture::new(service(&["IPv4"]), pods(250));
    fixture.max = 25;
    fixture.reconcile_and_apply();
    assert_eq!(fixture.slices.len(), 10);
    fixture.max = 100;
    fixture.service.spec.as_mut().unwrap().ports.as_mut().unwrap()[0].target_port = Some(IntOrString::Int(8080));
    let out = fixture.reconcile_and_apply();
    let changes = only(&out);
    assert_eq!((changes.create.len(), changes.update.len(), changes.delete.len()), (0, 3, 7));
    let mut all = sizes(&fixture.slices);
    all.sort_unstable();
    assert_eq!(all, [50, 100, 100]);
}

#[test]
fn reconcile_endpoint_slices_replace_deprecated() {
    // A slice of the retired `IP` address type is deleted; new ones made.
    let mut fixture = Fixture::new(service(&["IPv4"]), pods(10));
    fixture.reconcile_and_apply();
    fixture.slices[0].address_type = "IP".into();
    let out = fixture.reconcile();
    assert_eq!(out.stale_address_types.len(), 1);
    assert_eq!(only(&out).create.len(), 1);
}

#[test]
fn reconcile_endpoint_slices_recreation() {
    // A slice of an earlier Service of the same name (another uid) is
    // deleted, not updated, and a new one created.
    let mut fixture = Fixture::new(service(&["IPv4"]), pods(1));
    fixture.reconcile_and_apply();
    fixture.service.metadata.uid = Some("5678".into());
    let out = fixture.reconcile();
    let changes = only(&out);
    assert_eq!((changes.create.len(), changes.update.len(), changes.delete.len()), (1, 0, 1));
}

#[test]
fn reconcile_endpoint_slices_named_ports() {
    // 300 pods naming port `http` as one of 5 container ports: one slice
    // of 60 per target.
    let mut svc = service(&["IPv4"]);
    svc.spec.as_mut().unwrap().ports.as_mut().unwrap()[0].target_port = Some(IntOrString::String("http".into()));
    let pods: Vec<Pod> = (0..300)
        .map(|n| {
            let port = 8080 + (n % 5) as i32;
            pod_with(n, true, json!({"containers": [{"name": "c", "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"}]}]}))
        })
        .collect();
    let out = Fixture::new(svc, pods).reconcile();
    let changes = only(&out);
    assert_eq!(sizes(&changes.create), [60; 5]);
    let mut ports: Vec<i32> = changes.create.iter().map(|s| s.ports.as_ref().unwrap()[0].port.unwrap()).collect();
    ports.sort_unstable();
    assert_eq!(ports, [8080, 8081, 8082, 8083, 8084]);
}

#[test]
fn reconcile_max_endpoints_per_slice() {
    for (max, expected) in [(50, vec![50; 5]), (100, vec![100, 100, 50]), (1000, vec![250])] {
        let mut fixture = Fixture::new(service(&["IPv4"]), pods(250));
        fixture.max = max;
        assert_eq!(sizes(&only(&fixture.reconcile()).create), expected, "max {max}");
    }
}

#[test]
fn reconcile_endpoint_slices_metrics() {
    let mut fixture = Fixture::new(service(&["IPv4"]), pods(20));
    let out = fixture.reconcile_and_apply();
    assert_eq!((only(&out).added, only(&out).removed), (20, 0));
    fixture.pods.truncate(10);
    let out = fixture.reconcile_and_apply();
    assert_eq!((only(&out).added, only(&out).removed), (0, 10));
    assert_eq!(only(&out).efficiency, [Efficiency { endpoints: 10, slices: 1 }]);
}

#[test]
fn reconciler_pod_missing_node() {
    let mut orphan = pod(1, true);
    orphan.spec.node_name = Some("node-gone".into());
    let fixture = Fixture::new(service(&["IPv4"]), vec![orphan.clone()]);
    let out = fixture.reconcile();
    assert_eq!(out.skipped, ["skipping Pod pod1 for Service default/foo: Node node-gone Not Found"]);
    assert!(endpoints(&only(&out).create[0]).is_empty(), "the placeholder");
    let mut published = service(&["IPv4"]);
    published.spec.as_mut().unwrap().publish_not_ready_addresses = Some(true);
    let out = Fixture::new(published, vec![orphan]).reconcile();
    assert!(out.skipped.is_empty());
    let endpoint = &endpoints(&only(&out).create[0])[0];
    assert_eq!((endpoint.node_name.as_deref(), endpoint.zone.as_deref()), (Some("node-gone"), None));
}

#[test]
fn reconcile_address_type_removed() {
    // Dual stack to IPv4 only: the IPv6 slices go.
    let mut fixture = Fixture::new(service(&["IPv4", "IPv6"]), pods(3));
    fixture.reconcile_and_apply();
    assert_eq!(fixture.slices.len(), 2);
    fixture.service.spec.as_mut().unwrap().ip_families = Some(vec!["IPv4".into()]);
    let out = fixture.reconcile();
    assert_eq!(out.stale_address_types.iter().map(|s| s.address_type.as_str()).collect::<Vec<_>>(), ["IPv6"]);
    assert_eq!(only(&out).update.len() + only(&out).create.len(), 0);
}

#[test]
fn reconcile_traffic_distribution() {
    let mut svc = service(&["IPv4"]);
    svc.spec.as_mut().unwrap().traffic_distribution = Some("PreferSameNode".into());
    let mut fixture = Fixture::new(svc, pods(2));
    let out = fixture.reconcile_and_apply();
    assert_eq!(out.traffic_distribution, "PreferSameNode");
    let hints = endpoints(&only(&out).create[0])[0].hints.clone().unwrap();
    assert_eq!(hints.for_zones.unwrap()[0].name, "zone-a");
    assert_eq!(hints.for_nodes.unwrap()[0].name, "node-1");
    // The field removed: the hints go with a hint-only update.
    fixture.service.spec.as_mut().unwrap().traffic_distribution = None;
    let out = fixture.reconcile();
    assert_eq!(out.traffic_distribution, "");
    let changes = only(&out);
    assert_eq!(changes.update.len(), 1);
    assert!(endpoints(&changes.update[0]).iter().all(|e| e.hints.is_none()));
    // With the topology annotation, trafficDistribution is not in force.
    fixture.service.metadata.annotations =
        Some(BTreeMap::from([(ANNOTATION_TOPOLOGY_MODE.to_owned(), "Auto".to_owned())]));
    fixture.service.spec.as_mut().unwrap().traffic_distribution = Some("PreferClose".into());
    let out = fixture.reconcile();
    assert_eq!((out.topology, out.traffic_distribution.as_str()), ("Auto", ""));
}

#[test]
fn reconcile_sets_the_trigger_time_and_skips_creates_of_a_deleted_service() {
    let fixture = Fixture::new(service(&["IPv4"]), pods(1));
    let at = Timestamp::from_second(1_700_000_000).unwrap() + jiff::SignedDuration::from_millis(1500);
    let pods: Vec<&Pod> = fixture.pods.iter().collect();
    let lookup = |name: &str| fixture.nodes.iter().find(|n| &*n.metadata.name == name);
    let input = Input {
        service: &fixture.service,
        pods: &pods,
        slices: &[],
        node: &lookup,
        trigger_time: Some(at),
        max_endpoints_per_slice: 100,
    };
    let out = reconcile(&input, &mut TopologyCache::new());
    let annotations = only(&out).create[0].metadata.annotations.clone().unwrap();
    assert_eq!(annotations.get(LAST_CHANGE_TRIGGER_TIME).map(String::as_str), Some("2023-11-14T22:13:21.5Z"));
    let mut deleting = fixture.service.clone();
    deleting.metadata.deletion_timestamp = Some(Time(at));
    let input = Input { service: &deleting, ..input };
    assert!(only(&reconcile(&input, &mut TopologyCache::new())).create.is_empty());
}

#[test]
fn get_endpoint_slice_prefix() {
    assert_eq!(slice_name_prefix("foo"), "foo-");
    let long = "a".repeat(253);
    assert_eq!(slice_name_prefix(&long), long);
}

#[test]
fn get_slice_to_fill() {
    let slice = |n: usize| EndpointSlice { endpoints: Some(vec![Default::default(); n]), ..Default::default() };
    let (s90, s50, s30, s100) = (slice(90), slice(50), slice(30), slice(100));
    let cases: [(&str, Vec<&EndpointSlice>, usize, Option<usize>); 5] = [
        ("empty slices", vec![], 5, None),
        ("single slice with room", vec![&s50], 5, Some(0)),
        ("single full slice", vec![&s100], 5, None),
        ("closest to full", vec![&s90, &s50, &s30], 45, Some(1)),
        ("exact fit", vec![&s30, &s90], 10, Some(1)),
    ];
    for (name, slices, count, expected) in cases {
        assert_eq!(slice_to_fill(&slices, count, 100), expected, "{name}");
    }
}

#[test]
fn find_port_also_checks_sidecars() {
    let with_sidecar = pod_with(
        1,
        true,
        json!({"initContainers": [{"name": "proxy", "restartPolicy": "Always", "ports": [{"name": "proxy", "containerPort": 15001}]},
                                  {"name": "once", "ports": [{"name": "once", "containerPort": 1}]}]}),
    );
    let port = |target: &str, protocol: &str| ServicePort {
        port: 80,
        protocol: Some(protocol.into()),
        target_port: Some(IntOrString::String(target.into())),
        ..Default::default()
    };
    assert_eq!(find_port(&with_sidecar, &port("proxy", "TCP")), Some(15001));
    assert_eq!(find_port(&with_sidecar, &port("proxy", "UDP")), None, "the protocol must match");
    assert_eq!(find_port(&with_sidecar, &port("once", "TCP")), None, "not a sidecar");
}

#[test]
fn reconcile_topology_mode_auto() {
    // Two zones of equal CPU, one pod in each: each endpoint hinted for
    // its zone, and the hints announced; the annotation removed, the hints
    // go and that is announced too.
    let mut svc = service(&["IPv4"]);
    svc.metadata.annotations = Some(BTreeMap::from([(ANNOTATION_TOPOLOGY_MODE.to_owned(), "Auto".to_owned())]));
    let zoned = |name: &str, zone: &str| -> Node {
        serde_json::from_value(json!({"metadata": {"name": name, "labels": {LABEL_TOPOLOGY_ZONE: zone}},
            "status": {"allocatable": {"cpu": "2"}, "conditions": [{"type": "Ready", "status": "True"}]}}))
        .unwrap()
    };
    let nodes = [zoned("node-1", "zone-a"), zoned("node-2", "zone-b")];
    let mut second = pod(2, true);
    second.spec.node_name = Some("node-2".into());
    let pods = [pod(1, true), second];
    let pod_refs: Vec<&Pod> = pods.iter().collect();
    let lookup = |name: &str| nodes.iter().find(|n| &*n.metadata.name == name);
    let mut topology = TopologyCache::new();
    topology.set_nodes(&nodes);
    let input = Input {
        service: &svc,
        pods: &pod_refs,
        slices: &[],
        node: &lookup,
        trigger_time: None,
        max_endpoints_per_slice: 100,
    };
    let out = reconcile(&input, &mut topology);
    assert_eq!(out.topology, "Auto");
    let zones: Vec<String> = endpoints(&only(&out).create[0])
        .iter()
        .map(|e| e.hints.clone().unwrap().for_zones.unwrap()[0].name.clone())
        .collect();
    assert_eq!(zones, ["zone-a", "zone-b"]);
    assert_eq!(out.events.iter().map(|e| e.reason).collect::<Vec<_>>(), ["TopologyAwareHintsEnabled"]);

    let hinted_slice = only(&out).create[0].clone();
    let mut plain = svc.clone();
    plain.metadata.annotations = None;
    let slices = [&hinted_slice];
    let out = reconcile(&Input { service: &plain, slices: &slices, ..input }, &mut topology);
    assert_eq!(out.events, [HintEvent::disabled(hint_messages::TOPOLOGY_AWARE_HINTS_DISABLED, AddressType::IPv4)]);
    assert!(endpoints(&only(&out).update[0]).iter().all(|e| e.hints.is_none()));
}

#[test]
fn set_endpoint_slice_labels() {
    use super::slices::slice_labels;
    let svc_with = |labels: &[(&str, &str)], cluster_ip: &str| {
        let mut svc = service(&["IPv4"]);
        svc.metadata.labels = Some(labels.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect());
        svc.spec.as_mut().unwrap().cluster_ip = Some(cluster_ip.into());
        svc
    };
    let slice_with = |labels: &[(&str, &str)]| EndpointSlice {
        metadata: ObjectMeta {
            labels: Some(labels.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()),
            ..Default::default()
        },
        ..Default::default()
    };
    let reserved = [(LABEL_SERVICE_NAME, "foo"), (LABEL_MANAGED_BY, CONTROLLER_QUALIFIED_NAME)];
    // (case, slice labels, Service labels, ClusterIP, labels wanted, changed)
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, Vec<(&'a str, &'a str)>, &'a str, Vec<(&'a str, &'a str)>, bool);
    let cases: [Case<'_>; 5] = [
        ("Service without labels and empty endpoint slice", vec![], vec![], "1.1.1.1", reserved.to_vec(), false),
        (
            "Headless service with labels and empty endpoint slice",
            vec![],
            vec![("foo", "bar")],
            "None",
            vec![
                (LABEL_SERVICE_NAME, "foo"),
                (LABEL_MANAGED_BY, CONTROLLER_QUALIFIED_NAME),
                (LABEL_HEADLESS, ""),
                ("foo", "bar"),
            ],
            true,
        ),
        (
            "Service with labels and endpoint slice with same labels",
            vec![("foo", "bar"), (LABEL_SERVICE_NAME, "foo")],
            vec![("foo", "bar")],
            "1.1.1.1",
            [reserved.as_slice(), &[("foo", "bar")]].concat(),
            false,
        ),
        (
            "Service with reserved labels and endpoint slice without them",
            vec![],
            vec![(LABEL_SERVICE_NAME, "other"), (LABEL_MANAGED_BY, "someone"), (LABEL_HEADLESS, "")],
            "1.1.1.1",
            reserved.to_vec(),
            false,
        ),
        (
            "Service labels removed from the endpoint slice",
            vec![("foo", "bar"), ("team", "a")],
            vec![("foo", "bar")],
            "1.1.1.1",
            [reserved.as_slice(), &[("foo", "bar")]].concat(),
            true,
        ),
    ];
    for (name, slice, svc, ip, want, changed) in cases {
        let want: BTreeMap<String, String> = want.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        assert_eq!(slice_labels(&slice_with(&slice), &svc_with(&svc, ip)), (want, changed), "{name}");
    }
}

#[test]
fn service_controller_key() {
    let mut slice = EndpointSlice::default();
    assert_eq!(slice_service_key(&slice), None, "no service-name label");
    slice.metadata.namespace = Some("ns".into());
    slice.metadata.labels = Some(BTreeMap::from([(LABEL_SERVICE_NAME.to_owned(), "svc".to_owned())]));
    assert_eq!(slice_service_key(&slice).as_deref(), Some("ns/svc"));
}

#[test]
fn hints_enabled_cases() {
    use super::slices::{DEPRECATED_ANNOTATION_TOPOLOGY_AWARE_HINTS, hints_enabled};
    let with = |pairs: &[(&str, &str)]| {
        let mut svc = service(&["IPv4"]);
        svc.metadata.annotations = Some(pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect());
        svc
    };
    assert!(!hints_enabled(&with(&[])), "empty annotations");
    assert!(hints_enabled(&with(&[(DEPRECATED_ANNOTATION_TOPOLOGY_AWARE_HINTS, "Auto")])), "deprecated Auto");
    assert!(hints_enabled(&with(&[(ANNOTATION_TOPOLOGY_MODE, "auto")])), "topology-mode auto");
    assert!(!hints_enabled(&with(&[(ANNOTATION_TOPOLOGY_MODE, "Disabled")])), "topology-mode Disabled");
    assert!(
        !hints_enabled(&with(&[
            (DEPRECATED_ANNOTATION_TOPOLOGY_AWARE_HINTS, "disabled"),
            (ANNOTATION_TOPOLOGY_MODE, "Auto")
        ])),
        "the deprecated annotation wins"
    );
}

#[test]
fn get_address_types_for_service() {
    use super::endpoints::address_types_for_service;
    let with = |families: &[&str], cluster_ip: &str| {
        let mut svc = service(families);
        svc.spec.as_mut().unwrap().cluster_ip = Some(cluster_ip.into());
        if families.is_empty() {
            svc.spec.as_mut().unwrap().ip_families = None;
        }
        svc
    };
    assert_eq!(address_types_for_service(&with(&["IPv6", "IPv4"], "fd00::1")), [AddressType::IPv4, AddressType::IPv6]);
    assert_eq!(address_types_for_service(&with(&[], "10.0.0.1")), [AddressType::IPv4], "by the ClusterIP's family");
    assert_eq!(address_types_for_service(&with(&[], "fd00::1")), [AddressType::IPv6]);
    assert_eq!(address_types_for_service(&with(&[], "None")), [AddressType::IPv4, AddressType::IPv6], "headless: both");
}
