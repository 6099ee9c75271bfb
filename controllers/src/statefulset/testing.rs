//! Fixtures of the StatefulSet controller's tests: upstream's
//! `newStatefulSet` (`ns/foo`, uid `set-uid`, selector and template labels
//! `app=foo`, one container, service `governingsvc`), its members as the
//! controller makes them, claims, stored revisions, and a [`World`] that
//! plans syncs and applies their writes the way the cluster would, so the
//! ported `stateful_set_control_test.go` scenarios can run sync after sync.

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{
    ControllerRevision, RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetOrdinals,
    StatefulSetPersistentVolumeClaimRetentionPolicy, StatefulSetSpec, StatefulSetStatus, StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::{
    Container, PersistentVolumeClaim, PersistentVolumeClaimVolumeSource, Pod as ApiPod, PodSpec, PodStatus,
    PodTemplateSpec, Volume,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kcm_objects::Pod;

use super::control::new_stateful_set_pod;
use super::{Action, Plan};
use super::{Options, POD_NAME_LABEL, REVISION_LABEL, Snapshot, Write};
use crate::common::history::Write as HistoryWrite;
use crate::testing::{describe, labels, slim, ts};

pub const NOW: i64 = 1_000_000;

/// Builds upstream's `newStatefulSet(replicas)`.
#[derive(Clone)]
pub struct SetBuilder(StatefulSet);

impl SetBuilder {
    pub fn new(replicas: i32) -> Self {
        Self(StatefulSet {
            metadata: ObjectMeta {
                name: Some("foo".into()),
                namespace: Some("ns".into()),
                uid: Some("set-uid".into()),
                generation: Some(1),
                resource_version: Some("1".into()),
                ..Default::default()
            },
            spec: StatefulSetSpec {
                replicas: Some(replicas),
                selector: LabelSelector { match_labels: Some(labels(&[("app", "foo")])), ..Default::default() },
                service_name: Some("governingsvc".into()),
                template: PodTemplateSpec {
                    metadata: Some(ObjectMeta { labels: Some(labels(&[("app", "foo")])), ..Default::default() }),
                    spec: Some(PodSpec {
                        containers: vec![Container {
                            name: "nginx".into(),
                            image: Some("v1".into()),
                            ..Default::default()
                        }],
                        ..Default::default()
                    }),
                },
                update_strategy: Some(StatefulSetUpdateStrategy {
                    type_: Some("RollingUpdate".into()),
                    rolling_update: Some(RollingUpdateStatefulSetStrategy {
                        partition: Some(0),
                        max_unavailable: None,
                    }),
                }),
                revision_history_limit: Some(2),
                pod_management_policy: Some("OrderedReady".into()),
                ..Default::default()
            },
            status: Some(StatefulSetStatus::default()),
        })
    }
    pub fn name(mut self, name: &str) -> Self {
        self.0.metadata.name = Some(name.into());
        self
    }
    pub fn replicas(mut self, n: i32) -> Self {
        self.0.spec.replicas = Some(n);
        self
    }
    pub fn image(mut self, image: &str) -> Self {
        self.0.spec.template.spec.as_mut().unwrap().containers[0].image = Some(image.into());
        self
    }
    pub fn start(mut self, start: i32) -> Self {
        self.0.spec.ordinals = Some(StatefulSetOrdinals { start: Some(start) });
        self
    }
    pub fn parallel(mut self) -> Self {
        self.0.spec.pod_management_policy = Some("Parallel".into());
        self
    }
    pub fn on_delete(mut self) -> Self {
        self.0.spec.update_strategy =
            Some(StatefulSetUpdateStrategy { type_: Some("OnDelete".into()), rolling_update: None });
        self
    }
    pub fn partition(mut self, partition: i32) -> Self {
        let rolling = self.rolling();
        rolling.partition = Some(partition);
        self
    }
    pub fn max_unavailable(mut self, value: IntOrString) -> Self {
        self.rolling().max_unavailable = Some(value);
        self
    }
    fn rolling(&mut self) -> &mut RollingUpdateStatefulSetStrategy {
        self.0.spec.update_strategy.as_mut().unwrap().rolling_update.get_or_insert_default()
    }
    pub fn min_ready_seconds(mut self, s: i32) -> Self {
        self.0.spec.min_ready_seconds = Some(s);
        self
    }
    pub fn history(mut self, limit: i32) -> Self {
        self.0.spec.revision_history_limit = Some(limit);
        self
    }
    pub fn claim(mut self, name: &str) -> Self {
        let claim = PersistentVolumeClaim {
            metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
            ..Default::default()
        };
        self.0.spec.volume_claim_templates.get_or_insert_default().push(claim);
        self
    }
    pub fn claim_labels(mut self, pairs: &[(&str, &str)]) -> Self {
        for t in self.0.spec.volume_claim_templates.iter_mut().flatten() {
            t.metadata.labels = Some(labels(pairs));
        }
        self
    }
    pub fn retention(mut self, when_scaled: &str, when_deleted: &str) -> Self {
        self.0.spec.persistent_volume_claim_retention_policy = Some(StatefulSetPersistentVolumeClaimRetentionPolicy {
            when_scaled: Some(when_scaled.into()),
            when_deleted: Some(when_deleted.into()),
        });
        self
    }
    pub fn build(self) -> StatefulSet {
        self.0
    }
}

/// The member `ordinal` of `set` as the controller creates it, with uid
/// `uid-<name>`, phase Running, not Ready.
pub fn member(set: &StatefulSet, ordinal: i32) -> Member {
    let mut pod = new_stateful_set_pod(set, ordinal);
    pod.metadata.uid = Some(format!("uid-{}", pod.metadata.name.as_deref().unwrap_or_default()));
    pod.metadata.creation_timestamp = Some(Time(ts(0)));
    pod.status = Some(PodStatus { phase: Some("Running".into()), ..Default::default() });
    Member(pod)
}

/// A pod under construction (see [`member`]).
#[derive(Clone)]
pub struct Member(ApiPod);

impl Member {
    pub fn name(mut self, name: &str) -> Self {
        self.0.metadata.name = Some(name.into());
        self
    }
    pub fn namespace(mut self, ns: &str) -> Self {
        self.0.metadata.namespace = Some(ns.into());
        self
    }
    pub fn label(mut self, k: &str, v: &str) -> Self {
        self.0.metadata.labels.get_or_insert_default().insert(k.into(), v.into());
        self
    }
    pub fn no_labels(mut self) -> Self {
        self.0.metadata.labels = None;
        self
    }
    pub fn no_volumes(mut self) -> Self {
        self.0.spec.get_or_insert_default().volumes = None;
        self
    }
    pub fn volume(mut self, name: &str, claim: &str) -> Self {
        let volumes = self.0.spec.get_or_insert_default().volumes.get_or_insert_default();
        volumes.retain(|v| v.name != name);
        volumes.push(Volume {
            name: name.into(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: claim.into(),
                read_only: None,
            }),
            ..Default::default()
        });
        self
    }
    pub fn phase(mut self, phase: &str) -> Self {
        self.0.status.get_or_insert_default().phase = (!phase.is_empty()).then(|| phase.into());
        self
    }
    /// Running and Ready since `since`.
    pub fn ready_since(mut self, since: Timestamp) -> Self {
        crate::testing::mark_ready(&mut self.0, since);
        self
    }
    pub fn deleting(mut self, at: Timestamp) -> Self {
        self.0.metadata.deletion_timestamp = Some(Time(at));
        self
    }
    pub fn revision(self, revision: &str) -> Self {
        self.label(REVISION_LABEL, revision)
    }
    pub fn orphan(mut self) -> Self {
        self.0.metadata.owner_references = None;
        self
    }
    pub fn api(self) -> ApiPod {
        self.0
    }
    pub fn build(self) -> Pod {
        slim(&self.0)
    }
}

/// A claim `datadir-foo-1` in `ns` with these owner references.
pub fn claim_with_refs(refs: Vec<OwnerReference>) -> PersistentVolumeClaim {
    PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some("datadir-foo-1".into()),
            namespace: Some("ns".into()),
            owner_references: (!refs.is_empty()).then_some(refs),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// The controller reference to `set` a claim carries.
pub fn set_ref(set: &StatefulSet) -> OwnerReference {
    crate::common::controller_ref::new_controller_ref(&set.metadata, "apps/v1", "StatefulSet")
}

/// The controller reference to pod `name` (uid `uid`) a claim carries.
pub fn pod_ref(name: &str, uid: &str) -> OwnerReference {
    OwnerReference {
        api_version: "v1".into(),
        kind: "Pod".into(),
        name: name.into(),
        uid: uid.into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// `revision` as the API server stores it: a uid and a creation time.
pub fn stored(mut revision: ControllerRevision) -> ControllerRevision {
    revision.metadata.uid = Some(format!("uid-{}", revision.metadata.name.as_deref().unwrap_or_default()));
    revision.metadata.creation_timestamp = Some(Time(ts(revision.revision.unwrap_or(0))));
    revision
}

/// A cluster holding one StatefulSet, its pods, claims and revisions.
pub struct World {
    pub set: StatefulSet,
    pub pods: BTreeMap<String, ApiPod>,
    pub claims: Vec<Arc<PersistentVolumeClaim>>,
    pub revisions: Vec<Arc<ControllerRevision>>,
    pub now: Timestamp,
    pub options: Options,
}

impl World {
    pub fn new(set: SetBuilder) -> Self {
        Self {
            set: set.build(),
            pods: BTreeMap::new(),
            claims: Vec::new(),
            revisions: Vec::new(),
            now: ts(NOW),
            options: Options::default(),
        }
    }

    /// One sync's plan over the world as it is.
    pub fn plan(&self) -> Plan {
        let pods: Vec<Arc<Pod>> = self.pods.values().map(|p| Arc::new(slim(p))).collect();
        let snapshot =
            Snapshot { set: &self.set, pods: &pods, claims: &self.claims, revisions: &self.revisions, now: self.now };
        super::sync(&snapshot, &self.options)
    }

    /// The plan's actions, one line each (see [`describe`]).
    pub fn lines(&self) -> Vec<String> {
        self.plan().actions().map(describe).collect()
    }

    /// The plan's actions other than the status and the history.
    pub fn pod_lines(&self) -> Vec<String> {
        self.lines().into_iter().filter(|l| !l.starts_with("status") && !l.starts_with("revision")).collect()
    }

    /// Syncs once and applies every write as the API server would; returns
    /// the plan's lines.
    pub fn step(&mut self) -> Vec<String> {
        let plan = self.plan();
        for action in plan.actions() {
            self.apply(action);
        }
        plan.actions().map(describe).collect()
    }

    /// Syncs once, but the API server refuses the first write whose line
    /// starts with `prefix`: the writes before it are applied, then the
    /// driver's [`after_failure`](super::after_failure) plan. False if no
    /// write matched (the whole plan was applied).
    pub fn step_failing(&mut self, prefix: &str) -> bool {
        let plan = self.plan();
        for action in plan.actions() {
            if matches!(action, Action::Own(_)) && describe(action).starts_with(prefix) {
                let pods: Vec<Arc<Pod>> = self.pods.values().map(|p| Arc::new(slim(p))).collect();
                let snapshot = Snapshot {
                    set: &self.set,
                    pods: &pods,
                    claims: &self.claims,
                    revisions: &self.revisions,
                    now: self.now,
                };
                let rest = super::after_failure(&snapshot, None);
                rest.actions().for_each(|a| self.apply(a));
                return true;
            }
            self.apply(action);
        }
        false
    }

    /// The image of pod `name`'s container.
    pub fn image(&self, name: &str) -> String {
        let spec = self.pods[name].spec.as_ref().unwrap();
        spec.containers[0].image.clone().unwrap_or_default()
    }

    fn apply(&mut self, action: &Action) {
        match action {
            Action::Own(Write::CreatePod { pod, claims, .. }) => {
                claims.iter().for_each(|c| self.add_claim(c));
                let mut pod = (**pod).clone();
                let name = pod.metadata.name.clone().unwrap();
                pod.metadata.uid = Some(format!("uid-{name}"));
                pod.status = Some(PodStatus { phase: Some("Pending".into()), ..Default::default() });
                self.pods.insert(name, pod);
            }
            Action::Own(Write::CreateClaims { claims, .. }) => claims.iter().for_each(|c| self.add_claim(c)),
            Action::Own(Write::RepairPod { claims, repair, .. }) => {
                claims.iter().for_each(|c| self.add_claim(c));
                if let Some(pod) = self.pods.get_mut(&repair.name) {
                    repair.apply(pod);
                }
            }
            Action::Own(Write::UpdateClaim { claim, .. }) => {
                self.claims.retain(|c| c.metadata.name != claim.metadata.name);
                self.claims.push(Arc::new((**claim).clone()));
            }
            Action::Own(Write::DeletePod { name, .. }) => {
                self.pods.remove(name);
            }
            Action::Own(Write::UpdateStatus(update)) => self.set.status = Some((*update.status).clone()),
            Action::ControllerRevision(HistoryWrite::Create { revision, .. }) => {
                self.revisions.push(Arc::new(stored((**revision).clone())));
            }
            Action::ControllerRevision(HistoryWrite::Update { revision }) => {
                self.revisions.retain(|r| r.metadata.name != revision.metadata.name);
                self.revisions.push(Arc::new((**revision).clone()));
            }
            Action::ControllerRevision(HistoryWrite::Delete { name, .. }) => {
                self.revisions.retain(|r| r.metadata.name.as_ref() != Some(name));
            }
            _ => {}
        }
    }

    fn add_claim(&mut self, claim: &PersistentVolumeClaim) {
        let mut claim = claim.clone();
        claim.metadata.uid = Some(format!("uid-{}", claim.metadata.name.as_deref().unwrap_or_default()));
        self.claims.push(Arc::new(claim));
    }

    /// Every pod becomes Running and Ready at the world's time.
    pub fn make_ready(&mut self) {
        let now = self.now;
        for pod in self.pods.values_mut() {
            *pod = Member(pod.clone()).ready_since(now).api();
        }
    }

    /// Syncs, making pods ready after each sync, until a sync plans no pod
    /// write (at most `limit` syncs); the pod lines of every sync.
    pub fn settle(&mut self, limit: usize) -> Vec<Vec<String>> {
        let mut syncs = Vec::new();
        for _ in 0..limit {
            let lines = self.step();
            self.make_ready();
            let pods: Vec<String> =
                lines.into_iter().filter(|l| !l.starts_with("status") && !l.starts_with("revision")).collect();
            if pods.is_empty() {
                break;
            }
            syncs.push(pods);
        }
        syncs
    }

    /// The pods' names, by ordinal.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<(i32, String)> =
            self.pods.keys().map(|n| (super::parent_and_ordinal(n).map_or(-1, |(_, o)| o), n.clone())).collect();
        names.sort();
        names.into_iter().map(|(_, n)| n).collect()
    }

    /// The revision label of pod `name`.
    pub fn pod_revision(&self, name: &str) -> String {
        self.pods[name].metadata.labels.as_ref().and_then(|l| l.get(REVISION_LABEL)).cloned().unwrap_or_default()
    }

    /// Whether pod `name` carries its identity label.
    pub fn has_identity(&self, name: &str) -> bool {
        self.pods[name].metadata.labels.as_ref().and_then(|l| l.get(POD_NAME_LABEL)).is_some_and(|v| v == name)
    }
}
