//! End-to-end scenarios spanning several controllers: the daemon with its
//! default controller set against kube-sim, driven by kubectl, as a user of
//! a whole kube-controller-manager sees it.
//!
//! - Deleting a Deployment (garbage collector, Deployment and ReplicaSet
//!   controllers): in the background its ReplicaSets and pods go; in the
//!   foreground the pods, then the ReplicaSets, then the Deployment; orphaned,
//!   the ReplicaSet and its running pods stay, without the Deployment's
//!   reference.
//! - A dead node (node lifecycle, taint eviction, ReplicaSet and Deployment
//!   controllers): its pods go not Ready, are evicted once their
//!   `tolerationSeconds` for the unreachable taint end and are replaced on
//!   other nodes; started again, its taints go. With every node dead (full
//!   disruption), nothing is tainted `NoExecute` and nothing is evicted.
//!
//! - A node removed from the cluster (pod garbage collector, ReplicaSet and
//!   Deployment controllers): its pods, bound to a node that is gone, are
//!   marked Failed and deleted once the node has been gone for the pod
//!   garbage collector's quarantine, and replaced on the other nodes.
//!
//! Orders are checked on the resourceVersions watches report (kube-sim's
//! versions are global, as etcd's revisions), never on timings; "nothing
//! happens" is checked after monitor passes the daemon reports, never after
//! a sleep.

use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, ApiResource, ListParams};
use kube_sim::SimConfig;
use kube_sim::kubelet::KubeletConfig;
use kube_sim::testing::{kubectl_ok, wait_for};
use serde::de::DeserializeOwned;
use tokio::process::Command;

use crate::common::collector::{self, Feed};
use crate::common::recorder::{Recorder, assert_foreground};
use crate::common::{Env, PATIENCE, run_ok, start, start_with};

const NS: &str = "default";

const UNREACHABLE: &str = "node.kubernetes.io/unreachable";

const NODES: [&str; 3] = ["node-1", "node-2", "node-3"];

/// Short node grace periods (kube-sim's nodes heartbeat every second, see
/// [`heartbeat_every_second`]); one `NoExecute` taint per zone per second.
const NODE_FLAGS: &[&str] = &[
    "--node-monitor-period=1s",
    "--node-monitor-grace-period=4s",
    "--node-startup-grace-period=8s",
    "--node-eviction-rate=1",
];

// === utils ===

/// Three nodes (one per zone) heartbeating every second.
fn heartbeat_every_second() -> SimConfig {
    SimConfig {
        kubelet: KubeletConfig { heartbeat_period: Duration::from_secs(1), ..KubeletConfig::default() },
        ..SimConfig::default()
    }
}

/// `kubectl create` of Deployment `name` with `replicas` pods; with
/// `tolerate_unreachable`, its pods tolerate the unreachable `NoExecute`
/// taint for that many seconds.
async fn create_deployment(env: &Env, name: &str, replicas: i32, tolerate_unreachable: Option<u32>) {
    let tolerations = tolerate_unreachable
        .map(|s| {
            format!(
                "\n      tolerations:\n      - key: {UNREACHABLE}\n        operator: Exists\n        effect: \
                 NoExecute\n        tolerationSeconds: {s}"
            )
        })
        .unwrap_or_default();
    let manifest = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  namespace: {NS}\nspec:\n  replicas: \
         {replicas}\n  selector:\n    matchLabels:\n      app: {name}\n  template:\n    metadata:\n      labels:\n        \
         app: {name}\n    spec:\n      containers:\n      - name: web\n        image: nginx{tolerations}\n"
    );
    let kubeconfig = format!("--kubeconfig={}", env.kubeconfig.display());
    run_ok("kubectl", &[&kubeconfig, "create", "-f", "-"], Some(&manifest), "see docs/testing.md").await;
}

