//! Test fixtures of the executor's tests: an executor on a fresh kube-sim,
//! a ReplicaSet.

use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use kube::Client;
use kube_sim::{Sim, SimConfig};

use super::Executor;
use kcm_runtime::events::EventRecorder;

pub(super) async fn start() -> (Sim, Executor, Client) {
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
