//! The Deployment controller's driver (upstream
//! `pkg/controller/deployment/deployment_controller.go` minus
//! `syncDeployment`'s decisions, which live in `kcm_controllers::deployment`).
//!
//! It owns:
//! - the event handlers on the shared Deployment, ReplicaSet and Pod
//!   informers, which map changes to Deployment keys as upstream does
//!   (ReplicaSets through their controllerRef, orphans to every Deployment
//!   that could adopt them; pod deletions only for `Recreate` Deployments
//!   left with no pods);
//! - the `deployment` workqueue (upstream's default controller rate
//!   limiter) and the worker pool (`--concurrent-deployment-syncs`, at most
//!   [`RETRIES`] failed syncs per key);
//! - the per-key sync: a [`Snapshot`] of the caches, and the core's
//!   [`SyncMachine`] driven to its end by the executor;
//! - the shared ReplicaSet informer's indexes by controller (`owners`): a
//!   sync reads the ReplicaSets its Deployment controls and the orphans it
//!   may adopt, not its whole namespace's (upstream lists the namespace
//!   and claims; the claim ignores every ReplicaSet another controller
//!   owns, so the outcome is the same).
//!
//! A Deployment is not synced while a ReplicaSet its sync created is not
//! yet in the cache (`drivers::expectations`); the ReplicaSet's add event
//! queues it again. Upstream has no such wait.
//!
//! A Deployment whose selector or strategy cannot be evaluated is logged and
//! left alone until it changes (upstream retries it 15 times to no avail).

use std::sync::Arc;

use jiff::Timestamp;
use kcm_controllers::common::selector::Selector;
use kcm_controllers::deployment::{self as core, Options, Snapshot, SyncMachine};
use kcm_objects::Deployment;
use kcm_objects::ReplicaSet;
use kcm_objects::{OwnerRef, Pod, Uid};

use super::execute::{Executor, next_after};
use super::expectations::SharedExpectations;
use super::owners;
use crate::drivers::parts::{Identity, Parts};
use futures::future::BoxFuture;
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::informer::{self, Enqueue, EventHandler, HandlerRegistration, HasSynced, SharedInformer, Store};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kcm_runtime::workqueue::{WorkQueue, default_controller_rate_limiter};

/// How upstream names the controller.
pub const IDENTITY: Identity =
    Identity { name: "deployment-controller", client: "deployment-controller", events: "deployment-controller" };

/// The workqueue's name (the `name` label of the `workqueue_*` metrics).
pub const QUEUE_NAME: &str = "deployment";

/// Failed syncs of one key before it is dropped, 15 (upstream `maxRetries`:
/// 5 ms · 2^15 ≈ 82 s of backoff in total), drained on stop.
pub const RETRIES: Retries = Retries::at_most(15);

/// The Deployment controller, ready to run once its caches sync.
pub struct DeploymentController {
    /// Keys (`namespace/name`) of Deployments to sync.
    queue: WorkQueue<String>,
    /// The informers it reads, for their sync state.
    deployments: SharedInformer<Deployment>,
    replica_sets: SharedInformer<ReplicaSet>,
    pods: SharedInformer<Pod>,
    /// Handler registrations: workers start once all have delivered the
    /// initial lists.
    registrations: Vec<HandlerRegistration>,
    /// What [`Reconcile::sync`] reads and writes.
    syncer: Arc<Syncer>,
}

/// The per-key sync, shared by the workers.
struct Syncer {
    /// Cached Deployments.
    deployments: Store<Deployment>,
    /// Cached ReplicaSets (all namespaces).
    replica_sets: Store<ReplicaSet>,
    /// Cached pods (all namespaces): read for `Recreate` Deployments only.
    pods: Store<Pod>,
    /// The ReplicaSets its syncs made that the cache may not show yet (no
    /// pod expectations: the Deployment controller has none).
    made: SharedExpectations,
    /// Performs the plans.
    executor: Executor,
    /// Core settings.
    options: Options,
}

// === impl DeploymentController ===

