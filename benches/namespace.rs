//! Namespace deletion at scale (`cargo bench --bench namespace`): the
//! release `kcm-rs` binary, only the namespace controller and the default
//! client flags (so the controller's own budget of 400 qps / 3,000 burst),
//! against an in-process kube-sim. Creates 100 namespaces of 20 objects
//! each (10 ConfigMaps, 5 Secrets, 5 Services), deletes every namespace at
//! once, and measures the time until all are gone and the API requests
//! kcm-rs made meanwhile (kube-sim's request counts, minus the benchmark's
//! own deletes and polls).
//!
//! The figures go into docs/benchmarks.md.

use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret, Service};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube_sim::{Sim, SimConfig};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

mod common;

/// Namespaces deleted.
const NAMESPACES: usize = 100;
/// Give up after this long.
const LIMIT: Duration = Duration::from_secs(600);

fn requests(sim: &Sim) -> u64 {
    sim.controls().stats().iter().map(|l| l.count).sum()
}

fn object<K: DeserializeOwned>(v: Value) -> K {
    serde_json::from_value(v).expect("a valid object")
}

async fn populate(client: kube::Client, i: usize) {
    let ns = format!("bench-{i:03}");
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces.create(&PostParams::default(), &object(json!({"metadata": {"name": ns}}))).await.expect("namespace");
    let pp = PostParams::default();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    let services: Api<Service> = Api::namespaced(client, &ns);
    for j in 0..10 {
        cms.create(&pp, &object(json!({"metadata": {"name": format!("cm-{j}")}, "data": {"k": "v"}})))
            .await
            .expect("configmap");
    }
    for j in 0..5 {
        secrets.create(&pp, &object(json!({"metadata": {"name": format!("s-{j}")}}))).await.expect("secret");
        let svc = json!({"metadata": {"name": format!("svc-{j}")}, "spec": {"ports": [{"port": 80}]}});
        services.create(&pp, &object(svc)).await.expect("service");
    }
}

#[tokio::main]
async fn main() {
    let sim = Sim::start(SimConfig { history: 200_000, ..SimConfig::default() }).await.expect("kube-sim starts");
    let (_dir, kubeconfig) = common::kubeconfig(&sim);
    let client = sim.client().expect("client");
    futures::stream::iter(0..NAMESPACES)
        .map(|i| populate(client.clone(), i))
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;

    let mut daemon = common::kcm_rs(&kubeconfig, &["--controllers=namespace-controller"]);
    let namespaces: Api<Namespace> = Api::all(client.clone());
    // Let kcm-rs start and sync before the clock starts.
    tokio::time::sleep(Duration::from_secs(2)).await;

    let before = requests(&sim);
    let start = Instant::now();
    for i in 0..NAMESPACES {
        namespaces.delete(&format!("bench-{i:03}"), &DeleteParams::default()).await.expect("deleted");
    }
    let mut polls = 0u64;
    loop {
        let left = namespaces.list(&ListParams::default()).await.expect("listed");
        polls += 1;
        let remaining =
            left.items.iter().filter(|n| n.metadata.name.as_deref().is_some_and(|n| n.starts_with("bench-"))).count();
        if remaining == 0 {
            break;
        }
        assert!(start.elapsed() < LIMIT, "{remaining} of {NAMESPACES} namespaces left after {LIMIT:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let elapsed = start.elapsed();
    let kcm_requests = requests(&sim) - before - NAMESPACES as u64 - polls;
    println!(
        "namespace deletion: {NAMESPACES} namespaces x 20 objects: all gone {:.1} s after the deletes \
         (including upstream's 5 s grace); kcm-rs API requests: {kcm_requests} ({:.1} per namespace)",
        elapsed.as_secs_f64(),
        kcm_requests as f64 / NAMESPACES as f64,
    );
    let _ = daemon.kill().await;
}
