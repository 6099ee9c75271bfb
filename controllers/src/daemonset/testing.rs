//! Fixtures for the DaemonSet tests, after upstream's
//! `daemon_controller_test.go` helpers (`newDaemonSet`, `newNode`,
//! `newPod`, `addNodes`, `addPods`, `addFailedPods`), and a [`World`] that
//! syncs and applies its own plans as a perfect API server and informer
//! would.

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{
    ControllerRevision, DaemonSet, DaemonSetSpec, DaemonSetUpdateStrategy, RollingUpdateDaemonSet,
};
use k8s_openapi::api::core::v1::{Container, Pod as ApiPod, PodSpec, PodStatus, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kcm_objects::{Node, Pod};
use serde_json::json;

use super::{Action, Plan};
use super::{CONTROLLER_REVISION_HASH_LABEL, FailedPodsBackoff, Options, Outcome, Snapshot, Write, sync};
use crate::common::controller_ref::new_controller_ref;
use crate::common::expectations::Expectations;
use crate::common::history;
use crate::common::template_hash::compute_hash;
use crate::plan::OwnerRefPatch;
use crate::testing::{labels, slim, ts};

/// Upstream `simpleDaemonSetLabel`.
pub const SIMPLE_DAEMON_SET_LABEL: &[(&str, &str)] = &[("name", "simple-daemon"), ("type", "production")];
/// Upstream `simpleDaemonSetLabel2`.
pub const SIMPLE_DAEMON_SET_LABEL2: &[(&str, &str)] = &[("name", "simple-daemon"), ("type", "test")];
/// Upstream `simpleNodeLabel`.
pub const SIMPLE_NODE_LABEL: &[(&str, &str)] = &[("color", "blue"), ("speed", "fast")];
/// Upstream `simpleNodeLabel2`.
pub const SIMPLE_NODE_LABEL2: &[(&str, &str)] = &[("color", "red"), ("speed", "fast")];

/// Rows of `(node, labels, number)` pods to add.
pub type PodRows<'a> = &'a [(&'a str, &'a [(&'a str, &'a str)], usize)];

/// The sync's clock in the tests.
pub const NOW: i64 = 1_000_000;

/// Upstream `newDaemonSet`: `default/<name>`, OnDelete, history limit 2,
/// selecting and labelling [`SIMPLE_DAEMON_SET_LABEL`].
pub fn new_daemon_set(name: &str) -> DaemonSet {
    DaemonSet {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            uid: Some(format!("uid-{name}")),
            generation: Some(1),
            resource_version: Some("1".into()),
            ..Default::default()
        },
        spec: DaemonSetSpec {
            revision_history_limit: Some(2),
            update_strategy: Some(DaemonSetUpdateStrategy { type_: Some("OnDelete".into()), rolling_update: None }),
            selector: LabelSelector { match_labels: Some(labels(SIMPLE_DAEMON_SET_LABEL)), match_expressions: None },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta { labels: Some(labels(SIMPLE_DAEMON_SET_LABEL)), ..Default::default() }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "c".into(),
                        image: Some("foo/bar".into()),
                        termination_message_path: Some("/dev/termination-log".into()),
                        image_pull_policy: Some("IfNotPresent".into()),
                        ..Default::default()
                    }],
                    dns_policy: Some("Default".into()),
                    ..Default::default()
                }),
            },
            min_ready_seconds: None,
        },
        status: None,
    }
}

/// Upstream `newRollingUpdateStrategy`, with `max_unavailable` and
/// `max_surge`.
pub fn rolling_update(ds: &mut DaemonSet, max_unavailable: IntOrString, max_surge: Option<IntOrString>) {
    ds.spec.update_strategy = Some(DaemonSetUpdateStrategy {
        type_: Some("RollingUpdate".into()),
        rolling_update: Some(RollingUpdateDaemonSet { max_unavailable: Some(max_unavailable), max_surge }),
    });
}