impl DeploymentController {
    /// Builds the controller on `parts` (its Deployment, ReplicaSet and pod
    /// handlers); `options` are the core's settings (from
    /// `--feature-gates`).
    ///
    /// # Errors
    /// The ReplicaSet indexes cannot be added: `factory` has started.
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(parts: Parts<'_>, options: Options) -> Result<Self, informer::Error> {
        let Parts { factory, client, recorder, queue_metrics } = parts;
        let queue = WorkQueue::new(QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let deployments = factory.informer::<Deployment>();
        let replica_sets = factory.informer::<ReplicaSet>();
        owners::register(&replica_sets)?;
        let pods = factory.informer::<Pod>();
        let resync = Some(factory.default_resync());
        let lookup =
            Lookup { queue: queue.clone(), deployments: deployments.store(), replica_sets: replica_sets.store() };
        let registrations = vec![
            deployments.add_handler(Enqueue { queue: queue.clone() }, resync),
            replica_sets.add_handler(ReplicaSetHandler(lookup.clone()), resync),
            pods.add_handler(PodHandler { lookup, pods: pods.store() }, resync),
        ];
        let syncer = Arc::new(Syncer {
            deployments: deployments.store(),
            replica_sets: replica_sets.store(),
            pods: pods.store(),
            made: SharedExpectations::default(),
            executor: Executor::new(client, recorder),
            options,
        });
        Ok(Self { queue, deployments, replica_sets, pods, registrations, syncer })
    }
}

impl Controller for DeploymentController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let mut synced: Vec<&(dyn HasSynced + Sync)> = vec![&self.deployments, &self.replica_sets, &self.pods];
            synced.extend(self.registrations.iter().map(|r| r as &(dyn HasSynced + Sync)));
            cx.run_when_synced(&synced, self.queue.clone(), self.syncer.clone(), RETRIES).await;
        })
    }
}

// === impl Syncer ===

impl Reconcile for Syncer {
    /// One sync of the Deployment `key`.
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let Some(d) = self.deployments.get(key) else {
            tracing::debug!(%key, "Deployment has been deleted");
            self.made.delete(key);
            return Ok(Next::Done);
        };
        if self.made.created_unseen_in(key, &self.replica_sets) {
            // Its add event queues the Deployment again.
            tracing::debug!(%key, "waiting for the cache to show the ReplicaSet this Deployment made");
            return Ok(Next::Done);
        }
        let namespace = &*d.metadata.namespace;
        let replica_sets = owners::claimable(&self.replica_sets, Some(&d.metadata.uid.to_string()), namespace);
        // Only Recreate reads pods: spare the copy of a large namespace's.
        let pods = if core::is_recreate(&d) { self.pods.list_namespace(namespace) } else { Vec::new() };
        let snapshot = Snapshot { deployment: &d, replica_sets: &replica_sets, pods: &pods, now: Timestamp::now() };
        match SyncMachine::new(&snapshot, &self.options) {
            Ok(machine) => next_after(self.executor.drive(machine, &self.made, &self.executor).await),
            Err(error) => {
                tracing::warn!(%key, %error, "cannot sync Deployment; waiting for it to change");
                Ok(Next::Done)
            }
        }
    }
}

// === handlers ===

/// From dependents to the Deployments to sync.
#[derive(Clone)]
struct Lookup {
    queue: WorkQueue<String>,
    deployments: Store<Deployment>,
    replica_sets: Store<ReplicaSet>,
}

impl Lookup {
    /// The cached Deployment `cref` names in `namespace`, if it is that
    /// very object (upstream `resolveControllerRef`).
    fn resolve(&self, namespace: &str, cref: &OwnerRef) -> Option<Arc<Deployment>> {
        self.deployments.resolve_controller_ref("Deployment", Some(namespace), cref)
    }

    /// Enqueues the Deployment that controls `rs`, if cached.
    fn enqueue_owner(&self, rs: &ReplicaSet, cref: &OwnerRef) {
        if let Some(d) = self.resolve(&rs.metadata.namespace, cref) {
            self.queue.add(core::key(&d));
        }
    }

