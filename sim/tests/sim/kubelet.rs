//! The kubelet and scheduler stand-in as a client sees it: nodes and their
//! Leases heartbeat, pods are bound, start, become Ready (or not, or fail, as
//! their annotations ask), graceful deletions finish, and a stopped node
//! stops all of that until it is started again.

use std::collections::BTreeMap;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube_sim::testing::wait_for;
use serde_json::{Value, json};

use super::util::{self, PATIENCE};

// === utils ===

fn pods(sim: &kube_sim::Sim) -> kube::Api<Pod> {
    kube::Api::namespaced(sim.client().expect("client"), "default")
}

fn nodes(sim: &kube_sim::Sim) -> kube::Api<Node> {
    kube::Api::all(sim.client().expect("client"))
}

fn leases(sim: &kube_sim::Sim) -> kube::Api<Lease> {
    kube::Api::namespaced(sim.client().expect("client"), "kube-node-lease")
}

/// A one-container pod named `name`, with `extra` merged into it.
fn pod(name: &str, extra: Value) -> Pod {
    let mut pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
    });
    merge(&mut pod, extra);
    serde_json::from_value(pod).expect("a valid pod")
}

fn merge(into: &mut Value, from: Value) {
    match (into, from) {
        (Value::Object(into), Value::Object(from)) => {
            for (k, v) in from {
                merge(into.entry(k).or_insert(Value::Null), v);
            }
        }
        (into, from) => *into = from,
    }
}

async fn create(api: &kube::Api<Pod>, pod: Pod) -> Pod {
    api.create(&PostParams::default(), &pod).await.expect("pod created")
}

fn as_json<T: serde::Serialize>(object: &T) -> Value {
    serde_json::to_value(object).expect("serialisable")
}

/// The status of a pod's condition (`"True"`, `"False"`), if it has it.
fn condition(pod: &Value, kind: &str) -> Option<String> {
    pod.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)
        .and_then(|c| c["status"].as_str())
        .map(str::to_owned)
}

fn phase(pod: &Value) -> &str {
    pod.pointer("/status/phase").and_then(Value::as_str).unwrap_or("")
}

fn node_name(pod: &Value) -> &str {
    pod.pointer("/spec/nodeName").and_then(Value::as_str).unwrap_or("")
}

/// A short summary of a pod's state for failure messages.
fn summary(pod: &Value) -> String {
    format!(
        "node={:?} phase={:?} ready={:?} deletionTimestamp={:?}",
        node_name(pod),
        phase(pod),
        condition(pod, "Ready"),
        pod.pointer("/metadata/deletionTimestamp")
    )
}

/// Waits until pod `name` satisfies `ok`, returning it.
async fn wait_pod(
    sim: &kube_sim::Sim,
    api: &kube::Api<Pod>,
    name: &str,
    what: &str,
    ok: impl Fn(&Value) -> bool,
) -> Value {
    wait_for(sim, PATIENCE, &format!("pod {name} {what}"), || async {
        let pod = api.get(name).await.map_err(|e| e.to_string())?;
        let pod = as_json(&pod);
        if ok(&pod) { Ok(pod) } else { Err(summary(&pod)) }
    })
    .await
}

async fn wait_ready(sim: &kube_sim::Sim, api: &kube::Api<Pod>, name: &str) -> Value {
    wait_pod(sim, api, name, "Ready", |p| condition(p, "Ready").as_deref() == Some("True")).await
}

/// Waits until pod `name` is gone (404).
async fn wait_gone(sim: &kube_sim::Sim, api: &kube::Api<Pod>, name: &str) {
    wait_for(sim, PATIENCE, &format!("pod {name} gone"), || async {
        match api.get_opt(name).await {
            Ok(None) => Ok(()),
            Ok(Some(p)) => Err(summary(&as_json(&p))),
            Err(e) => Err(e.to_string()),
        }
    })
    .await;
}

