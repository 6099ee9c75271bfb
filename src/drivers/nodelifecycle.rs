//! The node lifecycle controller's driver (upstream
//! `pkg/controller/nodelifecycle/node_lifecycle_controller.go` and the
//! taint, label and pod writes of `pkg/controller/util/node`; the
//! decisions live in `kcm_controllers::node`).
//!
//! It owns:
//! - the handlers on the shared Node and Pod informers (and the Lease
//!   informer it reads): every node change queues the node on
//!   `node_lifecycle_controller` (8 workers: `NoSchedule` condition taints,
//!   beta os/arch labels; failures are logged, not retried, as upstream);
//!   a pod newly bound to a node queues it on
//!   `node_lifecycle_controller_pods` (4 workers, rate-limited retries: a
//!   pod bound to a node that is not ready is marked not ready);
//! - the monitor pass every `--node-monitor-period`: each node's health
//!   (status write with retries on a fresh read), `RegisteredNode`,
//!   `RemovingNode` and `NodeNotReady` events, `MarkPodsNotReady`, the
//!   `NoExecute` steps, the zone states and the `node_collector_*` gauges;
//! - the tainting pass every 100 ms, which drains each zone's
//!   rate-limited queue;
//! - every taint and label write: a JSON merge patch carrying the node's
//!   whole new taint list (or the labels) and the resourceVersion it was
//!   computed from, so a concurrent change makes it fail with a conflict;
//!   then the node is read again and the change recomputed (five tries,
//!   jittered 100 ms backoff, as upstream's `UpdateTaintBackoff`).
//!
//! One difference from upstream: a swap (add one taint, remove another) is
//! one patch, where upstream sends two (add, then remove).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::StreamExt;
use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, Pod};
use kcm_controllers::node::health::{Assessment, Grace};
use kcm_controllers::node::monitor::{self, Monitor, PodStep, TaintAction};
use kcm_controllers::node::queue::{NODE_EVICTION_PERIOD, Outcome};
use kcm_controllers::node::taints::{self, NoExecuteStep, TaintSwap};
use kcm_controllers::node::zone::{self, Rates};
use kcm_controllers::node::{self as core, NODE_LEASE_NAMESPACE, POD_NODE_NAME_INDEX};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Client, Resource, ResourceExt};
use prometheus::{GaugeVec, Histogram, HistogramOpts, IntCounterVec, Opts, Registry};
use serde_json::json;
use tokio::time::Instant;

use super::tainteviction::register_pod_node_name_index;
use crate::config::NodeLifecycleSettings;
use futures::future::BoxFuture;
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::events::{EventRecorder, EventType};
use kcm_runtime::informer::{
    self, EventHandler, HandlerRegistration, HasSynced, SharedInformer, SharedInformerFactory, Store,
};
use kcm_runtime::runner::{Next, Reconcile, SyncError, SyncFuture};
use kcm_runtime::workqueue::{QueueMetrics, WorkQueue, default_controller_rate_limiter};

/// Upstream's controller name: metric label, log field.
pub const CONTROLLER_NAME: &str = "node-lifecycle-controller";

/// The `source.component` of the controller's Events.
pub const EVENT_COMPONENT: &str = "node-controller";

/// The user-agent suffix of the controller's own client (upstream's client
/// name).
pub const CLIENT_NAME: &str = "node-controller";

/// The node queue's name (the `name` label of the `workqueue_*` metrics).
pub const NODE_QUEUE_NAME: &str = "node_lifecycle_controller";

/// The pod queue's name.
pub const POD_QUEUE_NAME: &str = "node_lifecycle_controller_pods";

/// Node workers (upstream `nodeUpdateWorkerSize`); also the monitor
/// pass's parallelism.
pub const NODE_WORKERS: usize = 8;

/// Pod workers (upstream `podUpdateWorkerSize`).
pub const POD_WORKERS: usize = 4;

/// How long stopping waits for work in flight.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// How the workers retry (forever, as upstream's) and drain.
const RETRIES: Retries = Retries { max_retries: None, drain_timeout: DRAIN_TIMEOUT };

/// Tries of a node status write, each on a fresh read of the node
/// (upstream `NodeHealthUpdateRetry`).
const STATUS_UPDATE_TRIES: u32 = 5;

/// Pause between status write tries (upstream `retrySleepTime`).
const STATUS_RETRY_SLEEP: Duration = Duration::from_millis(20);

