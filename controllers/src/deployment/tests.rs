//! Table tests of whole syncs: the reference scenarios
//! (`/work/shared/reference/deployment-replicaset.md` §3) and upstream's
//! `sync_test.go`, `rolling_test.go`, `recreate_test.go`,
//! `progress_test.go`, with their numbers.

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{
    Deployment, DeploymentCondition, DeploymentSpec, DeploymentStatus, DeploymentStrategy, ReplicaSet,
    ReplicaSetCondition, ReplicaSetSpec, ReplicaSetStatus, RollingUpdateDeployment,
};
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::*;
use crate::plan::{Action, OwnerRefPatch, Plan};
use crate::testing::{PodBuilder, ts};

// === utils ===

pub(super) const NOW: i64 = 1_000_000;
pub(super) const D_UID: &str = "d-uid";

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// The pod template with this image, labels `app=web`.
pub(super) fn template(image: &str) -> PodTemplateSpec {
    PodTemplateSpec {
        metadata: Some(ObjectMeta { labels: Some(labels(&[("app", "web")])), ..Default::default() }),
        spec: Some(PodSpec {
            containers: vec![Container { name: "c".into(), image: Some(image.into()), ..Default::default() }],
            ..Default::default()
        }),
    }
}

/// Deployment `ns/d` (uid `d-uid`, generation 1, observed), selector
/// `app=web`, image `v2`, RollingUpdate 25%/25%, history 10, deadline 600.
#[derive(Clone)]
pub(super) struct DeploymentBuilder(Deployment);

impl DeploymentBuilder {
    pub(super) fn new(replicas: i32) -> Self {
        Self(Deployment {
            metadata: ObjectMeta {
                name: Some("d".into()),
                namespace: Some("ns".into()),
                uid: Some(D_UID.into()),
                generation: Some(1),
                resource_version: Some("5".into()),
                ..Default::default()
            },
            spec: Some(DeploymentSpec {
                replicas: Some(replicas),
                selector: LabelSelector { match_labels: Some(labels(&[("app", "web")])), ..Default::default() },
                template: template("v2"),
                strategy: Some(DeploymentStrategy {
                    type_: Some("RollingUpdate".into()),
                    rolling_update: Some(RollingUpdateDeployment {
                        max_surge: Some(IntOrString::String("25%".into())),
                        max_unavailable: Some(IntOrString::String("25%".into())),
                    }),
                }),
                revision_history_limit: Some(10),
                progress_deadline_seconds: Some(600),
                ..Default::default()
            }),
            status: Some(DeploymentStatus { observed_generation: Some(1), ..Default::default() }),
        })
    }
    pub(super) fn fenceposts(mut self, surge: IntOrString, unavailable: IntOrString) -> Self {
        let s = self.0.spec.as_mut().unwrap();
        s.strategy = Some(DeploymentStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: Some(RollingUpdateDeployment {
                max_surge: Some(surge),
                max_unavailable: Some(unavailable),
            }),
        });
        self
    }
    pub(super) fn surge(self, surge: i32) -> Self {
        let unavailable = self.0.spec.as_ref().unwrap().strategy.as_ref().unwrap().rolling_update.as_ref().unwrap();
        let unavailable = unavailable.max_unavailable.clone().unwrap();
        self.fenceposts(IntOrString::Int(surge), unavailable)
    }
    pub(super) fn recreate(mut self) -> Self {
        self.0.spec.as_mut().unwrap().strategy =
            Some(DeploymentStrategy { type_: Some("Recreate".into()), rolling_update: None });
        self
    }
    pub(super) fn image(mut self, image: &str) -> Self {
        self.0.spec.as_mut().unwrap().template = template(image);
        self
    }
    pub(super) fn annotation(mut self, k: &str, v: &str) -> Self {
        self.0.metadata.annotations.get_or_insert_default().insert(k.into(), v.into());
        self
    }
    pub(super) fn paused(mut self) -> Self {
        self.0.spec.as_mut().unwrap().paused = Some(true);
        self
    }
    pub(super) fn history(mut self, limit: i32) -> Self {
        self.0.spec.as_mut().unwrap().revision_history_limit = Some(limit);
        self
    }
    pub(super) fn deadline(mut self, pds: Option<i32>) -> Self {
        self.0.spec.as_mut().unwrap().progress_deadline_seconds = pds;
        self
    }
    pub(super) fn status(mut self, status: DeploymentStatus) -> Self {
        self.0.status = Some(status);
        self
    }
    pub(super) fn condition(mut self, type_: &str, status: &str, reason: &str, updated: i64) -> Self {
        let st = self.0.status.get_or_insert_default();
        st.conditions.get_or_insert_default().push(DeploymentCondition {
            type_: type_.into(),
            status: status.into(),
            reason: Some(reason.into()),
            message: Some(String::new()),
            last_update_time: Some(Time(ts(updated))),
            last_transition_time: Some(Time(ts(updated))),
        });
        self
    }
    pub(super) fn build(self) -> Deployment {
        self.0
    }
}

/// ReplicaSet `name` controlled by `d`, image `v1`, created at `ts(0)`,
/// `replicas` all available.
pub(super) fn rs(name: &str, replicas: i32) -> ReplicaSet {
    RsB::new(name, replicas).build()
}

#[derive(Clone)]
pub(super) struct RsB(ReplicaSet);

