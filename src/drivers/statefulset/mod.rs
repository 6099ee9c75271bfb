//! The StatefulSet controller's driver (upstream
//! `pkg/controller/statefulset/stateful_set.go` minus the decisions of
//! `sync`, which live in `kcm_controllers::statefulset`).
//!
//! It owns:
//! - the event handlers on the shared StatefulSet and Pod informers, which
//!   map changes to StatefulSet keys as upstream does (a pod through its
//!   controllerRef, an orphan to every set whose selector matches it; a pod
//!   turning Ready under a set with `minReadySeconds` queues the set again
//!   once they have passed). An added PersistentVolumeClaim syncs the sets
//!   whose claim it is by name, and an added ControllerRevision the set
//!   controlling it; upstream has neither handler. A claim the sync
//!   created can reach the cache after the last event of its pod, and
//!   would otherwise wait for the set's next change to get the owner
//!   references of the retention policy; a set waits for the revisions it
//!   made to show before it syncs (`drivers::expectations`), and the
//!   revision's add wakes it;
//! - the `statefulset` workqueue (upstream's default controller rate
//!   limiter, retried for as long as it fails: upstream has no
//!   `maxRetries`) and the worker pool (`--concurrent-statefulset-syncs`);
//! - the per-key sync: a [`Snapshot`] of the caches, and the core's
//!   [`SyncMachine`] driven to its end by the executor.
//!
//! The pods a sync reads are those its set controls and its namespace's
//! orphans, from the shared pod informer's indexes by controller (`owners`,
//! which the ReplicaSet driver registers too); a claim ignores the others.

mod writes;

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kcm_controllers::common::controller_ref::controller_of;
use kcm_controllers::common::pod::is_pod_ready;
use kcm_controllers::common::selector::Selector;
use kcm_controllers::statefulset::{self as core, Options, Snapshot, SyncMachine};
use kcm_objects::{OwnerRef, Pod};

use super::execute::{Executor, next_after};
use super::expectations::SharedExpectations;
use super::owners;
use crate::drivers::parts::{Identity, Parts};
use futures::future::BoxFuture;
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::informer::{self, Enqueue, EventHandler, HandlerRegistration, HasSynced, SharedInformer, Store};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kcm_runtime::workqueue::{WorkQueue, default_controller_rate_limiter};

pub use core::QUEUE_NAME;

/// How upstream names the controller.
pub const IDENTITY: Identity =
    Identity { name: core::CONTROLLER_NAME, client: "statefulset-controller", events: "statefulset-controller" };

/// The StatefulSet controller, ready to run once its caches sync.
pub struct StatefulSetController {
    /// Keys (`namespace/name`) of StatefulSets to sync.
    queue: WorkQueue<String>,
    /// The informers it reads, for their sync state.
    stateful_sets: SharedInformer<StatefulSet>,
    pods: SharedInformer<Pod>,
    claims: SharedInformer<PersistentVolumeClaim>,
    revisions: SharedInformer<ControllerRevision>,
    /// Handler registrations: workers start once both have delivered the
    /// initial lists.
    registrations: Vec<HandlerRegistration>,
    /// What [`Reconcile::sync`] reads and writes.
    syncer: Arc<Syncer>,
}

/// The per-key sync, shared by the workers.
struct Syncer {
    stateful_sets: Store<StatefulSet>,
    /// Cached pods (all namespaces), indexed by controller.
    pods: Store<Pod>,
    claims: Store<PersistentVolumeClaim>,
    revisions: Store<ControllerRevision>,
    /// The revisions its syncs made that the cache may not show yet (no pod
    /// expectations: upstream's StatefulSet controller has none).
    made: SharedExpectations,
    /// Performs the plans.
    executor: Executor,
    /// Core settings.
    options: Options,
}

// === impl StatefulSetController ===

impl StatefulSetController {
    /// Builds the controller on `parts` (its StatefulSet and pod handlers,
    /// the pod index); `options` are the core's settings (from
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
        let stateful_sets = factory.informer::<StatefulSet>();
        let pods = factory.informer::<Pod>();
        owners::register(&pods)?;
        let claims = factory.informer::<PersistentVolumeClaim>();
        let revisions = factory.informer::<ControllerRevision>();
        let resync = Some(factory.default_resync());
        let lookup = Lookup { queue: queue.clone(), stateful_sets: stateful_sets.store() };
        let registrations = vec![
            stateful_sets.add_handler(Enqueue { queue: queue.clone() }, resync),
            pods.add_handler(lookup.clone(), resync),
            revisions.add_handler(lookup.clone(), None),
            claims.add_handler(lookup, None),
        ];
        let syncer = Arc::new(Syncer {
            stateful_sets: stateful_sets.store(),
            pods: pods.store(),
            claims: claims.store(),
            revisions: revisions.store(),
            made: SharedExpectations::default(),
            executor: Executor::new(client, recorder),
            options,
        });
        Ok(Self { queue, stateful_sets, pods, claims, revisions, registrations, syncer })
    }
}

impl Controller for StatefulSetController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let mut synced: Vec<&(dyn HasSynced + Sync)> =
                vec![&self.stateful_sets, &self.pods, &self.claims, &self.revisions];
            synced.extend(self.registrations.iter().map(|r| r as &(dyn HasSynced + Sync)));
            cx.run_when_synced(&synced, self.queue.clone(), self.syncer.clone(), Retries::FOREVER).await;
        })
    }
}

// === impl Syncer ===

