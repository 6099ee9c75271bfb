//! The kubelet and scheduler stand-in: what the nodes of a real cluster do
//! to the objects a controller manager watches.
//!
//! One task follows the store's change feed and a timer heap:
//! - **scheduling**: a pod with no `spec.nodeName` is bound to a Ready,
//!   schedulable node whose taints it tolerates and whose labels match its
//!   `nodeSelector`, the one with the fewest pods (pods spread evenly); a
//!   pod that fits nowhere waits until a node changes;
//! - **start-up**: a bound pod shows `ContainerCreating`, then after the
//!   start-up delay (or its `kube-sim.io/start-delay` annotation) becomes
//!   Running and Ready (or Running and never Ready with
//!   `kube-sim.io/ready: "never"`), and with `kube-sim.io/fail-after` turns
//!   Failed that long after starting;
//! - **graceful deletion**: a pod with `deletionTimestamp` on a node is
//!   removed when its grace period ends, capped by `max_grace` so tests stay
//!   fast (finalizers still hold it, as on a real cluster);
//! - **heartbeats**: every node's Ready condition heartbeat and its Lease in
//!   `kube-node-lease` are renewed each period.
//!
//! A stopped node does none of this: no heartbeats, its pods stay as they
//! are, until it is started again. The stand-in writes to the store
//! directly, as a trusted component, so its writes are not subject to
//! injected faults and are not counted in request stats.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};
use tokio::time::Instant;

use crate::api::{Api, is_terminating};
use crate::resources::Builtin;
use crate::store::{Change, ChangeKind, StoreError, TypeKey, UpdateError, WatchStart};

/// Annotation: `"never"` keeps a running pod not Ready.
pub const READY_ANNOTATION: &str = "kube-sim.io/ready";
/// Annotation: a duration overriding the start-up delay.
pub const START_DELAY_ANNOTATION: &str = "kube-sim.io/start-delay";
/// Annotation: a duration after which a running pod fails.
pub const FAIL_AFTER_ANNOTATION: &str = "kube-sim.io/fail-after";

/// Namespace of the node Leases.
pub const NODE_LEASE_NAMESPACE: &str = "kube-node-lease";

/// Kubelet version the nodes report.
const KUBELET_VERSION: &str = "v1.33.0";

/// Tunables of the stand-in.
#[derive(Debug, Clone)]
pub struct KubeletConfig {
    /// From binding to Running.
    pub start_delay: Duration,
    /// Between node heartbeats (NodeStatus and Lease).
    pub heartbeat_period: Duration,
    /// Longest a graceful pod deletion takes, whatever its grace period.
    pub max_grace: Duration,
}

impl Default for KubeletConfig {
    fn default() -> Self {
        KubeletConfig {
            start_delay: Duration::from_millis(500),
            heartbeat_period: Duration::from_secs(10),
            max_grace: Duration::from_secs(2),
        }
    }
}

/// Controls of a running stand-in. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Nodes {
    stopped: Arc<Mutex<HashSet<String>>>,
    commands: mpsc::UnboundedSender<String>,
}

impl Nodes {
    /// Stops a node: no heartbeats, its pods stop progressing.
    pub fn stop(&self, node: &str) {
        self.lock().insert(node.to_owned());
    }

    /// Starts a stopped node again: it heartbeats at once and its pods carry
    /// on.
    pub fn start(&self, node: &str) {
        self.lock().remove(node);
        // The task is gone only when the simulator is shut down.
        let _ = self.commands.send(node.to_owned());
    }