/// `spec.renewTime` of every node Lease, by name.
async fn renew_times(sim: &kube_sim::Sim) -> BTreeMap<String, String> {
    leases(sim)
        .list(&ListParams::default())
        .await
        .expect("leases listed")
        .items
        .iter()
        .map(|l| {
            let l = as_json(l);
            let name = l.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("").to_owned();
            let renewed = l.pointer("/spec/renewTime").and_then(Value::as_str).unwrap_or("").to_owned();
            (name, renewed)
        })
        .collect()
}

/// Waits until `node`'s Lease is renewed past `since`; returns the new time.
async fn wait_renewed(sim: &kube_sim::Sim, node: &str, since: &str) -> String {
    wait_for(sim, PATIENCE, &format!("lease {node} renewed after {since}"), || async {
        let times = renew_times(sim).await;
        match times.get(node) {
            Some(t) if t.as_str() > since => Ok(t.clone()),
            other => Err(format!("{other:?}")),
        }
    })
    .await
}

/// The Ready condition's `lastHeartbeatTime` of a node.
async fn heartbeat(sim: &kube_sim::Sim, node: &str) -> String {
    let node = as_json(&nodes(sim).get(node).await.expect("node read"));
    node.pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"))
        .and_then(|c| c["lastHeartbeatTime"].as_str())
        .unwrap_or("")
        .to_owned()
}

// === tests ===

#[tokio::test]
async fn three_ready_nodes_each_hold_a_lease_that_is_renewed() {
    let sim = util::start().await;
    let listed = nodes(&sim).list(&ListParams::default()).await.expect("nodes listed");
    let names: Vec<String> = listed.items.iter().map(|n| n.metadata.name.clone().unwrap_or_default()).collect();
    assert_eq!(names, ["node-1", "node-2", "node-3"]);
    for node in &listed.items {
        let node = as_json(node);
        assert_eq!(condition(&node, "Ready").as_deref(), Some("True"), "{node}");
    }
    let first = wait_for(&sim, PATIENCE, "a Lease per node", || async {
        let times = renew_times(&sim).await;
        let complete = ["node-1", "node-2", "node-3"].iter().all(|n| times.get(*n).is_some_and(|t| !t.is_empty()));
        if complete { Ok(times) } else { Err(format!("{times:?}")) }
    })
    .await;
    for name in ["node-1", "node-2", "node-3"] {
        let lease = as_json(&leases(&sim).get(name).await.expect("lease read"));
        assert_eq!(lease["spec"]["holderIdentity"], name);
        assert_eq!(lease["metadata"]["ownerReferences"][0]["kind"], "Node");
        assert_eq!(lease["metadata"]["ownerReferences"][0]["name"], name);
        wait_renewed(&sim, name, &first[name]).await;
    }
}

#[tokio::test]
async fn a_pod_is_bound_to_a_node_and_becomes_running_and_ready() {
    let sim = util::start().await;
    let api = pods(&sim);
    let created = as_json(&create(&api, pod("web", json!({}))).await);
    assert_eq!(phase(&created), "Pending");
    let pod = wait_ready(&sim, &api, "web").await;
    assert!(["node-1", "node-2", "node-3"].contains(&node_name(&pod)), "{pod}");
    assert_eq!(phase(&pod), "Running");
    for kind in ["PodScheduled", "Initialized", "ContainersReady", "Ready"] {
        assert_eq!(condition(&pod, kind).as_deref(), Some("True"), "{kind} in {pod}");
    }
    let container = &pod["status"]["containerStatuses"][0];
    assert_eq!(container["name"], "app");
    assert_eq!(container["image"], "nginx:1.27");
    assert_eq!(container["ready"], true);
    assert_eq!(container["started"], true);
    assert!(container["state"]["running"]["startedAt"].is_string(), "{container}");
    assert!(pod["status"]["podIP"].as_str().is_some_and(|ip| !ip.is_empty()), "{pod}");
    assert!(pod["status"]["hostIP"].as_str().is_some_and(|ip| !ip.is_empty()), "{pod}");
    assert!(pod["status"]["startTime"].is_string(), "{pod}");
}