/// Waits until Deployment `name` reports `replicas` updated, available
/// pods for its current generation; returns its uid.
async fn fully_available(env: &Env, name: &str, replicas: i32) -> String {
    let api: Api<Deployment> = Api::namespaced(env.client.clone(), NS);
    wait_for(&env.cluster, PATIENCE, &format!("Deployment {name} fully available"), || async {
        let d = api.get(name).await.expect("Deployment");
        let s = d.status.clone().unwrap_or_default();
        let counts = (s.replicas, s.updated_replicas, s.ready_replicas, s.available_replicas);
        let current = s.observed_generation >= d.metadata.generation;
        let want = Some(replicas);
        if current && counts == (want, want, want, want) { Ok(()) } else { Err(format!("{counts:?}, {current}")) }
    })
    .await;
    api.get(name).await.expect("Deployment").metadata.uid.expect("uid")
}

/// The objects of `kind` in [`NS`] naming one of `owners` (uids) as owner.
async fn owned<K>(env: &Env, owners: &[String]) -> Vec<K>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope> + Clone + DeserializeOwned + std::fmt::Debug,
    K::DynamicType: Default,
{
    let api: Api<K> = Api::namespaced(env.client.clone(), NS);
    let list = api.list(&ListParams::default()).await.expect("listed").items;
    list.into_iter().filter(|o| o.meta().owner_references.iter().flatten().any(|r| owners.contains(&r.uid))).collect()
}

fn uid_of(o: &impl kube::Resource) -> String {
    o.meta().uid.clone().expect("uid")
}

/// The Deployment's ReplicaSets and their pods, as uids.
async fn chain(env: &Env, deployment: &str) -> (Vec<String>, Vec<String>) {
    let replica_sets: Vec<String> =
        owned::<ReplicaSet>(env, &[deployment.to_owned()]).await.iter().map(uid_of).collect();
    let pods = owned::<Pod>(env, &replica_sets).await.iter().map(uid_of).collect();
    (replica_sets, pods)
}

fn node_name(pod: &Pod) -> &str {
    pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).unwrap_or_default()
}

/// The status of a pod's or node's condition `kind`.
fn condition<'a>(conditions: impl IntoIterator<Item = (&'a str, &'a str)>, kind: &str) -> Option<&'a str> {
    conditions.into_iter().find(|(t, _)| *t == kind).map(|(_, s)| s)
}

fn pod_condition<'a>(pod: &'a Pod, kind: &str) -> Option<&'a str> {
    let conditions = pod.status.as_ref().and_then(|s| s.conditions.as_ref());
    condition(conditions.into_iter().flatten().map(|c| (c.type_.as_str(), c.status.as_str())), kind)
}

fn node_ready(node: &Node) -> Option<&str> {
    let conditions = node.status.as_ref().and_then(|s| s.conditions.as_ref());
    condition(conditions.into_iter().flatten().map(|c| (c.type_.as_str(), c.status.as_str())), "Ready")
}

/// The node's taints as `key:effect`.
fn taints(node: &Node) -> Vec<String> {
    let taints = node.spec.as_ref().and_then(|s| s.taints.as_ref());
    taints.into_iter().flatten().map(|t| format!("{}:{}", t.key, t.effect)).collect()
}

fn tainted_no_execute(node: &Node) -> bool {
    taints(node).contains(&format!("{UNREACHABLE}:NoExecute"))
}

async fn nodes(env: &Env) -> Vec<Node> {
    Api::<Node>::all(env.client.clone()).list(&ListParams::default()).await.expect("nodes").items
}

async fn pods_of(env: &Env, app: &str) -> Vec<Pod> {
    let api: Api<Pod> = Api::namespaced(env.client.clone(), NS);
    api.list(&ListParams::default().labels(&format!("app={app}"))).await.expect("pods").items
}