    /// Whether a node is stopped.
    pub fn is_stopped(&self, node: &str) -> bool {
        self.lock().contains(node)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.stopped.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A timed step for one pod.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Step {
    Start,
    Fail,
    FinishDeletion,
}

/// A pod's identity.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct PodRef {
    namespace: String,
    name: String,
    uid: String,
}

/// Creates the cluster's standard namespaces and `count` Ready nodes named
/// `node-1` .. `node-N`, spread over zones `zone-a`, `zone-b`, `zone-c`.
pub fn seed(api: &Api, count: usize) {
    let ns_key = Api::type_key(&api.registry.builtin(Builtin::Namespace));
    for ns in ["default", "kube-system", "kube-public", NODE_LEASE_NAMESPACE] {
        let object = json!({
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": ns, "uid": uuid::Uuid::new_v4().to_string(), "creationTimestamp": now(),
                "labels": {"kubernetes.io/metadata.name": ns}},
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        });
        // Already there (a restart of the seeding) is fine.
        let _ = api.store.create(&ns_key, "", ns, object);
    }
    let node_key = Api::type_key(&api.registry.builtin(Builtin::Node));
    for i in 1..=count {
        let name = format!("node-{i}");
        let zone = ["zone-a", "zone-b", "zone-c"][(i - 1) % 3];
        let node = json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": uuid::Uuid::new_v4().to_string(), "creationTimestamp": now(),
                "labels": {
                    "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                    "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
                    "topology.kubernetes.io/zone": zone, "topology.kubernetes.io/region": "sim",
                }},
            "spec": {"podCIDR": format!("10.244.{i}.0/24"), "podCIDRs": [format!("10.244.{i}.0/24")]},
            "status": node_status(i),
        });
        let _ = api.store.create(&node_key, "", &name, node);
    }
}

fn node_status(i: usize) -> Value {
    let now = now();
    let condition = |kind: &str, status: &str, reason: &str, message: &str| {
        json!({"type": kind, "status": status, "lastHeartbeatTime": now, "lastTransitionTime": now,
            "reason": reason, "message": message})
    };
    json!({
        "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"},
        "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"},
        "conditions": [
            condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
            condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
            condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
        ],
        "addresses": [
            {"type": "InternalIP", "address": format!("10.0.0.{i}")},
            {"type": "Hostname", "address": format!("node-{i}")},
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "machineID": format!("{i:032x}"), "systemUUID": format!("{i:032x}"), "bootID": format!("{i:032x}"),
            "kernelVersion": "6.1.0-kube-sim", "osImage": "kube-sim", "containerRuntimeVersion": "kube-sim://1.0",
            "kubeletVersion": KUBELET_VERSION, "kubeProxyVersion": KUBELET_VERSION,
            "operatingSystem": "linux", "architecture": "amd64",
        },
    })
}

fn now() -> String {
    crate::api::now_rfc3339()
}

/// Starts the stand-in on `api`'s store; it runs until the store's change
/// feed closes or the returned handle's task is aborted.
pub fn spawn(api: Arc<Api>, config: KubeletConfig) -> (Nodes, tokio::task::JoinHandle<()>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let nodes = Nodes { stopped: Arc::default(), commands: tx };
    let kubelet = Kubelet::new(api, config, nodes.clone());
    (nodes, tokio::spawn(kubelet.run(rx)))
}

/// The stand-in's state.
struct Kubelet {
    api: Arc<Api>,
    config: KubeletConfig,
    nodes: Nodes,
    pod_key: TypeKey,
    node_key: TypeKey,
    lease_key: TypeKey,
    /// Timed steps, earliest first.
    timers: BinaryHeap<Reverse<(Instant, PodRef, Step)>>,
    /// Steps already in `timers`, so re-evaluations do not duplicate them.
    scheduled: HashSet<(PodRef, Step)>,
    /// Pods waiting for a node to fit on.
    unschedulable: BTreeMap<(String, String), ()>,
    /// Pods bound to each node (by pod uid), for spreading.
    placement: HashMap<String, String>,
}

impl Kubelet {
    fn new(api: Arc<Api>, config: KubeletConfig, nodes: Nodes) -> Self {
        let key = |b| Api::type_key(&api.registry.builtin(b));
        Kubelet {
            pod_key: key(Builtin::Pod),
            node_key: key(Builtin::Node),
            lease_key: key(Builtin::Lease),
            api,
            config,
            nodes,
            timers: BinaryHeap::new(),
            scheduled: HashSet::new(),
            unschedulable: BTreeMap::new(),
            placement: HashMap::new(),
        }
    }