impl RsB {
    pub(super) fn new(name: &str, replicas: i32) -> Self {
        Self(ReplicaSet {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("ns".into()),
                uid: Some(format!("uid-{name}")),
                generation: Some(1),
                labels: Some(labels(&[("app", "web")])),
                creation_timestamp: Some(Time(ts(0))),
                resource_version: Some("3".into()),
                owner_references: Some(vec![OwnerReference {
                    api_version: "apps/v1".into(),
                    kind: "Deployment".into(),
                    name: "d".into(),
                    uid: D_UID.into(),
                    controller: Some(true),
                    block_owner_deletion: Some(true),
                }]),
                ..Default::default()
            },
            spec: Some(ReplicaSetSpec {
                replicas: Some(replicas),
                selector: LabelSelector { match_labels: Some(labels(&[("app", "web")])), ..Default::default() },
                template: Some(template("v1")),
                min_ready_seconds: Some(0),
            }),
            status: Some(ReplicaSetStatus {
                replicas,
                ready_replicas: Some(replicas),
                available_replicas: Some(replicas),
                observed_generation: Some(1),
                ..Default::default()
            }),
        })
    }
    pub(super) fn image(mut self, image: &str) -> Self {
        self.0.spec.as_mut().unwrap().template = Some(template(image));
        self
    }
    pub(super) fn revision(self, rev: &str) -> Self {
        self.annotation(REVISION_ANNOTATION, rev)
    }
    pub(super) fn annotation(mut self, k: &str, v: &str) -> Self {
        self.0.metadata.annotations.get_or_insert_default().insert(k.into(), v.into());
        self
    }
    /// desired-replicas and max-replicas annotations.
    pub(super) fn sized(self, desired: i32, max: i32) -> Self {
        self.annotation(DESIRED_REPLICAS_ANNOTATION, &desired.to_string())
            .annotation(MAX_REPLICAS_ANNOTATION, &max.to_string())
    }
    pub(super) fn created(mut self, secs: i64) -> Self {
        self.0.metadata.creation_timestamp = Some(Time(ts(secs)));
        self
    }
    pub(super) fn available(mut self, replicas: i32, available: i32) -> Self {
        let s = self.0.status.get_or_insert_default();
        s.replicas = replicas;
        s.ready_replicas = Some(available);
        s.available_replicas = Some(available);
        self
    }
    pub(super) fn orphan(mut self) -> Self {
        self.0.metadata.owner_references = None;
        self
    }
    pub(super) fn labels(mut self, pairs: &[(&str, &str)]) -> Self {
        self.0.metadata.labels = Some(labels(pairs));
        self
    }
    pub(super) fn generation(mut self, generation: i64) -> Self {
        self.0.metadata.generation = Some(generation);
        self
    }
    pub(super) fn deleting(mut self) -> Self {
        self.0.metadata.deletion_timestamp = Some(Time(ts(NOW - 1)));
        self
    }
    pub(super) fn failure(mut self, reason: &str, message: &str) -> Self {
        self.0.status.get_or_insert_default().conditions = Some(vec![ReplicaSetCondition {
            type_: REPLICA_FAILURE.into(),
            status: "True".into(),
            reason: Some(reason.into()),
            message: Some(message.into()),
            last_transition_time: Some(Time(ts(NOW - 5))),
        }]);
        self
    }
    pub(super) fn build(self) -> ReplicaSet {
        self.0
    }
}

/// A sync's inputs.
pub(super) struct World {
    pub(super) d: Deployment,
    pub(super) rss: Vec<Arc<ReplicaSet>>,
    pub(super) pods: Vec<Arc<Pod>>,
    pub(super) now: Timestamp,
}

impl World {
    pub(super) fn new(d: DeploymentBuilder, rss: impl IntoIterator<Item = RsB>) -> Self {
        Self {
            d: d.build(),
            rss: rss.into_iter().map(|r| Arc::new(r.build())).collect(),
            pods: Vec::new(),
            now: ts(NOW),
        }
    }
    pub(super) fn pods(mut self, pods: impl IntoIterator<Item = PodBuilder>) -> Self {
        self.pods.extend(pods.into_iter().map(PodBuilder::arc));
        self
    }
    pub(super) fn at(mut self, secs: i64) -> Self {
        self.now = ts(secs);
        self
    }
    pub(super) fn plan(&self) -> Plan {
        let snapshot = Snapshot { deployment: &self.d, replica_sets: &self.rss, pods: &self.pods, now: self.now };
        sync(&snapshot, &Options::default()).unwrap()
    }
    /// The plan, one line per action (see [`describe`]).
    pub(super) fn lines(&self) -> Vec<String> {
        describe(&self.plan())
    }
    /// Only the ReplicaSet writes and events (no status lines).
    pub(super) fn writes(&self) -> Vec<String> {
        self.lines().into_iter().filter(|l| !l.starts_with("status")).collect()
    }
    /// The last status the plan writes.
    pub(super) fn last_status(&self) -> Option<DeploymentStatus> {
        let plan = self.plan();
        let found = plan.actions().filter_map(|a| match a {
            Action::UpdateDeploymentStatus { deployment } => deployment.status.clone(),
            _ => None,
        });
        found.last()
    }
    /// The last Deployment object the plan writes.
    pub(super) fn last_deployment(&self) -> Option<Deployment> {
        let plan = self.plan();
        let found = plan.actions().filter_map(|a| match a {
            Action::UpdateDeploymentStatus { deployment } | Action::UpdateDeployment { deployment } => {
                Some(deployment.as_ref().clone())
            }
            _ => None,
        });
        found.last()
    }
}

/// The hash-named ReplicaSet name for `image` with no collisions.
pub(super) fn hashed(image: &str) -> String {
    format!("d-{}", compute_hash(&template(image), None))
}

/// One line per action: `create <name> <replicas>`, `update <name>
/// <replicas>`, `delete <name>`, `event <reason>: <message>`, `status
/// <replicas>/<updated>/<ready>/<available>/<unavailable> [<type>=<reason>]`,
/// `update deployment`, `adopt <name>`, `release <name>`, `recheck`.
pub(super) fn describe(plan: &Plan) -> Vec<String> {
    plan.actions()
        .map(|a| match a {
            Action::CreateReplicaSet { replica_set, .. } => format!(
                "create {} {}",
                replica_set.metadata.name.as_deref().unwrap_or(""),
                replica_set.spec.as_ref().and_then(|s| s.replicas).unwrap_or(-1)
            ),
            Action::UpdateReplicaSet { replica_set } => format!(
                "update {} {}",
                replica_set.metadata.name.as_deref().unwrap_or(""),
                replica_set.spec.as_ref().and_then(|s| s.replicas).unwrap_or(-1)
            ),
            Action::DeleteReplicaSet { name, .. } => format!("delete {name}"),
            Action::Event(e) => format!("event {}: {}", e.reason, e.message),
            Action::UpdateDeploymentStatus { deployment } => {
                let s = deployment.status.clone().unwrap_or_default();
                let n = |v: Option<i32>| v.unwrap_or(0);
                let conds: Vec<String> = s
                    .conditions
                    .iter()
                    .flatten()
                    .map(|c| format!(" {}={}", c.type_, c.reason.as_deref().unwrap_or("")))
                    .collect();
                format!(
                    "status {}/{}/{}/{}/{}{}",
                    n(s.replicas),
                    n(s.updated_replicas),
                    n(s.ready_replicas),
                    n(s.available_replicas),
                    n(s.unavailable_replicas),
                    conds.concat()
                )
            }
            Action::UpdateDeployment { .. } => "update deployment".into(),
            Action::RecheckOwner { .. } => "recheck".into(),
            Action::PatchReplicaSetOwnerRefs { name, patch: OwnerRefPatch::Adopt(_), .. } => format!("adopt {name}"),
            Action::PatchReplicaSetOwnerRefs { name, patch: OwnerRefPatch::Release { .. }, .. } => {
                format!("release {name}")
            }
            other => format!("{other:?}"),
        })
        .collect()
}

