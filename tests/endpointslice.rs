//! The EndpointSlice controller end to end: the real `kcm-rs` binary
//! against kube-sim, driven with kubectl as upstream's e2e
//! (`test/e2e/network/endpointslice.go`) drives a cluster. A Service
//! selecting pods gets slices listing them (labelled, owned by the
//! Service), kept up to date as pods become not ready or go, and removed
//! with the Service; a Service without pods keeps one empty placeholder;
//! a Service without a selector gets none; named target ports resolve per
//! pod, so pods naming different numbers land in different slices; several
//! ports share one slice; `service.kubernetes.io/topology-mode: Auto` and
//! `trafficDistribution` hint endpoints for their zones (and nodes).
//! Every test waits on conditions, never on timings.

use k8s_openapi::api::discovery::v1::{Endpoint, EndpointSlice};
use kube::Api;
use kube::api::ListParams;
use kube_sim::testing::{kubectl_ok, kubectl_ok_with_stdin, wait_for};

use crate::common::{Env, PATIENCE, events, on_both, start};

// === utils ===

/// `kubectl apply -f -` of `yaml`.
async fn apply(env: &Env, yaml: &str) {
    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], yaml).await;
}

/// A pod `name` labelled `app=<app>`, its container naming port `http` as
/// `port`.
fn pod(name: &str, app: &str, port: u16) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  labels:\n    app: {app}\nspec:\n  containers:\n  \
         - name: web\n    image: nginx\n    ports:\n    - name: http\n      containerPort: {port}\n---\n"
    )
}

/// The slices of Service `service` in `default` (by the label upstream's
/// e2e lists them with).
async fn slices(env: &Env, service: &str) -> Vec<EndpointSlice> {
    let api: Api<EndpointSlice> = Api::namespaced(env.client.clone(), &env.ns);
    let selector = format!("kubernetes.io/service-name={service}");
    api.list(&ListParams::default().labels(&selector)).await.expect("slices listed").items
}

/// What a Service's slices say: per slice, its ports and its endpoints as
/// (pod, ready), sorted.
type Summary = Vec<(Vec<(String, i32)>, Vec<(String, bool)>)>;

fn summary(slices: &[EndpointSlice]) -> Summary {
    let mut out: Summary = slices
        .iter()
        .map(|s| {
            let ports =
                s.ports.iter().flatten().map(|p| (p.name.clone().unwrap_or_default(), p.port.unwrap_or(0))).collect();
            let mut endpoints: Vec<(String, bool)> = s
                .endpoints
                .iter()
                .flatten()
                .map(|e| {
                    let pod = e.target_ref.as_ref().and_then(|t| t.name.clone()).unwrap_or_default();
                    (pod, e.conditions.as_ref().and_then(|c| c.ready) == Some(true))
                })
                .collect();
            endpoints.sort();
            (ports, endpoints)
        })
        .collect();
    out.sort();
    out
}

/// Waits until the slices of `service` say `want`.
async fn wait_for_slices(env: &Env, service: &str, want: Summary, what: &str) -> Vec<EndpointSlice> {
    wait_for(&env.cluster, PATIENCE, what, || async {
        let now = slices(env, service).await;
        if summary(&now) == want { Ok(now) } else { Err(format!("{:?}", summary(&now))) }
    })
    .await
}

fn endpoints(pods: &[(&str, bool)]) -> Vec<(String, bool)> {
    pods.iter().map(|(p, ready)| ((*p).to_owned(), *ready)).collect()
}

fn ports(ports: &[(&str, i32)]) -> Vec<(String, i32)> {
    ports.iter().map(|(n, p)| ((*n).to_owned(), *p)).collect()
}

// === tests ===

on_both!(
    slices_follow_the_pods_of_a_service_and_go_with_it,
    a_service_without_a_selector_gets_no_slices,
    named_ports_resolve_per_pod_into_slices_of_their_own,
    several_ports_share_one_slice,
    topology_mode_auto_hints_every_zone_and_says_so,
    traffic_distribution_prefer_same_node_hints_zone_and_node,
    a_headless_service_is_labelled_and_its_pods_keep_their_hostnames,
);