/// As the kubelet does for a pod that names its node (no scheduler
/// involved): it starts there, with the node's and its own addresses.
#[tokio::test]
async fn a_pod_created_with_a_node_name_runs_on_that_node() {
    let sim = util::start().await;
    let api = pods(&sim);
    create(&api, pod("pinned", json!({"spec": {"nodeName": "node-3"}}))).await;
    let pod = wait_ready(&sim, &api, "pinned").await;
    assert_eq!(node_name(&pod), "node-3");
    assert_eq!(phase(&pod), "Running");
    assert_eq!(pod["status"]["hostIP"], "10.0.0.3", "{pod}");
    assert!(pod["status"]["podIP"].as_str().is_some_and(|ip| ip.starts_with("10.244.3.")), "{pod}");
    assert!(pod["status"]["startTime"].is_string(), "{pod}");
}

#[tokio::test]
async fn pods_spread_evenly_over_the_nodes() {
    let sim = util::start().await;
    let api = pods(&sim);
    for i in 0..9 {
        create(&api, pod(&format!("p{i}"), json!({}))).await;
    }
    let placement = wait_for(&sim, PATIENCE, "nine pods bound", || async {
        let list = api.list(&ListParams::default()).await.map_err(|e| e.to_string())?;
        let mut per_node: BTreeMap<String, usize> = BTreeMap::new();
        for p in &list.items {
            let p = as_json(p);
            if node_name(&p).is_empty() {
                return Err(format!("{} unbound", p["metadata"]["name"]));
            }
            *per_node.entry(node_name(&p).to_owned()).or_default() += 1;
        }
        Ok(per_node)
    })
    .await;
    let expected: BTreeMap<String, usize> =
        [("node-1", 3), ("node-2", 3), ("node-3", 3)].into_iter().map(|(n, c)| (n.to_owned(), c)).collect();
    assert_eq!(placement, expected);
}

#[tokio::test]
async fn a_pod_whose_node_selector_matches_no_node_waits_until_one_appears() {
    let sim = util::start().await;
    let api = pods(&sim);
    create(&api, pod("gpu-job", json!({"spec": {"nodeSelector": {"accelerator": "gpu"}}}))).await;
    create(&api, pod("plain", json!({}))).await;
    // The plain pod, created after, is scheduled and started: the scheduler
    // has had its chance at the first one.
    wait_ready(&sim, &api, "plain").await;
    let waiting = as_json(&api.get("gpu-job").await.expect("pod read"));
    assert_eq!(node_name(&waiting), "", "{waiting}");
    assert_eq!(phase(&waiting), "Pending");

    let node: Node = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "gpu-1", "labels": {"accelerator": "gpu", "kubernetes.io/hostname": "gpu-1"}},
        "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]},
    }))
    .expect("a valid node");
    let created = nodes(&sim).create(&PostParams::default(), &node).await.expect("node created");
    // TaintNodesByCondition admission taints the new node until the
    // node-lifecycle-controller sees it Ready; kube-sim runs none, so the
    // test takes the taint off as that controller would.
    let taints = created.spec.and_then(|s| s.taints).unwrap_or_default();
    assert!(taints.iter().any(|t| t.key == "node.kubernetes.io/not-ready" && t.effect == "NoSchedule"), "{taints:?}");
    let untaint = json!({"spec": {"taints": null}});
    nodes(&sim).patch("gpu-1", &PatchParams::default(), &Patch::Merge(&untaint)).await.expect("node untainted");
    let bound = wait_ready(&sim, &api, "gpu-job").await;
    assert_eq!(node_name(&bound), "gpu-1");
    // The new node heartbeats like the others.
    wait_for(&sim, PATIENCE, "a Lease for gpu-1", || async {
        let times = renew_times(&sim).await;
        if times.contains_key("gpu-1") { Ok(()) } else { Err(format!("{times:?}")) }
    })
    .await;
}

