//! The taint-eviction-controller's driver (upstream
//! `pkg/controller/tainteviction/taint_eviction.go` and `timed_workers.go`;
//! the decisions live in `kcm_controllers::node::eviction`).
//!
//! It owns:
//! - the handlers on the shared Node and Pod informers: a node is looked at
//!   when it appears, goes, or its `NoExecute` taints change; a pod when it
//!   appears, goes, or its tolerations or node change (as upstream);
//! - the plain queues `noexec_taint_node` (node names) and
//!   `noexec_taint_pod` (pod keys), with upstream's queue names and
//!   [`WORKERS`] workers each;
//! - the scheduled deletions: one per pod, remembered here and fired through
//!   a third, unnamed queue (`add_after` to the fire time; a fired key whose
//!   deletion was cancelled or moved later finds that out and stops);
//! - the deletion itself: the `TaintManagerEviction` Event, a live read of
//!   the pod, the `DisruptionTarget` condition patched onto its status, then
//!   the delete (the pod's own grace period) with the pod's uid as
//!   precondition; a pod already gone counts as done;
//! - upstream's metrics `taint_eviction_controller_pod_deletions_total` and
//!   `taint_eviction_controller_pod_deletion_duration_seconds`.
//!
//! Every decision is made holding the state lock, so a node's pass over its
//! pods and a pod's own update never interleave, and a deletion cannot start
//! before the pass that scheduled it has finished.
//!
//! Differences from upstream:
//! - upstream shards node and pod updates by node name over 8 goroutines so
//!   that a pod update never races its node's; here both read the caches
//!   under one lock, which gives the same guarantee;
//! - a failed deletion is retried with the queue's backoff until it
//!   succeeds, the pod goes or the deletion is cancelled (upstream tries 5
//!   times, 10 ms apart, then gives up until the next update);
//! - deletions carry the pod's uid (see the core's module doc);
//! - the deletion latency is observed in seconds since the fire time
//!   (upstream multiplies a Duration by `time.Second`, which mis-scales it).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Node, ObjectReference, Pod, Taint};
use kcm_controllers::node::POD_NODE_NAME_INDEX;
use kcm_controllers::node::eviction::{self as core, Decision, PodFacts, Scheduled};
use kube::Client;
use kube::api::{Api, DeleteParams, Patch, PatchParams, Preconditions};
use prometheus::{Histogram, HistogramOpts, IntCounter, Opts, Registry};
use serde_json::json;

use futures::future::BoxFuture;
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::events::{EventRecorder, EventType};
use kcm_runtime::informer::{
    self, EventHandler, HandlerRegistration, HasSynced, SharedInformer, SharedInformerFactory, Store, object_key,
};
use kcm_runtime::runner::{Next, Reconcile, SyncError, SyncFuture};
use kcm_runtime::workqueue::{QueueMetrics, WorkQueue, default_controller_rate_limiter};

/// Upstream's controller name: metric label, log field.
pub const CONTROLLER_NAME: &str = "taint-eviction-controller";

/// The `source.component` of the controller's Events.
pub const EVENT_COMPONENT: &str = "taint-eviction-controller";

/// The user-agent suffix of the controller's own client: upstream builds it
/// as `node-controller`, whose cluster role it uses.
pub const CLIENT_NAME: &str = super::nodelifecycle::CLIENT_NAME;

/// The node queue's name (the `name` label of the `workqueue_*` metrics).
pub const NODE_QUEUE_NAME: &str = "noexec_taint_node";

/// The pod queue's name.
pub const POD_QUEUE_NAME: &str = "noexec_taint_pod";

/// Workers per queue (upstream `UpdateWorkerSize`).
pub const WORKERS: usize = 8;

/// How long stopping waits for work in flight.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// How the workers retry (forever, as upstream's) and drain.
const RETRIES: Retries = Retries { max_retries: None, drain_timeout: DRAIN_TIMEOUT };

/// Upstream's buckets of the deletion latency histogram (5 ms to 4 min).
const DELETION_BUCKETS: [f64; 12] = [0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10.0, 30.0, 60.0, 120.0, 180.0, 240.0];