/// Tries of a taint or label patch (upstream `UpdateTaintBackoff.Steps`).
const PATCH_TRIES: u32 = 5;

/// Base pause between patch tries, jittered up to twice (upstream
/// `UpdateTaintBackoff`: 100 ms, jitter 1.0).
const PATCH_BACKOFF: Duration = Duration::from_millis(100);

/// Upstream's `node_collector_*` metrics.
#[derive(Clone, Debug)]
pub struct NodeLifecycleMetrics {
    /// `node_collector_zone_health{zone}`.
    zone_health: GaugeVec,
    /// `node_collector_zone_size{zone}`.
    zone_size: GaugeVec,
    /// `node_collector_unhealthy_nodes_in_zone{zone}`.
    unhealthy_nodes: GaugeVec,
    /// `node_collector_evictions_total{zone}`.
    evictions: IntCounterVec,
    /// `node_collector_update_node_health_duration_seconds`.
    update_node_health: Histogram,
    /// `node_collector_update_all_nodes_health_duration_seconds`.
    update_all_nodes_health: Histogram,
}

impl NodeLifecycleMetrics {
    /// Registers the metrics with upstream's names, help and buckets.
    pub fn register(registry: &Registry) -> prometheus::Result<Self> {
        let gauge = |name: &str, help: &str| GaugeVec::new(Opts::new(name, help), &["zone"]);
        let zone_health = gauge("node_collector_zone_health", "Gauge measuring percentage of healthy nodes per zone.")?;
        let zone_size = gauge("node_collector_zone_size", "Gauge measuring number of registered Nodes per zones.")?;
        let unhealthy_nodes =
            gauge("node_collector_unhealthy_nodes_in_zone", "Gauge measuring number of not Ready Nodes per zones.")?;
        let evictions = IntCounterVec::new(
            Opts::new(
                "node_collector_evictions_total",
                "Number of Node evictions that happened since current instance of NodeController started.",
            ),
            &["zone"],
        )?;
        let update_node_health = Histogram::with_opts(
            HistogramOpts::new(
                "node_collector_update_node_health_duration_seconds",
                "Duration in seconds for NodeController to update the health of a single node.",
            )
            .buckets(prometheus::exponential_buckets(0.001, 4.0, 8)?),
        )?;
        let update_all_nodes_health = Histogram::with_opts(
            HistogramOpts::new(
                "node_collector_update_all_nodes_health_duration_seconds",
                "Duration in seconds for NodeController to update the health of all nodes.",
            )
            .buckets(prometheus::exponential_buckets(0.01, 4.0, 8)?),
        )?;
        for c in [&zone_health, &zone_size, &unhealthy_nodes] {
            registry.register(Box::new(c.clone()))?;
        }
        registry.register(Box::new(evictions.clone()))?;
        registry.register(Box::new(update_node_health.clone()))?;
        registry.register(Box::new(update_all_nodes_health.clone()))?;
        Ok(NodeLifecycleMetrics {
            zone_health,
            zone_size,
            unhealthy_nodes,
            evictions,
            update_node_health,
            update_all_nodes_health,
        })
    }
}

/// The controller's settings, from the flags.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// `--node-monitor-period`.
    pub monitor_period: Duration,
    /// Grace periods and zone rates.
    pub core: monitor::Config,
}

impl From<&NodeLifecycleSettings> for Settings {
    fn from(s: &NodeLifecycleSettings) -> Self {
        Settings {
            monitor_period: s.monitor_period,
            core: monitor::Config {
                grace: Grace { monitor: s.monitor_grace_period, startup: s.startup_grace_period },
                rates: Rates {
                    eviction_rate: s.eviction_rate,
                    secondary_eviction_rate: s.secondary_eviction_rate,
                    large_cluster_size_threshold: s.large_cluster_size_threshold,
                    unhealthy_zone_threshold: s.unhealthy_zone_threshold,
                },
            },
        }
    }
}

/// The node lifecycle controller, ready to run once its caches sync.
pub struct NodeLifecycleController {
    /// Names of changed nodes (condition taints, labels).
    node_queue: WorkQueue<String>,
    /// Keys of pods newly bound to a node.
    pod_queue: WorkQueue<String>,
    /// Read for the caches' sync state.
    nodes: SharedInformer<Node>,
    /// See `nodes`.
    pods: SharedInformer<Pod>,
    /// See `nodes`.
    leases: SharedInformer<Lease>,
    /// Handler registrations: workers start once both delivered the
    /// initial lists.
    registrations: Vec<HandlerRegistration>,
    /// The state and the I/O, shared by the passes and the workers.
    inner: Arc<Inner>,
}