    /// Enqueues every Deployment of the ReplicaSet's namespace whose
    /// non-empty selector matches its labels (upstream
    /// `getDeploymentsForReplicaSet`): one may adopt it.
    fn enqueue_adopters(&self, rs: &ReplicaSet) {
        let namespace = &rs.metadata.namespace;
        if namespace.is_empty() || rs.metadata.labels.is_empty() {
            return;
        }
        for d in self.deployments.list_namespace(namespace) {
            let Ok(selector) = Selector::of_spec(&d.spec.selector) else { continue };
            if !selector.is_everything() && selector.matches(&rs.metadata.labels) {
                self.queue.add(core::key(&d));
            }
        }
    }
}

/// ReplicaSet changes: sync the Deployment controlling it, or, for an
/// orphan, every Deployment that could adopt it.
struct ReplicaSetHandler(Lookup);

impl EventHandler<ReplicaSet> for ReplicaSetHandler {
    fn on_add(&self, rs: &Arc<ReplicaSet>) {
        if rs.metadata.deletion_timestamp.is_some() {
            // Seen for the first time already being deleted (a restart).
            self.on_delete(rs);
            return;
        }
        match rs.metadata.controller() {
            Some(cref) => self.0.enqueue_owner(rs, cref),
            None => self.0.enqueue_adopters(rs),
        }
    }

    fn on_update(&self, old: &Arc<ReplicaSet>, new: &Arc<ReplicaSet>) {
        if old.metadata.resource_version == new.metadata.resource_version {
            // A periodic resync: nothing changed.
            return;
        }
        let (old_ref, new_ref) = (old.metadata.controller(), new.metadata.controller());
        let ref_changed = old_ref != new_ref;
        if ref_changed && let Some(cref) = old_ref {
            self.0.enqueue_owner(old, cref);
        }
        if let Some(cref) = new_ref {
            self.0.enqueue_owner(new, cref);
            return;
        }
        if ref_changed || old.metadata.labels != new.metadata.labels {
            self.0.enqueue_adopters(new);
        }
    }

    fn on_delete(&self, rs: &Arc<ReplicaSet>) {
        if let Some(cref) = rs.metadata.controller() {
            self.0.enqueue_owner(rs, cref);
        }
    }
}

/// Pod deletions: a `Recreate` Deployment waits for its old pods to be
/// gone, so sync it once it has none (upstream `deletePod`).
struct PodHandler {
    lookup: Lookup,
    pods: Store<Pod>,
}

impl EventHandler<Pod> for PodHandler {
    fn on_delete(&self, pod: &Arc<Pod>) {
        let Some(d) = self.deployment_of(pod) else { return };
        if !core::is_recreate(&d) {
            return;
        }
        let namespace = &*d.metadata.namespace;
        let Ok(selector) = Selector::of_spec(&d.spec.selector) else { return };
        let owned: Vec<Uid> = self
            .lookup
            .replica_sets
            .list_namespace(namespace)
            .iter()
            .filter(|rs| rs.metadata.controller().is_some_and(|r| d.metadata.uid == *r.uid))
            .map(|rs| rs.metadata.uid.clone())
            .collect();
        let remaining = self.pods.list_namespace(namespace).iter().any(|p| {
            selector.matches(&p.metadata.labels)
                && p.metadata.controller().is_some_and(|r| owned.iter().any(|u| *u == *r.uid))
        });
        if !remaining {
            self.lookup.queue.add(core::key(&d));
        }
    }
}

impl PodHandler {
    /// The Deployment controlling the ReplicaSet controlling `pod`
    /// (upstream `getDeploymentForPod`).
    fn deployment_of(&self, pod: &Pod) -> Option<Arc<Deployment>> {
        let cref = pod.metadata.controller()?;
        let rs = self.lookup.replica_sets.resolve_controller_ref("ReplicaSet", Some(&pod.metadata.namespace), cref)?;
        self.lookup.resolve(&rs.metadata.namespace, rs.metadata.controller()?)
    }
}
