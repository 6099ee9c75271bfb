//! The slim caches lose nothing: kcm-rs caches pods and nodes as
//! projections that keep only what its controllers read, so every write it
//! makes to a pod or a node must leave the fields it does not keep as they
//! were. One pod goes
//! through every write kcm-rs makes to pods: adopted by a ReplicaSet (an
//! ownerReferences patch), marked not Ready by the node lifecycle
//! controller (a status update), given `DisruptionTarget` and deleted by
//! the taint eviction controller (a status patch, a delete), orphaned by
//! the garbage collector (an ownerReferences patch), and, its node tainted
//! out-of-service, marked `Failed` and force-deleted by the pod garbage
//! collector (a status patch, a delete). After each, its
//! spec, the annotation, label and finalizer kcm-rs does not read, and the
//! status fields the kubelet set are unchanged. Its node goes through
//! every write kcm-rs makes to nodes: cordoned (the `unschedulable` taint
//! patch), its TTL annotation put back (the TTL controller's patch), then silent (its conditions set to Unknown by a status update,
//! the unreachable taints patched in); its addresses, capacity, node info,
//! pod CIDR and an annotation are unchanged. A Deployment's ReplicaSet
//! goes through the status write and the update kcm-rs makes from its
//! cached form (its template's spec held as JSON); its template and an
//! annotation are unchanged.

use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, PropagationPolicy};
use kube_sim::SimConfig;
use kube_sim::kubelet::KubeletConfig;
use kube_sim::testing::wait_for;
use serde_json::{Value, json};

use crate::common::{Env, PATIENCE, default_service_account, on_both, start, start_with};

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

/// The parts of the node no write of kcm-rs may change.
fn node_untouched(node: &Value) -> Value {
    let status = &node["status"];
    json!({
        "note": node["metadata"]["annotations"]["example.com/note"], "podCIDR": node["spec"]["podCIDR"],
        "addresses": status["addresses"], "capacity": status["capacity"], "allocatable": status["allocatable"],
        "nodeInfo": status["nodeInfo"],
    })
}

async fn node(env: &Env) -> Value {
    serde_json::to_value(Api::<Node>::all(env.client.clone()).get("node-1").await.expect("node")).expect("json")
}

