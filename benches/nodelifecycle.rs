//! Node lifecycle controller figures (`cargo bench --bench nodelifecycle`).
//!
//! 1. The sans-IO core: one monitor pass's decisions (classify, assess,
//!    settle, zone states) over 5,000 nodes in 50 zones, first pass (a
//!    restart) and a steady pass with new heartbeats, in microseconds per
//!    node.
//! 2. The release `kcm-rs` binary (only `nodelifecycle`, no client-side QPS
//!    limit, monitor period 1 s, grace 6 s, eviction rate 1,000/s) against
//!    an in-process kube-sim with 300 nodes in 3 zones heartbeating every
//!    2 s: CPU and writes over 20 s of a healthy cluster, then the time from
//!    stopping 30 nodes (10 per zone: the zones stay Normal) until all 30
//!    carry the unreachable `NoExecute` taint, the writes that took, and
//!    peak resident memory.
//!
//! The figures go into docs/benchmarks.md.

use std::hint::black_box;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Event, Node, NodeCondition, NodeStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kcm_controllers::node::monitor::{Config, Monitor};
use kube::api::{Api, ListParams};
use kube_sim::kubelet::KubeletConfig;
use kube_sim::{Sim, SimConfig};

mod common;

/// Nodes of the core benchmark.
const CORE_NODES: usize = 5_000;
/// Nodes of the end-to-end benchmark.
const NODES: usize = 300;
/// Of which stopped.
const STOPPED: usize = 30;
/// Give up after this long.
const LIMIT: Duration = Duration::from_secs(300);
/// Verbs that write.
const WRITES: [&str; 5] = ["create", "update", "patch", "delete", "deletecollection"];

/// Node `i` as the cache holds it.
fn node(i: usize, heartbeat: Timestamp) -> kcm_objects::Node {
    kcm_objects::project(&full_node(i, heartbeat)).expect("a node")
}

fn full_node(i: usize, heartbeat: Timestamp) -> Node {
    Node {
        metadata: ObjectMeta {
            name: Some(format!("node-{i}")),
            uid: Some(format!("uid-{i}")),
            creation_timestamp: Some(Time(Timestamp::UNIX_EPOCH)),
            labels: Some([("topology.kubernetes.io/zone".to_owned(), format!("zone-{}", i % 50))].into()),
            ..ObjectMeta::default()
        },
        spec: None,
        status: Some(NodeStatus {
            conditions: Some(vec![NodeCondition {
                type_: "Ready".into(),
                status: "True".into(),
                last_heartbeat_time: Some(Time(heartbeat)),
                last_transition_time: Some(Time(Timestamp::UNIX_EPOCH)),
                ..NodeCondition::default()
            }]),
            ..NodeStatus::default()
        }),
    }
}

/// One pass of the core over `nodes` at `now`.
fn pass(monitor: &mut Monitor, nodes: &[kcm_objects::Node], now: Timestamp) {
    black_box(monitor.classify(nodes));
    for n in nodes {
        let a = monitor.assess(n, None, now);
        monitor.remember(&n.metadata.name, a.health.clone());
        black_box(monitor.settle(n, &a, now));
    }
    black_box(monitor.finish(now));
}

fn core() {
    let t0 = Timestamp::from_second(1_000_000).expect("valid");
    let first: Vec<kcm_objects::Node> = (0..CORE_NODES).map(|i| node(i, t0)).collect();
    let mut monitor = Monitor::new(Config::default());
    let started = Instant::now();
    pass(&mut monitor, &first, t0);
    let first_pass = started.elapsed();
    let rounds = 20;
    let mut steady = Duration::ZERO;
    for r in 1..=rounds {
        let now = t0 + jiff::SignedDuration::from_secs(5 * r);
        let nodes: Vec<kcm_objects::Node> = (0..CORE_NODES).map(|i| node(i, now)).collect();
        let started = Instant::now();
        pass(&mut monitor, &nodes, now);
        steady += started.elapsed();
    }
    let per_node = |d: Duration| d.as_secs_f64() * 1e6 / CORE_NODES as f64;
    println!(
        "node lifecycle core: {CORE_NODES} nodes in 50 zones: first pass {:.1} ms ({:.2} µs/node), \
         steady pass {:.1} ms ({:.2} µs/node, mean of {rounds})",
        first_pass.as_secs_f64() * 1e3,
        per_node(first_pass),
        steady.as_secs_f64() * 1e3 / f64::from(rounds as u32),
        per_node(steady / rounds as u32),
    );
}

