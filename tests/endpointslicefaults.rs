//! EndpointSlices under faults, end to end: the real `kcm-rs` (default
//! controllers) against kube-sim failing a fifth of all writes, with its
//! watches dropped, its history compacted and kcm-rs killed and restarted
//! while pods churn under two Services (one headless).
//!
//! A checker reads every change kube-sim stores, in resourceVersion order
//! (in process, so the faults do not touch it), and holds on every
//! EndpointSlice write:
//! - no slice lists a pod that does not exist or that its Service never
//!   selected;
//! - once a pod is deleted or stops being selected, at most
//!   [`STALE_WRITES_ALLOWED`] writes of a slice may still list it: the
//!   write of a sync that read its cache before the change reached it,
//!   and the request a killed kcm-rs had in flight.
//!
//! At the end every Service's slices list exactly its ready pods, each
//! once, in one slice, and the stray pod no Service selects is in none.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube_sim::faults::{FaultRule, FaultSpec};
use kube_sim::store::{Change, ChangeKind};
use kube_sim::testing::wait_for;
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

use crate::common::{Env, PATIENCE, default_service_account, spawn_on, start};

const NS: &str = "default";
/// The Services under test, both selecting `app: web`.
const SERVICES: [&str; 2] = ["web", "web-headless"];
/// Writes of a slice that may still list a pod after it is gone (see the
/// module doc).
const STALE_WRITES_ALLOWED: u32 = 2;
const SERVICE_NAME: &str = "kubernetes.io/service-name";
const MANAGED_BY: &str = "endpointslice.kubernetes.io/managed-by";

// === the checker ===

/// What the checker knows of one pod.
#[derive(Default)]
struct PodSeen {
    /// Selected by the Services at some point.
    ever_selected: bool,
    /// The resourceVersion at which it was deleted or stopped being
    /// selected, while it is so.
    gone_at: Option<u64>,
}

#[derive(Default)]
struct Checker {
    pods: HashMap<String, PodSeen>,
    /// Writes of a slice that listed a pod after it was gone, by (slice, pod uid).
    stale: HashMap<(String, String), u32>,
    /// The most stale writes seen for one pod in one slice.
    most_stale: u32,
    /// Slice writes checked.
    slice_writes: u64,
    violations: Vec<String>,
}

impl Checker {
    fn observe(&mut self, change: &Change) {
        match &*change.type_key {
            "/pods" => self.pod(change),
            "discovery.k8s.io/endpointslices" => self.slice(change),
            _ => {}
        }
    }

    fn pod(&mut self, change: &Change) {
        let pod = change.object.value();
        if pod["metadata"]["namespace"] != NS {
            return;
        }
        let uid = pod["metadata"]["uid"].as_str().unwrap_or_default().to_owned();
        let selected = change.kind != ChangeKind::Deleted && pod["metadata"]["labels"]["app"] == "web";
        let seen = self.pods.entry(uid).or_default();
        seen.ever_selected |= selected;
        seen.gone_at = match (selected, seen.gone_at) {
            (true, _) => None,
            (false, Some(at)) => Some(at),
            (false, None) => Some(change.rv()),
        };
    }

    fn slice(&mut self, change: &Change) {
        let slice = change.object.value();
        let labels = &slice["metadata"]["labels"];
        let service = labels[SERVICE_NAME].as_str().unwrap_or_default();
        if change.kind == ChangeKind::Deleted || slice["metadata"]["namespace"] != NS || !SERVICES.contains(&service) {
            return;
        }
        let name = slice["metadata"]["name"].as_str().unwrap_or_default().to_owned();
        self.slice_writes += 1;
        for endpoint in slice["endpoints"].as_array().into_iter().flatten() {
            let target = &endpoint["targetRef"];
            let (uid, pod) = (target["uid"].as_str().unwrap_or_default(), target["name"].as_str().unwrap_or_default());
            let Some(seen) = self.pods.get(uid) else {
                self.violations.push(format!("slice {name} (rv {}) lists pod {pod} that never existed", change.rv()));
                continue;
            };
            if !seen.ever_selected {
                self.violations.push(format!("slice {name} (rv {}) lists pod {pod} never selected", change.rv()));
            }
            if seen.gone_at.is_some_and(|gone| gone < change.rv()) {
                let count = self.stale.entry((name.clone(), uid.to_owned())).or_default();
                *count += 1;
                self.most_stale = self.most_stale.max(*count);
                if *count > STALE_WRITES_ALLOWED {
                    self.violations.push(format!(
                        "slice {name} (rv {}) lists pod {pod} for the {count}th write since it was gone",
                        change.rv()
                    ));
                }
            }
        }
    }
}