/// The ReplicaSet object a plan creates.
fn created(plan: &Plan) -> ReplicaSet {
    plan.actions()
        .find_map(|a| match a {
            Action::CreateReplicaSet { replica_set, .. } => Some((**replica_set).clone()),
            _ => None,
        })
        .expect("a create")
}

fn conditions(s: &DeploymentStatus) -> Vec<(String, String, String)> {
    s.conditions
        .iter()
        .flatten()
        .map(|c| (c.type_.clone(), c.status.clone(), c.reason.clone().unwrap_or_default()))
        .collect()
}

fn cond(t: &str, s: &str, r: &str) -> (String, String, String) {
    (t.into(), s.into(), r.into())
}

// === rolling update ===

/// Scenario 3: the rollout starts: new RS at 3 (surge), old 10 → 8.
#[test]
fn rollout_start_creates_within_surge_and_scales_old_within_availability() {
    let w = World::new(DeploymentBuilder::new(10), [RsB::new("old", 10).revision("1").sized(10, 13)]);
    let new = hashed("v2");
    assert_eq!(
        w.writes(),
        [
            format!("create {new} 3"),
            format!("event ScalingReplicaSet: Scaled up replica set {new} from 0 to 3"),
            "update old 8".into(),
            "event ScalingReplicaSet: Scaled down replica set old from 10 to 8".into(),
        ]
    );
    let plan = w.plan();
    let rs = created(&plan);
    let a = rs.metadata.annotations.clone().unwrap();
    assert_eq!(a[REVISION_ANNOTATION], "2");
    assert_eq!(a[DESIRED_REPLICAS_ANNOTATION], "10");
    assert_eq!(a[MAX_REPLICAS_ANNOTATION], "13");
    let hash = new.trim_start_matches("d-");
    assert_eq!(rs.metadata.labels.as_ref().unwrap()[POD_TEMPLATE_HASH_LABEL], hash);
    let spec = rs.spec.as_ref().unwrap();
    assert_eq!(spec.selector.match_labels.as_ref().unwrap()[POD_TEMPLATE_HASH_LABEL], hash);
    assert_eq!(
        spec.template.as_ref().unwrap().metadata.as_ref().unwrap().labels.as_ref().unwrap()[POD_TEMPLATE_HASH_LABEL],
        hash
    );
    assert_eq!(rs.metadata.owner_references.as_ref().unwrap()[0].uid, D_UID);
    let d = w.last_deployment().unwrap();
    assert_eq!(d.metadata.annotations.unwrap()[REVISION_ANNOTATION], "2");
    let first_status = plan.actions().find_map(|a| match a {
        Action::UpdateDeploymentStatus { deployment } => deployment.status.clone(),
        _ => None,
    });
    assert!(conditions(&first_status.unwrap()).contains(&cond(PROGRESSING, "True", NEW_RS_REASON)));
}

/// Scenario 4: continuing: new 3 → 5 once its pods are available; then
/// old 8 → 5.
#[test]
fn rollout_continues_in_two_syncs() {
    let new = hashed("v2");
    let w = World::new(
        DeploymentBuilder::new(10),
        [
            RsB::new("old", 8).revision("1").sized(10, 13),
            RsB::new(&new, 3).image("v2").revision("2").sized(10, 13).created(10),
        ],
    );
    assert_eq!(
        w.writes()[..2],
        [format!("update {new} 5"), format!("event ScalingReplicaSet: Scaled up replica set {new} from 3 to 5")]
    );
    let w = World::new(
        DeploymentBuilder::new(10),
        [
            RsB::new("old", 8).revision("1").sized(10, 13),
            RsB::new(&new, 5).image("v2").revision("2").sized(10, 13).created(10).available(3, 3),
        ],
    );
    assert_eq!(w.writes()[..2], ["update old 5", "event ScalingReplicaSet: Scaled down replica set old from 8 to 5"]);
}

/// Scenario 5: new pods never become Ready: the state settles at new 5,
/// old 8, and nothing more is scaled.
#[test]
fn stuck_rollout_settles() {
    let new = hashed("v2");
    let w = World::new(
        DeploymentBuilder::new(10),
        [
            RsB::new("old", 8).revision("1").sized(10, 13),
            RsB::new(&new, 5).image("v2").revision("2").sized(10, 13).created(10).available(5, 0),
        ],
    );
    assert!(w.writes().iter().all(|l| !l.starts_with("update") && !l.starts_with("create")), "{:?}", w.writes());
    let status = w.last_status().unwrap();
    assert!(conditions(&status).contains(&cond(AVAILABLE, "True", MINIMUM_REPLICAS_AVAILABLE)));
}

/// Scenario 6 (upstream `TestReconcileOldReplicaSets` shape): unhealthy old
/// replicas go first; 13 − 8 − 3 = 2.
#[test]
fn unhealthy_old_replicas_are_cleaned_first() {
    let new = hashed("v2");
    let w = World::new(
        DeploymentBuilder::new(10).surge(3),
        [
            RsB::new("old", 10).revision("1").sized(10, 13).available(10, 6),
            RsB::new(&new, 3).image("v2").revision("2").sized(10, 13).created(10).available(3, 0),
        ],
    );
    assert_eq!(w.writes(), ["update old 8", "event ScalingReplicaSet: Scaled down replica set old from 10 to 8"]);
}

/// Scenario 7/8: both fenceposts resolve to 0 surge: the new RS is created
/// at 0 (no event) and the old one goes 1 → 0 in the same sync.
#[test]
fn zero_surge_creates_empty_then_scales_old() {
    let w = World::new(
        DeploymentBuilder::new(1).fenceposts(IntOrString::Int(0), IntOrString::String("10%".into())),
        [RsB::new("old", 1).revision("1").sized(1, 1)],
    );
    let new = hashed("v2");
    assert_eq!(
        w.writes(),
        [
            format!("create {new} 0"),
            "update old 0".into(),
            "event ScalingReplicaSet: Scaled down replica set old from 1 to 0".into()
        ]
    );
}

/// Scenario 7, next sync: with the old ReplicaSet at 0, the new one goes
/// 0 → 1.
#[test]
fn zero_surge_second_sync_scales_new_up() {
    let new = hashed("v2");
    let w = World::new(
        DeploymentBuilder::new(1).fenceposts(IntOrString::Int(0), IntOrString::String("10%".into())),
        [
            RsB::new("old", 0).revision("1").sized(1, 1),
            RsB::new(&new, 0).image("v2").revision("2").sized(1, 1).created(5),
        ],
    );
    assert_eq!(
        w.writes(),
        [format!("update {new} 1"), format!("event ScalingReplicaSet: Scaled up replica set {new} from 0 to 1")]
    );
}