/// Registers the pod index by `spec.nodeName` (upstream
/// `PodNodeNameKeyIndex`) on the shared pod informer, unless another
/// controller already did: both node controllers read it, and it is kept
/// once.
pub fn register_pod_node_name_index(pods: &SharedInformer<Pod>) -> Result<(), informer::Error> {
    let by_node = |pod: &Pod| pod.spec.as_ref().and_then(|s| s.node_name.clone()).filter(|n| !n.is_empty());
    match pods.add_index(POD_NODE_NAME_INDEX, move |pod| by_node(pod).into_iter().collect()) {
        Ok(()) | Err(informer::Error::IndexConflict(_)) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Upstream's `taint_eviction_controller_*` metrics.
#[derive(Clone, Debug)]
pub struct EvictionMetrics {
    /// Pods deleted since the start.
    deletions: IntCounter,
    /// Seconds from a deletion's fire time to the pod's deletion.
    latency: Histogram,
}

impl EvictionMetrics {
    /// Registers `taint_eviction_controller_pod_deletions_total` and
    /// `taint_eviction_controller_pod_deletion_duration_seconds`.
    pub fn register(registry: &Registry) -> prometheus::Result<Self> {
        let deletions = IntCounter::with_opts(Opts::new(
            "taint_eviction_controller_pod_deletions_total",
            "Total number of Pods deleted by TaintEvictionController since its start.",
        ))?;
        let latency = Histogram::with_opts(
            HistogramOpts::new(
                "taint_eviction_controller_pod_deletion_duration_seconds",
                "Latency, in seconds, between the time when a taint effect has been activated for the Pod and its \
                 deletion via TaintEvictionController.",
            )
            .buckets(DELETION_BUCKETS.to_vec()),
        )?;
        registry.register(Box::new(deletions.clone()))?;
        registry.register(Box::new(latency.clone()))?;
        Ok(EvictionMetrics { deletions, latency })
    }
}

/// The taint-eviction-controller, ready to run once its caches sync.
pub struct TaintEvictionController {
    /// Names of nodes whose `NoExecute` taints changed.
    node_queue: WorkQueue<String>,
    /// Keys of pods whose tolerations or node changed.
    pod_queue: WorkQueue<String>,
    /// Keys of pods whose scheduled deletion may be due.
    deletion_queue: WorkQueue<String>,
    /// Read for the cache's sync state.
    pods: SharedInformer<Pod>,
    /// Read for the cache's sync state.
    nodes: SharedInformer<Node>,
    /// Handler registrations: workers start once both delivered the
    /// initial lists.
    registrations: Vec<HandlerRegistration>,
    /// The state and the I/O, shared by the three worker pools.
    evictor: Arc<Evictor>,
}

/// The scheduled deletions and what performs them.
struct Evictor {
    /// Cached pods, with the `spec.nodeName` index.
    pods: Store<Pod>,
    /// Cached nodes.
    nodes: Store<Node>,
    /// Scheduled deletions by pod key (upstream `TimedWorkerQueue`).
    scheduled: Mutex<HashMap<String, Entry>>,
    /// Fires scheduled deletions.
    deletions: WorkQueue<String>,
    /// Deletes pods and patches their status.
    client: Client,
    /// `TaintManagerEviction` Events.
    recorder: EventRecorder,
    /// Upstream's deletion metrics (absent in tests that do not scrape).
    metrics: Option<EvictionMetrics>,
}

/// One pod's scheduled deletion.
struct Entry {
    /// What the core decided.
    scheduled: Scheduled,
    /// A deletion request is in flight: decisions leave the entry alone
    /// until it ends (upstream cannot stop a running worker either).
    in_flight: bool,
    /// The "Marking for deletion" Event was recorded (once per deletion,
    /// not per retry).
    announced: bool,
}

// === impl TaintEvictionController ===

impl TaintEvictionController {
    /// Builds the controller on `factory`'s Pod and Node informers and
    /// registers its handlers and the pod index (before `factory.start()`).
    ///
    /// # Errors
    /// The pod index cannot be added (the pod informer already started).
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueues spawn their timer tasks).
    pub fn new(
        factory: &SharedInformerFactory,
        client: Client,
        recorder: EventRecorder,
        metrics: Option<EvictionMetrics>,
        queue_metrics: Option<&QueueMetrics>,
    ) -> Result<Self, informer::Error> {
        let node_queue = WorkQueue::new(NODE_QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let pod_queue = WorkQueue::new(POD_QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        // Not an upstream queue (upstream runs one timer per pod): no metrics.
        let deletion_queue = WorkQueue::new("", default_controller_rate_limiter(), None);
        let pods = factory.informer::<Pod>();
        let nodes = factory.informer::<Node>();
        register_pod_node_name_index(&pods)?;
        let resync = Some(factory.default_resync());
        let registrations = vec![
            nodes.add_handler(NodeHandler { queue: node_queue.clone() }, resync),
            pods.add_handler(PodHandler { queue: pod_queue.clone() }, resync),
        ];
        let evictor = Arc::new(Evictor {
            pods: pods.store(),
            nodes: nodes.store(),
            scheduled: Mutex::new(HashMap::new()),
            deletions: deletion_queue.clone(),
            client,
            recorder,
            metrics,
        });
        Ok(Self { node_queue, pod_queue, deletion_queue, pods, nodes, registrations, evictor })
    }
}

impl Controller for TaintEvictionController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let synced: Vec<&(dyn HasSynced + Sync)> =
                vec![&self.pods, &self.nodes, &self.registrations[0], &self.registrations[1]];
            let queues = [&self.node_queue, &self.pod_queue, &self.deletion_queue];
            if !cx.wait_for_caches(&synced, &queues).await {
                return;
            }
            let evictor = &self.evictor;
            let judge = |on| Arc::new(Judge { evictor: evictor.clone(), on });
            tokio::join!(
                cx.pool(self.node_queue.clone(), judge(Evictor::node_changed), cx.workers, RETRIES),
                cx.pool(self.pod_queue.clone(), judge(Evictor::pod_changed), cx.workers, RETRIES),
                cx.pool(self.deletion_queue.clone(), Arc::new(DeletionSync(evictor.clone())), cx.workers, RETRIES),
            );
        })
    }
}