impl Reconcile for Syncer {
    /// One sync of the StatefulSet `key`.
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let Some(set) = self.stateful_sets.get(key) else {
            tracing::debug!(%key, "StatefulSet has been deleted");
            self.made.delete(key);
            return Ok(Next::Done);
        };
        if self.made.created_unseen_in(key, &self.revisions) {
            // Its add event queues the StatefulSet again.
            tracing::debug!(%key, "waiting for the cache to show the ControllerRevision this StatefulSet made");
            return Ok(Next::Done);
        }
        let namespace = set.metadata.namespace.as_deref().unwrap_or("");
        let pods = owners::claimable(&self.pods, set.metadata.uid.as_deref(), namespace);
        let claims = self.claims.list_namespace(namespace);
        let revisions = self.revisions.list_namespace(namespace);
        let snapshot =
            Snapshot { set: &set, pods: &pods, claims: &claims, revisions: &revisions, now: Timestamp::now() };
        let own = writes::Writes { executor: &self.executor, stateful_sets: &self.stateful_sets };
        next_after(self.executor.drive(SyncMachine::new(&snapshot, &self.options), &self.made, &own).await)
    }
}

// === handlers ===

/// From pods, ControllerRevisions and PersistentVolumeClaims to the
/// StatefulSets to sync. A pod syncs the set controlling it or, for an
/// orphan, every set that could adopt it.
#[derive(Clone)]
struct Lookup {
    queue: WorkQueue<String>,
    stateful_sets: Store<StatefulSet>,
}

impl EventHandler<Pod> for Lookup {
    fn on_add(&self, pod: &Arc<Pod>) {
        if pod.metadata.deletion_timestamp().is_some() {
            // Seen for the first time already being deleted (a restart).
            self.on_delete(pod);
            return;
        }
        match pod.metadata.controller() {
            Some(cref) => self.enqueue_owner(pod, cref),
            None => self.enqueue_adopters(pod),
        }
    }

    fn on_update(&self, old: &Arc<Pod>, new: &Arc<Pod>) {
        if old.metadata.resource_version == new.metadata.resource_version {
            // A periodic resync: nothing changed.
            return;
        }
        let (old_ref, new_ref) = (old.metadata.controller(), new.metadata.controller());
        let ref_changed = old_ref != new_ref;
        if ref_changed && let Some(cref) = old_ref {
            self.enqueue_owner(old, cref);
        }
        if let Some(cref) = new_ref {
            let Some(set) = self.resolve(new, cref) else { return };
            self.queue.add(core::key(&set));
            let min_ready = set.spec.min_ready_seconds.unwrap_or(0);
            if min_ready > 0 && !is_pod_ready(old) && is_pod_ready(new) {
                // Available once minReadySeconds have passed: look again then.
                let delay = Duration::from_secs(u64::try_from(min_ready).unwrap_or(0)) + Duration::from_secs(1);
                self.queue.add_after(core::key(&set), delay);
            }
            return;
        }
        if ref_changed || old.metadata.labels != new.metadata.labels {
            self.enqueue_adopters(new);
        }
    }

    fn on_delete(&self, pod: &Arc<Pod>) {
        if let Some(cref) = pod.metadata.controller() {
            self.enqueue_owner(pod, cref);
        }
    }
}

impl Lookup {
    /// The cached StatefulSet `cref` names, if it is that very object
    /// (upstream `resolveControllerRef`).
    fn resolve(&self, pod: &Pod, cref: &OwnerRef) -> Option<Arc<StatefulSet>> {
        self.stateful_sets.resolve_controller_ref("StatefulSet", Some(&pod.metadata.namespace), cref)
    }

    fn enqueue_owner(&self, pod: &Pod, cref: &OwnerRef) {
        if let Some(set) = self.resolve(pod, cref) {
            self.queue.add(core::key(&set));
        }
    }

    /// Enqueues every StatefulSet of the pod's namespace whose selector
    /// matches it (upstream `getStatefulSetsForPod`): one may adopt it.
    fn enqueue_adopters(&self, pod: &Pod) {
        for set in self.stateful_sets.list_namespace(&pod.metadata.namespace) {
            let Ok(selector) = Selector::new(Some(&set.spec.selector)) else { continue };
            if !selector.is_everything() && selector.matches(&pod.metadata.labels) {
                self.queue.add(core::key(&set));
            }
        }
    }
}

/// ControllerRevision adds: sync the StatefulSet controlling the revision.
impl EventHandler<ControllerRevision> for Lookup {
    fn on_add(&self, revision: &Arc<ControllerRevision>) {
        let Some(cref) = controller_of(&revision.metadata) else { return };
        let namespace = revision.metadata.namespace.as_deref();
        if let Some(set) = self.stateful_sets.resolve_controller_ref("StatefulSet", namespace, cref) {
            self.queue.add(core::key(&set));
        }
    }
}

/// PersistentVolumeClaim adds: sync every StatefulSet of the claim's
/// namespace whose claim it is by name (claims carry no owner reference
/// until the retention policy gives them one).
impl EventHandler<PersistentVolumeClaim> for Lookup {
    fn on_add(&self, claim: &Arc<PersistentVolumeClaim>) {
        let (Some(namespace), Some(name)) = (claim.metadata.namespace.as_deref(), claim.metadata.name.as_deref())
        else {
            return;
        };
        for set in self.stateful_sets.list_namespace(namespace) {
            if core::names_claim(&set, name) {
                self.queue.add(core::key(&set));
            }
        }
    }
}
