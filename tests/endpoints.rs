//! The endpoints controller end to end: the real `kcm-rs` binary against
//! kube-sim, driven with kubectl. A selector Service's Endpoints list its
//! ready pods under `addresses` and the others under `notReadyAddresses`
//! (all as ready with `publishNotReadyAddresses`), each on the pod port its
//! named `targetPort` names, labelled as upstream labels them; a Service
//! with no pod has an Endpoints without subsets; the Endpoints go with
//! their Service; a Service without a selector keeps the Endpoints its
//! owner wrote; a failed create is a `FailedToCreateEndpoint` event, then
//! retried. Every test waits on conditions, never on timings.

use k8s_openapi::api::core::v1::{EndpointSubset, Endpoints};
use kube::Api;
use kube_sim::testing::{kubectl_ok, kubectl_ok_with_stdin, wait_for};

use kube_sim::faults::{FaultRule, FaultSpec};

use crate::common::{Env, PATIENCE, events, on_both, start};

// === utils ===

/// Service `name` selecting `app: name` on port 80 to the pods' port
/// `http`, and pods `<name>-ready` (port `http` on 8080) and, unless
/// `only_ready`, `<name>-unready` (never Ready, port `http` on 9090).
fn manifest(name: &str, publish_not_ready: bool, only_ready: bool) -> String {
    let pod = |suffix: &str, port: u16, annotations: &str| {
        format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}-{suffix}\n  labels: {{app: {name}}}\n  \
             annotations: {{{annotations}}}\nspec:\n  containers:\n  - name: app\n    image: nginx\n    ports:\n    \
             - {{name: http, containerPort: {port}}}\n"
        )
    };
    let mut text = format!(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\n  labels: {{team: a}}\nspec:\n  selector: {{app: \
         {name}}}\n  publishNotReadyAddresses: {publish_not_ready}\n  ports:\n  - {{name: web, port: 80, targetPort: \
         http}}\n"
    );
    text.push_str(&pod("ready", 8080, ""));
    if !only_ready {
        text.push_str(&pod("unready", 9090, "kube-sim.io/ready: never"));
    }
    text
}

/// `(ip:port of each ready address, of each not-ready one)`, sorted.
fn addresses(subsets: &[EndpointSubset]) -> (Vec<String>, Vec<String>) {
    let mut ready = Vec::new();
    let mut not_ready = Vec::new();
    for subset in subsets {
        let ports: Vec<i32> = subset.ports.iter().flatten().map(|p| p.port).collect();
        for (list, out) in [(&subset.addresses, &mut ready), (&subset.not_ready_addresses, &mut not_ready)] {
            for address in list.iter().flatten() {
                let pod = address.target_ref.as_ref().and_then(|r| r.name.clone()).unwrap_or_default();
                out.extend(ports.iter().map(|p| format!("{pod}:{p}")));
            }
        }
    }
    ready.sort();
    not_ready.sort();
    (ready, not_ready)
}

/// The Endpoints `name`, once its addresses are `want` (as [`addresses`]
/// gives them).
async fn wait_for_addresses(env: &Env, name: &str, want: (&[&str], &[&str])) -> Endpoints {
    let endpoints: Api<Endpoints> = Api::namespaced(env.client.clone(), &env.ns);
    wait_for(&env.cluster, PATIENCE, &format!("{name}'s Endpoints to list {want:?}"), || async {
        let ep = endpoints.get_opt(name).await.map_err(|e| e.to_string())?.ok_or("no Endpoints")?;
        let got = addresses(ep.subsets.as_deref().unwrap_or_default());
        if got.0 == want.0 && got.1 == want.1 { Ok(ep) } else { Err(format!("addresses {got:?}")) }
    })
    .await
}

// === tests ===

on_both!(
    endpoints_list_ready_and_not_ready_pods_on_their_named_ports_and_go_with_the_service,
    a_service_without_ready_pods_and_one_publishing_not_ready_addresses,
    a_service_without_a_selector_keeps_the_endpoints_its_owner_wrote,
);