fn taint_keys(node: &Value) -> Vec<String> {
    let taints = node["spec"]["taints"].as_array().cloned().unwrap_or_default();
    taints
        .iter()
        .map(|t| format!("{}:{}", t["key"].as_str().unwrap_or(""), t["effect"].as_str().unwrap_or("")))
        .collect()
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
    wait_for(&env.cluster, PATIENCE, what, || async {
        let now = pod(env).await;
        if done(&now) { Ok(()) } else { Err(serde_json::to_string(&now["status"]).unwrap_or_default()) }
    })
    .await;
    assert_eq!(untouched(&pod(env).await), *before, "after: {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fields_the_caches_do_not_keep_survive_every_write_kcm_rs_makes_to_a_pod_or_its_node() {
    let config = SimConfig {
        kubelet: KubeletConfig { heartbeat_period: Duration::from_secs(1), ..KubeletConfig::default() },
        ..SimConfig::default()
    };
    let env = start_with(config, FLAGS, |_| {}).await;
    // The API server refuses pods until the namespace has its `default`
    // ServiceAccount, which kcm-rs makes moments after it starts.
    default_service_account(&env.cluster, &env.client, "default").await;
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
    wait_for(&env.cluster, PATIENCE, "the pod Ready", || async {
        let p = pod(&env).await;
        if condition(&p, "Ready") == Some("True") { Ok(()) } else { Err(p["status"].to_string()) }
    })
    .await;
    let before = untouched(&pod(&env).await);
    assert_eq!(before["podIP"].as_str().map(|ip| ip.is_empty()), Some(false), "the kubelet set podIP: {before}");
    let nodes: Api<Node> = Api::all(env.client.clone());
    let note = json!({"metadata": {"annotations": {"example.com/note": "kept"}}});
    nodes.patch("node-1", &PatchParams::default(), &Patch::Merge(&note)).await.expect("annotated");
    let node_before = node_untouched(&node(&env).await);
    assert!(node_before["nodeInfo"]["kubeletVersion"].is_string(), "{node_before}");

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

    let cordon = json!({"spec": {"unschedulable": true}});
    nodes.patch("node-1", &PatchParams::default(), &Patch::Merge(&cordon)).await.expect("cordoned");
    wait_for(&env.cluster, PATIENCE, "node-1 tainted unschedulable", || async {
        let keys = taint_keys(&node(&env).await);
        if keys.contains(&"node.kubernetes.io/unschedulable:NoSchedule".to_owned()) {
            Ok(())
        } else {
            Err(format!("{keys:?}"))
        }
    })
    .await;
    assert_eq!(node_untouched(&node(&env).await), node_before, "after the unschedulable taint");

    let ttl = json!({"metadata": {"annotations": {"node.alpha.kubernetes.io/ttl": "300"}}});
    nodes.patch("node-1", &PatchParams::default(), &Patch::Merge(&ttl)).await.expect("TTL edited");
    wait_for(&env.cluster, PATIENCE, "node-1's TTL put back to 0", || async {
        let n = node(&env).await;
        let ttl = &n["metadata"]["annotations"]["node.alpha.kubernetes.io/ttl"];
        if ttl == "0" { Ok(()) } else { Err(format!("TTL {ttl}")) }
    })
    .await;
    assert_eq!(node_untouched(&node(&env).await), node_before, "after the TTL annotation patch");

    env.cluster.controls().stop_node("node-1").expect("node-1 exists");
    after(&env, "marked not Ready, given DisruptionTarget and deleted", &before, |p| {
        condition(p, "Ready") == Some("False")
            && condition(p, "DisruptionTarget") == Some("True")
            && p["metadata"]["deletionTimestamp"].is_string()
    })
    .await;
    let silent = node(&env).await;
    let ready =
        silent["status"]["conditions"].as_array().and_then(|cs| cs.iter().find(|c| c["type"] == "Ready")).cloned();
    assert_eq!(ready.as_ref().map(|c| c["status"].clone()), Some(json!("Unknown")), "{silent}");
    assert!(taint_keys(&silent).contains(&"node.kubernetes.io/unreachable:NoExecute".to_owned()), "{silent}");
    assert_eq!(node_untouched(&silent), node_before, "after the status update and the unreachable taints");

    let orphan = DeleteParams { propagation_policy: Some(PropagationPolicy::Orphan), ..DeleteParams::default() };
    replica_sets.delete("keeper", &orphan).await.expect("deleted");
    after(&env, "orphaned by the garbage collector", &before, |p| p["metadata"]["ownerReferences"].is_null()).await;

    let out_of_service = json!([{"op": "add", "path": "/spec/taints/-",
        "value": {"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown", "effect": "NoExecute"}}]);
    let out_of_service = Patch::<()>::Json(serde_json::from_value(out_of_service).expect("a JSON patch"));
    nodes.patch("node-1", &PatchParams::default(), &out_of_service).await.expect("tainted");
    after(&env, "marked Failed and force-deleted by the pod garbage collector", &before, |p| {
        p["status"]["phase"] == "Failed" && p["metadata"]["deletionGracePeriodSeconds"] == 0
    })
    .await;
}

on_both!(templates_and_the_fields_kcm_rs_does_not_write_survive_its_writes_to_a_deployment_and_its_replica_set);
on_both!(a_jobs_pods_get_its_whole_template_and_its_status_writes_keep_what_kcm_rs_does_not_write);

/// The parts of a ReplicaSet (or a Deployment) no write of kcm-rs may
/// change.
fn replica_set_untouched(rs: &Value) -> Value {
    json!({
        "uid": rs["metadata"]["uid"], "note": rs["metadata"]["annotations"]["example.com/note"],
        "labels": rs["metadata"]["labels"], "template": rs["spec"]["template"], "selector": rs["spec"]["selector"],
    })
}

/// kcm-rs caches Deployments and ReplicaSets with their template's spec
/// as JSON text, and writes the whole object back from it: the ReplicaSet
/// controller a ReplicaSet's status, the Deployment controller its size
/// and annotations (an update) and the Deployment's status. A Deployment
/// and its ReplicaSet, their template rich in what a pod spec can hold (an
/// `emptyDir: {}` volume, probes, an environment, resources), each given
/// an annotation by a user, go through those writes; their templates,
/// selectors, labels and the annotations are unchanged.
async fn templates_and_the_fields_kcm_rs_does_not_write_survive_its_writes_to_a_deployment_and_its_replica_set() {
    let env = start().await;
    default_service_account(&env.cluster, &env.client, &env.ns).await;
    let deployments: Api<Deployment> = Api::namespaced(env.client.clone(), &env.ns);
    let body = json!({
        "metadata": {"name": "keeper"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "keeper"}}, "template": {
            "metadata": {"labels": {"app": "keeper"}, "annotations": {"example.com/owner": "storage"}},
            "spec": {
                "containers": [{"name": "c", "image": "registry.example.com/keeper:1",
                    "env": [{"name": "MODE", "value": "primary"}], "ports": [{"name": "http", "containerPort": 8080}],
                    "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}},
                    "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}},
                    "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}]}],
                "volumes": [{"name": "scratch", "emptyDir": {}}],
            }}},
    });
    deployments
        .create(&PostParams::default(), &serde_json::from_value(body).expect("a Deployment"))
        .await
        .expect("made");
    let replica_sets: Api<ReplicaSet> = Api::namespaced(env.client.clone(), &env.ns);
    let the_set = || async {
        let list = replica_sets.list(&Default::default()).await.map_err(|e| e.to_string())?;
        let [rs] = &list.items[..] else { return Err(format!("{} ReplicaSets", list.items.len())) };
        serde_json::to_value(rs).map_err(|e| e.to_string())
    };
    // The ReplicaSet controller's status write.
    let first = wait_for(&env.cluster, PATIENCE, "the ReplicaSet's status to count its pod", || async {
        let rs = the_set().await?;
        if rs["status"]["readyReplicas"] == 1 { Ok(rs) } else { Err(rs["status"].to_string()) }
    })
    .await;
    let name = first["metadata"]["name"].as_str().expect("a name").to_owned();
    assert_eq!(first["spec"]["template"]["spec"]["volumes"][0]["emptyDir"], json!({}), "{first}");
    let note = json!({"metadata": {"annotations": {"example.com/note": "kept"}}});
    replica_sets.patch(&name, &PatchParams::default(), &Patch::Merge(&note)).await.expect("annotated");
    let before = replica_set_untouched(&the_set().await.expect("read"));
    deployments.patch("keeper", &PatchParams::default(), &Patch::Merge(&note)).await.expect("annotated");
    let deployment = || async { serde_json::to_value(deployments.get("keeper").await.expect("read")).expect("JSON") };
    let deployment_before = replica_set_untouched(&deployment().await);

    // The Deployment controller's update (size and annotations), then the
    // status write again.
    let scale = json!({"spec": {"replicas": 3}});
    deployments.patch("keeper", &PatchParams::default(), &Patch::Merge(&scale)).await.expect("scaled");
    let scaled = wait_for(&env.cluster, PATIENCE, "the ReplicaSet scaled to 3 and its pods ready", || async {
        let rs = the_set().await?;
        let desired = &rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"];
        if rs["spec"]["replicas"] == 3 && desired == "3" && rs["status"]["readyReplicas"] == 3 {
            Ok(rs)
        } else {
            Err(format!("{} {desired} {}", rs["spec"]["replicas"], rs["status"]))
        }
    })
    .await;
    assert_eq!(replica_set_untouched(&scaled), before);
    wait_for(&env.cluster, PATIENCE, "the Deployment's status to count 3 ready pods", || async {
        let d = deployment().await;
        if d["status"]["readyReplicas"] == 3 { Ok(()) } else { Err(d["status"].to_string()) }
    })
    .await;
    assert_eq!(replica_set_untouched(&deployment().await), deployment_before);
}

/// kcm-rs caches Jobs with their template's spec as JSON text: it decodes
/// it to create a pod, and writes a Job's status from the whole object
/// given back (an API server keeps the spec and most metadata as they were
/// on a status write; the whole object is sent anyway, as upstream sends
/// it). A Job with a rich template and a user's annotation grows from one
/// pod to two: both pods carry the whole template (this fails when a pod is
/// made from the cached object's template, whose spec is not kept), and
/// the template, selector, labels and annotation are unchanged.
async fn a_jobs_pods_get_its_whole_template_and_its_status_writes_keep_what_kcm_rs_does_not_write() {
    let env = start().await;
    default_service_account(&env.cluster, &env.client, &env.ns).await;
    let jobs: Api<Job> = Api::namespaced(env.client.clone(), &env.ns);
    let body = json!({
        "metadata": {"name": "keeper"},
        "spec": {"parallelism": 1, "completions": 2, "template": {
            "metadata": {"annotations": {"example.com/owner": "batch"}},
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "c", "image": "registry.example.com/keeper:1",
                    "env": [{"name": "MODE", "value": "batch"}],
                    "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}},
                    "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}]}],
                "volumes": [{"name": "scratch", "emptyDir": {}}],
            }}},
    });
    jobs.create(&PostParams::default(), &serde_json::from_value(body).expect("a Job")).await.expect("made");
    let job = || async { serde_json::to_value(jobs.get("keeper").await.expect("read")).expect("JSON") };
    job_counts(&env, &jobs, 1).await;
    let note = json!({"metadata": {"annotations": {"example.com/note": "kept"}}});
    jobs.patch("keeper", &PatchParams::default(), &Patch::Merge(&note)).await.expect("annotated");
    let before = replica_set_untouched(&job().await);
    assert_eq!(before["template"]["spec"]["volumes"][0]["emptyDir"], json!({}), "{before}");

    let wider = json!({"spec": {"parallelism": 2}});
    jobs.patch("keeper", &PatchParams::default(), &Patch::Merge(&wider)).await.expect("widened");
    let after = job_counts(&env, &jobs, 2).await;
    assert_eq!(replica_set_untouched(&after), before, "only the status and the parallelism changed");
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    let made = pods.list(&Default::default()).await.expect("pods listed");
    assert_eq!(made.items.len(), 2, "two pods");
    for pod in made.items {
        let pod = serde_json::to_value(pod).expect("JSON");
        let spec = &pod["spec"];
        assert_eq!(
            (
                &spec["volumes"][0],
                &spec["containers"][0]["env"][0],
                &pod["metadata"]["annotations"]["example.com/owner"]
            ),
            (&json!({"name": "scratch", "emptyDir": {}}), &json!({"name": "MODE", "value": "batch"}), &json!("batch")),
            "{pod}"
        );
    }
}

/// Waits until Job `keeper` counts `pods` active and ready pods; the Job.
async fn job_counts(env: &Env, jobs: &Api<Job>, pods: i64) -> Value {
    wait_for(&env.cluster, PATIENCE, &format!("the Job's status to count {pods} ready pods"), || async {
        let job = serde_json::to_value(jobs.get("keeper").await.map_err(|e| e.to_string())?).expect("JSON");
        if job["status"]["active"] == pods && job["status"]["ready"] == pods {
            Ok(job)
        } else {
            Err(job["status"].to_string())
        }
    })
    .await
}
