//! The node lifecycle controller end to end: the real `kcm-rs` binary
//! (only `nodelifecycle` selected, with short grace periods set by flags)
//! against kube-sim, whose nodes heartbeat every second.
//!
//! A node whose heartbeats stop (`POST /sim/v1/nodes/{name}/stop`) goes
//! Unknown with upstream's reason, gets both unreachable taints
//! (`NoSchedule` at once, `NoExecute` through its zone's queue), its pods
//! go not Ready, with upstream's events; started again, its taints go.
//! With every node stopped, no `NoExecute` taint is ever added (full
//! disruption) until a node is back. A restarted daemon clears a silent
//! node's `NoExecute` taint and puts it back. `kubectl cordon` and a relabelled
//! node are followed, and a healthy cluster costs no writes. Every test
//! waits on conditions, never on timings.

use std::cell::Cell;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::TryStreamExt;
use k8s_openapi::api::core::v1::{Event, Node, Pod};
use kube::api::{Api, ListParams, PostParams};
use kube::runtime::watcher;
use kube_sim::SimConfig;
use kube_sim::kubelet::KubeletConfig;
use kube_sim::testing::{kubectl_ok, wait_for};
use serde_json::json;
use tokio::process::Command;

use crate::common::{Env, PATIENCE, free_port, spawn_on, start_with};

// === utils ===

const UNREACHABLE: &str = "node.kubernetes.io/unreachable";

/// Grace 5 s, a pass a second, one node per second per zone; with the
/// controllers that give every namespace what its pods need (its `default`
/// ServiceAccount and `kube-root-ca.crt`), as on a real cluster.
const FLAGS: &[&str] = &[
    "--controllers=nodelifecycle,serviceaccount-controller,root-ca-certificate-publisher-controller",
    "--node-monitor-period=1s",
    "--node-monitor-grace-period=5s",
    "--node-startup-grace-period=10s",
    "--node-eviction-rate=1",
];

/// Three nodes (one per zone) heartbeating every second.
fn sim_config() -> SimConfig {
    SimConfig {
        kubelet: KubeletConfig { heartbeat_period: Duration::from_secs(1), ..KubeletConfig::default() },
        ..SimConfig::default()
    }
}

async fn node(env: &Env, name: &str) -> Node {
    Api::<Node>::all(env.client.clone()).get(name).await.expect("node")
}

fn ready(node: &Node) -> (String, Option<String>) {
    let c = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"))
        .expect("Ready condition");
    (c.status.clone(), c.reason.clone())
}

/// The node's taints as `key:effect`.
fn taints(node: &Node) -> Vec<String> {
    node.spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .map(|ts| ts.iter().map(|t| format!("{}:{}", t.key, t.effect)).collect())
        .unwrap_or_default()
}

fn pod_ready(pod: &Pod) -> Option<String> {
    pod.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == "Ready").map(|c| c.status.clone())
}

async fn events(env: &Env) -> Vec<Event> {
    Api::<Event>::all(env.client.clone()).list(&ListParams::default()).await.expect("events").items
}

fn has_event(events: &[Event], kind: &str, name: &str, type_: &str, reason: &str, message: &str) -> bool {
    events.iter().any(|e| {
        e.involved_object.kind.as_deref() == Some(kind)
            && e.involved_object.name.as_deref() == Some(name)
            && e.type_.as_deref() == Some(type_)
            && e.reason.as_deref() == Some(reason)
            && e.message.as_deref() == Some(message)
            && e.source.as_ref().and_then(|s| s.component.as_deref()) == Some("node-controller")
    })
}

