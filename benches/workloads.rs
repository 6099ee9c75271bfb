//! DaemonSets and StatefulSets at scale (`cargo bench --bench workloads`):
//! the release `kcm-rs` binary with its default controllers and no
//! client-side QPS limit, against an in-process kube-sim.
//!
//! - A DaemonSet across 1,000 nodes: created (a pod on every node, all
//!   ready), then rolled (its template changed; RollingUpdate with
//!   `maxUnavailable: 10%`).
//! - 100 StatefulSets (OrderedReady), created at 0 replicas and scaled up
//!   to 10, then rolled (their template changed).
//!
//! For each phase it prints the time until the status says it is done (as
//! `kubectl rollout status` reads it, and the pods agree), the writes the
//! controller's own client made per pod (kube-sim's request counts by user
//! agent), and kcm-rs's resident memory. `KCM_SCALE` scales the nodes and
//! the StatefulSets (0.1 for a quick look). The figures go into
//! docs/benchmarks.md.

use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{DaemonSet, StatefulSet};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube_sim::{Sim, SimConfig};
use serde_json::json;

mod common;

/// Nodes (and so daemon pods) at `KCM_SCALE=1`.
const NODES: usize = 1_000;
/// StatefulSets at `KCM_SCALE=1`.
const STATEFUL_SETS: usize = 100;
/// Replicas of each StatefulSet once scaled up.
const REPLICAS: i32 = 10;
/// Give up on a phase after this long.
const LIMIT: Duration = Duration::from_secs(1_500);
/// Requests the benchmark keeps in flight while creating or patching.
const CONCURRENCY: usize = 32;
/// The namespace everything lives in.
const NAMESPACE: &str = "default";
/// Verbs that write.
const WRITES: [&str; 5] = ["create", "update", "patch", "delete", "deletecollection"];
/// The user-agent suffix of the DaemonSet controller's client.
const DAEMON_SET_CLIENT: &str = "daemon-set-controller";
/// The user-agent suffix of the StatefulSet controller's client.
const STATEFUL_SET_CLIENT: &str = "statefulset-controller";

/// Writes made so far by the client whose user agent ends in `client`.
fn writes_by(sim: &Sim, client: &str) -> u64 {
    let stats = sim.controls().stats();
    let mine = stats.iter().filter(|l| l.user_agent.ends_with(client) && WRITES.contains(&l.verb.as_str()));
    mine.map(|l| l.count).sum()
}

fn daemon_set() -> DaemonSet {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": NAMESPACE},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "agent", "image": "registry.example.com/agent:1.0"}]},
            },
        },
    }))
    .expect("a valid DaemonSet")
}

fn stateful_set(i: usize) -> StatefulSet {
    let name = format!("db-{i:03}");
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "replicas": 0,
            "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "db", "image": "registry.example.com/db:1.0"}]},
            },
        },
    }))
    .expect("a valid StatefulSet")
}

/// A template change that replaces every pod.
fn roll() -> serde_json::Value {
    json!({"spec": {"template": {"metadata": {"annotations": {"bench/revision": "2"}}}}})
}

/// Whether the DaemonSet has every one of `nodes` pods updated, ready and
/// available, and no other pod is left.
async fn daemon_set_done(daemon_sets: &Api<DaemonSet>, pods: &Api<Pod>, nodes: usize) -> (bool, String) {
    let ds = daemon_sets.get("agent").await.expect("DaemonSet read");
    let status = ds.status.clone().unwrap_or_default();
    let n = nodes as i32;
    let counted = status.observed_generation == ds.metadata.generation
        && status.desired_number_scheduled == n
        && status.current_number_scheduled == n
        && status.updated_number_scheduled == Some(n)
        && status.number_ready == n
        && status.number_available == Some(n)
        && status.number_misscheduled == 0;
    let listed = pods.list(&ListParams::default().labels("app=agent")).await.expect("pods listed").items.len();
    let summary = format!(
        "desired {} current {} updated {:?} ready {} available {:?}; {listed} pods",
        status.desired_number_scheduled,
        status.current_number_scheduled,
        status.updated_number_scheduled,
        status.number_ready,
        status.number_available
    );
    (counted && listed == nodes, summary)
}

/// Whether every StatefulSet has all its replicas updated, ready and
/// available on one revision.
async fn stateful_sets_done(stateful_sets: &Api<StatefulSet>, count: usize) -> (bool, String) {
    let list = stateful_sets.list(&ListParams::default()).await.expect("StatefulSets listed").items;
    let done = list
        .iter()
        .filter(|s| {
            let status = s.status.clone().unwrap_or_default();
            status.observed_generation == s.metadata.generation
                && status.replicas == REPLICAS
                && status.ready_replicas == Some(REPLICAS)
                && status.updated_replicas == Some(REPLICAS)
                && status.available_replicas == Some(REPLICAS)
                && status.current_revision.is_some()
                && status.current_revision == status.update_revision
        })
        .count();
    (done == count, format!("{done} of {count} StatefulSets done"))
}

/// What one phase measured.
struct Phase {
    took: Duration,
    writes: u64,
    peak_mib: f64,
}

