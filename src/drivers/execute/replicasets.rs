//! A Deployment's ReplicaSet creates (AlreadyExists told apart from a
//! hash collision) and deletes.

use k8s_openapi::api::apps::v1::ReplicaSet;
use kcm_controllers::deployment::{CreateFailure, is_same_replica_set};
use kube::Api;
use kube::api::PostParams;

use super::executor::{Executor, Outcome, Versions};
use kcm_controllers::protocol::{Answer, Refusal, Told, WriteError};

use crate::drivers::api_errors::{error_message, namespace_terminating, reason, write_error};

impl Executor {
    /// Creates a Deployment's new ReplicaSet; see
    /// [`Action::CreateReplicaSet`](kcm_controllers::plan::Action::CreateReplicaSet) for AlreadyExists.
    pub(super) async fn create_replica_set(&self, namespace: &str, rs: &ReplicaSet, versions: &Versions) -> Outcome {
        let api: Api<ReplicaSet> = Api::namespaced(self.client.clone(), namespace);
        let name = rs.metadata.name.clone().unwrap_or_default();
        match api.create(&PostParams::default(), rs).await {
            Ok(created) => {
                versions.record("ReplicaSet", &created.metadata);
                Outcome::Ok
            }
            Err(error) if namespace_terminating(&error) => Outcome::Halt,
            Err(error) if reason(&error) == Some("AlreadyExists") => match api.get(&name).await {
                Ok(existing) if is_same_replica_set(&existing, rs) => Outcome::Failed(format!(
                    "replica set {name} already exists and is this deployment's; waiting for the cache"
                )),
                Ok(_) => Outcome::CreateFailed(CreateFailure::Collision),
                Err(error) => Outcome::Failed(error_message(&error)),
            },
            Err(error) => {
                Outcome::CreateFailed(CreateFailure::Error { replica_set: name, message: error_message(&error) })
            }
        }
    }

    pub(super) async fn delete_replica_set(&self, namespace: &str, name: &str, uid: &str) -> Told {
        match self.delete_with_uid::<ReplicaSet>(namespace, name, uid).await {
            Ok(true) => Ok(Answer::Done),
            Ok(false) => {
                Err(WriteError { refusal: Refusal::NotFound, message: format!("replicasets \"{name}\" not found") })
            }
            Err(error) => Err(write_error(&error)),
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Namespace;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use kube::api::DeleteParams;

    use super::*;
    use crate::drivers::execute::testing::{create, replica_set, start};
    use crate::drivers::execute::{Executed, NoBookkeeping};

    /// AlreadyExists for a ReplicaSet that is the planned one (stale
    /// cache): the plan stops with an error to retry, no collision.
    #[tokio::test]
    async fn already_existing_own_replica_set_is_not_a_collision() {
        let (_sim, executor, client) = start().await;
        let mut rs = replica_set("default", "d-abc", "v1", Some("d-uid"));
        let api: Api<ReplicaSet> = Api::namespaced(client, "default");
        let created = api.create(&PostParams::default(), &rs).await.expect("create");
        // A planned template comes from a Deployment the API server
        // defaulted the same way.
        rs.spec.template = created.spec.template;
        match executor.run(&create(&rs), &NoBookkeeping).await {
            Executed::Failed(message) => assert!(message.contains("waiting for the cache"), "{message}"),
            other => panic!("{other:?}"),
        }
    }

    /// AlreadyExists for someone else's ReplicaSet, or another template: a
    /// hash collision.
    #[tokio::test]
    async fn name_taken_by_another_replica_set_is_a_collision() {
        let (_sim, executor, client) = start().await;
        let api: Api<ReplicaSet> = Api::namespaced(client, "default");
        api.create(&PostParams::default(), &replica_set("default", "orphan", "v1", None)).await.expect("create");
        api.create(&PostParams::default(), &replica_set("default", "other", "v9", Some("d-uid")))
            .await
            .expect("create");
        for name in ["orphan", "other"] {
            let planned = replica_set("default", name, "v1", Some("d-uid"));
            assert_eq!(
                executor.run(&create(&planned), &NoBookkeeping).await,
                Executed::CreateReplicaSetFailed(CreateFailure::Collision),
                "{name}"
            );
        }
    }

    /// A create refused because the namespace is terminating halts the plan
    /// without an error.
    #[tokio::test]
    async fn terminating_namespace_halts() {
        let (_sim, executor, client) = start().await;
        let namespaces: Api<Namespace> = Api::all(client);
        let ns = Namespace {
            metadata: ObjectMeta { name: Some("going".into()), ..Default::default() },
            ..Default::default()
        };
        namespaces.create(&PostParams::default(), &ns).await.expect("create namespace");
        namespaces.delete("going", &DeleteParams::default()).await.expect("delete namespace");
        let plan = create(&replica_set("going", "d-abc", "v1", Some("d-uid")));
        assert_eq!(executor.run(&plan, &NoBookkeeping).await, Executed::Halted);
    }
}
