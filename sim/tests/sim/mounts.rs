//! The kubelet stand-in's volume mounts: a pod whose ConfigMap, Secret or
//! projected source is missing stays `ContainerCreating` with the
//! kubelet's `FailedMount` event, and starts once the object exists.

use kube_sim::Sim;
use kube_sim::testing::wait_for;
use serde_json::{Value, json};

use super::util::{self, PATIENCE, create, get};

fn pod(name: &str, volumes: Value) -> Value {
    let mounts: Vec<Value> = volumes
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| json!({"name": v["name"], "mountPath": format!("/mnt/{}", v["name"].as_str().unwrap_or(""))}))
        .collect();
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": [{"name": "app", "image": "nginx", "volumeMounts": mounts}], "volumes": volumes}})
}

/// The pod's phase and its first container's waiting reason.
async fn state(client: &kube::Client, ns: &str, name: &str) -> (String, String) {
    let pod = get(client, &format!("/api/v1/namespaces/{ns}/pods/{name}")).await.json();
    let text = |p: &str| pod.pointer(p).and_then(Value::as_str).unwrap_or("").to_owned();
    (text("/status/phase"), text("/status/containerStatuses/0/state/waiting/reason"))
}

/// Waits for the FailedMount event about `pod`.
async fn failed_mount(sim: &Sim, ns: &str, pod: &str) -> Value {
    util::wait_event(sim, ns, pod, "FailedMount", |_| true).await
}

#[tokio::test]
async fn a_pod_waits_in_container_creating_for_its_config_map_then_starts() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let volumes = json!([{"name": "config", "configMap": {"name": "app"}}]);
    create(&client, "/api/v1/namespaces/default/pods", &pod("web", volumes)).await;
    let event = failed_mount(&sim, "default", "web").await;
    assert_eq!(event["message"], "MountVolume.SetUp failed for volume \"config\" : configmap \"app\" not found");
    assert_eq!(event["type"], "Warning");
    assert_eq!(event["source"]["component"], "kubelet");
    assert_eq!(state(&client, "default", "web").await, ("Pending".to_owned(), "ContainerCreating".to_owned()));

    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app"}, "data": {"k": "v"}});
    create(&client, "/api/v1/namespaces/default/configmaps", &cm).await;
    util::wait_running(&sim, "default", "web").await;
}

#[tokio::test]
async fn secrets_and_projected_sources_are_waited_for_unless_optional() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let optional = json!([
        {"name": "maybe", "secret": {"secretName": "absent", "optional": true}},
        {"name": "bundle", "projected": {"sources": [{"configMap": {"name": "absent", "optional": true}}]}},
    ]);
    create(&client, "/api/v1/namespaces/default/pods", &pod("relaxed", optional)).await;
    let needed = json!([
        {"name": "creds", "secret": {"secretName": "creds"}},
        {"name": "bundle", "projected": {"sources": [{"secret": {"name": "creds"}}, {"configMap": {"name": "settings"}}]}},
    ]);
    create(&client, "/api/v1/namespaces/default/pods", &pod("strict", needed)).await;
    util::wait_running(&sim, "default", "relaxed").await;
    failed_mount(&sim, "default", "strict").await;
    let client_for_events = client.clone();
    let messages: Vec<String> = wait_for(&sim, PATIENCE, "both FailedMount events of strict", || {
        let client = client_for_events.clone();
        async move {
            let events = get(&client, "/api/v1/namespaces/default/events").await.json();
            let mut messages: Vec<String> = events["items"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|e| e["involvedObject"]["name"] == "strict")
                .filter_map(|e| e["message"].as_str().map(str::to_owned))
                .collect();
            messages.sort();
            if messages.len() == 2 { Ok(messages) } else { Err(format!("{messages:?}")) }
        }
    })
    .await;
    assert_eq!(
        messages,
        [
            "MountVolume.SetUp failed for volume \"bundle\" : [secret \"creds\" not found, configmap \"settings\" not found]",
            "MountVolume.SetUp failed for volume \"creds\" : secret \"creds\" not found",
        ]
    );
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds"}, "stringData": {"k": "v"}});
    create(&client, "/api/v1/namespaces/default/secrets", &secret).await;
    assert_eq!(state(&client, "default", "strict").await.1, "ContainerCreating", "settings is still missing");
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}});
    create(&client, "/api/v1/namespaces/default/configmaps", &cm).await;
    util::wait_running(&sim, "default", "strict").await;
}

#[tokio::test]
async fn the_token_volume_waits_for_kube_root_ca_crt() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    create(
        &client,
        "/api/v1/namespaces",
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}),
    )
    .await;
    let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}});
    create(&client, "/api/v1/namespaces/team/serviceaccounts", &sa).await;
    let created = create(&client, "/api/v1/namespaces/team/pods", &pod("web", json!([]))).await;
    let volume = created["spec"]["volumes"][0]["name"].as_str().expect("the token volume").to_owned();
    let event = failed_mount(&sim, "team", "web").await;
    assert_eq!(
        event["message"],
        format!("MountVolume.SetUp failed for volume \"{volume}\" : configmap \"kube-root-ca.crt\" not found")
    );
    kube_sim::testing::provision_namespace(&sim, "team").await;
    util::wait_running(&sim, "team", "web").await;
}