// === handlers ===

/// Node adds and deletes, and updates that change the `NoExecute` taints
/// (upstream `NodeUpdated`).
struct NodeHandler {
    queue: WorkQueue<String>,
}

impl EventHandler<Node> for NodeHandler {
    fn on_add(&self, node: &Arc<Node>) {
        self.queue.add(informer::key_of(&**node));
    }

    fn on_update(&self, old: &Arc<Node>, new: &Arc<Node>) {
        if no_execute_taints(old) != no_execute_taints(new) {
            self.queue.add(informer::key_of(&**new));
        }
    }

    fn on_delete(&self, node: &Arc<Node>) {
        self.queue.add(informer::key_of(&**node));
    }
}

/// Pod adds and deletes, and updates that change the tolerations or the
/// node (upstream `PodUpdated`), or replace the pod by another of the same
/// name.
struct PodHandler {
    queue: WorkQueue<String>,
}

impl EventHandler<Pod> for PodHandler {
    fn on_add(&self, pod: &Arc<Pod>) {
        self.queue.add(informer::key_of(&**pod));
    }

    fn on_update(&self, old: &Arc<Pod>, new: &Arc<Pod>) {
        let tolerations = |p: &Pod| p.spec.as_ref().and_then(|s| s.tolerations.clone()).unwrap_or_default();
        let node = |p: &Pod| p.spec.as_ref().and_then(|s| s.node_name.clone()).unwrap_or_default();
        if old.metadata.uid != new.metadata.uid || tolerations(old) != tolerations(new) || node(old) != node(new) {
            self.queue.add(informer::key_of(&**new));
        }
    }

    fn on_delete(&self, pod: &Arc<Pod>) {
        self.queue.add(informer::key_of(&**pod));
    }
}

// === syncs ===

/// `noexec_taint_node` (every pod on a node, upstream `handleNodeUpdate`)
/// and `noexec_taint_pod` (one pod, upstream `handlePodUpdate`): decisions
/// only, no API call, so they never fail.
struct Judge {
    evictor: Arc<Evictor>,
    /// [`Evictor::node_changed`] or [`Evictor::pod_changed`].
    on: fn(&Evictor, &str),
}

impl Reconcile for Judge {
    fn sync<'a>(&'a self, key: &'a str) -> SyncFuture<'a> {
        Box::pin(async move {
            (self.on)(&self.evictor, key);
            Ok(Next::Done)
        })
    }
}

