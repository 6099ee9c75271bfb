//! ReplicaSet controller convergence at scale (`cargo bench --bench
//! replicaset`): the release `kcm-rs` binary, with no client-side QPS limit
//! and only the ReplicaSet controller, against an in-process kube-sim with
//! 10 nodes. Creates 1,000 ReplicaSets of 10 replicas each, then measures
//! the time until every ReplicaSet reports 10 ready replicas, the API writes
//! kcm-rs made per ReplicaSet (kube-sim's request counts, minus the
//! benchmark's own creates), and kcm-rs's resident memory.
//!
//! The figures go into docs/benchmarks.md.

use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::ReplicaSet;
use kube::api::{Api, ListParams, PostParams};
use kube_sim::kubelet::KubeletConfig;
use kube_sim::{Sim, SimConfig};
use serde_json::json;

mod common;

/// ReplicaSets created.
const REPLICA_SETS: usize = 1_000;
/// Replicas of each.
const REPLICAS: i32 = 10;
/// Give up after this long.
const LIMIT: Duration = Duration::from_secs(900);
/// Verbs that write.
const WRITES: [&str; 5] = ["create", "update", "patch", "delete", "deletecollection"];

fn replica_set(i: usize) -> ReplicaSet {
    let app = format!("app-{i:04}");
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": app, "namespace": "default"},
        "spec": {
            "replicas": REPLICAS,
            "selector": {"matchLabels": {"app": app}},
            "template": {
                "metadata": {"labels": {"app": app}},
                "spec": {"containers": [{"name": "app", "image": "registry.example.com/app:1.0"}]},
            },
        },
    }))
    .expect("a valid ReplicaSet")
}

fn writes(sim: &Sim) -> u64 {
    sim.controls().stats().iter().filter(|l| WRITES.contains(&l.verb.as_str())).map(|l| l.count).sum()
}

#[tokio::main]
async fn main() {
    let sim = Sim::start(SimConfig {
        nodes: 10,
        kubelet: KubeletConfig { start_delay: Duration::from_millis(500), ..KubeletConfig::default() },
        history: 200_000,
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
    let mut daemon = common::kcm_rs(&kubeconfig, &["--kube-api-qps=0", "--controllers=replicaset-controller"]);
    let pid = daemon.id().expect("running");

    let api: Api<ReplicaSet> = Api::namespaced(sim.client().expect("client"), "default");
    let before = writes(&sim);
    let start = Instant::now();
    futures::stream::iter(0..REPLICA_SETS)
        .map(|i| {
            let api = api.clone();
            async move { api.create(&PostParams::default(), &replica_set(i)).await.expect("created") }
        })
        .buffer_unordered(32)
        .collect::<Vec<_>>()
        .await;
    let created = start.elapsed();
    let mut peak_mib = 0.0f64;
    loop {
        peak_mib = peak_mib.max(common::resident_mib(pid));
        let list = api.list(&ListParams::default()).await.expect("listed");
        let ready =
            list.items.iter().filter(|rs| rs.status.as_ref().and_then(|s| s.ready_replicas) == Some(REPLICAS)).count();
        if ready == REPLICA_SETS {
            break;
        }
        assert!(start.elapsed() < LIMIT, "only {ready} of {REPLICA_SETS} ReplicaSets ready after {LIMIT:?}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let converged = start.elapsed();
    let kcm_writes = writes(&sim) - before - REPLICA_SETS as u64;
    println!(
        "replicaset convergence: {REPLICA_SETS} ReplicaSets x {REPLICAS} replicas: all created in {:.1} s, \
         all Ready after {:.1} s; kcm-rs API writes per ReplicaSet: {:.1}; kcm-rs peak resident {:.0} MiB",
        created.as_secs_f64(),
        converged.as_secs_f64(),
        kcm_writes as f64 / REPLICA_SETS as f64,
        peak_mib
    );
    let _ = daemon.kill().await;
}