/// Waits until `done` says so, printing its summary every 30 s; gives how
/// long from `start` and kcm-rs's peak resident memory on the way.
async fn wait<F, Fut>(start: Instant, pid: u32, mut done: F) -> (Duration, f64)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = (bool, String)>,
{
    let mut peak = 0.0f64;
    let mut next_report = Duration::from_secs(30);
    loop {
        peak = peak.max(common::resident_mib(pid));
        let (finished, summary) = done().await;
        if finished {
            return (start.elapsed(), peak);
        }
        if start.elapsed() >= next_report {
            next_report += Duration::from_secs(30);
            println!("  {:.0} s: {summary}", start.elapsed().as_secs_f64());
        }
        assert!(start.elapsed() < LIMIT, "not done after {LIMIT:?}: {summary}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::main]
async fn main() {
    let (nodes, sets) = (common::scaled(NODES), common::scaled(STATEFUL_SETS));
    let sim = Sim::start(SimConfig { nodes, history: 400_000, ..SimConfig::default() }).await.expect("kube-sim starts");
    let (_dir, kubeconfig) = common::kubeconfig(&sim);
    let mut daemon = common::kcm_rs(&kubeconfig, &["--kube-api-qps=0"]);
    let pid = daemon.id().expect("running");
    let client = sim.client().expect("client");
    let daemon_sets: Api<DaemonSet> = Api::namespaced(client.clone(), NAMESPACE);
    let stateful_sets: Api<StatefulSet> = Api::namespaced(client.clone(), NAMESPACE);
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let patch = PatchParams::default();

    let before = writes_by(&sim, DAEMON_SET_CLIENT);
    let start = Instant::now();
    daemon_sets.create(&PostParams::default(), &daemon_set()).await.expect("DaemonSet created");
    let (took, peak_mib) = wait(start, pid, || daemon_set_done(&daemon_sets, &pods, nodes)).await;
    let created = Phase { took, writes: writes_by(&sim, DAEMON_SET_CLIENT) - before, peak_mib };
    report(&format!("DaemonSet on {nodes} nodes, created"), &created, nodes, pid);

    let before = writes_by(&sim, DAEMON_SET_CLIENT);
    let start = Instant::now();
    daemon_sets.patch("agent", &patch, &Patch::Merge(roll())).await.expect("DaemonSet patched");
    let (took, peak_mib) = wait(start, pid, || daemon_set_done(&daemon_sets, &pods, nodes)).await;
    let rolled = Phase { took, writes: writes_by(&sim, DAEMON_SET_CLIENT) - before, peak_mib };
    report(&format!("DaemonSet on {nodes} nodes, rolled"), &rolled, nodes, pid);

    futures::stream::iter(0..sets)
        .map(|i| {
            let api = stateful_sets.clone();
            async move { api.create(&PostParams::default(), &stateful_set(i)).await.expect("StatefulSet created") }
        })
        .buffer_unordered(CONCURRENCY)
        .collect::<Vec<_>>()
        .await;
    let total = sets * REPLICAS as usize;
    let before = writes_by(&sim, STATEFUL_SET_CLIENT);
    let start = Instant::now();
    patch_all(&stateful_sets, sets, json!({"spec": {"replicas": REPLICAS}})).await;
    let (took, peak_mib) = wait(start, pid, || stateful_sets_done(&stateful_sets, sets)).await;
    let scaled_up = Phase { took, writes: writes_by(&sim, STATEFUL_SET_CLIENT) - before, peak_mib };
    report(&format!("{sets} StatefulSets scaled 0 -> {REPLICAS}"), &scaled_up, total, pid);

    let before = writes_by(&sim, STATEFUL_SET_CLIENT);
    let start = Instant::now();
    patch_all(&stateful_sets, sets, roll()).await;
    let (took, peak_mib) = wait(start, pid, || stateful_sets_done(&stateful_sets, sets)).await;
    let rolled = Phase { took, writes: writes_by(&sim, STATEFUL_SET_CLIENT) - before, peak_mib };
    report(&format!("{sets} StatefulSets x {REPLICAS}, rolled"), &rolled, total, pid);
    let _ = daemon.kill().await;
}

/// Merge-patches each of the `sets` StatefulSets with `change`.
async fn patch_all(stateful_sets: &Api<StatefulSet>, sets: usize, change: serde_json::Value) {
    futures::stream::iter(0..sets)
        .map(|i| {
            let (api, change) = (stateful_sets.clone(), change.clone());
            async move {
                api.patch(&format!("db-{i:03}"), &PatchParams::default(), &Patch::Merge(change))
                    .await
                    .expect("StatefulSet patched")
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect::<Vec<_>>()
        .await;
}

fn report(what: &str, phase: &Phase, pods: usize, pid: u32) {
    println!(
        "workloads, {what}: done after {:.1} s; controller writes per pod {:.2}; kcm-rs resident {:.0} MiB (peak {:.0} MiB)",
        phase.took.as_secs_f64(),
        phase.writes as f64 / pods as f64,
        common::resident_mib(pid),
        phase.peak_mib,
    );
}