fn writes(sim: &Sim) -> u64 {
    sim.controls().stats().iter().filter(|l| WRITES.contains(&l.verb.as_str())).map(|l| l.count).sum()
}

/// Resident MiB and CPU seconds (user + system) of `pid`.
fn usage(pid: u32) -> (f64, f64) {
    let rss = common::resident_mib(pid);
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> =
        stat.rsplit_once(')').map(|(_, rest)| rest.split_whitespace().collect()).unwrap_or_default();
    // utime and stime are fields 14 and 15; after the ")" they are the 12th and 13th.
    let ticks: f64 = [11, 12].iter().filter_map(|i| fields.get(*i)?.parse::<f64>().ok()).sum();
    (rss, ticks / 100.0)
}

fn tainted(node: &Node) -> bool {
    node.spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .is_some_and(|ts| ts.iter().any(|t| t.key == "node.kubernetes.io/unreachable" && t.effect == "NoExecute"))
}

async fn end_to_end() {
    let sim = Sim::start(SimConfig {
        nodes: NODES,
        kubelet: KubeletConfig { heartbeat_period: Duration::from_secs(2), ..KubeletConfig::default() },
        history: 200_000,
        ..SimConfig::default()
    })
    .await
    .expect("kube-sim starts");
    let (_dir, kubeconfig) = common::kubeconfig(&sim);
    let mut daemon = common::kcm_rs(
        &kubeconfig,
        &[
            "--kube-api-qps=0",
            "--controllers=nodelifecycle",
            "--node-monitor-period=1s",
            "--node-monitor-grace-period=6s",
            "--node-eviction-rate=1000",
        ],
    );
    let pid = daemon.id().expect("running");
    let client = sim.client().expect("client");
    let events: Api<Event> = Api::all(client.clone());
    let nodes: Api<Node> = Api::all(client);
    let start = Instant::now();
    loop {
        let registered = events
            .list(&ListParams::default())
            .await
            .expect("events")
            .items
            .iter()
            .filter(|e| e.reason.as_deref() == Some("RegisteredNode"))
            .count();
        if registered >= NODES {
            break;
        }
        assert!(start.elapsed() < LIMIT, "only {registered} nodes registered");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (_, cpu_before) = usage(pid);
    let writes_before = writes(&sim);
    tokio::time::sleep(Duration::from_secs(20)).await;
    let (rss, cpu_after) = usage(pid);
    let steady_writes = writes(&sim) - writes_before;
    let steady_cpu = (cpu_after - cpu_before) / 20.0 * 100.0;

    let victims: Vec<String> = (1..=STOPPED).map(|i| format!("node-{}", i * (NODES / STOPPED))).collect();
    let writes_before = writes(&sim);
    let stopped_at = Instant::now();
    for v in &victims {
        sim.controls().stop_node(v).expect("node exists");
    }
    let mut peak = rss;
    loop {
        peak = peak.max(usage(pid).0);
        let list = nodes.list(&ListParams::default()).await.expect("nodes").items;
        let done =
            list.iter().filter(|n| victims.contains(n.metadata.name.as_ref().expect("named")) && tainted(n)).count();
        let wrong =
            list.iter().filter(|n| !victims.contains(n.metadata.name.as_ref().expect("named")) && tainted(n)).count();
        assert_eq!(wrong, 0, "a healthy node was tainted");
        if done == STOPPED {
            break;
        }
        assert!(stopped_at.elapsed() < LIMIT, "only {done} of {STOPPED} tainted");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let detected = stopped_at.elapsed();
    let failure_writes = writes(&sim) - writes_before;
    println!(
        "node lifecycle end to end: {NODES} nodes (heartbeat 2 s, grace 6 s, period 1 s): healthy: {steady_cpu:.1}% \
         of a core, {steady_writes} writes in 20 s, resident {rss:.0} MiB; {STOPPED} nodes stopped: all tainted \
         NoExecute after {:.1} s with {failure_writes} writes ({:.1} per node); peak resident {peak:.0} MiB",
        detected.as_secs_f64(),
        failure_writes as f64 / STOPPED as f64,
    );
    let _ = daemon.kill().await;
}

#[tokio::main]
async fn main() {
    core();
    end_to_end().await;
}