#[tokio::test]
async fn a_no_schedule_taint_keeps_pods_that_do_not_tolerate_it_away() {
    let sim = util::start().await;
    let taint = json!({"spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]}});
    nodes(&sim).patch("node-1", &PatchParams::default(), &Patch::Merge(&taint)).await.expect("node tainted");
    let api = pods(&sim);
    for i in 0..6 {
        create(&api, pod(&format!("p{i}"), json!({}))).await;
    }
    let tolerant = json!({"spec": {
        "nodeSelector": {"kubernetes.io/hostname": "node-1"},
        "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "db", "effect": "NoSchedule"}],
    }});
    create(&api, pod("db", tolerant)).await;
    let db = wait_ready(&sim, &api, "db").await;
    assert_eq!(node_name(&db), "node-1");
    for i in 0..6 {
        let p = wait_pod(&sim, &api, &format!("p{i}"), "bound", |p| !node_name(p).is_empty()).await;
        assert_ne!(node_name(&p), "node-1", "{}", summary(&p));
    }
}

#[tokio::test]
async fn a_pod_annotated_ready_never_runs_but_is_never_ready() {
    let sim = util::start().await;
    let api = pods(&sim);
    create(&api, pod("stuck", json!({"metadata": {"annotations": {"kube-sim.io/ready": "never"}}}))).await;
    create(&api, pod("fine", json!({}))).await;
    wait_ready(&sim, &api, "fine").await;
    let stuck = wait_pod(&sim, &api, "stuck", "Running", |p| phase(p) == "Running").await;
    assert_eq!(condition(&stuck, "Ready").as_deref(), Some("False"), "{stuck}");
    assert_eq!(condition(&stuck, "ContainersReady").as_deref(), Some("False"), "{stuck}");
    let container = &stuck["status"]["containerStatuses"][0];
    assert_eq!(container["ready"], false);
    assert!(container["state"]["running"].is_object(), "{container}");
}

#[tokio::test]
async fn a_pod_with_a_long_start_delay_stays_creating_while_others_start() {
    let sim = util::start().await;
    let api = pods(&sim);
    create(&api, pod("slow", json!({"metadata": {"annotations": {"kube-sim.io/start-delay": "1h"}}}))).await;
    create(&api, pod("fast", json!({}))).await;
    wait_ready(&sim, &api, "fast").await;
    let slow = wait_pod(&sim, &api, "slow", "bound", |p| !node_name(p).is_empty()).await;
    assert_eq!(phase(&slow), "Pending", "{slow}");
    assert_eq!(condition(&slow, "Ready").as_deref(), Some("False"), "{slow}");
    assert_eq!(slow["status"]["containerStatuses"][0]["state"]["waiting"]["reason"], "ContainerCreating", "{slow}");
}

#[tokio::test]
async fn a_pod_annotated_fail_after_fails() {
    let sim = util::start().await;
    let api = pods(&sim);
    create(&api, pod("doomed", json!({"metadata": {"annotations": {"kube-sim.io/fail-after": "10ms"}}}))).await;
    let failed = wait_pod(&sim, &api, "doomed", "Failed", |p| phase(p) == "Failed").await;
    assert_eq!(condition(&failed, "Ready").as_deref(), Some("False"), "{failed}");
    let terminated = &failed["status"]["containerStatuses"][0]["state"]["terminated"];
    assert_eq!(terminated["exitCode"], 1, "{failed}");
}

/// A pod made the way the ReplicaSet controller makes one from a
/// Deployment's template (generateName, owner, template labels and
/// annotations) follows the annotations its template carried.
#[tokio::test]
async fn a_pod_made_from_a_template_follows_the_template_annotations() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let replica_sets: kube::Api<k8s_openapi::api::apps::v1::ReplicaSet> = kube::Api::namespaced(client, "default");
    let template = json!({
        "metadata": {
            "labels": {"app": "web", "pod-template-hash": "5d4f8c7b9"},
            "annotations": {"kube-sim.io/ready": "never", "kubectl.kubernetes.io/restartedAt": "2024-01-01T00:00:00Z"},
        },
        "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
    });
    let rs = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "web-5d4f8c7b9"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web", "pod-template-hash": "5d4f8c7b9"}},
            "template": template},
    }))
    .expect("a valid ReplicaSet");
    let rs = as_json(&replica_sets.create(&PostParams::default(), &rs).await.expect("replicaset created"));
    let mut from_template = template.clone();
    merge(
        &mut from_template,
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "generateName": "web-5d4f8c7b9-",
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d4f8c7b9",
                "uid": rs["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true}],
        }}),
    );
    let api = pods(&sim);
    let created = create(&api, serde_json::from_value(from_template).expect("a valid pod")).await;
    let name = created.metadata.name.clone().expect("generated name");
    assert!(name.starts_with("web-5d4f8c7b9-"), "{name}");
    create(&api, pod("plain", json!({}))).await;
    wait_ready(&sim, &api, "plain").await;
    let running = wait_pod(&sim, &api, &name, "Running", |p| phase(p) == "Running").await;
    assert_eq!(condition(&running, "Ready").as_deref(), Some("False"), "{running}");
    assert_eq!(running["metadata"]["annotations"]["kube-sim.io/ready"], "never");
    assert_eq!(running["metadata"]["ownerReferences"][0]["name"], "web-5d4f8c7b9");
}

