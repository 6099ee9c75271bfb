//! EndpointSlices at scale (`cargo bench --bench endpointslice`): the
//! release `kcm-rs` binary with its default controllers and no client-side
//! QPS limit, against an in-process kube-sim with 10 nodes. 1,000 Services
//! each select the 100 pods of a Deployment of their own (a named target
//! port, resolved per pod); then every Deployment's template changes, so
//! every pod is replaced once.
//!
//! For each phase it prints the time until every Service's EndpointSlices
//! list exactly its ready pods (the Deployment's current ones, each once,
//! ready), the EndpointSlice writes kcm-rs made per Service, and kcm-rs's
//! resident memory. `KCM_SCALE` scales the number of Services (0.1 for a
//! quick look). The figures go into docs/benchmarks.md.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube_sim::{Sim, SimConfig};
use serde_json::json;

mod common;

/// Services (and Deployments) at `KCM_SCALE=1`.
const SERVICES: usize = 1_000;
/// Pods behind each.
const REPLICAS: i32 = 100;
/// Nodes.
const NODES: usize = 10;
/// Give up on a phase after this long.
const LIMIT: Duration = Duration::from_secs(1_800);
/// Requests the benchmark keeps in flight while creating or patching.
const CONCURRENCY: usize = 32;
/// The namespace everything lives in.
const NAMESPACE: &str = "default";
/// Verbs that write.
const WRITES: [&str; 4] = ["create", "update", "patch", "delete"];
/// The label naming a slice's Service.
const SERVICE_NAME: &str = "kubernetes.io/service-name";
/// The label naming a ReplicaSet's (and its pods') template revision.
const HASH_LABEL: &str = "pod-template-hash";

fn name(i: usize) -> String {
    format!("web-{i:04}")
}

fn deployment(name: &str) -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "replicas": REPLICAS,
            "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{
                    "name": "web", "image": "registry.example.com/web:1.0",
                    "ports": [{"name": "http", "containerPort": 8080}],
                }]},
            },
        },
    }))
    .expect("a valid Deployment")
}

fn service(name: &str) -> Service {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"selector": {"app": name}, "ports": [{"name": "http", "port": 80, "targetPort": "http"}]},
    }))
    .expect("a valid Service")
}

/// EndpointSlice writes so far (the benchmark itself writes none).
fn slice_writes(sim: &Sim) -> u64 {
    let stats = sim.controls().stats();
    let slices = stats.iter().filter(|l| l.resource == "endpointslices" && WRITES.contains(&l.verb.as_str()));
    slices.map(|l| l.count).sum()
}

/// What the cluster must show for a phase to be over.
struct Check {
    deployments: Api<Deployment>,
    replica_sets: Api<ReplicaSet>,
    slices: Api<EndpointSlice>,
    services: usize,
}

impl Check {
    /// Whether every Deployment has rolled out all its pods, ready.
    async fn rolled_out(&self) -> bool {
        let list = self.deployments.list(&ListParams::default()).await.expect("Deployments listed");
        let done = list.items.iter().filter(|d| {
            let status = d.status.clone().unwrap_or_default();
            status.observed_generation == d.metadata.generation
                && status.updated_replicas == Some(REPLICAS)
                && status.ready_replicas == Some(REPLICAS)
                && status.replicas == Some(REPLICAS)
        });
        done.count() == self.services
    }

    /// The Services whose slices do not yet list exactly the ready pods of
    /// the current revision, each once, with what is wrong with each.
    async fn wrong_services(&self) -> Vec<(String, String)> {
        let mut current: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for rs in self.replica_sets.list(&ListParams::default()).await.expect("ReplicaSets listed").items {
            let replicas = rs.spec.replicas.unwrap_or(0);
            let labels = rs.metadata.labels.clone().unwrap_or_default();
            if let (true, Some(app), Some(hash)) = (replicas > 0, labels.get("app"), labels.get(HASH_LABEL)) {
                current.entry(app.clone()).or_default().push(hash.clone());
            }
        }
        let mut listed: BTreeMap<String, Listed> = BTreeMap::new();
        for slice in self.slices.list(&ListParams::default()).await.expect("EndpointSlices listed").items {
            let labels = slice.metadata.labels.clone().unwrap_or_default();
            let Some(service) = labels.get(SERVICE_NAME) else { continue };
            let entry = listed.entry(service.clone()).or_default();
            entry.slices += 1;
            for endpoint in slice.endpoints.iter().flatten() {
                let ready = endpoint.conditions.as_ref().and_then(|c| c.ready) == Some(true);
                entry.unready += usize::from(!ready);
                entry.pods.push(endpoint.target_ref.as_ref().and_then(|r| r.name.clone()).unwrap_or_default());
            }
        }
        (0..self.services)
            .map(name)
            .filter_map(|service| {
                let wrong = match (current.get(&service).map(Vec::as_slice), listed.get(&service)) {
                    (None | Some([]), _) => Some("no ReplicaSet with replicas".to_owned()),
                    (Some([_, _, ..]), _) => Some("more than one ReplicaSet with replicas".to_owned()),
                    (_, None) => Some("no slice".to_owned()),
                    (Some([hash]), Some(listed)) => listed.wrong(&format!("{service}-{hash}-")),
                };
                wrong.map(|w| (service, w))
            })
            .collect()
    }