/// What the passes and workers share.
struct Inner {
    /// Every write.
    client: Client,
    /// `node-controller` events.
    recorder: EventRecorder,
    /// Cached nodes.
    nodes: Store<Node>,
    /// Cached pods, with the `spec.nodeName` index.
    pods: Store<Pod>,
    /// Cached Leases (only `kube-node-lease` is read).
    leases: Store<Lease>,
    /// The remembered state; never held across an await.
    monitor: Mutex<Monitor>,
    /// `node_collector_*`.
    metrics: Option<NodeLifecycleMetrics>,
    /// `--node-monitor-period`.
    monitor_period: Duration,
}

// === impl NodeLifecycleController ===

impl NodeLifecycleController {
    /// Builds the controller on `factory`'s Node, Pod and Lease informers.
    ///
    /// # Errors
    /// The pod index cannot be added (the informers have started).
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueues spawn their timer tasks).
    pub fn new(
        factory: &SharedInformerFactory,
        client: Client,
        recorder: EventRecorder,
        settings: Settings,
        metrics: Option<NodeLifecycleMetrics>,
        queue_metrics: Option<&QueueMetrics>,
    ) -> Result<Self, informer::Error> {
        let node_queue = WorkQueue::new(NODE_QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let pod_queue = WorkQueue::new(POD_QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let nodes = factory.informer::<Node>();
        let pods = factory.informer::<Pod>();
        let leases = factory.informer::<Lease>();
        register_pod_node_name_index(&pods)?;
        let registrations = vec![
            nodes.add_handler(NodeHandler { queue: node_queue.clone() }, None),
            pods.add_handler(PodHandler { queue: pod_queue.clone() }, None),
        ];
        let inner = Arc::new(Inner {
            client,
            recorder,
            nodes: nodes.store(),
            pods: pods.store(),
            leases: leases.store(),
            monitor: Mutex::new(Monitor::new(settings.core)),
            metrics,
            monitor_period: settings.monitor_period,
        });
        Ok(Self { node_queue, pod_queue, nodes, pods, leases, registrations, inner })
    }
}

impl Controller for NodeLifecycleController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let mut synced: Vec<&(dyn HasSynced + Sync)> = vec![&self.nodes, &self.pods, &self.leases];
            synced.extend(self.registrations.iter().map(|r| r as &(dyn HasSynced + Sync)));
            if !cx.wait_for_caches(&synced, &[&self.node_queue, &self.pod_queue]).await {
                return;
            }
            let nodes =
                cx.pool(self.node_queue.clone(), Arc::new(NodeSyncer(self.inner.clone())), NODE_WORKERS, RETRIES);
            let pods = cx.pool(self.pod_queue.clone(), Arc::new(PodSyncer(self.inner.clone())), POD_WORKERS, RETRIES);
            let passes = async {
                tokio::select! {
                    () = self.inner.monitor_loop() => {}
                    () = self.inner.tainting_loop() => {}
                    () = cx.stop.clone() => {}
                }
            };
            futures::join!(nodes, pods, passes);
        })
    }
}

// === handlers ===

/// Every node add and update queues the node (condition taints, labels).
struct NodeHandler {
    queue: WorkQueue<String>,
}

impl EventHandler<Node> for NodeHandler {
    fn on_add(&self, node: &Arc<Node>) {
        self.queue.add(node.name_any());
    }

    fn on_update(&self, _old: &Arc<Node>, new: &Arc<Node>) {
        self.queue.add(new.name_any());
    }
}

/// A pod bound to a node, or moved to another, is queued (upstream
/// `podUpdated`).
struct PodHandler {
    queue: WorkQueue<String>,
}

fn node_of(pod: &Pod) -> Option<&str> {
    pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).filter(|n| !n.is_empty())
}

impl EventHandler<Pod> for PodHandler {
    fn on_add(&self, pod: &Arc<Pod>) {
        if node_of(pod).is_some() {
            self.queue.add(informer::key_of(pod.as_ref()));
        }
    }