/// The new ReplicaSet above replicas is scaled down to them.
#[test]
fn new_replica_set_above_replicas_is_scaled_down() {
    let new = hashed("v2");
    let w = World::new(DeploymentBuilder::new(3), [RsB::new(&new, 5).image("v2").revision("1").sized(3, 4)]);
    assert_eq!(
        w.writes()[..2],
        [format!("update {new} 3"), format!("event ScalingReplicaSet: Scaled down replica set {new} from 5 to 3")]
    );
}

// === scaling events ===

/// Scenario 9: a scaling event beats the rollout: no new RS, v2 → 10,
/// v1 → 4 (surge 0).
#[test]
fn scaling_beats_rollout() {
    let w = World::new(
        DeploymentBuilder::new(14).image("v3").fenceposts(IntOrString::Int(0), IntOrString::Int(1)),
        [
            RsB::new("v1", 3).revision("1").sized(10, 10),
            RsB::new("v2", 7).image("v2").revision("2").sized(10, 10).created(10),
        ],
    );
    assert_eq!(
        w.writes(),
        [
            "update v2 10",
            "event ScalingReplicaSet: Scaled up replica set v2 from 7 to 10",
            "update v1 4",
            "event ScalingReplicaSet: Scaled up replica set v1 from 3 to 4",
        ]
    );
}