    async fn run(mut self, mut commands: mpsc::UnboundedReceiver<String>) {
        let Ok((start, mut changes)) = self.api.store.watch(&self.pod_key, None) else {
            return;
        };
        if let WatchStart::Snapshot(pods, _) = start {
            for (_, stored) in pods {
                self.evaluate(&stored.value());
            }
        }
        self.heartbeat();
        let mut heartbeat = tokio::time::interval(self.config.heartbeat_period);
        heartbeat.tick().await;
        loop {
            let next_timer = self.timers.peek().map(|Reverse((at, _, _))| *at);
            tokio::select! {
                received = changes.recv() => match received {
                    Ok(change) => self.on_change(&change),
                    Err(broadcast::error::RecvError::Lagged(_)) => self.resync(),
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                _ = heartbeat.tick() => self.heartbeat(),
                () = sleep_until(next_timer) => self.fire_due(),
                command = commands.recv() => match command {
                    Some(node) => {
                        self.heartbeat();
                        self.resume_node(&node);
                    }
                    None => return,
                },
            }
        }
    }

    /// Re-reads every pod after missing changes.
    fn resync(&mut self) {
        let (pods, _) = self.api.store.list(&self.pod_key, None, None);
        for (_, stored) in pods {
            self.evaluate(&stored.value());
        }
        self.retry_unschedulable();
    }

    fn on_change(&mut self, change: &Change) {
        if change.type_key == self.pod_key {
            if change.kind == ChangeKind::Deleted {
                let pod = change.object.value();
                if let Some(uid) = pod.pointer("/metadata/uid").and_then(Value::as_str) {
                    self.placement.remove(uid);
                }
                self.unschedulable.remove(&(change.namespace.clone(), change.name.clone()));
                // A freed slot may let a waiting pod fit.
                self.retry_unschedulable();
            } else {
                self.evaluate(&change.object.value());
            }
        } else if change.type_key == self.node_key {
            self.retry_unschedulable();
        }
    }

    fn resume_node(&mut self, node: &str) {
        let (pods, _) = self.api.store.list(&self.pod_key, None, None);
        for (_, stored) in pods {
            let pod = stored.value();
            if pod.pointer("/spec/nodeName").and_then(Value::as_str) == Some(node) {
                self.evaluate(&pod);
            }
        }
        self.retry_unschedulable();
    }

    fn retry_unschedulable(&mut self) {
        let waiting: Vec<(String, String)> = self.unschedulable.keys().cloned().collect();
        for (ns, name) in waiting {
            match self.api.store.get(&self.pod_key, &ns, &name) {
                Some(stored) => self.evaluate(&stored.value()),
                None => {
                    self.unschedulable.remove(&(ns, name));
                }
            }
        }
    }

    /// Decides what happens next to a pod, and schedules it.
    fn evaluate(&mut self, pod: &Value) {
        let Some(pod_ref) = pod_ref(pod) else { return };
        let node = pod.pointer("/spec/nodeName").and_then(Value::as_str).unwrap_or("").to_owned();
        if !node.is_empty() {
            self.placement.insert(pod_ref.uid.clone(), node.clone());
        }
        if is_terminating(pod) {
            if !node.is_empty() && !self.nodes.is_stopped(&node) {
                let due = deletion_due(pod, self.config.max_grace);
                self.schedule(pod_ref, Step::FinishDeletion, due);
            }
            return;
        }
        if node.is_empty() {
            self.bind(pod, pod_ref);
            return;
        }
        if self.nodes.is_stopped(&node) {
            return;
        }
        let phase = pod.pointer("/status/phase").and_then(Value::as_str).unwrap_or("Pending");
        if phase == "Pending" && pod.pointer("/status/hostIP").is_none() {
            // Created already bound (`spec.nodeName` set, no scheduler
            // involved): the kubelet admits it as it does a pod bound to it.
            let index = self.placement.len();
            self.write_status(&pod_ref, |status, spec| {
                if status.get("hostIP").is_none() {
                    bound_status(status, spec, &node, index);
                }
            });
        }
        let started = pod.pointer("/status/containerStatuses/0/state/running").is_some();
        match phase {
            "Pending" if !started => {
                let delay = annotation_duration(pod, START_DELAY_ANNOTATION).unwrap_or(self.config.start_delay);
                self.schedule(pod_ref, Step::Start, Instant::now() + delay);
            }
            "Running" => {
                if let Some(after) = annotation_duration(pod, FAIL_AFTER_ANNOTATION) {
                    self.schedule(pod_ref, Step::Fail, Instant::now() + after);
                }
            }
            _ => {}
        }
    }

    fn schedule(&mut self, pod: PodRef, step: Step, at: Instant) {
        if self.scheduled.insert((pod.clone(), step.clone())) {
            self.timers.push(Reverse((at, pod, step)));
        }
    }

    fn fire_due(&mut self) {
        let now = Instant::now();
        while let Some(Reverse((at, _, _))) = self.timers.peek() {
            if *at > now {
                break;
            }
            let Some(Reverse((_, pod, step))) = self.timers.pop() else { break };
            self.scheduled.remove(&(pod.clone(), step.clone()));
            self.perform(&pod, &step);
        }
    }

    /// Applies a timed step, if the pod is still in the state it was
    /// scheduled for.
    fn perform(&mut self, pod: &PodRef, step: &Step) {
        let Some(stored) = self.api.store.get(&self.pod_key, &pod.namespace, &pod.name) else { return };
        let current = stored.value();
        if current.pointer("/metadata/uid").and_then(Value::as_str) != Some(pod.uid.as_str()) {
            return;
        }
        let node = current.pointer("/spec/nodeName").and_then(Value::as_str).unwrap_or("");
        if node.is_empty() || self.nodes.is_stopped(node) {
            return;
        }
        match step {
            Step::FinishDeletion => self.finish_deletion(pod, &current),
            Step::Start if !is_terminating(&current) => {
                let never_ready = current
                    .pointer(&format!("/metadata/annotations/{}", READY_ANNOTATION.replace('/', "~1")))
                    .and_then(Value::as_str)
                    == Some("never");
                self.write_status(pod, |status, spec| running_status(status, spec, !never_ready));
            }
            Step::Fail if !is_terminating(&current) => self.write_status(pod, failed_status),
            _ => {}
        }
    }

    /// The kubelet's final delete (grace period 0): gone unless finalizers
    /// hold it, in which case it goes when the last one is removed.
    fn finish_deletion(&self, pod: &PodRef, current: &Value) {
        let held = current.pointer("/metadata/finalizers").and_then(Value::as_array).is_some_and(|f| !f.is_empty());
        if held {
            let _ = self.api.store.update::<()>(&self.pod_key, &pod.namespace, &pod.name, |s| {
                let mut v = s.value();
                if v.pointer("/metadata/deletionGracePeriodSeconds").and_then(Value::as_i64) == Some(0) {
                    return Ok(None);
                }
                v["metadata"]["deletionGracePeriodSeconds"] = json!(0);
                Ok(Some(v))
            });
        } else {
            let _ = self.api.store.delete(&self.pod_key, &pod.namespace, &pod.name, None);
        }
    }

    fn write_status(&self, pod: &PodRef, f: impl FnOnce(&mut Value, &Value)) {
        // A pod deleted meanwhile has no status left to write.
        let _ = self.api.store.update::<()>(&self.pod_key, &pod.namespace, &pod.name, |s| {
            let mut v = s.value();
            if v.pointer("/metadata/uid").and_then(Value::as_str) != Some(pod.uid.as_str()) {
                return Ok(None);
            }
            let spec = v.get("spec").cloned().unwrap_or(Value::Null);
            let mut status = v.get("status").cloned().unwrap_or_else(|| json!({}));
            f(&mut status, &spec);
            if v.get("status") == Some(&status) {
                return Ok(None);
            }
            v["status"] = status;
            Ok(Some(v))
        });
    }

    /// Binds a pod to the least loaded node it fits on.
    fn bind(&mut self, pod: &Value, pod_ref: PodRef) {
        let key = (pod_ref.namespace.clone(), pod_ref.name.clone());
        let (nodes, _) = self.api.store.list(&self.node_key, None, None);
        let mut load: HashMap<&str, usize> = HashMap::new();
        for node in self.placement.values() {
            *load.entry(node.as_str()).or_default() += 1;
        }
        let choice = nodes
            .iter()
            .map(|(_, s)| s.value())
            .filter(|node| fits(pod, node))
            .map(|node| node.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("").to_owned())
            .filter(|name| !self.nodes.is_stopped(name))
            .min_by_key(|name| (load.get(name.as_str()).copied().unwrap_or(0), name.clone()));
        let Some(node) = choice else {
            self.unschedulable.insert(key, ());
            return;
        };
        self.unschedulable.remove(&key);
        let index = self.placement.len();
        let uid = pod_ref.uid.clone();
        let node_for_write = node.clone();
        let result = self.api.store.update::<()>(&self.pod_key, &pod_ref.namespace, &pod_ref.name, |s| {
            let mut v = s.value();
            let unbound = v.pointer("/spec/nodeName").and_then(Value::as_str).is_none_or(str::is_empty);
            if !unbound || v.pointer("/metadata/uid").and_then(Value::as_str) != Some(uid.as_str()) {
                return Ok(None);
            }
            v["spec"]["nodeName"] = json!(node_for_write);
            let spec = v["spec"].clone();
            let mut status = v.get("status").cloned().unwrap_or_else(|| json!({}));
            bound_status(&mut status, &spec, &node_for_write, index);
            v["status"] = status;
            Ok(Some(v))
        });
        if result.is_ok() {
            self.placement.insert(pod_ref.uid, node);
        }
    }

    fn heartbeat(&self) {
        let (nodes, _) = self.api.store.list(&self.node_key, None, None);
        let now = now();
        let micro = now_micro();
        for ((_, name), _) in nodes {
            if self.nodes.is_stopped(&name) {
                continue;
            }
            let _ = self.api.store.update::<()>(&self.node_key, "", &name, |s| {
                let mut v = s.value();
                if let Some(conditions) = v.pointer_mut("/status/conditions").and_then(Value::as_array_mut) {
                    for c in conditions.iter_mut() {
                        c["lastHeartbeatTime"] = json!(now);
                        if c["type"] == "Ready" && c["status"] != "True" {
                            c["status"] = json!("True");
                            c["reason"] = json!("KubeletReady");
                            c["message"] = json!("kubelet is posting ready status");
                            c["lastTransitionTime"] = json!(now);
                        }
                    }
                }
                Ok(Some(v))
            });
            self.renew_lease(&name, &micro);
        }
    }

    fn renew_lease(&self, node: &str, micro: &str) {
        let renewed = self.api.store.update::<()>(&self.lease_key, NODE_LEASE_NAMESPACE, node, |s| {
            let mut v = s.value();
            v["spec"]["renewTime"] = json!(micro);
            Ok(Some(v))
        });
        if let Err(UpdateError::Store(StoreError::NotFound)) = renewed {
            let node_uid = self
                .api
                .store
                .get(&self.node_key, "", node)
                .and_then(|s| s.value().pointer("/metadata/uid").and_then(Value::as_str).map(str::to_owned))
                .unwrap_or_default();
            let lease = json!({
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": node, "namespace": NODE_LEASE_NAMESPACE,
                    "uid": uuid::Uuid::new_v4().to_string(), "creationTimestamp": now(),
                    "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": node, "uid": node_uid}]},
                "spec": {"holderIdentity": node, "leaseDurationSeconds": 40, "renewTime": micro},
            });
            let _ = self.api.store.create(&self.lease_key, NODE_LEASE_NAMESPACE, node, lease);
        }
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn now_micro() -> String {
    let now = jiff::Timestamp::now();
    let micros = now.as_microsecond();
    jiff::Timestamp::from_microsecond(micros).map_or_else(|_| now.to_string(), |t| format!("{t:.6}"))
}

