//! The ReplicaSet controller's driver (upstream
//! `pkg/controller/replicaset/replica_set.go` minus `syncReplicaSet`'s
//! decisions, which live in `kcm_controllers::replicaset`).
//!
//! It owns:
//! - the event handlers on the shared ReplicaSet and Pod informers, which
//!   map changes to ReplicaSet keys as upstream does and feed the
//!   expectations with the pod adds and deletes they observe;
//! - the `replicaset` workqueue (upstream's default controller rate
//!   limiter) and the worker pool (`--concurrent-replicaset-syncs`, at most
//!   [`RETRIES`] failed syncs per key);
//! - the per-key sync: a [`Snapshot`] of the caches, and the core's
//!   [`SyncMachine`] driven to its end by the executor, which reports pod
//!   creates and deletes to the expectations.

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use kcm_controllers::common::pod::is_pod_ready;
use kcm_controllers::common::selector::Selector;
use kcm_controllers::replicaset::{self as core, NamespacePods, Options, Snapshot, SyncMachine};
use kcm_objects::ReplicaSet;
use kcm_objects::{OwnerRef, Pod};

use super::execute::{Executor, next_after};
use super::expectations::{OwnKindHandler, SharedExpectations};
use super::owners;
use crate::drivers::parts::{Identity, Parts};
use futures::future::BoxFuture;
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::informer::{self, EventHandler, HandlerRegistration, HasSynced, SharedInformer, Store};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kcm_runtime::workqueue::{WorkQueue, default_controller_rate_limiter};

/// How upstream names the controller.
pub const IDENTITY: Identity =
    Identity { name: "replicaset-controller", client: "replicaset-controller", events: "replicaset-controller" };

/// The workqueue's name (the `name` label of the `workqueue_*` metrics).
pub const QUEUE_NAME: &str = "replicaset";

/// Failed syncs of one key before it is dropped, 15 (upstream `maxRetries`:
/// 5 ms · 2^15 ≈ 82 s of backoff in total), drained on stop.
pub const RETRIES: Retries = Retries::at_most(15);

/// The ReplicaSet controller, ready to run once its caches sync.
pub struct ReplicaSetController {
    /// Keys (`namespace/name`) of ReplicaSets to sync.
    queue: WorkQueue<String>,
    /// Read for the pod cache's resourceVersion.
    pods: SharedInformer<Pod>,
    /// Read for the ReplicaSet cache's sync state.
    replica_sets: SharedInformer<ReplicaSet>,
    /// Handler registrations: workers start once both have delivered the
    /// initial lists.
    registrations: Vec<HandlerRegistration>,
    /// What [`Reconcile::sync`] reads and writes.
    syncer: Arc<Syncer>,
}

/// The per-key sync, shared by the workers.
struct Syncer {
    /// Cached pods (all namespaces).
    pods: Store<Pod>,
    /// The pod informer, for [`SharedInformer::last_resource_version`].
    pod_informer: SharedInformer<Pod>,
    /// Cached ReplicaSets.
    replica_sets: Store<ReplicaSet>,
    /// In-flight creates and deletes, shared with the pod handler.
    expectations: SharedExpectations,
    /// Performs the plans.
    executor: Executor,
    /// Core settings.
    options: Options,
}

// === impl ReplicaSetController ===

impl ReplicaSetController {
    /// Builds the controller on `parts` (its pod and ReplicaSet handlers
    /// and indexes); `options` are the core's settings (from
    /// `--feature-gates`).
    ///
    /// # Errors
    /// The pod indexes cannot be added (the pod informer has started).
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(parts: Parts<'_>, options: Options) -> Result<Self, informer::Error> {
        let Parts { factory, client, recorder, queue_metrics } = parts;
        let queue = WorkQueue::new(QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let pods = factory.informer::<Pod>();
        let replica_sets = factory.informer::<ReplicaSet>();
        owners::register(&pods)?;
        owners::register(&replica_sets)?;
        let expectations = SharedExpectations::default();
        let resync = Some(factory.default_resync());
        let rs_registration = replica_sets
            .add_handler(OwnKindHandler { queue: queue.clone(), expectations: expectations.clone() }, resync);
        let pod_registration = pods.add_handler(
            PodHandler { queue: queue.clone(), replica_sets: replica_sets.store(), expectations: expectations.clone() },
            resync,
        );
        let syncer = Arc::new(Syncer {
            pods: pods.store(),
            pod_informer: pods.clone(),
            replica_sets: replica_sets.store(),
            expectations,
            executor: Executor::new(client, recorder).with_replica_sets(replica_sets.store()),
            options,
        });
        Ok(Self { queue, pods, replica_sets, registrations: vec![rs_registration, pod_registration], syncer })
    }
}

impl Controller for ReplicaSetController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let synced: Vec<&(dyn HasSynced + Sync)> =
                vec![&self.pods, &self.replica_sets, &self.registrations[0], &self.registrations[1]];
            cx.run_when_synced(&synced, self.queue.clone(), self.syncer.clone(), RETRIES).await;
        })
    }
}

// === impl Syncer ===