    fn on_update(&self, old: &Arc<Pod>, new: &Arc<Pod>) {
        if node_of(new).is_some() && node_of(new) != node_of(old) {
            self.queue.add(informer::key_of(new.as_ref()));
        }
    }
}

// === workers ===

/// The node worker (upstream `doNodeProcessingPassWorker`).
struct NodeSyncer(Arc<Inner>);

impl Reconcile for NodeSyncer {
    fn sync<'a>(&'a self, key: &'a str) -> SyncFuture<'a> {
        Box::pin(async move {
            let Some(node) = self.0.nodes.get(key) else { return Ok(Next::Done) };
            // Failures are logged, not retried: the next node change or
            // monitor pass brings the node back (upstream).
            if let Some(swap) = taints::no_schedule_swap(&node)
                && let Err(e) = self.0.swap_taints(&node, &swap).await
            {
                tracing::warn!(node = key, error = %e, "failed to taint NoSchedule on node");
            }
            let labels = taints::beta_labels(&node);
            if !labels.is_empty()
                && let Err(e) = self.0.patch_labels(&node, &labels).await
            {
                tracing::warn!(node = key, error = %e, "failed to reconcile labels for node");
            }
            Ok(Next::Done)
        })
    }
}

/// The pod worker (upstream `processPod`).
struct PodSyncer(Arc<Inner>);

impl Reconcile for PodSyncer {
    fn sync<'a>(&'a self, key: &'a str) -> SyncFuture<'a> {
        Box::pin(async move {
            let Some(pod) = self.0.pods.get(key) else { return Ok(Next::Done) };
            let Some(node_name) = node_of(&pod).map(str::to_owned) else { return Ok(Next::Done) };
            let cached = self.0.nodes.get(&node_name).is_some();
            let step = self.0.lock().pod_step(&node_name, cached);
            match step {
                PodStep::Nothing => Ok(Next::Done),
                PodStep::NodeNotCached => Err(format!("node {node_name} of pod {key} is not in the cache").into()),
                PodStep::MarkNotReady => {
                    self.0.mark_pod_not_ready(&pod, &node_name).await.map_err(|e| Box::new(e) as SyncError)?;
                    Ok(Next::Done)
                }
            }
        })
    }
}

/// Applies `swap` to the taints of `node` (upstream
/// `SwapNodeControllerTaint`), starting from the given (cached) copy: the
/// patch carries the whole new taint list and the resourceVersion it was
/// computed from, so a concurrent change makes it fail with a conflict;
/// then the node is read again and the swap recomputed, up to
/// [`PATCH_TRIES`] times. `Ok(false)`: nothing to change.
async fn swap_node_taints(api: &Api<Node>, node: &Node, swap: &TaintSwap) -> Result<bool, kube::Error> {
    let name = node.name_any();
    let mut current = node.clone();
    for attempt in 1..=PATCH_TRIES {
        let Some(next) = swap.apply(taints::node_taints(&current), Timestamp::now()) else { return Ok(false) };
        let patch = json!({
            "metadata": {"resourceVersion": current.metadata.resource_version},
            "spec": {"taints": next},
        });
        match api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch)).await {
            Ok(_) => return Ok(true),
            Err(e) if is_code(&e, 409) && attempt < PATCH_TRIES => {
                tokio::time::sleep(jittered(PATCH_BACKOFF)).await;
                current = api.get(&name).await?;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(false)
}

// === impl Inner ===

fn is_code(e: &kube::Error, code: u16) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == code)
}

