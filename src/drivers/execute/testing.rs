//! Test fixtures of the executor's tests: an executor on a fresh kube-sim,
//! a ReplicaSet.

use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use kube::Client;
use kube_sim::{Sim, SimConfig};

use kcm_controllers::plan::{NoOwnWrites, Plan, Step};
use kcm_controllers::protocol::{Core, Finish, Stepper, Told};

use super::{Executor, NoBookkeeping};
use kcm_runtime::events::EventRecorder;

pub(crate) async fn start() -> (Sim, Executor, Client) {
    let sim = Sim::start(SimConfig::default()).await.expect("sim starts");
    let client = sim.client().expect("client");
    let executor = Executor::new(client.clone(), EventRecorder::new(client.clone(), "test"));
    (sim, executor, client)
}

/// ReplicaSet `ns/name` with image `image`, controlled by `owner_uid`
/// if given.
pub(super) fn replica_set(ns: &str, name: &str, image: &str, owner_uid: Option<&str>) -> ReplicaSet {
    let labels = std::collections::BTreeMap::from([("app".to_string(), "web".to_string())]);
    ReplicaSet {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(ns.into()),
            labels: Some(labels.clone()),
            owner_references: owner_uid.map(|uid| {
                vec![OwnerReference {
                    api_version: "apps/v1".into(),
                    kind: "Deployment".into(),
                    name: "d".into(),
                    uid: uid.into(),
                    controller: Some(true),
                    block_owner_deletion: Some(true),
                }]
            }),
            ..Default::default()
        },
        spec: ReplicaSetSpec {
            replicas: Some(0),
            selector: LabelSelector { match_labels: Some(labels.clone()), ..Default::default() },
            template: Some(PodTemplateSpec {
                metadata: Some(ObjectMeta { labels: Some(labels), ..Default::default() }),
                spec: Some(PodSpec {
                    containers: vec![Container { name: "c".into(), image: Some(image.into()), ..Default::default() }],
                    ..Default::default()
                }),
            }),
            ..Default::default()
        },
        status: None,
    }
}

/// A core that hands out every step of a plan, whatever the answers, and
/// keeps them.
struct Recorder<'a> {
    steps: Stepper<NoOwnWrites>,
    answers: &'a mut Vec<Told>,
}

impl Core for Recorder<'_> {
    type Own = NoOwnWrites;

    fn poll(&mut self) -> Option<&Step> {
        self.steps.next_step()
    }

    fn told(&mut self, answers: Vec<Told>) {
        self.answers.extend(answers);
    }

    fn finish(self) -> Finish {
        Finish::Done
    }
}

/// Performs every step of `plan` in one sync, as [`Executor::drive`]
/// does, and returns every action's answer in order.
pub(super) async fn perform(executor: &Executor, plan: Plan) -> Vec<Told> {
    let mut answers = Vec::new();
    let recorder = Recorder { steps: Stepper::new(plan), answers: &mut answers };
    executor.drive(recorder, &NoBookkeeping, executor).await;
    answers
}
