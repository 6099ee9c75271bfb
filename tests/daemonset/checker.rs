//! The invariants every DaemonSet scenario runs under, judged after every
//! watch event on the DaemonSet's pods (labelled `app=<name>`):
//! - a node never holds two daemon pods that are not terminal (being
//!   deleted counts: upstream waits for a deleted pod to be gone before it
//!   creates the replacement), except during a surge: then at most two, and
//!   at most `maxSurge` nodes at once hold two that are not being deleted;
//! - once every expected node had an available pod, at most
//!   `maxUnavailable` expected nodes lack one (a pod being deleted is not
//!   available).
//!
//! Written here rather than taken from `kcm-controllers`: the checker is
//! the oracle for that code and must not share its mistakes.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use kube::runtime::watcher;
use tokio::sync::oneshot;

use crate::common::Env;
use crate::common::mirror::{Holds, follow};

/// The update strategy's bounds, resolved against the expected nodes.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Nodes that may run an old and a new pod at once.
    pub max_surge: usize,
    /// Expected nodes that may lack an available pod.
    pub max_unavailable: usize,
}

impl Bounds {
    /// Upstream's default: maxUnavailable 1, no surge.
    pub const DEFAULT: Bounds = Bounds { max_surge: 0, max_unavailable: 1 };
}

#[derive(Debug)]
struct Checked {
    bounds: Bounds,
    /// Nodes that should run a daemon pod (availability is judged on them).
    nodes: BTreeSet<String>,
    availability_armed: bool,
    pods: BTreeMap<String, Pod>,
    events: usize,
    violations: Vec<String>,
}

/// The node a daemon pod is for: its `spec.nodeName`, or before binding
/// the node its required affinity pins it to by `metadata.name`.
pub fn target_node(pod: &Pod) -> Option<String> {
    let spec = pod.spec.as_ref()?;
    if let Some(node) = spec.node_name.clone().filter(|n| !n.is_empty()) {
        return Some(node);
    }
    let required =
        spec.affinity.as_ref()?.node_affinity.as_ref()?.required_during_scheduling_ignored_during_execution.as_ref()?;
    let terms = required.node_selector_terms.iter();
    let fields = terms.flat_map(|t| t.match_fields.iter().flatten());
    fields.filter(|f| f.key == "metadata.name" && f.operator == "In").find_map(|f| f.values.as_ref()?.first().cloned())
}

pub fn is_terminal(pod: &Pod) -> bool {
    matches!(pod.status.as_ref().and_then(|s| s.phase.as_deref()), Some("Succeeded" | "Failed"))
}

/// Ready and not being deleted (minReadySeconds is 0 in these scenarios).
pub fn is_available(pod: &Pod) -> bool {
    let conditions = pod.status.as_ref().and_then(|s| s.conditions.as_ref());
    pod.metadata.deletion_timestamp.is_none()
        && !is_terminal(pod)
        && conditions.is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

impl Holds<Pod> for Checked {
    fn held(&mut self) -> &mut BTreeMap<String, Pod> {
        &mut self.pods
    }

    fn judge(&mut self, event: &str) {
        self.events += 1;
        let mut by_node: BTreeMap<String, Vec<&Pod>> = BTreeMap::new();
        for pod in self.pods.values().filter(|p| !is_terminal(p)) {
            if let Some(node) = target_node(pod) {
                by_node.entry(node).or_default().push(pod);
            }
        }
        let surge = self.bounds.max_surge;
        // Without surge, a node's pod being deleted still counts: its
        // replacement waits until it is gone. With surge, an old pod being
        // deleted is no longer part of the surge (upstream counts the
        // surging nodes by their pods not being deleted).
        let counted = |pod: &&&Pod| surge == 0 || pod.metadata.deletion_timestamp.is_none();
        let crowded: Vec<(&String, Vec<&str>)> = by_node
            .iter()
            .filter(|(_, pods)| pods.iter().filter(counted).count() > 1)
            .map(|(node, pods)| (node, pods.iter().filter_map(|p| p.metadata.name.as_deref()).collect()))
            .collect();
        let too_many_on_one = by_node.values().any(|pods| pods.len() > 2) || (surge == 0 && !crowded.is_empty());
        if too_many_on_one || crowded.len() > surge {
            self.violations.push(format!("{event}: several daemon pods on a node (maxSurge {surge}): {crowded:?}"));
        }
        let lacking: Vec<&String> = self
            .nodes
            .iter()
            .filter(|n| !by_node.get(*n).is_some_and(|pods| pods.iter().any(|p| is_available(p))))
            .collect();
        let allowed = self.bounds.max_unavailable;
        if self.availability_armed && lacking.len() > allowed {
            self.violations
                .push(format!("{event}: nodes without an available pod {lacking:?} > maxUnavailable {allowed}"));
        }
        if lacking.is_empty() {
            self.availability_armed = true;
        }
    }
}

/// Watches DaemonSet `name`'s pods and judges the invariants after every
/// event.
pub struct DaemonChecker {
    state: Arc<Mutex<Checked>>,
    task: tokio::task::JoinHandle<()>,
}

impl DaemonChecker {
    /// Starts watching the pods labelled `app=<name>` in `namespace`, with
    /// `nodes` expected to run one; returns once the watch has listed.
    pub async fn start(env: &Env, namespace: &str, name: &str, nodes: &[&str], bounds: Bounds) -> Self {
        let state = Arc::new(Mutex::new(Checked {
            bounds,
            nodes: nodes.iter().map(|n| (*n).to_owned()).collect(),
            availability_armed: false,
            pods: BTreeMap::new(),
            events: 0,
            violations: Vec::new(),
        }));
        let api: Api<Pod> = Api::namespaced(env.client.clone(), namespace);
        let config = watcher::Config::default().labels(&format!("app={name}"));
        let (listed, ready) = oneshot::channel();
        let task = tokio::spawn(follow(api, config, state.clone(), listed));
        ready.await.expect("the pod watch lists");
        DaemonChecker { state, task }
    }

    /// The nodes expected to run a daemon pod changed: availability is
    /// judged again once each of them has one.
    pub fn set_nodes(&self, nodes: &[&str]) {
        let mut s = self.state.lock().expect("lock");
        s.nodes = nodes.iter().map(|n| (*n).to_owned()).collect();
        s.availability_armed = false;
    }

    /// Stops watching and fails the test with every violation seen.
    pub fn assert_clean(self) {
        assert!(!self.task.is_finished(), "the checker's watch ended early: events after it were not judged");
        self.task.abort();
        let s = self.state.lock().expect("lock");
        assert!(s.events > 0, "the checker saw no event");
        assert!(s.violations.is_empty(), "DaemonSet invariants broken:\n{}", s.violations.join("\n"));
    }
}