impl Reconcile for Syncer {
    /// One sync of the ReplicaSet `key`.
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let Some(rs) = self.replica_sets.get(key) else {
            tracing::debug!(%key, "ReplicaSet has been deleted");
            self.expectations.lock().delete(key);
            return Ok(Next::Done);
        };
        // A snapshot of the caches taken now: the pods the ReplicaSet
        // controls and its namespace's orphans, and the ReplicaSets under
        // its controller, from the indexes (the namespace's other pods only
        // when ranking for a scale-down).
        let namespace = &*rs.metadata.namespace;
        // Read before the pods: the pod list is then at least this recent.
        let pods_resource_version = self.pod_informer.last_resource_version();
        let pods = owners::claimable(&self.pods, Some(&rs.metadata.uid.to_string()), namespace);
        let namespace_pods = || self.pods.list_namespace(namespace);
        let replica_sets = owners::under_same_controller(&self.replica_sets, &rs);
        // A copy of this key's record: the other workers and the pod
        // handler go on while this one plans.
        let expectations = self.expectations.lock().of(&core::key(&rs));
        let snapshot = Snapshot {
            replica_set: &rs,
            pods: &pods,
            namespace_pods: NamespacePods(&namespace_pods),
            replica_sets: &replica_sets,
            expectations: &expectations,
            pods_resource_version,
            now: Timestamp::now(),
        };
        let machine = SyncMachine::new(&snapshot, &self.options);
        next_after(self.executor.drive(machine, &self.expectations, &self.executor).await)
    }
}

// === handlers ===

/// Pod changes: sync the ReplicaSet controlling the pod (feeding its
/// expectations), or, for an orphan, every ReplicaSet that could adopt it.
struct PodHandler {
    queue: WorkQueue<String>,
    replica_sets: Store<ReplicaSet>,
    expectations: SharedExpectations,
}

impl EventHandler<Pod> for PodHandler {
    fn on_add(&self, pod: &Arc<Pod>) {
        if pod.metadata.deletion_timestamp().is_some() {
            // Seen for the first time already being deleted (e.g. after a
            // restart): it must not count as a creation.
            self.on_delete(pod);
            return;
        }
        if let Some(cref) = pod.metadata.controller() {
            if let Some(rs) = self.resolve(pod, cref) {
                let key = core::key(&rs);
                self.expectations.lock().creation_observed(&key, &pod.metadata.key());
                self.queue.add(key);
            }
            return;
        }
        self.enqueue_adopters(pod);
    }

    fn on_update(&self, old: &Arc<Pod>, new: &Arc<Pod>) {
        if old.metadata.resource_version == new.metadata.resource_version {
            // A periodic resync: nothing changed.
            return;
        }
        let labels_changed = old.metadata.labels != new.metadata.labels;
        if new.metadata.deletion_timestamp().is_some() {
            // Graceful deletion started: the ReplicaSet may create a
            // replacement now rather than when the kubelet is done.
            self.on_delete(new);
            if labels_changed {
                self.on_delete(old);
            }
            return;
        }
        let new_ref = new.metadata.controller();
        let old_ref = old.metadata.controller();
        let ref_changed = new_ref != old_ref;
        if ref_changed && let Some(rs) = old_ref.and_then(|r| self.resolve(old, r)) {
            self.queue.add(core::key(&rs));
        }
        if let Some(cref) = new_ref {
            if let Some(rs) = self.resolve(new, cref) {
                let min_ready = rs.spec.min_ready_seconds.unwrap_or(0);
                self.queue.add(core::key(&rs));
                if min_ready > 0 && !is_pod_ready(old) && is_pod_ready(new) {
                    // Check availability once minReadySeconds have passed.
                    let delay = Duration::from_secs(u64::try_from(min_ready).unwrap_or(0) + 1);
                    self.queue.add_after(core::key(&rs), delay);
                }
            }
            return;
        }
        if labels_changed || ref_changed {
            self.enqueue_adopters(new);
        }
    }

    fn on_delete(&self, pod: &Arc<Pod>) {
        let Some(cref) = pod.metadata.controller() else { return };
        if let Some(rs) = self.resolve(pod, cref) {
            let key = core::key(&rs);
            self.expectations.lock().deletion_observed(&key, &pod.metadata.key());
            self.queue.add(key);
        }
    }
}

impl PodHandler {
    /// The cached ReplicaSet `cref` names, if it is that very object
    /// (upstream `resolveControllerRef`).
    fn resolve(&self, pod: &Pod, cref: &OwnerRef) -> Option<Arc<ReplicaSet>> {
        self.replica_sets.resolve_controller_ref("ReplicaSet", Some(&pod.metadata.namespace), cref)
    }

    /// Enqueues every ReplicaSet of the pod's namespace whose selector
    /// matches it (upstream `getPodReplicaSets`): one may adopt it.
    fn enqueue_adopters(&self, pod: &Pod) {
        for rs in self.replica_sets.list_namespace(&pod.metadata.namespace) {
            let Ok(selector) = Selector::of_spec(&rs.spec.selector) else { continue };
            if !selector.is_everything() && selector.matches(&pod.metadata.labels) {
                self.queue.add(core::key(&rs));
            }
        }
    }
}