/// Upstream `updateStrategies`: OnDelete, then RollingUpdate with
/// maxUnavailable 1.
pub fn strategies(name: &str) -> Vec<DaemonSet> {
    let on_delete = new_daemon_set(name);
    let mut rolling = new_daemon_set(name);
    rolling_update(&mut rolling, IntOrString::Int(1), None);
    vec![on_delete, rolling]
}

/// Upstream `newNode`: a Ready node with these labels.
pub fn new_node(name: &str, node_labels: &[(&str, &str)]) -> Node {
    node_from(json!({
        "metadata": {"name": name, "labels": labels(node_labels)},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }))
}

/// A node from its API JSON.
pub fn node_from(value: serde_json::Value) -> Node {
    serde_json::from_value(value).unwrap()
}

/// The hash upstream's `newPod` labels a DaemonSet's pods with.
pub fn hash_of(ds: &DaemonSet) -> String {
    compute_hash(&ds.spec.template, ds.status.as_ref().and_then(|s| s.collision_count))
}

/// Upstream `newPod`: `default/<name>` on `node` (pending if empty) with
/// `pod_labels`, and, for a DaemonSet, its template's spec, its hash label
/// and its controller reference.
pub fn new_pod(name: &str, node: &str, pod_labels: &[(&str, &str)], ds: Option<&DaemonSet>) -> ApiPod {
    let mut labels = labels(pod_labels);
    let mut spec = PodSpec::default();
    let mut owner_references = None;
    if let Some(ds) = ds {
        labels.insert(CONTROLLER_REVISION_HASH_LABEL.into(), hash_of(ds));
        spec = ds.spec.template.spec.clone().unwrap_or_default();
        owner_references = Some(vec![new_controller_ref(&ds.metadata, "apps/v1", "DaemonSet")]);
    }
    spec.node_name = (!node.is_empty()).then(|| node.into());
    ApiPod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            uid: Some(format!("uid-{name}")),
            labels: Some(labels),
            owner_references,
            creation_timestamp: Some(Time(ts(0))),
            ..Default::default()
        },
        spec: Some(spec),
        status: Some(PodStatus::default()),
    }
}

/// Marks `pod` Ready since `since` (upstream `markPodReady`).
pub fn ready(mut pod: ApiPod, since: Timestamp) -> ApiPod {
    crate::testing::mark_ready(&mut pod, since);
    pod
}

/// Sets `pod`'s phase.
pub fn phase(mut pod: ApiPod, phase: &str) -> ApiPod {
    pod.status.get_or_insert_default().phase = Some(phase.into());
    pod
}

/// A DaemonSet, the cluster it runs in, and the controller's own state.
pub struct World {
    pub ds: DaemonSet,
    pub nodes: Vec<Arc<Node>>,
    pub pods: Vec<Arc<Pod>>,
    pub revisions: Vec<Arc<ControllerRevision>>,
    pub expectations: Expectations,
    pub backoff: FailedPodsBackoff,
    pub now: Timestamp,
    pub options: Options,
    created: usize,
}

impl World {
    pub fn new(ds: DaemonSet) -> Self {
        Self {
            ds,
            nodes: Vec::new(),
            pods: Vec::new(),
            revisions: Vec::new(),
            expectations: Expectations::new(),
            backoff: FailedPodsBackoff::default(),
            now: ts(NOW),
            options: Options::default(),
            created: 0,
        }
    }

    /// Upstream `addNodes`: `node-<i>` for i in `start..start + count`.
    pub fn add_nodes(&mut self, start: usize, count: usize, node_labels: &[(&str, &str)]) {
        for i in start..start + count {
            self.nodes.push(Arc::new(new_node(&format!("node-{i}"), node_labels)));
        }
    }

    pub fn add_node(&mut self, node: Node) {
        self.nodes.push(Arc::new(node));
    }

    pub fn add_pod(&mut self, pod: ApiPod) {
        self.pods.push(Arc::new(slim(&pod)));
    }

    /// Upstream `addPods`: `number` pods of this DaemonSet (or orphans) on
    /// `node`.
    pub fn add_pods(&mut self, node: &str, pod_labels: &[(&str, &str)], ds: Option<&DaemonSet>, number: usize) {
        self.add_pods_with(node, pod_labels, ds, number, |p| p);
    }