async fn metrics(env: &Env) -> String {
    let out = Command::new("curl")
        .args(["-sk", &format!("https://127.0.0.1:{}/metrics", env.port)])
        .output()
        .await
        .expect("curl runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The value of the first series of `metric` whose labels contain `labels`.
fn sample(body: &str, metric: &str, labels: &str) -> Option<f64> {
    body.lines()
        .filter(|l| l.starts_with(metric) && l.contains(labels))
        .find_map(|l| l.rsplit_once(' ').and_then(|(_, v)| v.parse().ok()))
}

/// POSTs a kube-sim node control.
async fn node_control(env: &Env, name: &str, action: &str) {
    let out = Command::new("curl")
        .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST"])
        .arg(format!("{}/sim/v1/nodes/{name}/{action}", env.cluster.sim().url()))
        .output()
        .await
        .expect("curl runs");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "204", "{action} {name}");
}

/// A node's name, resourceVersion and taints, as one watch event showed
/// them.
type Seen = (String, u64, Vec<String>);

/// Every taint each node ever carried, from a watch started before the
/// daemon acts.
struct TaintHistory {
    /// (node, its taints) per watch event.
    seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

impl TaintHistory {
    fn start(env: &Env) -> Self {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let api = Api::<Node>::all(env.client.clone());
        let record = seen.clone();
        let task = tokio::spawn(async move {
            let stream = watcher(api, watcher::Config::default());
            futures::pin_mut!(stream);
            while let Ok(Some(event)) = stream.try_next().await {
                if let watcher::Event::Apply(n) | watcher::Event::InitApply(n) = event {
                    let rv = n.metadata.resource_version.as_deref().and_then(|v| v.parse().ok()).unwrap_or(0);
                    let name = n.metadata.name.clone().unwrap_or_default();
                    record.lock().expect("not poisoned").push((name, rv, taints(&n)));
                }
            }
        });
        TaintHistory { seen, task }
    }

    /// Whether `node` ever carried `taint` (`key:effect`).
    fn ever(&self, node: &str, taint: &str) -> bool {
        self.states(node, 0).iter().any(|ts| ts.iter().any(|t| t == taint))
    }

    /// The taints of `node` in each version after resourceVersion `after`.
    fn states(&self, node: &str, after: u64) -> Vec<Vec<String>> {
        let seen = self.seen.lock().expect("not poisoned");
        seen.iter().filter(|(n, rv, _)| n == node && *rv > after).map(|(_, _, ts)| ts.clone()).collect()
    }
}

impl Drop for TaintHistory {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Monitor passes run so far, from the daemon's metrics.
async fn passes(env: &Env) -> f64 {
    sample(&metrics(env).await, "node_collector_update_all_nodes_health_duration_seconds_count", "").unwrap_or(0.0)
}

/// Waits until `n` more monitor passes have run.
async fn more_passes(env: &Env, n: f64) {
    let from = passes(env).await;
    wait_for(&env.cluster, PATIENCE, "more monitor passes", || async {
        let now = passes(env).await;
        if now >= from + n { Ok(()) } else { Err(format!("{now} passes, from {from}")) }
    })
    .await;
}

/// Node and pod writes the API server answered so far.
fn writes(env: &Env) -> u64 {
    env.cluster
        .controls()
        .stats()
        .iter()
        .filter(|l| {
            matches!(l.verb.as_str(), "update" | "patch")
                && (l.resource.starts_with("nodes") || l.resource == "pods/status")
        })
        .map(|l| l.count)
        .sum()
}

// === tests ===

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_node_is_tainted_unreachable_its_pods_go_not_ready_and_it_recovers() {
    let env = start_with(sim_config(), FLAGS, |_| {}).await;
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), "default");
    let pod = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "registry.example.com/web:1"}]},
    }))
    .expect("pod");
    pods.create(&PostParams::default(), &pod).await.expect("created");
    wait_for(&env.cluster, PATIENCE, "the pod Ready and node-1 registered", || async {
        let ready = pod_ready(&pods.get("web").await.expect("pod"));
        let registered = has_event(
            &events(&env).await,
            "Node",
            "node-1",
            "Normal",
            "RegisteredNode",
            "Node node-1 event: Registered Node node-1 in Controller",
        );
        if ready.as_deref() == Some("True") && registered { Ok(()) } else { Err(format!("{ready:?}, {registered}")) }
    })
    .await;

    node_control(&env, "node-1", "stop").await;
    wait_for(&env.cluster, PATIENCE, "node-1 Unknown with both unreachable taints, its pod not Ready", || async {
        let n = node(&env, "node-1").await;
        let pod = pod_ready(&pods.get("web").await.expect("pod"));
        let ok = ready(&n) == ("Unknown".into(), Some("NodeStatusUnknown".into()))
            && taints(&n).contains(&format!("{UNREACHABLE}:NoSchedule"))
            && taints(&n).contains(&format!("{UNREACHABLE}:NoExecute"))
            && pod.as_deref() == Some("False");
        if ok { Ok(()) } else { Err(format!("{:?} {:?} pod {pod:?}", ready(&n), taints(&n))) }
    })
    .await;
    let n = node(&env, "node-1").await;
    let conditions = n.status.as_ref().and_then(|s| s.conditions.clone()).unwrap_or_default();
    for kind in ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"] {
        let c = conditions.iter().find(|c| c.type_ == kind).expect(kind);
        assert_eq!(
            (c.status.as_str(), c.message.as_deref()),
            ("Unknown", Some("Kubelet stopped posting node status.")),
            "{kind}"
        );
    }
    let no_execute =
        n.spec.as_ref().and_then(|s| s.taints.as_ref()).into_iter().flatten().find(|t| t.effect == "NoExecute");
    assert!(no_execute.and_then(|t| t.time_added.as_ref()).is_some(), "the NoExecute taint carries timeAdded");
    for other in ["node-2", "node-3"] {
        let o = node(&env, other).await;
        assert_eq!((ready(&o).0, taints(&o)), ("True".into(), Vec::<String>::new()), "{other} untouched");
    }
    wait_for(&env.cluster, PATIENCE, "NodeNotReady events on the node and the pod", || async {
        let events = events(&env).await;
        let on_node =
            has_event(&events, "Node", "node-1", "Normal", "NodeNotReady", "Node node-1 status is now: NodeNotReady");
        let on_pod = has_event(&events, "Pod", "web", "Warning", "NodeNotReady", "Node is not ready");
        if on_node && on_pod { Ok(()) } else { Err(format!("node {on_node}, pod {on_pod}")) }
    })
    .await;
    wait_for(&env.cluster, PATIENCE, "upstream's metrics", || async {
        let body = metrics(&env).await;
        let evictions = sample(&body, "node_collector_evictions_total", "zone-a");
        let zones = body.lines().filter(|l| l.starts_with("node_collector_zone_size{")).count();
        let untouched = sample(&body, "node_collector_evictions_total", "zone-b");
        let health = sample(&body, "node_collector_zone_health", "zone-a");
        let queues = ["name=\"node_lifecycle_controller\"", "name=\"node_lifecycle_controller_pods\""]
            .iter()
            .all(|q| body.lines().any(|l| l.starts_with("workqueue_adds_total") && l.contains(q)));
        if evictions == Some(1.0) && untouched == Some(0.0) && zones == 3 && health == Some(0.0) && queues {
            Ok(())
        } else {
            Err(format!("evictions {evictions:?}/{untouched:?}, {zones} zones, health {health:?}, queues {queues}"))
        }
    })
    .await;

    node_control(&env, "node-1", "start").await;
    wait_for(&env.cluster, PATIENCE, "node-1 Ready again without taints", || async {
        let n = node(&env, "node-1").await;
        if ready(&n).0 == "True" && taints(&n).is_empty() {
            Ok(())
        } else {
            Err(format!("{:?} {:?}", ready(&n), taints(&n)))
        }
    })
    .await;
    // The same heartbeat that made it Ready posted the other conditions.
    let n = node(&env, "node-1").await;
    for c in n.status.as_ref().and_then(|s| s.conditions.as_ref()).into_iter().flatten() {
        assert_ne!(c.status, "Unknown", "{} posted again by the kubelet", c.type_);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_every_node_silent_no_noexecute_taint_is_added_until_one_is_back() {
    // The nodes stop before the daemon starts, so its first pass sees all
    // of them alive at once: they go Unknown in the same pass, every zone
    // at once.
    let env = start_with(sim_config(), FLAGS, |sim| {
        for n in ["node-1", "node-2", "node-3"] {
            sim.controls().stop_node(n).expect("node exists");
        }
    })
    .await;
    let history = TaintHistory::start(&env);
    let disrupted_at = Cell::new(0.0);
    wait_for(&env.cluster, PATIENCE, "every node Unknown, every zone at 0% health", || async {
        let body = metrics(&env).await;
        let healths: Vec<f64> = ["zone-a", "zone-b", "zone-c"]
            .iter()
            .filter_map(|z| sample(&body, "node_collector_zone_health", z))
            .collect();
        let mut unknown = 0;
        for n in ["node-1", "node-2", "node-3"] {
            unknown += usize::from(ready(&node(&env, n).await).0 == "Unknown");
        }
        disrupted_at
            .set(sample(&body, "node_collector_update_all_nodes_health_duration_seconds_count", "").unwrap_or(0.0));
        if healths == [0.0, 0.0, 0.0] && unknown == 3 { Ok(()) } else { Err(format!("{healths:?}, {unknown} unknown")) }
    })
    .await;
    // Three more passes: each would have queued and tainted the nodes.
    wait_for(&env.cluster, PATIENCE, "three more monitor passes", || async {
        let now = passes(&env).await;
        let at = disrupted_at.get();
        if now >= at + 3.0 { Ok(()) } else { Err(format!("{now} passes, disrupted at {at}")) }
    })
    .await;
    for n in ["node-1", "node-2", "node-3"] {
        let node = node(&env, n).await;
        assert_eq!(taints(&node), [format!("{UNREACHABLE}:NoSchedule")], "{n}: NoSchedule only");
        assert!(!history.ever(n, &format!("{UNREACHABLE}:NoExecute")), "{n} was never tainted NoExecute");
    }

    // node-1 comes back: the cluster leaves full disruption; zones b and c
    // are now single zones down beside a healthy one, so their nodes get
    // the NoExecute taint; node-1 never does.
    env.cluster.controls().start_node("node-1").expect("node exists");
    wait_for(&env.cluster, PATIENCE, "node-2 and node-3 tainted NoExecute, node-1 Ready", || async {
        let mut seen = Vec::new();
        for n in ["node-1", "node-2", "node-3"] {
            let node = node(&env, n).await;
            seen.push((ready(&node).0, taints(&node)));
        }
        let no_execute = format!("{UNREACHABLE}:NoExecute");
        let ok = seen[0] == ("True".into(), Vec::new())
            && seen[1].1.contains(&no_execute)
            && seen[2].1.contains(&no_execute);
        if ok { Ok(()) } else { Err(format!("{seen:?}")) }
    })
    .await;
    assert!(!history.ever("node-1", &format!("{UNREACHABLE}:NoExecute")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_cordon_and_relabelling_are_followed_and_a_healthy_cluster_costs_no_writes() {
    let env = start_with(sim_config(), FLAGS, |_| {}).await;
    kubectl_ok(&env.kubeconfig, &["cordon", "node-2"]).await;
    wait_for(&env.cluster, PATIENCE, "the unschedulable taint on node-2", || async {
        let t = taints(&node(&env, "node-2").await);
        if t == ["node.kubernetes.io/unschedulable:NoSchedule"] { Ok(()) } else { Err(format!("{t:?}")) }
    })
    .await;
    kubectl_ok(&env.kubeconfig, &["uncordon", "node-2"]).await;
    wait_for(&env.cluster, PATIENCE, "node-2 untainted", || async {
        let t = taints(&node(&env, "node-2").await);
        if t.is_empty() { Ok(()) } else { Err(format!("{t:?}")) }
    })
    .await;
    // The beta arch label follows kubernetes.io/arch.
    kubectl_ok(&env.kubeconfig, &["label", "node", "node-3", "beta.kubernetes.io/arch=arm64", "--overwrite"]).await;
    wait_for(&env.cluster, PATIENCE, "the beta arch label copied back", || async {
        let n = node(&env, "node-3").await;
        let label = n.metadata.labels.as_ref().and_then(|l| l.get("beta.kubernetes.io/arch")).cloned();
        if label.as_deref() == Some("amd64") { Ok(()) } else { Err(format!("{label:?}")) }
    })
    .await;
    // Healthy nodes heartbeating every second: three passes, no write.
    more_passes(&env, 1.0).await;
    let before = writes(&env);
    assert!(before >= 5, "kubectl's and the controller's writes are counted ({before})");
    more_passes(&env, 3.0).await;
    assert_eq!(writes(&env), before, "no node or pod writes at steady state");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_daemon_clears_the_noexecute_taint_of_a_silent_node_and_puts_it_back() {
    let mut env = start_with(sim_config(), FLAGS, |_| {}).await;
    let history = TaintHistory::start(&env);
    let no_execute = format!("{UNREACHABLE}:NoExecute");
    node_control(&env, "node-1", "stop").await;
    wait_for(&env.cluster, PATIENCE, "node-1 tainted NoExecute", || async {
        let t = taints(&node(&env, "node-1").await);
        if t.contains(&no_execute) { Ok(()) } else { Err(format!("{t:?}")) }
    })
    .await;

    // A new instance knows nothing: every node is new to it, so its
    // NoExecute taints are removed (upstream `markNodeAsReachable` on
    // added nodes); node-1's observed Ready is still Unknown, so it is
    // queued and tainted again in the same pass. (A node not yet Unknown
    // gets a full grace period instead: the core's timeline tests.)
    env.daemon.kill().await.expect("killed");
    let killed_at = node(&env, "node-1")
        .await
        .metadata
        .resource_version
        .and_then(|v| v.parse().ok())
        .expect("a numeric resourceVersion");
    env.port = free_port();
    env.daemon = spawn_on(&env.kubeconfig, env.port, FLAGS);
    wait_for(&env.cluster, PATIENCE, "node-1 untainted, then tainted NoExecute again", || async {
        let states = history.states("node-1", killed_at);
        let cleared = states.iter().position(|ts| !ts.contains(&no_execute));
        let again = cleared.is_some_and(|i| states[i..].iter().any(|ts| ts.contains(&no_execute)));
        if again { Ok(()) } else { Err(format!("{states:?}")) }
    })
    .await;
    let n = node(&env, "node-1").await;
    assert_eq!(ready(&n).0, "Unknown");
    assert!(taints(&n).contains(&no_execute));
}
