//! Taint eviction at scale (`cargo bench --bench tainteviction`): the
//! release `kcm-rs` binary, only the taint-eviction-controller, against an
//! in-process kube-sim. Binds 300 pods that tolerate nothing to `node-1`,
//! taints it `NoExecute`, and measures the time until every pod is being
//! deleted and the API requests kcm-rs made meanwhile (kube-sim's request
//! counts, minus the benchmark's own taint and polls). Run twice: with the
//! default client flags (20 qps, burst 30, as upstream), where the client
//! limiter sets the pace, and with a 1,000 qps client, which shows the
//! controller's own cost.
//!
//! The figures go into docs/benchmarks.md.

use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube_sim::{Sim, SimConfig};
use serde_json::json;

mod common;

/// Pods on the tainted node.
const PODS: usize = 300;
/// Give up after this long.
const LIMIT: Duration = Duration::from_secs(600);

fn requests(sim: &Sim) -> u64 {
    sim.controls().stats().iter().map(|l| l.count).sum()
}

async fn run(client_flags: &[&str]) {
    let sim = Sim::start(SimConfig { history: 200_000, ..SimConfig::default() }).await.expect("kube-sim starts");
    // The default namespace as kube-controller-manager's serviceaccount and
    // root-ca-certificate-publisher controllers leave it (not run here: only
    // the controller measured is): without its ServiceAccount the API server
    // refuses pods, without kube-root-ca.crt they cannot mount their token.
    kube_sim::testing::provision_namespace(&sim, "default").await;
    let (_dir, kubeconfig) = common::kubeconfig(&sim);
    let client = sim.client().expect("client");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    futures::stream::iter(0..PODS)
        .map(|i| {
            let pods = pods.clone();
            async move {
                let pod = json!({"metadata": {"name": format!("p-{i:04}")},
                    "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}]}});
                let pod: Pod = serde_json::from_value(pod).expect("a valid pod");
                pods.create(&PostParams::default(), &pod).await.expect("pod created");
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;

    let mut daemon =
        common::kcm_rs(&kubeconfig, &[&["--controllers=taint-eviction-controller"][..], client_flags].concat());
    // Let kcm-rs start and sync before the clock starts.
    tokio::time::sleep(Duration::from_secs(2)).await;

    let before = requests(&sim);
    let start = Instant::now();
    let nodes: Api<Node> = Api::all(client.clone());
    let taint = json!({"spec": {"taints": [{"key": "maintenance", "effect": "NoExecute"}]}});
    nodes.patch("node-1", &PatchParams::default(), &Patch::Merge(taint)).await.expect("node tainted");
    let mut polls = 0u64;
    loop {
        let left = pods.list(&ListParams::default()).await.expect("listed");
        polls += 1;
        let remaining = left.items.iter().filter(|p| p.metadata.deletion_timestamp.is_none()).count();
        if remaining == 0 {
            break;
        }
        assert!(start.elapsed() < LIMIT, "{remaining} of {PODS} pods not deleted after {LIMIT:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let elapsed = start.elapsed();
    let kcm_requests = requests(&sim) - before - 1 - polls;
    println!(
        "taint eviction ({}): {PODS} pods on a NoExecute-tainted node all being deleted after {:.1} s \
         ({:.0} pods/s); kcm-rs API requests: {kcm_requests} ({:.1} per pod, events included)",
        if client_flags.is_empty() { "default client flags".to_owned() } else { client_flags.join(" ") },
        elapsed.as_secs_f64(),
        PODS as f64 / elapsed.as_secs_f64(),
        kcm_requests as f64 / PODS as f64,
    );
    let _ = daemon.kill().await;
}

#[tokio::main]
async fn main() {
    run(&[]).await;
    run(&["--kube-api-qps=1000", "--kube-api-burst=1000"]).await;
}
