//! Upstream's `topologycache_test.go`: `TestAddHints` and `TestSetNodes`
//! cases by name, and the overload check after a node change.

use k8s_openapi::api::discovery::v1::{Endpoint, EndpointConditions};
use serde_json::json;

use super::*;
use crate::endpointslice::slices::endpoints;
use crate::testing::ipv4_slice as slice;

// === utils ===

fn endpoint(zone: Option<&str>, ready: Option<bool>) -> Endpoint {
    Endpoint {
        addresses: vec!["10.1.2.3".into()],
        zone: zone.map(Into::into),
        conditions: Some(EndpointConditions { ready, ..Default::default() }),
        ..Default::default()
    }
}

/// A cache whose zones have these CPU shares (nodes of that many millicores).
fn cache(zones: &[(&str, i64)]) -> TopologyCache {
    let nodes: Vec<Node> = zones.iter().map(|(zone, cpu)| node(zone, &format!("{cpu}m"), true, false)).collect();
    let mut cache = TopologyCache::new();
    cache.set_nodes(&nodes);
    cache
}

fn node(zone: &str, cpu: &str, ready: bool, control_plane: bool) -> Node {
    let mut labels = json!({});
    if !zone.is_empty() {
        labels[LABEL_TOPOLOGY_ZONE] = json!(zone);
    }
    if control_plane {
        labels["node-role.kubernetes.io/control-plane"] = json!("");
    }
    serde_json::from_value(json!({
        "metadata": {"name": format!("node-{zone}-{cpu}"), "labels": labels},
        "status": {"allocatable": {"cpu": cpu}, "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]},
    }))
    .unwrap()
}

/// The zone each endpoint is hinted for.
fn hinted(slices: &[EndpointSlice]) -> Vec<Option<String>> {
    slices
        .iter()
        .flat_map(|s| endpoints(s).iter())
        .map(|e| e.hints.as_ref().and_then(|h| h.for_zones.as_ref()).map(|z| z[0].name.clone()))
        .collect()
}

// === tests ===

#[test]
fn add_hints_slice_to_create_no_zone_ratios() {
    let mut cache = TopologyCache::new();
    let mut create = vec![slice("", vec![endpoint(Some("zone-a"), Some(true))])];
    let events = cache.add_hints("ns/svc", AddressType::IPv4, &mut create, &mut vec![], &[]);
    assert_eq!(hinted(&create), [None]);
    assert_eq!(
        events,
        [HintEvent::disabled(messages::INSUFFICIENT_NODE_INFO, AddressType::IPv4)],
        "Insufficient Node information: allocatable CPU or zone not specified on one or more nodes, addressType: IPv4"
    );
}

#[test]
fn add_hints_slice_to_create_with_2_endpoints_zone_ratios_require_3() {
    let mut cache = cache(&[("zone-a", 1000), ("zone-b", 1000), ("zone-c", 1000)]);
    let mut create = vec![slice("", vec![endpoint(Some("zone-a"), Some(true)), endpoint(Some("zone-b"), Some(true))])];
    let events = cache.add_hints("ns/svc", AddressType::IPv4, &mut create, &mut vec![], &[]);
    assert_eq!(hinted(&create), [None, None]);
    assert_eq!(events[0].message, "Insufficient number of endpoints (2 endpoints, 3 zones), addressType: IPv4");
}

#[test]
fn add_hints_slice_to_create_with_2_endpoints_zone_ratios_only_require_2() {
    let mut cache = cache(&[("zone-a", 1000), ("zone-b", 1000)]);
    let mut create = vec![slice("", vec![endpoint(Some("zone-a"), Some(true)), endpoint(Some("zone-b"), Some(true))])];
    let events = cache.add_hints("ns/svc", AddressType::IPv4, &mut create, &mut vec![], &[]);
    assert_eq!(hinted(&create), [Some("zone-a".into()), Some("zone-b".into())]);
    assert_eq!(
        events,
        [HintEvent {
            warning: false,
            reason: "TopologyAwareHintsEnabled",
            message: "Topology Aware Hints has been enabled, addressType: IPv4".into()
        }]
    );
    assert!(cache.has_populated_hints("ns/svc"));
    let again = cache.add_hints("ns/svc", AddressType::IPv4, &mut create, &mut vec![], &[]);
    assert!(again.is_empty(), "enabled once");
}

#[test]
fn add_hints_slice_to_create_with_2_ready_1_unready_1_unknown_endpoints_zone_ratios_only_require_2() {
    let mut cache = cache(&[("zone-a", 1000), ("zone-b", 1000)]);
    let eps = vec![
        endpoint(Some("zone-a"), Some(true)),
        endpoint(Some("zone-a"), None),
        endpoint(Some("zone-a"), Some(false)),
        endpoint(Some("zone-b"), Some(true)),
    ];
    let mut create = vec![slice("", eps)];
    cache.add_hints("ns/svc", AddressType::IPv4, &mut create, &mut vec![], &[]);
    assert_eq!(hinted(&create), [Some("zone-a".into()), None, None, Some("zone-b".into())]);
}

#[test]
fn add_hints_slices_to_create_redistributed_to_another_zone() {
    // Four ready endpoints in zone-a, zones of equal CPU: two of them are
    // hinted for zone-b.
    let mut cache = cache(&[("zone-a", 1000), ("zone-b", 1000)]);
    let mut create = vec![slice("", (0..4).map(|_| endpoint(Some("zone-a"), Some(true))).collect())];
    cache.add_hints("ns/svc", AddressType::IPv4, &mut create, &mut vec![], &[]);
    let zones = hinted(&create);
    assert_eq!(zones.iter().filter(|z| z.as_deref() == Some("zone-b")).count(), 2, "{zones:?}");
}

#[test]
fn add_hints_unchanged_slice_with_valid_hints_left_alone_and_invalid_ones_updated() {
    let mut cache = cache(&[("zone-a", 1000), ("zone-b", 1000)]);
    let mut good = slice("good", vec![endpoint(Some("zone-a"), Some(true)), endpoint(Some("zone-b"), Some(true))]);
    cache.add_hints("ns/svc", AddressType::IPv4, std::slice::from_mut(&mut good), &mut vec![], &[]);
    let bare = slice("bare", vec![endpoint(Some("zone-a"), Some(true)), endpoint(Some("zone-b"), Some(true))]);
    let mut update = vec![];
    cache.add_hints("ns/svc", AddressType::IPv4, &mut [], &mut update, &[&good, &bare]);
    assert_eq!(update.iter().map(|s| s.metadata.name.clone().unwrap()).collect::<Vec<_>>(), ["bare"]);
    assert_eq!(hinted(&update), [Some("zone-a".into()), Some("zone-b".into())]);
}

#[test]
fn add_hints_endpoint_without_zone_disables_hints() {
    let mut cache = cache(&[("zone-a", 1000), ("zone-b", 1000)]);
    let mut create = vec![slice("", vec![endpoint(Some("zone-a"), Some(true)), endpoint(None, Some(true))])];
    let events = cache.add_hints("ns/svc", AddressType::IPv6, &mut create, &mut vec![], &[]);
    assert_eq!(events[0].message, "One or more endpoints do not have a zone specified, addressType: IPv6");
    assert_eq!(hinted(&create), [None, None]);
}

#[test]
fn set_nodes() {
    // (name, nodes, the zones' CPU shares)
    type Case<'a> = (&'a str, Vec<Node>, Option<Vec<(&'a str, f64)>>);
    let cases: [Case<'_>; 5] = [
        ("empty", vec![], None),
        ("single node", vec![node("zone-a", "1", true, false)], None),
        (
            "nodes in three zones",
            vec![node("zone-a", "1", true, false), node("zone-b", "2", true, false), node("zone-c", "1", true, false)],
            Some(vec![("zone-a", 0.25), ("zone-b", 0.5), ("zone-c", 0.25)]),
        ),
        (
            "not ready and control-plane nodes left out",
            vec![
                node("zone-a", "1", true, false),
                node("zone-a", "8", false, false),
                node("zone-b", "1", true, false),
                node("zone-c", "8", true, true),
            ],
            Some(vec![("zone-a", 0.5), ("zone-b", 0.5)]),
        ),
        (
            "a node without a zone",
            vec![node("zone-a", "1", true, false), node("zone-b", "1", true, false), node("", "1", true, false)],
            None,
        ),
    ];
    for (name, nodes, want) in cases {
        let mut cache = TopologyCache::new();
        cache.set_nodes(&nodes);
        let want = want.map(|w| w.into_iter().map(|(z, r)| (z.to_owned(), r)).collect::<BTreeMap<_, _>>());
        assert_eq!(cache.cpu_ratios_by_zone, want, "{name}");
    }
}

#[test]
fn get_overloaded_services_after_a_node_change() {
    let mut cache = cache(&[("zone-a", 1000), ("zone-b", 1000)]);
    let mut create = vec![slice("", vec![endpoint(Some("zone-a"), Some(true)), endpoint(Some("zone-b"), Some(true))])];
    cache.add_hints("ns/svc", AddressType::IPv4, &mut create, &mut vec![], &[]);
    assert!(cache.overloaded_services().is_empty());
    cache.set_nodes(&[node("zone-a", "3", true, false), node("zone-b", "1", true, false)]);
    assert_eq!(cache.overloaded_services(), ["ns/svc"], "zone-a now needs ⌈2 × 0.75 / 1.2⌉ = 2");
    cache.remove_hints("ns/svc", AddressType::IPv4);
    assert!(cache.overloaded_services().is_empty() && !cache.has_populated_hints("ns/svc"));
}