fn pod_ref(pod: &Value) -> Option<PodRef> {
    Some(PodRef {
        namespace: pod.pointer("/metadata/namespace")?.as_str()?.to_owned(),
        name: pod.pointer("/metadata/name")?.as_str()?.to_owned(),
        uid: pod.pointer("/metadata/uid")?.as_str()?.to_owned(),
    })
}

/// When the kubelet removes a gracefully deleted pod: at its
/// deletionTimestamp, but no later than `max_grace` from now.
fn deletion_due(pod: &Value, max_grace: Duration) -> Instant {
    let cap = Instant::now() + max_grace;
    let remaining = pod
        .pointer("/metadata/deletionTimestamp")
        .and_then(Value::as_str)
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map(|t| t.duration_since(jiff::Timestamp::now()))
        .map(|d| Duration::try_from(d).unwrap_or(Duration::ZERO));
    match remaining {
        Some(r) => (Instant::now() + r).min(cap),
        None => cap,
    }
}

/// A Go-style duration (`500ms`, `2s`, `1m30s`).
pub fn parse_duration(text: &str) -> Option<Duration> {
    let mut total = Duration::ZERO;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let number: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
        let seconds = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += Duration::from_secs_f64(number * seconds);
    }
    Some(total)
}

fn annotation_duration(pod: &Value, annotation: &str) -> Option<Duration> {
    pod.pointer("/metadata/annotations")
        .and_then(|a| a.get(annotation))
        .and_then(Value::as_str)
        .and_then(parse_duration)
}

