//! Deployment controller at scale (`cargo bench --bench deployment`): the
//! release `kcm-rs` binary, with no client-side QPS limit and only the
//! Deployment and ReplicaSet controllers, against an in-process kube-sim
//! with 10 nodes. Creates 1,000 Deployments of 5 replicas each and waits
//! until every one has completed its rollout; then changes every
//! Deployment's image and waits until every one has rolled over to it.
//! For each phase it reports the time taken, the API writes kcm-rs made
//! per Deployment (kube-sim's request counts, minus the benchmark's own
//! writes), and at the end kcm-rs's peak resident memory.
//!
//! The figures go into docs/benchmarks.md.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube_sim::kubelet::KubeletConfig;
use kube_sim::{Sim, SimConfig};
use serde_json::json;

mod common;

/// Deployments created.
const DEPLOYMENTS: usize = 1_000;
/// Replicas of each.
const REPLICAS: i32 = 5;
/// Give up on a phase after this long.
const LIMIT: Duration = Duration::from_secs(900);
/// Verbs that write.
const WRITES: [&str; 5] = ["create", "update", "patch", "delete", "deletecollection"];
/// Concurrent requests the benchmark itself sends.
const CONCURRENCY: usize = 32;

fn app(i: usize) -> String {
    format!("app-{i:04}")
}

fn image(version: &str) -> String {
    format!("registry.example.com/app:{version}")
}

fn deployment(i: usize) -> Deployment {
    let app = app(i);
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": app, "namespace": "default"},
        "spec": {
            "replicas": REPLICAS,
            "selector": {"matchLabels": {"app": app}},
            "template": {
                "metadata": {"labels": {"app": app}},
                "spec": {"containers": [{"name": "app", "image": image("1.0")}]},
            },
        },
    }))
    .expect("a valid Deployment")
}

/// Writes so far, by resource.
fn writes(sim: &Sim) -> BTreeMap<String, u64> {
    let mut by_resource = BTreeMap::new();
    for line in sim.controls().stats().iter().filter(|l| WRITES.contains(&l.verb.as_str())) {
        *by_resource.entry(line.resource.clone()).or_insert(0) += line.count;
    }
    by_resource
}

/// kcm-rs's writes per Deployment since `before`, leaving out the
/// benchmark's own one write per Deployment: the total, by resource, and
/// how many were refused with a conflict.
fn per_deployment(sim: &Sim, before: &BTreeMap<String, u64>, before_conflicts: u64) -> String {
    let mut after = writes(sim);
    *after.entry("deployments".into()).or_insert(0) -= DEPLOYMENTS as u64;
    let per = |n: u64| n as f64 / DEPLOYMENTS as f64;
    let diff: Vec<(String, u64)> = after
        .iter()
        .map(|(r, n)| (r.clone(), n - before.get(r).copied().unwrap_or(0)))
        .filter(|(_, n)| *n > 0)
        .collect();
    let total: u64 = diff.iter().map(|(_, n)| n).sum();
    let parts: Vec<String> = diff.iter().map(|(r, n)| format!("{r} {:.1}", per(*n))).collect();
    let conflicts = conflicts(sim) - before_conflicts;
    format!(
        "{:.1} kcm-rs API writes per Deployment: {} ({:.2} of them 409 Conflict)",
        per(total),
        parts.join(", "),
        per(conflicts)
    )
}

/// Writes answered 409 Conflict so far (the benchmark's own never are).
fn conflicts(sim: &Sim) -> u64 {
    let stats = sim.controls().stats();
    stats.iter().filter(|l| WRITES.contains(&l.verb.as_str()) && l.code == 409).map(|l| l.count).sum()
}

/// A Deployment whose rollout to `image` is complete: observed, every
/// replica updated and available, no old pod left.
fn complete(d: &Deployment, image: &str) -> bool {
    let spec_image = d.spec.template.spec.as_ref().map(|s| s.containers[0].image.as_deref());
    let Some(s) = d.status.as_ref() else { return false };
    spec_image == Some(Some(image))
        && s.observed_generation == d.metadata.generation
        && s.replicas == Some(REPLICAS)
        && s.updated_replicas == Some(REPLICAS)
        && s.available_replicas == Some(REPLICAS)
}