async fn slices_follow_the_pods_of_a_service_and_go_with_it() {
    let env = start().await;
    let service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  labels:\n    team: shop\nspec:\n  \
                   selector:\n    app: web\n  ports:\n  - name: http\n    port: 80\n    targetPort: 8080\n";
    apply(&env, service).await;
    // No pods yet: one placeholder slice, no ports, no endpoints.
    wait_for_slices(&env, "web", vec![(vec![], vec![])], "the placeholder slice").await;

    apply(&env, &format!("{}{}", pod("web-1", "web", 8080), pod("web-2", "web", 8080))).await;
    let http = ports(&[("http", 8080)]);
    let both = endpoints(&[("web-1", true), ("web-2", true)]);
    let listed = wait_for_slices(&env, "web", vec![(http.clone(), both)], "both pods, ready").await;
    let slice = &listed[0];
    let labels = slice.metadata.labels.clone().unwrap_or_default();
    assert_eq!(
        labels.get("endpointslice.kubernetes.io/managed-by").map(String::as_str),
        Some("endpointslice-controller.k8s.io")
    );
    assert_eq!(labels.get("team").map(String::as_str), Some("shop"), "the Service's labels copied");
    assert!(!labels.contains_key("service.kubernetes.io/headless"), "web has a ClusterIP: {labels:?}");
    assert_eq!(slice.address_type, "IPv4");
    let owner = slice.metadata.owner_references.clone().unwrap_or_default();
    assert_eq!(
        owner.iter().map(|o| (o.kind.as_str(), o.name.as_str(), o.controller)).collect::<Vec<_>>(),
        [("Service", "web", Some(true))]
    );
    let addresses: Vec<String> = slice.endpoints.iter().flatten().flat_map(|e| e.addresses.clone()).collect();
    assert!(addresses.iter().all(|a| a.starts_with("10.244.")), "the pods' IPs: {addresses:?}");
    let table = kubectl_ok(&env.kubeconfig, &["get", "endpointslices", "-l", "kubernetes.io/service-name=web"]).await;
    assert!(table.contains("IPv4") && table.contains("8080"), "{table}");

    // A pod whose readiness probe fails is listed, not ready.
    let not_ready = r#"{"status": {"conditions": [{"type": "Ready", "status": "False"}],
        "containerStatuses": [{"name": "web", "ready": false, "restartCount": 0, "image": "nginx", "imageID": "",
        "state": {"running": {}}}]}}"#;
    kubectl_ok(&env.kubeconfig, &["patch", "pod", "web-2", "--subresource=status", "--type=merge", "-p", not_ready])
        .await;
    let one_ready = endpoints(&[("web-1", true), ("web-2", false)]);
    wait_for_slices(&env, "web", vec![(http.clone(), one_ready)], "web-2 not ready").await;

    kubectl_ok(&env.kubeconfig, &["delete", "pod", "web-1", "--wait=false"]).await;
    wait_for_slices(&env, "web", vec![(http, endpoints(&[("web-2", false)]))], "web-1 gone").await;

    kubectl_ok(&env.kubeconfig, &["delete", "service", "web"]).await;
    wait_for_slices(&env, "web", vec![], "the slices deleted with their Service").await;

    let (_, metrics) = env.scrape("/metrics").await;
    for line in [
        "endpoint_slice_controller_syncs{result=\"success\"}",
        "endpoint_slice_controller_changes_total{operation=\"create\"}",
        "endpoint_slice_controller_changes_total{operation=\"update\"}",
        "endpoint_slice_controller_endpoints_added_per_sync_bucket",
        "workqueue_adds_total{name=\"endpoint_slice\"}",
    ] {
        assert!(metrics.contains(line), "{line} not in:\n{metrics}");
    }
}

async fn a_service_without_a_selector_gets_no_slices() {
    let env = start().await;
    let manual = "apiVersion: v1\nkind: Service\nmetadata:\n  name: manual\nspec:\n  ports:\n  - port: 80\n";
    apply(&env, manual).await;
    apply(&env, &pod("lonely", "manual", 8080)).await;
    // A Service queued after it: once it has its slice, the first was synced too.
    let selected = "apiVersion: v1\nkind: Service\nmetadata:\n  name: selected\nspec:\n  selector:\n    app: \
                    selected\n  ports:\n  - port: 80\n";
    apply(&env, selected).await;
    wait_for_slices(&env, "selected", vec![(vec![], vec![])], "the other Service's placeholder").await;
    assert!(slices(&env, "manual").await.is_empty(), "a Service without a selector gets no EndpointSlice");
}

async fn named_ports_resolve_per_pod_into_slices_of_their_own() {
    let env = start().await;
    let service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: named\nspec:\n  selector:\n    app: named\n  \
                   ports:\n  - name: http\n    port: 80\n    targetPort: http\n";
    apply(&env, service).await;
    apply(&env, &format!("{}{}", pod("named-a", "named", 8080), pod("named-b", "named", 8090))).await;
    wait_for_slices(
        &env,
        "named",
        vec![
            (ports(&[("http", 8080)]), endpoints(&[("named-a", true)])),
            (ports(&[("http", 8090)]), endpoints(&[("named-b", true)])),
        ],
        "one slice per resolved port",
    )
    .await;
}

async fn several_ports_share_one_slice() {
    let env = start().await;
    let service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: multi\nspec:\n  selector:\n    app: multi\n  \
                   ports:\n  - name: http\n    port: 80\n    targetPort: 8080\n  - name: metrics\n    port: 9090\n    \
                   targetPort: 9091\n";
    apply(&env, service).await;
    apply(&env, &format!("{}{}", pod("multi-1", "multi", 8080), pod("multi-2", "multi", 8080))).await;
    let mut both = ports(&[("http", 8080), ("metrics", 9091)]);
    both.sort();
    wait_for_slices(
        &env,
        "multi",
        vec![(both, endpoints(&[("multi-1", true), ("multi-2", true)]))],
        "one slice, two ports",
    )
    .await;
}

