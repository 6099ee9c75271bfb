//! The side-by-side benchmark's `cached` scenario: how much memory each
//! program holds for a large cluster it has nothing to do on.
//!
//! One testbed is filled, straight through the API, with the scale
//! benchmark's converged objects (at `KCM_SCALE=1`: 10,000 Deployments,
//! each with its ReplicaSet and 10 pods, on 1,000 kwok nodes, shaped by a
//! calibration run of kcm-rs), and every pod is left Running. Then each
//! program in turn is started on it with the same controllers and flags,
//! its resident memory read once it has settled and again 30 s later, and
//! stopped. The objects are made directly because a rollout of this size at
//! upstream's default client QPS (20) would take hours for either program.

use std::path::Path;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{Pod, ServiceAccount};
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;

use crate::common::{self, testbed::Testbed};
use crate::objects::{
    CACHED_DEPLOYMENTS, CACHED_NODES, CACHED_REPLICAS, Converged, NAMESPACE, cached_node, create_template_sources, name,
};
use crate::observe;
use crate::{Program, ratio};

/// Give up on any one wait after this long: making 100,000 pods and
/// kwok's starting them take tens of minutes on two cores.
const LIMIT: Duration = Duration::from_secs(10_800);
/// Deployments the benchmark makes at once.
const CONCURRENCY: usize = 32;
/// Resident memory counts as settled once it has moved by less than 2 %
/// over this long...
const SETTLE: Duration = Duration::from_secs(10);
/// ... and no sooner than this after the start, so that a program still
/// between two of its lists is not read early.
const WARM: Duration = Duration::from_secs(30);
/// How long after settling the memory is read again.
const LATER: Duration = Duration::from_secs(30);

/// What one program held.
#[derive(Debug)]
struct Held {
    /// From start until its resident memory settled.
    settled_after: Duration,
    /// Resident memory, settled.
    resident_mib: f64,
    /// ... of which anonymous (heap, stacks), not the binary's pages.
    anonymous_mib: f64,
    /// Resident memory, [`LATER`] after settling.
    later_mib: f64,
    /// Peak resident memory.
    peak_mib: f64,
    /// CPU seconds used in all.
    cpu_seconds: f64,
    /// ReplicaSets and pods in the cluster when it stopped.
    replica_sets: usize,
    pods: usize,
}

/// Runs the scenario and prints its table.
pub async fn run(out: &Path) {
    let (count, nodes) = (common::scaled(CACHED_DEPLOYMENTS), common::scaled(CACHED_NODES));
    let pods = count * CACHED_REPLICAS as usize;
    let converged = Converged::calibrate(CACHED_REPLICAS).await;
    let bed = Testbed::start(nodes, false).await;
    bed.initialize_nodes().await;
    let client = bed.client().await;
    // The ServiceAccount admission refuses a pod whose ServiceAccount is
    // missing, and no controller manager has run here to make it.
    let account: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": "default"}})).expect("a ServiceAccount");
    if let Err(e) =
        Api::<ServiceAccount>::namespaced(client.clone(), NAMESPACE).create(&PostParams::default(), &account).await
    {
        assert!(matches!(&e, kube::Error::Api(s) if s.code == 409), "the default ServiceAccount: {e}");
    }
    create_template_sources(&client).await;

    let start = Instant::now();
    futures::stream::iter(0..count)
        .map(|i| {
            let (converged, client) = (&converged, &client);
            async move { converged.objects(client, &name(i), |j| cached_node(i, j, nodes)).await }
        })
        .buffer_unordered(CONCURRENCY)
        .for_each(|_| async {})
        .await;
    let made = start.elapsed();
    let pod_api: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    loop {
        let pending = pod_api
            .list_metadata(&ListParams::default().fields("status.phase!=Running").limit(1))
            .await
            .expect("pods listed");
        if pending.items.is_empty() {
            break;
        }
        assert!(start.elapsed() < LIMIT, "pods still not Running after {LIMIT:?}");
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    eprintln!(
        "cached: {count} Deployments, {pods} pods on {nodes} nodes made in {:.1} s, all Running after {:.1} s",
        made.as_secs_f64(),
        start.elapsed().as_secs_f64()
    );

    let go = hold(Program::KubeControllerManager, &bed, &client, out).await;
    let rs = hold(Program::KcmRs, &bed, &client, out).await;
    report(count, pods, nodes, &go, &rs);
}

/// Starts `program` on `bed`, reads its memory once settled and again
/// [`LATER`], and stops it.
async fn hold(program: Program, bed: &Testbed, client: &kube::Client, out: &Path) -> Held {
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a port").port();
    let log = out.join(format!("{}-cached.log", program.name()));
    let start = Instant::now();
    let mut child = program.start(bed, port, &log);
    let pid = child.id().expect("running");
    let resident_mib = observe::settled_mib(pid, SETTLE, WARM.saturating_sub(start.elapsed()), LIMIT).await;
    let settled_after = start.elapsed();
    let (anonymous_mib, _) = common::resident_split_mib(pid);
    tokio::time::sleep(LATER).await;
    let held = Held {
        settled_after,
        resident_mib,
        anonymous_mib,
        later_mib: common::resident_mib(pid),
        peak_mib: common::peak_resident_mib(pid),
        cpu_seconds: common::cpu_seconds(pid),
        replica_sets: count::<ReplicaSet>(client).await,
        pods: count::<Pod>(client).await,
    };
    child.kill().await.expect("stopped");
    eprintln!("{}: {held:?}", program.name());
    held
}

/// How many `K` the namespace holds (the list's remaining count).
async fn count<K>(client: &kube::Client) -> usize
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope> + Clone + std::fmt::Debug,
    K: serde::de::DeserializeOwned,
    <K as kube::Resource>::DynamicType: Default,
{
    let list = Api::<K>::namespaced(client.clone(), NAMESPACE)
        .list_metadata(&ListParams::default().limit(1))
        .await
        .expect("listed");
    let rest = list.metadata.remaining_item_count.and_then(|n| usize::try_from(n).ok()).unwrap_or(0);
    list.items.len() + rest
}

fn report(count: usize, pods: usize, nodes: usize, go: &Held, rs: &Held) {
    println!(
        "\n## cached: {count} Deployments, {count} ReplicaSets, {pods} pods, {nodes} nodes, \
         kcm-rs beside kube-controller-manager 1.37.2\n"
    );
    println!("| | kube-controller-manager | kcm-rs | kcm-rs / kcm |");
    println!("|---|---|---|---|");
    let row = |what: &str, g: f64, r: f64, unit: &str| {
        println!("| {what} | {g:.1}{unit} | {r:.1}{unit} | {} |", ratio(r, g));
    };
    row("resident, settled", go.resident_mib, rs.resident_mib, " MiB");
    row("… of which anonymous (heap, stacks)", go.anonymous_mib, rs.anonymous_mib, " MiB");
    row(&format!("resident, {} s later", LATER.as_secs()), go.later_mib, rs.later_mib, " MiB");
    row("resident, peak", go.peak_mib, rs.peak_mib, " MiB");
    row("start until settled", go.settled_after.as_secs_f64(), rs.settled_after.as_secs_f64(), " s");
    row("CPU, whole run", go.cpu_seconds, rs.cpu_seconds, " s");
    println!(
        "| ReplicaSets / pods when it stopped | {} / {} | {} / {} | - |",
        go.replica_sets, go.pods, rs.replica_sets, rs.pods
    );
}
