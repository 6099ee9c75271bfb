//! Service cluster IPs as clients see them: allocated on create from the
//! service range, requested ones honoured or refused, none for headless
//! and ExternalName services, released on delete and on a change to
//! ExternalName, immutable on update; and through kubectl.

use std::net::IpAddr;

use kube_sim::SimConfig;
use kube_sim::api::ApiConfig;
use kube_sim::testing::{kubeconfig, kubectl_ok, kubectl_ok_with_stdin, kubectl_with_stdin};
use serde_json::{Value, json};

use super::util::{self, Answer, call, create, get};

// === utils ===

const SERVICES: &str = "/api/v1/namespaces/default/services";

fn service(name: &str, spec: Value) -> Value {
    let mut spec = spec;
    spec["ports"] = json!([{"port": 80}]);
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec})
}

fn path(name: &str) -> String {
    format!("{SERVICES}/{name}")
}

/// The 422's message, asserting it is one.
fn invalid(answer: &Answer) -> String {
    assert_eq!(answer.code(), 422, "{}", answer.body);
    let status = answer.json();
    assert_eq!(status["reason"], "Invalid", "{status}");
    status["message"].as_str().unwrap_or("").to_owned()
}

fn cluster_ip(service: &Value) -> IpAddr {
    service["spec"]["clusterIP"].as_str().and_then(|ip| ip.parse().ok()).unwrap_or_else(|| panic!("no IP: {service}"))
}

// === tests ===

#[tokio::test]
async fn services_get_cluster_ips_from_the_service_range() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let mut seen = Vec::new();
    for (name, service_type) in [("a", "ClusterIP"), ("b", "NodePort"), ("c", "LoadBalancer")] {
        let created = create(&client, SERVICES, &service(name, json!({"type": service_type}))).await;
        let ip = cluster_ip(&created);
        assert!(matches!(ip, IpAddr::V4(v4) if v4.octets()[0] == 10 && (96..112).contains(&v4.octets()[1])), "{ip}");
        assert_eq!(created["spec"]["clusterIPs"], json!([ip.to_string()]));
        assert_eq!(created["spec"]["ipFamilies"], json!(["IPv4"]));
        assert_eq!(created["spec"]["ipFamilyPolicy"], "SingleStack");
        assert!(!seen.contains(&ip), "{ip} handed out twice");
        seen.push(ip);
    }
    let headless =
        create(&client, SERVICES, &service("h", json!({"clusterIP": "None", "selector": {"app": "h"}}))).await;
    assert_eq!(headless["spec"]["clusterIPs"], json!(["None"]));
    let external = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x"},
        "spec": {"type": "ExternalName", "externalName": "db.example.com"}});
    let external = create(&client, SERVICES, &external).await;
    assert_eq!(external["spec"].get("clusterIP"), None);
    assert_eq!(external["spec"].get("ipFamilies"), None);
    // A dry run allocates nothing: the IP it showed is still free.
    let dry = call(&client, "POST", &format!("{SERVICES}?dryRun=All"), &[], Some(&service("d", json!({})))).await;
    assert_eq!(dry.code(), 201, "{}", dry.body);
    let shown = cluster_ip(&dry.json()).to_string();
    create(&client, SERVICES, &service("d", json!({"clusterIP": shown}))).await;
}

#[tokio::test]
async fn requested_ips_are_honoured_refused_when_taken_or_outside_and_released_on_delete() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let dns = create(&client, SERVICES, &service("dns", json!({"clusterIP": "10.96.0.10"}))).await;
    assert_eq!(dns["spec"]["clusterIPs"], json!(["10.96.0.10"]));
    let taken = call(&client, "POST", SERVICES, &[], Some(&service("dns2", json!({"clusterIP": "10.96.0.10"})))).await;
    assert_eq!(
        invalid(&taken),
        "Service \"dns2\" is invalid: spec.clusterIPs: Invalid value: []string{\"10.96.0.10\"}: \
         failed to allocate IP 10.96.0.10: provided IP is already allocated"
    );
    let outside = call(&client, "POST", SERVICES, &[], Some(&service("o", json!({"clusterIP": "192.168.0.1"})))).await;
    assert_eq!(
        invalid(&outside),
        "Service \"o\" is invalid: spec.clusterIPs: Invalid value: []string{\"192.168.0.1\"}: \
         failed to allocate IP 192.168.0.1: the provided network does not match the current range"
    );
    let broadcast =
        call(&client, "POST", SERVICES, &[], Some(&service("b", json!({"clusterIP": "10.111.255.255"})))).await;
    assert!(invalid(&broadcast).ends_with(
        "failed to allocate IP 10.111.255.255: the provided IP (10.111.255.255) is not in the valid range. \
         The range of valid IPs is 10.96.0.0/12"
    ));
    let v6 = call(&client, "POST", SERVICES, &[], Some(&service("v6", json!({"ipFamilies": ["IPv6"]})))).await;
    assert_eq!(
        invalid(&v6),
        "Service \"v6\" is invalid: spec.ipFamilies[0]: Invalid value: \"IPv6\": not configured on this cluster"
    );

    assert_eq!(call(&client, "DELETE", &path("dns"), &[], None).await.code(), 200);
    let again = create(&client, SERVICES, &service("dns2", json!({"clusterIP": "10.96.0.10"}))).await;
    assert_eq!(again["spec"]["clusterIP"], "10.96.0.10");
}