/// The deletion queue: a scheduled deletion that may be due.
struct DeletionSync(Arc<Evictor>);

impl Reconcile for DeletionSync {
    fn sync<'a>(&'a self, key: &'a str) -> SyncFuture<'a> {
        Box::pin(self.0.fire(key))
    }
}

// === impl Evictor ===

/// Why a deletion failed; it is retried with backoff.
#[derive(Debug, thiserror::Error)]
#[error("cannot {action} pod {key}")]
struct DeletionError {
    key: String,
    action: &'static str,
    #[source]
    source: kube::Error,
}

impl Evictor {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        // Every critical section leaves the map whole.
        self.scheduled.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Judges every pod on the node `name` against its `NoExecute` taints.
    /// A node gone from the cache changes nothing (upstream forgets its
    /// taints and leaves scheduled deletions as they are).
    fn node_changed(&self, name: &str) {
        let Some(node) = self.nodes.get(name) else {
            tracing::debug!(node = name, "node deleted; scheduled deletions stand");
            return;
        };
        let taints = no_execute_taints(&node);
        let pods = match self.pods.by_index(POD_NODE_NAME_INDEX, name) {
            Ok(pods) => pods,
            Err(error) => {
                tracing::error!(node = name, %error, "cannot list the pods of the node");
                return;
            }
        };
        let now = Timestamp::now();
        let mut scheduled = self.lock();
        for pod in pods {
            self.judge(&mut scheduled, &informer::key_of(&*pod), Some(&pod), Some(&taints), now);
        }
    }

    /// Judges the pod `key` against its node's `NoExecute` taints.
    fn pod_changed(&self, key: &str) {
        let pod = self.pods.get(key);
        let node = pod.as_ref().and_then(|p| p.spec.as_ref()?.node_name.clone()).unwrap_or_default();
        let taints = (!node.is_empty()).then(|| self.nodes.get(&node)).flatten().map(|n| no_execute_taints(&n));
        let now = Timestamp::now();
        let mut scheduled = self.lock();
        self.judge(&mut scheduled, key, pod.as_deref(), taints.as_deref(), now);
    }

    /// Asks the core about one pod and applies its decision to `scheduled`.
    fn judge(
        &self,
        scheduled: &mut HashMap<String, Entry>,
        key: &str,
        pod: Option<&Pod>,
        taints: Option<&[Taint]>,
        now: Timestamp,
    ) {
        let existing = scheduled.get(key);
        if existing.is_some_and(|e| e.in_flight) {
            return;
        }
        let spec = pod.and_then(|p| p.spec.as_ref());
        let facts = pod.map(|p| PodFacts {
            uid: p.metadata.uid.as_deref().unwrap_or_default(),
            node_name: spec.and_then(|s| s.node_name.as_deref()).unwrap_or_default(),
            tolerations: spec.and_then(|s| s.tolerations.as_deref()).unwrap_or_default(),
        });
        let decision = core::decide(taints, facts.as_ref(), existing.map(|e| &e.scheduled), now);
        let (created_at, fire_at) = match decision {
            Decision::Nothing => return,
            Decision::Cancel => {
                self.cancel(scheduled, key);
                return;
            }
            Decision::DeleteNow => (now, now),
            Decision::DeleteAt { created_at, fire_at } => (created_at, fire_at),
        };
        let Some(facts) = facts else { return };
        self.cancel(scheduled, key);
        tracing::debug!(pod = key, node = facts.node_name, %fire_at, "scheduling deletion");
        let entry = Scheduled { uid: facts.uid.to_owned(), node: facts.node_name.to_owned(), created_at, fire_at };
        scheduled.insert(key.to_owned(), Entry { scheduled: entry, in_flight: false, announced: false });
        self.deletions.add_after(key.to_owned(), until(fire_at, now));
    }

    /// Drops the scheduled deletion of `key`, if any, with upstream's
    /// cancel Event.
    fn cancel(&self, scheduled: &mut HashMap<String, Entry>, key: &str) {
        if scheduled.remove(key).is_some() {
            tracing::debug!(pod = key, "cancelling deletion");
            let (namespace, name) = split(key);
            self.recorder.event(
                &pod_reference(namespace, name),
                EventType::Normal,
                core::EVENT_REASON,
                core::cancelling_message(namespace, name),
            );
        }
    }

