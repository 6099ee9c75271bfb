//! The DaemonSet controller's event handlers (upstream `addDaemonset` ..
//! `updateNode`): each maps a change to the DaemonSet keys to sync, and the
//! pod handler feeds the expectations with the adds and deletes it sees.
//!
//! - DaemonSets: sync it; a delete (or a recreate under the same name)
//!   forgets its expectations (`drivers::expectations::OwnKindHandler`).
//! - Pods and ControllerRevisions: sync the DaemonSet their controllerRef
//!   names (and the old one when the reference changed), or, for an orphan
//!   whose labels or reference changed, every DaemonSet whose non-empty
//!   selector matches it (one may adopt it). A pod becoming ready is looked
//!   at again after `minReadySeconds`. An added revision with a controller
//!   syncs it too (upstream only logs it): a DaemonSet waits for the
//!   revisions it made to show before it syncs (`drivers::expectations`),
//!   and this is what wakes it.
//! - Nodes: an added node syncs the DaemonSets that should run on it; an
//!   update the core does not ignore syncs those for which the node's
//!   placement changed. Upstream has no node delete handler: the pod
//!   garbage collector removes the pods of a deleted node, and those
//!   deletes sync the DaemonSet.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kcm_controllers::common::controller_ref::controller_of;
use kcm_controllers::common::pod::is_pod_ready;
use kcm_controllers::common::selector::Selector;
use kcm_controllers::daemonset::should_ignore_node_update;
use kcm_controllers::daemonset::{self as core, node_should_run_daemon_pod, node_update_requires_sync};
use kcm_objects::{Node, OwnerRef, Pod};
use kcm_runtime::informer::{ControllerRef, EventHandler, Store};
use kcm_runtime::workqueue::WorkQueue;

use crate::drivers::expectations::SharedExpectations;

/// From dependents and nodes to the DaemonSets to sync.
#[derive(Clone)]
pub(super) struct Lookup {
    pub queue: WorkQueue<String>,
    pub daemon_sets: Store<DaemonSet>,
}

impl Lookup {
    /// The cached DaemonSet in `namespace` that `cref` names, if it is that
    /// very object (upstream `resolveControllerRef`).
    fn resolve<'a>(&self, namespace: &str, cref: impl Into<ControllerRef<'a>>) -> Option<Arc<DaemonSet>> {
        self.daemon_sets.resolve_controller_ref("DaemonSet", Some(namespace), cref)
    }

    fn enqueue(&self, ds: &DaemonSet) {
        self.queue.add(core::key(ds));
    }

    /// Every DaemonSet of `namespace` whose non-empty selector matches
    /// (upstream `GetPodDaemonSets`, `GetHistoryDaemonSets`).
    fn adopters(&self, namespace: &str, matches: impl Fn(&Selector) -> bool) -> Vec<Arc<DaemonSet>> {
        let mut found = self.daemon_sets.list_namespace(namespace);
        found.retain(|ds| Selector::new(Some(&ds.spec.selector)).is_ok_and(|s| !s.is_everything() && matches(&s)));
        found
    }
}

// === pods ===

/// Pod changes: sync the DaemonSet controlling the pod (feeding its
/// expectations), or, for an orphan, every DaemonSet that could adopt it.
pub(super) struct PodHandler {
    pub lookup: Lookup,
    pub expectations: SharedExpectations,
}

impl EventHandler<Pod> for PodHandler {
    fn on_add(&self, pod: &Arc<Pod>) {
        if pod.metadata.deletion_timestamp().is_some() {
            // Seen for the first time already being deleted (a restart):
            // it must not count as a creation.
            self.on_delete(pod);
            return;
        }
        if let Some(cref) = pod.metadata.controller() {
            if let Some(ds) = self.resolve(pod, cref) {
                self.expectations.lock().creation_observed(&core::key(&ds), &pod.metadata.key());
                self.lookup.enqueue(&ds);
            }
            return;
        }
        for ds in self.adopters(pod) {
            self.lookup.enqueue(&ds);
        }
    }