/// Waits until every Deployment has completed its rollout to `image`,
/// sampling kcm-rs's memory into `peak_mib`.
async fn wait_complete(api: &Api<Deployment>, image: &str, pid: u32, start: Instant, peak_mib: &mut f64) {
    loop {
        *peak_mib = peak_mib.max(common::resident_mib(pid));
        let list = api.list(&ListParams::default()).await.expect("listed");
        let done = list.items.iter().filter(|d| complete(d, image)).count();
        if done == DEPLOYMENTS {
            return;
        }
        assert!(start.elapsed() < LIMIT, "only {done} of {DEPLOYMENTS} Deployments complete after {LIMIT:?}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::main]
async fn main() {
    let sim = Sim::start(SimConfig {
        nodes: 10,
        kubelet: KubeletConfig { start_delay: Duration::from_millis(500), ..KubeletConfig::default() },
        history: 400_000,
        ..SimConfig::default()
    })
    .await
    .expect("kube-sim starts");
    // The default namespace as kube-controller-manager's serviceaccount and
    // root-ca-certificate-publisher controllers leave it (not run here: only
    // the controller measured is): without its ServiceAccount the API server
    // refuses pods, without kube-root-ca.crt they cannot mount their token.
    kube_sim::testing::provision_namespace(&sim, "default").await;
    let (_dir, kubeconfig) = common::kubeconfig(&sim);
    let mut daemon =
        common::kcm_rs(&kubeconfig, &["--kube-api-qps=0", "--controllers=deployment-controller,replicaset-controller"]);
    let pid = daemon.id().expect("running");
    let api: Api<Deployment> = Api::namespaced(sim.client().expect("client"), "default");
    let mut peak_mib = 0.0f64;

    // Phase 1: create, and wait until every rollout is complete.
    let (before, before_conflicts) = (writes(&sim), conflicts(&sim));
    let start = Instant::now();
    futures::stream::iter(0..DEPLOYMENTS)
        .map(|i| {
            let api = api.clone();
            async move { api.create(&PostParams::default(), &deployment(i)).await.expect("created") }
        })
        .buffer_unordered(CONCURRENCY)
        .collect::<Vec<_>>()
        .await;
    wait_complete(&api, &image("1.0"), pid, start, &mut peak_mib).await;
    let created = start.elapsed();
    let create_writes = per_deployment(&sim, &before, before_conflicts);

    // Phase 2: a new image everywhere, and wait until every rollout is
    // complete (old pods gone).
    let (before, before_conflicts) = (writes(&sim), conflicts(&sim));
    let start = Instant::now();
    let patch = Patch::Merge(json!({"spec": {"template": {"spec": {
        "containers": [{"name": "app", "image": image("2.0")}]}}}}));
    futures::stream::iter(0..DEPLOYMENTS)
        .map(|i| {
            let (api, patch) = (api.clone(), &patch);
            async move { api.patch(&app(i), &PatchParams::default(), patch).await.expect("patched") }
        })
        .buffer_unordered(CONCURRENCY)
        .collect::<Vec<_>>()
        .await;
    wait_complete(&api, &image("2.0"), pid, start, &mut peak_mib).await;
    let rolled = start.elapsed();
    let roll_writes = per_deployment(&sim, &before, before_conflicts);

    println!("deployment rollouts: {DEPLOYMENTS} Deployments x {REPLICAS} replicas");
    println!("  created, all available after {:.1} s; {create_writes}", created.as_secs_f64());
    println!("  new image, all rolled over after {:.1} s; {roll_writes}", rolled.as_secs_f64());
    println!("  kcm-rs peak resident {peak_mib:.0} MiB");
    let _ = daemon.kill().await;
}