    /// Waits until every Deployment is rolled out and every Service's
    /// slices are right; gives how long that took from `start`, and
    /// kcm-rs's peak resident memory on the way. Every 30 s it prints
    /// how far it is, with the EndpointSlice controller's queue.
    async fn wait(&self, start: Instant, pid: u32, endpoints: &kube::Client) -> (Duration, f64) {
        let mut peak = 0.0f64;
        let mut next_report = Duration::from_secs(30);
        loop {
            peak = peak.max(common::resident_mib(pid));
            let rolled_out = self.rolled_out().await;
            let wrong = if rolled_out { self.wrong_services().await } else { Vec::new() };
            if rolled_out && wrong.is_empty() {
                return (start.elapsed(), peak);
            }
            if start.elapsed() >= next_report {
                next_report += Duration::from_secs(30);
                progress(start, rolled_out, &wrong, endpoints).await;
            }
            assert!(start.elapsed() < LIMIT, "not done after {LIMIT:?}: {} Services' slices wrong", wrong.len());
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}

/// The endpoints of one Service's slices.
#[derive(Default)]
struct Listed {
    slices: usize,
    pods: Vec<String>,
    unready: usize,
}

impl Listed {
    /// What keeps these from being exactly the ready pods named `prefix`*.
    fn wrong(&self, prefix: &str) -> Option<String> {
        let distinct: BTreeSet<&String> = self.pods.iter().collect();
        let old = self.pods.iter().filter(|p| !p.starts_with(prefix)).count();
        let ok =
            self.unready == 0 && self.pods.len() == REPLICAS as usize && distinct.len() == self.pods.len() && old == 0;
        (!ok).then(|| {
            format!(
                "{} slices, {} endpoints ({} distinct), {} unready, {} not {prefix}*",
                self.slices,
                self.pods.len(),
                distinct.len(),
                self.unready,
                old
            )
        })
    }
}

/// Prints how far a phase is: whether the Deployments are rolled out, a
/// few wrong Services, and the `endpoint_slice` queue's depth and retries.
async fn progress(start: Instant, rolled_out: bool, wrong: &[(String, String)], endpoints: &kube::Client) {
    let metrics = common::metrics(endpoints, Duration::from_secs(5)).await.unwrap_or_default();
    let queue: Vec<&str> = metrics
        .lines()
        .filter(|l| {
            l.contains(r#"name="endpoint_slice""#)
                && (l.starts_with("workqueue_depth") || l.starts_with("workqueue_retries_total"))
        })
        .collect();
    let sample: Vec<String> = wrong.iter().take(3).map(|(s, w)| format!("{s}: {w}")).collect();
    println!(
        "  {:.0} s: rolled out {rolled_out}, {} Services wrong [{}]; {}",
        start.elapsed().as_secs_f64(),
        wrong.len(),
        sample.join("; "),
        queue.join(", ")
    );
}

#[tokio::main]
async fn main() {
    let services = common::scaled(SERVICES);
    let sim = Sim::start(SimConfig { nodes: NODES, history: 400_000, ..SimConfig::default() })
        .await
        .expect("kube-sim starts");
    let (_dir, kubeconfig) = common::kubeconfig(&sim);
    let log = std::env::temp_dir().join(format!("kcm-rs-endpointslice-bench-{}.log", std::process::id()));
    let (mut daemon, port) = common::kcm_rs_serving(&kubeconfig, &log, &["--kube-api-qps=0"]);
    println!("kcm-rs logs to {}", log.display());
    let pid = daemon.id().expect("running");
    let endpoints = common::endpoints_client(port);
    let client = sim.client().expect("client");
    let check = Check {
        deployments: Api::namespaced(client.clone(), NAMESPACE),
        replica_sets: Api::namespaced(client.clone(), NAMESPACE),
        slices: Api::namespaced(client.clone(), NAMESPACE),
        services,
    };
    let service_api: Api<Service> = Api::namespaced(client.clone(), NAMESPACE);

    let before = slice_writes(&sim);
    let start = Instant::now();
    futures::stream::iter(0..services)
        .map(|i| {
            let (services, deployments) = (service_api.clone(), check.deployments.clone());
            async move {
                services.create(&PostParams::default(), &service(&name(i))).await.expect("Service created");
                deployments.create(&PostParams::default(), &deployment(&name(i))).await.expect("Deployment created");
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect::<Vec<()>>()
        .await;
    let (created, created_peak) = check.wait(start, pid, &endpoints).await;
    let created_writes = slice_writes(&sim) - before;
    report("created", services, created, created_writes, created_peak, pid);

    let before = slice_writes(&sim);
    let start = Instant::now();
    let change = json!({"spec": {"template": {"metadata": {"annotations": {"bench/revision": "2"}}}}});
    futures::stream::iter(0..services)
        .map(|i| {
            let (deployments, change) = (check.deployments.clone(), change.clone());
            async move {
                deployments.patch(&name(i), &PatchParams::default(), &Patch::Merge(change)).await.expect("patched")
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect::<Vec<_>>()
        .await;
    let (replaced, replaced_peak) = check.wait(start, pid, &endpoints).await;
    let replaced_writes = slice_writes(&sim) - before;
    report("every pod replaced", services, replaced, replaced_writes, replaced_peak, pid);
    let _ = daemon.kill().await;
}

fn report(phase: &str, services: usize, took: Duration, writes: u64, peak_mib: f64, pid: u32) {
    println!(
        "endpointslice, {services} Services x {REPLICAS} pods, {phase}: slices correct after {:.1} s; \
         EndpointSlice writes per Service {:.2}; kcm-rs resident {:.0} MiB (peak {:.0} MiB)",
        took.as_secs_f64(),
        writes as f64 / services as f64,
        common::resident_mib(pid),
        peak_mib,
    );
}