    fn on_update(&self, old: &Arc<Pod>, new: &Arc<Pod>) {
        if old.metadata.resource_version == new.metadata.resource_version {
            // A periodic resync: nothing changed.
            return;
        }
        if new.metadata.deletion_timestamp().is_some() {
            // Graceful deletion started: a replacement may be created now
            // rather than when the kubelet is done.
            self.on_delete(new);
            return;
        }
        let (old_ref, new_ref) = (old.metadata.controller(), new.metadata.controller());
        let ref_changed = old_ref != new_ref;
        if ref_changed && let Some(ds) = old_ref.and_then(|r| self.resolve(old, r)) {
            self.lookup.enqueue(&ds);
        }
        if let Some(cref) = new_ref {
            let Some(ds) = self.resolve(new, cref) else { return };
            self.lookup.enqueue(&ds);
            let min_ready = ds.spec.min_ready_seconds.unwrap_or(0);
            if min_ready > 0 && !is_pod_ready(old) && is_pod_ready(new) {
                // A second more, so that availability is due when it runs.
                let delay = Duration::from_secs(u64::try_from(min_ready).unwrap_or(0) + 1);
                self.lookup.queue.add_after(core::key(&ds), delay);
            }
            return;
        }
        if ref_changed || old.metadata.labels != new.metadata.labels {
            for ds in self.adopters(new) {
                self.lookup.enqueue(&ds);
            }
        }
    }

    fn on_delete(&self, pod: &Arc<Pod>) {
        let Some(cref) = pod.metadata.controller() else { return };
        if let Some(ds) = self.resolve(pod, cref) {
            self.expectations.lock().deletion_observed(&core::key(&ds), &pod.metadata.key());
            self.lookup.enqueue(&ds);
        }
    }
}

impl PodHandler {
    fn resolve(&self, pod: &Pod, cref: &OwnerRef) -> Option<Arc<DaemonSet>> {
        self.lookup.resolve(&pod.metadata.namespace, cref)
    }

    fn adopters(&self, pod: &Pod) -> Vec<Arc<DaemonSet>> {
        self.lookup.adopters(&pod.metadata.namespace, |s| s.matches(&pod.metadata.labels))
    }
}

// === history ===

/// ControllerRevision changes: sync the DaemonSet controlling it, or the
/// ones that could adopt an orphan.
pub(super) struct HistoryHandler(pub Lookup);

impl EventHandler<ControllerRevision> for HistoryHandler {
    fn on_add(&self, revision: &Arc<ControllerRevision>) {
        if revision.metadata.deletion_timestamp.is_some() {
            self.on_delete(revision);
            return;
        }
        if let Some(cref) = controller_of(&revision.metadata) {
            if let Some(ds) = self.resolve(revision, cref) {
                self.0.enqueue(&ds);
            }
            return;
        }
        for ds in self.adopters(revision) {
            self.0.enqueue(&ds);
        }
    }

    fn on_update(&self, old: &Arc<ControllerRevision>, new: &Arc<ControllerRevision>) {
        if old.metadata.resource_version == new.metadata.resource_version {
            return;
        }
        let (old_ref, new_ref) = (controller_of(&old.metadata), controller_of(&new.metadata));
        let ref_changed = old_ref != new_ref;
        if ref_changed && let Some(ds) = old_ref.and_then(|r| self.resolve(old, r)) {
            self.0.enqueue(&ds);
        }
        if let Some(cref) = new_ref {
            if let Some(ds) = self.resolve(new, cref) {
                self.0.enqueue(&ds);
            }
            return;
        }
        if ref_changed || old.metadata.labels != new.metadata.labels {
            for ds in self.adopters(new) {
                self.0.enqueue(&ds);
            }
        }
    }

    fn on_delete(&self, revision: &Arc<ControllerRevision>) {
        let Some(cref) = controller_of(&revision.metadata) else { return };
        if let Some(ds) = self.resolve(revision, cref) {
            self.0.enqueue(&ds);
        }
    }
}

impl HistoryHandler {
    fn resolve(&self, revision: &ControllerRevision, cref: &OwnerReference) -> Option<Arc<DaemonSet>> {
        let namespace = revision.metadata.namespace.as_deref().unwrap_or("");
        self.0.resolve(namespace, cref)
    }

    fn adopters(&self, revision: &ControllerRevision) -> Vec<Arc<DaemonSet>> {
        let namespace = revision.metadata.namespace.as_deref().unwrap_or("");
        self.0.adopters(namespace, |s| s.matches(&revision.metadata.labels))
    }
}

// === nodes ===

/// Node adds and updates: sync the DaemonSets whose placement the node
/// changes.
pub(super) struct NodeHandler(pub Lookup);

impl EventHandler<Node> for NodeHandler {
    fn on_add(&self, node: &Arc<Node>) {
        for ds in self.0.daemon_sets.list() {
            if node_should_run_daemon_pod(node, &ds).0 {
                self.0.enqueue(&ds);
            }
        }
    }

    fn on_update(&self, old: &Arc<Node>, new: &Arc<Node>) {
        if should_ignore_node_update(old, new) {
            return;
        }
        for ds in self.0.daemon_sets.list() {
            if node_update_requires_sync(old, new, &ds) {
                self.0.enqueue(&ds);
            }
        }
    }
}
