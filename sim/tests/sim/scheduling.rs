//! The scheduler stand-in's filters as a client sees them: node affinity
//! (labels and `matchFields` on the node's name), taints and tolerations,
//! cordoned nodes, the `FailedScheduling` verdict worded as the scheduler
//! words it, and pods placed once the cluster changes; and nodes joining
//! and leaving through the `/sim/v1/nodes` controls.

use kube_sim::Sim;
use kube_sim::kubelet::{NodeError, NodeSpec};
use kube_sim::testing::{kubeconfig, kubectl_ok, wait_for};
use serde_json::{Value, json};

use super::util::{self, PATIENCE, call, create, get, merge};

// === utils ===

/// A pod named `name` with `spec` beside its one container.
fn pod(name: &str, spec: Value) -> Value {
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]}});
    if let (Some(fields), Some(extra)) = (pod["spec"].as_object_mut(), spec.as_object()) {
        fields.extend(extra.clone());
    }
    pod
}

/// Required node affinity with these terms.
fn affinity(terms: Value) -> Value {
    json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}})
}

/// A pod pinned to `node` as the DaemonSet controller pins its pods, with
/// `tolerations`.
fn pinned(name: &str, node: &str, tolerations: Value) -> Value {
    let terms = json!([{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]);
    pod(name, json!({"affinity": affinity(terms), "tolerations": tolerations}))
}

/// The verdict of a scheduler that found no node, for `nodes` nodes.
fn verdict(nodes: usize, reasons: &str) -> String {
    format!(
        "0/{nodes} nodes are available: {reasons}. preemption: 0/{nodes} nodes are available: {nodes} Preemption is not helpful for scheduling."
    )
}

/// Waits for the pod's `FailedScheduling` event with `message`, and checks
/// the pod is still unbound with that message on `PodScheduled`.
async fn wait_unschedulable(sim: &Sim, name: &str, message: &str) {
    util::wait_event(sim, "default", name, "FailedScheduling", |m| m == message).await;
    let client = sim.client().expect("client");
    let pod = get(&client, &format!("/api/v1/namespaces/default/pods/{name}")).await.json();
    assert_eq!(pod.pointer("/spec/nodeName"), None, "{name} stays unbound");
    let scheduled =
        pod["status"]["conditions"].as_array().and_then(|cs| cs.iter().find(|c| c["type"] == "PodScheduled"));
    let scheduled = scheduled.cloned().unwrap_or_default();
    assert_eq!((&scheduled["status"], &scheduled["reason"]), (&json!("False"), &json!("Unschedulable")));
    assert_eq!(scheduled["message"], message);
}

/// Waits for the pod to run, and gives its node.
async fn node_of(sim: &Sim, name: &str) -> String {
    let pod = util::wait_running(sim, "default", name).await;
    pod.pointer("/spec/nodeName").and_then(Value::as_str).unwrap_or("").to_owned()
}

async fn patch_node(client: &kube::Client, name: &str, patch: Value) {
    let answer = merge(client, &format!("/api/v1/nodes/{name}"), patch).await;
    assert_eq!(answer.code(), 200, "{}", answer.body);
}

// === tests ===

#[tokio::test]
async fn pods_go_only_where_their_affinity_and_tolerations_allow() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let gpu = json!({"name": "gpu-1", "labels": {"accelerator": "gpu", "cores": "64"},
        "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]});
    assert_eq!(call(&client, "POST", "/sim/v1/nodes", &[], Some(&gpu)).await.code(), 201);
    let wants_gpu = affinity(json!([{"matchExpressions": [{"key": "accelerator", "operator": "In", "values": ["gpu"]},
        {"key": "cores", "operator": "Gt", "values": ["32"]}]}]));
    let toleration = json!([{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]);
    create(
        &client,
        "/api/v1/namespaces/default/pods",
        &pod("trainer", json!({"affinity": wants_gpu, "tolerations": toleration})),
    )
    .await;
    assert_eq!(node_of(&sim, "trainer").await, "gpu-1");

    create(&client, "/api/v1/namespaces/default/pods", &pod("intolerant", json!({"affinity": wants_gpu}))).await;
    let reasons = "1 node(s) had untolerated taint(s), 3 node(s) didn't match Pod's node affinity/selector";
    wait_unschedulable(&sim, "intolerant", &verdict(4, reasons)).await;
    let (_dir, config) = kubeconfig(&sim);
    let described = kubectl_ok(&config, &["describe", "pod", "intolerant"]).await;
    let event = described.lines().find(|l| l.contains("FailedScheduling")).unwrap_or_default();
    let words: Vec<&str> = event.split_whitespace().collect();
    assert_eq!(words.get(..2), Some(&["Warning", "FailedScheduling"][..]), "{described}");
    assert!(
        event.contains("default-scheduler  0/4 nodes are available: 1 node(s) had untolerated taint(s)"),
        "{event}"
    );
    create(&client, "/api/v1/namespaces/default/pods", &pod("plain", json!({}))).await;
    assert!(node_of(&sim, "plain").await.starts_with("node-"), "untolerated taints keep plain pods off gpu-1");

    patch_node(&client, "gpu-1", json!({"spec": {"taints": null}})).await;
    assert_eq!(node_of(&sim, "intolerant").await, "gpu-1", "placed once the taint is gone");
}

#[tokio::test]
async fn daemon_pods_pinned_by_name_wait_for_their_node_and_tolerate_cordons() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    patch_node(&client, "node-2", json!({"spec": {"unschedulable": true}})).await;
    let cordon = json!([{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]);
    create(&client, "/api/v1/namespaces/default/pods", &pinned("daemon-2", "node-2", cordon)).await;
    assert_eq!(node_of(&sim, "daemon-2").await, "node-2");

    create(&client, "/api/v1/namespaces/default/pods", &pinned("strict-2", "node-2", json!([]))).await;
    let reasons = "1 node(s) were unschedulable, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]";
    wait_unschedulable(&sim, "strict-2", &verdict(3, reasons)).await;
    create(&client, "/api/v1/namespaces/default/pods", &pod("plain", json!({}))).await;
    assert_ne!(node_of(&sim, "plain").await, "node-2", "a cordoned node takes no plain pod");

    create(&client, "/api/v1/namespaces/default/pods", &pinned("daemon-7", "node-7", json!([]))).await;
    wait_unschedulable(&sim, "daemon-7", &verdict(3, "3 node(s) didn't satisfy plugin(s) [NodeAffinity]")).await;
    sim.controls().add_node(&NodeSpec { name: "node-7".into(), ..NodeSpec::default() }).expect("node-7 joins");
    let placed = util::wait_running(&sim, "default", "daemon-7").await;
    assert_eq!(placed["spec"]["nodeName"], "node-7");
    let node = get(&client, "/api/v1/nodes/node-7").await.json();
    let internal =
        node["status"]["addresses"].as_array().and_then(|a| a.iter().find(|a| a["type"] == "InternalIP")).cloned();
    assert_eq!(Some(&placed["status"]["hostIP"]), internal.as_ref().map(|a| &a["address"]));
}

#[tokio::test]
async fn nodes_join_and_leave_through_the_controls() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let edge = json!({"name": "edge-1", "labels": {"site": "store-42"}});
    assert_eq!(call(&client, "POST", "/sim/v1/nodes", &[], Some(&edge)).await.code(), 201);
    let node = get(&client, "/api/v1/nodes/edge-1").await.json();
    assert_eq!(node["metadata"]["labels"]["site"], "store-42");
    assert_eq!(node["metadata"]["labels"]["kubernetes.io/hostname"], "edge-1");
    assert_eq!(node["status"]["capacity"]["pods"], "110");
    let cidrs: Vec<String> = {
        let nodes = get(&client, "/api/v1/nodes").await.json();
        nodes["items"].as_array().into_iter().flatten().map(|n| n["spec"]["podCIDR"].to_string()).collect()
    };
    assert_eq!(cidrs.len(), 4);
    assert!(cidrs.iter().all(|c| cidrs.iter().filter(|d| *d == c).count() == 1), "pod ranges of their own: {cidrs:?}");
    wait_for(&sim, PATIENCE, "edge-1's Lease", || {
        let client = client.clone();
        async move {
            let lease = get(&client, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/edge-1").await;
            if lease.code() == 200 { Ok(()) } else { Err(lease.body) }
        }
    })
    .await;

    let again = call(&client, "POST", "/sim/v1/nodes", &[], Some(&edge)).await;
    assert_eq!((again.code(), again.json()["error"].clone()), (409, json!("node \"edge-1\" already exists")));
    let typo = call(&client, "POST", "/sim/v1/nodes", &[], Some(&json!({"nmae": "x"}))).await;
    assert_eq!(typo.code(), 400, "{}", typo.body);
    let bad_name = call(&client, "POST", "/sim/v1/nodes", &[], Some(&json!({"name": "Edge_2"}))).await;
    assert_eq!(bad_name.code(), 400, "{}", bad_name.body);
    assert!(bad_name.body.contains("metadata.name: Invalid value: \\\"Edge_2\\\""), "{}", bad_name.body);
    let spec = NodeSpec { name: "edge-1".into(), ..NodeSpec::default() };
    assert_eq!(sim.controls().add_node(&spec), Err(NodeError::Exists("edge-1".into())));

    assert_eq!(call(&client, "DELETE", "/sim/v1/nodes/edge-1", &[], None).await.code(), 204);
    assert_eq!(get(&client, "/api/v1/nodes/edge-1").await.code(), 404);
    let gone = call(&client, "DELETE", "/sim/v1/nodes/edge-1", &[], None).await;
    assert_eq!((gone.code(), gone.json()["error"].clone()), (404, json!("node \"edge-1\" not found")));
    assert_eq!(sim.controls().remove_node("edge-1"), Err(NodeError::NotFound("edge-1".into())));
    sim.controls().remove_node("node-3").expect("node-3 leaves");
    create(
        &client,
        "/api/v1/namespaces/default/pods",
        &pod("pinned", json!({"nodeSelector": {"kubernetes.io/hostname": "node-3"}})),
    )
    .await;
    let reasons = "2 node(s) didn't match Pod's node affinity/selector";
    wait_unschedulable(&sim, "pinned", &verdict(2, reasons)).await;
}

#[tokio::test]
async fn gated_pods_and_pods_for_other_schedulers_wait_silently() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let gates = json!({"schedulingGates": [{"name": "example.com/quota"}, {"name": "example.com/review"}]});
    let created = create(&client, "/api/v1/namespaces/default/pods", &pod("gated", gates)).await;
    let scheduled = &created["status"]["conditions"][0];
    assert_eq!((&scheduled["type"], &scheduled["reason"]), (&json!("PodScheduled"), &json!("SchedulingGated")));
    let (_dir, config) = kubeconfig(&sim);
    let table = kubectl_ok(&config, &["get", "pod", "gated", "--no-headers"]).await;
    assert_eq!(table.split_whitespace().nth(2), Some("SchedulingGated"), "{table}");

    let path = "/api/v1/namespaces/default/pods/gated";
    let one_left = json!({"spec": {"schedulingGates": [{"name": "example.com/review"}]}});
    assert_eq!(merge(&client, path, one_left).await.code(), 200);
    create(&client, "/api/v1/namespaces/default/pods", &pod("other", json!({"schedulerName": "batch"}))).await;
    // The stand-in takes changes in order: once a later pod runs, it has
    // looked at these two.
    create(&client, "/api/v1/namespaces/default/pods", &pod("after", json!({}))).await;
    node_of(&sim, "after").await;
    for name in ["gated", "other"] {
        let pod = get(&client, &format!("/api/v1/namespaces/default/pods/{name}")).await.json();
        assert_eq!(pod["spec"].get("nodeName"), None, "{name} is left alone");
    }
    let events = get(&client, "/api/v1/namespaces/default/events").await.json();
    assert_eq!(events["items"].as_array().map(Vec::len), Some(0), "no verdict on either: {events}");
    assert_eq!(merge(&client, path, json!({"spec": {"schedulingGates": null}})).await.code(), 200);
    assert!(node_of(&sim, "gated").await.starts_with("node-"));
}