/// Scenarios 10–14: proportional scaling, upstream `TestScale` numbers.
#[test]
fn proportional_scaling_table() {
    // (name, replicas, surge, new (name,size,max), olds oldest-first, want sizes new-then-olds)
    type Case = (&'static str, i32, i32, (i32, i32), Vec<(i32, i32)>, Vec<i32>);
    let cases: Vec<Case> = vec![
        ("5 → 10", 10, 0, (2, 5), vec![(3, 5)], vec![4, 6]),
        ("5 → 3", 3, 0, (2, 5), vec![(3, 5)], vec![1, 2]),
        ("9 → 4", 4, 0, (8, 9), vec![(1, 9)], vec![4, 0]),
        ("7 → 10", 10, 0, (2, 7), vec![(2, 7), (3, 7)], vec![3, 3, 4]),
        ("13 → 8", 8, 0, (2, 13), vec![(3, 13), (8, 13)], vec![1, 2, 5]),
        ("leftover up", 4, 0, (1, 3), vec![(1, 3), (1, 3)], vec![2, 1, 1]),
        ("leftover down", 2, 0, (1, 3), vec![(1, 3), (1, 3)], vec![1, 0, 1]),
        ("10 → 20, surge 2", 20, 2, (6, 12), vec![(6, 12)], vec![11, 11]),
        ("10 (surge 3) → 50 (surge 6)", 50, 6, (5, 13), vec![(8, 13)], vec![22, 34]),
        ("mid-rollout → 20", 20, 3, (5, 13), vec![(8, 13)], vec![9, 14]),
        ("mid-rollout → 5", 5, 3, (5, 13), vec![(8, 13)], vec![3, 5]),
        ("→ 0", 0, 3, (5, 13), vec![(8, 13)], vec![0, 0]),
    ];
    for (name, replicas, surge, (new_size, new_max), olds, want) in cases {
        let mut rss = Vec::new();
        for (i, (size, max)) in olds.iter().enumerate() {
            rss.push(
                RsB::new(&format!("old{i}"), *size)
                    .image(&format!("o{i}"))
                    .revision(&(i + 1).to_string())
                    .sized(*max - surge.min(*max), *max)
                    .created(i64::try_from(i).unwrap()),
            );
        }
        rss.push(RsB::new("new", new_size).image("v2").revision("9").sized(0, new_max).created(100));
        let w = World::new(DeploymentBuilder::new(replicas).surge(surge).paused(), rss);
        let plan = w.plan();
        let size = |n: &str| {
            plan.actions()
                .filter_map(|a| match a {
                    Action::UpdateReplicaSet { replica_set } if replica_set.metadata.name.as_deref() == Some(n) => {
                        replica_set.spec.as_ref().and_then(|s| s.replicas)
                    }
                    _ => None,
                })
                .last()
        };
        let mut got = vec![size("new").unwrap_or(new_size)];
        for (i, (s, _)) in olds.iter().enumerate() {
            got.push(size(&format!("old{i}")).unwrap_or(*s));
        }
        assert_eq!(got, want, "{name}: {:?}", describe(&plan));
    }
}

/// Scenario 13: proportional scaling refreshes the annotations.
#[test]
fn proportional_scaling_writes_annotations() {
    let w = World::new(
        DeploymentBuilder::new(20).surge(2).paused(),
        [
            RsB::new("old", 6).revision("1").sized(10, 12),
            RsB::new("new", 6).image("v2").revision("2").sized(10, 12).created(5),
        ],
    );
    let plan = w.plan();
    let sized: Vec<(String, i32, String, String)> = plan
        .actions()
        .filter_map(|a| match a {
            Action::UpdateReplicaSet { replica_set } => {
                let an = replica_set.metadata.annotations.as_ref().unwrap();
                Some((
                    replica_set.metadata.name.clone().unwrap(),
                    replica_set.spec.as_ref().unwrap().replicas.unwrap(),
                    an[DESIRED_REPLICAS_ANNOTATION].clone(),
                    an[MAX_REPLICAS_ANNOTATION].clone(),
                ))
            }
            _ => None,
        })
        .collect();
    let row = |name: &str| (name.to_string(), 11, "20".to_string(), "22".to_string());
    assert_eq!(sized, [row("new"), row("old")]);
}

/// Scenario 15: from zero, the new RS (the latest) takes everything.
#[test]
fn scale_from_zero_scales_the_latest() {
    let new = hashed("v2");
    let w = World::new(
        DeploymentBuilder::new(6).paused(),
        [
            RsB::new("a", 0).image("a").revision("1").created(1),
            RsB::new("b", 0).image("b").revision("2").created(2),
            RsB::new(&new, 0).image("v2").revision("3").created(3),
        ],
    );
    assert_eq!(
        w.writes(),
        [format!("update {new} 6"), format!("event ScalingReplicaSet: Scaled up replica set {new} from 0 to 6")]
    );
}

/// Scenario 16: a saturated new RS scales the old ones to 0; broken
/// saturation (nothing available) does nothing.
#[test]
fn saturated_new_replica_set_drops_old_ones() {
    let new = hashed("v2");
    let w = World::new(
        DeploymentBuilder::new(10).paused(),
        [
            RsB::new("old", 2).revision("1").sized(10, 13),
            RsB::new(&new, 10).image("v2").revision("2").sized(10, 13).created(5),
        ],
    );
    assert_eq!(w.writes(), ["update old 0", "event ScalingReplicaSet: Scaled down replica set old from 2 to 0"]);
    // Upstream "saturated but broken new replica set does not affect old
    // pods": replicas 2, surge 1, unavailable 1; new at 2 with none
    // available, old at 1: not saturated, and 3 = 2 + 1 leaves nothing to
    // add.
    let w = World::new(
        DeploymentBuilder::new(2).fenceposts(IntOrString::Int(1), IntOrString::Int(1)).paused(),
        [
            RsB::new("old", 1).revision("1").sized(2, 3),
            RsB::new(&new, 2).image("v2").revision("2").sized(2, 3).created(5).available(2, 0),
        ],
    );
    assert!(w.writes().iter().all(|l| !l.starts_with("update")), "{:?}", w.writes());
}

// === paused ===

/// Scenario 17: paused with an edited template: scaling applies, no new
/// RS; Progressing Unknown DeploymentPaused.
#[test]
fn paused_scales_without_rolling_out() {
    let w = World::new(DeploymentBuilder::new(12).paused(), [RsB::new("old", 10).revision("1").sized(10, 13)]);
    let lines = w.lines();
    assert!(!lines.iter().any(|l| l.starts_with("create")), "{lines:?}");
    assert!(lines.contains(&"update old 12".to_string()), "{lines:?}");
    let first = w.plan().actions().find_map(|a| match a {
        Action::UpdateDeploymentStatus { deployment } => deployment.status.clone(),
        _ => None,
    });
    assert!(conditions(&first.unwrap()).contains(&cond(PROGRESSING, "Unknown", PAUSED_DEPLOY_REASON)));
}

/// Scenario 17 (resume): DeploymentResumed, then the rollout proceeds in
/// the same sync.
#[test]
fn resume_marks_the_condition_then_rolls_out() {
    let w = World::new(
        DeploymentBuilder::new(10).condition(PROGRESSING, "Unknown", PAUSED_DEPLOY_REASON, NOW - 100),
        [RsB::new("old", 10).revision("1").sized(10, 13)],
    );
    let lines = w.lines();
    assert!(lines[0].contains(&format!("{PROGRESSING}={RESUMED_DEPLOY_REASON}")), "{lines:?}");
    assert!(lines.iter().any(|l| l.starts_with("create")), "{lines:?}");
}

/// Scenario 18: while paused, history beyond the limit is cleaned.
#[test]
fn paused_cleans_history() {
    let mut rss: Vec<RsB> = (1..=5)
        .map(|i| RsB::new(&format!("r{i}"), 0).image(&format!("i{i}")).revision(&i.to_string()).created(i))
        .collect();
    rss.push(RsB::new("cur", 3).image("v2").revision("6").created(10));
    let w = World::new(DeploymentBuilder::new(3).paused().history(2), rss);
    let deletes: Vec<String> = w.lines().into_iter().filter(|l| l.starts_with("delete")).collect();
    assert_eq!(deletes, ["delete r1", "delete r2", "delete r3"]);
}

// === recreate ===

/// Scenario 19: Recreate scales old to 0 first, no new RS.
#[test]
fn recreate_scales_old_down_first() {
    let w = World::new(DeploymentBuilder::new(3).recreate(), [RsB::new("old", 3).revision("1")]);
    assert_eq!(w.writes(), ["update old 0", "event ScalingReplicaSet: Scaled down replica set old from 3 to 0"]);
}

/// Scenarios 19–20: Recreate waits while old pods run (terminating,
/// Unknown, or reported by status); Failed pods do not block.
#[test]
fn recreate_waits_for_old_pods() {
    let d = || DeploymentBuilder::new(3).recreate();
    let old = || RsB::new("old", 0).revision("1").available(0, 0);
    let pod = |name: &str| PodBuilder::new(name).owned_by("uid-old");
    let cases = [
        ("running", vec![pod("p").phase("Running")], true),
        ("terminating", vec![pod("p").phase("Running").deleting(ts(NOW - 1))], true),
        ("unknown", vec![pod("p").phase("Unknown")], true),
        ("pending", vec![pod("p").phase("Pending")], true),
        ("failed", vec![pod("p").phase("Failed")], false),
        ("succeeded", vec![pod("p").phase("Succeeded")], false),
        ("none", vec![], false),
    ];
    for (name, pods, waits) in cases {
        let w = World::new(d(), [old()]).pods(pods);
        let creates = w.lines().iter().any(|l| l.starts_with("create"));
        assert_eq!(creates, !waits, "{name}: {:?}", w.lines());
    }
    let w = World::new(d(), [RsB::new("old", 0).revision("1").available(1, 0)]);
    assert!(!w.lines().iter().any(|l| l.starts_with("create")), "status.replicas > 0 blocks");
    let w = World::new(d(), [old()]);
    assert_eq!(
        w.writes()[..2],
        [
            format!("create {} 3", hashed("v2")),
            format!("event ScalingReplicaSet: Scaled up replica set {} from 0 to 3", hashed("v2"))
        ]
    );
}

// === revisions and rollback ===

/// Scenario 21: template set back to an old revision: that RS is reused
/// (revision 3, history "1"), no create.
#[test]
fn template_rollback_reuses_the_old_replica_set() {
    let w = World::new(
        DeploymentBuilder::new(3).image("v1"),
        [
            RsB::new("rs1", 0).revision("1").sized(3, 4),
            RsB::new("rs2", 3).image("v2").revision("2").sized(3, 4).created(5),
        ],
    );
    let plan = w.plan();
    let lines = describe(&plan);
    assert!(!lines.iter().any(|l| l.starts_with("create")), "{lines:?}");
    let Some(Action::UpdateReplicaSet { replica_set }) = plan.actions().next() else { panic!("{lines:?}") };
    let a = replica_set.metadata.annotations.as_ref().unwrap();
    assert_eq!(replica_set.metadata.name.as_deref(), Some("rs1"));
    assert_eq!((a[REVISION_ANNOTATION].as_str(), a[REVISION_HISTORY_ANNOTATION].as_str()), ("3", "1"));
    // The next sync (annotations written) sets the Deployment's revision
    // and scales rs1 up under the rolling rules.
    let w = World::new(
        DeploymentBuilder::new(3).image("v1"),
        [
            RsB::new("rs1", 0).revision("3").annotation(REVISION_HISTORY_ANNOTATION, "1").sized(3, 4),
            RsB::new("rs2", 3).image("v2").revision("2").sized(3, 4).created(5),
        ],
    );
    let lines = w.lines();
    assert!(lines.contains(&"update rs1 1".to_string()), "{lines:?}");
    assert_eq!(w.last_deployment().unwrap().metadata.annotations.unwrap()[REVISION_ANNOTATION], "3");
}

/// Scenario 24: revisions {1, 4, x}: the new RS gets 5.
#[test]
fn new_revision_is_one_above_the_max() {
    let w = World::new(
        DeploymentBuilder::new(1),
        [
            RsB::new("a", 0).revision("1"),
            RsB::new("b", 0).image("b").revision("4"),
            RsB::new("c", 1).image("c").revision("x"),
        ],
    );
    let rs = created(&w.plan());
    assert_eq!(rs.metadata.annotations.unwrap()[REVISION_ANNOTATION], "5");
    assert_eq!(w.last_deployment().unwrap().metadata.annotations.unwrap()[REVISION_ANNOTATION], "5");
}

/// Scenario 22: the deprecated rollback annotation.
#[test]
fn deprecated_rollback_annotation() {
    let rss = || {
        [
            RsB::new("r1", 0).image("i1").revision("1"),
            RsB::new("r2", 0).image("i2").revision("2").created(1),
            RsB::new("r3", 3).image("v2").revision("3").created(2),
        ]
    };
    let w = World::new(DeploymentBuilder::new(3).annotation(ROLLBACK_TO_ANNOTATION, "0"), rss());
    assert_eq!(
        w.writes(),
        ["update deployment", "event DeploymentRollback: Rolled back deployment \"d\" to revision 2"]
    );
    let d = w.last_deployment().unwrap();
    assert_eq!(d.spec.unwrap().template, template("i2"));
    assert!(!d.metadata.annotations.unwrap().contains_key(ROLLBACK_TO_ANNOTATION));

    let w = World::new(DeploymentBuilder::new(3).annotation(ROLLBACK_TO_ANNOTATION, "7"), rss());
    assert_eq!(
        w.writes(),
        ["event DeploymentRollbackRevisionNotFound: Unable to find the revision to rollback to.", "update deployment"]
    );
    assert_eq!(w.last_deployment().unwrap().spec.unwrap().template, template("v2"));

    let w = World::new(DeploymentBuilder::new(3).annotation(ROLLBACK_TO_ANNOTATION, "3"), rss());
    assert_eq!(
        w.writes(),
        [
            "event DeploymentRollbackTemplateUnchanged: The rollback revision contains the same template as current deployment \"d\"",
            "update deployment"
        ]
    );

    let w = World::new(DeploymentBuilder::new(3).annotation(ROLLBACK_TO_ANNOTATION, "bogus"), rss());
    assert!(!w.writes().contains(&"update deployment".to_string()), "unparsable: ignored");
}

// === history ===

/// Scenario 23: limit 0, rollout complete: old RSes at 0 with no pods and
/// an observed generation are deleted; one still reporting a pod is kept.
#[test]
fn history_limit_zero_deletes_finished_old_replica_sets() {
    let new = hashed("v2");
    let complete = DeploymentStatus {
        observed_generation: Some(1),
        replicas: Some(2),
        updated_replicas: Some(2),
        available_replicas: Some(2),
        ready_replicas: Some(2),
        ..Default::default()
    };
    let w = World::new(
        DeploymentBuilder::new(2).history(0).status(complete),
        [
            RsB::new("gone", 0).revision("1"),
            RsB::new("lingering", 0).image("x").revision("2").available(1, 0),
            RsB::new("unobserved", 0).image("y").revision("3").generation(2),
            RsB::new(&new, 2).image("v2").revision("4").sized(2, 3).created(5),
        ],
    );
    let deletes: Vec<String> = w.lines().into_iter().filter(|l| l.starts_with("delete")).collect();
    assert_eq!(deletes, ["delete gone"]);
}

// === status and conditions ===

/// Scenario 33: status arithmetic.
#[test]
fn status_counts() {
    let d = DeploymentBuilder::new(10).build();
    let new = RsB::new("new", 5).image("v2").available(3, 3).build();
    let old = rs("old", 8);
    let s = conditions::calculate_status(&d, &[&old, &new], Some(&new), false, ts(NOW));
    let n = |v: Option<i32>| v.unwrap_or(0);
    assert_eq!(
        (n(s.replicas), n(s.updated_replicas), n(s.ready_replicas), n(s.available_replicas), n(s.unavailable_replicas)),
        (11, 3, 11, 11, 2)
    );
    assert_eq!(s.observed_generation, Some(1));
}

/// Scenario 30: Available True iff available ≥ replicas − maxUnavailable.
#[test]
fn available_condition_table() {
    let cases = [
        (DeploymentBuilder::new(10), 8, "True"),
        (DeploymentBuilder::new(10), 7, "False"),
        (DeploymentBuilder::new(10).recreate(), 9, "False"),
        (DeploymentBuilder::new(0), 0, "True"),
    ];
    for (d, available, want) in cases {
        let d = d.build();
        let rs = RsB::new("new", crate::deployment::replicas(&d)).image("v2").available(available, available).build();
        let status = conditions::calculate_status(&d, &[&rs], Some(&rs), false, ts(NOW));
        let got = conditions::get_condition(&status, AVAILABLE).unwrap().status.clone();
        assert_eq!(got, want, "{d:?} {available}");
    }
}

/// Scenario 29: complete: NewReplicaSetAvailable with the RS's name, no
/// requeue; a later drop in availability keeps it.
#[test]
fn completion_and_its_guard() {
    let new = hashed("v2");
    let rss = || [RsB::new(&new, 10).image("v2").revision("1").sized(10, 13)];
    let w = World::new(DeploymentBuilder::new(10).condition(PROGRESSING, "True", RS_UPDATED_REASON, NOW - 10), rss());
    let s = w.last_status().unwrap();
    let p = s.conditions.iter().flatten().find(|c| c.type_ == PROGRESSING).unwrap();
    assert_eq!(p.reason.as_deref(), Some(NEW_RS_AVAILABLE_REASON));
    assert_eq!(p.message.as_deref(), Some(format!("ReplicaSet \"{new}\" has successfully progressed.").as_str()));
    assert_eq!(w.plan().requeue_after, None);

    let complete = DeploymentStatus {
        observed_generation: Some(1),
        replicas: Some(10),
        updated_replicas: Some(10),
        ready_replicas: Some(10),
        available_replicas: Some(10),
        unavailable_replicas: Some(0),
        ..Default::default()
    };
    let w = World::new(
        DeploymentBuilder::new(10)
            .status(complete)
            .condition(AVAILABLE, "True", MINIMUM_REPLICAS_AVAILABLE, NOW - 100)
            .condition(PROGRESSING, "True", NEW_RS_AVAILABLE_REASON, NOW - 100)
            .annotation(REVISION_ANNOTATION, "1"),
        [RsB::new(&new, 10).image("v2").revision("1").sized(10, 13).available(10, 5)],
    );
    let s = w.last_status().unwrap();
    assert!(conditions(&s).contains(&cond(PROGRESSING, "True", NEW_RS_AVAILABLE_REASON)), "{s:?}");
}

/// Scenario 5 (deadline): no progress for 600 s: ProgressDeadlineExceeded;
/// before it, an unchanged status requeues one second after the deadline.
#[test]
fn progress_deadline() {
    let new = hashed("v2");
    let stuck = DeploymentStatus {
        observed_generation: Some(1),
        replicas: Some(13),
        updated_replicas: Some(5),
        ready_replicas: Some(8),
        available_replicas: Some(8),
        unavailable_replicas: Some(5),
        ..Default::default()
    };
    let world = |now: i64| {
        World::new(
            DeploymentBuilder::new(10)
                .status(stuck.clone())
                .condition(AVAILABLE, "True", MINIMUM_REPLICAS_AVAILABLE, NOW - 1000)
                .condition(PROGRESSING, "True", RS_UPDATED_REASON, NOW)
                .annotation(REVISION_ANNOTATION, "2"),
            [
                RsB::new("old", 8).revision("1").sized(10, 13),
                RsB::new(&new, 5).image("v2").revision("2").sized(10, 13).created(5).available(5, 0),
            ],
        )
        .at(now)
    };
    let w = world(NOW + 30);
    assert_eq!(w.lines(), Vec::<String>::new());
    assert_eq!(w.plan().requeue_after, Some(std::time::Duration::from_secs(571)));
    let w = world(NOW + 600);
    assert!(w.lines().is_empty(), "not strictly after yet: {:?}", w.lines());
    let w = world(NOW + 601);
    let s = w.last_status().unwrap();
    let p = s.conditions.iter().flatten().find(|c| c.type_ == PROGRESSING).unwrap();
    assert_eq!((p.status.as_str(), p.reason.as_deref()), ("False", Some(TIMED_OUT_REASON)));
    assert_eq!(p.message.as_deref(), Some(format!("ReplicaSet \"{new}\" has timed out progressing.").as_str()));
}

/// Scenario 31: without a deadline there is no Progressing condition, and
/// pausing writes none.
#[test]
fn no_deadline_no_progressing() {
    let w = World::new(
        DeploymentBuilder::new(10).deadline(None).paused(),
        [RsB::new("old", 10).revision("1").sized(10, 13)],
    );
    assert!(w.plan().actions().all(|a| match a {
        Action::UpdateDeploymentStatus { deployment } =>
            !conditions(deployment.status.as_ref().unwrap()).iter().any(|c| c.0 == PROGRESSING),
        _ => true,
    }));
    for pds in [None, Some(i32::MAX)] {
        let w = World::new(
            DeploymentBuilder::new(10).deadline(pds).condition(PROGRESSING, "True", RS_UPDATED_REASON, NOW - 5),
            [RsB::new("old", 10).revision("1").sized(10, 13)],
        );
        let s = w.last_status().unwrap();
        assert!(!conditions(&s).iter().any(|c| c.0 == PROGRESSING), "{pds:?}: {s:?}");
    }
}

/// Scenario 32: ReplicaFailure mirrored from the new RS.
#[test]
fn replica_failure_is_mirrored() {
    let new = hashed("v2");
    let w = World::new(
        DeploymentBuilder::new(3),
        [RsB::new(&new, 3).image("v2").revision("1").sized(3, 4).available(1, 1).failure("FailedCreate", "quota")],
    );
    let s = w.last_status().unwrap();
    assert!(conditions(&s).contains(&cond(REPLICA_FAILURE, "True", "FailedCreate")), "{s:?}");
}

// === claims ===

/// Scenario 34: an orphan with the current template is adopted (after the
/// re-check) and used as the new RS: FoundNewReplicaSet.
#[test]
fn orphan_is_adopted_as_the_new_replica_set() {
    let w = World::new(DeploymentBuilder::new(2), [RsB::new("mine", 2).image("v2").orphan()]);
    let lines = w.lines();
    assert_eq!(lines[..2], ["recheck", "adopt mine"]);
    assert!(!lines.iter().any(|l| l.starts_with("create")), "{lines:?}");
    let s = w.last_status().unwrap();
    assert!(conditions(&s).iter().any(|c| c.0 == PROGRESSING), "{s:?}");
    let first_status = w.plan().actions().find_map(|a| match a {
        Action::UpdateDeploymentStatus { deployment } => deployment.status.clone(),
        _ => None,
    });
    assert!(conditions(&first_status.unwrap()).contains(&cond(PROGRESSING, "True", FOUND_NEW_RS_REASON)));
    // Deleting orphans and other owners' ReplicaSets are left alone.
    let w = World::new(DeploymentBuilder::new(2), [RsB::new("x", 2).image("v2").orphan().deleting()]);
    assert!(!w.lines().iter().any(|l| l.starts_with("adopt")));
}

/// Scenario 35: an owned RS relabelled away is released.
#[test]
fn non_matching_owned_replica_set_is_released() {
    let w = World::new(
        DeploymentBuilder::new(1),
        [RsB::new("gone", 1).labels(&[("app", "other")]), RsB::new("cur", 1).image("v2")],
    );
    assert_eq!(w.lines()[0], "release gone");
}

/// Scenario 36: being deleted: status only; empty selector: SelectingAll.
#[test]
fn deleting_and_selecting_all() {
    let mut d = DeploymentBuilder::new(10).build();
    d.metadata.deletion_timestamp = Some(Time(ts(NOW - 1)));
    let w = World { d, rss: vec![Arc::new(rs("old", 10))], pods: vec![], now: ts(NOW) };
    assert!(w.lines().iter().all(|l| l.starts_with("status")), "{:?}", w.lines());

    let mut d = DeploymentBuilder::new(10).build();
    d.spec.as_mut().unwrap().selector = LabelSelector::default();
    d.metadata.generation = Some(2);
    let w = World { d, rss: vec![], pods: vec![], now: ts(NOW) };
    assert_eq!(
        w.lines(),
        [
            "event SelectingAll: This deployment is selecting all pods. A non-empty selector is required.",
            "status 0/0/0/0/0"
        ]
    );
}

// === collisions ===

/// Scenario 27: a collision bumps collisionCount nil → 1 → 2, and the next
/// sync hashes with it.
#[test]
fn collision_bumps_the_count() {
    let d = DeploymentBuilder::new(1).build();
    let plan = after_create_failure(&d, &CreateFailure::Collision, ts(NOW));
    let Some(Action::UpdateDeploymentStatus { deployment }) = plan.actions().next() else { panic!() };
    assert_eq!(deployment.status.as_ref().unwrap().collision_count, Some(1));
    let bumped = DeploymentBuilder::new(1).status(DeploymentStatus {
        collision_count: Some(1),
        observed_generation: Some(1),
        ..Default::default()
    });
    let w = World::new(bumped, []);
    let want = format!("d-{}", compute_hash(&template("v2"), Some(1)));
    assert_eq!(created(&w.plan()).metadata.name, Some(want));
}

/// Scenario 28 (the executor's check): an existing RS with our controller
/// and template is ours; anything else collides.
#[test]
fn already_exists_check() {
    let w = World::new(DeploymentBuilder::new(1), []);
    let planned = created(&w.plan());
    let mut same = planned.clone();
    same.metadata.uid = Some("x".into());
    assert!(is_same_replica_set(&same, &planned));
    let mut other_owner = planned.clone();
    other_owner.metadata.owner_references = None;
    assert!(!is_same_replica_set(&other_owner, &planned));
    let other_template = RsB::new("x", 1).image("v9").build();
    assert!(!is_same_replica_set(&other_template, &planned));
}

/// Other create errors: Progressing False ReplicaSetCreateError and a
/// Warning.
#[test]
fn create_error_sets_the_condition() {
    let d = DeploymentBuilder::new(1).build();
    let failure = CreateFailure::Error { replica_set: "d-x".into(), message: "quota".into() };
    let lines = describe(&after_create_failure(&d, &failure, ts(NOW)));
    assert_eq!(
        lines,
        [
            format!("status 0/0/0/0/0 {PROGRESSING}={RS_CREATE_ERROR_REASON}"),
            "event ReplicaSetCreateError: Failed to create new replica set \"d-x\": quota".into()
        ]
    );
}

/// A steady state writes nothing.
#[test]
fn steady_state_is_quiet() {
    let new = hashed("v2");
    let w = World::new(DeploymentBuilder::new(3), [RsB::new(&new, 3).image("v2").revision("1").sized(3, 4)]);
    let plan = w.plan();
    let d2 = w.last_deployment().unwrap();
    let w2 = World { d: d2, rss: w.rss.clone(), pods: vec![], now: ts(NOW + 5) };
    assert!(w2.plan().is_empty(), "{:?} after {:?}", w2.lines(), describe(&plan));
}

/// A planner over `d` and `rss` (indices in input order), for testing one
/// step of a sync.
pub(super) fn planner(d: Deployment, rss: Vec<ReplicaSet>, options: &Options) -> sync::Planner<'_> {
    sync::Planner { d, rss, pods: Vec::new(), now: ts(NOW), options, plan: Plan::new() }
}