/// Runs a checker over every change `env`'s kube-sim stores from now on.
fn check(env: &Env) -> Arc<Mutex<Checker>> {
    let checker = Arc::new(Mutex::new(Checker::default()));
    let mut changes = env.cluster.sim().changes();
    let shared = checker.clone();
    tokio::spawn(async move {
        loop {
            match changes.recv().await {
                Ok(change) => shared.lock().unwrap_or_else(|p| p.into_inner()).observe(&change),
                Err(RecvError::Lagged(n)) => {
                    let mut checker = shared.lock().unwrap_or_else(|p| p.into_inner());
                    checker.violations.push(format!("the checker fell {n} changes behind"));
                }
                Err(RecvError::Closed) => return,
            }
        }
    });
    checker
}

// === utils ===

/// Retries `write` (the faults fail a fifth of writes) until it succeeds.
async fn retried<T, F, Fut>(what: &str, mut write: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = kube::Result<T>>,
{
    for _ in 0..50 {
        match write().await {
            Ok(v) => return v,
            Err(kube::Error::Api(e)) if e.code >= 500 => continue,
            Err(e) => panic!("{what}: {e}"),
        }
    }
    panic!("{what}: failed 50 times");
}

fn service(name: &str, headless: bool) -> Service {
    let mut spec = json!({"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": "http"}]});
    if headless {
        spec["clusterIP"] = json!("None");
    }
    serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).expect("a valid Service")
}

fn pod_template(labels: Value) -> Value {
    json!({
        "metadata": {"labels": labels},
        "spec": {"containers": [{"name": "web", "image": "nginx", "ports": [{"name": "http", "containerPort": 8080}]}]},
    })
}

fn deployment(replicas: i32) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}, "template": pod_template(json!({"app": "web"}))},
    }))
    .expect("a valid Deployment")
}

async fn scale(deployments: &Api<Deployment>, replicas: i32) {
    let (patch, params) = (Patch::Merge(json!({"spec": {"replicas": replicas}})), PatchParams::default());
    retried("scaled", || deployments.patch("web", &params, &patch)).await;
}

/// The pods the Services should list: selected, ready, not terminating.
async fn ready_pods(pods: &Api<Pod>) -> Result<BTreeSet<String>, String> {
    let list = pods.list(&ListParams::default().labels("app=web")).await.map_err(|e| e.to_string())?;
    let ready = list.items.into_iter().filter(|p| {
        let conditions = p.status.as_ref().and_then(|s| s.conditions.clone()).unwrap_or_default();
        p.metadata.deletion_timestamp.is_none() && conditions.iter().any(|c| c.type_ == "Ready" && c.status == "True")
    });
    Ok(ready.filter_map(|p| p.metadata.name).collect())
}

/// The pods `service`'s controller-managed slices list, with how many
/// slices there are and whether every endpoint is ready.
async fn listed(slices: &Api<EndpointSlice>, service: &str) -> Result<(Vec<String>, usize, bool), String> {
    let selector = format!("{SERVICE_NAME}={service},{MANAGED_BY}=endpointslice-controller.k8s.io");
    let list = slices.list(&ListParams::default().labels(&selector)).await.map_err(|e| e.to_string())?;
    let endpoints: Vec<_> = list.items.iter().flat_map(|s| s.endpoints.iter().flatten()).collect();
    let all_ready = endpoints.iter().all(|e| e.conditions.as_ref().and_then(|c| c.ready) == Some(true));
    let names = endpoints.iter().filter_map(|e| e.target_ref.as_ref()?.name.clone()).collect();
    Ok((names, list.items.len(), all_ready))
}

