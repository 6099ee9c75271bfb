//! Containers that run to completion (`kube-sim.io/exit-after` and
//! `kube-sim.io/exit-code`) as a client sees them: the pod's phase, its
//! containers' states and restarts per restart policy, and what `kubectl
//! get pods` prints of them, including pods made from a Job's template.

use kube_sim::testing::{kubeconfig, kubectl_ok, wait_for};
use serde_json::{Value, json};

use super::util::{self, PATIENCE, table};

// === utils ===

/// A pod `name` with one busybox container, the restart policy and
/// annotations given.
fn pod(name: &str, restart_policy: &str, annotations: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "annotations": annotations},
        "spec": {"restartPolicy": restart_policy, "containers": [{"name": "work", "image": "busybox"}]},
    })
}

/// Creates `pod` in `default` and waits until `ok` holds of it.
async fn run_until(sim: &kube_sim::Sim, pod: Value, what: &str, ok: impl Fn(&Value) -> bool) -> Value {
    let client = sim.client().expect("client");
    util::create(&client, "/api/v1/namespaces/default/pods", &pod).await;
    let path = format!("/api/v1/namespaces/default/pods/{}", pod["metadata"]["name"].as_str().expect("name"));
    let ok = &ok;
    wait_for(sim, PATIENCE, what, || {
        let client = client.clone();
        let path = path.clone();
        async move {
            let pod = util::get(&client, &path).await.json();
            if ok(&pod) { Ok(pod) } else { Err(pod["status"].to_string()) }
        }
    })
    .await
}

fn phase(pod: &Value) -> &str {
    pod.pointer("/status/phase").and_then(Value::as_str).unwrap_or("")
}

fn condition<'a>(pod: &'a Value, kind: &str) -> &'a Value {
    let conditions = pod["status"]["conditions"].as_array().expect("conditions");
    conditions.iter().find(|c| c["type"] == kind).unwrap_or_else(|| panic!("no {kind} condition: {pod}"))
}

fn restarts(pod: &Value) -> i64 {
    pod.pointer("/status/containerStatuses/0/restartCount").and_then(Value::as_i64).unwrap_or(0)
}

// === tests ===

#[tokio::test]
async fn a_never_restarting_pod_that_exits_zero_succeeds() {
    let sim = util::start().await;
    let annotations = json!({"kube-sim.io/exit-after": "100ms"});
    let done = run_until(&sim, pod("once", "Never", annotations), "once to succeed", |p| phase(p) == "Succeeded").await;
    let container = &done["status"]["containerStatuses"][0];
    let terminated = &container["state"]["terminated"];
    assert_eq!([&terminated["exitCode"], &terminated["reason"]], [&json!(0), &json!("Completed")], "{done}");
    assert!(terminated["startedAt"].is_string() && terminated["finishedAt"].is_string(), "{done}");
    assert_eq!([&container["ready"], &container["restartCount"]], [&json!(false), &json!(0)]);
    assert_eq!(condition(&done, "Ready")["status"], "False");
    assert_eq!(condition(&done, "Ready")["reason"], "PodCompleted");

    let (_dir, config) = kubeconfig(&sim);
    let rows = table(&kubectl_ok(&config, &["get", "pod", "once"]).await);
    assert_eq!(rows[1][..4], ["once", "0/1", "Completed", "0"]);
}

#[tokio::test]
async fn a_never_restarting_pod_that_exits_non_zero_fails_with_its_code() {
    let sim = util::start().await;
    let annotations = json!({"kube-sim.io/exit-after": "50ms", "kube-sim.io/exit-code": "42"});
    let failed = run_until(&sim, pod("bad", "Never", annotations), "bad to fail", |p| phase(p) == "Failed").await;
    let terminated = &failed["status"]["containerStatuses"][0]["state"]["terminated"];
    assert_eq!([&terminated["exitCode"], &terminated["reason"]], [&json!(42), &json!("Error")], "{failed}");
    assert_eq!(condition(&failed, "Ready")["reason"], "PodFailed");

    let (_dir, config) = kubeconfig(&sim);
    let rows = table(&kubectl_ok(&config, &["get", "pod", "bad"]).await);
    assert_eq!(rows[1][..4], ["bad", "0/1", "Error", "0"]);
}

#[tokio::test]
async fn on_failure_restarts_in_place_and_always_restarts_after_success() {
    let sim = util::start().await;
    let failing = json!({"kube-sim.io/exit-after": "50ms", "kube-sim.io/exit-code": "1"});
    let retried =
        run_until(&sim, pod("retry", "OnFailure", failing), "retry to restart twice", |p| restarts(p) >= 2).await;
    assert_eq!(phase(&retried), "Running", "{retried}");
    let container = &retried["status"]["containerStatuses"][0];
    assert_eq!(container["lastState"]["terminated"]["exitCode"], 1, "{retried}");
    assert_eq!(container["lastState"]["terminated"]["reason"], "Error");
    assert!(container["state"]["running"]["startedAt"].is_string(), "{retried}");

    let succeeding = json!({"kube-sim.io/exit-after": "50ms"});
    let done =
        run_until(&sim, pod("ok", "OnFailure", succeeding.clone()), "ok to succeed", |p| phase(p) == "Succeeded").await;
    assert_eq!(restarts(&done), 0);

    let server = run_until(&sim, pod("server", "Always", succeeding), "server to restart", |p| restarts(p) >= 1).await;
    assert_eq!(phase(&server), "Running", "{server}");
    assert_eq!(server["status"]["containerStatuses"][0]["lastState"]["terminated"]["reason"], "Completed");
}

/// A Job's template annotations reach the pods made from it (here made as
/// the Job controller makes them: the template, owned by the Job).
#[tokio::test]
async fn a_pod_made_from_a_job_template_runs_to_completion() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let job = json!({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi"},
        "spec": {"template": {
            "metadata": {"annotations": {"kube-sim.io/exit-after": "100ms"}},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "pi", "image": "perl:5.34"}]}}},
    });
    let job = util::create(&client, "/apis/batch/v1/namespaces/default/jobs", &job).await;
    let mut from_template = job["spec"]["template"].clone();
    from_template["apiVersion"] = json!("v1");
    from_template["kind"] = json!("Pod");
    from_template["metadata"]["name"] = json!("pi-abcde");
    from_template["metadata"]["ownerReferences"] = json!([{"apiVersion": "batch/v1", "kind": "Job", "name": "pi",
        "uid": job["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true}]);
    let done = run_until(&sim, from_template, "the Job's pod to succeed", |p| phase(p) == "Succeeded").await;
    assert_eq!(done["metadata"]["labels"]["batch.kubernetes.io/job-name"], "pi");
    assert_eq!(done["status"]["containerStatuses"][0]["state"]["terminated"]["reason"], "Completed");
}

/// The scheduler's pod informer leaves finished pods out, so a node whose
/// pods have all finished counts as empty when pods are spread.
#[tokio::test]
async fn finished_pods_no_longer_count_on_their_node() {
    let sim = util::start().await;
    let quick = json!({"kube-sim.io/exit-after": "50ms"});
    let done = run_until(&sim, pod("first", "Never", quick), "first to succeed", |p| phase(p) == "Succeeded").await;
    let next = run_until(&sim, pod("second", "Never", json!({})), "second to run", |p| phase(p) == "Running").await;
    assert_eq!(next["spec"]["nodeName"], done["spec"]["nodeName"], "{next}");
}