    /// [`Self::add_pods`] for each `(node, labels, number)` row, all of
    /// `ds`.
    pub fn add_pod_table(&mut self, ds: &DaemonSet, rows: PodRows<'_>) {
        for (node, pod_labels, number) in rows {
            self.add_pods(node, pod_labels, Some(ds), *number);
        }
    }

    /// Upstream `addFailedPods`.
    pub fn add_failed_pods(&mut self, node: &str, pod_labels: &[(&str, &str)], ds: Option<&DaemonSet>, number: usize) {
        self.add_pods_with(node, pod_labels, ds, number, |p| phase(p, "Failed"));
    }

    fn add_pods_with(
        &mut self,
        node: &str,
        pod_labels: &[(&str, &str)],
        ds: Option<&DaemonSet>,
        number: usize,
        edit: impl Fn(ApiPod) -> ApiPod,
    ) {
        for _ in 0..number {
            self.created += 1;
            let pod = new_pod(&format!("{node}-{}", self.created), node, pod_labels, ds);
            self.add_pod(edit(pod));
        }
    }

    pub fn snapshot(&self) -> Snapshot<'_> {
        Snapshot {
            daemon_set: &self.ds,
            pods: &self.pods,
            nodes: &self.nodes,
            revisions: &self.revisions,
            expectations: &self.expectations,
            backoff: &self.backoff,
            now: self.now,
        }
    }

    pub fn sync(&self) -> Outcome {
        sync(&self.snapshot(), &self.options)
    }

    /// Syncs and applies the plan as a perfect API server would, the
    /// informers catching up at once (the expectations stay satisfied).
    pub fn sync_and_apply(&mut self) -> Outcome {
        let out = self.sync();
        for key in &out.backoff_next {
            self.backoff.next(key, self.now);
        }
        self.apply(&out.plan);
        out
    }

    /// Applies `plan`'s writes to the world.
    pub fn apply(&mut self, plan: &Plan) {
        for action in plan.actions() {
            match action {
                Action::CreatePod { pod, .. } => {
                    self.created += 1;
                    let mut pod = (**pod).clone();
                    let name = format!("{}{}", pod.metadata.generate_name.clone().unwrap_or_default(), self.created);
                    pod.metadata.uid = Some(format!("uid-{name}"));
                    pod.metadata.name = Some(name);
                    pod.metadata.namespace = self.ds.metadata.namespace.clone();
                    pod.metadata.creation_timestamp = Some(Time(self.now));
                    self.add_pod(pod);
                }
                Action::DeletePod { name, .. } => self.pods.retain(|p| *p.metadata.name != **name),
                Action::PatchPodOwnerRefs { name, patch, .. } => self.edit_pod(name, |pod| match patch {
                    OwnerRefPatch::Adopt(r) => pod.metadata.owner_references = Some(vec![r.clone()]),
                    OwnerRefPatch::Release { .. } => pod.metadata.owner_references = None,
                }),
                Action::Own(Write::RelabelPod { name, hash, .. }) => self.edit_pod(name, |pod| {
                    pod.metadata
                        .labels
                        .get_or_insert_default()
                        .insert(CONTROLLER_REVISION_HASH_LABEL.into(), hash.clone());
                }),
                Action::Own(Write::UpdateStatus { status, .. }) => self.ds.status = Some((**status).clone()),
                Action::ControllerRevision(write) => self.apply_revision(write),
                _ => {}
            }
        }
    }

    fn apply_revision(&mut self, write: &history::Write) {
        let name = |cr: &ControllerRevision| cr.metadata.name.clone();
        match write {
            history::Write::Create { revision, .. } => {
                let mut cr = (**revision).clone();
                cr.metadata.uid = name(&cr);
                cr.metadata.creation_timestamp = Some(Time(self.now));
                self.revisions.push(Arc::new(cr));
            }
            history::Write::Update { revision } => {
                for r in &mut self.revisions {
                    if name(r) == name(revision) {
                        *r = Arc::new((**revision).clone());
                    }
                }
            }
            history::Write::Get { .. } => {}
            history::Write::Delete { name: deleted, .. } => {
                self.revisions.retain(|r| r.metadata.name.as_deref() != Some(deleted.as_str()));
            }
            history::Write::PatchOwnerRefs { name: patched, patch, .. } => {
                for r in &mut self.revisions {
                    if r.metadata.name.as_deref() == Some(patched.as_str()) {
                        let mut cr = (**r).clone();
                        cr.metadata.owner_references = match patch {
                            OwnerRefPatch::Adopt(owner) => Some(vec![owner.clone()]),
                            OwnerRefPatch::Release { .. } => None,
                        };
                        *r = Arc::new(cr);
                    }
                }
            }
        }
    }

    fn edit_pod(&mut self, name: &str, edit: impl FnOnce(&mut ApiPod)) {
        if let Some(slot) = self.pods.iter_mut().find(|p| &*p.metadata.name == name) {
            let mut pod: ApiPod = serde_json::from_value(pod_json(slot)).unwrap();
            edit(&mut pod);
            *slot = Arc::new(slim(&pod));
        }
    }

    /// Marks every pod Ready since `since` (upstream `markPodsReady`).
    pub fn mark_pods_ready(&mut self, since: Timestamp) {
        for name in self.pods.iter().map(|p| p.metadata.name.to_string()).collect::<Vec<_>>() {
            self.edit_pod(&name, |pod| *pod = ready(pod.clone(), since));
        }
    }

    /// The pods on each node, by name.
    pub fn pods_by_node(&self) -> BTreeMap<String, Vec<String>> {
        let mut by_node: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for pod in &self.pods {
            let node = pod.target_node_name().unwrap_or_default().to_owned();
            by_node.entry(node).or_default().push(pod.metadata.name.to_string());
        }
        by_node
    }
}

