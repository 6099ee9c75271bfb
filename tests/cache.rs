//! The slim pod cache loses nothing: kcm-rs caches pods as projections
//! that keep only what its controllers read, so every write it makes to a
//! pod must leave the fields it does not keep as they were. One pod goes
//! through every write kcm-rs makes to pods: adopted by a ReplicaSet (an
//! ownerReferences patch), marked not Ready by the node lifecycle
//! controller (a status update), given `DisruptionTarget` and deleted by
//! the taint eviction controller (a status patch, a delete), and orphaned
//! by the garbage collector (an ownerReferences patch). After each, its
//! spec, the annotation, label and finalizer kcm-rs does not read, and the
//! status fields the kubelet set are unchanged.

use std::time::Duration;

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, PostParams, PropagationPolicy};
use kube_sim::SimConfig;
use kube_sim::kubelet::KubeletConfig;
use kube_sim::testing::wait_for;
use serde_json::{Value, json};

use crate::common::{Env, PATIENCE, start_with};

/// Short node grace periods (a silent node is Unknown after 5 s).
const FLAGS: &[&str] = &[
    "--node-monitor-period=1s",
    "--node-monitor-grace-period=5s",
    "--node-startup-grace-period=10s",
    "--node-eviction-rate=1",
];

/// The parts of the pod no write of kcm-rs may change.
fn untouched(pod: &Value) -> Value {
    let meta = &pod["metadata"];
    let status = &pod["status"];
    json!({
        "uid": meta["uid"], "creationTimestamp": meta["creationTimestamp"],
        "note": meta["annotations"]["example.com/note"], "labels": meta["labels"], "finalizers": meta["finalizers"],
        "spec": pod["spec"],
        "podIP": status["podIP"], "hostIP": status["hostIP"], "startTime": status["startTime"],
        "qosClass": status["qosClass"],
    })
}

async fn pod(env: &Env) -> Value {
    let pod = Api::<Pod>::namespaced(env.client.clone(), "default").get("keeper").await.expect("pod");
    serde_json::to_value(pod).expect("json")
}

fn condition<'a>(pod: &'a Value, type_: &str) -> Option<&'a str> {
    pod["status"]["conditions"].as_array()?.iter().find(|c| c["type"] == type_)?["status"].as_str()
}

/// Waits until `done` holds of the pod, then checks what it must keep.
async fn after(env: &Env, what: &str, before: &Value, done: impl Fn(&Value) -> bool) {
    wait_for(&env.sim, PATIENCE, what, || async {
        let now = pod(env).await;
        if done(&now) { Ok(()) } else { Err(serde_json::to_string(&now["status"]).unwrap_or_default()) }
    })
    .await;
    assert_eq!(untouched(&pod(env).await), *before, "after: {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fields_the_pod_cache_does_not_keep_survive_every_write_kcm_rs_makes_to_a_pod() {
    let config = SimConfig {
        kubelet: KubeletConfig { heartbeat_period: Duration::from_secs(1), ..KubeletConfig::default() },
        ..SimConfig::default()
    };
    let env = start_with(config, FLAGS, |_| {}).await;
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), "default");
    let body = json!({
        "metadata": {
            "name": "keeper", "labels": {"app": "keeper", "team": "storage"},
            "annotations": {"example.com/note": "kept"}, "finalizers": ["example.com/hold"],
        },
        "spec": {
            "nodeName": "node-1",
            "containers": [{
                "name": "c", "image": "registry.example.com/keeper:1",
                "env": [{"name": "MODE", "value": "primary"}], "ports": [{"name": "http", "containerPort": 8080}],
            }],
            "tolerations": [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 1}],
        },
    });
    pods.create(&PostParams::default(), &serde_json::from_value(body).expect("pod")).await.expect("created");
    wait_for(&env.sim, PATIENCE, "the pod Ready", || async {
        let p = pod(&env).await;
        if condition(&p, "Ready") == Some("True") { Ok(()) } else { Err(p["status"].to_string()) }
    })
    .await;
    let before = untouched(&pod(&env).await);
    assert_eq!(before["podIP"].as_str().map(|ip| ip.is_empty()), Some(false), "the kubelet set podIP: {before}");

    let rs = json!({
        "metadata": {"name": "keeper"},
        "spec": {
            "replicas": 1, "selector": {"matchLabels": {"app": "keeper"}},
            "template": {"metadata": {"labels": {"app": "keeper"}}, "spec": {"containers": [{"name": "c", "image": "registry.example.com/keeper:1"}]}},
        },
    });
    let replica_sets: Api<ReplicaSet> = Api::namespaced(env.client.clone(), "default");
    replica_sets.create(&PostParams::default(), &serde_json::from_value(rs).expect("rs")).await.expect("created");
    after(&env, "adopted by the ReplicaSet", &before, |p| p["metadata"]["ownerReferences"][0]["name"] == "keeper")
        .await;

    env.sim.controls().stop_node("node-1").expect("node-1 exists");
    after(&env, "marked not Ready, given DisruptionTarget and deleted", &before, |p| {
        condition(p, "Ready") == Some("False")
            && condition(p, "DisruptionTarget") == Some("True")
            && p["metadata"]["deletionTimestamp"].is_string()
    })
    .await;

    let orphan = DeleteParams { propagation_policy: Some(PropagationPolicy::Orphan), ..DeleteParams::default() };
    replica_sets.delete("keeper", &orphan).await.expect("deleted");
    after(&env, "orphaned by the garbage collector", &before, |p| p["metadata"]["ownerReferences"].is_null()).await;
}