/// Whether the scheduler may place `pod` on `node`.
fn fits(pod: &Value, node: &Value) -> bool {
    let ready = node
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"));
    let unschedulable = node.pointer("/spec/unschedulable").and_then(Value::as_bool).unwrap_or(false);
    if !ready || unschedulable {
        return false;
    }
    let labels = node.pointer("/metadata/labels").and_then(Value::as_object);
    let selector_ok = pod
        .pointer("/spec/nodeSelector")
        .and_then(Value::as_object)
        .is_none_or(|sel| sel.iter().all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v)));
    let tolerations = pod.pointer("/spec/tolerations").and_then(Value::as_array).cloned().unwrap_or_default();
    let taints_ok = node.pointer("/spec/taints").and_then(Value::as_array).is_none_or(|taints| {
        taints
            .iter()
            .filter(|t| matches!(t["effect"].as_str(), Some("NoSchedule" | "NoExecute")))
            .all(|t| tolerations.iter().any(|tol| tolerates(tol, t)))
    });
    selector_ok && taints_ok
}

/// Whether a toleration tolerates a taint (as `v1.Toleration.ToleratesTaint`).
pub fn tolerates(toleration: &Value, taint: &Value) -> bool {
    let effect = toleration["effect"].as_str().unwrap_or("");
    if !effect.is_empty() && Some(effect) != taint["effect"].as_str() {
        return false;
    }
    let key = toleration["key"].as_str().unwrap_or("");
    if !key.is_empty() && Some(key) != taint["key"].as_str() {
        return false;
    }
    match toleration["operator"].as_str().unwrap_or("Equal") {
        "Exists" => true,
        "Equal" | "" => toleration["value"].as_str().unwrap_or("") == taint["value"].as_str().unwrap_or(""),
        _ => false,
    }
}

