//! The kubelet and scheduler stand-in: what the nodes of a real cluster do
//! to the objects a controller manager watches.
//!
//! One task follows the store's change feed and a timer heap:
//! - **scheduling**: a pod with no `spec.nodeName` whose claims are bound
//!   is bound to a node it fits (not cordoned, its taints tolerated, its
//!   node selector and required node affinity matched) with the fewest
//!   unfinished pods; a pod that fits nowhere gets `FailedScheduling` and
//!   waits until a node, a claim or a pod changes;
//! - **provisioning**: a new PersistentVolumeClaim is bound to a volume of
//!   its own, created for it, unless `kube-sim.io/provision: "pending"`
//!   holds it or it asks for the class `""`; a released volume of its own
//!   is deleted;
//! - **start-up**: a bound pod shows `ContainerCreating` (for as long as a
//!   ConfigMap or Secret its volumes need is missing, with a `FailedMount`
//!   event), then after the start-up delay (or its
//!   `kube-sim.io/start-delay` annotation) becomes Running and Ready (or
//!   Running and never Ready with `kube-sim.io/ready: "never"`), with
//!   `kube-sim.io/fail-after` turns Failed that long after starting, and
//!   with `kube-sim.io/exit-after` its containers exit (with
//!   `kube-sim.io/exit-code`) that long after each start, restarted or
//!   ending the pod as its restart policy says (`exits.rs`);
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
//!
//! This module owns the task's loop and the timed steps of each pod;
//! binding pods to nodes is `scheduling.rs` (which filters with `fit.rs`,
//! `affinity.rs` and `claims.rs`), binding claims `provisioner.rs`, the
//! Warning events `events.rs`, the pod statuses written `status.rs` and
//! `exits.rs`, when steps are due `timing.rs`, what of a pod the loop
//! decides on `view.rs`, whether its volumes can be mounted `mounts.rs`, the
//! nodes (seeding, joining, leaving, stop/start, heartbeats, Leases)
//! `nodes.rs`. None of them imports this file.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{broadcast, mpsc};
use tokio::time::Instant;

use crate::api::Api;
use crate::object::is_terminating;
use crate::resources::{Builtin, ResourceType};
use crate::store::{Change, ChangeKind, TypeKey, WatchStart};

mod affinity;
mod claims;
mod events;
mod exits;
mod fit;
mod mounts;
mod nodes;
mod provisioner;
mod scheduling;
mod status;
mod timing;
mod view;

pub use fit::tolerates;
pub use nodes::{NODE_LEASE_NAMESPACE, NodeError, NodeSpec, Nodes, seed};
pub(crate) use nodes::{add as add_node, remove as remove_node};
pub use provisioner::PROVISION_ANNOTATION;
pub use timing::{EXIT_AFTER_ANNOTATION, EXIT_CODE_ANNOTATION, FAIL_AFTER_ANNOTATION, START_DELAY_ANNOTATION};

use mounts::VolumeWaits;
use nodes::pod_addresses;
use scheduling::{Cluster, Scheduler};
use status::{PodRef, bound_status, failed_status, ready_overwritten, restore_ready, running_status};
use timing::{annotation_duration, deletion_due, exit_code, sleep_until};
use view::view;

/// Annotation: `"never"` keeps a running pod not Ready.
pub const READY_ANNOTATION: &str = "kube-sim.io/ready";
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

/// A timed step for one pod.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Step {
    Start,
    Fail,
    Exit,
    FinishDeletion,
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
    claim_key: TypeKey,
    /// PersistentVolumes: the provisioner's, and their type.
    volume_key: TypeKey,
    volume_type: Arc<ResourceType>,
    /// Timed steps, earliest first.
    timers: BinaryHeap<Reverse<(Instant, PodRef, Step)>>,
    /// Steps already in `timers`, so re-evaluations do not duplicate them.
    scheduled: HashSet<(PodRef, Step)>,
    /// The scheduler stand-in's waiting pods and placements.
    scheduler: Scheduler,
    /// Pods waiting for the ConfigMaps and Secrets their volumes need.
    volumes: VolumeWaits,
}