/// The API form of a cached pod, as far as the tests set it.
fn pod_json(pod: &Pod) -> serde_json::Value {
    let meta = pod.metadata.to_object_meta();
    let conditions: Vec<serde_json::Value> = pod
        .status
        .conditions
        .iter()
        .map(|c| {
            json!({"type": c.type_().as_str(), "status": c.status().as_str(),
                "lastTransitionTime": c.last_transition_time().map(|t| t.to_string())})
        })
        .collect();
    let affinity = pod.spec.rare().affinity_node_name.as_deref().map(|n| {
        json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]}]}}})
    });
    json!({
        "metadata": meta,
        "spec": {"nodeName": pod.node_name(), "affinity": affinity, "containers": []},
        "status": {"phase": pod.status.phase.as_deref(), "conditions": conditions},
    })
}

/// The numbers upstream's `validateSyncDaemonSets` checks: creates,
/// deletes, events.
pub fn counts(plan: &Plan) -> (usize, usize, usize) {
    let count = |f: fn(&Action) -> bool| plan.actions().filter(|a| f(a)).count();
    (
        count(|a| matches!(a, Action::CreatePod { .. })),
        count(|a| matches!(a, Action::DeletePod { .. })),
        count(|a| matches!(a, Action::Event(_))),
    )
}

/// The names of the pods `plan` deletes.
pub fn deleted(plan: &Plan) -> Vec<String> {
    plan.actions()
        .filter_map(|a| match a {
            Action::DeletePod { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect()
}

/// The nodes `plan` creates pods for.
pub fn created_on(plan: &Plan) -> Vec<String> {
    plan.actions()
        .filter_map(|a| match a {
            Action::CreatePod { pod, .. } => slim(pod).spec.rare().affinity_node_name.as_ref().map(|n| n.to_string()),
            _ => None,
        })
        .collect()
}

/// The last status `plan` writes.
pub fn status(plan: &Plan) -> Option<k8s_openapi::api::apps::v1::DaemonSetStatus> {
    plan.actions()
        .filter_map(|a| match a {
            Action::Own(Write::UpdateStatus { status, .. }) => Some((**status).clone()),
            _ => None,
        })
        .last()
}