/// A pause of `base` to `2 × base` (client-go's jitter 1.0).
fn jittered(base: Duration) -> Duration {
    base + base.mul_f64(rand::random::<f64>())
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, Monitor> {
        self.monitor.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn nodes_api(&self) -> Api<Node> {
        Api::all(self.client.clone())
    }

    /// Upstream `wait.Until(monitorNodeHealth, period)`: a pass, then the
    /// period, forever.
    async fn monitor_loop(&self) {
        loop {
            self.monitor_pass().await;
            tokio::time::sleep(self.monitor_period).await;
        }
    }

    /// Upstream `wait.Until(doNoExecuteTaintingPass, 100ms)`.
    async fn tainting_loop(&self) {
        loop {
            self.tainting_pass().await;
            tokio::time::sleep(NODE_EVICTION_PERIOD).await;
        }
    }

    /// Upstream `monitorNodeHealth`.
    async fn monitor_pass(&self) {
        let started = Instant::now();
        let mut nodes = self.nodes.list();
        nodes.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        let membership = self.lock().classify(nodes.iter().map(AsRef::as_ref));
        if let Some(m) = &self.metrics {
            // Every zone's eviction counter exists from the start, at 0
            // (upstream initialises it with the zone's queue).
            for zone in self.lock().queue_zones() {
                m.evictions.with_label_values(&[&zone]);
            }
        }
        for (name, uid) in &membership.added {
            tracing::info!(node = %name, "controller observed a new Node");
            self.node_event(
                name,
                uid,
                EventType::Normal,
                core::EVENT_REGISTERED_NODE,
                core::registered_node_message(name),
            );
            if let Some(node) = nodes.iter().find(|n| n.metadata.name.as_deref() == Some(name)) {
                self.mark_reachable(node).await;
            }
        }
        for (name, uid) in &membership.deleted {
            tracing::info!(node = %name, "controller observed a Node deletion");
            self.node_event(name, uid, EventType::Normal, core::EVENT_REMOVING_NODE, core::removing_node_message(name));
        }
        futures::stream::iter(nodes.iter().cloned())
            .map(|node| self.update_node(node))
            .buffer_unordered(NODE_WORKERS)
            .collect::<Vec<()>>()
            .await;
        let disruption = self.lock().finish(Timestamp::now());
        if let Some(m) = &self.metrics {
            for (zone, r) in &disruption.reports {
                m.zone_size.with_label_values(&[zone]).set(r.size as f64);
                m.zone_health.with_label_values(&[zone]).set(r.health);
                m.unhealthy_nodes.with_label_values(&[zone]).set(r.unhealthy as f64);
            }
            for zone in &disruption.vanished {
                m.zone_size.with_label_values(&[zone]).set(0.0);
                m.zone_health.with_label_values(&[zone]).set(100.0);
                m.unhealthy_nodes.with_label_values(&[zone]).set(0.0);
            }
        }
        for (zone, rate) in &disruption.rates {
            tracing::info!(zone = %zone.replace('\0', "\\0"), rate = %rate, "zone taint rate changed");
        }
        if disruption.entered_full_disruption {
            tracing::info!("Controller detected that all Nodes are not-Ready. Entering master disruption mode");
            for node in &nodes {
                self.mark_reachable(node).await;
            }
        }
        if disruption.left_full_disruption {
            tracing::info!("Controller detected that some Nodes are Ready. Exiting master disruption mode");
        }
        if let Some(m) = &self.metrics {
            m.update_all_nodes_health.observe(started.elapsed().as_secs_f64());
        }
    }

    /// One node of the monitor pass.
    async fn update_node(&self, cached: Arc<Node>) {
        let started = Instant::now();
        let name = cached.name_any();
        let Some((node, assessment)) = self.settle_health(cached).await else { return };
        let actions = self.lock().settle(&node, &assessment, Timestamp::now());
        match &actions.no_execute {
            NoExecuteStep::SwapNow(swap) => {
                if let Err(e) = self.swap_taints(&node, swap).await {
                    tracing::warn!(node = %name, error = %e, "failed to swap the NoExecute taint; will try again next pass");
                }
            }
            NoExecuteStep::MarkReachable => self.mark_reachable(&node).await,
            NoExecuteStep::Queue { .. } | NoExecuteStep::Nothing => {}
        }
        if actions.event_not_ready {
            let uid = node.metadata.uid.clone().unwrap_or_default();
            self.node_event(
                &name,
                &uid,
                EventType::Normal,
                core::EVENT_NODE_NOT_READY,
                core::node_not_ready_message(&name),
            );
        }
        if actions.mark_pods {
            let pods = self.pods.by_index(POD_NODE_NAME_INDEX, &name).unwrap_or_default();
            let mut ok = true;
            for pod in pods {
                if let Err(e) = self.mark_pod_not_ready(&pod, &name).await {
                    tracing::warn!(node = %name, pod = %informer::key_of(pod.as_ref()), error = %e, "unable to mark pod NotReady");
                    ok = false;
                }
            }
            self.lock().pods_marked(&name, ok);
        }
        if let Some(m) = &self.metrics {
            m.update_node_health.observe(started.elapsed().as_secs_f64());
        }
    }

    /// Assesses the node and writes its status if needed, retrying on a
    /// fresh read (upstream's `PollImmediate` around `tryUpdateNodeHealth`).
    /// `None`: the node is skipped this pass ("no pods will be evicted").
    async fn settle_health(&self, cached: Arc<Node>) -> Option<(Node, Assessment)> {
        let name = cached.name_any();
        let mut node = Arc::unwrap_or_clone(cached);
        for attempt in 1..=STATUS_UPDATE_TRIES {
            let lease = self.leases.get_namespaced(Some(NODE_LEASE_NAMESPACE), &name);
            let now = Timestamp::now();
            let mut assessment = self.lock().assess(&node, lease.as_deref(), now);
            let Some(status) = assessment.status_update.clone() else {
                self.lock().remember(&name, assessment.health.clone());
                return Some((node, assessment));
            };
            let mut updated = node.clone();
            updated.status = Some(status);
            match self.nodes_api().replace_status(&name, &PostParams::default(), &updated).await {
                Ok(written) => {
                    assessment.written(now, lease.as_deref());
                    self.lock().remember(&name, assessment.health.clone());
                    tracing::info!(node = %name, "node stopped posting status; conditions set to Unknown");
                    return Some((written, assessment));
                }
                Err(e) => {
                    self.lock().remember(&name, assessment.health.clone());
                    tracing::warn!(node = %name, attempt, error = %e, "error updating node status");
                    if attempt == STATUS_UPDATE_TRIES {
                        break;
                    }
                    tokio::time::sleep(STATUS_RETRY_SLEEP).await;
                    match self.nodes_api().get(&name).await {
                        Ok(fresh) => node = fresh,
                        Err(e) => {
                            tracing::warn!(node = %name, error = %e, "failed while getting a Node to retry updating node health");
                            return None;
                        }
                    }
                }
            }
        }
        tracing::error!(node = %name, "update health of Node from Controller error, skipping - no pods will be evicted");
        None
    }

    /// Upstream `markNodeAsReachable`: removes both `NoExecute` taints,
    /// then forgets the node in its zone's queue.
    async fn mark_reachable(&self, node: &Node) {
        match self.swap_taints(node, &TaintSwap::reachable()).await {
            Ok(removed) => {
                if removed {
                    tracing::info!(node = %node.name_any(), "node is healthy again, removed NoExecute taints");
                }
                self.lock().reachable(node);
            }
            Err(e) => tracing::warn!(node = %node.name_any(), error = %e, "failed to remove taints from node"),
        }
    }

    /// Upstream `doNoExecuteTaintingPass`.
    async fn tainting_pass(&self) {
        let zones = self.lock().queue_zones();
        for zone in zones {
            loop {
                let Some(item) = self.lock().next_due(&zone, Timestamp::now()) else { break };
                let node = self.nodes.get(&item.value);
                let outcome = match monitor::tainting_action(node.as_deref()) {
                    TaintAction::Done => Outcome::Done,
                    TaintAction::Retry(wait) => Outcome::Retry(wait),
                    TaintAction::Swap(swap) => {
                        let node = node.expect("a swap is only decided for a cached node");
                        match self.swap_taints(&node, &swap).await {
                            Ok(_) => {
                                if let Some(m) = &self.metrics {
                                    m.evictions.with_label_values(&[&zone::zone_key(&node)]).inc();
                                }
                                tracing::info!(node = %item.value, taint = %swap.add[0].key, "tainted node NoExecute");
                                Outcome::Done
                            }
                            Err(e) => {
                                tracing::warn!(node = %item.value, error = %e, "failed to taint node NoExecute; retrying");
                                Outcome::Retry(Duration::ZERO)
                            }
                        }
                    }
                };
                self.lock().complete(&zone, &item.value, outcome, Timestamp::now());
            }
        }
    }

    /// Applies `swap` to the node's taints: [`swap_node_taints`].
    async fn swap_taints(&self, node: &Node, swap: &TaintSwap) -> Result<bool, kube::Error> {
        swap_node_taints(&self.nodes_api(), node, swap).await
    }

    /// Sets the beta os/arch labels (upstream `AddOrUpdateLabelsOnNode`).
    async fn patch_labels(&self, node: &Node, labels: &BTreeMap<String, String>) -> Result<(), kube::Error> {
        let name = node.name_any();
        let mut current = node.clone();
        let mut labels = labels.clone();
        for attempt in 1..=PATCH_TRIES {
            let patch = json!({"metadata": {"resourceVersion": current.metadata.resource_version, "labels": labels}});
            match self.nodes_api().patch(&name, &PatchParams::default(), &Patch::Merge(&patch)).await {
                Ok(_) => return Ok(()),
                Err(e) if is_code(&e, 409) && attempt < PATCH_TRIES => {
                    tokio::time::sleep(jittered(PATCH_BACKOFF)).await;
                    current = self.nodes_api().get(&name).await?;
                    labels = taints::beta_labels(&current);
                    if labels.is_empty() {
                        return Ok(());
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Upstream `MarkPodsNotReady` for one pod: Ready False through the
    /// status subresource (NotFound ignored; one retry on a fresh read
    /// after a conflict), then a Warning `NodeNotReady` on the pod.
    async fn mark_pod_not_ready(&self, pod: &Pod, node_name: &str) -> Result<(), kube::Error> {
        let (namespace, name) = (pod.namespace().unwrap_or_default(), pod.name_any());
        let api: Api<Pod> = Api::namespaced(self.client.clone(), &namespace);
        let mut current = pod.clone();
        for attempt in 1..=2 {
            let Some(status) = taints::pod_not_ready_status(&current, node_name, Timestamp::now()) else {
                return Ok(());
            };
            current.status = Some(status);
            match api.replace_status(&name, &PostParams::default(), &current).await {
                Ok(_) => {
                    tracing::info!(pod = %format!("{namespace}/{name}"), node = node_name, "updated ready status of pod to false");
                    self.recorder.event(
                        &pod.object_ref(&()),
                        EventType::Warning,
                        core::EVENT_NODE_NOT_READY,
                        core::POD_NODE_NOT_READY_MESSAGE,
                    );
                    return Ok(());
                }
                Err(e) if is_code(&e, 404) => return Ok(()),
                Err(e) if is_code(&e, 409) && attempt == 1 => match api.get_opt(&name).await? {
                    Some(fresh) => current = fresh,
                    None => return Ok(()),
                },
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// An event on a node (upstream `RecordNodeEvent`).
    fn node_event(&self, name: &str, uid: &str, kind: EventType, reason: &str, message: String) {
        let reference = k8s_openapi::api::core::v1::ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("Node".into()),
            name: Some(name.into()),
            uid: Some(uid.into()),
            ..Default::default()
        };
        self.recorder.event(&reference, kind, reason, message);
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Taint;
    use kube_sim::{Sim, SimConfig};

    use super::*;

    fn keys(node: &Node) -> Vec<String> {
        taints::node_taints(node).iter().map(|t| format!("{}:{}", t.key, t.effect)).collect()
    }

    #[tokio::test]
    async fn a_taint_swap_on_a_stale_copy_conflicts_then_keeps_the_concurrent_change() {
        let sim = Sim::start(SimConfig { nodes: 1, ..SimConfig::default() }).await.expect("kube-sim starts");
        let api: Api<Node> = Api::all(sim.client().expect("client"));
        let stale = api.get("node-1").await.expect("node");
        // Someone else taints the node meanwhile.
        let foreign = json!({"spec": {"taints": [{"key": "example.com/gpu", "effect": "NoSchedule"}]}});
        api.patch("node-1", &PatchParams::default(), &Patch::Merge(&foreign)).await.expect("patched");

        let swap = TaintSwap { add: vec![taints::unreachable_no_execute()], remove: Vec::new() };
        assert!(swap_node_taints(&api, &stale, &swap).await.expect("swapped"));
        let node = api.get("node-1").await.expect("node");
        assert_eq!(keys(&node), ["example.com/gpu:NoSchedule", "node.kubernetes.io/unreachable:NoExecute"]);
        let conflicts = sim.controls().stats().iter().filter(|l| l.verb == "patch" && l.code == 409).count();
        assert_eq!(conflicts, 1, "the stale patch was refused once");

        // Nothing left to change: no write.
        assert!(!swap_node_taints(&api, &node, &swap).await.expect("no-op"));
        let reachable = swap_node_taints(&api, &node, &TaintSwap::reachable()).await.expect("removed");
        assert!(reachable);
        let node = api.get("node-1").await.expect("node");
        assert_eq!(
            node.spec.and_then(|s| s.taints),
            Some(vec![Taint { key: "example.com/gpu".into(), effect: "NoSchedule".into(), ..Taint::default() }])
        );
    }
}
