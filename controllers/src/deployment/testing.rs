//! Fixtures shared by the Deployment controller's table tests: the
//! reference scenarios (`/work/shared/reference/deployment-replicaset.md`
//! §3) and upstream's `sync_test.go`, `rolling_test.go`,
//! `recreate_test.go` and `progress_test.go` cases sit at the bottom of the
//! file whose code they test, and build their Deployments, ReplicaSets and
//! syncs with these.

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{
    DeploymentCondition, DeploymentSpec, DeploymentStatus, DeploymentStrategy, ReplicaSetCondition, ReplicaSetSpec,
    ReplicaSetStatus, RollingUpdateDeployment,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kcm_objects::Pod;

use super::planner::Planner;
use super::*;
use crate::common::template_hash::compute_hash;
use crate::plan::{Action, Plan};
pub use crate::testing::template;
use crate::testing::{PodBuilder, describe_plan, labels, ts};

pub const NOW: i64 = 1_000_000;
pub const D_UID: &str = "d-uid";

/// Deployment `ns/d` (uid `d-uid`, generation 1, observed), selector
/// `app=web`, image `v2`, RollingUpdate 25%/25%, history 10, deadline 600.
#[derive(Clone)]
pub struct DeploymentBuilder(k8s_openapi::api::apps::v1::Deployment);

impl DeploymentBuilder {
    pub fn new(replicas: i32) -> Self {
        Self(k8s_openapi::api::apps::v1::Deployment {
            metadata: ObjectMeta {
                name: Some("d".into()),
                namespace: Some("ns".into()),
                uid: Some(D_UID.into()),
                generation: Some(1),
                resource_version: Some("5".into()),
                ..Default::default()
            },
            spec: DeploymentSpec {
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
            },
            status: Some(DeploymentStatus { observed_generation: Some(1), ..Default::default() }),
        })
    }
    pub fn fenceposts(mut self, surge: IntOrString, unavailable: IntOrString) -> Self {
        self.0.spec.strategy = Some(DeploymentStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: Some(RollingUpdateDeployment {
                max_surge: Some(surge),
                max_unavailable: Some(unavailable),
            }),
        });
        self
    }
    pub fn surge(self, surge: i32) -> Self {
        let unavailable = self.0.spec.strategy.as_ref().unwrap().rolling_update.as_ref().unwrap();
        let unavailable = unavailable.max_unavailable.clone().unwrap();
        self.fenceposts(IntOrString::Int(surge), unavailable)
    }
    pub fn recreate(mut self) -> Self {
        self.0.spec.strategy = Some(DeploymentStrategy { type_: Some("Recreate".into()), rolling_update: None });
        self
    }
    pub fn image(mut self, image: &str) -> Self {
        self.0.spec.template = template(image);
        self
    }
    pub fn annotation(mut self, k: &str, v: &str) -> Self {
        self.0.metadata.annotations.get_or_insert_default().insert(k.into(), v.into());
        self
    }
    pub fn paused(mut self) -> Self {
        self.0.spec.paused = Some(true);
        self
    }
    pub fn history(mut self, limit: i32) -> Self {
        self.0.spec.revision_history_limit = Some(limit);
        self
    }
    pub fn deadline(mut self, pds: Option<i32>) -> Self {
        self.0.spec.progress_deadline_seconds = pds;
        self
    }
    pub fn status(mut self, status: DeploymentStatus) -> Self {
        self.0.status = Some(status);
        self
    }
    pub fn condition(mut self, type_: &str, status: &str, reason: &str, updated: i64) -> Self {
        let st = self.0.status.get_or_insert_default();
        st.conditions.get_or_insert_default().push(DeploymentCondition {
            type_: Some(type_.into()),
            status: Some(status.into()),
            reason: Some(reason.into()),
            message: Some(String::new()),
            last_update_time: Some(Time(ts(updated))),
            last_transition_time: Some(Time(ts(updated))),
        });
        self
    }
    pub fn build(self) -> Deployment {
        Deployment::new(self.0)
    }
}

/// ReplicaSet `name` controlled by `d`, image `v1`, created at `ts(0)`,
/// `replicas` all available.
pub fn rs(name: &str, replicas: i32) -> ReplicaSet {
    RsB::new(name, replicas).build()
}

#[derive(Clone)]
pub struct RsB(k8s_openapi::api::apps::v1::ReplicaSet);

