//! The scheduled deletions and the decisions about them ([`Evictor`]):
//! one deletion per pod, remembered here and fired through the deletion
//! queue (`add_after` to the fire time). Every decision is made holding the
//! state lock, so a node's pass over its pods and a pod's own update never
//! interleave, and a deletion cannot start before the pass that scheduled
//! it has finished.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{ObjectReference, Taint};
use kcm_controllers::node::POD_NODE_NAME_INDEX;
use kcm_controllers::node::eviction::{self as core, Decision, PodFacts, Scheduled};
use kcm_controllers::node::taints;
use kcm_objects::Node;
use kcm_objects::Pod;
use kube::Client;

use super::metrics::EvictionMetrics;
use crate::drivers::nodes::node_of;
use kcm_runtime::events::{EventRecorder, EventType};
use kcm_runtime::informer::{self, Store};
use kcm_runtime::workqueue::WorkQueue;

/// The scheduled deletions and what performs them.
pub(super) struct Evictor {
    /// Cached pods, with the `spec.nodeName` index.
    pub(super) pods: Store<Pod>,
    /// Cached nodes.
    pub(super) nodes: Store<Node>,
    /// Scheduled deletions by pod key (upstream `TimedWorkerQueue`).
    pub(super) scheduled: Mutex<HashMap<String, Entry>>,
    /// Fires scheduled deletions.
    pub(super) deletions: WorkQueue<String>,
    /// Deletes pods and patches their status.
    pub(super) client: Client,
    /// `TaintManagerEviction` Events.
    pub(super) recorder: EventRecorder,
    /// Upstream's deletion metrics (absent in tests that do not scrape).
    pub(super) metrics: Option<EvictionMetrics>,
}

/// One pod's scheduled deletion.
pub(super) struct Entry {
    /// What the core decided.
    pub(super) scheduled: Scheduled,
    /// A deletion request is in flight: decisions leave the entry alone
    /// until it ends (upstream cannot stop a running worker either).
    pub(super) in_flight: bool,
    /// The "Marking for deletion" Event was recorded (once per deletion,
    /// not per retry).
    pub(super) announced: bool,
}

impl Evictor {
    /// The scheduled deletions.
    pub(super) fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        // Every critical section leaves the map whole.
        self.scheduled.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Judges every pod on the node `name` against its `NoExecute` taints.
    /// A node gone from the cache changes nothing (upstream forgets its
    /// taints and leaves scheduled deletions as they are).
    pub(super) fn node_changed(&self, name: &str) {
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
    pub(super) fn pod_changed(&self, key: &str) {
        let pod = self.pods.get(key);
        let taints = pod.as_deref().and_then(node_of).and_then(|n| self.nodes.get(n)).map(|n| no_execute_taints(&n));
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
        let uid = pod.map(|p| p.metadata.uid.to_string());
        let facts = pod.zip(uid.as_deref()).map(|(p, uid)| PodFacts {
            uid,
            node_name: p.node_name().unwrap_or_default(),
            tolerations: &p.spec.tolerations,
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
}

/// The node's `NoExecute` taints.
pub(super) fn no_execute_taints(node: &Node) -> Vec<Taint> {
    core::no_execute_taints(taints::node_taints(node))
}

/// How long from `now` until `at` (zero if past).
pub(super) fn until(at: Timestamp, now: Timestamp) -> Duration {
    Duration::try_from(at.duration_since(now)).unwrap_or(Duration::ZERO)
}

/// `(namespace, name)` of a pod key.
pub(super) fn split(key: &str) -> (&str, &str) {
    key.split_once('/').unwrap_or(("", key))
}

/// The Event's `involvedObject` (upstream names the pod without its uid).
pub(super) fn pod_reference(namespace: &str, name: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Pod".into()),
        namespace: Some(namespace.into()),
        name: Some(name.into()),
        ..ObjectReference::default()
    }
}