/// Waits until every endpoint of `service`'s slices (there being
/// `count`) is hinted as `hints` says of it (zone, node), and gives them.
async fn wait_for_hints(
    env: &Env,
    service: &str,
    count: usize,
    hints: impl Fn(&Endpoint) -> (Vec<String>, Vec<String>),
) {
    wait_for(&env.cluster, PATIENCE, &format!("{service}'s endpoints hinted"), || async {
        let all: Vec<Endpoint> =
            slices(env, service).await.into_iter().flat_map(|s| s.endpoints.unwrap_or_default()).collect();
        let seen: Vec<_> = all
            .iter()
            .map(|e| {
                let h = e.hints.clone().unwrap_or_default();
                let zones = h.for_zones.unwrap_or_default().into_iter().map(|z| z.name).collect::<Vec<_>>();
                let nodes = h.for_nodes.unwrap_or_default().into_iter().map(|n| n.name).collect::<Vec<_>>();
                (zones, nodes)
            })
            .collect();
        let want: Vec<_> = all.iter().map(&hints).collect();
        if all.len() == count && seen == want { Ok(()) } else { Err(format!("hints {seen:?}, want {want:?}")) }
    })
    .await;
}

fn own_zone(e: &Endpoint) -> Vec<String> {
    e.zone.clone().into_iter().collect()
}

async fn topology_mode_auto_hints_every_zone_and_says_so() {
    // kube-sim's three nodes are in zone-a, zone-b and zone-c, 8 CPUs each;
    // the scheduler spreads three pods over them: one endpoint per zone,
    // each hinted for its own.
    let env = start().await;
    let service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: auto\n  annotations:\n    \
                   service.kubernetes.io/topology-mode: Auto\nspec:\n  selector:\n    app: auto\n  ports:\n  - port: \
                   80\n";
    apply(&env, service).await;
    apply(&env, &(1..=3).map(|i| pod(&format!("auto-{i}"), "auto", 8080)).collect::<String>()).await;
    wait_for_hints(&env, "auto", 3, |e| (own_zone(e), vec![])).await;
    wait_for(&env.cluster, PATIENCE, "TopologyAwareHintsEnabled on the Service", || async {
        let events = events(&env, &env.ns, "auto", "TopologyAwareHintsEnabled").await;
        let messages: Vec<String> = events.iter().filter_map(|e| e.message.clone()).collect();
        if messages == ["Topology Aware Hints has been enabled, addressType: IPv4"] {
            Ok(())
        } else {
            Err(format!("{messages:?}"))
        }
    })
    .await;

    // The annotation removed: the hints go, and that is said too.
    kubectl_ok(&env.kubeconfig, &["annotate", "service", "auto", "service.kubernetes.io/topology-mode-"]).await;
    wait_for_hints(&env, "auto", 3, |_| (vec![], vec![])).await;
    wait_for(&env.cluster, PATIENCE, "TopologyAwareHintsDisabled on the Service", || async {
        let events = events(&env, &env.ns, "auto", "TopologyAwareHintsDisabled").await;
        if events.is_empty() { Err("none yet".to_owned()) } else { Ok(()) }
    })
    .await;
}

async fn traffic_distribution_prefer_same_node_hints_zone_and_node() {
    let env = start().await;
    let service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: local\nspec:\n  trafficDistribution: \
                   PreferSameNode\n  selector:\n    app: local\n  ports:\n  - port: 80\n";
    apply(&env, service).await;
    apply(&env, &format!("{}{}", pod("local-1", "local", 8080), pod("local-2", "local", 8080))).await;
    wait_for_hints(&env, "local", 2, |e| (own_zone(e), e.node_name.clone().into_iter().collect())).await;
    let (_, metrics) = env.scrape("/metrics").await;
    let line =
        "endpoint_slice_controller_services_count_by_traffic_distribution{traffic_distribution=\"PreferSameNode\"} 1";
    assert!(metrics.contains(line), "{line} not in:\n{metrics}");
}

async fn a_headless_service_is_labelled_and_its_pods_keep_their_hostnames() {
    // upstream's "should create Endpoints and EndpointSlices for Pods
    // matching a Service" with a StatefulSet-style headless Service: the
    // pod whose subdomain is the Service gets its hostname.
    let env = start().await;
    let service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: db\nspec:\n  clusterIP: None\n  selector:\n    \
                   app: db\n  ports:\n  - port: 5432\n";
    apply(&env, service).await;
    let hostnamed = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: db-0\n  labels:\n    app: db\nspec:\n  hostname: \
                     db-0\n  subdomain: db\n  containers:\n  - name: db\n    image: postgres\n";
    apply(&env, hostnamed).await;
    let listed =
        wait_for_slices(&env, "db", vec![(ports(&[("", 5432)]), endpoints(&[("db-0", true)]))], "db-0 listed").await;
    let labels = listed[0].metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels.get("service.kubernetes.io/headless").map(String::as_str), Some(""), "{labels:?}");
    let endpoint = &listed[0].endpoints.as_ref().expect("endpoints")[0];
    assert_eq!(endpoint.hostname.as_deref(), Some("db-0"));
    assert!(endpoint.zone.as_deref().is_some_and(|z| z.starts_with("zone-")), "the node's zone: {endpoint:?}");
}