impl Kubelet {
    fn new(api: Arc<Api>, config: KubeletConfig, nodes: Nodes) -> Self {
        let key = |b| Api::type_key(&api.registry.builtin(b));
        let volume_type = api.registry.find("", "v1", "persistentvolumes").expect("kube-sim serves PersistentVolumes");
        Kubelet {
            pod_key: key(Builtin::Pod),
            node_key: key(Builtin::Node),
            lease_key: key(Builtin::Lease),
            claim_key: key(Builtin::PersistentVolumeClaim),
            volume_key: Api::type_key(&volume_type),
            volume_type,
            volumes: VolumeWaits::new(&api),
            scheduler: Scheduler::new(&api),
            api,
            config,
            nodes,
            timers: BinaryHeap::new(),
            scheduled: HashSet::new(),
        }
    }

    async fn run(mut self, mut commands: mpsc::UnboundedReceiver<String>) {
        let Ok((start, mut changes)) = self.api.store.watch(&self.pod_key, None) else {
            return;
        };
        if let WatchStart::Snapshot(pods, _) = start {
            for (_, stored) in pods {
                self.evaluate(&view(&stored));
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

    /// Re-reads every claim and pod after missing changes.
    fn resync(&mut self) {
        let (claims, _) = self.api.store.list(&self.claim_key, None);
        for (_, stored) in claims {
            provisioner::provision(&self.api.store, &self.claim_key, &self.volume_key, &stored);
        }
        let (volumes, _) = self.api.store.list(&self.volume_key, None);
        for (_, stored) in volumes {
            provisioner::reclaim(&self.api.store, &self.volume_type, &self.volume_key, &stored);
        }
        let (pods, _) = self.api.store.list(&self.pod_key, None);
        for (_, stored) in pods {
            self.evaluate(&view(&stored));
        }
        self.retry_unschedulable();
    }

    fn on_change(&mut self, change: &Change) {
        if change.type_key == self.pod_key {
            if change.kind == ChangeKind::Deleted {
                let pod = view(&change.object);
                if let Some(uid) = pod.pointer("/metadata/uid").and_then(Value::as_str) {
                    self.scheduler.placement.remove(uid);
                }
                self.scheduler.unschedulable.remove(&(change.namespace.clone(), change.name.clone()));
                self.volumes.forget(&change.namespace, &change.name);
                // A freed slot may let a waiting pod fit.
                self.retry_unschedulable();
            } else {
                self.evaluate(&view(&change.object));
            }
        } else if change.type_key == self.node_key {
            self.retry_unschedulable();
        } else if change.type_key == self.claim_key {
            if change.kind != ChangeKind::Deleted {
                provisioner::provision(&self.api.store, &self.claim_key, &self.volume_key, &change.object);
            }
            // A claim bound, created or deleted may change where pods fit.
            self.retry_unschedulable();
        } else if change.type_key == self.volume_key {
            if change.kind != ChangeKind::Deleted {
                provisioner::reclaim(&self.api.store, &self.volume_type, &self.volume_key, &change.object);
            }
        } else if change.kind != ChangeKind::Deleted && self.volumes.is_source(&change.type_key) {
            // The ConfigMap or Secret a waiting pod's volume needs may be it.
            for name in self.volumes.waiting_in(&change.namespace) {
                if let Some(stored) = self.api.store.get(&self.pod_key, &change.namespace, &name) {
                    self.evaluate(&view(&stored));
                }
            }
        }
    }

    fn resume_node(&mut self, node: &str) {
        let (pods, _) = self.api.store.list(&self.pod_key, None);
        for (_, stored) in pods {
            let pod = view(&stored);
            if pod.pointer("/spec/nodeName").and_then(Value::as_str) == Some(node) {
                self.evaluate(&pod);
            }
        }
        self.retry_unschedulable();
    }

    /// Decides what happens next to a pod, and schedules it.
    fn evaluate(&mut self, pod: &Value) {
        let Some(pod_ref) = PodRef::of(pod) else { return };
        let node = pod.pointer("/spec/nodeName").and_then(Value::as_str).unwrap_or("").to_owned();
        // The scheduler's informer leaves finished pods out.
        if matches!(pod.pointer("/status/phase").and_then(Value::as_str), Some("Succeeded" | "Failed")) {
            self.scheduler.placement.remove(&pod_ref.uid);
        } else if !node.is_empty() {
            self.scheduler.placement.insert(pod_ref.uid.clone(), node.clone());
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
            let stored_node = self.api.store.get(&self.node_key, "", &node).map(|n| n.value());
            let (host_ip, pod_ip) = pod_addresses(stored_node.as_ref(), &node, self.scheduler.placement.len());
            self.write_status(&pod_ref, |status, spec| {
                if status.get("hostIP").is_none() {
                    bound_status(status, spec, &host_ip, &pod_ip);
                }
            });
        }
        let started = pod.pointer("/status/containerStatuses/0/state/running").is_some();
        match phase {
            "Pending" if !started => {
                if !self.volumes.ready(&self.api.store, pod, &pod_ref, &node) {
                    return;
                }
                let delay = annotation_duration(pod, START_DELAY_ANNOTATION).unwrap_or(self.config.start_delay);
                self.schedule(pod_ref, Step::Start, Instant::now() + delay);
            }
            "Running" => {
                if ready_overwritten(pod) {
                    // Someone else (the node lifecycle controller's
                    // MarkPodsNotReady) set Ready False: the kubelet's
                    // status manager posts its own view again.
                    self.write_status(&pod_ref, |status, _| restore_ready(status));
                }
                if let Some(after) = annotation_duration(pod, FAIL_AFTER_ANNOTATION) {
                    self.schedule(pod_ref.clone(), Step::Fail, Instant::now() + after);
                }
                if let Some(after) = annotation_duration(pod, EXIT_AFTER_ANNOTATION) {
                    self.schedule(pod_ref, Step::Exit, Instant::now() + after);
                }
            }
            _ => {}
        }
    }

    /// Evaluates again the pods that fit nowhere so far.
    fn retry_unschedulable(&mut self) {
        let waiting: Vec<(String, String)> = self.scheduler.unschedulable.keys().cloned().collect();
        for (ns, name) in waiting {
            match self.api.store.get(&self.pod_key, &ns, &name) {
                Some(stored) => self.evaluate(&view(&stored)),
                None => {
                    self.scheduler.unschedulable.remove(&(ns, name));
                }
            }
        }
    }

    fn bind(&mut self, pod: &Value, pod_ref: PodRef) {
        let cluster = Cluster { api: &self.api, pod_key: &self.pod_key, node_key: &self.node_key, nodes: &self.nodes };
        self.scheduler.bind(&cluster, pod, pod_ref);
    }

    fn heartbeat(&self) {
        nodes::heartbeat(&self.api, &self.nodes, &self.node_key, &self.lease_key);
    }

    fn write_status(&self, pod: &PodRef, f: impl FnOnce(&mut Value, &Value)) {
        status::write_status(&self.api.store, &self.pod_key, pod, f);
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
            Step::FinishDeletion => status::finish_deletion(&self.api.store, &self.pod_key, pod, &current),
            Step::Start if !is_terminating(&current) && self.volumes.ready(&self.api.store, &current, pod, node) => {
                let never_ready = current
                    .pointer(&format!("/metadata/annotations/{}", READY_ANNOTATION.replace('/', "~1")))
                    .and_then(Value::as_str)
                    == Some("never");
                self.write_status(pod, |status, spec| running_status(status, spec, !never_ready));
            }
            Step::Fail if !is_terminating(&current) => self.write_status(pod, failed_status),
            Step::Exit if !is_terminating(&current) => {
                let code = exit_code(&current);
                self.write_status(pod, |status, spec| exits::containers_exit(status, spec, code));
            }
            _ => {}
        }
    }
}
