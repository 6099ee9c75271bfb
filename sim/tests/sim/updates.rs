//! What an update or a patch may change, as the API server decides it:
//! every patch type on `/scale`, the metadata the server owns or freezes
//! (uid, name, namespace, timestamps), the few fields of a pod that may
//! change, immutable spec fields, and optional fields left empty.

use kube_sim::testing::{kubeconfig, kubectl_ok};
use serde_json::{Value, json};

use super::util::{self, Answer, call, get};

// === utils ===

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
const REPLICA_SETS: &str = "/apis/apps/v1/namespaces/default/replicasets";
const PODS: &str = "/api/v1/namespaces/default/pods";
const STRATEGIC: (&str, &str) = ("content-type", "application/strategic-merge-patch+json");
const MERGE: (&str, &str) = ("content-type", "application/merge-patch+json");
const JSON_PATCH: (&str, &str) = ("content-type", "application/json-patch+json");

/// A Deployment or ReplicaSet named `name` with `replicas`.
fn workload(kind: &str, name: &str, replicas: i64) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": kind,
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1"}]},
            },
        },
    })
}

/// A pod named `name`, not yet bound to a node.
fn pod(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "annotations": {"kube-sim.io/ready": "never"}},
        "spec": {
            "schedulerName": "nobody",
            "containers": [{"name": "app", "image": "nginx:1"}],
            "tolerations": [{"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10}],
        },
    })
}

/// Creates `body` in `collection`, which must succeed, and gives it back.
async fn create(client: &kube::Client, collection: &str, body: &Value) -> Value {
    let answer = call(client, "POST", collection, &[], Some(body)).await;
    assert_eq!(answer.code(), 201, "{}", answer.body);
    answer.json()
}

/// Code, reason and message of an answer.
fn refusal(answer: &Answer) -> (u16, String, String) {
    let status = answer.json();
    let text = |k: &str| status[k].as_str().unwrap_or("").to_owned();
    (answer.code(), text("reason"), text("message"))
}

// === scale ===

#[tokio::test]
async fn every_patch_type_works_on_the_scale_subresource() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    for (kind, collection) in [("Deployment", DEPLOYMENTS), ("ReplicaSet", REPLICA_SETS)] {
        create(&client, collection, &workload(kind, "web", 1)).await;
        let scale = format!("{collection}/web/scale");
        // What upstream's conformance test sends.
        let answer = call(&client, "PATCH", &scale, &[STRATEGIC], Some(&json!({"spec": {"replicas": 2}}))).await;
        assert_eq!(answer.code(), 200, "{kind}: {}", answer.body);
        assert_eq!((&answer.json()["kind"], &answer.json()["spec"]["replicas"]), (&json!("Scale"), &json!(2)));
        let answer = call(&client, "PATCH", &scale, &[MERGE], Some(&json!({"spec": {"replicas": 3}}))).await;
        assert_eq!(answer.json()["spec"]["replicas"], 3, "{kind}");
        let ops = json!([{"op": "replace", "path": "/spec/replicas", "value": 4}]);
        let answer = call(&client, "PATCH", &scale, &[JSON_PATCH], Some(&ops)).await;
        assert_eq!(answer.json()["spec"]["replicas"], 4, "{kind}");
        assert_eq!(get(&client, &format!("{collection}/web")).await.json()["spec"]["replicas"], 4, "{kind}");
    }

    let (_dir, config) = kubeconfig(&sim);
    for (patch_type, patch) in [("strategic", r#"{"spec":{"replicas":5}}"#), ("merge", r#"{"spec":{"replicas":6}}"#)] {
        let out = kubectl_ok(
            &config,
            &["patch", "deployment", "web", "--subresource=scale", "--type", patch_type, "-p", patch],
        )
        .await;
        // kubectl names the object it got back.
        assert_eq!(out.trim(), "scale.autoscaling/web patched", "{patch_type}");
    }
    assert_eq!(
        kubectl_ok(&config, &["scale", "replicaset", "web", "--replicas=6"]).await.trim(),
        "replicaset.apps/web scaled"
    );
    assert_eq!(get(&client, &format!("{REPLICA_SETS}/web")).await.json()["spec"]["replicas"], 6);
}
