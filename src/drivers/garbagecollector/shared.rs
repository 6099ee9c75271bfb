//! What the feeds, the monitors and the workers share ([`Shared`]): the
//! dependency graph and how its changes are applied (queued, or recorded
//! as events), the two queues, the REST mapping of the last discovery
//! ([`Mapper`]) and the metrics.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError, RwLock};

use k8s_openapi::api::core::v1::ObjectReference;
use kcm_controllers::garbagecollector::Identity;
use kcm_controllers::garbagecollector::graph::{Effect, Graph};
use kube::api::ApiResource;
use tokio::sync::Notify;

use super::metrics::GcMetrics;
use kcm_runtime::events::{EventRecorder, EventType};
use kcm_runtime::workqueue::WorkQueue;

/// What a kind maps to.
#[derive(Debug, Clone)]
pub(super) struct Mapping {
    /// How to reach it.
    pub(super) resource: ApiResource,
    /// Whether its objects live in namespaces.
    pub(super) namespaced: bool,
}

/// apiVersion + kind -> resource, for every version served (upstream's
/// REST mapper): ownerReferences may name any served version.
pub(super) type Mapper = HashMap<(String, String), Mapping>;

/// What the feeds, the monitors and the workers share.
pub(super) struct Shared {
    /// The dependency graph; every feed writes it under this lock, so
    /// changes are applied one at a time, as upstream's single
    /// `processGraphChanges` loop does.
    pub(super) graph: Mutex<Graph>,
    /// Uids to check (upstream `attemptToDelete`).
    pub(super) attempt_to_delete: WorkQueue<String>,
    /// Uids of owners whose dependents to orphan (upstream
    /// `attemptToOrphan`).
    pub(super) attempt_to_orphan: WorkQueue<String>,
    /// `OwnerRefInvalidNamespace` events.
    pub(super) recorder: EventRecorder,
    /// See [`GcMetrics`].
    pub(super) metrics: GcMetrics,
    /// apiVersion + kind -> resource, from the last discovery.
    pub(super) mapper: RwLock<Mapper>,
    /// Asks the monitors to rediscover now (an unknown kind was met).
    pub(super) rediscover: Notify,
}

impl Shared {
    /// The dependency graph, locked.
    pub(super) fn graph(&self) -> MutexGuard<'_, Graph> {
        self.graph.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs one graph change and applies what it asks.
    pub(super) fn change(&self, f: impl FnOnce(&mut Graph) -> Vec<Effect>) {
        let effects = {
            let mut graph = self.graph();
            let effects = f(&mut graph);
            self.metrics.graph_nodes.set(i64::try_from(graph.len()).unwrap_or(i64::MAX));
            effects
        };
        self.apply(effects);
    }

    /// Queues and records what graph changes ask.
    fn apply(&self, effects: Vec<Effect>) {
        for effect in effects {
            match effect {
                Effect::AttemptToDelete(uid) => self.attempt_to_delete.add(uid),
                Effect::AttemptToDeleteRateLimited(uid) => self.attempt_to_delete.add_rate_limited(uid),
                Effect::AttemptToOrphan(uid) => self.attempt_to_orphan.add(uid),
                Effect::Warning { regarding, reason, message } => {
                    tracing::info!(item = %regarding, reason, %message, "invalid ownerReference");
                    self.recorder.event(&object_reference(&regarding), EventType::Warning, reason, message);
                }
            }
        }
    }
}

/// The `core/v1` reference an event is recorded on.
fn object_reference(identity: &Identity) -> ObjectReference {
    ObjectReference {
        api_version: Some(identity.api_version.clone()),
        kind: Some(identity.kind.clone()),
        namespace: (!identity.namespace.is_empty()).then(|| identity.namespace.clone()),
        name: Some(identity.name.clone()),
        uid: Some(identity.uid.clone()),
        ..ObjectReference::default()
    }
}