#[tokio::test]
async fn a_stopped_node_stops_heartbeating_and_its_pods_stop_until_it_starts() {
    let sim = util::start().await;
    let api = pods(&sim);
    // A pod running on node-2 before it stops, to delete while it is stopped.
    create(&api, pod("victim", json!({"spec": {"nodeName": "node-2"}}))).await;
    wait_ready(&sim, &api, "victim").await;

    sim.controls().stop_node("node-2").expect("node-2 stopped");
    // Let any heartbeat round already under way finish: two renewals of
    // node-1 after the stop mean a whole round ran after it.
    let t = renew_times(&sim).await["node-1"].clone();
    let t = wait_renewed(&sim, "node-1", &t).await;
    let t = wait_renewed(&sim, "node-1", &t).await;
    let lease_at_stop = renew_times(&sim).await["node-2"].clone();
    let heartbeat_at_stop = heartbeat(&sim, "node-2").await;

    create(&api, pod("pinned", json!({"spec": {"nodeName": "node-2"}}))).await;
    api.delete("victim", &DeleteParams::default()).await.expect("victim deleted");
    // Meanwhile a healthy node carries on: a pod starts, a deletion finishes.
    create(&api, pod("elsewhere", json!({"spec": {"nodeName": "node-1"}}))).await;
    wait_ready(&sim, &api, "elsewhere").await;
    api.delete("elsewhere", &DeleteParams::default()).await.expect("elsewhere deleted");
    wait_gone(&sim, &api, "elsewhere").await;
    wait_renewed(&sim, "node-1", &t).await;

    assert_eq!(renew_times(&sim).await["node-2"], lease_at_stop, "a stopped node's Lease is not renewed");
    assert_eq!(heartbeat(&sim, "node-2").await, heartbeat_at_stop, "a stopped node posts no NodeStatus");
    let pinned = as_json(&api.get("pinned").await.expect("pinned read"));
    assert_eq!(phase(&pinned), "Pending", "{}", summary(&pinned));
    assert_ne!(condition(&pinned, "Ready").as_deref(), Some("True"));
    let victim = as_json(&api.get("victim").await.expect("a deletion on a stopped node does not finish"));
    assert!(victim["metadata"]["deletionTimestamp"].is_string(), "{}", summary(&victim));

    sim.controls().start_node("node-2").expect("node-2 started");
    wait_renewed(&sim, "node-2", &lease_at_stop).await;
    wait_for(&sim, PATIENCE, "node-2 heartbeat", || async {
        let now = heartbeat(&sim, "node-2").await;
        if now > heartbeat_at_stop { Ok(()) } else { Err(now) }
    })
    .await;
    wait_ready(&sim, &api, "pinned").await;
    wait_gone(&sim, &api, "victim").await;
}