// === history (upstream TestDeploymentController_cleanupDeployment) ===

/// (old ReplicaSets as (spec, status replicas), limit, deletions).
#[test]
fn cleanup_deployment_table() {
    type Case = (&'static str, Vec<(i32, i32)>, i32, usize);
    let cases: Vec<Case> = vec![
        ("three empty, limit 1", vec![(0, 0), (0, 0), (0, 0)], 1, 2),
        ("only spec = status = 0 goes", vec![(0, 0), (0, 1), (1, 0), (1, 1)], 0, 1),
        ("two empty, limit 0", vec![(0, 0), (0, 0)], 0, 2),
        ("two busy, limit 0", vec![(1, 1), (1, 1)], 0, 0),
        ("none", vec![], 0, 0),
    ];
    let options = Options::default();
    for (name, olds, limit, want) in cases {
        let rss = olds
            .iter()
            .enumerate()
            .map(|(i, &(spec, st))| {
                RsB::new(&format!("foo-{i}"), spec)
                    .image(&format!("i{i}"))
                    .revision(&i.to_string())
                    .available(st, st)
                    .build()
            })
            .collect();
        let mut p = planner(DeploymentBuilder::new(1).history(limit).build(), rss, &options);
        let old: Vec<usize> = (0..olds.len()).collect();
        p.cleanup(&old);
        let deletes = p.plan.actions().filter(|a| matches!(a, Action::DeleteReplicaSet { .. })).count();
        assert_eq!(deletes, want, "{name}");
    }
    // Being deleted, or with an unobserved generation: kept.
    let rss =
        vec![RsB::new("deleting", 0).deleting().build(), RsB::new("unobserved", 0).image("x").generation(2).build()];
    let mut p = planner(DeploymentBuilder::new(1).history(0).build(), rss, &options);
    p.cleanup(&[0, 1]);
    assert!(p.plan.is_empty(), "{:?}", describe(&p.plan));
    // No limit (unset or MaxInt32): nothing is cleaned.
    let mut d = DeploymentBuilder::new(1).build();
    d.spec.as_mut().unwrap().revision_history_limit = None;
    let mut p = planner(d, vec![rs("a", 0)], &options);
    p.cleanup(&[0]);
    assert!(p.plan.is_empty());
}

/// Upstream `TestFindNewReplicaSet`: the oldest ReplicaSet with the
/// template (ignoring the hash label) is the new one; ties by name.
#[test]
fn find_new_replica_set() {
    let mut with_hash = RsB::new("b-hashed", 1).image("v2").created(5).build();
    with_hash
        .spec
        .as_mut()
        .unwrap()
        .template
        .as_mut()
        .unwrap()
        .metadata
        .as_mut()
        .unwrap()
        .labels
        .as_mut()
        .unwrap()
        .insert(POD_TEMPLATE_HASH_LABEL.into(), "upstream".into());
    let cases = [
        ("older wins", vec![RsB::new("z", 1).image("v2").created(1).build(), with_hash.clone()], Some("z")),
        ("hash label ignored", vec![with_hash.clone(), RsB::new("old", 1).build()], Some("b-hashed")),
        (
            "same time: by name",
            vec![RsB::new("b", 1).image("v2").created(1).build(), RsB::new("a", 1).image("v2").created(1).build()],
            Some("a"),
        ),
        ("none", vec![RsB::new("old", 1).build()], None),
    ];
    let options = Options::default();
    for (name, rss, want) in cases {
        let mut p = planner(DeploymentBuilder::new(1).build(), rss, &options);
        let (new, _) = p.get_all_replica_sets_and_sync_revision(false).unwrap();
        assert_eq!(new.map(|i| p.name(i)).as_deref(), want, "{name}");
    }
}

/// Counts near `i32::MAX` (valid, if absurd) plan without overflowing,
/// whatever the path.
#[test]
fn huge_counts_do_not_overflow() {
    let max = i32::MAX;
    let worlds = [
        World::new(DeploymentBuilder::new(max), [RsB::new("old", max).revision("1").sized(max, max)]),
        World::new(
            DeploymentBuilder::new(max).paused(),
            [RsB::new("old", max).revision("1"), RsB::new("b", max).image("v2").created(3)],
        ),
        World::new(
            DeploymentBuilder::new(max - 1),
            [RsB::new("old", max).revision("1").sized(max, max), RsB::new("b", max).image("v2").created(3)],
        ),
        World::new(DeploymentBuilder::new(max).recreate(), [RsB::new("old", max).revision("1")]),
    ];
    for w in worlds {
        let _ = w.plan();
    }
}