async fn endpoints_list_ready_and_not_ready_pods_on_their_named_ports_and_go_with_the_service() {
    let env = start().await;
    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], &manifest("web", false, false)).await;
    let ep = wait_for_addresses(&env, "web", (&["web-ready:8080"], &["web-unready:9090"])).await;
    let labels = ep.metadata.labels.unwrap_or_default();
    assert_eq!(labels.get("team").map(String::as_str), Some("a"), "the Service's labels: {labels:?}");
    assert_eq!(labels.get("endpoints.kubernetes.io/managed-by").map(String::as_str), Some("endpoint-controller"));
    let ports: Vec<_> = ep.subsets.iter().flatten().flat_map(|s| s.ports.iter().flatten()).collect();
    assert!(
        ports.iter().all(|p| p.name.as_deref() == Some("web") && p.protocol.as_deref() == Some("TCP")),
        "{ports:?}"
    );

    let listed = kubectl_ok(&env.kubeconfig, &["get", "endpoints", "web", "-o", "name"]).await;
    assert_eq!(listed.trim(), "endpoints/web");

    kubectl_ok(&env.kubeconfig, &["delete", "pod", "web-ready"]).await;
    wait_for_addresses(&env, "web", (&[], &["web-unready:9090"])).await;

    kubectl_ok(&env.kubeconfig, &["delete", "service", "web"]).await;
    let endpoints: Api<Endpoints> = Api::namespaced(env.client.clone(), &env.ns);
    wait_for(&env.cluster, PATIENCE, "web's Endpoints deleted with the Service", || async {
        match endpoints.get_opt("web").await.map_err(|e| e.to_string())? {
            Some(ep) => Err(format!("still there: {:?}", ep.subsets)),
            None => Ok(()),
        }
    })
    .await;
}

async fn a_service_without_ready_pods_and_one_publishing_not_ready_addresses() {
    let env = start().await;
    let lonely = "apiVersion: v1\nkind: Service\nmetadata:\n  name: lonely\nspec:\n  selector: {app: nobody}\n  \
                  ports:\n  - {port: 80}\n";
    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], lonely).await;
    let ep = wait_for_addresses(&env, "lonely", (&[], &[])).await;
    assert!(ep.subsets.unwrap_or_default().is_empty(), "no subsets for a Service without pods");

    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], &manifest("open", true, false)).await;
    wait_for_addresses(&env, "open", (&["open-ready:8080", "open-unready:9090"], &[])).await;
}

async fn a_service_without_a_selector_keeps_the_endpoints_its_owner_wrote() {
    let env = start().await;
    let custom = "apiVersion: v1\nkind: Service\nmetadata:\n  name: external\nspec:\n  ports:\n  - {port: 80}\n---\n\
                  apiVersion: v1\nkind: Endpoints\nmetadata:\n  name: external\nsubsets:\n- addresses: [{ip: \
                  10.9.9.9}]\n  ports: [{port: 8443}]\n";
    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], custom).await;
    let endpoints: Api<Endpoints> = Api::namespaced(env.client.clone(), &env.ns);
    let before = endpoints.get("external").await.expect("written");
    // A selector Service synced after it shows the controller has run.
    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], &manifest("after", false, true)).await;
    wait_for_addresses(&env, "after", (&["after-ready:8080"], &[])).await;
    let after = endpoints.get("external").await.expect("still there");
    assert_eq!(after.metadata.resource_version, before.metadata.resource_version, "left alone: {after:?}");
    assert_eq!(after.metadata.labels, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_create_is_an_event_and_is_retried() {
    let env = start().await;
    let failing = FaultRule {
        verb: Some("create".into()),
        resource: Some("endpoints".into()),
        error_rate: 1.0,
        ..FaultRule::default()
    };
    env.cluster.controls().set_faults(FaultSpec { rules: vec![failing] }).expect("faults set");
    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], &manifest("flaky", false, true)).await;
    let seen = wait_for(&env.cluster, PATIENCE, "a FailedToCreateEndpoint event", || async {
        let seen = events(&env, &env.ns, "flaky", "FailedToCreateEndpoint").await;
        if seen.is_empty() { Err("none yet".to_owned()) } else { Ok(seen) }
    })
    .await;
    let message = seen[0].message.clone().unwrap_or_default();
    assert!(message.starts_with("Failed to create endpoint for service default/flaky: "), "{message}");
    assert_eq!(seen[0].type_.as_deref(), Some("Warning"));
    assert_eq!(seen[0].involved_object.kind.as_deref(), Some("Endpoints"));
    env.cluster.controls().set_faults(FaultSpec::default()).expect("faults cleared");
    wait_for_addresses(&env, "flaky", (&["flaky-ready:8080"], &[])).await;
}