    /// Carries out the deletion of `key` if it is (still) scheduled and due.
    async fn fire(&self, key: &str) -> Result<Next, SyncError> {
        let now = Timestamp::now();
        let (namespace, name) = split(key);
        let target = {
            let mut scheduled = self.lock();
            let Some(entry) = scheduled.get_mut(key) else { return Ok(Next::Done) };
            if entry.scheduled.fire_at > now {
                // Rescheduled later since this key was queued.
                return Ok(Next::After(until(entry.scheduled.fire_at, now)));
            }
            entry.in_flight = true;
            if !entry.announced {
                entry.announced = true;
                tracing::info!(controller = CONTROLLER_NAME, pod = key, "Deleting pod");
                self.recorder.event(
                    &pod_reference(namespace, name),
                    EventType::Normal,
                    core::EVENT_REASON,
                    core::marking_message(namespace, name),
                );
            }
            entry.scheduled.clone()
        };
        let result = self.delete(namespace, name, &target).await;
        let mut scheduled = self.lock();
        let ours = scheduled.get(key).is_some_and(|e| e.scheduled == target);
        match result {
            Ok(deleted) => {
                if ours {
                    scheduled.remove(key);
                }
                if deleted && let Some(metrics) = &self.metrics {
                    metrics.deletions.inc();
                    let late = Timestamp::now().duration_since(target.fire_at);
                    metrics.latency.observe(late.as_secs_f64().max(0.0));
                }
                Ok(Next::Done)
            }
            Err(error) => {
                if let Some(entry) = scheduled.get_mut(key).filter(|_| ours) {
                    // Decisions may cancel it again until the retry.
                    entry.in_flight = false;
                }
                Err(Box::new(error))
            }
        }
    }

    /// Upstream `addConditionAndDeletePod`, on the pod with `target.uid`
    /// only. Returns whether this call deleted the pod (false: it was gone
    /// or replaced already).
    async fn delete(&self, namespace: &str, name: &str, target: &Scheduled) -> Result<bool, DeletionError> {
        let key = &object_key(Some(namespace), name);
        let err = |action| move |source| DeletionError { key: key.clone(), action, source };
        let api: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        let Some(pod) = api.get_opt(name).await.map_err(err("get"))? else { return Ok(false) };
        if pod.metadata.uid.as_deref() != Some(target.uid.as_str()) {
            return Ok(false);
        }
        let conditions = pod.status.as_ref().and_then(|s| s.conditions.as_deref()).unwrap_or_default();
        if let Some(condition) = core::disruption_condition(conditions, Timestamp::now()) {
            let patch = json!({"metadata": {"uid": target.uid}, "status": {"conditions": [condition]}});
            match api.patch_status(name, &PatchParams::default(), &Patch::Strategic(patch)).await {
                Ok(_) => {}
                Err(e) if gone(&e) => return Ok(false),
                Err(e) => return Err(err("add the DisruptionTarget condition to")(e)),
            }
        }
        let params = DeleteParams {
            preconditions: Some(Preconditions { uid: Some(target.uid.clone()), resource_version: None }),
            ..DeleteParams::default()
        };
        match api.delete(name, &params).await {
            Ok(_) => Ok(true),
            Err(e) if gone(&e) => Ok(false),
            Err(e) => Err(err("delete")(e)),
        }
    }
}

/// The node's `NoExecute` taints.
fn no_execute_taints(node: &Node) -> Vec<Taint> {
    core::no_execute_taints(node.spec.as_ref().and_then(|s| s.taints.as_deref()).unwrap_or_default())
}

/// NotFound, or a uid precondition that failed: the pod meant is gone.
fn gone(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(s) if s.code == 404 || s.code == 409)
}

/// How long from `now` until `at` (zero if past).
fn until(at: Timestamp, now: Timestamp) -> Duration {
    Duration::try_from(at.duration_since(now)).unwrap_or(Duration::ZERO)
}

/// `(namespace, name)` of a pod key.
fn split(key: &str) -> (&str, &str) {
    key.split_once('/').unwrap_or(("", key))
}

/// The Event's `involvedObject` (upstream names the pod without its uid).
fn pod_reference(namespace: &str, name: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Pod".into()),
        namespace: Some(namespace.into()),
        name: Some(name.into()),
        ..ObjectReference::default()
    }
}