#[tokio::test]
async fn cluster_ips_are_immutable_kept_by_writes_that_omit_them_and_released_by_external_name() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let created = create(&client, SERVICES, &service("web", json!({"clusterIP": "10.96.0.20"}))).await;
    let rv = created["metadata"]["resourceVersion"].clone();

    // A PUT without the IPs keeps them (patchAllocatedValues).
    let mut put = service("web", json!({"selector": {"app": "web"}}));
    put["metadata"]["resourceVersion"] = rv;
    let kept = call(&client, "PUT", &path("web"), &[], Some(&put)).await;
    assert_eq!(kept.code(), 200, "{}", kept.body);
    assert_eq!(kept.json()["spec"]["clusterIPs"], json!(["10.96.0.20"]));

    let merge = [("content-type", "application/merge-patch+json")];
    let moved = call(&client, "PATCH", &path("web"), &merge, Some(&json!({"spec": {"clusterIP": "10.96.0.21"}}))).await;
    assert_eq!(
        invalid(&moved),
        "Service \"web\" is invalid: spec.clusterIPs[0]: Invalid value: []string{\"10.96.0.21\"}: may not change once set"
    );

    // To ExternalName: the IPs go, and are free again.
    let external = json!({"spec": {"type": "ExternalName", "externalName": "db.example.com"}});
    let changed = call(&client, "PATCH", &path("web"), &merge, Some(&external)).await;
    assert_eq!(changed.code(), 200, "{}", changed.body);
    let spec = &changed.json()["spec"];
    for gone in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy", "internalTrafficPolicy"] {
        assert_eq!(spec.get(gone), None, "{gone}: {spec}");
    }
    create(&client, SERVICES, &service("other", json!({"clusterIP": "10.96.0.20"}))).await;

    // And back: a new IP.
    let back = json!({"spec": {"type": "ClusterIP", "externalName": null}});
    let back = call(&client, "PATCH", &path("web"), &merge, Some(&back)).await;
    assert_eq!(back.code(), 200, "{}", back.body);
    assert_ne!(cluster_ip(&back.json()).to_string(), "10.96.0.20");
    assert_eq!(get(&client, &path("web")).await.json()["spec"]["ipFamilies"], json!(["IPv4"]));
}

#[tokio::test]
async fn the_service_range_is_configurable() {
    let config = SimConfig {
        api: ApiConfig {
            service_cluster_ip_range: "fd00:10:96::/112".parse().expect("a range"),
            ..ApiConfig::default()
        },
        ..SimConfig::default()
    };
    let sim = util::start_with(config).await;
    let client = sim.client().expect("client");
    let created = create(&client, SERVICES, &service("web", json!({}))).await;
    let ip = cluster_ip(&created);
    assert!(ip.to_string().starts_with("fd00:10:96::"), "{ip}");
    assert_eq!(created["spec"]["ipFamilies"], json!(["IPv6"]));
}

#[tokio::test]
async fn kubectl_shows_the_cluster_ip_and_the_refusal() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    kubectl_ok(&config, &["create", "service", "clusterip", "web", "--tcp=80:8080"]).await;
    let out = kubectl_ok(&config, &["get", "service", "web", "-o", "jsonpath={.spec.clusterIP}"]).await;
    let ip: IpAddr = out.trim().parse().unwrap_or_else(|_| panic!("no cluster IP: {out}"));
    let rows = kubectl_ok(&config, &["get", "service", "web"]).await;
    assert!(rows.contains(&ip.to_string()), "{rows}");

    let yaml = format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{name: copy}}\nspec:\n  clusterIP: {ip}\n  ports: [{{port: 80}}]\n"
    );
    let out = kubectl_with_stdin(&config, &["create", "-f", "-"], Some(&yaml)).await;
    assert!(
        !out.ok
            && out.stderr.contains(&format!(
                "The Service \"copy\" is invalid: spec.clusterIPs: Invalid value: []string{{\"{ip}\"}}: \
                 failed to allocate IP {ip}: provided IP is already allocated"
            )),
        "{}",
        out.stderr
    );
    // Re-applying a manifest without the IP keeps the allocated one.
    let manifest = "apiVersion: v1\nkind: Service\nmetadata: {name: app}\nspec:\n  ports: [{port: 80}]\n";
    kubectl_ok_with_stdin(&config, &["apply", "-f", "-"], manifest).await;
    let first = kubectl_ok(&config, &["get", "service", "app", "-o", "jsonpath={.spec.clusterIP}"]).await;
    let labelled = manifest.replace("{name: app}", "{name: app, labels: {tier: web}}");
    kubectl_ok_with_stdin(&config, &["apply", "-f", "-"], &labelled).await;
    let second = kubectl_ok(&config, &["get", "service", "app", "-o", "jsonpath={.spec.clusterIP}"]).await;
    assert_eq!(first, second);
}