impl RsB {
    pub fn new(name: &str, replicas: i32) -> Self {
        Self(k8s_openapi::api::apps::v1::ReplicaSet {
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
            spec: ReplicaSetSpec {
                replicas: Some(replicas),
                selector: LabelSelector { match_labels: Some(labels(&[("app", "web")])), ..Default::default() },
                template: Some(template("v1")),
                min_ready_seconds: Some(0),
            },
            status: Some(ReplicaSetStatus {
                replicas,
                ready_replicas: Some(replicas),
                available_replicas: Some(replicas),
                observed_generation: Some(1),
                ..Default::default()
            }),
        })
    }
    pub fn image(mut self, image: &str) -> Self {
        self.0.spec.template = Some(template(image));
        self
    }
    pub fn revision(self, rev: &str) -> Self {
        self.annotation(REVISION_ANNOTATION, rev)
    }
    pub fn annotation(mut self, k: &str, v: &str) -> Self {
        self.0.metadata.annotations.get_or_insert_default().insert(k.into(), v.into());
        self
    }
    /// desired-replicas and max-replicas annotations.
    pub fn sized(self, desired: i32, max: i32) -> Self {
        self.annotation(DESIRED_REPLICAS_ANNOTATION, &desired.to_string())
            .annotation(MAX_REPLICAS_ANNOTATION, &max.to_string())
    }
    pub fn created(mut self, secs: i64) -> Self {
        self.0.metadata.creation_timestamp = Some(Time(ts(secs)));
        self
    }
    pub fn available(mut self, replicas: i32, available: i32) -> Self {
        let s = self.0.status.get_or_insert_default();
        s.replicas = replicas;
        s.ready_replicas = Some(available);
        s.available_replicas = Some(available);
        self
    }
    pub fn orphan(mut self) -> Self {
        self.0.metadata.owner_references = None;
        self
    }
    pub fn labels(mut self, pairs: &[(&str, &str)]) -> Self {
        self.0.metadata.labels = Some(labels(pairs));
        self
    }
    pub fn generation(mut self, generation: i64) -> Self {
        self.0.metadata.generation = Some(generation);
        self
    }
    pub fn deleting(mut self) -> Self {
        self.0.metadata.deletion_timestamp = Some(Time(ts(NOW - 1)));
        self
    }
    pub fn failure(mut self, reason: &str, message: &str) -> Self {
        self.0.status.get_or_insert_default().conditions = Some(vec![ReplicaSetCondition {
            type_: Some(REPLICA_FAILURE.into()),
            status: Some("True".into()),
            reason: Some(reason.into()),
            message: Some(message.into()),
            last_transition_time: Some(Time(ts(NOW - 5))),
        }]);
        self
    }
    pub fn build(self) -> ReplicaSet {
        ReplicaSet::new(self.0)
    }
}

/// A sync's inputs.
pub struct World {
    pub d: Deployment,
    pub rss: Vec<Arc<ReplicaSet>>,
    pub pods: Vec<Arc<Pod>>,
    pub now: Timestamp,
}

impl World {
    pub fn new(d: DeploymentBuilder, rss: impl IntoIterator<Item = RsB>) -> Self {
        Self {
            d: d.build(),
            rss: rss.into_iter().map(|r| Arc::new(r.build())).collect(),
            pods: Vec::new(),
            now: ts(NOW),
        }
    }
    pub fn pods(mut self, pods: impl IntoIterator<Item = PodBuilder>) -> Self {
        self.pods.extend(pods.into_iter().map(PodBuilder::arc));
        self
    }
    pub fn at(mut self, secs: i64) -> Self {
        self.now = ts(secs);
        self
    }
    pub fn plan(&self) -> Plan {
        let snapshot = Snapshot { deployment: &self.d, replica_sets: &self.rss, pods: &self.pods, now: self.now };
        sync(&snapshot, &Options::default()).unwrap()
    }
    /// The plan, one line per action (see [`describe_plan`]).
    pub fn lines(&self) -> Vec<String> {
        describe_plan(&self.plan())
    }
    /// Only the ReplicaSet writes and events (no status lines).
    pub fn writes(&self) -> Vec<String> {
        self.lines().into_iter().filter(|l| !l.starts_with("status")).collect()
    }
    /// The last status the plan writes.
    pub fn last_status(&self) -> Option<DeploymentStatus> {
        let plan = self.plan();
        let found = plan.actions().filter_map(|a| match a {
            Action::UpdateDeploymentStatus { deployment } => deployment.status.clone(),
            _ => None,
        });
        found.last()
    }
    /// The last Deployment object the plan writes.
    pub fn last_deployment(&self) -> Option<k8s_openapi::api::apps::v1::Deployment> {
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
pub fn hashed(image: &str) -> String {
    format!("d-{}", compute_hash(&template(image), None))
}

/// The ReplicaSet object a plan creates.
pub fn created(plan: &Plan) -> k8s_openapi::api::apps::v1::ReplicaSet {
    plan.actions()
        .find_map(|a| match a {
            Action::CreateReplicaSet { replica_set, .. } => Some((**replica_set).clone()),
            _ => None,
        })
        .expect("a create")
}

pub fn conditions(s: &DeploymentStatus) -> Vec<(String, String, String)> {
    s.conditions
        .iter()
        .flatten()
        .map(|c| {
            (
                c.type_.clone().unwrap_or_default(),
                c.status.clone().unwrap_or_default(),
                c.reason.clone().unwrap_or_default(),
            )
        })
        .collect()
}

pub fn cond(t: &str, s: &str, r: &str) -> (String, String, String) {
    (t.into(), s.into(), r.into())
}

/// A planner over `d` and `rss` (indices in input order), for testing one
/// step of a sync.
pub fn planner(d: Deployment, rss: Vec<ReplicaSet>, options: &Options) -> Planner<'_> {
    Planner { d, rss, pods: Vec::new(), now: ts(NOW), options, plan: Plan::new() }
}