/// Waits until every Service's slices list exactly the ready pods.
async fn converged(env: &Env, want_pods: usize) {
    let (pods, slices): (Api<Pod>, Api<EndpointSlice>) =
        (Api::namespaced(env.client.clone(), NS), Api::namespaced(env.client.clone(), NS));
    wait_for(&env.cluster, PATIENCE, "every Service's slices to list exactly its ready pods", || async {
        let ready = ready_pods(&pods).await?;
        if ready.len() != want_pods {
            return Err(format!("{} ready pods: {ready:?}", ready.len()));
        }
        for service in SERVICES {
            let (names, count, all_ready) = listed(&slices, service).await?;
            let distinct: BTreeSet<String> = names.iter().cloned().collect();
            if distinct != ready || names.len() != distinct.len() || count != 1 || !all_ready {
                return Err(format!("{service}: {count} slices listing {names:?} (all ready: {all_ready})"));
            }
        }
        Ok(())
    })
    .await;
}

// === tests ===

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slices_never_list_unselected_or_long_gone_pods_under_faults_and_converge() {
    let mut env = start().await;
    default_service_account(&env.cluster, &env.client, NS).await;
    let checker = check(&env);
    let write_faults = ["create", "update", "patch", "delete"].map(|verb| FaultRule {
        verb: Some(verb.into()),
        error_rate: 0.2,
        ..Default::default()
    });
    env.cluster.controls().set_faults(FaultSpec { rules: write_faults.to_vec() }).expect("faults set");

    let services: Api<Service> = Api::namespaced(env.client.clone(), NS);
    let deployments: Api<Deployment> = Api::namespaced(env.client.clone(), NS);
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), NS);
    let (post, patch, delete) = (PostParams::default(), PatchParams::default(), DeleteParams::default());
    for (name, headless) in [(SERVICES[0], false), (SERVICES[1], true)] {
        let service = service(name, headless);
        retried("Service created", || services.create(&post, &service)).await;
    }
    let mut stray = pod_template(json!({"app": "other"}));
    stray["metadata"]["name"] = json!("stray");
    let stray: Pod = serde_json::from_value(stray).expect("a valid pod");
    retried("stray pod created", || pods.create(&post, &stray)).await;
    let deployment = deployment(5);
    retried("Deployment created", || deployments.create(&post, &deployment)).await;
    converged(&env, 5).await;

    // Churn: more pods, one relabelled out of the Services, one deleted.
    scale(&deployments, 8).await;
    let names: Vec<String> = ready_pods(&pods).await.expect("pods listed").into_iter().collect();
    let relabel = Patch::Merge(json!({"metadata": {"labels": {"app": "gone"}}}));
    retried("pod relabelled", || pods.patch(&names[0], &patch, &relabel)).await;
    retried("pod deleted", || pods.delete(&names[1], &delete)).await;

    // The watches dropped, the history compacted: every informer resumes or relists.
    env.cluster.controls().drop_watches();
    env.cluster.controls().compact();
    scale(&deployments, 6).await;

    // kcm-rs killed with work in hand, and started again.
    scale(&deployments, 3).await;
    env.daemon.kill().await.expect("kcm-rs killed");
    env.daemon = spawn_on(&env.kubeconfig, env.port, &[]);
    let rollout = Patch::Merge(json!({"spec": {"template": {"metadata": {"annotations": {"revision": "2"}}}}}));
    retried("rolled out", || deployments.patch("web", &patch, &rollout)).await;
    converged(&env, 3).await;

    let checker = checker.lock().unwrap_or_else(|p| p.into_inner());
    assert!(checker.violations.is_empty(), "invariants broken:\n{}", checker.violations.join("\n"));
    assert!(checker.slice_writes > 0, "the checker saw no slice written");
    let stats = env.cluster.controls().stats();
    let failed =
        stats.iter().filter(|l| l.resource == "endpointslices" && l.code == 500 && l.user_agent.starts_with("kcm-rs"));
    assert!(failed.count() > 0, "no EndpointSlice write of kcm-rs met a fault");
    println!(
        "slice writes checked: {}; most writes of a slice still listing a gone pod: {}",
        checker.slice_writes, checker.most_stale
    );
}