/// The daemon's `/metrics`.
async fn metrics(env: &Env) -> String {
    let url = format!("https://127.0.0.1:{}/metrics", env.port);
    let out = Command::new("curl").args(["-sk", &url]).output().await.expect("curl runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The value of the first series of `metric` whose labels contain `labels`.
fn sample(body: &str, metric: &str, labels: &str) -> Option<f64> {
    body.lines()
        .filter(|l| l.starts_with(metric) && l.contains(labels))
        .find_map(|l| l.rsplit_once(' ').and_then(|(_, v)| v.parse().ok()))
}

/// Node monitor passes the daemon has run.
fn passes(body: &str) -> f64 {
    sample(body, "node_collector_update_all_nodes_health_duration_seconds_count", "").unwrap_or(0.0)
}

// === garbage collection of Deployments ===

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_delete_deployment_removes_its_replica_sets_and_pods() {
    let env = start().await;
    create_deployment(&env, "web", 2, None).await;
    let uid = fully_available(&env, "web", 2).await;
    let (replica_sets, pods) = chain(&env, &uid).await;
    assert_eq!((replica_sets.len(), pods.len()), (1, 2));

    kubectl_ok(&env.kubeconfig, &["delete", "deployment", "web", "-n", NS, "--timeout=90s"]).await;
    wait_for(&env.cluster, PATIENCE, "the ReplicaSet and its pods gone", || async {
        let (rs, pods) =
            (owned::<ReplicaSet>(&env, std::slice::from_ref(&uid)).await, owned::<Pod>(&env, &replica_sets).await);
        let names: Vec<_> = pods.iter().map(|p| (&p.metadata.name, p.metadata.deletion_timestamp.is_some())).collect();
        if rs.is_empty() && pods.is_empty() { Ok(()) } else { Err(format!("{} ReplicaSets, pods {names:?}", rs.len())) }
    })
    .await;
    // Nothing recreated them: the controllers saw the Deployment go.
    assert!(pods_of(&env, "web").await.is_empty(), "pods of web left");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cascade_foreground_removes_pods_then_replica_sets_then_the_deployment() {
    let env = start().await;
    create_deployment(&env, "web", 2, None).await;
    let uid = fully_available(&env, "web", 2).await;
    let (replica_sets, pods) = chain(&env, &uid).await;
    assert_eq!((replica_sets.len(), pods.len()), (1, 2));
    collector::observed(&env, Feed::ReplicaSets).await;
    collector::observed(&env, Feed::Pods).await;
    let types =
        [ApiResource::erase::<Deployment>(&()), ApiResource::erase::<ReplicaSet>(&()), ApiResource::erase::<Pod>(&())];
    let recorder = Recorder::start(&env, &types).await;

    // kubectl waits until the Deployment is gone.
    kubectl_ok(&env.kubeconfig, &["delete", "deployment", "web", "-n", NS, "--cascade=foreground", "--timeout=90s"])
        .await;
    let api: Api<Deployment> = Api::namespaced(env.client.clone(), NS);
    assert!(api.get_opt("web").await.expect("get").is_none(), "kubectl returned before the Deployment went");

    let everything: Vec<String> = std::iter::once(&uid).chain(&replica_sets).chain(&pods).cloned().collect();
    recorder.deletions(&env, &everything).await;
    let dependents: Vec<String> = replica_sets.iter().chain(&pods).cloned().collect();
    assert_foreground(&recorder, &uid, &dependents);
    // The ReplicaSet was itself deleted in the foreground: held until its
    // pods went.
    for rs in &replica_sets {
        assert_foreground(&recorder, rs, &pods);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cascade_orphan_keeps_the_replica_set_and_its_running_pods() {
    let env = start().await;
    create_deployment(&env, "web", 2, None).await;
    let uid = fully_available(&env, "web", 2).await;
    let (replica_sets, pods) = chain(&env, &uid).await;
    assert_eq!((replica_sets.len(), pods.len()), (1, 2));
    // Orphaning touches only the dependents the collector has observed.
    collector::observed(&env, Feed::ReplicaSets).await;

    kubectl_ok(&env.kubeconfig, &["delete", "deployment", "web", "-n", NS, "--cascade=orphan", "--timeout=90s"]).await;
    let api: Api<Deployment> = Api::namespaced(env.client.clone(), NS);
    assert!(api.get_opt("web").await.expect("get").is_none(), "kubectl returned before the Deployment went");

    // The orphan finalizer goes only once the references are removed.
    let rs_api: Api<ReplicaSet> = Api::namespaced(env.client.clone(), NS);
    let rs = rs_api.list(&ListParams::default()).await.expect("listed").items;
    assert_eq!(rs.iter().map(uid_of).collect::<Vec<_>>(), replica_sets, "the ReplicaSet stays");
    let refs = rs[0].metadata.owner_references.clone().unwrap_or_default();
    assert!(refs.is_empty(), "the ReplicaSet still has owners: {refs:?}");
    assert!(rs[0].metadata.deletion_timestamp.is_none(), "the ReplicaSet is being deleted");
    // Its pods are the same ones, still its own and running.
    let mut kept: Vec<String> = owned::<Pod>(&env, &replica_sets).await.iter().map(uid_of).collect();
    let mut before = pods;
    kept.sort();
    before.sort();
    assert_eq!(kept, before, "the pods stay");
    for pod in pods_of(&env, "web").await {
        let running = pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running");
        assert!(running && pod.metadata.deletion_timestamp.is_none(), "{:?} not running", pod.metadata.name);
    }
    let status = rs_api.get(rs[0].metadata.name.as_deref().expect("named")).await.expect("rs").status;
    assert_eq!(status.and_then(|s| s.ready_replicas), Some(2), "the ReplicaSet's pods stay ready");
}

// === dead nodes ===

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_nodes_pods_are_evicted_after_their_toleration_and_replaced_elsewhere() {
    let env = start_with(heartbeat_every_second(), NODE_FLAGS, |_| {}).await;
    create_deployment(&env, "web", 3, Some(5)).await;
    fully_available(&env, "web", 3).await;
    let pods = pods_of(&env, "web").await;
    let dead = node_name(&pods[0]).to_owned();
    let victims: Vec<String> =
        pods.iter().filter(|p| node_name(p) == dead).filter_map(|p| p.metadata.name.clone()).collect();
    let recorder = Recorder::start(&env, &[ApiResource::erase::<Node>(&()), ApiResource::erase::<Pod>(&())]).await;

    env.cluster.controls().stop_node(&dead).expect("node exists");

    // Replaced on the other nodes: three available pods, none on the dead
    // node but the evicted ones, Terminating there (no kubelet finishes
    // them, as on a real cluster).
    wait_for(&env.cluster, PATIENCE, "web available again without the dead node", || async {
        let pods = pods_of(&env, "web").await;
        let active: Vec<&Pod> = pods.iter().filter(|p| p.metadata.deletion_timestamp.is_none()).collect();
        let on_dead = active.iter().filter(|p| node_name(p) == dead).count();
        let d = Api::<Deployment>::namespaced(env.client.clone(), NS).get("web").await.expect("Deployment");
        let available = d.status.and_then(|s| s.available_replicas);
        if on_dead == 0 && active.len() == 3 && available == Some(3) {
            Ok(())
        } else {
            Err(format!("{} active, {on_dead} on {dead}, {available:?} available", active.len()))
        }
    })
    .await;

    // The node went Unknown and got both unreachable taints.
    let node_states: Vec<(u64, Node)> = recorder.named(&dead);
    let no_schedule = format!("{UNREACHABLE}:NoSchedule");
    let unknown = node_states.iter().find(|(_, n)| node_ready(n) == Some("Unknown")).map(|(rv, _)| *rv);
    let unknown = unknown.unwrap_or_else(|| panic!("{dead} never went Unknown"));
    assert!(node_states.iter().any(|(_, n)| taints(n).contains(&no_schedule)), "{dead} never tainted NoSchedule");
    let (tainted_at, tainted) = node_states
        .iter()
        .find(|(_, n)| tainted_no_execute(n))
        .unwrap_or_else(|| panic!("{dead} never tainted NoExecute"));
    let added = tainted
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .into_iter()
        .flatten()
        .find(|t| t.effect == "NoExecute")
        .and_then(|t| t.time_added.clone())
        .expect("the NoExecute taint carries timeAdded");
    for victim in &victims {
        let states: Vec<(u64, Pod)> = recorder.named(victim);
        let not_ready = states.iter().find(|(_, p)| pod_condition(p, "Ready") == Some("False")).map(|(rv, _)| *rv);
        let disrupted = states.iter().find(|(_, p)| pod_condition(p, "DisruptionTarget") == Some("True"));
        let deleting = states.iter().find(|(_, p)| p.metadata.deletion_timestamp.is_some()).map(|(rv, _)| *rv);
        let (Some(not_ready), Some((disrupted_at, disrupted)), Some(deleting)) = (not_ready, disrupted, deleting)
        else {
            panic!("{victim}: not Ready {not_ready:?}, DisruptionTarget {disrupted:?}, deleting {deleting:?}");
        };
        // Order: the node Unknown, its pod not Ready and the node tainted
        // NoExecute, then the condition, then the deletion.
        assert!(unknown <= not_ready && not_ready < *disrupted_at, "{victim}: {unknown} {not_ready} {disrupted_at}");
        assert!(tainted_at < disrupted_at && *disrupted_at < deleting, "{victim}: {tainted_at} {disrupted_at}");
        // Not before its toleration ended: the condition's time, set when
        // the pod was evicted, is at least tolerationSeconds after the
        // taint's (both as the API stores them, to the second).
        let since = disrupted
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .into_iter()
            .flatten()
            .find(|c| c.type_ == "DisruptionTarget")
            .and_then(|c| c.last_transition_time.clone())
            .expect("the condition carries its time");
        let waited = since.0.duration_since(added.0);
        assert!(waited.as_secs() >= 5, "{victim} evicted {waited:?} after the taint was added, tolerating 5 s");
    }

    // Started again, the node loses its taints and its evicted pods finish.
    env.cluster.controls().start_node(&dead).expect("node exists");
    wait_for(&env.cluster, PATIENCE, "the node Ready, untainted, without pods", || async {
        let node = Api::<Node>::all(env.client.clone()).get(&dead).await.expect("node");
        let left = pods_of(&env, "web").await.iter().filter(|p| node_name(p) == dead).count();
        if node_ready(&node) == Some("True") && taints(&node).is_empty() && left == 0 {
            Ok(())
        } else {
            Err(format!("{:?}, {:?}, {left} pods", node_ready(&node), taints(&node)))
        }
    })
    .await;
    fully_available(&env, "web", 3).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_every_node_dead_nothing_is_tainted_no_execute_or_evicted() {
    let env = start_with(heartbeat_every_second(), NODE_FLAGS, |_| {}).await;
    create_deployment(&env, "web", 3, Some(5)).await;
    fully_available(&env, "web", 3).await;
    let pods: Vec<String> = pods_of(&env, "web").await.iter().map(uid_of).collect();
    let recorder = Recorder::start(&env, &[ApiResource::erase::<Node>(&()), ApiResource::erase::<Pod>(&())]).await;

    // In one go, between two heartbeats of kube-sim (which beats every node
    // at once): the daemon sees every node go silent in the same pass.
    for node in NODES {
        env.cluster.controls().stop_node(node).expect("node exists");
    }
    let disrupted_at = std::cell::Cell::new(0.0);
    wait_for(&env.cluster, PATIENCE, "every node Unknown, every zone at 0% health, every pod not Ready", || async {
        let body = metrics(&env).await;
        let healths: Vec<Option<f64>> =
            ["zone-a", "zone-b", "zone-c"].iter().map(|z| sample(&body, "node_collector_zone_health", z)).collect();
        let unknown = nodes(&env).await.iter().filter(|n| node_ready(n) == Some("Unknown")).count();
        let ready = pods_of(&env, "web").await.iter().filter(|p| pod_condition(p, "Ready") != Some("False")).count();
        disrupted_at.set(passes(&body));
        if healths == [Some(0.0); 3] && unknown == 3 && ready == 0 {
            Ok(())
        } else {
            Err(format!("health {healths:?}, {unknown} nodes Unknown, {ready} pods not marked"))
        }
    })
    .await;
    // Longer than the pods tolerate the taint: every pass of these would
    // have tainted a zone's node NoExecute and the taint would have expired.
    wait_for(&env.cluster, PATIENCE, "six more monitor passes", || async {
        let now = passes(&metrics(&env).await);
        if now >= disrupted_at.get() + 6.0 { Ok(()) } else { Err(format!("{now} passes")) }
    })
    .await;

    for node in nodes(&env).await {
        assert_eq!(taints(&node), [format!("{UNREACHABLE}:NoSchedule")], "{:?}", node.metadata.name);
    }
    let seen = recorder.all();
    for s in &seen {
        // Nodes are the objects outside namespaces.
        if s.object.metadata.namespace.is_none() {
            let node: Node = s.typed();
            assert!(!tainted_no_execute(&node), "{:?} tainted NoExecute at {}", node.metadata.name, s.rv);
        } else {
            let pod: Pod = s.typed();
            let evicted = s.deleted
                || pod.metadata.deletion_timestamp.is_some()
                || pod_condition(&pod, "DisruptionTarget").is_some();
            assert!(!evicted, "{:?} evicted at {}", pod.metadata.name, s.rv);
        }
    }
    let mut now: Vec<String> = pods_of(&env, "web").await.iter().map(uid_of).collect();
    let mut before = pods;
    now.sort();
    before.sort();
    assert_eq!(now, before, "the same pods stay");

    // Back: untainted nodes, the same pods. (kube-sim's kubelet does not
    // post Ready again for the pods the controller marked not Ready, as a
    // real kubelet's status manager does, so their readiness is not
    // checked.)
    for node in NODES {
        env.cluster.controls().start_node(node).expect("node exists");
    }
    wait_for(&env.cluster, PATIENCE, "every node Ready and untainted", || async {
        let nodes = nodes(&env).await;
        let left: Vec<_> = nodes.iter().filter(|n| node_ready(n) != Some("True") || !taints(n).is_empty()).collect();
        let left: Vec<_> = left.iter().map(|n| (&n.metadata.name, node_ready(n), taints(n))).collect();
        if left.is_empty() { Ok(()) } else { Err(format!("{left:?}")) }
    })
    .await;
    let pods = pods_of(&env, "web").await;
    assert!(pods.iter().all(|p| p.metadata.deletion_timestamp.is_none()), "a pod is being deleted");
    let mut after: Vec<String> = pods.iter().map(uid_of).collect();
    after.sort();
    assert_eq!(after, before, "the same pods run on");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removed_nodes_pods_are_collected_and_replaced_on_the_other_nodes() {
    let env = start().await;
    create_deployment(&env, "spread", 3, None).await;
    fully_available(&env, "spread", 3).await;
    let lost: Vec<String> =
        pods_of(&env, "spread").await.iter().filter(|p| node_name(p) == "node-3").map(uid_of).collect();
    assert_eq!(lost.len(), 1, "one pod per node");
    env.cluster.controls().remove_node("node-3").expect("node-3 leaves");
    wait_for(&env.cluster, PATIENCE, "node-3's pod collected, three pods ready on the other nodes", || async {
        let pods = pods_of(&env, "spread").await;
        let placed: Vec<(&str, Option<&str>)> =
            pods.iter().map(|p| (node_name(p), pod_condition(p, "Ready"))).collect();
        let gone = pods.iter().all(|p| !lost.contains(&uid_of(p)));
        let ready = placed.iter().filter(|(n, r)| *n != "node-3" && *r == Some("True")).count();
        if gone && pods.len() == 3 && ready == 3 { Ok(()) } else { Err(format!("{placed:?}")) }
    })
    .await;
    fully_available(&env, "spread", 3).await;
}