fn condition(kind: &str, status: bool, reason: Option<&str>, at: &str) -> Value {
    let mut c = json!({"type": kind, "status": if status { "True" } else { "False" },
        "lastProbeTime": null, "lastTransitionTime": at});
    if let Some(reason) = reason {
        c["reason"] = json!(reason);
    }
    c
}

fn containers(spec: &Value) -> Vec<(String, String)> {
    spec.get("containers")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .map(|c| (c["name"].as_str().unwrap_or("").to_owned(), c["image"].as_str().unwrap_or("").to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

fn bound_status(status: &mut Value, spec: &Value, node: &str, index: usize) {
    let at = now();
    let node_index: usize = node.trim_start_matches("node-").parse().unwrap_or(0);
    status["phase"] = json!("Pending");
    status["hostIP"] = json!(format!("10.0.0.{node_index}"));
    status["hostIPs"] = json!([{"ip": format!("10.0.0.{node_index}")}]);
    status["podIP"] = json!(format!("10.244.{node_index}.{}", 2 + index % 250));
    status["podIPs"] = json!([{"ip": status["podIP"].clone()}]);
    status["startTime"] = json!(at);
    status["conditions"] = json!([
        condition("PodReadyToStartContainers", false, None, &at),
        condition("Initialized", true, None, &at),
        condition("Ready", false, Some("ContainersNotReady"), &at),
        condition("ContainersReady", false, Some("ContainersNotReady"), &at),
        condition("PodScheduled", true, None, &at),
    ]);
    status["containerStatuses"] = containers(spec)
        .into_iter()
        .map(|(name, image)| {
            json!({"name": name, "image": image, "imageID": "", "ready": false, "started": false,
                "restartCount": 0, "state": {"waiting": {"reason": "ContainerCreating"}}})
        })
        .collect();
}

fn running_status(status: &mut Value, spec: &Value, ready: bool) {
    let at = now();
    status["phase"] = json!("Running");
    let reason = (!ready).then_some("ContainersNotReady");
    status["conditions"] = json!([
        condition("PodReadyToStartContainers", true, None, &at),
        condition("Initialized", true, None, &at),
        condition("Ready", ready, reason, &at),
        condition("ContainersReady", ready, reason, &at),
        condition("PodScheduled", true, None, &at),
    ]);
    status["containerStatuses"] = containers(spec)
        .into_iter()
        .map(|(name, image)| {
            json!({"name": name, "image": image, "imageID": format!("sim://{image}"),
                "containerID": format!("sim://{}", uuid::Uuid::new_v4().simple()),
                "ready": ready, "started": true, "restartCount": 0,
                "state": {"running": {"startedAt": at}}})
        })
        .collect();
}

fn failed_status(status: &mut Value, spec: &Value) {
    let at = now();
    status["phase"] = json!("Failed");
    if let Some(conditions) = status.get_mut("conditions").and_then(Value::as_array_mut) {
        for c in conditions.iter_mut().filter(|c| c["type"] == "Ready" || c["type"] == "ContainersReady") {
            c["status"] = json!("False");
            c["reason"] = json!("PodFailed");
            c["lastTransitionTime"] = json!(at);
        }
    }
    status["containerStatuses"] = containers(spec)
        .into_iter()
        .map(|(name, image)| {
            json!({"name": name, "image": image, "imageID": format!("sim://{image}"), "ready": false,
                "started": false, "restartCount": 0,
                "state": {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": at, "finishedAt": at}}})
        })
        .collect();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations_parse() {
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("2h"), Some(Duration::from_secs(7200)));
        assert_eq!(parse_duration("soon"), None);
        assert_eq!(parse_duration(""), None);
    }

    fn ready_node(taints: Value) -> Value {
        json!({"metadata": {"name": "n", "labels": {"disk": "ssd"}},
            "spec": {"taints": taints},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    }

    #[test]
    fn pods_fit_only_where_taints_are_tolerated_and_selectors_match() {
        let taint = json!([{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]);
        let plain = json!({"spec": {}});
        let tolerant = json!({"spec": {"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "db"}]}});
        assert!(!fits(&plain, &ready_node(taint.clone())));
        assert!(fits(&tolerant, &ready_node(taint)));
        assert!(fits(&plain, &ready_node(json!([{"key": "x", "effect": "PreferNoSchedule"}]))));
        let wants_hdd = json!({"spec": {"nodeSelector": {"disk": "hdd"}}});
        assert!(!fits(&wants_hdd, &ready_node(json!([]))));
        let mut not_ready = ready_node(json!([]));
        not_ready["status"]["conditions"][0]["status"] = json!("Unknown");
        assert!(!fits(&plain, &not_ready));
    }
}