/// What the node lifecycle controller's MarkPodsNotReady writes.
fn mark_not_ready() -> Patch<Value> {
    Patch::Strategic(
        json!({"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "NodeNotReady"}]}}),
    )
}

#[tokio::test]
async fn the_kubelet_posts_ready_again_over_a_ready_condition_someone_else_set_false() {
    let sim = util::start().await;
    let api = pods(&sim);
    create(&api, pod("web", json!({"spec": {"nodeName": "node-1"}}))).await;
    wait_ready(&sim, &api, "web").await;
    api.patch_status("web", &PatchParams::default(), &mark_not_ready()).await.expect("marked not ready");
    wait_ready(&sim, &api, "web").await;

    // On a stopped node nothing answers until it starts again.
    sim.controls().stop_node("node-1").expect("node-1 stopped");
    api.patch_status("web", &PatchParams::default(), &mark_not_ready()).await.expect("marked not ready");
    let marked = as_json(&api.get("web").await.expect("read"));
    assert_eq!(condition(&marked, "Ready").as_deref(), Some("False"), "{}", summary(&marked));
    sim.controls().start_node("node-1").expect("node-1 started");
    wait_ready(&sim, &api, "web").await;

    // A pod whose containers are not ready stays not Ready.
    create(&api, pod("never", json!({"metadata": {"annotations": {"kube-sim.io/ready": "never"}}}))).await;
    let running = wait_pod(&sim, &api, "never", "Running", |p| phase(p) == "Running").await;
    assert_eq!(condition(&running, "Ready").as_deref(), Some("False"), "{running}");
}

#[tokio::test]
async fn a_graceful_deletion_finishes_after_the_capped_grace_period() {
    let sim = util::start().await;
    let api = pods(&sim);
    create(&api, pod("web", json!({}))).await;
    wait_ready(&sim, &api, "web").await;
    let deleting = api.delete("web", &DeleteParams::default()).await.expect("deleted");
    let deleting = deleting.left().expect("a bound pod is deleted gracefully, not at once");
    let deleting = as_json(&deleting);
    assert!(deleting["metadata"]["deletionTimestamp"].is_string(), "{deleting}");
    assert_eq!(deleting["metadata"]["deletionGracePeriodSeconds"], 30);
    wait_gone(&sim, &api, "web").await;
}

#[tokio::test]
async fn a_finalizer_holds_a_gracefully_deleted_pod_until_it_is_removed() {
    let sim = util::start().await;
    let api = pods(&sim);
    create(&api, pod("held", json!({"metadata": {"finalizers": ["example.com/hold"]}}))).await;
    create(&api, pod("free", json!({}))).await;
    wait_ready(&sim, &api, "held").await;
    wait_ready(&sim, &api, "free").await;
    api.delete("held", &DeleteParams::default()).await.expect("held deleted");
    api.delete("free", &DeleteParams::default()).await.expect("free deleted");
    // The kubelet finishes its part (grace period 0), but the finalizer holds
    // the object.
    wait_pod(&sim, &api, "held", "finished by the kubelet", |p| p["metadata"]["deletionGracePeriodSeconds"] == 0).await;
    wait_gone(&sim, &api, "free").await;
    let held = as_json(&api.get("held").await.expect("still there"));
    assert_eq!(held["metadata"]["finalizers"], json!(["example.com/hold"]));
    // Stopped, it is terminal: its container killed, the pod Failed.
    assert_eq!(phase(&held), "Failed", "{held}");
    assert_eq!(held["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 137, "{held}");
    let release = json!({"metadata": {"finalizers": null}});
    api.patch("held", &PatchParams::default(), &Patch::Merge(&release)).await.expect("finalizer removed");
    wait_gone(&sim, &api, "held").await;
}

#[tokio::test]
async fn created_pods_tolerate_not_ready_and_unreachable_nodes_for_300s() {
    let sim = util::start().await;
    let api = pods(&sim);
    let created = as_json(&create(&api, pod("web", json!({}))).await);
    let tolerations = created["spec"]["tolerations"].as_array().cloned().unwrap_or_default();
    for key in ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"] {
        let expected = json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300});
        assert!(tolerations.contains(&expected), "{key} missing from {tolerations:?}");
    }
}
